#!/usr/bin/env bash
# Files of several [[vm]] profiles, issue 19's remaining pieces: prediction intervals of every
# profile's figures (per job too) and of the host's, in text and JSON, and plan judging
# constraints on any of them with those intervals; each profile's share of the host cores' busy
# time (host.cpu) as the simulation measures it; plan's MVA guide and sweep --mva by the
# multi-class MVA, or plan searching without a guide where that cannot help.
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"
cons=$src/scenarios/consolidation

# A calibrated profile (web, second) beside an uncalibrated one running a job file of two jobs
# (app, first), on one NVMe and 4 shared cores.
cat >"$tmp/mix.toml" <<EOT
[run]
seed = 3
replications = 2
[host]
cores = 4
[[backend]]
name = "nvme"
kind = "nvme"
[[vm]]
name = "app"
[vm.workload]
fio_job = "$cons/reader-writer.fio"
ios = 3000
runtime = 0
[vm.host]
iothreads = 1
aio = "native"
[[vm]]
name = "web"
base = "$src/scenarios/calibrated/seed000.toml"
[vm.workload]
ios = 3000
EOT

# 1. Prediction intervals for every profile and the host.
check "a [[vm]] file with a calibrated base runs with draws" status_is 0 "$vqsim" run "$tmp/mix.toml" --draws 4 --format json
cp "$tmp/out" "$tmp/mix.json"
check "... prediction.metrics has every profile's figures, its jobs' and the host's" python3 - "$tmp/mix.json" <<'EOT'
import json, sys
p = json.load(open(sys.argv[1]))["prediction"]
m = p["metrics"]
for name in ["vm.web.read.iops", "vm.web.read.clat_p99_us", "vm.app.read.iops", "vm.app.write.iops",
             "vm.app.reader.read.iops", "vm.app.writer.write.clat_p99_us", "host.total.iops", "host.total.lat_mean_us"]:
    assert name in m, (name, sorted(m))
    assert m[name]["lower"] < m[name]["mean"] < m[name]["upper"], (name, m[name])
assert "read.iops" not in m, "names without vm.<name>. are gone from a [[vm]] file's prediction"
# The calibrated profile's parameters move its figures; the uncalibrated one takes the prior of an
# unmeasured setup (wider than the calibrated one's model-error term).
assert m["vm.web.read.iops"]["param_sd_rel"] > 0
prof = {d["vm"]: d for d in p["profiles"]}
assert prof["web"]["calibrated"] and not prof["app"]["calibrated"], prof
assert prof["app"]["distance"] == "unmeasured setup", prof
assert m["vm.app.read.iops"]["model_sd_rel"] == 0.37, m["vm.app.read.iops"]["model_sd_rel"]
assert m["vm.web.read.iops"]["model_sd_rel"] != 0.37, m["vm.web.read.iops"]["model_sd_rel"]
# The host's term lies between its profiles' (weighted by their share of the I/Os).
lo, hi = sorted([m["vm.web.read.iops"]["model_sd_rel"], m["vm.app.read.iops"]["model_sd_rel"]])
assert lo < m["host.total.iops"]["model_sd_rel"] < hi, m["host.total.iops"]["model_sd_rel"]
EOT
check "... each vms[] entry has its own prediction, named within the VM" python3 - "$tmp/mix.json" <<'EOT'
import json, sys
j = json.load(open(sys.argv[1]))
top = j["prediction"]["metrics"]
for v in j["vms"]:
    pm = v["prediction"]["metrics"]
    assert pm and v["prediction"]["distance"], v["name"]
    for k, x in pm.items():
        assert top["vm." + v["name"] + "." + k] == x, (v["name"], k)
assert "reader.read.iops" in j["vms"][0]["prediction"]["metrics"]
EOT
check "... and text lists every profile's and the host's intervals" status_is 0 "$vqsim" run "$tmp/mix.toml" --draws 4
check "... ... (vm.app.reader.read.iops, vm.web.read.iops, host.total.iops, each profile's distance)" bash -c "grep -q '^  vm.app.reader.read.iops ' '$tmp/out' && grep -q '^  vm.web.read.iops ' '$tmp/out' && grep -q '^  host.total.iops ' '$tmp/out' && grep -q '^  vm.app: unmeasured setup' '$tmp/out'"

# 2. plan judges constraints on any profile's figure and the host's with those intervals: the
# same intervals as vqsim run at the answer, and the verdict they give.
plan=(--maximize vm.web.count --range 1:3 --subject-to 'vm.web.read.clat_p99_us <= 5ms'
  --subject-to 'host.total.iops >= 1000' --subject-to 'vm.app.reader.read.lat_mean_us <= 10ms' --ios 3000 --replications 2)
