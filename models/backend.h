// Backend devices: where a request's data finally lives.
//   nvme, sata-ssd  `channels` requests in service at once; a 4 KiB read or write takes
//                   read_us / write_us (lognormal, service_cv), larger requests add their extra
//                   bytes at bandwidth / (requests in service), so one large request gets the
//                   whole device and many in flight share its bandwidth.
//   hdd             one actuator; random requests pay a seek and half a turn, shortened by NCQ
//                   reordering as the queue grows (positioning * (1 + queued)^-0.4, capped at
//                   ncq_depth); sequential ones only the transfer.
//   md-raid1        two member devices (backend.leg): a read goes to the less busy member, a
//                   write to both (fork-join: done when the slower is).
//   ceph-rbd        librbd inside QEMU: messenger thread(s) -> network (rtt/2) -> OSDs
//                   (osd_slots in parallel; osd_write_us includes replication) -> stall ->
//                   network. A few ops (osd_stall_ratio) wait an exponential osd_stall_ms
//                   after the OSD has served them without holding its slot: FileStore syncs,
//                   a slow replica, PG peering. These make Ceph's p99 many times its median,
//                   and a writethrough barrier waits for every stalled write before it.
//   krbd            the same cluster through the host kernel client (a kernel thread per core
//                   instead of librbd's messenger threads).
//   batched device  nvme or sata-ssd with backend.batched: woken by a request (read_us /
//                   write_us less batch_us), the device serves the requests one after another at
//                   batch_us each (plus the bytes beyond 4 KiB at bandwidth), taking in those that
//                   arrive meanwhile, and completes them together when its queue is empty: a
//                   virtual disk whose emulator pops its ring until empty and then signals once
//                   (a host that is itself a VM).
//   pagecache       host memory: a copy per 4 KiB.
//   null            a fixed latency, no queueing.
// Flushes: a device cache flush (flush_us) on local devices, serialized; for Ceph a flush is a
// barrier — it completes when every write issued before it has, plus a round trip.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/batch_station.h"
#include "sim/delay_station.h"
#include "sim/fcfs_station.h"
#include "sim/fork_join.h"
#include "sim/loop_timer.h"
#include "sim/simulator.h"

namespace vqsim::models {

// Resolved device figures for one device kind (defaults filled in).
struct DeviceSpec {
  BackendKind kind;
  int channels;
  double read_ns, write_ns, flush_ns, bandwidth_bytes_per_s, service_cv;
  double seek_ns, rotation_ns;  // hdd
  int ncq_depth;
  double write_bandwidth_bytes_per_s = 0;  // 0 = bandwidth_bytes_per_s
  double seq_overhead_ns = 20000;          // hdd: per sequential request
  double bandwidth_of(Direction d) const {
    return d == Direction::write && write_bandwidth_bytes_per_s > 0 ? write_bandwidth_bytes_per_s : bandwidth_bytes_per_s;
  }
};
DeviceSpec device_spec(const BackendParams& p, BackendKind kind);

// One HDD request's service time, the law the DES samples and the MVA takes the mean of: the
// transfer at media rate, plus for a random request its positioning (seek + rotation) shortened
// by NCQ reordering as the queue grows, (1 + queued)^-0.4 -- about 2.3x at 8 queued, in line with
// 7200 rpm drives' QD1 vs QD8 IOPS -- or, for a sequential one with no next command queued, the
// command overhead (with one queued the drive overlaps it with this transfer: NCQ pipelining).
double hdd_service_ns(const DeviceSpec& d, double bytes, Direction dir, bool random, double queued, bool next_queued,
                      double positioning_ns);

// A device: FCFS with `channels` servers whose service time comes from the request.
class DeviceStation final : public sim::FcfsStation {
 public:
  DeviceStation(sim::Simulator& sim, std::string name, IoTable& io, DeviceSpec spec);
  const DeviceSpec& spec() const { return spec_; }

 protected:
  sim::time_ns service_ns(sim::JobId job) override;

