// Internal consistency of one fio result (or a manifest's inline numbers): do its figures agree
// with each other? Rules and thresholds are documented in docs/check.md.
//
// The exact relations (bandwidth = IOPS x bs, io = bandwidth x runtime, total_ios = IOPS x
// runtime, io = total_ios x bs) and Little's law are evaluated together, so that one wrong figure
// is reported once: first a unit slip (one figure off by ~10^3 or 10^6 that makes every relation
// hold once divided out), then the one figure whose relations are all broken, then whatever
// relation is still broken on its own.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "models/fio_jobfile.h"

namespace vqsim::check {
namespace {

using namespace detail;

// ---- formatting -----------------------------------------------------------------------------

std::string ratio_text(double r) { return num(r) + "x"; }
std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

// ---- what the options say -------------------------------------------------------------------

std::optional<double> iodepth(const Measured& m) {
  if (auto d = key_number(m, "workload.iodepth")) return d;
  if (defaults_apply(m)) return 1.0;
  return std::nullopt;
}

// ---- the relations among a job's figures ----------------------------------------------------

constexpr double kErr = 0.10, kWarn = 0.03;  // relative deviation of the exact relations
constexpr double kLittleHighErr = 1.5, kLittleHighWarn = 1.1, kLittleLowWarn = 0.5, kLittleLowErr = 0.2;
constexpr double kOverheadUs = 5.0;  // fio's own time per I/O between completion and resubmission

enum Q { qI, qB, qT, qO, qR, qLat, qBs, kQ };
const char* kQName[kQ] = {"IOPS", "bandwidth", "total_ios", "io bytes", "runtime", "mean latency", "block size"};

struct Fig {
  std::array<std::optional<double>, kQ> v;  // I (1/s), B (B/s), T, O (B), R (s), lat (us), bs (B)
};

enum Rel { rBw, rIo, rTot, rIo2, kRel };
const char* kRelRule[kRel] = {"bw-vs-iops", "io-bytes", "total-ios", "io-bytes"};
const std::array<std::vector<Q>, kRel> kRelQ = {{{qB, qI, qBs}, {qO, qB, qR}, {qT, qI, qR}, {qO, qT, qBs}}};

// a / b of a relation (observed over implied), nullopt when a figure is missing.
std::optional<double> rel_ratio(const Fig& f, Rel r) {
  auto has = [&](Q q) { return f.v[q].has_value(); };
  for (Q q : kRelQ[r])
    if (!has(q)) return std::nullopt;
  double a = 0, b = 0;
  switch (r) {
    case rBw:
      a = *f.v[qB], b = *f.v[qI] * *f.v[qBs];
      break;
    case rIo:
      a = *f.v[qO], b = *f.v[qB] * *f.v[qR];
      break;
    case rTot:
      a = *f.v[qT], b = *f.v[qI] * *f.v[qR];
      break;
    case rIo2:
      a = *f.v[qO], b = *f.v[qT] * *f.v[qBs];
      break;
    default:
      return std::nullopt;
  }
  if (!(b > 0) || !std::isfinite(a) || !std::isfinite(b)) return std::nullopt;
  // A run too short for its rounding (runtime in whole ms, I/O counts) is not judged.
  if (r == rTot && *f.v[qT] < 100) return std::nullopt;
  return a / b;
}

// The evidence of one relation, in the units people read.
std::string rel_evidence(const Fig& f, Rel r) {
  auto v = [&](Q q) { return *f.v[q]; };
  switch (r) {
    case rBw:
      return "bandwidth " + num(v(qB) / 1024) + " KiB/s, but IOPS x bs = " + num(v(qI)) + " x " + num(v(qBs)) +
             " B = " + num(v(qI) * v(qBs) / 1024) + " KiB/s";
    case rIo:
      return "io " + num(v(qO) / 1048576) + " MiB, but bandwidth x runtime = " + num(v(qB) / 1024) + " KiB/s x " + num(v(qR)) +
             " s = " + num(v(qB) * v(qR) / 1048576) + " MiB";
    case rTot:
      return "total_ios " + num(v(qT)) + ", but IOPS x runtime = " + num(v(qI)) + " x " + num(v(qR)) +
             " s = " + num(v(qI) * v(qR));
    case rIo2:
      return "io " + num(v(qO) / 1048576) + " MiB, but total_ios x bs = " + num(v(qT)) + " x " + num(v(qBs)) +
             " B = " + num(v(qT) * v(qBs) / 1048576) + " MiB";
    default:
      return "";
  }
}

// What a relation implies for one of its figures.
std::optional<double> implied(const Fig& f, Rel r, Q q) {
  auto v = [&](Q x) -> std::optional<double> { return x == q ? std::nullopt : f.v[x]; };
  auto div = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b || !(*b > 0)) return std::nullopt;
    return *a / *b;
  };
  auto mul = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b) return std::nullopt;
    return *a * *b;
  };
  switch (r) {
    case rBw:
      return q == qB ? mul(v(qI), v(qBs)) : q == qI ? div(v(qB), v(qBs)) : q == qBs ? div(v(qB), v(qI)) : std::nullopt;
    case rIo:
      return q == qO ? mul(v(qB), v(qR)) : q == qB ? div(v(qO), v(qR)) : q == qR ? div(v(qO), v(qB)) : std::nullopt;
    case rTot:
      return q == qT ? mul(v(qI), v(qR)) : q == qI ? div(v(qT), v(qR)) : q == qR ? div(v(qT), v(qI)) : std::nullopt;
    case rIo2:
      return q == qO ? mul(v(qT), v(qBs)) : q == qT ? div(v(qO), v(qBs)) : q == qBs ? div(v(qO), v(qT)) : std::nullopt;
    default:
      return std::nullopt;
  }
}

