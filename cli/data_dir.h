// Where vqsim's data (the example scenarios and sweep specs) lives, found from the binary's own
// location so that an installed or packaged vqsim never depends on the tree it was built from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace vqsim::cli {

// The data directory: <dir of the binary>/<VQSIM_DATA_FROM_BIN> (installed: bin/../share/vqsim),
// else <dir of the binary>/share/vqsim (a build tree, where CMake links share/vqsim/scenarios
// to the source tree's scenarios/). Empty when neither holds a scenarios/ directory.
std::optional<std::filesystem::path> data_dir();

// A scenario (or sweep spec) argument as a path to load. An existing file, a name ending in
// .toml, or a path starting with / or . is returned unchanged (the loader reports a missing
// file). Anything else is the name of an installed example: `default` is
// <data>/scenarios/default.toml, `sweeps/blk-vs-scsi` <data>/scenarios/sweeps/blk-vs-scsi.toml.
// An unknown name throws UsageError listing the names there are.
std::string resolve_scenario(const std::string& arg);

}  // namespace vqsim::cli
