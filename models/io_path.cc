#include "models/io_path.h"

#include <algorithm>

#include "models/aio_engine.h"
#include "models/backend.h"
#include "models/emulation_thread.h"
#include "models/fio_workload.h"
#include "models/guest_block.h"
#include "models/guest_cpu.h"
#include "models/guest_driver.h"
#include "models/virtqueue.h"

namespace vqsim::models {

template <typename S, typename... Args>
S& IoPath::add(sim::Simulator& sim, Args&&... args) {
  S& stage = sim.make<S>(std::forward<Args>(args)...);
  stages_.push_back(&stage);
  return stage;
}

void IoPath::link(Stage& from, sim::Port& port, Stage& to, int in_port) {
  sim::connect(port, to, in_port);
  links_.push_back({&from, &port, &to, in_port});
  from.connected(port);
}

namespace {
// With several VMs (or disks) on one backend, the backend's completions go back to the AIO stage
// of the VM and disk that issued them.
class VmReturn final : public Stage {
 public:
  static constexpr int kIn = 0;
  // `sources`: the (IoRequest.vm, IoRequest.disk) of each AIO stage on this backend, in the order
  // of the out ports; `by_disk` false when every one is a VM's first disk (the key is the VM).
  VmReturn(sim::Simulator& sim, const std::string& prefix, IoTable& io, const std::vector<std::pair<int, int>>& sources,
           bool by_disk)
      : Stage(sim, prefix, "backend.return"), io_(io), out_(sources.size()), stride_(by_disk ? kMaxDisks : 1) {
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::size_t k = key(static_cast<std::uint32_t>(sources[i].first), static_cast<std::uint32_t>(sources[i].second));
      if (slot_.size() <= k) slot_.resize(k + 1, 0);
      slot_[k] = i;
    }
  }
  sim::Port& out(std::size_t i) { return out_[i]; }
  void accept(sim::JobId job, int) override {
    const IoRequest& r = io_[job];
    out_[slot_[key(r.vm, r.disk)]].send(job);
  }
  void validate() const override {
    for (const sim::Port& p : out_) sim::require_connected(*this, p, "out");
  }
  void stations(std::vector<StageInfo>&) const override {}
  void draw(StageGraph&) const override {}
  std::vector<PortEnd> entry(int) const override { return {}; }
  std::vector<PortEnd> exits(const sim::Port&) const override { return {{"", "", kIn}}; }

 private:
  std::size_t key(std::uint32_t vm, std::uint32_t disk) const { return static_cast<std::size_t>(vm) * stride_ + disk; }
  IoTable& io_;
  std::vector<sim::Port> out_;
  std::size_t stride_;
  std::vector<std::size_t> slot_;  // by key(vm, disk)
};

// In a VM of several disks, where the VM's shared stages (fio, its job threads, its QEMU
// threads) hand a request to one disk's own (its tags, its virtqueue, its AIO state): by the
// request's disk. Before the virtqueues it also answers the job threads' question whether a
// submit must kick, for the virtqueue of the request's disk.
class DiskSwitch final : public Stage, public KickPolicy {
 public:
  static constexpr int kIn = 0;
  DiskSwitch(sim::Simulator& sim, const std::string& vm, const std::string& name, IoTable& io, std::size_t disks)
      : Stage(sim, vm, name), io_(io), out_(disks) {}
  sim::Port& out(std::size_t d) { return out_[d]; }
  void kicks_for(std::vector<const KickPolicy*> vqs) { vqs_ = std::move(vqs); }
  bool kick_needed(const IoRequest& r) const override { return vqs_[r.disk]->kick_needed(r); }
  void accept(sim::JobId job, int) override { out_[io_[job].disk].send(job); }
  void validate() const override {
    for (const sim::Port& p : out_) sim::require_connected(*this, p, "out");
  }
  void stations(std::vector<StageInfo>&) const override {}
  void draw(StageGraph&) const override {}
  std::vector<PortEnd> entry(int) const override { return {}; }
  std::vector<PortEnd> exits(const sim::Port&) const override { return {{"", "", kIn}}; }

 private:
  IoTable& io_;
  std::vector<sim::Port> out_;
  std::vector<const KickPolicy*> vqs_;
};
}  // namespace

