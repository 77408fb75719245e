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

#include <vector>

#include "models/emulation_thread.h"
#include "models/fio_workload.h"
#include "sim/distribution.h"

namespace vqsim::models {

class Virtqueues final : public KickPolicy {
 public:
  // always_exit: an emulated HBA without a ring traps on every command (register writes).
  Virtqueues(const IoScenario& s, std::vector<EmulationThread*> threads, bool always_exit)
      : s_(s), threads_(std::move(threads)), always_exit_(always_exit) {}
  // The notify exit is taken unless EVENT_IDX suppression applies and the thread is awake.
  bool kick_needed(const IoRequest& r) const override {
    if (always_exit_ || !s_.vq.event_idx) return true;
    return !threads_[r.thread]->awake();
  }
  // After the kick: must the request wait for the thread to be woken?
  bool must_wake(const IoRequest& r) const { return !threads_[r.thread]->awake(); }

 private:
  const IoScenario& s_;
  std::vector<EmulationThread*> threads_;
  bool always_exit_;
};

// One virtqueue's interrupt: the first completion starts an interrupt (irq_us until the guest
// handler runs); completions that arrive before it runs are delivered with it.
class InterruptLine : public sim::Component {
 public:
  InterruptLine(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution latency);
  sim::Port out;
  void accept(sim::JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { sim::require_connected(*this, out, "out"); }
  void reset_statistics(sim::time_ns now) override;
  void report(sim::Metrics& m, sim::time_ns now) const override;
  const sim::FlowStats* flow() const noexcept override { return &flow_; }

 private:
  struct Waiting {
    sim::JobId job;
    sim::time_ns arrival;
  };
  IoTable& io_;
  sim::Distribution latency_;
  bool pending_ = false;
  std::vector<Waiting> waiting_, delivering_;
  sim::FlowStats flow_;
  std::uint64_t interrupts_ = 0, completions_ = 0;
};

}  // namespace vqsim::models
