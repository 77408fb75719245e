#include "models/io_path_mva.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/aio_engine.h"
#include "models/backend.h"
#include "models/emulation_thread.h"
#include "models/fio_workload.h"
#include "models/guest_block.h"
#include "models/guest_cpu.h"
#include "models/virtqueue.h"
#include "sim/mva.h"

namespace vqsim::models {

namespace {

double ios_per_request(const IoScenario& s) {
  return static_cast<double>(s.workload.effective_depth()) / plug_merged_requests_per_job(s);
}

// The closed network: every stage's stations, in the order of the path (the guest's threads,
// the virtqueue's wake-up, the host threads, the interrupt, the AIO hand-off, the page cache and
// the device, fio's think time). Stage files say what each contributes.
std::vector<MvaDemand> build_stages(const IoScenario& plain, double p_kick, double p_wake, double irq_share) {
  // Demands are per request; a merged request carries `m` I/Os' worth of fio work and bytes.
  const double m = plain.workload.rate_iops > 0 ? 1.0 : ios_per_request(plain);
  IoScenario s = plain;
  s.workload.bs_read_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_read_bytes) * m));
  s.workload.bs_write_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_write_bytes) * m));
  const MvaInputs in{s, m, p_kick, p_wake, irq_share};
  std::vector<MvaDemand> st;
  guest_thread_demands(in, st);
  if (!s.bare_metal()) {
    virtqueue_wakeup_demands(in, st);
    host_thread_demands(in, st);
    virtqueue_interrupt_demands(in, st);
    aio_demands(in, st);
  }
  backend_demands(in, st);
  fio_demands(in, st);
  if (s.vms <= 1) return st;
  // vm.count identical VMs: every VM has its own copy of the stations that are not shared, and
  // a request visits its VM's copy. The network is solved as one class that visits each copy
  // with probability 1/K (demand D/K at each) -- exact for the shared stations and the delays,
  // an approximation for the per-VM queues (a customer is really bound to its VM), checked
  // against the simulation by --compare-mva.
  std::vector<MvaDemand> expanded;
  for (const MvaDemand& d : st) {
    if (d.shared || d.kind == sim::MvaStationKind::Delay) {
      expanded.push_back(d);
      continue;
    }
    for (int v = 0; v < s.vms; ++v) {
      MvaDemand copy = d;
      copy.name = vm_prefix(v) + d.name;
      copy.demand_ns = d.demand_ns / s.vms;
      expanded.push_back(copy);
    }
  }
  return expanded;
}

}  // namespace

