#!/usr/bin/env bash
# End-to-end checks of the vqsim binary: what a user types, what comes back, exit codes.
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"

check "--help exits 0 and lists run and bench" bash -c "'$vqsim' --help | grep -q 'run' && '$vqsim' --help | grep -q 'bench'"
check "--version prints the version" bash -c "'$vqsim' --version | grep -Eq '^vqsim [0-9]+\.[0-9]+\.[0-9]+$'"
check "no command is bad usage (2)" status_is 2 "$vqsim"
check "an unknown command is bad usage (2) with a suggestion" status_is 2 "$vqsim" rnu
check "... the suggestion names run" grep -q "did you mean 'run'" "$tmp/err"
check "run without a scenario is bad usage (2)" status_is 2 "$vqsim" run
check "run with a missing file is bad input (2)" status_is 2 "$vqsim" run "$tmp/none.toml"
check "run --help exits 0" status_is 0 "$vqsim" run --help
tandem="$src/scenarios/engine/tandem.toml"
check "an unknown --set key is bad input (2)" status_is 2 "$vqsim" run "$tandem" --set population.custmers=3
check "... naming the key and a suggestion" grep -q "did you mean 'customers'" "$tmp/err"

small=(--set run.completions=20000 --set run.replications=4)
check "run the engine's tandem network succeeds" status_is 0 "$vqsim" run "$tandem" "${small[@]}"
check "... and reports Little's law ok" grep -q "Little's law: .*: ok" "$tmp/out"
"$vqsim" run "$tandem" "${small[@]}" --threads 1 >"$tmp/t1.txt"
"$vqsim" run "$tandem" "${small[@]}" --threads 2 >"$tmp/t2.txt"
"$vqsim" run "$tandem" "${small[@]}" --threads 2 --format json >"$tmp/t2.json"
"$vqsim" run "$tandem" "${small[@]}" --threads 1 --format json >"$tmp/t1.json"
check "same seed: byte-identical text with --threads 1 and 2" cmp -s "$tmp/t1.txt" "$tmp/t2.txt"
check "same seed: byte-identical JSON with --threads 1 and 2" cmp -s "$tmp/t1.json" "$tmp/t2.json"
check "JSON output parses and carries intervals" python3 -c "import json,sys; j=json.load(open('$tmp/t1.json')); m=j['metrics']['population.throughput_per_s']; assert m['half_width_95']>0 and j['little']['ok']"
"$vqsim" run "$tandem" "${small[@]}" --seed 2 >"$tmp/s2.txt"
check "another seed gives other figures" bash -c "! cmp -s '$tmp/t1.txt' '$tmp/s2.txt'"

