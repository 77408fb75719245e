// Prediction intervals with parameter uncertainty (calibration/predict, docs/prediction.md): the
// sampler's distribution, no parameter uncertainty giving the simulation's own interval, a wide
// device-time uncertainty widening the IOPS interval around the nominal, identical results
// whatever the thread count, keys given by --set held fixed, and a correlation matrix that is not
// positive definite. Every run is small (20000 I/Os, at most 8 draws).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "calibration/predict/prediction.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

// A calibrated scenario on top of scenarios/default.toml, device-bound: 4 NVMe channels of 90 µs
// at iodepth 32 serve at most about 44k IOPS, far below what the guest and host could push.
std::string write_scenario(const std::string& name, const std::string& calibration) {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-prediction";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << "base = \"" << VQSIM_SOURCE_DIR << "/scenarios/default.toml\"\n"
                      << "[run]\nreplications = 3\n"
                      << "[workload]\nios = 20000\n"
                      << "[guest]\ncpu_scale = 1.1\n"
                      << "[host]\ncpu_scale = 0.9\n"
                      << "[backend]\nchannels = 4\nread_us = 90\n"
                      << "[calibration]\n"
                      << calibration;
  return path.string();
}

const std::string kTwoKeys =
    "params = [\"guest.cpu_scale\", \"backend.read_us\"]\n"
    "log_corr = [[1.0, -0.4], [-0.4, 1.0]]\n"
    "source = \"test\"\n";

struct Run {
  models::IoScenario s;
  models::IoRunReport report;
};

Run nominal(const std::string& path, const std::vector<std::string>& overrides = {}) {
  Run r{models::load_io_scenario(path, overrides), {}};
  r.report = models::simulate_io(r.s, 2);
  return r;
}

const predict::MetricPrediction* find(const predict::Prediction& p, const std::string& name) {
  for (const auto& m : p.metrics)
    if (m.name == name) return &m;
  return nullptr;
}

// "key=value" overrides of one draw as a map.
std::map<std::string, double> values_of(const std::vector<std::string>& overrides) {
  std::map<std::string, double> out;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    out[o.substr(0, eq)] = std::strtod(o.c_str() + eq + 1, nullptr);
  }
  return out;
}

}  // namespace

TEST_CASE("parameter draws: log-normal with the table's sd and correlation, from the seed") {
  const std::string path = write_scenario("sampler.toml", kTwoKeys + "log_sd = [0.05, 0.12]\ndraws = 2000\n");
  models::IoScenario s = models::load_io_scenario(path);
  const auto draws = predict::parameter_draws(s);
  REQUIRE(draws.size() == 2000);
  double n = 0, sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (const auto& d : draws) {
    REQUIRE(d.size() == 2);
    auto v = values_of(d);
    const double a = std::log(v.at("guest.cpu_scale") / 1.1), b = std::log(v.at("backend.read_us") / 90);
    n += 1;
    sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b;
  }
  const double ma = sa / n, mb = sb / n;
  const double va = saa / n - ma * ma, vb = sbb / n - mb * mb, cab = sab / n - ma * mb;
  CHECK(std::fabs(ma) < 0.005);
  CHECK(std::fabs(mb) < 0.012);
  CHECK(std::sqrt(va) == doctest::Approx(0.05).epsilon(0.06));
  CHECK(std::sqrt(vb) == doctest::Approx(0.12).epsilon(0.06));
  CHECK(cab / std::sqrt(va * vb) == doctest::Approx(-0.4).epsilon(0.15));
  // Deterministic, and another seed gives other draws.
  CHECK(predict::parameter_draws(s) == draws);
  s.run.seed = 2;
  CHECK(predict::parameter_draws(s) != draws);
  // The correlation factor reproduces a positive definite matrix.
  const auto l = predict::correlation_factor(s.calibration.log_corr);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) CHECK(l[i][0] * l[j][0] + l[i][1] * l[j][1] == doctest::Approx(s.calibration.log_corr[i][j]));
}

const std::string kNoModelError = "model_error = { throughput = 0, \"mean latency\" = 0, p50 = 0, p99 = 0, \"p99.9\" = 0 }\n";

