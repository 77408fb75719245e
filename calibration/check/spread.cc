// Run-to-run spread of `vqsim check`: is the spread of several runs of one job explained by
// queueing noise for that run length, or does it point to outside interference?
//
// API (check_spread in check.h): `scenario` is a path. The library does not know where the
// source tree is, so it does not build a scenario of its own: when the user gave no --scenario,
// the CLI passes scenarios/default.toml (the runs' setup keys are then applied on top of it).
// An empty `scenario` gives a warning finding that the spread was not checked, and how to.
//
// check_repeats (`check --repeats`): the runs come from fio outputs of any format, so each states
// what its format carries (JSON: the options that were set, fio's defaults for the rest; normal
// text: rw, bs, ioengine and iodepth in its header, numjobs in the job line; terse: nothing).
// Options are compared among the runs that state them, and what every output shows is compared
// as well (bytes per I/O, IO depth histogram, disks), so that two terse files of a QD1 and a
// QD32 run are no more "repeats" than two JSON files.
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
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "models/fio_jobfile.h"
#include "models/io_path.h"
#include "models/scenario.h"
#include "sim/replications.h"
#include "sim/student_t.h"

namespace vqsim::check {
namespace {

using detail::override_of;
using detail::plain_number;
using detail::scenario_keys;
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
    case 'k':
      return v * k;
    case 'm':
      return v * k * k;
    case 'g':
      return v * k * k * k;
    default:
      return std::nullopt;
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

// P(F > f) for F(d1, d2), through the regularized incomplete beta function.
double f_upper_tail(double f, double d1, double d2) {
  if (!(f > 0)) return 1.0;
  if (!std::isfinite(f)) return 0.0;
  const double x = d2 / (d2 + d1 * f);
  return std::clamp(sim::regularized_incomplete_beta(d2 / 2.0, d1 / 2.0, x), 0.0, 1.0);
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

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// An option check_repeats compares: fio's name (for the evidence), the setup key, and fio's
// default when a JSON output does not list it (nullptr: none, e.g. size is the file's). The
// defaults of the workload's shape are simulated too (a JSON run without iodepth ran at depth
// 1, whatever the scenario says); the others only say "not set".
struct RepeatOption {
  const char* name;
  const char* key;
  const char* fio_default;
  bool numeric;
  bool simulate_default;
};

const std::vector<RepeatOption>& repeat_options() {
  static const std::vector<RepeatOption> o = {
      {"rw", "workload.rw", "read", false, true},
      {"bs", "workload.bs", "4096", true, true},
      {"iodepth", "workload.iodepth", "1", true, true},
      {"numjobs", "workload.numjobs", "1", true, true},
      {"ioengine", "fio.ioengine", "psync", false, true},
      {"direct", "workload.direct", "false", false, true},
      {"size", "workload.size", nullptr, true, false},
      {"rwmixread", "workload.rwmixread", "50", true, false},
      {"rate_iops", "workload.rate_iops", "0", false, false},
      {"thinktime", "workload.thinktime", "0us", false, false},
  };
  return o;
}

// A value as compared: numbers as numbers ("16M" and "16777216" agree), names lower-case, fio's
// rw aliases folded.
std::string normalized(const RepeatOption& o, const std::string& raw) {
  std::string v = lower(strip(raw));
  if (std::string(o.name) == "rw") {
    v = v.substr(0, v.find(':'));
    if (v == "readwrite") v = "rw";
  }
  if (std::string(o.name) == "direct") v = (v == "0" || v == "false") ? "false" : "true";
  if (o.numeric)
    if (auto n = size_of(v)) v = number_text(*n);
  return v;
}

// fio 3.x's normal text header prints bs as "(R) 4096B-4096B, (W) 4096B-4096B, (T) ...": the
// fixed size of one direction.
std::optional<double> header_bs(const std::string& raw, const std::string& dir) {
  const auto at = raw.find(dir == "write" ? "(W)" : "(R)");
  if (at == std::string::npos) return std::nullopt;
  std::string part = strip(raw.substr(at + 3));
  part = part.substr(0, part.find(','));
  const auto dash = part.find('-');
  if (dash == std::string::npos) return size_of(part);
  const auto lo = size_of(part.substr(0, dash)), hi = size_of(part.substr(dash + 1));
  if (lo && hi && *lo == *hi) return lo;
  return std::nullopt;
}

// What a run states for an option (normalized), and how it is shown in the evidence.
struct Stated {
  std::optional<std::string> value;
  std::string shown;
  bool is_default = false;  // fio's default, not written in the output
};

Stated stated(const Measured& m, const RepeatOption& o) {
  const std::string name = o.name;
  std::optional<std::string> raw = name == "ioengine" ? detail::key(m, "fio.ioengine") : detail::key(m, o.key);
  if (!raw && name == "ioengine") raw = detail::key(m, "workload.ioengine");
  std::string how;
  if (!raw && name == "bs" && m.job_result)
    if (auto it = m.job_result->options.find("bs"); it != m.job_result->options.end())
      if (auto b = header_bs(it->second, m.dir)) raw = number_text(*b);
  // Normal text has no numjobs option, but each job line says how many jobs it covers ("jobs=4"
  // under group_reporting, else one line per clone).
  if (!raw && name == "numjobs" && m.result && m.job_result && m.result->format == fio::Format::normal) {
    int jobs = 0;
    bool all = true;
    for (const auto& j : m.result->jobs)
      if (j.name == m.job) {
        if (j.jobs)
          jobs += *j.jobs;
        else
          all = false;
      }
    if (all && jobs > 0) {
      raw = std::to_string(jobs);
      how = " (fio's job lines)";
    }
  }
  if (!raw && o.fio_default && detail::defaults_apply(m)) {
    raw = o.fio_default;
    how = " (fio's default)";
  }
  Stated s;
  if (raw) {
    s.value = normalized(o, *raw);
    s.shown = strip(*raw) + how;
    s.is_default = how == " (fio's default)";
  }
  return s;
}

// Bytes per I/O, whatever the output states: io bytes / I/Os, else bandwidth / IOPS.
std::optional<double> bytes_per_io(const Measured& m) {
  if (const auto* d = detail::stats(m); d && d->io_bytes && d->total_ios && *d->total_ios > 0 && *d->io_bytes > 0)
    return static_cast<double>(*d->io_bytes) / static_cast<double>(*d->total_ios);
  if (m.bw_kib && m.iops && *m.bw_kib > 0 && *m.iops > 0) return *m.bw_kib * 1024.0 / *m.iops;
  return std::nullopt;
}

// fio's IO depth histogram ("IO depths: 1=0.1%, ..., 8=99.9%"): the bucket holding at least 80%
// of the time, when there is one (the queue sat at that depth: iodepth 8-15 shows as "8").
std::optional<std::string> depth_bucket(const Measured& m) {
  if (!m.job_result) return std::nullopt;
  for (const auto& [k, share] : m.job_result->iodepth_level)
    if (share >= 80) return k;
  return std::nullopt;
}

std::optional<std::string> disks_of(const Measured& m) {
  if (!m.result || m.result->disks.empty()) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& d : m.result->disks) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s.append(s.empty() ? "" : ",").append(n);
  return s;
}

// "1 in a.json, b.json; 32 in c.json" for the runs that have a value (`shown` per run).
std::string values_text(const std::vector<Measured>& runs, const std::vector<std::optional<std::string>>& value,
                        const std::vector<std::string>& shown) {
  std::vector<std::string> order;
  std::map<std::string, std::string> text;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!value[i]) continue;
    auto& t = text[*value[i]];
    if (t.empty()) {
      order.push_back(*value[i]);
      t = shown[i] + " in ";
    } else {
      t += ", ";
    }
    t += runs[i].source;
  }
  std::string out;
  for (const auto& v : order) out.append(out.empty() ? "" : "; ").append(text[v]);
  return out;
}

}  // namespace