# I/O-path scenarios.
def="$src/scenarios/default.toml"
io=(--ios 20000 --replications 3)
# Issue 17 item 7: Ceph's rare 100 ms stalls left jobs present at the window's end that were far
# older than the stall's mean visit; the old count-based edge allowance called that a broken law.
check "a long Ceph run with stalls at the window's edge keeps Little's law (exit 0)" status_is 0 "$vqsim" run "$src/scenarios/seed002-qemu2.4-writeback-iothread.toml" --set workload.ios=100000
check "... and says ok" grep -q "Little's law: .*: ok" "$tmp/out"
check "run the default I/O-path scenario succeeds" status_is 0 "$vqsim" run "$def" "${io[@]}"
check "... prints fio-like IOPS, percentiles, the stage table, the bottleneck and Little" bash -c "grep -q 'read: IOPS=' '$tmp/out' && grep -q '99.90th=' '$tmp/out' && grep -q 'share of lat' '$tmp/out' && grep -q '^bottleneck: ' '$tmp/out' && grep -q \"Little's law: .*: ok\" '$tmp/out'"
"$vqsim" run "$def" "${io[@]}" --threads 1 --format json >"$tmp/io1.json"
"$vqsim" run "$def" "${io[@]}" --threads 2 --format json >"$tmp/io2.json"
check "I/O path: byte-identical JSON with --threads 1 and 2" cmp -s "$tmp/io1.json" "$tmp/io2.json"
check "I/O path JSON: directions with intervals, stages with shares, a bottleneck" python3 -c "import json; j=json.load(open('$tmp/io1.json')); r=j['directions']['read']; assert r['iops']['mean']>0 and r['iops']['half_width_95']>0; assert r['clat']['percentiles_ns']['99.000000']['mean']>0; assert abs(sum(s['share_of_latency'] for s in j['stages'])-1)<0.05, sum(s['share_of_latency'] for s in j['stages']); assert j['bottleneck']['stage'] and j['little']['ok']"
check "--format fio-json is fio 3.x JSON" bash -c "'$vqsim' run '$def' ${io[*]} --format fio-json > '$tmp/fio.json'"
check "... with jobs[0].read.iops, lat_ns.mean and clat_ns.percentile['99.000000']" python3 -c "import json; j=json.load(open('$tmp/fio.json')); r=j['jobs'][0]['read']; assert r['iops']>0 and r['lat_ns']['mean']>0 and r['clat_ns']['percentile']['99.000000']>0; assert j['fio version'].startswith('vqsim')"
check "a misspelt scenario key is bad input (2)" status_is 2 "$vqsim" run "$def" --set workload.iodeth=4
check "... naming the key and a suggestion" grep -q "workload.iodeth: unknown key (did you mean 'workload.iodepth'?)" "$tmp/err"
check "aio=native with cache=writeback is rejected like QEMU rejects it (2)" status_is 2 "$vqsim" run "$def" --set host.cache=writeback
check "... saying why" grep -q "requires cache.direct=on" "$tmp/err"
check "an out-of-range value is bad input (2)" status_is 2 "$vqsim" run "$def" --set workload.rwmixread=150
check "--compare-mva reports the MVA answer" bash -c "'$vqsim' run '$def' ${io[*]} --compare-mva | grep -q '^MVA: '"

check "solve prints IOPS and a bottleneck" bash -c "'$vqsim' solve '$src/scenarios/seed004-vm.toml' | grep -q '^bottleneck: host.main_loop'"
check "solve --format json parses" python3 -c "import json,subprocess; j=json.loads(subprocess.run(['$vqsim','solve','$def','--format','json'],capture_output=True,text=True).stdout); assert j['iops']>0 and j['stages']"
check "graph prints checked Graphviz DOT for every scenario" bash -c "for f in '$src'/scenarios/*.toml; do '$vqsim' graph \"\$f\" | grep -q '^digraph vqsim' || exit 1; done"
check "docs/scenario.md holds exactly the current keys tables (vqsim keys --markdown, as one block: a stale or missing row fails)" python3 -c "import subprocess,sys; out=subprocess.run([sys.argv[1],'keys','--markdown'],capture_output=True,text=True,check=True).stdout; sys.exit(0 if out.strip() in open(sys.argv[2]).read() else 1)" "$vqsim" "$src/docs/scenario.md"
check "keys lists the contract keys" bash -c "'$vqsim' keys | grep -q '^workload.iodepth' && '$vqsim' keys | grep -q '^host.iothreads' && '$vqsim' keys --markdown | grep -q '| \`backend.kind\`'"
check "import reads a seed's fio 2.x text" bash -c "'$vqsim' import '$src/calibration/data/seeds/000-virtio-blk.fio.txt' 2>/dev/null | python3 -c \"import json,sys; j=json.load(sys.stdin); assert j['jobs'][0]['read']['iops']==37051, j['jobs'][0]['read']['iops']\""
check "import of a missing file is bad input (2)" status_is 2 "$vqsim" import "$tmp/none.json"
printf '[global]\nioengine=libaio\ndirect=1\nverify=md5\n[job]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\nnumjobs=2\n' > "$tmp/job.fio"
printf 'base = "%s"\n[workload]\nfio_job = "job.fio"\nios = 20000\n' "$def" > "$tmp/withjob.toml"
check "a scenario can take its workload from a fio job file" status_is 0 "$vqsim" run "$tmp/withjob.toml" --replications 2
check "... whose options show up and whose unsupported ones are named" bash -c "grep -q 'randrw 8k (70% reads) libaio iodepth 16 x 2 jobs' '$tmp/out' && grep -q \"verify\" '$tmp/out'"

