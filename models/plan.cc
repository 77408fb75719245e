#include "models/plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "sim/fio_histogram.h"

namespace vqsim::models {

namespace {

const char* kConstraintForm =
    "expected METRIC OP VALUE, e.g. 'read.clat_p99_us <= 2000' or 'total.iops >= 300k' (OP is <=, >=, < or >)";

std::string quoted(const std::string& s) {
  std::string q = "'";
  q.append(s);
  q.append("'");
  return q;
}

// "read.clat_p99_us" -> "read", 99; false when the name is not a percentile.
bool percentile_of(const std::string& name, std::string* dir, std::string* number) {
  // vm.<name>.read.clat_p99_us: one VM profile's percentile; its direction is vm.<name>.read.
  if (name.rfind("vm.", 0) == 0 && name.find('.', 3) != std::string::npos) {
    const std::string vm = name.substr(0, name.find('.', 3) + 1);
    if (!percentile_of(name.substr(vm.size()), dir, number)) return false;
    *dir = vm + *dir;
    return true;
  }
  const auto dot = name.find('.');
  if (dot == std::string::npos) return false;
  // <job>.read.clat_p99_us: one fio job's percentile; its direction is <job>.read (a job's name
  // may hold dots, the direction is the last word before clat_p).
  const auto at = name.rfind(".clat_p");
  if (at != std::string::npos && at > dot) {
    const std::string job_dir = name.substr(0, at), word = job_dir.substr(job_dir.rfind('.') + 1);
    if (word != "read" && word != "write" && word != "total") return false;
    if (!percentile_of(word + name.substr(at), dir, number)) return false;
    *dir = job_dir;
    return true;
  }
  const std::string rest = name.substr(dot + 1), prefix = "clat_p", suffix = "_us";
  if (rest.rfind(prefix, 0) != 0 || rest.size() <= prefix.size() + suffix.size() ||
      rest.substr(rest.size() - suffix.size()) != suffix)
    return false;
  *dir = name.substr(0, dot);
  *number = rest.substr(prefix.size(), rest.size() - prefix.size() - suffix.size());
  return true;
}

void check_metric(const std::string& metric) {
  std::string dir, number;
  if (percentile_of(metric, &dir, &number) && (dir == "read" || dir == "write")) {
    char* end = nullptr;
    const double p = std::strtod(number.c_str(), &end);
    if (end == number.c_str() + number.size() && p > 0 && p < 100) {
      const std::string key = sim::FioHistogram::percentile_key(p);
      std::string known;
      for (double q : sim::FioHistogram::fio_default_percentiles()) {
        if (sim::FioHistogram::percentile_key(q) == key) return;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%g", known.empty() ? "" : ", ", q);
        known.append(buf);
      }
      std::string msg = "metric ";
      msg.append(metric)
          .append(": vqsim records fio's default percentiles (")
          .append(known)
          .append("); ")
          .append(number)
          .append(" is not one of them");
      throw std::invalid_argument(msg);
    }
  }
  if (!is_io_metric(metric)) {
    std::string msg = "unknown metric ";
    msg.append(quoted(metric)).append(io_metric_suggestion(metric));
    msg.append(
        "; metrics are <read|write>.<iops|bw_kib|lat_mean_us|slat_mean_us|clat_mean_us|clat_p<P>_us> or "
        "total.<iops|bw_kib|lat_mean_us>");
    throw std::invalid_argument(msg);
  }
}

// A bound in the metric's unit: a number (2000, 1.5e5, 300k, 1.2M) or, for a latency (`_us`),
// a duration with its unit ("2ms", "150us"), as scenario keys in `_us` take them.
double parse_bound(const std::string& text, const std::string& whole, const std::string& metric) {
  const bool latency = metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_us") == 0;
  const char* begin = text.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  std::string rest(end);
  double k = 1;
  if (rest == "k" || rest == "K")
    k = 1e3;
  else if (rest == "M")
    k = 1e6;
  else if (rest == "G")
    k = 1e9;
  else if (!rest.empty() && latency && end != begin) {
    try {
      v = parse_duration_ns_real(text) / 1e3;
      rest.clear();
    } catch (const std::invalid_argument&) {
      end = const_cast<char*>(begin);
    }
  } else if (!rest.empty())
    end = const_cast<char*>(begin);  // not a number
  if (end == begin || !std::isfinite(v)) {
    std::string msg = "constraint ";
    msg.append(quoted(whole)).append(": ").append(quoted(text));
    if (latency)
      msg.append(" is neither a number of microseconds nor a duration (e.g. 2000, 1.5k, \"2ms\", \"150us\")");
    else
      msg.append(" is not a number (e.g. 2000, 1.5e5, 300k, 1.2M)");
    throw std::invalid_argument(msg);
  }
  return v * k;
}

const std::vector<std::pair<std::string, std::pair<long long, long long>>>& default_ranges() {
  static const std::vector<std::pair<std::string, std::pair<long long, long long>>> r = {
      {"workload.numjobs", {1, 256}}, {"workload.iodepth", {1, 1024}}, {"host.iothreads", {0, 16}},
      {"guest.vcpus", {1, 128}},      {"guest.num_queues", {1, 64}},   {"vm.count", {1, 256}},
  };
  return r;
}

// The MVA's stand-in for a constraint: the metric itself, or the mean clat of a percentile's
// direction.
std::string mva_metric(const std::string& metric, bool* guide) {
  std::string dir, number;
  *guide = percentile_of(metric, &dir, &number);
  return *guide ? dir + ".clat_mean_us" : metric;
}

sim::Interval point_interval(double v) {
  sim::Interval i{};
  i.mean = i.lower = i.upper = v;
  i.n = 1;
  return i;
}

PlanCheck check_des(const PlanConstraint& c, const sim::Interval& v) {
  PlanCheck k;
  k.constraint = c;
  k.metric = c.metric;
  k.value = v;
  k.satisfied = c.holds(v.mean);
  const bool lo = c.holds(v.lower), hi = c.holds(v.upper);
  k.whole_interval = lo && hi;
  k.straddles = lo != hi;
  return k;
}

std::string join_constraints(const std::vector<PlanConstraint>& cs) {
  std::string s;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (i > 0) s.append(i + 1 == cs.size() ? " and " : ", ");
    s.append(cs[i].text());
  }
  return s;
}

std::string range_text(long long lo, long long hi) {
  std::string s = "[";
  s.append(std::to_string(lo)).append(", ").append(std::to_string(hi)).append("]");
  return s;
}

// "read.clat_p99_us 1701 ± 23: satisfied" for each check.
std::string checks_text(const std::vector<PlanCheck>& checks, bool only_violated) {
  std::string s;
  for (const auto& k : checks) {
    if (only_violated && k.satisfied) continue;
    if (!s.empty()) s.append(", ");
    s.append(k.metric).append(" ").append(plan_interval(k.value)).append(": ").append(k.verdict());
  }
  return s;
}

class Planner {
 public:
  explicit Planner(const PlanRequest& r) : req_(r), source_(r.scenario_path) {
    for (const std::string& o : r.overrides) source_.set(o);
  }