// Little's law for one job (all its directions).
struct LittleCtx {
  bool applies = false;                  // closed loop with a known nominal depth
  double nominal = 0;                    // numjobs x iodepth (engine-adjusted)
  std::string nominal_text;              // "4 jobs x iodepth 128"
  std::optional<double> ach_lo, ach_hi;  // achieved depth bounds from IO depths
  bool libaio_buffered = false;          // io_submit blocks: anything between 1 and nominal is plausible
  std::string skip_note;                 // why it does not apply (open loop, ...)
};

struct LittleEval {
  bool evaluable = false;
  double L = 0, I = 0, ratio = 0;
  Severity sev = Severity::info;
  bool broken_err = false;
  bool explained_low = false;  // low but explained by fio overhead or the achieved depth
  std::string evidence;
};

LittleEval eval_little(const LittleCtx& c, const std::vector<Fig>& figs) {
  LittleEval e;
  if (!c.applies || figs.empty()) return e;
  for (const auto& f : figs) {
    if (!f.v[qI] || !f.v[qLat]) return e;
    e.L += *f.v[qI] * *f.v[qLat] / 1e6;
    e.I += *f.v[qI];
  }
  if (!(e.I > 0) || !(c.nominal > 0)) return e;
  e.evaluable = true;
  e.ratio = e.L / c.nominal;
  const double lat = e.L / e.I * 1e6;
  e.evidence = "IOPS x mean latency = " + num(e.I) + " x " + num(lat) + " us = " + num(e.L) + " I/Os in flight, but " +
               c.nominal_text + " = " + num(c.nominal) + " (" + ratio_text(e.ratio) + ")";
  if (c.ach_lo) e.evidence += "; IO depths say " + num(*c.ach_lo) + "-" + num(*c.ach_hi) + " were achieved";
  if (e.ratio > kLittleHighErr) {
    e.sev = Severity::error;
    e.broken_err = true;
  } else if (e.ratio > kLittleHighWarn) {
    e.sev = Severity::warning;
  } else if (e.ratio < kLittleLowWarn) {
    const double gap_us = (c.nominal - e.L) / e.I * 1e6;  // time per I/O slot outside the latency
    const bool fio_bound = gap_us <= kOverheadUs;
    const bool achieved = c.ach_hi && e.L >= 0.5 * *c.ach_lo && *c.ach_hi < c.nominal * kLittleLowWarn;
    if (fio_bound || achieved || c.libaio_buffered) {
      e.explained_low = true;
      e.sev = Severity::info;
      if (fio_bound) e.evidence += "; the " + num(gap_us) + " us per I/O outside the latency is fio's own overhead";
    } else if (e.ratio < kLittleLowErr) {
      e.sev = Severity::error;
      e.broken_err = true;
    } else {
      e.sev = Severity::warning;
    }
  }
  return e;
}

// Achieved depth bounds (per job) from fio's IO depths distribution: bucket "4" holds depths 4-7.
std::optional<std::pair<double, double>> achieved_depth(const fio::JobResult& j, double iodepth) {
  if (j.iodepth_level.empty()) return std::nullopt;
  double total = 0, lo = 0, hi = 0;
  for (const auto& [k, p] : j.iodepth_level) {
    std::string kk = k;
    bool ge = false;
    if (kk.rfind(">=", 0) == 0) {
      kk = kk.substr(2);
      ge = true;
    }
    auto v = number_of(kk);
    if (!v || p <= 0) continue;
    double upper = ge ? std::max(*v, iodepth) : (*v <= 1 ? 1 : 2 * *v - 1);
    upper = std::min(upper, std::max(iodepth, *v));
    lo += p * std::min(*v, std::max(iodepth, 1.0));
    hi += p * upper;
    total += p;
  }
  if (total < 50) return std::nullopt;
  return std::make_pair(lo / total, hi / total);
}

// One job of a result, or one run of inline numbers.
struct JobGroup {
  std::vector<const Measured*> ms;
};

