#include "calibration/fit/fit_output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "models/io_metrics.h"  // kFigureKinds

namespace vqsim::fit {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Finite numbers only: a NaN or infinity never reaches a file (it would be a bug upstream).
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// A number for FIT.toml, which people read and `vqsim run` reads back: six significant digits
// (the fit is not finer than that) written as a plain decimal, 497304000 rather than
// 4.97304e+08, without trailing zeros; the exponent form only beyond 1e15 and below 1e-9.
std::string toml_num(double v) {
  v = finite(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  const double r = std::strtod(buf, nullptr);  // rounded to six digits
  if (r == 0) return "0";
  const int exp10 = static_cast<int>(std::floor(std::log10(std::fabs(r))));
  if (exp10 >= 15 || exp10 < -9) return buf;
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, 5 - exp10), r);
  std::string t = buf;
  if (t.find('.') != std::string::npos) {
    while (t.back() == '0') t.pop_back();
    if (t.back() == '.') t.pop_back();
  }
  return t;
}

// A fitted value as `vqsim run` must read it back: every digit the fit found (the shortest plain
// decimal that reads back to the same double). Rounded to six digits, a calibrated scenario
// simulates a slightly different point than the one the report's figures come from, and a
// tail percentile of a short run can move by several bins (the seeds' p99.9: 1,229 against
// 1,278 us); outside 1e-9 to 1e15, toml_num's form.
std::string toml_exact(double v) {
  v = finite(v);
  if (v == 0 || std::fabs(v) >= 1e15 || std::fabs(v) < 1e-9) return toml_num(v);
  char buf[400];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : toml_num(v);
}

std::size_t held_out_count(const CalibrationResult& r) {
  std::size_t n = 0;
  for (const auto& run : r.runs) n += run.held_out ? 1 : 0;
  return n;
}

std::string runs_count(std::size_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }
std::size_t fitted_count(const CalibrationResult& r) { return r.runs.size() - held_out_count(r); }
// ", 1 held out (predicted, not fitted)" or "".
std::string held_out_text(const CalibrationResult& r) {
  const std::size_t held = held_out_count(r);
  return held == 0 ? "" : ", " + std::to_string(held) + " held out (predicted, not fitted)";
}

// "x/ 1.04" style factors and similar one-number texts.
std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

nlohmann::ordered_json target_json(const TargetFit& t) {
  nlohmann::ordered_json j;
  j["metric"] = t.metric;
  j["kind"] = t.kind;
  j["measured"] = finite(t.measured);
  j["model"] = finite(t.fitted);
  // A prediction's point is its mixture's median; the simulation at the estimate beside it.
  if (t.at_estimate > 0) j["model_at_estimate"] = finite(t.at_estimate);
  j["error_rel"] = finite(t.error_rel());
  j["interval95"] = {finite(t.lower), finite(t.upper)};
  j["sim_half_width"] = finite(t.sim_half_width);
  j["within_bar"] = t.within_bar();
  // Where the measurement has replicates (or a standard deviation): their spread, which a
  // figure inside meets the bar by (within_bar) however far from the mean.
  if (t.spread_hi > 0) j["replicate_spread"] = {finite(t.spread_lo), finite(t.spread_hi)};
  return j;
}

}  // namespace

