// The pending-event set and the order in which the Simulator runs events.
//
// Event order is the engine's determinism guarantee: entries order by (time, seq), so equal
// times run in scheduling order. These tests compare the d-ary heaps with an obviously correct
// reference (a sorted vector / std::set), and check the same promise end to end through
// Simulator: simultaneous events, cancel() and schedule_in().
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "sim/component.h"
#include "sim/event_queue.h"
#include "sim/rng.h"
#include "sim/simulator.h"

using namespace vqsim::sim;

namespace {

// A key that identifies an entry completely, so a mismatch in any field is seen.
using Key = std::tuple<time_ns, std::uint64_t, std::uint32_t, std::uint64_t>;
Key key(const Event& e) { return {e.time(), e.seq(), e.kind(), e.payload}; }

// `n` entries with times drawn from [0, time_range): a small range forces many equal times,
// where only seq decides the order. seq is the push order, as in the Simulator.
std::vector<Event> random_entries(Rng& rng, std::size_t n, std::uint64_t time_range) {
  std::vector<Event> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(
        Event::make(static_cast<time_ns>(rng.below(time_range)), i, nullptr, static_cast<std::uint32_t>(i % 7), rng.next_u64()));
  return v;
}

// Push everything, pop everything: the pop order must be the sorted order exactly.
template <unsigned D>
void check_push_all_pop_all(std::uint64_t time_range, std::uint64_t seed) {
  Rng rng(seed);
  const auto entries = random_entries(rng, 5000, time_range);
  DaryHeap<D> heap;
  for (const auto& e : entries) heap.push(e);
  CHECK(heap.size() == entries.size());

  auto expected = entries;
  std::sort(expected.begin(), expected.end());  // operator< is the (time, seq) order

  std::vector<Key> got, want;
  while (!heap.empty()) {
    const Key top = key(heap.top());  // top() must be what pop() then returns
    const Event e = heap.pop();
    CHECK(key(e) == top);
    got.push_back(key(e));
  }
  for (const auto& e : expected) want.push_back(key(e));
  CHECK(got == want);
}

// Interleaved pushes and pops (the way a simulation uses the queue), against a std::set.
// New entries are never earlier than the last popped one, like events scheduled from "now".
template <unsigned D>
void check_interleaved(std::uint64_t time_range, std::uint64_t seed) {
  Rng rng(seed);
  DaryHeap<D> heap;
  std::set<Key> reference;
  std::uint64_t seq = 0;
  time_ns now = 0;
  bool all_equal = true;
  for (int step = 0; step < 20000; ++step) {
    const bool do_push = reference.empty() || rng.below(100) < 55;
    if (do_push) {
      const Event e = Event::make(now + static_cast<time_ns>(rng.below(time_range)), seq++, nullptr, 0, rng.next_u64());
      heap.push(e);
      reference.insert(key(e));
    } else {
      const Event e = heap.pop();
      const Key want = *reference.begin();
      reference.erase(reference.begin());
      if (key(e) != want) all_equal = false;
      now = e.time();
    }
    if (heap.size() != reference.size()) all_equal = false;
  }
  while (!heap.empty()) {
    const Event e = heap.pop();
    if (key(e) != *reference.begin()) all_equal = false;
    reference.erase(reference.begin());
  }
  CHECK(all_equal);
  CHECK(reference.empty());
}

// Records every timer it receives; schedules what the test asks for at start().
class Recorder : public Component {
 public:
  struct Fired {
    time_ns at;
    std::uint32_t kind;
    std::uint64_t payload;
    bool operator==(const Fired&) const = default;
  };
  struct Plan {
    time_ns at;
    std::uint32_t kind;
    std::uint64_t payload;
  };

  Recorder(Simulator& sim, std::string name) : Component(sim, std::move(name)) {}

  std::vector<Plan> at_start;  // scheduled with schedule_at in start()
  std::vector<EventId> ids;    // ids of the at_start events, in order
  std::vector<Fired> fired;
  // kind 100: on firing, schedule kind 101 `payload` ns later with schedule_in.
  // kind 200: on firing, cancel the at_start event number `payload` (its id from `ids`).

