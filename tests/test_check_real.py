#!/usr/bin/env python3
"""`vqsim check` on real fio output: one clean run and one variant per rule.

Runs Debian's fio here (libaio, direct=1, a temporary 64 MiB file, randread 4k, iodepth 8,
numjobs 1, 2 s time_based, JSON), checks that the clean output draws no warning or error, then
writes one variant per rule by editing the JSON (keeping every other figure consistent) and
checks that `vqsim check --format json` flags exactly that rule (the warning/error rules of the
findings are exactly {rule}). Two variants are real runs instead of edits: psync with iodepth=8
(sync-iodepth) and a randwrite run described as a qcow2 image by a manifest (ramp-time). Also:
exit codes 0 / 3 / 2 and the seed 004 fixture (unit slip, corrected 8097). `--repeats` on stored
real fio 3.33 outputs (tests/data/check/repeats: one job in every output format, and variants that
change one option): every file is compared, and runs whose setups differ are an error naming the
option. Without --device, a note says the physics rules were not applied.

usage: test_check_real.py VQSIM_BINARY
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

VQSIM = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run_fio(workdir, name, args):
    out = os.path.join(workdir, name + ".json")
    cmd = ["fio", "--output-format=json", "--output=" + out, "--name=" + name] + args
    subprocess.run(cmd, cwd=workdir, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    return json.loads(text[text.index("{"):])


def vqsim_check(paths, extra=()):
    p = subprocess.run([VQSIM, "check", *paths, "--format", "json", *extra], capture_output=True, text=True, timeout=120)
    doc = None
    if p.stdout.strip():
        try:
            doc = json.loads(p.stdout)
        except json.JSONDecodeError:
            doc = None
    return p, doc


def rules(doc, severities=("warning", "error")):
    return sorted({f["rule"] for f in doc["findings"] if f["severity"] in severities})


def write(workdir, name, doc):
    path = os.path.join(workdir, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def scale_lat(d, k):
    """Multiplies every latency statistic of a direction by k."""
    for key in ("slat_ns", "clat_ns", "lat_ns"):
        s = d.get(key)
        if not s:
            continue
        for m in ("min", "max", "mean", "stddev"):
            if m in s:
                s[m] = s[m] * k
        if "percentile" in s:
            s["percentile"] = {p: int(v * k) for p, v in s["percentile"].items()}


def scale_rate(d, k):
    """Multiplies the rate figures (IOPS, bandwidth, amount and count) of a direction by k."""
    for key in ("iops", "bw_bytes", "bw", "io_bytes", "io_kbytes", "total_ios", "iops_mean", "iops_min", "iops_max",
                "bw_mean", "bw_min", "bw_max"):
        if key in d:
            d[key] = d[key] * k if isinstance(d[key], float) else int(d[key] * k)


def main():
    # VQSIM_CHECK_KEEP=DIR keeps the outputs and variants there (docs/check.md's examples).
    keep = os.environ.get("VQSIM_CHECK_KEEP")
    workdir = keep or tempfile.mkdtemp(prefix="vqsim-check-")
    os.makedirs(workdir, exist_ok=True)
    target = os.path.join(workdir, "data.bin")
    common = ["--filename=" + target, "--size=64m", "--bs=4k", "--numjobs=1", "--runtime=2", "--time_based"]
    clean = run_fio(workdir, "clean", common + ["--ioengine=libaio", "--direct=1", "--rw=randread", "--iodepth=8"])
    psync8 = run_fio(workdir, "psync8", common + ["--ioengine=psync", "--direct=1", "--rw=randread", "--iodepth=8"])
    writes = run_fio(workdir, "writes", common + ["--ioengine=libaio", "--direct=1", "--rw=randwrite", "--iodepth=8"])

    # The clean runs: no warning, no error, exit 0.
    for name, doc in (("clean", clean), ("writes", writes)):
        path = write(workdir, name, doc)
        p, out = vqsim_check([path])
        check(p.returncode == 0 and out is not None, f"{name}: exit 0 with JSON (got {p.returncode}: {p.stderr.strip()})")
        if out:
            check(rules(out) == [], f"{name}: no warning or error, got {rules(out)}: {json.dumps(out['findings'], indent=1)}")
            check(out["summary"]["exit"] == 0, f"{name}: summary exit 0")
        p = subprocess.run([VQSIM, "check", path], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and "nothing implausible" in p.stdout, f"{name}: text output, exit 0")
        check("nan" not in p.stdout.lower(), f"{name}: no NaN in the text output")

    job = clean["jobs"][0]
    lat_us = job["read"]["lat_ns"]["mean"] / 1e3
    variants = {}

    def variant(rule, edit):
        doc = copy.deepcopy(clean)
        edit(doc["jobs"][0], doc)
        variants.setdefault(rule, []).append(doc)

    # Consistency.
    variant("unit-slip", lambda j, d: j["read"].update(iops=j["read"]["iops"] * 1000))
    variant("unit-slip", lambda j, d: j["read"].update(bw_bytes=j["read"]["bw_bytes"] * 1024, bw=j["read"]["bw"] * 1024))

    def slow_clat(j, d):  # clat and lat in ms where us were meant: Little breaks by 1000
        scale_lat(j["read"], 1000)
    variant("unit-slip", slow_clat)
    variant("bw-vs-iops", lambda j, d: j["read"].update(bw_bytes=j["read"]["bw_bytes"] // 2, bw=j["read"]["bw"] // 2))
    variant("bw-vs-iops", lambda j, d: j["read"].update(iops=j["read"]["iops"] * 2))
    variant("io-bytes", lambda j, d: j["read"].update(io_bytes=j["read"]["io_bytes"] // 2, io_kbytes=j["read"]["io_kbytes"] // 2))
    variant("total-ios", lambda j, d: j["read"].update(total_ios=j["read"]["total_ios"] // 2))
    variant("runtime", lambda j, d: j["read"].update(runtime=j["read"]["runtime"] // 2))

    def deeper(j, d):  # iodepth=32 claimed, 8 in flight, no IO depths to explain it
        j["job options"]["iodepth"] = "32"
        for k in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
            j.pop(k, None)
    variant("little", deeper)

    def more_in_flight(j, d):  # 3x the latency at the same IOPS: 24 in flight with iodepth 8
        for key in ("slat_ns", "clat_ns", "lat_ns"):
            s = j["read"][key]
            s["mean"] *= 3
            s["max"] = max(s["max"], s["mean"] * 4)
            if "percentile" in s:
                s["percentile"] = {p: min(int(v * 3), int(s["max"])) for p, v in s["percentile"].items()}
    variant("little", more_in_flight)

    def pct_over_max(j, d):
        p = j["read"]["clat_ns"]["percentile"]
        top = sorted(p, key=float)[-1]
        p[top] = int(j["read"]["clat_ns"]["max"] * 2)
    variant("latency-stats", pct_over_max)

    def non_monotone(j, d):
        p = j["read"]["clat_ns"]["percentile"]
        keys = sorted(p, key=float)
        i = keys.index("50.000000")
        p[keys[i + 1]] = int(p[keys[i]] * 0.5)
    variant("latency-stats", non_monotone)

    def half_clat(j, d):  # clat's whole distribution at half scale, slat and lat as measured: they no longer add up
        # Halving the mean alone would also break the clat figures' own consistency (a heavy-tailed clat's stdev
        # then exceeds the Bhatia-Davis bound for the new mean), so latency-stats would fire beside slat-clat-lat.
        scale_lat({"clat_ns": j["read"]["clat_ns"]}, 0.5)
    variant("slat-clat-lat", half_clat)

    def mix(j, d):
        j["job options"]["rw"] = "randrw"
        j["job options"]["rwmixread"] = "70"
    variant("rwmix", mix)
    variant("group-vs-job", lambda j, d: j["read"].update(iops_mean=j["read"]["iops"] * 0.3))
    variant("errors", lambda j, d: j.update(error=5))
    variant("short-io", lambda j, d: j["read"].update(short_ios=3))

    def clients(j, d):
        hosts = []
        for h in ("h1", "h2"):
            e = copy.deepcopy(j)
            e["hostname"] = h
            hosts.append(e)
        agg = copy.deepcopy(j)
        agg["jobname"] = "All clients"
        agg.pop("job options", None)
        scale_rate(agg["read"], 4)  # each client's I/Os counted twice
        d.pop("jobs")
        d["client_stats"] = hosts + [agg]
    variant("all-clients", clients)

    # Setup.
    def cached(j, d):  # buffered reads at memory speed (consistent figures, latency < 2 us)
        k = max(lat_us / 1.5, 20.0)
        j["job options"]["direct"] = "0"
        scale_rate(j["read"], k)
        scale_lat(j["read"], 1 / k)
    variant("page-cache", cached)
    variant("libaio-buffered", lambda j, d: j["job options"].update(direct="0"))

    def short(j, d):  # the same rates, 1/1000 of the run
        r = j["read"]
        r["runtime"] = max(1, r["runtime"] // 1000)
        r["total_ios"] = int(r["iops"] * r["runtime"] / 1000)
        r["io_bytes"] = r["total_ios"] * 4096
        r["io_kbytes"] = r["io_bytes"] // 1024
        for key in ("iops_mean", "iops_samples", "bw_mean", "bw_samples"):
            r.pop(key, None)
    variant("short-run", short)
    variants.setdefault("sync-iodepth", []).append(psync8)

    for rule, docs in sorted(variants.items()):
        for i, doc in enumerate(docs):
            name = f"{rule}-{i}"
            path = write(workdir, name, doc)
            p, out = vqsim_check([path])
            check(out is not None, f"{name}: JSON output (exit {p.returncode}: {p.stderr.strip()})")
            if not out:
                continue
            got = rules(out)
            check(got == [rule], f"{name}: exactly rule {rule}, got {got}: " +
                  json.dumps([f for f in out["findings"] if f["severity"] != "info"], indent=1))
            has_error = any(f["severity"] == "error" for f in out["findings"])
            check(p.returncode == (3 if has_error else 0), f"{name}: exit {3 if has_error else 0}, got {p.returncode}")
            if rule == "unit-slip" and i == 0:
                slip = [f for f in out["findings"] if f["rule"] == "unit-slip"]
                want = clean["jobs"][0]["read"]["iops"]
                check(slip and abs(slip[0].get("corrected", 0) - want) <= 0.01 * want,
                      f"{name}: corrected IOPS {slip[0].get('corrected') if slip else None} vs {want}")

    # ramp-time: the randwrite run, described by a manifest as writes to a new qcow2 image.
    writes_path = os.path.join(workdir, "writes.json")
    manifest = os.path.join(workdir, "thin.toml")
    with open(manifest, "w") as f:
        f.write('[setup]\nnote = "randwrite on a qcow2 image"\n\n[[run]]\nname = "thin"\nfile = "writes.json"\n'
                'set = { "backend.image_format" = "qcow2" }\n\n'
                '[[run]]\nname = "thin, ramped"\nfile = "writes.json"\n'
                'set = { "backend.image_format" = "qcow2", "workload.ramp_time" = "5s" }\n')
    p, out = vqsim_check([manifest])
    check(out is not None and p.returncode == 0, f"ramp-time manifest: exit 0 (got {p.returncode}: {p.stderr.strip()})")
    if out:
        ramp = [f for f in out["findings"] if f["rule"] == "ramp-time"]
        check(rules(out) == ["ramp-time"] and len(ramp) == 1 and "'thin'" in ramp[0]["subject"],
              f"ramp-time: one warning for the run without ramp_time, got {json.dumps(out['findings'], indent=1)}")
    check(os.path.exists(writes_path), "writes.json written")

    # Seed 004 as posted: "8097 million IOPS".
    p, out = vqsim_check([os.path.join(HERE, "data", "check", "seed004-as-posted.toml")])
    check(p.returncode == 3, f"seed004-as-posted: exit 3, got {p.returncode}: {p.stderr.strip()}")
    if out:
        slip = [f for f in out["findings"] if f["rule"] == "unit-slip"]
        check(rules(out) == ["unit-slip"] and slip and abs(slip[0].get("corrected", 0) - 8097) <= 81,
              f"seed004-as-posted: unit-slip with corrected ~8097, got {json.dumps(out['findings'], indent=1)}")

    # --repeats (issue 17, item 5): stored real runs of one job in every fio output format.
    rep = os.path.join(HERE, "data", "check", "repeats")

    def repeats(names, extra=()):
        paths = [os.path.join(rep, n) for n in names]
        p, out = vqsim_check(paths, ["--repeats", "--threads", "2", *extra])
        text = subprocess.run([VQSIM, "check", *paths, "--repeats", "--threads", "2", *extra], capture_output=True, text=True,
                              timeout=120)
        return p, out, text

    formats = ["rr-qd8.json", "rr-qd8.jsonplus", "rr-qd8.txt", "rr-qd8.terse"]
    p, out, text = repeats(formats)
    check(p.returncode == 0 and out is not None, f"repeats, four formats: exit 0 with JSON (got {p.returncode}: {p.stderr.strip()})")
    if out:
        check([f["measured"] for f in out["files"]] == [1, 1, 1, 1], f"repeats, four formats: one direction each: {out['files']}")
        spread = [f for f in out["findings"] if f["rule"] == "spread"]
        check(len(spread) == 1 and all(n in spread[0]["subject"] for n in formats) and spread[0]["subject"].startswith("4 runs"),
              f"repeats, four formats: one spread finding over all four files, got {json.dumps(out['findings'], indent=1)}")
        check(not [f for f in out["findings"] if f["rule"] in ("not-repeats", "repeats")], "repeats, four formats: they are repeats")
        check(spread and "setup compared across the runs" in spread[0]["evidence"], "repeats, four formats: says what was compared")
    check("4 runs: " in text.stdout and all(n in text.stdout for n in formats), "repeats, four formats: text names every file")

    for names, differs in ((["rr-qd1.json", "rr-qd32.json"], "iodepth (1 in"),
                           (["rr-qd1.terse", "rr-qd32.terse"], "IO depth histogram (depth 1 in"),
                           (["rr-qd8.json", "rr-qd32.txt"], "iodepth (8 in"),
                           (["rr-qd8.txt", "rr-bs64k.txt"], "bs (4096 in"),
                           (["rr-qd8.json", "rr-buffered.json"], "direct (true in"),
                           (["rr-qd8.json", "rr-io_uring.json"], "ioengine (libaio in"),
                           (["rr-qd8.json", "rr-nj2.json"], "numjobs ("),
                           (["rr-qd8.json", "rr-32m.json"], "size (16M in")):
        what = f"repeats {' vs '.join(names)}"
        p, out, text = repeats(names)
        check(p.returncode == 3, f"{what}: exit 3, got {p.returncode}: {p.stderr.strip()}")
        if out:
            bad = [f for f in out["findings"] if f["rule"] == "not-repeats"]
            check(len(bad) == 1 and bad[0]["severity"] == "error" and differs in bad[0]["evidence"]
                  and all(n in bad[0]["evidence"] for n in names),
                  f"{what}: one not-repeats error naming '{differs}' and both files, got {json.dumps(out['findings'], indent=1)}")
            check(not [f for f in out["findings"] if f["rule"] == "spread"], f"{what}: no spread verdict for runs of different setups")
        check("ERROR not-repeats" in text.stdout and differs in text.stdout, f"{what}: text output says so")

    p, out, text = repeats(["rr-qd8.terse", "rw-qd8.terse"])
    check(p.returncode == 3 and out and any(f["rule"] == "not-repeats" and "'rr' write in " in f["evidence"] and "rw-qd8.terse" in f["evidence"]
                                            for f in out["findings"]), f"repeats read vs write terse: not-repeats error")
    p, out, text = repeats(["rr-qd8.txt"])
    check(p.returncode == 0 and out and any(f["rule"] == "repeats" and f["severity"] == "warning" and f["file"].endswith("rr-qd8.txt")
                                            for f in out["findings"]), "repeats with one file: a warning naming it")

    # No --device (issue 17, item 9): the physics rules were not applied, and the output says how.
    path = os.path.join(rep, "rr-qd8.json")
    p, out = vqsim_check([path])
    note = [f for f in out["findings"] if f["rule"] == "physics-not-applied"] if out else []
    check(len(note) == 1 and note[0]["severity"] == "info" and "--device" in note[0]["cause"] and "--scenario" in note[0]["cause"],
          f"no --device: a physics-not-applied note in JSON, got {json.dumps(out['findings'] if out else None, indent=1)}")
    text = subprocess.run([VQSIM, "check", path], capture_output=True, text=True, timeout=60)
    check("physics-not-applied" in text.stdout and "no findings" not in text.stdout, "no --device: the text output says so")
    p, out = vqsim_check([path, "--device", "nvme"])
    check(out and not [f for f in out["findings"] if f["rule"] == "physics-not-applied"], "--device nvme: no note")

    # Bad input: exit 2 with a message.
    bad = os.path.join(workdir, "bad.json")
    with open(bad, "w") as f:
        f.write('{"fio version": "fio-3.33", "jobs": [ {"jobname": ')
    badtoml = os.path.join(workdir, "bad.toml")
    with open(badtoml, "w") as f:
        f.write('[setup]\n[[run]]\nname = "x"\nmesured = { "read.iops" = 1 }\n')
    for args, what in (([bad], "malformed JSON"), ([os.path.join(workdir, "missing.json")], "missing file"),
                       ([badtoml], "bad manifest"), ([write(workdir, "ok", clean), "--device", "nvmee"], "unknown --device"),
                       ([write(workdir, "ok2", clean), "--format", "yaml"], "unknown --format")):
        p = subprocess.run([VQSIM, "check", *args], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and p.stderr.strip(), f"{what}: exit 2 with a message (got {p.returncode}: {p.stderr.strip()})")
    p = subprocess.run([VQSIM, "check", badtoml], capture_output=True, text=True, timeout=60)
    check("did you mean 'measured'" in p.stderr, f"bad manifest: suggestion, got {p.stderr.strip()}")
    p = subprocess.run([VQSIM, "check", write(workdir, "ok3", clean), "--device", "nvmee"], capture_output=True, text=True, timeout=60)
    check("nvme" in p.stderr, f"unknown --device: suggestion, got {p.stderr.strip()}")

    print(f"test_check_real: {checks} checks, {failures} failures ({len(variants)} rules, workdir {workdir})")
    if failures == 0 and not keep:
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