std::string fit_toml(const Dataset& d, const CalibrationResult& r, const std::string& fit_path, const std::string& command_line) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(fs::path(fit_path)).parent_path();
  const std::string base = fs::relative(fs::absolute(d.base_path), dir).generic_string();
  std::string t;
  t += "# Calibrated by vqsim: " + command_line + "\n";
  t += "# Fitted on " + runs_count(fitted_count(r)) + " of " + fs::path(d.manifest_path).filename().string() + held_out_text(r) +
       "; values with 95% intervals.\n";
  t += "# `vqsim run` on this file predicts with intervals that include this uncertainty ([calibration]).\n";
  t += "base = " + quoted(base) + "\n\n";
  for (const auto& p : r.params)
    t += p.key + " = " + toml_exact(p.estimate) + "  # 95%: " + toml_num(p.lower) + " to " + toml_num(p.upper) +
         (p.at_limit != 0 ? std::string(" (at the ") + (p.at_limit < 0 ? "lower" : "upper") + " limit of its range)"
          : p.identified  ? ""
                          : " (not identified: " + p.why_not + ")") +
         "; default " + toml_num(p.start) + "\n";
  t += "\n[calibration]\n";
  t += "params = [";
  for (std::size_t i = 0; i < r.params.size(); ++i) t += (i ? ", " : "") + quoted(r.params[i].key);
  // The parameter uncertainty as a mixture (docs/calibration.md, "FIT.toml"). With parameter
  // draws (calibrate.h CalibrationResult::draws) its components are the draws themselves, each a
  // point (log_sd 0) of equal weight, as `modes`; without, the estimate and the second
  // explanation with the linearized spread.
  const bool drawn = !r.draws.empty();
  const std::size_t n = r.params.size();
  t += "]\nlog_sd = [";
  for (std::size_t i = 0; i < n; ++i) t += (i ? ", " : "") + toml_num(drawn ? 0.0 : finite(r.params[i].log_sd));
  t += "]";
  if (drawn) t += "  # 0: each component (modes) is one parameter draw, a point; the draws are the spread";
  t += "\nlog_corr = [";
  for (long i = 0; i < static_cast<long>(n); ++i) {
    t += i ? ", [" : "[";
    for (long j = 0; j < static_cast<long>(n); ++j) {
      const double c = i == j ? 1.0 : drawn ? 0.0 : std::round(finite(r.correlation(i, j)) * 1e6) / 1e6;
      t += (j ? ", " : "") + toml_num(c);
    }
    t += "]";
  }
  t += "]\ndraws = " + std::to_string(drawn ? r.draws.size() : 24) + "\n";
  if (drawn) {
    // The estimate's draws first, then the second explanation's: a prediction with fewer draws
    // than components takes every k-th (stratified), so each optimum keeps its share.
    std::vector<std::size_t> order(r.draws.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const int ma = a < r.draw_mode.size() ? r.draw_mode[a] : 0, mb = b < r.draw_mode.size() ? r.draw_mode[b] : 0;
      return ma < mb;
    });
    t += "# the parameter draws (" + r.draws_method + "), each refitted from the optimum named\nmodes = [\n";
    for (std::size_t i : order) {
      t += "  [";
      for (std::size_t k = 0; k < n && k < r.draws[i].size(); ++k) t += (k ? ", " : "") + toml_num(finite(r.draws[i][k]));
      const bool alt = i < r.draw_mode.size() && r.draw_mode[i] == 1;
      t += "],  # draw " + std::to_string(i + 1) + ": " + (alt ? "the second explanation" : "the estimate") + "\n";
    }
    t += "]\nmode_weights = [";
    const double w = 1.0 / static_cast<double>(r.draws.size());
    for (std::size_t i = 0; i < r.draws.size(); ++i) t += (i ? ", " : "") + toml_num(w);
    t += "]  # each draw's weight; the estimate (the values above) has the rest, none\n";
    if (r.alternative) {
      int in_alt = 0;
      for (int m : r.draw_mode) in_alt += m == 1;
      t += "# a second explanation the data fit about as well (simulated cost " + toml_num(finite(r.alternative_cost)) + " vs " +
           toml_num(finite(r.best_cost)) + "), " + std::to_string(in_alt) + " of the " + std::to_string(r.draws.size()) +
           " draws are refits at it: [";
      for (std::size_t i = 0; i < r.alternative->size(); ++i) t += (i ? ", " : "") + toml_num(finite((*r.alternative)[i]));
      t += "]\n";
    }
  }
  // The model's own error (calibrate.h ModelError): what a prediction adds beyond the parameters.
  auto kinds = [&](const std::map<std::string, double>& m) {
    std::string out = "{ ";
    bool first = true;
    for (const char* kind : models::kFigureKinds) {
      const auto it = m.find(kind);
      if (it == m.end()) continue;
      out += (first ? "" : ", ") +
             (std::string(kind).find_first_of(" .") == std::string::npos ? std::string(kind) : quoted(kind)) + " = " +
             toml_num(finite(it->second));
      first = false;
    }
    return out + " }";
  };
  if (!r.model_error.unmeasured.empty()) {
    t += "model_error = " + kinds(r.model_error.unmeasured) + "  # sd of ln(model / measured), another configuration\n";
    if (!r.model_error.workload.empty())
      t += "model_error_workload = " + kinds(r.model_error.workload) + "  # another workload of a fitted configuration\n";
    if (!r.model_error.depth.empty())
      t += "model_error_depth = " + kinds(r.model_error.depth) + "  # a fitted configuration at another depth or jobs\n";
    if (!r.model_error.combination.empty())
      t += "model_error_combination = " + kinds(r.model_error.combination) +
           "  # another configuration, every value of it fitted in other combinations\n";
    if (!r.model_error.fitted.empty()) t += "model_error_fitted = " + kinds(r.model_error.fitted) + "  # the fitted setups\n";
    t += "model_error_source = " + quoted(r.model_error.source) + "\n";
  }
  if (r.alternative && !drawn) {
    t += "modes = [[";
    for (std::size_t i = 0; i < r.alternative->size(); ++i) t += (i ? ", " : "") + toml_num(finite((*r.alternative)[i]));
    t += "]]  # a second explanation the data fit about as well (simulated cost " + toml_num(finite(r.alternative_cost)) +
         " vs " + toml_num(finite(r.best_cost)) + ")\nmode_weights = [" + toml_num(finite(r.alternative_weight)) +
         "]  # each mode's share of the parameter draws (the estimate has the rest)\n";
  }
  if (!r.fitted_setups.empty()) {
    t += "fitted_setups = [";
    for (std::size_t i = 0; i < r.fitted_setups.size(); ++i) t += (i ? ",\n  " : "\n  ") + quoted(r.fitted_setups[i]);
    t += ",\n]\n";
  }
  const std::size_t held = held_out_count(r);
  t += "source = " +
       quoted(fs::path(d.manifest_path).filename().string() + ", " + runs_count(fitted_count(r)) +
              (held == 0 ? "" : " fitted, " + std::to_string(held) + " held out")) +
       "\n";
  return t;
}

