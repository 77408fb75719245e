#!/usr/bin/env python3
"""Check the measurement manifests of a directory (calibration/data/seeds by default).

Every *.toml there must load as TOML and follow the measurement-manifest contract:
a [setup] table for humans, and one or more [[run]] tables, each with a unique `name`, a `file`
(relative to the manifest; it must exist) and/or inline `measured` numbers, and a `set` table of
scenario keys. Measured keys are `<dir>.<metric>` (dir: read, write; metric: iops, bw_kib,
lat_mean_us, clat_mean_us, clat_p50_us, clat_p99_us, clat_p99.9_us), optionally with a
`_stddev` suffix, or keys the manifest declares in a comment line
    # Extra measured keys: a.b, c.d
Set keys are the standard scenario keys or keys declared in a comment line
    # Extra set keys: host.qemu_version, guest.scheduler
Every measured value is a positive finite number; enumerated set keys hold known values. Every
declared extra key is used, and every *.fio.txt in the directory is named by some run.

Prints one summary line per manifest; problems go to stderr and make the exit status 1.
Python 3.11+ (tomllib), standard library only.
"""

import math
import pathlib
import re
import sys
import tomllib

DIRECTIONS = ("read", "write")
METRICS = ("iops", "bw_kib", "lat_mean_us", "clat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99.9_us")
METRIC_KEYS = {f"{d}.{m}" for d in DIRECTIONS for m in METRICS}
STDDEV_KEYS = {k + "_stddev" for k in METRIC_KEYS}

ENUMS = {
    "guest.driver": {"virtio-blk", "virtio-scsi", "vhost-scsi", "vhost-user-blk", "scsi-hba", "none"},
    "host.aio": {"threads", "native", "io_uring"},
    "host.cache": {"none", "writeback", "writethrough", "directsync", "unsafe"},
    "host.virtio_blk_batching": {"none", "writes", "all"},
    "backend.kind": {"nvme", "sata-ssd", "hdd", "md-raid1", "ceph-rbd", "krbd", "pagecache", "null"},
    "workload.rw": {"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw",
                    "trim", "randtrim", "trimwrite"},
}
POSITIVE_INTS = {"workload.iodepth", "workload.numjobs", "guest.vcpus", "guest.num_queues",
                 "host.cores", "workload.ios"}
NONNEGATIVE_INTS = {"host.iothreads"}
STRINGS = {"workload.bs", "workload.ioengine", "workload.runtime", "workload.ramp_time"}
SCENARIO_KEYS = (set(ENUMS) | POSITIVE_INTS | NONNEGATIVE_INTS | STRINGS
                 | {"workload.rwmixread", "backend.latency_us"})

RUN_FIELDS = {"name", "file", "measured", "set"}
SIZE = re.compile(r"^\d+(\.\d+)?(k|K|KiB|m|M|MiB|g|G|GiB|t|T|TiB|B|KB|MB|GB|TB)?$")
DURATION = re.compile(r"^\d+(\.\d+)?(ns|us|µs|ms|s|min|h)$")


def declared(text, label):
    """Keys listed in a '# <label>: a, b' comment line ('none' or empty lists nothing)."""
    keys = set()
    pattern = re.compile(r"^#\s*" + re.escape(label) + r"\s*:\s*(.*)$", re.IGNORECASE)
    for line in text.splitlines():
        m = pattern.match(line.strip())
        if not m:
            continue
        body = re.sub(r"\(.*?\)", "", m.group(1))  # drop remarks in parentheses
        for word in body.split(","):
            word = word.strip()
            if word and word.lower() != "none":
                keys.add(word)
    return keys


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_set_value(key, v):
    """A problem description for the value of a known scenario key, or None."""
    if key in ENUMS:
        if v not in ENUMS[key]:
            return f"{v!r} is not one of {sorted(ENUMS[key])}"
    elif key in POSITIVE_INTS:
        if not (isinstance(v, int) and not isinstance(v, bool) and v > 0):
            return f"{v!r} is not a positive integer"
    elif key in NONNEGATIVE_INTS:
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
            return f"{v!r} is not a non-negative integer"
    elif key == "workload.rwmixread":
        if not (is_number(v) and 0 <= v <= 100):
            return f"{v!r} is not a percentage"
    elif key == "workload.bs":
        if not (isinstance(v, str) and SIZE.match(v)):
            return f"{v!r} is not a size string such as \"4k\""
    elif key in ("workload.runtime", "workload.ramp_time"):
        if not (isinstance(v, str) and DURATION.match(v)):
            return f"{v!r} is not a duration string such as \"30s\""
    elif key in STRINGS:
        if not isinstance(v, str):
            return f"{v!r} is not a string"
    elif key == "backend.latency_us":
        if not (is_number(v) and v >= 0):
            return f"{v!r} is not a non-negative number"
    return None


