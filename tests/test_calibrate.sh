#!/usr/bin/env bash
# vqsim calibrate end to end on the seeds: seed 000 with two CPU scales fitted converges (exit 0),
# writes FIT.toml that `vqsim run` predicts from ("prediction", finite numbers) and a JSON report
# with runs and params; the same command writes the same FIT.toml byte for byte; a fit stopped after one
# round (--max-rounds 1) exits 1 with the report and without FIT.toml; --cv loo on seed 004 prints
# the leave-one-out MAPE block and puts "cross_validation" in the JSON; Ctrl-C during a long
# calibration (seed 001) exits 130 and leaves an existing FIT.toml as it was, with no *.tmp;
# bad usage exits 2 with a message; a terse run fitted with the workload its set states, a JSON run
# with fio's defaults held out: the summary counts fitted and held-out runs apart, and FIT.toml's
# numbers are plain decimals.
#
# usage: test_calibrate.sh VQSIM SOURCE_DIR
set -uo pipefail
vqsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
# shellcheck source=tests/check_lib.sh
source "$src/tests/check_lib.sh"
finite_json() {  # every number in a JSON file is finite (Python's json reads NaN/Infinity)
  python3 - "$1" <<'EOF'
import json, math, sys
def walk(v):
    if isinstance(v, bool): return
    if isinstance(v, (int, float)):
        assert math.isfinite(v), v
    elif isinstance(v, dict):
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(json.load(open(sys.argv[1])))
EOF
}

seed000=(--scenario "$src/scenarios/seed000-virtio-scsi.toml" --data "$src/calibration/data/seeds/000-virtio-scsi-vs-blk.toml")

# ---------------------------------------------------------------- seed 000 converges
# With the default choice of parameters (seven) seed 000 does not converge (the DES and the
# corrected MVA still differ by 4.3% after 8 rounds; docs/ACCURACY.md), so the converged path
# fits the two CPU scales, which converges. These runs refine the spread starts on the simulation
# (within the default budget), so the --threads comparison below covers that too; the other runs
# here test other things and skip it (--spread-starts screened), which keeps them short under ASan.
mkdir fit
"$vqsim" calibrate "${seed000[@]}" --fit guest.cpu_scale,host.cpu_scale --out fit/fit.toml --report fit/r.json --threads 2 >fit/out.txt 2>fit/err.txt
status=$?
check "seed 000: exit 0 (converged)" test "$status" -eq 0
[ "$status" -eq 0 ] || { cat fit/err.txt >&2; }
check "... FIT.toml written" test -s fit/fit.toml
check "... the header names the command" grep -q "^# Calibrated by vqsim: vqsim calibrate --scenario $src/scenarios/seed000-virtio-scsi.toml" fit/fit.toml
check "... the fitted values" bash -c "grep -q '^guest.cpu_scale = ' fit/fit.toml && grep -q '^host.cpu_scale = ' fit/fit.toml"
check "... a [calibration] table" grep -q '^\[calibration\]' fit/fit.toml
check "... the text report lists parameters and runs" bash -c "grep -q '^parameters (95% intervals):' fit/out.txt && grep -q 'virtio-blk' fit/out.txt"
check "... no nan/inf in the text report" bash -c "! grep -qiwE 'nan|-nan|inf|-inf' fit/out.txt"
check "... no temporary file left" bash -c "! ls fit | grep -q '\.tmp'"
check "the report is JSON with runs and params" python3 -c "
import json; j = json.load(open('fit/r.json'))
assert j['converged'] is True, j['converged']
assert len(j['params']) >= 1 and all('estimate' in p and 'interval95' in p for p in j['params']), j['params']
assert [r['name'] for r in j['runs']] == ['virtio-scsi', 'virtio-blk'], j['runs']
assert all(len(r['targets']) > 0 for r in j['runs'])"
check "... with finite numbers only" finite_json fit/r.json

# `vqsim run FIT.toml` predicts from the [calibration] table.
timeout 120 "$vqsim" run fit/fit.toml --ios 20000 --format json >fit/run.json 2>fit/run.err
status=$?
check "vqsim run FIT.toml: exit 0" test "$status" -eq 0
[ "$status" -eq 0 ] || cat fit/run.err >&2
check "... a top-level \"prediction\" object" python3 -c "
import json; j = json.load(open('fit/run.json'))
assert isinstance(j['prediction'], dict) and j['prediction'], j.get('prediction')"
check "... finite numbers only" finite_json fit/run.json
timeout 120 "$vqsim" run fit/fit.toml --ios 20000 >fit/run.txt 2>/dev/null
check "... and a prediction block in text" bash -c "grep -qi 'prediction' fit/run.txt && ! grep -qiwE 'nan|-nan|inf|-inf' fit/run.txt"

