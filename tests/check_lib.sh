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
wait_for() {  # wait_for SECONDS COMMAND...: poll until the command succeeds; false after SECONDS
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
catches_sigint() {  # catches_sigint PID: the process has installed its own SIGINT handler (Linux /proc)
  local mask
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null)
  [ -n "$mask" ] && (((16#$mask >> 1) & 1))  # bit n-1 stands for signal n; SIGINT is 2
}
# A background job of a non-interactive shell starts with SIGINT ignored, so a Ctrl-C test that
# signals before main() has installed its handler loses the signal and the command runs to its
# end (seen under ASan on a loaded machine, where start-up took over a second). Signal only
# once the handler is in place.
interrupt_when_ready() {  # interrupt_when_ready PID [DELAY]: SIGINT to PID DELAY s after it catches SIGINT
  wait_for 300 catches_sigint "$1" || echo "note: pid $1 never installed a SIGINT handler" >&2
  sleep "${2:-0}"
  kill -INT "$1"
}
