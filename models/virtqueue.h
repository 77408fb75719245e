// Virtqueue stage: the ring between the guest driver and the host thread, and its two
// notifications.
//   kick (guest -> host): a write to the notify register, a VM exit that KVM turns into an
//     eventfd signal (ioeventfd). Suppressed (EVENT_IDX / notifications off) while the host
//     thread is processing the ring or polling it. Costs the vCPU kick_exit_us; when the
//     thread was asleep, the request also waits wakeup_us for it to be scheduled.
//   interrupt (host -> guest): irqfd, MSI injection, the guest's handler: irq_us of latency.
// The ring's size bounds requests in flight per queue; the guest's blk-mq tags (guest_block.h)
// already enforce that bound, so the ring needs no pool of its own.
#pragma once

#include <vector>

#include "models/emulation_thread.h"
#include "models/fio_workload.h"

namespace vqsim::models {

class Virtqueues : public KickPolicy {
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

}  // namespace vqsim::models
