#include "models/guest_block.h"

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

}  // namespace vqsim::models
