// What calibration says about itself when the data and the model disagree: a parameter pushed to
// the limit of its range says so and its interval stops there, a poor fit ends with one line
// naming how many figures miss and how, and the model's own error is estimated per distance. The "measurements" are far beyond
// what the default scenario can do (50 IOPS from an NVMe), so the answers are known without simulating a truth.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/fit/calibrate.h"
#include "calibration/fit/dataset.h"
#include "calibration/fit/fit_output.h"
#include "calibration/predict/prediction.h"
#include "calibration_support.h"  // test::write: a file in this process's scratch directory

using namespace vqsim;
using test::write;

namespace {

// The default scenario, short (3000 I/Os, 2 replications): the base of every dataset here.
const std::string& short_base() {
  static const std::string path =
      write("fit-report-base.toml",
            "base = \"" VQSIM_SOURCE_DIR "/scenarios/default.toml\"\n[workload]\nios = 3000\n[run]\nreplications = 2\n");
  return path;
}

// A fit of backend.read_us alone, in at most 3 rounds.
fit::CalibrateOptions read_us_options() {
  fit::CalibrateOptions o;
  o.fit_keys = {"backend.read_us"};
  o.max_rounds = 3;
  return o;
}

const fit::Dataset& slow_dataset() {
  static const fit::Dataset d = [] {
    const std::string manifest =
        write("fit-report-slow.toml",
              "[[run]]\nname = \"qd1\"\nmeasured = { \"read.iops\" = 50, \"read.lat_mean_us\" = 20000 }\n"
              "set = { \"workload.iodepth\" = 1 }\n"
              "[[run]]\nname = \"qd4\"\nmeasured = { \"read.iops\" = 60, \"read.lat_mean_us\" = 66000 }\n"
              "set = { \"workload.iodepth\" = 4 }\n");
    return fit::load_dataset(manifest, short_base());
  }();
  return d;
}

const fit::CalibrationResult& slow_fit() {
  static const fit::CalibrationResult r = [] { return fit::calibrate(slow_dataset(), read_us_options()); }();
  return r;
}

}  // namespace

TEST_CASE("a parameter the data push beyond its range stands at the limit, says so, and its interval stops there") {
  const auto& r = slow_fit();
  REQUIRE(r.params.size() == 1);
  const auto& p = r.params[0];
  CHECK(p.at_limit == 1);
  CHECK(!p.identified);
  CHECK(p.upper == doctest::Approx(p.estimate).epsilon(1e-6));        // not beyond the limit it stands at
  CHECK(p.estimate == doctest::Approx(100 * p.start).epsilon(1e-3));  // a factor 100 from the default
  bool said = false;
  for (const auto& n : r.notes) said |= n.find("backend.read_us stands at the upper limit") != std::string::npos;
  CHECK(said);
  CHECK(fit::report_json(slow_dataset(), r)["params"][0]["at_limit"] == "upper");
}

TEST_CASE("a poor fit ends with one line: how many figures miss their bars, and the pattern") {
  const auto& r = slow_fit();
  const std::string line = fit::fit_quality_line(slow_dataset(), r);
  CAPTURE(line);
  CHECK(line.rfind("poor fit: 4 of 4 fitted figures are beyond their bars", 0) == 0);
  // Every figure is far too fast: the model cannot be as slow as these measurements.
  CHECK(line.find("reads too fast (4 of 4 figures)") != std::string::npos);
  CHECK(fit::report_text(slow_dataset(), r).find(line) != std::string::npos);
}

