#!/usr/bin/env bash
# vqsim sweep end to end: the same files whatever --jobs; a sweep killed mid-way and resumed gives
# the files of an uninterrupted run; Ctrl-C stops cleanly; under mpirun with 2 ranks (when vqsim
# was built with MPI) the files match the single process byte for byte; bad specs exit 2.
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"
same_tree() { diff -r "$1" "$2" >/dev/null; }

cat >"$tmp/spec.toml" <<EOT
scenario = "$src/scenarios/default.toml"
metrics = ["read.iops", "read.lat_mean_us", "read.clat_p99_us"]
replications = 2
ios = 20000
[[axis]]
key = "host.iothreads"
values = [1, 2]
[[axis]]
key = "workload.iodepth"
range = { from = 1, to = 64, log2 = true }
[[exclude]]
"host.iothreads" = 2
"workload.iodepth" = 64
EOT

"$vqsim" sweep "$tmp/spec.toml" --out "$tmp/j1" --jobs 1 2>"$tmp/j1.err"
check "a sweep runs (jobs 1)" test -f "$tmp/j1/results.csv"
check "... 13 points: 2 x 7 minus one excluded" test "$(($(wc -l <"$tmp/j1/results.csv") - 1))" -eq 13
check "... a fio-plot tree in fio JSON" python3 -c "import json; j=json.load(open('$tmp/j1/fio-plot/host.iothreads-1/randread-iodepth-32-numjobs-1.json')); assert j['jobs'][0]['read']['iops']>0"
check "... no journal left behind" bash -c "! ls '$tmp/j1' | grep -q journal"
"$vqsim" sweep "$tmp/spec.toml" --out "$tmp/j2" --jobs 2 2>/dev/null
check "the same files with --jobs 2" same_tree "$tmp/j1" "$tmp/j2"

# Kill -9 mid-way (a crash), then resume.
cat "$tmp/spec.toml" | sed 's/ios = 20000/ios = 200000/' >"$tmp/slow.toml"
"$vqsim" sweep "$tmp/slow.toml" --out "$tmp/ref" --jobs 2 2>/dev/null
"$vqsim" sweep "$tmp/slow.toml" --out "$tmp/killed" --jobs 2 2>/dev/null &
pid=$!
for _ in $(seq 1 100); do
  sleep 0.1
  n=$(cat "$tmp"/killed/journal*.jsonl 2>/dev/null | wc -l)
  [ "$n" -ge 4 ] && break
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
check "the killed sweep left a journal and no results" bash -c "ls '$tmp/killed' | grep -q journal && ! test -f '$tmp/killed/results.csv'"
"$vqsim" sweep "$tmp/slow.toml" --out "$tmp/killed" 2>"$tmp/again.err"
check "without --resume an unfinished sweep is not overwritten (exit 2)" test $? -eq 2
"$vqsim" sweep "$tmp/slow.toml" --out "$tmp/killed" --resume --jobs 2 2>"$tmp/resume.err"
check "--resume says how many points were done before" grep -q "done before" "$tmp/resume.err"
check "killed + resumed gives the files of an uninterrupted run" same_tree "$tmp/ref" "$tmp/killed"

# Ctrl-C: a clean stop with a message, the journal kept.
"$vqsim" sweep "$tmp/slow.toml" --out "$tmp/int" --jobs 1 2>"$tmp/int.err" &
pid=$!
# The sweep's own handler (keep the journal, say how to resume) is in place once a point is in
# the journal, after its header line.
wait_for 300 bash -c "test \$(cat '$tmp'/int/journal*.jsonl 2>/dev/null | wc -l) -ge 2"
interrupt_when_ready $pid
wait $pid
status=$?
check "SIGINT stops with status 130" test "$status" -eq 130
check "... saying how to resume" grep -q -- "--resume" "$tmp/int.err"

