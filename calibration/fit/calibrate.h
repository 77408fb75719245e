// Fitting stage parameters to a dataset (`vqsim calibrate`).
//
// Parameters are fitted in log space by Levenberg-Marquardt on relative residuals
// (ln predicted - ln measured, over each target's sigma, times sqrt of the run's weight), with a
// weak prior pulling each parameter towards its documented default (ln-sd 1: a factor e). The
// model inside the fit is the MVA (milliseconds per run), anchored on the DES: at each anchor
// a correction per target makes it equal to the DES (common random numbers: the same seed every
// round), and a log-linear term per parameter gives it the DES's slope (one more simulation per
// parameter). Each round fits the anchored MVA, simulates the answer, keeps the best simulated
// point and re-anchors there (space mapping), until the simulation agrees with the surrogate at
// its optimum or stops improving. Percentiles, which the MVA does not give, are the MVA's mean
// completion latency times the DES's percentile-to-mean ratio. The figures reported are the DES's.
//
// Uncertainty: the covariance of the log parameters is (J'J / s2 + prior)^-1 at the optimum,
// where J holds the data residuals' derivatives and s2 = max(1, RSS / (n - p)): the residual
// variance, never taken below the assumed measurement error. A parameter whose posterior sd is
// more than half its prior sd is reported as not identified by the data.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fit/dataset.h"

