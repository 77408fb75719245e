#!/usr/bin/env bash
# Runs one libFuzzer target for a while on a scratch copy of its corpus (the committed corpus is
# never written). Exit 0: no crash; 1: a crash, leak, timeout or out-of-memory, whose input is
# kept and printed. Used by CTest (label fuzz) and scripts/fuzz.
#   run_fuzz_target.sh BINARY CORPUS_DIR [SECONDS] [ARTIFACT_DIR]
set -uo pipefail
binary=$1 corpus=$2 seconds=${3:-60}
name=$(basename "$binary")
artifacts=${4:-$PWD/fuzz-artifacts/$name}
[ -x "$binary" ] || { echo "run_fuzz_target: no fuzz target $binary" >&2; exit 2; }
[ -d "$corpus" ] || { echo "run_fuzz_target: no corpus directory $corpus" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vqsim-fuzz-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/tmp" "$artifacts"
cp -R "$corpus/." "$work/corpus/"

# -max_len: inputs up to 64 KiB (the real files are smaller); -timeout: one input over 10 s is a
# hang; -rss_limit_mb: 2 GiB is a memory blow-up. The targets' scratch files go under $work/tmp.
TMPDIR=$work/tmp "$binary" "$work/corpus" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 >"$work/log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  tail -n 60 "$work/log" >&2
  echo "run_fuzz_target: $name FAILED (exit $rc); the input that failed:" >&2
  found=0
  for f in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/slow-unit-*; do
    [ -f "$f" ] || continue
    found=1
    echo "  $f ($(wc -c <"$f") bytes); reproduce: $binary $f" >&2
  done
  [ $found -eq 1 ] || echo "  (no artifact written; see the log above)" >&2
  exit 1
fi
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|cov: .* ft: ' "$work/log" | tail -n 4
echo "run_fuzz_target: $name: no crash in ${seconds} s"
