// TCG's big QEMU lock (host.tcg_bql, docs/sources.md §4): the engine's wait for the end of another
// station's pass (sim::FcfsStation::waits_for, when_pass_ends) on a hand-timed path, and in the I/O path
// the vCPU's kicks and interrupts waiting for the main loop's pass: blocked time that is not
// CPU, interrupts that carry their pass, and nothing under KVM.
#include <doctest/doctest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration_support.h"
#include "models/config.h"
#include "models/emulation_thread.h"
#include "models/guest_cpu.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "models/stage.h"
#include "models/virtqueue.h"
#include "sim/distribution.h"
#include "sim/fcfs_station.h"
#include "sim/rng.h"
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

// The fio thread's (its vCPU's) sleeps per I/O in a simulation.
double sleeps_per_io(const models::IoRunReport& r) { return get(r, "guest.fio_job0.wakeups_per_s") / get(r, "read.iops"); }

// The MVA of `s` against its simulation `r`: throughput within 20%, the vCPU's sleeps per I/O
// between `low` and `high` times the simulation's.
void check_mva_follows(const models::IoScenario& s, const models::IoRunReport& r, double low, double high) {
  const models::IoMvaResult m = models::solve_io_mva(s);
  CHECK(m.iops == doctest::Approx(get(r, "read.iops")).epsilon(0.2));
  const double des = models::io_metric(r, "count.vcpus_wakes_per_io").mean;
  const double mva = models::io_metric_mva(m, s, "count.vcpus_wakes_per_io");
  CHECK(mva > low * des);
  CHECK(mva < high * des);
}

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

TEST_CASE("a job held past its work's end leaves when released, and the next job starts only then") {
  sim::Simulator sim(1, 0);
  auto& to = sim.make<Arrivals>("to", std::vector<sim::time_ns>{0, 10});
  auto& late = sim.make<test::LateLeaver>("late", sim::Distribution::deterministic(100), 30);
  auto& done = sim.make<Recorder>("done");
  sim::connect(to.out, late);
  sim::connect(late.out, done);
  sim.run(sim::RunLimits{});
  // Work 0-100, held to 130; the second job's work 130-230, held to 260.
  CHECK(done.times == std::vector<sim::time_ns>{130, 260});
  CHECK(sim.report().get("late.utilization") == doctest::Approx(1.0));
}

namespace {
// A station that, when it starts on a job of the even arrivals, takes the even ones waiting
// first (sim::FcfsStation::send_ahead): a thread that drains a ring once it starts on it.
class RingDrainer final : public sim::FcfsStation {
 public:
  RingDrainer(sim::Simulator& sim, std::string name)
      : sim::FcfsStation(sim, std::move(name), 1, sim::Distribution::deterministic(100)) {}
  std::vector<int> started;  // arrival indices, in the order their service began
  void accept(sim::JobId job, int in_port) override {
    index_[job] = arrived_++;
    sim::FcfsStation::accept(job, in_port);
  }

 protected:
  sim::time_ns service_ns(sim::JobId job) override {
    started.push_back(index_.at(job));
    if (index_.at(job) % 2 == 0) send_ahead([this](sim::JobId j) { return index_.at(j) % 2 == 0; });
    return sim::FcfsStation::service_ns(job);
  }

 private:
  std::map<sim::JobId, int> index_;
  int arrived_ = 0;
};
}  // namespace