LittleCtx little_context(const JobGroup& g) {
  LittleCtx c;
  const Measured& m = *g.ms.front();
  if (m.job_result && m.job_result->is_aggregate && m.job_result->name == "All clients") {
    c.skip_note = "the \"All clients\" sum of a client/server run (checked by the all-clients rule)";
    return c;
  }
  auto rate = key_number(m, "workload.rate_iops");
  auto think = key(m, "workload.thinktime");
  bool open = (rate && *rate > 0) || (think && number_of(*think).value_or(0) > 0);
  if (m.job_result)
    for (const char* o : {"rate", "rate_iops", "rate_min", "rate_iops_min", "thinktime", "latency_target"})
      if (m.job_result->options.count(o) || (m.result && m.result->global_options.count(o))) open = true;
  if (open) {
    c.skip_note =
        "an open-loop or paced job (rate_iops, rate, thinktime or latency_target): Little's law with the configured depth does "
        "not apply";
    return c;
  }
  auto depth = iodepth(m);
  auto eng = engine(m);
  const bool sync = eng && fio::is_synchronous_engine(*eng);
  double jobs = 1;
  if (m.job_result)
    jobs = m.job_result->jobs.value_or(1);
  else if (auto n = key_number(m, "workload.numjobs"))
    jobs = *n;
  std::optional<std::pair<double, double>> ach;
  if (m.job_result) ach = achieved_depth(*m.job_result, sync ? 1.0 : depth.value_or(1.0));
  if (!depth && !ach) return c;
  const double per_job = sync ? 1.0 : depth.value_or(ach ? ach->second : 1.0);
  c.applies = true;
  c.nominal = jobs * per_job;
  c.nominal_text = num(jobs) + (jobs == 1 ? " job" : " jobs") + " x " +
                   (sync ? "1 (" + *eng + " keeps one I/O in flight)" : "iodepth " + num(per_job));
  if (ach) {
    c.ach_lo = ach->first * jobs;
    c.ach_hi = ach->second * jobs;
  }
  auto direct = key(m, "workload.direct");
  const bool buffered = direct ? (*direct == "false" || *direct == "0") : defaults_apply(m);
  c.libaio_buffered = eng && *eng == "libaio" && buffered;
  return c;
}

struct JobRelations {
  std::vector<Fig> figs;
  std::vector<const Measured*> ms;
  LittleCtx little;
};

// The error-level broken relations: (dir index, relation) plus Little as rel == kRel.
std::set<std::pair<int, int>> broken(const JobRelations& jr, const std::vector<Fig>& figs) {
  std::set<std::pair<int, int>> out;
  for (std::size_t d = 0; d < figs.size(); ++d)
    for (int r = 0; r < kRel; ++r)
      if (auto x = rel_ratio(figs[d], static_cast<Rel>(r)); x && std::fabs(*x - 1) > kErr) out.insert({static_cast<int>(d), r});
  if (eval_little(jr.little, figs).broken_err) out.insert({-1, kRel});
  return out;
}

std::string power_text(double f) {
  const double e = std::log10(f);
  char buf[32];
  std::snprintf(buf, sizeof buf, "10^%d", static_cast<int>(std::lround(e)));
  return buf;
}