  PlanResult run();

 private:
  // Position t in [0, n_] counts from the end of the range where the constraints are easiest
  // (lo when maximizing, hi when minimizing); the feasible positions are assumed to be [0, t*].
  long long value_at(long long t) const { return req_.goal == PlanGoal::maximize ? lo_ + t : hi_ - t; }

  IoScenario scenario_at(long long value, bool des) const {
    ScenarioSource edited = source_;
    edited.set(req_.knob + "=" + std::to_string(value));
    if (des) {
      edited.set("workload.ios=" + std::to_string(req_.ios));
      edited.set("workload.runtime=0");
    }
    IoScenario s = edited.scenario();
    if (des) s.run.replications = req_.replications;
    return s;
  }

  const std::vector<double>& mva_raw(long long t);  // the MVA's value of each constraint's metric (or guide)
  bool mva(long long t);                            // scaled by scale_, recorded as a point
  long long mva_search(long long a, long long b);   // the last feasible position in [a, b] by MVA
  bool des(long long t);
  void bracket(long long* good, long long* bad) const;

  PlanRequest req_;
  ScenarioSource source_;  // the scenario parsed once, with the request's overrides
  long long lo_ = 0, hi_ = 0, n_ = 0;
  PlanResult res_;
  std::map<long long, std::vector<double>> mva_raw_;
  std::map<int, std::map<long long, bool>> mva_done_;  // per calibration round
  std::map<long long, bool> des_done_;
  std::map<long long, std::vector<double>> des_mean_;  // each constraint's DES mean
  std::vector<double> scale_;                          // DES / MVA per constraint (1 in round 0)
  int round_ = 0;
  std::vector<bool> reversed_;                  // per constraint: it gets easier towards the goal's end
  std::map<long long, PlanPoint> cal_points_;   // this calibration round's MVA points
  std::map<long long, std::size_t> des_point_;  // position -> index in res_.tried
  std::map<long long, std::vector<std::pair<std::string, sim::Interval>>> des_metrics_;
  std::map<long long, IoRunReport> des_reports_;  // each simulated point's run, for the answer's report
  std::vector<std::string> extra_metrics_;
};

const std::vector<double>& Planner::mva_raw(long long t) {
  if (auto it = mva_raw_.find(t); it != mva_raw_.end()) return it->second;
  const IoScenario s = scenario_at(value_at(t), false);
  // Several running [[vm]] profiles, or a VM of several fio jobs: their multi-class MVA (one
  // class per profile and job), never one profile's or the first job's answer for the others;
  // where it cannot help (open- and closed-loop jobs or profiles mixed, a VM of several disks)
  // it throws and the simulation searches alone (run()).
  int running = 0;
  bool jobs = !s.multi_vm() && s.multi_job();
  for (const VmProfile& p : s.profiles)
    if (p.count > 0) {
      ++running;
      jobs = jobs || p.scenario.multi_job();
    }
  std::optional<IoMvaClassesResult> classes;
  IoMvaResult one;
  if (running > 1 || jobs)
    classes = solve_io_mva_classes(s);
  else
    one = solve_io_mva(s);
  const bool saturated = classes ? classes->saturated : one.saturated;
  std::vector<double> values;
  for (const auto& c : req_.constraints) {
    bool guide = false;
    const std::string m = mva_metric(c.metric, &guide);
    double x = classes ? io_metric_mva_classes(*classes, s, m) : io_metric_mva(one, s, m);
    if (saturated && m.find("lat") != std::string::npos) x = HUGE_VAL;
    values.push_back(x);
  }
  return mva_raw_[t] = values;
}

bool Planner::mva(long long t) {
  auto& done = mva_done_[round_];
  if (auto it = done.find(t); it != done.end()) return it->second;
  const std::vector<double>& raw = mva_raw(t);
  PlanPoint p;
  p.value = value_at(t);
  p.method = round_ == 0 ? "MVA" : "MVA-cal";
  p.satisfied = true;
  bool search_ok = true;
  for (std::size_t i = 0; i < req_.constraints.size(); ++i) {
    const auto& c = req_.constraints[i];
    PlanCheck k;
    k.constraint = c;
    k.metric = mva_metric(c.metric, &k.guide);
    const double x = raw[i] * scale_[i];
    k.value = point_interval(x);
    k.satisfied = k.whole_interval = c.holds(x);
    p.satisfied = p.satisfied && k.satisfied;
    if (!reversed_[i]) search_ok = search_ok && k.satisfied;
    p.checks.push_back(k);
  }
  if (round_ == 0)
    res_.tried.push_back(p);
  else
    cal_points_[t] = p;  // only a calibrated search's answer is shown
  done[t] = search_ok;
  return search_ok;
}

long long Planner::mva_search(long long a, long long b) {
  if (mva(b)) return b;
  if (!mva(a)) return a;
  while (b - a > 1) {
    const long long mid = a + (b - a) / 2;
    if (mva(mid))
      a = mid;
    else
      b = mid;
  }
  return a;
}

bool Planner::des(long long t) {
  if (auto it = des_done_.find(t); it != des_done_.end()) return it->second;
  const long long v = value_at(t);
  const IoScenario s = scenario_at(v, true);
  const IoRunReport r = simulate_io(s, req_.threads);
  PlanPoint p;
  p.value = v;
  p.method = "DES";
  p.satisfied = true;
  bool search_ok = true;
  for (std::size_t i = 0; i < req_.constraints.size(); ++i) {
    PlanCheck k = check_des(req_.constraints[i], io_metric(r, req_.constraints[i].metric));
    p.satisfied = p.satisfied && k.satisfied;
    if (!reversed_[i]) search_ok = search_ok && k.satisfied;
    p.checks.push_back(k);
  }
  for (const auto& k : p.checks) des_mean_[t].push_back(k.value.mean);
  auto& m = des_metrics_[t];
  for (const auto& name : extra_metrics_) m.emplace_back(name, io_metric(r, name));
  des_point_[t] = res_.tried.size();
  des_reports_[t] = r;
  res_.tried.push_back(p);
  des_done_[t] = search_ok;
  return search_ok;
}

// The first infeasible simulated position (n_ + 1: none) and the last feasible one below it
// (-1: none).
void Planner::bracket(long long* good, long long* bad) const {
  *bad = n_ + 1;
  for (const auto& [t, ok] : des_done_)
    if (!ok) {
      *bad = t;
      break;
    }
  *good = -1;
  for (const auto& [t, ok] : des_done_)
    if (ok && t < *bad) *good = t;
}

PlanResult Planner::run() {
  if (req_.constraints.empty())
    throw std::invalid_argument("plan needs at least one constraint (--subject-to 'METRIC OP VALUE')");
  check_plan_knob(req_.knob);
  if (req_.replications < 1) throw std::invalid_argument("replications must be >= 1");
  if (req_.ios < 1) throw std::invalid_argument("ios must be >= 1");
  if (req_.max_des < 2) throw std::invalid_argument("max_des must be >= 2");
  lo_ = req_.lo;
  hi_ = req_.hi;
  if (hi_ < lo_) {
    if (!plan_default_range(req_.knob, &lo_, &hi_)) {
      std::string msg = req_.knob;
      msg.append(" has no default range; give one with --range LO:HI");
      throw std::invalid_argument(msg);
    }
  }
  req_.lo = lo_;
  req_.hi = hi_;
  n_ = hi_ - lo_;
  res_.request = req_;
  const bool maximize = req_.goal == PlanGoal::maximize;
  res_.question = maximize ? "largest " : "smallest ";
  res_.question.append(req_.knob)
      .append(" in ")
      .append(range_text(lo_, hi_))
      .append(" with ")
      .append(join_constraints(req_.constraints));

  // The scenario itself must load (its errors are the file's, whatever the range), then both
  // ends of the range must make valid scenarios (the loader's errors name the key).
  const IoScenario first = source_.scenario();
  const bool several_vms = first.vms > 1 || first.multi_vm();
  for (const auto& c : req_.constraints) extra_metrics_.push_back(c.metric);
  std::vector<std::string> shown{"total.iops", "total.lat_mean_us"};
  if (declared_key(req_.knob) == "vm.count" || several_vms) shown = {"total.iops", "host.total.iops", "host.total.lat_mean_us"};
  for (const auto& m : shown)
    if (std::find(extra_metrics_.begin(), extra_metrics_.end(), m) == extra_metrics_.end()) extra_metrics_.push_back(m);
  for (const long long end : {lo_, hi_}) {
    try {
      (void)scenario_at(end, false);
    } catch (const ConfigError& e) {
      std::string msg = "the range ";
      msg.append(range_text(lo_, hi_)).append(" of ").append(req_.knob).append(": ").append(e.what());
      throw ConfigError(msg);
    }
  }

  // Phase 1: MVA, binary search for the last feasible position.
  scale_.assign(req_.constraints.size(), 1.0);
  reversed_.assign(req_.constraints.size(), false);
  long long cand = 0;
  bool have_mva = true;
  try {
    // A constraint that the MVA finds easier at the goal's end of the range than at the other
    // (total.iops >= X while maximizing iodepth) limits the answer from the other side: it is
    // left out of the search and checked at the answer.
    const std::vector<double> easy = mva_raw(0), hard = mva_raw(n_);
    for (std::size_t i = 0; i < req_.constraints.size(); ++i) {
      const auto& c = req_.constraints[i];
      if (!std::isfinite(easy[i]) || !std::isfinite(hard[i])) continue;
      if (std::fabs(hard[i] - easy[i]) <= 0.005 * std::max(std::fabs(hard[i]), std::fabs(easy[i]))) continue;  // flat (0.5%)
      const bool up = hard[i] > easy[i];
      const bool harder = c.op == PlanConstraint::le || c.op == PlanConstraint::lt ? up : !up;
      reversed_[i] = !harder;
      if (!reversed_[i]) continue;
      std::string note = c.text();
      note.append(" improves as ").append(req_.knob).append(maximize ? " grows" : " shrinks");
      note.append(" (MVA at the ends of the range): it limits the answer from ").append(maximize ? "below" : "above");
      note.append(", so it was checked at the answer rather than searched");
      res_.notes.push_back(note);
    }
    res_.reversed = reversed_;
    cand = mva_search(0, n_);
  } catch (const std::exception& e) {
    std::string note = "MVA could not solve this scenario (";
    note.append(e.what()).append("); the simulation searched alone");
    res_.notes.push_back(note);
    have_mva = false;
    cand = 0;
  }
  res_.mva_candidate = value_at(cand);
  auto budget_left = [&] { return static_cast<int>(des_done_.size()) < req_.max_des; };
  des(cand);

  // Phase 1b: the MVA calibrated on the simulation. Each constraint's MVA value is scaled by
  // DES / MVA at the latest simulated candidate (this corrects a percentile's mean-clat guide
  // for the tail, and the MVA's approximations), then searched again between the simulated
  // points that bracket the boundary. At most two rounds.
  long long good = -1, bad = n_ + 1;
  for (int r = 1; r <= 2 && have_mva && budget_left(); ++r) {
    bool changed = false;
    const std::vector<double> raw = mva_raw(cand);
    const std::vector<double> des_at = des_mean_[cand];
    for (std::size_t i = 0; i < scale_.size(); ++i) {
      if (!(std::isfinite(raw[i]) && raw[i] > 0 && std::isfinite(des_at[i]) && des_at[i] > 0)) continue;
      const double k = des_at[i] / raw[i];
      changed = changed || std::fabs(k - scale_[i]) > 1e-9 * scale_[i];
      scale_[i] = k;
    }
    if (!changed) break;
    bracket(&good, &bad);
    if ((good >= 0 && bad <= n_ && bad - good <= 1) || good == n_ || bad == 0) break;
    round_ = r;
    cal_points_.clear();
    long long next = cand;
    try {
      next = mva_search(std::max(good, 0LL), std::min(bad, n_));
    } catch (const std::exception& e) {
      std::string note = "calibrated MVA failed (";
      note.append(e.what()).append("); the simulation searched on alone");
      res_.notes.push_back(note);
      break;
    }
    if (des_done_.count(next) != 0) break;
    res_.tried.push_back(cal_points_.at(next));
    cand = next;
    des(cand);
  }

  // Phase 2: DES from what is known: gallop outwards (steps 1, 2, 4, ...) until the boundary is
  // bracketed, then bisect.
  for (long long step = 1; budget_left();) {
    bracket(&good, &bad);
    if (good >= 0 && bad <= n_) {
      if (bad - good <= 1) break;
      des(good + (bad - good) / 2);
    } else if (good < 0) {
      if (bad == 0) break;  // the easiest end fails: infeasible
      des(std::max(bad - step, 0LL));
      step *= 2;
    } else {
      if (good == n_) break;  // the hardest end holds
      des(std::min(good + step, n_));
      step *= 2;
    }
  }
  bracket(&good, &bad);
  if (good >= 0 && bad <= n_ && bad - good > 1) {
    std::string note = "stopped after ";
    note.append(std::to_string(req_.max_des)).append(" simulated points; the boundary lies between ");
    note.append(std::to_string(value_at(good))).append(" and ").append(std::to_string(value_at(bad)));
    res_.notes.push_back(note);
  }
  // Monotonicity: a feasible point beyond an infeasible one contradicts the assumption.
  for (const auto& [t, ok] : des_done_)
    if (ok && t > bad) {
      std::string note = "not monotone: ";
      note.append(req_.knob).append("=").append(std::to_string(value_at(t))).append(" satisfies the constraints but ");
      note.append(std::to_string(value_at(bad))).append(" does not; the answer is the first boundary the search found");
      res_.notes.push_back(note);
      break;
    }

  const std::string of = std::string(" of ").append(req_.knob);
  if (good < 0) {
    // Infeasible (or the budget ran out before a feasible point was found).
    res_.feasible = false;
    const long long best = des_done_.count(0) != 0 ? 0 : des_done_.begin()->first;
    res_.answer = value_at(best);
    res_.answer_checks = res_.tried[des_point_[best]].checks;
    res_.answer_metrics = des_metrics_[best];
    res_.answer_report = des_reports_[best];
    if (best == 0) {
      res_.message = "no value";
      res_.message.append(of)
          .append(" in ")
          .append(range_text(lo_, hi_))
          .append(" satisfies ")
          .append(join_constraints(req_.constraints));
      res_.message.append("; the best is ").append(std::to_string(res_.answer)).append(" with ");
      res_.message.append(checks_text(res_.answer_checks, true));
    } else {
      res_.message = "no satisfying value found within the budget of simulated points";
    }
    return res_;
  }
  bool reversed_ok = true;
  for (const auto& k : res_.tried[des_point_[good]].checks) reversed_ok = reversed_ok && k.satisfied;
  if (!reversed_ok) {
    res_.feasible = false;
    res_.answer = value_at(good);
    res_.answer_checks = res_.tried[des_point_[good]].checks;
    res_.answer_metrics = des_metrics_[good];
    res_.answer_report = des_reports_[good];
    std::vector<PlanConstraint> searched;
    for (std::size_t i = 0; i < req_.constraints.size(); ++i)
      if (!reversed_[i]) searched.push_back(req_.constraints[i]);
    res_.message = "no value";
    res_.message.append(of)
        .append(" in ")
        .append(range_text(lo_, hi_))
        .append(" satisfies ")
        .append(join_constraints(req_.constraints));
    res_.message.append("; the ").append(maximize ? "largest" : "smallest").append(" with ").append(join_constraints(searched));
    res_.message.append(" is ")
        .append(std::to_string(res_.answer))
        .append(", where ")
        .append(checks_text(res_.answer_checks, true));
    return res_;
  }
  res_.feasible = true;
  res_.answer = value_at(good);
  res_.at_range_end = good == n_;
  res_.answer_checks = res_.tried[des_point_[good]].checks;
  res_.answer_metrics = des_metrics_[good];
  res_.answer_report = des_reports_[good];
  res_.message = std::string(maximize ? "the largest " : "the smallest ").append(req_.knob);
  res_.message.append(" in ").append(range_text(lo_, hi_)).append(" with ").append(join_constraints(req_.constraints));
  res_.message.append(" is ").append(std::to_string(res_.answer)).append(": ").append(checks_text(res_.answer_checks, false));
  if (res_.at_range_end) {
    res_.message.append("; every value in ")
        .append(range_text(lo_, hi_))
        .append(" satisfies the constraints, so the answer is the end of the range");
  } else if (bad <= n_) {
    res_.message.append("; at ").append(std::to_string(value_at(bad))).append(": ");
    res_.message.append(checks_text(res_.tried[des_point_[bad]].checks, true));
  }
  return res_;
}

}  // namespace

