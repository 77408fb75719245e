#include "cli/commands.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <queue>
#include <stdexcept>
#include <vector>

#include "cli/common.h"
#include "sim/event_queue.h"
#include "sim/fcfs_station.h"
#include "sim/mva.h"
#include "sim/simulator.h"
#include "sim/source.h"

namespace vqsim::cli {
namespace po = boost::program_options;
using namespace vqsim::sim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Station k of the benchmark network has mean service 1.0 + 0.25 k µs (1.0 .. 2.0 for 5).
double station_mean_ns(int k) { return 1000.0 + 250.0 * k; }

struct TandemFigures {
  double wall_s = 0;
  double events = 0;
  double cycles = 0;
  double throughput_per_s = 0;  // simulated cycles per simulated second
  double response_mean_ns = 0;  // mean cycle time
  double events_per_s() const { return events / wall_s; }
  double cycles_per_s() const { return cycles / wall_s; }
  nlohmann::ordered_json json() const {
    return {{"wall_s", wall_s},
            {"events", events},
            {"cycles", cycles},
            {"events_per_s", events_per_s()},
            {"cycles_per_s", cycles_per_s()},
            {"throughput_per_s", throughput_per_s},
            {"response_mean_ns", response_mean_ns}};
  }
};

// The closed tandem on the engine: ClosedLoop -> FCFS stations -> back, with all statistics on.
TandemFigures engine_tandem(int customers, int stations, long cycles, std::uint64_t seed) {
  Simulator sim(seed, 0);
  auto& loop = sim.make<ClosedLoop>("loop", customers);
  Port* prev = &loop.out;
  for (int k = 0; k < stations; ++k) {
    auto& st = sim.make<FcfsStation>("station" + std::to_string(k), 1, Distribution::exponential(station_mean_ns(k)));
    connect(*prev, st);
    prev = &st.out;
  }
  connect(*prev, loop);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = sim.run(RunLimits{.warmup_completions = static_cast<std::uint64_t>(cycles / 100 + 1),
                                        .measure_completions = static_cast<std::uint64_t>(cycles)});
  TandemFigures f;
  f.wall_s = seconds_since(t0);
  f.events = static_cast<double>(r.events);
  f.cycles = static_cast<double>(r.completions);
  const Metrics m = sim.report();
  f.throughput_per_s = m.get("loop.throughput_per_s");
  f.response_mean_ns = m.get("loop.response_mean_ns");
  return f;
}

// The same network as a minimal hand-written loop: std::priority_queue of plain events, one
// FIFO of (job, arrival) per station, the same random streams and draws. No statistics beyond
// the cycle-time mean: the floor the engine is compared against.
TandemFigures hand_tandem(int customers, int stations, long cycles, std::uint64_t seed) {
  struct Ev {
    time_ns t;
    std::uint64_t seq;
    int station;
    bool operator>(const Ev& o) const { return t > o.t || (t == o.t && seq > o.seq); }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> pq;
  std::vector<Rng> rng;
  std::vector<Distribution> service;
  for (int k = 0; k < stations; ++k) {
    rng.push_back(Rng::for_stream(seed, 1, static_cast<std::uint64_t>(k)));
    service.push_back(Distribution::exponential(station_mean_ns(k)));
  }
  std::vector<std::deque<int>> line(static_cast<std::size_t>(stations));  // jobs at station, head in service
  std::vector<time_ns> cycle_start(static_cast<std::size_t>(customers), 0);
  std::uint64_t seq = 0;
  time_ns now = 0;
  auto arrive = [&](int k, int job) {
    auto& q = line[static_cast<std::size_t>(k)];
    q.push_back(job);
    if (q.size() == 1)
      pq.push(Ev{now + service[static_cast<std::size_t>(k)].sample_ns(rng[static_cast<std::size_t>(k)]), seq++, k});
  };
  for (int j = 0; j < customers; ++j) arrive(0, j);
  const long warmup = cycles / 100 + 1;
  long done = 0;
  double response_sum = 0;
  time_ns measure_start = 0;
  std::uint64_t events = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (done < warmup + cycles) {
    const Ev e = pq.top();
    pq.pop();
    now = e.t;
    ++events;
    auto& q = line[static_cast<std::size_t>(e.station)];
    const int job = q.front();
    q.pop_front();
    if (!q.empty())
      pq.push(Ev{now + service[static_cast<std::size_t>(e.station)].sample_ns(rng[static_cast<std::size_t>(e.station)]), seq++,
                 e.station});
    if (e.station + 1 < stations) {
      arrive(e.station + 1, job);
    } else {
      if (++done > warmup) response_sum += static_cast<double>(now - cycle_start[static_cast<std::size_t>(job)]);
      if (done == warmup) measure_start = now;
      cycle_start[static_cast<std::size_t>(job)] = now;
      arrive(0, job);
    }
  }
  TandemFigures f;
  f.wall_s = seconds_since(t0);
  f.events = static_cast<double>(events);
  f.cycles = static_cast<double>(cycles);
  f.throughput_per_s = static_cast<double>(cycles) * 1e9 / static_cast<double>(now - measure_start);
  f.response_mean_ns = response_sum / static_cast<double>(cycles);
  return f;
}

int bench_tandem(const std::vector<std::string>& args) {
  int customers = 32, stations = 5, repeats = 3;
  long cycles = 2'000'000;
  std::uint64_t seed = 1;
  bool json = false;
  po::options_description opts(
      "vqsim bench tandem: a closed tandem of exponential FCFS stations (means 1.0, 1.25, ... µs)\n"
      "run on the engine and on a minimal hand-written std::priority_queue loop, in the same\n"
      "process, alternately; each is run --repeat times and the median is reported. Prints\n"
      "events/s, cycles/s, throughput and mean cycle time of both, exact MVA, and the ratio.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("customers", po::value(&customers)->default_value(customers),
                                                 "jobs circulating (closed population)")(
      "stations", po::value(&stations)->default_value(stations), "stations in the tandem")(
      "cycles", po::value(&cycles)->default_value(cycles), "measured cycles (round trips) per run")(
      "repeat", po::value(&repeats)->default_value(repeats), "runs of each side; the median is reported")(
      "seed", po::value(&seed)->default_value(seed), "random seed")("json", po::bool_switch(&json), "print JSON");
  po::variables_map vm;
  if (!parse_options(args, opts, vm)) return 0;
  if (customers < 1 || stations < 1 || cycles < 1 || repeats < 1)
    throw UsageError("customers, stations, cycles and repeat must be positive");

  std::vector<TandemFigures> engine, hand;
  for (int r = 0; r < repeats; ++r) {
    engine.push_back(engine_tandem(customers, stations, cycles, seed));
    hand.push_back(hand_tandem(customers, stations, cycles, seed));
  }
  auto median = [](std::vector<TandemFigures> v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.wall_s < b.wall_s; });
    return v[v.size() / 2];
  };
  const TandemFigures e = median(engine), h = median(hand);
  std::vector<MvaStation> net;
  for (int k = 0; k < stations; ++k) net.push_back(MvaStation{"s", MvaStationKind::Queue, 1, {station_mean_ns(k)}});
  const MvaResult exact = mva_exact(net, customers);
  const double x_exact = exact.throughput[0] * 1e9;
  const double ratio = e.events_per_s() / h.events_per_s();
  const double x_err = (e.throughput_per_s - x_exact) / x_exact;

