#!/usr/bin/env python3
"""vqsim report in a real browser: one kind of page (calibration, compare, sweep, plan) made from a
short run, opened in headless Chromium with the network off, must draw without a console message
of any kind (a JavaScript exception, console.error, a refused request), and every number it shows
or plots must be the one in the command's own JSON (calibrate --report, compare/plan --format
json, the sweep's results.jsonl). Saves a screenshot.

usage: test_report_browser.py VQSIM SOURCE_DIR KIND SCREENSHOT_DIR
Exit 0 pass, 1 fail, 77 skipped (no chromium).
"""
import html
import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd, expect=0):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode} (expected {expect})\n{p.stderr[-3000:]}")
    return p.stdout


def embedded_doc(page):
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="vqsim-data">(.*?)</script>', text, re.S)
    if not m:
        fail(f"{page}: no embedded JSON")
    # Nothing the page could load from elsewhere: no external scripts, styles, images or frames.
    for pattern in (r"<script[^>]+src=", r"<link[^>]+href=", r"<img[^>]+src=\"?https?:", r"<iframe"):
        if re.search(pattern, text):
            fail(f"{page}: refers to something outside the page ({pattern})")
    return json.loads(m.group(1))


def resolve(doc, pointer):
    v = doc
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        v = v[int(part)] if isinstance(v, list) else v[part]
    return v


def parse_shown(text):
    """The number a shown text stands for and how far it may be from it by rounding alone."""
    t = text.replace(",", "").strip()
    t = t[:-1] if t.endswith("%") else t
    t = t[1:] if t.startswith("+") else t
    if t == "–":
        return None, None
    m = re.fullmatch(r"-?\d*(?:\.(\d+))?(?:e([+-]?\d+))?", t)
    if not m:
        raise ValueError(f"not a number: {text!r}")
    decimals = len(m.group(1) or "")
    exp = int(m.group(2)) if m.group(2) is not None else 0
    tol = 0.5 * 10 ** (exp - decimals)
    v = float(t)
    return v, tol * (1 + 1e-9) + 1e-12 * abs(v)


class Cells(html.parser.HTMLParser):
    """Every element with data-path, with its attributes and text; the check element's text."""

    def __init__(self):
        super().__init__()
        self.cells, self.stack, self.check_text, self.in_check = [], [], None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "vqsim-check":
            self.in_check, self.check_text = True, ""
        if tag == "span":
            self.stack.append([a["data-path"], a.get("data-scale"), a.get("data-fn"), ""] if "data-path" in a else None)

    def handle_endtag(self, tag):
        if self.in_check and tag == "pre":
            self.in_check = False
        if tag == "span" and self.stack:
            cell = self.stack.pop()
            if cell is not None:
                self.cells.append(cell)

    def handle_data(self, data):
        if self.in_check:
            self.check_text += data
        for cell in self.stack:
            if cell is not None:
                cell[3] += data


CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # The network off: every host name fails to resolve and every proxied request goes nowhere.
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
    "--enable-logging=stderr", "--v=0",
    # Time for vega-embed's promises and the check to finish before the DOM is dumped.
    "--virtual-time-budget=20000",
]


def chromium(binary, page, profile, *extra):
    cmd = [binary] + CHROMIUM_FLAGS + [f"--user-data-dir={profile}"] + list(extra) + ["file://" + os.path.abspath(page)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # Console messages come out as "...:INFO:CONSOLE:..." (or CONSOLE(n)) whatever their level:
    # the page writes none when all is well, so any one of them fails the test.
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line]
    return p, console