bool PlanConstraint::holds(double value) const {
  if (!std::isfinite(value)) return op == ge || op == gt ? value > 0 && !std::isnan(value) : false;
  switch (op) {
    case le:
      return value <= bound;
    case ge:
      return value >= bound;
    case lt:
      return value < bound;
    case gt:
      return value > bound;
  }
  return false;
}

const char* plan_op_symbol(PlanConstraint::Op op) {
  switch (op) {
    case PlanConstraint::le:
      return "<=";
    case PlanConstraint::ge:
      return ">=";
    case PlanConstraint::lt:
      return "<";
    case PlanConstraint::gt:
      return ">";
  }
  return "?";
}

std::string PlanConstraint::text() const {
  std::string s = metric;
  s.append(" ").append(plan_op_symbol(op)).append(" ").append(bound_text.empty() ? plan_number(bound) : bound_text);
  return s;
}

std::string PlanCheck::verdict() const {
  if (satisfied) return whole_interval || !straddles ? "satisfied" : "borderline (mean satisfies)";
  return straddles ? "borderline (mean violates)" : "violated";
}

PlanConstraint parse_plan_constraint(const std::string& text) {
  const std::size_t pos = text.find_first_of("<>=!");
  if (pos == std::string::npos) {
    std::string msg = "constraint ";
    msg.append(quoted(text)).append(": no comparison found; ").append(kConstraintForm);
    throw std::invalid_argument(msg);
  }
  PlanConstraint c;
  std::size_t len = 1;
  const char a = text[pos], b = pos + 1 < text.size() ? text[pos + 1] : '\0';
  if (a == '<' && b == '=')
    c.op = PlanConstraint::le, len = 2;
  else if (a == '>' && b == '=')
    c.op = PlanConstraint::ge, len = 2;
  else if (a == '<' && b != '>' && b != '<')
    c.op = PlanConstraint::lt;
  else if (a == '>' && b != '<' && b != '>')
    c.op = PlanConstraint::gt;
  else {
    std::string msg = "constraint ";
    msg.append(quoted(text)).append(": ");
    if (a == '=' || a == '!') msg.append("equality cannot be planned for; ");
    msg.append(kConstraintForm);
    throw std::invalid_argument(msg);
  }
  c.metric = std::string(trim(text.substr(0, pos)));
  const std::string value = std::string(trim(text.substr(pos + len)));
  if (c.metric.empty()) {
    std::string msg = "constraint ";
    msg.append(quoted(text))
        .append(": the metric is missing before ")
        .append(plan_op_symbol(c.op))
        .append("; ")
        .append(kConstraintForm);
    throw std::invalid_argument(msg);
  }
  if (value.empty()) {
    std::string msg = "constraint ";
    msg.append(quoted(text))
        .append(": the value is missing after ")
        .append(plan_op_symbol(c.op))
        .append("; ")
        .append(kConstraintForm);
    throw std::invalid_argument(msg);
  }
  if (value.find_first_of("<>=!") != std::string::npos) {
    std::string msg = "constraint ";
    msg.append(quoted(text)).append(": one comparison per constraint (repeat --subject-to for more); ").append(kConstraintForm);
    throw std::invalid_argument(msg);
  }
  check_metric(c.metric);
  c.bound = parse_bound(value, text, c.metric);
  c.bound_text = value;
  return c;
}

