// Model envelope of `vqsim check --scenario`: where a measurement falls against the model's
// prediction for the same workload.
//
// For every Measured with IOPS or a mean latency: the scenario is loaded with the caller's
// overrides and then the Measured's setup keys (only keys the scenario loader knows; run-length
// keys workload.runtime, workload.ramp_time and workload.ios are left to the scenario and the
// caller, since they change only the noise of the answer, not its mean, and keep the check
// fast), simulated with the scenario's replications (at least 3), and the measured IOPS and mean
// latency are compared with the simulated figure:
//
//   s      = half_width x sqrt(n) / t(0.975, n-1)   replication-to-replication standard deviation
//   sigma  = s x sqrt(1 + 1/n)                       of one new run (prediction, not the mean)
//   PI95   = mean +- t(0.975, n-1) x sigma
//
// Rule "envelope":
//   info     inside PI95, or within 10% of the simulated mean when the interval is narrower than
//            that (the model's calibration error, not its simulation noise, dominates: 10% is the
//            tolerance a calibrated stage model is held to);
//   warning  outside both, but measured/simulated between 1/2 and 2;
//   error    off by more than 2x either way ("implausible for the model as calibrated").
// On a calibrated scenario (a [calibration] table) the interval is the whole prediction interval
// instead (calibration/predict: the model's own error, the parameters' draws and the simulation
// noise, docs/prediction.md): inside it is info; outside it a warning, and an error beyond 2x
// either way. On an uncalibrated one it is simulation noise only, and the evidence says so.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "calibration/predict/prediction.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "sim/student_t.h"

namespace vqsim::check {
namespace {

using detail::override_of;
using detail::scenario_keys;
using detail::strip;

std::string subject_of(const Measured& m) {
  std::string s = m.source;
  if (!m.job.empty()) s.append(": job '").append(m.job).append("'");
  if (!m.dir.empty()) s.append(" ").append(m.dir);
  return s;
}

struct Simulated {
  models::IoRunReport report;
  int replications = 0;
  std::string run_length;
  std::string error;               // the loader's or simulator's message when it could not be simulated
  predict::Prediction prediction;  // a calibrated scenario's, with the whole interval
};

std::string factor_text(double log_half) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "±%.0f%%", 100 * (std::exp(log_half) - 1));
  return buf;
}

}  // namespace

