// The scenario-described network end to end: built, simulated, compared with exact MVA, and
// repeatable bit for bit (the golden run of scenarios/engine/tandem.toml at reduced length).
#include <doctest/doctest.h>

#include <fstream>

#include "models/network.h"
#include "sim/replications.h"
#include "tests/validation_support.h"

using namespace vqsim;

namespace {
std::vector<sim::Metrics> run_scenario(const models::NetworkScenario& sc, int threads) {
  return sim::run_replications(sc.replications, threads, [&](std::uint64_t r) {
    sim::Simulator s(sc.seed, r);
    models::build_network(sc, s);
    s.run(sc.limits);
    return s.report();
  });
}
}  // namespace

TEST_CASE("default scenario: closed tandem matches exact MVA and Little's law, reduced length") {
  models::NetworkScenario sc = models::load_network(VQSIM_SOURCE_DIR "/scenarios/engine/tandem.toml", {"run.completions=100000"});
  const auto mva = models::solve_network_mva(sc);
  REQUIRE(mva.has_value());
  const auto runs = run_scenario(sc, 0);
  test::check_inside(runs, "population.throughput_per_s", mva->throughput[0] * 1e9);
  test::check_inside(runs, "population.response_mean_ns", mva->cycle_time[0]);
  for (const auto& m : runs) CHECK(m.get("run.little_worst_rel_error") < 0.01);
}

TEST_CASE("default scenario: same seed gives identical figures with 1 or 2 threads; another seed does not") {
  models::NetworkScenario sc =
      models::load_network(VQSIM_SOURCE_DIR "/scenarios/engine/tandem.toml", {"run.completions=20000", "run.replications=4"});
  const auto one = run_scenario(sc, 1);
  const auto two = run_scenario(sc, 2);
  REQUIRE(one.size() == two.size());
  for (std::size_t r = 0; r < one.size(); ++r) CHECK(one[r].values == two[r].values);
  sc.seed += 1;
  CHECK(run_scenario(sc, 2)[0].values != one[0].values);
}

TEST_CASE("open network with a shared CPU: two FCFS stations on one core behave as one M/M/1") {
  const char* text = R"(
[run]
warmup_completions = 20000
completions = 400000
replications = 10
[source]
interarrival = { dist = "exponential", mean = "20us" }
[[cpu]]
name = "core"
cores = 1
[[station]]
name = "a"
servers = 1
service = { dist = "exponential", mean = "5us" }
cpu = "core"
[[station]]
name = "b"
servers = 1
service = { dist = "exponential", mean = "5us" }
cpu = "core"
)";
  // Each job visits a then b; both run on the single core, so a job at b delays one at a.
  // The core alone is work-conserving with exponential demands of mean 5 µs, visited twice:
  // its utilization is 2 x 5 / 20 = 0.5 whatever the sharing.
  const std::string path = "/tmp/vqsim-test-shared-cpu.toml";
  std::ofstream(path) << text;
  const auto sc = models::load_network(path);
  CHECK_FALSE(models::solve_network_mva(sc).has_value());
  const auto runs = run_scenario(sc, 0);
  test::check_inside(runs, "core.utilization", 0.5);
  for (const auto& m : runs) CHECK(m.get("run.little_worst_rel_error") < 0.01);
}