std::vector<Finding> check_repeats(const std::vector<Measured>& runs, const std::string& scenario,
                                   const std::vector<std::string>& overrides, int threads) {
  if (runs.size() < 2) return {};
  std::vector<std::string> differences, compared;
  std::map<std::string, std::vector<std::string>> unstated;  // source -> options it does not state
  std::map<std::string, std::string> common;                 // setup keys the runs agree on
  for (const auto& m : runs)
    for (const auto& [k, v] : m.setup) common.emplace(k, v);

  bool bs_everywhere = true, depth_everywhere = true;
  for (const auto& o : repeat_options()) {
    std::vector<std::optional<std::string>> value;
    std::vector<std::string> shown;
    bool written = false;  // by at least one run, not only fio's default
    for (const auto& m : runs) {
      Stated s = stated(m, o);
      value.push_back(s.value);
      shown.push_back(s.shown);
      if (!s.value) unstated[m.source].push_back(o.name);
      written = written || (s.value && !s.is_default);
    }
    const std::string name = o.name;
    const std::size_t known =
        static_cast<std::size_t>(std::count_if(value.begin(), value.end(), [](const auto& v) { return v.has_value(); }));
    if (known < runs.size()) {
      if (name == "bs") bs_everywhere = false;
      if (name == "iodepth") depth_everywhere = false;
    }
    if (known == 0) continue;
    if (known >= 2) compared.push_back(name);
    std::set<std::string> distinct;
    for (const auto& v : value)
      if (v) distinct.insert(*v);
    if (distinct.size() > 1) {
      differences.push_back(name + " (" + values_text(runs, value, shown) + ")");
      continue;
    }
    // Agreed (or stated by one run only): the simulated setup takes it.
    if (!written && !o.simulate_default) continue;
    const std::string v = **std::find_if(value.begin(), value.end(), [](const auto& x) { return x.has_value(); });
    if (name == "ioengine") {
      common["fio.ioengine"] = v;
      const auto& modelled = fio::modelled_ioengines();
      if (std::find(modelled.begin(), modelled.end(), v) != modelled.end()) common["workload.ioengine"] = v;
    } else {
      common[o.key] = v;
    }
  }

  // What every output shows, whatever it states: compared where a run does not state bs or
  // iodepth (a terse file states neither), and always for the disks.
  auto compare_shown = [&](const std::string& what, const std::vector<std::optional<std::string>>& value,
                           const std::vector<std::string>& shown, bool apart) {
    std::vector<std::size_t> have;
    for (std::size_t i = 0; i < value.size(); ++i)
      if (value[i]) have.push_back(i);
    if (have.size() < 2) return;
    compared.push_back(what);
    if (apart) differences.push_back(what + " (" + values_text(runs, value, shown) + ")");
  };
  if (!bs_everywhere) {
    std::vector<std::optional<std::string>> value;
    std::vector<std::string> shown;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& m : runs) {
      const auto b = bytes_per_io(m);
      value.push_back(b ? std::optional<std::string>(number_text(std::round(*b))) : std::nullopt);
      shown.push_back(b ? detail::evidence_num(*b) : "");
      if (b) lo = std::min(lo, *b), hi = std::max(hi, *b);
    }
    // Rounding in a text output and a mixed block size's sampling stay far inside 10%.
    compare_shown("bytes per I/O", value, shown, hi > 1.1 * lo);
  }
  if (!depth_everywhere) {
    std::vector<std::optional<std::string>> value;
    std::vector<std::string> shown;
    for (const auto& m : runs) {
      const auto b = depth_bucket(m);
      value.push_back(b);
      shown.push_back(b ? "depth " + *b : "");
    }
    std::set<std::string> distinct;
    for (const auto& v : value)
      if (v) distinct.insert(*v);
    compare_shown("IO depth histogram", value, shown, distinct.size() > 1);
  }
  {
    std::vector<std::optional<std::string>> value;
    for (const auto& m : runs) value.push_back(disks_of(m));
    std::set<std::string> distinct;
    for (const auto& v : value)
      if (v) distinct.insert(*v);
    std::vector<std::string> shown;
    for (const auto& v : value) shown.push_back(v.value_or(""));
    compare_shown("disks", value, shown, distinct.size() > 1);
  }

  std::vector<Finding> out;
  if (!differences.empty()) {
    std::string ev = std::to_string(runs.size()) + " runs given as repeats of one setup differ in ";
    for (std::size_t i = 0; i < differences.size(); ++i)
      ev.append(i == 0 ? "" : i + 1 == differences.size() ? " and " : ", ").append(differences[i]);
    out.push_back(detail::make(Severity::error, "not-repeats", subject_of(runs), ev,
                               "--repeats says these are repeated runs of one setup, but they ran different setups, so their "
                               "spread is not run-to-run noise and was not checked: give runs of one job file (run again the "
                               "ones that differ), or check them without --repeats"));
    return out;
  }

  std::string note = "; setup compared across the runs:";
  if (compared.empty()) note += " nothing (no option or figure is stated by two runs)";
  for (std::size_t i = 0; i < compared.size(); ++i) note.append(i == 0 ? " " : ", ").append(compared[i]);
  bool first_unstated = true;
  for (const auto& m : runs) {
    const auto it = unstated.find(m.source);
    if (it == unstated.end()) continue;
    note.append(first_unstated ? "; not stated by " : "; by ").append(m.source).append(":");
    first_unstated = false;
    for (std::size_t i = 0; i < it->second.size(); ++i) note.append(i == 0 ? " " : ", ").append(it->second[i]);
    unstated.erase(it);  // a source once
  }
  std::vector<Measured> same = runs;
  for (auto& m : same) m.setup = common;
  out = check_spread(same, scenario, overrides, threads);
  for (auto& f : out) f.evidence += note;
  return out;
}