 private:
  IoTable& io_;
  DeviceSpec spec_;
  sim::Distribution factor_;
  sim::Distribution rotation_;
};

// A batched device (backend.batched): one server that, woken from idle by a request, waits its
// wake-up (read_us / write_us less batch_us), serves every request it finds queued one after
// another (batch_us each, plus the bytes beyond 4 KiB at the bandwidth), taking in those that
// arrive meanwhile, and completes them all together when it finds the queue empty: a virtual
// disk whose emulator pops its ring until it is empty and then signals once.
class BatchDevice final : public sim::Component {
 public:
  BatchDevice(sim::Simulator& sim, std::string name, IoTable& io, DeviceSpec spec, double batch_ns);
  const DeviceSpec& spec() const { return spec_; }

  sim::Port out;
  void accept(sim::JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { sim::require_connected(*this, out, "out"); }
  void reset_statistics(sim::time_ns now) override;
  void report(sim::Metrics& m, sim::time_ns now) const override;
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

 private:
  enum Event : std::uint32_t { kAwake, kServed };
  struct Waiting {
    sim::JobId job;
    sim::time_ns arrival;
  };
  void serve_next();
  double serial_ns(const IoRequest& r);
  IoTable& io_;
  DeviceSpec spec_;
  double batch_ns_;
  sim::Distribution factor_;
  std::vector<Waiting> queue_, done_;  // queue_ from queue_head_ on: not yet served
  std::size_t queue_head_ = 0;
  bool active_ = false;        // waking or serving: a busy period is under way
  std::uint64_t batches_ = 0;  // busy periods completed (IoRequest::device_batch)
  sim::FlowStats flow_;
  sim::TimeAverage busy_time_;
  sim::Welford batch_size_;
};

// A delay whose length grows with the request size (page-cache copies).
class CopyDelay final : public sim::DelayStation {
 public:
  CopyDelay(sim::Simulator& sim, std::string name, IoTable& io, double per_4k_ns, double cv);

 protected:
  sim::time_ns delay_ns(sim::JobId job) override;

 private:
  IoTable& io_;
  double per_4k_ns_;
  sim::Distribution factor_;
};

// A delay that most requests pass at once and a few (`ratio`) wait an exponential time in.
class StallDelay final : public sim::DelayStation {
 public:
  StallDelay(sim::Simulator& sim, std::string name, double ratio, double mean_ns);

 protected:
  sim::time_ns delay_ns(sim::JobId job) override;

 private:
  double ratio_;
  sim::Distribution stall_;
};

// Ceph flush: serialized like QEMU's flushes, and each one waits until every write issued to the
// cluster before it started has completed, then one round trip.
class BarrierFlush final : public sim::Component {
 public:
  BarrierFlush(sim::Simulator& sim, std::string name, double rtt_ns);
  sim::Port out;
  void write_issued(std::uint64_t seq) { in_flight_.insert(seq); }
  void write_done(std::uint64_t seq);
  std::uint64_t next_seq() { return ++last_seq_; }

  void accept(sim::JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { sim::require_connected(*this, out, "out"); }
  void reset_statistics(sim::time_ns now) override { flow_.reset(now); }
  void report(sim::Metrics& m, sim::time_ns now) const override { sim::report_flow(m, name(), flow_, now); }
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

 private:
  struct Waiting {
    sim::JobId job;
    sim::time_ns arrival;
  };
  void try_start();
  void maybe_finish_barrier();
  double rtt_ns_;
  std::set<std::uint64_t> in_flight_;
  std::uint64_t last_seq_ = 0;
  std::vector<Waiting> waiting_, serving_;
  bool busy_ = false;  // a flush is in progress
  bool barrier_passed_ = false;
  std::uint64_t barrier_ = 0;  // writes up to this seq must complete
  sim::FlowStats flow_;
};

// QEMU's null-co with latency-ns: the request's coroutine sleeps on a timer of its disk's
// AioContext (block/null.c, null_co_common: qemu_co_sleep_ns), so its latency ends when that loop
// runs its timers. An IOThread waits in ns; the main loop in whole milliseconds, rounded up
// (host.main_loop_timer_us): a 100 us latency at QD1 takes a millisecond there. A request whose
// VM has no main loop registered (an IOThread serves it) is a plain delay.
class NullDevice final : public sim::LoopTimer {
 public:
  NullDevice(sim::Simulator& sim, std::string name, IoTable& io, double latency_ns, double main_loop_timer_ns);
  // The requests of VM `vm` (IoRequest::vm) wait for `loop`'s timers.
  void wait_for(std::uint32_t vm, const sim::EventLoop& loop);

