// The stage contract. Each stage of the I/O path (fio, guest block layer, guest driver, the
// guest's job threads, virtqueue, host emulation threads, AIO engine and cache mode, backend) is
// one component in the file named after it. It
//   - builds and owns its stations (sim/ primitives) and routes requests among them;
//   - receives requests on input ports it numbers itself and sends them on through output ports
//     (sim::Port members), which io_path.cc connects to the next stage, port to port;
//   - declares what it draws in the stage graph (its nodes, the edges between them, where each
//     input port enters and from where each output port leaves), so `vqsim graph` is derived
//     from the stages and the connections actually made, never drawn again by hand;
//   - contributes its stations to the mean-value analysis (a free function beside it, because
//     the MVA is solved thousands of times without building a simulation).
// Its keys are the scenario keys it reads (vqsim keys, docs/scenario.md); its statistics are its
// stations' own.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "models/scenario.h"
#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/mva.h"

namespace vqsim::models {

// The prefix of VM v's component and figure names under vm.count: "" for the first VM (a
// single-VM scenario's names), "vm<v>." for the replicas.
inline std::string vm_prefix(int v) { return v == 0 ? std::string() : "vm" + std::to_string(v) + "."; }

// A delay of mean `mean_ns` spread log-normally with coefficient of variation `cv` (none at 0).
inline sim::Distribution spread(double mean_ns, double cv) {
  if (mean_ns <= 0) return sim::Distribution::deterministic(0);
  return cv > 0 ? sim::Distribution::lognormal_mean_cv(mean_ns, cv) : sim::Distribution::deterministic(mean_ns);
}

// A station on the path, for reports and the graph.
struct StageInfo {
  std::string name;   // component name, e.g. "host.iothread0"
  std::string stage;  // "fio", "guest", "virtqueue", "host", "aio", "backend", "cpu"
  int capacity;       // servers or tokens (0 = unlimited)
};

struct GraphNode {
  std::string name;
  std::string stage;  // fio, guest, virtqueue, host, aio, backend, cpu
  std::string kind;   // "station", "pool" (tokens held across stations), "cpu", "device"
  int capacity = 0;   // servers or tokens, 0 = unlimited
};
struct GraphEdge {
  std::string from, to, label;
  bool resource = false;  // "runs on": a thread and the CPUs it shares
};
struct StageGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
};

// One end of a connection in the graph. An input port enters `node`; an output port leaves from
// `node`, or, when `node` is empty, the stage passes what came in on `through_in` straight on
// (a stage without a station on that route, such as the AIO engine of a vhost worker), and the
// edge is drawn from wherever that input came from. The edge takes the input end's label if it
// has one, else the output end's.
struct PortEnd {
  std::string node;
  std::string label;
  int through_in = -1;
};

class Stage : public sim::Component {
 public:
  // `vm`: the prefix of the VM the stage belongs to ("" for the first VM and for what the VMs
  // share, "vm<i>." for replica i); it goes before the names of the stage and its stations, so
  // every replica has random streams of its own and the first keeps today's.
  Stage(sim::Simulator& sim, std::string vm, const std::string& name) : sim::Component(sim, vm + name), vm_(std::move(vm)) {}

  // Its stations, in the order it built them.
  virtual void stations(std::vector<StageInfo>& out) const = 0;
  // Its graph nodes and the edges among them.
  virtual void draw(StageGraph& g) const = 0;
  // Where a request arriving on `in_port` enters (no node: the stage passes it through).
  virtual std::vector<PortEnd> entry(int in_port) const = 0;
  // Where a request leaving by `port` (one of its output ports) comes from.
  virtual std::vector<PortEnd> exits(const sim::Port& port) const = 0;
  // Called once `port` is connected. A stage whose station hands requests straight on through
  // that port (no decision in between) connects the station's own port to the same input, so
  // the request skips a call through the stage: the port stays the stage's, for the graph.
  virtual void connected(const sim::Port& /*port*/) {}

 protected:
  // A station's (or graph node's) name in this stage's VM.
  std::string local(const std::string& name) const { return vm_ + name; }
  const std::string& vm() const noexcept { return vm_; }

 private:
  std::string vm_;
};

// A connection made when the path is assembled: `from`'s output `port` to `to`'s `in_port`.
struct Link {
  const Stage* from;
  const sim::Port* port;
  const Stage* to;
  int in_port;
};

// One station of the MVA's closed network, as a stage contributes it.
struct MvaDemand {
  std::string name;
  sim::MvaStationKind kind;
  int servers;
  double demand_ns;    // per request, all visits
  double wait_ns = 0;  // of demand_ns, the time a server waits for a lock, holding it off CPU (TCG's big lock)
  // How much of its residence counts towards fio's slat: none, all of it, the share
  // slat_part_ns / slat_whole_ns of its demand, or slat_part_ns itself (a job thread that submits
  // ahead of the completions waiting on it: its submit waits for none of its own work).
  enum class Slat { none, all, share, own } slat = Slat::none;
  double slat_part_ns = 0, slat_whole_ns = 0;
  // Of demand_ns, fio's own work after a completion's timestamp and before the next I/O's (its
  // accounting, the next I/O's preparation): on the station, outside fio's latency.
  double outside_ns = 0;
  bool host_thread = false;  // an emulation thread: its utilization decides kicks and wake-ups
  bool core_work = false;    // another QEMU thread's work on host.cores (the TCG interrupt relay)
  bool shared = false;       // one for the whole host (the device, host.cores), not one per VM
  // Per request, the times its visits find the station's thread asleep (or waiting for a lock
  // another thread holds): the count the simulation reports as the thread's wakeups_per_s.
  double wakes = 0;
};

// The share of a station's utilization that a request arriving in a closed network of `n`
// requests sees, by the arrival theorem (the network without itself): (n - 1) / n, so a lone
// request finds its station idle; 1 for an open loop (n <= 0).
inline double seen_by_arrival(double n) { return n <= 0 ? 1.0 : std::max(0.0, n - 1) / n; }

// What every stage's MVA contribution sees.
struct MvaInputs {
  const IoScenario& s;               // request sizes are a merged request's (plug merging)
  double ios_per_request;            // fio I/Os per request (1 without merging or open loop)
  double p_kick, p_wake, irq_share;  // the fixed point's current estimates (io_path_mva.cc)
  double x_thread_per_ns = 0;        // requests per ns through each host thread (the same fixed point)
  double p_guest_idle = 1;           // probability a completion finds its fio thread idle, its vCPU halted (the same fixed point)
  double u_thread = 0;               // a host thread's utilization (the same fixed point)
  double bql_wait_ns = 0;            // TCG: the wait for the big QEMU lock, per taking (the same fixed point)
  double x_fio_thread_per_ns = 0;    // requests per ns each fio thread completes (the same fixed point; 0 = not yet)
  double p_bql_wait = 0;             // TCG: the probability a taking finds the big QEMU lock held (the same fixed point)
};

}  // namespace vqsim::models
