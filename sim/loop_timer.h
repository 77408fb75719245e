// Timers of an event loop that sleeps with a coarse timeout: each job is held for its delay, but
// an expired timer runs only when its loop looks at its timers — at once when the loop is
// running, else when the loop wakes: for another event (its owner calls loop_woke), or at the
// timeout it chose when it went to sleep, the earliest deadline rounded up to whole multiples of
// the granularity (a poll that counts in milliseconds). With a granularity of 0, or for a job
// whose loop_of is null, it is a plain delay station (its timers run at their deadlines).
//
// Cost per job: one event at its deadline, and one wake-up event per sleep that outlasts it.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/simulator.h"

namespace vqsim::sim {

// What a LoopTimer needs to know of the loop whose timers it holds.
class EventLoop {
 public:
  // Running, or about to run again without sleeping: it looks at its timers before it sleeps.
  virtual bool loop_awake() const = 0;
  // When it last went to sleep (meaningful while !loop_awake()).
  virtual time_ns loop_asleep_since() const = 0;

 protected:
  ~EventLoop() = default;
};

class LoopTimer : public Component {
 public:
  LoopTimer(Simulator& sim, std::string name, Distribution delay, time_ns granularity_ns);

  Port out;

  void accept(JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  // `loop` woke for an event of its own: the timers that have expired run now.
  void loop_woke(const EventLoop& loop);

  void validate() const override { require_connected(*this, out, "out"); }
  void reset_statistics(time_ns now) override {
    flow_.reset(now);
    late_ns_.clear();
  }
  void report(Metrics& m, time_ns now) const override;
  const FlowStats* flow() const noexcept override { return &flow_; }

 protected:
  // The loop whose timer holds `job`, or null: a timer with no loop to wait for (a fine-grained
  // one) runs at its deadline.
  virtual const EventLoop* loop_of(JobId job) = 0;

 private:
  enum Timer : std::uint32_t { kDeadline = 0, kWake = 1 };
  struct Armed {
    time_ns deadline;
    std::uint64_t seq;  // arming order: equal deadlines run in the order they were armed
    JobId job;
    time_ns arrival;
    bool operator>(const Armed& o) const noexcept { return deadline != o.deadline ? deadline > o.deadline : seq > o.seq; }
  };
  struct Loop {
    const EventLoop* loop;  // null: the timers that wait for no loop
    std::priority_queue<Armed, std::vector<Armed>, std::greater<>> armed;
    time_ns wake_at = -1;  // when the pending kWake event fires, -1: none
  };
  std::uint32_t index_of(const EventLoop* loop);
  void check(std::uint32_t loop);  // a deadline passed or a timeout ended: run or wait
  void run_expired(std::uint32_t loop);

  Distribution delay_;
  time_ns granularity_ns_;
  std::vector<Loop> loops_;
  std::uint64_t seq_ = 0;
  FlowStats flow_;
  Welford late_ns_;  // how long expired timers waited for their loop (0 for those with none)
};

}  // namespace vqsim::sim
