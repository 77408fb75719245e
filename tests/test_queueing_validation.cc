// Every queueing primitive against its closed form (or exact MVA), within the simulation's own
// 95% confidence interval over independent replications. Each model also passes Little's law
// on every component (see validation_support.h). Times are in ns; service means of tens of µs
// keep the rounding of draws to whole ns far below the intervals.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/delay_station.h"
#include "sim/erlang.h"
#include "sim/fcfs_station.h"
#include "sim/fork_join.h"
#include "sim/mva.h"
#include "sim/ps_station.h"
#include "sim/source.h"
#include "sim/token_pool.h"
#include "sim_support.h"
#include "tests/validation_support.h"

using namespace vqsim;
using namespace vqsim::sim;
using vqsim::test::check_inside;
using vqsim::test::replicate;

namespace {

constexpr int kReplications = 10;
const RunLimits kOpenLimits{.warmup_completions = 20'000, .measure_completions = 400'000};

// Source -> station -> sink, with the station built by `make_station`.
template <typename MakeStation>
auto open_line(double interarrival_ns, MakeStation make_station) {
  return [=](Simulator& s) {
    auto& src = s.make<Source>("source", Distribution::exponential(interarrival_ns));
    auto& station = make_station(s);
    auto& sink = s.make<Sink>("sink");
    connect(src.out, station);
    connect(station.out, sink);
  };
}

// The width of the fio histogram bin holding `value_ns`: the resolution of a percentile.
double bin_width_ns(double value_ns) {
  const unsigned i = FioHistogram::value_to_index(static_cast<std::uint64_t>(value_ns));
  return static_cast<double>(FioHistogram::bin_upper_ns(i) - FioHistogram::bin_lower_ns(i) + 1);
}

// "s0".."s4". (Built with append: GCC 12's -Wrestrict misfires on "literal" + std::string.)
std::string station_name(int k) {
  std::string name = "s";
  name += std::to_string(k);
  return name;
}

}  // namespace

TEST_CASE("M/M/1 FCFS: mean response 1/(mu - lambda) and p99 of the exponential response time") {
  const double service_ns = 10'000, interarrival_ns = 20'000;  // rho = 0.5
  const auto runs = replicate(kReplications, kOpenLimits, open_line(interarrival_ns, [&](Simulator& s) -> FcfsStation& {
                                return s.make<FcfsStation>("mm1", 1, Distribution::exponential(service_ns));
                              }));
  const double lambda = 1 / interarrival_ns, mu = 1 / service_ns;
  check_inside(runs, "mm1.response_mean_ns", 1 / (mu - lambda));
  check_inside(runs, "mm1.utilization", lambda / mu);
  const double p99 = mm1_response_quantile(lambda, mu, 0.99);
  // fio's histogram reports a bin's midpoint: the estimator is quantised by half a bin.
  check_inside(runs, "mm1.response_p99_ns", p99, 0.015, bin_width_ns(p99) / 2);
  check_inside(runs, "sink.response_mean_ns", 1 / (mu - lambda));
}

TEST_CASE("M/M/c FCFS: mean wait matches Erlang C") {
  const int c = 4;
  const double service_ns = 40'000, interarrival_ns = 40'000.0 / (0.75 * c);  // rho = 0.75
  const auto runs = replicate(kReplications, kOpenLimits, open_line(interarrival_ns, [&](Simulator& s) -> FcfsStation& {
                                return s.make<FcfsStation>("mmc", c, Distribution::exponential(service_ns));
                              }));
  const double lambda = 1 / interarrival_ns, mu = 1 / service_ns;
  // The wait is small beside the service, so its interval is judged against the response.
  check_inside(runs, "mmc.wait_mean_ns", mmc_mean_wait(lambda, mu, c), 0.05);
  check_inside(runs, "mmc.response_mean_ns", mmc_mean_response(lambda, mu, c));
}

TEST_CASE("M/D/1 FCFS: mean wait matches Pollaczek-Khinchine") {
  const double service_ns = 10'000, interarrival_ns = 16'000;  // rho = 0.625
  const auto runs = replicate(kReplications, kOpenLimits, open_line(interarrival_ns, [&](Simulator& s) -> FcfsStation& {
                                return s.make<FcfsStation>("md1", 1, Distribution::deterministic(service_ns));
                              }));
  check_inside(runs, "md1.wait_mean_ns", mg1_mean_wait(1 / interarrival_ns, service_ns, 0.0));
}

