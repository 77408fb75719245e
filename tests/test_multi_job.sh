#!/usr/bin/env bash
# fio job files of several jobs end to end: each job's figures in text, JSON and fio JSON (jobname
# the job's name, "<vm>/<job>" with [[vm]] tables), a metric naming a job in plan and sweep, the
# MVA's answer per job (solve, run --compare-mva), and the refusals (exit 2, file:line). A file of
# one job keeps what it printed before.
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"

cat >"$tmp/rw.fio" <<'EOT'
[global]
ioengine=libaio
direct=1
bs=4k

[reader]
rw=randread
iodepth=4

[writer]
rw=randwrite
iodepth=1
EOT
printf '[workload]\nfio_job = "rw.fio"\n' >"$tmp/rw.toml"
short=(--ios 5000 --replications 2)

check "a two-job file runs" status_is 0 "$vqsim" run "$tmp/rw.toml" "${short[@]}"
check "... with a block per job" bash -c "grep -q '^job reader: randread 4k libaio iodepth 4' '$tmp/out' && grep -q '^job writer: randwrite' '$tmp/out'"
check "... and every job together" grep -q '^all jobs: read IOPS=' "$tmp/out"
"$vqsim" run "$tmp/rw.toml" "${short[@]}" --format fio-json >"$tmp/rw.fio.json"
check "fio-json: one jobs[] entry per job, jobname the job's name" python3 -c "
import json; j = json.load(open('$tmp/rw.fio.json'))['jobs']
assert [x['jobname'] for x in j] == ['reader', 'writer'], j
assert j[0]['read']['iops'] > 0 and j[0]['write']['iops'] == 0 and j[1]['write']['iops'] > 0
assert j[0]['job options']['iodepth'] == '4' and j[1]['job options']['rw'] == 'randwrite'"
"$vqsim" run "$tmp/rw.toml" "${short[@]}" --format json >"$tmp/rw.json"
check "json: a jobs list with each job's directions" python3 -c "
import json; j = json.load(open('$tmp/rw.json'))
assert [x['name'] for x in j['jobs']] == ['reader', 'writer']
assert j['jobs'][1]['directions']['write']['iops']['mean'] > 0
assert abs(j['jobs'][0]['directions']['read']['iops']['mean'] - j['directions']['read']['iops']['mean']) < 1e-6"

# One job in a job file: as before (jobname vqsim, no jobs list).
printf '[solo]\nrw=randread\niodepth=4\nioengine=libaio\ndirect=1\n' >"$tmp/one.fio"
printf '[workload]\nfio_job = "one.fio"\n' >"$tmp/one.toml"
"$vqsim" run "$tmp/one.toml" "${short[@]}" --format fio-json >"$tmp/one.fio.json"
check "a one-job file: fio-json jobname stays vqsim" python3 -c "
import json; assert [x['jobname'] for x in json.load(open('$tmp/one.fio.json'))['jobs']] == ['vqsim']"
"$vqsim" run "$tmp/one.toml" "${short[@]}" --format json >"$tmp/one.json"
check "... and JSON has no jobs list" python3 -c "import json; assert 'jobs' not in json.load(open('$tmp/one.json'))"

# Stonewall groups.
sed 's/^\[writer\]$/[writer]\nstonewall/' "$tmp/rw.fio" >"$tmp/sw.fio"
printf '[workload]\nfio_job = "sw.fio"\n' >"$tmp/sw.toml"
"$vqsim" run "$tmp/sw.toml" "${short[@]}" --format json >"$tmp/sw.json"
check "stonewall: two groups, each with its stage table" python3 -c "
import json; j = json.load(open('$tmp/sw.json'))
g = j['stonewall_groups']; assert len(g) == 2 and g[0]['jobs'] == 'reader' and g[1]['jobs'] == 'writer'
assert [x['stonewall_group'] for x in j['jobs']] == [0, 1]
assert j['jobs'][1]['directions']['write']['iops']['mean'] > 0"
"$vqsim" run "$tmp/sw.toml" "${short[@]}" --format fio-json >"$tmp/sw.fio.json"
check "... fio-json group ids as fio numbers them" python3 -c "
import json; assert [x['groupid'] for x in json.load(open('$tmp/sw.fio.json'))['jobs']] == [0, 1]"

