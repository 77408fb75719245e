#include "calibration/fit/parameters.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "models/backend.h"
#include "models/guest_driver.h"
#include "models/scenario.h"

namespace vqsim::fit {

using models::IoScenario;

// Which keys can be fitted, and how each value is read back, is declared with the key
// (models/scenario.cc): no second table here.
const std::vector<std::string>& fittable_keys() { return models::io_fittable_keys(); }

double parameter_value(const IoScenario& s, const std::string& key) { return models::io_parameter_value(s, key); }

double fit_start_value(const IoScenario& s, const std::string& key) {
  const double v = parameter_value(s, key);
  if (v > 0) return v;
  // Off by default (docs/sources.md §1: the MVA alone, which plan and sweep use, charges it too
  // often on shared cores), but where the runs can measure it the fit starts from the lab's value.
  if (key == "host.loop_wake_us") return 4.0;
  if (key == "guest.halt_after_us") return 2.0;
  return v;
}

std::pair<double, double> parameter_bounds(const std::string& key) {
  std::pair<double, double> b{1e-300, 1e300};
  if (key.ends_with("_cv")) b = {0.02, 3.0};
  if (key.find("cpu_scale") != std::string::npos) b = {1e-3, 1e3};
  if (key.ends_with("_ratio")) b = {1e-6, 0.5};
  // Never beyond what the key itself accepts (a share such as host.tcg_vcpu_busy stops at 0.9):
  // a value there would be refused by the scenario, and the fit would have no model to evaluate.
  const double lo = models::clamp_to_key_range(key, 0.0), hi = models::clamp_to_key_range(key, 1e300);
  if (lo > b.first) b.first = lo;
  if (hi < b.second) b.second = hi;
  return b;
}

bool same_default_everywhere(const Dataset& d, const std::vector<std::size_t>& runs, const std::string& key) {
  if (runs.empty()) return true;
  const double first = parameter_value(d.runs[runs.front()].scenario, key);
  for (std::size_t i : runs) {
    const double v = parameter_value(d.runs[i].scenario, key);
    if (std::fabs(v - first) > 1e-9 * std::max(std::fabs(first), 1.0)) return false;
  }
  return true;
}

std::vector<std::string> candidate_keys(const Dataset& d, const std::vector<std::size_t>& runs) {
  bool percentiles = false;
  for (std::size_t i : runs)
    for (const auto& t : d.runs[i].targets) percentiles = percentiles || t.kind == "p50" || t.kind == "p99" || t.kind == "p99.9";
  bool virtual_run = false, threads_aio = false, reads = false, writes = false, big_blocks = false, flushes = false;
  bool big_reads = false, big_writes = false, big_qemu = false;
  std::map<models::BackendKind, int> kinds;
  for (std::size_t i : runs) {
    const IoScenario& s = d.runs[i].scenario;
    const bool qemu = !s.bare_metal() && s.guest.driver != models::GuestDriver::vhost_scsi &&
                      s.guest.driver != models::GuestDriver::vhost_user_blk;
    virtual_run = virtual_run || !s.bare_metal();
    threads_aio = threads_aio || (qemu && s.host.aio == models::Aio::threads);
    reads = reads || s.workload.read_fraction > 0;
    writes = writes || s.workload.read_fraction < 1;
    big_blocks = big_blocks || std::max(s.workload.bs_read_bytes, s.workload.bs_write_bytes) >= 64 * 1024 || !s.workload.random;
    const bool big = std::max(s.workload.bs_read_bytes, s.workload.bs_write_bytes) >= 64 * 1024;
    big_reads = big_reads || (big && s.workload.read_fraction > 0);
    big_writes = big_writes || (big && s.workload.read_fraction < 1);
    big_qemu = big_qemu || (big && qemu);
    flushes = flushes || ((s.host.cache == models::CacheMode::writethrough || s.host.cache == models::CacheMode::directsync) &&
                          s.workload.read_fraction < 1 && !s.bare_metal());
    ++kinds[s.backend.kind == models::BackendKind::md_raid1 ? s.backend.leg : s.backend.kind];
  }
  // Under TCG the guest's costs are TCG's multiple of KVM's: runs that are all TCG fit that
  // multiple (host.tcg_cpu_scale), so that guest.cpu_scale, which a KVM prediction keeps, stays
  // at its default; with KVM runs beside them the data can tell the two apart, so both are fitted.
  std::size_t tcg_runs = 0;
  for (std::size_t i : runs) tcg_runs += d.runs[i].scenario.host.accel == models::Accel::tcg ? 1 : 0;
  std::vector<std::string> c;
  if (tcg_runs < runs.size() || runs.empty()) c.push_back("guest.cpu_scale");
  if (tcg_runs > 0) c.push_back("host.tcg_cpu_scale");
  // TCG's interrupt is its own slow path, not a multiple of KVM's (host.tcg_irq_us): fitted with
  // the multiple, which runs at iodepth 1 (an interrupt per I/O) and at depth (fewer) tell apart.
  if (tcg_runs > 0) c.push_back("host.tcg_irq_us");
  // And the vCPU thread's wake-up (host.tcg_wake_us), which a halt or a wait for the big lock
  // brings: once per I/O at iodepth 1, seldom at depth, where interrupts still come.
  if (tcg_runs > 0) c.push_back("host.tcg_wake_us");
  if (virtual_run) {
    c.push_back("host.cpu_scale");
    c.push_back("virtqueue.wakeup_us");
  }
  if (threads_aio) c.push_back("host.threads_handoff_us");
  // An emulation thread's wake-up: the runs tell it from its per-request cost where they measure
  // the thread's CPU time both when every kick finds it asleep (iodepth 1) and when most find it
  // busy (at depth). docs/sources.md §1.
  bool thread_cpu_qd1 = false, thread_cpu_depth = false;
  for (std::size_t i : runs) {
    const IoScenario& s = d.runs[i].scenario;
    for (const auto& t : d.runs[i].targets) {
      if (t.metric != "cpu.main_loop_us_per_io" && t.metric != "cpu.iothreads_us_per_io") continue;
      (s.workload.iodepth * s.workload.numjobs <= 1 ? thread_cpu_qd1 : thread_cpu_depth) = true;
    }
  }
  if (virtual_run && thread_cpu_qd1 && thread_cpu_depth) c.push_back("host.loop_wake_us");
  if (big_qemu) c.push_back("host.emu_per_page_us");
  if (kinds.size() == 1) {
    const models::BackendKind k = kinds.begin()->first;
    using models::BackendKind;
    if (k == BackendKind::nvme || k == BackendKind::sata_ssd) {
      if (reads) c.push_back("backend.read_us");
      if (writes) c.push_back("backend.write_us");
      if (big_blocks) c.push_back("backend.bandwidth");
      if (big_reads && big_writes) c.push_back("backend.write_bandwidth");  // reads and writes stream at different rates
    } else if (k == BackendKind::hdd) {
      if (!std::all_of(runs.begin(), runs.end(), [&](std::size_t i) { return !d.runs[i].scenario.workload.random; }))
        c.push_back("backend.seek_ms");
      c.push_back("backend.bandwidth");
      if (big_reads && big_writes) c.push_back("backend.write_bandwidth");
      if (big_blocks) c.push_back("backend.seq_overhead_us");
    } else if (k == BackendKind::ceph_rbd || k == BackendKind::krbd) {
      if (reads) c.push_back("backend.osd_read_us");
      if (writes) c.push_back("backend.osd_write_us");
      c.push_back("backend.rtt_us");
      if (percentiles) {  // Ceph's tail is its stalls, not the spread of the OSD service
        c.push_back("backend.osd_stall_ratio");
        c.push_back("backend.osd_stall_ms");
      }
    }
    if (flushes && k != BackendKind::ceph_rbd && k != BackendKind::krbd) c.push_back("backend.flush_us");
  }
  if (percentiles) c.push_back("backend.service_cv");  // the spread of the device times shapes the tail
  std::vector<std::string> out;
  for (const auto& k : c)
    if (same_default_everywhere(d, runs, k)) out.push_back(k);
  return out;
}

}  // namespace vqsim::fit
