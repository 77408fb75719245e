// Calibration on runs measured beside other guests (a manifest run's co_running): the run becomes
// a scenario of several VMs (calibration/fit/co_running.h) whose first VM is the measured one;
// a device parameter is recovered from figures simulated at a known truth with a neighbour on
// the same device (written as a [[vm]] file by hand, not by the code under test); and what the
// manifest cannot say (a count of 0, an unknown key, where the neighbours' disks were) is an
// error with the manifest's line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/fit/calibrate.h"
#include "calibration/fit/dataset.h"
#include "calibration_support.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

const std::string kSource = test::kSourceDir;
using test::write;

// The truth: the device's read time and the host's CPU scale. The device serves two requests
// at a time, so a neighbour at depth 16 on it queues the measured VM's reads behind its own.
constexpr double kTrueReadUs = 130, kTrueCpuScale = 1.4;

std::string base_scenario() {
  return write("co-base.toml", "base = \"" + kSource +
                                   "/scenarios/default.toml\"\n[host]\ncores = 4\n[backend]\nchannels = 2\n"
                                   "[workload]\nios = 5000\n[run]\nreplications = 2\n");
}

// The measured VM's read.iops and read.lat_mean_us, simulated at the truth with another seed
// and more I/Os than calibration uses (so that the fit sees noise as it would see a
// measurement's): alone, or (neighbour_depth > 0) beside one VM at that depth on the same device.
std::pair<double, double> truth_figures(int depth, int neighbour_depth) {
  const std::string base = base_scenario();
  models::IoScenario s;
  const std::vector<std::string> sim = {"run.replications=3", "run.seed=20250101"};
  if (neighbour_depth == 0) {
    std::vector<std::string> ov = {"workload.iodepth=" + std::to_string(depth), "backend.read_us=" + std::to_string(kTrueReadUs),
                                   "host.cpu_scale=1.4", "workload.runtime=0", "workload.ios=60000"};
    ov.insert(ov.end(), sim.begin(), sim.end());
    s = models::load_io_scenario(base, ov);
  } else {
    std::ostringstream f;
    f << "[host]\ncores = 4\n[[backend]]\nname = \"disk\"\nkind = \"nvme\"\nchannels = 2\nread_us = " << kTrueReadUs << "\n";
    for (const auto& [name, d] : {std::pair<std::string, int>{"measured", depth}, {"neighbour", neighbour_depth}})
      f << "[[vm]]\nname = \"" << name << "\"\nbase = \"" << base << "\"\nbackend = \"disk\"\n[vm.workload]\niodepth = " << d
        << "\nruntime = 0\nios = 30000\n[vm.host]\ncpu_scale = " << kTrueCpuScale << "\n";
    s = models::load_io_scenario(write("co-truth.toml", f.str()), sim);
    REQUIRE(s.profiles.size() == 2);
  }
  const models::IoRunReport rep = models::simulate_io(s, 2);
  return {models::io_metric(rep, "read.iops").mean, models::io_metric(rep, "read.lat_mean_us").mean};
}

std::string run_text(const std::string& name, int depth, std::pair<double, double> figures, const std::string& co_running = "") {
  std::ostringstream m;
  m.precision(10);
  m << "\n[[run]]\nname = \"" << name << "\"\nmeasured = { \"read.iops\" = " << figures.first
    << ", \"read.lat_mean_us\" = " << figures.second << " }\nset = { \"workload.iodepth\" = " << depth << " }\n";
  if (!co_running.empty()) m << "co_running = " << co_running << "\n";
  return m.str();
}

// Alone at QD1 and QD4, and at QD1 beside a neighbour at QD16 on the same device.
std::string truth_manifest(const std::string& file, bool say_co_running = true) {
  const std::string beside =
      say_co_running ? "[{ count = 1, backend = \"shared\", set = { \"workload.iodepth\" = 16 } }]" : std::string();
  return write(file, "[setup]\nsource = \"simulated at backend.read_us = 130, host.cpu_scale = 1.4\"\n" +
                         run_text("alone-qd1", 1, truth_figures(1, 0)) + run_text("alone-qd4", 4, truth_figures(4, 0)) +
                         run_text("beside-qd16", 1, truth_figures(1, 16), beside));
}

fit::CalibrateOptions options() {
  fit::CalibrateOptions o;
  o.fit_keys = {"backend.read_us", "host.cpu_scale"};
  o.threads = 2;
  o.bootstrap = 8;
  // The rounds find the device here; the spread starts refined on the simulation would triple the
  // fit's time (tests/test_calibrate.cc tests them).
  o.spread_starts = fit::CalibrateOptions::SpreadStarts::screened;
  return o;
}