# MPI: 2 ranks write the same files as one process.
if "$vqsim" sweep --help | grep -q mpirun && command -v mpirun >/dev/null && ldd "$vqsim" | grep -q libmpi; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  mpirun -np 2 "$vqsim" sweep "$tmp/spec.toml" --out "$tmp/mpi" --jobs 1 2>"$tmp/mpi.err"
  check "mpirun -np 2: the sweep runs on 2 ranks" grep -q "2 ranks" "$tmp/mpi.err"
  check "... and writes the single-process files byte for byte" same_tree "$tmp/j1" "$tmp/mpi"
else
  echo "note: vqsim was built without MPI (or mpirun is missing); the 2-rank check is skipped" >&2
fi

# Bad specs: exit 2 with file, line and key.
printf 'scenario = "%s/scenarios/default.toml"\n[[axis]]\nkey = "workload.iodeth"\nvalues = [1]\n' "$src" >"$tmp/bad.toml"
"$vqsim" sweep "$tmp/bad.toml" --out "$tmp/bad" 2>"$tmp/bad.err"
check "an unknown axis key is bad input (2)" test $? -eq 2
check "... naming file, line and a suggestion" grep -q "bad.toml:3: axis\[0\].key: unknown scenario key 'workload.iodeth' (did you mean 'workload.iodepth'?)" "$tmp/bad.err"
printf 'scenario = "%s/scenarios/default.toml"\nmetrics = ["read.iopz"]\n' "$src" >"$tmp/badm.toml"
"$vqsim" sweep "$tmp/badm.toml" --out "$tmp/badm" 2>"$tmp/badm.err"
check "an unknown metric is bad input (2) with a suggestion" bash -c "test $? -eq 2 && grep -q \"did you mean 'read.iops'\" '$tmp/badm.err'"

# Issue 16, item 6: a sweep over a calibrated scenario carries each point's whole prediction
# interval (model error, parameters, simulation) beside the simulation's own half-width.
printf 'scenario = "%s/scenarios/calibrated/seed000.toml"\nmetrics = ["read.iops", "read.clat_p99_us"]\nreplications = 2\nios = 5000\n[[axis]]\nkey = "workload.iodepth"\nvalues = [8, 32]\n' "$src" >"$tmp/cal.toml"
"$vqsim" sweep "$tmp/cal.toml" --out "$tmp/cal" --jobs 1 >/dev/null 2>&1
check "a calibrated sweep has prediction columns" bash -c "head -1 '$tmp/cal/results.csv' | grep -q 'read.iops_hw95,read.iops_pred_lower,read.iops_pred_upper'"
check "... each point's simulated mean inside its prediction interval" python3 -c "
import csv; rows = list(csv.DictReader(open('$tmp/cal/results.csv')))
assert len(rows) == 2 and all(float(r['read.iops_pred_lower']) < float(r['read.iops']) < float(r['read.iops_pred_upper']) for r in rows)"
"$vqsim" sweep "$tmp/cal.toml" --out "$tmp/cal2" --jobs 2 >/dev/null 2>&1
check "... the same files with --jobs 2" same_tree "$tmp/cal" "$tmp/cal2"

# Issue 19: a sweep from none (vm.<name>.count = 0 at a point) over a [[vm]] file: that profile's
# metrics are empty at that point, the others' are there, and the sweep does not fail.
printf 'scenario = "%s/scenarios/consolidation/noisy-neighbour.toml"\nmetrics = ["vm.db.read.clat_p99_us", "vm.backup.read.iops"]\nios = 3000\nreplications = 2\n[[axis]]\nkey = "vm.backup.count"\nvalues = [0, 1]\n' "$src" >"$tmp/none.toml"
"$vqsim" sweep "$tmp/none.toml" --out "$tmp/none" --jobs 1 >/dev/null 2>"$tmp/none.err"
check "a sweep of a count from 0 runs every point" test $? -eq 0
check "... the switched-off VM's metrics empty at 0, present at 1; the other VM's at both" python3 -c "
import csv; rows = list(csv.DictReader(open('$tmp/none/results.csv')))
assert [r['vm.backup.read.iops'] == '' for r in rows] == [True, False], rows
assert all(float(r['vm.db.read.clat_p99_us']) > 0 for r in rows)"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