# The same command again: the same FIT.toml, byte for byte.
cp fit/fit.toml first.toml
"$vqsim" calibrate "${seed000[@]}" --fit guest.cpu_scale,host.cpu_scale --out fit/fit.toml --report fit/r.json --threads 2 >/dev/null 2>&1
check "the same command writes the same FIT.toml (exit 0)" test $? -eq 0
check "... byte for byte" cmp -s first.toml fit/fit.toml
# ... whatever the thread count (the header records the command, so compare below it).
"$vqsim" calibrate "${seed000[@]}" --fit guest.cpu_scale,host.cpu_scale --out fit/t1.toml --threads 1 -q >/dev/null 2>&1
check "--threads 1: the same values as --threads 2" bash -c "diff <(grep -v '^# Calibrated by' first.toml) <(grep -v '^# Calibrated by' fit/t1.toml) >/dev/null"

check "... FIT.toml numbers are plain decimals (no 1.23e+08)" bash -c "! grep -v '^# Calibrated by' fit/fit.toml | grep -qE '[0-9][eE][+-]?[0-9]'"

# ---------------------------------------------------------------- a terse run, a JSON run of fio's defaults, --holdout
# Issue 17, items 2 and 9: a terse run is fitted as the workload its set states; a JSON run that
# names no workload option ran fio's defaults (read 4k psync QD1), not the base's randread QD32;
# with one run held out the summary counts the fitted and the held-out runs apart; FIT.toml
# writes bandwidth as a plain decimal.
mkdir terse
cat >terse/m.toml <<EOF
[[run]]
name = "seq1m"
file = "$src/tests/data/calibrate/seq1m-read.terse3.out"
set = { "workload.rw" = "read", "workload.bs" = "1m", "workload.ioengine" = "psync", "workload.numjobs" = 1 }

[[run]]
name = "defaults"
file = "$src/tests/data/calibrate/defaults.json.out"
set = {}
EOF
"$vqsim" calibrate --scenario "$src/scenarios/default.toml" --data terse/m.toml --fit backend.read_us,backend.bandwidth --holdout defaults \
  --spread-starts screened --out terse/fit.toml --report terse/r.json --threads 2 -q >terse/out.txt 2>terse/err.txt
status=$?
check "terse + fio defaults, --holdout: exit 0" test "$status" -eq 0
[ "$status" -eq 0 ] || cat terse/err.txt >&2
check "... the summary: 1 run fitted, 1 held out" grep -qE "^fitted 1 run of terse/m\.toml on .*default\.toml, 1 held out \(predicted, not fitted\): converged" terse/out.txt
check "... FIT.toml: fitted and held-out runs apart" bash -c "grep -q '^# Fitted on 1 run of m.toml, 1 held out' terse/fit.toml && grep -q '^source = \"m.toml, 1 run fitted, 1 held out\"' terse/fit.toml"
check "... bandwidth as a plain decimal" grep -qE '^backend\.bandwidth = [0-9]+(\.[0-9]+)?  # 95%: [0-9.]+ to [0-9.]+' terse/fit.toml
check "... no exponent anywhere in FIT.toml" bash -c "! grep -v '^# Calibrated by' terse/fit.toml | grep -qE '[0-9][eE][+-]?[0-9]'"
check "... the 1 MiB run fitted as 1 MiB reads (its IOPS within 10%), the defaults run predicted" python3 -c "
import json; j = json.load(open('terse/r.json'))
runs = {r['name']: r for r in j['runs']}
assert runs['seq1m']['role'] == 'fitted' and runs['defaults']['role'].startswith('held out'), runs
iops = [t for t in runs['seq1m']['targets'] if t['metric'] == 'read.iops'][0]
assert abs(iops['error_rel']) < 0.10, iops"
timeout 120 "$vqsim" run terse/fit.toml --ios 5000 --replications 2 >/dev/null 2>terse/run.err
check "... vqsim run reads that FIT.toml back" test $? -eq 0

# ---------------------------------------------------------------- a fit that does not converge
# Stopped after one round (--max-rounds 1) the fit has not converged: exit 1, the report written,
# FIT.toml not (an existing one kept). One round of the two CPU scales: seconds, where seed 000's
# seven default parameters, which no longer fail to converge in 8 rounds, took a minute under ASan.
mkdir nc
printf 'the old content\n' >nc/fit.toml
"$vqsim" calibrate "${seed000[@]}" --fit guest.cpu_scale,host.cpu_scale --max-rounds 1 --out nc/fit.toml --report nc/r.json \
  --spread-starts screened --threads 2 -q >nc/out.txt 2>nc/err.txt
status=$?
check "--max-rounds 1: exit 1 (not converged)" test "$status" -eq 1
check "not converged: says so and that FIT.toml was not written" grep -q "^vqsim: calibrate: the fit did not converge (the fit still improves after 1 round (.*); nc/fit.toml was not written" nc/err.txt
check "... the text report says NOT CONVERGED" grep -q 'NOT CONVERGED: .*(1 round, ' nc/out.txt
check "... the JSON report is written, converged false" python3 -c "
import json; j = json.load(open('nc/r.json')); assert j['converged'] is False and j['stop_reason'], j['stop_reason']"
check "... the existing FIT.toml kept" bash -c "test \"\$(cat nc/fit.toml)\" = 'the old content'"
check "... no *.tmp left" bash -c "! ls nc | grep -q '\.tmp'"

