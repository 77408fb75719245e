#include "sim/loop_timer.h"

#include <algorithm>

namespace vqsim::sim {

LoopTimer::LoopTimer(Simulator& sim, std::string name, Distribution delay, time_ns granularity_ns)
    : Component(sim, std::move(name)), delay_(std::move(delay)), granularity_ns_(std::max<time_ns>(0, granularity_ns)) {}

std::uint32_t LoopTimer::index_of(const EventLoop* loop) {
  for (std::uint32_t i = 0; i < loops_.size(); ++i)
    if (loops_[i].loop == loop) return i;
  loops_.push_back(Loop{loop, {}, -1});
  return static_cast<std::uint32_t>(loops_.size() - 1);
}

void LoopTimer::accept(JobId job, int) {
  const time_ns now = sim_.now();
  flow_.arrive(now);
  const time_ns delay = delay_.sample_ns(rng_);
  const std::uint32_t i = index_of(granularity_ns_ > 0 ? loop_of(job) : nullptr);
  loops_[i].armed.push(Armed{now + delay, seq_++, job, now});
  sim_.schedule_in(delay, this, kDeadline, i);
}

void LoopTimer::handle(std::uint32_t kind, std::uint64_t payload) {
  const auto i = static_cast<std::uint32_t>(payload);
  if (kind == kWake && loops_[i].wake_at == sim_.now()) loops_[i].wake_at = -1;
  check(i);
}

void LoopTimer::loop_woke(const EventLoop& loop) {
  for (std::uint32_t i = 0; i < loops_.size(); ++i)
    if (loops_[i].loop == &loop) run_expired(i);
}

// The earliest timer has expired (or a wake-up came): one with no loop, or a running loop's, runs
// now; a sleeping loop's when the timeout it chose on falling asleep ends, that timer's deadline
// rounded up to whole granules from the start of the sleep (QEMU: aio_ctx_prepare's
// qemu_timeout_ns_to_ms), unless another event wakes it first (loop_woke).
void LoopTimer::check(std::uint32_t i) {
  Loop& l = loops_[i];
  const time_ns now = sim_.now();
  if (l.armed.empty() || l.armed.top().deadline > now) return;
  if (l.loop == nullptr || l.loop->loop_awake()) {
    run_expired(i);
    return;
  }
  const time_ns slept = l.loop->loop_asleep_since();
  const time_ns deadline = l.armed.top().deadline;
  time_ns wake = slept;
  if (deadline > slept) wake = slept + granularity_ns_ * ((deadline - slept + granularity_ns_ - 1) / granularity_ns_);
  if (wake <= now) {
    run_expired(i);
  } else if (l.wake_at != wake) {
    l.wake_at = wake;
    sim_.schedule_at(wake, this, kWake, i);
  }
}

// Every expired timer of the loop runs, in deadline order. They are taken out before any is
// sent on: a job sent may wake the loop again (loop_woke) before this returns.
void LoopTimer::run_expired(std::uint32_t i) {
  Loop& l = loops_[i];
  const time_ns now = sim_.now();
  std::vector<Armed> due;
  while (!l.armed.empty() && l.armed.top().deadline <= now) {
    due.push_back(l.armed.top());
    l.armed.pop();
  }
  for (const Armed& a : due) {
    flow_.depart(now, now - a.arrival);
    late_ns_.add(static_cast<double>(now - a.deadline));
    out.send(a.job);
  }
}

void LoopTimer::report(Metrics& m, time_ns now) const {
  report_flow(m, name(), flow_, now);
  if (late_ns_.count() > 0) m.add(name() + ".timer_late_mean_ns", late_ns_.mean());
}

}  // namespace vqsim::sim
