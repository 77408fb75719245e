// Counts per I/O (count.interrupts_per_io, count.<kind>_wakes_per_io): what the lab counts
// beside each thread's CPU time (the guest's virtio interrupts, each QEMU thread's voluntary
// context switches; calibration/lab/record), as calibration fits them. The simulation counts
// its own events and the MVA its fixed point's probabilities; a manifest's `measured` reads them;
// a count the model has no events for is said and not fitted.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "calibration/fit/dataset.h"
#include "calibration_support.h"
#include "models/config.h"
#include "models/core_share.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

const std::string kDefault = test::kSourceDir + "/scenarios/default.toml";

// A lab-like setup: one vCPU under TCG on two cores, null-co with a latency.
models::IoScenario tcg(int depth, int iothreads, int vms = 1) {
  return models::load_io_scenario(
      kDefault, {"backend.kind=null", "backend.latency_us=50", "workload.rw=randread", "workload.bs=4k",
                 "workload.iodepth=" + std::to_string(depth), "host.iothreads=" + std::to_string(iothreads), "host.accel=tcg",
                 "guest.vcpus=1", "host.cores=2", "vm.count=" + std::to_string(vms), "workload.ios=20000", "run.replications=2"});
}

}  // namespace

TEST_CASE("the count metrics: interrupts and each kind of thread's wake-ups per I/O, nothing else") {
  CHECK(models::is_count_metric("count.interrupts_per_io"));
  CHECK(models::wake_metric_kind("count.vcpus_wakes_per_io") == 0);
  CHECK(models::wake_metric_kind("count.main_loop_wakes_per_io") == 1);
  CHECK(models::wake_metric_kind("count.iothreads_wakes_per_io") == 2);
  CHECK(models::wake_metric_kind("count.interrupts_per_io") == -1);
  CHECK_FALSE(models::is_count_metric("count.vcpu_wakes_per_io"));
  CHECK_FALSE(models::is_count_metric("count.kicks_per_io"));
  CHECK(models::is_io_metric("count.iothreads_wakes_per_io"));
  CHECK(models::figure_kind("count.interrupts_per_io") == "count");
  CHECK(models::figure_kind("count.main_loop_wakes_per_io") == "count");
}

TEST_CASE("at iodepth 1 every completion is an interrupt and wakes the vCPU and the serving thread, in both solutions") {
  for (int iothreads : {0, 1}) {
    CAPTURE(iothreads);
    const models::IoScenario s = tcg(1, iothreads);
    const models::IoRunReport r = models::simulate_io(s, 2);
    const models::IoMvaResult m = models::solve_io_mva(s);
    const std::string serving = iothreads > 0 ? "count.iothreads_wakes_per_io" : "count.main_loop_wakes_per_io";
    CHECK(models::io_metric(r, "count.interrupts_per_io").mean == doctest::Approx(1).epsilon(0.01));
    CHECK(models::io_metric_mva(m, s, "count.interrupts_per_io") == doctest::Approx(1).epsilon(0.01));
    // The request's kick and its completion (the device's latency outlasts the IOThread's poll)
    // each find the serving thread asleep; the vCPU halts while the request is out.
    const double des_serving = models::io_metric(r, serving).mean;
    CHECK(des_serving == doctest::Approx(2).epsilon(0.1));
    CHECK(models::io_metric_mva(m, s, serving) == doctest::Approx(des_serving).epsilon(0.1));
    const double des_vcpu = models::io_metric(r, "count.vcpus_wakes_per_io").mean;
    CHECK(des_vcpu > 0.5);
    CHECK(models::io_metric_mva(m, s, "count.vcpus_wakes_per_io") == doctest::Approx(des_vcpu).epsilon(0.25));
  }
}

TEST_CASE("with vm.count VMs the counts are one VM's, in both solutions") {
  const models::IoScenario s = tcg(1, 1, 2);
  const models::IoRunReport r = models::simulate_io(s, 2);
  const models::IoMvaResult m = models::solve_io_mva(s);
  CHECK(models::io_metric(r, "count.interrupts_per_io").mean == doctest::Approx(1).epsilon(0.01));
  CHECK(models::io_metric_mva(m, s, "count.interrupts_per_io") == doctest::Approx(1).epsilon(0.01));
  const double des = models::io_metric(r, "count.iothreads_wakes_per_io").mean;
  CHECK(des == doctest::Approx(2).epsilon(0.1));
  CHECK(models::io_metric_mva(m, s, "count.iothreads_wakes_per_io") == doctest::Approx(des).epsilon(0.1));
}

