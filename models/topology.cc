#include "models/topology.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "models/io_path.h"

namespace vqsim::models {

namespace {
using Vertex = TopologyGraph::vertex_descriptor;

template <typename Graph>
std::vector<bool> reachable(const Graph& g, typename boost::graph_traits<Graph>::vertex_descriptor from, bool follow_resources) {
  std::vector<bool> seen(boost::num_vertices(g), false);
  std::vector<typename boost::graph_traits<Graph>::vertex_descriptor> stack{from};
  seen[from] = true;
  while (!stack.empty()) {
    const auto v = stack.back();
    stack.pop_back();
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      if (!follow_resources && g[*e].resource) continue;
      const auto t = boost::target(*e, g);
      if (!seen[t]) {
        seen[t] = true;
        stack.push_back(t);
      }
    }
  }
  return seen;
}
}  // namespace

namespace {
// Where a request leaving `stage` by `port` comes from, as graph nodes: a stage that passes the
// request straight through is looked through, back to the stage it came from.
std::vector<PortEnd> resolve_exits(const IoPath& path, const Stage& stage, const sim::Port& port) {
  std::vector<PortEnd> out;
  for (const PortEnd& end : stage.exits(port)) {
    if (!end.node.empty()) {
      out.push_back(end);
      continue;
    }
    for (const Link& l : path.links())
      if (l.to == &stage && l.in_port == end.through_in)
        for (PortEnd from : resolve_exits(path, *l.from, *l.port)) {
          if (!end.label.empty()) from.label = end.label;
          out.push_back(from);
        }
  }
  return out;
}
}  // namespace

// The graph is what the stages declare (their nodes and inner edges) plus one edge per pair of
// nodes that a connection the path made joins.
TopologyGraph build_topology(const IoScenario& s) {
  sim::Simulator sim(s.run.seed, 0);
  const IoPath path(sim, s);
  StageGraph drawn;
  for (const Stage* stage : path.stages()) {
    stage->draw(drawn);
    for (const auto& [after, cpu] : path.cpus())
      if (after == stage) drawn.nodes.push_back({cpu->name(), "cpu", "cpu", cpu->servers()});
  }
  std::vector<GraphEdge> edges;
  for (const Link& l : path.links()) {
    const std::vector<PortEnd> into = l.to->entry(l.in_port);
    for (const PortEnd& from : resolve_exits(path, *l.from, *l.port))
      for (const PortEnd& to : into) edges.push_back({from.node, to.node, to.label.empty() ? from.label : to.label});
  }
  edges.insert(edges.end(), drawn.edges.begin(), drawn.edges.end());

  TopologyGraph g;
  std::map<std::string, Vertex> by_name;
  for (const GraphNode& n : drawn.nodes)
    by_name[n.name] = boost::add_vertex(TopologyNode{n.name, n.stage, n.kind, n.capacity}, g);
  for (const GraphEdge& e : edges) {
    const auto a = by_name.find(e.from), b = by_name.find(e.to);
    if (a == by_name.end() || b == by_name.end())
      throw std::logic_error("topology: no stage '" + (a == by_name.end() ? e.from : e.to) + "'");
    boost::add_edge(a->second, b->second, TopologyEdge{e.label, e.resource}, g);
  }
  // Stations built but not on this workload's path (e.g. a flush under cache=none) stay as
  // isolated, labelled nodes; the checker ignores those that no workload of this scenario uses.
  return g;
}

void check_topology(const TopologyGraph& g) {
  // Every VM's fio ("fio", "vm1.fio", "db.fio"): a VM on a device of its own is reached from its
  // own fio only.
  std::vector<Vertex> fios;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const std::string& name = g[*v].name;
    if (name == "fio" || (name.size() > 4 && name.compare(name.size() - 4, 4, ".fio") == 0)) fios.push_back(*v);
  }
  if (fios.empty()) throw std::logic_error("topology: no fio stage");
  const boost::reverse_graph<TopologyGraph> rg(g);
  std::vector<bool> from_fio(boost::num_vertices(g), false), to_fio(boost::num_vertices(g), false);
  for (const Vertex fio : fios) {
    const auto from = reachable(g, fio, false), to = reachable(rg, fio, false);
    for (std::size_t i = 0; i < from.size(); ++i) {
      from_fio[i] = from_fio[i] || from[i];
      to_fio[i] = to_fio[i] || to[i];
    }
  }
  bool device_reached = false;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    const bool isolated = boost::in_degree(*v, g) == 0 && boost::out_degree(*v, g) == 0;
    if (n.kind == "cpu") {
      if (boost::in_degree(*v, g) == 0) throw std::logic_error("topology: resource '" + n.name + "' is used by no stage");
      continue;
    }
    if (isolated) continue;  // built for another workload of this scenario (e.g. flush under reads)
    if (!from_fio[*v]) throw std::logic_error("topology: stage '" + n.name + "' cannot be reached from fio");
    if (!to_fio[*v]) throw std::logic_error("topology: from stage '" + n.name + "' no path returns to fio");
    if (n.kind == "device") device_reached = true;
  }
  if (!device_reached) throw std::logic_error("topology: no path from fio reaches a device");
}

