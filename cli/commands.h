// The subcommands main() dispatches to. Each takes the arguments after its name and returns
// the exit status; bad usage throws UsageError (exit 2).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#ifndef VQSIM_VERSION
#define VQSIM_VERSION "0.0.0"
#endif

namespace vqsim::cli {

int run_main(const std::vector<std::string>& args);
int solve_main(const std::vector<std::string>& args);
int plan_main(const std::vector<std::string>& args);
int compare_main(const std::vector<std::string>& args);  // cli/compare.cc
int import_main(const std::vector<std::string>& args);
int sweep_main(const std::vector<std::string>& args);
int keys_main(const std::vector<std::string>& args);
int graph_main(const std::vector<std::string>& args);
int check_main(const std::vector<std::string>& args);      // cli/check.cc
int calibrate_main(const std::vector<std::string>& args);  // cli/calibrate.cc
int report_main(const std::vector<std::string>& args);     // cli/report.cc

// compare and plan as vqsim report runs them: the command's options in `args` (no --format),
// its exit status returned, and in `out` the JSON that --format json prints.
int compare_json(const std::vector<std::string>& args, nlohmann::ordered_json* out);  // cli/compare.cc
int plan_json(const std::vector<std::string>& args, nlohmann::ordered_json* out);     // cli/plan.cc

// `vqsim run` on an I/O-path scenario (cli/run_io.cc).
struct IoRunOptions {
  std::string scenario_path;
  std::vector<std::string> overrides;
  int threads = 0;
  std::string format = "text";
  long long seed = -1;
  int replications = 0;  // 0 = the scenario's
  std::string ios, runtime;
  bool compare_mva = false;
  bool allow_long_runs = false;  // lift check_run_size's limits
  int draws = -1;                // --draws: parameter draws of a calibrated scenario; -1 = its table's count, 0 = none
  bool event_hash = false;       // --event-hash: JSON event_hash (the golden runs)
};
int run_io(const IoRunOptions& options);
int bench_main(const std::vector<std::string>& args);
int bench_e2e(const std::vector<std::string>& args);

}  // namespace vqsim::cli