TEST_CASE("at depth an interrupt carries several completions and the threads sleep less, in both solutions") {
  for (int iothreads : {0, 1}) {
    CAPTURE(iothreads);
    const models::IoScenario one = tcg(1, iothreads), deep = tcg(16, iothreads);
    const models::IoRunReport r1 = models::simulate_io(one, 2), r16 = models::simulate_io(deep, 2);
    const models::IoMvaResult m16 = models::solve_io_mva(deep);
    for (const std::string metric : {"count.interrupts_per_io", "count.vcpus_wakes_per_io",
                                     iothreads > 0 ? "count.iothreads_wakes_per_io" : "count.main_loop_wakes_per_io"}) {
      CAPTURE(metric);
      const double des = models::io_metric(r16, metric).mean;
      CHECK(des < models::io_metric(r1, metric).mean);
      // The MVA's are probabilities of its fixed point, not the simulation's states: the same
      // direction and size, which is what calibration's surrogate needs (the simulation's slopes
      // correct it).
      const double mva = models::io_metric_mva(m16, deep, metric);
      CHECK(mva > 0.4 * des);
      CHECK(mva < 2.5 * des);
    }
  }
}

TEST_CASE("a manifest's measured counts: read as the run's targets, misspelt names refused, counts the model lacks said") {
  const std::string base = test::write("count-base.toml", "base = \"" + kDefault +
                                                              "\"\n[host]\ncores = 2\naccel = \"kvm\"\n[backend]\nkind = "
                                                              "\"null\"\nlatency_us = 20\n[workload]\nios = 5000\n[run]\n"
                                                              "replications = 2\n");
  const std::string head = "[[run]]\nname = \"qd1\"\n";
  const std::string set =
      "set = { \"host.iothreads\" = 1, \"workload.rw\" = \"randread\", \"workload.bs\" = 4096, "
      "\"workload.iodepth\" = 1 }\n";
  // The run qd1 with these measured figures, and `more` after its set.
  const auto manifest = [&](const std::string& file, const std::string& measured, const std::string& more = "") {
    return test::write(file, head + "measured = { \"read.iops\" = 20000, " + measured + " }\n" + set + more);
  };
  SUBCASE("read, on the run's first direction; the main loop beside an IOThread under KVM has no events") {
    const fit::Dataset d = fit::load_dataset(
        manifest(
            "count-ok.toml",
            "\"count.interrupts_per_io\" = 0.98, \"count.iothreads_wakes_per_io\" = 1.9, \"count.main_loop_wakes_per_io\" = 0.2"),
        base);
    REQUIRE(d.runs.size() == 1);
    std::vector<std::string> counts;
    for (const fit::Target& t : d.runs[0].targets)
      if (t.kind == "count") counts.push_back(t.metric);
    CHECK(counts == std::vector<std::string>{"count.interrupts_per_io", "count.iothreads_wakes_per_io"});
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].find("count.main_loop_wakes_per_io is measured where the model has none of these events") == 0);
  }
  SUBCASE("left out unless asked (vqsim calibrate --fit-counts), and said") {
    fit::Dataset d = fit::load_dataset(
        manifest("count-off.toml", "\"count.interrupts_per_io\" = 0.98, \"count.main_loop_wakes_per_io\" = 0.2"), base);
    fit::leave_out_counts(d);
    for (const fit::Target& t : d.runs[0].targets) CHECK(t.kind != "count");
    REQUIRE(d.notes.size() == 1);  // the main loop's note goes with the counts
    CHECK(d.notes[0] == "the counts per I/O (count.*) of 1 run are not fitted; vqsim calibrate --fit-counts fits them");
  }
  SUBCASE("a run beside other guests: its counts are said and not fitted") {
    const fit::Dataset d =
        fit::load_dataset(manifest("count-co.toml", "\"count.interrupts_per_io\" = 0.98",
                                   "co_running = [{ count = 1, backend = \"own\", set = { \"workload.rw\" = \"randread\", "
                                   "\"workload.bs\" = 4096, \"workload.iodepth\" = 1 } }]\n"),
                          base);
    for (const fit::Target& t : d.runs[0].targets) CHECK(t.kind != "count");
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].find("count.* figures of runs beside other guests (qd1") == 0);
  }
  SUBCASE("a misspelt count names the one meant") {
    CHECK_THROWS_WITH_AS(fit::load_dataset(manifest("count-typo.toml", "\"count.iothread_wakes_per_io\" = 1"), base),
                         doctest::Contains("count-typo.toml:3: run 'qd1': measured key 'count.iothread_wakes_per_io' (did you "
                                           "mean 'count.iothreads_wakes_per_io'?)"),
                         models::ConfigError);
  }
}
