// `vqsim run` on an I/O-path scenario: replications of the DES, fio-like figures per direction
// with 95% intervals, the stage table (utilization, queue, wait, share of latency), the
// bottleneck, Little's law, and optionally the MVA comparison; for a calibrated scenario, 95%
// prediction intervals with parameter uncertainty (docs/prediction.md). Output as text, vqsim
// JSON or fio 3.x JSON.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/fio/writer.h"
#include "calibration/predict/prediction.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io_report.h"
#include "cli/solve_classes.h"
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
  if (o.draws == 1 || o.draws > 10000) throw UsageError("--draws must be 0 (no prediction) or from 2 to 10000");
  if (o.draws > 0 && !s.calibration.present())
    throw UsageError("--draws: " + o.scenario_path +
                     " has no [calibration] table (a calibrated scenario, as vqsim calibrate writes it)");
  if (o.draws >= 0) s.calibration.draws = o.draws;
  s.run.hash_events = o.event_hash;

  check_run_size(s, o.allow_long_runs);
  std::optional<models::IoMvaResult> mva;
  std::optional<models::IoMvaClassesResult> mva_classes;  // several [[vm]] profiles: one class each
  if (o.compare_mva) refuse_several_disks_for_mva(s, "--compare-mva");
  if (o.compare_mva) try {
      if (mva_by_classes(s))
        mva_classes = models::solve_io_mva_classes(s);
      else
        mva = models::solve_io_mva(s);
    } catch (const std::invalid_argument& e) {
      if (!s.multi_vm() && !s.multi_job()) throw;
      throw UsageError("--compare-mva: " + s.path + ": " + e.what());
    }

  const IoRunReport report = simulate_io(s, o.threads);
  // An open loop the path cannot keep up with: the run is valid, but its figures are those of a
  // closed loop at iodepth while the backlog of arrivals grows; say so on stderr and in JSON.
  const std::string overload = open_loop_warning(s, offered_iops(s), report.get("read.iops").mean + report.get("write.iops").mean,
                                                 "measured by the simulation");
  const std::string idle_threads = idle_iothreads_warning(s);

  // A calibrated scenario: one more simulation per parameter draw (fio JSON has no intervals).
  predict::Prediction prediction;
  std::string draws_line;  // on stderr after the report (text only)
  if (o.format != "fio-json" && s.calibration.present() && s.calibration.draws > 0) {
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    const auto start = std::chrono::steady_clock::now();
    predict::Progress progress;
    if (tty) progress = [](int done, int total) { std::cerr << "\rparameter draws: " << done << "/" << total << std::flush; };
    prediction = predict::predict(o.scenario_path, overrides, s, report, o.threads, progress);
    if (tty) std::cerr << "\r\033[K" << std::flush;
    if (o.format == "text") {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char line[96];
      std::snprintf(line, sizeof line, "vqsim: %d parameter draws in %.1f s\n", prediction.draws, seconds);
      draws_line = line;
    }
  }

  if (o.format == "fio-json") {
    std::cout << fio::to_fio_json_text(to_fio_result(s, report));
  } else if (o.format == "json") {
    nlohmann::ordered_json j = io_report_json(s, report, mva ? &*mva : nullptr, &prediction);
    if (mva_classes) j["mva"] = mva_classes_compare_json(s, report, *mva_classes);
    j["warnings"] = nlohmann::ordered_json::array();
    for (const auto& w : s.warnings) j["warnings"].push_back(w);
    if (!overload.empty()) j["warnings"].push_back(overload);
    if (!idle_threads.empty()) j["warnings"].push_back(idle_threads);
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << io_report_text(s, report, mva ? &*mva : nullptr, &prediction);
    if (mva_classes) std::cout << mva_classes_compare_text(s, report, *mva_classes);
  }
  std::cout << std::flush;
  for (const auto& w : s.warnings) std::cerr << "vqsim: warning: " << w << "\n";
  std::cerr << draws_line;
  if (!overload.empty()) std::cerr << "vqsim: warning: " << overload << "\n";
  if (!idle_threads.empty()) std::cerr << "vqsim: warning: " << idle_threads << "\n";
  if (!report.little_ok)
    std::cerr << "vqsim: Little's law is violated by more than 1% beyond what edge effects explain (" << report.little_where
              << "): this is a bug in the model or the engine\n";
  return report.little_ok ? 0 : 1;
}

}  // namespace vqsim::cli