# Determinism, command by command: the same inputs and seed give the same bytes, whatever --threads.
same_bytes() {  # same_bytes DESCRIPTION -- CMD1... -- CMD2...
  local what=$1
  shift 2
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  "${a[@]}" >"$tmp/d1" 2>/dev/null
  "${b[@]}" >"$tmp/d2" 2>/dev/null
  check "$what" cmp -s "$tmp/d1" "$tmp/d2"
}
same_bytes "determinism: run --format fio-json, threads 1 vs 2" -- "$vqsim" run "$def" "${io[@]}" --format fio-json --threads 1 -- "$vqsim" run "$def" "${io[@]}" --format fio-json --threads 2
same_bytes "determinism: solve" -- "$vqsim" solve "$src/scenarios/seed000-virtio-blk.toml" --format json -- "$vqsim" solve "$src/scenarios/seed000-virtio-blk.toml" --format json
same_bytes "determinism: graph" -- "$vqsim" graph "$src/scenarios/seed002-qemu2.2-writethrough.toml" -- "$vqsim" graph "$src/scenarios/seed002-qemu2.2-writethrough.toml"
same_bytes "determinism: import" -- "$vqsim" import "$src/calibration/data/seeds/002-qemu2.2-writethrough.fio.txt" --format fio-json -- "$vqsim" import "$src/calibration/data/seeds/002-qemu2.2-writethrough.fio.txt" --format fio-json
same_bytes "determinism: check (DES spread), threads 1 vs 2" -- "$vqsim" check "$src/calibration/data/seeds/003-virtio-blk-bio-path.toml" --format json --threads 1 -- "$vqsim" check "$src/calibration/data/seeds/003-virtio-blk-bio-path.toml" --format json --threads 2
same_bytes "determinism: plan, threads 1 vs 2" -- "$vqsim" plan "$src/scenarios/seed004-vm.toml" --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2000' --ios 20000 --threads 1 -- "$vqsim" plan "$src/scenarios/seed004-vm.toml" --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2000' --ios 20000 --threads 2
same_bytes "determinism: keys" -- "$vqsim" keys -- "$vqsim" keys

# Ctrl-C on a long run: a clean stop, status 130, a message.
"$vqsim" run "$def" --ios 20000000 --replications 2 --threads 1 >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
interrupt_when_ready $pid 1  # a second into the simulation
wait $pid
check "SIGINT stops a run with status 130" test $? -eq 130
check "... and says so" grep -q "^vqsim: interrupted" "$tmp/int.err"

check "a single VM on host.cores: --format json has host_cpu, the cores each kind of thread kept busy, adding up to busy_cores" python3 -c "
import json, subprocess, sys
j = json.loads(subprocess.run([sys.argv[1], 'run', sys.argv[2], '--ios', '5000', '--format', 'json'], capture_output=True, text=True, check=True).stdout)
h = j['host_cpu']
assert h['cores'] == 2 and h['by_thread']['vcpus'] > 0 and h['by_thread']['main_loop'] > 0, h
assert abs(sum(h['by_thread'].values()) - h['busy_cores']) < 1e-9 * max(1, h['busy_cores']), h
assert h['off_cpu_cores'] > 0, h  # TCG: the vCPU's background outside its requests (host.tcg_vcpu_busy)
assert abs(h['busy_cores'] - h['off_cpu_cores'] - 2 * h['utilization']['mean']) < 0.02 * h['busy_cores'], h" "$vqsim" "$src/scenarios/lab-tcg.toml"
check "bench tandem --json reports both loops, MVA and the ratio" bash -c "'$vqsim' bench tandem --cycles 100000 --repeat 1 --json > '$tmp/b.json'"
check "... throughput within 1% of exact MVA" python3 -c "import json; j=json.load(open('$tmp/b.json')); assert abs(j['engine_throughput_rel_error_vs_mva'])<0.01, j; assert j['engine_to_hand_ratio']>0"
check "an unknown benchmark is bad usage (2)" status_is 2 "$vqsim" bench tandm