TEST_CASE(
    "the model-error estimate: the 95th percentile of the sd each prediction needs, parts of its interval not counted twice") {
  // Without a parameters' part or a second explanation: the 95th percentile of |e| over 1.96.
  std::vector<fit::ErrorSample> plain;
  for (int i = 1; i <= 20; ++i) plain.push_back({0.01 * i * (i % 2 ? 1 : -1)});
  CHECK(fit::model_error_sd(0.5, plain) == doctest::Approx(0.19 / 1.96));  // rank 19 of 20
  // The parameters' part already holds this error: no model error is needed for it.
  CHECK(fit::needed_model_sd({0.196, 0.01}) < 1e-6);
  CHECK(fit::needed_model_sd({0.392, 0.01}) == doctest::Approx(std::sqrt(0.04 - 0.01)));
  // A second explanation (weight 0.3) that predicts beyond the measurement holds it at sd 0;
  // one that predicts away from it needs more than the plain estimate.
  CHECK(fit::needed_model_sd({0.3, 0, -0.5, 0.3}) == 0);
  CHECK(fit::needed_model_sd({0.3, 0, +0.5, 0.3}) > 0.3 / 1.96);
  // Under 10 samples: pooled with the prior as two observations of it.
  const std::vector<fit::ErrorSample> few = {{0.196}};
  CHECK(fit::model_error_sd(0.4, few) == doctest::Approx(std::sqrt((2 * 0.16 + 0.01) / 3)));
  CHECK(fit::model_error_sd(0.4, {}) == 0.4);
  // Twenty figures of one left-out configuration (--cv config) are one observation of how a
  // configuration extrapolates: pooled with the prior as one, not trusted alone as twenty.
  const double one_refit = 0.19 / 1.96;
  CHECK(fit::model_error_sd(0.4, plain, 1) == doctest::Approx(std::sqrt((2 * 0.16 + one_refit * one_refit) / 3)));
  CHECK(fit::model_error_sd(0.4, plain, 10) == doctest::Approx(one_refit));
}

TEST_CASE("a distance's folds are pooled with every fold's estimate, a new combination's scaled to its share") {
  std::vector<fit::ErrorSample> folds;
  for (int i = 1; i <= 20; ++i) folds.push_back({0.01 * i});
  const double all = fit::model_error_sd(0, folds);  // rank 19 of 20: 0.19 / 1.96
  CHECK(all == doctest::Approx(0.19 / 1.96));
  CHECK(fit::parent_model_error_sd("throughput", "unmeasured setup", folds, -1) == doctest::Approx(all));
  CHECK(fit::parent_model_error_sd("throughput", "another workload", folds, -1) == doctest::Approx(all));
  // The folds of a knob split leave out configurations one knob away, nearly all another
  // configuration: a new combination takes the share the lab measured between the two.
  CHECK(fit::parent_model_error_sd("throughput", "new combination", folds, -1) ==
        doctest::Approx(all * predict::combination_share("throughput")));
  CHECK(fit::parent_model_error_sd("p99", "new combination", folds, 10) ==
        doctest::Approx(all * predict::combination_share("p99")));
  // Under 10 observations (the 20 figures of 7 left-out configurations) another configuration
  // takes its prior, and a new combination pools its share of the folds with its prior as two
  // observations of it; another depth always takes its prior.
  CHECK(fit::parent_model_error_sd("throughput", "unmeasured setup", folds, 7) ==
        predict::prior_model_error("throughput", "unmeasured setup"));
  const double prior = predict::prior_model_error("throughput", "new combination");
  const double share = all * predict::combination_share("throughput");
  CHECK(fit::parent_model_error_sd("throughput", "new combination", folds, 7) ==
        doctest::Approx(std::sqrt((2 * prior * prior + 7 * share * share) / 9)));
  CHECK(fit::parent_model_error_sd("throughput", "another depth", folds, -1) ==
        predict::prior_model_error("throughput", "another depth"));
  CHECK(fit::parent_model_error_sd("throughput", "new combination", {}, 0) == prior);
}

