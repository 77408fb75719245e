// vm.count: identical VMs of one profile on one host, sharing host.cores and the backend.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "models/config.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {
std::string scenario_path(const std::string& name) { return std::string(VQSIM_SOURCE_DIR) + "/scenarios/" + name; }

models::IoScenario short_run(models::ScenarioSource src, int vms, int replications = 5) {
  src.set("workload.ios", 20000).set("run.replications", replications).set("vm.count", vms);
  return src.scenario();
}

// a and b agree within their 95% intervals.
bool overlap(const sim::Interval& a, const sim::Interval& b) { return std::fabs(a.mean - b.mean) <= a.half_width + b.half_width; }
}  // namespace

TEST_CASE("one VM of vm.count is the single-VM scenario, figure for figure and event for event") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("workload.ios", 20000).set("run.replications", 2);
  models::IoScenario plain = src.scenario();
  models::IoScenario one = plain;
  src.set("vm.count", 1);
  one = src.scenario();
  plain.run.hash_events = one.run.hash_events = true;
  const auto a = models::simulate_io(plain, 1);
  const auto b = models::simulate_io(one, 1);
  CHECK(a.event_hash == b.event_hash);
  REQUIRE(a.replications.size() == b.replications.size());
  for (std::size_t r = 0; r < a.replications.size(); ++r) CHECK(a.replications[r].values == b.replications[r].values);
}

TEST_CASE("two identical VMs on one NVMe: each gets no more than one alone, together at least as much") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("workload.numjobs", 2);  // enough load that the shared device matters
  const auto alone = models::simulate_io(short_run(src, 1), 1);
  const auto two = models::simulate_io(short_run(src, 2), 1);
  const auto single = alone.get("read.iops");
  const auto first = two.get("read.iops"), second = two.get("vm1.read.iops");
  CHECK(first.mean <= single.mean + single.half_width + first.half_width);
  CHECK(second.mean <= single.mean + single.half_width + second.half_width);
  const auto total = two.get("host.total.iops");
  CHECK(total.mean + total.half_width >= single.mean - single.half_width);
  CHECK(std::fabs(total.mean - (first.mean + second.mean)) <= 1e-6 * total.mean);
  // Identical VMs: within each other's intervals.
  CHECK(overlap(first, second));
  CHECK(overlap(two.get("read.lat.mean_ns"), two.get("vm1.read.lat.mean_ns")));
  CHECK(overlap(two.get("read.clat.p99.000000_ns"), two.get("vm1.read.clat.p99.000000_ns")));
}

TEST_CASE("VMs on a null device with host.cores = 2 saturate the cores, below the MVA's bound") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("backend.kind=\"null\"").set("host.cores", 2).set("workload.iodepth", 8);
  double previous = 0;
  for (int vms : {1, 2, 4, 8}) {
    const models::IoScenario s = short_run(src, vms, 3);
    const auto r = models::simulate_io(s, 1);
    const double total = r.get("host.total.iops").mean;
    const double cpu = r.get("host.cpu.utilization").mean;
    CAPTURE(vms);
    CAPTURE(total);
    CAPTURE(cpu);
    // More VMs never lower the host's throughput much; past the cores' capacity they add nothing.
    CHECK(total >= 0.97 * previous);
    if (vms >= 4) {
      CHECK(cpu > 0.97);                // both cores busy all the time
      CHECK(total <= 1.05 * previous);  // the aggregate has saturated
      // The MVA puts the guests' CPU work on the shared cores and the QEMU threads beside them:
      // its throughput bounds the simulation's, where both compete for the cores.
      CHECK(total <= 1.02 * models::solve_io_mva(s).total_iops);
    }
    previous = total;
  }
}

TEST_CASE("vm.count is checked like every key: at least one VM") {
  models::ScenarioSource src(scenario_path("default.toml"));
  CHECK_THROWS_WITH_AS(src.set("vm.count", 0).scenario(), doctest::Contains("vm.count"), models::ConfigError);
}
