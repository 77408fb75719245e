#include "models/io_path_mva.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/aio_engine.h"
#include "models/backend.h"
#include "models/core_share.h"
#include "models/emulation_thread.h"
#include "models/fio_workload.h"
#include "models/guest_block.h"
#include "models/guest_cpu.h"
#include "models/virtqueue.h"
#include "sim/mva.h"
#include "sim/mva_classes.h"

namespace vqsim::models {

namespace {

double ios_per_request(const IoScenario& s) {
  return static_cast<double>(s.workload.effective_depth()) / plug_merged_requests_per_job(s);
}

// The fio threads' work per request: their stations' demands ("guest.fio_job<j>" or "guest.vcpus").
double guest_demand(const std::vector<MvaDemand>& st) {
  double d = 0;
  for (const MvaDemand& x : st)
    if (host_thread_kind(x.name, "") == 0) d += x.demand_ns;
  return d;
}

// A fio thread's idle periods as the interrupts that reach it (`x_irq` per ns) see them, `u` its
// utilization and `n` the requests it keeps in flight (0: an open loop). By the arrival theorem a
// completion sees the loop without itself, about (n - 1) / n of the utilization: a lone request
// (iodepth 1) always finds fio idle. A period's mean is the thread's idle time over the arrivals
// that end one.
struct IdlePeriods {
  double seen = 0;        // the share of the utilization an arrival sees (seen_by_arrival)
  double found_idle = 0;  // the probability an arrival finds the thread idle
  double mean_ns = 0;     // an idle period's mean length (0: unknown, no arrivals)
};
IdlePeriods idle_periods(double u, double n, double x_irq) {
  if (!(u >= 0)) u = 0;  // a profile of no VMs solves to no throughput (0/0): nothing to see
  IdlePeriods i;
  i.seen = seen_by_arrival(n);
  i.found_idle = std::clamp(1 - i.seen * u, 0.0, 1.0);
  if (x_irq > 0 && i.found_idle > 0) i.mean_ns = std::max(0.0, 1 - u) / (x_irq * i.found_idle);
  return i;
}

// Probability that a completion finds its fio thread idle (asleep in io_getevents; arguments as
// idle_periods'), damped against the previous round's estimate: the wake-up's cost raises the
// utilization that makes it rarer. With guest.halt_after_us (`halt_ns`), only a wait longer than
// that halts the vCPU: the share of idle periods past it; a lone request's wait is its own round
// trip, about the same each time (it halts when that mean does), many requests' waits about
// exponential.
double guest_idle(double u, double n, int round, double previous, double x_irq = 0, double halt_ns = 0) {
  const IdlePeriods idle = idle_periods(u, n, x_irq);
  double p = idle.found_idle;
  if (halt_ns > 0 && p > 0) {
    const double m = idle.mean_ns;
    p *= m > 0 ? idle.seen * std::exp(-halt_ns / m) + (1 - idle.seen) * (m >= halt_ns ? 1.0 : 0.0) : 0.0;
  }
  return round == 0 ? p : 0.5 * (p + previous);
}

// The vCPU time of the way into halts (guest.halt_after_us) per interrupt that reaches a fio
// thread, in ns (arguments as guest_idle's): an idle period spends min(its length, halt_ns) on
// it, the periods of many requests about exponential (mean m: m (1 - exp(-halt_ns / m))), a lone
// request's about its mean. Nothing waits on that time: the vCPU's CPU figure holds it, the
// response times do not.
double halt_path_ns(double u, double n, double x_irq, double halt_ns) {
  const IdlePeriods idle = idle_periods(u, n, x_irq);
  const double m = idle.mean_ns;
  if (!(halt_ns > 0) || m <= 0) return 0;
  return idle.found_idle * (idle.seen * m * (1 - std::exp(-halt_ns / m)) + (1 - idle.seen) * std::min(m, halt_ns));
}

// QEMU's adaptive polling (aio_poll): after each wait the window stays where the wait ended
// within it, falls to 0 after a wait longer than max_ns, and else grows (4 us, then doubling, up
// to max_ns); an event found while busy is a wait of 0, which starts a window of 0 at 4 us. With
// waits Exp(x) (Poisson arrivals at rate x) and a busy thread's share u of the events, the
// windows form a Markov chain; the share of idle arrivals past the window is its stationary mean
// of exp(-x window). With an AIO notifier that polling leaves set (`aio_notifier`,
// AioEngine::poll_leaves_notifier), a wait past the window whose notifier is set moves the window
// as a wait just past it and polls once more with the moved window (EmulationThread): past the
// first window the wait ends in that second round or sleeps, its remainder measured against the
// moved window (exponential waits: past max_ns with probability exp(-x (max_ns - second))). The
// notifier is set at an idle arrival as often as a completion last found the thread awake, taken
// as the share of arrivals that do not find it asleep, 1 - (1 - u) past, updated as the chain is.
double past_adaptive_window(double x, double u, double max_ns, bool aio_notifier) {
  std::vector<double> w{0.0};
  for (double p = 4000;; p *= 2) {
    w.push_back(std::min(p, max_ns));
    if (p >= max_ns) break;
  }
  const std::size_t n = w.size();
  const double busy = std::clamp(u, 0.0, 1.0), reset = std::exp(-x * max_ns);
  // the state after a wait just past window i (the second round's), and the state a wait grows i to
  auto moved = [n](std::size_t i) { return i + 1 < n ? i + 1 : std::size_t{0}; };
  auto grown = [n](std::size_t i) { return std::min(i + 1, n - 1); };
  // per state, the waits' chances (the same every step): past its window, past the second round
  // too, and past the second round by more than max_ns
  std::vector<double> past_first(n), slept(n), long_sleep(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double second = w[moved(i)];
    past_first[i] = std::exp(-x * w[i]);
    slept[i] = std::exp(-x * (w[i] + second));
    long_sleep[i] = second < max_ns ? slept[i] * std::exp(-x * (max_ns - second)) : slept[i];
  }
  std::vector<double> pi(n, 1.0 / static_cast<double>(n)), next(n);
  auto past_of = [&](double q) {
    double p = 0;
    for (std::size_t i = 0; i < n; ++i) p += pi[i] * ((1 - q) * past_first[i] + q * slept[i]);
    return p;
  };
  double q = 0;
  for (int it = 0; it < 200; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      next[i == 0 ? 1 : i] += pi[i] * busy;
      const double stay = i == 0 ? 0.0 : 1.0 - past_first[i];
      const double idle = pi[i] * (1 - busy);
      const double grow = std::max(0.0, 1.0 - stay - reset);
      next[i] += idle * stay;
      next[0] += idle * (1 - q) * reset;
      next[grown(i)] += idle * (1 - q) * grow;
      if (q > 0) {
        // notifier set: found in the second round, or asleep past it (then reset or grown once more)
        const std::size_t m = moved(i);
        next[m] += idle * q * (past_first[i] - slept[i]);
        next[0] += idle * q * long_sleep[i];
        next[grown(m)] += idle * q * (slept[i] - long_sleep[i]);
      }
    }
    pi.swap(next);
    if (aio_notifier) q = std::clamp(1 - (1 - busy) * past_of(q), 0.0, 1.0);
  }
  return past_of(q);
}

// Probability a host thread is asleep when a request arrives (the fixed point's p_wake), `u` the
// host threads' mean utilization and `x` the requests per ns through each: idle, and (IOThreads)
// the idle gap has outlasted the polling window (Poisson arrivals at the thread's rate); never
// for a vhost-user backend, which polls. Damped against the previous round's where a wake-up
// costs the thread CPU: that cost raises the utilization that makes it rarer, and undamped the
// rounds swing between a thread that always wakes and one that never.
double host_asleep(const IoScenario& s, double u, double x, int round, double previous) {
  double asleep = std::clamp(1 - u, 0.0, 1.0);
  if (s.host.iothreads > 0 && s.host.poll_max_ns > 0)
    asleep *= s.host.poll_adaptive ? past_adaptive_window(x, u, s.host.poll_max_ns, aio_engine(s).poll_leaves_notifier)
                                   : std::exp(-x * s.host.poll_max_ns);
  if (s.guest.driver == GuestDriver::vhost_user_blk) asleep = 0;
  if (round > 0 && s.host.loop_wake_ns > 0) asleep = 0.5 * (asleep + previous);
  return asleep;
}

// Whether an MVA station lies between a request's guest submit and its used ring (not the guest's
// own, fio's, or the interrupt's): its residence is the time a request spends in the host.
bool between_submit_and_ring(const std::string& name) {
  return name.rfind("guest.", 0) != 0 && name.rfind("fio.", 0) != 0 && name != "virtqueue.irq";
}

// TCG's big lock (host.tcg_bql): the wait of one taking (bql_wait_ns) and the chance it waits at
// all (bql_wait_probability), from the main loop's utilization and demand per request, each damped
// against the previous round's, as what it adds to the vCPU lowers the utilization that sets it.
double damped(double value, int round, double previous) { return round == 0 ? value : 0.5 * (value + previous); }

// The probability a submit must kick: with EVENT_IDX, when the thread is asleep; under TCG's lock
// the main loop takes a request without a kick only while it pops the ring (the rest of its pass
// runs with notifications back on); an emulated HBA always traps.
double kick_probability(const IoScenario& s, double asleep, double u_main) {
  if (s.guest.driver == GuestDriver::scsi_hba || !s.vq.event_idx) return 1.0;
  if (bql_held_by_main_loop(s) && s.host.iothreads == 0) return 1.0 - main_loop_popping(s, u_main);
  return asleep;
}

// The closed network: every stage's stations, in the order of the path (the guest's threads,
// the virtqueue's wake-up, the host threads, the interrupt, the AIO hand-off, the page cache and
// the device, fio's think time). Stage files say what each contributes.
std::vector<MvaDemand> build_stages(const IoScenario& plain, double p_kick, double p_wake, double irq_share,
                                    double x_thread_per_ns, double p_guest_idle, double u_thread, double bql_wait,
                                    double x_fio_thread_per_ns, double p_bql) {
  // Demands are per request; a merged request carries `m` I/Os' worth of fio work and bytes.
  const double m = plain.workload.rate_iops > 0 ? 1.0 : ios_per_request(plain);
  IoScenario s = plain;
  s.workload.bs_read_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_read_bytes) * m));
  s.workload.bs_write_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(plain.workload.bs_write_bytes) * m));
  const MvaInputs in{s,    m, p_kick, p_wake, irq_share, x_thread_per_ns, p_guest_idle, u_thread, bql_wait, x_fio_thread_per_ns,
                     p_bql};
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
      copy.wait_ns = d.wait_ns / s.vms;
      copy.wakes = d.wakes / s.vms;  // together one VM's wake-ups per request, as its demand
      expanded.push_back(copy);
    }
  }
  return expanded;
}

}  // namespace

