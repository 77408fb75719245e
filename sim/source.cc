#include "sim/source.h"

#include <stdexcept>

namespace vqsim::sim {

Source::Source(Simulator& sim, std::string name, Distribution interarrival, std::uint32_t job_class)
    : Component(sim, std::move(name)), interarrival_(std::move(interarrival)), job_class_(job_class) {}

void Source::start() { sim_.schedule_in(interarrival_.sample_ns(rng_), this, 0); }

void Source::handle(std::uint32_t, std::uint64_t) {
  const JobId job = sim_.jobs().allocate(sim_.now(), job_class_);
  // Schedule the next arrival before sending: the send may run a long chain of zero-delay hops.
  sim_.schedule_in(interarrival_.sample_ns(rng_), this, 0);
  out.send(job);
}

Sink::Sink(Simulator& sim, std::string name) : Component(sim, std::move(name)) {}

void Sink::accept(JobId job, int) {
  response_.add(sim_.now() - sim_.jobs()[job].created_ns);
  sim_.jobs().release(job);
  sim_.count_completion();
}

void Sink::reset_statistics(time_ns now) {
  response_.clear();
  window_start_ = now;
}

void Sink::report(Metrics& m, time_ns now) const {
  static constexpr double kPercentiles[] = {50.0, 99.0};
  const auto p = response_.histogram().percentiles_ns(kPercentiles);
  const time_ns span = now - window_start_;
  const auto n = static_cast<double>(response_.moments().count());
  m.add(name() + ".throughput_per_s", span > 0 ? n * 1e9 / static_cast<double>(span) : 0.0);
  m.add(name() + ".response_mean_ns", response_.moments().mean());
  m.add(name() + ".response_stddev_ns", response_.moments().stddev());
  m.add(name() + ".response_p50_ns", static_cast<double>(p[0]));
  m.add(name() + ".response_p99_ns", static_cast<double>(p[1]));
  m.add(name() + ".completions", n);
}

ClosedLoop::ClosedLoop(Simulator& sim, std::string name, int population, std::uint32_t job_class)
    : Component(sim, std::move(name)), population_(population), job_class_(job_class) {
  if (population < 1) throw std::invalid_argument("closed loop '" + this->name() + "' needs a population of at least one");
}

void ClosedLoop::start() {
  for (int i = 0; i < population_; ++i) {
    const JobId job = sim_.jobs().allocate(sim_.now(), job_class_);
    flow_.arrive(sim_.now());
    out.send(job);
  }
}

void ClosedLoop::accept(JobId job, int) {
  const time_ns now = sim_.now();
  Job& j = sim_.jobs()[job];
  flow_.depart(now, now - j.created_ns);
  j.created_ns = now;
  sim_.count_completion();
  flow_.arrive(now);
  out.send(job);
}

}  // namespace vqsim::sim