void check_job(JobRelations& jr, std::vector<Finding>& out) {
  // 1. Unit slips.
  auto b0 = broken(jr, jr.figs);
  if (!b0.empty()) {
    struct Cand {
      int d;
      Q q;
      double f;
    };
    std::vector<Cand> cands;
    for (std::size_t d = 0; d < jr.figs.size(); ++d)
      for (int q = 0; q < qBs; ++q) {
        if (!jr.figs[d].v[q]) continue;
        for (double f : {1e3, 1e6, 1e-3, 1e-6}) {
          auto figs = jr.figs;
          *figs[d].v[q] /= f;
          if (broken(jr, figs).empty()) cands.push_back({static_cast<int>(d), static_cast<Q>(q), f});
        }
      }
    if (!cands.empty()) {
      const Measured& m = *jr.ms[static_cast<std::size_t>(cands[0].d)];
      if (cands.size() == 1) {
        const Cand& c = cands[0];
        const double value = *jr.figs[static_cast<std::size_t>(c.d)].v[c.q];
        const double corrected = value / c.f;
        std::string ev = std::string(kQName[c.q]) + " " + num(value) + " disagrees with the other figures by " +
                         (c.f > 1 ? power_text(c.f) : "1/" + power_text(1 / c.f)) + ":";
        bool first = true;
        for (int r = 0; r < kRel; ++r) {
          auto x = implied(jr.figs[static_cast<std::size_t>(c.d)], static_cast<Rel>(r), c.q);
          if (!x) continue;
          bool involved = false;
          for (Q q : kRelQ[r]) involved |= q == c.q;
          if (!involved) continue;
          ev += (first ? " " : "; ") + rel_evidence(jr.figs[static_cast<std::size_t>(c.d)], static_cast<Rel>(r));
          first = false;
        }
        auto fixed = jr.figs;
        *fixed[static_cast<std::size_t>(c.d)].v[c.q] = corrected;
        auto le = eval_little(jr.little, jr.figs);
        if (le.evaluable && (c.q == qI || c.q == qLat)) {
          ev += std::string(first ? " " : "; ") + le.evidence;
        }
        Finding f =
            make(Severity::error, "unit-slip", where_dir(m), ev,
                 std::string("a unit slip: the ") + kQName[c.q] + " was written or converted with the wrong prefix (k/M/G, " +
                     "\"million\", us vs ms, KiB vs B); the value that fits the other figures is " + num(corrected));
        f.corrected = corrected;
        out.push_back(std::move(f));
        jr.figs = fixed;
      } else {
        std::string names;
        for (const auto& c : cands) {
          if (!names.empty()) names += " or ";
          names += std::string(jr.ms[static_cast<std::size_t>(c.d)]->dir) + " " + kQName[c.q] + " / " +
                   (c.f > 1 ? power_text(c.f) : "1/" + power_text(1 / c.f));
        }
        std::string ev;
        for (const auto& [d, r] : b0)
          if (r < kRel) ev += (ev.empty() ? "" : "; ") + rel_evidence(jr.figs[static_cast<std::size_t>(d)], static_cast<Rel>(r));
        out.push_back(
            make(Severity::error, "unit-slip", where(m), ev + "; any of these corrections makes the figures agree: " + names,
                 "a unit slip (a k/M prefix, KiB vs B, us vs ms): one figure is off by a power of 1000, but the output does "
                 "not say which"));
        return;
      }
    }
  }

  // 2. One figure whose relations are all broken, then each relation on its own.
  auto b1 = broken(jr, jr.figs);
  std::set<int> little_explained_dirs;  // IOPS culprits explain a broken Little
  bool little_reported = false;
  std::set<std::pair<int, int>> done;
  for (std::size_t d = 0; d < jr.figs.size(); ++d) {
    std::set<int> s;
    for (const auto& [dd, r] : b1)
      if (dd == static_cast<int>(d)) s.insert(r);
    if (s.empty()) continue;
    std::vector<Q> culprits;
    for (int q = 0; q <= qBs; ++q) {
      if (q == qLat) continue;
      std::set<int> rel_q;
      for (int r = 0; r < kRel; ++r) {
        bool involved = false;
        for (Q x : kRelQ[r]) involved |= x == q;
        if (involved && rel_ratio(jr.figs[d], static_cast<Rel>(r))) rel_q.insert(r);
      }
      if (!rel_q.empty() && rel_q == s) culprits.push_back(static_cast<Q>(q));
    }
    std::set<std::string> rules;
    auto rule_of = [](Q q) -> const char* {
      switch (q) {
        case qI:
        case qB:
        case qBs:
          return "bw-vs-iops";
        case qT:
          return "total-ios";
        case qO:
          return "io-bytes";
        case qR:
          return "runtime";
        default:
          return "";
      }
    };
    for (Q q : culprits) rules.insert(rule_of(q));
    const Measured& m = *jr.ms[d];
    std::string ev;
    for (int r : s) ev += (ev.empty() ? "" : "; ") + rel_evidence(jr.figs[d], static_cast<Rel>(r));
    if (rules.size() == 1) {
      const std::string rule = *rules.begin();
      for (Q q : culprits)
        if (q == qI) little_explained_dirs.insert(static_cast<int>(d));
      Severity sev = Severity::error;
      std::string cause;
      const auto* st = stats(m);
      if (rule == "io-bytes" && jr.figs[d].v[qO] && *jr.figs[d].v[qO] == 0 && jr.figs[d].v[qT] && *jr.figs[d].v[qT] > 0) {
        sev = Severity::warning;
        cause = "fio printed io=0B although the job completed " + num(*jr.figs[d].v[qT]) +
                " I/Os and its bandwidth, IOPS and runtime agree with each other: a reporting glitch of old fio text output "
                "(the group's \"Run status\" line usually shows the right amount); the run itself is consistent";
      } else if (rule == "bw-vs-iops") {
        const bool iops_side = std::find(culprits.begin(), culprits.end(), qI) != culprits.end() && culprits.size() == 1;
        const bool bs_side = std::find(culprits.begin(), culprits.end(), qBs) != culprits.end() && culprits.size() == 1;
        cause = iops_side ? "the IOPS figure does not fit the bandwidth, I/O count and runtime: copied from another run, job or "
                            "direction, or edited"
                : bs_side
                    ? "the job did not issue the block size its options say (bs per direction as bs=r,w, bsrange or bssplit, "
                      "or the options of another job)"
                    : "bandwidth and IOPS x block size disagree: one of them was copied from another run or line, converted "
                      "with the wrong unit (KiB/s, KB/s, MiB/s), or the block size is not what ran";
      } else if (rule == "total-ios") {
        cause = "the I/O count does not fit IOPS x runtime and io / bs: copied from another run or edited";
      } else if (rule == "io-bytes") {
        cause =
            "the amount of data moved does not fit bandwidth x runtime and total_ios x bs: copied from another run, a unit "
            "mix-up of MB and MiB in a conversion, or edited";
      } else {
        cause =
            "the runtime does not fit: total_ios / IOPS and io / bandwidth both give another duration (the runtime of another "
            "job or the group, or ramp_time included)";
      }
      (void)st;
      out.push_back(make(sev, rule.c_str(), where_dir(m), ev, cause));
      // The rules after this one use the IOPS the other figures imply, so that one wrong figure
      // is reported once.
      if (culprits.size() == 1 && culprits[0] == qI) {
        auto x = implied(jr.figs[d], rTot, qI);
        if (!x) x = implied(jr.figs[d], rBw, qI);
        if (x) jr.figs[d].v[qI] = x;
      }
      for (int r : s) done.insert({static_cast<int>(d), r});
    } else {
      for (int r : s) {
        out.push_back(make(Severity::error, kRelRule[r], where_dir(m), rel_evidence(jr.figs[d], static_cast<Rel>(r)),
                           "two figures of the output disagree by more than 10%: one of them was copied from another run, "
                           "converted with the wrong unit, or edited"));
        done.insert({static_cast<int>(d), r});
      }
    }
  }
  // 3. Warnings: relations off by 3-10%.
  for (std::size_t d = 0; d < jr.figs.size(); ++d)
    for (int r = 0; r < kRel; ++r) {
      if (done.count({static_cast<int>(d), r})) continue;
      auto x = rel_ratio(jr.figs[d], static_cast<Rel>(r));
      if (!x || std::fabs(*x - 1) <= kWarn || std::fabs(*x - 1) > kErr) continue;
      if (r == rIo2 && done.count({static_cast<int>(d), rIo})) continue;
      const auto* st = stats(*jr.ms[d]);
      const bool shorts = st && ((st->short_ios && *st->short_ios > 0));
      if (shorts && (r == rBw || r == rIo2)) continue;
      out.push_back(
          make(Severity::warning, kRelRule[r], where_dir(*jr.ms[d]),
               rel_evidence(jr.figs[d], static_cast<Rel>(r)) + " (" + ratio_text(*x) + ")",
               "the figures disagree by " + pct(std::fabs(*x - 1) * 100) +
                   ", more than fio's rounding explains: mixed block sizes, short I/Os, or figures from different runs"));
    }
  // 4. Little's law.
  if (!jr.little.applies) {
    if (!jr.little.skip_note.empty())
      out.push_back(
          make(Severity::info, "little", where(*jr.ms.front()), "not checked: " + jr.little.skip_note, "(not applicable)"));
    return;
  }
  auto le = eval_little(jr.little, jr.figs);
  if (!le.evaluable || little_reported) return;
  if (!little_explained_dirs.empty()) return;
  if (le.sev == Severity::info && !le.explained_low) return;
  std::string cause;
  if (le.ratio > 1) {
    cause =
        "more I/Os in flight than the job can have: the IOPS or the latency figure is not from this run (or is a group total "
        "next to a per-job latency), or more jobs or a deeper queue ran than the options say";
  } else if (le.explained_low) {
    cause = jr.little.libaio_buffered ? "libaio without direct=1 submits synchronously, so the configured depth is not reached"
                                      : "the configured depth was not reached; the achieved depth explains the figures";
  } else {
    cause =
        "fewer I/Os in flight than configured, with time unaccounted between completion and resubmission: a CPU-bound fio "
        "(one core per job), thinktime or rate limits, a synchronous engine (iodepth has no effect on psync), or a latency "
        "figure that is not the total (clat without slat)";
  }
  out.push_back(make(le.sev, "little", where(*jr.ms.front()), le.evidence, cause));
}

