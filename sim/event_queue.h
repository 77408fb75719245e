// The pending-event set: a d-ary min-heap of small plain entries.
//
// Entries order by (time, seq). seq is the scheduling counter, so simultaneous events run in
// the order they were scheduled (FIFO) and the order is total: same inputs, same run.
//
// Cost per event: push and pop are O(log_d n) moves of a 32-byte entry, no allocation once the
// vector has grown. `vqsim bench queue` measures this heap (d = 2 and 4) against
// std::priority_queue on a hold model; d = 4 is kept as the engine's queue (see
// docs/BENCHMARKS.md). Node-based heaps and calendar queues lose at our sizes (tens to
// hundreds of pending events).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/time.h"

namespace vqsim::sim {

class Component;

// An event is 32 bytes, stored in the form the heap compares: the time with its sign bit flipped
// (so that unsigned order is signed order), then the kind in the low 16 bits of the sequence
// word. (time, order) orders exactly as (time, seq) does, since seq is unique, and also reads as
// one unsigned 128-bit number, which the heap's pop compares branch-free (cmp and sbb) where a
// node has all four children. Against 40 bytes of plain fields there is less to move per sift
// step. Hence kind < 2^16 and seq < 2^48 (2.8e14 events: a year at 10^7 events per second);
// make() checks both.
struct Event {
  static constexpr unsigned kKindBits = 16;
  static constexpr std::uint64_t kMaxKind = (std::uint64_t{1} << kKindBits) - 1;
  static constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << (64 - kKindBits)) - 1;

  std::uint64_t time_key;  // the time, sign bit flipped
  std::uint64_t order;     // seq << kKindBits | kind
  Component* target;       // nullptr: a run-control event of the Simulator itself
  std::uint64_t payload;

  static Event make(time_ns time, std::uint64_t seq, Component* target, std::uint32_t kind, std::uint64_t payload) {
    if (kind > kMaxKind || seq > kMaxSeq) throw std::length_error("event kind or sequence number out of range");
    return Event{static_cast<std::uint64_t>(time) ^ kSignBit, seq << kKindBits | kind, target, payload};
  }
  time_ns time() const noexcept { return static_cast<time_ns>(time_key ^ kSignBit); }
  // Scheduling order; also the event's identity for cancellation.
  std::uint64_t seq() const noexcept { return order >> kKindBits; }
  // The target's own event type.
  std::uint32_t kind() const noexcept { return static_cast<std::uint32_t>(order & kMaxKind); }

  friend bool operator<(const Event& a, const Event& b) noexcept {
    return a.time_key < b.time_key || (a.time_key == b.time_key && a.order < b.order);
  }
  // The same order, as one 128-bit comparison without branches.
  static bool less_branch_free(const Event& a, const Event& b) noexcept { return key(a) < key(b); }

 private:
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  __extension__ typedef unsigned __int128 Key;  // GCC and Clang on 64-bit targets
  static Key key(const Event& e) noexcept { return (static_cast<Key>(e.time_key) << 64) | e.order; }
};

template <unsigned Arity>
class DaryHeap {
  static_assert(Arity >= 2);

 public:
  static constexpr std::size_t kTournamentFrom = 12;  // pending events (see pop)

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
    const Event result = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return result;
    Event* h = heap_.data();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * Arity + 1;
      std::size_t best;
      if (Arity == 4 && n >= kTournamentFrom && first + 4 <= n) {
        // All four children present: a branch-free tournament. Their order follows random
        // times, so a branchy scan mispredicts; measured on a hold model (pop, push a random time
        // later), the tournament is 20-45% faster from 16 pending events up but up to 15% slower
        // at 8 and below, where the plain scan's few branches are cheaper, hence the threshold.
        const std::size_t a = first + Event::less_branch_free(h[first + 1], h[first]);
        const std::size_t b = first + 2 + Event::less_branch_free(h[first + 3], h[first + 2]);
        best = Event::less_branch_free(h[b], h[a]) ? b : a;
      } else if (first < n) {
        best = first;
        const std::size_t end = first + Arity < n ? first + Arity : n;
        for (std::size_t c = first + 1; c < end; ++c)
          if (h[c] < h[best]) best = c;
      } else {
        break;
      }
      if (!(h[best] < last)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = last;
    return result;
  }

 private:
  std::vector<Event> heap_;
};

using EventQueue = DaryHeap<4>;

}  // namespace vqsim::sim