TEST_CASE("A lock held for each pass of an M/M/1 serving in gated passes: a Poisson taker waits rho / (mu (1 - rho^2))") {
  // The taker's jobs (one per 10 of the holder's) each have a server of 64, so they never wait for
  // each other: their response is the lock's wait and their 1 ns of service. Held for a whole busy
  // period instead, the wait would be rho / (mu (1 - rho)^2): 3x longer at rho = 0.5.
  for (const double rho : {0.5, 0.8}) {
    CAPTURE(rho);
    const double service_ns = 10'000, interarrival_ns = service_ns / rho;
    const auto runs = replicate(kReplications, kOpenLimits, [&](Simulator& s) {
      auto& sink = s.make<Sink>("sink");
      auto& to_holder = s.make<Source>("source-holder", Distribution::exponential(interarrival_ns));
      auto& holder = s.make<FcfsStation>("holder", 1, Distribution::exponential(service_ns));
      auto& to_taker = s.make<Source>("source-taker", Distribution::exponential(10 * interarrival_ns));
      auto& taker = s.make<test::LockWaiter>("taker", holder, 64, Distribution::deterministic(1));
      connect(to_holder.out, holder);
      connect(holder.out, sink);
      connect(to_taker.out, taker);
      connect(taker.out, sink);
    });
    check_inside(runs, "taker.response_mean_ns", mm1_gated_pass_residual(1 / interarrival_ns, 1 / service_ns) + 1, 0.05);
  }
}

TEST_CASE("M/M/1 processor sharing: mean response equals FCFS, 1/(mu - lambda)") {
  const double service_ns = 10'000, interarrival_ns = 20'000;
  const auto runs =
      replicate(kReplications, kOpenLimits, open_line(interarrival_ns, [&](Simulator& s) -> ProcessorSharingStation& {
                  return s.make<ProcessorSharingStation>("ps", 1, Distribution::exponential(service_ns));
                }));
  check_inside(runs, "ps.response_mean_ns", 1 / (1 / service_ns - 1 / interarrival_ns));
}

TEST_CASE("M/M/2 processor sharing: two servers shared by all present behave as M/M/2 in the mean") {
  // Egalitarian PS with c servers and exponential demands has the birth-death rates
  // min(n, c) mu of M/M/c, so the mean number present, and by Little the mean response, match.
  const double service_ns = 10'000, interarrival_ns = 10'000.0 / (2 * 0.7);
  const auto runs =
      replicate(kReplications, kOpenLimits, open_line(interarrival_ns, [&](Simulator& s) -> ProcessorSharingStation& {
                  return s.make<ProcessorSharingStation>("ps2", 2, Distribution::exponential(service_ns));
                }));
  check_inside(runs, "ps2.response_mean_ns", mmc_mean_response(1 / interarrival_ns, 1 / service_ns, 2));
}

