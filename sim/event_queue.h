// The pending-event set: a d-ary min-heap of small plain entries.
//
// Entries order by (time, seq). seq is the scheduling counter, so simultaneous events run in
// the order they were scheduled (FIFO) and the order is total: same inputs, same run.
//
// Cost per event: push and pop are O(log_d n) moves of a 40-byte entry, no allocation once the
// vector has grown. `vqsim bench queue` measures this heap (d = 2 and 4) against
// std::priority_queue on a hold model; d = 4 is kept as the engine's queue (see
// docs/BENCHMARKS.md). Node-based heaps and calendar queues lose at our sizes (tens to
// hundreds of pending events).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/time.h"

namespace vqsim::sim {

class Component;

struct Event {
  time_ns time;
  std::uint64_t seq;   // scheduling order; also the event's identity for cancellation
  Component* target;   // nullptr: a run-control event of the Simulator itself
  std::uint32_t kind;  // the target's own event type
  std::uint64_t payload;

  friend bool operator<(const Event& a, const Event& b) noexcept {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
};

template <unsigned Arity>
class DaryHeap {
  static_assert(Arity >= 2);

 public:
  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }
  const Event& top() const noexcept { return heap_.front(); }
  void clear() noexcept { heap_.clear(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  void push(const Event& e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / Arity;
      if (!(e < heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event result = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return result;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * Arity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + Arity < n ? first + Arity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[c] < heap_[best]) best = c;
      if (!(heap_[best] < last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return result;
  }

 private:
  std::vector<Event> heap_;
};

using EventQueue = DaryHeap<4>;

}  // namespace vqsim::sim
