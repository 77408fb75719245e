#!/usr/bin/env bash
# The bad-input matrix (issue "Robustness", items 3 and 6): every command that reads a file, fed
# every kind of bad file, answers exit 2 with exactly one stderr line "vqsim: FILE[:LINE]: ..."
# that names the file and says what was expected: never a stack trace ("terminate called",
# "Aborted"), never a hang (each call runs under `timeout 20`), never nan/inf on stdout.
# Then the run-size limits (a billion I/Os, a runtime of 1e6 s, an open loop far beyond
# capacity) and nan/inf on the normal outputs.
#
# Decisions documented here:
# - An empty (or whitespace-only) scenario, sweep spec or manifest is an error, although every
#   scenario key has a default: a zero-byte file is a failed write far more often than a request
#   for the defaults (write a description = "..." line for those).
# - A TOML file over 64 MiB or with a line over 1 MiB is refused before parsing (a 100 MB
#   description would otherwise be parsed and printed back).
# - workload.bs (and bs_write) must be a multiple of 512 where the scenario or --set names it:
#   fio opens the disk with O_DIRECT and the kernel refuses other sizes.
# - A fio output of a failed run (error=5, no I/O) is still a valid fio output: `import` reads
#   it (exit 0) and `check` flags it as implausible (exit 3, an error finding).
# - An open loop beyond capacity is a valid run (exit 0) with a warning on stderr
#   ("vqsim: warning: open loop beyond capacity: ...") and in JSON ("warnings"); `solve`
#   prints the same words.
# - More than 2e8 simulated I/Os (or open-loop arrivals) per replication, or 2e9 in all, is
#   refused (exit 2) unless `vqsim run --allow-long-runs`.
#
# usage: test_bad_input.sh VQSIM SOURCE_DIR
set -u
vqsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run_case NAME EXPECTED_RC MUST_MATCH(grep -E on stderr) [LINES] -- vqsim ARGS...
# Checks: exit status, no timeout, one stderr line per error, each starting "vqsim: " (when the
# expected status is 2: LINES lines, 1 unless the case says more), no crash markers, the
# message matches, no nan/inf word on stdout.
run_case() {
  local name=$1 want=$2 pattern=$3 want_lines=1
  shift 3
  if [ "$1" != "--" ]; then
    want_lines=$1
    shift
  fi
  shift
  checks=$((checks + 1))
  timeout 20 "$vqsim" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq 124 ]; then
    fail "$name: timed out (vqsim $*)"
    return
  fi
  if [ $rc -ne "$want" ]; then
    fail "$name: exit $rc, expected $want (vqsim $*); stderr: $(head -c 300 "$tmp/err")"
    return
  fi
  if grep -qiE 'terminate called|aborted|what\(\)|stack|segmentation|sanitizer' "$tmp/err"; then
    fail "$name: crash marker on stderr: $(head -c 300 "$tmp/err")"
  fi
  if [ "$want" -eq 2 ]; then
    local lines prefixed
    lines=$(wc -l <"$tmp/err")
    prefixed=$(grep -c '^vqsim: ' "$tmp/err")
    if [ "$lines" -ne "$want_lines" ] || [ "$prefixed" -ne "$lines" ]; then
      fail "$name: expected $want_lines stderr line(s) 'vqsim: ...' (one per error), got $lines: $(head -c 300 "$tmp/err")"
    fi
    if grep -q '^vqsim: error: ' "$tmp/err"; then fail "$name: an internal error, not an input message: $(cat "$tmp/err")"; fi
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/err"; then
    fail "$name: stderr does not match /$pattern/: $(head -c 300 "$tmp/err")"
  fi
  if grep -qiwE 'nan|-nan|inf|-inf|infinity' "$tmp/out"; then
    fail "$name: nan/inf on stdout: $(grep -oiwE '.{0,40}(nan|inf|infinity).{0,10}' "$tmp/out" | head -2)"
  fi
}