# A calibrated scenario ([calibration] table): prediction intervals in JSON; --draws 0 has none.
printf 'base = "%s"\n[guest]\ncpu_scale = 1.17\n[backend]\nread_us = 95.2\n[calibration]\nparams = ["guest.cpu_scale", "backend.read_us"]\nlog_sd = [0.05, 0.12]\nlog_corr = [[1.0, -0.4], [-0.4, 1.0]]\ndraws = 4\nsource = "test"\n' "$def" > "$tmp/calibrated.toml"
check "a calibrated scenario's JSON has a prediction with intervals" bash -c "'$vqsim' run '$tmp/calibrated.toml' ${io[*]} --format json > '$tmp/pred.json'"
check "... read.iops inside [lower, upper] from 4 draws" python3 -c "import json; p=json.load(open('$tmp/pred.json'))['prediction']; m=p['metrics']['read.iops']; assert p['draws']==4 and m['lower']<m['mean']<m['upper'] and m['param_sd_rel']>0, p"
check "--draws 0: no prediction" bash -c "'$vqsim' run '$tmp/calibrated.toml' ${io[*]} --format json --draws 0 | python3 -c \"import json,sys; assert 'prediction' not in json.load(sys.stdin)\""

# A wide fitted distribution draws beyond a key's range (service_cv above 10): the draw stands at the limit.
printf 'base = "%s"\n[backend]\nservice_cv = 3\n[calibration]\nparams = ["backend.service_cv"]\nlog_sd = [3.0]\nlog_corr = [[1.0]]\ndraws = 6\n' "$def" > "$tmp/wide.toml"
check "draws beyond a key's range are clamped, not an error" bash -c "'$vqsim' run '$tmp/wide.toml' ${io[*]} --format json > /dev/null"

# The stage graph coloured by a short simulation's utilization.
check "graph --with-results fills stages by utilization" bash -c "'$vqsim' graph '$src/scenarios/seed000-virtio-blk.toml' --with-results --ios 5000 | grep -q fillcolor"
same_bytes "determinism: graph --with-results, threads 1 vs 2" -- "$vqsim" graph "$src/scenarios/seed000-virtio-blk.toml" --with-results --ios 5000 --threads 1 -- "$vqsim" graph "$src/scenarios/seed000-virtio-blk.toml" --with-results --ios 5000 --threads 2

