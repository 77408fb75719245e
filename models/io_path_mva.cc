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
#include "sim/mva_classes.h"

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

// ---- Several VM profiles: one class per profile (io_path_mva.h says how the host is mapped).
namespace vqsim::models {

namespace {

// One running profile's part of the network.
struct ClassPart {
  std::string name, prefix, device_prefix;  // the profile, its first VM's names, its backend's
  int count = 1;
  IoScenario s;  // one VM of it (vms = 1)
  double p_kick = 1, p_wake = 1, irq_share = 1;
  std::vector<MvaDemand> stages;
};

// The profile's stations with host.cores folded into one station: its vCPUs' two halves
// (guest_thread_demands' "guest.vcpus (submit)" and "(complete)", each with host.cores servers)
// become "host.cpu", which also takes the QEMU threads' work when they run on the cores.
std::vector<MvaDemand> class_stages(const ClassPart& p, int cores) {
  std::vector<MvaDemand> st = build_stages(p.s, p.p_kick, p.p_wake, p.irq_share);
  if (cores <= 0) return st;
  MvaDemand cpu{"host.cpu", sim::MvaStationKind::MultiServer, cores, 0};
  cpu.shared = true;
  cpu.slat = MvaDemand::Slat::share;
  std::vector<MvaDemand> out;
  for (const MvaDemand& d : st) {
    if (d.name == "guest.vcpus (submit)" || d.name == "guest.vcpus (complete)") {
      cpu.demand_ns += d.demand_ns;
      if (d.slat == MvaDemand::Slat::all) cpu.slat_part_ns += d.demand_ns;
      continue;
    }
    // A vhost-user backend polls on cores of its own (as the simulation's HostThreads).
    if (d.host_thread && p.s.guest.driver != GuestDriver::vhost_user_blk) cpu.demand_ns += d.demand_ns;
    out.push_back(d);
  }
  cpu.slat_whole_ns = cpu.demand_ns;
  out.insert(out.begin(), cpu);
  return out;
}

}  // namespace

IoMvaClassesResult solve_io_mva_classes(const IoScenario& s) {
  refuse_several_disks(s);
  std::vector<ClassPart> parts;
  std::vector<std::string> devices;  // backend names, in the order the running VMs first name them
  auto device_prefix = [&](const std::string& b) {
    auto at = std::find(devices.begin(), devices.end(), b);
    if (at == devices.end()) at = devices.insert(devices.end(), b);
    return at == devices.begin() ? std::string() : b + ".";
  };
  if (!s.multi_vm()) {
    ClassPart p;
    p.count = std::max(1, s.vms);
    p.s = s;
    p.s.vms = 1;
    parts.push_back(p);
  } else {
    for (std::size_t i = 0; i < s.profiles.size(); ++i) {
      const VmProfile& vp = s.profiles[i];
      if (vp.count <= 0) continue;
      ClassPart p;
      p.name = vp.name;
      p.prefix = vm_profile_prefix(s, i);
      p.device_prefix = device_prefix(vp.backend);
      p.count = vp.count;
      p.s = vp.scenario;
      p.s.vms = 1;
      p.s.host.cores = s.host.cores;
      parts.push_back(p);
    }
  }
  if (parts.empty()) throw std::invalid_argument("no VM profile runs (every count is 0)");
  const std::size_t C = parts.size();
  int open = 0;
  for (const ClassPart& p : parts) open += p.s.workload.rate_iops > 0 ? 1 : 0;
  if (open != 0 && open != static_cast<int>(C))
    throw std::invalid_argument(
        "some VM profiles run open loop (rate_iops) and others closed loop: the MVA solves either "
        "kind of network, not a mix; use vqsim run (the simulation)");
  const bool open_loop = open > 0;

  IoMvaClassesResult out;
  out.open_loop = open_loop;
  // The network: shared stations keyed by their name (a backend's under its prefix), each
  // profile's own stations owned by its class. where[c][i]: the station of part c's stage i.
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
      p.stages = class_stages(p, s.host.cores);
      where[c].clear();
      for (const MvaDemand& d : p.stages) {
        const std::string name = d.shared ? (d.name == "host.cpu" ? d.name : p.device_prefix + d.name) : p.prefix + d.name;
        std::size_t k = net.size();
        if (d.shared)
          for (std::size_t j = 0; j < net.size(); ++j)
            if (net[j].owner < 0 && net[j].name == name) k = j;
        if (k == net.size()) {
          net.push_back({name, d.kind, d.servers, std::vector<double>(C, 0.0), d.shared ? -1 : static_cast<int>(c)});
          for (auto& other : net) other.demand.resize(C, 0.0);
        }
        net[k].demand[c] += std::max(0.0, d.demand_ns);
        where[c].push_back(k);
      }
      classes.push_back({p.name, p.s.workload.numjobs * plug_merged_requests_per_job(p.s), p.count});
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
        for (std::size_t c = 0; c < C; ++c) u += x[c] * st.demand[c] * (st.owner < 0 ? parts[c].count : 1) / st.servers;
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
      residence = r.residence;
      util = r.utilization;
      number = r.queue_length;
    }
    // Each profile's kicks and wake-ups, from its own host threads (as solve_io_mva does).
    for (std::size_t c = 0; c < C; ++c) {
      ClassPart& p = parts[c];
      double u_host = 0, x_thread = x[c];
      int threads = 0;
      for (std::size_t i = 0; i < p.stages.size(); ++i)
        if (p.stages[i].host_thread) {
          u_host += util[where[c][i]][c];
          ++threads;
        }
      if (threads > 0) {
        u_host /= threads;
        x_thread = x[c] / threads;
      }
      double asleep = std::clamp(1 - u_host, 0.0, 1.0);
      if (p.s.host.iothreads > 0 && p.s.host.poll_max_ns > 0) asleep *= std::exp(-x_thread * p.s.host.poll_max_ns);
      if (p.s.guest.driver == GuestDriver::vhost_user_blk) asleep = 0;
      p.p_wake = asleep;
      p.irq_share = 1.0 / (1.0 + x[c] / std::max(1, p.s.queues()) * p.s.vq.irq_ns);
      p.p_kick = p.s.vq.event_idx ? asleep : 1.0;
      if (p.s.guest.driver == GuestDriver::scsi_hba) p.p_kick = 1.0;
    }
  }

  // Totals per shared station, and the busiest queueing station.
  const std::size_t K = net.size();
  std::vector<double> total_util(K, 0);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c) total_util[k] += util[k][c] * (net[k].owner < 0 ? parts[c].count : 1);
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
    for (std::size_t c = 0; c < C; ++c) sh.by_profile.push_back(util[k][c] * parts[c].count);
    out.shared.push_back(sh);
  }
  double lat_weighted = 0;
  for (std::size_t c = 0; c < C; ++c) {
    const ClassPart& p = parts[c];
    const auto& w = p.s.workload;
    const double per_request = open_loop ? 1.0 : ios_per_request(p.s);
    IoMvaProfile prof{p.name, p.count, classes[c].population, {}};
    IoMvaResult& r = prof.figures;
    r.open_loop = open_loop;
    r.saturated = out.saturated;
    r.iops = x[c] * 1e9 * per_request;
    r.total_iops = r.iops * p.count;
    r.read_iops = r.iops * w.read_fraction;
    r.write_iops = r.iops - r.read_iops;
    double total = 0, submit = 0, busiest = -1;
    for (std::size_t i = 0; i < p.stages.size(); ++i) {
      const MvaDemand& d = p.stages[i];
      const std::size_t k = where[c][i];
      if (d.name == "fio.thinktime") continue;
      const double res = residence[k][c];
      total += res;
      if (d.slat == MvaDemand::Slat::all)
        submit += res;
      else if (d.slat == MvaDemand::Slat::share && d.slat_whole_ns > 0)
        submit += res * d.slat_part_ns / d.slat_whole_ns;
      const double share = net[k].owner < 0 ? p.count : 1;  // a shared station: all this profile's VMs
      IoMvaStage stage{net[k].name, res / per_request, util[k][c] * share, number[k][c] * share, net[k].demand[c] / per_request};
      r.stages.push_back(stage);
      if (net[k].kind != sim::MvaStationKind::Delay && total_util[k] > busiest) {
        busiest = total_util[k];
        r.bottleneck = net[k].name;
      }
    }
    r.lat_mean_ns = total;
    r.slat_mean_ns = submit;
    r.clat_mean_ns = total - submit;
    out.total_iops += r.total_iops;
    lat_weighted += r.total_iops * total;
    out.profiles.push_back(std::move(prof));
  }
  out.lat_mean_ns = out.total_iops > 0 ? lat_weighted / out.total_iops : 0;
  return out;
}

}  // namespace vqsim::models