std::vector<Finding> check_spread(const std::vector<Measured>& runs, const std::string& scenario,
                                  const std::vector<std::string>& overrides, int threads) {
  std::vector<Finding> out;
  if (runs.size() < 2) return out;

  Finding f;
  f.rule = "spread";
  f.subject = subject_of(runs);
  if (scenario.empty()) {
    f.severity = Severity::warning;
    f.evidence = std::to_string(runs.size()) +
                 " runs of one setup; their spread was not checked: there is no scenario to estimate "
                 "the queueing noise of runs of this length with";
    f.cause =
        "the spread check simulates the runs' setup (DES replications) to know how much such runs vary on their own; give "
        "--scenario FILE (scenarios/default.toml of vqsim's source tree will do: the runs' setup keys are applied on top of it)";
    out.push_back(std::move(f));
    return out;
  }

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
      if (m.iops && *m.iops > 0)
        sum += *m.runtime_s * *m.iops;
      else if (m.bw_kib && bs > 0)
        sum += *m.runtime_s * *m.bw_kib * 1024.0 / bs;
      else
        ok = false;
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
    s.workload.ios = simulated =
        std::min<std::uint64_t>(s.workload.ios > 0 ? s.workload.ios : kMaxSimulatedIos, kMaxSimulatedIos);
  }
  const int replications = std::max(8, s.run.replications);
  s.run.replications = replications;

  // 3. DES replications.
  const auto reps =
      sim::run_replications(replications, threads, [&](std::uint64_t r) { return models::run_io_replication(s, r); });
  std::vector<double> sim_iops;
  for (const auto& m : reps) {
    const double v = first.dir == "write"  ? m.get("write.iops")
                     : first.dir == "read" ? m.get("read.iops")
                                           : m.get("read.iops") + m.get("write.iops");
    sim_iops.push_back(v);
  }
  const Stats model = stats_of(sim_iops);
  double sim_cv = model.cv;
  std::string scaled;
  if (length > static_cast<double>(simulated)) {
    sim_cv *= std::sqrt(static_cast<double>(simulated) / length);
    scaled = ", scaled by sqrt(" + detail::evidence_num(static_cast<double>(simulated)) + " / " + detail::evidence_num(length) +
             ") to the measured length";
  }

  // 4. The verdict.
  const double ratio = sim_cv > 0 ? meas.cv / sim_cv : (meas.cv > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  const double F = ratio * ratio;
  const double p = f_upper_tail(F, static_cast<double>(runs.size() - 1), static_cast<double>(replications - 1));

  std::string ev = std::to_string(runs.size()) + " runs: mean " + detail::evidence_num(meas.mean) + unit + ", CV " +
                   pct(meas.cv) + ", min " + detail::evidence_num(meas.min) + " .. max " + detail::evidence_num(meas.max) + " (" +
                   ratio_text(meas.min > 0 ? meas.max / meas.min : 0.0) +
                   "); DES queueing noise: " + std::to_string(replications) + " replications of " +
                   detail::evidence_num(static_cast<double>(simulated)) + " I/Os (run length from " +
                   (length > 0 ? length_from : std::string("the scenario: measured length unknown")) + ") give an IOPS CV of " +
                   pct(model.cv) + scaled + (scaled.empty() ? "" : " = " + pct(sim_cv)) + " (model mean " +
                   detail::evidence_num(model.mean) + " IOPS, not used in the verdict); ratio measured/simulated CV " +
                   (std::isfinite(ratio) ? detail::evidence_num(ratio) + "x" : std::string("inf (the model has no noise here)")) +
                   " vs limit " + detail::evidence_num(kRatioLimit) + "x; F-test p = ";
  char pbuf[32];
  std::snprintf(pbuf, sizeof pbuf, "%.2g", p);
  ev.append(pbuf)
      .append(" (F(")
      .append(std::to_string(runs.size() - 1))
      .append(", ")
      .append(std::to_string(replications - 1))
      .append("))");
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
    f.cause = "points to outside interference: the spread is " +
              (std::isfinite(ratio) ? detail::evidence_num(ratio) + "x" : std::string("far")) +
              " what queueing noise gives for runs of this length (other load on the host or the device, CPU frequency or "
              "placement, device state such as garbage collection or a cold cache); repeat with longer runs and record the "
              "host's load";
  }
  out.push_back(std::move(f));
  return out;
}

}  // namespace vqsim::check
