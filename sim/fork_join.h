// Fork-join: a job arriving on kIn is split into one child per branch; the children travel
// their branches independently and come back on kJoin; when the last child is back the
// parent leaves through `out`. (A striped or mirrored request: done when all parts are.)
// Children are pool jobs of the parent's class; each branch must lead back to kJoin.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/simulator.h"

namespace vqsim::sim {

class ForkJoin final : public Component {
 public:
  static constexpr int kIn = 0;
  static constexpr int kJoin = 1;

  ForkJoin(Simulator& sim, std::string name, int branches);

  std::vector<Port> branch;  // one per branch
  Port out;

  void accept(JobId job, int in_port) override;
  void validate() const override;
  void reset_statistics(time_ns now) override { flow_.reset(now); }
  void report(Metrics& m, time_ns now) const override { report_flow(m, name(), flow_, now); }
  const FlowStats* flow() const noexcept override { return &flow_; }

 private:
  std::vector<time_ns> forked_at_;  // by parent JobId
  FlowStats flow_;
};

}  // namespace vqsim::sim
