// Prediction intervals for a calibrated scenario (docs/prediction.md).
//
// A calibrated scenario carries a [calibration] table (models/scenario.h: CalibrationUncertainty):
// the fitted keys (whose values are the scenario's own) and their uncertainty as a mixture, each
// component centred on the estimate or on one of `modes` with its weight, all with the spread
// log_sd / log_corr. Written by `vqsim calibrate` now, the components are the calibration's
// parameter draws themselves (its bootstrap refits, each a point: log_sd 0); written before, the
// estimate and a second explanation with a log-normal spread (docs/calibration.md, "FIT.toml").
// `parameter_draws` samples that mixture deterministically from the scenario's seed; `predict`
// simulates each draw once, and one more run at the estimate on the same random numbers, so that
// each draw's shift s_d = ln(draw / estimate) is the parameters' effect alone.
//
// Every draw runs on the same random numbers as the nominal's replication 0 (common random
// numbers): the shifts are then the parameters' effect alone, and the simulation noise enters
// once, through the nominal's half-width. Results are the same whatever the thread count.
//
// The interval is the central 95% of the equal-weight mixture over the draws of
// N(ln mean + s_d, (sim_hw / mean / 1.96)^2 + model_sd^2): asymmetric where the draws are (two
// explanations, a parameter at its range limit), with model_sd the table's term for the figure's
// kind and the setup's distance from what was measured: a fitted setup (its setup_signature is
// among fitted_setups) takes model_error_fitted, another workload of a fitted configuration
// model_error_workload, a fitted configuration at another depth or jobs model_error_depth, a new combination of the fitted
// configurations' values (every field of its configuration is some fitted configuration's: virtio-scsi behind an IOThread where
// each was fitted apart) model_error_combination, another configuration (a value no fitted run had) model_error; a table without
// them takes the documented prior below (docs/calibration.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/io_results.h"
#include "models/scenario.h"

