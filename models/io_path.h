// The I/O path assembled: fio jobs -> guest block layer -> guest driver -> virtqueue -> host
// emulation thread (or vhost worker) -> AIO engine and cache mode -> backend, and back. Each
// stage's model lives in the file named after it; this file only builds the stations from a
// scenario and routes each request from one stage to the next (one direct call per hop).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/aio_engine.h"
#include "models/backend.h"
#include "models/emulation_thread.h"
#include "models/fio_workload.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"
#include "models/virtqueue.h"
#include "sim/metrics.h"
#include "sim/ps_station.h"
#include "sim/replications.h"
#include "sim/simulator.h"
#include "sim/token_pool.h"

namespace vqsim::models {

// Where a stage sits on the path, for reports and the topology graph.
struct StageInfo {
  std::string name;   // component name, e.g. "host.iothread0"
  std::string stage;  // "fio", "guest", "virtqueue", "host", "aio", "backend", "cpu"
  int capacity;       // servers or tokens (0 = unlimited)
};

class IoPath : public sim::Component, public RequestSink {
 public:
  // Input ports: what just finished.
  enum Port : int {
    kTagGranted,
    kTagReleased,
    kLimitGranted,
    kLimitReleased,
    kGuestCpuDone,
    kWakeupDone,
    kHostThreadDone,
    kAioGranted,
    kAioReleased,
    kHandoffDone,
    kDeviceDone,
    kFlushDone,
    kIrqDone,
    kBatchReleased,
  };

  IoPath(sim::Simulator& sim, std::string name, const IoScenario& scenario);

  void start_request(sim::JobId job) override;
  void accept(sim::JobId job, int in_port) override;

  const std::vector<StageInfo>& stages() const { return stages_; }
  FioWorkload& workload() { return *workload_; }

 private:
  void to_guest_submit(sim::JobId job, IoRequest& r);
  void after_guest_submit(sim::JobId job, IoRequest& r);
  void to_host_submit(sim::JobId job, IoRequest& r);
  void after_host_submit(sim::JobId job, IoRequest& r);
  void to_backend(sim::JobId job, IoRequest& r);
  void after_device(sim::JobId job, IoRequest& r);
  void after_aio(sim::JobId job, IoRequest& r);
  void to_host_complete(sim::JobId job, IoRequest& r);
  void to_guest_complete(sim::JobId job, IoRequest& r);
  void release_limits(sim::JobId job, IoRequest& r);

  const IoScenario& s_;
  IoTable io_;
  DriverCosts driver_;
  BlockLayer block_;
  AioEngine aio_;
  CacheSemantics cache_;
  FioWorkload* workload_ = nullptr;
  std::vector<sim::TokenPool*> tags_;           // per hardware queue
  sim::TokenPool* limit_ = nullptr;             // driver / device in-flight limit
  std::vector<FioThread*> fio_threads_;         // per fio job
  std::vector<EmulationThread*> host_threads_;  // main loop, IOThreads or vhost workers
  std::vector<NotificationBatch*> batches_;     // per host thread, when virtio-blk batches
  std::vector<int> submits_queued_;             // per host thread: submit-side jobs not yet handled
  std::unique_ptr<Virtqueues> vqs_;
  sim::DelayStation* wakeup_ = nullptr;
  std::vector<InterruptLine*> irqs_;  // per virtqueue
  sim::TokenPool* aio_slots_ = nullptr;
  sim::DelayStation* handoff_ = nullptr;
  std::unique_ptr<Backend> backend_;
  sim::ProcessorSharingStation* cpu_ = nullptr;  // shared cores, when limited
  std::vector<StageInfo> stages_;
};

// One replication of a scenario: builds, runs and reports. Metrics hold the workload's figures
// ("read.iops", "read.clat.mean_ns", "read.clat.p99.000000_ns", …), every station's figures
// ("<station>.utilization", …) and "little.worst_rel_error".
sim::Metrics run_io_replication(const IoScenario& s, std::uint64_t replication, sim::RunResult* run = nullptr);

// The stations of a scenario without running it (for reports and the graph).
std::vector<StageInfo> io_stages(const IoScenario& s);

}  // namespace vqsim::models