const std::vector<std::string>& plan_integer_knobs() {
  static const std::vector<std::string> k = {
      "workload.numjobs",     "workload.iodepth",  "workload.iodepth_batch_submit",
      "workload.rwmixread",   "guest.vcpus",       "guest.num_queues",
      "guest.queue_size",     "guest.cmd_per_lun", "guest.hba_queue_depth",
      "host.iothreads",       "host.cores",        "host.thread_pool_max",
      "backend.channels",     "backend.ncq_depth", "backend.osd_slots",
      "backend.msgr_threads", "vm.count",
  };
  return k;
}

bool plan_default_range(const std::string& knob, long long* lo, long long* hi) {
  if (const std::string declared = declared_key(knob); declared != knob) return plan_default_range(declared, lo, hi);
  for (const auto& [k, r] : default_ranges())
    if (k == knob) {
      *lo = r.first;
      *hi = r.second;
      return true;
    }
  return false;
}

void check_plan_knob(const std::string& knob) {
  const auto& ints = plan_integer_knobs();
  if (std::find(ints.begin(), ints.end(), knob) != ints.end()) return;
  // vm.<name>.<key> and backend.<name>.<key> of [[vm]] and [[backend]] tables: the declared key's
  // rule (whether that VM or backend exists is the scenario's to say).
  if (const std::string declared = declared_key(knob); declared != knob) return check_plan_knob(declared);
  std::vector<std::string> keys;
  for (const auto& p : io_scenario_parameters()) keys.push_back(p.key);
  std::string list;
  for (const auto& k : ints) list.append(list.empty() ? "" : ", ").append(k);
  std::string msg;
  if (std::find(keys.begin(), keys.end(), knob) != keys.end()) {
    msg = knob;
    msg.append(" is not an integer knob; plan searches integer knobs only: ").append(list);
  } else {
    msg = "unknown scenario key ";
    msg.append(quoted(knob)).append(did_you_mean(knob, ints)).append("; plan searches integer knobs: ").append(list);
  }
  throw std::invalid_argument(msg);
}

