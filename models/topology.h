// The scenario as a graph (Boost.Graph): the stages a request visits, in order, from fio to the
// device and back, plus the resources they hold (token pools) or run on (CPUs). Built from the
// same stations the simulation builds (io_stages), checked, and printed as Graphviz DOT by
// `vqsim graph`; with a run's results (`vqsim graph --with-results`) each node is filled by its
// utilization.
//
// Checks: every stage is reachable from fio; from every stage some path reaches a device and
// from the device a path returns to fio (a request can neither get lost nor stop short of the
// device); every resource is used by at least one stage (nothing dangles).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "models/scenario.h"

namespace vqsim::models {

struct TopologyNode {
  std::string name;
  std::string stage;  // fio, guest, virtqueue, host, aio, backend, cpu
  std::string kind;   // "station", "pool" (tokens held across stations), "cpu", "device"
  int capacity = 0;   // servers or tokens, 0 = unlimited
};
struct TopologyEdge {
  std::string label;  // "submit", "complete", "holds", "runs on", …
  bool resource = false;
};
using TopologyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, TopologyNode, TopologyEdge>;

TopologyGraph build_topology(const IoScenario& s);
// Throws std::logic_error naming the stage or resource that breaks a rule.
void check_topology(const TopologyGraph& g);
// What a run measured at a node. Stations the graph draws as one node (one per fio job, per
// hardware queue, per interrupt line) are merged into it, keeping the busiest one's utilization.
struct NodeLoad {
  double utilization = 0;        // busy servers / servers, or tokens held / tokens (pools)
  bool has_utilization = false;  // false for pure delays (no servers to be busy)
  double share_of_latency = 0;   // of fio's mean latency, summed over the merged stations
  int stations = 0;              // merged stations
};
using TopologyLoads = std::map<std::string, NodeLoad>;

// The graph node a simulated station is drawn in: "guest.fio_job3" -> "guest.fio_jobs",
// "guest.tags1" -> "guest.tags", "virtqueue.irq2" -> "virtqueue.irq"; others keep their name.
std::string topology_node_of(const std::string& station);
// Adds one station's figures to the node it is drawn in.
void add_station_load(TopologyLoads& loads, const std::string& station, bool has_utilization, double utilization,
                      double share_of_latency);

// Graphviz DOT. With loads, nodes are filled white -> orange -> red by utilization (0, 50%,
// 100%) and labelled with it and their share of the mean latency; the bottleneck node is drawn
// bold; `note` is added under the title.
std::string topology_dot(const TopologyGraph& g, const std::string& title, const TopologyLoads* loads = nullptr,
                         const std::string& bottleneck = "", const std::string& note = "");

}  // namespace vqsim::models