const fit::ParamEstimate& param(const fit::CalibrationResult& r, const std::string& key) {
  for (const auto& p : r.params)
    if (p.key == key) return p;
  FAIL("no parameter " << key);
  return r.params.front();
}

const fit::TargetFit* target(const fit::RunFit& run, const std::string& metric) {
  for (const auto& t : run.targets)
    if (t.metric == metric) return &t;
  return nullptr;
}

std::string load_error(const std::string& manifest, const std::string& base) {
  try {
    fit::load_dataset(manifest, base);
  } catch (const models::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a run with co_running is simulated as its VM first beside the guests its entries name") {
  const std::string base = base_scenario();
  const std::string ok = "measured = { \"read.iops\" = 1000, \"read.lat_mean_us\" = 900 }\nset = { \"workload.iodepth\" = 1 }\n";
  const std::string m = write("co-shape.toml", "[[run]]\nname = \"shared\"\n" + ok +
                                                   "co_running = [{ count = 2, backend = \"shared\", set = { "
                                                   "\"workload.iodepth\" = 16 } }]\n[[run]]\nname = \"own\"\n" +
                                                   ok + "co_running = [{ count = 2, backend = \"own\" }]\n");
  const fit::Dataset d = fit::load_dataset(m, base);
  REQUIRE(d.runs.size() == 2);
  for (const auto& r : d.runs) {
    CAPTURE(r.name);
    REQUIRE(r.co_running);
    CHECK(r.co_running->vms == 3);
    CHECK(r.scenario.multi_vm());
    REQUIRE(!r.scenario.profiles.empty());
    CHECK(r.scenario.profiles.front().name == "measured");
    CHECK(r.scenario.workload.iodepth == 1);  // the top-level figures are the measured VM's
    CHECK(r.scenario.host.cores == 4);        // the base's host, shared by every VM
  }
  // backend = "shared": one profile of two guests on the run's device; "own": a device each.
  const auto& shared = d.runs[0].scenario;
  REQUIRE(shared.profiles.size() == 2);
  CHECK(shared.profiles[1].count == 2);
  CHECK(shared.profiles[1].backend == shared.profiles[0].backend);
  CHECK(shared.profiles[1].scenario.workload.iodepth == 16);
  CHECK(shared.profiles[1].scenario.backend.channels == 2);  // the base's device figures
  const auto& own = d.runs[1].scenario;
  REQUIRE(own.profiles.size() == 3);
  CHECK(own.profiles[1].backend != own.profiles[0].backend);
  CHECK(own.profiles[2].backend != own.profiles[1].backend);
  CHECK(own.profiles[1].scenario.workload.iodepth == models::load_io_scenario(base).workload.iodepth);  // no set: the base's
  CHECK(d.runs[0].simulation_key != d.runs[1].simulation_key);
}

TEST_CASE("calibration recovers a device parameter from runs measured beside a neighbour on the same device") {
  const std::string base = base_scenario();
  const fit::Dataset d = fit::load_dataset(truth_manifest("co-truth-manifest.toml"), base);
  REQUIRE(d.runs.size() == 3);
  REQUIRE(d.runs[2].co_running);
  const fit::CalibrationResult r = fit::calibrate(d, options());
  CHECK(r.converged);
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("1 run ran beside other guests (co_running)") != std::string::npos;
  }));
  for (const auto& key_truth :
       {std::pair<std::string, double>{"backend.read_us", kTrueReadUs}, {"host.cpu_scale", kTrueCpuScale}}) {
    const std::string& key = key_truth.first;  // named, for CAPTURE (see test_calibrate.cc)
    const double truth = key_truth.second;
    const fit::ParamEstimate& p = param(r, key);
    CAPTURE(key);
    CAPTURE(p.estimate);
    CAPTURE(p.lower);
    CAPTURE(p.upper);
    CHECK(p.lower <= truth);
    CHECK(truth <= p.upper);
    if (key == "backend.read_us") CHECK(std::fabs(p.estimate / truth - 1) < 0.1);
  }
  // The run beside its neighbour is fitted as one: the model's figure is the measured VM's own.
  const fit::TargetFit* lat = target(r.runs[2], "read.lat_mean_us");
  REQUIRE(lat);
  CAPTURE(lat->fitted);
  CAPTURE(lat->measured);
  CHECK(std::fabs(lat->error_rel()) < 0.1);

  SUBCASE("fitted on the runs alone, it predicts the run beside the neighbour within its interval") {
    fit::CalibrateOptions o = options();
    o.holdout = "^beside";
    const fit::CalibrationResult h = fit::calibrate(d, o);
    REQUIRE(h.runs[2].held_out);
    CHECK(h.runs[2].distance == "unmeasured setup");  // K guests are another configuration than one
    for (const char* metric : {"read.iops", "read.lat_mean_us"}) {
      const fit::TargetFit* t = target(h.runs[2], metric);
      REQUIRE(t);
      CAPTURE(metric);
      CAPTURE(t->fitted);
      CAPTURE(t->measured);
      CAPTURE(t->lower);
      CAPTURE(t->upper);
      CHECK(t->lower <= t->measured);
      CHECK(t->measured <= t->upper);
      CHECK(std::fabs(t->error_rel()) < 0.15);
    }
  }
}

