// A measurement manifest as calibration sees it: runs, each with the scenario overrides that
// describe its setup (the fio output's workload, then the manifest's `set`) and the figures it
// measured (targets), checked against the base scenario before any fitting starts.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.h"

namespace vqsim::fit {

// One measured figure. `metric` is an io_metric name (models/io_metrics.h): read.iops,
// write.lat_mean_us, read.clat_p99_us, total.iops (fio's unified "mixed" direction), ...
struct Target {
  std::string metric;
  std::string kind;  // "throughput" (iops or bw_kib), "mean latency", "p50", "p99", "p99.9"
  double measured = 0;
  double sigma_rel = 0.03;  // the relative error a residual is measured in
};

struct CalRun {
  std::string name;
  std::string where;                   // "manifest.toml:12: run 'name'"
  std::vector<std::string> overrides;  // key=value, applied on the base scenario
  double weight = 1;
  std::vector<Target> targets;
  models::IoScenario scenario;  // base + overrides (validated)
};

struct Dataset {
  std::string manifest_path;
  std::string base_path;
  std::vector<CalRun> runs;
};

// Throws models::ConfigError with file, line and run name for a bad manifest: unreadable fio
// output, a run without `set`, a `set` that contradicts the fio output's own options, a setup
// the base scenario rejects, a measured direction the setup does not do, a run with nothing to fit.
Dataset load_dataset(const std::string& manifest_path, const std::string& base_path);

// The overrides that pin a run's simulation length for calibration (I/Os, replications, seed).
std::vector<std::string> simulation_overrides(const CalRun& run, int replications, std::uint64_t seed);

// Relative tolerance the quality bar sets for a target kind (5% throughput and mean latency,
// 15% percentiles).
double tolerance_of(const std::string& kind);

}  // namespace vqsim::fit
