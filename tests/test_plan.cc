// `vqsim plan` logic (models/plan.h): constraint parsing, the knob and range checks, a maximize
// answer checked against independent simulations on both sides of it, a minimize answer, an
// infeasible question, a constraint that limits the answer from the other side, and identical
// results whatever the number of threads.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"
#include "models/plan.h"
#include "models/scenario.h"

using namespace vqsim;
using models::PlanConstraint;

namespace {

const std::string kScenarios = VQSIM_SOURCE_DIR "/scenarios/";

std::string message_of(const std::string& text) {
  try {
    (void)models::parse_plan_constraint(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The DES at one value of the knob, with the plan's per-point settings.
sim::Interval simulate_metric(const models::PlanRequest& q, long long value, const std::string& metric) {
  std::vector<std::string> o = q.overrides;
  o.push_back(q.knob + "=" + std::to_string(value));
  o.push_back("workload.ios=" + std::to_string(q.ios));
  o.push_back("workload.runtime=0");
  models::IoScenario s = models::load_io_scenario(q.scenario_path, o);
  s.run.replications = q.replications;
  return models::io_metric(models::simulate_io(s, 2), metric);
}

const models::PlanPoint* des_point(const models::PlanResult& r, long long value) {
  for (const auto& p : r.tried)
    if (p.method == "DES" && p.value == value) return &p;
  return nullptr;
}

models::PlanRequest iothreads_request(const std::string& bound) {
  models::PlanRequest q;
  q.scenario_path = kScenarios + "seed000-virtio-blk.toml";
  q.overrides = {"guest.num_queues=4", "workload.numjobs=4", "guest.vcpus=4", "backend.kind=nvme"};
  q.knob = "host.iothreads";
  q.goal = models::PlanGoal::minimize;
  q.constraints = {models::parse_plan_constraint("total.iops >= " + bound)};
  q.ios = 20000;
  q.threads = 2;
  return q;
}

}  // namespace

TEST_CASE("plan constraints parse with or without spaces, with k/M/G suffixes") {
  PlanConstraint c = models::parse_plan_constraint("read.clat_p99_us <= 2000");
  CHECK(c.metric == "read.clat_p99_us");
  CHECK(c.op == PlanConstraint::le);
  CHECK(c.bound == 2000);
  CHECK(c.text() == "read.clat_p99_us <= 2000");
  c = models::parse_plan_constraint("total.iops>=300k");
  CHECK(c.metric == "total.iops");
  CHECK(c.op == PlanConstraint::ge);
  CHECK(c.bound == 300000);
  CHECK(c.text() == "total.iops >= 300k");
  c = models::parse_plan_constraint("  read.lat_mean_us <1.5e3 ");
  CHECK(c.op == PlanConstraint::lt);
  CHECK(c.bound == 1500);
  c = models::parse_plan_constraint("write.iops > 1.2M");
  CHECK(c.op == PlanConstraint::gt);
  CHECK(c.bound == 1.2e6);
  CHECK(models::parse_plan_constraint("read.clat_p99.9_us <= 3000").metric == "read.clat_p99.9_us");
  // holds() on the boundary and on values that are not finite.
  CHECK(models::parse_plan_constraint("read.iops >= 5").holds(5));
  CHECK_FALSE(models::parse_plan_constraint("read.iops > 5").holds(5));
  CHECK_FALSE(models::parse_plan_constraint("read.lat_mean_us <= 5").holds(HUGE_VAL));
  CHECK_FALSE(models::parse_plan_constraint("read.lat_mean_us <= 5").holds(std::nan("")));
}

TEST_CASE("bad plan constraints say what was expected") {
  CHECK(message_of("read.clat_p99_us 2000").find("expected METRIC OP VALUE") != std::string::npos);
  CHECK(message_of("read.iops == 5").find("equality") != std::string::npos);
  CHECK(message_of("read.iops = 5").find("equality") != std::string::npos);
  CHECK(message_of("<= 5").find("metric is missing") != std::string::npos);
  CHECK(message_of("read.iops >=").find("value is missing") != std::string::npos);
  CHECK(message_of("read.iops >= abc").find("not a number") != std::string::npos);
  CHECK(message_of("read.iops >= 5x").find("not a number") != std::string::npos);
  CHECK(message_of("read.iops >= 5 < 6").find("one comparison") != std::string::npos);
  CHECK(message_of("read.clat_p99 <= 2000").find("did you mean 'read.clat_p99_us'") != std::string::npos);
  CHECK(message_of("read.iopz >= 5").find("did you mean 'read.iops'") != std::string::npos);
  CHECK(message_of("read.clat_p98_us <= 5").find("not one of them") != std::string::npos);
  CHECK(message_of("total.clat_p99_us <= 5").find("unknown metric") != std::string::npos);
}

TEST_CASE("plan knobs and ranges") {
  CHECK_NOTHROW(models::check_plan_knob("workload.numjobs"));
  CHECK_THROWS_WITH_AS(models::check_plan_knob("host.aio"), doctest::Contains("not an integer knob"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(models::check_plan_knob("workload.numjob"), doctest::Contains("did you mean 'workload.numjobs'"),
                       std::invalid_argument);
  long long lo = 0, hi = 0;
  CHECK(models::plan_default_range("host.iothreads", &lo, &hi));
  CHECK(lo == 0);
  CHECK(hi == 16);
  CHECK_FALSE(models::plan_default_range("guest.queue_size", &lo, &hi));
  models::parse_plan_range("2:64", &lo, &hi);
  CHECK(lo == 2);
  CHECK(hi == 64);
  CHECK_THROWS_AS(models::parse_plan_range("64", &lo, &hi), std::invalid_argument);
  CHECK_THROWS_AS(models::parse_plan_range("8:2", &lo, &hi), std::invalid_argument);
  CHECK_THROWS_AS(models::parse_plan_range("a:b", &lo, &hi), std::invalid_argument);

  models::PlanRequest q;
  q.scenario_path = kScenarios + "seed004-vm.toml";
  q.knob = "guest.queue_size";
  q.constraints = {models::parse_plan_constraint("read.iops >= 5")};
  CHECK_THROWS_WITH_AS(models::run_plan(q), doctest::Contains("--range"), std::invalid_argument);
  q.knob = "workload.numjobs";
  q.lo = 0;
  q.hi = 4;  // numjobs 0 is not a valid scenario
  CHECK_THROWS_AS(models::run_plan(q), models::ConfigError);
  q.constraints.clear();
  CHECK_THROWS_AS(models::run_plan(q), std::invalid_argument);
}

TEST_CASE("plan: the largest numjobs of seed 004's VM with p99 clat <= 1500 us, checked on both sides by DES") {
  models::PlanRequest q;
  q.scenario_path = kScenarios + "seed004-vm.toml";
  q.knob = "workload.numjobs";
  q.goal = models::PlanGoal::maximize;
  q.constraints = {models::parse_plan_constraint("read.clat_p99_us <= 1500")};
  q.ios = 20000;
  q.threads = 2;
  const models::PlanResult r = models::run_plan(q);
  REQUIRE(r.feasible);
  CHECK_FALSE(r.at_range_end);
  CHECK(r.answer > 1);
  CHECK(r.answer < 32);  // 32 jobs (the seed's own) give ~1.7 ms p99 clat
  REQUIRE(r.answer_checks.size() == 1);
  CHECK(r.answer_checks[0].satisfied);
  CHECK(r.answer_checks[0].value.mean <= 1500);
  // Independent simulations: the answer satisfies the bound, the next value violates it.
  CHECK(simulate_metric(q, r.answer, "read.clat_p99_us").mean <= 1500);
  CHECK(simulate_metric(q, r.answer + 1, "read.clat_p99_us").mean > 1500);
  // Both were among the simulated points, with the same verdicts.
  REQUIRE(des_point(r, r.answer) != nullptr);
  REQUIRE(des_point(r, r.answer + 1) != nullptr);
  CHECK(des_point(r, r.answer)->satisfied);
  CHECK_FALSE(des_point(r, r.answer + 1)->satisfied);
  // MVA came first.
  REQUIRE_FALSE(r.tried.empty());
  CHECK(r.tried.front().method == "MVA");
  CHECK(r.message.find("the largest workload.numjobs") != std::string::npos);
  for (const auto& [name, v] : r.answer_metrics) CHECK(std::isfinite(v.mean));
}

TEST_CASE("plan: the fewest IOThreads for a total IOPS target, and an infeasible target") {
  const models::PlanResult r = models::run_plan(iothreads_request("400k"));
  REQUIRE(r.feasible);
  CHECK(r.answer == 2);  // the main loop and one IOThread each saturate below 400k
  REQUIRE(des_point(r, 2) != nullptr);
  REQUIRE(des_point(r, 1) != nullptr);
  CHECK(des_point(r, 2)->satisfied);
  CHECK_FALSE(des_point(r, 1)->satisfied);

  const models::PlanResult none = models::run_plan(iothreads_request("10M"));
  CHECK_FALSE(none.feasible);
  CHECK(none.answer == 16);  // the best end of the range
  REQUIRE(none.answer_checks.size() == 1);
  CHECK_FALSE(none.answer_checks[0].satisfied);
  CHECK(none.message.find("no value of host.iothreads in [0, 16] satisfies total.iops >= 10M; the best is 16") !=
        std::string::npos);
}

TEST_CASE("plan: a constraint that limits the answer from the other side is checked at the answer") {
  models::PlanRequest q;
  q.scenario_path = kScenarios + "seed000-virtio-scsi.toml";
  q.knob = "workload.iodepth";
  q.goal = models::PlanGoal::maximize;
  q.lo = 1;
  q.hi = 128;
  q.ios = 20000;
  q.threads = 2;
  q.constraints = {models::parse_plan_constraint("read.clat_p99_us <= 500"), models::parse_plan_constraint("total.iops >= 50k")};
  const models::PlanResult r = models::run_plan(q);
  REQUIRE(r.reversed.size() == 2);
  CHECK_FALSE(r.reversed[0]);
  CHECK(r.reversed[1]);  // IOPS grow with the depth: a floor on the depth, not a ceiling
  REQUIRE(r.feasible);
  CHECK(r.answer > 8);
  CHECK(r.answer < 128);
  // A target the depth that keeps p99 under 500 us cannot reach: infeasible, at that depth.
  q.constraints[1] = models::parse_plan_constraint("total.iops >= 80k");
  const models::PlanResult none = models::run_plan(q);
  CHECK_FALSE(none.feasible);
  CHECK(none.answer == r.answer);
  CHECK(none.message.find("the largest with read.clat_p99_us <= 500 is") != std::string::npos);
}

TEST_CASE("plan: identical results with 1 and 2 threads") {
  models::PlanRequest q = iothreads_request("400k");
  q.threads = 1;
  const models::PlanResult a = models::run_plan(q);
  q.threads = 2;
  const models::PlanResult b = models::run_plan(q);
  CHECK(a.answer == b.answer);
  CHECK(a.message == b.message);
  REQUIRE(a.tried.size() == b.tried.size());
  for (std::size_t i = 0; i < a.tried.size(); ++i) {
    CHECK(a.tried[i].value == b.tried[i].value);
    CHECK(a.tried[i].method == b.tried[i].method);
    REQUIRE(a.tried[i].checks.size() == b.tried[i].checks.size());
    for (std::size_t k = 0; k < a.tried[i].checks.size(); ++k) {
      CHECK(a.tried[i].checks[k].value.mean == b.tried[i].checks[k].value.mean);
      CHECK(a.tried[i].checks[k].value.half_width == b.tried[i].checks[k].value.half_width);
    }
  }
}
