// `vqsim run` on an I/O-path scenario: replications of the DES, fio-like figures per direction
// with 95% intervals, the stage table (utilization, queue, wait, share of latency), the
// bottleneck, Little's law, and optionally the MVA comparison. Output as text, vqsim JSON or fio
// 3.x JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/fio/writer.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io_report.h"
#include "models/config.h"
#include "models/io_path.h"
#include "models/io_path_mva.h"
#include "sim/fio_histogram.h"

namespace vqsim::cli {

int run_io(const IoRunOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.ios.empty()) {
    overrides.push_back("workload.ios=" + o.ios);
    overrides.push_back("workload.runtime=0");
  }
  if (!o.runtime.empty()) overrides.push_back("workload.runtime=\"" + o.runtime + "\"");
  models::IoScenario s = models::load_io_scenario(o.scenario_path, overrides);
  if (o.seed >= 0) s.run.seed = static_cast<std::uint64_t>(o.seed);
  if (o.replications > 0) s.run.replications = o.replications;
  if (o.replications < 0) throw UsageError("--replications must be >= 1");

  check_run_size(s, o.allow_long_runs);

  const IoRunReport report = simulate_io(s, o.threads);
  // An open loop the path cannot keep up with: the run is valid, but its figures are those of a
  // closed loop at iodepth while the backlog of arrivals grows; say so on stderr and in JSON.
  const std::string overload = open_loop_warning(s, offered_iops(s), report.get("read.iops").mean + report.get("write.iops").mean,
                                                 "measured by the simulation");
  std::optional<models::IoMvaResult> mva;
  if (o.compare_mva) mva = models::solve_io_mva(s);

  if (o.format == "fio-json") {
    std::cout << fio::to_fio_json_text(to_fio_result(s, report));
  } else if (o.format == "json") {
    nlohmann::ordered_json j = io_report_json(s, report, mva ? &*mva : nullptr);
    j["warnings"] = nlohmann::ordered_json::array();
    if (!overload.empty()) j["warnings"].push_back(overload);
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << io_report_text(s, report, mva ? &*mva : nullptr);
  }
  if (!overload.empty()) std::cerr << "vqsim: warning: " << overload << "\n";
  if (!report.little_ok)
    std::cerr << "vqsim: Little's law is violated beyond 1% (" << report.little_where << "): this is a bug in the model or the engine\n";
  return report.little_ok ? 0 : 1;
}

}  // namespace vqsim::cli