# ---------------------------------------------------------------- inputs
cd "$tmp" || exit 1
mkdir adir
: >empty.toml
printf '  \n\n' >blank.toml
head -c 4096 /dev/urandom >garbage.bin
printf '\0\1\2\3binary' >>garbage.bin
# Truncated in the middle of a string value (line 13 of default.toml: rw = "randread").
trunc_line=$(grep -m1 -n 'rw = "randread"' "$src/scenarios/default.toml" | cut -d: -f1)
[ -n "$trunc_line" ] || fail "default.toml changed: no rw line"
awk '/rw = "randread"/ { printf "rw = \"rand"; exit } { print }' "$src/scenarios/default.toml" >trunc.toml
# A 100 MB single line (a TOML string and plain text).
{ printf 'description = "'; head -c 100000000 /dev/zero | tr '\0' 'a'; printf '"\n'; } >bigline.toml
{ head -c 100000000 /dev/zero | tr '\0' 'a'; echo; } >bigline.txt
# Invalid UTF-8 inside a TOML string, and inside a fio normal-text output (a job name).
printf '[workload]\nrw = "\xff\xfe"\n' >badutf.toml
sed '1,5s/\(^[A-Za-z0-9_-]*\): (groupid/\1\xff\xfe: (groupid/' "$src/calibration/data/seeds/000-virtio-blk.fio.txt" >badutf.fio.txt
printf '[workload]\nfoo = 1\n' >unknown.toml
printf '[workload]\niodepth = "deep"\n' >wrongtype.toml
printf '[workload]\nbs = 1000\n' >bs1000.toml
printf '[workload]\niodepth = 0\n' >iodepth0.toml
printf '[host]\naio = "native"\ncache = "writeback"\n' >contra.toml
head -c 300 "$src/tests/data/fio/mixed.json.out" >trunc.json
printf '{ "fio version": "fio-3.33", "jobs": [ {"jobname": "x", "read": {"iops": "many"} } ] }\n' >wrongtype.json
# A fio JSON of a failed run: error 5 (EIO) and no I/O done. fio writes such a document.
python3 - <<'EOF' >failed.json
import json
zero = {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0, "short_ios": 0, "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0}
job = {"jobname": "failed", "groupid": 0, "error": 5, "eta": 0, "elapsed": 1,
       "job options": {"rw": "randread", "bs": "4k", "ioengine": "libaio", "iodepth": "32", "direct": "1"},
       "read": zero, "write": zero, "trim": zero, "sync": {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}},
       "job_runtime": 0, "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 2, "majf": 0, "minf": 10,
       "iodepth_level": {"1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}}
print(json.dumps({"fio version": "fio-3.33", "timestamp": 1700000000, "time": "Tue Nov 14 22:13:20 2023",
                  "global options": {}, "jobs": [job]}, indent=2))
EOF
for key in workload.iodepth workload.bs backend.latency_us workload.rate_iops run.replications workload.ios; do
  for v in -1 0 1e300 nan inf -inf; do
    printf '[%s]\n%s = %s\n' "${key%%.*}" "${key#*.}" "$v" >"num-$key-$v.toml"
  done
done
# A sweep spec over a bad base scenario is a sweep error that names the base; a bad spec value.
printf 'scenario = "%s"\nios = 2000\nreplications = 2\n[[axis]]\nkey = "workload.iodepth"\nvalues = [1, 2]\n' "$tmp/bs1000.toml" >sweep-badbase.toml
printf 'scenario = "%s"\nios = nan\n[[axis]]\nkey = "workload.iodepth"\nvalues = [1, 2]\n' "$src/scenarios/default.toml" >sweep-nan.toml
# A manifest (vqsim check) with a wrong type and a non-finite number.
printf '[[run]]\nname = "x"\nmeasured = { "read.iops" = "many" }\n' >manifest-wrongtype.toml
printf '[[run]]\nname = "x"\nmeasured = { "read.iops" = nan }\n' >manifest-nan.toml

# ---------------------------------------------------------------- the matrix
# The scenario commands: run, solve, graph, plan (all load one I/O-path scenario).
plan_args=(--maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2000')
scenario_cmd() {  # scenario_cmd COMMAND FILE -> the argument list
  case $1 in
    run) echo "run $2 --replications 2" ;;
    plan) echo "plan $2" ;;
    *) echo "$1 $2" ;;
  esac
}
for cmd in run solve graph plan; do
  extra=()
  [ $cmd = plan ] && extra=("${plan_args[@]}")
  sc() { run_case "$cmd $1" 2 "$2" -- $(scenario_cmd $cmd "$3") "${extra[@]}"; }
  sc missing '/nonexistent/x\.toml: cannot read: no such file; expected a scenario' /nonexistent/x.toml
  sc directory 'adir: cannot read: is a directory; expected a scenario' adir
  sc empty 'empty\.toml: empty file; expected a scenario' empty.toml
  sc blank 'blank\.toml: empty file; expected a scenario' blank.toml
  sc garbage 'garbage\.bin:[0-9]+: .*expected a scenario' garbage.bin
  sc truncated "trunc\\.toml:$trunc_line:[0-9]+: not valid TOML: .*expected a scenario" trunc.toml
  sc 100MB-line 'bigline\.toml:1: a line of more than 1048576 bytes; expected a scenario' bigline.toml
  sc invalid-utf8 'badutf\.toml:2:[0-9]+: not valid TOML: .*utf-8.*expected a scenario' badutf.toml
  sc unknown-key "unknown\.toml:2: workload\.foo: unknown key" unknown.toml
  sc wrong-type 'wrongtype\.toml:2: workload\.iodepth: expected a whole number, got "deep"' wrongtype.toml
  sc iodepth-0 'iodepth0\.toml:2: workload\.iodepth: value 0 is out of range \[1, 65536\]' iodepth0.toml
  sc bs-1000 'bs1000\.toml:2: workload\.bs: 1000 bytes is not a multiple of 512 \(the sector size; fio rejects it for direct I/O\)' bs1000.toml
  sc native+writeback 'contra\.toml:2: host\.aio: aio=native requires cache\.direct=on' contra.toml
  for key in workload.iodepth workload.bs backend.latency_us workload.rate_iops run.replications workload.ios; do
    for v in -1 0 1e300 nan inf -inf; do
      f=num-$key-$v.toml
      fre=${f//./\\.} kre=${key//./\\.}
      case $v in
        nan | inf | -inf) want="$fre:2: $kre: expected a finite number" ;;
        *) want="$fre:2: $kre: value .* is out of range" ;;
      esac
      # Zero is a valid value of latency_us (a null device) and rate_iops (closed loop).
      if [ "$v" = 0 ] && { [ $key = backend.latency_us ] || [ $key = workload.rate_iops ]; }; then
        [ $cmd = solve ] && run_case "$cmd $key=0 (valid)" 0 "" -- solve "$f"
        continue
      fi
      # A number of I/Os or replications far too large is a run-size error (run only),
      # checked after the scenario is valid: 1e300 is out of the key's range first.
      sc "$key=$v" "$want" "$f"
    done
  done
