// host.accel: under TCG every guest vCPU cost is host.tcg_cpu_scale times KVM's, and nothing
// else changes; a calibration on TCG runs fits that multiple (not guest.cpu_scale), so that its
// FIT.toml predicts `host.accel = kvm` with the documented KVM guest costs and the fitted QEMU
// and device costs. The "measurements" are simulated at a known truth (calibration_support.h).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "calibration/fit/calibrate.h"
#include "calibration/fit/dataset.h"
#include "calibration/fit/fit_output.h"
#include "calibration/fit/parameters.h"
#include "calibration_support.h"
#include "models/config.h"
#include "models/guest_driver.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

const std::string kScenarios = test::kSourceDir + "/scenarios/";
using test::write;

// The effective per-I/O costs a simulation uses, guest and host side.
std::vector<double> guest_costs(const models::IoScenario& s) {
  const models::DriverCosts d = models::driver_costs(s);
  return {s.guest.fio_submit_ns, s.guest.fio_complete_ns, s.vq.kick_exit_ns, s.vq.irq_handler_ns, d.submit_ns, d.complete_ns};
}
std::vector<double> host_costs(const models::IoScenario& s) {
  const models::DriverCosts d = models::driver_costs(s);
  return {s.host.main_loop_ns, s.host.native_submit_ns, d.emu_submit_ns, d.emu_complete_ns, s.vq.wakeup_ns};
}

// The truth the "measured" TCG runs are simulated at.
constexpr double kTrueTcg = 6, kTrueReadUs = 90;

std::string base_scenario() {
  return write("accel-base.toml", "base = \"" + kScenarios +
                                      "default.toml\"\n[guest]\nvcpus = 1\n[host]\naccel = \"tcg\"\n"
                                      "[workload]\nios = 4000\n[run]\nreplications = 2\n");
}

// read.iops and read.lat_mean_us at `depth` under `accel`, at the truth, with more I/Os and
// another seed than calibration uses.
std::pair<double, double> truth_figures(const std::string& accel, int depth) {
  const models::IoScenario s = models::load_io_scenario(
      base_scenario(),
      {"host.accel=" + accel, "host.tcg_cpu_scale=" + std::to_string(kTrueTcg), "backend.read_us=" + std::to_string(kTrueReadUs),
       "workload.iodepth=" + std::to_string(depth), "workload.ios=30000", "run.replications=3", "run.seed=20261202"});
  const models::IoRunReport rep = models::simulate_io(s, 2);
  return {models::io_metric(rep, "read.iops").mean, models::io_metric(rep, "read.lat_mean_us").mean};
}

const fit::ParamEstimate* param(const fit::CalibrationResult& r, const std::string& key) {
  for (const auto& p : r.params)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE(
    "under TCG every guest vCPU cost is host.tcg_cpu_scale times KVM's but the interrupt's, host.tcg_irq_us; the host's costs "
    "are KVM's") {
  const std::string lab = kScenarios + "lab-tcg.toml";
  // TCG's interrupt at 8 times KVM's (virtqueue.irq_handler_us 1.0): the same guest as KVM's at 8x.
  // (TCG's big QEMU lock, host.tcg_bql, its vCPU's background work, host.tcg_vcpu_busy, and its
  // vCPU thread's wake-ups, host.tcg_wake_us, are TCG's own mechanisms, not costs: off here, so
  // that only the costs differ.)
  const models::IoScenario tcg = models::load_io_scenario(
      lab, {"host.tcg_cpu_scale=8", "host.tcg_irq_us=8", "host.tcg_bql=false", "host.tcg_vcpu_busy=0", "host.tcg_wake_us=0"});
  const models::IoScenario kvm = models::load_io_scenario(lab, {"host.accel=kvm"});
  // (The interrupt's handler window is on under TCG by default: on here too, so that only the costs differ.)
  const models::IoScenario kvm_slow_guest =
      models::load_io_scenario(lab, {"host.accel=kvm", "guest.cpu_scale=8", "virtqueue.handler_window=on"});
  REQUIRE(tcg.host.accel == models::Accel::tcg);
  REQUIRE(kvm.host.accel == models::Accel::kvm);
  CHECK(tcg.warnings.empty());
  CHECK(kvm.warnings.empty());  // host.accel stated: the KVM prediction is meant
  // KVM's guest costs are the documented defaults (guest.fio_submit_us = 3.0).
  CHECK(kvm.guest.fio_submit_ns == doctest::Approx(3000));
  const std::vector<double> g_tcg = guest_costs(tcg), g_kvm = guest_costs(kvm), g_slow = guest_costs(kvm_slow_guest);
  for (std::size_t i = 0; i < g_tcg.size(); ++i) {
    CAPTURE(i);
    CHECK(g_tcg[i] == doctest::Approx(8 * g_kvm[i]));
    CHECK(g_tcg[i] == doctest::Approx(g_slow[i]));  // the same product as a guest CPU 8x slower
  }
  CHECK(host_costs(tcg) == host_costs(kvm));
  // A fitted value reads back per unit of the scale, as written in the file.
  CHECK(models::io_parameter_value(tcg, "guest.fio_submit_us") == doctest::Approx(3.0));
  CHECK(models::io_parameter_value(tcg, "host.tcg_cpu_scale") == doctest::Approx(8));
  CHECK(models::solve_io_mva(tcg).iops == doctest::Approx(models::solve_io_mva(kvm_slow_guest).iops));
  CHECK(models::solve_io_mva(kvm).iops > 3 * models::solve_io_mva(tcg).iops);
  // The signature says TCG (so a KVM prediction from a TCG fit is another configuration); KVM's
  // adds nothing, as before the key existed.
  CHECK(models::setup_signature(tcg).ends_with(";accel=tcg"));
  CHECK(models::setup_signature(kvm).find("accel") == std::string::npos);
}

TEST_CASE("a TCG scale without a stated accelerator is a warning") {
  const models::IoScenario s = models::load_io_scenario(kScenarios + "default.toml", {"host.tcg_cpu_scale=5"});
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("host.tcg_cpu_scale: has no effect: host.accel is kvm") != std::string::npos);
  CHECK(models::load_io_scenario(kScenarios + "default.toml", {"host.tcg_cpu_scale=5", "host.accel=kvm"}).warnings.empty());
}

