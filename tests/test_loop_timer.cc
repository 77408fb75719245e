// Timers of an event loop with a coarse timeout (sim/loop_timer.h): hand-timed sample paths for
// a sleeping loop (the timeout rounded up to whole granules from the start of the sleep), a loop
// woken early by an event of its own, a running loop, and a granularity of 0 (a plain delay).
#include <doctest/doctest.h>

#include <vector>

#include "sim/distribution.h"
#include "sim/loop_timer.h"
#include "sim/simulator.h"

using namespace vqsim::sim;

namespace {

// A loop whose state the test sets by hand.
class FakeLoop final : public EventLoop {
 public:
  bool awake = false;
  time_ns asleep_since = 0;
  bool loop_awake() const override { return awake; }
  time_ns loop_asleep_since() const override { return asleep_since; }
};

// Every job waits for `loop`, or for none (a fine-grained timer).
class Timers final : public LoopTimer {
 public:
  Timers(Simulator& sim, time_ns delay_ns, time_ns granularity_ns, const EventLoop* loop)
      : LoopTimer(sim, "timers", Distribution::deterministic(static_cast<double>(delay_ns)), granularity_ns), loop_(loop) {}

 protected:
  const EventLoop* loop_of(JobId) override { return loop_; }

 private:
  const EventLoop* loop_;
};

// Arms one timer at each given time; at each "wake" time, wakes the loop by an event of its own.
class Driver final : public Component {
 public:
  Driver(Simulator& sim, std::vector<time_ns> arms, std::vector<time_ns> wakes, FakeLoop* loop)
      : Component(sim, "driver"), arms_(std::move(arms)), wakes_(std::move(wakes)), loop_(loop) {}
  Port out;
  LoopTimer* timers = nullptr;
  void validate() const override { require_connected(*this, out, "out"); }
  void start() override {
    for (time_ns t : arms_) sim_.schedule_at(t, this, 0);
    for (time_ns t : wakes_) sim_.schedule_at(t, this, 1);
  }
  void handle(std::uint32_t kind, std::uint64_t) override {
    if (kind == 0) {
      out.send(sim_.jobs().allocate(sim_.now()));
    } else {
      timers->loop_woke(*loop_);
    }
  }

 private:
  std::vector<time_ns> arms_, wakes_;
  FakeLoop* loop_;
};

class Recorder final : public Component {
 public:
  explicit Recorder(Simulator& sim) : Component(sim, "rec") {}
  std::vector<time_ns> times;
  void accept(JobId job, int) override {
    times.push_back(sim_.now());
    sim_.jobs().release(job);
    sim_.count_completion();
  }
};

std::vector<time_ns> run(time_ns delay, time_ns granularity, std::vector<time_ns> arms, std::vector<time_ns> wakes,
                         FakeLoop* loop) {
  Simulator sim(1, 0);
  auto& drv = sim.make<Driver>(std::move(arms), std::move(wakes), loop);
  auto& timers = sim.make<Timers>(delay, granularity, loop);
  auto& rec = sim.make<Recorder>();
  drv.timers = &timers;
  connect(drv.out, timers);
  connect(timers.out, rec);
  sim.run(RunLimits{});
  return rec.times;
}

constexpr time_ns kUs = 1000, kMs = 1000 * kUs;

}  // namespace

TEST_CASE("loop timer: a sleeping loop runs a 100 us timer when its millisecond timeout ends") {
  FakeLoop loop;  // asleep since 0
  // Armed at 0 and at 2.5 ms (the loop asleep since 0 all along: its timeout counts from then).
  CHECK(run(100 * kUs, kMs, {0}, {}, &loop) == std::vector<time_ns>{kMs});
  loop.asleep_since = 2 * kMs + 500 * kUs;
  CHECK(run(100 * kUs, kMs, {loop.asleep_since}, {}, &loop) == std::vector<time_ns>{loop.asleep_since + kMs});
  // A latency of 1.2 ms rounds up to 2 ms.
  loop.asleep_since = 0;
  CHECK(run(1200 * kUs, kMs, {0}, {}, &loop) == std::vector<time_ns>{2 * kMs});
}

TEST_CASE("loop timer: an event that wakes the loop runs the timers that have expired, not the others") {
  FakeLoop loop;
  // Timers armed at 0 (deadline 100 us) and 250 us (deadline 350 us); the loop woken at 300 us
  // runs the first; the second waits for the timeout of the sleep that began at 0 (it is still
  // asleep in the fake), which is computed when it expires: 0 + ceil(350 us / 1 ms) = 1 ms.
  CHECK(run(100 * kUs, kMs, {0, 250 * kUs}, {300 * kUs}, &loop) == std::vector<time_ns>{300 * kUs, kMs});
}

TEST_CASE("loop timer: a running loop runs an expired timer at its deadline") {
  FakeLoop loop;
  loop.awake = true;
  CHECK(run(100 * kUs, kMs, {0, 50 * kUs}, {}, &loop) == std::vector<time_ns>{100 * kUs, 150 * kUs});
}

TEST_CASE("loop timer: granularity 0, or no loop to wait for, is a plain delay") {
  FakeLoop loop;
  CHECK(run(100 * kUs, 0, {0, 50 * kUs}, {}, &loop) == std::vector<time_ns>{100 * kUs, 150 * kUs});
  CHECK(run(100 * kUs, kMs, {0, 50 * kUs}, {}, nullptr) == std::vector<time_ns>{100 * kUs, 150 * kUs});
}