nlohmann::ordered_json report_json(const Dataset& d, const CalibrationResult& r) {
  nlohmann::ordered_json j;
  j["manifest"] = d.manifest_path;
  j["base"] = d.base_path;
  j["converged"] = r.converged;
  j["stop_reason"] = r.stop_reason;
  j["rounds"] = r.rounds;
  j["trusted_log_radius"] =
      std::isinf(r.trusted_log_radius) ? nlohmann::ordered_json() : nlohmann::ordered_json(r.trusted_log_radius);
  j["mva_evaluations"] = r.mva_evaluations;
  j["des_runs"] = r.des_runs;
  j["seconds"] = std::round(r.seconds * 100) / 100;
  j["residual_variance"] = finite(r.residual_variance);
  j["params"] = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < r.params.size(); ++k) {
    const auto& p = r.params[k];
    nlohmann::ordered_json pj;
    pj["key"] = p.key;
    pj["default"] = finite(p.start);
    pj["estimate"] = finite(p.estimate);
    pj["interval95"] = {finite(p.lower), finite(p.upper)};
    pj["log_sd"] = finite(p.log_sd);
    pj["identified"] = p.identified;
    pj["why_not_identified"] = p.why_not;
    pj["at_limit"] = p.at_limit < 0 ? "lower" : p.at_limit > 0 ? "upper" : "";
    j["params"].push_back(pj);
  }
  j["correlation"] = nlohmann::ordered_json::array();
  for (long i = 0; i < r.correlation.rows(); ++i) {
    auto row = nlohmann::ordered_json::array();
    for (long c = 0; c < r.correlation.cols(); ++c) row.push_back(std::round(finite(r.correlation(i, c)) * 1e4) / 1e4);
    j["correlation"].push_back(row);
  }
  j["runs"] = nlohmann::ordered_json::array();
  for (const auto& run : r.runs) {
    nlohmann::ordered_json rj;
    rj["name"] = run.name;
    rj["role"] = run.held_out ? "held out (predicted)" : "fitted";
    if (run.held_out) rj["distance"] = run.distance;
    rj["bottleneck"] = run.bottleneck;
    rj["targets"] = nlohmann::ordered_json::array();
    for (const auto& t : run.targets) rj["targets"].push_back(target_json(t));
    j["runs"].push_back(rj);
  }
  j["notes"] = r.notes;
  j["fit_quality"] = fit_quality_line(d, r);
  j["model_error"] = {{"unmeasured", r.model_error.unmeasured},
                      {"workload", r.model_error.workload},
                      {"depth", r.model_error.depth},
                      {"combination", r.model_error.combination},
                      {"fitted", r.model_error.fitted},
                      {"source", r.model_error.source},
                      {"folds", r.model_error.folds}};
  j["fitted_setups"] = r.fitted_setups;
  if (r.alternative)
    j["alternative"] = {{"values", *r.alternative},
                        {"simulated_cost", finite(r.alternative_cost)},
                        {"estimate_cost", finite(r.best_cost)},
                        {"weight", finite(r.alternative_weight)}};
  if (!r.draws.empty()) {
    int alt = 0;
    for (int m : r.draw_mode) alt += m;
    j["parameter_draws"] = {{"method", r.draws_method}, {"count", r.draws.size()}, {"in_alternative", alt},
                            {"log_sd", r.draw_log_sd},  {"values", r.draws},       {"mode", r.draw_mode}};
  }
  if (r.cv) {
    nlohmann::ordered_json cj;
    cj["method"] = r.cv->method;
    cj["mape"] = nlohmann::ordered_json::object();
    for (const auto& [kind, m] : r.cv->mape) cj["mape"][kind] = finite(m);
    cj["worst"] = {{"run", r.cv->worst_run}, {"metric", r.cv->worst_metric}, {"error_abs_rel", finite(r.cv->worst_error)}};
    cj["folds"] = nlohmann::ordered_json::array();
    for (const auto& f : r.cv->folds) {
      nlohmann::ordered_json fj;
      fj["left_out"] = f.name;
      fj["distance"] = f.distance;
      fj["targets"] = nlohmann::ordered_json::array();
      for (const auto& t : f.targets) {
        nlohmann::ordered_json tj;
        tj["metric"] = t.metric;
        tj["kind"] = t.kind;
        tj["measured"] = finite(t.measured);
        tj["predicted"] = finite(t.fitted);
        tj["error_rel"] = finite(t.error_rel());
        tj["interval95"] = {finite(t.lower), finite(t.upper)};
        fj["targets"].push_back(tj);
      }
      cj["folds"].push_back(fj);
    }
    j["cross_validation"] = cj;
  }
  return j;
}

