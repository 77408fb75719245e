# bash completion for vqsim. Everything comes from the vqsim being completed, so it cannot drift
# from it: the commands and each command's options from its --help, the scenario keys after
# --set, --vs, --maximize and --minimize from `vqsim keys --names`, the values of an enumerated
# or boolean key after KEY= from `vqsim keys --values KEY`, and, where a scenario goes, *.toml
# files and the names of the installed scenarios (`vqsim run default`).

# The installed scenario names, as vqsim resolves them (cli/data_dir.cc): the .toml files under
# <dir of the binary>/../share/vqsim/scenarios, or <dir>/share/vqsim/scenarios in a build tree.
_vqsim_scenario_names() {
  local exe dir root
  exe=$(type -P -- "$1") || return
  exe=$(readlink -f -- "$exe") || return
  dir=${exe%/*}
  for root in "$dir/../share/vqsim/scenarios" "$dir/share/vqsim/scenarios"; do
    if [[ -d $root ]]; then
      (cd "$root" && find -L . -name '*.toml' -type f 2>/dev/null) | sed -e 's|^\./||' -e 's|\.toml$||'
      return
    fi
  done
}

# The values that option $2's line in the options $1 lists: "text | json | fio-json (...)", "report on stdout:
# text | json", or "cauchy: ... | squares: ...".
_vqsim_option_values() {
  local line  # the option's line and its continuations (indented further, not an option)
  line=$(awk -v opt="$2" '
    match($0, /^ +-/) && RLENGTH <= 5 { if (found) exit; n = split($0, f, " "); for (i = 1; i <= n; i++) if (f[i] == opt) found = 1 }
    found { printf "%s ", $0 }' <<<"$1")
  line=$(sed -E 's/^ *(-[a-z] \[ )?--[a-z0-9-]+( \])?( arg)?( \(=[^)]*\))? *//' <<<"$line")
  if [[ $line =~ ^([^|]*: )?([a-z0-9-]+( \| [a-z0-9-]+)+) ]]; then
    echo "${BASH_REMATCH[2]//|/}"
  else
    grep -oE '(^|\| )[a-z0-9-]+:' <<<"$line" | tr -d '|: '
  fi
}

_vqsim() {
  local exe=${COMP_WORDS[0]/#\~/$HOME}
  type -P -- "$exe" >/dev/null || exe=vqsim
  # The words up to the cursor split at blanks only: COMP_WORDS also splits at '=' and ':'
  # (COMP_WORDBREAKS), which would cut --set host.aio=native in three.
  local line
  if [[ -n ${COMP_LINE+set} ]]; then line=${COMP_LINE:0:COMP_POINT}; else line="${COMP_WORDS[*]:0:COMP_CWORD+1}"; fi
  local -a words
  read -ra words <<<"$line"
  [[ -z $line || $line =~ [[:space:]]$ ]] && words+=("")
  local n=${#words[@]} cur=${words[-1]} prev=""
  ((n >= 2)) && prev=${words[-2]}
  # Bash replaces only its own current word (what follows the last '=' or ':'): the candidates
  # are made for the whole of `cur`, then that part of them is cut off.
  local bash_word=${COMP_WORDS[COMP_CWORD]}
  [[ $bash_word == [=:] ]] && bash_word=""
  local keep=${cur%"$bash_word"}
  local -a reply=()

  if ((n == 2)); then
    if [[ $cur == -* ]]; then
      mapfile -t reply < <(compgen -W "--help --version" -- "$cur")
    else
      mapfile -t reply < <(compgen -W "$("$exe" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p') help" -- "$cur")
    fi
    COMPREPLY=("${reply[@]}")
    return
  fi
  local cmd=${words[1]} sub=""
  if [[ $cmd == bench ]]; then
    local -a subs
    read -ra subs <<<"$("$exe" bench --help 2>/dev/null | sed -n 's/.*vqsim bench \([a-z0-9-]*\) \[options\].*/\1/p' | tr '\n' ' ')"
    if ((n == 3)); then
      mapfile -t COMPREPLY < <(compgen -W "${subs[*]}" -- "$cur")
      return
    fi
    sub=${words[2]}
  fi

  local help
  help=$("$exe" $cmd $sub --help 2>/dev/null | sed -n '/^Options:$/,$p')  # the options only
  case $prev in
    --set | --vs | --maximize | --minimize)
      local before="" part=$cur
      if [[ $prev == --vs ]]; then  # KEY=VALUE[,KEY=VALUE...]: complete the last pair
        [[ $cur == *,* ]] && before=${cur%,*}, && part=${cur##*,}
      fi
      if [[ $part == *=* && $prev != --m* ]]; then
        local key=${part%%=*}
        mapfile -t reply < <(compgen -P "$before$key=" -W "$("$exe" keys --values "$key" 2>/dev/null)" -- "${part#*=}")
      else
        mapfile -t reply < <(compgen -P "$before" -W "$("$exe" keys --names 2>/dev/null)" -- "$part")
        if [[ $prev != --m* ]]; then
          ((${#reply[@]})) && reply=("${reply[@]/%/=}")
          compopt -o nospace 2>/dev/null
        fi
      fi
      ;;
    --scenario)
      mapfile -t reply < <(compgen -W "$(_vqsim_scenario_names "$exe")" -- "$cur")
      mapfile -t -O "${#reply[@]}" reply < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      ;;
    --out | --data | --report | --file | --spec)
      mapfile -t reply < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      ;;
    *)
      if [[ $prev == --* ]] && grep -qE -- "^ {1,4}(-[a-z] \[ )?$prev( \])? arg" <<<"$help"; then
        # The option's argument: the values its help lists, if it lists any.
        mapfile -t reply < <(compgen -W "$(_vqsim_option_values "$help" "$prev")" -- "$cur")
      elif [[ $cur == -* ]]; then
        mapfile -t reply < <(compgen -W "$(sed -nE 's/^ {1,4}(-[a-z] \[ )?(--[a-z0-9-]+).*/\2/p' <<<"$help")" -- "$cur")
      else
        case $cmd in
          run | solve | plan | compare | graph | sweep)  # a scenario (sweep: a spec)
            local names
            names=$(_vqsim_scenario_names "$exe")
            [[ $cmd == sweep ]] && names=$(grep '^sweeps/' <<<"$names")
            mapfile -t reply < <(compgen -W "$names" -- "$cur")
            mapfile -t -O "${#reply[@]}" reply < <(compgen -f -X '!*.toml' -- "$cur"; compgen -d -- "$cur")
            ;;
          *) mapfile -t reply < <(compgen -f -- "$cur") ;;
        esac
        compopt -o filenames 2>/dev/null
      fi
      ;;
  esac
  COMPREPLY=("${reply[@]#"$keep"}")
}
complete -F _vqsim vqsim
