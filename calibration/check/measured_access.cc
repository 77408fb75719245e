#include "calibration/check/measured_access.h"

#include <cmath>
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

}  // namespace vqsim::check::detail
