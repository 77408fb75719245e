#!/usr/bin/env bash
# End-to-end checks of the vqsim binary: what a user types, what comes back, exit codes.
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what" >&2; fails=$((fails + 1)); fi
}
status_is() {  # status_is EXPECTED COMMAND...
  local want=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want: $*" >&2; cat "$tmp/err" >&2; return 1; }
}

check "--help exits 0 and lists run and bench" bash -c "'$vqsim' --help | grep -q 'run' && '$vqsim' --help | grep -q 'bench'"
check "--version prints the version" bash -c "'$vqsim' --version | grep -Eq '^vqsim [0-9]+\.[0-9]+\.[0-9]+$'"
check "no command is bad usage (2)" status_is 2 "$vqsim"
check "an unknown command is bad usage (2) with a suggestion" status_is 2 "$vqsim" rnu
check "... the suggestion names run" grep -q "did you mean 'run'" "$tmp/err"
check "run without a scenario is bad usage (2)" status_is 2 "$vqsim" run
check "run with a missing file is bad input (2)" status_is 2 "$vqsim" run "$tmp/none.toml"
check "run --help exits 0" status_is 0 "$vqsim" run --help
check "an unknown --set key is bad input (2)" status_is 2 "$vqsim" run "$src/scenarios/default.toml" --set population.custmers=3
check "... naming the key and a suggestion" grep -q "did you mean 'customers'" "$tmp/err"

small=(--set run.completions=20000 --set run.replications=4)
check "run default scenario succeeds" status_is 0 "$vqsim" run "$src/scenarios/default.toml" "${small[@]}"
check "... and reports Little's law ok" grep -q "Little's law: .*: ok" "$tmp/out"
"$vqsim" run "$src/scenarios/default.toml" "${small[@]}" --threads 1 >"$tmp/t1.txt"
"$vqsim" run "$src/scenarios/default.toml" "${small[@]}" --threads 2 >"$tmp/t2.txt"
"$vqsim" run "$src/scenarios/default.toml" "${small[@]}" --threads 2 --format json >"$tmp/t2.json"
"$vqsim" run "$src/scenarios/default.toml" "${small[@]}" --threads 1 --format json >"$tmp/t1.json"
check "same seed: byte-identical text with --threads 1 and 2" cmp -s "$tmp/t1.txt" "$tmp/t2.txt"
check "same seed: byte-identical JSON with --threads 1 and 2" cmp -s "$tmp/t1.json" "$tmp/t2.json"
check "JSON output parses and carries intervals" python3 -c "import json,sys; j=json.load(open('$tmp/t1.json')); m=j['metrics']['population.throughput_per_s']; assert m['half_width_95']>0 and j['little']['ok']"
"$vqsim" run "$src/scenarios/default.toml" "${small[@]}" --seed 2 >"$tmp/s2.txt"
check "another seed gives other figures" bash -c "! cmp -s '$tmp/t1.txt' '$tmp/s2.txt'"

check "bench tandem --json reports both loops, MVA and the ratio" bash -c "'$vqsim' bench tandem --cycles 100000 --repeat 1 --json > '$tmp/b.json'"
check "... throughput within 1% of exact MVA" python3 -c "import json; j=json.load(open('$tmp/b.json')); assert abs(j['engine_throughput_rel_error_vs_mva'])<0.01, j; assert j['engine_to_hand_ratio']>0"
check "an unknown benchmark is bad usage (2)" status_is 2 "$vqsim" bench tandm

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
