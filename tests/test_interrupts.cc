// Interrupt coalescing (models/virtqueue.h, InterruptLine): the guest's handler drains the used
// ring with callbacks off, so completions that reach it while an interrupt is delivered or
// handled ride on that interrupt. At iodepth 1 there is never another: every completion is an
// interrupt. At depth one interrupt carries several, the more the longer the handler: under TCG
// it is host.tcg_irq_us (the lab's interrupts recording, docs/sources.md §3).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "calibration_support.h"
#include "models/backend.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "models/virtqueue.h"

using namespace vqsim;

namespace {

const std::string kLab = test::kSourceDir + "/scenarios/lab-tcg.toml";

models::IoScenario lab(int depth, std::vector<std::string> more = {}) {
  std::vector<std::string> o = {"workload.iodepth=" + std::to_string(depth), "workload.ios=20000", "run.replications=2"};
  o.insert(o.end(), more.begin(), more.end());
  return models::load_io_scenario(kLab, o);
}

double completions_per_interrupt(const models::IoRunReport& r) { return r.get("virtqueue.irq0.completions_per_interrupt").mean; }

}  // namespace

TEST_CASE("at iodepth 1 every completion is an interrupt of its own, at depth one interrupt carries several") {
  const models::IoRunReport qd1 = models::simulate_io(lab(1), 2);
  CHECK(completions_per_interrupt(qd1) == doctest::Approx(1.0).epsilon(1e-6));
  const models::IoRunReport qd16 = models::simulate_io(lab(16), 2);
  CHECK(completions_per_interrupt(qd16) > 1.15);
  // A handler that takes longer keeps the ring's callbacks off longer: more ride along.
  const models::IoRunReport slow = models::simulate_io(lab(16, {"host.tcg_irq_us=300"}), 2);
  CHECK(completions_per_interrupt(slow) > completions_per_interrupt(qd16));
}

TEST_CASE("an interrupt costs TCG's vCPU host.tcg_irq_us and KVM's virtqueue.irq_handler_us; bare metal none") {
  CHECK(models::interrupt_cost_ns(lab(1)) == doctest::Approx(15e3));
  CHECK(models::interrupt_cost_ns(lab(1, {"host.tcg_irq_us=50"})) == doctest::Approx(50e3));
  const models::IoScenario kvm = lab(1, {"host.accel=kvm", "virtqueue.irq_handler_us=1.5"});
  CHECK(models::interrupt_cost_ns(kvm) == doctest::Approx(1.5e3));
  CHECK(models::interrupt_cost_ns(lab(1, {"guest.driver=none"})) == 0);
}

TEST_CASE("the MVA's completions per interrupt: one for a lone request, and what the simulation counts at depth") {
  const models::IoScenario s1 = lab(1);
  CHECK(models::completions_per_interrupt(s1, 1.0 / 200e3, 1) == doctest::Approx(1.0));
  // Never more than the requests in flight on the queue.
  CHECK(models::completions_per_interrupt(s1, 1.0 / 1e3, 4) <= 4.0);
  // At the simulation's own throughput, the MVA's share of leading completions is within 25% of
  // the simulation's count (the handler's length is the same mean in both; the simulation's
  // varies and ends early where the guest is done sooner).
  const models::IoScenario s16 = lab(16);
  const models::IoRunReport r = models::simulate_io(s16, 2);
  const double x_per_ns = r.get("read.iops").mean / 1e9;
  const double mva = models::completions_per_interrupt(s16, x_per_ns, 16);
  CHECK(mva == doctest::Approx(completions_per_interrupt(r)).epsilon(0.25));
}

TEST_CASE("the handler's window is on under TCG and off under KVM unless virtqueue.handler_window says") {
  CHECK(models::handler_window_on(lab(16)));
  CHECK_FALSE(models::handler_window_on(lab(16, {"host.accel=kvm"})));
  CHECK(models::handler_window_on(lab(16, {"host.accel=kvm", "virtqueue.handler_window=on"})));
  CHECK_FALSE(models::handler_window_on(lab(16, {"virtqueue.handler_window=off"})));
  // Off, an interrupt takes only what arrives while it is delivered: at KVM's 2 us, at depth
  // under TCG hardly anything.
  const models::IoRunReport off = models::simulate_io(lab(16, {"virtqueue.handler_window=off"}), 2);
  CHECK(completions_per_interrupt(off) < 1.2);
}

