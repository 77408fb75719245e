// Run-to-run spread of `vqsim check`: is the spread of several runs of one job explained by
// queueing noise for that run length, or does it point to outside interference?
//
// API (check_spread in check.h): `scenario` must be a path. The library does not know where the
// source tree is, so it does not build a scenario of its own: when the user gave no --scenario,
// the CLI passes scenarios/default.toml (the runs' setup keys are then applied on top of it).
// An empty `scenario` throws std::invalid_argument.
//
// Method:
//   1. The figure: IOPS when every run has it, else bandwidth (for a fixed block size both have
//      the same coefficient of variation). Measured mean, sample standard deviation (N-1), CV,
//      min and max.
//   2. The run length: the runs' total_ios (mean), else the setup's workload.ios, else
//      runtime_s x IOPS (or x bandwidth / bs). Simulated length = that, capped at 200k I/Os to
//      stay fast; the simulated CV is then scaled by sqrt(simulated / measured length) (the CV of
//      a mean over L I/Os falls as 1/sqrt(L) once L is long against the correlation time).
//   3. DES: the scenario + the caller's overrides + the runs' setup keys (only scenario keys;
//      run-length keys replaced by the length above), R = max(8, run.replications) replications
//      with independent random streams; the CV of IOPS across them is the queueing noise of one
//      run of that length.
//   4. Test: under "same noise as the model", F = (CV_meas / CV_sim)^2 follows an F(N-1, R-1)
//      distribution. The verdict uses a fixed ratio 3 (F = 9): P(F > 9) is 2.0% for F(1, 7)
//      (N = 2 runs, R = 8), 0.68% for F(4, 7) (N = 5) and 0.42% for F(9, 7) (N = 10), so a
//      ratio above 3 is a rare draw of pure queueing noise whatever N. ratio <= 3 -> info
//      "explained by queueing noise"; above -> warning "points to outside interference". The
//      F-test's p-value is reported with it. (A fixed ratio rather than a fixed p keeps the
//      verdict stable for large N, where tiny, practically irrelevant excesses would be
//      "significant".)
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "models/io_path.h"
#include "models/scenario.h"
#include "sim/replications.h"

namespace vqsim::check {
namespace {

using detail::override_of;
using detail::scenario_keys;
using detail::plain_number;
using detail::strip;

constexpr std::uint64_t kMaxSimulatedIos = 200000;
constexpr double kRatioLimit = 3.0;

std::optional<double> size_of(const std::string& text) {
  std::string t = strip(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto comma = t.find(',');
  if (comma != std::string::npos) t = t.substr(0, comma);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !std::isfinite(v)) return std::nullopt;
  const std::string suffix = end;
  if (suffix.empty() || suffix == "b") return v;
  const double k = 1024.0;
  switch (suffix[0]) {
    case 'k': return v * k;
    case 'm': return v * k * k;
    case 'g': return v * k * k * k;
    default: return std::nullopt;
  }
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fraction < 0.01 ? "%.3f%%" : "%.1f%%", 100.0 * fraction);
  return buf;
}

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

struct Stats {
  double mean = 0, sd = 0, cv = 0, min = 0, max = 0;
};

Stats stats_of(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() >= 2) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  s.cv = s.mean > 0 ? s.sd / s.mean : 0.0;
  return s;
}

// Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz; Press et al.,
// "Numerical Recipes", section 6.4), for the F distribution's tail.
double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < 1e-12) break;
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  const double lbeta = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
  const double front = std::exp(lbeta + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
  return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

// P(F > f) for F(d1, d2).
double f_upper_tail(double f, double d1, double d2) {
  if (!(f > 0)) return 1.0;
  if (!std::isfinite(f)) return 0.0;
  const double x = d2 / (d2 + d1 * f);
  return std::clamp(incomplete_beta(d2 / 2.0, d1 / 2.0, x), 0.0, 1.0);
}

std::string subject_of(const std::vector<Measured>& runs) {
  std::string s = std::to_string(runs.size()) + " runs: ";
  const std::size_t shown = std::min<std::size_t>(runs.size(), 6);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) s.append(", ");
    std::string one = runs[i].source;
    if (!runs[i].job.empty()) one.append(": job '").append(runs[i].job).append("'");
    s.append(one);
  }
  if (runs.size() > shown) s.append(", ...");
  if (!runs.empty() && !runs[0].dir.empty()) s.append(" (").append(runs[0].dir).append(")");
  return s;
}

}  // namespace

