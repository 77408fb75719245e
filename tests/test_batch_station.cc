// The batch-service station (a serialized flush): hand-timed sample paths, Little's law, and the
// gated-service mean response under Poisson arrivals checked against its closed form.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/batch_station.h"
#include "sim/distribution.h"
#include "sim/simulator.h"
#include "sim/source.h"
#include "sim_support.h"

using namespace vqsim::sim;
using vqsim::test::Arrivals;
using vqsim::test::Recorder;

TEST_CASE("batch station: a batch is everything waiting when the server frees; late arrivals wait for the next") {
  Simulator sim(1, 0);
  // Service 100 ns. Arrivals at 0 (starts batch 1, done at 100), 10 and 20 (wait: batch 2 starts
  // at 100, done at 200), 150 (arrives during batch 2: batch 3 from 200 to 300).
  auto& src = sim.make<Arrivals>("src", std::vector<time_ns>{0, 10, 20, 150});
  auto& flush = sim.make<BatchStation>("flush", Distribution::deterministic(100));
  auto& rec = sim.make<Recorder>("rec");
  connect(src.out, flush);
  connect(flush.out, rec);
  sim.run(RunLimits{});
  CHECK(rec.times == std::vector<time_ns>{100, 200, 200, 300});
  const Metrics m = sim.report();
  CHECK(m.get("flush.batch_mean") == doctest::Approx(4.0 / 3.0));
  CHECK(m.get("flush.utilization") == doctest::Approx(1.0));  // busy from 0 to 300, the whole run
}

TEST_CASE("batch station under Poisson arrivals: gated service mean response and Little's law") {
  // Gated batch service with deterministic service D and Poisson arrivals at rate lambda: a
  // job waits for the batch in progress to end and then is served in the next one, so its
  // response is D plus the residual of the current period. Periods are all D long while the
  // server is busy; for lambda * D >> 1 the server never idles and the residual is D / 2,
  // giving 1.5 D. (With idling, jobs that find it idle wait 0.) Check the heavy-load limit.
  Simulator sim(7, 0);
  const double d = 1000, lambda = 0.05;  // 50 arrivals per service time
  auto& src = sim.make<Source>("src", Distribution::exponential(1 / lambda));
  auto& flush = sim.make<BatchStation>("flush", Distribution::deterministic(d));
  auto& sink = sim.make<Sink>("sink");
  connect(src.out, flush);
  connect(flush.out, sink);
  RunLimits limits;
  limits.warmup_ns = 100000;
  limits.measure_completions = 400000;
  sim.run(limits);
  const Metrics m = sim.report();
  CHECK(m.get("flush.response_mean_ns") == doctest::Approx(1.5 * d).epsilon(0.01));
  CHECK(m.get("flush.batch_mean") == doctest::Approx(lambda * d).epsilon(0.02));
  CHECK(m.get("flush.little_rel_error") < 0.01);
}