TEST_CASE("parameter draws: with a second explanation (modes), the centres are shared by the modes' weights") {
  const std::map<std::string, double> estimate = {{"guest.cpu_scale", 1.1}, {"backend.read_us", 90}};
  const std::map<std::string, double> other = {{"guest.cpu_scale", 1.5}, {"backend.read_us", 45}};
  // Without weights, equal shares: the first half of the draws at the estimate, the rest at the mode.
  const std::string path = write_scenario("modes.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 4\nmodes = [[1.5, 45]]\n");
  const models::IoScenario s = models::load_io_scenario(path);
  REQUIRE(s.calibration.modes.size() == 1);
  const auto draws = predict::parameter_draws(s);
  REQUIRE(draws.size() == 4);
  CHECK(values_of(draws[0]) == estimate);
  CHECK(values_of(draws[1]) == estimate);
  CHECK(values_of(draws[2]) == other);
  CHECK(values_of(draws[3]) == other);
  // A weight of 0.25: one draw in four at the mode.
  const std::string weighted =
      write_scenario("weighted.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 8\nmodes = [[1.5, 45]]\nmode_weights = [0.25]\n");
  const auto w = predict::parameter_draws(models::load_io_scenario(weighted));
  int at_mode = 0;
  for (const auto& dr : w) at_mode += values_of(dr) == other;
  CHECK(at_mode == 2);
  const std::string bad = write_scenario("bad-modes.toml", kTwoKeys + "log_sd = [0, 0]\nmodes = [[1.5]]\n");
  CHECK_THROWS_WITH_AS(models::load_io_scenario(bad), doctest::Contains("each mode needs 2 values"), models::ConfigError);
}

TEST_CASE("prediction: no parameter uncertainty and no model error give the simulation's own interval") {
  const std::string path = write_scenario("zero.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 4\n" + kNoModelError);
  const Run r = nominal(path);
  const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
  CHECK(p.draws == 4);
  REQUIRE(p.metrics.size() == 7);  // reads only: iops, bw_kib, lat/clat mean, clat p50/p99/p99.9
  for (const auto& d : p.overrides) CHECK(d == std::vector<std::string>{"guest.cpu_scale=1.1", "backend.read_us=90"});
  for (const auto& m : p.metrics) {
    CAPTURE(m.name);
    const sim::Interval sim = models::io_metric(r.report, m.name);
    CHECK(m.mean == sim.mean);
    CHECK(m.sim_half_width == sim.half_width);
    CHECK(m.param_sd_rel == 0);
    CHECK(m.param_share == 0);
    // The interval is the simulation's, taken in log space: ln(upper / mean) = half_width / mean.
    CHECK(std::log(m.upper / m.mean) == doctest::Approx(sim.half_width / sim.mean).epsilon(1e-9));
    CHECK(std::log(m.mean / m.lower) == doctest::Approx(sim.half_width / sim.mean).epsilon(1e-9));
    CHECK(m.lower == doctest::Approx(sim.lower).epsilon(1e-3));
    CHECK(m.upper == doctest::Approx(sim.upper).epsilon(1e-3));
  }
}

