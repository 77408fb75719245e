// Virtqueue stage: the ring between the guest driver and the host thread, and its two
// notifications.
//   kick (guest -> host): a write to the notify register, a VM exit that KVM turns into an
//     eventfd signal (ioeventfd). Suppressed (EVENT_IDX / notifications off) while the host
//     thread is processing the ring or polling it. Costs the vCPU kick_exit_us; when the
//     thread was asleep, the request also waits wakeup_us for it to be scheduled.
//   interrupt (host -> guest): irqfd, MSI injection, the guest's handler: irq_us of latency.
//     Completions pushed to the used ring while an interrupt is already on its way are handled
//     by the same interrupt (the guest's vring_interrupt drains the ring; EVENT_IDX tells the host
//     not to signal again), so at load one interrupt carries many completions and the
//     per-interrupt guest cost (irq_handler_us) is shared.
// The ring's size bounds requests in flight per queue; the guest's blk-mq tags (guest_block.h)
// already enforce that bound, so the ring needs no pool of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "models/guest_cpu.h"
#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/delay_station.h"
#include "sim/distribution.h"

namespace vqsim::models {

// The device side of the ring, as the virtqueue sees it: is the thread that serves this request's
// queue processing or polling it right now? Then it has notifications disabled (EVENT_IDX's
// avail_event, VRING_USED_F_NO_NOTIFY) and will see the request without a kick or a wake-up.
class RingConsumer {
 public:
  virtual bool processing(std::uint32_t thread) const = 0;

 protected:
  ~RingConsumer() = default;
};

// The vCPU's cost of one interrupt: virtqueue.irq_handler_us, or under TCG host.tcg_irq_us (TCG's
// own delivery path, not a multiple of KVM's); none on bare metal.
double interrupt_cost_ns(const IoScenario& s);
// Whether the interrupt's window holds its handler's run (virtqueue.handler_window).
bool handler_window_on(const IoScenario& s);
// The MVA's completions per interrupt at `completions_per_ns` per queue with `in_flight` requests
// on it (0: an open loop): those that reach the ring while the interrupt is delivered and its
// handler drains the ring (InterruptLine).
// `lock_wait_ns`: how long a raised interrupt waits for the main loop's pass under TCG's big
// lock (host.tcg_bql; 0 otherwise), during which completions join it too. `host_ns`: a request's
// time from its guest's submit to the used ring, all a handler that stops its vCPU
// (virtqueue.handler_preempts) can take completions from while it runs.
double completions_per_interrupt(const IoScenario& s, double completions_per_ns, double in_flight, double lock_wait_ns = 0,
                                 double host_ns = 0);
// The MVA's wait of an interrupt raised under TCG's big lock for the rest of the holder's pass
// (unconditional: 0 where it finds no pass), which a vCPU busy when it comes spends blocked.
double interrupt_lock_wait_ns(const MvaInputs& in);
// The MVA's probability that an interrupt raised under TCG's big lock finds its holder in a pass
// (FioThread::raised_under_lock in the simulation).
double interrupt_finds_lock(const MvaInputs& in);
// The queues a VM's requests use: fio thread t runs on vCPU t mod vcpus, whose requests go to
// queue vcpu mod queues, so fewer threads or vCPUs than queues leave some idle.
int queues_in_use(const IoScenario& s);

// One virtqueue's interrupt: the first completion starts an interrupt (irq_us until the guest
// handler runs); completions that arrive before it runs are delivered with it. The handler then
// drains the used ring with callbacks off and turns them back on only when it finds it empty
// (virtblk_done, virtscsi_vq_done: disable_cb, get_buf until none, enable_cb; with EVENT_IDX
// the device does not signal until used_event moves): a completion that arrives while it runs,
// handler_ns for the interrupt and per_completion_ns for each completion it takes, is taken by the
// same interrupt at once, without one of its own.
class InterruptLine final : public sim::Component, public InterruptHandled {
 public:
  InterruptLine(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution latency, double handler_ns = 0,
                double per_completion_ns = 0);
  sim::Port out;
  void accept(sim::JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { sim::require_connected(*this, out, "out"); }
  // The guest's thread has done the work of the interrupt `leader` led: its handler has drained
  // the ring by then, however long the mean handler would have taken.
  void handled(sim::JobId leader, sim::time_ns now) override;
  // Under TCG the guest takes an interrupt only with the big QEMU lock (cpu_handle_interrupt),
  // which the main loop holds for its whole pass: an interrupt raised waits for the end of
  // `holder`'s pass, and the completions of the pass join it. `taker` (the guest's threads, with
  // host.tcg_irq_stall; else null) is told of each such wait: the vCPU that takes the interrupt
  // blocks on the lock meanwhile.
  // `relayed`: the holder is the main loop relaying an IOThread's interrupts, which raises them as
  // its pass begins (host.tcg_relay_in_pass): a halted vCPU then takes one within its halt's wake.
  void taken_after(sim::FcfsStation* holder, InterruptTaker* taker, bool relayed) noexcept {
    bql_holder_ = holder;
    taker_ = taker;
    relayed_ = relayed;
  }
  // The guest's threads, whose vCPU an interrupt's handler stops while it runs
  // (virtqueue.handler_preempts with the handler's window; else null).
  void preempts(InterruptTaker* taker) noexcept { preempts_ = taker; }
  // Whether a completion now would be signalled: the handler has turned callbacks back on, and
  // with EVENT_IDX no interrupt is on its way either (used_event has not moved since it was
  // signalled); without it the device signals again until the handler turns callbacks off.
  bool armed(bool event_idx) const noexcept {
    return static_cast<double>(sim_.now()) >= handler_until_ns_ && !(event_idx && pending_);
  }
  void reset_statistics(sim::time_ns now) override;
  void report(sim::Metrics& m, sim::time_ns now) const override;
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

 private:
  struct Waiting {
    sim::JobId job;
    sim::time_ns arrival;
  };
  enum Event : std::uint32_t { kRaised, kLockFree };
  IoTable& io_;
  sim::Distribution latency_;
  double handler_ns_, per_completion_ns_;
  sim::FcfsStation* bql_holder_ = nullptr;
  InterruptTaker* taker_ = nullptr;
  InterruptTaker* preempts_ = nullptr;
  bool relayed_ = false;
  bool pending_ = false;
  double handler_until_ns_ = -1;  // the guest's handler drains the ring until then
  sim::JobId leader_ = 0;         // the completion that led the last interrupt
  std::vector<Waiting> waiting_, delivering_;
  sim::FlowStats flow_;
  std::uint64_t interrupts_ = 0, completions_ = 0;
};

// The stage. Two states of its port to the host decide a request's way: "notification
// suppressed" (the consumer is processing the ring: no exit, no wake-up) and "thread asleep"
// (the kick must also wake it: "virtqueue.wakeup", wakeup_us). The ring's size bounds requests in
// flight per queue; the guest's blk-mq tags (guest_block.h) already enforce that bound, so "ring
// full" is the tag pool's wait. Completions go through one InterruptLine per queue
// ("virtqueue.irq<q>").
class Virtqueue final : public Stage, public KickPolicy, public InterruptArming {
 public:
  enum In : int { kAvail, kUsed, kWoken, kInterrupted };
  // always_exit: an emulated HBA without a ring traps on every command (register writes).
  Virtqueue(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, bool always_exit);