def check_manifest(path, referenced):
    problems = []
    text = path.read_text(encoding="utf-8")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return [f"{path.name}: not valid TOML: {e}"], None

    extra_set = declared(text, "Extra set keys")
    extra_measured = declared(text, "Extra measured keys")
    for k in extra_set & SCENARIO_KEYS:
        problems.append(f"{path.name}: '{k}' is declared as an extra set key but is a scenario key")
    for k in extra_measured & METRIC_KEYS:
        problems.append(f"{path.name}: '{k}' is declared as an extra measured key but is a standard one")

    for k in doc:
        if k not in ("setup", "run"):
            problems.append(f"{path.name}: unknown top-level key '{k}'")
    if not isinstance(doc.get("setup"), dict):
        problems.append(f"{path.name}: no [setup] table")
    runs = doc.get("run")
    if not isinstance(runs, list) or not runs:
        return problems + [f"{path.name}: no [[run]] tables"], None

    names = set()
    used_set, used_measured = set(), set()
    n_files = n_inline = n_values = 0
    for i, run in enumerate(runs):
        name = run.get("name")
        where = f"{path.name}: run {i + 1}" + (f" '{name}'" if isinstance(name, str) else "")
        for k in run:
            if k not in RUN_FIELDS:
                problems.append(f"{where}: unknown field '{k}'")
        if not isinstance(name, str) or not name:
            problems.append(f"{where}: no name")
        elif name in names:
            problems.append(f"{where}: duplicate name")
        else:
            names.add(name)

        if "file" not in run and "measured" not in run:
            problems.append(f"{where}: neither file nor measured")
        if "file" in run:
            f = run["file"]
            if not isinstance(f, str) or not f:
                problems.append(f"{where}: file is not a path string")
            elif pathlib.PurePath(f).is_absolute():
                problems.append(f"{where}: file '{f}' is absolute (must be relative to the manifest)")
            else:
                target = (path.parent / f).resolve()
                if not target.is_file():
                    problems.append(f"{where}: file '{f}' does not exist")
                elif target.stat().st_size == 0:
                    problems.append(f"{where}: file '{f}' is empty")
                else:
                    referenced.add(target)
                    n_files += 1
        if "measured" in run:
            m = run["measured"]
            if not isinstance(m, dict) or not m:
                problems.append(f"{where}: measured is not a non-empty table")
            else:
                n_inline += 1
                for k, v in m.items():
                    if k not in METRIC_KEYS and k not in STDDEV_KEYS and k not in extra_measured:
                        problems.append(f"{where}: measured key '{k}' is not <read|write>.<metric>[_stddev]"
                                        " and not declared in '# Extra measured keys:'")
                    used_measured.add(k)
                    if not is_number(v) or not math.isfinite(v) or v <= 0:
                        problems.append(f"{where}: measured '{k}' = {v!r} is not a positive number")
                    n_values += 1
        s = run.get("set")
        if not isinstance(s, dict) or not s:
            problems.append(f"{where}: set is not a non-empty table")
        else:
            for k, v in s.items():
                used_set.add(k)
                if k in SCENARIO_KEYS:
                    bad = check_set_value(k, v)
                    if bad:
                        problems.append(f"{where}: set '{k}': {bad}")
                elif k not in extra_set:
                    problems.append(f"{where}: set key '{k}' is neither a scenario key nor declared in"
                                    " '# Extra set keys:'")
                elif not isinstance(v, (str, int, float, bool)):
                    problems.append(f"{where}: set '{k}' is not a plain value")

    for k in sorted(extra_set - used_set):
        problems.append(f"{path.name}: extra set key '{k}' is declared but no run uses it")
    for k in sorted(extra_measured - used_measured):
        problems.append(f"{path.name}: extra measured key '{k}' is declared but no run uses it")

    extras = sorted(extra_set | extra_measured)
    summary = (f"{path.name}: {len(runs)} runs ({n_files} with a fio file, {n_inline} inline,"
               f" {n_values} measured values); extra keys: {', '.join(extras) if extras else 'none'}")
    return problems, summary


def main(argv):
    if len(argv) > 2:
        print("usage: check_seed_manifests.py [DIRECTORY]", file=sys.stderr)
        return 2
    default = pathlib.Path(__file__).resolve().parent.parent / "calibration" / "data" / "seeds"
    directory = pathlib.Path(argv[1]) if len(argv) == 2 else default
    manifests = sorted(directory.glob("*.toml"))
    if not manifests:
        print(f"{directory}: no *.toml manifests", file=sys.stderr)
        return 1
    problems = []
    referenced = set()
    for path in manifests:
        found, summary = check_manifest(path, referenced)
        problems += found
        if summary:
            print(summary)
    for data in sorted(directory.glob("*.fio.txt")):
        if data.resolve() not in referenced:
            problems.append(f"{data.name}: no manifest names this file")
    for p in problems:
        print("problem: " + p, file=sys.stderr)
    print(f"{len(manifests)} manifests, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