TEST_CASE("the same figures without co_running pass the neighbour's load for a slower device") {
  // The contrast that shows the neighbours are modelled: the run beside the neighbour, taken as
  // a run alone, can only be explained by a slower device (or not at all).
  const std::string base = base_scenario();
  const fit::Dataset d = fit::load_dataset(truth_manifest("co-truth-alone.toml", false), base);
  REQUIRE_FALSE(d.runs[2].co_running);
  fit::CalibrateOptions o = options();
  o.bootstrap = 0;
  o.multi_start = false;
  const fit::CalibrationResult r = fit::calibrate(d, o);
  const fit::TargetFit* lat = target(r.runs[2], "read.lat_mean_us");
  REQUIRE(lat);
  const double read_us = param(r, "backend.read_us").estimate;
  CAPTURE(read_us);
  CAPTURE(lat->error_rel());
  CHECK((std::fabs(read_us / kTrueReadUs - 1) > 0.2 || std::fabs(lat->error_rel()) > 0.2));
}

TEST_CASE("a co_running the model cannot take is an error with the manifest's line, the run and what to write") {
  const std::string base = base_scenario();
  const std::string ok = "measured = { \"read.iops\" = 1000, \"read.lat_mean_us\" = 900 }\nset = { \"workload.iodepth\" = 1 }\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"co_running = [{ count = 0, backend = \"shared\" }]",
       "co-bad.toml:5: run 'x': co_running entry 1: count must be an integer >= 1"},
      {"co_running = [{ count = 1, backend = \"shared\", set = { \"guest.vcpu\" = 2 } }]",
       "co-bad.toml:5: run 'x': co_running entry 1: set guest.vcpu: unknown key (did you mean 'guest.vcpus'?)"},
      {"co_running = [{ count = 1, backend = \"both\" }]",
       "co-bad.toml:5: run 'x': co_running entry 1: backend must be \"shared\" (these guests' disks were on the run's device"},
      // An NVMe serves queues: whether the neighbours were on it matters, and the manifest must say.
      {"co_running = [{ count = 1 }]",
       "co-bad.toml:5: run 'x': co_running entry 1: say where these guests' disks were: backend = \"shared\""},
      {"co_running = [{ count = 1, backend = \"shared\", set = { \"host.cores\" = 8 } }]",
       "co-bad.toml:5: run 'x': co_running entry 1: set host.cores=8, but the run's host has host.cores = 4"},
      {"co_running = [{ count = 1, backend = \"shared\", set = { \"backend.kind\" = \"hdd\" } }]",
       "co-bad.toml:5: run 'x': co_running entry 1: backend = \"shared\", but set backend.kind = \"hdd\" and the run's device"},
      {"co_running = [{ count = 1, backend = \"own\", set = { \"vm.count\" = 2 } }]",
       "co-bad.toml:5: run 'x': co_running entry 1: set vm.count: an entry is count guests of one setup"},
  };
  for (const auto& entry : bad) {
    const std::string &text = entry.first, &want = entry.second;  // named, for CAPTURE (see test_calibrate.cc)
    // The shared device's kind is the run's own here, so that the conflict is the entry's.
    const std::string run_ok = text.find("backend.kind") != std::string::npos
                                   ? "measured = { \"read.iops\" = 1000, \"read.lat_mean_us\" = 900 }\nset = { "
                                     "\"workload.iodepth\" = 1, \"backend.kind\" = \"nvme\" }\n"
                                   : ok;
    const std::string f = write("co-bad.toml", "[[run]]\nname = \"x\"\n" + run_ok + text + "\n");
    const std::string got = load_error(f, base);
    CAPTURE(text);
    CAPTURE(got);
    CHECK(got.find(want) != std::string::npos);
  }
  // Null devices have no queue: own or shared is the same device, and need not be said (the lab's
  // null-co guests, each on its own null device).
  const std::string null = write("co-null.toml",
                                 "[[run]]\nname = \"x\"\nmeasured = { \"read.iops\" = 1000 }\nset = { "
                                 "\"backend.kind\" = \"null\" }\nco_running = [{ count = 3, set = { "
                                 "\"backend.kind\" = \"null\" } }]\n");
  const fit::Dataset d = fit::load_dataset(null, base);
  REQUIRE(d.runs.front().co_running);
  CHECK(d.runs.front().co_running->vms == 4);
}
