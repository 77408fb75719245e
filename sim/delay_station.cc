#include "sim/delay_station.h"

namespace vqsim::sim {

DelayStation::DelayStation(Simulator& sim, std::string name, Distribution delay)
    : Component(sim, std::move(name)), delay_(std::move(delay)) {}

time_ns DelayStation::delay_ns(JobId) { return delay_.sample_ns(rng_); }

// A delay below 2^32 ns (4.3 s: every delay of the I/O path) travels in the event itself, with
// the job: no slot to fill and free, so a visit touches only the station. Longer ones keep a slot.
void DelayStation::accept(JobId job, int) {
  const time_ns now = sim_.now();
  flow_.arrive(now);
  const time_ns delay = delay_ns(job);
  if (static_cast<std::uint64_t>(delay) < (std::uint64_t{1} << 32)) {
    sim_.schedule_in(delay, this, kInline, static_cast<std::uint64_t>(delay) << 32 | job);
    return;
  }
  std::uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(Slot{job, now});
  } else {
    slot = free_.back();
    free_.pop_back();
    slots_[slot] = Slot{job, now};
  }
  sim_.schedule_in(delay, this, kSlot, slot);
}

void DelayStation::handle(std::uint32_t kind, std::uint64_t payload) {
  const time_ns now = sim_.now();
  if (kind == kInline) {
    const auto job = static_cast<JobId>(payload & 0xffffffffu);
    flow_.depart(now, static_cast<time_ns>(payload >> 32));
    out.send(job);
    return;
  }
  const auto slot = static_cast<std::uint32_t>(payload);
  const Slot s = slots_[slot];
  free_.push_back(slot);
  flow_.depart(now, now - s.arrival);
  out.send(s.job);
}

}  // namespace vqsim::sim
