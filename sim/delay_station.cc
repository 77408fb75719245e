#include "sim/delay_station.h"

namespace vqsim::sim {

DelayStation::DelayStation(Simulator& sim, std::string name, Distribution delay)
    : Component(sim, std::move(name)), delay_(std::move(delay)) {}

time_ns DelayStation::delay_ns(JobId) { return delay_.sample_ns(rng_); }

void DelayStation::accept(JobId job, int) {
  const time_ns now = sim_.now();
  std::uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(Slot{job, now});
  } else {
    slot = free_.back();
    free_.pop_back();
    slots_[slot] = Slot{job, now};
  }
  flow_.arrive(now);
  sim_.schedule_in(delay_ns(job), this, 0, slot);
}

void DelayStation::handle(std::uint32_t, std::uint64_t payload) {
  const auto slot = static_cast<std::uint32_t>(payload);
  const Slot s = slots_[slot];
  free_.push_back(slot);
  flow_.depart(sim_.now(), sim_.now() - s.arrival);
  out.send(s.job);
}

}  // namespace vqsim::sim