std::string topology_node_of(const std::string& full) {
  // A VM's numbered stations ("guest.fio_job0", a replica's "vm2.guest.fio_job0", a [[vm]]'s
  // "db.guest.tags1") are drawn in that VM's node for them.
  for (const std::string prefix : {"guest.fio_job", "guest.tags", "virtqueue.irq"}) {
    const auto at = full.rfind(prefix);
    if (at == std::string::npos || (at > 0 && full[at - 1] != '.')) continue;
    const std::size_t digits = at + prefix.size();
    if (digits < full.size() &&
        std::all_of(full.begin() + static_cast<std::ptrdiff_t>(digits), full.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return full.substr(0, at) + (prefix == "guest.fio_job" ? std::string("guest.fio_jobs") : prefix);
  }
  return full;
}

void add_station_load(TopologyLoads& loads, const std::string& station, bool has_utilization, double utilization,
                      double share_of_latency) {
  NodeLoad& n = loads[topology_node_of(station)];
  if (has_utilization && std::isfinite(utilization)) {
    n.utilization = n.has_utilization ? std::max(n.utilization, utilization) : utilization;
    n.has_utilization = true;
  }
  if (std::isfinite(share_of_latency)) n.share_of_latency += share_of_latency;
  ++n.stations;
}

namespace {
// White (0) -> orange (0.5) -> red (1 and beyond), as #rrggbb.
std::string utilization_color(double u) {
  u = std::clamp(std::isfinite(u) ? u : 0.0, 0.0, 1.0);
  const double white[3] = {255, 255, 255}, orange[3] = {255, 167, 38}, red[3] = {211, 47, 47};
  const double* a = u < 0.5 ? white : orange;
  const double* b = u < 0.5 ? orange : red;
  const double t = u < 0.5 ? u / 0.5 : (u - 0.5) / 0.5;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(a[0] + (b[0] - a[0]) * t)),
                static_cast<int>(std::lround(a[1] + (b[1] - a[1]) * t)), static_cast<int>(std::lround(a[2] + (b[2] - a[2]) * t)));
  return buf;
}

std::string percent(double x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, x < 0.095 && x > 0 ? "%.1f%%" : "%.0f%%", 100 * x);
  return buf;
}
}  // namespace

std::string topology_dot(const TopologyGraph& g, const std::string& title, const TopologyLoads* loads,
                         const std::string& bottleneck, const std::string& note) {
  std::ostringstream os;
  os << "digraph vqsim {\n  label=\"" << title;
  if (!note.empty()) os << "\\n" << note;
  os << "\";\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    const char* shape = n.kind == "pool" ? "octagon" : n.kind == "cpu" ? "component" : n.kind == "device" ? "cylinder" : "box";
    os << "  n" << *v << " [label=\"" << n.name;
    if (n.capacity > 0) os << "\\n" << (n.kind == "pool" ? "tokens " : n.kind == "cpu" ? "cores " : "servers ") << n.capacity;
    const NodeLoad* load = nullptr;
    if (loads) {
      const auto it = loads->find(n.name);
      if (it != loads->end()) load = &it->second;
    }
    if (load) {
      if (load->has_utilization)
        os << "\\n"
           << (n.kind == "pool" ? "held " : "busy ") << percent(load->utilization) << (load->stations > 1 ? " (max)" : "");
      if (load->share_of_latency > 0) os << "\\n" << percent(load->share_of_latency) << " of lat";
    }
    os << "\", shape=" << shape << ", tooltip=\"" << n.stage << "\"";
    const bool isolated = boost::in_degree(*v, g) == 0 && boost::out_degree(*v, g) == 0;
    if (load && load->has_utilization) {
      os << ", style=\"filled" << (isolated ? ",dashed" : "") << "\", fillcolor=\"" << utilization_color(load->utilization)
         << "\"";
      if (load->utilization > 0.8) os << ", fontcolor=white";
    } else if (isolated) {
      os << ", style=dashed";
    }
    if (loads && !bottleneck.empty() && n.name == bottleneck) os << ", penwidth=3";
    os << "];\n";
  }
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    os << "  n" << boost::source(*e, g) << " -> n" << boost::target(*e, g) << " [label=\"" << g[*e].label << "\"";
    if (g[*e].resource) os << ", style=dotted, arrowhead=none";
    os << "];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace vqsim::models