TEST_CASE("the model-error estimate with parameter draws: the draws' mixture holds what it spans, and only that") {
  // Draws at 0 alone: the plain case (|e| / 1.96 beyond what the simulation holds).
  CHECK(fit::needed_model_sd({0.392, 0.01, 0, 0, {0.0, 0.0, 0.0, 0.0}}) == doctest::Approx(std::sqrt(0.04 - 0.01)).epsilon(1e-4));
  // Two explanations among the draws, one on each side of the measurement (ln(measured / model) =
  // 0.3): the mixture holds it without any model error.
  std::vector<double> two;
  for (int i = 0; i < 16; ++i) two.push_back(i < 8 ? 0.0 : 0.6);
  CHECK(fit::needed_model_sd({-0.3, 0.0001, 0, 0, two}) == 0);
  // The same draws when the measurement lies beyond both: more than the plain estimate needs
  // from the nearer one, and the second explanation's shift and weight fields are not used.
  const double beyond = fit::needed_model_sd({0.3, 0.0001, 0, 0, two});
  CHECK(beyond > 0.3 / 1.96 * 0.9);
  CHECK(fit::needed_model_sd({0.3, 0.0001, -0.5, 0.3, two}) == beyond);
}

TEST_CASE("leave-one-out folds are classified by distance and each distance has its own model-error term") {
  fit::CalibrateOptions o = read_us_options();
  o.leave_one_out = true;
  const fit::CalibrationResult r = fit::calibrate(slow_dataset(), o);
  REQUIRE(r.cv);
  // qd1 and qd4 share their configuration, but each fold's depth is one no fitted run had: every
  // queue of the path at another length, another depth, not another workload.
  for (const auto& f : r.cv->folds) CHECK(f.distance == "another depth");
  CHECK(r.model_error.folds.at("another depth") == 2);
  CHECK(r.model_error.folds.count("another workload") == 0);
  // Two folds, pooled with the prior measured at that distance as two observations of it: the
  // term moves off the prior; another configuration (no fold of its own) takes the prior, and
  // another workload no more than it; none is below the fitted setups' own term (this fit misses
  // its runs by far).
  CHECK(r.model_error.depth.at("throughput") != predict::prior_model_error("throughput", "another depth"));
  const double fitted = r.model_error.fitted.at("throughput");
  CHECK(r.model_error.unmeasured.at("throughput") ==
        std::max(predict::prior_model_error("throughput", "unmeasured setup"), fitted));
  CHECK(r.model_error.workload.at("throughput") <= r.model_error.unmeasured.at("throughput"));
  for (const auto* m : {&r.model_error.workload, &r.model_error.depth, &r.model_error.combination, &r.model_error.unmeasured})
    for (const auto& [kind, sd] : *m)
      if (r.model_error.fitted.count(kind)) CHECK(sd >= r.model_error.fitted.at(kind));
  const auto j = fit::report_json(slow_dataset(), r);
  CHECK(j["cross_validation"]["folds"][0]["distance"] == "another depth");
  CHECK(j["model_error"]["depth"].contains("mean latency"));
  CHECK(fit::fit_toml(slow_dataset(), r, "fit.toml", "vqsim calibrate").find("model_error_depth = { throughput = ") !=
        std::string::npos);
  CHECK(j["model_error"]["workload"].contains("mean latency"));
}