check "plan on it with constraints on vm.web.*, vm.app.<job>.* and host.total.*" status_is 0 "$vqsim" plan "$tmp/mix.toml" "${plan[@]}" --format json
cp "$tmp/out" "$tmp/plan.json"
answer=$(python3 -c "import json; print(json.load(open('$tmp/plan.json'))['answer'])")
check "... at the answer, vqsim run gives the same prediction" status_is 0 "$vqsim" run "$tmp/mix.toml" --set "vm.web.count=$answer" --ios 3000 --replications 2 --format json
check "... ... and every constraint's verdict follows from its interval" python3 - "$tmp/plan.json" "$tmp/out" <<'EOT'
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
checks = plan["prediction_checks"]
assert len(checks) == 3, checks
for k in checks:
    r = run["prediction"]["metrics"][k["metric"]]
    assert abs(k["lower"] - r["lower"]) <= 1e-9 * r["lower"] and abs(k["upper"] - r["upper"]) <= 1e-9 * r["upper"], (k, r)
    bound = float(k["constraint"].split()[-1].rstrip("ms")) * (1000 if k["constraint"].endswith("ms") else 1)
    le = "<=" in k["constraint"]
    holds = lambda x: x <= bound if le else x >= bound
    want = ("satisfied" if holds(k["lower"]) and holds(k["upper"]) else "violated" if not holds(k["lower"]) and not holds(k["upper"])
            else "borderline")
    assert k["verdict"].startswith(want), (k, want)
EOT
check "... a bound inside the interval is borderline" bash -c "'$vqsim' plan '$tmp/mix.toml' --maximize vm.web.count --range 1:1 --subject-to 'host.total.iops >= 100' --ios 3000 --replications 2 --format json | python3 -c \"
import json, sys
j = json.load(sys.stdin); k = j['prediction_checks'][0]
assert k['lower'] > 100 and k['verdict'] == 'satisfied', k
\" && '$vqsim' run '$tmp/mix.toml' --ios 3000 --replications 2 --format json | python3 -c \"
import json, subprocess, sys
m = json.load(sys.stdin)['prediction']['metrics']['host.total.iops']
bound = (m['lower'] + m['mean']) / 2
out = subprocess.run(['$vqsim', 'plan', '$tmp/mix.toml', '--maximize', 'vm.web.count', '--range', '1:1', '--subject-to',
                      'host.total.iops >= %.0f' % bound, '--ios', '3000', '--replications', '2', '--format', 'json'],
                     capture_output=True, text=True)
k = json.loads(out.stdout)['prediction_checks'][0]
assert k['verdict'] == 'borderline (mean satisfies)', k
\""

# 3. Each profile's share of the host cores' busy time, measured in the simulation.
check "the host.cpu shares: every profile's, summing to the cores' measured busy time" python3 - "$tmp/mix.json" <<'EOT'
import json, sys
j = json.load(open(sys.argv[1]))
cpu = j["host"]["cpu"]
busy = cpu["utilization"]["mean"] * j["host"]["cores"]
assert abs(cpu["busy_cores"] - busy) <= 0.02 * busy, (cpu, busy)
shares = {v["name"]: v["host_cpu_share"] for v in j["vms"]}
assert abs(sum(s["busy_share"] for s in shares.values()) - 1) < 1e-9, shares
for s in shares.values():
    assert abs(sum(s["by_thread"].values()) - s["busy_share"]) < 1e-9, s
# app runs an IOThread, web (seed000's host) the main loop: each profile's QEMU thread is its own.
assert shares["app"]["by_thread"]["iothreads"] > 0 and shares["app"]["by_thread"]["main_loop"] == 0, shares["app"]
assert shares["web"]["by_thread"]["main_loop"] > 0 and shares["web"]["by_thread"]["iothreads"] == 0, shares["web"]
assert all(s["by_thread"]["vcpus"] > 0 for s in shares.values()), shares
EOT
check "... more VMs of a profile take more of the cores" bash -c "'$vqsim' run '$tmp/mix.toml' --set vm.web.count=3 --draws 0 --format json | python3 -c \"
import json, sys
a = {v['name']: v['host_cpu_share']['busy_share'] for v in json.load(open('$tmp/mix.json'))['vms']}
b = {v['name']: v['host_cpu_share']['busy_share'] for v in json.load(sys.stdin)['vms']}
assert b['web'] > a['web'] + 0.1, (a, b)
\""
check "... in text: a host.cpu line after the devices'" bash -c "grep -qE '^  host.cpu \(4 cores, [0-9.]+% busy\): app [0-9.]+% of its busy time \(vCPUs [0-9.]+%, IOThreads [0-9.]+%\); web [0-9.]+% \(vCPUs' '$tmp/out' || { '$vqsim' run '$tmp/mix.toml' --draws 0 | grep -qE '^  host.cpu \(4 cores, [0-9.]+% busy\): app [0-9.]+% of its busy time \(vCPUs [0-9.]+%, IOThreads [0-9.]+%\); web [0-9.]+% \(vCPUs'; }"
check "... none without host.cores" bash -c "'$vqsim' run '$cons/noisy-neighbour.toml' --ios 2000 --replications 2 --format json | python3 -c \"
import json, sys
j = json.load(sys.stdin); assert 'cpu' not in j['host'] and all('host_cpu_share' not in v for v in j['vms'])\""

