// Issue 16: do calibrate's 95% intervals of held-out runs hold 95% of them? Measured where the
// truth is known: figures simulated at known parameters for a set of setups, each multiplied by
// a known log-normal noise (the measurement's and the model's error together: what no parameter
// explains and the intervals must cover), a fit with leave-one-out on the base setup and its
// one-knob variants, and every other knob combination held out and predicted (as the lab
// experiment of docs/ACCURACY.md does with real runs). The share of held-out IOPS and mean
// latencies inside their TargetFit [lower, upper] must lie in [0.90, 0.99].
//
// The first test case is the short version, sized for CTest (Release and ASan). The skipped one
// is the long version that scripts/bench-coverage runs (more held-out setups, several seeds and
// noise levels), configured by environment variables (see that script).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "calibration/fit/calibrate.h"
#include "calibration/fit/dataset.h"
#include "calibration_support.h"
#include "sim/distribution.h"
#include "sim/rng.h"

using namespace vqsim;
using test::Setups;

namespace {

// The truth: every value differs from its default (nvme read 80 us, write 20 us, CPU scale 1),
// so a fit that stayed at the defaults would miss the figures by far more than the noise.
const std::map<std::string, double> kTruth = {{"backend.read_us", 130}, {"backend.write_us", 35}, {"host.cpu_scale", 1.4}};

// The fitted setups: the base scenario (virtio-blk, one IOThread, aio=native, randread) and one
// knob changed at a time, at low and high depth: QD1 pins the device times, QD32 loads the host
// CPU (at the truth the main loop is the bottleneck of fit-mainloop-qd32). 13 runs give 14
// throughput and 14 mean-latency figures (fit-rw-qd16 has both directions), so each kind's
// model-error term comes from 14 leave-one-out errors, not from the prior (which joins in
// below 10).
const Setups kFitted = {
    {"fit-qd1", {"workload.iodepth=1"}},
    {"fit-qd4", {"workload.iodepth=4"}},
    {"fit-qd32", {"workload.iodepth=32"}},
    {"fit-write-qd1", {"workload.rw=randwrite", "workload.iodepth=1"}},
    {"fit-write-qd32", {"workload.rw=randwrite", "workload.iodepth=32"}},
    {"fit-rw-qd16", {"workload.rw=randrw", "workload.iodepth=16"}},
    {"fit-scsi-qd1", {"guest.driver=virtio-scsi", "workload.iodepth=1"}},
    {"fit-scsi-qd32", {"guest.driver=virtio-scsi", "workload.iodepth=32"}},
    {"fit-mainloop-qd1", {"host.iothreads=0", "workload.iodepth=1"}},
    {"fit-mainloop-qd32", {"host.iothreads=0", "workload.iodepth=32"}},
    {"fit-threads-qd1", {"host.aio=threads", "workload.iodepth=1"}},
    {"fit-threads-qd32", {"host.aio=threads", "workload.iodepth=32"}},
    {"fit-uring-qd32", {"host.aio=io_uring", "workload.iodepth=32"}},
};

// Every setup with at least two knobs changed from the base (rw, driver, IOThread, aio), at five
// depths: 145, none of them fitted. `setup_seed` shuffles them (sim::Rng: the same on every
// platform) and the first `n` are held out.
Setups held_out_setups(int n, std::uint64_t setup_seed) {
  Setups all;
  for (std::string rw : {"randread", "randwrite", "randrw"})
    for (std::string driver : {"virtio-blk", "virtio-scsi"})
      for (int iothreads : {1, 0})
        for (std::string aio : {"native", "threads", "io_uring"})
          for (int depth : {1, 4, 8, 16, 32}) {
            const int changed = (rw != "randread") + (driver != "virtio-blk") + (iothreads != 1) + (aio != "native");
            if (changed < 2) continue;
            const std::string io = std::to_string(iothreads), qd = std::to_string(depth);
            all.push_back({"held-" + rw + "-" + driver + "-io" + io + "-" + aio + "-qd" + qd,
                           {"workload.rw=" + rw, "guest.driver=" + driver, "host.iothreads=" + io, "host.aio=" + aio,
                            "workload.iodepth=" + qd}});
          }
  sim::Rng rng = sim::Rng::for_stream(setup_seed, 0, 0);
  for (std::size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[rng.below(i + 1)]);  // Fisher-Yates
  all.resize(std::min(all.size(), static_cast<std::size_t>(n)));
  return all;
}

struct Experiment {
  double noise_sd = 0.07;         // sd of ln(measured / simulated truth), every figure
  std::uint64_t noise_seed = 16;  // the noise draws
  std::uint64_t setup_seed = 16;  // which combinations are held out
  int held_out = 24;
  fit::CalibrateOptions::SpreadStarts spread_starts = fit::CalibrateOptions::SpreadStarts::automatic;
};

struct Coverage {
  int figures = 0, inside = 0;
  int inside_without_model_error = 0;                      // the interval from parameters and simulation alone
  std::map<std::string, std::pair<int, int>> by_kind;      // kind -> (inside, figures)
  std::map<std::string, std::pair<int, int>> by_distance;  // distance from the fitted runs -> (inside, figures)
  std::vector<double> half_widths;                         // relative: (upper - lower) / 2 / fitted
  std::vector<double> errors;                              // |fitted - measured| / measured
  std::map<std::string, double> model_error;               // the fit's term per kind (sd of ln), another configuration
  std::map<std::string, double> model_error_workload;      // the same, another workload of a fitted configuration
  std::vector<std::string> params;                         // "key estimate [lower, upper]" and whether it holds the truth
  double share() const { return figures ? static_cast<double>(inside) / figures : 0; }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool verbose() { return std::getenv("VQSIM_COVERAGE_VERBOSE") != nullptr; }

Coverage run_experiment(const Experiment& e) {
  const std::string base = test::write("coverage-base.toml", "base = \"" + test::kSourceDir + "/scenarios/default.toml\"\n");
  Setups setups = kFitted;
  for (auto& s : held_out_setups(e.held_out, e.setup_seed)) setups.push_back(std::move(s));
  test::Simulated how;
  how.source = "simulated at backend.read_us = 130, backend.write_us = 35, host.cpu_scale = 1.4, times log-normal noise";
  for (const auto& [key, value] : kTruth) how.truth.push_back(key + "=" + std::to_string(value));
  // The truth's own simulation is as long as calibration's but has another seed: its noise is
  // the size the fit assumes for its own simulations.
  how.simulation = {"workload.runtime=0", "workload.ios=40000", "run.replications=2", "run.seed=20261216"};
  // One stream per run, one draw per figure: a figure's noise does not change when runs are added.
  std::map<std::size_t, sim::Rng> streams;
  how.factor = [&](std::size_t run, const std::string&, const std::string&) {
    sim::Rng& rng = streams.try_emplace(run, sim::Rng::for_stream(e.noise_seed, 0, run)).first->second;
    return std::exp(e.noise_sd * sim::standard_normal(rng));
  };
  const fit::Dataset d = fit::load_dataset(test::simulated_manifest("coverage.toml", base, setups, how), base);

  fit::CalibrateOptions o;
  for (const auto& [key, value] : kTruth) o.fit_keys.push_back(key);
  o.holdout = "^held-";
  o.leave_one_out = true;
  o.threads = 2;  // the result is the same whatever the count; two halve the test's time
  o.spread_starts = e.spread_starts;
  if (verbose()) o.progress = [](const std::string& line) { std::printf("    %s\n", line.c_str()); };
  const fit::CalibrationResult r = fit::calibrate(d, o);

  Coverage c;
  c.model_error = r.model_error.unmeasured;
  c.model_error_workload = r.model_error.workload;
  if (verbose() && r.cv)
    for (const auto& f : r.cv->folds)
      for (const auto& t : f.targets)
        std::printf("  leave-one-out %-26s %-18s error %+6.1f%%\n", f.name.c_str(), t.metric.c_str(), 100 * t.error_rel());
  for (const auto& p : r.params) {
    const double truth = kTruth.at(p.key);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %.4g [%.4g, %.4g] (truth %.4g%s)", p.key.c_str(), p.estimate, p.lower, p.upper, truth,
                  p.lower <= truth && truth <= p.upper ? "" : ", outside");
    c.params.push_back(buf);
  }
  for (const auto& run : r.runs) {
    if (!run.held_out) continue;
    for (const auto& t : run.targets) {
      if (t.kind != "throughput" && t.kind != "mean latency") continue;
      const bool in = t.lower <= t.measured && t.measured <= t.upper;
      // The half-width before the model's own error was added (calibrate adds it in quadrature
      // in log space): what the intervals were before issue 16.
      // (The second explanation's mixture, where there is one, is counted as parameters here.)
      const auto& terms = run.distance == "another workload" ? r.model_error.workload : r.model_error.unmeasured;
      const double h = std::log(t.upper / t.fitted), m = 1.96 * terms.at(t.kind);
      const double h0 = std::sqrt(std::max(0.0, h * h - m * m));
      ++c.by_distance[run.distance].second;
      c.by_distance[run.distance].first += t.lower <= t.measured && t.measured <= t.upper;
      const double lm = std::fabs(std::log(t.measured / t.fitted));
      ++c.figures;
      c.inside += in;
      c.inside_without_model_error += lm <= h0;
      auto& [k_in, k_n] = c.by_kind[t.kind];
      k_in += in;
      ++k_n;
      c.half_widths.push_back((t.upper - t.lower) / 2 / t.fitted);
      c.errors.push_back(std::fabs(t.error_rel()));
      if (verbose())
        std::printf("  %s %-46s %-18s error %+6.1f%%  interval %8.4g to %8.4g  (bottleneck %s)\n", in ? "  " : "**",
                    run.name.c_str(), t.metric.c_str(), 100 * t.error_rel(), t.lower, t.upper, run.bottleneck.c_str());
    }
  }
  return c;
}

void print(const Experiment& e, const Coverage& c) {
  std::printf("noise %.3f seeds %llu/%llu: %d/%d held-out figures inside (%.1f%%;", e.noise_sd,
              static_cast<unsigned long long>(e.noise_seed), static_cast<unsigned long long>(e.setup_seed), c.inside, c.figures,
              100 * c.share());
  for (const auto& [kind, v] : c.by_kind) std::printf(" %s %d/%d", kind.c_str(), v.first, v.second);
  for (const auto& [distance, v] : c.by_distance) std::printf(" %s %d/%d", distance.c_str(), v.first, v.second);
  std::printf("), %d without the model error; median half-width %.1f%%, median |error| %.1f%%; model error",
              c.inside_without_model_error, 100 * median(c.half_widths), 100 * median(c.errors));
  for (const char* kind : {"throughput", "mean latency"})
    if (c.model_error.count(kind)) std::printf(" %s %.3f", kind, c.model_error.at(kind));
  std::printf(" (another configuration),");
  for (const char* kind : {"throughput", "mean latency"})
    if (c.model_error_workload.count(kind)) std::printf(" %s %.3f", kind, c.model_error_workload.at(kind));
  std::printf(" (another workload)");
  std::printf("\n");
  for (const auto& p : c.params) std::printf("    %s\n", p.c_str());
  std::fflush(stdout);
}

// With 24 held-out setups (a third randrw, with both directions) there are 78 held-out figures.
// The band is not luck: were the intervals exactly 95% and the figures independent, the count
// inside would be Binomial(78, 0.95), 74 +- 2, and a correct method would fall outside
// [0.90, 0.99] for about 6% of seeds (4% below, 2% above); the seeds are fixed (16, chosen before
// any result was seen), so the outcome is reproducible. The failures the band is there for lie
// far outside it: the intervals of parameters and simulation alone (those before the model's
// own error) hold 32 of these 78 figures, and intervals several times wider than the errors
// need (a model-error term set by one fold far worse than the rest) hold every one and fail the
// upper bound. The test prints the coverage, the model-error terms and the fitted parameters
// against the truth; scripts/bench-coverage (--verbose: every figure and leave-one-out error)
// measures the same over other seeds and noise levels.
TEST_CASE("95% intervals of held-out runs hold 90-99% of figures simulated at a known truth with 7% noise") {
  Experiment e;
  // The spread starts refined on the simulation (tests/test_calibrate.cc) change the estimate little
  // here (74 of 78 figures inside either way; median |error| 4.9% with them, 5.0% without) and
  // would more than double the test's time; the long version (below) keeps calibrate's default.
  e.spread_starts = fit::CalibrateOptions::SpreadStarts::screened;
  const Coverage c = run_experiment(e);
  print(e, c);
  CAPTURE(c.inside);
  CAPTURE(c.figures);
  CHECK(c.figures >= 40);
  CHECK(c.share() >= 0.90);
  CHECK(c.share() <= 0.99);
}

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The long version: VQSIM_COVERAGE_NOISES (comma-separated log sds), VQSIM_COVERAGE_SEEDS (fits
// per noise level, each with its own noise and held-out setups: seeds 100 + s and 200 + s for s
// from VQSIM_COVERAGE_FIRST_SEED), VQSIM_COVERAGE_HELD_OUT (held-out setups per fit). One block
// per fit, then a SUMMARY line per noise level.
TEST_CASE("coverage benchmark: several noise levels and seeds" * doctest::skip()) {
  std::vector<double> noises;
  const std::string list = env("VQSIM_COVERAGE_NOISES", "0.03,0.07,0.15");
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    noises.push_back(std::stod(list.substr(at, comma - at)));
    at = comma + 1;
  }
  const int seeds = std::stoi(env("VQSIM_COVERAGE_SEEDS", "3"));
  const int held = std::stoi(env("VQSIM_COVERAGE_HELD_OUT", "48"));
  const int first = std::stoi(env("VQSIM_COVERAGE_FIRST_SEED", "0"));
  for (double noise : noises) {
    int figures = 0, inside = 0, without = 0;
    std::vector<double> half_widths, errors;
    for (int s = first; s < first + seeds; ++s) {
      Experiment e;
      e.noise_sd = noise;
      e.noise_seed = 100 + static_cast<std::uint64_t>(s);
      e.setup_seed = 200 + static_cast<std::uint64_t>(s);
      e.held_out = held;
      const Coverage c = run_experiment(e);
      print(e, c);
      figures += c.figures;
      inside += c.inside;
      without += c.inside_without_model_error;
      half_widths.insert(half_widths.end(), c.half_widths.begin(), c.half_widths.end());
      errors.insert(errors.end(), c.errors.begin(), c.errors.end());
    }
    const double half = median(half_widths), err = median(errors);
    std::printf(
        "SUMMARY noise %.3f fits %d figures %d inside %d coverage %.3f without_model_error %.3f median_half_width %.4f "
        "median_abs_error %.4f ratio %.2f\n",
        noise, seeds, figures, inside, figures ? static_cast<double>(inside) / figures : 0,
        figures ? static_cast<double>(without) / figures : 0, half, err, err > 0 ? half / err : 0);
    std::fflush(stdout);
  }
}

}  // namespace