# Issue 16, item 6: plan on a calibrated scenario judges its answer with the whole prediction
# interval (model error, parameters, simulation), not the simulation's noise alone.
check "plan on a calibrated scenario succeeds" status_is 0 "$vqsim" plan "$src/scenarios/calibrated/seed004.toml" --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2ms' --ios 5000
check "... and judges the answer with the prediction interval" grep -q "with the calibration's uncertainty (95% prediction interval: model error, parameters, simulation)" "$tmp/out"
check "... in JSON too" bash -c "'$vqsim' plan '$src/scenarios/calibrated/seed004.toml' --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2ms' --ios 5000 --format json | python3 -c \"import json,sys; k=json.load(sys.stdin)['prediction_checks'][0]; assert k['lower'] < k['mean'] < k['upper'] and k['verdict']\""
# Issue 19: how many VMs of a profile fit: the answer satisfies the bound, one more VM (simulated) does not.
check "plan --maximize vm.count: the answer holds and answer+1 fails in the simulation" bash -c "'$vqsim' plan '$def' --maximize vm.count --subject-to 'read.clat_p99_us <= 400' --ios 20000 --format json | python3 -c \"import json,sys; j=json.load(sys.stdin); a=j['answer']; des={t['value']: t['satisfied'] for t in j['tried'] if t['method'] == 'DES'}; assert a >= 2 and des[a] and not des[a + 1], (a, des)\""
# Issue 19: [[vm]] tables. How many web VMs fit beside each other on one NVMe.
web="$src/scenarios/consolidation/web-nvme.toml"
check "plan --maximize vm.web.count: the answer holds and answer+1 fails in the simulation" bash -c "'$vqsim' plan '$web' --maximize vm.web.count --subject-to 'vm.web.read.clat_p99_us <= 300' --ios 5000 --format json | python3 -c \"import json,sys; j=json.load(sys.stdin); a=j['answer']; des={t['value']: t['satisfied'] for t in j['tried'] if t['method'] == 'DES'}; assert a >= 2 and des[a] and not des[a + 1], (a, des)\""
noisy="$src/scenarios/consolidation/noisy-neighbour.toml"
# Issue 19: several [[vm]] profiles by multi-class MVA: one class per profile, the method named.
check "solve on two [[vm]] profiles: each profile's figures, the shared device by profile, the method" bash -c "'$vqsim' solve '$noisy' > '$tmp/classes.txt' && grep -q 'exact multi-class MVA over 66 population vectors' '$tmp/classes.txt' && grep -q '^vm db (1 VM' '$tmp/classes.txt' && grep -q '^vm backup (1 VM' '$tmp/classes.txt' && grep -q '^device  *32 ' '$tmp/classes.txt'"
check "... --format json: a vms list and the shared stations with each profile's share" bash -c "'$vqsim' solve '$noisy' --format json | python3 -c \"import json,sys; j=json.load(sys.stdin); v={x['name']: x for x in j['vms']}; assert set(v) == {'db', 'backup'} and j['exact']; d=j['shared_stations'][0]; assert d['name'] == 'device' and abs(d['by_vm']['db'] + d['by_vm']['backup'] - d['utilization']) < 1e-9; assert abs(j['host']['total_iops'] - v['db']['total_iops'] - v['backup']['total_iops']) < 1e-6\""
check "... run --compare-mva compares each profile with the simulation" bash -c "'$vqsim' run '$noisy' --ios 2000 --replications 2 --compare-mva | grep -q '^  vm backup: MVA .* vs the simulation'"
check "bench e2e --vms runs the VMs as a [[vm]] file and reports wall time per simulated I/O" bash -c "'$vqsim' bench e2e --vms 4 --ios 2000 --repeat 1 --json | python3 -c \"import json,sys; j=json.load(sys.stdin); assert j['vms'] == 4 and j['wall_ns_per_simulated_io_median'] > 0\""
check "run on two [[vm]] profiles: JSON has a vms list with each profile's directions and the host" bash -c "'$vqsim' run '$noisy' --ios 2000 --replications 2 --format json | python3 -c \"import json,sys; j=json.load(sys.stdin); v={x['name']: x for x in j['vms']}; assert set(v) == {'db', 'backup'}; assert v['db']['directions']['read']['iops']['mean'] > 0 and v['backup']['directions']['read']['bw_bytes_per_s']['mean'] > 1e9; t=j['host']['total_iops']['mean']; assert abs(t - v['db']['directions']['read']['iops']['mean'] - v['backup']['directions']['read']['iops']['mean']) < 1e-6 * t, j['host']; assert v['backup']['device_share']['bytes'] > 0.9 and abs(v['db']['device_share']['ios'] + v['backup']['device_share']['ios'] - 1) < 1e-9, v\""
check "... fio-json: one job per VM profile, jobname <vm>/<job>" bash -c "'$vqsim' run '$noisy' --ios 2000 --replications 2 --format fio-json | python3 -c \"import json,sys; j=json.load(sys.stdin); assert [x['jobname'] for x in j['jobs']] == ['db/vqsim', 'backup/vqsim'], j['jobs']\""
check "... text: a block per VM profile and the host's aggregate" bash -c "'$vqsim' run '$noisy' --ios 2000 --replications 2 | grep -q '^vm backup: 1 VM on backend nvme' && '$vqsim' run '$noisy' --ios 2000 --replications 2 | grep -q '^host (2 VMs): IOPS='"
check "graph of VMs on two backends: each VM's path from its own fio, coloured by a short run" bash -c "'$vqsim' graph '$src/scenarios/consolidation/two-backends.toml' --with-results --ios 2000 | grep -q 'log.guest.fio_jobs.*fillcolor'"
check "plan on two [[vm]] profiles warns that a metric without vm.<name>. is the first profile's, and says what to write" bash -c "'$vqsim' plan '$noisy' --maximize vm.backup.count --range 1:2 --subject-to 'read.clat_p99_us <= 2000' --ios 1000 --replications 2 2>&1 >/dev/null | grep -q 'warning: metric read.clat_p99_us names no VM.*first profile.s (db); write vm.db.read.clat_p99_us'"
check "... and a prefixed metric draws no such warning" bash -c "! '$vqsim' plan '$noisy' --maximize vm.backup.count --range 1:2 --subject-to 'vm.db.read.clat_p99_us <= 2000' --ios 1000 --replications 2 2>&1 >/dev/null | grep -q 'names no VM'"
check "compare on two [[vm]] profiles with its default figures says they are the first profile's" bash -c "'$vqsim' compare '$noisy' --vs vm.backup.count=0 --ios 1000 --replications 2 2>&1 >/dev/null | grep -q 'figures compared are the first \[\[vm\]\] profile.s (db)'"
check "calibrate refuses a file of [[vm]] tables (it fits one profile)" status_is 2 "$vqsim" calibrate --scenario "$noisy" --data "$src/calibration/data/seeds/004-epyc-vm-vs-baremetal.toml" --out "$tmp/vms-fit.toml"
check "calibrate --spread-starts with a misspelt value is bad usage (2)" status_is 2 "$vqsim" calibrate --scenario "$def" --data "$src/calibration/data/seeds/004-epyc-vm-vs-baremetal.toml" --out "$tmp/x.toml" --spread-starts simulate
check "... naming the values and a suggestion" bash -c "'$vqsim' calibrate --scenario '$def' --data '$src/calibration/data/seeds/004-epyc-vm-vs-baremetal.toml' --out '$tmp/x.toml' --spread-starts simulate 2>&1 | grep -q \"auto, simulated or screened, not 'simulate' (did you mean 'simulated'\""
check "compare --vs vm.backup.count=0: without its neighbour the db VM's p99 falls" bash -c "'$vqsim' compare '$noisy' --vs vm.backup.count=0 --metric vm.db.read.clat_p99_us --ios 2000 --replications 3 --format json | python3 -c \"import json,sys; j=json.load(sys.stdin); m=j['comparisons'][0]['metrics']['vm.db.read.clat_p99_us']; assert m['delta_rel'] < -0.5, m\""
check "plan on an uncalibrated scenario has no such block" status_is 0 "$vqsim" plan "$def" --maximize workload.iodepth --subject-to 'read.clat_p99_us <= 2ms' --ios 5000
check "... none" bash -c "! grep -q \"calibration's uncertainty\" '$tmp/out'"

