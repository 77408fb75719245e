// Processor-sharing station with c servers (egalitarian PS): with n jobs present each is
// served at rate min(1, c / n). With c = 1 it is M/G/1-PS; with c = cores it is how an OS
// scheduler shares cores among runnable threads, which is why the same class is the CPU
// resource (CpuResource) that stations submit work to (see work.h).
//
// Implementation: a virtual clock V advances at the per-job rate; a job that arrives at V_a
// with demand d leaves when V reaches V_a + d. Tasks sit in a min-heap by finish V, and a
// single completion event is kept armed for the earliest; each arrival or departure cancels
// and re-arms it. Cost per arrival or departure: O(log n) plus one cancelled event.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/simulator.h"
#include "sim/work.h"

namespace vqsim::sim {

class ProcessorSharingStation : public Component {
 public:
  ProcessorSharingStation(Simulator& sim, std::string name, int servers, Distribution service = {});

  Port out;  // jobs that arrive through accept() leave here

  void accept(JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override;
  void reset_statistics(time_ns now) override;
  void report(Metrics& out, time_ns now) const override;
  const FlowStats* flow() const noexcept override { return &flow_; }

  // CPU-resource use: serve `demand_ns` of work for `client`, then call client->work_done(token).
  void submit_work(WorkClient* client, std::uint64_t token, double demand_ns);

  int servers() const noexcept { return servers_; }
  std::size_t present() const noexcept { return tasks_.size(); }

 private:
  struct Task {
    double finish_v;
    std::uint64_t seq;    // arrival order: ties leave FIFO
    WorkClient* client;   // nullptr: a job of our own, forwarded to `out`
    std::uint64_t token;  // the client's token, or the JobId
    time_ns arrival;
  };
  static bool later(const Task& a, const Task& b) noexcept {
    return a.finish_v > b.finish_v || (a.finish_v == b.finish_v && a.seq > b.seq);
  }
  double rate() const noexcept;
  void advance() noexcept;
  void add_task(WorkClient* client, std::uint64_t token, double demand_ns);
  void rearm();

  int servers_;
  Distribution service_;
  std::vector<Task> tasks_;  // min-heap on finish_v via `later`
  double virtual_ns_ = 0.0;
  time_ns virtual_at_ = 0;
  std::uint64_t next_task_seq_ = 0;
  EventId armed_ = 0;
  bool is_armed_ = false;
  FlowStats flow_;
  TimeAverage busy_;  // servers in use, min(n, c)
};

using CpuResource = ProcessorSharingStation;

}  // namespace vqsim::sim
