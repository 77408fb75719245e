"""Shared helpers for the notebooks in this directory: find and run the vqsim CLI, save figures.

Environment:
  VQSIM          the vqsim binary (default: ../build/vqsim, relative to this directory)
  VQSIM_FIGURES  where figures are written (default: figures/ next to the notebooks)
  VQSIM_THREADS  --threads for vqsim commands (default 2; results do not depend on it)

Only the Python standard library, matplotlib and pandas (Debian's python3-matplotlib and
python3-pandas).
"""
import atexit
import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile

import matplotlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def vqsim_path():
    p = os.environ.get("VQSIM", os.path.join(HERE, "..", "build", "vqsim"))
    p = os.path.abspath(p)
    if not os.access(p, os.X_OK):
        raise FileNotFoundError(f"vqsim not found at {p}: build it (./scripts/setup) or set VQSIM=/path/to/vqsim")
    return p


VQSIM = vqsim_path()
THREADS = str(int(os.environ.get("VQSIM_THREADS", "2")))
FIGURES = os.path.abspath(os.environ.get("VQSIM_FIGURES", os.path.join(HERE, "figures")))
os.makedirs(FIGURES, exist_ok=True)


def repo(*parts):
    """A path inside the repository."""
    return os.path.join(ROOT, *parts)


def rel(path):
    """A path as the repository names it (for titles and text: no machine paths)."""
    return os.path.relpath(os.path.abspath(path), ROOT)


def tempdir(prefix):
    """A temporary directory, removed when the kernel exits."""
    d = tempfile.mkdtemp(prefix=f"vqsim-{prefix}-")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def vqsim(*args, ok=(0,), cwd=None):
    """Runs vqsim with the arguments; returns stdout. Raises with stderr on an unexpected exit."""
    p = subprocess.run([VQSIM, *map(str, args)], cwd=cwd or ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in ok:
        raise RuntimeError(f"vqsim {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
    return p.stdout


def run_json(scenario, *sets, ios=None, replications=None):
    """`vqsim run SCENARIO --format json` with --set overrides; the parsed JSON."""
    args = ["run", scenario, "--format", "json", "--threads", THREADS]
    for s in sets:
        args += ["--set", s]
    if ios:
        args += ["--ios", ios]
    if replications:
        args += ["--replications", replications]
    return json.loads(vqsim(*args))


def sweep(spec_text, name, mva=False):
    """Writes a sweep spec into a temporary directory, runs `vqsim sweep` there, returns the
    results.csv path. `scenario` in the spec should be an absolute path (use repo())."""
    d = tempdir(name)
    spec = os.path.join(d, f"{name}.toml")
    with open(spec, "w") as f:
        f.write(spec_text)
    args = ["sweep", spec, "--out", os.path.join(d, "out"), "--jobs", THREADS]
    if mva:
        args.append("--mva")
    vqsim(*args)
    return os.path.join(d, "out", "results.csv")


def calibrate_many(jobs, workers=2):
    """Runs `vqsim calibrate` for each job dict (base, manifest, report, holdout=None, out=None)
    at most `workers` at a time; returns the parsed reports in job order. Exit 1 (did not
    converge) still writes the report, which says so."""
    def one(j):
        out = j.get("out") or j["report"].replace(".json", ".toml")
        args = ["calibrate", "--scenario", j["base"], "--data", j["manifest"], "--out", out,
                "--report", j["report"], "-q", "--threads", "1"]
        if j.get("holdout"):
            args += ["--holdout", j["holdout"]]
        vqsim(*args, ok=(0, 1))
        with open(j["report"]) as f:
            return json.load(f)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(one, jobs))


def style():
    """One look for every figure; text stays text in SVG (small files), no dates in metadata."""
    matplotlib.rcParams.update({
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "savefig.bbox": "tight",
        "svg.fonttype": "none",
        "svg.hashsalt": "vqsim",
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.titlesize": 11,
        "axes.labelsize": 10,
        "legend.fontsize": 8,
        "xtick.labelsize": 9,
        "ytick.labelsize": 9,
    })


def human(x, _pos=None):
    """A tick label as engineers write it: 950, 1.2k, 31k, 2.1M."""
    a = abs(x)
    if a == 0:
        return "0"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")):
        if a >= div:
            v = x / div
            return (f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.1f}".rstrip("0").rstrip(".")) + suffix
    return f"{x:.2g}"


def log_ticks(ax, axis="y"):
    """Readable labels on a log axis: plain numbers (31k, 500); evenly spaced ticks when the axis
    spans less than a decade, 2 and 5 between the powers of ten labelled while there is room (up to
    0.75 decades per inch of axis)."""
    import math
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator
    a = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    decades = math.log10(hi / lo) if lo > 0 else 9
    a.set_major_formatter(FuncFormatter(human))
    if decades < 1:
        a.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        a.set_minor_locator(NullLocator())
        return
    a.set_major_locator(LogLocator(base=10))
    a.set_minor_locator(LogLocator(base=10, subs=(2, 5)))
    box = ax.get_window_extent().transformed(ax.figure.dpi_scale_trans.inverted())
    inches = box.height if axis == "y" else box.width
    a.set_minor_formatter(FuncFormatter(human) if decades <= 0.75 * inches else NullFormatter())


def save(fig, name):
    """Saves FIG as figures/NAME.png (256 colours) and figures/NAME.svg; returns the PNG path."""
    import io

    from PIL import Image as PILImage  # Pillow: a dependency of matplotlib (python3-pil)
    png = os.path.join(FIGURES, name + ".png")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    # 256 colours, no dithering: the same picture at a third of the bytes (plots have few colours).
    im = PILImage.open(buf).convert("RGB").quantize(colors=256, method=PILImage.Quantize.MEDIANCUT, dither=PILImage.Dither.NONE)
    im.save(png, optimize=True)
    fig.savefig(os.path.join(FIGURES, name + ".svg"), metadata={"Date": None, "Creator": None})
    return png
