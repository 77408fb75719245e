#!/usr/bin/env python3
"""scripts/accuracy's replicate noise, the denominator of the lab splits' 1.5x-noise bar, on made-up
replicate groups whose answer is known: the size correction, the pooling of boots, passes and
repeats into one group, the per-iodepth noise and its fallback to the overall figure.

    test_accuracy_noise.py SOURCE_DIR
"""

import importlib.machinery
import importlib.util
import json
import math
import os
import random
import shutil
import sys
import tempfile

src = sys.argv[1]
path = os.path.join(src, "scripts", "accuracy")
spec = importlib.util.spec_from_file_location("accuracy", path, loader=importlib.machinery.SourceFileLoader("accuracy", path))
acc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(acc)
failures = []


def check(cond, what):
    # what is "claim (got ...)": the evidence is shown only when the claim fails
    print(("ok   " + what.split(" (got ")[0]) if cond else ("FAIL " + what))
    if not cond:
        failures.append(what)


def figs(iops):
    return (iops, 1e6 / iops, 2e6 / iops)


# A pair 90 / 110: each deviates 10% from the mean; sqrt(2) for n = 2.
n = acc.Noise({("m", "c", "randread-4k-qd1-j1", "read"): [figs(90), figs(110)]})
want = math.sqrt(2) * 0.1
check(abs(n.figures[0] - want) < 1e-12, f"a pair's noise is its deviations scaled by sqrt(2) (got {n.figures[0]}, want {want})")
check(n.points == 1 and n.runs == 2, f"one replicated point of two runs (got {n.points}, {n.runs})")

# A single run is no replicate: it counts nowhere.
n = acc.Noise({("c", "randread-4k-qd1-j1", "read"): [figs(100)], ("c", "randread-4k-qd4-j1", "read"): [figs(50), figs(50)]})
check(n.points == 1 and n.figures[0] == 0, f"a lone run is not a replicated point (got {n.points}, {n.figures[0]})")

# The correction makes the estimate unbiased: replicates drawn around a known mean with a known
# spread give, over many groups of 2 and of 5, the true mean absolute relative error of the mean.
rng = random.Random(7)
for size in (2, 5):
    groups = {("c", f"randread-4k-qd16-j{g}", "read"): [figs(1000 * (1 + 0.1 * rng.gauss(0, 1))) for _ in range(size)]
              for g in range(4000)}
    truth = []
    r2 = random.Random(11)
    for _ in range(200000):
        x = 1000 * (1 + 0.1 * r2.gauss(0, 1))
        truth.append(abs(1000 - x) / 1000)
    true_noise = sum(truth) / len(truth)
    got = acc.Noise(groups).figures[0]
    check(abs(got / true_noise - 1) < 0.03, f"groups of {size}: the estimate matches the deviation from the true mean "
          f"(got {got:.4f}, true {true_noise:.4f})")

# Per iodepth: three points or more give a depth its own figure; fewer fall back to the overall one.
groups = {("c", f"randread-4k-qd64-j{g}", "read"): [figs(100), figs(200)] for g in range(3)}
groups[("c", "randread-4k-qd1-j1", "read")] = [figs(100), figs(102)]
n = acc.Noise(groups)
check(n.by_depth[64][0] == 3 and n.at_depth(64) == n.by_depth[64][1], "QD64 with 3 points has its own noise")
check(n.at_depth(1) == n.figures, "QD1 with 1 point takes the overall noise")
check(n.at_depth(4) == n.figures, "a depth without replicates takes the overall noise")
check(n.at_depth(64)[0] > n.figures[0] > n.by_depth[1][1][0], "the noisy depth is above the overall, the quiet one below")