TEST_CASE("the handler stops the vCPU's work while it runs: that vCPU submits nothing to ride along, and it pays once") {
  // A long handler (60 us) on a vCPU busy at depth, without the costs that move with how often it
  // sleeps (the TCG wake-ups, its background work), so that its CPU per I/O is the requests' work
  // and host.tcg_irq_us per interrupt.
  const std::vector<std::string> costs{"host.tcg_irq_us=60", "host.tcg_wake_us=0", "host.tcg_vcpu_busy=0"};
  std::vector<std::string> preempting = costs;
  preempting.emplace_back("virtqueue.handler_preempts=true");
  const models::IoScenario s = lab(16, preempting);
  CHECK_FALSE(lab(16).vq.handler_preempts);  // off by default (docs/sources.md §3 says why)
  const models::IoRunReport preempts = models::simulate_io(s, 2);
  const models::IoRunReport waits = models::simulate_io(lab(16, costs), 2);
  // Waiting its turn, the handler leaves the vCPU submitting through its window, and the host's
  // completions of those submits ride along; running at once, only what the host already had.
  CHECK(completions_per_interrupt(preempts) < completions_per_interrupt(waits) - 0.1);
  // The same work either way: CPU per I/O less the interrupts' is the requests' own.
  const double per_irq_us = models::interrupt_cost_ns(s) / 1e3;
  const auto own_us = [&](const models::IoRunReport& r) {
    return models::io_metric(r, "cpu.vcpus_us_per_io").mean - per_irq_us / completions_per_interrupt(r);
  };
  CAPTURE(own_us(preempts));
  CAPTURE(own_us(waits));
  CHECK(own_us(preempts) == doctest::Approx(own_us(waits)).epsilon(0.03));
  // The MVA's interrupt then takes what arrives while it is delivered and waits for the lock, not
  // while its handler runs.
  const double mva = 1 / models::solve_io_mva(s).interrupts_per_io;
  CAPTURE(mva);
  CHECK(std::abs(mva / completions_per_interrupt(preempts) - 1) < 0.1);
}

// A host that is itself a VM (the lab's): its virtual disk's emulator pops its ring until it is
// empty and then signals once, so the requests in flight complete together (backend.batched,
// models/backend.h; docs/sources.md §7: 1.0, 4.0, 15.3 and 51.6 completions per interrupt of the
// host's disk at QD1, 4, 16 and 64).
TEST_CASE("a device that completes in batches: a lone request pays the device's latency, at depth an interrupt carries batches") {
  // The lab fit's order of costs (docs/ACCURACY.md), a raw file behind an IOThread, the vCPU the
  // bottleneck at depth (its interrupt at the earlier default, 88 us, and no background share).
  const std::vector<std::string> file = {"backend.kind=nvme",   "backend.read_us=85",   "host.iothreads=1",
                                         "host.cpu_scale=4.7",  "host.tcg_cpu_scale=5", "host.tcg_irq_us=88",
                                         "host.tcg_vcpu_busy=0"};
  std::vector<std::string> batched = file;
  batched.push_back("backend.batched=true");
  const models::IoRunReport one = models::simulate_io(lab(1, batched), 2);
  CHECK(completions_per_interrupt(one) == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(one.get("device.response_mean_ns").mean == doctest::Approx(85e3).epsilon(0.03));
  CHECK(one.get("device.batch_mean").mean == doctest::Approx(1.0));
  const models::IoRunReport apart = models::simulate_io(lab(64, file), 2);
  const models::IoRunReport together = models::simulate_io(lab(64, batched), 2);
  // fio refills the slot each reaped completion frees before it reaps the next
  // (guest.fio_submit_first), so with its vCPU the bottleneck requests reach the device spread
  // out: about 2 a batch here (over 4 when its thread refilled in bursts, in arrival order).
  CHECK(together.get("device.batch_mean").mean > 1.5);
  // (Each interrupt also waits for the end of the relay's pass that raised it,
  // host.tcg_relay_in_pass, and carries what completes meanwhile: 2.25 completions an interrupt
  // without the device's batches, 3.1 with them.)
  CHECK(completions_per_interrupt(together) > 1.25 * completions_per_interrupt(apart));
  // Fewer interrupts cost TCG's vCPU less: with the vCPU the bottleneck, the batched device is
  // the faster one at depth.
  CHECK(together.get("read.iops").mean > 1.1 * apart.get("read.iops").mean);
}

TEST_CASE("the MVA's batch of a batched device: one for a lone request, every request in flight once the device saturates") {
  const models::IoScenario s = lab(16, {"backend.kind=nvme", "backend.read_us=85", "backend.batched=true", "backend.batch_us=7"});
  CHECK(models::device_batch_size(lab(16), 1e-4, 16) == 1.0);  // not batched
  CHECK(models::device_batch_size(s, 1e-12, 16) == doctest::Approx(1.0));
  CHECK(models::device_batch_size(s, 1.0 / 7e3, 16) == 16.0);  // the serial part alone fills the device's time
  // In between, a busy period's count: (1 + x wake) / (1 - x serial), wake = 85 - 7 us.
  const double x = 1.0 / 50e3;
  CHECK(models::device_batch_size(s, x, 16) == doctest::Approx((1 + x * 78e3) / (1 - x * 7e3)).epsilon(0.01));
  // The MVA's interrupts carry whole batches.
  CHECK(models::completions_per_interrupt(s, x, 16) > models::completions_per_interrupt(lab(16), x, 16));
}
