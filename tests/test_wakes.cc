// guest.wake_us and host.loop_wake_us: a thread that sleeps between requests pays its wake-up,
// one that finds work waiting does not. At iodepth 1 every completion finds fio asleep in
// io_getevents and every kick finds the emulation thread asleep; at depth they are busy, so
// the per-I/O cost falls with depth (the lab's per-thread CPU, docs/sources.md §1). Both the
// simulation and the MVA charge it; both are off (0) unless a scenario sets them.
#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

#include "calibration_support.h"
#include "models/aio_engine.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

const std::string kDefault = test::kSourceDir + "/scenarios/default.toml";

// A device that takes no time, and an IOThread that does not poll (every kick wakes it at QD1).
models::IoScenario scenario(double guest_wake_us, double loop_wake_us, int depth) {
  return models::load_io_scenario(
      kDefault, {"backend.kind=null", "backend.latency_us=0", "workload.rw=randread", "workload.bs=4k",
                 "workload.iodepth=" + std::to_string(depth), "host.iothreads=1", "host.poll_max_us=0",
                 "guest.wake_us=" + std::to_string(guest_wake_us), "host.loop_wake_us=" + std::to_string(loop_wake_us),
                 "workload.ios=20000", "run.replications=2"});
}

using test::des;

}  // namespace

TEST_CASE("at iodepth 1 every I/O pays both wake-ups, in the simulation and the MVA") {
  // 40 us for fio's wake-up and 20 us for the IOThread's: 60 us more per I/O at QD1.
  const double des_gap = des(scenario(40, 20, 1), "read.lat_mean_us") - des(scenario(0, 0, 1), "read.lat_mean_us");
  const double mva_gap =
      (models::solve_io_mva(scenario(40, 20, 1)).lat_mean_ns - models::solve_io_mva(scenario(0, 0, 1)).lat_mean_ns) / 1e3;
  CAPTURE(des_gap);
  CAPTURE(mva_gap);
  CHECK(des_gap == doctest::Approx(60).epsilon(0.1));
  CHECK(mva_gap == doctest::Approx(60).epsilon(0.15));
}

TEST_CASE("at depth the threads are busy and the wake-ups mostly vanish from the throughput") {
  // At QD32 the fio thread is the bottleneck: a wake-up paid on every I/O would cut its IOPS by
  // 40 / (its ~8 us per I/O + 40); it is paid only when fio runs dry.
  const double fast = des(scenario(0, 0, 32), "read.iops"), woken = des(scenario(40, 20, 32), "read.iops");
  const double every_io = fast * 8.0 / (8.0 + 40.0);
  CAPTURE(fast);
  CAPTURE(woken);
  CHECK(woken > 0.8 * fast);
  CHECK(woken > 3 * every_io);
  const double mva_fast = models::solve_io_mva(scenario(0, 0, 32)).iops,
               mva_woken = models::solve_io_mva(scenario(40, 20, 32)).iops;
  CAPTURE(mva_fast);
  CAPTURE(mva_woken);
  CHECK(mva_woken > 0.8 * mva_fast);
  // The MVA estimates how often a thread is asleep from its utilization, the simulation counts
  // it: at depth the MVA charges the wake-ups more often (here 18% fewer IOPS). This is why both
  // keys are off by default (docs/sources.md §1).
  CHECK(mva_woken == doctest::Approx(woken).epsilon(0.25));
}

TEST_CASE("guest.halt_after_us: a completion that comes before the vCPU has halted pays no wake-up") {
  const auto with_halt = [](double guest_wake_us, int depth, double halt_us) {
    models::IoScenario s = scenario(guest_wake_us, 0, depth);
    s.guest.halt_after_ns = halt_us * 1e3;
    return s;
  };
  // QD1: the wait is the request's round trip. A halt that takes longer than it never happens;
  // one that takes 1 us always does, and every I/O pays the 40 us.
  const double base = des(scenario(0, 0, 1), "read.lat_mean_us");
  CHECK(des(with_halt(40, 1, 1000), "read.lat_mean_us") == doctest::Approx(base).epsilon(0.02));
  CHECK(des(with_halt(40, 1, 1), "read.lat_mean_us") - base == doctest::Approx(40).epsilon(0.1));
  const double mva_base = models::solve_io_mva(scenario(0, 0, 1)).lat_mean_ns / 1e3;
  CHECK(models::solve_io_mva(with_halt(40, 1, 1000)).lat_mean_ns / 1e3 == doctest::Approx(mva_base).epsilon(0.02));
  CHECK(models::solve_io_mva(with_halt(40, 1, 1)).lat_mean_ns / 1e3 - mva_base == doctest::Approx(40).epsilon(0.15));
  // QD32: fio's waits are short when it runs dry at all; the MVA, which charged the wake-up from
  // the thread's utilization alone (the test above), now charges it only for the waits past the
  // halt, nearer the simulation.
  const double woken = des(scenario(40, 0, 32), "read.iops");
  const double mva_every = models::solve_io_mva(scenario(40, 0, 32)).iops;
  const double mva_halt = models::solve_io_mva(with_halt(40, 32, 5)).iops;
  CAPTURE(woken);
  CAPTURE(mva_every);
  CAPTURE(mva_halt);
  CHECK(mva_halt > mva_every);
  CHECK(std::abs(mva_halt - woken) < std::abs(mva_every - woken));
}