# ---------------------------------------------------------------- leave-one-out on seed 004
# Eight folds over its eight runs (reads and writes, 4 KiB and 1 MiB, VM and bare metal), two
# parameters: the folds' path is the same with six, which take four times as long (4.5 minutes
# under ASan, the suite's longest step).
mkdir loo
"$vqsim" calibrate --scenario "$src/scenarios/seed004-vm.toml" --data "$src/calibration/data/seeds/004-epyc-vm-vs-baremetal.toml" \
  --fit backend.read_us,backend.bandwidth --spread-starts screened \
  --out loo/fit.toml --report loo/r.json --cv loo --threads 2 -q >loo/out.txt 2>loo/err.txt
status=$?
check "seed 004 --cv loo: exit 0" test "$status" -eq 0
[ "$status" -eq 0 ] || cat loo/err.txt >&2
check "... prints the leave-one-out block" grep -q '^leave-one-out cross-validation' loo/out.txt
check "... with a MAPE line per kind" grep -qE '^  MAPE throughput +[0-9.]+%' loo/out.txt
check "... and the worst run" grep -qE "^  worst: run '[^']+' " loo/out.txt
check "... -q: no progress lines" bash -c "! grep -q '^calibrate: ' loo/err.txt"
check "the JSON has cross_validation with one fold per fitted run" python3 -c "
import json; j = json.load(open('loo/r.json')); cv = j['cross_validation']
assert cv['method'] == 'leave-one-out'
assert 'throughput' in cv['mape'], cv['mape']
assert len(cv['folds']) == len([r for r in j['runs'] if r['role'] == 'fitted']) == 8, len(cv['folds'])"
check "... with finite numbers only" finite_json loo/r.json

# ---------------------------------------------------------------- Ctrl-C
mkdir int
printf 'the old content\n' >int/fit.toml
cp int/fit.toml int/expected
"$vqsim" calibrate --scenario "$src/scenarios/seed001-virtio-blk.toml" --data "$src/calibration/data/seeds/001-tcm-vhost.toml" \
  --out int/fit.toml --report int/r.json --threads 2 >int/out.txt 2>int/err.txt &
pid=$!
interrupt_when_ready $pid 1  # a second into the calibration
wait $pid
status=$?
check "SIGINT during calibration: exit 130" test "$status" -eq 130
check "... says it was interrupted" grep -q 'vqsim: interrupted' int/err.txt
check "... the existing FIT.toml unchanged" cmp -s int/expected int/fit.toml
check "... no report written" test ! -e int/r.json
check "... no *.tmp left" bash -c "! ls int | grep -q '\.tmp'"

# ---------------------------------------------------------------- bad usage: exit 2
usage() {  # usage NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  timeout 60 "$vqsim" calibrate "$@" >u.out 2>u.err
  local status=$?
  check "$name: exit 2" test "$status" -eq 2
  check "$name: one message 'vqsim: ...' matching /$pattern/" bash -c "test \$(wc -l <u.err) -eq 1 && grep -q '^vqsim: ' u.err && grep -qE -- \"\$1\" u.err" _ "$pattern"
}
usage "no --out" 'needs --out' "${seed000[@]}"
usage "no --data" 'needs --data' --scenario "$src/scenarios/seed000-virtio-scsi.toml" --out x.toml
usage "no --scenario" 'needs --scenario' --data "$src/calibration/data/seeds/000-virtio-scsi-vs-blk.toml" --out x.toml
usage "--cv kfold" "--cv: loo .* or config .*kfold" "${seed000[@]}" --out x.toml --cv kfold
usage "a directory as --data" "$tmp/fit: is a directory" --scenario "$src/scenarios/seed000-virtio-scsi.toml" --data "$tmp/fit" --out x.toml
usage "a directory as --out" "--out $tmp/fit: is a directory" "${seed000[@]}" --out "$tmp/fit"
usage "--format yaml" '--format must be text or json' "${seed000[@]}" --out x.toml --format yaml
usage "--max-rounds 0" '--max-rounds must be 1\.\.100' "${seed000[@]}" --out x.toml --max-rounds 0
usage "--fit unknown key" '--fit backend.read_uss: not a parameter calibration can fit' "${seed000[@]}" --out x.toml --fit backend.read_uss -q
usage "--holdout every run" "--holdout 'virtio' matches every run" "${seed000[@]}" --out x.toml --holdout virtio -q
usage "an unknown option" 'unrecognised|unknown' "${seed000[@]}" --out x.toml --bogus
check "no FIT.toml from bad usage" test ! -e x.toml

echo "calibrate_end_to_end: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
