#include "models/guest_block.h"

#include <algorithm>

namespace vqsim::models {

BlockLayer block_layer(const IoScenario& s) {
  BlockLayer b;
  b.tags_per_queue = s.bare_metal() ? 1023 : s.guest.queue_size;
  const bool scheduler = s.guest.scheduler != "none" && s.guest.scheduler != "noop";
  b.submit_extra_ns = 0;
  if (s.guest.block_path != BlockPath::bio && scheduler) b.submit_extra_ns += s.guest.scheduler_ns;
  if (s.guest.block_path == BlockPath::request) b.submit_extra_ns += s.guest.request_path_ns;
  return b;
}

int plug_merge_ios(const IoScenario& s) {
  const WorkloadParams& w = s.workload;
  if (w.random || w.ioengine == FioEngine::psync || w.iodepth_batch_submit <= 1 || w.rate_iops > 0) return 1;
  if (w.read_fraction > 0 && w.read_fraction < 1) return 1;  // reads and writes do not merge
  const std::uint64_t bs = w.read_fraction >= 1 ? w.bs_read_bytes : w.bs_write_bytes;
  const auto by_size = static_cast<int>(std::max<std::uint64_t>(1, s.guest.max_request_bytes / bs));
  return std::max(1, std::min({w.iodepth_batch_submit, w.effective_depth(), by_size}));
}

int plug_merged_requests_per_job(const IoScenario& s) {
  const int m = plug_merge_ios(s);
  const int d = s.workload.effective_depth();
  return (d + m - 1) / m;
}

GuestBlockLayer::GuestBlockLayer(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io)
    : Stage(sim, std::move(vm), "guest.block"), io_(io), tags_per_queue_(block_layer(s).tags_per_queue) {
  for (int q = 0; q < s.queues(); ++q) {
    auto& pool = sim.make<sim::TokenPool>(local("guest.tags" + std::to_string(q)), tags_per_queue_);
    sim::connect(pool.acquired, *this, kTagGranted);
    sim::connect(pool.released, *this, kTagReleased);
    tags_.push_back(&pool);
  }
}

void GuestBlockLayer::connected(const sim::Port& port) {
  for (sim::TokenPool* pool : tags_) {
    if (&port == &granted) sim::connect(pool->acquired, *port.to, port.in_port);
    if (&port == &reaped) sim::connect(pool->released, *port.to, port.in_port);
  }
}

void GuestBlockLayer::accept(sim::JobId job, int in_port) {
  switch (static_cast<In>(in_port)) {
    case kSubmit: {
      IoRequest& r = io_[job];
      r.step = Step::tag;
      r.seq = 0;
      tags_[r.queue % tags_.size()]->accept(job, sim::TokenPool::kAcquire);
      break;
    }
    case kTagGranted:
      granted.send(job);
      break;
    case kRelease:
      tags_[io_[job].queue % tags_.size()]->accept(job, sim::TokenPool::kRelease);
      break;
    case kTagReleased:
      reaped.send(job);
      break;
  }
}

void GuestBlockLayer::validate() const {
  sim::require_connected(*this, granted, "granted");
  sim::require_connected(*this, reaped, "reaped");
}

void GuestBlockLayer::stations(std::vector<StageInfo>& out) const {
  for (const sim::TokenPool* pool : tags_) out.push_back({pool->name(), "guest", tags_per_queue_});
}

// The per-queue pools are drawn as one node holding every queue's tags.
void GuestBlockLayer::draw(StageGraph& g) const {
  g.nodes.push_back({local("guest.tags"), "guest", "pool", static_cast<int>(tags_.size()) * tags_per_queue_});
}

std::vector<PortEnd> GuestBlockLayer::entry(int) const { return {{local("guest.tags"), ""}}; }

std::vector<PortEnd> GuestBlockLayer::exits(const sim::Port& port) const {
  return {{local("guest.tags"), &port == &granted ? "tag granted" : "reaped"}};
}

// The scenario keys of the guest block layer (models/param.h: how a key is declared).
void guest_block_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"guest.num_queues",
       Kind::integer,
       "",
       "0 (= vcpus); by qemu_version",
       "QEMU commit 9445e1e15e66 (num-queues = vCPUs since 5.2); docs/sources.md §8",
       "virtqueues / blk-mq hardware queues; QEMU < 5.2: 1",
       {},
       0,
       1024,
       [](IoScenario& s, const Value& v) { s.guest.num_queues = static_cast<int>(v.number); }});
  add({"guest.queue_size",
       Kind::integer,
       "",
       "256; by qemu_version",
       "QEMU virtqueue size default (256 since 5.0, 128 before); Linux virtblk tags; docs/sources.md §8",
       "ring size = blk-mq tags per hardware queue; QEMU < 5.0: 128",
       {},
       2,
       32768,
       [](IoScenario& s, const Value& v) { s.guest.queue_size = static_cast<int>(v.number); }});
  add({"guest.scheduler",
       Kind::choice,
       "",
       "none",
       "Linux block/blk-mq-sched.c",
       "guest I/O scheduler (any but none/noop costs scheduler_us)",
       {"none", "noop", "mq-deadline", "deadline", "cfq", "bfq", "kyber"},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.guest.scheduler = v.word; }});
  add({"guest.block_path",
       Kind::choice,
       "",
       "mq",
       "LKML 2011 virtio-blk bio-based path (seed 003)",
       "mq (blk-mq), request (legacy request_fn) or bio (make_request, bypasses the scheduler)",
       {"mq", "request", "bio"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.guest.block_path =
             pick<BlockPath>({"mq", "request", "bio"}, {BlockPath::mq, BlockPath::request, BlockPath::bio}, v.word);
       }});
  add({"guest.scheduler_us",
       Kind::time_us,
       "us",
       "1.0",
       "[I]",
       "extra vCPU time per I/O with a scheduler",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.scheduler_ns = v.number; },
       [](const IoScenario& s) { return s.guest.scheduler_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.request_path_us",
       Kind::time_us,
       "us",
       "1.0",
       "[I] seed 003",
       "extra vCPU time per I/O on the legacy request path",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.request_path_ns = v.number; },
       [](const IoScenario& s) { return s.guest.request_path_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.max_request",
       Kind::size,
       "bytes",
       "1280k",
       "Linux BLK_DEF_MAX_SECTORS (max_sectors_kb 1280)",
       "largest request the block layer builds when it merges sequential I/Os",
       {},
       4096,
       1 << 30,
       [](IoScenario& s, const Value& v) { s.guest.max_request_bytes = static_cast<std::uint64_t>(v.number); }});
}

}  // namespace vqsim::models