done

# The same through --set (no line: "(from --set)").
run_case "run --set iodepth=nan" 2 '\(from --set\): workload\.iodepth: expected a finite number' -- run "$src/scenarios/default.toml" --set workload.iodepth=nan
run_case "solve --set bs=1000" 2 '\(from --set\): workload\.bs: 1000 bytes is not a multiple of 512' -- solve "$src/scenarios/default.toml" --set workload.bs=1000
run_case "run --ios -1" 2 'workload\.ios: value -1 is out of range' -- run "$src/scenarios/default.toml" --ios -1

# [[vm]] and [[backend]] tables (issue 19): file, line, key and what to write instead.
printf '[[backend]]\nname = "nvme"\n\n[[vm]]\nname = "web"\nbackend = "nvme0"\n' > vm-backend.toml
printf '[[vm]]\nname = "web"\n\n[[vm]]\nname = "web"\n' > vm-twice.toml
printf '[[vm]]\nname = "web"\ncount = 0\n' > vm-count0.toml
printf '[[vm]]\nname = "web"\ncount = -3\n' > vm-count-neg.toml
printf '[backend]\nkind = "nvme"\n\n[[backend]]\nname = "a"\n\n[[vm]]\nname = "web"\n' > vm-both-backends.toml
for cmd in run solve; do
  run_case "$cmd disk names no backend" 2 'vm-backend\.toml:6: vm\.web\.backend: no \[\[backend\]\] named "nvme0" \(did you mean .nvme.\?\)' -- $cmd vm-backend.toml
  run_case "$cmd two VMs with one name" 2 'vm-twice\.toml:5: vm\.name: two \[\[vm\]\] tables named "web" \(lines 2 and 5\)' -- $cmd vm-twice.toml
  run_case "$cmd count = 0" 2 'vm-count0\.toml:3: vm\.web\.count: count = 0: .*write count = 1 or more' -- $cmd vm-count0.toml
  run_case "$cmd count < 0" 2 'vm-count-neg\.toml:3: vm\.web\.count: count = -3' -- $cmd vm-count-neg.toml
  run_case "$cmd [backend] and [[backend]]" 2 'vm-both-backends\.toml:4: backend: both a \[backend\] table \(line 1\) and \[\[backend\]\] tables' -- $cmd vm-both-backends.toml
  run_case "$cmd --set vm.<name> naming no VM" 2 '\(from --set\): vm\.bakup\.workload\.iodepth: names no VM: .*did you mean .backup.' -- $cmd "$src/scenarios/consolidation/noisy-neighbour.toml" --set vm.bakup.workload.iodepth=4
done
run_case "solve on two [[vm]] profiles, one open loop and one closed, says the MVA does not solve the mix" 2 'noisy-neighbour\.toml: some VM profiles run open loop .*use vqsim run' -- solve "$src/scenarios/consolidation/noisy-neighbour.toml" --set vm.db.workload.rate_iops=1000

# The fio readers: import and check.
for cmd in import check; do
  run_case "$cmd missing" 2 '/nonexistent/x\.json: cannot read: no such file' -- $cmd /nonexistent/x.json
  run_case "$cmd directory" 2 'adir: cannot read: is a directory' -- $cmd adir
  run_case "$cmd empty" 2 'empty\.toml: ' -- $cmd empty.toml
  run_case "$cmd garbage" 2 'garbage\.bin:[0-9]+: binary data' -- $cmd garbage.bin
  run_case "$cmd truncated JSON" 2 'trunc\.json:[0-9]+: invalid JSON: truncated' -- $cmd trunc.json
  run_case "$cmd 100MB line" 2 'bigline\.txt:1: ' -- $cmd bigline.txt
  run_case "$cmd wrong type" 2 'wrongtype\.json:[0-9]+: .*iops' -- $cmd wrongtype.json
  run_case "$cmd unknown TOML" 2 'unknown\.toml:' -- $cmd unknown.toml
done
# Invalid UTF-8 in a job name of a real fio text: the bytes are data, not structure; the file
# is still the same fio output (exit 0).
run_case "import invalid-utf8 fio text" 0 '' -- import badutf.fio.txt
run_case "check invalid-utf8 fio text" 0 '' -- check badutf.fio.txt
run_case "check manifest wrong type" 2 'manifest-wrongtype\.toml:3: ' -- check manifest-wrongtype.toml
run_case "check manifest nan" 2 'manifest-nan\.toml:3: .*finite' -- check manifest-nan.toml
# The failed run: valid fio (import 0), implausible (check 3).
run_case "import failed run" 0 '' -- import failed.json
run_case "check failed run" 3 '' -- check failed.json
grep -qiE 'error' "$tmp/out" || fail "check failed run: no error finding in: $(head -c 300 "$tmp/out")"

