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
// With several VMs on one backend, the backend's completions go back to the VM that issued them.
class VmReturn final : public Stage {
 public:
  static constexpr int kIn = 0;
  // `vms`: the indices (IoRequest.vm) of the VMs whose disks are on this backend.
  VmReturn(sim::Simulator& sim, const std::string& prefix, IoTable& io, const std::vector<int>& vms)
      : Stage(sim, prefix, "backend.return"), io_(io), out_(vms.size()) {
    for (std::size_t i = 0; i < vms.size(); ++i) {
      const auto v = static_cast<std::size_t>(vms[i]);
      if (slot_.size() <= v) slot_.resize(v + 1, 0);
      slot_[v] = i;
    }
  }
  sim::Port& out(std::size_t i) { return out_[i]; }
  void accept(sim::JobId job, int) override { out_[slot_[io_[job].vm]].send(job); }
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
  std::vector<std::size_t> slot_;  // by VM index
};
}  // namespace

// Stages are built in path order (their stations report in that order), one VM after the other,
// then what the VMs share; adding a stage is its file and its lines here.
IoPath::IoPath(sim::Simulator& sim, const IoScenario& s) {
  const std::vector<VmInstance> vms = vm_instances(s);
  // Shared host cores when the scenario limits them: every VM's vCPU and QEMU threads compete.
  sim::ProcessorSharingStation* host_cpu = nullptr;
  std::vector<AioStage*> aios;
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

    auto& block = add<GuestBlockLayer>(sim, vm, p, io_);
    GuestDriverLimit* limit = driver.inflight_limit > 0 ? &add<GuestDriverLimit>(sim, vm, driver.inflight_limit) : nullptr;
    HostThreads* host = bare ? nullptr : &add<HostThreads>(sim, vm, p, io_, cpu);
    Virtqueue* vq = bare ? nullptr : &add<Virtqueue>(sim, vm, p, io_, !driver.has_virtqueue);
    auto& threads = add<GuestThreads>(sim, vm, p, io_, vq, cpu);
    auto& aio = add<AioStage>(sim, vm, p, io_);
    aios.push_back(&aio);

    // Submit side.
    link(fio, fio.submit, block, GuestBlockLayer::kSubmit);
    if (limit != nullptr) {
      link(block, block.granted, *limit, GuestDriverLimit::kSubmit);
      link(*limit, limit->granted, threads, GuestThreads::kSubmit);
    } else {
      link(block, block.granted, threads, GuestThreads::kSubmit);
    }
    if (bare) {
      link(threads, threads.submitted, aio, AioStage::kSubmit);
    } else {
      vq->consumed_by(*host);
      link(threads, threads.submitted, *vq, Virtqueue::kAvail);
      link(*vq, vq->to_host, *host, HostThreads::kSubmit);
      link(*host, host->submitted, aio, AioStage::kSubmit);
    }
    // Completion side, from the AIO stage back.
    if (bare) {
      link(aio, aio.completed, threads, GuestThreads::kComplete);
    } else {
      link(aio, aio.completed, *host, HostThreads::kComplete);
      link(*host, host->completed, *vq, Virtqueue::kUsed);
      link(*vq, vq->interrupt, threads, GuestThreads::kComplete);
    }
    if (limit != nullptr) {
      link(threads, threads.completed, *limit, GuestDriverLimit::kRelease);
      link(*limit, limit->released, block, GuestBlockLayer::kRelease);
    } else {
      link(threads, threads.completed, block, GuestBlockLayer::kRelease);
    }
    link(block, block.reaped, fio, FioWorkload::kReaped);
  }

  // What the VMs share: each backend device (and the host page cache beside it), built with the
  // parameters of the first VM whose disk names it. The first device keeps a single-VM
  // scenario's names; the others are prefixed with their [[backend]] name.
  std::vector<std::string> devices;  // backend names, in the order first named
  std::vector<std::vector<int>> on;  // each device's VMs, by index in `vms`
  for (std::size_t i = 0; i < vms.size(); ++i) {
    const std::string b = s.multi_vm() ? s.profiles[static_cast<std::size_t>(vms[i].profile)].backend : "";
    const auto at = std::find(devices.begin(), devices.end(), b);
    if (at == devices.end()) {
      devices.push_back(b);
      on.push_back({static_cast<int>(i)});
    } else {
      on[static_cast<std::size_t>(at - devices.begin())].push_back(static_cast<int>(i));
    }
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const std::string prefix = d == 0 ? "" : devices[d] + ".";
    const auto& mine = on[d];
    auto& backend = add<Backend>(sim, prefix, profile_scenario(s, vms[static_cast<std::size_t>(mine.front())]), io_);
    for (const int i : mine) {
      AioStage* aio = aios[static_cast<std::size_t>(i)];
      link(*aio, aio->to_device, backend, Backend::kSubmit);
      link(*aio, aio->to_pagecache, backend, Backend::kPagecache);
    }
    if (mine.size() == 1) {
      link(backend, backend.done, *aios[static_cast<std::size_t>(mine.front())], AioStage::kDone);
    } else {
      std::vector<int> indices;
      for (const int i : mine) indices.push_back(vms[static_cast<std::size_t>(i)].index);
      auto& back = add<VmReturn>(sim, prefix, io_, indices);
      link(backend, backend.done, back, VmReturn::kIn);
      for (std::size_t k = 0; k < mine.size(); ++k)
        link(back, back.out(k), *aios[static_cast<std::size_t>(mine[k])], AioStage::kDone);
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
