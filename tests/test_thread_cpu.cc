// Each kind of thread's CPU time per I/O (cpu.<kind>_us_per_io): the figure the lab measures per
// QEMU thread (calibration/lab/record) and calibration fits. The simulation's (core time over
// the I/Os) and the MVA's (its stations' demand per I/O) agree; a manifest's `measured` reads
// them; a thread the setup gives no work is not fitted and is said; and they tell apart what a
// run's IOPS and latency cannot: how the work splits between the guest and the host threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/fit/calibrate.h"
#include "calibration/fit/dataset.h"
#include "calibration/fit/parameters.h"
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

models::IoScenario scenario(int depth, int iothreads, bool cores = true) {
  std::vector<std::string> o = {"backend.kind=null",
                                "backend.latency_us=20",
                                "workload.rw=randread",
                                "workload.bs=4k",
                                "workload.iodepth=" + std::to_string(depth),
                                "host.iothreads=" + std::to_string(iothreads),
                                "workload.ios=20000",
                                "run.replications=2"};
  if (cores) o.push_back("host.cores=2");
  return models::load_io_scenario(kDefault, o);
}

}  // namespace

TEST_CASE("the metric names: cpu.<kind>_us_per_io for every kind of thread, a CPU figure, nothing else") {
  CHECK(models::cpu_metric_kind("cpu.vcpus_us_per_io") == 0);
  CHECK(models::cpu_metric_kind("cpu.main_loop_us_per_io") == 1);
  CHECK(models::cpu_metric_kind("cpu.iothreads_us_per_io") == 2);
  CHECK(models::cpu_metric_kind("cpu.vhost_worker_us_per_io") == 3);
  CHECK(models::cpu_metric_kind("cpu.workers_us_per_io") == -1);
  CHECK(models::cpu_metric_kind("cpu._us_per_io") == -1);
  CHECK(models::is_io_metric("cpu.vcpus_us_per_io"));
  CHECK(models::is_io_metric("vm.web.cpu.iothreads_us_per_io"));
  CHECK_FALSE(models::is_io_metric("cpu.vcpu_us_per_io"));
  CHECK(models::figure_kind("cpu.main_loop_us_per_io") == "cpu");
}

TEST_CASE("the simulation's and the MVA's CPU time per I/O of each thread agree, at iodepth 1 and at depth") {
  for (int iothreads : {0, 1})
    for (int depth : {1, 16}) {
      CAPTURE(iothreads);
      CAPTURE(depth);
      const models::IoScenario s = scenario(depth, iothreads);
      const models::IoRunReport r = models::simulate_io(s, 2);
      const models::IoMvaResult m = models::solve_io_mva(s);
      const std::string busy = iothreads > 0 ? "cpu.iothreads_us_per_io" : "cpu.main_loop_us_per_io";
      const std::string idle = iothreads > 0 ? "cpu.main_loop_us_per_io" : "cpu.iothreads_us_per_io";
      for (const std::string& metric : {std::string("cpu.vcpus_us_per_io"), busy}) {
        CAPTURE(metric);
        const double des = models::io_metric(r, metric).mean, mva = models::io_metric_mva(m, s, metric);
        CHECK(des > 1);
        // The same work per I/O, but the simulation's kicks and interrupts are its own (the
        // MVA's are probabilities from a fixed point): within 15%.
        CHECK(mva == doctest::Approx(des).epsilon(0.15));
      }
      CHECK(models::io_metric(r, idle).mean == 0);
      CHECK(models::io_metric_mva(m, s, idle) == 0);
      // The kinds together are every thread's core time per I/O: the busy cores over the IOPS.
      const models::HostCoreUse use = models::host_core_use(s, r);
      double sum = 0;
      for (const auto& [kind, said] : models::host_thread_kinds()) sum += models::io_metric(r, "cpu." + kind + "_us_per_io").mean;
      CHECK(sum == doctest::Approx(use.busy_cores / models::io_metric(r, "total.iops").mean * 1e6).epsilon(1e-9));
    }
}

TEST_CASE("without host.cores the simulation does not time the threads, and says what to set") {
  const models::IoRunReport r = models::simulate_io(scenario(1, 0, false), 2);
  CHECK_THROWS_WITH_AS(models::io_metric(r, "cpu.vcpus_us_per_io"), doctest::Contains("set host.cores"), std::invalid_argument);
}