void parse_plan_range(const std::string& text, long long* lo, long long* hi) {
  const auto colon = text.find(':');
  auto number = [&](const std::string& s, long long* out) {
    const std::string t = std::string(trim(s));
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end != t.c_str() + t.size()) return false;
    *out = v;
    return true;
  };
  if (colon == std::string::npos || !number(text.substr(0, colon), lo) || !number(text.substr(colon + 1), hi)) {
    std::string msg = "range ";
    msg.append(quoted(text)).append(": expected LO:HI with integers, e.g. 1:64");
    throw std::invalid_argument(msg);
  }
  if (*hi < *lo) {
    std::string msg = "range ";
    msg.append(quoted(text)).append(": LO must not exceed HI");
    throw std::invalid_argument(msg);
  }
}

PlanResult run_plan(const PlanRequest& request) { return Planner(request).run(); }

std::string plan_number(double v) {
  if (!std::isfinite(v)) return "unbounded";
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.4g", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v + 0.0);
  std::string s(buf);
  if (s == "-0") s = "0";
  return s;
}

std::string plan_interval(const sim::Interval& i) {
  std::string s = plan_number(i.mean);
  if ((i.n >= 2 || i.half_width > 0) && std::isfinite(i.mean) && std::isfinite(i.half_width)) {
    char buf[64];
    if (i.half_width >= 100)
      std::snprintf(buf, sizeof buf, "%.0f", i.half_width);
    else
      std::snprintf(buf, sizeof buf, "%.2g", i.half_width);
    s.append(" ± ").append(buf);
  }
  return s;
}

}  // namespace vqsim::models
