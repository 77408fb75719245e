// A pool of tokens: a limit on how many jobs may be inside a region at once (an outstanding-
// request limit, ring slots, a worker pool). A job asks on port kAcquire and waits, FIFO,
// until a token is free, then leaves through `acquired`. When it leaves the region it returns
// its token on port kRelease and carries on through `released`; a returned token goes straight
// to the longest-waiting job.
//
// Flow statistics cover the whole stay: from asking for a token to giving it back.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/fifo.h"
#include "sim/simulator.h"

namespace vqsim::sim {

class TokenPool final : public Component {
 public:
  static constexpr int kAcquire = 0;
  static constexpr int kRelease = 1;

  TokenPool(Simulator& sim, std::string name, int tokens);

  Port acquired;  // jobs that got a token
  Port released;  // jobs that gave theirs back

  void accept(JobId job, int in_port) override;
  void validate() const override;
  void reset_statistics(time_ns now) override;
  void report(Metrics& m, time_ns now) const override;
  const FlowStats* flow() const noexcept override { return &stats_.flow; }

  int tokens() const noexcept { return tokens_; }
  int available() const noexcept { return available_; }
  std::size_t waiting() const noexcept { return waiting_.size(); }

 private:
  void grant(JobId job, time_ns asked_at);

  int tokens_;
  int available_;
  Fifo<JobId> waiting_;
  std::vector<time_ns> asked_at_;  // by JobId: when the job asked for its token
  WaitingLineStats stats_;
};

}  // namespace vqsim::sim