TEST_CASE("a manifest's measured CPU per I/O: read as the run's targets, misspelt kinds refused, idle threads said") {
  const std::string base =
      test::write("cpu-base.toml", "base = \"" + kDefault +
                                       "\"\n[host]\ncores = 2\n[backend]\nkind = \"null\"\nlatency_us = 20\n[workload]\nios = "
                                       "5000\n[run]\nreplications = 2\n");
  const std::string head = "[[run]]\nname = \"qd1\"\n";
  SUBCASE("read, on the run's first direction, and not fitted where the thread has no work") {
    const std::string m = test::write(
        "cpu-ok.toml", head +
                           "measured = { \"read.iops\" = 20000, \"read.lat_mean_us\" = 50, \"cpu.vcpus_us_per_io\" = 30, "
                           "\"cpu.main_loop_us_per_io\" = 9, \"cpu.iothreads_us_per_io\" = 12 }\n"
                           "set = { \"host.iothreads\" = 1, \"workload.rw\" = \"randread\", \"workload.bs\" = 4096, "
                           "\"workload.iodepth\" = 1 }\n");
    const fit::Dataset d = fit::load_dataset(m, base);
    REQUIRE(d.runs.size() == 1);
    std::vector<std::string> cpu;
    for (const fit::Target& t : d.runs[0].targets)
      if (t.kind == "cpu") cpu.push_back(t.metric);
    // With an IOThread the model puts no work per I/O on the main loop: that figure is said, not fitted.
    CHECK(cpu == std::vector<std::string>{"cpu.iothreads_us_per_io", "cpu.vcpus_us_per_io"});
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].find("cpu.main_loop_us_per_io is measured where the model puts no work per I/O") == 0);
  }
  SUBCASE("a misspelt kind names the one meant") {
    const std::string m = test::write("cpu-typo.toml", head +
                                                           "measured = { \"read.iops\" = 20000, \"cpu.vcpu_us_per_io\" = 30 }\n"
                                                           "set = { \"workload.rw\" = \"randread\", \"workload.bs\" = 4096, "
                                                           "\"workload.iodepth\" = 1 }\n");
    CHECK_THROWS_WITH_AS(fit::load_dataset(m, base),
                         doctest::Contains("cpu-typo.toml:3: run 'qd1': measured key 'cpu.vcpu_us_per_io' (did you mean "
                                           "'cpu.vcpus_us_per_io'?)"),
                         models::ConfigError);
  }
  SUBCASE("CPU time alone is not a run") {
    const std::string m = test::write("cpu-alone.toml", head +
                                                            "measured = { \"cpu.vcpus_us_per_io\" = 30 }\n"
                                                            "set = { \"workload.rw\" = \"randread\" }\n");
    CHECK_THROWS_WITH_AS(fit::load_dataset(m, base),
                         doctest::Contains("cpu-alone.toml:1: run 'qd1': measured figures per I/O (cpu.*, count.*) need"),
                         models::ConfigError);
  }
  SUBCASE("a base without host.cores is told to set it") {
    const std::string m =
        test::write("cpu-nocores.toml", head +
                                            "measured = { \"read.iops\" = 20000, \"cpu.vcpus_us_per_io\" = 30 }\n"
                                            "set = { \"workload.rw\" = \"randread\", \"workload.bs\" = 4096, "
                                            "\"workload.iodepth\" = 1 }\n");
    CHECK_THROWS_WITH_AS(fit::load_dataset(m, kDefault), doctest::Contains("set host.cores"), models::ConfigError);
  }
}

