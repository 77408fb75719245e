// Guest threads stage: each fio job's thread on its vCPU. It does the CPU work of a request on
// both sides: on submit fio's own work, the block layer's, the driver's and the notify exit
// (unless the virtqueue suppresses it); on completion the interrupt handler, the driver's
// completion and fio's reap. Submit and completion work of the same job take turns on its one
// thread, which is what bounds a single fio job at high iodepth (seed 000: 94% guest CPU). When
// the scenario limits CPUs (host.cores, or more jobs than vCPUs), the threads share them.
#pragma once

#include <vector>

#include "models/core_time.h"
#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/distribution.h"
#include "sim/fcfs_station.h"
#include "sim/ps_station.h"

namespace vqsim::models {

// Decides whether a submit must notify the host (a VM exit) — the virtqueue (virtqueue.h).
class KickPolicy {
 public:
  virtual bool kick_needed(const IoRequest& r) const = 0;

 protected:
  ~KickPolicy() = default;
};

// What a request costs its fio job's vCPU, in ns.
struct GuestCpuCosts {
  double per_io_submit = 0;       // fio's own work, per fio I/O (a merged request pays it per I/O)
  double per_request_submit = 0;  // block layer + driver, per request
  double per_io_complete = 0;
  double per_io_outside = 0;  // fio's, after the completion's timestamp: outside its latency (guest.fio_outside_us)
  double per_request_complete = 0;
  double per_page = 0;        // per 4 KiB page of an I/O beyond its first, half on submit (pin), half on completion (release)
  double kick_exit = 0;       // the notify exit, when not suppressed
  double irq_handler = 0;     // one interrupt (entry, vring_interrupt, exit), charged to the
                              // completion that raised it; the others it delivers ride along
  double wake = 0;            // a completion that finds the thread asleep in io_getevents: its wake-up
  double lock_wake = 0;       // under TCG, the wake-up after a wait for the big lock (host.tcg_wake_us)
  double halt_after = 0;      // guest.halt_after_us: the vCPU's way from fio's blocking wait to its halt
  double cv = 0;              // spread (lognormal) of every cost
  double background = 0;      // share of the vCPU busy with work no request causes: a request's work
                              // takes 1 / (1 - background) as long (host.tcg_vcpu_busy under TCG)
  bool submit_first = false;  // guest.fio_submit_first (FioThread::goes_first)
  bool irq_stall = false;     // host.tcg_irq_stall: an interrupt takes the lock when it comes (raised_under_lock)
};
GuestCpuCosts guest_cpu_costs(const IoScenario& s);
// fio's own work per I/O, split at its timestamps (guest.fio_outside_us out of guest.fio_submit_us +
// guest.fio_complete_us, taken from the completion's share first): inside the submit, inside the
// completion, and outside the latency. Their sum is fio's whole per-I/O cost.
struct FioWorkSplit {
  double submit = 0, complete = 0, outside = 0;
};
FioWorkSplit fio_work_split(const IoScenario& s);
// The share of each vCPU thread's wall time that goes to work no request causes: under TCG
// host.tcg_vcpu_busy, else 0 (a KVM vCPU with nothing to run halts in the host kernel).
double vcpu_background_share(const IoScenario& s);
// The 4 KiB pages of a request of `bytes` made of `ios` I/Os, beyond each I/O's first.
double extra_pages(double bytes, double ios);

// One fio job's thread on its vCPU.
class FioThread final : public CoreTimedThread {
 public:
  FioThread(sim::Simulator& sim, std::string name, IoTable& io, GuestCpuCosts costs, const KickPolicy* kick);
  // Under TCG: the thread whose passes hold the big QEMU lock, which a kick and an interrupt's
  // handling need (host.tcg_bql).
  void needs_lock_of(sim::FcfsStation* holder) noexcept { bql_holder_ = holder; }
  // Halted: idle for longer than the way into the halt (guest.halt_after_us), so a completion
  // now wakes the vCPU (guest.wake_us, under TCG host.tcg_wake_us) and counts as a wake-up.
  bool asleep() const noexcept override {
    return CoreTimedThread::asleep() && static_cast<double>(sim_.now() - idle_since_ns()) >= c_.halt_after;
  }
  // Work that finds the thread idle ends the vCPU's way into the halt, or follows all of it: that
  // way's vCPU time is counted as the thread's (CoreTime::add_off_station; nothing waits on it).
  void accept(sim::JobId job, int in_port) override;
  // Under TCG with host.tcg_irq_stall, an interrupt for this thread's vCPU was raised while
  // `holder` (the lock's holder) is in a pass: the vCPU takes it as soon as it can
  // (cpu_handle_interrupt), so it blocks on the lock until the pass ends. Running a request's
  // work, that work stops meanwhile (the thread's wall time, not its CPU) and the thread pays the
  // lock's wake-up; idle, it wakes for the interrupt and blocks, and the next completion's work
  // pays that wake-up (with `idle_blocks`; without, an idle thread is left to its halt's wake).
  // Either way one more sleep. Already blocked on the lock, nothing changes.
  void raised_under_lock(sim::FcfsStation& holder, bool idle_blocks);
  // An interrupt delivering `completions` is taken on this thread's vCPU now (virtqueue.
  // handler_preempts): with work in progress, its handler (irq_handler, and per_request_complete
  // for each) runs first and that work ends as much later; the thread's CPU counts it. Returns
  // the handler's time, or 0 where the thread has no work running (idle, or its work waiting for
  // the lock), leaving the handler to the completions' own work.
  double handler_preempts(std::size_t completions);
  void handle(std::uint32_t kind, std::uint64_t payload) override;