# vqsim compare: a what-if as a paired difference.
cmp_small=(--ios 20000 --replications 3)
check "compare: --help exits 0 and teaches --vs" bash -c "'$vqsim' compare --help | grep -q -- '--vs KEY=VALUE'"
check "compare is listed in vqsim --help" bash -c "'$vqsim' --help | grep -q '^  compare'"
check "compare without --vs is bad usage (2)" status_is 2 "$vqsim" compare "$def"
check "compare with a misspelt --vs key is bad input (2)" status_is 2 "$vqsim" compare "$def" --vs host.iothread=2 "${cmp_small[@]}"
check "... naming the --vs and a suggestion" grep -q -- "--vs host.iothread=2.*did you mean 'host.iothreads'" "$tmp/err"
check "compare with '--vs io_uring' (no key) is bad usage (2)" status_is 2 "$vqsim" compare "$def" --vs io_uring
check "compare --replications 1 is bad usage (2)" status_is 2 "$vqsim" compare "$def" --vs host.iothreads=0 --replications 1
check "compare --metric read.p99 suggests read.clat_p99_us" bash -c "'$vqsim' compare '$def' --vs host.iothreads=0 --metric read.p99 2>&1 | grep -q \"did you mean 'read.clat_p99_us'\""
check "compare two alternatives succeeds" status_is 0 "$vqsim" compare "$def" --vs host.aio=io_uring --vs host.iothreads=0 "${cmp_small[@]}"
check "... a verdict per metric" grep -q "read.iops .*worse" "$tmp/out"
"$vqsim" compare "$def" --vs host.aio=native --vs host.iothreads=0,workload.iodepth=16 "${cmp_small[@]}" --format json >"$tmp/cmp.json" 2>/dev/null
check "compare --format json: the contract's fields, and itself is no significant difference with 0 inside" python3 - "$tmp/cmp.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["comparisons"]
assert c[0]["vs"] == {"host.aio": "native"}, c[0]["vs"]
assert c[1]["vs"] == {"host.iothreads": "0", "workload.iodepth": "16"}, c[1]["vs"]
for m in c[0]["metrics"].values():
    assert m["verdict"] == "no significant difference" and m["lower_rel"] <= 0 <= m["upper_rel"] and m["delta"] == 0, m
