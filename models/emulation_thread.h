// Host emulation thread: the QEMU main loop (shared; holds the BQL that vCPU exits to user space
// also take) or one IOThread — or, for vhost-scsi and vhost-user-blk, the kernel or user-space
// worker that replaces it. Every request passes it twice: on submit (pop the descriptor chain,
// parse, run the block layer, hand to the AIO engine) and on completion (push the used element,
// signal the irqfd). The per-request work is serialized on this one thread, which is why it is a
// single-server queue and usually the throughput ceiling (docs/sources.md §4).
//
// An IOThread polls for up to poll-max-ns after it runs out of work (QEMU adaptive polling,
// IOTHREAD_POLL_MAX_NS_DEFAULT 32768 ns): a request that arrives within that window neither
// needs a kick nor a wake-up. The main loop does not poll; a vhost-user backend always does.
#pragma once

#include <vector>

#include "models/core_time.h"
#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "models/virtqueue.h"
#include "sim/distribution.h"
#include "sim/fcfs_station.h"
#include "sim/loop_timer.h"
#include "sim/ps_station.h"

namespace vqsim::models {

// The thread is an event loop whose timers a null device's latency may wait on (sim/loop_timer.h).
class EmulationThread final : public CoreTimedThread, public sim::EventLoop {
 public:
  // `per_page_ns`: submit time per 4 KiB page of the request beyond the first.
  // `wake_ns`: CPU time of a wake from its poll, paid by the request that finds the thread asleep.
  EmulationThread(sim::Simulator& sim, std::string name, IoTable& io, double submit_ns, double complete_ns, double cpu_cv,
                  double poll_window_ns, bool always_polling, double per_page_ns = 0, double wake_ns = 0);

  // True when the thread is working or polling right now: a new request needs no kick and no
  // wake-up (EVENT_IDX / notification disabled while it processes the ring).
  bool awake() const noexcept {
    if (always_polling_ || busy() > 0 || waiting() > 0) return true;
    const double window = awake_window_ns();
    return window > 0 && static_cast<double>(sim_.now() - idle_since_ns()) <= window;
  }
  // QEMU's adaptive polling (aio_poll's adjustment): the window starts at 0, grows from 4 us by
  // doubling while the thread waits less than the maximum, and falls to 0 after a wait longer.
  void adapt_polling() noexcept { adaptive_ = poll_window_ns_ > 0; }
  // Its AIO engine's completions set a notifier that polling leaves set (AioEngine::
  // poll_leaves_notifier): with that notifier set, a polling round that finds nothing is followed
  // by a wait that returns at once (its handler clears the notifier and finds nothing to do),
  // which aio_poll counts as a wait just past the window: the window grows and the thread polls
  // once more before it sleeps. A completion found while the thread is awake sets the notifier,
  // one that wakes it is read by that wake-up.
  void keep_aio_notifier() noexcept { aio_notifier_ = true; }
  // The window after a wait just past `w`: 4 us from 0, doubled below the maximum, 0 at it.
  double next_window(double w) const noexcept {
    if (w <= 0) return 4000.0;
    return w < poll_window_ns_ ? std::min(poll_window_ns_, 2 * w) : 0.0;
  }
  void accept(sim::JobId job, int in_port) override;
  bool asleep() const noexcept override { return !awake() && idle_since_ns() < sim_.now(); }
  // When it last woke from a sleep: since then it has held a host core, working or polling.
  sim::time_ns holding_since_ns() const noexcept { return holding_since_ns_; }
  // When it sleeps if no work comes first: just past its polling window (and, with its AIO
  // notifier set, the round after it); -1 while it works or where it always polls.
  sim::time_ns sleeps_at_ns() const noexcept {
    if (always_polling_ || busy() > 0 || waiting() > 0) return -1;
    return idle_since_ns() + static_cast<sim::time_ns>(awake_window_ns()) + 1;
  }
  // Popping the ring right now (serving a request's submit): the device's handler runs with
  // notifications off only while it pops; the rest of a pass runs with them back on.
  bool popping() const noexcept { return busy() > 0 && serving_submit_; }
  // The device's handler pops every request on its virtqueue before it returns: once the thread
  // starts on a submit, the submits already waiting for the same queue, and those that come while
  // it pops, go ahead of its other work (virtqueue_pop in a loop; host.drain_ring).
  void drain_ring() noexcept { drain_ring_ = true; }
  // An interrupt relay whose handler raises the interrupt as its pass begins: a read of the
  // notifier costs only the wake-up, and the rest of the pass (its work) is a Step::relay_pass
  // that HostThreads sends it after the read (host.tcg_relay_in_pass).
  void raise_first() noexcept { raise_first_ = true; }
  bool loop_awake() const override { return awake(); }
  sim::time_ns loop_asleep_since() const override { return idle_since_ns(); }