// Stages are built in path order (their stations report in that order), one VM after the other,
// then what the VMs share; adding a stage is its file and its lines here.
IoPath::IoPath(sim::Simulator& sim, const IoScenario& s) {
  const std::vector<VmInstance> vms = vm_instances(s);
  // Shared host cores when the scenario limits them: every VM's vCPU and QEMU threads compete.
  sim::ProcessorSharingStation* host_cpu = nullptr;
  // Every disk's AIO stage, with its VM, disk, the scenario its device is built from and the
  // backend it names.
  struct DiskEnd {
    AioStage* aio;
    HostThreads* host;  // null on bare metal
    int vm, disk;
    const IoScenario* view;
    std::string backend;
  };
  std::vector<DiskEnd> ends;
  for (const VmInstance& inst : vms) {
    // The first VM keeps the names (and so the random streams) of a single-VM scenario.
    const std::string& vm = inst.prefix;
    const IoScenario* view = &profile_scenario(s, inst);
    if (view->multi_job()) {
      IoScenario& v = views_.emplace_back(*view);
      v.workload.numjobs = view->fio_threads();
      view = &v;
    }
    const IoScenario& p = *view;
    const bool bare = p.bare_metal();
    const DriverCosts driver = driver_costs(p);
    auto& fio = add<FioWorkload>(sim, vm, p, io_, static_cast<std::uint32_t>(inst.index));
    // Otherwise fio jobs beyond the vCPU count share the VM's vCPUs; otherwise every thread has
    // a core of its own.
    sim::ProcessorSharingStation* cpu = nullptr;
    if (s.host.cores > 0) {
      if (host_cpu == nullptr) {
        host_cpu = &sim.make<sim::ProcessorSharingStation>("host.cpu", s.host.cores);
        cpus_after_.push_back({&fio, host_cpu});
      }
      cpu = host_cpu;
    } else if (p.workload.numjobs > p.guest.vcpus) {
      cpu = &sim.make<sim::ProcessorSharingStation>(vm + "guest.vcpus", p.guest.vcpus);
      cpus_after_.push_back({&fio, cpu});
    }

    // Each disk's own stages (a VM of one disk has one of each, under the VM's names; the
    // others go under "disk:<name>."), on the view of its device (the cache semantics depend on
    // the device's kind). The VM's job threads and its QEMU threads serve every disk.
    const std::size_t disks = p.multi_disk() ? p.disks.size() : 1;
    std::vector<const IoScenario*> disk_view(disks, &p);
    for (std::size_t d = 1; d < disks; ++d) {
      IoScenario& v = views_.emplace_back(p);
      v.backend = p.disks[d].params;
      disk_view[d] = &v;
    }
    const auto disk_vm = [&](std::size_t d) { return d == 0 ? vm : vm + disk_prefix(p.disks[d]); };
    std::vector<GuestBlockLayer*> block(disks);
    std::vector<GuestDriverLimit*> limit(disks, nullptr);
    std::vector<Virtqueue*> vq(disks, nullptr);
    std::vector<AioStage*> aio(disks);
    block[0] = &add<GuestBlockLayer>(sim, vm, p, io_);
    if (driver.inflight_limit > 0) limit[0] = &add<GuestDriverLimit>(sim, vm, driver.inflight_limit);
    HostThreads* host = bare ? nullptr : &add<HostThreads>(sim, vm, p, io_, cpu);
    if (!bare) vq[0] = &add<Virtqueue>(sim, vm, p, io_, !driver.has_virtqueue);
    for (std::size_t d = 1; d < disks; ++d) {
      block[d] = &add<GuestBlockLayer>(sim, disk_vm(d), *disk_view[d], io_);
      if (driver.inflight_limit > 0) limit[d] = &add<GuestDriverLimit>(sim, disk_vm(d), driver.inflight_limit);
      if (!bare) vq[d] = &add<Virtqueue>(sim, disk_vm(d), *disk_view[d], io_, !driver.has_virtqueue);
    }
    // Several disks: the switches from the VM's shared stages to each disk's.
    DiskSwitch *to_tags = nullptr, *to_ring = nullptr, *to_aio = nullptr, *to_used = nullptr, *to_release = nullptr;
    if (disks > 1) {
      to_tags = &add<DiskSwitch>(sim, vm, "disk:submit", io_, disks);
      to_ring = &add<DiskSwitch>(sim, vm, "disk:ring", io_, disks);
      std::vector<const KickPolicy*> kicks;
      for (Virtqueue* q : vq) kicks.push_back(q);
      if (!bare) to_ring->kicks_for(std::move(kicks));
    }
    const KickPolicy* kick = bare ? nullptr : to_ring != nullptr ? static_cast<const KickPolicy*>(to_ring) : vq[0];
    auto& threads = add<GuestThreads>(sim, vm, p, io_, kick, cpu);
    aio[0] = &add<AioStage>(sim, vm, p, io_);
    for (std::size_t d = 1; d < disks; ++d) aio[d] = &add<AioStage>(sim, disk_vm(d), *disk_view[d], io_);
    if (disks > 1) {
      if (!bare) to_aio = &add<DiskSwitch>(sim, vm, "disk:aio", io_, disks);
      if (!bare) to_used = &add<DiskSwitch>(sim, vm, "disk:used", io_, disks);
      to_release = &add<DiskSwitch>(sim, vm, "disk:release", io_, disks);
    }
    for (std::size_t d = 0; d < disks; ++d) {
      const std::string backend = !s.multi_vm() ? ""
                                  : disks > 1   ? p.disks[d].backend
                                                : s.profiles[static_cast<std::size_t>(inst.profile)].backend;
      ends.push_back({aio[d], host, inst.index, static_cast<int>(d), disk_view[d], backend});
    }

    // Submit side: fio to each disk's tags, the job threads from them, and on to each disk's
    // ring (or, on bare metal, its AIO stage).
    if (to_tags != nullptr) {
      link(fio, fio.submit, *to_tags, DiskSwitch::kIn);
      for (std::size_t d = 0; d < disks; ++d) link(*to_tags, to_tags->out(d), *block[d], GuestBlockLayer::kSubmit);
    } else {
      link(fio, fio.submit, *block[0], GuestBlockLayer::kSubmit);
    }
    for (std::size_t d = 0; d < disks; ++d) {
      if (limit[d] != nullptr) {
        link(*block[d], block[d]->granted, *limit[d], GuestDriverLimit::kSubmit);
        link(*limit[d], limit[d]->granted, threads, GuestThreads::kSubmit);
      } else {
        link(*block[d], block[d]->granted, threads, GuestThreads::kSubmit);
      }
    }
    // Where a request goes after the job thread's submit: its disk's ring, or (bare metal) its AIO.
    const auto after_submit = [&](std::size_t d) -> std::pair<Stage*, int> {
      if (bare) return {aio[d], AioStage::kSubmit};
      return {vq[d], Virtqueue::kAvail};
    };
    if (to_ring != nullptr) {
      link(threads, threads.submitted, *to_ring, DiskSwitch::kIn);
      for (std::size_t d = 0; d < disks; ++d) link(*to_ring, to_ring->out(d), *after_submit(d).first, after_submit(d).second);
    } else {
      link(threads, threads.submitted, *after_submit(0).first, after_submit(0).second);
    }
    if (!bare) {
      for (std::size_t d = 0; d < disks; ++d) {
        vq[d]->consumed_by(*host);
        host->signals_to(d, *vq[d]);
        if (handler_window_on(s) && s.vq.handler_preempts) vq[d]->handlers_preempt(&threads);
        if (host->bql_holder() != nullptr) {
          vq[d]->interrupts_taken_after(host->bql_holder(), s.host.tcg_irq_stall ? &threads : nullptr, host->relays_in_pass());
          threads.need_lock_of(host->bql_holder());
        }
        link(*vq[d], vq[d]->to_host, *host, HostThreads::kSubmit);
      }
      if (to_aio != nullptr) {
        link(*host, host->submitted, *to_aio, DiskSwitch::kIn);
        for (std::size_t d = 0; d < disks; ++d) link(*to_aio, to_aio->out(d), *aio[d], AioStage::kSubmit);
      } else {
        link(*host, host->submitted, *aio[0], AioStage::kSubmit);
      }
    }
    // Completion side, from each disk's AIO stage back.
    for (std::size_t d = 0; d < disks; ++d) {
      if (bare)
        link(*aio[d], aio[d]->completed, threads, GuestThreads::kComplete);
      else
        link(*aio[d], aio[d]->completed, *host, HostThreads::kComplete);
    }
    if (!bare) {
      if (to_used != nullptr) {
        link(*host, host->completed, *to_used, DiskSwitch::kIn);
        for (std::size_t d = 0; d < disks; ++d) link(*to_used, to_used->out(d), *vq[d], Virtqueue::kUsed);
      } else {
        link(*host, host->completed, *vq[0], Virtqueue::kUsed);
      }
      for (std::size_t d = 0; d < disks; ++d) link(*vq[d], vq[d]->interrupt, threads, GuestThreads::kComplete);
    }
    // The job thread has reaped it: the driver's slot and the tag of its disk go back.
    const auto release = [&](std::size_t d) -> std::pair<Stage*, int> {
      if (limit[d] != nullptr) return {limit[d], GuestDriverLimit::kRelease};
      return {block[d], GuestBlockLayer::kRelease};
    };
    if (to_release != nullptr) {
      link(threads, threads.completed, *to_release, DiskSwitch::kIn);
      for (std::size_t d = 0; d < disks; ++d) link(*to_release, to_release->out(d), *release(d).first, release(d).second);
    } else {
      link(threads, threads.completed, *release(0).first, release(0).second);
    }
    for (std::size_t d = 0; d < disks; ++d) {
      if (limit[d] != nullptr) link(*limit[d], limit[d]->released, *block[d], GuestBlockLayer::kRelease);
      link(*block[d], block[d]->reaped, fio, FioWorkload::kReaped);
    }
  }

  // What the VMs share: each backend device (and the host page cache beside it), built with the
  // parameters of the first disk that names it. The first device keeps a single-VM scenario's
  // names; the others are prefixed with their [[backend]] name.
  std::vector<std::string> devices;          // backend names, in the order first named
  std::vector<std::vector<std::size_t>> on;  // each device's disks, by index in `ends`
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const auto at = std::find(devices.begin(), devices.end(), ends[i].backend);
    if (at == devices.end()) {
      devices.push_back(ends[i].backend);
      on.push_back({i});
    } else {
      on[static_cast<std::size_t>(at - devices.begin())].push_back(i);
    }
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const std::string prefix = d == 0 ? "" : devices[d] + ".";
    const auto& mine = on[d];
    auto& backend = add<Backend>(sim, prefix, *ends[mine.front()].view, io_);
    for (const std::size_t i : mine) {
      AioStage* aio = ends[i].aio;
      link(*aio, aio->to_device, backend, Backend::kSubmit);
      link(*aio, aio->to_pagecache, backend, Backend::kPagecache);
      // A null device's latency timers, on a disk the main loop serves, wait for that loop.
      HostThreads* host = ends[i].host;
      if (backend.null_timers() != nullptr && host != nullptr && host->main_loop() != nullptr) {
        backend.null_timers()->wait_for(static_cast<std::uint32_t>(ends[i].vm), *host->main_loop());
        host->watch_timers(*backend.null_timers());
      }
    }
    if (mine.size() == 1) {
      link(backend, backend.done, *ends[mine.front()].aio, AioStage::kDone);
    } else {
      std::vector<std::pair<int, int>> sources;
      bool by_disk = false;
      for (const std::size_t i : mine) {
        sources.emplace_back(ends[i].vm, ends[i].disk);
        by_disk = by_disk || ends[i].disk > 0;
      }
      auto& back = add<VmReturn>(sim, prefix, io_, sources, by_disk);
      link(backend, backend.done, back, VmReturn::kIn);
      for (std::size_t k = 0; k < mine.size(); ++k) link(back, back.out(k), *ends[mine[k]].aio, AioStage::kDone);
    }
  }
}

