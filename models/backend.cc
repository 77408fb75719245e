#include "models/backend.h"

#include <algorithm>
#include <cmath>

#include "models/aio_engine.h"
#include "models/fio_workload.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"

namespace vqsim::models {

namespace {
sim::Distribution unit_factor(double cv) {
  return cv > 0 ? sim::Distribution::lognormal_mean_cv(1.0, cv) : sim::Distribution::deterministic(1.0);
}
sim::time_ns to_ns(double x) { return static_cast<sim::time_ns>(x + 0.5); }
}  // namespace

// Defaults per kind. [I]: typical datasheet figures, to be replaced by calibration. NVMe: a
// data-centre TLC drive, ~80 us 4 KiB random read at QD1 (docs/sources.md §7: 10 us for Optane to
// ~17 us consumer writes into SLC cache), ~3.2 GB/s, enough channels for ~400k read IOPS.
// SATA SSD: ~100 us reads, 530 MB/s, NCQ 32. HDD: 7200 rpm, 8.5 ms seek, 180 MB/s, flush
// of the volatile write cache ~12 ms.
DeviceSpec device_spec(const BackendParams& p, BackendKind kind) {
  DeviceSpec d{};
  d.kind = kind;
  d.service_cv = p.service_cv;
  d.seek_ns = p.seek_ns;
  d.rotation_ns = 60e9 / p.rpm;
  d.ncq_depth = p.ncq_depth;
  switch (kind) {
    case BackendKind::nvme:
      d = {kind, 32, 80000, 20000, 20000, 3.2e9, p.service_cv, p.seek_ns, d.rotation_ns, p.ncq_depth};
      break;
    case BackendKind::sata_ssd:
      d = {kind, 8, 100000, 60000, 1500000, 530e6, p.service_cv, p.seek_ns, d.rotation_ns, p.ncq_depth};
      break;
    case BackendKind::hdd:
      d = {kind, 1, 100000, 100000, 12000000, 180e6, p.service_cv, p.seek_ns, d.rotation_ns, p.ncq_depth};
      break;
    default:
      d = {kind, 32, 80000, 20000, 20000, 3.2e9, p.service_cv, p.seek_ns, d.rotation_ns, p.ncq_depth};
      break;
  }
  // Explicit scenario values win, but only for the top-level device: a RAID1 leg takes the
  // scenario's device figures too (the legs are what the keys describe).
  if (p.channels > 0) d.channels = p.channels;
  if (p.read_ns >= 0) d.read_ns = p.read_ns;
  if (p.write_ns >= 0) d.write_ns = p.write_ns;
  if (p.flush_ns >= 0) d.flush_ns = p.flush_ns;
  if (p.bandwidth_bytes_per_s > 0) d.bandwidth_bytes_per_s = p.bandwidth_bytes_per_s;
  d.write_bandwidth_bytes_per_s = p.write_bandwidth_bytes_per_s > 0 ? p.write_bandwidth_bytes_per_s : 0;
  d.seq_overhead_ns = p.seq_overhead_ns;
  return d;
}

DeviceStation::DeviceStation(sim::Simulator& sim, std::string name, IoTable& io, DeviceSpec spec)
    : sim::FcfsStation(sim, std::move(name), spec.channels, sim::Distribution::deterministic(0)),
      io_(io),
      spec_(spec),
      factor_(unit_factor(spec.service_cv)),
      rotation_(sim::Distribution::uniform(0, spec.rotation_ns)) {}

double hdd_service_ns(const DeviceSpec& d, double bytes, Direction dir, bool random, double queued, bool next_queued,
                      double positioning_ns) {
  double ns = bytes / d.bandwidth_of(dir) * 1e9;
  if (random)
    ns += positioning_ns * std::pow(1.0 + std::max(0.0, queued), -0.4);
  else if (!next_queued)
    ns += d.seq_overhead_ns;
  return ns;
}

sim::time_ns DeviceStation::service_ns(sim::JobId job) {
  sim::JobId root = job;
  while (sim_.jobs()[root].parent != sim::kNoJob) root = sim_.jobs()[root].parent;
  const IoRequest& r = io_[root];
  const double extra_bytes = r.bytes > 4096 ? static_cast<double>(r.bytes - 4096) : 0.0;
  const double chunks = static_cast<double>(r.chunks);
  if (spec_.kind == BackendKind::hdd) {
    // One actuator ([I]); the queue the drive reorders is what waits here now.
    const double queued = std::min<double>(static_cast<double>(waiting()), spec_.ncq_depth - 1);
    const bool next_queued = waiting() > 0;
    const double positioning = r.sequential ? 0.0 : spec_.seek_ns * factor_.sample(rng_) + rotation_.sample(rng_);
    const double chunk_bytes = static_cast<double>(r.bytes) / chunks;
    double ns = hdd_service_ns(spec_, chunk_bytes, r.dir, !r.sequential, queued, next_queued, positioning);
    // Each later chunk of a bounce-buffered request (hba_chunks) is a command of its own, sent when
    // the one before has been copied: a drive with other commands queued serves those in the gap,
    // so a random request positions again for it; alone, or in a stream, the drive goes on where it
    // stopped. The actuator is held across the chunks here: the same time, without the interleaving.
    const bool repositions = !r.sequential && next_queued;
    for (std::uint32_t c = 1; c < r.chunks; ++c) {
      const double again = repositions ? spec_.seek_ns * factor_.sample(rng_) + rotation_.sample(rng_) : 0.0;
      ns += hdd_service_ns(spec_, chunk_bytes, r.dir, repositions, queued, next_queued, again);
    }
    return to_ns(ns);
  }
  // A large request is striped over the device's channels: alone it transfers at the whole
  // bandwidth; with k requests in service each gets about 1/k of it (fixed at its start). A
  // bounce-buffered request (hba_chunks) pays the command's latency once per chunk.
  const double base = r.dir == Direction::read ? spec_.read_ns : spec_.write_ns;
  const double share_bw = spec_.bandwidth_of(r.dir) / std::max(1, busy());
  return to_ns(base * chunks * factor_.sample(rng_) + extra_bytes / share_bw * 1e9);
}

BatchDevice::BatchDevice(sim::Simulator& sim, std::string name, IoTable& io, DeviceSpec spec, double batch_ns)
    : sim::Component(sim, std::move(name)), io_(io), spec_(spec), batch_ns_(batch_ns), factor_(unit_factor(spec.service_cv)) {}

double BatchDevice::serial_ns(const IoRequest& r) {
  const double extra_bytes = r.bytes > 4096 ? static_cast<double>(r.bytes - 4096) : 0.0;
  return batch_ns_ * static_cast<double>(r.chunks) * factor_.sample(rng_) + extra_bytes / spec_.bandwidth_of(r.dir) * 1e9;
}

void BatchDevice::accept(sim::JobId job, int) {
  const sim::time_ns now = sim_.now();
  flow_.arrive(now);
  queue_.push_back(Waiting{job, now});
  if (active_) return;
  // Idle: the request wakes the emulator, which then finds it (and whatever came meanwhile).
  active_ = true;
  busy_time_.set(now, 1.0);
  const IoRequest& r = io_[job];
  const double latency = r.dir == Direction::read ? spec_.read_ns : spec_.write_ns;
  sim_.schedule_in(to_ns(std::max(0.0, latency - batch_ns_) * factor_.sample(rng_)), this, kAwake);
}

void BatchDevice::serve_next() { sim_.schedule_in(to_ns(serial_ns(io_[queue_[queue_head_].job])), this, kServed); }

void BatchDevice::handle(std::uint32_t kind, std::uint64_t) {
  if (kind == kServed) done_.push_back(queue_[queue_head_++]);
  if (queue_head_ < queue_.size()) {
    serve_next();
    return;
  }
  // The queue is empty: the batch completes together, and the emulator sleeps until the next.
  const sim::time_ns now = sim_.now();
  queue_.clear();
  queue_head_ = 0;
  active_ = false;
  busy_time_.set(now, 0.0);
  batch_size_.add(static_cast<double>(done_.size()));
  ++batches_;
  std::vector<Waiting> done;
  done.swap(done_);
  for (const Waiting& w : done) {
    flow_.depart(now, now - w.arrival);
    io_[w.job].device_batch = batches_;
    out.send(w.job);
  }
}

void BatchDevice::reset_statistics(sim::time_ns now) {
  flow_.reset(now);
  busy_time_.reset(now);
  batch_size_.clear();
}

void BatchDevice::report(sim::Metrics& m, sim::time_ns now) const {
  sim::report_flow(m, name(), flow_, now);
  m.add(name() + ".utilization", busy_time_.mean(now));
  m.add(name() + ".batch_mean", batch_size_.count() ? batch_size_.mean() : 0.0);
}

CopyDelay::CopyDelay(sim::Simulator& sim, std::string name, IoTable& io, double per_4k_ns, double cv)
    : sim::DelayStation(sim, std::move(name), sim::Distribution::deterministic(0)),
      io_(io),
      per_4k_ns_(per_4k_ns),
      factor_(unit_factor(cv)) {}

sim::time_ns CopyDelay::delay_ns(sim::JobId job) {
  const double pages = std::max(1.0, static_cast<double>(io_[job].bytes) / 4096.0);
  return to_ns(per_4k_ns_ * pages * factor_.sample(rng_));
}

StallDelay::StallDelay(sim::Simulator& sim, std::string name, double ratio, double mean_ns)
    : sim::DelayStation(sim, std::move(name), sim::Distribution::deterministic(0)),
      ratio_(ratio),
      stall_(mean_ns > 0 ? sim::Distribution::exponential(mean_ns) : sim::Distribution::deterministic(0)) {}

sim::time_ns StallDelay::delay_ns(sim::JobId) {
  // Both draws always happen, so a changed ratio moves only the requests near the threshold
  // (common random numbers between calibration's neighbouring points).
  const double u = rng_.uniform01();
  const double stall = stall_.sample(rng_);
  return u < ratio_ ? to_ns(stall) : 0;
}

BarrierFlush::BarrierFlush(sim::Simulator& sim, std::string name, double rtt_ns)
    : sim::Component(sim, std::move(name)), rtt_ns_(rtt_ns) {}

void BarrierFlush::accept(sim::JobId job, int) {
  flow_.arrive(sim_.now());
  waiting_.push_back(Waiting{job, sim_.now()});
  try_start();
}

void BarrierFlush::try_start() {
  if (busy_ || waiting_.empty()) return;
  busy_ = true;
  barrier_passed_ = false;
  serving_.swap(waiting_);
  waiting_.clear();
  barrier_ = last_seq_;
  maybe_finish_barrier();
}

void BarrierFlush::write_done(std::uint64_t seq) {
  in_flight_.erase(seq);
  if (busy_) maybe_finish_barrier();
}

void BarrierFlush::maybe_finish_barrier() {
  if (barrier_passed_) return;
  if (!in_flight_.empty() && *in_flight_.begin() <= barrier_) return;
  barrier_passed_ = true;
  sim_.schedule_in(to_ns(rtt_ns_), this, 0, 0);
}

void BarrierFlush::handle(std::uint32_t, std::uint64_t) {
  const sim::time_ns now = sim_.now();
  busy_ = false;
  std::vector<Waiting> done;
  done.swap(serving_);
  try_start();
  for (const Waiting& w : done) {
    flow_.depart(now, now - w.arrival);
    out.send(w.job);
  }
}

NullDevice::NullDevice(sim::Simulator& sim, std::string name, IoTable& io, double latency_ns, double main_loop_timer_ns)
    : sim::LoopTimer(sim, std::move(name), sim::Distribution::deterministic(latency_ns),
                     static_cast<sim::time_ns>(main_loop_timer_ns + 0.5)),
      io_(io) {}

void NullDevice::wait_for(std::uint32_t vm, const sim::EventLoop& loop) {
  if (loops_.size() <= vm) loops_.resize(vm + 1, nullptr);
  loops_[vm] = &loop;
}

const sim::EventLoop* NullDevice::loop_of(sim::JobId job) {
  const std::uint32_t vm = io_[job].vm;
  return vm < loops_.size() ? loops_[vm] : nullptr;
}

Backend::Backend(sim::Simulator& sim, std::string prefix, const IoScenario& s, IoTable& io)
    : Stage(sim, prefix, "backend"), io_(io) {
  const auto named = [&](const std::string& station) { return prefix + station; };
  const BackendParams& p = s.backend;
  const CacheSemantics cache = cache_semantics(s);
  hits_pagecache_ = !cache.direct;
  flushes_ = cache.flush_after_write;
  auto to_router = [&](sim::Port& port) { sim::connect(port, *this, kDeviceDone); };
  switch (p.kind) {
    case BackendKind::nvme:
    case BackendKind::sata_ssd:
    case BackendKind::hdd: {
      if (batched(s)) {
        batched_ = &sim.make<BatchDevice>(named("device"), io, device_spec(p, p.kind), p.batch_ns);
        to_router(batched_->out);
        break;
      }
      auto& d = sim.make<DeviceStation>(named("device"), io, device_spec(p, p.kind));
      to_router(d.out);
      devices_.push_back(&d);
      break;
    }
    case BackendKind::md_raid1: {
      for (int leg = 0; leg < 2; ++leg) {
        auto& d = sim.make<DeviceStation>(named("raid1.leg" + std::to_string(leg)), io, device_spec(p, p.leg));
        to_router(d.out);
        devices_.push_back(&d);
      }
      mirror_ = &sim.make<sim::ForkJoin>(named("raid1.mirror"), 2);
      sim::connect(mirror_->branch[0], *devices_[0]);
      sim::connect(mirror_->branch[1], *devices_[1]);
      to_router(mirror_->out);
      break;
    }
    case BackendKind::ceph_rbd:
    case BackendKind::krbd: {
      // librbd: msgr_threads inside QEMU; krbd: the host kernel's client, one thread per core.
      const int threads = p.kind == BackendKind::ceph_rbd ? p.msgr_threads : std::max(1, s.host.cores > 0 ? s.host.cores : 8);
      msgr_ = &sim.make<sim::FcfsStation>(
          named(p.kind == BackendKind::ceph_rbd ? "rbd.msgr" : "krbd.client"), threads,
          p.msgr_ns > 0 ? sim::Distribution::lognormal_mean_cv(p.msgr_ns, s.host.cpu_cv) : sim::Distribution::deterministic(0));
      net_out_ = &sim.make<sim::DelayStation>(named("ceph.net_out"), sim::Distribution::deterministic(p.rtt_ns / 2));
      DeviceSpec osd = device_spec(p, BackendKind::nvme);
      osd.kind = BackendKind::ceph_rbd;
      osd.channels = p.osd_slots;
      osd.read_ns = p.osd_read_ns;
      osd.write_ns = p.osd_write_ns;
      auto& d = sim.make<DeviceStation>(named("ceph.osd"), io, osd);
      stall_ = &sim.make<StallDelay>(named("ceph.stall"), p.osd_stall_ratio, p.osd_stall_ns);
      net_back_ = &sim.make<sim::DelayStation>(named("ceph.net_back"), sim::Distribution::deterministic(p.rtt_ns / 2));
      sim::connect(msgr_->out, *net_out_);
      sim::connect(net_out_->out, d);
      sim::connect(d.out, *stall_);
      sim::connect(stall_->out, *net_back_);
      to_router(net_back_->out);
      devices_.push_back(&d);
      break;
    }
    case BackendKind::pagecache: {
      cache_ = &sim.make<CopyDelay>(named("pagecache"), io, s.host.pagecache_ns, s.host.cpu_cv);
      to_router(cache_->out);
      break;
    }
    case BackendKind::null: {
      if (p.null_co && p.latency_ns > 0 && s.host.main_loop_timer_ns > 0) {
        null_timers_ = &sim.make<NullDevice>(named("null"), io, p.latency_ns, s.host.main_loop_timer_ns);
        to_router(null_timers_->out);
        fixed_ = null_timers_;
      } else {
        auto& d = sim.make<sim::DelayStation>(named("null"), sim::Distribution::deterministic(p.latency_ns));
        to_router(d.out);
        fixed_ = &d;
      }
      break;
    }
  }
  if (cache_ == nullptr) {
    cache_ = &sim.make<CopyDelay>(named("host.pagecache"), io, s.host.pagecache_ns, s.host.cpu_cv);
    to_router(cache_->out);
  }
  if (p.kind == BackendKind::ceph_rbd || p.kind == BackendKind::krbd) {
    barrier_ = &sim.make<BarrierFlush>(named("ceph.flush"), p.rtt_ns);
    sim::connect(barrier_->out, *this, kFlushDone);
  } else {
    double flush_ns = 0;
    if (!devices_.empty()) flush_ns = devices_.front()->spec().flush_ns;
    if (batched_ != nullptr) flush_ns = batched_->spec().flush_ns;
    flush_ =
        &sim.make<sim::BatchStation>(named("flush"), flush_ns > 0 ? sim::Distribution::lognormal_mean_cv(flush_ns, p.service_cv)
                                                                  : sim::Distribution::deterministic(0));
    sim::connect(flush_->out, *this, kFlushDone);
  }
  for (auto* d : devices_) stations_.push_back(d);
  for (sim::Component* c : std::initializer_list<sim::Component*>{batched_, mirror_, msgr_, net_out_, stall_, net_back_, fixed_,
                                                                  cache_, flush_, barrier_})
    if (c != nullptr) stations_.push_back(c);
}

void Backend::submit(sim::JobId job) {
  IoRequest& r = io_[job];
  if (msgr_ != nullptr) {
    if (r.dir == Direction::write) {
      r.seq = barrier_->next_seq();
      barrier_->write_issued(r.seq);
    }
    msgr_->accept(job, 0);
  } else if (mirror_ != nullptr) {
    if (r.dir == Direction::write) {
      mirror_->accept(job, sim::ForkJoin::kIn);
    } else {
      // md raid1 read balancing: the member with fewer requests outstanding.
      const auto load = [](const DeviceStation* d) { return d->busy() + static_cast<int>(d->waiting()); };
      DeviceStation* leg = load(devices_[1]) < load(devices_[0]) ? devices_[1] : devices_[0];
      leg->accept(job, 0);
    }
  } else if (fixed_ != nullptr) {
    fixed_->accept(job, 0);
  } else if (batched_ != nullptr) {
    batched_->accept(job, 0);
  } else if (devices_.empty()) {
    cache_->accept(job, 0);  // the page-cache backend
  } else {
    devices_.front()->accept(job, 0);
  }
}

void Backend::connected(const sim::Port& port) {
  if (barrier_ != nullptr) sim::connect(barrier_->out, *port.to, port.in_port);
  if (flush_ != nullptr) sim::connect(flush_->out, *port.to, port.in_port);
}

void Backend::accept(sim::JobId job, int in_port) {
  switch (static_cast<In>(in_port)) {
    case kSubmit:
      submit(job);
      break;
    case kPagecache:
      cache_->accept(job, 0);
      break;
    case kDeviceDone: {
      // Fork-join children go back to their join; only whole requests carry on.
      if (sim_.jobs()[job].parent != sim::kNoJob) {
        mirror_->accept(job, sim::ForkJoin::kJoin);
        break;
      }
      IoRequest& r = io_[job];
      if (barrier_ != nullptr && r.dir == Direction::write && !r.pagecache) barrier_->write_done(r.seq);
      if (r.needs_flush) {
        r.step = Step::flush;
        if (barrier_ != nullptr)
          barrier_->accept(job, 0);
        else
          flush_->accept(job, 0);
      } else {
        done.send(job);
      }
      break;
    }
    case kFlushDone:
      done.send(job);
      break;
  }
}

namespace {
// Servers of a backend station: an FCFS station's, one for the serialized flushes and a batched
// device, else none.
int capacity_of(const sim::Component* c) {
  const auto* fcfs = dynamic_cast<const sim::FcfsStation*>(c);
  return fcfs ? fcfs->servers() : (dynamic_cast<const sim::BatchStation*>(c) || dynamic_cast<const BatchDevice*>(c) ? 1 : 0);
}
}  // namespace

void Backend::stations(std::vector<StageInfo>& out) const {
  for (const sim::Component* c : stations_) out.push_back({c->name(), "backend", capacity_of(c)});
}

std::vector<std::string> Backend::device_entries() const {
  if (msgr_ != nullptr) return {msgr_->name()};
  if (mirror_ != nullptr) return {mirror_->name(), devices_[0]->name(), devices_[1]->name()};
  if (fixed_ != nullptr) return {fixed_->name()};
  if (batched_ != nullptr) return {batched_->name()};
  if (devices_.empty()) return {cache_->name()};  // the page-cache backend
  return {devices_.front()->name()};
}

std::vector<std::string> Backend::device_exits() const {
  std::vector<std::string> out = net_back_ != nullptr ? std::vector<std::string>{net_back_->name()} : device_entries();
  if (serves_hits()) out.push_back(cache_->name());
  return out;
}

void Backend::draw(StageGraph& g) const {
  for (const sim::Component* c : stations_) {
    // Where the data lives; the rest (mirror, messenger, network, stalls, flushes) are stations.
    const bool device =
        dynamic_cast<const DeviceStation*>(c) != nullptr || c == batched_ || c == fixed_ || (pagecache_backend() && c == cache_);
    g.nodes.push_back({c->name(), "backend", device ? "device" : "station", capacity_of(c)});
  }
  if (msgr_ != nullptr) {
    g.edges.push_back({msgr_->name(), net_out_->name(), "send"});
    g.edges.push_back({net_out_->name(), devices_.front()->name(), "op"});
    g.edges.push_back({devices_.front()->name(), stall_->name(), "served"});
    g.edges.push_back({stall_->name(), net_back_->name(), "reply"});
  } else if (mirror_ != nullptr) {
    for (const DeviceStation* leg : devices_) g.edges.push_back({mirror_->name(), leg->name(), "write (fork)"});
    for (const DeviceStation* leg : devices_) g.edges.push_back({leg->name(), mirror_->name(), "join"});
  }
  if (flushes_) {
    const std::string flush = barrier_ != nullptr ? barrier_->name() : flush_->name();
    for (const auto& x : device_exits()) g.edges.push_back({x, flush, "write: flush"});
  }
}

std::vector<PortEnd> Backend::entry(int in_port) const {
  std::vector<PortEnd> ends;
  if (in_port == kPagecache) {
    if (serves_hits()) ends.push_back({cache_->name(), ""});
    return ends;
  }
  for (const auto& e : device_entries()) ends.push_back({e, ""});
  return ends;
}

std::vector<PortEnd> Backend::exits(const sim::Port&) const {
  std::vector<PortEnd> ends;
  for (const auto& x : device_exits()) ends.push_back({x, "done"});
  if (flushes_) ends.push_back({barrier_ != nullptr ? barrier_->name() : flush_->name(), "flushed"});
  return ends;
}

namespace {
// What the VM keeps outstanding at the device: its requests in flight (every fio job's, when
// its job file has several: the MVA solves each job with the scenario's `jobs` beside it), and
// its I/Os in flight (the depth an HDD's NCQ sees).
struct Outstanding {
  double requests = 0, ios = 0;
};
Outstanding vm_outstanding(const IoScenario& s) {
  // I/Os completed but not yet reaped by fio (unreaped_ios) are not at the device.
  if (!s.multi_job())
    return {static_cast<double>(s.workload.numjobs) * (plug_merged_requests_per_job(s) - unreaped_ios(s.workload)),
            static_cast<double>(s.workload.numjobs) * (s.workload.effective_depth() - unreaped_ios(s.workload))};
  Outstanding o;
  for (const FioJob& j : s.jobs) {
    IoScenario one = s;  // plug merging is decided by the job's own pattern
    one.workload = j.workload;
    one.jobs.clear();
    o.requests += j.workload.numjobs * (plug_merged_requests_per_job(one) - unreaped_ios(j.workload));
    o.ios += j.workload.numjobs * (j.workload.effective_depth() - unreaped_ios(j.workload));
  }
  return o;
}

// Mean device time of one request of the workload's mix on `d`.
double device_mean_ns(const DeviceSpec& d, const IoScenario& s) {
  const auto& w = s.workload;
  const Outstanding vm = vm_outstanding(s);
  auto one = [&](Direction dir) {
    const double bytes = static_cast<double>(dir == Direction::read ? w.bs_read_bytes : w.bs_write_bytes);
    const int chunks = hba_chunks(hba_bounce_bytes(s), bytes);  // as the DES's DeviceStation
    if (d.kind == BackendKind::hdd) {
      // NCQ shortens positioning with the queue; the MVA assumes the drive sees every
      // outstanding request queued, which is right when it is the bottleneck.
      const double queued = std::min<double>(vm.ios - 1, d.ncq_depth - 1);
      const double positioning = d.seek_ns + d.rotation_ns / 2;
      const double chunk = bytes / chunks;
      return hdd_service_ns(d, chunk, dir, w.random, queued, queued >= 1, positioning) +
             (chunks - 1) * hdd_service_ns(d, chunk, dir, w.random && queued >= 1, queued, queued >= 1, positioning);
    }
    // Transfer at bandwidth / (requests in service), taking the device as busy with as many as
    // the VM keeps outstanding (up to its channels): exact when it is the bottleneck, and when
    // alone. A job of a VM of several shares the bandwidth with the other jobs' requests too.
    const double sharing = std::clamp(vm.requests, 1.0, static_cast<double>(d.channels));
    const double base = dir == Direction::read ? d.read_ns : d.write_ns;
    return base * chunks + std::max(0.0, bytes - 4096) / (d.bandwidth_of(dir) / sharing) * 1e9;
  };
  return w.read_fraction * one(Direction::read) + (1 - w.read_fraction) * one(Direction::write);
}
}  // namespace

void backend_demands(const MvaInputs& in, std::vector<MvaDemand>& st) {
  const std::size_t first = st.size();
  const IoScenario& s = in.s;
  const auto& w = s.workload;
  const double wf = 1 - w.read_fraction;
  const double to_cache = pagecache_share(s);  // share of I/Os served by the host page cache
  if (to_cache > 0 || s.backend.kind == BackendKind::pagecache) {
    const double share = s.backend.kind == BackendKind::pagecache ? 1.0 : to_cache;
    const double pages = std::max(1.0, w.mean_bytes() / 4096);
    st.push_back({"host.pagecache", sim::MvaStationKind::Delay, 1, share * s.host.pagecache_ns * pages});
  }
  const double dev_share = s.backend.kind == BackendKind::pagecache ? 0.0 : 1 - to_cache;
  const BackendParams& p = s.backend;
  double flush_ns = 0;
  switch (p.kind) {
    case BackendKind::nvme:
    case BackendKind::sata_ssd:
    case BackendKind::hdd: {
      const DeviceSpec d = device_spec(p, p.kind);
      flush_ns = d.flush_ns;
      if (batched(s)) {
        // A batched device (BatchDevice): each request waits for the one server's serial part
        // (its batch_us and bytes), and for the busy period it is in to end: its wake-up and the
        // others' serial parts (the batch at the fixed point's current rate).
        const BatchTimes b = batch_times(s);
        const double vms = std::max(1, s.vms);
        const double rate = in.x_fio_thread_per_ns * s.fio_threads() * vms;
        const double batch = device_batch_size(s, rate, vm_outstanding(s).requests * vms);
        st.push_back({"device", sim::MvaStationKind::Queue, 1, dev_share * b.serial_ns});
        st.push_back({"device.wake", sim::MvaStationKind::Delay, 1, dev_share * (b.wake_ns + (batch - 1) * b.serial_ns)});
        break;
      }
      st.push_back({"device", d.channels > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, d.channels,
                    dev_share * device_mean_ns(d, s)});
      break;
    }
    case BackendKind::md_raid1: {
      const DeviceSpec d = device_spec(p, p.leg);
      IoScenario reads = s, writes = s;
      reads.workload.read_fraction = 1;
      writes.workload.read_fraction = 0;
      const double per_leg = dev_share * (w.read_fraction * device_mean_ns(d, reads) / 2 + wf * device_mean_ns(d, writes));
      for (int leg = 0; leg < 2; ++leg)
        st.push_back({"raid1.leg" + std::to_string(leg),
                      d.channels > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, d.channels, per_leg});
      flush_ns = d.flush_ns;
      break;
    }
    case BackendKind::ceph_rbd:
    case BackendKind::krbd: {
      const int threads = p.kind == BackendKind::ceph_rbd ? p.msgr_threads : std::max(1, s.host.cores > 0 ? s.host.cores : 8);
      st.push_back({p.kind == BackendKind::ceph_rbd ? "rbd.msgr" : "krbd.client",
                    threads > 1 ? sim::MvaStationKind::MultiServer : sim::MvaStationKind::Queue, threads, dev_share * p.msgr_ns});
      st.push_back({"ceph.net", sim::MvaStationKind::Delay, 1, dev_share * p.rtt_ns});
      const double bytes = w.mean_bytes();
      const double osd =
          w.read_fraction * p.osd_read_ns + wf * p.osd_write_ns + std::max(0.0, bytes - 4096) / (3.2e9 / p.osd_slots) * 1e9;
      st.push_back({"ceph.osd", sim::MvaStationKind::MultiServer, p.osd_slots, dev_share * osd});
      const double stall_ns = p.osd_stall_ratio * p.osd_stall_ns;
      st.push_back({"ceph.stall", sim::MvaStationKind::Delay, 1, dev_share * stall_ns});
      flush_ns = p.osd_write_ns + p.rtt_ns + stall_ns;  // a barrier waits about one write's time
      break;
    }
    case BackendKind::pagecache:
      break;
    case BackendKind::null: {
      // QEMU's null-co behind the main loop: the latency ends when the loop next runs its timers
      // (NullDevice). A loop asleep (p_wake) when the timer expires wakes at the latency rounded
      // up to whole granules, or sooner for another request's kick or completion: the others'
      // events reach the loop at about 2 x (n - 1) / n of its request rate, so the wait past the
      // deadline is the rounding gap cut short by the first of them, (1 - e^(-r gap)) / r. An
      // approximation (the simulation has the mechanism; `vqsim run --compare-mva` shows both).
      double delay = p.latency_ns;
      const double g = s.host.main_loop_timer_ns;
      if (p.null_co && p.latency_ns > 0 && g > 0 && s.host.iothreads == 0 && driver_costs(s).uses_qemu_thread) {
        const double in_flight = std::max(1.0, static_cast<double>(w.effective_depth()) * w.numjobs);
        const double gap = g * std::ceil(p.latency_ns / g) - p.latency_ns;
        const double r = 2 * in.x_thread_per_ns * (in_flight - 1) / in_flight;
        const double wait = r * gap > 1e-9 ? (1 - std::exp(-r * gap)) / r : gap;
        delay += (in_flight > 1 ? in.p_wake : 1.0) * wait;
      }
      st.push_back({"null", sim::MvaStationKind::Delay, 1, delay});
      break;
    }
  }
  if (cache_semantics(s).flush_after_write && wf > 0 && flush_ns > 0)
    st.push_back({"flush", sim::MvaStationKind::Delay, 1, wf * flush_ns});
  for (std::size_t k = first; k < st.size(); ++k) st[k].shared = true;  // every VM's disk is on this backend
}

bool batched(const IoScenario& s) {
  return s.backend.batched && (s.backend.kind == BackendKind::nvme || s.backend.kind == BackendKind::sata_ssd);
}

BatchTimes batch_times(const IoScenario& s) {
  DeviceSpec d = device_spec(s.backend, s.backend.kind);
  d.channels = 1;  // one request at a time: each at the whole bandwidth
  const double latency = device_mean_ns(d, s);
  d.read_ns = d.write_ns = s.backend.batch_ns;
  BatchTimes b;
  b.serial_ns = device_mean_ns(d, s);
  b.wake_ns = std::max(0.0, latency - b.serial_ns);
  return b;
}

double device_batch_size(const IoScenario& s, double requests_per_ns, double in_flight) {
  if (!batched(s) || !(requests_per_ns > 0)) return 1.0;
  // A busy period begins with the wake-up, which those arriving meanwhile join, and each
  // request served lets in those arriving during it: B = (1 + x wake) / (1 - x serial) for
  // arrivals at rate x (an M/G/1 busy period's count, started by the wake-up's arrivals too);
  // never more than the requests in flight (all of them once the device is saturated).
  const BatchTimes b = batch_times(s);
  const double cap = std::max(1.0, in_flight);
  const double room = 1.0 - requests_per_ns * b.serial_ns;
  if (room <= 0) return cap;
  return std::clamp((1.0 + requests_per_ns * b.wake_ns) / room, 1.0, cap);
}

// The device a backend key describes: an md RAID1's legs, else the backend itself.
namespace {
DeviceSpec device_of(const IoScenario& s) {
  const BackendKind k = s.backend.kind == BackendKind::md_raid1 ? s.backend.leg : s.backend.kind;
  return device_spec(s.backend, k);
}

}  // namespace

// The scenario keys of the backend and the host page cache (models/param.h: how a key is declared).
void backend_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  const std::vector<std::string> kinds{"nvme", "sata-ssd", "hdd", "md-raid1", "ceph-rbd", "krbd", "pagecache", "null"};
  const std::vector<BackendKind> kind_values{BackendKind::nvme,      BackendKind::sata_ssd, BackendKind::hdd,
                                             BackendKind::md_raid1,  BackendKind::ceph_rbd, BackendKind::krbd,
                                             BackendKind::pagecache, BackendKind::null};
  add({"host.pagecache_us",
       Kind::time_us,
       "us",
       "1.5",
       "[I] memcpy of 4 KiB + syscall",
       "host page-cache access per 4 KiB",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.pagecache_ns = v.number; },
       [](const IoScenario& s) { return s.host.pagecache_ns / s.host.cpu_scale / 1e3; }});
  add({"backend.kind", Kind::choice, "", "nvme", "docs/sources.md §7", "the device behind the disk", kinds, 0, 0,
       [kinds, kind_values](IoScenario& s, const Value& v) { s.backend.kind = pick(kinds, kind_values, v.word); }});
  add({"backend.latency_us",
       Kind::time_us,
       "us",
       "10",
       "",
       "null device: fixed latency",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.latency_ns = v.number; },
       [](const IoScenario& s) { return s.backend.latency_ns / 1e3; }});
  add({"backend.null_co",
       Kind::boolean,
       "",
       "false",
       "QEMU block/null.c null_co_common (qemu_co_sleep_ns); docs/sources.md §4",
       "the null device is QEMU's null-co driver: its latency (latency-ns) is a timer of the disk's event loop, which the "
       "main loop runs at host.main_loop_timer_us granularity (an IOThread in ns)",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.backend.null_co = v.flag; }});
  add({"backend.channels",
       Kind::integer,
       "",
       "by kind",
       "[I]",
       "requests the device serves in parallel (nvme 32, sata-ssd 8)",
       {},
       1,
       1 << 20,
       [](IoScenario& s, const Value& v) { s.backend.channels = static_cast<int>(v.number); }});
  add({"backend.batched",
       Kind::boolean,
       "",
       "false",
       "docs/sources.md §7 (a host that is itself a VM: its virtual disk completes in batches)",
       "nvme, sata-ssd: woken by a request, the device serves the requests one after another (the first done "
       "read_us / write_us after it arrived, each other batch_us after the one before), taking in those that arrive "
       "meanwhile, and completes them together when its queue is empty: a virtual disk whose emulator pops its ring "
       "until it is empty and then signals once (false: channels in parallel)",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.backend.batched = v.flag; }});
  add({"backend.batch_us",
       Kind::time_us,
       "us",
       "6",
       "docs/sources.md §7 (a host that is a VM: its 4 KiB random read at QD16 less its QD1 latency, over 15)",
       "backend.batched: device time of each request of a batch after the first",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.batch_ns = v.number; },
       [](const IoScenario& s) { return s.backend.batch_ns / 1e3; }});
  add({"backend.read_us",
       Kind::time_us,
       "us",
       "by kind",
       "docs/sources.md §7 (NVMe QD1 10-17 us ... TLC ~80 us)",
       "device time of a 4 KiB read (nvme 80, sata-ssd 100)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.read_ns = v.number; },
       [](const IoScenario& s) { return device_of(s).read_ns / 1e3; }});
  add({"backend.write_us",
       Kind::time_us,
       "us",
       "by kind",
       "[I]",
       "device time of a 4 KiB write (nvme 20, sata-ssd 60)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.write_ns = v.number; },
       [](const IoScenario& s) { return device_of(s).write_ns / 1e3; }});
  add({"backend.flush_us",
       Kind::time_us,
       "us",
       "by kind",
       "[I]",
       "device cache flush (nvme 20, sata-ssd 1500, hdd 12000)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.flush_ns = v.number; },
       [](const IoScenario& s) { return device_of(s).flush_ns / 1e3; }});
  add({"backend.bandwidth",
       Kind::rate,
       "bytes/s",
       "by kind",
       "[I]",
       "sequential bandwidth of the device (nvme 3.2GB, sata-ssd 530MB, hdd 180MB)",
       {},
       1,
       1e15,
       [](IoScenario& s, const Value& v) { s.backend.bandwidth_bytes_per_s = v.number; },
       [](const IoScenario& s) { return device_of(s).bandwidth_bytes_per_s; }});
  add({"backend.write_bandwidth",
       Kind::rate,
       "bytes/s",
       "= bandwidth",
       "[I] flash writes sequentially slower than it reads",
       "sequential bandwidth of writes when it differs from reads",
       {},
       1,
       1e15,
       [](IoScenario& s, const Value& v) { s.backend.write_bandwidth_bytes_per_s = v.number; },
       [](const IoScenario& s) { return device_of(s).bandwidth_of(models::Direction::write); }});
  add({"backend.service_cv",
       Kind::real,
       "",
       "0.3",
       "[I]",
       "coefficient of variation of device times (lognormal)",
       {},
       0,
       10,
       [](IoScenario& s, const Value& v) { s.backend.service_cv = v.number; },
       [](const IoScenario& s) { return s.backend.service_cv; }});
  add({"backend.seek_ms",
       Kind::time_ms,
       "ms",
       "8.5",
       "[I] 7200 rpm datasheets",
       "HDD average random seek",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.seek_ns = v.number; },
       [](const IoScenario& s) { return s.backend.seek_ns / 1e6; }});
  add({"backend.seq_overhead_us",
       Kind::time_us,
       "us",
       "20",
       "[I] command overhead and track switches",
       "HDD time per sequential request besides the transfer, paid only when no next command is queued (pipelining hides it at "
       "depth)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.seq_overhead_ns = v.number; },
       [](const IoScenario& s) { return s.backend.seq_overhead_ns / 1e3; }});
  add({"backend.rpm",
       Kind::real,
       "rpm",
       "7200",
       "",
       "HDD spindle speed (half a turn of rotational latency on average)",
       {},
       1000,
       30000,
       [](IoScenario& s, const Value& v) { s.backend.rpm = v.number; }});
  add({"backend.ncq_depth",
       Kind::integer,
       "",
       "32",
       "SATA NCQ",
       "HDD commands the drive reorders",
       {},
       1,
       256,
       [](IoScenario& s, const Value& v) { s.backend.ncq_depth = static_cast<int>(v.number); }});
  add({"backend.leg",
       Kind::choice,
       "",
       "sata-ssd",
       "",
       "md-raid1: the kind of each of the two members",
       {"nvme", "sata-ssd", "hdd"},
       0,
       0,
       [kinds, kind_values](IoScenario& s, const Value& v) { s.backend.leg = pick(kinds, kind_values, v.word); }});
  add({"backend.rtt_us",
       Kind::time_us,
       "us",
       "200",
       "[I] 10 GbE round trip + messenger",
       "Ceph: client-OSD network round trip",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.rtt_ns = v.number; },
       [](const IoScenario& s) { return s.backend.rtt_ns / 1e3; }});
  add({"backend.osd_slots",
       Kind::integer,
       "",
       "32",
       "[I]",
       "Ceph: operations the OSDs serve in parallel (cluster-wide)",
       {},
       1,
       1 << 20,
       [](IoScenario& s, const Value& v) { s.backend.osd_slots = static_cast<int>(v.number); }});
  add({"backend.osd_read_us",
       Kind::time_us,
       "us",
       "1000",
       "[I] HDD-backed OSD",
       "Ceph: OSD service of a read",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.osd_read_ns = v.number; },
       [](const IoScenario& s) { return s.backend.osd_read_ns / 1e3; }});
  add({"backend.osd_write_us",
       Kind::time_us,
       "us",
       "2000",
       "[I] journal write + replication",
       "Ceph: OSD service of a replicated write",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.osd_write_ns = v.number; },
       [](const IoScenario& s) { return s.backend.osd_write_ns / 1e3; }});
  add({"backend.osd_stall_ratio",
       Kind::real,
       "",
       "0.0001",
       "[I] FileStore syncs, slow requests",
       "Ceph: share of operations that stall after the OSD has served them (the slot is free; the reply waits)",
       {},
       0,
       1,
       [](IoScenario& s, const Value& v) { s.backend.osd_stall_ratio = v.number; },
       [](const IoScenario& s) { return s.backend.osd_stall_ratio; }});
  add({"backend.osd_stall_ms",
       Kind::time_ms,
       "ms",
       "100",
       "[I] FileStore syncs, slow requests",
       "Ceph: mean length of such a stall (exponential); it gives Ceph its long latency tail",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.osd_stall_ns = v.number; },
       [](const IoScenario& s) { return s.backend.osd_stall_ns / 1e6; }});
  add({"backend.msgr_threads",
       Kind::integer,
       "",
       "1",
       "[I] docs/sources.md §7 (librbd messenger threads inside QEMU)",
       "Ceph librbd messenger threads",
       {},
       1,
       1024,
       [](IoScenario& s, const Value& v) { s.backend.msgr_threads = static_cast<int>(v.number); }});
  add({"backend.msgr_us",
       Kind::time_us,
       "us",
       "15",
       "[I]",
       "Ceph client CPU per op (librbd in QEMU, or krbd in the host kernel)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.backend.msgr_ns = v.number; },
       [](const IoScenario& s) { return s.backend.msgr_ns / s.host.cpu_scale / 1e3; }});
  add({"backend.replicas",
       Kind::integer,
       "",
       "3",
       "Ceph pool size default",
       "recorded; osd_write_us includes replication",
       {},
       1,
       16,
       [](IoScenario& s, const Value& v) { s.backend.replicas = static_cast<int>(v.number); },
       {},
       true});
  t.push_back(recorded_key("backend.model", Kind::text, "the device as the source names it"));
  t.push_back(recorded_key("backend.image_format", Kind::text, "VM image format (raw, qcow2)"));
  t.push_back(recorded_key("backend.volume", Kind::text, "what holds the image (lvm, file)"));
  t.push_back(recorded_key("backend.vhost_backstore", Kind::text, "LIO backstore behind vhost-scsi (iblock, pscsi)"));
  t.push_back(recorded_key("backend.vhost_emulate_write_cache", Kind::boolean, "LIO emulate_write_cache attribute"));
}

}  // namespace vqsim::models
