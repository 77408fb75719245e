// TCG's big QEMU lock (host.tcg_bql, docs/sources.md §4): the engine's wait for the end of another
// station's pass (sim::FcfsStation::waits_for, when_pass_ends) on a hand-timed path, and in the I/O path
// the vCPU's kicks and interrupts waiting for the main loop's pass: blocked time that is not
// CPU, interrupts that carry their pass, and nothing under KVM.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "calibration_support.h"
#include "models/config.h"
#include "models/emulation_thread.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "sim/fcfs_station.h"
#include "sim/simulator.h"
#include "sim_support.h"

using namespace vqsim;
using test::Arrivals;
using test::Recorder;

namespace {

// One server, 5 ns of work once it has the lock.
test::LockWaiter& make_waiter(sim::Simulator& sim, sim::FcfsStation& holder) {
  return sim.make<test::LockWaiter>("waiter", holder, 1, sim::Distribution::deterministic(5));
}

const std::string kLab = test::kSourceDir + "/scenarios/lab-tcg.toml";

// The lab's TCG guest at depth behind a busy main loop (QEMU's costs at a fitted multiple).
models::IoScenario busy_main_loop(std::vector<std::string> more = {}) {
  std::vector<std::string> o = {"workload.iodepth=16", "workload.ios=20000", "run.replications=2", "host.cpu_scale=5"};
  o.insert(o.end(), more.begin(), more.end());
  return models::load_io_scenario(kLab, o);
}

double get(const models::IoRunReport& r, const std::string& name) { return r.get(name).mean; }

}  // namespace

TEST_CASE("a job that needs a station's lock waits, holding its server, for the end of that station's pass") {
  sim::Simulator sim(1, 0);
  auto& to_holder = sim.make<Arrivals>("to_holder", std::vector<sim::time_ns>{0, 50, 250});
  auto& to_waiter = sim.make<Arrivals>("to_waiter", std::vector<sim::time_ns>{10, 20, 260, 400});
  auto& holder = sim.make<sim::FcfsStation>("holder", 1, sim::Distribution::deterministic(100));
  auto& waiter = make_waiter(sim, holder);
  auto& done_h = sim.make<Recorder>("done_h");
  auto& done_w = sim.make<Recorder>("done_w");
  sim::connect(to_holder.out, holder);
  sim::connect(to_waiter.out, waiter);
  sim::connect(holder.out, done_h);
  sim::connect(waiter.out, done_w);
  sim.run(sim::RunLimits{});
  // The holder's passes: its first job alone (0-100), then the one that arrived during it
  // (100-200), then the one that found it idle at 250 (250-350). The waiter's first job waits
  // from 10 for the first pass's end and is served 100-105, though the holder is busy again; its
  // second waits in line behind it (105) and then for the second pass (200-205); the third for
  // the third pass (350-355); the fourth finds the holder idle (400-405).
  CHECK(done_h.times == std::vector<sim::time_ns>{100, 200, 350});
  CHECK(done_w.times == std::vector<sim::time_ns>{105, 205, 355, 405});
  const sim::Metrics m = sim.report();
  // The waiter's server was held 10-205, 260-355 and 400-405: the wait counts as busy.
  CHECK(m.get("waiter.utilization") == doctest::Approx(295.0 / 405.0));
}

TEST_CASE("passes are a single server's: a lock on a station of several servers is refused") {
  sim::Simulator sim(1, 0);
  auto& two = sim.make<sim::FcfsStation>("two", 2, sim::Distribution::deterministic(100));
  auto& waiter = make_waiter(sim, two);
  CHECK_THROWS_WITH_AS(two.when_pass_ends(waiter, 0), doctest::Contains("2 servers"), std::logic_error);
}

TEST_CASE("under TCG's lock the vCPU waits off CPU for the main loop's pass, and an interrupt carries the pass") {
  const models::IoRunReport on = models::simulate_io(busy_main_loop(), 2);
  const models::IoRunReport off = models::simulate_io(busy_main_loop({"host.tcg_bql=false"}), 2);
  // The fio thread's station is held longer than its CPU time: the lock's wait (host.cores: its
  // CPU is counted as host_cores).
  const double held_on = get(on, "guest.fio_job0.utilization") - get(on, "guest.fio_job0.host_cores");
  const double held_off = get(off, "guest.fio_job0.utilization") - get(off, "guest.fio_job0.host_cores");
  CHECK(held_off == doctest::Approx(0.0).epsilon(0.01));
  CHECK(held_on > 0.02);
  // An interrupt raised during a pass is taken after it, with the pass's other completions.
  CHECK(get(on, "virtqueue.irq0.completions_per_interrupt") > get(off, "virtqueue.irq0.completions_per_interrupt"));
  // At iodepth 1 the main loop has finished its pass when the interrupt is delivered: no wait.
  const models::IoRunReport qd1_on = models::simulate_io(busy_main_loop({"workload.iodepth=1"}), 2);
  const models::IoRunReport qd1_off = models::simulate_io(busy_main_loop({"workload.iodepth=1", "host.tcg_bql=false"}), 2);
  CHECK(get(qd1_on, "read.iops") == doctest::Approx(get(qd1_off, "read.iops")).epsilon(0.02));
}

TEST_CASE("the lock is TCG's: under KVM host.tcg_bql changes nothing") {
  const models::IoRunReport on = models::simulate_io(busy_main_loop({"host.accel=kvm"}), 2);
  const models::IoRunReport off = models::simulate_io(busy_main_loop({"host.accel=kvm", "host.tcg_bql=false"}), 2);
  CHECK(get(on, "read.iops") == get(off, "read.iops"));
  CHECK(get(on, "read.lat_mean_us") == get(off, "read.lat_mean_us"));
  CHECK_FALSE(models::bql_held_by_main_loop(busy_main_loop({"host.accel=kvm"})));
  CHECK(models::bql_held_by_main_loop(busy_main_loop()));
  CHECK(models::bql_held_by_main_loop(busy_main_loop({"host.iothreads=1"})));  // the relay's passes
}

TEST_CASE("the MVA counts the lock's wait as the vCPU's time, not its CPU, behind a main loop serving the device") {
  // (The wake-up that ends a wait is CPU, host.tcg_wake_us: off here, to see the wait alone.)
  const models::IoScenario s = busy_main_loop({"host.tcg_wake_us=0"});
  CHECK(models::bql_wait_ns(s, 0.0, 50e3) == 0.0);
  // u S / (1 - u^2): S = 25 us a visit (two a request), u = 0.5: 16.7 us.
  CHECK(models::bql_wait_ns(s, 0.5, 50e3) == doctest::Approx(50e3 / 3));
  CHECK(models::bql_wait_ns(busy_main_loop({"host.iothreads=1"}), 0.5, 50e3) == 0.0);
  const models::IoMvaResult on = models::solve_io_mva(s);
  const models::IoMvaResult off = models::solve_io_mva(busy_main_loop({"host.tcg_bql=false", "host.tcg_wake_us=0"}));
  double wait = 0;
  for (const models::IoMvaStage& st : on.stages) wait += st.wait_ns;
  CHECK(wait > 0);
  // The vCPU's CPU per I/O (its stations' demand less the wait) stays within the kicks' change.
  const double cpu_on = models::io_metric_mva(on, s, "cpu.vcpus_us_per_io");
  const double cpu_off =
      models::io_metric_mva(off, busy_main_loop({"host.tcg_bql=false", "host.tcg_wake_us=0"}), "cpu.vcpus_us_per_io");
  CHECK(cpu_on == doctest::Approx(cpu_off).epsilon(0.25));
}