 protected:
  sim::time_ns service_ns(sim::JobId job) override;
  bool goes_first(sim::JobId job) override { return drain_ring_ && popping() && same_ring(io_[job]); }

 private:
  IoTable& io_;
  double submit_ns_, complete_ns_, poll_window_ns_, per_page_ns_, wake_ns_;
  bool always_polling_;
  bool adaptive_ = false;
  double poll_ns_ = 0;         // the adaptive window now
  bool aio_notifier_ = false;  // keep_aio_notifier(); only an adaptive thread (accept) uses it
  bool notifier_set_ = false;  // the AIO engine's notifier is set and unread
  bool serving_submit_ = false;
  bool drain_ring_ = false;
  bool raise_first_ = false;
  std::uint32_t popping_disk_ = 0, popping_queue_ = 0;  // the ring being drained
  bool same_ring(const IoRequest& r) const noexcept {
    return r.step == Step::host_submit && static_cast<std::uint32_t>(r.disk) == popping_disk_ && r.queue == popping_queue_;
  }
  // How long after its work the idle thread stays awake: its polling window, and with its AIO
  // notifier set the round after it (the wait that returns at once grows the window first).
  double awake_window_ns() const noexcept {
    const double window = adaptive_ ? poll_ns_ : poll_window_ns_;
    return adaptive_ && notifier_set_ ? window + next_window(window) : window;
  }
  sim::time_ns last_read_ns_ = -1;  // an interrupt relay's last read of the guest notifier
  sim::time_ns holding_since_ns_ = 0;
  sim::Distribution factor_;
};

// QEMU's virtio-blk handler pops every request the guest has made available, one after the
// other on the emulation thread, and submits some of them only after the last one: up to QEMU
// 2.2 writes go into a multiwrite buffer submitted when the ring is empty (or 32 are held) while
// reads go at once; since 2.3 every request goes into the buffer, which is also submitted when
// the direction changes (virtio_blk_submit_multireq). A held request waits for the rest of the
// notification's handling: the cost that makes QEMU 2.0's virtio-blk writes slower than its
// reads by more than the device's difference. The model holds the requests; it does not merge
// them (random ones would not merge anyway).
class NotificationBatch final : public sim::Component {
 public:
  NotificationBatch(sim::Simulator& sim, std::string name, IoTable& io, VirtioBlkBatching mode);
  sim::Port out;  // released requests, in the order they were held

  // Whether this request waits in the buffer (the mode and its direction).
  bool holds(const IoRequest& r) const noexcept;
  // A request the handler just finished: held (it must hold it), after releasing the buffer
  // when the direction changes or 32 are waiting.
  void accept(sim::JobId job, int in_port) override;
  // The ring is empty: the handler returns and submits what it holds.
  void end_of_notification();

  void validate() const override { sim::require_connected(*this, out, "out"); }
  void reset_statistics(sim::time_ns now) override { flow_.reset(now); }
  void report(sim::Metrics& m, sim::time_ns now) const override { sim::report_flow(m, name(), flow_, now); }
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