  if (json) {
    nlohmann::ordered_json j = {
        {"benchmark", "tandem"},
        {"customers", customers},
        {"stations", stations},
        {"cycles", cycles},
        {"repeat", repeats},
        {"engine", e.json()},
        {"hand_loop", h.json()},
        {"engine_to_hand_ratio", ratio},
        {"mva", {{"throughput_per_s", x_exact}, {"response_mean_ns", exact.cycle_time[0]}}},
        {"engine_throughput_rel_error_vs_mva", x_err},
    };
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::printf("closed tandem: %d customers, %d exponential stations, %ld cycles, median of %d runs\n\n", customers, stations,
              cycles, repeats);
  std::printf("%-10s %12s %12s %16s %18s\n", "", "events/s", "cycles/s", "throughput/s", "mean cycle (ns)");
  std::printf("%-10s %12.3e %12.3e %16.1f %18.1f\n", "engine", e.events_per_s(), e.cycles_per_s(), e.throughput_per_s,
              e.response_mean_ns);
  std::printf("%-10s %12.3e %12.3e %16.1f %18.1f\n", "hand loop", h.events_per_s(), h.cycles_per_s(), h.throughput_per_s,
              h.response_mean_ns);
  std::printf("%-10s %12s %12s %16.1f %18.1f\n\n", "exact MVA", "", "", x_exact, exact.cycle_time[0]);
  std::printf("engine / hand loop speed: %.2fx    engine throughput vs MVA: %+.3f%%\n", ratio, 100 * x_err);
  return 0;
}

// Hold model: a queue kept at `size` pending events; each step pops the earliest and pushes one
// a random exponential time later. Compares the engine's d-ary heap with std::priority_queue.
template <typename Queue, typename Push, typename Pop>
double hold_rate(std::size_t size, long steps, Queue& q, Push push, Pop pop) {
  Rng rng(42);
  const auto gap = Distribution::exponential(1000.0);
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < size; ++i) push(q, Event::make(gap.sample_ns(rng), seq++, nullptr, 0, 0));
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < steps; ++i) {
    const Event e = pop(q);
    push(q, Event::make(e.time() + gap.sample_ns(rng), seq++, nullptr, 0, 0));
  }
  return static_cast<double>(steps) / seconds_since(t0);
}