namespace vqsim::predict {

// One metric's prediction. Values are in the metric's unit (models/io_metrics.h).
struct MetricPrediction {
  std::string name;             // "read.iops", "write.clat_p99_us", "total.iops", "vm.db.read.iops", ...
  std::string vm;               // the [[vm]] profile whose figure it is ("" in a single-VM file, and host.total.*)
  double mean = 0;              // the nominal run's mean
  double sim_half_width = 0;    // the nominal run's 95% half-width (simulation noise)
  double param_sd_rel = 0;      // sample sd of ln(metric) over the parameter draws
  double model_sd_rel = 0;      // the model-error term applied (sd of ln(model / measured))
  double lower = 0, upper = 0;  // the whole 95% prediction interval: parameters, simulation and model error
  double median = 0;            // the same mixture's median: calibrate's point for a held-out run
  // The parameters' part alone: the central 95% of the draws' shifts s_d = ln(draw / estimate),
  // as ln(lower / mean) <= 0 and ln(upper / mean) >= 0 (asymmetric where the draws are).
  double param_lower_log = 0, param_upper_log = 0;
  // The parameters' share of the squared log half-width of the whole interval (its mean over
  // both sides): p^2 / (p^2 + (hw/mean)^2 + (1.96 model_sd)^2), p the parameters' half-width.
  double param_share = 0;
  bool operator==(const MetricPrediction&) const = default;
};

// A file of [[vm]] tables: how far each running profile's figures extrapolate. A profile
// without a calibrated base has no fitted setups: its figures are an unmeasured setup's, with
// the prior's model error; they still move with the draws where it shares a device or the host's
// cores with a calibrated profile.
struct ProfileDistance {
  std::string vm;
  bool calibrated = false;
  std::string distance, distance_note, model_error_source;
  bool operator==(const ProfileDistance&) const = default;
};

struct Prediction {
  int draws = 0;                                    // 0: no prediction was made
  std::string source;                               // the [calibration] table's source
  std::vector<std::string> sampled;                 // keys drawn
  std::vector<std::string> fixed_by_set;            // keys given by --set, held at that value
  std::vector<std::vector<std::string>> overrides;  // per draw, the "key=value" of the sampled keys
  // In io_metric_names() order; a job file of several jobs adds each job's (<job>.read.iops); a
  // file of [[vm]] tables has every running profile's (vm.<name>.read.iops,
  // vm.<name>.<job>.read.iops) and the host's (host.total.iops, host.total.lat_mean_us), as has
  // a single-VM file with vm.count > 1.
  std::vector<MetricPrediction> metrics;
  // How far the prediction extrapolates: "fitted setup" (the calibration measured this setup),
  // "another workload" (a measured configuration running another workload: rw, mix, block size
  // or engine, at a depth and jobs it was measured at), "another depth" (a measured configuration
  // at an iodepth or numjobs it was not measured at), "new combination" (another configuration
  // whose every knob value some fitted configuration had, in other combinations) or "unmeasured
  // setup" (a value of a knob of the VM, host or device that no fitted run had).
  std::string distance;
  std::string distance_note;       // why the distance is not the signature's, or ""
  std::string model_error_source;  // where the model-error terms come from
  // A file of [[vm]] tables: each running profile's distance (the fields above are the first
  // running profile's), and that profile's name, which a metric without vm.<name>. means.
  std::vector<ProfileDistance> profiles;
  std::string first_vm;
  // The prediction of `metric`, or null: a name without vm.<name>. or host. in a file of [[vm]]
  // tables is the first running profile's (as io_metric reads it).
  const MetricPrediction* find(const std::string& metric) const;
  bool operator==(const Prediction&) const = default;
};

// The sample sd of `x`, taken as deviations from its first value so that identical values give
// exactly 0, not rounding noise (the spread of ln(metric) over parameter draws); 0 for fewer than
// two values.
double sample_sd(std::vector<double> x);

// The documented prior of the model's error per figure kind and distance ("another workload",
// "another depth", "new combination" or "unmeasured setup"), when a calibration could not estimate its own (one run, no
// leave-one-out, or no fold at that distance): the RMS of ln(model / measured) at that distance in the QEMU lab's accuracy
// experiments on a recording of their own (docs/calibration.md, "The prior"). 0 for an unknown kind.
double prior_model_error(const std::string& kind, const std::string& distance = "another workload");

// A new combination of fitted values' model error as a share of another configuration's, per
// figure kind, measured on one recording (docs/calibration.md, "The prior"): a calibration whose
// folds are nearly all other configurations scales their estimate by it for a new combination.
// 1 for an unknown kind.
double combination_share(const std::string& kind);

// The model-error sd for `metric` of a calibrated scenario at the given distance.
double model_error_for(const models::CalibrationUncertainty& c, const std::string& metric, const std::string& distance);

// "fitted setup", "another workload", "another depth", "new combination" or "unmeasured setup" for scenario `s`
// against the table's fitted_setups (none listed: "unmeasured setup").
std::string setup_distance(const models::IoScenario& s);
// The overrides (joined "k=v, ...") outside the workload, run length, fitted keys and the keys
// setup_signature holds that change the model (its MVA figures) of the scenario `file`: a setup
// FIT.toml's fitted_setups cannot tell from a fitted one (a device figure, host.cores, ...). ""
// when there are none or they change nothing.
std::string configuration_changed_by(const models::ScenarioSource& file, const std::vector<std::string>& overrides,
                                     const std::vector<std::string>& fitted_keys);

// The same for one profile of a file of [[vm]] tables: the overrides outside the run's length,
// the fitted keys, the workload and the signature's keys of this profile (and the edits of
// every VM's workload, which its signature sees) that change this profile's MVA figures (the
// multi-class MVA where several profiles run): its own configuration, or its neighbours' load on
// what it shares with them (a device, host.cores). "" when there are none.
std::string configuration_changed_for_profile(const models::ScenarioSource& file, const std::vector<std::string>& overrides,
                                              const std::vector<std::string>& fitted_keys, const std::string& vm);

// Where `signature` is another configuration than the fitted ones because of a setting every
// fitted run shared (the lab's host.qemu_version, which a FIT.toml's base scenario may not
// state): which, and the --set that predicts the measured setup; "" when there is none.
std::string shared_setting_note(const std::string& signature, const std::vector<std::string>& fitted_signatures);

// The same for a setup_signature against a list of them (calibrate classifies its leave-one-out
// folds and held-out runs with it).
std::string distance_between(const std::string& signature, const std::vector<std::string>& fitted_signatures);

// A setup_signature without its workload fields (rw, rwmixread, bs, ioengine, iodepth, numjobs,
// rate_iops): the configuration the workload ran on.
std::string configuration_signature(const std::string& signature);

// The central 95% interval of the equal-weight mixture of N(c_i, sd^2), by bisection on its CDF
// (sd 0: the points' own quantiles); {0, 0} for no centres. What `predict` and calibrate's
// held-out intervals use: the parameter draws' log predictions, each with the other parts' spread.
std::pair<double, double> mixture_interval95(const std::vector<double>& centres, double sd);
// The mixture's q-quantile (0 < q < 1; sd > 0), by bisection on its CDF.
double mixture_quantile(const std::vector<double>& centres, double sd, double q);
// The mixture's CDF at x (sd > 0).
double mixture_cdf(const std::vector<double>& centres, double sd, double x);

// The parameters' part of a metric's interval as text: "±12%" where its two sides round alike,
// else "-20%/+45%" (the factor each side alone would put on the value).
std::string parameters_part_text(const MetricPrediction& m);

// Called after each finished draw with (finished, total), from worker threads one at a time.
using Progress = std::function<void(int done, int total)>;

// The parameter draws of a calibrated scenario: s.calibration.draws lists of "key=value" (%.9g,
// in each key's unit) for the keys not fixed by --set. z ~ N(0, I) from a sim::Rng stream of
// s.run.seed that no replication uses; x = L z with L the Cholesky factor of log_corr (or, when
// log_corr is not positive definite, V sqrt(max(D, 0)) from its eigen-decomposition, rows scaled
// to unit variance); value_k = centre_k * exp(log_sd_k * x_k), the centre being `values` or, with
// modes (other explanations), each mode for its mode_weights share of the draws (stratified,
// docs/prediction.md). Empty without a calibration.
std::vector<std::vector<std::string>> parameter_draws(const models::IoScenario& s);

// The factor L (row-major, n x n) with L L^T = log_corr (or its nearest positive semi-definite
// matrix with unit diagonal, see above). Exposed for tests.
std::vector<std::vector<double>> correlation_factor(const std::vector<std::vector<double>>& corr);

// The seed a parameter draw runs with: the nominal's own (common random numbers, see above).
std::uint64_t draw_seed(std::uint64_t nominal_seed, int draw);

// The metrics a prediction covers for this nominal result: per active direction (IOPS > 0)
// iops, bw_kib, lat_mean_us, clat_mean_us, clat_p50_us, clat_p99_us, clat_p99.9_us, and
// total.iops when both directions are active.
std::vector<std::string> prediction_metric_names(const models::IoRunReport& nominal_report);
// What `predict` covers for scenario `s`: the list above for a single-VM file of one job; with a
// job file of several jobs each job's too (<job>.read.iops, ...); with vm.count > 1 host.total.iops
// and host.total.lat_mean_us; in a file of [[vm]] tables every running profile's figures and its
// jobs' under vm.<name>., then the host's.
std::vector<std::string> prediction_metric_names(const models::IoScenario& s, const models::IoRunReport& nominal_report);

// Simulates every parameter draw of `nominal` (load_io_scenario(scenario_path, overrides + the
// draw's overrides), one replication, the nominal's seed, I/O count and runtime), and the
// estimate itself the same way (the reference of the draws' shifts), on `threads` threads (0 =
// all cores) and builds the intervals; `progress` counts draws + 1 simulations. A metric that is 0 or missing in the nominal
// or in any draw gets no entry (never NaN). `nominal` is the scenario as run (its seed,
// calibration.draws and calibration table are used); nominal.calibration.draws <= 0 or no
// calibration table gives an empty Prediction (draws = 0). Throws models::ConfigError naming the
// draw when a drawn value is not a valid value of its key.
Prediction predict(const std::string& scenario_path, const std::vector<std::string>& overrides, const models::IoScenario& nominal,
                   const models::IoRunReport& nominal_report, int threads, const Progress& progress = nullptr);

}  // namespace vqsim::predict