TEST_CASE("the threads' CPU time splits the work between guest and host where IOPS and latency cannot") {
  // One setup at iodepth 1: its IOPS and latency depend on the guest's and the main loop's work
  // together, so guest.cpu_scale and host.cpu_scale trade against each other; each thread's CPU
  // time per I/O pins each.
  const std::string base = test::write("cpu-fit-base.toml", "base = \"" + kDefault +
                                                                "\"\n[host]\ncores = 2\n[backend]\nkind = \"null\"\nlatency_us "
                                                                "= 20\n[workload]\nios = 5000\n[run]\nreplications = 2\n");
  const test::Setups setups = {{"qd1", {"workload.rw=randread", "workload.bs=4096", "workload.iodepth=1"}}};
  auto fit_with = [&](const std::vector<std::string>& metrics, const std::string& name) {
    test::Simulated how;
    how.source = "simulated at guest.cpu_scale = 1.5, host.cpu_scale = 0.6";
    how.truth = {"guest.cpu_scale=1.5", "host.cpu_scale=0.6"};
    how.simulation = {"workload.runtime=0", "workload.ios=60000", "run.replications=3", "run.seed=20261202"};
    how.metrics = metrics;
    const fit::Dataset d = fit::load_dataset(test::simulated_manifest(name, base, setups, how), base);
    fit::CalibrateOptions o;
    o.fit_keys = {"guest.cpu_scale", "host.cpu_scale"};
    o.threads = 1;
    return fit::calibrate(d, o);
  };
  const fit::CalibrationResult with =
      fit_with({"read.iops", "read.lat_mean_us", "cpu.vcpus_us_per_io", "cpu.main_loop_us_per_io"}, "cpu-fit.toml");
  const fit::CalibrationResult without = fit_with({"read.iops", "read.lat_mean_us"}, "cpu-nofit.toml");
  REQUIRE(with.params.size() == 2);
  REQUIRE(without.params.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& p = with.params[k];
    CAPTURE(p.key);
    const double truth = p.key == "guest.cpu_scale" ? 1.5 : 0.6;
    CHECK(p.estimate == doctest::Approx(truth).epsilon(0.1));
    CHECK(p.lower <= truth);
    CHECK(p.upper >= truth);
    CHECK(p.identified);
    // IOPS and latency alone leave a ridge (guest.cpu_scale 0.25-2.7, host.cpu_scale 0.15-6.7
    // when written); the threads' CPU narrows each interval many times over.
    const auto& q = without.params[k];
    REQUIRE(q.key == p.key);
    CHECK(p.upper / p.lower < (q.upper / q.lower) / 4);
  }
  CHECK_FALSE(without.params[1].identified);
}