std::string fit_quality_line(const Dataset& d, const CalibrationResult& r) {
  int total = 0, beyond = 0;
  // Groups of fitted figures that tell a reader where the model misses: per group, how many of
  // its throughput and mean-latency figures are beyond their bar too fast or too slow.
  struct Group {
    const char* name;
    int figures = 0, fast = 0, slow = 0;
  };
  Group groups[] = {{"QD1 runs"}, {"runs at depth"}, {"reads"}, {"writes"}};
  bool cpu = false;     // a thread's CPU time among the figures (its bar is named only then)
  bool count = false;   // a count per I/O among them (likewise)
  bool spread = false;  // a figure with replicates or a standard deviation (likewise)
  for (std::size_t i = 0; i < r.runs.size() && i < d.runs.size(); ++i) {
    const RunFit& run = r.runs[i];
    if (run.held_out) continue;
    const auto& w = d.runs[i].scenario.workload;
    const bool qd1 = w.numjobs * w.effective_depth() == 1;
    for (const auto& t : run.targets) {
      ++total;
      cpu = cpu || t.kind == "cpu";
      count = count || t.kind == "count";
      spread = spread || t.spread_hi > 0;
      const bool out = !t.within_bar();
      beyond += out;
      if (t.kind != "throughput" && t.kind != "mean latency") continue;
      const bool fast = t.kind == "throughput" ? t.fitted > t.measured : t.fitted < t.measured;
      for (Group& g : groups) {
        const std::string name = g.name;
        const bool member = name == "QD1 runs"        ? qd1
                            : name == "runs at depth" ? !qd1
                                                      : t.metric.rfind(name == "reads" ? "read." : "write.", 0) == 0;
        if (!member) continue;
        ++g.figures;
        if (out) (fast ? g.fast : g.slow)++;
      }
    }
  }
  if (beyond == 0) return "";
  std::string line = "poor fit: " + std::to_string(beyond) + " of " + std::to_string(total) +
                     " fitted figures are beyond their bars (5% throughput and mean latency, 15% percentiles" +
                     (cpu ? ", 15% a thread's CPU per I/O" : "") + (count ? ", 15% a count per I/O" : "") +
                     (spread ? ", or inside their replicates' spread)" : ")");
  std::string pattern;
  for (const Group& g : groups) {
    // A pattern when most of a group's figures miss the same way (at least 2, and 80% of them).
    const int same = std::max(g.fast, g.slow);
    if (g.figures < 2 || same < 2 || same < 0.8 * g.figures) continue;
    pattern += (pattern.empty() ? "" : ", ") + std::string(g.name) + " " + (g.fast >= g.slow ? "too fast" : "too slow") + " (" +
               std::to_string(same) + " of " + std::to_string(g.figures) + " figures)";
  }
  return line + (pattern.empty() ? "; no pattern: the misses are spread over runs and directions" : "; " + pattern);
}

