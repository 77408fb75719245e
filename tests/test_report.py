#!/usr/bin/env python3
"""vqsim report without a browser: each kind of input gives a page that embeds the command's own
JSON unchanged; the knee on a made-up sweep whose knee is known; a plan's margins; the page
refers to nothing outside itself; bad usage and bad input exit 2 with a message that says what
to give instead, and write nothing.

usage: test_report.py VQSIM SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

vqsim, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
tmp = tempfile.mkdtemp(prefix="vqsim-report-test-")
fails = passes = 0


def check(what, ok, detail=""):
    global fails, passes
    if ok:
        passes += 1
    else:
        fails += 1
        print(f"FAIL: {what}" + (f"\n  {detail}" if detail else ""), file=sys.stderr)


def run(*args):
    return subprocess.run([vqsim] + list(args), cwd=tmp, capture_output=True, text=True, timeout=300)


def embedded(page):
    text = open(os.path.join(tmp, page), encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="vqsim-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1)), text


# ---------------------------------------------------------------- a sweep with a known knee
# Series "blk": IOPS 100, 190, 350, 380, 390 and p99 10, 11, 12, 20, 40 at iodepth 1..16: the step
# 4 -> 8 adds 8.6% IOPS and 67% p99, so the knee is iodepth 4 (point 2). Series "scsi" grows its
# IOPS by 20% or more at every step: no knee.
os.makedirs(os.path.join(tmp, "knee"))
rows = []
for driver, iops, p99 in (("blk", [100, 190, 350, 380, 390], [10, 11, 12, 20, 40]),
                          ("scsi", [100, 150, 200, 240, 290], [10, 20, 40, 80, 160])):
    for depth, i, p in zip([1, 2, 4, 8, 16], iops, p99):
        rows.append({"point": len(rows), "settings": {"guest.driver": driver, "workload.iodepth": str(depth)}, "method": "des",
                     "metrics": {"total.iops": {"mean": i, "half_width_95": i / 50},
                                 "read.clat_p99_us": {"mean": p, "half_width_95": p / 20}},
                     "bottleneck": "host.main_loop" if depth >= 8 else "guest.fio_job0", "little_ok": True})
with open(os.path.join(tmp, "knee", "results.jsonl"), "w") as f:
    f.write("".join(json.dumps(r) + "\n" for r in rows))
p = run("report", "knee", "--out", "knee.html")
check("a sweep directory: exit 0", p.returncode == 0, p.stderr)
if p.returncode == 0:
    doc, text = embedded("knee.html")
    check("... embeds results.jsonl unchanged", doc["data"] == rows)
    der = doc["derived"]
    check("... x is the last numeric axis, one curve per driver", der["x"] == "workload.iodepth" and der["series_keys"] == ["guest.driver"],
          str(der["x"]) + " " + str(der["series_keys"]))
    check("... judged on total.iops and read.clat_p99_us",
          der["throughput_metric"] == "total.iops" and der["latency_metric"] == "read.clat_p99_us")
    check("... log2 axis for 1..16", der["x_scale"] == "log2")
    blk, scsi = der["series"]
    check("... blk's knee is iodepth 4 (point 2)", blk["knee"] and blk["knee"]["point"] == 2 and blk["knee"]["x_value"] == 4, str(blk["knee"]))
    check("... with the next step's gains", blk["knee"] and abs(blk["knee"]["throughput_gain_rel"] - (380 / 350 - 1)) < 1e-12
          and abs(blk["knee"]["latency_gain_rel"] - (20 / 12 - 1)) < 1e-12)
    check("... scsi has none, and says why", scsi["knee"] is None and "no step" in scsi["knee_note"], str(scsi))
    check("... both bottlenecks listed", der["bottlenecks"] == ["guest.fio_job0", "host.main_loop"])
    check("the page forbids every request (CSP default-src 'none')", "default-src 'none'" in text)
    check("... and loads nothing from outside", not re.search(r"<script[^>]+src=|<link[^>]+href=|<iframe", text))
    check("... Vega, Vega-Lite and vega-embed inlined", all(s in text for s in ('t.version="6.4.0"', 'var n="6.5.0"')))
p = run("report", "knee/results.jsonl", "--out", "knee2.html")
check("results.jsonl itself: the same page data", p.returncode == 0 and embedded("knee2.html")[0]["data"] == rows, p.stderr)

# ---------------------------------------------------------------- compare and plan: their own JSON
whatif = [f"{src}/scenarios/default.toml", "--vs", "host.aio=io_uring", "--ios", "3000", "--replications", "2", "--threads", "2"]
p = run("compare", *whatif, "--format", "json")
expected = json.loads(p.stdout)
p = run("report", *whatif, "--out", "whatif.html")
check("a what-if: exit 0", p.returncode == 0, p.stderr)
if p.returncode == 0:
    doc, _ = embedded("whatif.html")
    check("... embeds what compare --format json prints", doc["kind"] == "compare" and doc["data"] == expected)
with open(os.path.join(tmp, "c.json"), "w") as f:
    json.dump(expected, f)
p = run("report", "c.json", "--out", "c.html")
check("compare's saved JSON: the same page data", p.returncode == 0 and embedded("c.html")[0]["data"] == expected, p.stderr)
broken = json.loads(json.dumps(expected))
del broken["comparisons"][0]["vs"]
with open(os.path.join(tmp, "broken.json"), "w") as f:
    json.dump(broken, f)
p = run("report", "broken.json", "--out", "broken.html")
check("an edited compare JSON that lacks a field: exit 2 naming the file", p.returncode == 2 and "broken.json:1: not the JSON vqsim writes" in p.stderr,
      p.stderr)
check("... and writes no page", not os.path.exists(os.path.join(tmp, "broken.html")))

plan = [f"{src}/scenarios/seed004-vm.toml", "--maximize", "workload.numjobs", "--subject-to", "read.lat_mean_us <= 2000",
        "--ios", "3000", "--replications", "2", "--threads", "2"]
p = run("plan", *plan, "--format", "json")
expected = json.loads(p.stdout)
p = run("report", *plan, "--out", "plan.html")
check("a plan: exit 0", p.returncode == 0, p.stderr)
if p.returncode == 0:
    doc, _ = embedded("plan.html")
    check("... embeds what plan --format json prints", doc["kind"] == "plan" and doc["data"] == expected)
    m = doc["derived"]["margins"][0]
    want = (2000 - expected["checks"][0]["value"]["mean"]) / 2000
    check("... the margin is (bound - value) / bound", abs(m["margin_rel"] - want) < 1e-12, f"{m} vs {want}")
    want = (2000 - expected["checks"][0]["value"]["upper"]) / 2000
    check("... and at the interval's upper end", abs(m["interval_end_margin_rel"] - want) < 1e-12)
infeasible = [f"{src}/scenarios/seed004-vm.toml", "--maximize", "workload.numjobs", "--subject-to", "read.lat_mean_us <= 1",
              "--ios", "2000", "--replications", "2", "--threads", "2"]
p = run("report", *infeasible, "--out", "none.html")
check("an infeasible plan: the page is written, exit 1 as plan's", p.returncode == 1 and os.path.exists(os.path.join(tmp, "none.html")),
      p.stderr)

# ---------------------------------------------------------------- a calibration
cal = ["calibrate", "--scenario", f"{src}/scenarios/seed000-virtio-scsi.toml",
       "--data", f"{src}/calibration/data/seeds/000-virtio-scsi-vs-blk.toml", "--fit", "guest.cpu_scale,host.cpu_scale",
       "--out", "fit.toml", "--report", "r.json", "--html", "cal.html", "--threads", "2", "-q"]
p = run(*cal)
check("calibrate --html: exit 0", p.returncode == 0, p.stderr)
if p.returncode == 0:
    report = json.load(open(os.path.join(tmp, "r.json")))
    check("... the page embeds the --report JSON", embedded("cal.html")[0]["data"] == report)
    check("... FIT.toml does not name the page (its bytes do not depend on --html)", "cal.html" not in open(os.path.join(tmp, "fit.toml")).read())
    p = run("report", "fit.toml", "--report", "r.json", "--out", "fit.html")
    check("report FIT.toml --report R.json: exit 0", p.returncode == 0, p.stderr)
    check("... the same data", p.returncode == 0 and embedded("fit.html")[0]["data"] == report)
    p = run("report", "r.json", "--out", "r.html")
    check("report R.json alone: the same data", p.returncode == 0 and embedded("r.html")[0]["kind"] == "calibration", p.stderr)
    other = json.loads(json.dumps(report))
    other["params"][0]["estimate"] *= 1.1
    with open(os.path.join(tmp, "other.json"), "w") as f:
        json.dump(other, f)
    p = run("report", "fit.toml", "--report", "other.json", "--out", "x.html")
    check("a report of another fit is refused (exit 2, names the parameter)",
          p.returncode == 2 and "not the report of fit.toml's fit" in p.stderr and report["params"][0]["key"] in p.stderr, p.stderr)
    p = run("report", "fit.toml", "--out", "x.html")
    check("FIT.toml without --report: exit 2, says to give --report or calibrate --html",
          p.returncode == 2 and "--report R.json" in p.stderr and "--html" in p.stderr, p.stderr)

# ---------------------------------------------------------------- bad usage and input: exit 2
os.makedirs(os.path.join(tmp, "empty"))
os.makedirs(os.path.join(tmp, "unfinished"))
open(os.path.join(tmp, "unfinished", "journal.rank0.jsonl"), "w").close()
with open(os.path.join(tmp, "bad.json"), "w") as f:
    f.write('{\n  "a": 1,\n  oops\n}\n')
with open(os.path.join(tmp, "other-kind.json"), "w") as f:
    f.write('{"hello": 1}\n')
with open(os.path.join(tmp, "badrows.jsonl"), "w") as f:
    f.write(json.dumps(rows[0]) + "\n{\"x\": 1}\n")
cases = [
    ("no --out", ["knee"], "needs --out"),
    ("no INPUT", ["--out", "x.html"], "needs an INPUT"),
    ("a missing input", ["nothere", "--out", "x.html"], "no such file"),
    ("a directory without results.jsonl", ["empty", "--out", "x.html"], "no results.jsonl"),
    ("an unfinished sweep", ["unfinished", "--out", "x.html"], "--resume"),
    ("malformed JSON names its line", ["bad.json", "--out", "x.html"], "bad.json:3:"),
    ("JSON of another kind", ["other-kind.json", "--out", "x.html"], "other-kind.json:1: not a JSON vqsim report knows"),
    ("a results.jsonl line that is not a point", ["badrows.jsonl", "--out", "x.html"], "badrows.jsonl:2: not a sweep point"),
    ("a plain scenario alone", [f"{src}/scenarios/default.toml", "--out", "x.html"], "add --vs"),
    ("--format", [f"{src}/scenarios/default.toml", "--vs", "host.aio=native", "--format", "json", "--out", "x.html"], "--format"),
    ("--vs and --maximize together", [f"{src}/scenarios/default.toml", "--vs", "host.aio=native", "--maximize", "workload.numjobs",
                                      "--out", "x.html"], "two reports"),
    ("a bad --vs key (compare's own error)", [f"{src}/scenarios/default.toml", "--vs", "host.iothread=2", "--out", "x.html"], "iothread"),
    ("an unknown option", ["knee", "--bogus", "--out", "x.html"], "unknown option --bogus"),
    ("--out a directory", ["knee", "--out", "empty"], "is a directory"),
]
for what, args, text in cases:
    p = run("report", *args)
    check(f"{what}: exit 2, '{text}'", p.returncode == 2 and text in p.stderr and p.stderr.startswith("vqsim: "),
          f"exit {p.returncode}: {p.stderr.strip()}")
check("... and none of them wrote a page", not os.path.exists(os.path.join(tmp, "x.html")))
p = run("report", "--help")
check("--help: exit 0, names the four kinds and the knee", p.returncode == 0 and all(
    s in p.stdout for s in ("FIT.toml --report R.json", "--vs KEY=VALUE", "DIR", "--maximize", "knee")))

shutil.rmtree(tmp, ignore_errors=True)
print(f"report_end_to_end: {passes} passed, {fails} failed")
sys.exit(1 if fails else 0)