TEST_CASE("under TCG the main loop relays every IOThread interrupt: a read per QD1 completion, shared at depth") {
  auto tcg = [](int depth, int iothreads, const std::string& accel, double relay_us) {
    return models::load_io_scenario(
        kDefault,
        {"backend.kind=null", "backend.latency_us=20", "workload.rw=randread", "workload.bs=4k",
         "workload.iodepth=" + std::to_string(depth), "host.iothreads=" + std::to_string(iothreads), "host.accel=" + accel,
         "host.tcg_irq_relay_us=" + std::to_string(relay_us), "host.cores=2", "workload.ios=20000", "run.replications=2"});
  };
  const std::string loop = "cpu.main_loop_us_per_io";
  SUBCASE("at iodepth 1 each completion pays one read, on the main loop and in the latency") {
    const models::IoScenario with = tcg(1, 1, "tcg", 36), without = tcg(1, 1, "tcg", 0);
    const models::IoRunReport r = models::simulate_io(with, 2), r0 = models::simulate_io(without, 2);
    CHECK(models::io_metric(r, loop).mean == doctest::Approx(36).epsilon(0.1));
    CHECK(models::io_metric(r0, loop).mean == 0);
    const double added = models::io_metric(r, "read.lat_mean_us").mean - models::io_metric(r0, "read.lat_mean_us").mean;
    CHECK(added == doctest::Approx(36).epsilon(0.15));
    CHECK(models::io_metric_mva(models::solve_io_mva(with), with, loop) == doctest::Approx(36).epsilon(0.1));
  }
  SUBCASE("at depth, where the IOThread is busy, one signal covers its pass: less per I/O, the MVA alike") {
    // A guest at KVM's costs and an IOThread at 5 times its own: the IOThread is the bottleneck,
    // its passes take several completions each.
    const models::IoScenario s = models::load_io_scenario(
        kDefault, {"backend.kind=null", "backend.latency_us=20", "workload.rw=randread", "workload.bs=4k", "workload.iodepth=32",
                   "host.iothreads=1", "host.accel=tcg", "host.tcg_cpu_scale=1", "host.tcg_irq_us=1", "host.tcg_wake_us=0",
                   "host.cpu_scale=5", "host.tcg_irq_relay_us=7.2", "host.cores=4", "workload.ios=20000", "run.replications=2"});
    const double des = models::io_metric(models::simulate_io(s, 2), loop).mean;
    CHECK(des < 0.5 * 36);  // 7.2 x host.cpu_scale 5 = 36 us a read
    CHECK(models::io_metric_mva(models::solve_io_mva(s), s, loop) == doctest::Approx(des).epsilon(0.3));
  }
  SUBCASE("an IOThread signals only while the guest is armed: one read per interrupt, not one per pass") {
    // The device's 80 us spreads the completions over many short passes of an idle IOThread;
    // while an interrupt is on its way or its handler drains the ring, QEMU does not signal
    // (virtio_should_notify), so the main loop reads once per interrupt.
    const models::IoScenario s = models::load_io_scenario(
        kDefault, {"backend.kind=null", "backend.latency_us=80", "workload.rw=randread", "workload.bs=4k", "workload.iodepth=16",
                   "host.iothreads=1", "host.accel=tcg", "host.tcg_irq_relay_us=36", "host.tcg_irq_us=56", "host.tcg_wake_us=0",
                   "host.cores=2", "workload.ios=20000", "run.replications=2"});
    const models::IoRunReport r = models::simulate_io(s, 2);
    const double per_interrupt = r.get("virtqueue.irq0.completions_per_interrupt").mean;
    CHECK(per_interrupt > 1.5);  // about 2.2: fio refills a slot before it reaps the next (guest.fio_submit_first)
    CHECK(models::io_metric(r, loop).mean * per_interrupt == doctest::Approx(36).epsilon(0.1));
    // The MVA charges the leading signals' reads the same way, on its own (lower) interrupt batch.
    CHECK(models::io_metric_mva(models::solve_io_mva(s), s, loop) ==
          doctest::Approx(models::io_metric(r, loop).mean).epsilon(0.4));
  }
  SUBCASE("under KVM (irqfd) and without IOThreads nothing is relayed") {
    const models::IoScenario kvm = tcg(1, 1, "kvm", 36);
    CHECK(models::io_metric(models::simulate_io(kvm, 2), loop).mean == 0);
    CHECK(models::io_metric_mva(models::solve_io_mva(kvm), kvm, loop) == 0);
    const models::IoScenario loop_only = tcg(1, 0, "tcg", 36), loop_only0 = tcg(1, 0, "tcg", 0);
    CHECK(models::io_metric(models::simulate_io(loop_only, 2), loop).mean ==
          models::io_metric(models::simulate_io(loop_only0, 2), loop).mean);
  }
}

