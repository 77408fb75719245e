// guest.per_page_us: the vCPU pins each page of a direct I/O's buffer on submit and releases it on
// completion, so a large request costs the guest more than a small one, in the simulation and in
// the MVA alike; a 4 KiB I/O, and sequential 4 KiB I/Os merged into one request, pay nothing.
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

// A device that takes no time, so that the latency is the CPU path's.
models::IoScenario scenario(const std::string& bs, double per_page_us, int depth = 1, const std::string& rw = "randread") {
  return models::load_io_scenario(
      kDefault, {"backend.kind=null", "backend.latency_us=0", "workload.bs=" + bs, "workload.rw=" + rw,
                 "workload.iodepth=" + std::to_string(depth), "guest.per_page_us=" + std::to_string(per_page_us),
                 "workload.ios=20000", "run.replications=2"});
}

double des_lat_us(const models::IoScenario& s) { return models::io_metric(models::simulate_io(s, 2), "read.lat_mean_us").mean; }

}  // namespace

TEST_CASE("pages beyond each I/O's first") {
  CHECK(models::extra_pages(4096, 1) == 0);
  CHECK(models::extra_pages(1 << 20, 1) == 255);
  CHECK(models::extra_pages(6000, 1) == 1);          // a partial page is a page
  CHECK(models::extra_pages(8 * 4096.0, 8) == 0);    // eight merged 4 KiB I/Os: one page each
  CHECK(models::extra_pages(4 * 65536.0, 4) == 60);  // four merged 64 KiB I/Os: 15 each
}

TEST_CASE("a 1 MiB read costs the guest 255 pages more than a 4 KiB one, in the simulation and the MVA") {
  // 1 us per page: 255 us more per 1 MiB I/O at QD1, on a device that takes no time (the
  // host's per-page cost, host.emu_per_page_us, is the same in both runs and cancels).
  const double des_gap = des_lat_us(scenario("1m", 1)) - des_lat_us(scenario("1m", 0));
  const double mva_gap =
      models::solve_io_mva(scenario("1m", 1)).lat_mean_ns / 1e3 - models::solve_io_mva(scenario("1m", 0)).lat_mean_ns / 1e3;
  CAPTURE(des_gap);
  CAPTURE(mva_gap);
  CHECK(des_gap == doctest::Approx(255).epsilon(0.1));
  CHECK(mva_gap == doctest::Approx(255).epsilon(0.1));
  // 4 KiB: nothing, to the bit.
  CHECK(des_lat_us(scenario("4k", 1)) == des_lat_us(scenario("4k", 0)));
  // The cost is the guest CPU's: TCG multiplies it.
  const models::IoScenario tcg = models::load_io_scenario(kDefault, {"host.accel=tcg", "host.tcg_cpu_scale=10"});
  CHECK(tcg.guest.per_page_ns == doctest::Approx(10 * models::load_io_scenario(kDefault).guest.per_page_ns));
  CHECK(models::io_parameter_value(tcg, "guest.per_page_us") == doctest::Approx(0.095));
}

TEST_CASE("sequential 4 KiB I/Os merged into large requests pay no per-page cost") {
  const auto merged = [](double per_page_us) {
    return models::load_io_scenario(
        kDefault, {"backend.kind=null", "backend.latency_us=0", "workload.bs=4k", "workload.rw=read", "workload.iodepth=16",
                   "workload.iodepth_batch_submit=16", "guest.per_page_us=" + std::to_string(per_page_us), "workload.ios=20000",
                   "run.replications=2"});
  };
  CHECK(des_lat_us(merged(1)) == des_lat_us(merged(0)));
  CHECK(models::solve_io_mva(merged(1)).iops == models::solve_io_mva(merged(0)).iops);
}
