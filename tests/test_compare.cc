// Paired what-if comparisons (calibration/predict/compare.h, docs/compare.md): a setup compared
// with itself is exactly no difference, a real change is found with an interval far narrower than
// the two separate ones, results do not depend on the thread count, a calibrated scenario's
// draws are shared by both sides, and --vs settings split as a user writes them. Every run is
// small (10000 I/Os, 50000 for the narrowing, 3 replications, at most 6 draws).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/predict/compare.h"
#include "models/config.h"

using namespace vqsim;

namespace {

const std::string kDefault = VQSIM_SOURCE_DIR "/scenarios/default.toml";
const std::vector<std::string> kSmall = {"workload.ios=10000", "workload.runtime=0", "run.replications=3"};

predict::CompareOptions options(const std::string& path, std::vector<std::vector<std::string>> vs, int threads = 2) {
  predict::CompareOptions o;
  o.scenario_path = path;
  o.overrides = kSmall;
  o.vs = std::move(vs);
  o.threads = threads;
  return o;
}

const predict::MetricComparison& metric(const predict::Comparison& c, const std::string& name) {
  for (const auto& m : c.metrics)
    if (m.name == name) return m;
  throw std::logic_error("no metric " + name);
}

}  // namespace

TEST_CASE("compare: a setup compared with itself is no significant difference, with an interval holding 0") {
  // host.aio is already native in the default scenario.
  const auto r = predict::compare(options(kDefault, {{"host.aio=native"}}));
  REQUIRE(r.comparisons.size() == 1);
  REQUIRE(!r.comparisons[0].metrics.empty());
  for (const auto& m : r.comparisons[0].metrics) {
    CAPTURE(m.name);
    CHECK(m.delta == 0);
    CHECK(m.delta_rel == 0);
    CHECK(m.lower_rel <= 0);
    CHECK(m.upper_rel >= 0);
    CHECK(m.verdict == "no significant difference");
  }
}

TEST_CASE("compare: the main loop instead of an IOThread is worse, and pairing narrows the interval at least 3x") {
  // 50000 I/Os: measured with 3 replications, the pairing narrows the IOPS interval 24x at 50000
  // I/Os but only 2x at 10000 (docs/compare.md).
  auto o = options(kDefault, {{"host.iothreads=0"}});
  o.overrides[0] = "workload.ios=50000";
  const auto r = predict::compare(o);
  const auto& c = r.comparisons[0];
  for (const char* name : {"read.iops", "read.lat_mean_us"}) {
    CAPTURE(name);
    const auto& m = metric(c, name);
    CHECK(m.verdict == "worse");
    const double paired = (m.upper_rel - m.lower_rel) / 2;
    CHECK(paired > 0);
    CHECK(3 * paired < m.unpaired_half_width_rel);
  }
  CHECK(metric(c, "read.iops").higher_is_better);
  CHECK(!metric(c, "read.lat_mean_us").higher_is_better);
  CHECK(metric(c, "read.iops").delta < 0);
}

TEST_CASE("compare: the same answer with 1 and 2 threads") {
  const auto a = predict::compare(options(kDefault, {{"host.iothreads=0"}, {"workload.iodepth=8"}}, 1));
  const auto b = predict::compare(options(kDefault, {{"host.iothreads=0"}, {"workload.iodepth=8"}}, 2));
  REQUIRE(a.comparisons.size() == b.comparisons.size());
  for (std::size_t j = 0; j < a.comparisons.size(); ++j) {
    REQUIRE(a.comparisons[j].metrics.size() == b.comparisons[j].metrics.size());
    for (std::size_t i = 0; i < a.comparisons[j].metrics.size(); ++i) {
      const auto &x = a.comparisons[j].metrics[i], &y = b.comparisons[j].metrics[i];
      CHECK(x.delta == y.delta);
      CHECK(x.lower_rel == y.lower_rel);
      CHECK(x.upper_rel == y.upper_rel);
    }
  }
}

TEST_CASE("compare: a calibrated scenario shares its parameter draws between the sides") {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-compare";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "calibrated.toml").string();
  std::ofstream(path) << "base = \"" << kDefault << "\"\n"
                      << "[backend]\nchannels = 4\nread_us = 90\n"
                      << "[calibration]\nparams = [\"backend.read_us\"]\nlog_sd = [0.2]\nlog_corr = [[1.0]]\ndraws = 6\n"
                      << "source = \"test\"\n";
  SUBCASE("itself: the draws cancel exactly") {
    const auto r = predict::compare(options(path, {{"host.aio=native"}}));
    CHECK(r.draws == 6);
    const auto& m = metric(r.comparisons[0], "read.iops");
    CHECK(m.delta == 0);
    CHECK(m.param_half_width_log == 0);
    CHECK(m.lower_rel == 0);
    CHECK(m.upper_rel == 0);
  }
  SUBCASE("a change the device time dominates: the draws move both sides together") {
    // Device-bound at 4 channels of ~90 us: the IOThread's cost barely matters, and the device
    // time's +-40% moves base and alternative alike; the unpaired intervals carry it twice.
    const auto r = predict::compare(options(path, {{"host.iothreads=0"}}));
    const auto& m = metric(r.comparisons[0], "read.iops");
    CHECK(m.param_half_width_log < m.unpaired_half_width_rel / 3);
  }
  SUBCASE("the unpaired figure is two `vqsim run` intervals: each side's model error included, the paired one without") {
    const auto r = predict::compare(options(path, {{"host.iothreads=0"}}));
    const auto& m = metric(r.comparisons[0], "read.iops");
    // No terms in the table: both sides take the documented prior for an unmeasured setup.
    const double model = 1.96 * predict::prior_model_error("throughput", "unmeasured setup");
    CHECK(m.unpaired_half_width_rel > std::hypot(model, model));
    CHECK(m.upper_rel - m.lower_rel < model);
  }
  SUBCASE("no draws when asked for none") {
    auto o = options(path, {{"host.iothreads=0"}});
    o.draws = 0;
    const auto r = predict::compare(o);
    CHECK(r.draws == 0);
    CHECK(metric(r.comparisons[0], "read.iops").param_half_width_log == 0);
  }
}

TEST_CASE("compare: a misspelt --vs key names the --vs it came from") {
  try {
    predict::compare(options(kDefault, {{"host.iothread=2"}}));
    FAIL("no error");
  } catch (const models::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("--vs host.iothread=2") != std::string::npos);
    CHECK(what.find("host.iothreads") != std::string::npos);
  }
}

TEST_CASE("split_settings: commas between settings, not inside a value") {
  CHECK(predict::split_settings("host.aio=io_uring") == std::vector<std::string>{"host.aio=io_uring"});
  CHECK(predict::split_settings("host.aio=io_uring, host.iothreads=2") ==
        std::vector<std::string>{"host.aio=io_uring", "host.iothreads=2"});
  CHECK(predict::split_settings("backend.service={dist=\"lognormal\", median=\"18us\"},host.iothreads=1") ==
        std::vector<std::string>{"backend.service={dist=\"lognormal\", median=\"18us\"}", "host.iothreads=1"});
  CHECK_THROWS_AS(predict::split_settings(""), std::invalid_argument);
  CHECK_THROWS_AS(predict::split_settings("host.aio=io_uring,"), std::invalid_argument);
  CHECK_THROWS_AS(predict::split_settings("io_uring"), std::invalid_argument);
  CHECK_THROWS_AS(predict::split_settings("=io_uring"), std::invalid_argument);
}
