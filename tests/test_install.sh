#!/usr/bin/env bash
# `cmake --install` to a temporary prefix, then the installed vqsim used as a user outside the
# source tree would: a run of the installed example by name from /, the man pages, the bash
# completion of `vqsim run default --set host.`, and no trace of the source tree in the binary.
# usage: test_install.sh CMAKE BUILD_DIR SOURCE_DIR
set -uo pipefail
cmake=$1
build=$(cd "$2" && pwd)  # absolute: the checks below run from other directories
src=$(cd "$3" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"

prefix=$tmp/prefix
if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  echo "FAIL: cmake --install $build --prefix $prefix" >&2
  exit 1
fi
vqsim=$prefix/bin/vqsim
check "the binary is installed in bin/" test -x "$vqsim"
check "the scenarios are installed in share/vqsim/scenarios" test -f "$prefix/share/vqsim/scenarios/default.toml"
check "... with calibrated/, engine/ and sweeps/" test -f "$prefix/share/vqsim/scenarios/calibrated/seed000.toml" -a \
  -f "$prefix/share/vqsim/scenarios/engine/tandem.toml" -a -f "$prefix/share/vqsim/scenarios/sweeps/blk-vs-scsi.toml"
check "the docs are installed in share/doc/vqsim" test -f "$prefix/share/doc/vqsim/README.md" -a \
  -f "$prefix/share/doc/vqsim/docs/scenario.md"

# The installed binary from another directory, on the installed example by name.
short=(--set workload.ios=2000 --set run.replications=2 --threads 2)
cd /
check "vqsim run default (a bare name) succeeds from /" status_is 0 "$vqsim" run default "${short[@]}"
check "... on the installed scenario" grep -q "run $prefix/share/vqsim/scenarios/default.toml" "$tmp/out"
check "... with its results" grep -q "Little's law: .*: ok" "$tmp/out"
check "a calibrated example by name (calibrated/seed000) runs" status_is 0 "$vqsim" run calibrated/seed000 "${short[@]}" --draws 0
check "solve takes a name too" status_is 0 "$vqsim" solve seed004-vm
check "an unknown name is bad input (2)" status_is 2 "$vqsim" run defualt
check "... with a suggestion and the names there are" grep -q "did you mean 'default'.*: calibrated/seed000, .*default, " "$tmp/err"
check "a missing path is still reported as a missing file" status_is 2 "$vqsim" run "$tmp/none.toml"
check "... by the loader" grep -q "cannot read: no such file" "$tmp/err"
mkdir -p "$tmp/cwd" && printf 'description = "a local file named like an example"\n' >"$tmp/cwd/default"
check "a file in the current directory comes before the installed name" \
  bash -c "cd '$tmp/cwd' && '$vqsim' solve default --format json | grep -q '\"scenario\": \"default\"'"
cd "$tmp"

# What the completion asks vqsim: the keys, and the values of one.
check "keys --names lists every key of vqsim keys" bash -c "[ \"\$('$vqsim' keys --names)\" = \"\$('$vqsim' keys | cut -d' ' -f1)\" ]"
check "keys --values host.cache lists the cache modes" bash -c "'$vqsim' keys --values host.cache | grep -qx writeback"
check "keys --values of a numeric key prints nothing" bash -c "[ -z \"\$('$vqsim' keys --values host.iothreads)\" ]"
check "keys --values of an unknown key is bad usage (2)" status_is 2 "$vqsim" keys --values host.aoi
check "... with a suggestion" grep -q "did you mean 'host.aio'" "$tmp/err"

# Man pages: one for vqsim and one per command its --help lists.
man1=$prefix/share/man/man1
check "vqsim.1 is installed" test -s "$man1/vqsim.1"
commands=$("$vqsim" --help | sed -n '/^commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p')
check "vqsim --help lists commands" test -n "$commands"
for c in $commands; do check "vqsim-$c.1 is installed" test -s "$man1/vqsim-$c.1"; done
if command -v man >/dev/null; then
  render=(man -l "$man1/vqsim-run.1")
elif command -v groff >/dev/null; then
  render=(groff -man -Tutf8 "$man1/vqsim-run.1")
else
  render=()
  echo "note: neither man nor groff is installed; the pages were not rendered" >&2
fi
if [ ${#render[@]} -gt 0 ]; then
  check "vqsim-run.1 renders" bash -c "MANWIDTH=100 LC_ALL=C.UTF-8 ${render[*]} >'$tmp/run.txt' 2>'$tmp/man.err' && ! grep -q warning '$tmp/man.err'"
  check "... with a synopsis and the options from --help" bash -c "grep -q SYNOPSIS '$tmp/run.txt' && grep -q -- '--set arg' '$tmp/run.txt' && grep -q -- '--allow-long-runs' '$tmp/run.txt'"
fi

# bash completion: the installed file, driven as readline would (COMP_LINE, COMP_WORDS split at
# blanks and at = as bash splits them).
completion=$prefix/share/bash-completion/completions/vqsim
check "the bash completion is installed" test -s "$completion"
complete_line() {  # complete_line LINE: prints COMPREPLY, one per line
  bash --norc --noprofile -c '
    source "$1"
    COMP_LINE=$2 COMP_POINT=${#2}
    read -ra COMP_WORDS <<<"$(sed -E "s/([=:])/ \1 /g" <<<"$2")"
    [[ $2 =~ [[:space:]]$ ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _vqsim
    printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$1"
}
complete_line "$vqsim run default --set host." >"$tmp/keys"
check "completing --set host. offers host.* keys" grep -qx 'host.iothreads=' "$tmp/keys"
check "... and only host.* keys" bash -c "! grep -qv '^host\.' '$tmp/keys'"
complete_line "$vqsim run default --set host.aio=" >"$tmp/values"
check "completing --set host.aio= offers its values" bash -c "grep -qx native '$tmp/values' && grep -qx io_uring '$tmp/values'"
complete_line "$vqsim " >"$tmp/commands"
check "completing the command offers run and keys" bash -c "grep -qx run '$tmp/commands' && grep -qx keys '$tmp/commands'"
complete_line "$vqsim run def" >"$tmp/names"
check "completing a scenario offers the installed names" grep -qx default "$tmp/names"
complete_line "$vqsim run default --format " >"$tmp/formats"
check "completing --format offers the formats --help lists" bash -c "grep -qx fio-json '$tmp/formats'"
if command -v zsh >/dev/null; then
  check "the zsh completion is installed and parses" zsh -n "$prefix"/share/zsh/*/_vqsim
fi

# Nothing of the source tree in the binary. Sanitizer builds embed the source file names for
# their reports, and debug information names the build directory: those are not checked.
if grep -q '^VQSIM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "note: sanitizer build: its binary names source files for ASan/UBSan reports; the source-path check is skipped" >&2
else
  binary=$vqsim
  if readelf -S "$vqsim" 2>/dev/null | grep -q '\.debug_info'; then
    strip --strip-debug -o "$tmp/vqsim.nodebug" "$vqsim" && binary=$tmp/vqsim.nodebug
    echo "note: the binary has debug information; checked without it" >&2
  fi
  found=$(grep -c -a -F "$src" "$binary")
  check "the binary holds no trace of the source tree ($src): $found" test "$found" -eq 0
fi

echo "install: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