# [[vm]] profiles: jobname <vm>/<job>.
rwvm="$src/scenarios/consolidation/reader-writer.toml"
"$vqsim" run "$rwvm" "${short[@]}" --format fio-json >"$tmp/vm.fio.json"
check "[[vm]]: fio-json jobname <vm name>/<job name>, <vm>/vqsim for a VM of one job" python3 -c "
import json; j = json.load(open('$tmp/vm.fio.json'))['jobs']
assert [x['jobname'] for x in j] == ['app/reader', 'app/writer', 'web/vqsim'], [x['jobname'] for x in j]
assert [x['groupid'] for x in j] == [0, 0, 1]"

# Metrics that name a job: sweep and plan.
cat >"$tmp/sweep.toml" <<EOT
scenario = "$tmp/rw.toml"
metrics = ["reader.read.iops", "writer.write.clat_p99_us", "read.iops"]
replications = 2
ios = 3000
[[axis]]
key = "workload.iodepth"
values = [1, 8]
EOT
check "sweep with a job's metric runs" status_is 0 "$vqsim" sweep "$tmp/sweep.toml" --out "$tmp/sweep" --jobs 1
check "... its column in results.csv, the reader faster at iodepth 8" python3 -c "
import csv; rows = list(csv.DictReader(open('$tmp/sweep/results.csv')))
assert len(rows) == 2 and 'reader.read.iops' in rows[0], rows[0].keys()
assert float(rows[1]['reader.read.iops']) > float(rows[0]['reader.read.iops'])"
check "sweep --mva with a job's metric: each job its class" status_is 0 "$vqsim" sweep "$tmp/sweep.toml" --mva --out "$tmp/sweep-mva"
check "... the reader's IOPS vqsim solve's, the percentile empty" python3 - "$tmp/sweep-mva/results.jsonl" "$vqsim" "$tmp/rw.toml" <<'EOT'
import json, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2
for r in rows:
    d = r["settings"]["workload.iodepth"]
    s = json.loads(subprocess.run([sys.argv[2], "solve", sys.argv[3], "--set", "workload.iodepth=%s" % d, "--format", "json"],
                                  capture_output=True, text=True, check=True).stdout)
    reader = s["vms"][0]["jobs"][0]
    assert abs(r["metrics"]["reader.read.iops"]["mean"] - reader["iops"]) <= 1e-6 * reader["iops"], (r, reader)
    assert abs(r["metrics"]["read.iops"]["mean"] - s["vms"][0]["read_iops"]) <= 1e-6 * reader["iops"], (r, s["vms"][0])
    assert r["metrics"]["writer.write.clat_p99_us"] is None
EOT
sed 's/"reader.read.iops"/"raeder.read.iops"/' "$tmp/sweep.toml" >"$tmp/sweep-bad.toml"
check "sweep: an unknown job is bad input (2)" status_is 2 "$vqsim" sweep "$tmp/sweep-bad.toml" --out "$tmp/sweep-bad"
check "... naming the jobs there are" grep -q "no fio job named 'raeder'.*its jobs are 'reader', 'writer'" "$tmp/err"
check "plan on a job's metric" status_is 0 "$vqsim" plan "$rwvm" --maximize vm.web.count --range 1:3 \
  --subject-to 'vm.app.reader.read.clat_p99_us <= 100000' --ios 2000