TEST_CASE("prediction: the model's own error widens the interval by its term, at the setup's distance") {
  const std::string terms =
      "model_error = { throughput = 0.2, \"mean latency\" = 0.1, p50 = 0.3, p99 = 0.4, \"p99.9\" = 0.5 }\n"
      "model_error_fitted = { throughput = 0.05, \"mean latency\" = 0.05, p50 = 0.05, p99 = 0.05, \"p99.9\" = 0.05 }\n"
      "model_error_source = \"test\"\n";
  auto half = [](const predict::MetricPrediction& m) { return std::log(m.upper / m.mean); };
  auto expected = [](const predict::MetricPrediction& m, double sd) { return std::hypot(m.sim_half_width / m.mean, 1.96 * sd); };
  // A table with the terms above, `key` at `sd` for every kind, fitted on the setup `signature`;
  // the prediction of it with `overrides` has that distance and takes that term.
  auto takes_term = [&](const std::string& file, const std::string& key, double sd, const std::string& signature,
                        const std::vector<std::string>& overrides, const std::string& distance) {
    const std::string v = std::to_string(sd);
    const std::string path = write_scenario(
        file, kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n" + terms + key + " = { throughput = " + v + ", \"mean latency\" = " + v +
                  ", p50 = " + v + ", p99 = " + v + ", \"p99.9\" = " + v + " }\nfitted_setups = [\"" + signature + "\"]\n");
    const Run r = nominal(path, overrides);
    const predict::Prediction p = predict::predict(path, overrides, r.s, r.report, 2);
    CHECK(p.distance == distance);
    for (const auto& m : p.metrics) CHECK(half(m) == doctest::Approx(expected(m, sd)).epsilon(1e-9));
  };
  SUBCASE("a setup the calibration did not measure takes model_error, per figure kind") {
    const std::string path = write_scenario("model-error.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n" + terms);
    const Run r = nominal(path);
    const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
    CHECK(p.distance == "unmeasured setup");
    CHECK(p.model_error_source == "test");
    for (const auto& m : p.metrics) {
      CAPTURE(m.name);
      const double sd = models::figure_kind(m.name) == "throughput"     ? 0.2
                        : models::figure_kind(m.name) == "mean latency" ? 0.1
                        : m.name == "read.clat_p50_us"                  ? 0.3
                        : m.name == "read.clat_p99_us"                  ? 0.4
                                                                        : 0.5;
      CHECK(m.model_sd_rel == sd);
      CHECK(half(m) == doctest::Approx(expected(m, sd)).epsilon(1e-9));
    }
  }
  SUBCASE(
      "a fitted setup takes model_error_fitted; the same configuration with another rw takes model_error_workload (here absent: "
      "model_error)") {
    const std::string probe = write_scenario("probe.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n" + terms);
    const std::string signature = models::setup_signature(models::load_io_scenario(probe));
    const std::string path = write_scenario(
        "fitted.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n" + terms + "fitted_setups = [\"" + signature + "\"]\n");
    const Run r = nominal(path);
    const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
    CHECK(p.distance == "fitted setup");
    for (const auto& m : p.metrics) CHECK(half(m) == doctest::Approx(expected(m, 0.05)).epsilon(1e-9));
    const Run other = nominal(path, {"workload.rw=randwrite"});
    const predict::Prediction q = predict::predict(path, {"workload.rw=randwrite"}, other.s, other.report, 2);
    CHECK(q.distance == "another workload");
    for (const auto& m : q.metrics)
      CHECK(m.model_sd_rel == predict::model_error_for(other.s.calibration, m.name, "unmeasured setup"));
    // A depth no fitted run of this configuration had: another depth, not another workload; its
    // term, with none in the table, the prior measured at that distance.
    const models::IoScenario deeper = models::load_io_scenario(path, {"workload.iodepth=8"});
    CHECK(predict::setup_distance(deeper) == "another depth");
    CHECK(predict::model_error_for(deeper.calibration, "read.iops", "another depth") ==
          predict::prior_model_error("throughput", "another depth"));
    takes_term("depth.toml", "model_error_depth", 0.25, signature, {"workload.iodepth=8"}, "another depth");
    CHECK(predict::setup_distance(models::load_io_scenario(path, {"host.aio=threads"})) == "unmeasured setup");
    // A key the signature does not hold counts by what it does to the model: half the device's
    // channels halve this device-bound setup's IOPS; one core for the host changes none of its
    // figures (its slat is the submit's own work, guest.fio_submit_first).
    const models::ScenarioSource file(path);
    CHECK(predict::configuration_changed_by(file, {"backend.channels=2"}, {}) == "backend.channels=2");
    CHECK(predict::configuration_changed_by(file, {"host.cores=1"}, {}).empty());
    CHECK(predict::configuration_changed_by(file, {"workload.iodepth=8", "run.seed=3"}, {}).empty());
    const Run fewer_channels = nominal(path, {"backend.channels=2"});
    const predict::Prediction c = predict::predict(path, {"backend.channels=2"}, fewer_channels.s, fewer_channels.report, 2);
    CHECK(c.distance == "unmeasured setup");
    CHECK(c.distance_note.find("backend.channels=2") != std::string::npos);
  }
  SUBCASE("another workload of a fitted configuration takes model_error_workload") {
    const std::string probe = write_scenario("probe2.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n" + terms);
    const std::string signature = models::setup_signature(models::load_io_scenario(probe));
    takes_term("workload.toml", "model_error_workload", 0.15, signature, {"workload.rw=randwrite"}, "another workload");
  }
  SUBCASE("configuration_signature drops the workload's fields only") {
    CHECK(
        predict::configuration_signature("driver=virtio-blk;vcpus=1;rw=randread;bs=4096,4096;ioengine=libaio;iodepth=1;numjobs=1;"
                                         "qemu=7.2") == "driver=virtio-blk;vcpus=1;qemu=7.2");
    CHECK(predict::distance_between("a=1;rw=read;iodepth=4", {"a=1;rw=write;iodepth=4"}) == "another workload");
    // The same configuration at a depth (or number of jobs) it was not fitted at: every queue runs
    // at another length than any fitted run of it measured, whether or not another configuration
    // was fitted at that depth.
    CHECK(predict::distance_between("a=1;rw=read;iodepth=4;numjobs=1", {"a=1;rw=read;iodepth=1;numjobs=1"}) == "another depth");
    CHECK(predict::distance_between("a=1;rw=read;iodepth=4;numjobs=1",
                                    {"a=1;rw=read;iodepth=1;numjobs=1", "a=2;rw=read;iodepth=4;numjobs=1"}) == "another depth");
    CHECK(predict::distance_between("a=1;rw=write;iodepth=1;numjobs=2",
                                    {"a=1;rw=read;iodepth=1;numjobs=1", "a=2;rw=read;iodepth=4;numjobs=1"}) == "another depth");
    // The depth is the run's own, not that of the guests beside it.
    CHECK(predict::distance_between("a=1;iodepth=4;co_running=1x{x;iodepth=1}", {"a=1;iodepth=1;co_running=1x{x;iodepth=1}"}) ==
          "another depth");
    CHECK(predict::distance_between("a=1;iodepth=4;co_running=1x{x;iodepth=1}",
                                    {"a=1;iodepth=4;co_running=1x{x;iodepth=4}",
                                     "a=1;rw=write;iodepth=4;co_running=1x{x;iodepth=1}"}) == "another workload");
    CHECK(predict::distance_between("a=2;rw=read", {"a=1;rw=read"}) == "unmeasured setup");
    // Each value fitted, in other combinations: a new combination; one value never fitted: another
    // configuration, however many of the others were.
    CHECK(predict::distance_between("a=2;b=1;rw=read", {"a=1;b=1;rw=read", "a=2;b=2;rw=write"}) == "new combination");
    CHECK(predict::distance_between("a=2;b=3;rw=read", {"a=1;b=1;rw=read", "a=2;b=2;rw=write"}) == "unmeasured setup");
    // A key the signature leaves out has its default: KVM (no accel field) from TCG runs is a value
    // never fitted, and so is the default of a device figure every fitted run set.
    CHECK(predict::distance_between("a=2;b=1;rw=read", {"a=1;b=1;accel=tcg;rw=read", "a=2;b=2;accel=tcg;rw=write"}) ==
          "unmeasured setup");
    CHECK(predict::distance_between("a=2;b=1;rw=read", {"a=1;b=1;accel=tcg;rw=read", "a=2;b=2;rw=write"}) == "new combination");
    // A null device's aio= and cache= measured no AIO engine and no page cache.
    CHECK(predict::distance_between("backend=file;aio=native;rw=read",
                                    {"backend=file;aio=threads;rw=read", "backend=null;aio=native;rw=read"}) ==
          "unmeasured setup");
    CHECK(predict::distance_between("backend=null;aio=threads;b=2;rw=read",
                                    {"backend=null;aio=native;b=1;rw=read", "backend=file;aio=threads;b=2;rw=read"}) ==
          "new combination");
    // The guests beside it are one field: K = 2 is not made of the fields of K = 1 and K = 3.
    CHECK(predict::distance_between("a=1;co_running=2x{x;y};backend=s", {"a=1;co_running=1x{x;y};backend=s"}) ==
          "unmeasured setup");
    CHECK(predict::distance_between("a=1;rw=read", {"a=1;rw=read"}) == "fitted setup");
  }
  SUBCASE("a table without terms (written before they existed) takes the documented prior") {
    const std::string path = write_scenario("old.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 2\n");
    const Run r = nominal(path);
    const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
    CHECK(p.model_error_source.find("documented prior") != std::string::npos);
    CHECK(p.distance == "unmeasured setup");
    for (const auto& m : p.metrics) CHECK(m.model_sd_rel == predict::prior_model_error(models::figure_kind(m.name), p.distance));
    CHECK(predict::prior_model_error("throughput") > 0);
    for (const char* kind : {"throughput", "mean latency", "p50", "p99", "p99.9"}) {
      // A new combination of fitted values has its own prior (the lab's knob split on another
      // recording), no wider than another configuration's.
      CHECK(predict::prior_model_error(kind, "new combination") > 0);
      CHECK(predict::prior_model_error(kind, "new combination") <= predict::prior_model_error(kind, "unmeasured setup"));
      CHECK(predict::prior_model_error(kind, "unmeasured setup") > 0);
      CHECK(predict::prior_model_error(kind, "another workload") > 0);
      // The lab's errors grow with the distance from what was measured: another workload (another
      // rw at a fitted depth) before another depth (a configuration fitted at iodepth 1, predicted
      // at 4-64).
      CHECK(predict::prior_model_error(kind, "another depth") >= predict::prior_model_error(kind, "another workload"));
      // A new combination's share of another configuration's error, measured on the same recording.
      CHECK(predict::combination_share(kind) > 0);
      CHECK(predict::combination_share(kind) < 1);
    }
    CHECK(predict::prior_model_error("throughput", "unmeasured setup") >
          predict::prior_model_error("throughput", "another workload"));
  }
  SUBCASE("a term of an unknown kind is an error naming the kinds") {
    const std::string path = write_scenario("bad-kind.toml", kTwoKeys + "log_sd = [0, 0]\nmodel_error = { iops = 0.2 }\n");
    CHECK_THROWS_WITH_AS(models::load_io_scenario(path), doctest::Contains("unknown figure kind 'iops'"), models::ConfigError);
  }
}

TEST_CASE("prediction: uncertain device time widens the IOPS interval of a device-bound run") {
  const std::string path = write_scenario(
      "device.toml",
      "params = [\"backend.read_us\"]\nlog_sd = [0.2]\nlog_corr = [[1.0]]\ndraws = 8\nsource = \"test\"\n" + kNoModelError);
  const Run r = nominal(path);
  REQUIRE(r.report.bottleneck == "device");
  const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
  const auto* iops = find(p, "read.iops");
  REQUIRE(iops != nullptr);
  const sim::Interval sim = models::io_metric(r.report, "read.iops");
  CHECK(iops->mean == sim.mean);
  CHECK(iops->lower < sim.lower);
  CHECK(iops->upper > sim.upper);
  CHECK(iops->lower < sim.mean);
  CHECK(iops->upper > sim.mean);
  // IOPS is about 1/read_us here, so ln(IOPS) spreads like ln(read_us): sd 0.2 (8 draws).
  CHECK(iops->param_sd_rel > 0.08);
  CHECK(iops->param_sd_rel < 0.4);
  CHECK(iops->param_share > 0.99);
  CHECK(iops->upper / iops->lower > 1.3);
  for (const auto& m : p.metrics) {
    CAPTURE(m.name);
    CHECK(std::isfinite(m.lower));
    CHECK(std::isfinite(m.upper));
    CHECK(m.lower <= m.mean);
    CHECK(m.upper >= m.mean);
  }
}

TEST_CASE("the mixture's 95% interval: one point is the normal's, points alone their extremes, two modes asymmetric") {
  const auto one = predict::mixture_interval95({1.0, 1.0, 1.0}, 0.1);
  CHECK(one.first == doctest::Approx(1.0 - 0.196).epsilon(1e-12));
  CHECK(one.second == doctest::Approx(1.0 + 0.196).epsilon(1e-12));
  // 32 points without spread: the nearest-rank 2.5% and 97.5% are the lowest and the highest.
  std::vector<double> points;
  for (int i = 0; i < 32; ++i) points.push_back(0.01 * i);
  CHECK(predict::mixture_interval95(points, 0) == std::pair<double, double>{0.0, 0.31});
  // Three in four at 0, one at ln 2: the interval reaches to about ln 2 above and barely below.
  const std::vector<double> two = {0, 0, 0, std::log(2.0)};
  const auto m = predict::mixture_interval95(two, 0.05);
  CHECK(predict::mixture_cdf(two, 0.05, m.first) == doctest::Approx(0.025).epsilon(1e-6));
  CHECK(predict::mixture_cdf(two, 0.05, m.second) == doctest::Approx(0.975).epsilon(1e-6));
  CHECK(-m.first < 0.1);
  CHECK(m.second > std::log(2.0));
  CHECK(m.second < std::log(2.0) + 0.1);
  CHECK(predict::mixture_interval95({}, 1) == std::pair<double, double>{0, 0});
}

TEST_CASE("prediction: from point draws (FIT.toml's new form), the interval is their mixture: asymmetric where they are") {
  // Four equal-weight components, each a point: three at the estimate, one with the device twice
  // as fast. Device-bound, so that draw's IOPS is about twice the others' and its latency half.
  const std::string path = write_scenario(
      "points.toml", kTwoKeys + "log_sd = [0, 0]\ndraws = 4\nmodes = [[1.1, 90], [1.1, 90], [1.1, 90], [1.1, 45]]\n" +
                         "mode_weights = [0.25, 0.25, 0.25, 0.25]\n" + kNoModelError);
  const Run r = nominal(path);
  REQUIRE(r.report.bottleneck == "device");
  const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
  const auto* iops = find(p, "read.iops");
  const auto* lat = find(p, "read.lat_mean_us");
  REQUIRE(iops != nullptr);
  REQUIRE(lat != nullptr);
  // The parameters' part: nothing below the estimate, the fast draw above it.
  CHECK(iops->param_lower_log == 0);
  CHECK(iops->param_upper_log == doctest::Approx(std::log(2.0)).epsilon(0.1));
  CHECK(lat->param_lower_log == doctest::Approx(-std::log(2.0)).epsilon(0.1));
  CHECK(lat->param_upper_log == 0);
  CHECK(predict::parameters_part_text(*iops).rfind("-0%/+", 0) == 0);
  // The whole interval: the simulation's spread below the estimate, up to the fast draw above.
  const double sim = iops->sim_half_width / iops->mean;
  CHECK(std::log(iops->mean / iops->lower) < 1.5 * sim + 0.01);
  CHECK(iops->upper / iops->mean > 1.8);
  CHECK(lat->mean / lat->lower > 1.8);
  CHECK(std::log(lat->upper / lat->mean) < 0.05);
  // Three draws in four at the estimate: the mixture's median stays near it, inside the interval.
  CHECK(iops->median > iops->lower);
  CHECK(iops->median < iops->upper);
  CHECK(std::fabs(std::log(iops->median / iops->mean)) < 0.05);
  // A model-error term widens both sides; the parts stay what they were.
  const std::string with_error =
      write_scenario("points-error.toml",
                     kTwoKeys + "log_sd = [0, 0]\ndraws = 4\nmodes = [[1.1, 90], [1.1, 90], [1.1, 90], [1.1, 45]]\n" +
                         "mode_weights = [0.25, 0.25, 0.25, 0.25]\nmodel_error = { throughput = 0.2, \"mean latency\" = 0.2, " +
                         "p50 = 0.2, p99 = 0.2, \"p99.9\" = 0.2 }\n");
  const Run e = nominal(with_error);
  const predict::Prediction q = predict::predict(with_error, {}, e.s, e.report, 2);
  const auto* wide = find(q, "read.iops");
  REQUIRE(wide != nullptr);
  CHECK(wide->lower < iops->lower * 0.8);
  CHECK(wide->upper > iops->upper);
  CHECK(wide->param_upper_log == iops->param_upper_log);
}

TEST_CASE("prediction: identical whatever the thread count") {
  const std::string path = write_scenario("threads.toml", kTwoKeys + "log_sd = [0.05, 0.12]\ndraws = 6\n");
  const Run r = nominal(path);
  const predict::Prediction one = predict::predict(path, {}, r.s, r.report, 1);
  int calls = 0, last = 0;
  const predict::Prediction two = predict::predict(path, {}, r.s, r.report, 2, [&](int done, int total) {
    ++calls;
    last = done;
    CHECK(total == 7);  // the 6 draws and the estimate on the same random numbers, their reference
  });
  CHECK(calls == 7);
  CHECK(last == 7);
  CHECK(one.metrics.size() == 7);
  CHECK(one == two);
}

TEST_CASE("prediction: a key given by --set is held at that value, not drawn") {
  const std::string path = write_scenario("set.toml", kTwoKeys + "log_sd = [0.05, 0.12]\ndraws = 3\n");
  const std::vector<std::string> overrides{"backend.read_us=80"};
  const Run r = nominal(path, overrides);
  REQUIRE(r.s.calibration.fixed_by_set == std::vector<bool>{false, true});
  const auto draws = predict::parameter_draws(r.s);
  REQUIRE(draws.size() == 3);
  for (const auto& d : draws) {
    REQUIRE(d.size() == 1);
    CHECK(d[0].rfind("guest.cpu_scale=", 0) == 0);
  }
  // Fixing a key leaves the other keys' draws as they were.
  const Run free = nominal(path);
  const auto free_draws = predict::parameter_draws(free.s);
  for (std::size_t i = 0; i < draws.size(); ++i) CHECK(free_draws[i][0] == draws[i][0]);
  const predict::Prediction p = predict::predict(path, overrides, r.s, r.report, 2);
  CHECK(p.sampled == std::vector<std::string>{"guest.cpu_scale"});
  CHECK(p.fixed_by_set == std::vector<std::string>{"backend.read_us"});
  // Device-bound at 80 µs: the guest's CPU scale hardly moves IOPS.
  const auto* iops = find(p, "read.iops");
  REQUIRE(iops != nullptr);
  CHECK(iops->mean > 46000);
  CHECK(iops->param_sd_rel < 0.01);
}

TEST_CASE("prediction: a correlation matrix that is not positive definite does not fail") {
  // Eigenvalue -0.8 along (1, -1, 1).
  const std::string path = write_scenario("indefinite.toml",
                                          "params = [\"guest.cpu_scale\", \"backend.read_us\", \"host.cpu_scale\"]\n"
                                          "log_sd = [0.1, 0.1, 0.1]\n"
                                          "log_corr = [[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]]\n"
                                          "draws = 2\n");
  models::IoScenario s = models::load_io_scenario(path);
  const auto l = predict::correlation_factor(s.calibration.log_corr);
  for (int i = 0; i < 3; ++i) {
    double diag = 0;
    for (int j = 0; j < 3; ++j) {
      CHECK(std::isfinite(l[i][j]));
      diag += l[i][j] * l[i][j];
    }
    CHECK(diag == doctest::Approx(1.0));  // each ln(value) keeps its own sd
  }
  s.calibration.draws = 500;
  for (const auto& d : predict::parameter_draws(s)) {
    REQUIRE(d.size() == 3);
    for (const auto& [key, value] : values_of(d)) CHECK((std::isfinite(value) && value > 0));
  }
  const Run r = nominal(path);
  const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 2);
  CHECK(p.draws == 2);
  CHECK(!p.metrics.empty());
  for (const auto& m : p.metrics) CHECK((std::isfinite(m.lower) && std::isfinite(m.upper)));
}

