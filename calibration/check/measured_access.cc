#include "calibration/check/measured_access.h"

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
bool is_sync_engine(const std::string& e) {
  static const std::set<std::string> sync = {"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice"};
  return sync.count(e) > 0;
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

std::string evidence_num(double v) {
  char buf[64];
  if (!std::isfinite(v)) return "inf";
  const double a = std::fabs(v);
  if (a >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 100) std::snprintf(buf, sizeof buf, "%.1f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace vqsim::check::detail