TEST_CASE("a calibration on TCG runs fits host.tcg_cpu_scale and predicts KVM with KVM's guest costs and the fitted device") {
  const std::string base = base_scenario();
  std::string runs = "[setup]\nsource = \"simulated at host.tcg_cpu_scale = 6, backend.read_us = 90\"\n";
  for (int depth : {1, 4, 16}) {
    const auto [iops, lat] = truth_figures("tcg", depth);
    runs += "\n[[run]]\nname = \"qd" + std::to_string(depth) + "\"\nmeasured = { \"read.iops\" = " + std::to_string(iops) +
            ", \"read.lat_mean_us\" = " + std::to_string(lat) + " }\nset = { \"workload.iodepth\" = " + std::to_string(depth) +
            ", \"host.accel\" = \"tcg\" }\n";
  }
  const fit::Dataset d = fit::load_dataset(write("accel-manifest.toml", runs), base);
  std::vector<std::size_t> all = {0, 1, 2};
  // Runs that are all TCG cannot tell a slower guest CPU from TCG's multiple: the TCG one is fitted.
  const std::vector<std::string> candidates = fit::candidate_keys(d, all);
  CHECK(std::find(candidates.begin(), candidates.end(), "host.tcg_cpu_scale") != candidates.end());
  CHECK(std::find(candidates.begin(), candidates.end(), "guest.cpu_scale") == candidates.end());

  fit::CalibrateOptions o;
  o.fit_keys = {"host.tcg_cpu_scale", "backend.read_us"};
  o.threads = 2;
  o.bootstrap = 8;
  const fit::CalibrationResult r = fit::calibrate(d, o);
  const fit::ParamEstimate* tcg = param(r, "host.tcg_cpu_scale");
  const fit::ParamEstimate* read = param(r, "backend.read_us");
  REQUIRE(tcg);
  REQUIRE(read);
  CAPTURE(tcg->estimate);
  CAPTURE(read->estimate);
  CHECK(std::fabs(tcg->estimate / kTrueTcg - 1) < 0.1);
  CHECK(std::fabs(read->estimate / kTrueReadUs - 1) < 0.1);

  // The FIT.toml predicted under KVM: the fitted device figure carries over, the guest's costs
  // are KVM's defaults (guest.cpu_scale stays 1), and the figures are the truth's under KVM.
  const std::string fit_path = (test::scratch() / "accel-fit.toml").string();
  std::ofstream(fit_path) << fit::fit_toml(d, r, fit_path, "test_accel");
  for (int depth : {1, 16}) {
    CAPTURE(depth);
    const models::IoScenario kvm = models::load_io_scenario(
        fit_path, {"host.accel=kvm", "workload.iodepth=" + std::to_string(depth), "workload.ios=30000", "run.replications=3"});
    CHECK(kvm.warnings.empty());
    CHECK(models::io_parameter_value(kvm, "backend.read_us") == doctest::Approx(read->estimate).epsilon(1e-6));
    CHECK(kvm.guest.cpu_scale == 1);
    CHECK(kvm.guest.fio_submit_ns == doctest::Approx(3000));
    const double predicted = models::io_metric(models::simulate_io(kvm, 2), "read.iops").mean;
    const double truth = truth_figures("kvm", depth).first;
    CAPTURE(predicted);
    CAPTURE(truth);
    CHECK(std::fabs(predicted / truth - 1) < 0.1);
    // Had TCG's multiple been fitted as guest.cpu_scale, the KVM prediction would keep it: at
    // QD16, where the guest's CPU is the bottleneck, several times too slow.
    if (depth == 16) {
      const models::IoScenario carried = models::load_io_scenario(
          fit_path, {"host.accel=kvm", "guest.cpu_scale=" + std::to_string(tcg->estimate), "workload.iodepth=16"});
      CHECK(models::solve_io_mva(carried).iops < 0.5 * truth);
    }
  }
}