# sweep: the spec file itself, then a spec over a bad base and a bad spec value.
for row in "missing:/nonexistent/x.toml:/nonexistent/x\.toml: cannot read: no such file; expected a sweep spec" \
  "directory:adir:adir: cannot read: is a directory; expected a sweep spec" \
  "empty:empty.toml:empty\.toml: empty file; expected a sweep spec" \
  "garbage:garbage.bin:garbage\.bin:[0-9]+: .*expected a sweep spec" \
  "truncated:trunc.toml:trunc\.toml:$trunc_line:[0-9]+: not valid TOML" \
  "100MB-line:bigline.toml:bigline\.toml:1: a line of more than" \
  "invalid-utf8:badutf.toml:badutf\.toml:2:[0-9]+: not valid TOML" \
  "unknown-key:unknown.toml:unknown\.toml:1: workload: unknown key" \
  "bad-base:sweep-badbase.toml:bs1000\.toml:2: workload\.bs: 1000 bytes is not a multiple of 512" \
  "nan:sweep-nan.toml:sweep-nan\.toml:2: ios: "; do
  IFS=: read -r name file pattern <<<"$row"
  run_case "sweep $name" 2 "$pattern" -- sweep "$file" --out "$tmp/sweep-out"
done

# calibrate: the manifest (--data), then the base scenario (--scenario). Each names the file.
cal_ok='name = "x"\nmeasured = { "read.iops" = 100000, "read.lat_mean_us" = 300 }\nset = {}\n'
printf "[[run]]\n$cal_ok" >cal-ok.toml
printf "[[run]]\n${cal_ok}sett = { \"workload.iodepth\" = 4 }\n" >cal-unknown.toml
printf "[[run]]\n${cal_ok}weight = \"x\"\n" >cal-weight-string.toml
printf "[[run]]\n${cal_ok}weight = nan\n" >cal-weight-nan.toml
printf "[[run]]\n${cal_ok}weight = -1\n" >cal-weight-negative.toml
printf "[[run]]\n${cal_ok}weight = 0\n" >cal-weight-zero.toml
printf '[[run]]\nname = "x"\nmeasured = { "read.iops" = 100000 }\nset = { "workload.iodepth" = 4 }\n[[run]]\nname = "tru' >cal-trunc.toml
printf '[[run]]\nname = "x"\nfile = "garbage.bin"\nset = {}\n' >cal-badfio.toml
cal() {  # cal NAME PATTERN MANIFEST [BASE]
  run_case "calibrate $1" 2 "$2" -- calibrate --scenario "${4:-$src/scenarios/default.toml}" --data "$3" --out "$tmp/cal-fit.toml" -q
}
cal missing '/nonexistent/x\.toml: no such file' /nonexistent/x.toml
cal directory 'adir: is a directory' adir
cal empty 'empty\.toml: no \[\[run\]\] table' empty.toml
cal blank 'blank\.toml: no \[\[run\]\] table' blank.toml
cal garbage 'garbage\.bin:[0-9]+: not a valid manifest' garbage.bin
cal truncated 'cal-trunc\.toml:[0-9]+: not a valid manifest \(TOML\)' cal-trunc.toml
cal 100MB-line 'bigline\.toml:1: ' bigline.toml
cal invalid-utf8 'badutf\.toml:2: not a valid manifest' badutf.toml
cal scenario-file 'default\.toml:[0-9]+: unknown top-level key' "$src/scenarios/default.toml"
cal unknown-run-key "cal-unknown\.toml:5: run 1: unknown key 'sett' \(did you mean 'set'\?\)" cal-unknown.toml
cal weight-string "cal-weight-string\.toml:5: run 'x': weight must be a number > 0" cal-weight-string.toml
cal weight-nan "cal-weight-nan\.toml:5: run 'x': weight must be a number > 0" cal-weight-nan.toml
cal weight-negative "cal-weight-negative\.toml:5: run 'x': weight must be a number > 0" cal-weight-negative.toml
cal weight-zero "cal-weight-zero\.toml:5: run 'x': weight must be a number > 0" cal-weight-zero.toml
cal garbage-fio-file "cal-badfio\.toml:3: run 'x': .*garbage\.bin" cal-badfio.toml
cal measured-nan 'manifest-nan\.toml:3: .*finite' manifest-nan.toml
cal base-missing '/nonexistent/base\.toml: no such file' cal-ok.toml /nonexistent/base.toml
cal base-directory 'adir: is a directory' cal-ok.toml adir
cal base-invalid "cal-ok\.toml:1: run 'x': its setup does not make a valid scenario on .*bs1000\.toml: .*bs1000\.toml:2: workload\.bs: 1000 bytes" cal-ok.toml bs1000.toml
cal base-garbage "cal-ok\.toml:1: run 'x': .*garbage\.bin" cal-ok.toml garbage.bin
run_case "calibrate --loss unknown" 2 "--loss must be cauchy or squares \(did you mean 'cauchy'\?\)" -- calibrate --scenario "$src/scenarios/default.toml" --data cal-ok.toml --out "$tmp/cal-fit.toml" --loss cauchi -q
[ -e "$tmp/cal-fit.toml" ] && fail "calibrate: a FIT.toml was written from bad input"