std::string report_text(const Dataset& d, const CalibrationResult& r) {
  std::string t;
  char buf[512];
  std::snprintf(buf, sizeof buf, "fitted %s of %s on %s%s: %s (%d round%s, %ld MVA solutions, %ld simulations, %.1f s)\n\n",
                runs_count(fitted_count(r)).c_str(), d.manifest_path.c_str(), d.base_path.c_str(), held_out_text(r).c_str(),
                r.converged ? "converged" : ("NOT CONVERGED: " + r.stop_reason).c_str(), r.rounds, r.rounds == 1 ? "" : "s",
                r.mva_evaluations, r.des_runs, r.seconds);
  t += buf;
  t += "parameters (95% intervals):\n";
  for (const auto& p : r.params) {
    std::snprintf(buf, sizeof buf, "  %-26s %10s  [%s .. %s]  default %s", p.key.c_str(), num(p.estimate).c_str(),
                  num(p.lower).c_str(), num(p.upper).c_str(), num(p.start).c_str());
    t += buf;
    t += p.at_limit != 0 ? (p.at_limit < 0 ? "  (at its lower limit)" : "  (at its upper limit)")
         : p.identified  ? ""
                         : "  (not identified: " + p.why_not + ")";
    t += "\n";
  }
  t += "\nruns: measured -> model (error) [95% interval]\n";
  for (const auto& run : r.runs) {
    t += "  " + run.name + (run.held_out ? "  (held out: predicted)" : "") + "\n";
    for (const auto& tg : run.targets) {
      std::snprintf(buf, sizeof buf, "    %-20s %12s -> %-12s %8s  [%s .. %s]%s\n", tg.metric.c_str(), num(tg.measured).c_str(),
                    num(tg.fitted).c_str(), pct(tg.error_rel()).c_str(), num(tg.lower).c_str(), num(tg.upper).c_str(),
                    !tg.within_bar()          ? "  beyond bar"
                    : tg.within_spread_only() ? "  within its replicates' spread"
                                              : "");
      t += buf;
    }
  }
  if (r.cv) {
    t += r.cv->method == "leave-one-out"
             ? "\nleave-one-out cross-validation (each run predicted by a fit without it):\n"
             : "\nleave-one-configuration-out cross-validation (each run predicted by a fit without its configuration's runs):\n";
    for (const auto& [kind, m] : r.cv->mape) {
      std::snprintf(buf, sizeof buf, "  MAPE %-13s %.1f%%\n", kind.c_str(), 100 * m);
      t += buf;
    }
    std::snprintf(buf, sizeof buf, "  worst: run '%s' %s, %.1f%% off\n", r.cv->worst_run.c_str(), r.cv->worst_metric.c_str(),
                  100 * r.cv->worst_error);
    t += buf;
  }
  if (!r.model_error.unmeasured.empty()) {
    // As the factor a 95% interval puts on a prediction for that reason alone.
    t += "\nthe model's own error (95%, added to every prediction's interval; from " + r.model_error.source + "):\n";
    for (const char* kind : models::kFigureKinds) {
      const auto u = r.model_error.unmeasured.find(kind);
      if (u == r.model_error.unmeasured.end()) continue;
      const auto f = r.model_error.fitted.find(kind);
      const auto w = r.model_error.workload.find(kind);
      const auto c = r.model_error.combination.find(kind);
      const auto dp = r.model_error.depth.find(kind);
      std::snprintf(
          buf, sizeof buf, "  %-13s x/ %.2f for another configuration%s%s%s%s\n", kind, std::exp(1.96 * u->second),
          c == r.model_error.combination.end()
              ? ""
              : printf_text(", x/ %.2f for a new combination of fitted values", std::exp(1.96 * c->second)).c_str(),
          dp == r.model_error.depth.end() ? "" : printf_text(", x/ %.2f for another depth", std::exp(1.96 * dp->second)).c_str(),
          w == r.model_error.workload.end() ? ""
                                            : printf_text(", x/ %.2f for another workload", std::exp(1.96 * w->second)).c_str(),
          f == r.model_error.fitted.end() ? ""
                                          : printf_text(", x/ %.2f for the fitted setups", std::exp(1.96 * f->second)).c_str());
      t += buf;
    }
  }
  if (!r.notes.empty()) {
    t += "\nnotes:\n";
    for (const auto& n : r.notes) t += "  - " + n + "\n";
  }
  if (const std::string q = fit_quality_line(d, r); !q.empty()) t += "\n" + q + "\n";
  return t;
}

}  // namespace vqsim::fit
