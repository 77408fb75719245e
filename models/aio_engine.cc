#include "models/aio_engine.h"

#include "models/guest_driver.h"

namespace vqsim::models {

AioEngine aio_engine(const IoScenario& s) {
  AioEngine a;
  switch (s.host.aio) {
    case Aio::threads:
      a.slots = s.host.thread_pool_max;
      a.handoff = true;
      a.submit_ns = 0;  // a condition-variable signal; the worker's syscall is off the thread
      break;
    case Aio::native:
      a.slots = 1024;  // block/linux-aio.c MAX_EVENTS
      a.submit_ns = s.host.native_submit_ns;
      // null-co and null-aio have no AIO engine (native is their stand-in), librbd none of Linux's
      a.poll_leaves_notifier = s.backend.kind != BackendKind::null && s.backend.kind != BackendKind::ceph_rbd;
      break;
    case Aio::io_uring:
      a.slots = 128;  // block/io_uring.c MAX_ENTRIES
      a.submit_ns = s.host.io_uring_submit_ns;
      break;
  }
  return a;
}

CacheSemantics cache_semantics(const IoScenario& s) {
  CacheSemantics c{};
  const CacheMode m = s.host.cache;
  c.direct = m == CacheMode::none || m == CacheMode::directsync;
  c.flush_after_write = m == CacheMode::writethrough || m == CacheMode::directsync;
  c.writes_to_pagecache = m == CacheMode::writeback || m == CacheMode::unsafe;
  // Bare metal: the guest's O_DIRECT fio talks to the device; there is no QEMU cache layer.
  // Ceph through librbd never touches the host page cache (librbd has its own cache, which
  // writes through to the OSDs at the cluster's pace in steady state).
  if (s.bare_metal() || s.backend.kind == BackendKind::ceph_rbd) {
    c.direct = true;
    c.writes_to_pagecache = false;
  }
  if (s.bare_metal()) c.flush_after_write = false;
  return c;
}

double pagecache_share(const IoScenario& s) {
  const CacheSemantics cache = cache_semantics(s);
  if (cache.direct) return 0;
  const auto& w = s.workload;
  return w.read_fraction * s.host.pagecache_hit_ratio + (cache.writes_to_pagecache ? 1 - w.read_fraction : 0.0);
}

HandoffDelay::HandoffDelay(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution delay)
    : sim::DelayStation(sim, std::move(name), sim::Distribution::deterministic(0)), io_(io), draw_(std::move(delay)) {}

sim::time_ns HandoffDelay::delay_ns(sim::JobId job) {
  // Every request draws (the random stream stays that of a plain delay); one that returns from
  // the same batch as the one before takes its delay. Hand-offs to the workers stay apart: each
  // wakes its own.
  const sim::time_ns drawn = draw_.sample_ns(rng_);
  const IoRequest& r = io_[job];
  if (r.step != Step::aio_return) return drawn;
  // A worker whose request the page cache served never slept in its syscall: it schedules the
  // completion's bottom half at once, with no wake-up of its own on the way back.
  if (r.pagecache) return 0;
  if (r.device_batch == 0 || r.device_batch != last_batch_) {
    last_batch_ = r.device_batch;
    last_ns_ = drawn;
  }
  return last_ns_;
}

AioStage::AioStage(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io)
    : Stage(sim, std::move(vm), "aio"),
      io_(io),
      cache_(cache_semantics(s)),
      pagecache_hit_ratio_(s.host.pagecache_hit_ratio),
      bare_(s.bare_metal()) {
  if (!driver_costs(s).uses_qemu_thread) return;  // vhost workers submit bios themselves
  const AioEngine aio = aio_engine(s);
  slots_ = &sim.make<sim::TokenPool>(local("aio.slots"), aio.slots);
  sim::connect(slots_->acquired, *this, kSlotGranted);
  sim::connect(slots_->released, *this, kSlotReleased);
  if (aio.handoff) {
    handoff_ = &sim.make<HandoffDelay>(local("aio.handoff"), io, spread(s.host.threads_handoff_ns, 0.5));
    sim::connect(handoff_->out, *this, kHandoffDone);
  }
}

void AioStage::to_backend(sim::JobId job, IoRequest& r) {
  r.step = Step::device;
  const bool write = r.dir == Direction::write;
  r.pagecache = false;
  if (!cache_.direct) {
    if (write)
      r.pagecache = cache_.writes_to_pagecache;
    else
      r.pagecache = pagecache_hit_ratio_ > 0 && rng_.uniform01() < pagecache_hit_ratio_;
  }
  r.needs_flush = write && cache_.flush_after_write;
  if (r.pagecache)
    to_pagecache.send(job);
  else
    to_device.send(job);
}

void AioStage::accept(sim::JobId job, int in_port) {
  IoRequest& r = io_[job];
  switch (static_cast<In>(in_port)) {
    case kSubmit:
      if (slots_ != nullptr) {
        r.step = Step::aio_slot;
        slots_->accept(job, sim::TokenPool::kAcquire);
      } else {
        to_backend(job, r);
      }
      break;
    case kSlotGranted:
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
        completed.send(job);
      break;
    case kDone:
      if (slots_ != nullptr)
        slots_->accept(job, sim::TokenPool::kRelease);
      else
        completed.send(job);
      break;
    case kSlotReleased:
      if (handoff_ != nullptr) {
        r.step = Step::aio_return;
        handoff_->accept(job, 0);
      } else {
        completed.send(job);
      }
      break;
  }
}

void AioStage::validate() const {
  sim::require_connected(*this, to_device, "to_device");
  sim::require_connected(*this, to_pagecache, "to_pagecache");
  sim::require_connected(*this, completed, "completed");
}

void AioStage::stations(std::vector<StageInfo>& out) const {
  if (slots_ != nullptr) out.push_back({slots_->name(), "aio", slots_->tokens()});
  if (handoff_ != nullptr) out.push_back({handoff_->name(), "aio", 0});
}

void AioStage::draw(StageGraph& g) const {
  if (slots_ != nullptr) g.nodes.push_back({slots_->name(), "aio", "pool", slots_->tokens()});
  if (handoff_ != nullptr) {
    g.nodes.push_back({handoff_->name(), "aio", "station", 0});
    g.edges.push_back({slots_->name(), handoff_->name(), "to worker"});
    g.edges.push_back({slots_->name(), handoff_->name(), "release, back"});
  }
}

std::vector<PortEnd> AioStage::entry(int) const {
  if (slots_ == nullptr) return {};
  return {{slots_->name(), ""}};
}

std::vector<PortEnd> AioStage::exits(const sim::Port& port) const {
  const bool down = &port != &completed;
  // Without QEMU's engine the request goes straight on, from the vhost worker ("I/O") or, on
  // bare metal, from the guest's submit.
  if (slots_ == nullptr) return {{"", down && !bare_ ? "I/O" : "", down ? kSubmit : kDone}};
  const std::string& from = handoff_ != nullptr ? handoff_->name() : slots_->name();
  return {{from, down ? "I/O" : "completion"}};
}

void aio_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  if (driver_costs(in.s).uses_qemu_thread && aio_engine(in.s).handoff)
    out.push_back({"aio.handoff", sim::MvaStationKind::Delay, 1, (2 - pagecache_share(in.s)) * in.s.host.threads_handoff_ns});
}

