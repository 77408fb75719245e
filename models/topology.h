// The scenario as a graph (Boost.Graph): the stages a request visits, in order, from fio to the
// device and back, plus the resources they hold (token pools) or run on (CPUs). Built from the
// same stations the simulation builds (io_stages), checked, and printed as Graphviz DOT by
// `vqsim graph`.
//
// Checks: every stage is reachable from fio; from every stage some path reaches a device and
// from the device a path returns to fio (a request can neither get lost nor stop short of the
// device); every resource is used by at least one stage (nothing dangles).
#pragma once

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
std::string topology_dot(const TopologyGraph& g, const std::string& title);

}  // namespace vqsim::models
