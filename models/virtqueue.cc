#include "models/virtqueue.h"

namespace vqsim::models {

InterruptLine::InterruptLine(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution latency)
    : sim::Component(sim, std::move(name)), io_(io), latency_(std::move(latency)) {}

void InterruptLine::accept(sim::JobId job, int) {
  const sim::time_ns now = sim_.now();
  flow_.arrive(now);
  ++completions_;
  io_[job].irq_leader = !pending_;
  waiting_.push_back(Waiting{job, now});
  if (!pending_) {
    pending_ = true;
    ++interrupts_;
    sim_.schedule_in(latency_.sample_ns(rng_), this, 0, 0);
  }
}

void InterruptLine::handle(std::uint32_t, std::uint64_t) {
  const sim::time_ns now = sim_.now();
  pending_ = false;
  delivering_.swap(waiting_);
  waiting_.clear();
  for (const Waiting& w : delivering_) {
    flow_.depart(now, now - w.arrival);
    out.send(w.job);
  }
  delivering_.clear();
}

void InterruptLine::reset_statistics(sim::time_ns now) {
  flow_.reset(now);
  interrupts_ = completions_ = 0;
}

void InterruptLine::report(sim::Metrics& m, sim::time_ns now) const {
  sim::report_flow(m, name(), flow_, now);
  m.add(name() + ".completions_per_interrupt",
        interrupts_ ? static_cast<double>(completions_) / static_cast<double>(interrupts_) : 0.0);
}

}  // namespace vqsim::models