 private:
  static constexpr std::size_t kMaxHeld = 32;  // MultiReqBuffer / VIRTIO_BLK_MAX_MERGE_REQS
  void release();
  IoTable& io_;
  VirtioBlkBatching mode_;
  struct Held {
    sim::JobId job;
    sim::time_ns since;
  };
  std::vector<Held> held_;
  Direction held_dir_ = Direction::read;
  sim::FlowStats flow_;
};

// The stage: the thread(s) that serve the virtqueues — the main loop, IOThreads
// ("host.iothread<t>", queues mapped round robin), or the vhost worker — with virtio-blk's
// notification batching when the scenario has it ("<thread>.batch"). A request passes a thread
// on submit (from the virtqueue, on to the AIO engine) and on completion (from the AIO engine,
// on to the virtqueue's used ring).
class HostThreads final : public Stage, public RingConsumer {
 public:
  enum In : int { kSubmit, kComplete, kThreadDone, kBatchReleased };
  // `cpu`: the host cores the threads share, or null.
  HostThreads(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, sim::ProcessorSharingStation* cpu);

  sim::Port submitted;  // handled on submit: to the AIO engine
  sim::Port completed;  // completion handled: to the used ring and its interrupt

  // Under TCG's lock a pass of the main loop holds it to its end, and a kick made once the handler
  // has popped the ring (notifications back on) waits for that end: the main loop is
  // "processing" only while it pops. Any other thread, while it works or polls.
  bool processing(std::uint32_t thread) const override {
    const EmulationThread* th = threads_[thread];
    return th == lock_holder_ ? th->popping() : th->awake();
  }
  // The QEMU main loop, when it serves the device (else null): its timers are coarse.
  const sim::EventLoop* main_loop() const noexcept { return main_loop_; }
  // Under TCG (host.tcg_bql), the thread whose passes hold the big QEMU lock: the main loop,
  // serving the device or relaying the IOThreads' interrupts (else null).
  sim::FcfsStation* bql_holder() const noexcept { return lock_holder_; }
  // The lock's holder is the main loop relaying IOThreads' interrupts, raised as its passes begin.
  bool relays_in_pass() const noexcept { return relay_ != nullptr && relay_pass_; }
  // Timers that wait for the main loop: an event that wakes it runs those that have expired.
  void watch_timers(sim::LoopTimer& timers) { timers_ = &timers; }
  // The guest's interrupts of disk `disk`: with the relay (TCG with IOThreads), an IOThread sets
  // the guest notifier only for a completion the guest is armed for.
  void signals_to(std::size_t disk, const InterruptArming& arming);