# 4. plan's MVA guide: the multi-class MVA where several profiles run or a VM runs several fio
# jobs (its values are vqsim solve's, one class per profile and job), and sweep --mva the same.
check "plan on two profiles searches by the multi-class MVA" status_is 0 "$vqsim" plan "$cons/noisy-neighbour.toml" --maximize vm.db.count --range 1:8 --subject-to 'vm.db.read.lat_mean_us <= 2ms' --subject-to 'host.total.iops >= 1000' --ios 2000 --replications 2 --format json
cp "$tmp/out" "$tmp/guide.json"
check "... its MVA points are vqsim solve's figures of each profile and the host" python3 - "$tmp/guide.json" "$vqsim" "$cons/noisy-neighbour.toml" <<'EOT'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
assert not any("MVA could not solve" in n for n in j["notes"]), j["notes"]
mva = [p for p in j["tried"] if p["method"] == "MVA"]
assert mva, j["tried"]
for p in mva:
    s = json.loads(subprocess.run([sys.argv[2], "solve", sys.argv[3], "--set", "vm.db.count=%d" % p["value"], "--format", "json"],
                                  capture_output=True, text=True, check=True).stdout)
    db = [v for v in s["vms"] if v["name"] == "db"][0]
    got = {k["metric"]: k["value"] for k in p["checks"]}
    assert abs(got["vm.db.read.lat_mean_us"] - db["lat_mean_ns"] / 1e3) <= 1e-6 * got["vm.db.read.lat_mean_us"], (got, db)
    assert abs(got["host.total.iops"] - s["host"]["total_iops"]) <= 1e-6 * got["host.total.iops"], (got, s["host"])
EOT
check "plan on a VM of several fio jobs beside others is guided by the multi-class MVA (one class per job)" status_is 0 "$vqsim" plan "$cons/reader-writer.toml" --maximize vm.web.count --range 1:4 --subject-to 'vm.web.read.clat_p99_us <= 5ms' --subject-to 'vm.app.writer.write.lat_mean_us <= 5ms' --ios 2000 --replications 2 --format json
cp "$tmp/out" "$tmp/guide-jobs.json"
check "... its MVA points are vqsim solve's figures of the web VMs and of the app VM's writer job" python3 - "$tmp/guide-jobs.json" "$vqsim" "$cons/reader-writer.toml" <<'EOT'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
assert not any("MVA could not solve" in n for n in j["notes"]), j["notes"]
mva = [p for p in j["tried"] if p["method"] == "MVA"]
assert mva, j["tried"]
for p in mva:
    s = json.loads(subprocess.run([sys.argv[2], "solve", sys.argv[3], "--set", "vm.web.count=%d" % p["value"], "--format", "json"],
                                  capture_output=True, text=True, check=True).stdout)
    web = [v for v in s["vms"] if v["name"] == "web"][0]
    writer = [x for x in [v for v in s["vms"] if v["name"] == "app"][0]["jobs"] if x["name"] == "writer"][0]
    got = {k["metric"]: k["value"] for k in p["checks"]}
    assert abs(got["vm.web.read.clat_mean_us"] - web["clat_mean_ns"] / 1e3) <= 1e-6 * web["clat_mean_ns"] / 1e3, (got, web)
    assert abs(got["vm.app.writer.write.lat_mean_us"] - writer["lat_mean_ns"] / 1e3) <= 1e-6 * writer["lat_mean_ns"] / 1e3, (got, writer)
EOT
cat >"$tmp/sweep.toml" <<EOT
scenario = "$cons/noisy-neighbour.toml"
metrics = ["vm.db.read.iops", "vm.backup.read.iops", "host.total.iops"]
[[axis]]
key = "vm.backup.count"
values = [0, 2]
EOT
check "sweep --mva over a file of two profiles" status_is 0 "$vqsim" sweep "$tmp/sweep.toml" --mva --out "$tmp/sw"
check "... each point is the multi-class MVA's (vqsim solve's)" python3 - "$tmp/sw/results.jsonl" "$vqsim" "$cons/noisy-neighbour.toml" <<'EOT'
import json, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2
for r in rows:
    n = r["settings"]["vm.backup.count"]
    s = json.loads(subprocess.run([sys.argv[2], "solve", sys.argv[3], "--set", "vm.backup.count=" + str(n), "--format", "json"],
                                  capture_output=True, text=True, check=True).stdout)
    total = s["host"]["total_iops"] if "vms" in s else s["iops"]
    assert abs(r["metrics"]["host.total.iops"]["mean"] - total) <= 1e-6 * total, (r, total)
    if str(n) == "0":
        assert r["metrics"]["vm.backup.read.iops"] is None
    else:
        assert r["metrics"]["vm.backup.read.iops"]["mean"] > 0
EOT

echo "vm_profiles: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
