#!/usr/bin/env bash
# The layers as the README draws them: sim/ knows nothing of the layers above it, models/ nothing
# of calibration/ or the CLI, calibration/ nothing of the CLI -- in #include lines and in the
# CMake targets' link lists. Usage: test_layers.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 2
fail=0
forbid() {  # forbid DIR PATTERN WHAT
  local hits
  hits=$(grep -rnE "#include \"($2)/" "$1" --include='*.h' --include='*.cc' || true)
  if [ -n "$hits" ]; then
    echo "layers: $1 must not include $3:"
    echo "$hits"
    fail=1
  fi
}
forbid sim 'models|calibration|cli' 'models/, calibration/ or cli/'
forbid models 'calibration|cli' 'calibration/ or cli/'
forbid calibration 'cli' 'cli/'
# Link lists: the models' library links no calibration target, sim's links nothing of ours.
if grep -E 'target_link_libraries\(vqsim_models' models/CMakeLists.txt | grep -qE 'vqsim_(fio|fit|check|predict)'; then
  echo "layers: models/CMakeLists.txt links a calibration library"; fail=1
fi
if grep -E 'target_link_libraries\(vqsim_sim' sim/CMakeLists.txt | sed 's/(vqsim_sim//' | grep -qE 'vqsim_'; then
  echo "layers: sim/CMakeLists.txt links another vqsim library"; fail=1
fi
[ $fail -eq 0 ] && echo "layers: sim < models < calibration < cli, in includes and links"
exit $fail
