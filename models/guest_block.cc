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

GuestBlockLayer::GuestBlockLayer(sim::Simulator& sim, std::string name, const IoScenario& s, IoTable& io)
    : Stage(sim, std::move(name)), io_(io), tags_per_queue_(block_layer(s).tags_per_queue) {
  for (int q = 0; q < s.queues(); ++q) {
    auto& pool = sim.make<sim::TokenPool>("guest.tags" + std::to_string(q), tags_per_queue_);
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
  g.nodes.push_back({"guest.tags", "guest", "pool", static_cast<int>(tags_.size()) * tags_per_queue_});
}

std::vector<PortEnd> GuestBlockLayer::entry(int) const { return {{"guest.tags", ""}}; }

std::vector<PortEnd> GuestBlockLayer::exits(const sim::Port& port) const {
  return {{"guest.tags", &port == &granted ? "tag granted" : "reaped"}};
}

}  // namespace vqsim::models