TEST_CASE("send_ahead moves the waiting jobs it picks ahead of the others, in their order") {
  sim::Simulator sim(1, 0);
  auto& to = sim.make<Arrivals>("to", std::vector<sim::time_ns>{0, 1, 2, 3, 4, 5});
  auto& ring = sim.make<RingDrainer>("ring");
  auto& done = sim.make<Recorder>("done");
  sim::connect(to.out, ring);
  sim::connect(ring.out, done);
  sim.run(sim::RunLimits{});
  // 0 starts alone; 1 is next in line; 2 starts at 200 with 3, 4, 5 waiting and takes 4 ahead.
  CHECK(ring.started == std::vector<int>{0, 1, 2, 4, 3, 5});
  CHECK(done.times == std::vector<sim::time_ns>{100, 200, 300, 400, 500, 600});
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

TEST_CASE("host.tcg_irq_stall: an interrupt raised during the main loop's pass stops a busy vCPU until the pass ends") {
  // The raw file behind the main loop: the device's completions come in batches, so the loop is
  // still at the batch's other completions when the first one's interrupt is raised, and the vCPU,
  // busy at depth, blocks on the lock (cpu_handle_interrupt) and sleeps once more. Null-co's
  // completions come with the vCPU's own kicks, one at a time: its interrupts seldom find the pass.
  // (host.tcg_irq_stall on, the default; QEMU's costs at their documented values: the main loop
  // busy 30-40% of the time.)
  const std::vector<std::string> file = {"host.tcg_irq_stall=true", "host.cpu_scale=1",     "backend.kind=nvme",
                                         "backend.read_us=50",      "backend.batched=true", "backend.batch_us=10"};
  const models::IoRunReport raw = models::simulate_io(busy_main_loop(file), 2);
  const models::IoRunReport null = models::simulate_io(busy_main_loop({"host.tcg_irq_stall=true", "host.cpu_scale=1"}), 2);
  CHECK(sleeps_per_io(raw) > 1.5 * sleeps_per_io(null));
  // The stop costs the vCPU's time: without the lock the same setup runs faster and never sleeps
  // at depth.
  std::vector<std::string> off = file;
  off.emplace_back("host.tcg_bql=false");
  const models::IoRunReport raw_off = models::simulate_io(busy_main_loop(off), 2);
  CHECK(sleeps_per_io(raw_off) < 0.05);
  CHECK(get(raw_off, "read.iops") > get(raw, "read.iops"));
  // Off, the interrupt's work waits for the lock when the vCPU reaches it in its queue, at a
  // moment its backlog decides: null-co's vCPU sleeps more than with the key on.
  const models::IoRunReport null_off = models::simulate_io(busy_main_loop({"host.tcg_irq_stall=false", "host.cpu_scale=1"}), 2);
  CHECK(sleeps_per_io(null_off) > sleeps_per_io(null));
}

TEST_CASE("the MVA: an interrupt finds the lock only with other work in the pass, a kick only outside the loop's popping") {
  // (The probabilities the MVA uses with host.tcg_irq_stall.)
  const models::IoScenario s = busy_main_loop({"host.tcg_irq_stall=true"});
  const auto in = [&](double irq_share, double u) { return models::MvaInputs{s, 1, 1, 1, irq_share, 0, 0, 0, 0, 0, u}; };
  // A lone request's interrupt (one completion an interrupt) never finds the pass.
  CHECK(models::interrupt_finds_lock(in(1.0, 0.5)) == 0.0);
  // Two completions an interrupt: the holder busy with the other as often as at all.
  CHECK(models::interrupt_finds_lock(in(0.5, 0.5)) == doctest::Approx(0.5));
  CHECK(models::interrupt_finds_lock(in(0.8, 0.5)) == doctest::Approx(0.5 * 0.25));
  // A kick: of the loop's busy time, the part outside its popping, over the time outside it.
  const double popping = models::main_loop_popping(s, 0.5);
  REQUIRE(popping > 0);
  REQUIRE(popping < 0.5);
  CHECK(models::kick_finds_lock(in(1.0, 0.5)) == doctest::Approx((0.5 - popping) / (1 - popping)));
  CHECK(models::kick_finds_lock(in(1.0, 0.0)) == 0.0);
  // Behind an IOThread the main loop only relays: a kick finds its passes as often as they run.
  // An interrupt of the one queue in use: raised at the end of the relay's own job, never
  // (host.tcg_relay_in_pass = false); raised as its pass begins, whenever that pass outlasts the
  // injection and the vCPU was running (a halted one takes it within its halt's wake).
  const models::IoScenario relay = busy_main_loop({"host.tcg_irq_stall=true", "host.iothreads=1"});
  CHECK(models::kick_finds_lock({relay, 1, 1, 1, 1.0, 0, 0, 0, 0, 0, 0.3}) == 0.3);
  const models::IoScenario at_end =
      busy_main_loop({"host.tcg_irq_stall=true", "host.iothreads=1", "host.tcg_relay_in_pass=false"});
  CHECK(models::interrupt_finds_lock({at_end, 1, 1, 1, 0.5, 0, 0, 0, 0, 0, 0.3}) == 0.0);
  const double p_finds = models::relay_pass(relay).p_finds;
  REQUIRE(p_finds > 0.5);
  CHECK(models::interrupt_finds_lock({relay, 1, 1, 1, 0.5, 0, 0.25, 0, 0, 0, 0.3}) == doctest::Approx(0.75 * p_finds));
  CHECK(models::interrupt_finds_lock({relay, 1, 1, 1, 0.5, 0, 1.0, 0, 0, 0, 0.3}) == 0.0);
}

TEST_CASE("host.tcg_relay_in_pass: the MVA's chance and length of the wait match the simulation's draws of the injection") {
  // The relay's pass outlasts the injection L (lognormal, mean virtqueue.irq_us, cv 0.5) with
  // probability P(L < R), and the vCPU waits E[(R - L)+] for its end: checked against 400k draws.
  sim::Rng rng = sim::Rng::for_stream(20261207, 0, 0);
  for (const double rest_us : {1.0, 2.0, 5.0, 20.0}) {
    CAPTURE(rest_us);
    const models::IoScenario s = busy_main_loop(
        {"host.iothreads=1", "host.cpu_scale=1", "virtqueue.irq_us=2", "host.tcg_irq_relay_us=" + std::to_string(rest_us)});
    const double rest_ns = s.host.tcg_irq_relay_ns;
    REQUIRE(rest_ns == doctest::Approx(rest_us * 1e3));
    const sim::Distribution latency = sim::Distribution::lognormal_mean_cv(2e3, 0.5);
    constexpr int kDraws = 400000;
    double finds = 0, wait = 0;
    for (int i = 0; i < kDraws; ++i) {
      const double l = latency.sample(rng);
      if (l < rest_ns) {
        finds += 1;
        wait += rest_ns - l;
      }
    }
    const models::RelayPass relay = models::relay_pass(s);
    CHECK(relay.p_finds == doctest::Approx(finds / kDraws).epsilon(0.01));
    CHECK(relay.wait_ns == doctest::Approx(wait / kDraws).epsilon(0.01));
  }
  CHECK(models::relay_pass(busy_main_loop({"host.iothreads=1", "host.tcg_relay_in_pass=false"})).p_finds == 0.0);
  CHECK(models::relay_pass(busy_main_loop({"host.iothreads=1", "host.accel=kvm"})).p_finds == 0.0);
  CHECK(models::relay_pass(busy_main_loop()).p_finds == 0.0);  // no IOThread: no relay
}

TEST_CASE("host.tcg_relay_in_pass: a relayed interrupt stops a running vCPU for the rest of the relay's pass, not a halted one") {
  // Null-co behind an IOThread under TCG: the main loop relays each interrupt, raising it as its
  // handler runs and holding the big lock for the rest of its pass (QEMU's main loop drops the
  // lock only before its next poll). At depth the vCPU is running when it comes, blocks on the
  // lock (cpu_handle_interrupt) and sleeps once more: the lab's vCPU sleeps 0.6-0.75 times per
  // main loop wake there (docs/sources.md section 4). At iodepth 1 it is halted, and the
  // interrupt ends the halt it already sleeps in.
  const std::vector<std::string> relay = {"host.iothreads=1", "host.cpu_scale=1"};
  const auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), relay.begin(), relay.end());
    return models::simulate_io(busy_main_loop(more), 2);
  };
  const models::IoRunReport in_pass = with({"host.tcg_relay_in_pass=true"});
  const models::IoRunReport at_end = with({"host.tcg_relay_in_pass=false"});
  CHECK(sleeps_per_io(in_pass) > sleeps_per_io(at_end) + 0.2);
  CHECK(get(in_pass, "read.iops") < 0.95 * get(at_end, "read.iops"));
  // The relay's CPU is the same work, split at the interrupt: the same per read (each read a wake
  // of the main loop here), though more reads per I/O when the interrupts carry fewer completions.
  const auto per_wake_us = [](const models::IoRunReport& r) {
    return models::io_metric(r, "cpu.main_loop_us_per_io").mean / models::io_metric(r, "count.main_loop_wakes_per_io").mean;
  };
  CHECK(per_wake_us(in_pass) == doctest::Approx(per_wake_us(at_end)).epsilon(0.05));
  // Halted at iodepth 1: the same sleeps either way (one per I/O, its halt).
  const models::IoRunReport qd1_in = with({"host.tcg_relay_in_pass=true", "workload.iodepth=1"});
  const models::IoRunReport qd1_end = with({"host.tcg_relay_in_pass=false", "workload.iodepth=1"});
  CHECK(sleeps_per_io(qd1_in) == doctest::Approx(sleeps_per_io(qd1_end)).epsilon(0.05));
  // The MVA follows: the vCPU's sleeps per I/O and the throughput within their usual distance.
  check_mva_follows(busy_main_loop({"host.iothreads=1", "host.cpu_scale=1"}), in_pass, 0.6, 1.6);
}