// ---- latency statistics ---------------------------------------------------------------------

double slack_ns(const Measured& m, double ref) {
  double s = 0.005 * std::fabs(ref);
  if (m.result && (m.result->format == fio::Format::normal || m.result->format == fio::Format::terse ||
                   fio::fio_major_version(m.result->fio_version) == 2))
    s += 1000;  // microsecond (or coarser) printing
  return s;
}

void latency_stats(const Measured& m, std::vector<Finding>& out) {
  std::vector<std::string> bad;
  const auto* st = stats(m);
  if (st) {
    const std::pair<const char*, const fio::LatencyStats*> all[] = {{"slat", &st->slat}, {"clat", &st->clat}, {"lat", &st->lat}};
    for (const auto& [name, l] : all) {
      if (l->empty()) continue;
      const std::string n = name;
      const double us = 1e3;
      if (l->min_ns && l->max_ns && *l->min_ns > *l->max_ns + slack_ns(m, *l->max_ns))
        bad.push_back(n + " min " + num(*l->min_ns / us) + " us > max " + num(*l->max_ns / us) + " us");
      if (l->min_ns && l->max_ns && l->mean_ns && !(*l->max_ns == 0 && *l->mean_ns == 0)) {
        const double s = slack_ns(m, *l->max_ns);
        if (*l->mean_ns < *l->min_ns - s || *l->mean_ns > *l->max_ns + s)
          bad.push_back(n + " mean " + num(*l->mean_ns / us) + " us outside [min " + num(*l->min_ns / us) + ", max " +
                        num(*l->max_ns / us) + "] us");
        else if (l->stddev_ns) {
          const double bound = std::sqrt(std::max(0.0, (*l->mean_ns - *l->min_ns) * (*l->max_ns - *l->mean_ns)));
          if (*l->stddev_ns > 1.05 * bound + s)
            bad.push_back(n + " stdev " + num(*l->stddev_ns / us) + " us exceeds the largest possible for mean " +
                          num(*l->mean_ns / us) + " us within [" + num(*l->min_ns / us) + ", " + num(*l->max_ns / us) +
                          "] us, sqrt((mean-min)(max-mean)) = " + num(bound / us) + " us");
        }
      }
      const auto& p = l->percentiles;
      for (std::size_t i = 1; i < p.size(); ++i)
        if (p[i].second < p[i - 1].second - 0.03 * p[i - 1].second - slack_ns(m, p[i - 1].second) &&
            p[i].first > p[i - 1].first) {
          bad.push_back(n + " percentiles not monotone: p" + num(p[i - 1].first) + " = " + num(p[i - 1].second / us) + " us > p" +
                        num(p[i].first) + " = " + num(p[i].second / us) + " us");
          break;
        }
      if (!p.empty() && l->max_ns && *l->max_ns > 0) {
        double top = 0, top_p = 0;
        for (const auto& [q, v] : p)
          if (v > top) top = v, top_p = q;
        if (top > 1.05 * *l->max_ns + slack_ns(m, *l->max_ns))
          bad.push_back(n + " p" + num(top_p) + " = " + num(top / us) + " us > max " + num(*l->max_ns / us) + " us");
      }
      if (!p.empty() && l->min_ns && *l->min_ns > 0) {
        double low = p.front().second, low_p = p.front().first;
        for (const auto& [q, v] : p)
          if (v < low && v > 0) low = v, low_p = q;
        if (low > 0 && low < 0.95 * *l->min_ns - slack_ns(m, *l->min_ns))
          bad.push_back(n + " p" + num(low_p) + " = " + num(low / us) + " us < min " + num(*l->min_ns / us) + " us");
      }
    }
  } else {
    // Inline numbers: p50 <= p99 <= p99.9, clat mean <= lat mean.
    std::vector<std::pair<const char*, std::optional<double>>> p = {
        {"p50", m.clat_p50_us}, {"p99", m.clat_p99_us}, {"p99.9", m.clat_p999_us}};
    const char* prev_name = nullptr;
    std::optional<double> prev;
    for (const auto& [name, v] : p) {
      if (!v) continue;
      if (prev && *v < *prev * 0.97)
        bad.push_back(std::string("clat ") + name + " = " + num(*v) + " us < " + prev_name + " = " + num(*prev) + " us");
      prev = v;
      prev_name = name;
    }
    if (m.clat_mean_us && m.lat_mean_us && *m.clat_mean_us > *m.lat_mean_us * 1.03)
      bad.push_back("clat mean " + num(*m.clat_mean_us) + " us > total latency mean " + num(*m.lat_mean_us) + " us");
  }
  if (bad.empty()) return;
  std::string ev;
  for (const auto& b : bad) ev += (ev.empty() ? "" : "; ") + b;
  out.push_back(
      make(Severity::error, "latency-stats", where_dir(m), ev,
           "these statistics cannot come from one set of samples: figures from different runs or units were combined, a "
           "latency unit (usec/msec) was misread, or the output was edited"));
}