TEST_CASE("leave-one-configuration-out folds leave out every run of a configuration: each is another configuration's") {
  // Two configurations (the default virtio-blk, and virtio-scsi), two depths each.
  const std::string& base = short_base();
  std::string runs;
  for (const char* driver : {"virtio-blk", "virtio-scsi"})
    for (int qd : {1, 4})
      runs += std::string("[[run]]\nname = \"") + driver + "-qd" + std::to_string(qd) +
              "\"\nmeasured = { \"read.iops\" = " + std::to_string(qd == 1 ? 9000 : 30000) + " }\nset = { \"guest.driver\" = \"" +
              driver + "\", \"workload.iodepth\" = " + std::to_string(qd) + " }\n";
  const fit::Dataset d = fit::load_dataset(write("fit-report-config.toml", runs), base);
  fit::CalibrateOptions o = read_us_options();
  o.leave_one_out = true;
  o.by_configuration = true;
  const fit::CalibrationResult r = fit::calibrate(d, o);
  REQUIRE(r.cv);
  CHECK(r.cv->method == "leave-one-configuration-out");
  REQUIRE(r.cv->folds.size() == 4);  // a fold per run, each predicted by the fit on the other configuration
  for (const auto& f : r.cv->folds) CHECK(f.distance == "unmeasured setup");
  CHECK(r.model_error.folds.at("unmeasured setup") == 4);
  // Both runs of a configuration were predicted by the same refit: leaving out one run alone
  // (leave-one-out) would have left its configuration's other run in, at another depth: that
  // distance's fold.
  o.by_configuration = false;
  const fit::CalibrationResult loo = fit::calibrate(d, o);
  REQUIRE(loo.cv);
  for (const auto& f : loo.cv->folds) CHECK(f.distance == "another depth");
  CHECK(fit::report_json(d, r)["cross_validation"]["method"] == "leave-one-configuration-out");
  CHECK(r.model_error.source.find("leave-one-configuration-out errors of 4 runs") != std::string::npos);
  // One configuration has nothing to leave out by configuration.
  const fit::Dataset one = fit::load_dataset(write("fit-report-config-one.toml",
                                                   "[[run]]\nname = \"a\"\nmeasured = { \"read.iops\" = 9000 }\n"
                                                   "set = { \"workload.iodepth\" = 1 }\n[[run]]\nname = \"b\"\nmeasured = "
                                                   "{ \"read.iops\" = 30000 }\nset = { \"workload.iodepth\" = 4 }\n"),
                                             base);
  o.by_configuration = true;
  CHECK_THROWS_WITH_AS(fit::calibrate(one, o), doctest::Contains("at least two configurations"), models::ConfigError);
}

TEST_CASE("a configuration whose every value was fitted in other combinations is a new combination, with its own term") {
  // Three configurations over two knobs, one knob away from virtio-blk behind the main loop each;
  // virtio-scsi behind an IOThread is held out.
  const std::string& base = short_base();
  std::string runs;
  for (const auto& [driver, iothreads] :
       std::vector<std::pair<std::string, int>>{{"virtio-blk", 0}, {"virtio-scsi", 0}, {"virtio-blk", 1}, {"virtio-scsi", 1}})
    for (int qd : {1, 4})
      runs += "[[run]]\nname = \"" + driver + "-io" + std::to_string(iothreads) + "/qd" + std::to_string(qd) +
              "\"\nmeasured = { \"read.iops\" = " + std::to_string(qd == 1 ? 9000 : 30000) + " }\nset = { \"guest.driver\" = \"" +
              driver + "\", \"host.iothreads\" = " + std::to_string(iothreads) +
              ", \"workload.iodepth\" = " + std::to_string(qd) + " }\n";
  const fit::Dataset d = fit::load_dataset(write("fit-report-combination.toml", runs), base);
  fit::CalibrateOptions o = read_us_options();
  o.leave_one_out = true;
  o.by_configuration = true;
  o.holdout = "^virtio-scsi-io1/";
  const fit::CalibrationResult r = fit::calibrate(d, o);
  REQUIRE(r.cv);
  std::map<std::string, std::string> fold_distance;
  for (const auto& f : r.cv->folds) fold_distance[f.name] = f.distance;
  // Without virtio-blk behind the main loop, its driver and its main loop are still fitted (in
  // the other two); without either other configuration, its value is gone.
  CHECK(fold_distance.at("virtio-blk-io0/qd1") == "new combination");
  CHECK(fold_distance.at("virtio-scsi-io0/qd4") == "unmeasured setup");
  CHECK(fold_distance.at("virtio-blk-io1/qd1") == "unmeasured setup");
  CHECK(r.model_error.folds.at("new combination") == 2);
  CHECK(r.model_error.folds.at("unmeasured setup") == 4);
  for (const auto& run : r.runs)
    if (run.held_out) CHECK(run.distance == "new combination");
  REQUIRE(r.model_error.combination.count("throughput"));
  const auto j = fit::report_json(d, r);
  CHECK(j["model_error"]["combination"].contains("throughput"));
  CHECK(fit::fit_toml(d, r, "fit.toml", "vqsim calibrate").find("model_error_combination = { throughput = ") !=
        std::string::npos);
}
