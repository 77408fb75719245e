// What every subcommand shares: usage errors (exit 2), option parsing with --help, and
// "did you mean" suggestions.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/config.h"  // did_you_mean

namespace vqsim::cli {

using models::did_you_mean;

// Bad usage or input: main() prints the message to stderr and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses `args` against `opts` (and positional names, if any). Prints the options and returns
// false on --help; throws UsageError on unknown or malformed options.
bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                   boost::program_options::variables_map& vm,
                   const boost::program_options::positional_options_description* positional = nullptr);

// Writes `text` to `path` through a temporary file and a rename: a reader (or a crash, or
// Ctrl-C) sees the old file or the whole new one, never half of it. `sync` forces the data to
// disk before the rename.
void write_atomically(const std::filesystem::path& path, const std::string& text, bool sync = true);

// A run's event-stream hash (sim::Simulator::event_hash) as 16 hex digits: JSON numbers lose
// 64-bit integers in many readers.
std::string event_hash_hex(std::uint64_t hash);

}  // namespace vqsim::cli
