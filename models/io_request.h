// One I/O request as it travels the modelled path. The engine moves sim jobs (32-bit ids); the
// storage facts of a request live here, in a table indexed by the same id, so stations that need
// them (a device whose time grows with the size, a thread whose cost differs on submit and on
// completion) look them up without the engine knowing what a request is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/scenario.h"
#include "sim/job.h"
#include "sim/time.h"

namespace vqsim::sim {
class FcfsStation;
}

namespace vqsim::models {

// Where a request is on its path; IoPath routes on it.
enum class Step : std::uint8_t {
  tag,             // waiting for a blk-mq tag / ring slot
  guest_submit,    // fio + block layer + driver (+ kick exit) on the job's vCPU
  wakeup,          // eventfd wake-up of a sleeping host thread
  host_submit,     // emulation thread (or vhost worker): pop, parse, submit
  aio_slot,        // waiting for an AIO worker / ring entry
  aio_handoff,     // aio=threads: hand-off to the worker
  device,          // backend
  flush,           // cache flush after a write (writethrough / directsync)
  aio_return,      // aio=threads: completion back to the emulation thread
  host_complete,   // emulation thread: push used element, irqfd
  irq_relay,       // TCG with IOThreads: the main loop reads the guest notifier and injects (no irqfd)
  relay_pass,      // host.tcg_relay_in_pass: the rest of the relay's pass after it raised the interrupt (no request)
  irq,             // interrupt injection
  guest_complete,  // interrupt handler + driver + fio reap on the vCPU
};

// An interrupt line told when the guest has handled the interrupt a completion led (InterruptLine).
class InterruptHandled {
 public:
  virtual void handled(sim::JobId leader, sim::time_ns now) = 0;

 protected:
  ~InterruptHandled() = default;
};

// The guest side of an interrupt: under TCG's big lock told when one is raised while the lock's
// holder is in a pass, so that the vCPU taking it can block on the lock until the pass ends; and
// told when one is delivered, so that its handler can stop the vCPU's work while it runs.
class InterruptTaker {
 public:
  // `idle_blocks`: an idle vCPU wakes for it and blocks on the lock (the pass of the main loop
  // serving the device, which raised it as the vCPU halted); false: a halted vCPU takes it at the
  // pass's end within the wake from its halt (a relayed interrupt, host.tcg_relay_in_pass).
  virtual void raised_under_lock(sim::JobId leader, sim::FcfsStation& holder, bool idle_blocks) = 0;
  // The interrupt `leader` led is delivered with `completions` completions (virtqueue.
  // handler_preempts): its handler runs now on the leader's vCPU. When it stops work in progress
  // there, it pays the handler and their driver completions and returns how long it runs; 0 (the
  // vCPU idle, or asleep on the lock) leaves them to each completion's work, which starts at once
  // or after the lock.
  virtual double handler_preempts(sim::JobId leader, std::size_t completions) = 0;

 protected:
  ~InterruptTaker() = default;
};

struct IoRequest;

// The guest's interrupt for a request's queue as the device sees it (EVENT_IDX): may its
// completion signal the guest now? Not while an interrupt is on its way or its handler drains
// the ring: the guest moves used_event only when it turns callbacks back on, and QEMU signals
// only a completion that passes it (virtio_should_notify).
class InterruptArming {
 public:
  virtual bool armed(const IoRequest& r) const = 0;

 protected:
  ~InterruptArming() = default;
};

struct IoRequest {
  Direction dir = Direction::read;
  bool sequential = false;
  bool pagecache = false;                // served by the host page cache instead of the device
  bool needs_flush = false;              // a write that must be followed by a flush
  bool irq_leader = false;               // its completion raised the interrupt (others rode along)
  InterruptHandled* irq_line = nullptr;  // the line of the interrupt it led
  bool in_handler = false;               // the interrupt's handler, stopping its vCPU's work, did its driver completion
  bool lock_woke = false;                // under TCG its vCPU work waited, asleep, for the big lock: that thread pays a wake-up
  bool woke = false;                     // it found the thread that serves it next asleep: that thread pays its wake-up
  bool relay_rides = false;              // irq_relay: it set no notifier of its own (its queue's signal was on its way)
  bool relay_read = false;               // irq_relay: the relay read the notifier for it (the pass it began goes on)
  std::int64_t relay_signalled_ns = 0;   // irq_relay: when its completion set the guest notifier
  std::uint8_t disk = 0;                 // which of its VM's disks (IoScenario::disks) it is for
  Step step = Step::tag;
  std::uint32_t bytes = 4096;      // all of its I/Os together
  std::uint32_t ios = 1;           // fio I/Os merged into this request (plug merging)
  std::uint32_t chunks = 1;        // device commands it takes one after another (hba_chunks: QEMU's bounce buffer)
  std::uint32_t job = 0;           // fio job (clone) index
  std::uint32_t vm = 0;            // which VM issued it (vm.count replicas share the backend)
  std::uint32_t queue = 0;         // hardware queue / virtqueue
  std::uint32_t thread = 0;        // emulation thread the virtqueue is mapped to
  std::uint64_t seq = 0;           // order of issue at the backend (Ceph flush barrier)
  std::uint64_t device_batch = 0;  // the batched device's busy period that completed it (0: none; BatchDevice)
  sim::time_ns issued_ns = 0;      // fio's io_u prep: start of slat and lat
  sim::time_ns submitted_ns = 0;   // the submit call returned: end of slat, start of clat
  sim::time_ns reaped_ns = 0;      // fio took its completion's timestamp: end of clat and lat (0: when it leaves fio)
  sim::time_ns outside_ns = 0;     // its fio thread's work after that timestamp (guest.fio_outside_us)
};

// Requests by sim job id; grows with the job pool, never shrinks.
class IoTable {
 public:
  IoRequest& operator[](sim::JobId id) {
    if (id >= size_) grow(id);
    return requests_[id];
  }

 private:
  void grow(sim::JobId id) {
    requests_.resize(static_cast<std::size_t>(id) + 64);
    size_ = requests_.size();
  }
  std::vector<IoRequest> requests_;
  std::size_t size_ = 0;  // requests_.size(), kept: the hot path compares with it on every hop
};

}  // namespace vqsim::models