TEST_CASE("host.tcg_irq_stall: the MVA follows the simulation's vCPU sleeps and throughput within their usual distance") {
  for (const char* backend : {"backend.kind=null", "backend.kind=nvme"}) {
    CAPTURE(backend);
    const models::IoScenario s = busy_main_loop({"host.tcg_irq_stall=true", "host.cpu_scale=1", backend, "backend.read_us=50"});
    check_mva_follows(s, models::simulate_io(s, 2), 0.4, 2.5);
  }
}

// host.sched_slice_us (docs/sources.md §4, "TCG's interrupt relay"): the main loop, woken to
// relay an IOThread's interrupt while every host core is held, waits on that IOThread's core
// until it sleeps or its slice ends (the lab's scheduler trace, calibration/data/lab-2026-12-07).
TEST_CASE("host.sched_slice_us: a relay woken while every core is held waits behind the IOThread, never past its slice") {
  // The IOThread polls a fixed 32 us after each pass, so it holds its core between requests.
  const std::vector<std::string> base = {"host.iothreads=1", "workload.iodepth=64", "host.poll_adaptive=false"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return models::simulate_io(busy_main_loop(more), 2);
  };
  const models::IoRunReport off = with({});
  const models::IoRunReport on = with({"host.sched_slice_us=1500"});
  const double waits = get(on, "host.main_loop.core_waits_per_s"), wait_us = get(on, "host.main_loop.core_wait_us");
  CAPTURE(waits);
  CAPTURE(wait_us);
  CHECK(waits > 0.2 * get(on, "read.iops") * models::io_metric(on, "count.interrupts_per_io").mean);
  CHECK(wait_us > 1.0);
  CHECK(wait_us <= 1500.0);
  // Completions reach the ring while the relay waits, and ride on its interrupt.
  CHECK(models::io_metric(on, "count.interrupts_per_io").mean < 0.9 * models::io_metric(off, "count.interrupts_per_io").mean);
  // A short slice bounds every wait.
  const models::IoRunReport short_slice = with({"host.sched_slice_us=5"});
  CHECK(get(short_slice, "host.main_loop.core_wait_us") <= 5.0);
  // With a core to spare the relay never waits, and the run is the run without the key.
  const models::IoRunReport spare = with({"host.sched_slice_us=1500", "host.cores=8"});
  const models::IoRunReport spare_off = with({"host.cores=8"});
  CHECK(get(spare, "host.main_loop.core_waits_per_s") == 0.0);
  CHECK(get(spare, "read.iops") == get(spare_off, "read.iops"));
}