// Every stage's keys, along the path; the loader applies a file's values in this order (only
// fio's keys depend on each other: bs before bs_write, rwmixread before rw takes it).
const std::vector<Param>& io_keys() {
  static const std::vector<Param> table = [] {
    std::vector<Param> t;
    io_path_keys(t);
    fio_keys(t);
    guest_block_keys(t);
    guest_driver_keys(t);
    guest_thread_keys(t);
    virtqueue_keys(t);
    host_thread_keys(t);
    aio_keys(t);
    backend_keys(t);
    return t;
  }();
  return table;
}

std::vector<StageInfo> IoPath::stations() const {
  std::vector<StageInfo> out;
  for (const Stage* stage : stages_) {
    stage->stations(out);
    for (const auto& [after, cpu] : cpus_after_)
      if (after == stage) out.push_back({cpu->name(), "cpu", cpu->servers()});
  }
  return out;
}

sim::Metrics run_io_replication(const IoScenario& s, std::uint64_t replication, sim::RunResult* run) {
  // Stonewall groups are runs of their own (simulate_io runs each): one replication is the first's.
  if (scenario_phases(s) > 1) return run_io_replication(phase_scenario(s, 0), replication, run);
  sim::Simulator sim(s.run.seed, replication);
  IoPath path(sim, s);
  const sim::RunResult rr = sim.run(io_run_limits(s));
  if (run != nullptr) *run = rr;
  sim::Metrics m = sim.report();
  m.add("run.simulated_ns", static_cast<double>(rr.end_ns - rr.warmup_end_ns));
  // The host's aggregate over its VMs: I/Os per second, and their mean latency.
  double total_iops = 0, weighted_lat_ns = 0;
  for (const VmInstance& inst : vm_instances(s)) {
    const std::string& vm = inst.prefix;
    for (const char* dir : {"read", "write"}) {
      const double iops = m.get(vm + dir + ".iops");
      total_iops += iops;
      weighted_lat_ns += iops * m.get(vm + dir + ".lat.mean_ns");
    }
  }
  // Which [[vm]] profile a name is, for the metrics vm.<name>.* (io_metric): its index in the file.
  for (std::size_t p = 0; p < s.profiles.size(); ++p)
    if (s.profiles[p].count > 0) m.add("vm." + s.profiles[p].name + ".profile", static_cast<double>(p));
  m.add("host.total.iops", total_iops);
  m.add("host.total.lat.mean_ns", total_iops > 0 ? weighted_lat_ns / total_iops : 0.0);
  return m;
}