  sim::Port to_host;    // made available (kicked, or seen by a processing thread)
  sim::Port interrupt;  // used elements delivered to the guest by an interrupt

  // The thread(s) that consume the ring; set when the path is assembled.
  void consumed_by(const RingConsumer& consumer) { consumer_ = &consumer; }
  // The thread whose passes hold the lock the guest needs to take an interrupt (TCG's main loop).
  void interrupts_taken_after(sim::FcfsStation* holder, InterruptTaker* taker, bool relayed) noexcept {
    for (InterruptLine* line : irqs_) line->taken_after(holder, taker, relayed);
  }
  // The guest's threads, whose vCPU each interrupt's handler stops (InterruptLine::preempts).
  void handlers_preempt(InterruptTaker* taker) noexcept {
    for (InterruptLine* line : irqs_) line->preempts(taker);
  }

  // The notify exit is taken unless EVENT_IDX suppression applies and the thread is processing.
  bool kick_needed(const IoRequest& r) const override {
    if (always_exit_ || !event_idx_) return true;
    return !consumer_->processing(r.thread);
  }

  // Whether the request's completion would signal the guest now (InterruptLine::armed).
  bool armed(const IoRequest& r) const override { return irqs_[r.queue % irqs_.size()]->armed(event_idx_); }

  void accept(sim::JobId job, int in_port) override;
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;
  void connected(const sim::Port& port) override;

 private:
  IoTable& io_;
  bool event_idx_;
  bool always_exit_;
  const RingConsumer* consumer_ = nullptr;
  sim::DelayStation* wakeup_;
  std::vector<InterruptLine*> irqs_;  // per queue
};

// The MVA's wake-up delay (weighted by the chance the thread sleeps) and interrupt delay.
void virtqueue_wakeup_demands(const MvaInputs& in, std::vector<MvaDemand>& out);
void virtqueue_interrupt_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of the virtqueue.
void virtqueue_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
