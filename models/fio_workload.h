// fio in the guest: numjobs jobs, each a closed loop of `iodepth` requests in flight (psync and
// sync engines: one, whatever iodepth says), or an open loop with Poisson arrivals at rate_iops
// per job (fio's rate_process=poisson) still capped at iodepth in flight. Each I/O is a read
// with probability rwmixread/100. Latencies are measured as fio defines them:
//   slat  io_u prepared -> the submit call returned (includes waiting for a tag and for the vCPU)
//   clat  submit returned -> fio has reaped the completion
//   lat   slat + clat
// and recorded in fio's own histogram, so the percentiles are fio's.
//
// A job file of several jobs (IoScenario::jobs, one stonewall group of them) runs every job's
// threads side by side in the one guest, each job with its own parameters, random stream and
// figures (<vm>fio:<job>.read.iops, ...) beside the VM's (read.iops: every job together).
//
// The CPU work of each job's thread is the guest threads stage (guest_cpu.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
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
// The mean I/Os of one fio thread that have completed but wait in the kernel's ring for fio to
// reap them (workload.iodepth_batch_complete_min above 1, a closed loop): (min - 1) / 2.
double unreaped_ios(const WorkloadParams& w);

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
  // One fio job (section): its numjobs threads are threads [first, first + threads) of the VM
  // (r.job), so that every job's threads share the VM's vCPUs and queues by the same mapping.
  struct Job {
    const WorkloadParams* w = nullptr;
    std::string prefix;  // of its figures (vm + "fio:<name>."); "" for a scenario of one job
    std::uint32_t first = 0, threads = 0;
    int depth = 1;
    int merge_ios = 1;      // fio I/Os per request (plug merging), 1 = none
    std::uint8_t disk = 0;  // the VM's disk its I/Os go to (WorkloadParams::disk)
    sim::Distribution interarrival;
    sim::Rng* rng = nullptr;  // the first job draws from the stage's own stream (a one-job file's)
    std::array<DirectionRecord, 2> records;
  };
  void issue(std::uint32_t thread, std::uint32_t ios = 1);
  void issue_slots(std::uint32_t thread, int slots);  // in plug-merged groups
  void arrival(std::uint32_t thread);
  // Records the I/O's figures, its latency ending at `reaped_ns` (fio's completion timestamp), and
  // frees its slot.
  void complete(sim::JobId job, sim::time_ns reaped_ns);
  void report_records(sim::Metrics& m, const std::string& prefix, const std::array<DirectionRecord, 2>& records,
                      double seconds) const;

  const IoScenario& s_;
  std::uint32_t vm_index_;
  IoTable& io_;
  std::vector<Job> jobs_;
  std::vector<std::uint32_t> job_of_;  // per thread: its index in jobs_
  std::vector<sim::Rng> job_rngs_;     // the streams of the jobs after the first
  bool per_job_ = false;               // several jobs: each keeps its own figures too
  std::vector<int> outstanding_;       // per thread
  // Per thread: completions in the kernel's ring that fio has not reaped yet (it waits for
  // iodepth_batch_complete_min of them), and their I/Os.
  std::vector<std::vector<sim::JobId>> unreaped_;
  std::vector<int> unreaped_ios_;
  std::vector<std::uint64_t> backlog_;      // open loop: arrivals waiting for a free slot
  std::vector<std::uint64_t> next_offset_;  // sequential patterns: next block per thread
  std::array<DirectionRecord, 2> records_;  // every job's I/Os together: the VM's figures
  // A VM of several disks: each disk's I/Os (those of the jobs that drive it), its figures
  // under "<vm>disk:<name>.", and the IOThread each disk is pinned to (-1: the VM's mapping).
  std::vector<std::array<DirectionRecord, 2>> disk_records_;
  std::vector<int> disk_iothread_;
  sim::FlowStats flow_;
  sim::time_ns measure_start_ns_ = 0;
};

// The MVA's think-time delay (thinktime between a job's completions and its next issue).
void fio_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of fio in the guest.
void fio_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