namespace {
// The jobs a VM runs at once (those of the scenario's stonewall group): each measures workload.ios.
std::uint64_t jobs_of(const IoScenario& s) { return std::max<std::uint64_t>(1, s.jobs.size()); }
}  // namespace

sim::RunLimits io_run_limits(const IoScenario& s) {
  sim::RunLimits limits;
  limits.hash_events = s.run.hash_events;
  if (!s.multi_vm()) {
    limits.warmup_ns = s.workload.ramp_time_ns;
    if (s.workload.runtime_ns > 0)
      limits.measure_ns = s.workload.runtime_ns;
    else
      limits.measure_completions =
          s.workload.ios * static_cast<std::uint64_t>(std::max(1, s.vms)) * jobs_of(s);  // ios per VM and job
    return limits;
  }
  // All VMs run in one window: the longest ramp, then the longest runtime, or (no VM with a
  // runtime) every VM's ios counted together.
  std::uint64_t completions = 0;
  for (const VmProfile& p : s.profiles) {
    if (p.count == 0) continue;
    limits.warmup_ns = std::max(limits.warmup_ns, p.scenario.workload.ramp_time_ns);
    limits.measure_ns = std::max(limits.measure_ns, p.scenario.workload.runtime_ns);
    completions += p.scenario.workload.ios * static_cast<std::uint64_t>(p.count) * jobs_of(p.scenario);
  }
  if (limits.measure_ns == 0) limits.measure_completions = completions;
  return limits;
}