TEST_CASE("each thread's wake-ups: once per request at iodepth 1, fewer at depth, waits for the lock counted") {
  auto tcg = [](int depth, int iothreads, const std::string& latency_us) {
    return models::load_io_scenario(
        kDefault, {"backend.kind=null", "backend.latency_us=" + latency_us, "workload.rw=randread", "workload.bs=4k",
                   "workload.iodepth=" + std::to_string(depth), "host.iothreads=" + std::to_string(iothreads), "host.accel=tcg",
                   "host.cores=2", "workload.ios=20000", "run.replications=2"});
  };
  auto per_io = [](const models::IoRunReport& r, const std::string& thread) {
    return r.get(thread + ".wakeups_per_s").mean / models::io_metric(r, "total.iops").mean;
  };
  SUBCASE("at iodepth 1 every completion finds fio asleep, every kick the main loop; a completion of its own wakes it again") {
    const models::IoRunReport inline_done = models::simulate_io(tcg(1, 0, "0"), 2);
    CHECK(per_io(inline_done, "guest.fio_job0") == doctest::Approx(1).epsilon(0.02));
    CHECK(per_io(inline_done, "host.main_loop") == doctest::Approx(1).epsilon(0.02));
    // A device latency completes outside the kick's pass: the completion wakes the loop too.
    const models::IoRunReport later = models::simulate_io(tcg(1, 0, "50"), 2);
    CHECK(per_io(later, "host.main_loop") == doctest::Approx(2).epsilon(0.05));
  }
  SUBCASE("at depth the busy vCPU seldom sleeps; behind the main loop under TCG its kicks wait for the lock") {
    const models::IoScenario s = tcg(16, 0, "0");
    const models::IoRunReport r = models::simulate_io(s, 2);
    CHECK(per_io(r, "host.main_loop") < 1);
    // Every wake-up of the fio thread at depth is a wait for the main loop's pass (the lock):
    // with the lock off there are (almost) none.
    const double with_lock = per_io(r, "guest.fio_job0");
    models::IoScenario no_lock = s;
    no_lock.host.tcg_bql = false;
    CHECK(per_io(models::simulate_io(no_lock, 2), "guest.fio_job0") < 0.5 * with_lock);
  }
  SUBCASE("an IOThread that polls after its work is not woken by what arrives within its window") {
    // At its fixed maximum window the IOThread catches most requests; under TCG the slow vCPU
    // leaves gaps longer than the maximum, so QEMU's adaptive window keeps falling back to 0.
    // (The relay raising each interrupt outside its pass, host.tcg_relay_in_pass = false: in its
    // pass it stops the busy vCPU, whose kicks then come farther apart than the window, fixed or
    // not: 0.82 and 0.92 wake-ups per I/O.)
    models::IoScenario adaptive = tcg(16, 1, "0");
    adaptive.host.tcg_relay_in_pass = false;
    models::IoScenario fixed = adaptive;
    fixed.host.poll_adaptive = false;
    const double polling = per_io(models::simulate_io(fixed, 2), "host.iothread0");
    CHECK(polling < 0.6);  // 0.52: fio refills one slot per reaped completion, which leaves gaps
    CHECK(per_io(models::simulate_io(adaptive, 2), "host.iothread0") > polling + 0.2);
  }
}

// host.tcg_vcpu_busy: a TCG vCPU thread spends a share of its time on work no request causes
// (docs/sources.md §1: the lab's vcpu-idle recording, its CPU per I/O against the time per I/O).
TEST_CASE("under TCG each vCPU is busy host.tcg_vcpu_busy of the time besides its requests: counted, and in their way") {
  const std::string lab = test::kSourceDir + "/scenarios/lab-tcg.toml";
  auto at = [&](double busy, const std::string& accel, double latency_us) {
    return models::load_io_scenario(
        lab, {"host.tcg_vcpu_busy=" + std::to_string(busy), "host.accel=" + accel,
              "backend.latency_us=" + std::to_string(latency_us), "workload.ios=4000", "run.replications=2"});
  };
  // A device that takes 1 ms: the time per I/O is mostly the wait, during which the vCPU's
  // background work goes on; its requests' own work is the same with or without it.
  const models::IoScenario with = at(0.2, "tcg", 1000), without = at(0, "tcg", 1000);
  const models::IoRunReport r_with = models::simulate_io(with, 2), r_without = models::simulate_io(without, 2);
  const double iops_with = models::io_metric(r_with, "read.iops").mean;
  const double extra_us =
      models::io_metric(r_with, "cpu.vcpus_us_per_io").mean - models::io_metric(r_without, "cpu.vcpus_us_per_io").mean;
  CHECK(extra_us == doctest::Approx(0.2 * 1e6 / iops_with).epsilon(0.05));
  // The requests' vCPU work takes 1 / (1 - share) as long: a lone request waits longer.
  CHECK(models::io_metric(r_with, "read.lat_mean_us").mean > models::io_metric(r_without, "read.lat_mean_us").mean + 10);
  // The MVA counts it the same way.
  const models::IoMvaResult m = models::solve_io_mva(with);
  CHECK(models::io_metric_mva(m, with, "cpu.vcpus_us_per_io") ==
        doctest::Approx(models::io_metric(r_with, "cpu.vcpus_us_per_io").mean).epsilon(0.1));
  // Under KVM a vCPU with nothing to run halts in the host's kernel: the key changes nothing.
  const models::IoMvaResult kvm_a = models::solve_io_mva(at(0.2, "kvm", 1000)), kvm_b = models::solve_io_mva(at(0, "kvm", 1000));
  CHECK(kvm_a.iops == doctest::Approx(kvm_b.iops).epsilon(1e-12));
  CHECK(models::io_metric_mva(kvm_a, at(0.2, "kvm", 1000), "cpu.vcpus_us_per_io") ==
        doctest::Approx(models::io_metric_mva(kvm_b, at(0, "kvm", 1000), "cpu.vcpus_us_per_io")).epsilon(1e-12));
}