# keys and bench take no file: bad options.
run_case "keys bad option" 2 'unrecognised option|unknown option' -- keys --bogus
run_case "bench bad kind" 2 "unknown benchmark 'nosuch'; expected tandem, queue or e2e" -- bench nosuch
run_case "bench e2e --ios -1" 2 '' -- bench e2e --ios -1

# ---------------------------------------------------------------- resource bounds (item 6)
def=$src/scenarios/default.toml
run_case "run a billion I/Os" 2 'workload\.ios: 1e\+09 I/Os per replication would take about .*; the limit is 200000000 \(use --allow-long-runs to lift it\)' -- run "$def" --set workload.ios=1000000000
run_case "run --ios 1e9" 2 'workload\.ios: 1e\+09 I/Os per replication' -- run "$def" --ios 1000000000
run_case "run runtime 1e6 s" 2 'workload\.runtime: 1e\+06 s at about [0-9]+ IOPS \(MVA\) .*the limit is 200000000 I/Os per replication' -- run "$def" --set workload.runtime=1e6
run_case "run 10000 replications x 1e6" 2 'run\.replications: 10000 replications .*the limit is 2000000000 in all' -- run "$def" --set run.replications=10000 --ios 1000000
run_case "run open loop at 1e9 IOPS" 2 'workload\.rate_iops: 1000000000 IOPS offered .*arrivals per replication' -- run "$def" --set workload.rate_iops=1e9
# Beyond capacity but small: a valid run with a warning on stderr and in JSON; memory stays flat
# (the backlog is a counter).
checks=$((checks + 1))
timeout 20 "$vqsim" run "$def" --set workload.rate_iops=1e7 --ios 20000 --replications 2 --format json >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "open loop 1e7: exit $rc: $(head -c 300 "$tmp/err")"
grep -q '^vqsim: warning: open loop beyond capacity: offered 10000000 IOPS' "$tmp/err" || fail "open loop 1e7: no warning on stderr: $(cat "$tmp/err")"
python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['warnings']; assert len(w)==1 and w[0].startswith('open loop beyond capacity'), w" "$tmp/out" 2>/dev/null ||
  fail "open loop 1e7: no warning in JSON"
checks=$((checks + 1))
timeout 20 "$vqsim" solve "$def" --set workload.rate_iops=1e7 >"$tmp/out" 2>"$tmp/err" || fail "solve open loop 1e7: exit $?"
grep -q '^open loop beyond capacity: offered 10000000 IOPS' "$tmp/out" || fail "solve open loop 1e7: no overload line"
grep -q '^vqsim: warning: open loop beyond capacity: offered 10000000 IOPS' "$tmp/err" || fail "solve open loop 1e7: no warning on stderr"
grep -qiwE 'nan|-nan|inf' "$tmp/out" && fail "solve open loop 1e7: nan/inf on stdout: $(grep -iwE 'nan|inf' "$tmp/out" | head -2)"
checks=$((checks + 1))
timeout 20 "$vqsim" solve "$def" --set workload.rate_iops=1e7 --format json >"$tmp/out" 2>/dev/null || fail "solve json open loop: exit $?"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['saturated'] and j['warnings'], j" "$tmp/out" 2>/dev/null || fail "solve json open loop: no warning"
# A closed loop far beyond exact MVA's work limit falls back to an approximation, not an error.
run_case "solve 4096 jobs x iodepth 65536" 0 '' -- solve "$def" --set workload.numjobs=4096 --set guest.vcpus=4096 --set workload.iodepth=65536

# ---------------------------------------------------------------- no nan/inf in normal outputs
run_case "run default text" 0 '' -- run "$def" --ios 5000 --replications 2
run_case "run default json" 0 '' -- run "$def" --ios 5000 --replications 2 --format json
run_case "run default fio-json" 0 '' -- run "$def" --ios 5000 --replications 2 --format fio-json
run_case "run default --compare-mva" 0 '' -- run "$def" --ios 5000 --replications 2 --compare-mva
run_case "solve default" 0 '' -- solve "$def"
run_case "solve default json" 0 '' -- solve "$def" --format json
run_case "graph default" 0 '' -- graph "$def"
run_case "check seed manifest" 0 '' -- check "$src/calibration/data/seeds/004-epyc-vm-vs-baremetal.toml"
run_case "check seed fio text" 0 '' -- check "$src/calibration/data/seeds/000-virtio-blk.fio.txt"
run_case "import seed fio text" 0 '' -- import "$src/calibration/data/seeds/000-virtio-blk.fio.txt" --format text
run_case "run null backend (zero latency)" 0 '' -- run "$def" --set backend.kind=null --ios 5000 --replications 2