TEST_CASE("the wake-ups scale with their CPU: guest's under TCG, host's with host.cpu_scale") {
  const std::vector<std::string> wakes{"guest.wake_us=15", "host.loop_wake_us=4", "guest.halt_after_us=2"};
  std::vector<std::string> tcg_sets = wakes;
  for (const char* x : {"host.accel=tcg", "host.tcg_cpu_scale=10", "host.cpu_scale=2"}) tcg_sets.emplace_back(x);
  const models::IoScenario tcg = models::load_io_scenario(kDefault, tcg_sets);
  const models::IoScenario kvm = models::load_io_scenario(kDefault, wakes);
  CHECK(kvm.guest.wake_ns == doctest::Approx(15000));
  CHECK(tcg.guest.wake_ns == doctest::Approx(10 * kvm.guest.wake_ns));
  CHECK(tcg.guest.halt_after_ns == doctest::Approx(10 * kvm.guest.halt_after_ns));
  CHECK(models::io_parameter_value(tcg, "guest.halt_after_us") == doctest::Approx(2));
  CHECK(tcg.host.loop_wake_ns == doctest::Approx(2 * kvm.host.loop_wake_ns));
  CHECK(models::io_parameter_value(tcg, "guest.wake_us") == doctest::Approx(15));
  CHECK(models::io_parameter_value(tcg, "host.loop_wake_us") == doctest::Approx(4.0));
  // Under TCG the vCPU thread's own wake-up (host.tcg_wake_us, on by default) takes guest.wake_us's
  // place: said, and not said once it is off.
  auto says_wake = [](const models::IoScenario& s) {
    return std::any_of(s.warnings.begin(), s.warnings.end(), [](const std::string& w) {
      return w.find("guest.wake_us") != std::string::npos && w.find("host.tcg_wake_us") != std::string::npos;
    });
  };
  CHECK(says_wake(tcg));
  CHECK_FALSE(says_wake(kvm));
  tcg_sets.emplace_back("host.tcg_wake_us=0");
  CHECK_FALSE(says_wake(models::load_io_scenario(kDefault, tcg_sets)));
}

TEST_CASE("off by default: a scenario that names neither pays no wake-up") {
  const models::IoScenario s = models::load_io_scenario(kDefault);
  CHECK(s.guest.wake_ns == 0);
  CHECK(s.guest.halt_after_ns == 0);
  CHECK(s.host.loop_wake_ns == 0);
}

TEST_CASE("QEMU's adaptive polling: a wait past host.poll_max_us drops the window to 0, short ones grow it") {
  // An IOThread at iodepth 1 beside a 50 us device: the completion comes after a wait longer than
  // the 32.768 us maximum, the next kick after the guest's few microseconds. Polling at the
  // fixed maximum catches the kick; QEMU's window is 0 after the completion's long wait, so the
  // kick finds the thread asleep too: twice the wake-ups.
  auto at = [](const std::string& latency_us, int depth, bool adaptive) {
    return models::load_io_scenario(kDefault, {"backend.kind=null", "backend.latency_us=" + latency_us, "workload.rw=randread",
                                               "workload.bs=4k", "workload.iodepth=" + std::to_string(depth), "host.iothreads=1",
                                               std::string("host.poll_adaptive=") + (adaptive ? "true" : "false"),
                                               "workload.ios=20000", "run.replications=2"});
  };
  auto wakes_per_io = [](const models::IoScenario& s) {
    const models::IoRunReport r = models::simulate_io(s, 2);
    return r.get("host.iothread0.wakeups_per_s").mean / models::io_metric(r, "total.iops").mean;
  };
  const double fixed = wakes_per_io(at("50", 1, false)), adaptive = wakes_per_io(at("50", 1, true));
  CHECK(fixed == doctest::Approx(1).epsilon(0.05));
  CHECK(adaptive == doctest::Approx(2).epsilon(0.05));
  // Without a device latency the completion is the kick's own pass and the kick follows the guest's
  // short turn: the window grows to cover it, and the thread sleeps no more than the fixed one.
  CHECK(wakes_per_io(at("0", 1, true)) <= wakes_per_io(at("0", 1, false)) + 0.02);
  // The MVA's chain of windows: the kicks it charges fall between the fixed window's and always.
  for (int depth : {1, 16}) {
    CAPTURE(depth);
    const models::IoScenario f = at("50", depth, false), a = at("50", depth, true);
    const double mva_fixed = models::solve_io_mva(f).iops, mva_adaptive = models::solve_io_mva(a).iops;
    CHECK(mva_adaptive <= mva_fixed);
    CHECK(mva_adaptive == doctest::Approx(models::io_metric(models::simulate_io(a, 2), "total.iops").mean).epsilon(0.15));
  }
}