# replicate_noise pools boots (-b2), passes (-p1, -p2) and repeats (-r1..) of one configuration and
# job, keeps only the jobs asked for, leaves out a run the hypervisor disturbed (steal over 5% of the
# host's CPU time in its meta.json) and does not pool one recording's runs with another's.
tmp = tempfile.mkdtemp(prefix="vqsim-noise-test-")
try:
    def recording(name, runs):
        os.makedirs(os.path.join(tmp, name))
        lines, timing = [], {}
        for config, job, iops, steal in runs:
            os.makedirs(os.path.join(tmp, name, config), exist_ok=True)
            with open(os.path.join(tmp, name, config, job + ".json"), "w") as f:
                x = {"iops": iops, "total_ios": 1, "lat_ns": {"mean": 1e9 / iops}, "clat_ns": {"percentile": {"99.000000": 2e9 / iops}}}
                json.dump({"jobs": [{"read": x, "write": {"iops": 0, "total_ios": 0}}]}, f)
            timing.setdefault(config, []).append({"run": job, "host_cpu_s": {"user": 10 - steal, "idle": 0, "steal": steal}})
            lines.append(f'[[run]]\nname = "{config}/{job}"\nfile = "{config}/{job}.json"\n')
        for config, t in timing.items():
            with open(os.path.join(tmp, name, config, "meta.json"), "w") as f:
                json.dump({"timing": t}, f)
        with open(os.path.join(tmp, name, "manifest.toml"), "w") as f:
            f.write("\n".join(lines))
        return os.path.relpath(os.path.join(tmp, name, "manifest.toml"), acc.ROOT)

    a = recording("a", [("cfg-v1-p1", "randread-4k-qd1-j1-r1", 90, 0), ("cfg-v1-p1", "randread-4k-qd1-j1-r2", 110, 0.1),
                        ("cfg-v1-b2-p2", "randread-4k-qd1-j1-r1", 100, 0), ("cfg-v1-p2", "randread-4k-qd1-j1-r2", 20, 2),
                        ("cfg-v1-p1", "read-1m-qd4-j1-r1", 10, 0), ("cfg-v1-p2", "read-1m-qd4-j1-r1", 30, 0)])
    b = recording("b", [("cfg-v1", "randread-4k-qd1-j1", 1000, 0)])
    n = acc.replicate_noise([a], acc.small_blocks)
    check(n.points == 1 and n.runs == 3 and n.disturbed == 1,
          f"boots, passes and repeats pool into one group, the disturbed run left out (got {n.points}, {n.runs}, {n.disturbed})")
    check(n.figures[0] < 0.2, f"the disturbed run's 20 IOPS does not count (got {n.figures[0]})")
    n = acc.replicate_noise([a], lambda job: not acc.small_blocks(job))
    check(n.points == 1 and n.runs == 2 and n.figures[0] > 0.5, f"the large-block job alone (got {n.points}, {n.runs}, {n.figures[0]})")
    n2 = acc.replicate_noise([a, b], acc.small_blocks)
    check(n2.points == 1 and n2.runs == 3, f"another recording's run of the same name is not a replicate (got {n2.points}, {n2.runs})")

    # The held-out MAPE without the disturbed runs, beside the noise that leaves them out.
    def held(name, err):
        return {"name": name, "role": "held out (predicted)", "targets": [{"kind": "throughput", "error_rel": err},
                                                                        {"kind": "mean latency", "error_rel": -err}]}
    rep = {"runs": [held("cfg-v1-p1/randread-4k-qd1-j1-r1", 0.1), held("cfg-v1-p2/randread-4k-qd1-j1-r2", 0.9),
                    {"name": "cfg-v1-p1/read-1m-qd4-j1-r1", "role": "fitted", "targets": []}]}
    line = acc.undisturbed_line(rep, a)
    check(line is not None and "1 of 2 held-out runs" in line and "IOPS 10.0%" in line, f"the disturbed run left out (got {line})")
    check(acc.undisturbed_line({"runs": [held("cfg-v1-p1/randread-4k-qd1-j1-r1", 0.1)]}, a) is None,
          "no sentence where no held-out run was disturbed")

    # The knob split's own noise: the same fit at each of KNOBS_SEEDS (a fake calibrate), the
    # range of its held-out MAPE across them.
    seen = []

    def fake_calibrate(vqsim, base, manifest, out, report, threads, extra=(), reuse_needs_out=False):
        seed = int(extra[extra.index("--seed") + 1])
        seen.append((seed, "--cv" in extra))
        return {"runs": [held("cfg-v2/randread-4k-qd16-j1", 0.10 * seed),
                         {"name": "cfg-v1/randread-4k-qd1-j1", "role": "fitted",
                          "targets": [{"kind": "throughput", "error_rel": 5.0}]}]}
    real = acc.calibrate
    acc.calibrate = fake_calibrate
    try:
        line = acc.seed_spread_line("vqsim", "work", 2, "m.toml", "^cfg-v2/")
    finally:
        acc.calibrate = real
    check([s for s, _ in seen] == list(acc.KNOBS_SEEDS) and not any(cv for _, cv in seen),
          f"one fit per seed, without --cv (got {seen})")
    check("seed 1: 10.0 / 10.0 / nan%" in line and "seed 3: 30.0 / 30.0 / nan%" in line,
          f"each seed's held-out MAPE, the fitted runs left out (got {line})")
    check("a range of 20.0 / 20.0" in line, f"the range across the seeds (got {line})")

    # The block-size split says how often its recording measured each point (passes of a grid).
    def manifest_of(names):
        path = os.path.join(tmp, f"bs-{len(names)}.toml")
        with open(path, "w") as f:
            f.write("".join(f'[[run]]\nname = "{n}"\n' for n in names))
        return path
    two = manifest_of(["c-p1/read-4k-qd1-j1", "c-p2/read-4k-qd1-j1", "c-p1/read-1m-qd1-j1"])
    once = manifest_of(["c/read-4k-qd1-j1"])
    check("2 passes" in acc.blocksize_passes_text(two) and acc.blocksize_passes_text(once) == "",
          f"two passes named, one pass not (got {acc.blocksize_passes_text(two)!r}, {acc.blocksize_passes_text(once)!r})")
    # The earlier recordings' line: the same fit without --cv, its MAPE overall and by iodepth.
    seen = []

    def fake_bs_calibrate(vqsim, base, manifest, out, report, threads, extra=(), reuse_needs_out=False):
        seen.append(list(extra))
        return {"runs": [held("c/read-64k-qd1-j1", 0.10), held("c/read-64k-qd4-j1", 0.30),
                         {"name": "c/read-4k-qd1-j1", "role": "fitted", "targets": [{"kind": "throughput", "error_rel": 5.0}]}]}
    acc.calibrate = fake_bs_calibrate
    try:
        line = acc.blocksize_earlier_line("vqsim", once, tmp, 2)
    finally:
        acc.calibrate = real
    check(seen == [["--holdout", acc.BLOCKSIZE_HOLDOUT]], f"the earlier recording's fit holds out the same runs, no --cv (got {seen})")
    check("20.0 / 20.0" in line and "QD1 10.0 / 10.0%; QD4 30.0 / 30.0%" in line and "each point measured once" in line,
          f"its MAPE overall and by iodepth (got {line})")
finally:
    shutil.rmtree(tmp)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all ok")