void slat_clat_lat(const Measured& m, std::vector<Finding>& out) {
  const auto* st = stats(m);
  if (!st || !st->slat.mean_ns || !st->clat.mean_ns || !st->lat.mean_ns) return;
  const double s = *st->slat.mean_ns, c = *st->clat.mean_ns, l = *st->lat.mean_ns;
  if (!(l > 0)) return;
  const double dev = std::fabs(s + c - l);
  const double sl = slack_ns(m, l);
  std::string ev;
  Severity sev = Severity::info;
  if (dev > kErr * l + sl)
    sev = Severity::error;
  else if (dev > kWarn * l + sl)
    sev = Severity::warning;
  if (sev != Severity::info)
    ev = "slat " + num(s / 1e3) + " us + clat " + num(c / 1e3) + " us = " + num((s + c) / 1e3) +
         " us, but lat = " + num(l / 1e3) + " us";
  if (st->slat.min_ns && st->clat.min_ns && st->lat.min_ns && *st->slat.min_ns + *st->clat.min_ns > *st->lat.min_ns * 1.05 + sl) {
    sev = Severity::error;
    ev += (ev.empty() ? "" : "; ") + std::string("lat min ") + num(*st->lat.min_ns / 1e3) +
          " us < slat min + clat min = " + num((*st->slat.min_ns + *st->clat.min_ns) / 1e3) + " us";
  }
  if (sev == Severity::info) return;
  out.push_back(make(sev, "slat-clat-lat", where_dir(m), ev,
                     "fio's total latency is submission plus completion latency for every I/O; these do not add up, so the lines "
                     "come from different runs or units, or were edited"));
}

// ---- job-level rules ------------------------------------------------------------------------