// host.tcg_wake_us and host.tcg_lock_wake_us: a TCG vCPU thread that sleeps (its guest halts, or
// its work waits for the big lock) pays to come back (docs/sources.md §1: the lab's vCPU CPU per
// I/O follows its wake-ups). Here both at one value, as if every wake-up cost the same.
TEST_CASE("under TCG the vCPU thread pays per wake-up: from a halt and after a wait for the lock") {
  const std::string lab = test::kSourceDir + "/scenarios/lab-tcg.toml";
  auto at = [&](double wake_us, int depth, const std::string& accel) {
    return models::load_io_scenario(
        lab, {"host.tcg_wake_us=" + std::to_string(wake_us), "host.tcg_lock_wake_us=" + std::to_string(wake_us),
              "host.accel=" + accel, "workload.iodepth=" + std::to_string(depth), "workload.ios=20000", "run.replications=2"});
  };
  auto vcpu_us = [](const models::IoRunReport& r) { return models::io_metric(r, "cpu.vcpus_us_per_io").mean; };
  auto wakes_per_io = [](const models::IoRunReport& r) {
    return r.get("guest.fio_job0.wakeups_per_s").mean / models::io_metric(r, "total.iops").mean;
  };
  SUBCASE("at iodepth 1 each completion wakes the halted vCPU: one wake-up's cost per I/O") {
    const models::IoRunReport with = models::simulate_io(at(40, 1, "tcg"), 2), without = models::simulate_io(at(0, 1, "tcg"), 2);
    CHECK(wakes_per_io(with) == doctest::Approx(1).epsilon(0.02));
    // Each I/O's cycle is longer by the wake-up stretched by the background (host.tcg_vcpu_busy),
    // which the background's own CPU time follows: 40 / (1 - 0.17) per wake-up.
    const double per_wake = 40 / (1 - 0.17);
    CHECK(vcpu_us(with) - vcpu_us(without) == doctest::Approx(per_wake * wakes_per_io(with)).epsilon(0.05));
    // The MVA charges it the same way.
    const models::IoScenario s = at(40, 1, "tcg");
    CHECK(models::io_metric_mva(models::solve_io_mva(s), s, "cpu.vcpus_us_per_io") ==
          doctest::Approx(vcpu_us(with)).epsilon(0.05));
  }
  SUBCASE("at depth the busy vCPU seldom halts, but its kicks that find the main loop's pass wait and wake") {
    const models::IoScenario s = at(40, 16, "tcg");
    const models::IoRunReport with = models::simulate_io(s, 2), without = models::simulate_io(at(0, 16, "tcg"), 2);
    const double wakes = wakes_per_io(with);
    CHECK(wakes > 0.05);
    CHECK(wakes < 0.6);
    // (The slower vCPU also shifts how completions share interrupts: within a quarter.)
    CHECK(vcpu_us(with) - vcpu_us(without) == doctest::Approx(40 / (1 - 0.17) * wakes).epsilon(0.25));
    // The MVA charges the halts and the waits it expects (the chance a completion finds fio idle,
    // a kick the main loop's pass): the same order of added vCPU time. (It takes a kick's moment
    // as independent of the pass; fio refills a slot as soon as it reaps the interrupt's
    // completion, guest.fio_submit_first, so in the simulation its kicks find the lock less
    // often: 2.6 times fewer wakes here.)
    const models::IoScenario s0 = at(0, 16, "tcg");
    const double mva_added = models::io_metric_mva(models::solve_io_mva(s), s, "cpu.vcpus_us_per_io") -
                             models::io_metric_mva(models::solve_io_mva(s0), s0, "cpu.vcpus_us_per_io");
    CHECK(mva_added > 0.5 * (vcpu_us(with) - vcpu_us(without)));
    CHECK(mva_added < 3.0 * (vcpu_us(with) - vcpu_us(without)));
  }
  SUBCASE("a wait for the lock costs host.tcg_lock_wake_us, a halt host.tcg_wake_us") {
    // At iodepth 1 the vCPU only halts: the lock's wake-up changes nothing. At depth behind the
    // main loop its sleeps are waits for the lock (its kicks), each paying the lock's wake-up.
    auto lock_at = [&](double lock_us, int depth) {
      return models::load_io_scenario(lab,
                                      {"host.tcg_wake_us=40", "host.tcg_lock_wake_us=" + std::to_string(lock_us),
                                       "workload.iodepth=" + std::to_string(depth), "workload.ios=20000", "run.replications=2"});
    };
    CHECK(vcpu_us(models::simulate_io(lock_at(0, 1), 2)) == vcpu_us(models::simulate_io(lock_at(40, 1), 2)));
    const models::IoRunReport cheap = models::simulate_io(lock_at(0, 16), 2), dear = models::simulate_io(lock_at(40, 16), 2);
    const double wakes = wakes_per_io(dear);
    REQUIRE(wakes > 0.05);
    CHECK(vcpu_us(dear) - vcpu_us(cheap) == doctest::Approx(40 / (1 - 0.17) * wakes).epsilon(0.25));
  }
  SUBCASE("under KVM the key changes nothing") {
    const models::IoScenario a = at(40, 1, "kvm"), b = at(0, 1, "kvm");
    CHECK(models::solve_io_mva(a).iops == doctest::Approx(models::solve_io_mva(b).iops).epsilon(1e-12));
  }
}

