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
  double off_cpu_cores = 0;             // of busy_cores, what host.cpu's utilization does not hold: TCG vCPUs'
                                        // background work outside their requests (host.tcg_vcpu_busy)
  std::vector<HostCoreShare> profiles;  // one per [[vm]] profile (switched-off ones with 0), or one
};

// Means over the replications; a run of several stonewall groups: the first group's (as the
// device shares are).
HostCoreUse host_core_use(const IoScenario& s, const IoRunReport& r);

// The kind (an index into host_thread_kinds()) of a thread's figure or station named as
// io_path.cc names them, without its VM's prefix: guest.fio_job<j>, host.main_loop,
// host.iothread<k>, host.vhost_worker, each with `suffix` after it (".host_cores" for the core
// time figures, "" for the MVA's stations); -1 for anything else. Exact patterns, so that a VM
// named "guest" or "host" is never taken for the first VM's thread.
int host_thread_kind(const std::string& name, const std::string& suffix);

// A VM's CPU time per I/O by kind of thread, the figure a measurement of each thread's CPU
// time (calibration/lab/record: its CPU seconds over its I/Os) is compared with:
// cpu.<kind>_us_per_io, <kind> one of host_thread_kinds() (cpu.vcpus_us_per_io,
// cpu.main_loop_us_per_io, ...). The kind's index, or -1 for any other name.
int cpu_metric_kind(const std::string& metric);

// Counts per I/O, the figures a recording of the guest's interrupt counters and of each thread's
// voluntary context switches is compared with (calibration/lab/record: the counts over the
// job's I/Os): count.interrupts_per_io, the guest's virtio request interrupts, and
// count.<kind>_wakes_per_io, the times the VM's threads of a host_thread_kinds() kind are woken
// (work that finds one asleep, a wait for a lock another thread's pass holds).
inline constexpr const char* kInterruptsPerIoMetric = "count.interrupts_per_io";
// The kind's index of a count.<kind>_wakes_per_io name, or -1 for any other name.
int wake_metric_kind(const std::string& metric);
// count.interrupts_per_io or a count.<kind>_wakes_per_io.
bool is_count_metric(const std::string& metric);

}  // namespace vqsim::models
