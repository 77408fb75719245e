// Where jobs come from and where they end.
// - Source: an open arrival stream (Poisson with an exponential interarrival distribution).
// - Sink: ends jobs, records their time in the network, counts completions for run control.
// - ClosedLoop: a fixed population; each job returning to it has finished a cycle (its
//   response is recorded and counted) and is sent round again at once. Little's law on it is
//   the whole network's: population = throughput x cycle time.
#pragma once

#include <cstdint>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/simulator.h"

namespace vqsim::sim {

class Source : public Component {
 public:
  Source(Simulator& sim, std::string name, Distribution interarrival, std::uint32_t job_class = 0);
  Port out;
  void start() override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void validate() const override { require_connected(*this, out, "out"); }

 private:
  Distribution interarrival_;
  std::uint32_t job_class_;
};

class Sink : public Component {
 public:
  Sink(Simulator& sim, std::string name);
  void accept(JobId job, int in_port) override;
  void reset_statistics(time_ns now) override;
  void report(Metrics& m, time_ns now) const override;
  const LatencyStat& response() const noexcept { return response_; }

 private:
  LatencyStat response_;
  time_ns window_start_ = 0;
};

class ClosedLoop : public Component {
 public:
  ClosedLoop(Simulator& sim, std::string name, int population, std::uint32_t job_class = 0);
  Port out;
  void start() override;
  void accept(JobId job, int in_port) override;
  void validate() const override { require_connected(*this, out, "out"); }
  void reset_statistics(time_ns now) override { flow_.reset(now); }
  void report(Metrics& m, time_ns now) const override { report_flow(m, name(), flow_, now); }
  const FlowStats* flow() const noexcept override { return &flow_; }

 private:
  int population_;
  std::uint32_t job_class_;
  FlowStats flow_;  // "present" = out in the network: always the population
};

}  // namespace vqsim::sim