  void start() override {
    for (const auto& p : at_start) ids.push_back(sim_.schedule_at(p.at, this, p.kind, p.payload));
  }
  void handle(std::uint32_t kind, std::uint64_t payload) override {
    fired.push_back(Fired{sim_.now(), kind, payload});
    if (kind == 100) sim_.schedule_in(static_cast<time_ns>(payload), this, 101, payload);
    if (kind == 200) sim_.cancel(ids.at(payload));
  }
};

}  // namespace

TEST_CASE("DaryHeap<2> and DaryHeap<4> pop in exactly the sorted (time, seq) order") {
  // Wide time range: mostly distinct times, the plain heap property is exercised.
  check_push_all_pop_all<2>(1'000'000'000, 11);
  check_push_all_pop_all<4>(1'000'000'000, 11);
  // Only 8 distinct times among 5000 entries: ties everywhere, so FIFO by seq is what is tested.
  check_push_all_pop_all<2>(8, 12);
  check_push_all_pop_all<4>(8, 12);
  // All entries at one time: the pop order must be the push order.
  check_push_all_pop_all<2>(1, 13);
  check_push_all_pop_all<4>(1, 13);
}

TEST_CASE("DaryHeap<2> and DaryHeap<4> agree with a std::set under interleaved push and pop") {
  check_interleaved<2>(1000, 21);
  check_interleaved<4>(1000, 21);
  check_interleaved<2>(3, 22);  // heavy ties
  check_interleaved<4>(3, 22);
  check_interleaved<3>(50, 23);  // an odd arity too, since the template allows it
}

TEST_CASE("DaryHeap: size, empty, clear and a single element") {
  DaryHeap<4> heap;
  CHECK(heap.empty());
  heap.push(Event::make(5, 0, nullptr, 1, 2));
  CHECK(heap.size() == 1);
  CHECK(heap.top().time() == 5);
  const Event e = heap.pop();
  CHECK(e.payload == 2);
  CHECK(heap.empty());
  for (std::uint64_t i = 0; i < 10; ++i) heap.push(Event::make(static_cast<time_ns>(10 - i), i, nullptr, 0, 0));
  heap.clear();
  CHECK(heap.empty());
  // After clear() the heap is usable again and still ordered.
  heap.push(Event::make(3, 1, nullptr, 0, 0));
  heap.push(Event::make(3, 0, nullptr, 0, 0));
  heap.push(Event::make(1, 2, nullptr, 0, 0));
  CHECK(heap.pop().seq() == 2);
  CHECK(heap.pop().seq() == 0);
  CHECK(heap.pop().seq() == 1);
}

TEST_CASE("Event: every field survives the packed order word, negative times sort first, out-of-range kinds are refused") {
  // An event packs seq and kind into one word and compares as one 128-bit key; the extremes must
  // come back unchanged, and signed time order must hold across zero.
  DaryHeap<4> heap;
  const std::uint64_t max_seq = Event::kMaxSeq;
  const auto max_kind = static_cast<std::uint32_t>(Event::kMaxKind);
  heap.push(Event::make(std::numeric_limits<time_ns>::max(), 1, nullptr, max_kind, ~std::uint64_t{0}));
  heap.push(Event::make(0, max_seq, nullptr, 7, 42));
  heap.push(Event::make(-5, 3, nullptr, 0, 1));
  heap.push(Event::make(std::numeric_limits<time_ns>::min(), 2, nullptr, 1, 0));
  CHECK(heap.pop().time() == std::numeric_limits<time_ns>::min());
  CHECK(heap.pop().time() == -5);
  const Event zero = heap.pop();
  CHECK(zero.seq() == max_seq);
  CHECK(zero.kind() == 7);
  CHECK(zero.payload == 42);
  const Event last = heap.pop();
  CHECK(last.time() == std::numeric_limits<time_ns>::max());
  CHECK(last.kind() == max_kind);
  CHECK(last.payload == ~std::uint64_t{0});
  CHECK_THROWS_AS(heap.push(Event::make(0, 0, nullptr, max_kind + 1, 0)), std::length_error);
  CHECK_THROWS_AS(heap.push(Event::make(0, max_seq + 1, nullptr, 0, 0)), std::length_error);
  CHECK(heap.empty());
}

TEST_CASE("Simulator runs simultaneous events in the order they were scheduled") {
  Simulator sim(1);
  auto& r = sim.make<Recorder>("rec");
  // Scheduled out of time order, with ties at 50 and at 20: expected order is by time, and
  // within a time by scheduling order (payload is the scheduling index).
  const time_ns times[] = {50, 20, 50, 10, 50, 20, 50};
  for (std::uint64_t i = 0; i < std::size(times); ++i) r.at_start.push_back({times[i], 1, i});
  const RunResult res = sim.run(RunLimits{});
  std::vector<std::uint64_t> order;
  for (const auto& f : r.fired) order.push_back(f.payload);
  CHECK(order == std::vector<std::uint64_t>{3, 1, 5, 0, 2, 4, 6});
  CHECK(res.drained);
  CHECK(res.end_ns == 50);
  CHECK(res.events == 7);
}

TEST_CASE("Simulator::cancel drops exactly the cancelled event") {
  Simulator sim(1);
  auto& r = sim.make<Recorder>("rec");
  for (std::uint64_t i = 0; i < 6; ++i) r.at_start.push_back({static_cast<time_ns>(10 * (i + 1)), 1, i});
  // kind 200 at time 5 cancels at_start event 3 (payload 3, due at 40).
  r.at_start.push_back({5, 200, 3});
  const RunResult res = sim.run(RunLimits{});
  std::vector<std::uint64_t> order;
  std::vector<time_ns> when;
  for (const auto& f : r.fired) {
    if (f.kind != 1) continue;
    order.push_back(f.payload);
    when.push_back(f.at);
  }
  CHECK(order == std::vector<std::uint64_t>{0, 1, 2, 4, 5});
  CHECK(when == std::vector<time_ns>{10, 20, 30, 50, 60});
  // The cancelled event is not counted as handled: 5 kept + the canceller.
  CHECK(res.events == 6);
  CHECK(res.drained);
}

TEST_CASE("Simulator::cancel of one of several simultaneous events keeps the others' order") {
  Simulator sim(1);
  auto& r = sim.make<Recorder>("rec");
  // The canceller (at_start entry 0) runs first, at time 0, and cancels at_start entry 3: the
  // third of five events due at time 100 (payload 2).
  r.at_start.push_back({0, 200, 3});
  for (std::uint64_t i = 0; i < 5; ++i) r.at_start.push_back({100, 1, i});
  sim.run(RunLimits{});
  REQUIRE(r.ids.size() == 6);
  std::vector<std::uint64_t> order;
  for (const auto& f : r.fired)
    if (f.kind == 1) order.push_back(f.payload);
  CHECK(order == std::vector<std::uint64_t>{0, 1, 3, 4});
}

TEST_CASE("Simulator::cancel from inside a handler, at the same time instant") {
  Simulator sim(1);
  auto& r = sim.make<Recorder>("rec");
  // At time 7: event A (entry 0) cancels event C (entry 2), also due at time 7 but scheduled
  // after A; event B (entry 1) in between must still run.
  r.at_start.push_back({7, 200, 2});
  r.at_start.push_back({7, 1, 1});
  r.at_start.push_back({7, 1, 2});
  r.at_start.push_back({8, 1, 3});
  sim.run(RunLimits{});
  std::vector<std::uint64_t> order;
  for (const auto& f : r.fired)
    if (f.kind == 1) order.push_back(f.payload);
  CHECK(order == std::vector<std::uint64_t>{1, 3});
}

TEST_CASE("Simulator::schedule_in is relative to the current time") {
  Simulator sim(1);
  auto& r = sim.make<Recorder>("rec");
  // kind 100 at t schedules kind 101 at t + payload.
  r.at_start.push_back({1000, 100, 250});
  r.at_start.push_back({3000, 100, 0});  // zero delay: runs at the same instant, after this one
  r.at_start.push_back({3000, 1, 9});    // already pending at 3000, so it runs before the 101
  const RunResult res = sim.run(RunLimits{});
  const std::vector<Recorder::Fired> want = {{1000, 100, 250}, {1250, 101, 250}, {3000, 100, 0}, {3000, 1, 9}, {3000, 101, 0}};
  CHECK(r.fired == want);
  CHECK(res.end_ns == 3000);
}