 protected:
  sim::time_ns service_ns(sim::JobId job) override;
  sim::FcfsStation* waits_for(sim::JobId job) override;
  bool leaves_now(std::uint32_t server) override;
  // With guest.fio_submit_first. fio's loop (backend.c do_io) submits until its queue is full,
  // then reaps (one event per io_getevents at the defaults) and submits again, one I/O for each
  // slot freed, and it stamps an I/O's start just before it submits it: a submit goes ahead of
  // the completions waiting on the thread, and its wait behind them is no slat; they wait
  // instead, in clat, as they do in the kernel's ring.
  bool goes_first(sim::JobId job) override;

 private:
  enum Event : std::uint32_t { kStallEnd = 16, kHeldEnd };
  sim::FcfsStation* bql_holder_ = nullptr;
  bool lock_wait_ = false;  // its work waits for the lock (waits_for) and has not started
  bool stalled_ = false;    // blocked on the lock while its work ran, since stall_from_ns_
  bool held_ = false;       // its work reached its end, but ends later by the stalls it had (leaves_now)
  bool owing_ = false;      // held_ during a stall: owed_ns_ of the work is left for after it
  sim::time_ns stall_from_ns_ = 0;
  sim::time_ns owed_ns_ = 0;
  sim::time_ns held_until_ns_ = 0;   // held_ and not owing_: when the work ends (kHeldEnd)
  std::uint64_t held_event_ = 0;     // the kHeldEnd that counts (a later stall moves the end)
  sim::time_ns late_ns_ = 0;         // how much later the work in service ends: stalls that ended while it ran
  sim::time_ns after_stall_ns_ = 0;  // handlers taken during a stall: they run when it ends
  int idle_lock_wakes_ = 0;          // wake-ups after the lock taken idle, paid by the next completion's work
  IoTable& io_;
  GuestCpuCosts c_;
  // The vCPU's own background work (counted once for the thread, CoreTimedThread::report) runs
  // beside the request's: the request's work takes 1 / (1 - share) as long.
  double background_stretch() const noexcept { return c_.background > 0 ? 1 / (1 - c_.background) : 1.0; }
  sim::Distribution factor_;  // unit-mean lognormal: the spread of CPU costs
  const KickPolicy* kick_;
};

// The stage: one FioThread per fio job ("guest.fio_job<j>").
class GuestThreads final : public Stage, public InterruptTaker {
 public:
  enum In : int { kSubmit, kComplete, kDone };
  // `kick`: the virtqueue (null on bare metal); `cpu`: the CPUs the threads share (or null).
  GuestThreads(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, const KickPolicy* kick,
               sim::ProcessorSharingStation* cpu);

  // Under TCG, every fio thread's kicks and interrupts wait for `holder`'s passes (host.tcg_bql).
  void need_lock_of(sim::FcfsStation* holder) noexcept {
    for (FioThread* th : threads_) th->needs_lock_of(holder);
  }

  sim::Port submitted;  // the submit call returned (slat ends): to the virtqueue, or the device
  sim::Port completed;  // reaped by fio's thread: the driver's and the block layer's release

  void accept(sim::JobId job, int in_port) override;
  // The interrupt `leader` led is taken by its fio thread's vCPU.
  void raised_under_lock(sim::JobId leader, sim::FcfsStation& holder, bool idle_blocks) override {
    threads_[io_[leader].job]->raised_under_lock(holder, idle_blocks);
  }
  double handler_preempts(sim::JobId leader, std::size_t completions) override {
    return threads_[io_[leader].job]->handler_preempts(completions);
  }
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;

 private:
  IoTable& io_;
  std::vector<FioThread*> threads_;  // per fio job
  sim::ProcessorSharingStation* cpu_;
};

// The MVA's probability that a kick finds TCG's big lock held (FioThread::waits_for in the simulation).
double kick_finds_lock(const MvaInputs& in);
// The MVA's guest CPU stations: one per job, or the shared vCPUs / host cores.
void guest_thread_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of the guest threads.
void guest_thread_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
