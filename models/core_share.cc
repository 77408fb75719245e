#include "models/core_share.h"

#include <cctype>

namespace vqsim::models {

int host_thread_kind(const std::string& name, const std::string& suffix) {
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return -1;
  const std::string t = name.substr(0, name.size() - suffix.size());
  const auto numbered = [&](const std::string& head) {
    if (t.size() <= head.size() || t.rfind(head, 0) != 0) return false;
    for (std::size_t i = head.size(); i < t.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    return true;
  };
  if (numbered("guest.fio_job") || t == "guest.vcpus") return 0;  // the MVA's station of every fio thread: guest.vcpus
  if (t == "host.main_loop") return 1;
  if (numbered("host.iothread") || t == "host.iothread") return 2;  // the MVA's one IOThread: host.iothread
  if (t == "host.vhost_worker") return 3;
  return -1;
}

namespace {
// The kind's index of a name <head><kind><tail>, or -1.
int thread_kind_between(const std::string& metric, const std::string& head, const std::string& tail) {
  if (metric.rfind(head, 0) != 0 || !metric.ends_with(tail) || metric.size() <= head.size() + tail.size()) return -1;
  const std::string kind = metric.substr(head.size(), metric.size() - head.size() - tail.size());
  for (std::size_t k = 0; k < host_thread_kinds().size(); ++k)
    if (host_thread_kinds()[k].first == kind) return static_cast<int>(k);
  return -1;
}
}  // namespace

int cpu_metric_kind(const std::string& metric) { return thread_kind_between(metric, "cpu.", "_us_per_io"); }

int wake_metric_kind(const std::string& metric) { return thread_kind_between(metric, "count.", "_wakes_per_io"); }

bool is_count_metric(const std::string& metric) { return metric == kInterruptsPerIoMetric || wake_metric_kind(metric) >= 0; }

HostCoreUse host_core_use(const IoScenario& s, const IoRunReport& r) {
  HostCoreUse u;
  if (s.host.cores <= 0 || !r.has("host.cpu.utilization")) return u;
  u.present = true;
  u.cores = s.host.cores;
  u.utilization = r.get("host.cpu.utilization");
  const std::size_t kinds = host_thread_kinds().size();
  const std::size_t n = s.multi_vm() ? s.profiles.size() : 1;
  u.profiles.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    if (s.multi_vm()) u.profiles[p].vm = s.profiles[p].name;
    u.profiles[p].kind.assign(kinds, 0.0);
  }
  const std::vector<VmInstance> vms = vm_instances(s);
  for (const auto& m : r.summary) {
    for (const VmInstance& i : vms) {
      if (m.name.rfind(i.prefix, 0) != 0) continue;
      if (host_thread_kind(m.name.substr(i.prefix.size()), ".off_cpu_cores") >= 0) {
        u.off_cpu_cores += m.interval.mean;
        break;
      }
      const int k = host_thread_kind(m.name.substr(i.prefix.size()), ".host_cores");
      if (k < 0) continue;
      HostCoreShare& p = u.profiles[s.multi_vm() ? static_cast<std::size_t>(i.profile) : 0];
      p.cores += m.interval.mean;
      p.kind[static_cast<std::size_t>(k)] += m.interval.mean;
      u.busy_cores += m.interval.mean;
      break;  // one VM's thread
    }
  }
  for (auto& p : u.profiles) {
    p.share = u.busy_cores > 0 ? p.cores / u.busy_cores : 0;
    for (double& k : p.kind) k = u.busy_cores > 0 ? k / u.busy_cores : 0;
  }
  return u;
}

}  // namespace vqsim::models
