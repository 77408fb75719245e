// Who keeps the host's cores busy: with host.cores set, every VM's fio threads (its vCPUs'
// work), its QEMU main loop or IOThreads and its vhost worker run on one processor-sharing
// station, host.cpu. Each such thread counts the core time its own work takes there during the
// measured window (CoreTime, `<thread>.host_cores` in the run's figures: the mean number of cores
// it keeps busy); host_core_use adds them up per [[vm]] profile and per kind of thread, the
// cores' counterpart of the device shares (which VMs fill the device's queue).
#pragma once

#include <string>
#include <vector>

#include "models/core_time.h"
#include "models/io_results.h"
#include "models/scenario.h"

namespace vqsim::models {

// The kinds of thread on the cores, in output order, and how people call them.
inline const std::vector<std::pair<std::string, std::string>>& host_thread_kinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"vcpus", "vCPUs"}, {"main_loop", "main loop"}, {"iothreads", "IOThreads"}, {"vhost_worker", "vhost worker"}};
  return kinds;
}

struct HostCoreShare {
  std::string vm;            // the [[vm]] profile ("" in a single-VM file)
  double cores = 0;          // mean cores its VMs' threads keep busy (all its VMs)
  double share = 0;          // of every thread's core time on host.cpu
  std::vector<double> kind;  // each host_thread_kinds() kind's share of every thread's core time
};

struct HostCoreUse {
  bool present = false;  // host.cores is set (host.cpu is modelled)
  int cores = 0;
  sim::Interval utilization;            // host.cpu's: busy cores / cores
  double busy_cores = 0;                // every thread's core time together, per ns of the window
  std::vector<HostCoreShare> profiles;  // one per [[vm]] profile (switched-off ones with 0), or one
};

// Means over the replications; a run of several stonewall groups: the first group's (as the
// device shares are).
HostCoreUse host_core_use(const IoScenario& s, const IoRunReport& r);

}  // namespace vqsim::models