check "... answers 3" grep -q "vm.web.count = 3" "$tmp/out"
check "... guided by the MVA's reader class, not the simulation alone" bash -c "grep -q '^search: 1 MVA point' '$tmp/out' && ! grep -q 'MVA could not solve' '$tmp/out'"
check "plan: an unknown job is bad input (2)" status_is 2 "$vqsim" plan "$rwvm" --maximize vm.web.count --range 1:3 \
  --subject-to 'vm.app.scan.read.clat_p99_us <= 300' --ios 2000
check "... naming the VM's jobs" grep -q "no fio job named 'scan' in vm.app's job file; its jobs are 'reader', 'writer'" "$tmp/err"

# Refusals.
printf '[a]\nrw=randread\n[a]\nrw=randwrite\n' >"$tmp/twice.fio"
printf '[workload]\nfio_job = "twice.fio"\n' >"$tmp/twice.toml"
check "two jobs of one name are bad input (2)" status_is 2 "$vqsim" run "$tmp/twice.toml"
check "... with the job file's line and what to rename" grep -q "twice.toml:2: workload.fio_job: .*twice.fio:3: a second job named 'a'.*rename one" "$tmp/err"
printf '[a]\nrw=randread\n[b]\nrw=randwrite\nstartdelay=5\n' >"$tmp/delay.fio"
printf '[workload]\nfio_job = "delay.fio"\n' >"$tmp/delay.toml"
check "an option that changes the answer with several jobs is bad input (2)" status_is 2 "$vqsim" run "$tmp/delay.toml"
check "... naming it and its line" grep -q "delay.fio:5: job 'b': option 'startdelay' is not modelled" "$tmp/err"
printf '[workload]\nfio_job = "none.fio"\n' >"$tmp/none.toml"
check "a job file that is not there is bad input (2)" status_is 2 "$vqsim" run "$tmp/none.toml"

# The MVA: one class per job (solve, run --compare-mva), never the first job for all.
check "solve on several jobs answers per job" status_is 0 "$vqsim" solve "$tmp/rw.toml"
check "... a block per job" bash -c "grep -q '^  job reader (4 in flight per VM): IOPS' '$tmp/out' && grep -q '^  job writer (1 in flight per VM): IOPS' '$tmp/out'"
"$vqsim" solve "$tmp/rw.toml" --format json >"$tmp/solve.json"
check "... JSON: vms[0].jobs, the VM's IOPS its jobs' together" python3 -c "
import json; v = json.load(open('$tmp/solve.json'))['vms'][0]
assert [x['name'] for x in v['jobs']] == ['reader', 'writer'], v
assert abs(v['iops'] - sum(x['iops'] for x in v['jobs'])) < 1e-6 * v['iops']
assert v['jobs'][1]['write_iops'] > 0 and v['jobs'][1]['read_iops'] == 0"
check "run --compare-mva on several jobs sets each job beside the simulation" status_is 0 "$vqsim" run "$tmp/rw.toml" "${short[@]}" --compare-mva
check "... one line per job" bash -c "grep -q '^    job reader: MVA [0-9]* IOPS' '$tmp/out' && grep -q '^    job writer: MVA [0-9]* IOPS.*vs the simulation' '$tmp/out'"
check "solve: stonewall groups one after the other" status_is 0 "$vqsim" solve "$tmp/sw.toml"
check "... the writer in group 1" grep -q '^  job writer, group 1 (1 in flight per VM)' "$tmp/out"
printf '[a]\nrw=randread\nrate_iops=500\n[b]\nrw=randwrite\n' >"$tmp/mixed.fio"
printf '[workload]\nfio_job = "mixed.fio"\n' >"$tmp/mixed.toml"
check "solve: open- and closed-loop jobs in one VM are refused (2)" status_is 2 "$vqsim" solve "$tmp/mixed.toml"
check "... saying why" grep -q "the VM's fio jobs: some run open loop (rate_iops) and others closed loop" "$tmp/err"
check "run --compare-mva on them is refused too (2)" status_is 2 "$vqsim" run "$tmp/mixed.toml" "${short[@]}" --compare-mva

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
