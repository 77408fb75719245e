// Infinite-server station (pure delay): every job is held for its own service time at once,
// with no waiting. Models think times, fixed latencies and wire delays.
// Cost per job: one event, which carries the job and its delay (a delay of 4.3 s or more takes a
// slot, recycled through a free list).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/simulator.h"

namespace vqsim::sim {

class DelayStation : public Component {
 public:
  DelayStation(Simulator& sim, std::string name, Distribution delay);

  Port out;

  void accept(JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { require_connected(*this, out, "out"); }
  void reset_statistics(time_ns now) override { flow_.reset(now); }
  void report(Metrics& m, time_ns now) const override { report_flow(m, name(), flow_, now); }
  const FlowStats* flow() const noexcept override { return &flow_; }

 protected:
  // The delay of `job`; by default a draw from the station's distribution. Models override it
  // to compute a delay from the job (e.g. a copy whose time grows with its size).
  virtual time_ns delay_ns(JobId job);

 private:
  enum Timer : std::uint32_t { kSlot = 0, kInline = 1 };
  struct Slot {
    JobId job;
    time_ns arrival;
  };
  Distribution delay_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  FlowStats flow_;
};

}  // namespace vqsim::sim