# issue 17, item 5: `check --repeats` compares every fio file given, whatever its format (real fio
# 3.33 outputs of one job in every format), and runs whose setups differ are an error naming the
# option, not "no findings".
rep="$src/tests/data/check/repeats"
run_case "check --repeats json, json+, text, terse" 0 '' -- check "$rep/rr-qd8.json" "$rep/rr-qd8.jsonplus" "$rep/rr-qd8.txt" "$rep/rr-qd8.terse" --repeats --threads 2
grep -qE '^(INFO|WARNING) spread: 4 runs: .*rr-qd8\.json.*rr-qd8\.jsonplus.*rr-qd8\.txt.*rr-qd8\.terse' "$tmp/out" || fail "check --repeats four formats: not one spread over the four files: $(grep -E '^[A-Z]+ ' "$tmp/out" | head -3)"
run_case "check --repeats QD1 vs QD32" 3 '' -- check "$rep/rr-qd1.json" "$rep/rr-qd32.json" --repeats --threads 2
grep -q '^  evidence: 2 runs given as repeats of one setup differ in iodepth (1 in .*rr-qd1\.json; 32 in .*rr-qd32\.json)' "$tmp/out" || fail "check --repeats QD1 vs QD32: no not-repeats error naming iodepth: $(head -c 400 "$tmp/out")"
run_case "check --repeats terse QD1 vs QD32" 3 '' -- check "$rep/rr-qd1.terse" "$rep/rr-qd32.terse" --repeats --threads 2
grep -q '^ERROR not-repeats: ' "$tmp/out" || fail "check --repeats terse QD1 vs QD32: no not-repeats error"
# issue 17, item 9: `check` without --device says that the physics rules were not applied, and how.
run_case "check without --device" 0 '' -- check "$rep/rr-qd8.json"
grep -q '^INFO physics-not-applied: ' "$tmp/out" && grep -q -- '--device KIND' "$tmp/out" || fail "check without --device: no physics-not-applied note: $(head -c 400 "$tmp/out")"

# ---------------------------------------------------------------- issue 17, items 1 and 2: a manifest run's set and workload
# Item 1: every key of a run's `set` must be a scenario key and every value one the scenario
# takes; each bad one is an error line of its own (manifest:line, the run, the key, "did you
# mean"), from `check` and `calibrate` alike (they printed "0 errors" and fitted). Item 2: a run
# whose fio output does not state its workload (terse: no rw, bs, iodepth, numjobs, ioengine)
# is refused by `calibrate` with the keys to add; `check` warns (exit 0). The terse fixture is
# fio 3.33's (tests/test_calibrate.cc says how it was made).
# i17_case NAME LINES PATTERN... -- vqsim ARGS: exit 2, exactly LINES stderr lines, each
# "vqsim: ...", and every PATTERN (grep -E) on a line of its own.
i17_case() {
  local name=$1 want_lines=$2
  shift 2
  local patterns=()
  while [ "$1" != "--" ]; do
    patterns+=("$1")
    shift
  done
  shift
  run_case "$name" 2 '' "$want_lines" -- "$@"
  local p
  for p in "${patterns[@]}"; do
    [ "$(grep -cE -- "$p" "$tmp/err")" -eq 1 ] || fail "$name: not exactly one stderr line matches /$p/: $(cat "$tmp/err")"
  done
}
i17_ok='name = "x"\nmeasured = { "read.iops" = 100000, "read.lat_mean_us" = 300 }\n'
printf "[[run]]\n${i17_ok}set = { \"host.iothreads\" = 1, \"guest.drvier\" = \"virtio-scsi\" }\n" >i17-typo.toml
printf "[[run]]\n${i17_ok}set = { \"workload.iodepth\" = 0 }\n" >i17-value.toml
printf "[[run]]\n${i17_ok}set = { \"host.iothread\" = 1, \"guest.drvier\" = \"virtio-scsi\" }\n[[run]]\nname = \"y\"\nmeasured = { \"read.iops\" = 1000 }\nset = { \"workload.iodepth\" = \"deep\" }\n" >i17-many.toml
printf '[[run]]\nname = "seq1m"\nfile = "%s"\nset = { "host.iothreads" = 1 }\n' "$src/tests/data/calibrate/seq1m-read.terse3.out" >i17-terse.toml
for cmd in check calibrate; do
  args=()
  [ $cmd = calibrate ] && args=(--scenario "$src/scenarios/default.toml" --out "$tmp/cal-fit.toml" -q --data)
  run_case "$cmd set typo" 2 "i17-typo\\.toml:4: run 'x': set guest\\.drvier: unknown key \\(did you mean 'guest\\.driver'\\?\\)" -- $cmd "${args[@]}" i17-typo.toml
  run_case "$cmd set bad value" 2 "i17-value\\.toml:4: run 'x': set workload\\.iodepth: value 0 is out of range \\[1, 65536\\]" -- $cmd "${args[@]}" i17-value.toml
  i17_case "$cmd set: every bad key" 3 "^vqsim: i17-many\\.toml:4: run 'x': set guest\\.drvier: unknown key \\(did you mean 'guest\\.driver'\\?\\)" \
    "^vqsim: i17-many\\.toml:4: run 'x': set host\\.iothread: unknown key \\(did you mean 'host\\.iothreads'\\?\\)" \
    "^vqsim: i17-many\\.toml:8: run 'y': set workload\\.iodepth: expected a whole number, got \"deep\"" -- $cmd "${args[@]}" i17-many.toml
