# Shared by the shell tests (source it after setting $tmp): check and status_is count what
# passes and fails in $passes and $fails.
fails=0
passes=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what" >&2; fails=$((fails + 1)); fi
}
status_is() {  # status_is EXPECTED COMMAND...: the command must exit with EXPECTED ($tmp/out, $tmp/err hold its output)
  local want=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