TEST_CASE("linux-aio's eventfd, left set by completions found while polling, keeps the IOThread from sleeping once") {
  // QEMU's linux-aio poll handler takes completions from the ring and leaves the eventfd the
  // kernel signalled for them set; the next polling round that finds nothing is followed by a
  // wait that returns at once, and the thread polls again with a grown window before it sleeps.
  // io_uring's completion fd is the ring itself (readable only while completions wait), so it
  // sleeps at the first failed round: the same path otherwise (equal submit costs).
  auto at = [](const std::string& aio, const std::string& backend) {
    return models::load_io_scenario(
        kDefault,
        {"host.iothreads=1", "host.aio=" + aio, "host.native_submit_us=1", "host.io_uring_submit_us=1", "backend.kind=" + backend,
         "workload.rw=randread", "workload.bs=4k", "workload.iodepth=4", "workload.ios=20000", "run.replications=2"});
  };
  CHECK(models::aio_engine(at("native", "nvme")).poll_leaves_notifier);
  CHECK_FALSE(models::aio_engine(at("io_uring", "nvme")).poll_leaves_notifier);
  CHECK_FALSE(models::aio_engine(at("threads", "nvme")).poll_leaves_notifier);
  CHECK_FALSE(models::aio_engine(at("native", "null")).poll_leaves_notifier);  // null-co: no AIO engine
  auto wakes_per_io = [](const models::IoScenario& s) {
    const models::IoRunReport r = models::simulate_io(s, 2);
    return r.get("host.iothread0.wakeups_per_s").mean / models::io_metric(r, "total.iops").mean;
  };
  const double native = wakes_per_io(at("native", "nvme")), io_uring = wakes_per_io(at("io_uring", "nvme"));
  CAPTURE(native);
  CAPTURE(io_uring);
  CHECK(native < 0.6 * io_uring);
  // The MVA's chain of windows takes the second round too: fewer wake-ups, no fewer IOPS.
  CHECK(models::solve_io_mva(at("native", "nvme")).iops >= models::solve_io_mva(at("io_uring", "nvme")).iops);
}

TEST_CASE("guest.halt_after_us: the vCPU's way into a halt is its CPU time, on no request's path") {
  // A device of 100 us: at QD1 fio waits about that long each time. A way into the halt of 10 us
  // is spent in every wait (then the vCPU halts and the completion wakes it); one of 1 ms is never
  // finished, and the vCPU spends the whole wait on it, never halting. Neither lengthens a request.
  const auto at = [](double halt_us) {
    return models::load_io_scenario(
        kDefault, {"backend.kind=null", "backend.latency_us=100", "workload.rw=randread", "workload.bs=4k", "workload.iodepth=1",
                   "host.iothreads=1", "host.poll_max_us=0", "host.cores=4", "guest.halt_after_us=" + std::to_string(halt_us),
                   "workload.ios=20000", "run.replications=2"});
  };
  const auto vcpu_us = [](const models::IoRunReport& r) { return models::io_metric(r, "cpu.vcpus_us_per_io").mean; };
  const models::IoRunReport none = models::simulate_io(at(0), 2), short_way = models::simulate_io(at(10), 2),
                            long_way = models::simulate_io(at(1000), 2);
  const double lat = models::io_metric(none, "read.lat_mean_us").mean;
  CHECK(models::io_metric(short_way, "read.lat_mean_us").mean == doctest::Approx(lat).epsilon(0.02));
  CHECK(models::io_metric(long_way, "read.lat_mean_us").mean == doctest::Approx(lat).epsilon(0.02));
  CHECK(vcpu_us(short_way) - vcpu_us(none) == doctest::Approx(10).epsilon(0.05));
  // The long way: all of each wait (the I/O's time per request less the vCPU's own work).
  const double wait_us = 1e6 / models::io_metric(none, "read.iops").mean - vcpu_us(none);
  CAPTURE(wait_us);
  CHECK(vcpu_us(long_way) - vcpu_us(none) == doctest::Approx(wait_us).epsilon(0.05));
  // A halt is a wake-up of the vCPU's thread; a wait that ends on the way is not.
  CHECK(none.get("guest.fio_job0.wakeups_per_s").mean > 0.95 * models::io_metric(none, "read.iops").mean);
  CHECK(long_way.get("guest.fio_job0.wakeups_per_s").mean < 0.01 * models::io_metric(none, "read.iops").mean);
  // The MVA counts the same CPU.
  for (const double halt_us : {0.0, 10.0, 1000.0}) {
    const models::IoScenario s = at(halt_us);
    CAPTURE(halt_us);
    CHECK(models::io_metric_mva(models::solve_io_mva(s), s, "cpu.vcpus_us_per_io") ==
          doctest::Approx(vcpu_us(models::simulate_io(s, 2))).epsilon(0.05));
  }
}
