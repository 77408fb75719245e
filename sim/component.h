// Components and ports: the only way parts of a model talk to each other.
//
// A component receives jobs on numbered input ports (accept, a direct call: zero-delay
// hand-offs cost one virtual call and never touch the event queue) and the timers it scheduled
// itself (handle). It owns its statistics and its random stream, and reports named figures.
// Dispatch is one virtual call per event; events carry a plain 64-bit payload, never a closure.
#pragma once

#include <cstdint>
#include <string>

#include "sim/job.h"
#include "sim/metrics.h"
#include "sim/rng.h"
#include "sim/statistics.h"
#include "sim/time.h"

namespace vqsim::sim {

class Simulator;

class Component {
 public:
  Component(Simulator& sim, std::string name);
  virtual ~Component() = default;
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  const std::string& name() const noexcept { return name_; }
  // FNV-1a of the name: identifies the component in the run's event-stream hash.
  std::uint64_t name_hash() const noexcept { return name_hash_; }

  // A job arrives on input port `in_port`. Components that take no jobs throw.
  virtual void accept(JobId job, int in_port);
  // A timer this component scheduled fires; `kind` and `payload` are its own.
  virtual void handle(std::uint32_t kind, std::uint64_t payload);
  // Called once before the run starts: throw std::logic_error if the component is miswired.
  virtual void validate() const {}
  // Called once when the run starts (time 0): sources and populations inject their jobs here.
  virtual void start() {}
  // End of warm-up: forget what was observed so far.
  virtual void reset_statistics(time_ns /*now*/) {}
  // Append this component's figures, named "<name>.<figure>".
  virtual void report(Metrics& /*out*/, time_ns /*now*/) const {}
  // Jobs present, response times and completions, where the component has them (for Little).
  virtual const FlowStats* flow() const noexcept { return nullptr; }

 protected:
  Simulator& sim_;
  Rng rng_;  // this component's own stream: (seed, replication, hash of name)

 private:
  std::string name_;
  std::uint64_t name_hash_;
};

// An output port: where a component sends jobs. Connecting is done once, when the model is built.
struct Port {
  Component* to = nullptr;
  int in_port = 0;
  void send(JobId job) const { to->accept(job, in_port); }
  bool connected() const noexcept { return to != nullptr; }
};

inline void connect(Port& from, Component& to, int in_port = 0) {
  from.to = &to;
  from.in_port = in_port;
}

// Throws std::logic_error naming the component and port when `port` is not connected.
void require_connected(const Component& owner, const Port& port, const char* port_name);

// What a station with a waiting line records: its flow, the waits before service, the servers
// (or tokens) in use and the length of the line. Reports the flow's figures plus wait_mean_ns,
// queue_mean and utilization (in use / capacity).
struct WaitingLineStats {
  FlowStats flow;
  Welford wait;
  TimeAverage in_use;
  TimeAverage queued;
  void reset(time_ns now) noexcept {
    flow.reset(now);
    wait.clear();
    in_use.reset(now);
    queued.reset(now);
  }
  void report(Metrics& out, const std::string& prefix, time_ns now, double capacity) const;
};

// Standard figures of a FlowStats under "<prefix>.": throughput_per_s, response mean/stddev/
// p50/p99 in ns, number_mean, completions and little_rel_error.
void report_flow(Metrics& out, const std::string& prefix, const FlowStats& flow, time_ns now);

}  // namespace vqsim::sim
