// Host emulation thread: the QEMU main loop (shared; holds the BQL that vCPU exits to user space
// also take) or one IOThread — or, for vhost-scsi and vhost-user-blk, the kernel or user-space
// worker that replaces it. Every request passes it twice: on submit (pop the descriptor chain,
// parse, run the block layer, hand to the AIO engine) and on completion (push the used element,
// signal the irqfd). The per-request work is serialized on this one thread, which is why it is a
// single-server queue and usually the throughput ceiling (domain.md §0, §10).
//
// An IOThread polls for up to poll-max-ns after it runs out of work (QEMU adaptive polling,
// IOTHREAD_POLL_MAX_NS_DEFAULT 32768 ns): a request that arrives within that window neither
// needs a kick nor a wake-up. The main loop does not poll; a vhost-user backend always does.
#pragma once

#include "models/io_request.h"
#include "sim/distribution.h"
#include "sim/fcfs_station.h"

namespace vqsim::models {

class EmulationThread : public sim::FcfsStation {
 public:
  // `per_page_ns`: submit time per 4 KiB page of the request beyond the first.
  EmulationThread(sim::Simulator& sim, std::string name, IoTable& io, double submit_ns, double complete_ns, double cpu_cv,
                  double poll_window_ns, bool always_polling, double per_page_ns = 0);

  // True when the thread is working or polling right now: a new request needs no kick and no
  // wake-up (EVENT_IDX / notification disabled while it processes the ring).
  bool awake() const noexcept {
    if (always_polling_ || busy() > 0 || waiting() > 0) return true;
    return poll_window_ns_ > 0 && static_cast<double>(sim_.now() - idle_since_ns()) <= poll_window_ns_;
  }

 protected:
  sim::time_ns service_ns(sim::JobId job) override;

 private:
  IoTable& io_;
  double submit_ns_, complete_ns_, poll_window_ns_, per_page_ns_;
  bool always_polling_;
  sim::Distribution factor_;
};

}  // namespace vqsim::models
