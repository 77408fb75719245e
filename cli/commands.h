// The subcommands main() dispatches to. Each takes the arguments after its name and returns
// the exit status; bad usage throws UsageError (exit 2).
#pragma once

#include <string>
#include <vector>

#ifndef VQSIM_VERSION
#define VQSIM_VERSION "0.0.0"
#endif

namespace vqsim::cli {

int run_main(const std::vector<std::string>& args);
int bench_main(const std::vector<std::string>& args);

}  // namespace vqsim::cli