// The scenario keys of the AIO engine and cache mode (models/param.h: how a key is declared).
void aio_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"host.aio",
       Kind::choice,
       "",
       "threads",
       "QEMU qapi block-core.json (default threads)",
       "AIO engine",
       {"threads", "native", "io_uring"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.host.aio = pick<Aio>({"threads", "native", "io_uring"}, {Aio::threads, Aio::native, Aio::io_uring}, v.word);
       }});
  add({"host.cache",
       Kind::choice,
       "",
       "none",
       "QEMU -drive cache",
       "cache mode",
       {"none", "writeback", "writethrough", "directsync", "unsafe"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.host.cache = pick<CacheMode>(
             {"none", "writeback", "writethrough", "directsync", "unsafe"},
             {CacheMode::none, CacheMode::writeback, CacheMode::writethrough, CacheMode::directsync, CacheMode::unsafe}, v.word);
       }});
  add({"host.thread_pool_max",
       Kind::integer,
       "",
       "64",
       "QEMU util/thread-pool.c max_threads",
       "aio=threads worker threads",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.host.thread_pool_max = static_cast<int>(v.number); }});
  add({"host.threads_handoff_us",
       Kind::time_us,
       "us",
       "5",
       "[I] thread wake-up + bottom half",
       "aio=threads: latency to hand a request to a worker, and its completion back where the worker slept in its "
       "syscall (the device; a page-cache hit or write returns with no wake-up)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.threads_handoff_ns = v.number; },
       [](const IoScenario& s) { return s.host.threads_handoff_ns / s.host.cpu_scale / 1e3; }});
  add({"host.native_submit_us",
       Kind::time_us,
       "us",
       "1.0",
       "[I] io_submit amortized over aio-max-batch",
       "aio=native: emulation-thread CPU per request",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.native_submit_ns = v.number; },
       [](const IoScenario& s) { return s.host.native_submit_ns / s.host.cpu_scale / 1e3; }});
  add({"host.io_uring_submit_us",
       Kind::time_us,
       "us",
       "0.7",
       "[I]",
       "aio=io_uring: emulation-thread CPU per request",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.io_uring_submit_ns = v.number; },
       [](const IoScenario& s) { return s.host.io_uring_submit_ns / s.host.cpu_scale / 1e3; }});
  add({"host.pagecache_hit_ratio",
       Kind::real,
       "",
       "0",
       "",
       "share of reads served by the host page cache (writeback/writethrough/unsafe)",
       {},
       0,
       1,
       [](IoScenario& s, const Value& v) { s.host.pagecache_hit_ratio = v.number; }});
}

}  // namespace vqsim::models