namespace {
// The MVA's stations are one disk's path per VM: a VM of several disks (its own tags, rings and
// AIO state per disk, on devices of their own) is refused, not answered as if it had one.
void refuse_several_disks(const IoScenario& s) {
  const auto check = [](const IoScenario& v, const std::string& name) {
    if (!v.multi_disk()) return;
    std::string disks;
    for (const DiskSpec& d : v.disks)
      disks += (disks.empty() ? "" : ", ") + d.name + (d.backend.empty() ? "" : " on " + d.backend);
    throw std::invalid_argument(name + " has " + std::to_string(v.disks.size()) + " disks (" + disks +
                                "): the MVA models one disk per VM; use vqsim run (the simulation), or one disk");
  };
  if (!s.multi_vm()) check(s, "the VM");  // a [[vm]] file's own fields are its first profile's
  for (const VmProfile& p : s.profiles)
    if (p.count > 0) check(p.scenario, "vm." + p.name);
}
}  // namespace

IoMvaResult solve_io_mva(const IoScenario& s) {
  refuse_several_disks(s);
  if (s.multi_vm()) {
    // One running profile is vm.count identical VMs: the MVA below. Several are a multi-class
    // network (solve_io_mva_classes): this one-class answer says so rather than answer for one.
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
                                  "): vqsim solve and run --compare-mva solve their classes together "
                                  "(solve_io_mva_classes); here use vqsim run (the simulation)");
    return solve_io_mva(only->scenario);
  }
  const auto& w = s.workload;
  const int vms = std::max(1, s.vms);
  IoMvaResult out;
  double p_kick = 1, p_wake = 1, irq_share = 1, x_thread_ns = 0, p_guest_idle = 1, u_thread = 0, bql_wait = 0, p_bql = 0;
  double x_fio_thread_ns = 0;
  std::vector<MvaDemand> st;
  std::vector<double> residence, util, number;
  double x_ns = 0;  // I/Os per ns
  // Fixed point on the host threads' utilization: kicks and wake-ups happen only when a
  // thread is asleep. Five rounds settle it to well under a percent.
  for (int round = 0; round < 6; ++round) {
    st = build_stages(s, p_kick, p_wake, irq_share, x_thread_ns, p_guest_idle, u_thread, bql_wait, x_fio_thread_ns, p_bql);
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
    // The host threads' mean utilization and rate, for the probability a request finds one asleep.
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
    const double asleep = host_asleep(s, u_host, x_thread, round, p_wake);
    p_wake = asleep;
    x_thread_ns = x_thread;
    u_thread = u_host;
    const int fio_threads = s.fio_threads() * vms;
    x_fio_thread_ns = x_ns / std::max(1, fio_threads);
    p_guest_idle =
        guest_idle(x_ns * guest_demand(st) / std::max(1, fio_threads), w.rate_iops > 0 ? 0.0 : plug_merged_requests_per_job(s),
                   round, p_guest_idle, x_fio_thread_ns * irq_share, s.bare_metal() ? 0.0 : s.guest.halt_after_ns);
    double u_main = 0, d_main = 0;  // the main loop's, for TCG's big lock
    for (std::size_t k = 0; k < st.size(); ++k)
      if (st[k].name == "host.main_loop") {
        u_main = util[k];
        d_main = st[k].demand_ns;
      }
    bql_wait = damped(bql_wait_ns(s, u_main, d_main), round, bql_wait);
    p_bql = damped(bql_wait_probability(s, u_main, d_main), round, p_bql);
    double host_ns = 0;
    for (std::size_t k = 0; k < st.size(); ++k)
      if (between_submit_and_ring(st[k].name)) host_ns += residence[k];
    irq_share =
        1.0 / completions_per_interrupt(s, x_ns / vms / queues_in_use(s),
                                        w.rate_iops > 0 ? 0.0 : plug_merged_requests_per_job(s) * w.numjobs / queues_in_use(s),
                                        bql_wait + relay_window_ns(s, u_thread), host_ns);
    p_kick = kick_probability(s, asleep, u_main);
  }
  out.total_iops = x_ns * 1e9 * (w.rate_iops > 0 ? 1.0 : ios_per_request(s));
  if (!s.bare_metal() && x_ns > 0) {
    const int fio_threads = std::max(1, s.fio_threads() * vms);
    const double x_fio = x_ns / fio_threads;
    out.vcpu_halt_path_ns = halt_path_ns(x_fio * guest_demand(st), w.rate_iops > 0 ? 0.0 : plug_merged_requests_per_job(s),
                                         x_fio * irq_share, s.guest.halt_after_ns) *
                            irq_share / (w.rate_iops > 0 ? 1.0 : ios_per_request(s));
  }
  out.interrupts_per_io = s.bare_metal() ? 0.0 : irq_share / (w.rate_iops > 0 ? 1.0 : ios_per_request(s));
  out.iops = vms > 1 ? out.total_iops / vms : out.total_iops;  // one VM's
  out.read_iops = out.iops * w.read_fraction;
  out.write_iops = out.iops - out.read_iops;
  double total = 0, submit = 0;
  double worst = -1;
  for (std::size_t k = 0; k < st.size(); ++k) {
    if (st[k].name == "fio.thinktime") continue;
    total += residence[k] - st[k].outside_ns;  // fio's work past its timestamps is not its latency
    // The stations on the submit side count towards slat, a job thread by its submit share.
    if (st[k].slat == MvaDemand::Slat::all)
      submit += residence[k];
    else if (st[k].slat == MvaDemand::Slat::share)
      submit += residence[k] * st[k].slat_part_ns / st[k].slat_whole_ns;
    else if (st[k].slat == MvaDemand::Slat::own)
      submit += std::min(residence[k], st[k].slat_part_ns);
    // Per I/O: a merged request's residence is shared by the I/Os it carries.
    const double per_io = w.rate_iops > 0 ? 1.0 : ios_per_request(s);
    out.stages.push_back({st[k].name, residence[k] / per_io, util[k], number[k], st[k].demand_ns / per_io, st[k].wait_ns / per_io,
                          st[k].wakes / per_io});
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

// ---- Several VM profiles and jobs: one class per profile and fio job (io_path_mva.h says how
// the host is mapped).
namespace vqsim::models {

namespace {

// One running VM profile: its VMs' own stations, and the fixed point of its host threads.
struct VmPart {
  std::string name, prefix, device_prefix;  // the profile, its first VM's names, its backend's
  int count = 1;
  IoScenario s;  // one VM of it (vms = 1), running one stonewall group
  double p_kick = 1, p_wake = 1, irq_share = 1, x_thread_ns = 0, p_guest_idle = 1, u_thread = 0, bql_wait = 0, p_bql = 0;
  std::vector<std::size_t> classes;  // its jobs' classes
};

// One class: one fio job of one VM profile (the profile itself for a VM of one job).
struct ClassPart {
  std::size_t vm = 0;
  std::string job;       // "" for a VM of one job
  int phase = 0;         // its stonewall group
  int first_thread = 0;  // its threads' index among the VM's (the simulation's guest.fio_job<t>)
  IoScenario s;          // the VM with this job's workload (jobs: the group's, for fio_threads())
  std::vector<MvaDemand> stages;
  double x_fio_thread_ns = 0;  // requests per ns each of its fio threads completes (the fixed point's)
  double guest_demand_ns = 0;  // its fio threads' work per request (before host.cores takes it in)
};

// The job's stations with host.cores folded into one station: its vCPUs (guest_thread_demands'
// "guest.vcpus") become "host.cpu", which also takes the QEMU threads' work when they run on the cores. The
// job's own threads take the names the simulation gives them among the VM's threads.
std::vector<MvaDemand> class_stages(ClassPart& c, const VmPart& vm, int cores) {
  std::vector<MvaDemand> st = build_stages(c.s, vm.p_kick, vm.p_wake, vm.irq_share, vm.x_thread_ns, vm.p_guest_idle, vm.u_thread,
                                           vm.bql_wait, c.x_fio_thread_ns, vm.p_bql);
  c.guest_demand_ns = guest_demand(st);
  const std::string thread = "guest.fio_job";
  for (MvaDemand& d : st)
    if (d.name.rfind(thread, 0) == 0 && c.first_thread > 0)
      d.name = thread + std::to_string(std::stoi(d.name.substr(thread.size())) + c.first_thread);
  if (cores <= 0) return st;
  MvaDemand cpu{"host.cpu", sim::MvaStationKind::MultiServer, cores, 0};
  cpu.shared = true;
  cpu.slat = MvaDemand::Slat::share;
  std::vector<MvaDemand> out;
  for (const MvaDemand& d : st) {
    if (d.name == "guest.vcpus") {
      // The vCPUs' work runs on the cores; their wait for TCG's lock holds a vCPU, not a core.
      cpu.demand_ns += d.demand_ns - d.wait_ns;
      cpu.slat_part_ns += d.slat_part_ns;
      if (d.wait_ns > 0) out.push_back({"guest.bql_wait", sim::MvaStationKind::Delay, 1, d.wait_ns});
      continue;
    }
    // A vhost-user backend polls on cores of its own (as the simulation's HostThreads).
    if ((d.host_thread || d.core_work) && c.s.guest.driver != GuestDriver::vhost_user_blk) cpu.demand_ns += d.demand_ns;
    out.push_back(d);
  }
  cpu.slat_whole_ns = cpu.demand_ns;
  out.insert(out.begin(), cpu);
  return out;
}

// The VM's classes: one per job of the group it runs (its job file's), or the VM's one workload.
void add_classes(std::vector<VmPart>& vms, std::vector<ClassPart>& classes, VmPart vm, int phase) {
  const std::size_t v = vms.size();
  if (!vm.s.multi_job()) {
    ClassPart c;
    c.vm = v;
    c.phase = phase;
    c.s = vm.s;
    vm.classes.push_back(classes.size());
    classes.push_back(std::move(c));
  } else {
    int first = 0;
    for (const FioJob& j : vm.s.jobs) {
      ClassPart c;
      c.vm = v;
      c.job = j.name;
      c.phase = phase;
      c.first_thread = first;
      c.s = vm.s;
      c.s.workload = j.workload;
      first += j.workload.numjobs;
      vm.classes.push_back(classes.size());
      classes.push_back(std::move(c));
    }
  }
  vms.push_back(std::move(vm));
}

// Figures of a set of classes (one job, or every job of a VM) from the solved network.
struct Solved {
  const std::vector<sim::MvaClassStation>& net;
  const std::vector<std::vector<std::size_t>>& where;  // [class][stage]: its station
  const std::vector<std::vector<double>>& residence;   // [station][class], one VM's
  const std::vector<std::vector<double>>& util;
  const std::vector<std::vector<double>>& number;
  const std::vector<double>& x;           // requests per ns, one VM
  const std::vector<double>& total_util;  // per station, every class
};

IoMvaResult figures_of(const std::vector<std::size_t>& members, const std::vector<ClassPart>& classes, const VmPart& vm,
                       const Solved& n, bool open_loop) {
  IoMvaResult r;
  r.open_loop = open_loop;
  double io_rate = 0;        // I/Os per ns, over the members
  double lat = 0, slat = 0;  // I/O-rate weighted sums
  // The stations the members visit, in the order the first one meets them.
  std::vector<std::size_t> order;
  std::vector<double> res_sum(n.net.size(), 0), dem_sum(n.net.size(), 0), u_sum(n.net.size(), 0), q_sum(n.net.size(), 0);
  for (const std::size_t c : members) {
    const ClassPart& p = classes[c];
    const double per_request = open_loop ? 1.0 : ios_per_request(p.s);
    const double ios = n.x[c] * per_request;
    io_rate += ios;
    r.read_iops += ios * 1e9 * p.s.workload.read_fraction;
    r.write_iops += ios * 1e9 * (1 - p.s.workload.read_fraction);
    double total = 0, submit = 0;
    for (std::size_t i = 0; i < p.stages.size(); ++i) {
      const MvaDemand& d = p.stages[i];
      const std::size_t k = n.where[c][i];
      if (d.name == "fio.thinktime") continue;
      const double res = n.residence[k][c];
      total += res - d.outside_ns;  // fio's work past its timestamps is not its latency
      if (d.slat == MvaDemand::Slat::all)
        submit += res;
      else if (d.slat == MvaDemand::Slat::share && d.slat_whole_ns > 0)
        submit += res * d.slat_part_ns / d.slat_whole_ns;
      else if (d.slat == MvaDemand::Slat::own)
        submit += std::min(res, d.slat_part_ns);
      if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
      const double share = n.net[k].owner < 0 ? vm.count : 1;  // a shared station: all the profile's VMs
      // Per I/O over the members' I/Os: a request's residence is shared by the I/Os it carries.
      res_sum[k] += n.x[c] * res;
      dem_sum[k] += n.x[c] * n.net[k].demand[c];
      u_sum[k] += n.util[k][c] * share;
      q_sum[k] += n.number[k][c] * share;
    }
    lat += n.x[c] * total;
    slat += n.x[c] * submit;
  }
  r.iops = io_rate * 1e9;
  r.total_iops = r.iops * vm.count;
  r.lat_mean_ns = io_rate > 0 ? lat / io_rate : 0;
  r.slat_mean_ns = io_rate > 0 ? slat / io_rate : 0;
  r.clat_mean_ns = r.lat_mean_ns - r.slat_mean_ns;
  double busiest = -1;
  for (const std::size_t k : order) {
    r.stages.push_back(
        {n.net[k].name, io_rate > 0 ? res_sum[k] / io_rate : 0, u_sum[k], q_sum[k], io_rate > 0 ? dem_sum[k] / io_rate : 0});
    if (n.net[k].kind != sim::MvaStationKind::Delay && n.total_util[k] > busiest) {
      busiest = n.total_util[k];
      r.bottleneck = n.net[k].name;
    }
  }
  return r;
}

// One stonewall group of the scenario (a scenario of one phase): its classes solved together.
IoMvaClassesResult solve_group(const IoScenario& s, int phase) {
  std::vector<VmPart> vms;
  std::vector<ClassPart> parts;
  std::vector<std::string> devices;  // backend names, in the order the running VMs first name them
  auto device_prefix = [&](const std::string& b) {
    auto at = std::find(devices.begin(), devices.end(), b);
    if (at == devices.end()) at = devices.insert(devices.end(), b);
    return at == devices.begin() ? std::string() : b + ".";
  };
  if (!s.multi_vm()) {
    VmPart v;
    v.count = std::max(1, s.vms);
    v.s = s;
    v.s.vms = 1;
    add_classes(vms, parts, std::move(v), phase);
  } else {
    for (std::size_t i = 0; i < s.profiles.size(); ++i) {
      const VmProfile& vp = s.profiles[i];
      if (vp.count <= 0) continue;
      VmPart v;
      v.name = vp.name;
      v.prefix = vm_profile_prefix(s, i);
      v.device_prefix = device_prefix(vp.backend);
      v.count = vp.count;
      v.s = vp.scenario;
      v.s.vms = 1;
      v.s.host.cores = s.host.cores;
      add_classes(vms, parts, std::move(v), phase);
    }
  }
  if (vms.empty()) throw std::invalid_argument("no VM profile runs (every count is 0)");
  const std::size_t C = parts.size();
  int open = 0;
  for (const ClassPart& p : parts) open += p.s.workload.rate_iops > 0 ? 1 : 0;
  if (open != 0 && open != static_cast<int>(C)) {
    // Within one VM's job file, or between profiles: say which.
    std::string within;
    for (const VmPart& v : vms) {
      int mine = 0;
      for (const std::size_t c : v.classes) mine += parts[c].s.workload.rate_iops > 0 ? 1 : 0;
      if (mine != 0 && mine != static_cast<int>(v.classes.size())) within = v.name.empty() ? "the VM" : "vm." + v.name;
    }
    throw std::invalid_argument((within.empty() ? std::string("some VM profiles") : within + "'s fio jobs: some") +
                                " run open loop (rate_iops) and others closed loop: the MVA solves either kind of network, "
                                "not a mix; use vqsim run (the simulation)");
  }
  const bool open_loop = open > 0;

  IoMvaClassesResult out;
  out.open_loop = open_loop;
  // The network: shared stations keyed by their name (a backend's under its prefix), each VM's
  // own stations owned by its VM (its first class; every job of the VM visits the same one).
  // where[c][i]: the station of class c's stage i.
  std::vector<sim::MvaClassStation> net;
  std::vector<std::vector<std::size_t>> where(C);
  std::vector<sim::MvaClass> classes;
  std::vector<std::vector<double>> residence, util, number;  // [station][class], one VM's
  std::vector<double> x(C, 0);                               // requests per ns, one VM
  for (int round = 0; round < 6; ++round) {
    net.clear();
    classes.clear();
    for (std::size_t c = 0; c < C; ++c) {
      ClassPart& p = parts[c];
      const VmPart& v = vms[p.vm];
      const int owner = static_cast<int>(v.classes.front());
      p.stages = class_stages(p, v, s.host.cores);
      where[c].clear();
      for (const MvaDemand& d : p.stages) {
        const std::string name = d.shared ? (d.name == "host.cpu" ? d.name : v.device_prefix + d.name) : v.prefix + d.name;
        std::size_t k = net.size();
        for (std::size_t j = 0; j < net.size() && k == net.size(); ++j)
          if (net[j].name == name && net[j].owner == (d.shared ? -1 : owner)) k = j;
        if (k == net.size()) {
          net.push_back({name, d.kind, d.servers, std::vector<double>(C, 0.0), d.shared ? -1 : owner});
          for (auto& other : net) other.demand.resize(C, 0.0);
        }
        net[k].demand[c] += std::max(0.0, d.demand_ns);
        where[c].push_back(k);
      }
      std::string name = v.name;
      if (!p.job.empty()) name += (name.empty() ? "" : "/") + p.job;
      classes.push_back({name, p.s.workload.numjobs * plug_merged_requests_per_job(p.s), v.count,
                         v.classes.size() > 1 ? static_cast<int>(p.vm) : -1});
    }
    const std::size_t K = net.size();
    residence.assign(K, std::vector<double>(C, 0));
    util = number = residence;
    if (open_loop) {
      out.method = "open network";
      out.exact = true;
      for (std::size_t c = 0; c < C; ++c) x[c] = parts[c].s.workload.rate_iops * parts[c].s.workload.numjobs / 1e9;
      for (std::size_t k = 0; k < K; ++k) {
        const auto& st = net[k];
        double u = 0;  // per server, every VM that visits it
        for (std::size_t c = 0; c < C; ++c) u += x[c] * st.demand[c] * (st.owner < 0 ? vms[parts[c].vm].count : 1) / st.servers;
        if (st.kind != sim::MvaStationKind::Delay && u >= 1) out.saturated = true;
        for (std::size_t c = 0; c < C; ++c) {
          const double d = st.demand[c];
          double r = d;
          if (st.kind != sim::MvaStationKind::Delay)
            r = u < 1 ? (st.servers == 1 ? d / (1 - u) : d + d / st.servers * std::pow(u, st.servers) / (1 - u)) : INFINITY;
          residence[k][c] = r;
          util[k][c] = x[c] * d / (st.kind == sim::MvaStationKind::MultiServer ? st.servers : 1);
          number[k][c] = x[c] * r;
        }
      }
    } else {
      const sim::MvaClassResult r = sim::mva_classes(net, classes);
      out.method = r.method;
      out.exact = r.exact;
      out.lattice_points = r.lattice_points;
      out.iterations = r.iterations;
      out.converged = r.converged;
      x = r.throughput;
      for (std::size_t c = 0; c < C; ++c) parts[c].x_fio_thread_ns = x[c] / std::max(1, parts[c].s.workload.numjobs);
      residence = r.residence;
      util = r.utilization;
      number = r.queue_length;
    }
    // Each VM's kicks and wake-ups, from its own host threads (as solve_io_mva does), which
    // every job of the VM keeps busy.
    for (VmPart& v : vms) {
      const ClassPart& lead = parts[v.classes.front()];
      double u_host = 0, x_vm = 0;
      int threads = 0;
      for (const std::size_t c : v.classes) x_vm += x[c];
      for (std::size_t i = 0; i < lead.stages.size(); ++i)
        if (lead.stages[i].host_thread) {
          for (const std::size_t c : v.classes) u_host += util[where[v.classes.front()][i]][c];
          ++threads;
        }
      double x_thread = x_vm;
      if (threads > 0) {
        u_host /= threads;
        x_thread = x_vm / threads;
      }
      const double asleep = host_asleep(v.s, u_host, x_thread, round, v.p_wake);
      v.p_wake = asleep;
      v.x_thread_ns = x_thread;
      v.u_thread = u_host;
      double guest_work = 0, in_flight = 0;  // fio threads' work per ns and requests, every job of the VM
      for (const std::size_t c : v.classes) {
        guest_work += x[c] * parts[c].guest_demand_ns;
        if (parts[c].s.workload.rate_iops <= 0)
          in_flight += parts[c].s.workload.numjobs * plug_merged_requests_per_job(parts[c].s);
      }
      const int fio_threads = std::max(1, v.s.fio_threads());
      v.p_guest_idle = guest_idle(guest_work / fio_threads, in_flight / fio_threads, round, v.p_guest_idle,
                                  x_vm / fio_threads * v.irq_share, v.s.bare_metal() ? 0.0 : v.s.guest.halt_after_ns);
      double u_main = 0, d_main = 0;  // the VM's main loop, for TCG's big lock
      for (std::size_t i = 0; i < lead.stages.size(); ++i)
        if (lead.stages[i].name == "host.main_loop") {
          for (const std::size_t c : v.classes) u_main += util[where[v.classes.front()][i]][c];
          d_main = lead.stages[i].demand_ns;
        }
      v.bql_wait = damped(bql_wait_ns(v.s, u_main, d_main), round, v.bql_wait);
      v.p_bql = damped(bql_wait_probability(v.s, u_main, d_main), round, v.p_bql);
      double host_ns = 0;  // the VM's requests' mean
      for (std::size_t i = 0; i < lead.stages.size(); ++i)
        if (between_submit_and_ring(lead.stages[i].name))
          for (const std::size_t c : v.classes)
            host_ns += x_vm > 0 ? residence[where[v.classes.front()][i]][c] * x[c] / x_vm : 0.0;
      v.irq_share = 1.0 / completions_per_interrupt(v.s, x_vm / queues_in_use(v.s), in_flight / queues_in_use(v.s),
                                                    v.bql_wait + relay_window_ns(v.s, v.u_thread), host_ns);
      v.p_kick = kick_probability(v.s, asleep, u_main);
    }
  }

  // Totals per station (every class, every VM), and the busiest queueing station.
  const std::size_t K = net.size();
  std::vector<double> total_util(K, 0);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c) total_util[k] += util[k][c] * (net[k].owner < 0 ? vms[parts[c].vm].count : 1);
  double worst = -1;
  for (std::size_t k = 0; k < K; ++k) {
    if (net[k].kind == sim::MvaStationKind::Delay) continue;
    if (total_util[k] > worst) {
      worst = total_util[k];
      out.bottleneck = net[k].name;
    }
  }
  for (std::size_t k = 0; k < K; ++k) {
    if (net[k].owner >= 0) continue;
    IoMvaSharedStation sh{net[k].name, net[k].servers, net[k].kind == sim::MvaStationKind::Delay, total_util[k], {}};
    for (const VmPart& v : vms) {
      double u = 0;
      for (const std::size_t c : v.classes) u += util[k][c] * v.count;
      sh.by_profile.push_back(u);
    }
    out.shared.push_back(sh);
  }
  const Solved solved{net, where, residence, util, number, x, total_util};
  double lat_weighted = 0;
  for (const VmPart& v : vms) {
    int population = 0;
    for (const std::size_t c : v.classes) population += classes[c].population;
    IoMvaProfile prof{v.name, v.count, population, figures_of(v.classes, parts, v, solved, open_loop), {}};
    prof.figures.saturated = out.saturated;
    if (v.s.multi_job())
      for (const std::size_t c : v.classes) {
        IoMvaJob job{parts[c].job, phase, classes[c].population, figures_of({c}, parts, v, solved, open_loop)};
        job.figures.saturated = out.saturated;
        prof.jobs.push_back(std::move(job));
      }
    out.total_iops += prof.figures.total_iops;
    lat_weighted += prof.figures.total_iops * prof.figures.lat_mean_ns;
    out.profiles.push_back(std::move(prof));
  }
  out.lat_mean_ns = out.total_iops > 0 ? lat_weighted / out.total_iops : 0;
  return out;
}

}  // namespace

IoMvaClassesResult solve_io_mva_classes(const IoScenario& s) {
  refuse_several_disks(s);
  // Stonewall groups run one after the other (as simulate_io runs them): each is a network of
  // its own. The answer is the first group's (its VMs' figures, shared stations and host
  // totals, as the simulation's report is), with every later group's jobs added to their VM's.
  const int phases = scenario_phases(s);
  IoMvaClassesResult out = solve_group(phases > 1 ? phase_scenario(s, 0) : s, 0);
  out.phases = phases;
  for (int k = 1; k < phases; ++k) {
    const IoMvaClassesResult later = solve_group(phase_scenario(s, k), k);
    for (const IoMvaProfile& p : later.profiles)
      for (IoMvaProfile& mine : out.profiles)
        if (mine.name == p.name) mine.jobs.insert(mine.jobs.end(), p.jobs.begin(), p.jobs.end());
    out.exact = out.exact && later.exact;
    out.converged = out.converged && later.converged;
    out.saturated = out.saturated || later.saturated;
    if (later.method != out.method) out.method += ", then " + later.method;
  }
  return out;
}

}  // namespace vqsim::models
