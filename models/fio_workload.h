// fio in the guest: numjobs jobs, each a closed loop of `iodepth` requests in flight (psync and
// sync engines: one, whatever iodepth says), or an open loop with Poisson arrivals at rate_iops
// per job (fio's rate_process=poisson) still capped at iodepth in flight. Each I/O is a read
// with probability rwmixread/100. Latencies are measured as fio defines them:
//   slat  io_u prepared -> the submit call returned (includes waiting for a tag and for the vCPU)
//   clat  submit returned -> fio has reaped the completion
//   lat   slat + clat
// and recorded in fio's own histogram, so the percentiles are fio's.
//
// The job's thread (FioThread) is a single server on its vCPU: submit work (fio, block layer,
// driver, the notify exit) and completion work (interrupt, driver, reap) of the same job take
// turns on it, which is what bounds a single fio job at high iodepth (seed 000: 94% guest CPU).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/io_request.h"
#include "sim/distribution.h"
#include "sim/fcfs_station.h"
#include "sim/fio_histogram.h"
#include "sim/simulator.h"

namespace vqsim::models {

// Decides whether a submit must notify the host (a VM exit) — see virtqueue.h.
class KickPolicy {
 public:
  virtual bool kick_needed(const IoRequest& r) const = 0;

 protected:
  ~KickPolicy() = default;
};

// What a request costs its fio job's vCPU, in ns.
struct GuestCpuCosts {
  double per_io_submit = 0;       // fio's own work, per fio I/O (a merged request pays it per I/O)
  double per_request_submit = 0;  // block layer + driver, per request
  double per_io_complete = 0;
  double per_request_complete = 0;
  double kick_exit = 0;    // the notify exit, when not suppressed
  double irq_handler = 0;  // one interrupt (entry, vring_interrupt, exit), charged to the
                           // completion that raised it; the others it delivers ride along
  double cv = 0;           // spread (lognormal) of every cost
};

// One fio job's thread on its vCPU.
class FioThread : public sim::FcfsStation {
 public:
  FioThread(sim::Simulator& sim, std::string name, IoTable& io, GuestCpuCosts costs, const KickPolicy* kick);

 protected:
  sim::time_ns service_ns(sim::JobId job) override;

 private:
  IoTable& io_;
  GuestCpuCosts c_;
  sim::Distribution factor_;  // unit-mean lognormal: the spread of CPU costs
  const KickPolicy* kick_;
};

// Where issued requests go and where completed ones come back from.
class RequestSink {
 public:
  virtual void start_request(sim::JobId job) = 0;

 protected:
  ~RequestSink() = default;
};

// Per-direction latency statistics, as fio keeps them.
struct LatencyRecord {
  sim::Welford stats;
  double min_ns = 0, max_ns = 0;
  sim::FioHistogram histogram;
  void add(double ns) {
    if (stats.count() == 0 || ns < min_ns) min_ns = ns;
    if (stats.count() == 0 || ns > max_ns) max_ns = ns;
    stats.add(ns);
    histogram.add(static_cast<std::uint64_t>(ns < 0 ? 0 : ns));
  }
  void clear() {
    stats.clear();
    histogram.clear();
    min_ns = max_ns = 0;
  }
};

struct DirectionRecord {
  std::uint64_t ios = 0, bytes = 0;
  LatencyRecord slat, clat, lat;
};

// How many virtqueues and IOThreads the workload's jobs reach, by the mapping FioWorkload uses
// (job j on vCPU j mod vcpus, vCPU v on queue v mod queues, queue q on IOThread q mod iothreads):
// IOThreads beyond `threads` get no request.
struct QueueReach {
  int queues = 1;
  int threads = 1;
};
QueueReach queue_reach(const IoScenario& s);

class FioWorkload : public sim::Component {
 public:
  FioWorkload(sim::Simulator& sim, std::string name, const IoScenario& scenario, IoTable& io);

  void set_sink(RequestSink* sink) { sink_ = sink; }
  // Called by the path when a request's completion has been reaped.
  void complete(sim::JobId job);

  void start() override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override;
  void reset_statistics(sim::time_ns now) override;
  void report(sim::Metrics& out, sim::time_ns now) const override;
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

  const DirectionRecord& record(Direction d) const { return records_[static_cast<int>(d)]; }

 private:
  enum Timer : std::uint32_t { kIssue = 0, kArrival = 1 };
  void issue(std::uint32_t job, std::uint32_t ios = 1);
  void issue_slots(std::uint32_t job, int slots);  // in plug-merged groups
  void arrival(std::uint32_t job);

  const IoScenario& s_;
  IoTable& io_;
  RequestSink* sink_ = nullptr;
  int depth_;
  int merge_ios_;                           // fio I/Os per request (plug merging), 1 = none
  std::vector<int> outstanding_;            // per job
  std::vector<std::uint64_t> backlog_;      // open loop: arrivals waiting for a free slot
  std::vector<std::uint64_t> next_offset_;  // sequential patterns: next block per job
  sim::Distribution interarrival_;
  std::array<DirectionRecord, 2> records_;
  sim::FlowStats flow_;
  sim::time_ns measure_start_ns_ = 0;
};

}  // namespace vqsim::models
