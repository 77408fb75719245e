#!/usr/bin/env python3
"""Real fio outputs, every format of the same run, read back by `vqsim import`.

Runs Debian's fio here (ioengine=null, and libaio with O_DIRECT on a temporary file) with
several output formats at once (`--output-format=json+,normal,terse`, terse versions 2-5),
numjobs=2 with and without group_reporting, and --status-interval; splits each output into its
JSON, normal-text and terse parts; imports every part with `vqsim import --format json`; and
checks that all formats of one run give the same numbers within the rounding each format
applies. Also: the fio JSON round trip, and malformed inputs exit 2 with a message, quickly; and
issue 17's checks: vqsim's own prediction through `vqsim check`, fio's size units (bs=4KiB is
4000 bytes to fio), and a mail post holding two fio outputs.

usage: test_fio_real.py VQSIM_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

VQSIM = sys.argv[1]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run_fio(workdir, name, args):
    out = os.path.join(workdir, name + ".out")
    cmd = ["fio", "--output=" + out] + args
    subprocess.run(cmd, cwd=workdir, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    with open(out, encoding="utf-8", errors="replace") as f:
        return f.read()


def split_formats(text):
    """Splits a combined fio output into (json, normal, terse) texts."""
    lines = text.splitlines(keepends=True)
    json_part, normal, terse = [], [], []
    depth = 0
    in_json = False
    for line in lines:
        if not in_json and line.startswith("{") and depth == 0:
            in_json = True
        if in_json:
            json_part.append(line)
            depth += line.count("{") - line.count("}")
            if depth == 0:
                in_json = False
            continue
        if line[:2] in ("2;", "3;", "4;", "5;"):
            terse.append(line)
        else:
            normal.append(line)
    return "".join(json_part), "".join(normal), "".join(terse)


def vqsim_import(path, fmt="json"):
    p = subprocess.run([VQSIM, "import", path, "--format", fmt], capture_output=True, text=True, timeout=60)
    return p


def imported(workdir, name, text):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    p = vqsim_import(path)
    check(p.returncode == 0, f"vqsim import {name} exits 0 (got {p.returncode}: {p.stderr.strip()})")
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)


def close(a, b, rel, abs_tol=0.0):
    if a is None or b is None:
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)


def compare(ref, other, label, rel_iops, lat_abs_ns, pct_abs_ns, cpu_abs):
    """Every job and direction of `other` agrees with `ref` (the JSON) within the tolerances."""
    check(len(ref["jobs"]) == len(other["jobs"]), f"{label}: same number of jobs ({len(ref['jobs'])} vs {len(other['jobs'])})")
    for jr, jo in zip(ref["jobs"], other["jobs"]):
        for d in ("read", "write"):
            if d not in jr:
                continue
            r, o = jr[d], jo.get(d)
            check(o is not None, f"{label}: {d} present")
            if o is None:
                continue
            check(close(r["iops"], o["iops"], rel_iops, 1.0), f"{label}: {d}.iops {r['iops']} vs {o['iops']}")
            check(close(r["bw_bytes_per_s"], o["bw_bytes_per_s"], rel_iops, 1024), f"{label}: {d}.bw {r['bw_bytes_per_s']} vs {o['bw_bytes_per_s']}")
            for k in ("clat", "lat"):
                if k in r and k in o and "mean_ns" in r[k]:
                    check(close(r[k]["mean_ns"], o[k]["mean_ns"], 0.01, lat_abs_ns), f"{label}: {d}.{k}.mean {r[k]['mean_ns']} vs {o[k]['mean_ns']}")
            pr = r.get("clat", {}).get("percentiles_ns", {})
            po = o.get("clat", {}).get("percentiles_ns", {})
            for key in ("50.000000", "99.000000"):
                if key in pr:
                    check(key in po and close(pr[key], po[key], 0.01, pct_abs_ns), f"{label}: {d}.clat p{key} {pr.get(key)} vs {po.get(key)}")
        cr, co = jr.get("cpu", {}), jo.get("cpu", {})
        for k in ("usr_percent", "sys_percent"):
            if k in cr:
                check(k in co and close(cr[k], co[k], 0.0, cpu_abs), f"{label}: cpu.{k} {cr.get(k)} vs {co.get(k)}")
        dr = jr.get("iodepth", {}).get("level_percent", {})
        do = jo.get("iodepth", {}).get("level_percent", {})
        for k, v in dr.items():
            if v >= 0.1:
                check(k in do and close(v, do[k], 0.0, 0.1), f"{label}: iodepth {k} {v} vs {do.get(k)}")


def formats_agree(workdir, name, args, terse_version):
    text = run_fio(workdir, name, args + ["--output-format=json+,normal,terse", f"--terse-version={terse_version}"])
    js, normal, terse = split_formats(text)
    j = imported(workdir, name + ".json", js)
    n = imported(workdir, name + ".txt", normal)
    t = imported(workdir, name + ".terse", terse)
    if j is None:
        return None
    check(j["format"] == "json+", f"{name}: JSON with bins is detected as json+ (got {j['format']})")
    if n is not None:
        check(n["format"] == "normal", f"{name}: normal text detected (got {n['format']})")
        # Normal text rounds IOPS and BW to 4 significant figures, latencies to 2 decimals in the
        # unit of the line, percentiles to the unit, CPU to 2 decimals.
        compare(j, n, f"{name} normal vs json", 0.006, 20, 1000, 0.011)
    if t is not None:
        check(t["format"] == "terse" and t.get("terse_version") == terse_version, f"{name}: terse v{terse_version} detected")
        # Terse: IOPS whole, bandwidth in KiB/s, latencies in µs with 6 decimals, percentiles in
        # whole µs, CPU with 6 decimals.
        compare(j, t, f"{name} terse v{terse_version} vs json", 0.001, 5, 1000, 0.001)
    return j


def issue17_checks(work):
    """Issue 17, items 3, 6 and 8: vqsim's prediction checked by vqsim check, fio's size units
    in real fio output, and a mail post holding two fio outputs."""
    # Item 3: `vqsim run --format fio-json` states direct=1 (the model is of O_DIRECT I/O), so
    # `vqsim check` of vqsim's own prediction no longer warns "libaio-buffered ... direct=0".
    for scenario in ("default.toml", "seed000-virtio-blk.toml"):
        p = subprocess.run([VQSIM, "run", os.path.join(SOURCE, "scenarios", scenario), "--format", "fio-json", "--ios", "20000",
                            "--replications", "2"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"run {scenario} --format fio-json exits 0 ({p.stderr.strip()[:200]})")
        if p.returncode != 0:
            continue
        path = os.path.join(work, "predicted-" + scenario.replace(".toml", ".json"))
        with open(path, "w") as f:
            f.write(p.stdout)
        options = json.loads(p.stdout)["jobs"][0]["job options"]
        check(options.get("direct") == "1", f"{scenario}: the prediction's job options state direct=1 ({options})")
        c = subprocess.run([VQSIM, "check", path], capture_output=True, text=True, timeout=120)
        check(c.returncode == 0, f"check of the {scenario} prediction exits 0 ({c.returncode})")
        check("libaio-buffered" not in c.stdout and "direct=0" not in c.stdout,
              f"check of the {scenario} prediction: no buffered-I/O warning ({c.stdout.strip()[:300]})")

    # Item 6: fio (kb_base=1024, its default) runs bs=4KiB as 4000-byte I/O and bs=4KB as 4096;
    # kb_base=1000 turns both around. Its JSON echoes the options as written: import follows fio.
    cases = {"kib": (["--bs=4KiB"], 4000), "kb": (["--bs=4KB"], 4096), "kb1000": (["--kb_base=1000", "--bs=4KiB"], 4096),
             "k1000": (["--kb_base=1000", "--bs=4k"], 4000)}
    for name, (args, want) in cases.items():
        text = run_fio(work, "units-" + name, ["--name=" + name, "--ioengine=null", "--size=1m", "--output-format=json,normal"] + args)
        js, normal, _ = split_formats(text)
        header = normal.splitlines()[0] if normal else ""
        check(f"bs=(R) {want}B-{want}B" in header, f"fio itself ran {args} as {want} bytes ({header})")
        j = imported(work, f"units-{name}.json", js)
        if j is not None:
            got = j["jobs"][0].get("bs_bytes", {}).get("read")
            check(got == want, f"import of fio JSON with {args}: bs_bytes {got}, fio ran {want}")
        p = vqsim_import(os.path.join(work, f"units-{name}.json"), "text")
        check(p.returncode == 0 and p.stdout.splitlines()[0] == header,
              f"import --format text of {args}: start-up line as fio printed it ({p.stdout.splitlines()[:1]} vs {header})")

    # Item 8: seed 000's post, both outputs quoted in the reply: two runs, both returned.
    post = os.path.join(SOURCE, "tests", "data", "fio", "seed000-post.txt")
    p = vqsim_import(post)
    check(p.returncode == 0, f"import of the seed 000 post exits 0 ({p.stderr.strip()[:200]})")
    if p.returncode == 0:
        runs = json.loads(p.stdout)
        check(isinstance(runs, list) and len(runs) == 2, f"the seed 000 post: two results ({type(runs).__name__})")
        if isinstance(runs, list) and len(runs) == 2:
            check([r["jobs"][0]["read"]["iops"] for r in runs] == [31457, 37051], "the seed 000 post: virtio-scsi, then virtio-blk")
            check([r["run"] for r in runs] == [1, 2] and runs[0]["runs"] == 2, "the seed 000 post: runs numbered")
    p = vqsim_import(post, "fio-json")
    check(p.returncode == 0 and len(json.loads(p.stdout)) == 2, "import --format fio-json of the post: two fio documents")
    p = vqsim_import(post, "text")
    check(p.returncode == 0 and p.stdout.count("readtest: (groupid=0, jobs=1): err= 0") == 2, "import --format text of the post: both jobs")


def main():
    if shutil.which("fio") is None:
        print("FAIL: fio is not installed (scripts/install-deps installs it)", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="vqsim-fio-")
    try:
        null = ["--name=mix", "--ioengine=null", "--size=64m", "--rw=randrw", "--rwmixread=70", "--bs=4k", "--iodepth=8",
                "--runtime=1", "--time_based"]
        for v in (2, 3, 4, 5):
            formats_agree(work, f"null-jobs2-v{v}", null + ["--numjobs=2"], v)
        g = formats_agree(work, "null-group", null + ["--numjobs=2", "--group_reporting"], 3)
        if g is not None:
            check(len(g["jobs"]) == 1 and g["jobs"][0].get("jobs") == 2, "group_reporting gives one entry for 2 jobs")
        img = os.path.join(work, "aio.img")
        with open(img, "wb") as f:
            f.truncate(64 << 20)
        aio = ["--name=aio", "--filename=" + img, "--ioengine=libaio", "--direct=1", "--rw=randread", "--bs=4k", "--iodepth=4",
               "--runtime=1", "--time_based"]
        a = formats_agree(work, "libaio", aio, 3)
        if a is not None:
            check(a["jobs"][0]["read"]["iops"] > 0, "libaio run did I/O")

        # --status-interval: several documents in JSON and in normal text; the last is final.
        text = run_fio(work, "status", null + ["--numjobs=1", "--runtime=3", "--status-interval=1", "--output-format=json,normal"])
        js, normal, _ = split_formats(text)
        # The splitter above keeps only the first JSON document; hand the whole file in instead.
        p = vqsim_import(os.path.join(work, "status.out"))
        check(p.returncode == 0, "status-interval output imports")
        if p.returncode == 0:
            s = json.loads(p.stdout)
            check(s["documents"] >= 2, f"status-interval: several documents ({s['documents']})")

        # Round trip: fio JSON -> vqsim import --format fio-json -> import again: the same numbers.
        src = os.path.join(work, "null-group.json")
        p = vqsim_import(src, "fio-json")
        check(p.returncode == 0, "import --format fio-json exits 0")
        if p.returncode == 0:
            rt = os.path.join(work, "roundtrip.json")
            with open(rt, "w") as f:
                f.write(p.stdout)
            a, b = vqsim_import(src), vqsim_import(rt)
            if a.returncode == 0 and b.returncode == 0:
                ja, jb = json.loads(a.stdout)["jobs"], json.loads(b.stdout)["jobs"]
                for x, y in zip(ja, jb):
                    for d in ("read", "write"):
                        for k in ("iops", "bw_bytes_per_s", "io_bytes", "total_ios"):
                            check(close(x[d].get(k), y[d].get(k), 1e-9), f"round trip {d}.{k} {x[d].get(k)} vs {y[d].get(k)}")
                        for lat in ("slat", "clat", "lat"):
                            check(close(x[d][lat]["mean_ns"], y[d][lat]["mean_ns"], 1e-9), f"round trip {d}.{lat}.mean")
                        check(x[d]["clat"].get("percentiles_ns") == y[d]["clat"].get("percentiles_ns"), f"round trip {d} percentiles")

        issue17_checks(work)

        # Malformed inputs: exit 2, a message naming the file, never a crash or a hang.
        with open(os.path.join(work, "null-group.json")) as f:
            good = f.read()
        bad = {
            "truncated.json": good[: len(good) // 2],
            "garbage.bin": "".join(chr(c) for c in range(0, 256)) * 64,
            "cut-percentile.txt": normal.split("clat percentiles")[0] + "clat percentiles (nsec):\n     |  1.00th=[  131],  5.00th=[",
            "empty.txt": "",
            "long-line.txt": "x" * (10 << 20),
        }
        for name, content in bad.items():
            path = os.path.join(work, name)
            with open(path, "w", encoding="latin-1") as f:
                f.write(content)
            t0 = time.monotonic()
            p = vqsim_import(path)
            took = time.monotonic() - t0
            check(p.returncode == 2, f"{name}: exit 2 (got {p.returncode})")
            check(name in p.stderr, f"{name}: the message names the file ({p.stderr.strip()[:200]})")
            check(took < 10, f"{name}: answered in {took:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
