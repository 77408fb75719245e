#include "calibration/predict/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "models/config.h"
#include "models/io_metrics.h"
#include "sim/replications.h"
#include "sim/student_t.h"

namespace vqsim::predict {

namespace {

constexpr double kZ95 = 1.96;  // as the prediction intervals (prediction.h) use it
const double kMissing = std::numeric_limits<double>::quiet_NaN();

bool higher_is_better(const std::string& metric) {
  const std::string m = metric.substr(metric.rfind('.') + 1);  // read.iops, host.total.iops, vm.db.read.iops
  return m == "iops" || m == "bw_kib";
}

double value_or_missing(const models::IoRunReport& r, const std::string& name) {
  try {
    const double v = models::io_metric(r, name, true).mean;
    return std::isfinite(v) ? v : kMissing;
  } catch (const std::invalid_argument&) {
    return kMissing;
  }
}

// Each replication of a run as a report of its own, so that derived metrics (total.iops, the
// percentiles in µs) come out of io_metric exactly as for the whole run.
std::vector<models::IoRunReport> per_replication(const models::IoRunReport& r) {
  std::vector<models::IoRunReport> out;
  for (const sim::Metrics& m : r.replications) {
    models::IoRunReport one;
    one.summary = sim::summarize({m});
    out.push_back(std::move(one));
  }
  return out;
}

bool positive(double v) { return v > 0 && std::isfinite(v); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::vector<std::string> split_settings(const std::string& text) {
  // Split at the commas outside quotes, braces and brackets, so that a value such as
  // backend.service = {dist="lognormal", median="18us"} stays whole.
  std::vector<std::string> pieces;
  std::string piece;
  int depth = 0;
  char quote = 0;
  for (char ch : text) {
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if ((ch == '}' || ch == ']') && depth > 0) {
      --depth;
    } else if (ch == ',' && depth == 0) {
      pieces.push_back(piece);
      piece.clear();
      continue;
    }
    piece += ch;
  }
  pieces.push_back(piece);
  std::vector<std::string> out;
  for (std::string& p : pieces) {
    const auto first = p.find_first_not_of(" \t");
    const auto last = p.find_last_not_of(" \t");
    p = first == std::string::npos ? "" : p.substr(first, last - first + 1);
    const auto eq = p.find('=');
    if (p.empty() || eq == 0)
      throw std::invalid_argument("--vs '" + text +
                                  "': expected KEY=VALUE[,KEY=VALUE...], e.g. --vs host.aio=io_uring,host.iothreads=2");
    if (eq == std::string::npos)
      throw std::invalid_argument("--vs '" + text + "': '" + p + "' is not KEY=VALUE, e.g. --vs host.aio=io_uring");
    out.push_back(p);
  }
  return out;
}

models::IoScenario load_alternative(const std::string& path, const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& vs) {
  std::vector<std::string> all = overrides;
  all.insert(all.end(), vs.begin(), vs.end());
  try {
    return models::load_io_scenario(path, all);
  } catch (const models::ConfigError& e) {
    // Each error names the --vs it came from; one about a key of that --vs is not "(from --set)".
    std::vector<std::string> lines;
    for (std::string line : e.messages()) {
      for (const auto& kv : vs) {
        const std::string prefix = "(from --set): " + kv.substr(0, kv.find('=')) + ":";
        if (line.rfind(prefix, 0) == 0) line.erase(0, std::string("(from --set): ").size());
      }
      lines.push_back("--vs " + joined(vs) + ": " + line);
    }
    throw models::ConfigError(lines);
  }
}

CompareResult compare(const CompareOptions& o, const Progress& progress) {
  CompareResult res;
  auto finish = [&](models::IoScenario& s) {
    if (o.seed >= 0) s.run.seed = static_cast<std::uint64_t>(o.seed);
    if (o.replications > 0) s.run.replications = o.replications;
  };
  res.base = models::load_io_scenario(o.scenario_path, o.overrides);
  finish(res.base);
  std::vector<std::vector<std::string>> alt_overrides;
  for (const auto& vs : o.vs) {
    std::vector<std::string> all = o.overrides;
    all.insert(all.end(), vs.begin(), vs.end());
    Comparison c;
    c.vs = vs;
    c.alt = load_alternative(o.scenario_path, o.overrides, vs);
    finish(c.alt);
    alt_overrides.push_back(std::move(all));
    res.comparisons.push_back(std::move(c));
  }
  res.replications = res.base.run.replications;

  // The shared parameter draws: the base's, so that every side runs on the same parameter values
  // (an alternative that sets a calibrated key holds it at its own value: its overrides come last).
  models::IoScenario drawn = res.base;
  if (o.draws >= 0) drawn.calibration.draws = o.draws;
  const std::vector<std::vector<std::string>> draws = drawn.calibration.present() && drawn.calibration.draws > 0
                                                          ? parameter_draws(drawn)
                                                          : std::vector<std::vector<std::string>>{};
  if (draws.size() == 1) throw std::invalid_argument("a paired comparison over parameter draws needs at least 2 draws");
  res.draws = static_cast<int>(draws.size());

  const std::size_t sides = 1 + res.comparisons.size();
  const int total = static_cast<int>(sides) + res.draws * static_cast<int>(sides);
  int done = 0;
  std::mutex progress_mutex;
  auto tick = [&] {
    if (!progress) return;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    progress(++done, total);
  };

  res.base_report = models::simulate_io(res.base, o.threads);
  tick();
  for (auto& c : res.comparisons) {
    c.alt_report = models::simulate_io(c.alt, o.threads);
    tick();
  }

  std::vector<std::string> names = o.metrics;
  if (names.empty()) {
    // Every figure either side has: a direction only the alternative does is reported as one-sided.
    names = prediction_metric_names(res.base_report);
    for (const auto& c : res.comparisons)
      for (const auto& n : prediction_metric_names(c.alt_report))
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  } else {
    for (const auto& n : names)
      if (!models::is_io_metric(n)) throw std::invalid_argument("unknown metric '" + n + "'" + models::io_metric_suggestion(n));
  }

  // One replication per (draw, side) on the nominal's random numbers, as `vqsim run` predicts.
  std::vector<sim::Metrics> draw_runs;
  if (res.draws > 0) {
    // The file parsed once, with the command's overrides: each draw edits it in memory.
    models::ScenarioSource source(o.scenario_path);
    for (const std::string& ov : o.overrides) source.set(ov);
    draw_runs = sim::run_replications(res.draws * static_cast<int>(sides), o.threads, [&](std::uint64_t t) {
      const std::size_t k = t / sides, side = t % sides;
      models::IoScenario s;
      try {
        models::ScenarioSource edited = source;
        for (const std::string& d : draws[k]) edited.set(d);
        if (side > 0)
          for (const std::string& v : res.comparisons[side - 1].vs) edited.set(v);
        s = edited.scenario();
      } catch (const models::ConfigError& e) {
        throw models::ConfigError("parameter draw " + std::to_string(k) +
                                  (side > 0 ? " with --vs " + joined(res.comparisons[side - 1].vs) : "") + ": " + e.what());
      }
      s.run.seed = res.base.run.seed;
      s.run.replications = 1;
      const models::IoRunReport r = models::simulate_io(s, 1);
      sim::Metrics m;
      for (const auto& n : names) m.add(n, value_or_missing(r, n));
      tick();
      return m;
    });
  }
  auto draw_logs = [&](std::size_t side, std::size_t metric) {
    std::vector<double> logs;
    for (int k = 0; k < res.draws; ++k) {
      const double v = draw_runs[static_cast<std::size_t>(k) * sides + side].values[metric].second;
      if (!positive(v)) return std::vector<double>{};
      logs.push_back(std::log(v));
    }
    return logs;
  };

  const std::vector<models::IoRunReport> base_reps = per_replication(res.base_report);
  for (std::size_t j = 0; j < res.comparisons.size(); ++j) {
    Comparison& c = res.comparisons[j];
    const std::vector<models::IoRunReport> alt_reps = per_replication(c.alt_report);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& n = names[i];
      const double b = value_or_missing(res.base_report, n), a = value_or_missing(c.alt_report, n);
      if (!positive(b) || !positive(a)) {
        if (positive(b) || positive(a)) c.one_sided.push_back(n);
        continue;
      }
      // Simulation: the paired log ratios of the replications.
      std::vector<double> pairs;
      for (std::size_t r = 0; r < std::min(base_reps.size(), alt_reps.size()); ++r) {
        const double br = value_or_missing(base_reps[r], n), ar = value_or_missing(alt_reps[r], n);
        if (!positive(br) || !positive(ar)) {
          pairs.clear();
          break;
        }
        pairs.push_back(std::log(ar / br));
      }
      if (pairs.empty()) {
        c.one_sided.push_back(n);  // a replication without this figure: no paired interval to give
        continue;
      }
      MetricComparison mc;
      mc.name = n;
      mc.higher_is_better = higher_is_better(n);
      mc.base = b;
      mc.alt = a;
      mc.delta = a - b;
      mc.sim_half_width_log = sim::confidence_interval(pairs).half_width;
      // Parameters: the paired log ratios of the draws, and each side's own spread for the
      // unpaired figure.
      double base_param = 0, alt_param = 0;
      if (res.draws > 0) {
        const auto lb = draw_logs(0, i), la = draw_logs(j + 1, i);
        if (lb.empty() || la.empty()) {
          c.one_sided.push_back(n);
          continue;
        }
        std::vector<double> d(lb.size());
        for (std::size_t k = 0; k < d.size(); ++k) d[k] = la[k] - lb[k];
        mc.param_half_width_log = kZ95 * sample_sd(d);
        base_param = kZ95 * sample_sd(lb);
        alt_param = kZ95 * sample_sd(la);
      }
      const double centre = std::log(a / b);
      const double h = std::hypot(mc.sim_half_width_log, mc.param_half_width_log);
      mc.delta_rel = a == b ? 0.0 : std::exp(centre) - 1;
      mc.lower_rel = h == 0 ? mc.delta_rel : std::exp(centre - h) - 1;
      mc.upper_rel = h == 0 ? mc.delta_rel : std::exp(centre + h) - 1;
      // Each side's whole interval, as `vqsim run` gives it: with the model's own error at that
      // side's distance from the fitted setups (which a paired difference does not carry: no
      // calibration measures the model's error on a difference).
      const auto model_part = [&](const models::IoScenario& side) {
        return res.draws > 0 && side.calibration.present() ? kZ95 * model_error_for(side.calibration, n, setup_distance(side))
                                                           : 0.0;
      };
      const double hb =
          std::hypot(std::hypot(models::io_metric(res.base_report, n, true).half_width / b, base_param), model_part(res.base));
      const double ha =
          std::hypot(std::hypot(models::io_metric(c.alt_report, n, true).half_width / a, alt_param), model_part(c.alt));
      mc.unpaired_half_width_rel = std::hypot(hb, ha);
      const bool up = mc.lower_rel > 0, down = mc.upper_rel < 0;
      mc.verdict = !(up || down) ? "no significant difference" : (up == mc.higher_is_better ? "better" : "worse");
      c.metrics.push_back(mc);
    }
  }
  return res;
}

}  // namespace vqsim::predict
