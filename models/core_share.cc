#include "models/core_share.h"

#include <cctype>

namespace vqsim::models {

namespace {

// The kind of thread a figure's name (without its VM's prefix) is, as io_path.cc names them:
// guest.fio_job<j>, host.main_loop, host.iothread<k>, host.vhost_worker; -1 for anything else.
// Exact patterns, so that a VM named "guest" or "host" is never taken for the first VM's thread.
int thread_kind(const std::string& rest) {
  const std::string tail = ".host_cores";
  if (rest.size() <= tail.size() || rest.compare(rest.size() - tail.size(), tail.size(), tail) != 0) return -1;
  const std::string t = rest.substr(0, rest.size() - tail.size());
  const auto numbered = [&](const std::string& head) {
    if (t.size() <= head.size() || t.rfind(head, 0) != 0) return false;
    for (std::size_t i = head.size(); i < t.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    return true;
  };
  if (numbered("guest.fio_job")) return 0;
  if (t == "host.main_loop") return 1;
  if (numbered("host.iothread")) return 2;
  if (t == "host.vhost_worker") return 3;
  return -1;
}

}  // namespace

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
      const int k = thread_kind(m.name.substr(i.prefix.size()));
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