namespace vqsim::fit {

struct CalibrateOptions {
  std::vector<std::string> fit_keys;  // empty = candidate_keys()
  std::string holdout;                // regex on run names: predicted, not fitted
  bool leave_one_out = false;
  // With leave_one_out: each fold leaves out every fitted run of one configuration (--cv config),
  // not one run, so that its errors are those of another configuration.
  bool by_configuration = false;
  int threads = 1;
  int replications = 2;  // DES replications per run and round
  std::uint64_t seed = 1;
  int max_rounds = 8;
  double prior_log_sd = 1.0;
  // Loss on each figure's residual r (its log error over 3%: r = 1 is 3% off). 0: least
  // squares. c > 0: Cauchy, rho(r) = c^2/2 log(1 + (r/c)^2), which weighs a figure the model
  // cannot come near (an unmodelled mechanism) less than the many it can, instead of letting it
  // pull every parameter towards it.
  double robust_scale = 3;
  // Start the first round's descent again from 4x and 1/4 of each parameter, keep the best end,
  // and keep a second explanation that fits about as well (CalibrationResult::alternative).
  bool multi_start = true;
  // The multi-start's spread starts (a Latin hypercube over the prior's range) descend on round
  // 1's surrogate. Refined on the simulation as well, each from a surrogate anchored at itself
  // (about four simulations of the fitted runs per start): `simulated`; never: `screened`;
  // `automatic`: where that costs at most a budget of simulated events (the report says what was
  // left untried where it costs more).
  enum class SpreadStarts { automatic, simulated, screened };
  SpreadStarts spread_starts = SpreadStarts::automatic;
  // Parameter draws: refit the surrogate this many times from the optimum (and from the second
  // explanation, keeping the better end) with the runs reweighted (a Bayesian bootstrap; with
  // fewer than 5 fitted runs the measurements perturbed by the residual noise instead) and the
  // prior's centre drawn from the prior; the refitted vectors are the parameter uncertainty
  // (CalibrationResult::draws). 0: the linearized covariance alone, as before.
  int bootstrap = 32;
  // Leave-one-out with a second explanation: refit it without the run too (true), or move it by
  // as much as the estimate's refit moved (false).
  bool refit_alternative = true;
  std::function<void(const std::string&)> progress;  // one line per step
  std::function<bool()> cancelled;
};

struct ParamEstimate {
  std::string key;
  double start = 0, estimate = 0, lower = 0, upper = 0;  // 95% interval
  double log_sd = 0;
  // The data pin it, tested three ways: its posterior sd (the Jacobian's) is under half the
  // prior's, so is the parameter draws' (refits over reweighted runs), and no cross-validation
  // fold's refit without its runs lands outside its 95% interval (which would mean those runs
  // alone pin it); and it is not at a limit. `why_not` says which test failed ("" when identified).
  bool identified = true;
  std::string why_not;
  int at_limit = 0;  // -1 / +1: the estimate stands at the lower / upper limit of its range
};

struct TargetFit {
  std::string metric, kind;
  // fitted: the DES at the estimate; for a held-out run with parameter draws, the prediction's
  // point: the median of its interval's mixture (at_estimate then holds the DES at the estimate)
  double measured = 0, fitted = 0;
  double at_estimate = 0;
  double sim_half_width = 0;  // the DES's own 95% half-width
  // 95% interval: parameters and simulation noise, and for a prediction (a held-out run, a
  // leave-one-out fold) the model's own error too
  double lower = 0, upper = 0;
  // A prediction's value at the second explanation (CalibrationResult::alternative), whose
  // interval then holds both; 0 without one.
  double alternative = 0;
  // With parameter draws (CalibrationResult::draws): ln(draw's prediction / the estimate's) per draw, whose
  // mixture (with the simulation's and the model's spread) is the interval; empty without.
  std::vector<double> draws = {};
  double spread_lo = 0, spread_hi = 0;  // the measurement's replicate spread (Target's; 0, 0: none)
  double error_rel() const { return measured > 0 ? (fitted - measured) / measured : 0; }
  // Within tolerance_of(kind), or inside the replicate spread.
  bool within_bar() const { return fit::within_bar(kind, fitted, measured, spread_lo, spread_hi); }
  // Beyond tolerance_of(kind) but inside the replicate spread: as close as a repeat of the run.
  bool within_spread_only() const { return within_bar() && std::fabs(error_rel()) > tolerance_of(kind); }
};

struct RunFit {
  std::string name;
  bool held_out = false;
  std::string distance;  // a held-out run's from the fitted runs (predict::distance_between)
  std::string bottleneck;
  std::vector<TargetFit> targets;
};

struct CvFold {
  std::string name;
  std::string distance;            // the left-out run's from the other fitted runs
  std::size_t group = 0;           // the refit it came from: runs left out together share it
  std::vector<TargetFit> targets;  // predicted with this run left out of the fit
};

struct CvSummary {
  std::string method = "leave-one-out";              // or "leave-one-configuration-out"
  std::vector<CvFold> folds;                         // one per left-out run
  std::vector<std::pair<std::string, double>> mape;  // per target kind
  std::string worst_run;
  double worst_error = 0;  // largest |relative error| of throughput or mean latency
  std::string worst_metric;
};

// The model's own error per figure kind (models::figure_kind), as the sd of ln(model / measured),
// per distance of a setup from the fitted ones (predict::distance_between): `fitted` for the
// fitted setups, `workload` for another workload (rw, block size, engine) of a fitted
// configuration at a depth and jobs it was fitted at, `depth` for a fitted configuration at
// another depth or jobs, `combination` for a new combination of the fitted configurations' values
// (every field of its configuration some fitted configuration's), `unmeasured` for another
// configuration (a value no fitted run had).
//   workload, depth, combination, unmeasured: with leave-one-out, from the folds at that distance from the other
//               fitted runs: for each fold's figure, the smallest sd at which its interval (its
//               parameters' and simulation's part, the two explanations' mixture where there are
//               two, and the model's error) would hold the measurement; the term is the 95th
//               percentile of those (nearest rank), so that the folds' intervals built the way a
//               prediction's are hold 95% of their measurements (without parameters' part and a
//               second explanation: the 95th percentile of |e| over 1.96, e = ln(model /
//               measured)); with n < 10 observations (figures; with --cv config, left-out
//               configurations, whose figures miss together), pooled as k0 = 2 observations with the same
//               estimate over all the folds (every distance) where those are 10 or more, else with
//               the documented prior for that distance (predict::prior_model_error):
//               sqrt((k0 prior^2 + n sd^2) / (k0 + n)); no leave-one-out: the prior; another
//               workload or a new combination with no fold of its own takes no more than
//               another configuration's term; another depth is pooled with its documented
//               prior, never with the other distances' folds (theirs kept every queue's length),
//               and with no fold of its own takes no more than another configuration's term;
//               none is below `fitted` (a setup the fit did not measure is not predicted
//               surer than the fit reproduces those it did);
//   fitted:     the same over the fit's own residuals and the folds whose setup another fitted
//               run has (a replicate), with the 3% a measurement is assumed to err by as the prior.
// A setup's distance in calibrate also counts the run's own `set` keys outside the workload
// (a device figure such as backend.latency_us, which setup_signature does not hold).
struct ModelError {
  std::map<std::string, double> unmeasured, workload, depth, combination, fitted;
  std::string source;
  // The leave-one-out folds per distance ("another workload", "another depth", "new combination", "unmeasured
  // setup", "fitted setup").
  std::map<std::string, int> folds;
};

// One prediction as the model-error estimate sees it: its log error e = ln(model / measured), the
// variance its interval already holds without the model's error (parameters and simulation:
// (ln(upper / value) / 1.96)^2), and the second explanation's shift d = ln(alternative / value)
// with its weight w (0, 0 without one).
// With parameter draws, `draws` holds ln(draw / value) of each (equal weights) and held_var the
// simulation's part alone: the interval is then the mixture of the draws (shift and weight unused).
struct ErrorSample {
  double error = 0, held_var = 0, shift = 0, weight = 0;
  std::vector<double> draws = {};
};

// The smallest model-error sd at which the sample's 95% interval, built as a prediction's is
// (calibrate.cc: in quadrature with held_var, then the mixture with the shifted explanation),
// holds its measurement.
double needed_model_sd(const ErrorSample& e);

// The model-error sd from n samples (ModelError): the 95th percentile (nearest rank) of
// needed_model_sd; with n < 10 pooled with prior_sd as 2 observations; prior_sd for none.
// `observations`: how many independent predictions the samples are (-1: one per sample); with
// --cv config a left-out configuration's figures come from one refit and miss together, so they
// count as one.
double model_error_sd(double prior_sd, const std::vector<ErrorSample>& samples, int observations = -1);

// What a distance's own folds are pooled with (ModelError): the estimate over every fold, `all`
// (`observations` of them, as model_error_sd counts them), when those are 10 or more; else, and
// always for another depth, the distance's documented prior. For a new combination the estimate
// scaled by predict::combination_share, pooled with its prior below 10 observations.
double parent_model_error_sd(const std::string& kind, const std::string& distance, const std::vector<ErrorSample>& all,
                             int observations);

struct CalibrationResult {
  std::vector<ParamEstimate> params;
  Eigen::MatrixXd correlation;
  std::vector<RunFit> runs;        // in manifest order
  std::vector<std::string> notes;  // identifiability and warnings, in plain words
  bool converged = false;
  std::string stop_reason;
  int rounds = 0;
  long mva_evaluations = 0;
  long des_runs = 0;
  double rss = 0, residual_variance = 1;
  int n_residuals = 0;
  double seconds = 0;
  // How far (the largest log difference of any parameter) the simulation confirmed the surrogate
  // around the estimate: what the draws' and folds' refits keep to; infinite where nothing
  // bounded it.
  double trusted_log_radius = std::numeric_limits<double>::infinity();
  std::optional<CvSummary> cv;
  ModelError model_error;
  std::vector<std::string> fitted_setups;  // models::setup_signature of each fitted run
  // A second explanation the data cannot tell from the estimate (the multi-start's, see
  // CalibrateOptions::multi_start): its parameter values, in `params` order, and the simulated costs.
  std::optional<std::vector<double>> alternative;
  double alternative_cost = 0, best_cost = 0;
  double alternative_weight = 0;  // its share of the parameter draws (the bootstrap's; without: exp(-cost/2s^2), normalized)
  // The parameter draws (CalibrateOptions::bootstrap): each refit's values in `params` order, in
  // each key's unit, and the optimum it fell into (0: the estimate, 1: the alternative); their
  // spread about that optimum as log sds and correlation (what FIT.toml's [calibration] carries
  // as log_sd and log_corr around the estimate and each mode). Empty without a bootstrap.
  std::vector<std::vector<double>> draws;
  std::vector<int> draw_mode;
  std::vector<double> draw_log_sd;
  Eigen::MatrixXd draw_correlation;
  std::string draws_method;  // how the runs were resampled, in words
};

// After the rounds, where no step was refused: the surrogate's own optimum, simulated, against
// the estimate at the rounds' resolution (1% of the cost): `better` becomes the estimate,
// `confirmed` trusts the surrogate that far, `refused` shrinks the region (docs/calibration.md,
// the search's step 5).
enum class SurrogateCheck { better, confirmed, refused };
SurrogateCheck check_surrogate_optimum(double simulated_cost, double estimate_cost);

// Held-out predictions whose point (the draws' median) lies more than a factor 1.5 from the
// simulation at the estimate: the fitted runs leave what separates the two to the prior or to a
// second explanation, so the point is the draws' choice, not the data's. A note naming how many
// and the farthest, or "" when none (docs/calibration.md, What it reports).
std::string point_far_from_estimate_note(const std::vector<RunFit>& runs);

// Throws models::ConfigError for a setup it cannot fit (no free parameter left, every run held
// out, an unknown --fit key) and std::runtime_error when the model cannot be evaluated.
CalibrationResult calibrate(const Dataset& d, const CalibrateOptions& o);

}  // namespace vqsim::fit
