#include "calibration/predict/prediction.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "sim/distribution.h"
#include "sim/replications.h"
#include "sim/rng.h"

namespace vqsim::predict {

namespace {

// The z stream: replication index 2^64 - 1 is never a replication (run.replications <= 10000),
// so no simulation ever draws from it; the stream id spells "predict!".
constexpr std::uint64_t kNoReplication = ~std::uint64_t{0};
constexpr std::uint64_t kDrawStream = 0x7072656469637421ULL;

constexpr double kZ95 = 1.96;  // the 97.5% quantile of N(0, 1), as docs/prediction.md writes it

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

double sample_sd(std::vector<double> x) {
  if (x.size() < 2) return 0;
  const double first = x.front();
  for (double& v : x) v -= first;
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double mixture_cdf(const std::vector<double>& centres, double sd, double x) {
  double f = 0;
  for (double c : centres) f += 0.5 * std::erfc(-(x - c) / (sd * std::sqrt(2.0)));
  return f / static_cast<double>(centres.size());
}

double mixture_quantile(const std::vector<double>& centres, double sd, double q) {
  if (centres.empty()) return 0;
  const auto range = std::minmax_element(centres.begin(), centres.end());
  double lo = *range.first - 10 * sd, hi = *range.second + 10 * sd;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (mixture_cdf(centres, sd, mid) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::pair<double, double> mixture_interval95(const std::vector<double>& centres, double sd) {
  if (centres.empty()) return {0, 0};
  // Not a structured binding: clang 15 (the fuzz build) cannot capture one in a lambda.
  const auto range = std::minmax_element(centres.begin(), centres.end());
  const double lowest = *range.first, highest = *range.second;
  // One point (or all alike): the normal's own interval, with the 1.96 every other interval uses.
  if (lowest == highest) return {lowest - kZ95 * std::max(sd, 0.0), highest + kZ95 * std::max(sd, 0.0)};
  if (!(sd > 0)) {
    // Points: the nearest-rank quantiles, the smallest centre whose share reaches q (and, for the
    // upper end, the same from above), so that identical centres give exactly that centre.
    std::vector<double> sorted = centres;
    std::sort(sorted.begin(), sorted.end());
    const double n = static_cast<double>(sorted.size());
    const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(0.025 * n)));
    return {sorted[rank - 1], sorted[sorted.size() - rank]};
  }
  return {mixture_quantile(centres, sd, 0.025), mixture_quantile(centres, sd, 0.975)};
}

std::string parameters_part_text(const MetricPrediction& m) {
  char down[32], up[32];
  std::snprintf(down, sizeof down, "%.0f", 100 * (1 - std::exp(m.param_lower_log)));
  std::snprintf(up, sizeof up, "%.0f", 100 * (std::exp(m.param_upper_log) - 1));
  return std::string(down) == up ? std::string("±") + up + "%" : std::string("-") + down + "%/+" + up + "%";
}

namespace {

// A figure kind's place in the tables below, which follow models::kFigureKinds (one entry each).
using PerKind = std::array<double, models::kFigureKinds.size()>;
std::optional<std::size_t> prior_kind_index(const std::string& kind) {
  for (std::size_t i = 0; i < models::kFigureKinds.size(); ++i)
    if (kind == models::kFigureKinds[i]) return i;
  return std::nullopt;
}

}  // namespace

double prior_model_error(const std::string& kind, const std::string& distance) {
  // Measured at f175034 on calibration/data/lab-2026-12-02/full, a recording the accuracy page
  // does not judge its lab sections on (docs/calibration.md, "The prior"); the RMS of
  // ln(model / measured) per figure kind, in the order of models::kFigureKinds.
  // Another depth and another workload: the lab section's method (fit one configuration at every
  // workload and the QD1 run of every other, predict the rest; --cv loo), its 116 held-out runs of
  // a configuration fitted at iodepth 1 predicted at iodepth 4-64, and its 64 of a fitted
  // configuration at another rw at the fitted depth.
  // A new combination of fitted values and another configuration: the knob split's method (fit
  // the baseline configuration and those one knob from it, predict the 13 configurations two or
  // more knobs away; --cv config): its 124 held-out runs of new combinations; for another
  // configuration its 24 held-out runs of one (cache=writeback, two vCPUs) with the 67 figures of
  // its leave-one-configuration-out folds, nearly all another configuration.
  static constexpr PerKind kCombination = {0.22, 0.23, 0.39, 0.37, 0.47};
  static constexpr PerKind kConfiguration = {0.37, 0.37, 0.55, 0.72, 1.04};
  static constexpr PerKind kDepth = {0.31, 0.32, 0.51, 0.73, 0.93};
  static constexpr PerKind kWorkload = {0.21, 0.21, 0.36, 0.30, 0.69};
  const PerKind& prior = distance == "new combination"    ? kCombination
                         : distance == "unmeasured setup" ? kConfiguration
                         : distance == "another workload" ? kWorkload
                                                          : kDepth;
  const auto i = prior_kind_index(kind);
  return i ? prior[*i] : 0;
}

double combination_share(const std::string& kind) {
  // The knob split on calibration/data/lab-2026-12-02/full (the recording of the priors above),
  // `calibrate --holdout <its 13 configurations> --cv config` at f175034: the 95th percentile
  // of the model-error sd its 124 held-out runs of new combinations needed (0.208, 0.216, 0.351,
  // 0.320, 0.483) over the term its leave-one-configuration-out folds gave, nearly all of them
  // another configuration (0.344, 0.340, 0.488, 0.603, 0.834). Per figure kind, in the order of
  // models::kFigureKinds.
  static constexpr PerKind kShare = {0.61, 0.63, 0.72, 0.53, 0.58};
  const auto i = prior_kind_index(kind);
  return i ? kShare[*i] : 1;
}

double model_error_for(const models::CalibrationUncertainty& c, const std::string& metric, const std::string& distance) {
  const std::string kind = models::figure_kind(metric);
  const auto find = [&](const std::map<std::string, double>& m) -> const double* {
    const auto it = m.find(kind);
    return it != m.end() ? &it->second : nullptr;
  };
  if (distance == "fitted setup")
    if (const double* v = find(c.model_error_fitted_log_sd)) return *v;
  if (distance == "another workload") {
    if (const double* v = find(c.model_error_workload_log_sd)) return *v;
    // A table written before the workload term existed used model_error for this distance.
    if (c.model_error_workload_log_sd.empty())
      if (const double* v = find(c.model_error_log_sd)) return *v;
    return prior_model_error(kind, distance);
  }
  if (distance == "new combination")
    if (const double* v = find(c.model_error_combination_log_sd)) return *v;
  if (distance == "another depth") {
    if (const double* v = find(c.model_error_depth_log_sd)) return *v;
    // A table written before the depth term existed: the prior measured at this distance.
    return prior_model_error(kind, distance);
  }
  if (const double* v = find(c.model_error_log_sd)) return *v;
  return prior_model_error(kind, distance);
}

std::string configuration_signature(const std::string& signature) {
  // The workload's fields of setup_signature (models/scenario.cc): what fio ran, not where.
  std::string out;
  std::size_t at = 0;
  while (at <= signature.size()) {
    const auto end = std::min(signature.find(';', at), signature.size());
    const std::string field = signature.substr(at, end - at);
    const std::string name = field.substr(0, field.find('='));
    static const char* const kWorkload[] = {"rw", "rwmixread", "bs", "ioengine", "iodepth", "numjobs", "rate_iops"};
    if (std::find(std::begin(kWorkload), std::end(kWorkload), name) == std::end(kWorkload))
      out += (out.empty() ? "" : ";") + field;
    at = end + 1;
  }
  return out;
}

namespace {

// A configuration signature's fields (key=value), the guests beside it (co_running=..., which
// holds ';' of its own) as one.
std::vector<std::string> configuration_fields(const std::string& config) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < config.size()) {
    if (config.compare(at, 11, "co_running=") == 0) {
      out.push_back(config.substr(at));
      break;
    }
    const auto end = std::min(config.find(';', at), config.size());
    out.push_back(config.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The value of field `name` among a signature's fields (configuration_fields: not one of the
// guests' beside it), or none.
std::optional<std::string> field_value(const std::vector<std::string>& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.rfind(name + "=", 0) == 0) return f.substr(name.size() + 1);
  return std::nullopt;
}

}  // namespace

std::string distance_between(const std::string& signature, const std::vector<std::string>& fitted_signatures) {
  if (std::find(fitted_signatures.begin(), fitted_signatures.end(), signature) != fitted_signatures.end()) return "fitted setup";
  const std::string config = configuration_signature(signature);
  // A field a signature leaves out (accel under KVM, a device figure the run did not set) has its
  // default value: it stands as "key=" plus a mark no written value has.
  const auto key_of = [](const std::string& field) { return field.substr(0, field.find('=')); };
  const std::string kUnwritten = "=\x01";
  // The load: iodepth and jobs set how deep every queue of the path runs, so a fitted run of this
  // configuration at another depth measured other queues; rw, mix, block size and engine it did
  // not change. The guests beside it (co_running=...) are one field, their depths not the run's.
  const auto load_of = [](const std::string& sig) {
    const std::vector<std::string> fields = configuration_fields(sig);
    return std::make_pair(field_value(fields, "iodepth"), field_value(fields, "numjobs"));
  };
  const auto load = load_of(signature);
  std::vector<std::vector<std::string>> fitted_fields;
  std::set<std::string> keys;
  bool same_configuration = false;
  for (const auto& f : fitted_signatures) {
    const std::string fitted = configuration_signature(f);
    if (fitted == config) {
      if (load_of(f) == load) return "another workload";
      same_configuration = true;
    }
    fitted_fields.push_back(configuration_fields(fitted));
    for (const auto& field : fitted_fields.back()) keys.insert(key_of(field));
  }
  // This configuration fitted at other depths or jobs only: every queue of the path runs at
  // another length than any fitted run of it measured (another depth).
  if (same_configuration) return "another depth";
  std::vector<std::string> target = configuration_fields(config);
  for (const auto& field : target) keys.insert(key_of(field));
  const auto complete = [&](std::vector<std::string> fields) {
    std::set<std::string> have;
    for (const auto& field : fields) have.insert(key_of(field));
    for (const auto& k : keys)
      if (!have.count(k)) fields.push_back(k + kUnwritten);
    return fields;
  };
  std::vector<std::string> seen;
  for (const auto& fields : fitted_fields) {
    // A null device has no AIO engine and no host page cache (QEMU's null-co is no file): its
    // aio= and cache= measured nothing of either.
    const bool null_device = std::find(fields.begin(), fields.end(), "backend=null") != fields.end();
    for (const auto& field : complete(fields))
      if (!null_device || (field.rfind("aio=", 0) != 0 && field.rfind("cache=", 0) != 0)) seen.push_back(field);
  }
  std::sort(seen.begin(), seen.end());
  for (const auto& field : complete(target))
    if (!std::binary_search(seen.begin(), seen.end(), field)) return "unmeasured setup";
  return "new combination";
}

std::string setup_distance(const models::IoScenario& s) {
  return distance_between(models::setup_signature(s), s.calibration.fitted_setups);
}

std::string shared_setting_note(const std::string& signature, const std::vector<std::string>& fitted_signatures) {
  if (fitted_signatures.empty()) return "";
  std::vector<std::vector<std::string>> fitted;
  for (const auto& f : fitted_signatures) fitted.push_back(configuration_fields(configuration_signature(f)));
  const std::vector<std::string> config = configuration_fields(configuration_signature(signature));
  std::string settings, sets;
  // The signature's configuration fields and the scenario keys that set them (not the
  // accelerator: a KVM prediction from TCG runs is meant, and has a note of its own).
  for (const auto& entry : models::setup_signature_fields()) {
    // Not a structured binding: clang 15 (the fuzz build) cannot capture one in a lambda.
    const std::string field = entry.first, key = entry.second;
    if (key == "host.accel") continue;
    const std::optional<std::string> first = field_value(fitted.front(), field);
    if (!first) continue;
    const bool shared = std::all_of(fitted.begin(), fitted.end(),
                                    [&](const std::vector<std::string>& f) { return field_value(f, field) == first; });
    const std::optional<std::string> own = field_value(config, field);
    if (!shared || own == first) continue;
    settings += std::string(settings.empty() ? "" : ", ") + key + " = " + *first + " where this setup has " +
                (own ? *own : std::string("its default"));
    sets += std::string(sets.empty() ? "" : " ") + "--set " + key + "=" + *first;
  }
  if (settings.empty()) return "";
  return "every fitted run had " + settings + ", so the interval takes the term for another configuration; " + sets +
         " predicts the setup that was measured";
}

namespace {

// The edits among `overrides` that change a configuration, joined ("" for none): those `stays`
// holds (the signature sees them, or they are fitted) apply on both sides; the others together
// are tested by what they do to `figures` (MVA figures of the scenario). Whatever the MVA cannot
// tell apart (it throws, or the figures are none) is taken as a change: the wider interval.
std::string changed_by(const models::ScenarioSource& file, const std::vector<std::string>& overrides,
                       const std::function<bool(const std::string&)>& stays,
                       const std::function<std::vector<double>(const models::IoScenario&)>& figures) {
  models::ScenarioSource without = file;
  std::vector<std::string> others;
  for (const std::string& o : overrides) {
    if (stays(o.substr(0, o.find('='))))
      without.set(o);
    else
      others.push_back(o);
  }
  if (others.empty()) return "";
  models::ScenarioSource with = without;
  for (const std::string& o : others) with.set(o);
  std::string joined;
  for (const std::string& o : others) joined += (joined.empty() ? "" : ", ") + o;
  try {
    const std::vector<double> a = figures(without.scenario()), b = figures(with.scenario());
    if (!a.empty() && a == b) return "";
  } catch (const std::exception&) {
  }
  return joined;
}

bool in_signature(const std::string& key) {
  const auto& keys = models::setup_signature_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

std::string configuration_changed_by(const models::ScenarioSource& file, const std::vector<std::string>& overrides,
                                     const std::vector<std::string>& fitted_keys) {
  // Overrides the signature sees (the workload, the keys it holds), the run's own length and the
  // fitted keys (held by --set, a case of their own) stay on both sides; each other one is
  // tested by what it does: the MVA of the scenario with and without it.
  return changed_by(
      file, overrides,
      [&](const std::string& key) {
        return key.rfind("workload.", 0) == 0 || key.rfind("run.", 0) == 0 || in_signature(key) ||
               std::find(fitted_keys.begin(), fitted_keys.end(), key) != fitted_keys.end();
      },
      [](const models::IoScenario& sc) -> std::vector<double> {
        const models::IoMvaResult r = models::solve_io_mva(sc);
        return {r.iops, r.lat_mean_ns, r.slat_mean_ns};
      });
}

std::string configuration_changed_for_profile(const models::ScenarioSource& file, const std::vector<std::string>& overrides,
                                              const std::vector<std::string>& fitted_keys, const std::string& vm) {
  // As configuration_changed_by, for the profile `vm`: what its own signature sees stays on both
  // sides (its workload and signature keys, as vm.<vm>.<key> or for every VM, its device's
  // signature keys as backend.<its device>.<key>), and each other edit is tested by what it does
  // to this profile's MVA figures, beside the others.
  std::string device;
  try {
    for (const auto& p : file.scenario().profiles)
      if (p.name == vm) device = p.backend;
  } catch (const std::exception&) {
  }
  const std::string mine = "vm." + vm + ".", its_device = "backend." + device + ".";
  const auto stays = [&](const std::string& key) {
    bool seen = key.rfind("workload.", 0) == 0 || key.rfind("run.", 0) == 0 || in_signature(key) ||
                std::find(fitted_keys.begin(), fitted_keys.end(), key) != fitted_keys.end();
    if (!seen && key.rfind(mine, 0) == 0) {
      const std::string rest = key.substr(mine.size());
      seen = rest.rfind("workload.", 0) == 0 || in_signature(rest);
    }
    if (!seen && !device.empty() && key.rfind(its_device, 0) == 0)
      seen = in_signature("backend." + key.substr(its_device.size()));
    return seen;
  };
  // This profile's one-VM figures: by the multi-class MVA where several profiles run.
  const auto figures = [&](const models::IoScenario& sc) -> std::vector<double> {
    int running = 0;
    for (const auto& p : sc.profiles) running += p.count > 0 ? 1 : 0;
    if (running > 1) {
      const models::IoMvaClassesResult r = models::solve_io_mva_classes(sc);
      for (const auto& p : r.profiles)
        if (p.name == vm) return {p.figures.iops, p.figures.lat_mean_ns, p.figures.slat_mean_ns};
    } else {
      for (const auto& p : sc.profiles)
        if (p.name == vm && p.count > 0) {
          const models::IoMvaResult r = models::solve_io_mva(sc);
          return {r.iops, r.lat_mean_ns, r.slat_mean_ns};
        }
    }
    return {};  // not running
  };
  return changed_by(file, overrides, stays, figures);
}

std::vector<std::vector<double>> correlation_factor(const std::vector<std::vector<double>>& corr) {
  const auto n = static_cast<Eigen::Index>(corr.size());
  Eigen::MatrixXd c(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (static_cast<Eigen::Index>(corr[static_cast<std::size_t>(i)].size()) != n)
      throw std::invalid_argument("correlation matrix is not square");
    for (Eigen::Index j = 0; j < n; ++j) c(i, j) = corr[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  }
  Eigen::MatrixXd l;
  const Eigen::LLT<Eigen::MatrixXd> llt(c);
  bool ok = llt.info() == Eigen::Success;
  if (ok) {
    l = llt.matrixL();
    ok = l.allFinite();
  }
  if (!ok) {
    // Not positive definite (a correlation fitted from few runs, or rounded when written): the
    // nearest positive semi-definite matrix by clamping negative eigenvalues to 0, with its rows
    // rescaled so that every ln(value) keeps its own log_sd.
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(c);
    if (eig.info() != Eigen::Success) throw std::runtime_error("calibration.log_corr: eigen-decomposition failed");
    const Eigen::VectorXd d = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
    l = eig.eigenvectors() * d.asDiagonal();
    for (Eigen::Index i = 0; i < n; ++i) {
      const double norm = l.row(i).norm();
      if (norm > 0) l.row(i) /= norm;
    }
  }
  std::vector<std::vector<double>> out(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n)));
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = l(i, j);
  return out;
}

std::vector<std::vector<std::string>> parameter_draws(const models::IoScenario& s) {
  const models::CalibrationUncertainty& c = s.calibration;
  std::vector<std::vector<std::string>> draws;
  if (!c.present() || c.draws <= 0) return draws;
  const std::size_t n = c.keys.size();
  const auto l = correlation_factor(c.log_corr);
  sim::Rng rng = sim::Rng::for_stream(s.run.seed, kNoReplication, kDrawStream);
  std::vector<double> z(n);
  for (int d = 0; d < c.draws; ++d) {
    // z for every key, fixed ones included, so that fixing a key leaves the others' draws alone
    // (and dropping components of x = L z gives exactly the marginal of the others).
    for (auto& zi : z) zi = sim::standard_normal(rng);
    // Draws take their centres in turn from the estimate and each mixture component (modes).
    const std::vector<double>& centre = c.centre(c.component_of_draw(d, c.draws));
    std::vector<std::string> overrides;
    for (std::size_t k = 0; k < n; ++k) {
      if (c.fixed_by_set[k]) continue;
      double x = 0;
      for (std::size_t j = 0; j < n; ++j) x += l[k][j] * z[j];
      // A wide log-normal can draw beyond what the key accepts (a dispersion above 10): such a
      // draw stands at the limit, as the fit itself would have.
      overrides.push_back(c.keys[k] + "=" + number(models::clamp_to_key_range(c.keys[k], centre[k] * std::exp(c.log_sd[k] * x))));
    }
    draws.push_back(std::move(overrides));
  }
  return draws;
}

std::uint64_t draw_seed(std::uint64_t nominal_seed, int /*draw*/) { return nominal_seed; }

std::vector<std::string> prediction_metric_names(const models::IoRunReport& r) {
  std::vector<std::string> names;
  const bool read = r.get("read.iops").mean > 0, write = r.get("write.iops").mean > 0;
  for (const char* d : {"read", "write"}) {
    if (std::string(d) == "read" ? !read : !write) continue;
    for (const char* m : {"iops", "bw_kib", "lat_mean_us", "clat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99.9_us"})
      names.push_back(std::string(d) + "." + m);
  }
  if (read && write) names.emplace_back("total.iops");
  return names;
}

namespace {

// The figures of one VM or job whose metric names begin with `head` ("", "vm.db.", "reader.",
// "vm.db.reader."): per active direction, then total.iops when both are.
void add_figures(std::vector<std::string>& names, const models::IoRunReport& r, const std::string& head) {
  const auto positive = [&](const std::string& n) {
    try {
      return models::io_metric(r, n).mean > 0;
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  const bool read = positive(head + "read.iops"), write = positive(head + "write.iops");
  for (const char* d : {"read", "write"}) {
    if (std::string(d) == "read" ? !read : !write) continue;
    for (const char* m : {"iops", "bw_kib", "lat_mean_us", "clat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99.9_us"})
      names.push_back(head + d + "." + m);
  }
  if (read && write) names.push_back(head + "total.iops");
}

// The [[vm]] profile a prediction metric belongs to ("" for the host's and a single VM's).
std::string vm_of(const std::string& metric) {
  if (metric.rfind("vm.", 0) != 0) return "";
  return metric.substr(3, metric.find('.', 3) - 3);
}

const char* const kPriorSource =
    "the documented prior (docs/calibration.md): this calibration carries no model-error terms of its own";

}  // namespace

std::vector<std::string> prediction_metric_names(const models::IoScenario& s, const models::IoRunReport& r) {
  std::vector<std::string> names;
  const auto jobs = [&](const models::IoScenario& v, const std::string& head) {
    for (const auto& j : v.jobs) add_figures(names, r, head + j.name + ".");
  };
  if (!s.multi_vm()) {
    add_figures(names, r, "");
    jobs(s, "");
  } else {
    for (const auto& p : s.profiles) {
      if (p.count == 0) continue;
      add_figures(names, r, "vm." + p.name + ".");
      jobs(p.scenario, "vm." + p.name + ".");
    }
  }
  if (s.multi_vm() || s.vms > 1)
    for (const char* h : {"host.total.iops", "host.total.lat_mean_us"})
      if (r.get("host.total.iops").mean > 0) names.emplace_back(h);
  return names;
}

const MetricPrediction* Prediction::find(const std::string& metric) const {
  for (const auto& m : metrics)
    if (m.name == metric) return &m;
  if (first_vm.empty() || metric.rfind("vm.", 0) == 0 || metric.rfind("host.", 0) == 0) return nullptr;
  return find("vm." + first_vm + "." + metric);
}

Prediction predict(const std::string& scenario_path, const std::vector<std::string>& overrides, const models::IoScenario& nominal,
                   const models::IoRunReport& nominal_report, int threads, const Progress& progress) {
  Prediction p;
  const models::CalibrationUncertainty& c = nominal.calibration;
  if (!c.present() || c.draws <= 0) return p;
  if (c.draws < 2) throw std::invalid_argument("a prediction needs at least 2 parameter draws");
  p.draws = c.draws;
  p.source = c.source;
  for (std::size_t k = 0; k < c.keys.size(); ++k) (c.fixed_by_set[k] ? p.fixed_by_set : p.sampled).push_back(c.keys[k]);
  p.overrides = parameter_draws(nominal);
  // The file parsed once: the distance check and every draw edit it in memory.
  const models::ScenarioSource file(scenario_path);
  p.distance = setup_distance(nominal);
  if (p.distance == "unmeasured setup") p.distance_note = shared_setting_note(models::setup_signature(nominal), c.fitted_setups);
  if (p.distance != "unmeasured setup") {
    const std::string changed = configuration_changed_by(file, overrides, c.keys);
    if (!changed.empty()) {
      p.distance = "unmeasured setup";
      p.distance_note = "--set " + changed +
                        " changes the configuration in a way the fitted setups do not record, so the interval takes the "
                        "term for another configuration";
    }
  }
  // A fit on TCG runs predicted under KVM: say what carries over, since the figures move a lot.
  const bool fitted_on_tcg =
      !c.fitted_setups.empty() && std::all_of(c.fitted_setups.begin(), c.fitted_setups.end(),
                                              [](const std::string& f) { return f.find(";accel=tcg") != std::string::npos; });
  if (p.distance_note.empty() && fitted_on_tcg && nominal.host.accel == models::Accel::kvm)
    p.distance_note =
        "fitted on TCG runs, predicted under KVM: the guest's vCPU costs are KVM's (the documented defaults times "
        "guest.cpu_scale " +
        number(nominal.guest.cpu_scale) +
        "), host.tcg_cpu_scale, host.tcg_irq_us and host.tcg_wake_us do not apply; the fitted QEMU and device costs carry over";
  p.model_error_source = c.model_error_source.empty() && c.model_error_log_sd.empty() ? kPriorSource : c.model_error_source;
  // A file of [[vm]] tables: each running profile's own distance from what its base measured, and
  // its own model-error terms (the top-level fields are the first's).
  std::vector<const models::CalibrationUncertainty*> profile_calibration;
  static const models::CalibrationUncertainty kNoCalibration;
  if (nominal.multi_vm()) {
    for (const auto& vp : nominal.profiles) {
      if (vp.count == 0) continue;
      const models::CalibrationUncertainty& pc = vp.scenario.calibration;
      ProfileDistance d;
      d.vm = vp.name;
      d.calibrated = pc.present();
      if (d.calibrated) {
        d.distance = setup_distance(vp.scenario);
        if (d.distance != "unmeasured setup") {
          const std::string changed = configuration_changed_for_profile(file, overrides, c.keys, vp.name);
          if (!changed.empty()) {
            d.distance = "unmeasured setup";
            d.distance_note = "--set " + changed + " changes vm." + vp.name +
                              "'s configuration or its neighbours' load in a way its fitted setups do not record, so its "
                              "intervals take the term for another configuration";
          }
        }
        d.model_error_source =
            pc.model_error_source.empty() && pc.model_error_log_sd.empty() ? kPriorSource : pc.model_error_source;
      } else {
        d.distance = "unmeasured setup";
        d.distance_note = "vm." + vp.name +
                          " has no calibrated base: its figures take the model error of an unmeasured setup, and move with the "
                          "draws only through what it shares with calibrated profiles (a device, host.cores)";
        d.model_error_source = "the documented prior (docs/calibration.md)";
      }
      p.profiles.push_back(d);
      profile_calibration.push_back(d.calibrated ? &pc : &kNoCalibration);
    }
    if (!p.profiles.empty()) {
      p.first_vm = p.profiles.front().vm;
      p.distance = p.profiles.front().distance;
      p.distance_note = p.profiles.front().distance_note;
      p.model_error_source = p.profiles.front().model_error_source;
    }
  }
  // The model-error term of a metric: its profile's; for the host's aggregate the running
  // profiles' terms weighted by their share of the host's I/Os (all their VMs), as if their
  // errors moved together: a profile that adds a few I/Os adds little of its error.
  std::vector<double> io_share;
  for (const auto& vp : nominal.profiles)
    if (vp.count > 0) {
      double iops = 0;
      try {
        iops = models::io_metric(nominal_report, "vm." + vp.name + ".total.iops").mean * vp.count;
      } catch (const std::invalid_argument&) {
      }
      io_share.push_back(std::max(0.0, iops));
    }
  double all_iops = 0;
  for (double x : io_share) all_iops += x;
  const auto model_sd = [&](const std::string& name) {
    if (p.profiles.empty()) return model_error_for(c, name, p.distance);
    const std::string vm = vm_of(name);
    double sd = 0;
    for (std::size_t i = 0; i < p.profiles.size(); ++i) {
      const double term = model_error_for(*profile_calibration[i], name, p.profiles[i].distance);
      if (p.profiles[i].vm == vm) return term;
      if (vm.empty()) sd += (all_iops > 0 ? io_share[i] / all_iops : 1.0 / static_cast<double>(p.profiles.size())) * term;
    }
    return sd;
  };
  const std::vector<std::string> names = prediction_metric_names(nominal, nominal_report);

  const double missing = std::numeric_limits<double>::quiet_NaN();
  std::mutex progress_mutex;
  int done = 0;
  models::ScenarioSource source = file;  // with the command's overrides
  for (const std::string& o : overrides) source.set(o);
  // Task `draws` is the estimate itself, on the same random numbers: the reference each draw's
  // shift is taken from (the nominal's mean spans all its replications, a draw only the first).
  const auto runs = sim::run_replications(p.draws + 1, threads, [&](std::uint64_t d) {
    static const std::vector<std::string> kNone;
    const bool reference = d == static_cast<std::uint64_t>(p.draws);
    const auto& mine = reference ? kNone : p.overrides[static_cast<std::size_t>(d)];
    models::IoScenario s;
    try {
      models::ScenarioSource drawn_source = source;
      for (const std::string& o : mine) drawn_source.set(o);
      s = drawn_source.scenario();
    } catch (const models::ConfigError& e) {
      std::string drawn;
      for (const auto& o : mine) drawn += (drawn.empty() ? "" : ", ") + o;
      throw models::ConfigError("parameter draw " + std::to_string(d) + " (" + drawn + "): " + e.what());
    }
    s.run.seed = draw_seed(nominal.run.seed, static_cast<int>(d));
    s.run.replications = 1;
    s.workload.ios = nominal.workload.ios;
    s.workload.runtime_ns = nominal.workload.runtime_ns;
    s.workload.ramp_time_ns = nominal.workload.ramp_time_ns;
    const models::IoRunReport r = models::simulate_io(s, 1);
    sim::Metrics m;
    for (const auto& name : names) {
      double v = missing;
      try {
        v = models::io_metric(r, name).mean;
      } catch (const std::invalid_argument&) {
      }
      m.add(name, v);
    }
    if (progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      progress(++done, p.draws + 1);
    }
    return m;
  });

  for (std::size_t i = 0; i < names.size(); ++i) {
    const sim::Interval nominal_value = models::io_metric(nominal_report, names[i]);
    if (!(nominal_value.mean > 0) || !std::isfinite(nominal_value.mean) || !std::isfinite(nominal_value.half_width)) continue;
    std::vector<double> logs;
    for (const auto& run : runs) {
      const double v = run.values[i].second;
      if (!(v > 0) || !std::isfinite(v)) break;
      logs.push_back(std::log(v));
    }
    if (logs.size() != runs.size() || logs.size() < 3) continue;
    const double reference = logs.back();
    logs.pop_back();
    std::vector<double> shifts;
    for (double l : logs) shifts.push_back(l - reference);
    MetricPrediction mp;
    mp.name = names[i];
    mp.vm = vm_of(names[i]);
    mp.mean = nominal_value.mean;
    mp.sim_half_width = nominal_value.half_width;
    mp.param_sd_rel = sample_sd(logs);
    mp.model_sd_rel = model_sd(names[i]);
    const double centre = std::log(mp.mean);
    // The parameters' part alone (the draws' own quantiles), then the whole interval: each draw
    // widened by the simulation's and the model's spread.
    const auto param = mixture_interval95(shifts, 0);
    mp.param_lower_log = std::min(0.0, param.first);
    mp.param_upper_log = std::max(0.0, param.second);
    const double sim_sd = mp.sim_half_width / mp.mean / kZ95;
    std::vector<double> centres;
    for (double sh : shifts) centres.push_back(centre + sh);
    const auto whole = mixture_interval95(centres, std::hypot(sim_sd, mp.model_sd_rel));
    mp.lower = std::exp(whole.first);
    mp.upper = std::exp(whole.second);
    const double spread = std::hypot(sim_sd, mp.model_sd_rel);
    const auto range = std::minmax_element(centres.begin(), centres.end());
    mp.median = *range.first == *range.second ? mp.mean : std::exp(mixture_quantile(centres, std::max(spread, 1e-12), 0.5));
    const double a = 0.5 * (mp.param_upper_log - mp.param_lower_log), b = mp.sim_half_width / mp.mean, m = kZ95 * mp.model_sd_rel;
    const double h2 = a * a + b * b + m * m;
    mp.param_share = h2 > 0 ? a * a / h2 : 0;
    p.metrics.push_back(mp);
  }
  return p;
}

}  // namespace vqsim::predict
