// Guest block layer stage: blk-mq tags per hardware queue, the I/O scheduler and the legacy
// request-based path vs the bio-based path (seed 003). Its CPU cost is charged on the submitting
// vCPU together with fio's and the driver's (see fio_workload.h); its limits are token pools.
#pragma once

#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/token_pool.h"

namespace vqsim::models {

struct BlockLayer {
  int tags_per_queue;      // requests in flight per hardware queue
  double submit_extra_ns;  // scheduler and path cost per request on submit
};

// Linux: a virtio-blk hw queue has as many tags as the virtqueue has free descriptors (= queue
// size, indirect descriptors) [drivers/block/virtio_blk.c]; with an I/O scheduler nr_requests =
// 2 * min(depth, 128) [block/blk-mq-sched.c] bounds what waits in the scheduler, not what is in
// flight, so the tag depth is the limit. Bare metal: an NVMe queue of 1023 entries. The bio path
// bypasses the scheduler (make_request_fn); the legacy request path pays request allocation and
// the elevator under the queue lock.
BlockLayer block_layer(const IoScenario& s);

// Plug merging: fio submits iodepth_batch_submit I/Os per io_submit call; under the block
// layer's plug, contiguous sequential I/Os of one direction merge into one request, up to
// max_request bytes. The number of I/Os per request (1 = no merging: random patterns, mixed
// directions, psync, or one I/O per call). The merged groups then persist in a closed loop, as
// fio resubmits what completed together.
int plug_merge_ios(const IoScenario& s);
// Requests one job keeps in flight when its depth is issued in plug-merged groups (depth 10 in
// groups of 4: 4 + 4 + 2, three requests).
int plug_merged_requests_per_job(const IoScenario& s);

// The stage: a request takes a tag of its hardware queue ("guest.tags<q>", FIFO when none is
// free) before anything else, and gives it back when fio has reaped it.
class GuestBlockLayer final : public Stage {
 public:
  enum In : int { kSubmit, kRelease, kTagGranted, kTagReleased };
  GuestBlockLayer(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io);

  sim::Port granted;  // holding a tag: on to the driver
  sim::Port reaped;   // tag returned: back to fio

  void accept(sim::JobId job, int in_port) override;
  void validate() const override;
  void stations(std::vector<StageInfo>& out) const override;
  void draw(StageGraph& g) const override;
  std::vector<PortEnd> entry(int in_port) const override;
  std::vector<PortEnd> exits(const sim::Port& port) const override;
  void connected(const sim::Port& port) override;

 private:
  IoTable& io_;
  int tags_per_queue_;
  std::vector<sim::TokenPool*> tags_;  // per hardware queue
};

// The scenario keys of the guest block layer.
void guest_block_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