 protected:
  const sim::EventLoop* loop_of(sim::JobId job) override;

 private:
  IoTable& io_;
  std::vector<const sim::EventLoop*> loops_;  // per VM index
};

// The stage: the backend as a whole, and the host page cache beside it. A request arrives on
// kSubmit (the device) or kPagecache (a page-cache hit, "host.pagecache"); a write that needs
// it is followed by a flush ("flush", or Ceph's barrier "ceph.flush"); done requests leave by
// `done`. Fork-join children (RAID1 legs) go back to their join inside the stage.
class Backend final : public Stage {
 public:
  enum In : int { kSubmit, kPagecache, kDeviceDone, kFlushDone };
  // `prefix`: "" for the first (or only) device, "<name>." for another [[backend]].
  Backend(sim::Simulator& sim, std::string prefix, const IoScenario& s, IoTable& io);

  sim::Port done;

  void accept(sim::JobId job, int in_port) override;
  void validate() const override { sim::require_connected(*this, done, "done"); }
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;
  void connected(const sim::Port& port) override;
  // A null device with a latency, whose timers wait for the loops that serve it; else null.
  NullDevice* null_timers() const noexcept { return null_timers_; }

 private:
  void submit(sim::JobId job);
  // The graph: where a request enters the device and where it leaves it.
  std::vector<std::string> device_entries() const;
  std::vector<std::string> device_exits() const;  // with the host page cache, when it serves hits
  // The backend is the page cache itself (backend.kind = "pagecache"): every request is a copy.
  bool pagecache_backend() const { return devices_.empty() && batched_ == nullptr && fixed_ == nullptr; }
  // "host.pagecache" serves the cache mode's hits beside a device.
  bool serves_hits() const { return hits_pagecache_ && !pagecache_backend(); }
  bool hits_pagecache_ = false;  // the cache mode can send requests to the host page cache
  bool flushes_ = false;         // the cache mode follows writes by a flush
  IoTable& io_;
  std::vector<DeviceStation*> devices_;  // one, or the two RAID1 legs, or the OSDs
  BatchDevice* batched_ = nullptr;       // the device, when it serves in batches (then devices_ is empty)
  sim::ForkJoin* mirror_ = nullptr;
  sim::FcfsStation* msgr_ = nullptr;
  sim::DelayStation* net_out_ = nullptr;
  sim::DelayStation* net_back_ = nullptr;
  StallDelay* stall_ = nullptr;
  sim::Component* fixed_ = nullptr;    // null device
  NullDevice* null_timers_ = nullptr;  // the null device, when its latency is a timer
  CopyDelay* cache_ = nullptr;         // host page cache hits
  sim::BatchStation* flush_ = nullptr;
  BarrierFlush* barrier_ = nullptr;
  std::vector<sim::Component*> stations_;
};

// A batched device (backend.batched on nvme or sata-ssd: BatchDevice) and its mean times per
// request of the workload's mix: the wake-up that starts a busy period (the QD1 latency less the
// serial part) and the serial part (batch_us and the bytes beyond 4 KiB).
bool batched(const IoScenario& s);
struct BatchTimes {
  double wake_ns = 0, serial_ns = 0;
};
BatchTimes batch_times(const IoScenario& s);
// The MVA's mean batch at `requests_per_ns` with `in_flight` requests outstanding (1 when the
// device is not batched): the completions that reach the host together.
double device_batch_size(const IoScenario& s, double requests_per_ns, double in_flight);

// The MVA's page cache, device and flush stations.
void backend_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of the backend and the host page cache.
void backend_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
