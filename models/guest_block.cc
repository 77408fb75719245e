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

}  // namespace vqsim::models