TEST_CASE("Closed tandem of 5 exponential stations with 32 customers matches exact MVA") {
  const double means_ns[] = {1'000, 1'250, 1'500, 1'750, 2'000};
  std::vector<MvaStation> network;
  for (int k = 0; k < 5; ++k) network.push_back(MvaStation{station_name(k), MvaStationKind::Queue, 1, {means_ns[k]}});
  const MvaResult exact = mva_exact(network, 32);

  const RunLimits limits{.warmup_completions = 10'000, .measure_completions = 200'000};
  const auto runs = replicate(kReplications, limits, [&](Simulator& s) {
    auto& loop = s.make<ClosedLoop>("loop", 32);
    Port* prev = &loop.out;
    for (int k = 0; k < 5; ++k) {
      auto& st = s.make<FcfsStation>(station_name(k), 1, Distribution::exponential(means_ns[k]));
      connect(*prev, st);
      prev = &st.out;
    }
    connect(*prev, loop);
  });
  check_inside(runs, "loop.throughput_per_s", exact.throughput[0] * 1e9, 0.01);
  check_inside(runs, "loop.response_mean_ns", exact.cycle_time[0], 0.01);
  for (int k = 0; k < 5; ++k)
    check_inside(runs, station_name(k) + ".number_mean", exact.queue_length[static_cast<std::size_t>(k)][0], 0.03);
}

TEST_CASE("Fork-join of 2 exponential servers matches Nelson-Tantawi, 1.5/mu at light load") {
  const double service_ns = 10'000, interarrival_ns = 50'000;  // rho = 0.2 per server
  const auto runs = replicate(kReplications, kOpenLimits, [&](Simulator& s) {
    auto& src = s.make<Source>("source", Distribution::exponential(interarrival_ns));
    auto& fj = s.make<ForkJoin>("forkjoin", 2);
    auto& a = s.make<FcfsStation>("a", 1, Distribution::exponential(service_ns));
    auto& b = s.make<FcfsStation>("b", 1, Distribution::exponential(service_ns));
    auto& sink = s.make<Sink>("sink");
    connect(src.out, fj, ForkJoin::kIn);
    connect(fj.branch[0], a);
    connect(fj.branch[1], b);
    connect(a.out, fj, ForkJoin::kJoin);
    connect(b.out, fj, ForkJoin::kJoin);
    connect(fj.out, sink);
  });
  const double exact = forkjoin2_mean_response(1 / interarrival_ns, 1 / service_ns);
  check_inside(runs, "forkjoin.response_mean_ns", exact);
  // At light load the formula tends to 1.5/mu; at rho = 0.2 it is within a third of that.
  CHECK(exact == doctest::Approx(1.5 * service_ns * (12 - 0.2) / 12 / 0.8));
}

TEST_CASE("Token pool around a delay is an M/M/c queue: the wait for a token matches Erlang C") {
  // c tokens, each held for an exponential time: exactly the M/M/c server pool.
  const int c = 3;
  const double hold_ns = 30'000, interarrival_ns = 30'000.0 / (0.7 * c);
  const auto runs = replicate(kReplications, kOpenLimits, [&](Simulator& s) {
    auto& src = s.make<Source>("source", Distribution::exponential(interarrival_ns));
    auto& pool = s.make<TokenPool>("pool", c);
    auto& hold = s.make<DelayStation>("hold", Distribution::exponential(hold_ns));
    auto& sink = s.make<Sink>("sink");
    connect(src.out, pool, TokenPool::kAcquire);
    connect(pool.acquired, hold);
    connect(hold.out, pool, TokenPool::kRelease);
    connect(pool.released, sink);
  });
  const double lambda = 1 / interarrival_ns, mu = 1 / hold_ns;
  check_inside(runs, "pool.wait_mean_ns", mmc_mean_wait(lambda, mu, c), 0.05);
  check_inside(runs, "pool.response_mean_ns", mmc_mean_response(lambda, mu, c));
  check_inside(runs, "hold.response_mean_ns", hold_ns);
}

TEST_CASE("CPU resource: 4 threads of a station on 2 shared cores behave as M/M/2") {
  // Each job holds a thread (FCFS server) and runs on the shared cores, which serve runnable
  // threads at min(n, 2) in total. With exponential demands the number present is the M/M/2
  // birth-death process, so the mean response is M/M/2's.
  const double service_ns = 20'000, interarrival_ns = 20'000.0 / (2 * 0.6);
  const auto runs = replicate(kReplications, kOpenLimits, [&](Simulator& s) {
    auto& src = s.make<Source>("source", Distribution::exponential(interarrival_ns));
    auto& cpu = s.make<CpuResource>("cpu", 2);
    auto& threads = s.make<FcfsStation>("threads", 4, Distribution::exponential(service_ns));
    auto& sink = s.make<Sink>("sink");
    threads.use_cpu(cpu);
    connect(src.out, threads);
    connect(threads.out, sink);
  });
  check_inside(runs, "threads.response_mean_ns", mmc_mean_response(1 / interarrival_ns, 1 / service_ns, 2));
  check_inside(runs, "cpu.utilization", 0.6);
}

TEST_CASE("CPU resource shared by two stations: one core, two M/M/1 streams, behaves as one M/M/1 on the total") {
  // Two single-thread stations on one core with exponential demands: the core is work-
  // conserving and memoryless, so the total number present is M/M/1 at the summed load, and by
  // symmetry each station's mean response is the M/M/1 response at that load.
  const double service_ns = 10'000, interarrival_ns = 40'000;  // rho = 0.25 each, 0.5 total
  const auto runs = replicate(kReplications, kOpenLimits, [&](Simulator& s) {
    auto& cpu = s.make<CpuResource>("cpu", 1);
    auto& sink = s.make<Sink>("sink");
    for (const char* n : {"a", "b"}) {
      auto& src = s.make<Source>(std::string("source-") + n, Distribution::exponential(interarrival_ns));
      auto& st = s.make<FcfsStation>(n, 1, Distribution::exponential(service_ns));
      st.use_cpu(cpu);
      connect(src.out, st);
      connect(st.out, sink);
    }
  });
  // Total present is M/M/1 at rho = 0.5 (the core's departure rate is mu whenever any job is
  // present), so by Little each job's mean response is L / lambda_total = 1 / (mu - lambda_total).
  check_inside(runs, "cpu.utilization", 0.5);
  const double lambda_total = 2 / interarrival_ns;
  check_inside(runs, "sink.response_mean_ns", 1.0 / (1 / service_ns - lambda_total));
}
