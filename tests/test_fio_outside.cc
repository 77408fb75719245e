// guest.fio_outside_us: fio stamps an I/O's start after preparing it and a completion before
// accounting it (io_u.c get_io_u, io_completed), so part of its own work per I/O lies outside the
// latency it reports. At iodepth 1 an I/O's cycle is its latency plus that part (the lab's runs:
// IOPS x mean latency 0.91-0.96); at depth it is vCPU work like the rest. The part is carved out
// of fio's per-I/O costs, so the vCPU's work per I/O, and the throughput it bounds, stay.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "calibration_support.h"
#include "models/config.h"
#include "models/guest_cpu.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

const std::string kDefault = test::kSourceDir + "/scenarios/default.toml";

models::IoScenario on_null(double outside_us, int depth) {
  return models::load_io_scenario(
      kDefault, {"backend.kind=null", "backend.latency_us=20", "workload.rw=randread", "workload.bs=4k",
                 "workload.iodepth=" + std::to_string(depth), "guest.fio_outside_us=" + std::to_string(outside_us),
                 "workload.ios=20000", "run.replications=2"});
}

using test::des;

}  // namespace

TEST_CASE("fio's work outside its latency: at iodepth 1 the cycle is the latency plus it, in the simulation and the MVA") {
  const models::IoScenario none = on_null(0, 1), some = on_null(2, 1);
  // The same work per I/O: the throughput does not move, the latency falls by the part.
  CHECK(des(some, "read.iops") == doctest::Approx(des(none, "read.iops")).epsilon(0.01));
  CHECK(des(none, "read.lat_mean_us") - des(some, "read.lat_mean_us") == doctest::Approx(2).epsilon(0.05));
  CHECK(des(none, "read.clat_mean_us") - des(some, "read.clat_mean_us") == doctest::Approx(2).epsilon(0.05));
  CHECK(des(some, "read.slat_mean_us") == doctest::Approx(des(none, "read.slat_mean_us")).epsilon(0.01));
  // Little's law on fio's own figures: one I/O in flight, but not all of the time.
  const double cycle_us = 1e6 / des(some, "read.iops");
  CHECK(des(some, "read.lat_mean_us") == doctest::Approx(cycle_us - 2).epsilon(0.01));
  const models::IoMvaResult mva_none = models::solve_io_mva(none), mva_some = models::solve_io_mva(some);
  CHECK(mva_some.iops == doctest::Approx(mva_none.iops).epsilon(0.01));
  CHECK((mva_none.lat_mean_ns - mva_some.lat_mean_ns) / 1e3 == doctest::Approx(2).epsilon(0.05));
}

TEST_CASE("fio's work outside its latency: at depth the fio thread bounds the same throughput") {
  // A fio thread at iodepth 32 on a device that takes no time is the bottleneck: its work per I/O
  // is the same with or without the part outside the latency.
  const models::IoScenario none = on_null(0, 32), some = on_null(2, 32);
  CHECK(des(some, "read.iops") == doctest::Approx(des(none, "read.iops")).epsilon(0.02));
  CHECK(models::solve_io_mva(some).iops == doctest::Approx(models::solve_io_mva(none).iops).epsilon(0.01));
}

TEST_CASE("fio's work outside its latency comes from the completion's cost first, then the submit's") {
  const auto split = [](double outside_us) {
    return models::fio_work_split(models::load_io_scenario(
        kDefault, {"guest.fio_submit_us=3", "guest.fio_complete_us=2.5", "guest.fio_outside_us=" + std::to_string(outside_us)}));
  };
  const models::FioWorkSplit small = split(1.5), large = split(4), too_large = split(9);
  CHECK(small.outside == doctest::Approx(1500));
  CHECK(small.complete == doctest::Approx(1000));
  CHECK(small.submit == doctest::Approx(3000));
  CHECK(large.complete == doctest::Approx(0));
  CHECK(large.submit == doctest::Approx(1500));
  CHECK(too_large.outside == doctest::Approx(5500));  // at most fio's whole cost
  CHECK(too_large.submit + too_large.complete == doctest::Approx(0));
}
