// Batch-service station: one server that, whenever it is free and jobs are waiting, takes *all*
// of them as one batch, serves the batch for one service time, and releases them together.
// This is how a serialized flush (models/backend.h) behaves: a flush started now covers every
// job that arrived before it, so jobs that arrive while one runs wait for the next, and the
// batch grows with the load.
//
// Cost per batch: one event; per job: one vector push and one send.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/simulator.h"

namespace vqsim::sim {

class BatchStation : public Component {
 public:
  BatchStation(Simulator& sim, std::string name, Distribution service);

  Port out;

  void accept(JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { require_connected(*this, out, "out"); }
  void reset_statistics(time_ns now) override;
  void report(Metrics& m, time_ns now) const override;
  const FlowStats* flow() const noexcept override { return &flow_; }

 protected:
  // The service time of a batch of `size` jobs; by default one draw whatever the size.
  virtual time_ns batch_service_ns(std::size_t size);

 private:
  struct Waiting {
    JobId job;
    time_ns arrival;
  };
  void start_batch();
  Distribution service_;
  std::vector<Waiting> waiting_, serving_;
  bool busy_ = false;
  FlowStats flow_;
  TimeAverage busy_time_;
  Welford batch_size_;
};

}  // namespace vqsim::sim