TEST_CASE("prediction: none without a calibration table or with zero draws") {
  const std::string path = write_scenario("none.toml", kTwoKeys + "log_sd = [0.05, 0.12]\ndraws = 2\n");
  Run r = nominal(path);
  r.s.calibration.draws = 0;
  const predict::Prediction p = predict::predict(path, {}, r.s, r.report, 1);
  CHECK(p.draws == 0);
  CHECK(p.metrics.empty());
  const models::IoScenario plain = models::load_io_scenario(VQSIM_SOURCE_DIR "/scenarios/default.toml");
  CHECK(predict::parameter_draws(plain).empty());
}

TEST_CASE("prediction, [[vm]] profiles: an edit changes a profile's configuration when it moves that profile's MVA figures") {
  // Two profiles, each on a device of its own, no host.cores: what one does cannot reach the
  // other through the MVA; on one device (or with host.cores) it does.
  const std::string apart = VQSIM_SOURCE_DIR "/scenarios/consolidation/two-backends.toml";
  const models::ScenarioSource file(apart);
  // With the 8 shared cores, the log VM's load reaches the web VMs; the edits that do are named
  // together (as configuration_changed_by names them).
  CHECK(predict::configuration_changed_for_profile(file, {"vm.log.workload.iodepth=1", "host.cores=2"}, {}, "web") ==
        "vm.log.workload.iodepth=1, host.cores=2");
  // The web VMs' own count is a change of its configuration (more of it on its device) ...
  CHECK(predict::configuration_changed_for_profile(file, {"vm.web.count=3"}, {}, "web") == "vm.web.count=3");
  // ... its own workload and the run's length are what its signature sees, and an edit of the
  // Ceph pool the log VM writes to leaves the web VMs' NVMe alone once the cores are not shared.
  CHECK(
      predict::configuration_changed_for_profile(file, {"vm.web.workload.iodepth=4", "workload.ios=100", "run.seed=2"}, {}, "web")
          .empty());
  models::ScenarioSource no_cores = file;
  no_cores.set("host.cores=0");
  CHECK(predict::configuration_changed_for_profile(no_cores, {"backend.ceph.osd_write_us=900"}, {}, "web").empty());
  CHECK(predict::configuration_changed_for_profile(no_cores, {"backend.ceph.osd_write_us=900"}, {}, "log") ==
        "backend.ceph.osd_write_us=900");
}