void rwmix(const JobGroup& g, std::vector<Finding>& out) {
  const Measured& m = *g.ms.front();
  auto rw = key(m, "workload.rw");
  if (!rw) return;
  double r = 0, w = 0;
  bool counts = true;
  for (const auto* x : g.ms) {
    if (x->dir == "mixed") return;
    auto n = x->total_ios ? x->total_ios : x->iops;
    if (!n) continue;
    if (!x->total_ios) counts = false;
    (x->dir == "read" ? r : w) += *n;
  }
  if (r + w <= 0) return;
  const std::string p = *rw;
  const bool read_only = p == "read" || p == "randread";
  const bool write_only = p == "write" || p == "randwrite";
  const bool mixed = p == "rw" || p == "readwrite" || p == "randrw";
  if ((read_only && w > 0) || (write_only && r > 0)) {
    out.push_back(
        make(Severity::error, "rwmix", where(m),
             "rw=" + p + ", but the job did " + num(r) + " reads and " + num(w) + " writes" + (counts ? "" : " (per second)"),
             "the options do not describe this job: the output was edited or the options belong to another job (a verify "
             "phase also reads; check verify=)"));
    return;
  }
  if (!mixed) return;
  if (counts && r + w < 1000) return;
  std::optional<double> mix = key_number(m, "workload.rwmixread");
  const bool assumed = !mix;
  const bool known_default = assumed && defaults_apply(m);
  if (assumed) mix = 50;
  const double share = 100 * r / (r + w);
  const double dev = std::fabs(share - *mix);
  if (dev <= 3) return;
  Severity sev = dev > 10 ? Severity::error : Severity::warning;
  if (assumed && !known_default) sev = Severity::info;
  out.push_back(make(
      sev, "rwmix", where(m),
      "reads are " + pct(share) + " of the I/Os (" + num(r) + " reads, " + num(w) + " writes), but rwmixread = " + num(*mix) +
          (assumed ? (known_default ? " (fio's default)" : " (assumed: fio's default; the output does not show it)") : ""),
      assumed && !known_default ? "the job probably set rwmixread (the text output does not print it); pass it with "
                                  "--set workload.rwmixread=N or in the manifest"
                                : "the read/write mix is not what the options say: the options belong to another job, "
                                  "or one direction stalled (a blocked direction issues less in fio's mix)"));
}

void group_vs_job(const Measured& m, std::optional<double> iops, std::vector<Finding>& out) {
  const auto* st = stats(m);
  if (!st || !iops || !(*iops > 0)) return;
  const double jobs = m.job_result->jobs.value_or(1);
  const double per_job = *iops / jobs;
  struct Side {
    const char* name;
    std::optional<double> mean;
    std::optional<std::uint64_t> samples;
    double expect;
    double scale;
    const char* unit;
  };
  std::vector<Side> sides;
  if (st->iops_mean && *st->iops_mean > 0) sides.push_back({"iops_mean", st->iops_mean, st->iops_samples, per_job, 1, ""});
  if (st->bw_mean_bytes_per_s && *st->bw_mean_bytes_per_s > 0 && st->bw_bytes_per_s && *st->bw_bytes_per_s > 0 && sides.empty())
    sides.push_back({"bw avg", st->bw_mean_bytes_per_s, st->bw_samples, *st->bw_bytes_per_s / jobs, 1.0 / 1024, " KiB/s"});
  for (const auto& s : sides) {
    if (s.samples && *s.samples < 2) continue;
    const double r = *s.mean / s.expect;
    const std::string ev = std::string(s.name) + " (the mean of fio's interval samples) = " + num(*s.mean * s.scale) + s.unit +
                           ", but the run's " + (std::string(s.name) == "iops_mean" ? "IOPS" : "bandwidth") +
                           " / jobs = " + num(s.expect * jobs * s.scale) + s.unit + " / " + num(jobs) + " = " +
                           num(s.expect * s.scale) + s.unit + " (" + ratio_text(r) + ")";
    // fio 2.x averages the interval samples per job (fio#519); fio 3.x sums them over the
    // group's jobs. Either is fine.
    const bool per_job_ok = r >= 0.7 && r <= 1.3;
    const bool summed_ok = jobs > 1 && r / jobs >= 0.7 && r / jobs <= 1.3;
    if (per_job_ok || summed_ok) {
      if (jobs > 1)
        out.push_back(make(Severity::info, "group-vs-job", where_dir(m), ev,
                           per_job_ok
                               ? "with group_reporting the headline IOPS and bandwidth are the group's total, while this "
                                 "fio's iops_mean/bw avg are per job (fio#519)"
                               : "with group_reporting this fio sums the interval samples over the group's jobs, so "
                                 "iops_mean/bw avg are the group's like the headline figures (older fio: per job, fio#519)"));
      continue;
    }
    out.push_back(make(Severity::warning, "group-vs-job", where_dir(m), ev,
                       "the interval samples and the run's total disagree: the rate changed a lot during the run (stalls, cache "
                       "fill, throttling), samples are missing, or the figures come from different runs"));
  }
}

void errors_rule(const JobGroup& g, std::vector<Finding>& out) {
  const Measured& m = *g.ms.front();
  if (!m.job_result || !m.job_result->error || *m.job_result->error == 0) return;
  const int e = *m.job_result->error;
  static const std::map<int, const char*> names = {
      {1, "EPERM"},   {2, "ENOENT"},  {5, "EIO"},    {6, "ENXIO"},    {12, "ENOMEM"},     {13, "EACCES"},     {16, "EBUSY"},
      {22, "EINVAL"}, {28, "ENOSPC"}, {30, "EROFS"}, {61, "ENODATA"}, {95, "EOPNOTSUPP"}, {110, "ETIMEDOUT"}, {121, "EREMOTEIO"}};
  std::string ev = "fio reports err=" + std::to_string(e);
  if (auto it = names.find(e); it != names.end()) ev += std::string(" (") + it->second + ")";
  ev += " for this job";
  out.push_back(make(Severity::error, "errors", where(m), ev,
                     "the job hit an I/O error: fio stopped it early (unless continue_on_error), so the figures cover a partial "
                     "run, and failed I/Os can be counted as completions, which inflates IOPS (spdk#169)"));
}

