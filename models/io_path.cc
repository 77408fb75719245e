#include "models/io_path.h"

#include <algorithm>

namespace vqsim::models {

namespace {
sim::Distribution spread(double mean_ns, double cv) {
  if (mean_ns <= 0) return sim::Distribution::deterministic(0);
  return cv > 0 ? sim::Distribution::lognormal_mean_cv(mean_ns, cv) : sim::Distribution::deterministic(mean_ns);
}
}  // namespace

IoPath::IoPath(sim::Simulator& sim, std::string name, const IoScenario& s)
    : sim::Component(sim, std::move(name)),
      s_(s),
      driver_(driver_costs(s)),
      block_(block_layer(s)),
      aio_(aio_engine(s)),
      cache_(cache_semantics(s)) {
  const bool bare = s.bare_metal();
  const bool qemu = driver_.uses_qemu_thread;
  workload_ = &sim.make<FioWorkload>("fio", s, io_);
  workload_->set_sink(this);
  stages_.push_back({"fio", "fio", s.workload.numjobs * s.workload.effective_depth()});

  // CPUs: shared host cores when the scenario limits them; otherwise fio jobs beyond the vCPU
  // count share the vCPUs; otherwise every thread has a core of its own.
  if (s.host.cores > 0) {
    cpu_ = &sim.make<sim::ProcessorSharingStation>("host.cpu", s.host.cores);
    stages_.push_back({"host.cpu", "cpu", s.host.cores});
  } else if (s.workload.numjobs > s.guest.vcpus) {
    cpu_ = &sim.make<sim::ProcessorSharingStation>("guest.vcpus", s.guest.vcpus);
    stages_.push_back({"guest.vcpus", "cpu", s.guest.vcpus});
  }

  // Guest block layer: tags per hardware queue, then the driver's own limit.
  for (int q = 0; q < s.queues(); ++q) {
    auto& pool = sim.make<sim::TokenPool>("guest.tags" + std::to_string(q), block_.tags_per_queue);
    sim::connect(pool.acquired, *this, kTagGranted);
    sim::connect(pool.released, *this, kTagReleased);
    tags_.push_back(&pool);
    stages_.push_back({pool.name(), "guest", block_.tags_per_queue});
  }
  if (driver_.inflight_limit > 0) {
    limit_ = &sim.make<sim::TokenPool>("guest.lun_limit", driver_.inflight_limit);
    sim::connect(limit_->acquired, *this, kLimitGranted);
    sim::connect(limit_->released, *this, kLimitReleased);
    stages_.push_back({limit_->name(), "guest", driver_.inflight_limit});
  }

  // Host side: the thread(s) that serve the virtqueues.
  if (!bare) {
    const double cv = s.host.cpu_cv;
    if (qemu) {
      const int n = std::max(1, s.host.iothreads);
      const double extra = s.host.iothreads == 0 ? s.host.main_loop_ns : 0.0;
      for (int t = 0; t < n; ++t) {
        const std::string tname = s.host.iothreads == 0 ? std::string("host.main_loop") : "host.iothread" + std::to_string(t);
        auto& th =
            sim.make<EmulationThread>(tname, io_, driver_.emu_submit_ns + aio_.submit_ns + extra, driver_.emu_complete_ns + extra,
                                      cv, s.host.iothreads > 0 ? s.host.poll_max_ns : 0.0, false, s.host.emu_per_page_ns);
        host_threads_.push_back(&th);
      }
    } else if (s.guest.driver == GuestDriver::vhost_scsi) {
      host_threads_.push_back(&sim.make<EmulationThread>("host.vhost_worker", io_, 0.6 * s.host.vhost_worker_ns,
                                                         0.4 * s.host.vhost_worker_ns, cv, 0.0, false));
    } else {
      host_threads_.push_back(&sim.make<EmulationThread>("host.vhost_user", io_, 0.6 * s.host.vhost_user_ns,
                                                         0.4 * s.host.vhost_user_ns, cv, 0.0, true));
    }
    if (qemu && s.guest.driver == GuestDriver::virtio_blk && s.host.virtio_blk_batching != VirtioBlkBatching::none) {
      for (auto* th : host_threads_) {
        auto& b = sim.make<NotificationBatch>(th->name() + ".batch", io_, s.host.virtio_blk_batching);
        sim::connect(b.out, *this, kBatchReleased);
        batches_.push_back(&b);
      }
    }
    if (!batches_.empty()) submits_queued_.assign(host_threads_.size(), 0);
    for (auto* th : host_threads_) {
      sim::connect(th->out, *this, kHostThreadDone);
      if (s.host.cores > 0 && cpu_ != nullptr && !(s.guest.driver == GuestDriver::vhost_user_blk)) th->use_cpu(*cpu_);
      stages_.push_back({th->name(), "host", 1});
    }
    vqs_ = std::make_unique<Virtqueues>(s, host_threads_, !driver_.has_virtqueue);
    wakeup_ = &sim.make<sim::DelayStation>("virtqueue.wakeup", spread(s.vq.wakeup_ns, 0.5));
    sim::connect(wakeup_->out, *this, kWakeupDone);
    stages_.push_back({wakeup_->name(), "virtqueue", 0});
    for (int q = 0; q < s.queues(); ++q) {
      auto& line = sim.make<InterruptLine>("virtqueue.irq" + std::to_string(q), io_, spread(s.vq.irq_ns, 0.5));
      sim::connect(line.out, *this, kIrqDone);
      irqs_.push_back(&line);
      stages_.push_back({line.name(), "virtqueue", 0});
    }
  }

  // fio's threads on the vCPUs.
  GuestCpuCosts costs;
  costs.per_io_submit = s.guest.fio_submit_ns;
  costs.per_request_submit = block_.submit_extra_ns + driver_.submit_ns;
  costs.per_io_complete = s.guest.fio_complete_ns;
  costs.per_request_complete = driver_.complete_ns;
  // One notify per io_submit call: with iodepth_batch_submit = b, the exit is shared by b I/Os.
  costs.kick_exit = bare ? 0.0 : s.vq.kick_exit_ns / std::max(1, s.workload.iodepth_batch_submit);
  costs.irq_handler = bare ? 0.0 : s.vq.irq_handler_ns;
  costs.cv = s.guest.cpu_cv;
  for (int j = 0; j < s.workload.numjobs; ++j) {
    auto& th = sim.make<FioThread>("guest.fio_job" + std::to_string(j), io_, costs, vqs_.get());
    sim::connect(th.out, *this, kGuestCpuDone);
    if (cpu_ != nullptr) th.use_cpu(*cpu_);
    fio_threads_.push_back(&th);
    stages_.push_back({th.name(), "guest", 1});
  }

  // AIO engine (QEMU paths only; vhost workers submit bios themselves).
  if (qemu) {
    aio_slots_ = &sim.make<sim::TokenPool>("aio.slots", aio_.slots);
    sim::connect(aio_slots_->acquired, *this, kAioGranted);
    sim::connect(aio_slots_->released, *this, kAioReleased);
    stages_.push_back({aio_slots_->name(), "aio", aio_.slots});
    if (aio_.handoff) {
      handoff_ = &sim.make<sim::DelayStation>("aio.handoff", spread(s.host.threads_handoff_ns, 0.5));
      sim::connect(handoff_->out, *this, kHandoffDone);
      stages_.push_back({handoff_->name(), "aio", 0});
    }
  }

  backend_ = std::make_unique<Backend>(sim, s, io_, *this, kDeviceDone, kFlushDone);
  for (sim::Component* c : backend_->stations()) {
    const auto* fcfs = dynamic_cast<const sim::FcfsStation*>(c);
    stages_.push_back({c->name(), "backend", fcfs ? fcfs->servers() : (dynamic_cast<const sim::BatchStation*>(c) ? 1 : 0)});
  }
}

void IoPath::start_request(sim::JobId job) {
  IoRequest& r = io_[job];
  r.step = Step::tag;
  r.seq = 0;
  tags_[r.queue % tags_.size()]->accept(job, sim::TokenPool::kAcquire);
}

void IoPath::to_guest_submit(sim::JobId job, IoRequest& r) {
  r.step = Step::guest_submit;
  fio_threads_[r.job]->accept(job, 0);
}

void IoPath::after_guest_submit(sim::JobId job, IoRequest& r) {
  r.submitted_ns = sim_.now();
  if (s_.bare_metal()) {
    to_backend(job, r);
  } else if (vqs_->must_wake(r)) {
    r.step = Step::wakeup;
    wakeup_->accept(job, 0);
  } else {
    to_host_submit(job, r);
  }
}

void IoPath::to_host_submit(sim::JobId job, IoRequest& r) {
  r.step = Step::host_submit;
  if (!batches_.empty()) ++submits_queued_[static_cast<std::size_t>(r.thread)];
  host_threads_[r.thread]->accept(job, 0);
}

void IoPath::after_host_submit(sim::JobId job, IoRequest& r) {
  if (aio_slots_ != nullptr) {
    r.step = Step::aio_slot;
    aio_slots_->accept(job, sim::TokenPool::kAcquire);
  } else {
    to_backend(job, r);
  }
}

void IoPath::to_backend(sim::JobId job, IoRequest& r) {
  r.step = Step::device;
  const bool write = r.dir == Direction::write;
  r.pagecache = false;
  if (!cache_.direct) {
    if (write)
      r.pagecache = cache_.writes_to_pagecache;
    else
      r.pagecache = s_.host.pagecache_hit_ratio > 0 && rng_.uniform01() < s_.host.pagecache_hit_ratio;
  }
  r.needs_flush = write && cache_.flush_after_write;
  if (r.pagecache)
    backend_->pagecache(job);
  else
    backend_->submit(job);
}

void IoPath::after_device(sim::JobId job, IoRequest& r) {
  if (s_.bare_metal()) {
    to_guest_complete(job, r);
  } else if (aio_slots_ != nullptr) {
    aio_slots_->accept(job, sim::TokenPool::kRelease);
  } else {
    to_host_complete(job, r);
  }
}

void IoPath::to_host_complete(sim::JobId job, IoRequest& r) {
  r.step = Step::host_complete;
  host_threads_[r.thread]->accept(job, 0);
}

void IoPath::to_guest_complete(sim::JobId job, IoRequest& r) {
  r.step = Step::guest_complete;
  fio_threads_[r.job]->accept(job, 0);
}

void IoPath::release_limits(sim::JobId job, IoRequest& r) {
  if (limit_ != nullptr)
    limit_->accept(job, sim::TokenPool::kRelease);
  else
    tags_[r.queue % tags_.size()]->accept(job, sim::TokenPool::kRelease);
}

void IoPath::accept(sim::JobId job, int in_port) {
  IoRequest& r = io_[job];
  switch (static_cast<Port>(in_port)) {
    case kTagGranted:
      if (limit_ != nullptr)
        limit_->accept(job, sim::TokenPool::kAcquire);
      else
        to_guest_submit(job, r);
      break;
    case kLimitGranted:
      to_guest_submit(job, r);
      break;
    case kGuestCpuDone:
      if (r.step == Step::guest_submit)
        after_guest_submit(job, r);
      else
        release_limits(job, r);
      break;
    case kWakeupDone:
      to_host_submit(job, r);
      break;
    case kHostThreadDone:
      if (r.step == Step::host_submit) {
        if (batches_.empty()) {
          after_host_submit(job, r);
        } else {
          const auto t = static_cast<std::size_t>(r.thread);
          const bool last = --submits_queued_[t] == 0;  // the ring is empty: the handler returns
          NotificationBatch& batch = *batches_[t];
          if (batch.holds(r))
            batch.accept(job, 0);
          else
            after_host_submit(job, r);
          if (last) batch.end_of_notification();
        }
      } else {
        r.step = Step::irq;
        irqs_[r.queue % irqs_.size()]->accept(job, 0);
      }
      break;
    case kAioGranted:
      if (handoff_ != nullptr) {
        r.step = Step::aio_handoff;
        handoff_->accept(job, 0);
      } else {
        to_backend(job, r);
      }
      break;
    case kHandoffDone:
      if (r.step == Step::aio_handoff)
        to_backend(job, r);
      else
        to_host_complete(job, r);
      break;
    case kDeviceDone:
      // Fork-join children go back to their join; only whole requests carry on.
      if (!backend_->device_done(job)) break;
      if (r.needs_flush) {
        r.step = Step::flush;
        backend_->flush(job);
      } else {
        after_device(job, r);
      }
      break;
    case kFlushDone:
      after_device(job, r);
      break;
    case kAioReleased:
      if (handoff_ != nullptr) {
        r.step = Step::aio_return;
        handoff_->accept(job, 0);
      } else {
        to_host_complete(job, r);
      }
      break;
    case kIrqDone:
      to_guest_complete(job, r);
      break;
    case kBatchReleased:
      after_host_submit(job, r);
      break;
    case kLimitReleased:
      tags_[r.queue % tags_.size()]->accept(job, sim::TokenPool::kRelease);
      break;
    case kTagReleased:
      workload_->complete(job);
      break;
  }
}

sim::Metrics run_io_replication(const IoScenario& s, std::uint64_t replication, sim::RunResult* run) {
  sim::Simulator sim(s.run.seed, replication);
  sim.make<IoPath>("path", s);
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
  auto& path = sim.make<IoPath>("path", s);
  return path.stages();
}

}  // namespace vqsim::models
