// The simulator: clock, pending events, job pool, components, and run control.
//
// Run control follows fio: a warm-up (like ramp_time) whose observations are discarded, then a
// measured window that ends after a simulated time or a number of completions, whichever
// comes first. Completions are counted by the components that finish jobs (sinks, closed
// loops) through count_completion().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "sim/component.h"
#include "sim/event_queue.h"
#include "sim/job.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace vqsim::sim {

using EventId = std::uint64_t;

struct RunLimits {
  time_ns warmup_ns = 0;                  // warm-up by simulated time ...
  std::uint64_t warmup_completions = 0;   // ... or by completions (not both)
  time_ns measure_ns = 0;                 // measured window length; 0 = no time limit
  std::uint64_t measure_completions = 0;  // completions to measure; 0 = no count limit
  bool hash_events = false;               // keep event_hash (golden runs); off, the loop skips it
};

struct RunResult {
  time_ns warmup_end_ns = 0;
  time_ns end_ns = 0;
  std::uint64_t events = 0;       // events handled, warm-up included
  std::uint64_t completions = 0;  // counted in the measured window
  bool drained = false;           // stopped because no event was left
  // With RunLimits::hash_events, a hash of the event stream (0 without): every handled event's
  // time and the name of its target, in order. Two runs with the same hash handled the same
  // events at the same nanoseconds in the same components; the golden runs (scripts/golden)
  // compare it to see any behaviour change, however small. Names, not addresses or
  // construction order, so that moving code around changes it only where behaviour changes.
  std::uint64_t event_hash = 0;
};

// Folds one replication's event hash into a running one; order matters, thread count does not
// (replications are combined in replication order).
constexpr std::uint64_t combine_event_hashes(std::uint64_t so_far, std::uint64_t next) noexcept {
  std::uint64_t h = (so_far ^ next) * 0x94d049bb133111ebULL;
  return h ^ (h >> 29) ^ next;
}

class Simulator {
 public:
  explicit Simulator(std::uint64_t seed = 1, std::uint64_t replication = 0);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Builds a component owned by the simulator: T(*this, args...). Names must be unique.
  template <typename T, typename... Args>
  T& make(Args&&... args) {
    auto owned = std::make_unique<T>(*this, std::forward<Args>(args)...);
    T& ref = *owned;
    adopt(std::move(owned));
    return ref;
  }

  time_ns now() const noexcept { return now_; }
  std::uint64_t seed() const noexcept { return seed_; }
  std::uint64_t replication() const noexcept { return replication_; }

  EventId schedule_at(time_ns when, Component* target, std::uint32_t kind, std::uint64_t payload = 0) {
    const EventId id = next_seq_++;
    queue_.push(Event::make(when, id, target, kind, payload));
    return id;
  }
  EventId schedule_in(time_ns delay, Component* target, std::uint32_t kind, std::uint64_t payload = 0) {
    return schedule_at(now_ + delay, target, kind, payload);
  }
  // Cancels a pending event; it is dropped when it reaches the head of the queue (O(1) now,
  // one hash look-up per event while any cancellation is outstanding). `id` must still be
  // pending: the id of an event that already ran would stay in the set for the whole run.
  void cancel(EventId id) { cancelled_.insert(id); }

  // A random stream for `name`, independent of every other name, replication and seed.
  Rng stream(std::string_view name) const noexcept;

  JobPool& jobs() noexcept { return jobs_; }
  void count_completion() noexcept {
    ++completions_;
    if (measuring_) {
      if (limits_.measure_completions && completions_ >= limits_.measure_completions) stopped_ = true;
    } else if (limits_.warmup_completions && completions_ >= limits_.warmup_completions) {
      end_warmup();
    }
  }
  bool measuring() const noexcept { return measuring_; }
  void stop() noexcept { stopped_ = true; }

  // Validates the wiring, starts every component, and runs to the limits.
  RunResult run(const RunLimits& limits);

  const std::vector<std::unique_ptr<Component>>& components() const noexcept { return components_; }
  // Every component's figures, in construction order, then the run's own (run.*).
  Metrics report() const;
  // The worst Little's-law relative error over components with flow statistics.
  double worst_little_error(std::string* which = nullptr) const;
  std::uint64_t events() const noexcept { return events_; }

 private:
  enum ControlKind : std::uint32_t { kEndWarmup = 1, kStopRun = 2 };
  void adopt(std::unique_ptr<Component> component);
  void end_warmup();
  static std::uint64_t mix_event_hash(std::uint64_t so_far, const Event& e) noexcept {
    // One multiply-xorshift round per event, on request (RunLimits::hash_events): a few percent
    // of the engine's speed. The kind of a component's own timer is left out: it is a private
    // enum a refactor may renumber.
    const std::uint64_t who = e.target != nullptr ? e.target->name_hash() : e.kind();
    std::uint64_t h = so_far ^ (static_cast<std::uint64_t>(e.time()) + 0x9e3779b97f4a7c15ULL * who);
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 31);
  }

  std::uint64_t seed_;
  std::uint64_t replication_;
  time_ns now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t completions_ = 0;
  bool measuring_ = false;
  bool stopped_ = false;
  time_ns warmup_end_ns_ = 0;
  RunLimits limits_;
  EventQueue queue_;
  std::unordered_set<EventId> cancelled_;
  JobPool jobs_;
  std::vector<std::unique_ptr<Component>> components_;
  std::unordered_set<std::string> names_;
  RunResult result_;
};

}  // namespace vqsim::sim
