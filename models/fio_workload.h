// fio in the guest: numjobs jobs, each a closed loop of `iodepth` requests in flight (psync and
// sync engines: one, whatever iodepth says), or an open loop with Poisson arrivals at rate_iops
// per job (fio's rate_process=poisson) still capped at iodepth in flight. Each I/O is a read
// with probability rwmixread/100. Latencies are measured as fio defines them:
//   slat  io_u prepared -> the submit call returned (includes waiting for a tag and for the vCPU)
//   clat  submit returned -> fio has reaped the completion
//   lat   slat + clat
// and recorded in fio's own histogram, so the percentiles are fio's.
//
// The CPU work of each job's thread is the guest threads stage (guest_cpu.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/distribution.h"
#include "sim/fio_histogram.h"
#include "sim/simulator.h"

namespace vqsim::models {

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

// The first and last stage: issues requests on `submit`, takes them back reaped on kReaped.
class FioWorkload final : public Stage {
 public:
  enum In : int { kReaped };
  FioWorkload(sim::Simulator& sim, std::string vm, const IoScenario& scenario, IoTable& io, std::uint32_t vm_index = 0);

  sim::Port submit;  // new requests, to the guest block layer
  // A request whose completion fio has reaped.
  void accept(sim::JobId job, int in_port) override;

  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;

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
  void complete(sim::JobId job);

  const IoScenario& s_;
  std::uint32_t vm_index_;
  IoTable& io_;
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

// The MVA's think-time delay (thinktime between a job's completions and its next issue).
void fio_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of fio in the guest.
void fio_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
