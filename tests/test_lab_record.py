#!/usr/bin/env python3
"""calibration/lab/record without QEMU: the consolidated grid's plan (--dry-run), grid errors,
and the manifest it writes for K guests at once (--manifest-only on a recording made up from a
real single-guest one), which `vqsim check` must warn about and `vqsim calibrate` must fit (as two VMs).

    test_lab_record.py VQSIM SOURCE_DIR
"""

import copy
import importlib.machinery
import importlib.util
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

vqsim, src = sys.argv[1], sys.argv[2]
record_path = os.path.join(src, "calibration", "lab", "record")
failures = []


def check(cond, what):
    # what is "claim (got ...)": the evidence is shown only when the claim fails
    print(("ok   " + what.split(" (got ")[0]) if cond else ("FAIL " + what))
    if not cond:
        failures.append(what)


def rec(*args):
    return subprocess.run([sys.executable, record_path, *args], capture_output=True, text=True, timeout=60)


tmp = tempfile.mkdtemp(prefix="vqsim-lab-test-")
try:
    # --- the plan: K = 1..4, 3 passes, every other pass reversed, a go channel per guest
    r = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--dry-run", "--out", tmp + "/x")
    check(r.returncode == 0, f"--dry-run of grids/consolidated.toml exits 0 (got {r.returncode}: {r.stderr[-300:]})")
    r2 = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--dry-run", "--trace-irq",
             "--out", tmp + "/y")
    check(r2.returncode != 0 and "--trace-irq traces guests alone" in r2.stderr,
          f"--trace-irq on a grid of several guests at once is refused, saying why (got {r2.returncode}: {r2.stderr[-300:]})")
    names = re.findall(r"^\s*\d+\. (\S+):", r.stdout, re.M)
    check(len(names) == 24, f"24 groups (2 backends x K 1..4 x 3 passes), got {len(names)}")
    check(names[:4] == [f"nullco0us-blk-io0-na-none-v1-k{k}-p1" for k in (1, 2, 3, 4)],
          f"pass 1 goes K = 1, 2, 3, 4 on null-co first: {names[:4]}")
    check(names[8:12] == [f"file-blk-io0-native-none-v1-k{k}-p2" for k in (4, 3, 2, 1)],
          f"pass 2 is pass 1 reversed: {names[8:12]}")
    check(names[16] == "nullco0us-blk-io0-na-none-v1-k1-p3", f"pass 3 in pass 1's order: {names[16]}")
    jobs = re.findall(r"^\s*\d+\. \S+: (.*)$", r.stdout, re.M)
    check(jobs[0] == "randread-4k-qd1-j1, randread-4k-qd16-j1, randwrite-4k-qd16-j1" and
          jobs[8] == "randwrite-4k-qd16-j1, randread-4k-qd16-j1, randread-4k-qd1-j1",
          f"the jobs too run in reverse order on pass 2: {jobs[0]!r} / {jobs[8]!r}")
    check("-chardev socket,id=go,path=SCRATCH/go-g1.sock,server=on,wait=off -serial chardev:go" in r.stdout,
          "each guest gets a third serial port on a socket for the host's go")
    check("4 guests at once, a start barrier per job" in r.stdout, "the plan says K and the barrier")
    check("180 fio runs" in r.stdout, "180 runs: 3 jobs x (1+2+3+4) guests x 2 backends x 3 passes")

    # --- grid errors
    bad = os.path.join(tmp, "bad.toml")
    for text, want in (("[defaults]\nguests = 0\n[[matrix]]\nbackend = \"null-co\"\n", "guests = 0: expected an integer 1..8"),
                       ("passes = 0\n[[matrix]]\nbackend = \"null-co\"\n", "passes = 0: expected an integer >= 1"),
                       ("[[matrix]]\nguest = 2\n", "unknown key 'guest' (did you mean guests?)")):
        with open(bad, "w") as f:
            f.write(text)
        r = rec(bad, "--dry-run")
        check(r.returncode != 0 and want in r.stderr, f"grid error {want!r} (got {r.returncode}: {r.stderr.strip()[-200:]})")

    # --- a grid that gives runtime several values names its jobs by it; one that does not, as before
    r = rec(os.path.join(src, "calibration", "lab", "grids", "fio-start.toml"), "--dry-run", "--out", tmp + "/fs")
    check(r.returncode == 0 and "randread-4k-qd1-j1-t1-r1, randread-4k-qd1-j1-t4-r1, randread-4k-qd1-j1-t10-r1" in r.stdout
          and "36 fio runs" in r.stdout,
          f"fio-start.toml: jobs named by runtime and repeat, 36 runs (got {r.returncode}: {r.stdout[:600]}{r.stderr[-300:]})")
    with open(bad, "w") as f:
        f.write("[defaults]\nruntime = 4\n[[matrix]]\nbackend = \"null-co\"\niodepth = [1, 4]\n")
    r = rec(bad, "--dry-run", "--out", tmp + "/one")
    check(r.returncode == 0 and "randread-4k-qd1-j1, randread-4k-qd4-j1" in r.stdout and "-t4" not in r.stdout,
          f"one runtime: names without it (got {r.returncode}: {r.stdout[:400]}{r.stderr[-300:]})")

    # --- the manifest of a recording with K = 1 and K = 2, made up from a real single-guest one
    real = os.path.join(src, "calibration", "data", "lab-2026-11-30", "small", "nullco0us-blk-io0-na-none-v1")
    with open(os.path.join(real, "meta.json")) as f:
        meta = json.load(f)
    out = os.path.join(tmp, "consolidated")
    runs = ["randread-4k-qd1-j1", "randread-4k-qd16-j1"]
    for seq, K in ((1, 1), (2, 2)):
        m = copy.deepcopy(meta)
        m.update(seq=seq, name=f"nullco0us-blk-io0-na-none-v1-k{K}", guests=K, layout="guests", attempts=[],
                 **{"pass": 1, "passes": 1})
        m["storage"]["guests"] = K
        m["jobs"] = [j for j in m["jobs"] if j["name"] in runs]
        m["complete_runs"] = [{"name": n, "attempt": 1} for n in runs]
        m["timing"] = [{"run": n, "go_s": 10.0, "ready_s": [9.9] * K, "start_s": [10.0 + 0.01 * i for i in range(K)],
                        "done_s": [15.2] * K, "start_spread_ms": 12.0 * (K - 1), "done_spread_ms": 0.0, "wall_s": 5.2,
                        "qemu_cpu_s": [4.0] * K, "guest_wall_s": [5.2] * K,
                        "host_cpu_s": {"user": 8.0, "nice": 1.0, "system": 1.0, "idle": 0.4, "iowait": 0.0, "irq": 0.0,
                                       "softirq": 0.0, "steal": 0.0},
                        "host_idle_fraction": 0.04, "attempt": 1} for n in runs]
        d = os.path.join(out, m["name"])
        for g in range(1, K + 1):
            os.makedirs(os.path.join(d, f"g{g}"))
            for n in runs:
                shutil.copy(os.path.join(real, n + ".json"), os.path.join(d, f"g{g}", n + ".json"))
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(m, f)
    r = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--out", out, "--manifest-only")
    check(r.returncode == 0, f"--manifest-only exits 0 (got {r.returncode}: {r.stderr[-300:]})")
    with open(os.path.join(out, "manifest.toml"), "rb") as f:
        man = tomllib.load(f)
    by_name = {x["name"]: x for x in man["run"]}
    check(len(man["run"]) == 6, f"one run per guest per job: 2 + 2 x 2 = 6, got {len(man['run'])}")
    k2 = by_name.get("nullco0us-blk-io0-na-none-v1-k2/g2/randread-4k-qd16-j1", {})
    co = k2.get("co_running", [{}])[0]
    check(co.get("count") == 1 and co.get("set", {}).get("workload.iodepth") == 16
          and co.get("set", {}).get("backend.kind") == "null" and co.get("backend") == "own",
          f"a K = 2 run names the other guest, its setup, its job and its own null device: {co}")
    check(k2.get("file") == "nullco0us-blk-io0-na-none-v1-k2/g2/randread-4k-qd16-j1.json", "each guest's file is its own")
    check(all("co_running" not in x for n, x in by_name.items() if "-k1/" in n), "a K = 1 run has no co_running")
    with open(os.path.join(out, "manifest-k1.toml"), "rb") as f:
        k1 = tomllib.load(f)
    check(sorted(x["name"] for x in k1["run"]) == sorted(n for n in by_name if "-k1/" in n),
          "manifest-k1.toml holds the single-guest runs alone")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--out", out, "--summary")
    check(r.returncode == 0 and "| null-co | randread-4k-qd16-j1 | 2 | 12 / 12 | 0.3 % |" in r.stdout,
          f"--summary reports the start spread per job and K (got {r.returncode}: {r.stdout[-600:]}{r.stderr[-300:]})")

    # --- vqsim: calibrate fits the co-running runs as two VMs; check warns and still checks them
    r = subprocess.run([vqsim, "calibrate", "--scenario", os.path.join(src, "scenarios", "lab-tcg.toml"), "--data",
                        os.path.join(out, "manifest.toml"), "--out", os.path.join(tmp, "fit.toml"), "-q", "--fit",
                        "guest.cpu_scale", "--format", "json", "--threads", "2"],
                       capture_output=True, text=True, timeout=120)
    fitted = {}
    try:
        fitted = {x["name"]: x for x in json.loads(r.stdout)["runs"]}
    except (ValueError, KeyError):
        pass
    check(r.returncode in (0, 1) and "nullco0us-blk-io0-na-none-v1-k2/g1/randread-4k-qd1-j1" in fitted and len(fitted) == 6,
          f"calibrate fits the K = 2 runs beside the K = 1 ones (got {r.returncode}: {r.stderr[-400:]})")
    r = subprocess.run([vqsim, "check", os.path.join(out, "manifest.toml"), "--threads", "1"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 3) and "WARNING co-running:" in r.stdout and "4 of 6 runs ran beside other guests" in r.stdout,
          f"check warns once about the 4 co-running runs (got {r.returncode}: {r.stdout[-600:]}{r.stderr[-300:]})")
    # --- each QEMU thread's CPU time, by name: QEMU names its threads, workers come and go
    r = rec(os.path.join(src, "calibration", "lab", "grids", "threads.toml"), "--out", os.path.join(tmp, "thr"), "--dry-run")
    check(r.returncode == 0 and r.stdout.count("-name vqsim,debug-threads=on") == 8,
          f"threads.toml: 8 boots, each QEMU with named threads (got {r.returncode}: {r.stderr[-300:]})")
    # a script without .py: load it by hand
    spec = importlib.util.spec_from_file_location("record", record_path,
                                                  loader=importlib.machinery.SourceFileLoader("record", record_path))
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    before = record.thread_cpu_s(os.getpid())
    sum(i * i for i in range(3_000_000))  # some CPU time on this (the main) thread
    after = record.thread_cpu_s(os.getpid())
    delta = record.thread_cpu_delta(before, after)
    check(len(after) >= 1 and max(delta.values()) > 0, f"thread_cpu_s reads this process's threads by name: {delta}")
    check(record.thread_cpu_delta({"worker": 2.0, "main": 1.0}, {"main": 1.5}) == {"main": 0.5, "worker": 0.0},
          "a thread that ended in between counts 0, never less")
    check(record.thread_cpu_s(2 ** 22 + 12345) == {}, "a process that is gone has no threads")
    wakes = record.thread_switches(os.getpid())
    check(len(wakes) >= 1 and all(isinstance(v, int) and v >= 0 for v in wakes.values()),
          f"thread_switches reads each thread's voluntary context switches by name: {wakes}")
    check(record.thread_switches(2 ** 22 + 12345) == {}, "a process that is gone has no wake-ups")
    # two busy processes on one core: each waits for it while the other runs, and is preempted
    if os.path.exists(f"/proc/{os.getpid()}/schedstat"):
        busy = [subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 0.6: pass"])
                for _ in range(2)]
        for b in busy:
            os.sched_setaffinity(b.pid, {min(os.sched_getaffinity(0))})
        time.sleep(0.4)
        waits = [record.thread_waits(b.pid) for b in busy]
        for b in busy:
            b.wait()
        check(all(len(w) == 1 and list(w.values())[0][0] > 0.05 and list(w.values())[0][1] > 0 for w in waits),
              f"thread_waits reads each thread's run-queue delay (s) and preemptions by name: {waits}")
    check(record.thread_waits(2 ** 22 + 12345) == {}, "a process that is gone has no waits")
    # --- the manifest's measured CPU per I/O: each kind's CPU share over fio's IOPS (both directions)
    check([record.thread_kind(n) for n in ("CPU 0/TCG", "CPU 1/KVM", "IO iot0", "qemu-system-x86", "worker", "call_rcu")]
          == ["vcpus", "vcpus", "iothreads", "main_loop", None, None], "QEMU's thread names map onto vqsim's kinds")
    fj = os.path.join(tmp, "rw.json")
    with open(fj, "w") as f:
        json.dump({"jobs": [{"read": {"iops": 3000.0}, "write": {"iops": 1000.0}}]}, f)
    meta = {"timing": [{"run": "rw", "wall_s": 5.0,
                        "qemu_thread_cpu_s": {"CPU 0/TCG": 2.0, "CPU 1/TCG": 1.0, "qemu-system-x86": 0.5, "IO iot0": 0.4,
                                              "worker": 0.3}}]}
    cpu = record.cpu_per_io(meta, "rw", fj)
    want = {"cpu.vcpus_us_per_io": 150.0, "cpu.main_loop_us_per_io": 25.0, "cpu.iothreads_us_per_io": 20.0}
    check(cpu.keys() == want.keys() and all(abs(cpu[k] - v) < 1e-9 for k, v in want.items()),
          f"3 s of vCPU over 5 s at 4000 IOPS is 150 us per I/O, workers are not a kind (got {cpu})")
    check(record.cpu_per_io(meta, "other", fj) == {} and record.cpu_per_io({}, "rw", fj) == {},
          "a run without timing has no measured CPU")
    # --- its counts per I/O: the guest's request interrupts over the I/Os of ramp and runtime, the
    # emulation threads' switches over the wall time over fio's IOPS; not the vCPU's, not the workers'
    meta["timing"][0]["qemu_thread_wakes"] = {"CPU 0/TCG": 9000, "qemu-system-x86": 4000, "IO iot0": 10000, "worker": 7}
    meta["timing"][0]["guest"] = {"virtio_irqs": {"virtio1-req.0": 12000, "virtio1-config": 5}}
    meta["jobs"] = [{"name": "rw", "runtime": 4, "ramp_time": 1}]
    counts = record.counts_per_io(meta, "rw", fj)
    want = {"count.interrupts_per_io": 0.6, "count.main_loop_wakes_per_io": 0.2, "count.iothreads_wakes_per_io": 0.5}
    check(counts.keys() == want.keys() and all(abs(counts[k] - v) < 1e-9 for k, v in want.items()),
          f"12000 interrupts over 5 s at 4000 IOPS are 0.6 per I/O, 4000 switches of the main loop 0.2 (got {counts})")
    check(record.counts_per_io(meta, "other", fj) == {}, "a run without timing has no counts")
    # --- the guest's counters around a job (its init's guest_counters, before and after fio)
    snaps = ("@uptime 10.50 3.2\ncpu  100 0 200 1000 0 5 7 0 0 0\n"
             " 24:        10   PCI-MSI 49153-edge      virtio1-req.0\n 23:   0   PCI-MSI 49152-edge      virtio1-config\n"
             "@uptime 15.50 3.2\ncpu  300 0 500 1100 0 15 27 0 0 0\n"
             " 24:      5010   PCI-MSI 49153-edge      virtio1-req.0\n 23:   0   PCI-MSI 49152-edge      virtio1-config\n")
    g = record.guest_counter_delta(snaps)
    check(g.get("uptime_s") == 5.0 and g.get("virtio_irqs") == {"virtio1-req.0": 5000, "virtio1-config": 0}
          and g.get("cpu_s", {}).get("system") == 3.0 and g["cpu_s"]["idle"] == 1.0,
          f"the guest's uptime, CPU seconds by kind and interrupts per vector over the job (got {g})")
    check(record.guest_counter_delta("@uptime 1.0 1.0\ncpu 1 2 3 4\n") == {}, "one snapshot is no delta")
    check("cpuidle" not in g, "a guest without a cpuidle driver has no idle states")
    check("context_switches" not in g and "timer_irqs" not in g,
          "a recording made before the context switches and timer interrupts were kept has neither")
    g = record.guest_counter_delta("@uptime 1.0 1.0\ncpu 1 2 3 4\nctxt 1000\n LOC:      400   Local timer interrupts\n"
                                   "@uptime 2.0 1.0\ncpu 1 2 3 5\nctxt 1900\n LOC:      450   Local timer interrupts\n")
    check(g.get("context_switches") == 900 and g.get("timer_irqs") == 50,
          f"the guest's context switches and local timer interrupts over the job (got {g})")
    g = record.guest_counter_delta("@uptime 1.0 1.0\ncpu 1 2 3 4\n@idle POLL 10 50\n@idle C1 100 9000\n"
                                   "@uptime 2.0 1.0\ncpu 1 2 3 5\n@idle POLL 12 70\n@idle C1 400 29000\n")
    check(g.get("cpuidle") == {"POLL": {"usage": 2, "time_us": 20}, "C1": {"usage": 300, "time_us": 20000}},
          f"CPU 0's entries into each idle state and its time there over the job (got {g.get('cpuidle')})")
    # --- QEMU's own trace events (--qemu-trace): counted per event between a job's two offsets
    log = os.path.join(tmp, "qemu-trace.log")
    with open(log, "w") as f:
        f.write("1@1.0:poll_grow ctx 0x1 old 0 new 4000\n")
        start = f.tell()
        f.write("1@2.0:poll_grow ctx 0x1 old 0 new 4000\n1@2.1:poll_shrink ctx 0x1 old 4000 new 0\n"
                "run_poll_handlers_end ctx 0x1 progress 1 new timeout 0\nrun_poll_handlers_end ctx 0x1 progress 0 new "
                "timeout 5\n1@2.2:poll_shrink ctx 0x1 old 4000 new 0\n")
        end = f.tell()
        f.write("1@3.0:poll_grow ctx 0x1 old 0 new 4000\n")
    c = record.trace_counts(log, start, end)
    check(c == {"poll_grow": 1, "poll_shrink": 2, "run_poll_handlers_end": 2, "run_poll_handlers_end.progress=0": 1,
                "run_poll_handlers_end.progress=1": 1},
          f"each event between the job's offsets is counted, a poll's progress apart (got {c})")
    check(record.trace_counts(os.path.join(tmp, "missing.log"), 0, 10) == {}, "no log, no counts")
    bad = record.unknown_trace_events(["poll_grow", "poll_s*", "poll_shrnk"], ["poll_grow", "poll_shrink", "poll_add"])
    check(len(bad) == 1 and "'poll_shrnk'" in bad[0] and "poll_shrink" in bad[0],
          f"a misspelt event is named with the closest real one, a pattern that matches is accepted (got {bad})")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--dry-run", "--qemu-trace",
            "poll_grow", "--out", tmp + "/qt")
    check(r.returncode != 0 and "--qemu-trace traces guests alone" in r.stderr,
          f"--qemu-trace on a grid of several guests at once is refused (got {r.returncode}: {r.stderr[-300:]})")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "consolidated.toml"), "--dry-run", "--main-loop-fifo",
            "--out", tmp + "/mf")
    check(r.returncode != 0 and "--main-loop-fifo sets the policy of a guest alone's QEMU" in r.stderr,
          f"--main-loop-fifo on a grid of several guests at once is refused (got {r.returncode}: {r.stderr[-300:]})")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "relay-trace.toml"), "--dry-run", "--main-loop-fifo",
            "--out", tmp + "/rt")
    check(r.returncode == 0 and "2 fio runs" in r.stdout + r.stderr,
          f"--dry-run of grids/relay-trace.toml with --main-loop-fifo: 1 boot, 2 runs (got {r.returncode}: {r.stderr[-300:]})")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "poll-trace.toml"), "--dry-run", "--qemu-trace",
            "poll_grow,poll_shrink", "--out", tmp + "/pt")
    check(r.returncode == 0 and "-trace enable=poll_grow -trace enable=poll_shrink -D WORK/qemu-trace.log" in r.stdout
          and "2 configurations (boots), 16 fio runs" in r.stdout + r.stderr,
          f"--dry-run of grids/poll-trace.toml shows QEMU's trace options (got rc {r.returncode}: {r.stdout[-300:]})")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "poll-timeline.toml"), "--dry-run", "--qemu-trace-log",
            "--out", tmp + "/tl")
    check(r.returncode != 0 and "--qemu-trace-log keeps the trace of --qemu-trace EVENTS" in r.stderr,
          f"--qemu-trace-log without the events to trace is refused (got {r.returncode}: {r.stderr[-300:]})")
    # --- a kept trace's timeline (calibration/lab/trace-timeline): jobs cut at pauses, failed rounds' endings
    def trace_line(us, event):  # a line of QEMU's log backend: thread id @ seconds.microseconds : event
        return f"9@{us // 1_000_000}.{us % 1_000_000:06d}:{event}\n"

    tl = os.path.join(tmp, "timeline.log")
    with open(tl, "w") as f:
        f.write(trace_line(100_000_000, "virtqueue_pop vq 0x1"))  # a read while the guest boots: left out
        t = 200_000_000
        for k in range(1000):  # a job of 1000 requests 600 us apart
            for dt, line in ((0, "virtqueue_pop vq 0x1"), (10, "run_poll_handlers_begin ctx 0x1 max_ns 4000 timeout -1"),
                             (14, "run_poll_handlers_end ctx 0x1 progress 0 new timeout -1"),
                             (16, "run_poll_handlers_begin ctx 0x1 max_ns 8000 timeout -1"),
                             (20, "run_poll_handlers_end ctx 0x1 progress 1 new timeout 0"),
                             (22, "virtio_blk_rw_complete vdev 0x1 req 0x2 ret 0")):
                f.write(trace_line(t + dt, line))
            t += 600
    tl_run = subprocess.run([sys.executable, os.path.join(src, "calibration", "lab", "trace-timeline"), tl],
                            capture_output=True, text=True, timeout=60)
    check(tl_run.returncode == 0 and "job 1: 1000 requests" in tl_run.stdout and "1 stretches shorter" in tl_run.stdout
          and "failed polling rounds per request 1.00, of which followed within 4 us by another round with nothing "
              "done between 1.00" in tl_run.stdout,
          f"trace-timeline: one job, the boot's read left out, every failed round polled again at once "
          f"(got {tl_run.returncode}: {tl_run.stdout[-400:]}{tl_run.stderr[-300:]})")
    # --- with the IOThread's notifications traced: each completion's time since the last one, and whether it notified
    nt = os.path.join(tmp, "notify.log")
    with open(nt, "w") as f:
        t = 300_000_000
        for k in range(12000):  # requests 50 us apart (0.6 s); the guest re-arms 70 us after a notification
            for dt, line in ((0, "virtqueue_pop vq 0x1"), (2, "virtio_blk_rw_complete vdev 0x1 req 0x2 ret 0")):
                f.write(trace_line(t + dt, line))
            if k % 2 == 0:
                f.write(trace_line(t + 3, "virtio_notify_irqfd vdev 0x1 vq 0x1"))
            t += 50
    nt_run = subprocess.run([sys.executable, os.path.join(src, "calibration", "lab", "trace-timeline"), nt],
                            capture_output=True, text=True, timeout=60)
    check(nt_run.returncode == 0 and "40-60 us  0.50  0.00" in nt_run.stdout and "80-100 us  0.50  1.00" in nt_run.stdout
          and "requests popped between notifications: 1 0.00, 2 1.00" in nt_run.stdout and "failed polling" not in nt_run.stdout,
          f"trace-timeline: completions 50 us after a notification do not notify, 100 us after they do; no polling "
          f"lines without polling events (got {nt_run.returncode}: {nt_run.stdout[-600:]}{nt_run.stderr[-300:]})")
    # --- with the main loop's injections and the guest's EOI writes traced too: each notification's relay
    rl = os.path.join(tmp, "relay.log")
    with open(rl, "w") as f:
        t = 400_000_000
        for k in range(12000):  # requests 50 us apart; every second one notifies, injected 20 us later
            for dt, line in ((0, "virtqueue_pop vq 0x1"), (2, "virtio_blk_rw_complete vdev 0x1 req 0x2 ret 0")):
                f.write(trace_line(t + dt, line))
            # every 200th waits 600 us: 12 completions ride on it, and the device notifies none of them
            if k % 2 == 0 and not 0 < k % 200 < 13:
                wait = 600 if k % 200 == 0 else 20
                f.write(trace_line(t + 3, "virtio_notify_irqfd vdev 0x1 vq 0x1"))
                if k % 1000 == 0:  # another vector now and then (an IPI): not the device's
                    f.write(trace_line(t + 4, "apic_deliver_irq dest 1 dest_mode 1 delivery_mode 0 vector 251 trigger_mode 0"))
                f.write(trace_line(t + 3 + wait, "apic_deliver_irq dest 1 dest_mode 1 delivery_mode 0 vector 38 trigger_mode 0"))
                f.write(trace_line(t + 13 + wait, "apic_mem_writel 0xb0 = 0x00000000"))
            t += 50
    rl_run = subprocess.run([sys.executable, os.path.join(src, "calibration", "lab", "trace-timeline"), rl],
                            capture_output=True, text=True, timeout=60)
    check(rl_run.returncode == 0 and "notification to injection (vector 38, 5640 notifications): p10 20, p50 20, p90 20, "
          "p99 600, mean 26 us\n" in rl_run.stdout and "500 us or more: 0.011 of them, 0.24 of the time" in rl_run.stdout
          and "0.13 per notification" in rl_run.stdout and "EOI write: p10 10, p50 10, p90 10, p99 10" in rl_run.stdout,
          f"trace-timeline: each notification's wait for the main loop's injection of the device's vector, the "
          f"completions riding on it and the guest's EOI (got {rl_run.returncode}: {rl_run.stdout[-700:]}{rl_run.stderr[-300:]})")
    # --- the guest's trace of its interrupts (--trace-irq): kind, time in us, idle flag per event
    tr = record.irq_trace_summary("h1 100.0 1\nh0 112.0 1\ns1 112.5 0\ns0 120.5 0\nh1 200.0 0\nh0 208.0 0\n"
                                  "h1 260.0 0\nbad line\n")
    check(tr["handlers"] == 3 and tr["idle_share"] == round(1 / 3, 3) and tr["handler_us"]["n"] == 2
          and tr["handler_us"]["mean"] == 10.0 and tr["gap_us"]["mean"] == 80.0 and tr["block_softirq_us"]["mean"] == 8.0,
          f"handlers' durations entry to exit, gaps between entries, the idle share and the softirq's runs (got {tr})")
    check(record.irq_trace_summary("")["handlers"] == 0 and record.irq_trace_summary("")["handler_us"] == {},
          "an empty trace has no handlers")
    m = os.path.join(src, "calibration", "data", "lab-2026-12-02", "threads", "manifest.toml")
    with open(m, "rb") as f:
        runs = tomllib.load(f)["run"]
    check(all("cpu.vcpus_us_per_io" in r.get("measured", {}) for r in runs),
          "the threads recording's manifest carries each run's vCPU CPU per I/O")
    # --- the host disk's own QD1 latencies (host fio before the first boot) are the file's device times
    disk = record.host_disk_qd1_us({"host_disk": "raw file on the host's file system (ext4); host fio QD1 4k O_DIRECT "
                                                 "mean latency: randread 85.0 us, randwrite 97.1 us; 1m sequential read: "
                                                 "1073 MiB/s at QD1, 884 MiB/s at QD4"})
    check(disk == {"randread": 85.0, "randwrite": 97.1}, f"[setup].host_disk's QD1 latencies are read back (got {disk})")
    check(record.host_disk_qd1_us({"host_disk": "...: randread not measured (TimeoutExpired), randwrite 97.1 us"})
          == {"randwrite": 97.1} and record.host_disk_qd1_us({}) == {}, "a latency not measured is left out")
    meta_file = {"storage": {"driver": "virtio-blk", "vcpus": 1, "scheduler": "none", "iothread": False, "backend": "file",
                             "aio": "native", "cache": "none", "latency_ns": 0},
                 "guest": {}, "host": {"cores": 2, "qemu_version": "7.2.22"}, "accel": "tcg"}
    s = record.run_set(meta_file, {}, disk)
    check(s.get("backend.read_us") == 85.0 and s.get("backend.write_us") == 97.1,
          f"a raw file's runs set the device's read and write time from the host's own fio (got {s})")
    meta_null = copy.deepcopy(meta_file)
    meta_null["storage"]["backend"] = "null-co"
    check("backend.read_us" not in record.run_set(meta_null, {}, disk), "null-co runs have no device time to set")
    with open(os.path.join(src, "calibration", "data", "lab-2026-12-02", "full", "manifest.toml"), "rb") as f:
        full = tomllib.load(f)["run"]
    check(all(r["set"].get("backend.write_us") == 97.1 for r in full if r["set"]["backend.kind"] == "nvme"),
          "the full recording's file runs carry its host disk's write latency")
    # --- the host disk's bandwidth: the median of the QD4 jobs before the first boot and after the last
    samples = {"host_disk_bandwidth": {"qd1_before": [9, 9, 9], "qd4_before": [1300, 2300, 2000],
                                       "qd4_after": [1400, 2100, 1900]}}
    check(record.recorded_bandwidth(samples) == 1950, f"backend.bandwidth is the median of the six QD4 jobs "
          f"(got {record.recorded_bandwidth(samples)})")
    check(record.recorded_bandwidth({}) is None and record.recorded_bandwidth({"host_disk_bandwidth": {"qd1_before": [5]}})
          is None, "no QD4 job: no recorded bandwidth")
    meta_bw = copy.deepcopy(meta_file)
    meta_bw["host"]["disk_read_bandwidth_bytes_per_s"] = 1234
    check(record.run_set(meta_bw, {}, disk, bandwidth=1950)["backend.bandwidth"] == 1950
          and record.run_set(meta_bw, {}, disk)["backend.bandwidth"] == 1234,
          "the recording's median sets backend.bandwidth; without it, the configuration's one job")
    check(record.toml_val([1, 2.5]) == "[1, 2.5]", f"a list of samples is a TOML array (got {record.toml_val([1, 2.5])})")
    # --- a host disk that completes in batches ([setup].host_disk_batch): measured, or inferred with its reason
    check(record.host_disk_batched({}) == (False, None), "no batching fact: a plain device")
    measured = {"host_disk_batch": {"qd16_randread_us": 127.7, "completions_per_interrupt": 15.3, "batch_us": 5.87}}
    check(record.host_disk_batched(measured) == (True, 5.87), "15 completions per interrupt at QD16: batched, its batch_us")
    check(record.host_disk_batched({"host_disk_batch": {"qd16_randread_us": 90.0, "completions_per_interrupt": 1.6}})
          == (False, None), "a disk that signals each completion is not batched")
    inferred = {"host_disk_batch": {"batched": True, "why": "inferred: ..."}}
    check(record.host_disk_batched(inferred) == (True, None), "an inferred batching fact: batched, the default batch_us")
    s = record.run_set(meta_file, {}, disk, record.host_disk_batched(measured))
    check(s.get("backend.batched") is True and s.get("backend.batch_us") == 5.87,
          f"a raw file on a batched host disk sets backend.batched and batch_us (got {s})")
    meta_wb = copy.deepcopy(meta_file)
    meta_wb["storage"]["cache"] = "writeback"
    check("backend.batched" not in record.run_set(meta_wb, {}, disk, record.host_disk_batched(measured)),
          "cache=writeback reads hit the host page cache: no device batching to set")
    check("backend.batched" not in record.run_set(meta_null, {}, disk, record.host_disk_batched(measured)),
          "null-co has no host disk")
    check(all(r["set"].get("backend.batched") is True for r in full
              if r["set"]["backend.kind"] == "nvme" and r["set"]["host.cache"] == "none"),
          "the full recording's O_DIRECT file runs are on a batched host disk (inferred in its setup.json)")
    # --- the host disk's QD1 latency and the part of it spent submitting (fio's slat), from host fio's JSON
    real_host_fio = record.host_fio
    try:
        record.host_fio = lambda path, rw, bs, qd, figure: figure(
            {"lat_ns": {"mean": 39700.0 if rw == "randread" else 52000.0}, "slat_ns": {"mean": 12300.0}})
        sub = {}
        q = record.host_disk_qd1("disk.raw", sub)
        check(q == {"randread": 39.7, "randwrite": 52.0} and sub == {"randread": 12.3, "randwrite": 12.3},
              f"host fio's QD1 latency, and its submission part for the threads that submit (got {q}, {sub})")
        record.host_fio = lambda path, rw, bs, qd, figure: figure({"lat_ns": {"mean": 39700.0}})
        sub = {}
        check(record.host_disk_qd1("disk.raw", sub)["randread"] == 39.7 and sub == {},
              "a fio output without slat gives the latency and no submission part")
    finally:
        record.host_fio = real_host_fio
    # --- the page cache's share of a run's reads, from the thread pool's sleeps (aio=threads, writeback)
    wb = os.path.join(tmp, "wb")
    os.makedirs(wb)
    jobs, timing = [], []
    # (job, rw, read IOPS, write IOPS, worker sleeps over 5 s): every write hits (1 sleep per I/O);
    # half the random reads reach the disk (1.5), the sequential reads none (1.0); the mixed job's
    # reads, a half of its I/Os, all reach it (1.5).
    for name, rw, r_iops, w_iops, sleeps in (("randwrite-4k-qd1-j1", "randwrite", 0, 1000, 5000),
                                             ("randread-4k-qd1-j1", "randread", 1000, 0, 7500),
                                             ("read-4k-qd1-j1", "read", 1000, 0, 5000),
                                             ("randrw-4k-qd1-j1", "randrw", 500, 500, 7500),
                                             ("randread-4k-qd16-j1", "randread", 4000, 0, 40000)):
        jobs.append({"name": name, "rw": rw, "bs": "4k", "iodepth": int(name.split("qd")[1].split("-")[0]), "numjobs": 1})
        timing.append({"run": name, "wall_s": 5.0, "qemu_thread_wakes": {"CPU 0/TCG": 1, "worker": sleeps}})
        os.makedirs(os.path.join(wb, "cfg"), exist_ok=True)
        with open(os.path.join(wb, "cfg", name + ".json"), "w") as f:
            json.dump({"jobs": [{"read": {"iops": float(r_iops)}, "write": {"iops": float(w_iops)}}]}, f)
    meta_pc = copy.deepcopy(meta_wb)
    meta_pc["storage"]["aio"] = "threads"
    meta_pc.update(name="cfg", jobs=jobs, timing=timing, complete_runs=[{"name": j["name"]} for j in jobs])
    hits = record.pagecache_hits(wb, meta_pc)
    check(hits == {"randread-4k-qd1-j1": 0.5, "read-4k-qd1-j1": 1, "randrw-4k-qd1-j1": 0.0},
          f"a read that reaches the disk costs its worker one more sleep than the writes' (got {hits}); "
          "a job with no write job of its depth beside it is left to the inferred 1")
    check(record.run_set(meta_pc, {"name": "randread-4k-qd1-j1"}, disk, hits=hits)["host.pagecache_hit_ratio"] == 0.5
          and record.run_set(meta_pc, {"name": "randread-4k-qd16-j1"}, disk, hits=hits)["host.pagecache_hit_ratio"] == 1,
          "the manifest's hit ratio is the measured one where there is one, else 1")
    check(record.pagecache_hits(wb, meta_file) == {}, "cache=none: no page cache to measure")
    with open(os.path.join(src, "calibration", "data", "lab-2026-12-04", "full-counters", "manifest.toml"), "rb") as f:
        fc = {r["name"]: r["set"] for r in tomllib.load(f)["run"]}
    check(fc["file-blk-io0-threads-writeback-v1/randread-4k-qd1-j1"]["host.pagecache_hit_ratio"] < 0.1
          and fc["file-blk-io1-threads-writeback-v1/randread-4k-qd1-j1"]["host.pagecache_hit_ratio"] >= 0.95,
          "the full-counters recording: the first writeback boot's random reads went to the disk, the second's hit")
    # --- the vcpu-sleeps recording: the guest's context switches count its idle periods (two each)
    halts = {}
    for meta_path in glob.glob(os.path.join(src, "calibration", "data", "lab-2026-12-06", "vcpu-sleeps", "*", "meta.json")):
        with open(meta_path) as f:
            meta = json.load(f)
        for t in meta["timing"]:
            with open(os.path.join(os.path.dirname(meta_path), t["run"] + ".json")) as f:
                iops = sum(j["read"]["iops"] for j in json.load(f)["jobs"])
            halts[meta["name"] + "/" + t["run"]] = t["guest"]["context_switches"] / 2 / (iops * t["guest"]["uptime_s"])
    check(len(halts) == 32 and all(0.85 < v < 1.0 for k, v in halts.items() if "-qd1-" in k)
          and all(v < 0.25 for k, v in halts.items() if "-qd1-" not in k),
          f"vcpu-sleeps: one guest idle period per I/O at iodepth 1, few at depth (got {sorted(halts.items())[:4]} ...)")
    r = rec(os.path.join(src, "calibration", "lab", "grids", "vcpu-sleeps.toml"), "--dry-run", "--out", tmp + "/vs")
    check(r.returncode == 0 and "32" in r.stdout + r.stderr, f"--dry-run of grids/vcpu-sleeps.toml lists its 32 runs (rc {r.returncode})")
    # Grids in passes: each lists its boots and runs, and a configuration of its second pass.
    for grid, boots, runs, second, what in [
            ("blocksize-passes", 8, 160, "nullco0us-blk-io0-na-none-v1-p2", "8 boots in 2 passes"),
            ("segments", 6, 24, "file-blk-io0-threads-none-v1-p2", "6 boots in 2 passes (aio=native and threads on the file)"),
            ("wait-length", 12, 24, "nullco200us-blk-io1-na-none-v1-p2",
             "null-co's five latencies and the file behind an IOThread, 2 passes")]:
        r = rec(os.path.join(src, "calibration", "lab", "grids", f"{grid}.toml"), "--dry-run", "--out", f"{tmp}/{grid}")
        check(r.returncode == 0 and f"{boots} configurations (boots), {runs} fio runs" in r.stdout + r.stderr
              and second in r.stdout,
              f"--dry-run of grids/{grid}.toml: {what}, {runs} runs (got rc {r.returncode}: {r.stdout[:200]})")
    # --- the KVM probe boots the guest's kernel: a vCPU that runs is not a kernel that starts
    if shutil.which("qemu-system-x86_64"):
        bogus = os.path.join(tmp, "not-a-kernel")
        with open(bogus, "wb") as f:
            f.write(bytes(4096))
        ok, why = record.kvm_boots("qemu64", bogus, timeout_s=10, accel="tcg")
        check(not ok and "did not start" in why, f"a kernel that does not start is refused, with the reason (got {ok}, {why})")
        kernels = [k for k in glob.glob("/boot/vmlinuz-*") if os.access(k, os.R_OK)]
        if kernels:
            ok, why = record.kvm_boots("qemu64", sorted(kernels)[-1], timeout_s=120, accel="tcg")
            check(ok, f"the host's own kernel starts (under TCG here) within the probe's time (got {why})")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