void short_io(const Measured& m, std::vector<Finding>& out) {
  const auto* st = stats(m);
  if (!st) return;
  const double s = static_cast<double>(st->short_ios.value_or(0)), d = static_cast<double>(st->drop_ios.value_or(0));
  if (s + d <= 0) return;
  const double total = m.total_ios.value_or(0);
  const Severity sev = total > 0 && (s + d) > 0.01 * total ? Severity::error : Severity::warning;
  out.push_back(
      make(sev, "short-io", where_dir(m), num(s) + " short and " + num(d) + " dropped I/Os of " + num(total),
           "short I/Os transferred less than the block size (end of a file or device, or a failing device); dropped I/Os "
           "were never completed (a rate-limited or aborted job): the block size and bandwidth figures are off by that "
           "share"));
}

void all_clients(const fio::FioResult& r, const std::vector<const Measured*>& ms, std::vector<Finding>& out) {
  for (const auto* m : ms) {
    if (!m->job_result || m->job_result->name != "All clients" || !m->job_result->is_aggregate || !m->iops) continue;
    double sum = 0;
    int n = 0;
    for (const auto& j : r.jobs) {
      if (&j == m->job_result || (j.is_aggregate && j.name == "All clients")) continue;
      const fio::DirectionStats* d = m->dir == "read" ? &j.read : m->dir == "write" ? &j.write : j.mixed ? &*j.mixed : nullptr;
      if (d && d->iops) {
        sum += *d->iops;
        ++n;
      }
    }
    if (n == 0 || !(sum > 0)) continue;
    const double ratio = *m->iops / sum;
    if (ratio >= 0.9 && ratio <= 1.1) continue;
    out.push_back(make(ratio > 1.1 ? Severity::error : Severity::warning, "all-clients", where_dir(*m),
                       "\"All clients\" IOPS " + num(*m->iops) + ", but the " + std::to_string(n) + " client entries sum to " +
                           num(sum) + " (" + ratio_text(ratio) + ")",
                       ratio > 1.1
                           ? "the client/server sum counts I/Os more than once (fio#752: 1.49 M reported where iostat saw "
                             "162 k); use the per-client entries or the servers' disk stats"
                           : "the sum is missing some clients' I/O (a client that ended early or failed)"));
  }
}

}  // namespace

std::vector<Finding> check_consistency(const std::vector<Measured>& ms) {
  std::vector<Finding> out;
  // Jobs: the directions of one fio job entry, or of one manifest run's inline numbers.
  std::vector<JobGroup> groups;
  std::map<std::pair<const void*, std::string>, std::size_t> index;
  for (const auto& m : ms) {
    const std::pair<const void*, std::string> k = m.job_result
                                                      ? std::make_pair(static_cast<const void*>(m.job_result), std::string())
                                                      : std::make_pair(static_cast<const void*>(nullptr), m.source);
    auto it = index.find(k);
    if (it == index.end()) {
      index[k] = groups.size();
      groups.push_back({});
      groups.back().ms.push_back(&m);
    } else {
      groups[it->second].ms.push_back(&m);
    }
  }
  std::set<const fio::FioResult*> results;
  for (const auto& g : groups) {
    JobRelations jr;
    jr.ms = g.ms;
    for (const auto* m : g.ms) {
      Fig f;
      f.v[qI] = m->iops;
      if (m->bw_kib) f.v[qB] = *m->bw_kib * 1024;
      f.v[qT] = m->total_ios;
      if (const auto* st = stats(*m); st && st->io_bytes) f.v[qO] = static_cast<double>(*st->io_bytes);
      if (m->job_result) f.v[qR] = m->runtime_s;
      f.v[qLat] = m->lat_mean_us ? m->lat_mean_us : m->clat_mean_us;
      if (m->dir != "mixed") f.v[qBs] = key_number(*m, "workload.bs");
      for (auto& v : f.v)
        if (v && !(std::isfinite(*v) && *v >= 0)) v.reset();
      if (f.v[qR] && !(*f.v[qR] > 0)) f.v[qR].reset();
      if (f.v[qBs] && !(*f.v[qBs] > 0)) f.v[qBs].reset();
      jr.figs.push_back(f);
    }
    jr.little = little_context(g);
    check_job(jr, out);
    for (std::size_t d = 0; d < g.ms.size(); ++d) {
      latency_stats(*g.ms[d], out);
      slat_clat_lat(*g.ms[d], out);
      group_vs_job(*g.ms[d], jr.figs[d].v[qI], out);
      short_io(*g.ms[d], out);
    }
    rwmix(g, out);
    errors_rule(g, out);
    if (g.ms.front()->result) results.insert(g.ms.front()->result);
  }
  for (const auto* r : results) {
    std::vector<const Measured*> of;
    for (const auto& m : ms)
      if (m.result == r) of.push_back(&m);
    all_clients(*r, of, out);
  }
  return out;
}

}  // namespace vqsim::check