  void accept(sim::JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void reset_statistics(sim::time_ns now) override;
  void report(sim::Metrics& m, sim::time_ns now) const override;
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;
  void connected(const sim::Port& port) override;

 private:
  // The threads that serve requests, then the interrupt relay where there is one.
  std::vector<EmulationThread*> every_thread() const;
  // Whether the guest's interrupt for the request's queue would take a signal now (no arming
  // known: every completion signals).
  bool armed(const IoRequest& r) const;
  // The request's queue among every disk's queues, for relaying_.
  std::size_t relay_slot(const IoRequest& r) const;
  // host.sched_slice_us: the relay, asleep, is woken by IOThread `t` while every host core is
  // held (by `t`, polling, and by the work on host.cpu and the other awake threads).
  bool relay_finds_cores_held(std::size_t t) const;
  // Hands the relay what its wake brought, in order (the gate's jobs, or one).
  void to_relay(sim::JobId job);
  // The relay waits behind IOThread `t` (its jobs go to gated_jobs_) until the gate opens.
  void close_gate(std::size_t t);
  // The gate's next look: when its holder would sleep, or its slice end, whichever is first.
  void watch_gate();
  void open_gate();

  IoTable& io_;
  std::vector<EmulationThread*> threads_;
  std::vector<NotificationBatch*> batches_;      // per thread, when virtio-blk batches
  std::vector<int> submits_queued_;              // per thread: submit-side requests not yet handled
  sim::ProcessorSharingStation* cpu_ = nullptr;  // set when the threads run on it
  const EmulationThread* main_loop_ = nullptr;
  EmulationThread* relay_ = nullptr;                 // TCG with IOThreads: the main loop relaying their interrupts
  std::vector<std::vector<sim::JobId>> relay_held_;  // per thread: completions not yet signalled (its pass goes on)
  bool relay_pass_ = false;                          // host.tcg_relay_in_pass: a read's pass goes on after it (Step::relay_pass)
  std::vector<const InterruptArming*> arming_;       // per disk, where the relay asks (else every completion signals)
  std::vector<int> relaying_;                        // per disk and queue: its completions in the relay now
  std::uint64_t bounce_bytes_;                       // QEMU's SCSI bounce buffer in front of the device (hba_bounce_bytes)
  int queues_ = 1;
  sim::LoopTimer* timers_ = nullptr;
  EmulationThread* lock_holder_ = nullptr;
  // host.sched_slice_us. Linux queues a woken thread on its waker's CPU when no core is idle
  // (wake-affine), and since 6.6 its scheduler lets the thread running there finish its slice
  // before a woken one preempts it (EEVDF's RUN_TO_PARITY): an IOThread that woke the relay goes
  // on polling and serving, so the relay starts when that IOThread sleeps or its slice ends.
  enum Event : std::uint32_t { kGateLook = 1 };
  double slice_ns_ = 0;
  int cores_ = 0;
  bool gated_ = false;
  std::size_t gate_holder_ = 0;  // the IOThread the relay waits behind
  sim::time_ns gate_since_ns_ = 0, gate_slice_end_ns_ = 0;
  std::uint64_t gate_look_ = 0;         // the kGateLook that counts
  std::vector<sim::JobId> gated_jobs_;  // what the relay's wake brought, and what came since
  std::uint64_t gate_waits_ = 0;        // since the statistics' reset
  double gate_wait_ns_ = 0;
  sim::time_ns stats_since_ns_ = 0;
};

// The MVA's host threads: one queue per thread that a queue maps to.
void host_thread_demands(const MvaInputs& in, std::vector<MvaDemand>& out);
// TCG with IOThreads (no irqfd): whether the main loop relays the IOThreads' interrupts.
bool relays_interrupts(const IoScenario& s);
// The relay's pass after it raised an interrupt (host.tcg_relay_in_pass, under TCG's big lock):
// the interrupt reaches the vCPU after the injection's latency L (virtqueue.irq_us, lognormal with
// cv 0.5 as the simulation draws it) and finds the rest of the pass, the relay's work R
// (host.tcg_irq_relay_us), still going with probability P(L < R); the vCPU then waits E[(R - L)+]
// for its end. Both 0 without the relay or the key.
struct RelayPass {
  double p_finds = 0;
  double wait_ns = 0;
};
RelayPass relay_pass(const IoScenario& s);
// The time from a queue's signalling completion to the interrupt's raising through that relay (the
// rest of its IOThread's pass at utilization `u_thread`, the main loop's read and wake-up), during
// which the queue's later completions join the interrupt without a signal of their own; 0 without one.
double relay_window_ns(const IoScenario& s, double u_thread);
// Under TCG's big lock (host.tcg_bql): whether the main loop's passes hold it for this scenario
// (a QEMU device, served by the main loop or with IOThreads whose interrupts it relays).
bool bql_held_by_main_loop(const IoScenario& s);
// The MVA's mean wait of a taking of the lock that arrives at a random instant: the main loop
// serving the device ("host.main_loop", utilization `u`, `demand_ns` per request) in a pass, for
// the rest of the pass, u S / (1 - u^2) with S its mean work per visit (M/M/1 serving in gated
// passes: the probability it is busy times the residual of a pass). 0 where the main loop does not
// serve the device (with IOThreads its relay's passes are short) or the lock is not modelled.
double bql_wait_ns(const IoScenario& s, double u, double demand_ns);
// The probability that a taking finds the lock held: the share of the time the main loop is in a
// pass, serving the device or relaying an IOThread's interrupts (0 where the lock is not modelled).
double bql_wait_probability(const IoScenario& s, double u, double demand_ns);
// The share of the time the main loop serving the device pops the ring (its submits' share of
// its work) at utilization `u`: under the lock a kick is suppressed only then
// (HostThreads::processing).
double main_loop_popping(const IoScenario& s, double u);

// The scenario keys of the host threads (and the QEMU process they run in).
void host_thread_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
