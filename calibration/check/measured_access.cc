#include "calibration/check/measured_access.h"

#include "models/fio_jobfile.h"
#include "models/scenario.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace vqsim::check::detail {

std::optional<std::string> key(const Measured& m, const std::string& k) {
  auto it = m.setup.find(k);
  if (it == m.setup.end() || it->second.empty()) return std::nullopt;
  return it->second;
}
std::optional<double> number_of(const std::string& s) {
  try {
    double v = std::stod(s);
    if (!std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}
std::optional<double> key_number(const Measured& m, const std::string& k) {
  auto v = key(m, k);
  return v ? number_of(*v) : std::nullopt;
}
bool defaults_apply(const Measured& m) {
  if (!m.result || !m.job_result) return false;
  if (m.result->format != fio::Format::json && m.result->format != fio::Format::json_plus) return false;
  return !m.job_result->options.empty() || !m.result->global_options.empty();
}
std::optional<std::string> engine(const Measured& m) {
  if (auto e = key(m, "fio.ioengine")) return e;
  if (auto e = key(m, "workload.ioengine")) return e;
  if (defaults_apply(m)) return std::string("psync");
  return std::nullopt;
}
std::string where(const Measured& m) {
  std::string s = m.source;
  if (!m.job.empty()) {
    s += ": job '";
    s += m.job;
    s += "'";
    if (m.job_result && !m.job_result->hostname.empty()) {
      s += " on ";
      s += m.job_result->hostname;
    }
  }
  return s;
}
std::string where_dir(const Measured& m) { return where(m) + " " + m.dir; }
const fio::DirectionStats* stats(const Measured& m) {
  if (!m.job_result) return nullptr;
  if (m.dir == "read") return &m.job_result->read;
  if (m.dir == "write") return &m.job_result->write;
  if (m.dir == "mixed" && m.job_result->mixed) return &*m.job_result->mixed;
  return nullptr;
}
Finding make(Severity s, const char* rule, std::string subject, std::string evidence, std::string cause) {
  Finding f;
  f.severity = s;
  f.rule = rule;
  f.subject = std::move(subject);
  f.evidence = std::move(evidence);
  f.cause = std::move(cause);
  return f;
}

std::string strip(std::string v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  std::size_t i = 0;
  while (i < v.size() && std::isspace(static_cast<unsigned char>(v[i]))) ++i;
  v = v.substr(i);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return v;
}

bool plain_number(const std::string& v) {
  if (v.empty()) return false;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size() && std::isfinite(d);
}

std::string override_of(const std::string& key, const std::string& raw) {
  const std::string v = strip(raw);
  if (plain_number(v) || v == "true" || v == "false") return key + "=" + v;
  std::string quoted = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return key + "=" + quoted;
}

const std::set<std::string>& scenario_keys() {
  static const std::set<std::string> keys = [] {
    std::set<std::string> k;
    for (const auto& p : models::io_scenario_parameters()) k.insert(p.key);
    return k;
  }();
  return keys;
}

std::string error_lines(const std::vector<std::string>& errors) {
  std::string all;
  for (const auto& e : errors) all.append(all.empty() ? "" : "\n").append(e);
  return all;
}

namespace {

// The five keys that say which workload a run measured, and the fio options that state each
// (an option present but not usable, such as bssplit for bs, still means fio did not run the
// default).
struct WorkloadKey {
  const char* key;
  const char* fio_default;
  std::vector<const char*> options;
};
const std::vector<WorkloadKey>& workload_keys() {
  static const std::vector<WorkloadKey> k = {
      {"workload.rw", "read", {"rw", "readwrite"}},
      {"workload.bs", "4096", {"bs", "blocksize", "bsrange", "blocksize_range", "bssplit"}},
      {"workload.iodepth", "1", {"iodepth"}},
      {"workload.numjobs", "1", {"numjobs"}},
      {"workload.ioengine", "psync", {"ioengine"}},
  };
  return k;
}

const std::string* fio_option(const Measured& m, const char* name) {
  if (!m.job_result) return nullptr;
  if (auto it = m.job_result->options.find(name); it != m.job_result->options.end()) return &it->second;
  if (m.result)
    if (auto it = m.result->global_options.find(name); it != m.result->global_options.end()) return &it->second;
  return nullptr;
}

// A pattern of reads and writes: its mix (rwmixread) is part of the workload.
bool mixed_rw(const std::map<std::string, std::string>& s) {
  const auto rw = s.find("workload.rw");
  return rw != s.end() && (rw->second == "rw" || rw->second == "readwrite" || rw->second == "randrw");
}

}  // namespace

std::map<std::string, std::string> stated_workload(const Measured& m) {
  std::map<std::string, std::string> s;
  for (const auto& w : workload_keys())
    if (auto v = key(m, w.key)) s[w.key] = *v;
  // A normal-text header's "(groupid=0, jobs=4)" counts the jobs fio ran (clones of one job
  // without group_reporting are separate entries of jobs=1).
  if (!s.count("workload.numjobs") && m.result && m.result->format == fio::Format::normal && m.job_result && m.job_result->jobs &&
      *m.job_result->jobs > 0)
    s["workload.numjobs"] = std::to_string(*m.job_result->jobs);
  if (defaults_apply(m)) {
    for (const auto& w : workload_keys()) {
      bool named = false;
      for (const char* o : w.options) named = named || fio_option(m, o);
      if (!named) s.emplace(w.key, w.fio_default);
    }
    if (mixed_rw(s) && !fio_option(m, "rwmixread") && !fio_option(m, "rwmixwrite")) s.emplace("workload.rwmixread", "50");
  }
  if (auto v = key(m, "workload.rwmixread")) s["workload.rwmixread"] = *v;
  return s;
}

std::vector<std::string> unstated_workload(const Measured& m) {
  std::vector<std::string> out;
  if (!m.result || !m.job_result || m.base_workload) return out;
  const auto s = stated_workload(m);
  const auto eng = s.find("workload.ioengine");
  const bool sync = eng != s.end() && fio::is_synchronous_engine(eng->second);
  for (const auto& w : workload_keys()) {
    if (s.count(w.key)) continue;
    if (sync && std::string(w.key) == "workload.iodepth") continue;  // a synchronous engine runs at depth 1
    out.push_back(w.key);
  }
  if (mixed_rw(s) && !s.count("workload.rwmixread")) out.push_back("workload.rwmixread");
  return out;
}

std::string unstated_workload_fix(const std::vector<std::string>& keys) {
  std::string list;
  for (std::size_t i = 0; i < keys.size(); ++i) list.append(i ? ", " : "").append("\"" + keys[i] + "\"");
  return "add " + list + " to this run's set (the value" + std::string(keys.size() == 1 ? "" : "s") +
         " fio ran with), or write base_workload = true in the run if the base scenario's workload is the one it ran";
}

std::string unstated_workload_why(const Measured& m, const std::vector<std::string>& keys) {
  std::string names;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    names += i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ";
    names += keys[i].substr(keys[i].find('.') + 1);
  }
  std::string why;
  if (m.result && m.result->format == fio::Format::terse)
    why = "its fio output is terse, which does not record " + names;
  else
    why = "its fio output (" + std::string(m.result ? fio::format_name(m.result->format) : "?") + ") does not state " + names;
  for (const auto& k : keys) {
    if (k == "workload.bs") {
      for (const char* o : {"bssplit", "bsrange", "blocksize_range", "bs", "blocksize"})
        if (const std::string* v = fio_option(m, o)) {
          why += std::string(" (it ran ") + o + "=" + *v + ", not one block size)";
          break;
        }
    }
    if (k == "workload.ioengine")
      if (const std::string* v = fio_option(m, "ioengine"))
        why += " (it ran ioengine=" + *v + ", which vqsim does not model: give the closest one)";
  }
  return why + ", and the run's set does not give " + (keys.size() == 1 ? "it" : "them");
}

std::vector<Finding> unstated_workload_findings(const std::vector<Measured>& ms) {
  std::vector<Finding> out;
  std::set<std::string> done;  // once per run, not per direction
  for (const Measured& m : ms) {
    if (m.run_name.empty() || !done.insert(m.source).second) continue;
    const auto missing = unstated_workload(m);
    if (missing.empty()) continue;
    out.push_back(
        make(Severity::warning, "unstated-workload", m.source, unstated_workload_why(m, missing),
             "the rules cannot judge a workload they do not know, and `vqsim calibrate` refuses the run rather than take the "
             "base scenario's: " +
                 unstated_workload_fix(missing)));
  }
  return out;
}

std::string evidence_num(double v) {
  char buf[64];
  if (!std::isfinite(v)) return "inf";
  const double a = std::fabs(v);
  if (a >= 1000 || a == std::floor(a))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string num(double v) {
  char buf[48];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.4g", v);
    std::string s = buf;
    const auto e = s.find('e');
    if (e != std::string::npos) {  // 8.097e+09 -> 8.097e9
      std::string mant = s.substr(0, e), exp = s.substr(e + 1);
      bool neg = !exp.empty() && exp[0] == '-';
      if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
      while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
      s = mant + "e" + (neg ? "-" : "") + exp;
    }
    return s;
  }
  if (a >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace vqsim::check::detail
