// The I/O path by mean-value analysis: the same stages as the simulation (io_path.h), each
// reduced to its mean demand per I/O, solved as a closed network of numjobs x iodepth
// customers (exact MVA with load-dependent multi-server stations), or, for open-loop rate_iops,
// as an open network (R = D / (1 - U)). Means only, in milliseconds; for sweeps and searches.
//
// With vm.count = K identical VMs the per-VM stations are copied K times and visited with
// probability 1/K each (one class); iops and latencies are one VM's, total_iops the host's.
//
// What it approximates (and the DES does not): state-dependent kicks and wake-ups are weighted
// by the probability that the host thread is asleep, found by a fixed point on its utilization;
// token limits (tags, AIO workers) are ignored unless they are the only servers; a fork-join
// mirror is two stations each visited by every write; flushes are pure delays; NCQ
// reordering is ignored. What it leaves out: virtio-blk's notification batching
// (host.virtio_blk_batching), whose hold depends on the ring's state; calibration's DES anchor
// corrects for it.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.h"

namespace vqsim::models {

struct IoMvaStage {
  std::string name;
  double residence_ns = 0;  // per I/O
  double utilization = 0;   // per server
  double number_mean = 0;
};

struct IoMvaResult {
  double iops = 0;        // all directions, one VM's
  double total_iops = 0;  // the host's: every VM of vm.count
  double read_iops = 0, write_iops = 0;
  double lat_mean_ns = 0;  // fio's lat
  double slat_mean_ns = 0;
  double clat_mean_ns = 0;
  std::vector<IoMvaStage> stages;
  std::string bottleneck;
  bool open_loop = false;
  bool saturated = false;  // open loop beyond capacity
};

IoMvaResult solve_io_mva(const IoScenario& s);

}  // namespace vqsim::models