std::vector<Finding> check_spread(const std::vector<Measured>& runs, const std::string& scenario,
                                  const std::vector<std::string>& overrides, int threads) {
  std::vector<Finding> out;
  if (runs.size() < 2) return out;
  if (scenario.empty())
    throw std::invalid_argument("check_spread needs a scenario path (the CLI passes scenarios/default.toml when --scenario is absent)");

  Finding f;
  f.rule = "spread";
  f.subject = subject_of(runs);

  // 1. The measured figure.
  const bool all_iops = std::all_of(runs.begin(), runs.end(), [](const Measured& m) { return m.iops && *m.iops > 0; });
  const bool all_bw = std::all_of(runs.begin(), runs.end(), [](const Measured& m) { return m.bw_kib && *m.bw_kib > 0; });
  if (!all_iops && !all_bw) {
    f.severity = Severity::info;
    f.evidence = "no figure common to every run (IOPS or bandwidth); spread not checked";
    f.cause = "the runs do not report the same figure";
    out.push_back(std::move(f));
    return out;
  }
  std::vector<double> values;
  for (const auto& m : runs) values.push_back(all_iops ? *m.iops : *m.bw_kib);
  const Stats meas = stats_of(values);
  const std::string unit = all_iops ? " IOPS" : " KiB/s";

  // The setups should agree; say where they do not.
  const Measured& first = runs[0];
  std::set<std::string> differing;
  for (const auto& m : runs) {
    if (m.dir != first.dir) differing.insert("dir");
    for (const auto& [k, v] : m.setup) {
      const auto it = first.setup.find(k);
      if (it == first.setup.end() || strip(it->second) != strip(v)) differing.insert(k);
    }
    for (const auto& [k, v] : first.setup)
      if (!m.setup.count(k)) differing.insert(k);
  }

  // 2. The run length.
  double length = 0;  // 0 = unknown
  std::string length_from;
  double bs = 0;
  if (first.setup.count("workload.bs")) bs = size_of(first.setup.at("workload.bs")).value_or(0.0);
  if (std::all_of(runs.begin(), runs.end(), [](const Measured& m) { return m.total_ios && *m.total_ios > 0; })) {
    double sum = 0;
    for (const auto& m : runs) sum += *m.total_ios;
    length = sum / static_cast<double>(runs.size());
    length_from = "the runs' total_ios";
  } else if (first.setup.count("workload.ios") && plain_number(strip(first.setup.at("workload.ios")))) {
    length = std::strtod(strip(first.setup.at("workload.ios")).c_str(), nullptr);
    length_from = "the setup's workload.ios";
  } else if (std::all_of(runs.begin(), runs.end(), [](const Measured& m) { return m.runtime_s && *m.runtime_s > 0; })) {
    double sum = 0;
    bool ok = true;
    for (const auto& m : runs) {
      if (m.iops && *m.iops > 0) sum += *m.runtime_s * *m.iops;
      else if (m.bw_kib && bs > 0) sum += *m.runtime_s * *m.bw_kib * 1024.0 / bs;
      else ok = false;
    }
    if (ok) {
      length = sum / static_cast<double>(runs.size());
      length_from = "runtime x rate";
    }
  }
  if (!(length >= 1)) length = 0;

  std::vector<std::string> set = overrides;
  for (const auto& [k, v] : first.setup) {
    if (k == "workload.runtime" || k == "workload.ios" || k.rfind("run.", 0) == 0 || !scenario_keys().count(k)) continue;
    set.push_back(override_of(k, v));
  }
  models::IoScenario s = models::load_io_scenario(scenario, set);
  std::uint64_t simulated = s.workload.ios;
  if (length > 0) {
    simulated = static_cast<std::uint64_t>(std::llround(std::min(length, static_cast<double>(kMaxSimulatedIos))));
    simulated = std::max<std::uint64_t>(simulated, 100);
    s.workload.ios = simulated;
    s.workload.runtime_ns = 0;
  } else if (s.workload.runtime_ns > 0) {
    // Unknown measured length: keep the scenario's, but by count, to bound the cost.
    s.workload.runtime_ns = 0;
    s.workload.ios = simulated = std::min<std::uint64_t>(s.workload.ios > 0 ? s.workload.ios : kMaxSimulatedIos, kMaxSimulatedIos);
  }
  const int replications = std::max(8, s.run.replications);
  s.run.replications = replications;

  // 3. DES replications.
  const auto reps = sim::run_replications(replications, threads, [&](std::uint64_t r) { return models::run_io_replication(s, r); });
  std::vector<double> sim_iops;
  for (const auto& m : reps) {
    const double v = first.dir == "write" ? m.get("write.iops")
                     : first.dir == "read" ? m.get("read.iops")
                                           : m.get("read.iops") + m.get("write.iops");
    sim_iops.push_back(v);
  }
  const Stats model = stats_of(sim_iops);
  double sim_cv = model.cv;
  std::string scaled;
  if (length > static_cast<double>(simulated)) {
    sim_cv *= std::sqrt(static_cast<double>(simulated) / length);
    scaled = ", scaled by sqrt(" + detail::evidence_num(static_cast<double>(simulated)) + " / " + detail::evidence_num(length) + ") to the measured length";
  }

  // 4. The verdict.
  const double ratio = sim_cv > 0 ? meas.cv / sim_cv : (meas.cv > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  const double F = ratio * ratio;
  const double p = f_upper_tail(F, static_cast<double>(runs.size() - 1), static_cast<double>(replications - 1));

  std::string ev = std::to_string(runs.size()) + " runs: mean " + detail::evidence_num(meas.mean) + unit + ", CV " + pct(meas.cv) + ", min " +
                   detail::evidence_num(meas.min) + " .. max " + detail::evidence_num(meas.max) + " (" + ratio_text(meas.min > 0 ? meas.max / meas.min : 0.0) +
                   "); DES queueing noise: " + std::to_string(replications) + " replications of " + detail::evidence_num(static_cast<double>(simulated)) +
                   " I/Os (run length from " + (length > 0 ? length_from : std::string("the scenario: measured length unknown")) +
                   ") give an IOPS CV of " + pct(model.cv) + scaled + (scaled.empty() ? "" : " = " + pct(sim_cv)) +
                   " (model mean " + detail::evidence_num(model.mean) + " IOPS, not used in the verdict); ratio measured/simulated CV " +
                   (std::isfinite(ratio) ? detail::evidence_num(ratio) + "x" : std::string("inf (the model has no noise here)")) + " vs limit " +
                   detail::evidence_num(kRatioLimit) + "x; F-test p = ";
  char pbuf[32];
  std::snprintf(pbuf, sizeof pbuf, "%.2g", p);
  ev.append(pbuf).append(" (F(").append(std::to_string(runs.size() - 1)).append(", ").append(std::to_string(replications - 1)).append("))");
  ev.append("; simulated: ").append(scenario);
  for (const auto& o : set) ev.append(" --set ").append(o);
  if (!differing.empty()) {
    ev.append("; NOTE the runs' setups differ in:");
    for (const auto& k : differing) ev.append(" ").append(k);
  }
  f.evidence = ev;
  if (ratio <= kRatioLimit) {
    f.severity = Severity::info;
    f.cause = "explained by queueing noise: runs of this length vary this much on their own";
  } else {
    f.severity = Severity::warning;
    f.cause = "points to outside interference: the spread is " + (std::isfinite(ratio) ? detail::evidence_num(ratio) + "x" : std::string("far")) +
              " what queueing noise gives for runs of this length (other load on the host or the device, CPU frequency or "
              "placement, device state such as garbage collection or a cold cache); repeat with longer runs and record the "
              "host's load";
  }
  out.push_back(std::move(f));
  return out;
}

}  // namespace vqsim::check