TEST_CASE(
    "prediction: a setting every fitted run shared and the predicted setup lacks is named, with the --set that restores it") {
  const std::vector<std::string> fitted = {
      "driver=virtio-blk;vcpus=1;queues=1;queue_size=256;iothreads=0;aio=native;cache=none;backend=null;rw=randread;iodepth=1;"
      "numjobs=1;qemu=7.2.22;accel=tcg",
      "driver=virtio-scsi;vcpus=1;queues=1;queue_size=256;iothreads=1;aio=native;cache=none;backend=null;rw=randread;iodepth=1;"
      "numjobs=1;qemu=7.2.22;accel=tcg"};
  // The lab's QEMU version, which a base scenario may not state: named, and how to state it.
  const std::string without_version =
      "driver=virtio-blk;vcpus=1;queues=1;queue_size=256;iothreads=0;aio=native;cache=none;backend=null;rw=randread;iodepth=16;"
      "numjobs=1;accel=tcg";
  REQUIRE(predict::distance_between(without_version, fitted) == "unmeasured setup");
  const std::string note = predict::shared_setting_note(without_version, fitted);
  CHECK(note.find("every fitted run had host.qemu_version = 7.2.22 where this setup has its default") != std::string::npos);
  CHECK(note.find("--set host.qemu_version=7.2.22") != std::string::npos);
  CHECK(note.find("guest.driver") == std::string::npos);  // the fitted runs differ in it: not a shared setting
  // Another value of a knob the fitted runs did not share, or the accelerator (a KVM prediction
  // from TCG runs is meant): no note.
  CHECK(predict::shared_setting_note(
            "driver=virtio-blk;vcpus=1;queues=1;queue_size=256;iothreads=0;aio=threads;cache=none;backend=null;rw=randread;"
            "iodepth=1;numjobs=1;qemu=7.2.22;accel=tcg",
            fitted)
            .find("host.aio = native") != std::string::npos);
  CHECK(predict::shared_setting_note(
            "driver=virtio-blk;vcpus=1;queues=1;queue_size=256;iothreads=2;aio=native;cache=none;backend=null;rw=randread;"
            "iodepth=1;numjobs=1;qemu=7.2.22;accel=tcg",
            fitted)
            .empty());
  CHECK(predict::shared_setting_note("driver=virtio-blk;vcpus=1;queues=1;queue_size=256;iothreads=0;aio=native;cache=none;"
                                     "backend=null;rw=randread;iodepth=1;numjobs=1;qemu=7.2.22",
                                     fitted)
            .empty());
  CHECK(predict::shared_setting_note(without_version, {}).empty());
}