def check_page(page, expected, binary, tmp, screenshot, kind_checks=None):
    doc = embedded_doc(page)
    if doc["data"] != expected:
        fail(f"{page}: the embedded JSON is not the command's JSON")
    p, console = chromium(binary, page, os.path.join(tmp, "profile"), "--dump-dom")
    if p.returncode != 0:
        fail(f"chromium --dump-dom {page}: exit {p.returncode}\n{p.stderr[-2000:]}")
    if console:
        fail(f"{page}: console messages:\n" + "\n".join(console))
    cells = Cells()
    cells.feed(p.stdout)
    if cells.check_text is None:
        fail(f"{page}: no #vqsim-check in the DOM: the page's script did not finish (charts not drawn?)")
    result = json.loads(html.unescape(cells.check_text))
    if result["status"] != "ok" or result["errors"]:
        fail(f"{page}: the page's own check: {result['errors'][:10]}")
    # Against the command's JSON itself (not the page's copy): every number shown...
    truth = {"data": expected, "derived": doc["derived"]}
    if len(cells.cells) != result["cells"] or not cells.cells:
        fail(f"{page}: {len(cells.cells)} numbers in the DOM, the page counted {result['cells']}")
    for path, scale, fn, text in cells.cells:
        v = resolve(truth, path)
        shown, tol = parse_shown(text)
        if shown is None:
            if isinstance(v, (int, float)) and math.isfinite(v):
                fail(f"{page}: {path} shown as '–', JSON {v}")
            continue
        if fn == "factor95":
            v = math.exp(1.96 * v)
        v = v * float(scale or 1)
        if abs(v - shown) > tol:
            fail(f"{page}: {path} shown {text!r}, the JSON says {v}")
    # ... and every value the charts were given.
    if result["charts"] < 1 or not result["plotted"]:
        fail(f"{page}: no chart drawn")
    for pointer, v in result["plotted"]:
        if resolve(truth, pointer) != v:
            fail(f"{page}: chart value at {pointer}: {v}, the JSON says {resolve(truth, pointer)}")
    if kind_checks:
        kind_checks(doc, p.stdout)
    if screenshot:
        p, console = chromium(binary, page, os.path.join(tmp, "profile2"), "--hide-scrollbars", "--window-size=1280,1500",
                              "--screenshot=" + screenshot)
        if console:
            fail(f"{page} (screenshot run): console messages:\n" + "\n".join(console))
        if not os.path.exists(screenshot) or os.path.getsize(screenshot) < 20000:
            fail(f"no screenshot (or an empty one) at {screenshot}")
    print(f"{os.path.basename(page)}: {len(cells.cells)} numbers shown and {len(result['plotted'])} plotted values match the JSON; "
          f"{result['charts']} charts; no console message" + (f"; screenshot {screenshot}" if screenshot else ""))


def knee_of(points, tput, lat):
    """The knee rule, again: the last point before the first step with < 10% more throughput and > 50% more latency."""
    for a, b in zip(points, points[1:]):
        ta, tb = a["metrics"][tput]["mean"], b["metrics"][tput]["mean"]
        la, lb = a["metrics"][lat]["mean"], b["metrics"][lat]["mean"]
        if tb / ta - 1 < 0.10 and lb / la - 1 > 0.50:
            return a["point"]
    return None