IoMvaResult solve_io_mva(const IoScenario& s) {
  if (s.multi_vm()) {
    // One running profile is vm.count identical VMs: the MVA below. Several are a multi-class
    // network, which this MVA does not solve: it says so rather than answer for one of them.
    const VmProfile* only = nullptr;
    std::string names;
    int running = 0;
    for (const VmProfile& p : s.profiles)
      if (p.count > 0) {
        only = &p;
        names += (running++ ? ", " : "") + p.name;
      }
    if (running != 1)
      throw std::invalid_argument("the MVA models one VM profile (vm.count identical VMs), and this scenario runs " +
                                  std::to_string(running) + " [[vm]] profiles (" + names +
                                  "): their classes are not solved together yet; use vqsim run (the simulation)");
    return solve_io_mva(only->scenario);
  }
  const auto& w = s.workload;
  const int vms = std::max(1, s.vms);
  IoMvaResult out;
  double p_kick = 1, p_wake = 1, irq_share = 1;
  std::vector<MvaDemand> st;
  std::vector<double> residence, util, number;
  double x_ns = 0;  // I/Os per ns
  // Fixed point on the host threads' utilization: kicks and wake-ups happen only when a
  // thread is asleep. Five rounds settle it to well under a percent.
  for (int round = 0; round < 6; ++round) {
    st = build_stages(s, p_kick, p_wake, irq_share);
    residence.assign(st.size(), 0);
    util.assign(st.size(), 0);
    number.assign(st.size(), 0);
    if (w.rate_iops > 0) {
      out.open_loop = true;
      x_ns = w.rate_iops * w.numjobs * vms / 1e9;
      for (std::size_t k = 0; k < st.size(); ++k) {
        const double d = st[k].demand_ns;
        if (st[k].kind == sim::MvaStationKind::Delay) {
          residence[k] = d;
          util[k] = x_ns * d;
        } else {
          const double u = x_ns * d / st[k].servers;
          util[k] = u;
          if (u >= 1) out.saturated = true;
          // M/M/c waiting by Erlang C would be exact for c > 1; D/(1-U) is its c = 1 form.
          residence[k] = u < 1 ? (st[k].servers == 1 ? d / (1 - u) : d + d / st[k].servers * std::pow(u, st[k].servers) / (1 - u))
                               : INFINITY;
        }
        number[k] = x_ns * residence[k];
      }
    } else {
      std::vector<sim::MvaStation> ms;
      for (const auto& x : st) ms.push_back({x.name, x.kind, x.servers, {std::max(0.0, x.demand_ns)}});
      const int population = w.numjobs * plug_merged_requests_per_job(s) * vms;
      // Exact MVA costs 2^(multi-server stations) x population; past its work limit (thousands of
      // jobs x a deep iodepth) Schweitzer-Bard's approximation answers instead of failing.
      sim::MvaResult r;
      try {
        r = sim::mva_exact(ms, population);
      } catch (const std::invalid_argument&) {
        r = sim::mva_schweitzer(ms, {population});
      }
      x_ns = r.throughput[0];
      for (std::size_t k = 0; k < st.size(); ++k) {
        residence[k] = r.residence[k][0];
        util[k] = r.utilization[k][0];
        number[k] = r.queue_length[k][0];
      }
    }
    // Probability a host thread is asleep when a request arrives: idle, and (IOThreads) the idle
    // gap has outlasted the polling window (Poisson arrivals at the thread's rate).
    double u_host = 0, x_thread = x_ns;
    int threads = 0;
    for (std::size_t k = 0; k < st.size(); ++k)
      if (st[k].host_thread) {
        u_host += util[k];
        ++threads;
      }
    if (threads > 0) {
      u_host /= threads;
      x_thread = x_ns / threads;
    }
    double asleep = std::clamp(1 - u_host, 0.0, 1.0);
    if (s.host.iothreads > 0 && s.host.poll_max_ns > 0) asleep *= std::exp(-x_thread * s.host.poll_max_ns);
    if (s.guest.driver == GuestDriver::vhost_user_blk) asleep = 0;
    p_wake = asleep;
    irq_share = 1.0 / (1.0 + x_ns / vms / std::max(1, s.queues()) * s.vq.irq_ns);
    p_kick = s.vq.event_idx ? asleep : 1.0;
    if (s.guest.driver == GuestDriver::scsi_hba) p_kick = 1.0;
  }
  out.total_iops = x_ns * 1e9 * (w.rate_iops > 0 ? 1.0 : ios_per_request(s));
  out.iops = vms > 1 ? out.total_iops / vms : out.total_iops;  // one VM's
  out.read_iops = out.iops * w.read_fraction;
  out.write_iops = out.iops - out.read_iops;
  double total = 0, submit = 0;
  double worst = -1;
  for (std::size_t k = 0; k < st.size(); ++k) {
    if (st[k].name == "fio.thinktime") continue;
    total += residence[k];
    // The stations on the submit side count towards slat, a job thread by its submit share.
    if (st[k].slat == MvaDemand::Slat::all)
      submit += residence[k];
    else if (st[k].slat == MvaDemand::Slat::share)
      submit += residence[k] * st[k].slat_part_ns / st[k].slat_whole_ns;
    // Per I/O: a merged request's residence is shared by the I/Os it carries.
    out.stages.push_back({st[k].name, residence[k] / (w.rate_iops > 0 ? 1.0 : ios_per_request(s)), util[k], number[k]});
    if (st[k].kind != sim::MvaStationKind::Delay && util[k] > worst) {
      worst = util[k];
      out.bottleneck = st[k].name;
    }
  }
  out.lat_mean_ns = total;
  out.slat_mean_ns = submit;
  out.clat_mean_ns = total - submit;
  return out;
}

}  // namespace vqsim::models
