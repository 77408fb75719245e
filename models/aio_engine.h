// AIO engine and cache mode: how QEMU hands a request to the host kernel, and what the cache
// mode makes of reads, writes and flushes.
//   threads   a pool of at most 64 workers (util/thread-pool.c max_threads) that each make one
//             blocking preadv/pwritev (and fdatasync for a flush); a hand-off to the worker and a
//             bottom half back to the emulation thread, each threads_handoff_us of latency. The
//             way back is the worker's wake-up from its sleep in the syscall: a request the host
//             page cache serves never sleeps there, and returns with the bottom half alone.
//   native    io_submit in batches (aio-max-batch 32), at most 1024 events per AioContext;
//             needs O_DIRECT, so cache=writeback/writethrough/unsafe with native is rejected as
//             QEMU rejects it (block/file-posix.c).
//   io_uring  SQEs in batches; 128 ring entries (block/io_uring.c MAX_ENTRIES), the excess
//             waits inside QEMU.
// Cache modes (QEMU -drive cache=, docs/sources.md §6): none/directsync use O_DIRECT; writeback,
// writethrough and unsafe go through the host page cache, where reads may hit
// (host.pagecache_hit_ratio) and writeback/unsafe writes complete once copied (the background
// write-back to the device is not modelled); writethrough and directsync follow every write by
// a flush (QEMU < 10: a separate fdatasync), and QEMU serializes flushes per device.
#pragma once

#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/delay_station.h"
#include "sim/token_pool.h"

namespace vqsim::models {

struct AioEngine {
  int slots = 0;         // requests in the engine at once (0 = no limit)
  bool handoff = false;  // aio=threads: a worker hand-off each way
  double submit_ns = 0;  // emulation-thread CPU per request for the submission itself
  // aio=native on a host file or device: the kernel signals an eventfd for each completion, and
  // QEMU's poll handler takes completions from the ring without clearing it (block/linux-aio.c
  // qemu_laio_poll_ready; only the fd handler, qemu_laio_completion_cb, clears it), so after
  // completions found while polling the thread's next wait returns at once (EmulationThread).
  bool poll_leaves_notifier = false;
};
AioEngine aio_engine(const IoScenario& s);

struct CacheSemantics {
  bool direct;               // O_DIRECT: no host page cache
  bool flush_after_write;    // writethrough / directsync
  bool writes_to_pagecache;  // writeback / unsafe: a write completes in the page cache
};
CacheSemantics cache_semantics(const IoScenario& s);

// aio=threads' hand-off: each request's own draw, except that the requests a batched device
// (backend.batched) completed together return together: workers whose preadv returned at once
// signal one completion bottom half, which finishes them all (util/thread-pool.c: a worker marks
// its request done and schedules the pool's completion_bh).
class HandoffDelay final : public sim::DelayStation {
 public:
  HandoffDelay(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution delay);

 protected:
  sim::time_ns delay_ns(sim::JobId job) override;

 private:
  IoTable& io_;
  sim::Distribution draw_;
  std::uint64_t last_batch_ = 0;
  sim::time_ns last_ns_ = 0;
};

// The stage: QEMU's AIO submission ("aio.slots": requests in the engine at once;
// "aio.handoff": aio=threads' hand-off to a worker and the bottom half back) and the cache
// mode's decision for each request: served by the host page cache (a read that hits with
// host.pagecache_hit_ratio, a writeback/unsafe write) or by the device, and whether a flush
// follows it. vhost workers and bare metal have no QEMU engine: the stage then only decides.
class AioStage final : public Stage {
 public:
  enum In : int { kSubmit, kDone, kSlotGranted, kSlotReleased, kHandoffDone };
  AioStage(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io);

  sim::Port to_device;     // to the backend's device
  sim::Port to_pagecache;  // to the host page cache
  sim::Port completed;     // done: back to the host thread (or the guest, on bare metal)

  void accept(sim::JobId job, int in_port) override;
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;

 private:
  void to_backend(sim::JobId job, IoRequest& r);
  IoTable& io_;
  CacheSemantics cache_;
  double pagecache_hit_ratio_;
  bool bare_;
  sim::TokenPool* slots_ = nullptr;
  HandoffDelay* handoff_ = nullptr;
};

// Of a workload's I/Os, the share the host page cache serves under the cache mode.
double pagecache_share(const IoScenario& s);

// The MVA's hand-off delay (aio=threads: both ways, one way for what the page cache serves).
void aio_demands(const MvaInputs& in, std::vector<MvaDemand>& out);

// The scenario keys of the AIO engine and cache mode.
void aio_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