int bench_queue(const std::vector<std::string>& args) {
  long steps = 5'000'000;
  bool json = false;
  po::options_description opts(
      "vqsim bench queue: the pending-event set under a hold model (pop the earliest, push one\n"
      "a random time later) at several sizes: 2-ary and 4-ary heaps against std::priority_queue.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("steps", po::value(&steps)->default_value(steps), "hold operations per size")(
      "json", po::bool_switch(&json), "print JSON");
  po::variables_map vm;
  if (!parse_options(args, opts, vm)) return 0;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (!json)
    std::printf("%8s %18s %18s %18s   (hold operations per second)\n", "pending", "4-ary heap", "binary heap",
                "std::priority_queue");
  for (std::size_t size : {8, 32, 128, 1024, 16384}) {
    auto push_d = [](auto& q, const Event& e) { q.push(e); };
    auto pop_d = [](auto& q) { return q.pop(); };
    DaryHeap<4> q4;
    DaryHeap<2> q2;
    struct Later {
      bool operator()(const Event& a, const Event& b) const { return b < a; }
    };
    std::priority_queue<Event, std::vector<Event>, Later> pq;
    const double r4 = hold_rate(size, steps, q4, push_d, pop_d);
    const double r2 = hold_rate(size, steps, q2, push_d, pop_d);
    const double rp = hold_rate(size, steps, pq, push_d, [](auto& q) {
      const Event e = q.top();
      q.pop();
      return e;
    });
    rows.push_back({{"pending", size}, {"dary4_per_s", r4}, {"dary2_per_s", r2}, {"std_priority_queue_per_s", rp}});
    if (!json) std::printf("%8zu %18.3e %18.3e %18.3e\n", size, r4, r2, rp);
  }
  if (json) std::cout << nlohmann::ordered_json{{"benchmark", "queue"}, {"steps", steps}, {"sizes", rows}}.dump(2) << '\n';
  return 0;
}

}  // namespace

int bench_main(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: vqsim bench tandem [options]   engine vs a hand-written loop on a closed tandem\n"
      "       vqsim bench queue [options]    event-queue implementations under a hold model\n"
      "       vqsim bench e2e [options]      I/O-path simulation: simulated I/Os per second, peak memory\n"
      "Each takes --help.";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage << '\n';
    if (args.empty()) throw UsageError("vqsim bench needs a benchmark name");
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "tandem") return bench_tandem(rest);
  if (args[0] == "queue") return bench_queue(rest);
  if (args[0] == "e2e") return bench_e2e(rest);
  throw UsageError("unknown benchmark '" + args[0] + "'" + did_you_mean(args[0], {"tandem", "queue", "e2e"}) +
                   "; expected tandem, queue or e2e (see vqsim bench --help)");
}

}  // namespace vqsim::cli
