// The validation tests are only worth something if a wrong model fails them. Here the model is
// made wrong on purpose — a service rate 5% off — and the same criterion must reject it.
#include <doctest/doctest.h>

#include "sim/fcfs_station.h"
#include "sim/mva.h"
#include "sim/source.h"
#include "tests/validation_support.h"

using namespace vqsim::sim;
using vqsim::test::judge;
using vqsim::test::replicate;

namespace {
const RunLimits kLimits{.warmup_completions = 20'000, .measure_completions = 400'000};

std::vector<Metrics> mm1_runs(double service_ns, double interarrival_ns) {
  return replicate(10, kLimits, [=](Simulator& s) {
    auto& src = s.make<Source>("source", Distribution::exponential(interarrival_ns));
    auto& st = s.make<FcfsStation>("mm1", 1, Distribution::exponential(service_ns));
    auto& sink = s.make<Sink>("sink");
    connect(src.out, st);
    connect(st.out, sink);
  });
}
}  // namespace

TEST_CASE("Validation power: an M/M/1 whose service rate is 5% off is rejected, the right one is not") {
  const double service_ns = 10'000, interarrival_ns = 20'000;
  const double exact = 1 / (1 / service_ns - 1 / interarrival_ns);
  CHECK(judge(mm1_runs(service_ns, interarrival_ns), "mm1.response_mean_ns", exact).inside_999);
  CHECK_FALSE(judge(mm1_runs(service_ns / 1.05, interarrival_ns), "mm1.response_mean_ns", exact).inside_999);
  CHECK_FALSE(judge(mm1_runs(service_ns * 1.05, interarrival_ns), "mm1.response_mean_ns", exact).inside_999);
}

TEST_CASE("Validation power: a closed tandem with its bottleneck 5% faster is rejected against exact MVA") {
  const double means_ns[] = {1'000, 1'250, 1'500, 1'750, 2'000};
  std::vector<MvaStation> network;
  for (double m : means_ns) network.push_back(MvaStation{"", MvaStationKind::Queue, 1, {m}});
  const double exact_x = mva_exact(network, 32).throughput[0] * 1e9;
  auto runs_with_last = [&](double last_mean_ns) {
    return replicate(10, {.warmup_completions = 10'000, .measure_completions = 200'000}, [=](Simulator& s) {
      auto& loop = s.make<ClosedLoop>("loop", 32);
      Port* prev = &loop.out;
      for (int k = 0; k < 5; ++k) {
        auto& st = s.make<FcfsStation>(std::string(1, static_cast<char>('a' + k)), 1,
                                       Distribution::exponential(k == 4 ? last_mean_ns : means_ns[k]));
        connect(*prev, st);
        prev = &st.out;
      }
      connect(*prev, loop);
    });
  };
  CHECK(judge(runs_with_last(2'000), "loop.throughput_per_s", exact_x).inside_999);
  CHECK_FALSE(judge(runs_with_last(2'000 / 1.05), "loop.throughput_per_s", exact_x).inside_999);
}