done
run_case "calibrate terse without workload" 2 "i17-terse\\.toml:1: run 'seq1m': its fio output is terse, which does not record rw, bs, iodepth, numjobs or ioengine.*: add \"workload\\.rw\", \"workload\\.bs\", \"workload\\.iodepth\", \"workload\\.numjobs\", \"workload\\.ioengine\" to this run's set .*base_workload = true" -- calibrate --scenario "$src/scenarios/default.toml" --data i17-terse.toml --out "$tmp/cal-fit.toml" -q
run_case "check terse without workload (a warning)" 0 '' -- check i17-terse.toml
grep -q "^WARNING unstated-workload: i17-terse\\.toml: run 'seq1m'" "$tmp/out" || fail "check terse without workload: no unstated-workload warning: $(head -c 300 "$tmp/out")"
grep -q 'add "workload\.rw", "workload\.bs", "workload\.iodepth", "workload\.numjobs", "workload\.ioengine" to this run' "$tmp/out" ||
  fail "check terse without workload: the warning does not name the keys to add"
[ -e "$tmp/cal-fit.toml" ] && fail "calibrate: a FIT.toml was written from a bad set or an unstated workload"

# ---------------------------------------------------------------- issue 17, item 4: contradictions, every error of a file
# A file with three errors (an unknown key, a bad value, a contradiction) gets three lines, in
# line order, from every command that loads a scenario.
printf '[workload]\niodeth = 4\nbs = 1000\n[backend]\nkind = "hdd"\nchannels = 32\n' >three.toml
for cmd in run solve graph plan; do
  extra=()
  [ $cmd = plan ] && extra=("${plan_args[@]}")
  run_case "$cmd three errors" 2 'three\.toml:2: workload\.iodeth: unknown key' 3 -- $(scenario_cmd $cmd three.toml) "${extra[@]}"
  [ "$(sed -n 2p "$tmp/err")" = "vqsim: three.toml:3: workload.bs: 1000 bytes is not a multiple of 512 (the sector size; fio rejects it for direct I/O)" ] ||
    fail "$cmd three errors: line 2 is not the bs error: $(sed -n 2p "$tmp/err")"
  sed -n 3p "$tmp/err" | grep -q '^vqsim: three\.toml:6: backend\.channels: 32 with backend\.kind = "hdd": a hard disk has one actuator' ||
    fail "$cmd three errors: line 3 is not the channels error: $(sed -n 3p "$tmp/err")"
done
# The same through --set: the file's error, then each --set one.
run_case "run two --set errors after the file's" 2 '\(from --set\): host\.aio: "nativ" is not one of' 3 -- run unknown.toml --set host.aio=nativ --set workload.iodepth=0
printf '[backend]\nkind = "hdd"\nchannels = 32\n' >hdd32.toml
run_case "run hdd with 32 channels" 2 'hdd32\.toml:3: backend\.channels: 32 with backend\.kind = "hdd": a hard disk has one actuator .*remove backend\.channels' -- run hdd32.toml
run_case "solve md-raid1 of hdds with 4 channels" 2 'backend\.channels: 4 with backend\.kind = "md-raid1" and leg = "hdd"' -- solve "$def" --set backend.kind=md-raid1 --set backend.leg=hdd --set backend.channels=4
# psync at iodepth 32 runs at depth 1, as fio does, with a warning (stderr and JSON).
printf '[workload]\nioengine = "psync"\niodepth = 32\nios = 5000\n' >psync32.toml
run_case "run psync iodepth 32" 0 '^vqsim: warning: psync32\.toml:3: workload\.iodepth: iodepth = 32 with ioengine = "psync": .*queue depth will be capped at 1' -- run psync32.toml --replications 2
run_case "solve psync iodepth 32" 0 'vqsim: warning: .*capped at 1' -- solve psync32.toml
checks=$((checks + 1))
"$vqsim" run psync32.toml --replications 2 --format json 2>/dev/null | python3 -c "import json,sys; w=json.load(sys.stdin)['warnings']; assert len(w)==1 and 'capped at 1' in w[0], w" ||
  fail "run psync iodepth 32 --format json: no warning in JSON"
# rwmixread with a pure direction: fio ignores it; vqsim says so.
printf '[workload]\nrw = "randwrite"\nrwmixread = 70\nios = 5000\n' >mixwrite.toml
run_case "solve rwmixread with randwrite" 0 '^vqsim: warning: mixwrite\.toml:3: workload\.rwmixread: 70 has no effect with rw = "randwrite" .*write rw = "randrw"' -- solve mixwrite.toml

# ---------------------------------------------------------------- issue 17, item 11: the QEMU version drives defaults
printf '[host]\nqemu_version = "two point oh"\n' >badversion.toml
run_case "run malformed qemu_version" 2 'badversion\.toml:2: host\.qemu_version: "two point oh" is not a QEMU version; write it as .*"2\.4\.0"' -- run badversion.toml
run_case "solve io_uring on QEMU 2.4" 2 '\(from --set\): host\.aio: aio=io_uring needs QEMU 5\.0 or later' -- solve "$def" --set host.qemu_version=2.4.0 --set host.aio=io_uring
run_case "solve 2 IOThreads for one device on QEMU 8.2" 0 '^vqsim: warning: \(from --set\): host\.iothreads: 2 IOThreads for one device needs QEMU 9\.0 or later' -- solve "$def" --set host.qemu_version=8.2.0 --set host.iothreads=2