def main():
    vqsim, src, kind, shots = sys.argv[1:5]
    vqsim = os.path.abspath(vqsim)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        print("SKIP: chromium is not installed (scripts/install-deps installs Debian's chromium)")
        return SKIP
    os.makedirs(shots, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="vqsim-report-")
    try:
        shot = os.path.join(shots, f"report-{kind}.png")
        if kind == "calibration":
            # Three parameters on seed 000, leave-one-out: a few seconds; a poor fit with parameters not
            # identified, so the page shows both.
            args = [vqsim, "calibrate", "--scenario", f"{src}/scenarios/seed000-virtio-scsi.toml",
                    "--data", f"{src}/calibration/data/seeds/000-virtio-scsi-vs-blk.toml",
                    "--fit", "guest.cpu_scale,host.cpu_scale,backend.read_us", "--cv", "loo",
                    "--out", "fit.toml", "--report", "r.json", "--html", "calibrate.html", "--threads", "2", "-q"]
            run(args, tmp)
            report = json.load(open(os.path.join(tmp, "r.json")))
            run([vqsim, "report", "fit.toml", "--report", "r.json", "--out", "fit.html"], tmp)

            def calibration_checks(doc, dom):
                for p in report["params"]:
                    if p["key"] not in dom:
                        fail(f"the parameter {p['key']} is not on the page")
                if (report["fit_quality"] or "Every fitted figure is within its bar") not in html.unescape(dom):
                    fail("the fit-quality line is not on the page")
            check_page(os.path.join(tmp, "fit.html"), report, binary, tmp, shot, calibration_checks)
            check_page(os.path.join(tmp, "calibrate.html"), report, binary, tmp, None)
        elif kind == "compare":
            args = [f"{src}/scenarios/seed000-virtio-blk.toml", "--vs", "host.iothreads=1", "--vs", "host.aio=native,host.iothreads=1",
                    "--ios", "4000", "--replications", "3", "--threads", "2"]
            expected = json.loads(run([vqsim, "compare"] + args + ["--format", "json"], tmp))
            run([vqsim, "report"] + args + ["--out", "whatif.html"], tmp)

            def compare_checks(doc, dom):
                for c in expected["comparisons"]:
                    for m, v in c["metrics"].items():
                        if m not in dom:
                            fail(f"metric {m} is not on the page")
            check_page(os.path.join(tmp, "whatif.html"), expected, binary, tmp, shot, compare_checks)
        elif kind == "sweep":
            spec = os.path.join(tmp, "spec.toml")
            with open(spec, "w") as f:
                f.write(f'scenario = "{src}/scenarios/seed000-virtio-blk.toml"\n'
                        'metrics = ["total.iops", "read.clat_p99_us", "total.lat_mean_us"]\nreplications = 2\nios = 4000\n'
                        '[[axis]]\nkey = "guest.driver"\nvalues = ["virtio-blk", "virtio-scsi"]\n'
                        '[[axis]]\nkey = "workload.iodepth"\nrange = { from = 1, to = 128, log2 = true }\n')
            run([vqsim, "sweep", spec, "--out", "out", "--jobs", "2"], tmp)
            rows = [json.loads(line) for line in open(os.path.join(tmp, "out", "results.jsonl"))]
            run([vqsim, "report", "out", "--out", "sweep.html"], tmp)

            def sweep_checks(doc, dom):
                der = doc["derived"]
                if der["x"] != "workload.iodepth" or der["series_keys"] != ["guest.driver"]:
                    fail(f"sweep axes: x {der['x']}, series {der['series_keys']}")
                for s in der["series"]:
                    pts = sorted((r for r in rows if r["settings"]["guest.driver"] == s["label"]),
                                 key=lambda r: int(r["settings"]["workload.iodepth"]))
                    knee = knee_of(pts, der["throughput_metric"], der["latency_metric"])
                    got = s["knee"]["point"] if s["knee"] else None
                    if knee != got:
                        fail(f"{s['label']}: the knee is point {knee} by the rule, the page says {got}")
                    if knee is not None and "knee" not in dom:
                        fail("the knee is not marked on the page")
                for r in rows:
                    if r["bottleneck"] not in dom:
                        fail(f"bottleneck {r['bottleneck']} is not on the page")
            check_page(os.path.join(tmp, "sweep.html"), rows, binary, tmp, shot, sweep_checks)
        elif kind == "plan":
            args = [f"{src}/scenarios/seed004-vm.toml", "--maximize", "workload.numjobs", "--subject-to", "read.clat_p99_us <= 2ms",
                    "--ios", "4000", "--replications", "2", "--threads", "2"]
            expected = json.loads(run([vqsim, "plan"] + args + ["--format", "json"], tmp))
            run([vqsim, "report"] + args + ["--out", "plan.html"], tmp)

            def plan_checks(doc, dom):
                for m, k, c in zip(doc["derived"]["margins"], expected["checks"], expected["constraints"]):
                    want = (c["bound"] - k["value"]["mean"]) / abs(c["bound"])
                    if abs(m["margin_rel"] - want) > 1e-12:
                        fail(f"margin {m['margin_rel']}, expected {want}")
                if f"{expected['knob']} = " not in dom:
                    fail("the answer is not on the page")
            check_page(os.path.join(tmp, "plan.html"), expected, binary, tmp, shot, plan_checks)
        else:
            fail(f"unknown kind {kind}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
