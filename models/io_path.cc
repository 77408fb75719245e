#include "models/io_path.h"

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

// Stages are built in path order (their stations report in that order); adding a stage is its
// file and its lines here.
IoPath::IoPath(sim::Simulator& sim, const IoScenario& s) {
  const bool bare = s.bare_metal();
  const DriverCosts driver = driver_costs(s);
  auto& fio = add<FioWorkload>(sim, "fio", s, io_);
  workload_ = &fio;

  // CPUs: shared host cores when the scenario limits them; otherwise fio jobs beyond the vCPU
  // count share the vCPUs; otherwise every thread has a core of its own.
  if (s.host.cores > 0)
    cpu_ = &sim.make<sim::ProcessorSharingStation>("host.cpu", s.host.cores);
  else if (s.workload.numjobs > s.guest.vcpus)
    cpu_ = &sim.make<sim::ProcessorSharingStation>("guest.vcpus", s.guest.vcpus);

  auto& block = add<GuestBlockLayer>(sim, "guest.block", s, io_);
  GuestDriverLimit* limit =
      driver.inflight_limit > 0 ? &add<GuestDriverLimit>(sim, "guest.driver", driver.inflight_limit) : nullptr;
  HostThreads* host = bare ? nullptr : &add<HostThreads>(sim, "host.threads", s, io_, cpu_);
  Virtqueue* vq = bare ? nullptr : &add<Virtqueue>(sim, "virtqueue", s, io_, !driver.has_virtqueue);
  auto& threads = add<GuestThreads>(sim, "guest.threads", s, io_, vq, cpu_);
  auto& aio = add<AioStage>(sim, "aio", s, io_);
  auto& backend = add<Backend>(sim, "backend", s, io_);

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
  link(aio, aio.to_device, backend, Backend::kSubmit);
  link(aio, aio.to_pagecache, backend, Backend::kPagecache);
  // Completion side.
  link(backend, backend.done, aio, AioStage::kDone);
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
    if (stage == workload_ && cpu_ != nullptr) out.push_back({cpu_->name(), "cpu", cpu_->servers()});
  }
  return out;
}

sim::Metrics run_io_replication(const IoScenario& s, std::uint64_t replication, sim::RunResult* run) {
  sim::Simulator sim(s.run.seed, replication);
  IoPath path(sim, s);
  sim::RunLimits limits;
  limits.warmup_ns = s.workload.ramp_time_ns;
  limits.hash_events = s.run.hash_events;
  if (s.workload.runtime_ns > 0)
    limits.measure_ns = s.workload.runtime_ns;
  else
    limits.measure_completions = s.workload.ios;
  const sim::RunResult rr = sim.run(limits);
  if (run != nullptr) *run = rr;
  sim::Metrics m = sim.report();
  m.add("run.simulated_ns", static_cast<double>(rr.end_ns - rr.warmup_end_ns));
  return m;
}

std::vector<StageInfo> io_stages(const IoScenario& s) {
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