// host.loop_wake_us is off by default; runs that measure an emulation thread's CPU time at
// iodepth 1 and at depth tell its wake-up from its per-request cost, so calibration fits it there,
// starting from the lab's value (docs/sources.md §1).
TEST_CASE("an emulation thread's wake-up is a candidate where its CPU time is measured at iodepth 1 and at depth") {
  const std::string base =
      test::write("wake-base.toml",
                  "base = \"" + kDefault +
                      "\"\n[host]\ncores = 2\niothreads = 0\n[backend]\nkind = \"null\"\nlatency_us = 20\n[workload]\nios = "
                      "5000\n[run]\nreplications = 2\n");
  auto run = [](const std::string& name, int depth, bool cpu) {
    return "[[run]]\nname = \"" + name + "\"\nmeasured = { \"read.iops\" = 20000" +
           (cpu ? std::string(", \"cpu.main_loop_us_per_io\" = 9") : std::string()) +
           " }\nset = { \"workload.rw\" = \"randread\", \"workload.bs\" = 4096, \"workload.iodepth\" = " + std::to_string(depth) +
           " }\n";
  };
  auto candidates = [&](const std::string& file, const std::string& text) {
    const fit::Dataset d = fit::load_dataset(test::write(file, text), base);
    std::vector<std::size_t> all(d.runs.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return fit::candidate_keys(d, all);
  };
  auto has_wake = [](const std::vector<std::string>& keys) {
    return std::find(keys.begin(), keys.end(), "host.loop_wake_us") != keys.end();
  };
  CHECK(has_wake(candidates("wake-both.toml", run("qd1", 1, true) + run("qd16", 16, true))));
  CHECK_FALSE(has_wake(candidates("wake-qd1.toml", run("qd1", 1, true) + run("qd1b", 1, true))));
  CHECK_FALSE(has_wake(candidates("wake-nocpu.toml", run("qd1", 1, false) + run("qd16", 16, false))));
  // Off in the scenario, the fit starts it at the documented 4 us; a value the scenario states is its start.
  const models::IoScenario s = models::load_io_scenario(base);
  CHECK(fit::parameter_value(s, "host.loop_wake_us") == 0);
  CHECK(fit::fit_start_value(s, "host.loop_wake_us") == doctest::Approx(4.0));
  CHECK(fit::fit_start_value(models::load_io_scenario(base, {"host.loop_wake_us=7"}), "host.loop_wake_us") ==
        doctest::Approx(7.0));
  CHECK(fit::fit_start_value(s, "backend.read_us") == doctest::Approx(fit::parameter_value(s, "backend.read_us")));
}