std::vector<StageInfo> io_stages(const IoScenario& s) {
  if (scenario_phases(s) > 1) return io_stages(phase_scenario(s, 0));
  sim::Simulator sim(s.run.seed, 0);
  const IoPath path(sim, s);
  return path.stations();
}

// The scenario keys of the run, and the CPUs the path's threads share (models/param.h: how a key is declared).
void io_path_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"run.seed",
       Kind::integer,
       "",
       "1",
       "",
       "seed of replication 0; replication r uses streams (seed, r)",
       {},
       0,
       1.8e19,
       [](IoScenario& s, const Value& v) { s.run.seed = static_cast<std::uint64_t>(v.number); }});
  add({"run.replications",
       Kind::integer,
       "",
       "5",
       "",
       "independent replications (95% intervals need >= 2)",
       {},
       1,
       10000,
       [](IoScenario& s, const Value& v) { s.run.replications = static_cast<int>(v.number); }});
  add({"vm.count",
       Kind::integer,
       "",
       "1",
       "",
       "identical VMs of this profile on one host, each its own QEMU process, guest and disk; they share host.cores and "
       "the backend device (figures are one VM's; host.total.* the host's)",
       {},
       1,
       4096,
       [](IoScenario& s, const Value& v) { s.vms = static_cast<int>(v.number); }});
  add({"host.cores",
       Kind::integer,
       "",
       "0",
       "",
       "host cores shared by vCPU, emulation and worker threads (0 = one each)",
       {},
       0,
       4096,
       [](IoScenario& s, const Value& v) { s.host.cores = static_cast<int>(v.number); }});
}

}  // namespace vqsim::models
