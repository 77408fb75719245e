// A what-if as a paired difference (docs/compare.md): a base scenario and alternatives that
// change some keys, run on the same random numbers (common random numbers: every replication r
// of every side draws from the streams of (run.seed, r)) and, for a calibrated scenario, on the
// same parameter draws. The difference then has an interval of its own, far narrower than the two
// separate intervals: what both sides share (the same arrivals, service-time draws and parameter
// values) cancels in it.
//
// Per metric, in log space (the ratio alt / base):
//   simulation: l_r = ln(alt_r / base_r) over the replications; half-width t_{0.975,n-1} s / sqrt(n);
//   parameters: d_k = ln(alt_k / base_k) over the parameter draws (each draw one replication on
//               the nominal's random numbers, as `vqsim run` predicts); 1.96 x their sd;
//   the whole interval: the centre ln(mean alt / mean base), half-width sqrt(sim^2 + param^2).
// The unpaired figure beside it, sqrt(h_base^2 + h_alt^2) of the two separate relative
// half-widths, is what comparing two `vqsim run` intervals would give. Percentiles are read within
// fio's histogram bins (FioHistogram::interpolated_percentiles_ns): a bin is up to 1/64 of its
// value wide, and fio's bin values would turn a shift smaller than that into 0 or a whole bin.
#pragma once

#include <string>
#include <vector>

#include "calibration/predict/prediction.h"
#include "models/io_results.h"
#include "models/scenario.h"

namespace vqsim::predict {

struct MetricComparison {
  std::string name;                     // an io_metric name: read.iops, write.clat_p99_us, total.iops, ...
  bool higher_is_better = true;         // IOPS and bandwidth; every latency is lower-is-better
  double base = 0, alt = 0;             // the nominal runs' means, in the metric's unit (percentiles within fio's bins)
  double delta = 0;                     // alt - base
  double delta_rel = 0;                 // alt / base - 1
  double lower_rel = 0, upper_rel = 0;  // the paired 95% interval of delta_rel
  double sim_half_width_log = 0;        // its parts, as half-widths of ln(alt / base)
  double param_half_width_log = 0;      // 0 without parameter draws
  double unpaired_half_width_rel = 0;   // sqrt(h_base^2 + h_alt^2) of the separate intervals
  std::string verdict;                  // "better", "worse" or "no significant difference"
};

struct Comparison {
  std::vector<std::string> vs;  // the alternative's key=value settings
  models::IoScenario alt;       // the alternative as run
  models::IoRunReport alt_report;
  std::vector<MetricComparison> metrics;  // in the order asked
  std::vector<std::string> one_sided;     // metrics that are 0 on one side (a direction one side does not do)
};

struct CompareResult {
  models::IoScenario base;
  models::IoRunReport base_report;
  int replications = 0;
  int draws = 0;  // parameter draws shared by every side; 0 without a calibration
  std::vector<Comparison> comparisons;
};

struct CompareOptions {
  std::string scenario_path;
  std::vector<std::string> overrides;        // --set, on every side
  std::vector<std::vector<std::string>> vs;  // one list of key=value per alternative
  std::vector<std::string> metrics;          // empty: prediction_metric_names of the base run
  long long seed = -1;                       // -1: the scenario's
  int replications = 0;                      // 0: the scenario's
  int draws = -1;                            // -1: the calibration table's count, 0: none
  int threads = 0;
};

// "host.aio=io_uring,host.iothreads=2" -> {"host.aio=io_uring", "host.iothreads=2"}. Commas
// inside quotes, braces or brackets (a distribution table) stay with their value. Throws
// std::invalid_argument on an empty setting or a piece that is not KEY=VALUE.
std::vector<std::string> split_settings(const std::string& text);

// The scenario of one alternative: the file, `overrides`, then `vs`. A ConfigError names the
// --vs on every line.
models::IoScenario load_alternative(const std::string& path, const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& vs);

// Runs the base, every alternative, and the shared parameter draws (progress counts every
// simulation). Throws models::ConfigError for a bad scenario or setting (naming the --vs it came
// from) and std::invalid_argument for an unknown metric.
CompareResult compare(const CompareOptions& options, const Progress& progress = nullptr);

}  // namespace vqsim::predict