# ---------------------------------------------------------------- issue 17, item 9: a key without its section
run_case "run --set iothreads=2 (no section)" 2 "\(from --set\): iothreads: unknown key \(did you mean 'host\.iothreads'\?\)" -- run "$def" --set iothreads=2

# ---------------------------------------------------------------- issue 17, item 6: size units
# A scenario's sizes are IEC/SI (docs/scenario.md, "Sizes"): spellings fio reads otherwise
# ("4KB", "4kb": fio 4096, SI 4000; "4kib": fio 4000, IEC 4096) are refused with both readings.
printf '[workload]\nbs = "4KB"\n' >bs4KB.toml
run_case "run bs=4KB" 2 'bs4KB\.toml:2: workload\.bs: "4KB" is ambiguous: fio, with its default kb_base=1024, reads it as 4096 bytes, SI as 4000; in a scenario write "4KiB" \(or 4096\) for 4096 bytes, 4000 for 4000' -- run bs4KB.toml
run_case "run --set bs=4kb" 2 '\(from --set\): workload\.bs: "4kb" is ambiguous: fio, with its default kb_base=1024, reads it as 4096 bytes, SI as 4000' -- run "$src/scenarios/default.toml" --set 'workload.bs="4kb"'
run_case "solve --set bs=4kib" 2 '\(from --set\): workload\.bs: "4kib" is ambiguous: fio, with its default kb_base=1024, reads it as 4000 bytes, IEC as 4096; in a scenario write "4KiB"' -- solve "$src/scenarios/default.toml" --set 'workload.bs="4kib"'
run_case "run --set max_request=1mb" 2 '\(from --set\): guest\.max_request: "1mb" is ambiguous: fio, with its default kb_base=1024, reads it as 1048576 bytes, SI as 1000000' -- run "$src/scenarios/default.toml" --set 'guest.max_request="1mb"'
run_case "run --set bs=8MB (SI, whole sectors: still refused, fio reads 8388608)" 2 '\(from --set\): workload\.bs: "8MB" is 8000000 bytes in a scenario \(SI\), but fio reads it as 8388608 \(kb_base=1024\): write "8MiB" \(or 8388608\) for fio.s reading, or 8000000 for the SI size' -- run "$src/scenarios/default.toml" --set 'workload.bs="8MB"'
run_case "run --set backend.bandwidth=550MB (a rate keeps SI)" 0 '' -- run "$src/scenarios/default.toml" --set 'backend.bandwidth="550MB"' --ios 2000 --replications 2
run_case "run --set bs=4kB (SI: fio reads it as 4096)" 2 '\(from --set\): workload\.bs: "4kB" is 4000 bytes in a scenario \(SI\), but fio reads it as 4096 \(kb_base=1024\): write "4KiB" \(or 4096\)' -- run "$src/scenarios/default.toml" --set 'workload.bs="4kB"'
printf '[[run]]\nname = "x"\nmeasured = { "read.iops" = 1000 }\nset = { "workload.bs" = "4KB" }\n' >manifest-bs4KB.toml
run_case "check manifest set bs=4KB" 2 "manifest-bs4KB\.toml:4: run 'x': set workload\.bs: \"4KB\" is ambiguous: fio, with its default kb_base=1024, reads it as 4096 bytes" -- check manifest-bs4KB.toml
run_case "run bs=4KiB (IEC)" 0 '' -- run "$src/scenarios/default.toml" --set 'workload.bs="4KiB"' --ios 2000 --replications 2

# issue 17, item 8 (the rest): a mail with two fio outputs is two runs. `check` judges both, naming
# each; a manifest run naming such a file is refused (which of the two it measured is a guess).
post="$src/tests/data/fio/seed000-post.txt"
run_case "check a mail with two fio outputs" 0 '' -- check "$post"
grep -q "4 measured directions" "$tmp/out" && grep -q "(run 1 of 2)" "$tmp/out" || fail "check two-run mail: not both runs judged: $(head -c 300 "$tmp/out")"
printf '[[run]]\nname = "x"\nfile = "%s"\nset = {}\n' "$post" >manifest-two-runs.toml
run_case "check manifest file with two runs" 2 "manifest-two-runs\.toml:3: run 'x': .* holds 2 fio runs one after the other.*one \[\[run\]\] per output" -- check manifest-two-runs.toml
run_case "calibrate manifest file with two runs" 2 "holds 2 fio runs one after the other" -- calibrate --scenario "$src/scenarios/default.toml" --data manifest-two-runs.toml --out "$tmp/two.toml" -q
# issue 17, item 6 (the rest): a fio job file's bs=4KiB is 4000 bytes to fio (kb_base=1024), and
# fio with direct=1 fails on it: an error, not a prediction of a job that cannot run.
printf '[job]\nrw=randread\nbs=4KiB\ndirect=1\nioengine=libaio\niodepth=8\n' >kib.fio
printf 'workload.fio_job = "kib.fio"\n' >kib.toml
run_case "fio job bs=4KiB with direct=1" 2 "kib\.toml:1: workload\.fio_job: .*bs is 4000 bytes for reads, not a multiple of 512.*write bs=4k" -- run kib.toml --ios 1000

echo "bad_input_matrix: $checks checks, $failures failures"
[ $failures -eq 0 ]
