// A measurement manifest as calibration sees it: runs, each with the scenario overrides that
// describe its setup (the fio output's workload, then the manifest's `set`) and the figures it
// measured (targets), checked against the base scenario before any fitting starts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/fit/co_running.h"
#include "models/scenario.h"

namespace vqsim::fit {

// One measured figure. `metric` is an io_metric name (models/io_metrics.h): read.iops,
// write.lat_mean_us, read.clat_p99_us, total.iops (fio's unified "mixed" direction), ...
struct Target {
  std::string metric;
  std::string kind;  // "throughput" (iops or bw_kib), "mean latency", "p50", "p99", "p99.9", "cpu" (a thread's CPU per I/O)
  double measured = 0;
  double sigma_rel = 0.03;  // the relative error a residual is measured in
  // The figure's replicate spread, [lo, hi] (0, 0: none): the range of the same figure over the
  // manifest's runs of this setup (replicates), and its mean ± its standard deviation where the
  // manifest gives one (`<metric>_stddev`). A fit inside it is as close as a repeat would be.
  double spread_lo = 0, spread_hi = 0;
};

struct CalRun {
  std::string name;
  std::string where;                   // "manifest.toml:12: run 'name'"
  std::vector<std::string> overrides;  // key=value, applied on the base scenario
  double weight = 1;
  std::vector<Target> targets;
  models::IoScenario scenario;  // base + overrides (validated); with co_running, the scenario of all the guests
  // A run measured beside other guests (the manifest's co_running): the several-VM scenario it
  // is simulated in, the run's own VM first (its figures are the targets'). Empty: the run alone.
  std::optional<CoRunningModel> co_running;
  // Runs with one key are one scenario to simulate (replicates of a setup, the guests of one
  // co-running group): calibrate simulates it once for all of them.
  std::string simulation_key;
};

// The scenario a run is simulated in, its fitted parameters not yet set: `base` (the base
// scenario file, parsed) with the run's setup, or its co-running scenario of several VMs.
models::ScenarioSource simulation_source(const CalRun& run, const models::ScenarioSource& base);
// The scenario the MVA (calibrate's surrogate) solves for a run: the simulation's for a run
// alone; for a run with co_running, which the MVA cannot solve as several profiles, the run's
// own VM with vm.count = every guest on the host (its neighbours as copies of it, on one
// device): exact where they are its replicas on its device or on null devices, an approximation
// otherwise, which the simulation's anchor corrects (docs/calibration.md).
models::ScenarioSource mva_source(const CalRun& run, const models::ScenarioSource& base);
// Sets a fitted parameter on a source of `run`: a co-running scenario's every VM and device
// (`simulated`: the source is simulation_source's), else the key itself.
void set_parameter(models::ScenarioSource& source, const CalRun& run, bool simulated, const std::string& key, double value);

struct Dataset {
  std::string manifest_path;
  std::string base_path;
  std::vector<CalRun> runs;
  std::vector<std::string> notes;  // measured figures left out and why (calibrate reports them)
};

// Throws models::ConfigError with file, line and run name for a bad manifest: unreadable fio
// output, a run without `set`, a `set` that contradicts the fio output's own options, a setup
// the base scenario rejects, a measured direction the setup does not do, a run with nothing to fit.
Dataset load_dataset(const std::string& manifest_path, const std::string& base_path);

// Takes the runs' counts per I/O (count.*) out of their targets, and their notes with them, and
// says in `notes` how many runs had them and how to fit them (vqsim calibrate --fit-counts). Off
// by default: on the lab's knob split they moved the held-out IOPS and mean latency by no more
// than the split's seed noise (docs/calibration.md).
void leave_out_counts(Dataset& d);

// The overrides that pin a run's simulation length for calibration (I/Os, replications, seed).
std::vector<std::string> simulation_overrides(const CalRun& run, int replications, std::uint64_t seed);

// Relative tolerance the quality bar sets for a target kind (5% throughput and mean latency,
// 15% percentiles and a thread's CPU time per I/O).
double tolerance_of(const std::string& kind);
// A fitted or predicted figure meets its bar: within tolerance_of(kind) of the measurement, or
// inside the measurement's replicate spread (Target::spread_lo/hi; 0, 0: none).
bool within_bar(const std::string& kind, double model, double measured, double spread_lo, double spread_hi);

}  // namespace vqsim::fit