std::vector<Finding> check_envelope(const std::vector<Measured>& ms, const std::string& scenario,
                                    const std::vector<std::string>& overrides, int threads) {
  std::vector<Finding> out;
  // The scenario and the caller's overrides must load on their own: a bad --scenario or --set
  // is the caller's error (models::ConfigError propagates).
  (void)models::load_io_scenario(scenario, overrides);

  std::map<std::string, Simulated> cache;  // by the joined override list
  for (const auto& m : ms) {
    const bool has_iops = m.iops && *m.iops > 0;
    const std::optional<double> lat = m.lat_mean_us ? m.lat_mean_us : m.clat_mean_us;
    const bool has_lat = lat && *lat > 0;
    if (!has_iops && !has_lat) continue;
    if (m.dir != "read" && m.dir != "write" && m.dir != "mixed") continue;

    std::vector<std::string> set = overrides;
    std::vector<std::string> applied, ignored;
    // A bare-metal result on a scenario written for a VM: no QEMU, so no IOThreads (the loader
    // rejects guest.driver = none with host.iothreads > 0) unless the result says otherwise.
    if (const auto d = m.setup.find("guest.driver");
        d != m.setup.end() && strip(d->second) == "none" && !m.setup.count("host.iothreads")) {
      set.push_back("host.iothreads=0");
      applied.push_back(set.back());
    }
    for (const auto& [k, v] : m.setup) {
      if (k == "workload.runtime" || k == "workload.ramp_time" || k == "workload.ios") continue;
      if (!scenario_keys().count(k) || k.rfind("run.", 0) == 0) {
        ignored.push_back(k);
        continue;
      }
      set.push_back(override_of(k, v));
      applied.push_back(set.back());
    }
    std::string cache_key;
    for (const auto& s : set) cache_key.append(s).push_back('\n');
    auto it = cache.find(cache_key);
    if (it == cache.end()) {
      Simulated sim;
      try {
        models::IoScenario s = models::load_io_scenario(scenario, set);
        s.run.replications = std::max(3, s.run.replications);
        sim.replications = s.run.replications;
        sim.run_length = s.workload.runtime_ns > 0 ? detail::evidence_num(static_cast<double>(s.workload.runtime_ns) / 1e9) + " s"
                                                   : std::to_string(s.workload.ios) + " I/Os";
        sim.report = models::simulate_io(s, threads);
        if (s.calibration.present() && s.calibration.draws > 0)
          sim.prediction = predict::predict(scenario, set, s, sim.report, threads);
      } catch (const std::exception& e) {
        sim.error = e.what();
      }
      it = cache.emplace(cache_key, std::move(sim)).first;
    }
    const Simulated& sim = it->second;

    std::string setup_text = "scenario " + scenario;
    for (const auto& o : overrides) setup_text.append(" --set ").append(o);
    if (!applied.empty()) {
      setup_text.append("; from the result's setup:");
      for (const auto& a : applied) setup_text.append(" ").append(a);
    }
    if (!ignored.empty()) {
      setup_text.append("; not scenario keys, ignored:");
      for (const auto& k : ignored) setup_text.append(" ").append(k);
    }

    if (!sim.error.empty()) {
      Finding f;
      f.rule = "envelope";
      f.subject = subject_of(m);
      f.severity = Severity::info;
      f.evidence = "not simulated: " + sim.error + " (" + setup_text + ")";
      f.cause = "the result's setup does not fit the scenario; the envelope was not checked";
      out.push_back(std::move(f));
      continue;
    }

    const std::string dir = m.dir == "mixed" ? "total" : m.dir;
    struct Figure {
      std::string metric, label;
      double measured;
    };
    std::vector<Figure> figures;
    if (has_iops) figures.push_back({dir + ".iops", "IOPS", *m.iops});
    if (has_lat) {
      if (m.lat_mean_us)
        figures.push_back({dir + ".lat_mean_us", "mean latency (us)", *lat});
      else if (dir != "total")
        figures.push_back({dir + ".clat_mean_us", "mean completion latency (us)", *lat});
    }

    for (const auto& fig : figures) {
      sim::Interval iv;
      try {
        iv = models::io_metric(sim.report, fig.metric);
      } catch (const std::exception&) {
        continue;
      }
      Finding f;
      f.rule = "envelope";
      f.subject = subject_of(m);
      if (!(iv.mean > 0)) {
        f.severity = Severity::warning;
        f.evidence = "measured " + fig.label + " " + detail::evidence_num(fig.measured) + ", but the model predicts no " + dir +
                     " I/O for this setup (" + setup_text + ")";
        f.cause = "the setup does not describe this result (rw or rwmixread), or the scenario is wrong";
        out.push_back(std::move(f));
        continue;
      }
      const predict::MetricPrediction* pm = nullptr;
      for (const auto& x : sim.prediction.metrics)
        if (x.name == fig.metric) pm = &x;
      if (pm && pm->lower > 0) {
        // The whole prediction interval of a calibrated scenario.
        const double ratio = fig.measured / pm->mean;
        // The interval's side the measurement is on: it is asymmetric where the draws are.
        const double h = ratio >= 1 ? std::log(pm->upper / pm->mean) : std::log(pm->mean / pm->lower);
        const double z = h > 0 ? 1.96 * std::log(ratio) / h : 0;
        char pct[32];
        std::snprintf(pct, sizeof pct, std::fabs(ratio - 1) < 10 ? "%+.1f%%" : "%+.3g%%", 100.0 * (ratio - 1));
        f.evidence = "measured " + fig.label + " " + detail::evidence_num(fig.measured) + " vs predicted " +
                     detail::evidence_num(pm->mean) + " (95% prediction interval " + detail::evidence_num(pm->lower) + " .. " +
                     detail::evidence_num(pm->upper) + ": model error " + factor_text(1.96 * pm->model_sd_rel) + ", parameters " +
                     predict::parameters_part_text(*pm) + ", simulation " + factor_text(pm->sim_half_width / pm->mean) + "; " +
                     sim.prediction.distance + "): " + pct + ", " + detail::evidence_num(z) + " sd in log space; " + setup_text;
        const bool inside = fig.measured >= pm->lower && fig.measured <= pm->upper;
        if (inside) {
          f.severity = Severity::info;
          f.cause = "inside the calibrated model's prediction interval";
        } else if (ratio > 0.5 && ratio < 2.0) {
          f.severity = Severity::warning;
          f.cause =
              "outside the calibrated model's prediction interval: the setup differs from what was recorded (device, cache "
              "mode, CPU contention), or the model lacks a mechanism this run shows";
        } else {
          f.severity = Severity::error;
          f.cause =
              std::string("implausible for the model as calibrated: outside its prediction interval and off by more than 2x (") +
              detail::evidence_num(ratio) +
              "x); a unit slip, a cache, a different device, or a setup that is not what was recorded";
        }
        out.push_back(std::move(f));
        continue;
      }
      const int n = std::max(1, iv.n);
      const double t = n >= 2 ? sim::student_t_quantile(0.975, n - 1) : 1.96;
      const double s = n >= 2 && t > 0 ? iv.half_width * std::sqrt(static_cast<double>(n)) / t : 0.0;
      const double sigma = s * std::sqrt(1.0 + 1.0 / n);
      const double pi = t * sigma;
      const double diff = fig.measured - iv.mean;
      const double rel = diff / iv.mean;
      const double ratio = fig.measured / iv.mean;
      const bool inside = std::fabs(diff) <= pi || std::fabs(rel) <= 0.10;
      std::string sig = sigma > 0 ? detail::evidence_num(diff / sigma) + " sigma" : std::string("sigma 0 (no simulation noise)");
      char pct[32];
      std::snprintf(pct, sizeof pct, std::fabs(rel) < 10 ? "%+.1f%%" : "%+.3g%%", 100.0 * rel);
      f.evidence =
          "measured " + fig.label + " " + detail::evidence_num(fig.measured) + " vs simulated " + detail::evidence_num(iv.mean) +
          " (95% prediction interval " + detail::evidence_num(iv.mean - pi) + " .. " + detail::evidence_num(iv.mean + pi) + ", " +
          std::to_string(sim.replications) + " replications of " + sim.run_length + "): " + pct + ", " + sig + "; " + setup_text +
          ". The scenario is not calibrated ([calibration] table absent): the interval is simulation noise only, and the "
          "model's own error is covered by the 10% tolerance alone";
      if (inside) {
        f.severity = Severity::info;
        f.cause = std::fabs(diff) <= pi ? "inside the model's prediction interval"
                                        : "within the 10% calibration tolerance of the model's prediction";
      } else if (ratio > 0.5 && ratio < 2.0) {
        f.severity = Severity::warning;
        f.cause = std::string(
            "outside the model's prediction by more than 10%: the model is not calibrated for this setup, "
            "or the setup differs from what was recorded (device, cache mode, CPU contention)");
      } else {
        f.severity = Severity::error;
        f.cause = std::string("implausible for the model as calibrated: off by more than 2x (") + detail::evidence_num(ratio) +
                  "x); a unit slip, a cache, a different device, or a setup that is not what was recorded";
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace vqsim::check
