// One thread's core time on the host's shared cores (host.cpu, with host.cores set), counted by
// the threads that run there (FioThread, EmulationThread); models/core_share.h adds them up per
// VM profile and kind of thread.
#pragma once

#include <string>

#include "sim/metrics.h"
#include "sim/simulator.h"

namespace vqsim::models {

// One thread's core time on host.cpu. A processor-sharing core serves each piece of work for
// exactly its demand, however many threads share it, so the demands the thread starts in the
// window are the core time it takes (up to the one piece in service when the window opens or
// closes), and every thread's together are the station's busy time.
class CoreTime {
 public:
  void enable() noexcept { on_ = true; }
  void add(sim::time_ns demand_ns) noexcept {
    if (on_) ns_ += static_cast<double>(demand_ns);
  }
  void reset(sim::time_ns now) noexcept {
    ns_ = 0;
    since_ = now;
  }
  // "<name>.host_cores": the mean number of host cores the thread's work kept busy.
  void report(sim::Metrics& m, const std::string& name, sim::time_ns now) const {
    if (on_ && now > since_) m.add(name + ".host_cores", ns_ / static_cast<double>(now - since_));
  }

 private:
  bool on_ = false;
  double ns_ = 0;
  sim::time_ns since_ = 0;
};

}  // namespace vqsim::models