m = c[1]["metrics"]["read.iops"]
for k in ("base", "alt", "delta", "delta_rel", "lower_rel", "upper_rel", "verdict"):
    assert k in m, k
assert m["verdict"] in ("better", "worse", "no significant difference")
assert m["lower_rel"] <= m["delta_rel"] <= m["upper_rel"]
PY
same_bytes "determinism: compare, threads 1 vs 2" -- "$vqsim" compare "$def" --vs host.iothreads=0 "${cmp_small[@]}" --format json --threads 1 -- "$vqsim" compare "$def" --vs host.iothreads=0 "${cmp_small[@]}" --format json --threads 2
check "compare on a calibrated scenario shares its parameter draws" status_is 0 "$vqsim" compare "$src/scenarios/calibrated/seed000.toml" --vs host.aio=native "${cmp_small[@]}" --draws 4
check "... and says so" grep -q "4 parameter draws shared by both sides" "$tmp/out"
check "compare: an alternative the stated QEMU version cannot run is bad input (2)" status_is 2 "$vqsim" compare "$src/scenarios/calibrated/seed000.toml" --vs host.aio=io_uring "${cmp_small[@]}"
check "... naming the --vs and the version" grep -q -- "--vs host.aio=io_uring: .*QEMU 5.0" "$tmp/err"

# Issue 17, item 9: the small cases that answered without a word.
check "plan: a latency bound takes a duration ('2ms')" status_is 0 "$vqsim" plan "$def" --maximize workload.iodepth --subject-to 'read.clat_p99_us <= 2ms' --ios 5000
check "... read as 2000 us" grep -q "2000\|2ms" "$tmp/out"
check "plan: '2ms' on an IOPS metric is bad input (2)" status_is 2 "$vqsim" plan "$def" --maximize workload.iodepth --subject-to 'read.iops <= 2ms'
check "plan: an unknown metric 'read.p99' is bad input (2)" status_is 2 "$vqsim" plan "$def" --maximize workload.iodepth --subject-to 'read.p99 <= 2000'
check "... suggesting read.clat_p99_us" grep -q "did you mean 'read.clat_p99_us'" "$tmp/err"
printf 'scenario = "%s"\nmetrics = ["write.latency"]\n[[axis]]\nkey = "host.iothreads"\nvalues = [0, 1]\n' "$def" >"$tmp/badmetric.toml"
check "sweep: an unknown metric 'write.latency' is bad input (2)" status_is 2 "$vqsim" sweep "$tmp/badmetric.toml" --out "$tmp/badmetric"
check "... suggesting write.lat_mean_us" grep -q "did you mean 'write.lat_mean_us'" "$tmp/err"
check "run: two IOThreads for one job's queue warn that one is idle" status_is 0 "$vqsim" run "$def" --set host.iothreads=2 "${io[@]}"
check "... on stderr, naming the key to raise" grep -q "warning: host.iothreads = 2, but only 1 of them gets requests.*workload.numjobs" "$tmp/err"
check "... and in JSON warnings" bash -c "'$vqsim' run '$def' --set host.iothreads=2 ${io[*]} --format json 2>/dev/null | python3 -c \"import json,sys; assert any('host.iothreads = 2' in w for w in json.load(sys.stdin)['warnings'])\""
check "solve: the same warning" bash -c "'$vqsim' solve '$def' --set host.iothreads=2 2>&1 >/dev/null | grep -q 'only 1 of them gets requests'"
check "run: as many IOThreads as queues with work: no warning" status_is 0 "$vqsim" run "$def" --set host.iothreads=2 --set workload.numjobs=2 "${io[@]}"
check "... none" bash -c "! grep -q 'IOThread' '$tmp/err'"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
