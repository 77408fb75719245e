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

#include "models/aio_engine.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"
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

TopologyGraph build_topology(const IoScenario& s) {
  TopologyGraph g;
  std::map<std::string, Vertex> by_name;
  std::vector<StageInfo> stages = io_stages(s);
  auto add = [&](const std::string& name, const std::string& stage, const std::string& kind, int capacity) {
    const Vertex v = boost::add_vertex(TopologyNode{name, stage, kind, capacity}, g);
    by_name[name] = v;
    return v;
  };
  auto has = [&](const std::string& name) { return by_name.count(name) > 0; };
  auto edge = [&](const std::string& a, const std::string& b, const std::string& label, bool resource = false) {
    if (!has(a) || !has(b)) throw std::logic_error("topology: no stage '" + (has(a) ? b : a) + "'");
    boost::add_edge(by_name[a], by_name[b], TopologyEdge{label, resource}, g);
  };
  // Collapse the per-job and per-queue stations into one node each, with their count.
  int jobs = 0, queues = 0;
  std::vector<std::string> threads, devices;
  for (const StageInfo& st : stages) {
    if (st.name.rfind("guest.fio_job", 0) == 0)
      ++jobs;
    else if (st.name.rfind("guest.tags", 0) == 0)
      ++queues;
  }
  add("fio", "fio", "station", s.workload.numjobs * s.workload.effective_depth());
  add("guest.tags", "guest", "pool", queues);  // capacity: queues (tags per queue in the label)
  g[by_name["guest.tags"]].capacity = queues * block_layer(s).tags_per_queue;
  add("guest.fio_jobs", "guest", "station", jobs);
  if (!s.bare_metal()) add("virtqueue.irq", "virtqueue", "station", 0);  // one interrupt line per queue
  for (const StageInfo& st : stages) {
    if (st.stage == "fio" || st.name.rfind("guest.fio_job", 0) == 0 || st.name.rfind("guest.tags", 0) == 0 ||
        st.name.rfind("virtqueue.irq", 0) == 0)
      continue;
    std::string kind = "station";
    if (st.stage == "cpu")
      kind = "cpu";
    else if (st.name == "guest.lun_limit" || st.name == "aio.slots")
      kind = "pool";
    else if (st.stage == "backend" && st.name != "flush" && st.name != "host.pagecache" && st.name != "raid1.mirror" &&
             (st.name.rfind("ceph.", 0) != 0 || st.name == "ceph.osd") && st.name != "rbd.msgr" && st.name != "krbd.client")
      kind = "device";
    add(st.name, st.stage, kind, st.capacity);
    if (st.stage == "host") threads.push_back(st.name);
    if (kind == "device") devices.push_back(st.name);
  }
  // Submit path.
  edge("fio", "guest.tags", "issue");
  std::string last = "guest.tags";
  if (has("guest.lun_limit")) {
    edge(last, "guest.lun_limit", "tag granted");
    last = "guest.lun_limit";
  }
  edge(last, "guest.fio_jobs", "submit");
  for (const char* cpu : {"guest.vcpus", "host.cpu"})
    if (has(cpu)) edge("guest.fio_jobs", cpu, "runs on", true);
  // The stations the backend entry leads to, and back.
  std::vector<std::string> entry, exit;
  if (has("rbd.msgr") || has("krbd.client")) {
    const std::string msgr = has("rbd.msgr") ? "rbd.msgr" : "krbd.client";
    edge(msgr, "ceph.net_out", "send");
    edge("ceph.net_out", "ceph.osd", "op");
    edge("ceph.osd", "ceph.stall", "served");
    edge("ceph.stall", "ceph.net_back", "reply");
    entry = {msgr};
    exit = {"ceph.net_back"};
  } else if (has("raid1.mirror")) {
    edge("raid1.mirror", "raid1.leg0", "write (fork)");
    edge("raid1.mirror", "raid1.leg1", "write (fork)");
    edge("raid1.leg0", "raid1.mirror", "join");
    edge("raid1.leg1", "raid1.mirror", "join");
    entry = {"raid1.mirror", "raid1.leg0", "raid1.leg1"};
    exit = {"raid1.mirror", "raid1.leg0", "raid1.leg1"};
  } else {
    for (const char* d : {"device", "null", "pagecache"})
      if (has(d)) {
        entry.push_back(d);
        exit.push_back(d);
      }
  }
  const CacheSemantics cache = cache_semantics(s);
  if (has("host.pagecache") && !cache.direct) {
    entry.push_back("host.pagecache");
    exit.push_back("host.pagecache");
  }
  const std::string flush = has("ceph.flush") ? "ceph.flush" : (has("flush") ? "flush" : "");
  std::string back_to;  // where completions go after the device
  if (s.bare_metal()) {
    for (const auto& e : entry) edge("guest.fio_jobs", e, "submit");
    back_to = "guest.fio_jobs";
  } else {
    const std::string before_thread = has("virtqueue.wakeup") ? "virtqueue.wakeup" : "";
    for (const auto& t : threads) {
      edge("guest.fio_jobs", t, "kick (suppressed while awake)");
      if (!before_thread.empty()) {
        edge("guest.fio_jobs", before_thread, "kick, thread asleep");
        edge(before_thread, t, "woken");
      }
      if (s.host.cores > 0 && has("host.cpu") && s.guest.driver != GuestDriver::vhost_user_blk)
        edge(t, "host.cpu", "runs on", true);
    }
    std::vector<std::string> to_device = threads;
    if (has("aio.slots")) {
      for (const auto& t : threads) edge(t, "aio.slots", "submit");
      to_device = {"aio.slots"};
      if (has("aio.handoff")) {
        edge("aio.slots", "aio.handoff", "to worker");
        to_device = {"aio.handoff"};
      }
    }
    for (const auto& from : to_device)
      for (const auto& e : entry) edge(from, e, "I/O");
    std::string complete_via = has("aio.handoff") ? "aio.handoff" : (has("aio.slots") ? "aio.slots" : "");
    for (const auto& t : threads) {
      if (!complete_via.empty()) edge(complete_via, t, "completion");
      edge(t, "virtqueue.irq", "irqfd");
    }
    edge("virtqueue.irq", "guest.fio_jobs", "interrupt");
    back_to = complete_via.empty() ? threads.front() : complete_via;
    if (!complete_via.empty() && has("aio.handoff")) back_to = "aio.slots";
  }
  for (const auto& x : exit) {
    edge(x, back_to, "done");
    if (!flush.empty() && cache.flush_after_write) edge(x, flush, "write: flush");
  }
  if (!flush.empty() && cache.flush_after_write) edge(flush, back_to, "flushed");
  if (has("aio.slots") && has("aio.handoff")) edge("aio.slots", "aio.handoff", "release, back");
  edge("guest.fio_jobs", has("guest.lun_limit") ? "guest.lun_limit" : "guest.tags", "release");
  if (has("guest.lun_limit")) edge("guest.lun_limit", "guest.tags", "release");
  edge("guest.tags", "fio", "reaped");
  // Stations built but not on this workload's path (e.g. a flush under cache=none) stay as
  // isolated, labelled nodes; the checker ignores those that no workload of this scenario uses.
  return g;
}

void check_topology(const TopologyGraph& g) {
  Vertex fio = 0;
  bool found = false;
  for (auto [v, end] = boost::vertices(g); v != end; ++v)
    if (g[*v].name == "fio") {
      fio = *v;
      found = true;
    }
  if (!found) throw std::logic_error("topology: no fio stage");
  const auto from_fio = reachable(g, fio, false);
  const boost::reverse_graph<TopologyGraph> rg(g);
  const auto to_fio = reachable(rg, fio, false);
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

std::string topology_node_of(const std::string& station) {
  auto numbered = [&](const std::string& prefix) {
    return station.size() > prefix.size() && station.rfind(prefix, 0) == 0 &&
           std::all_of(station.begin() + static_cast<std::ptrdiff_t>(prefix.size()), station.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (numbered("guest.fio_job")) return "guest.fio_jobs";
  if (numbered("guest.tags")) return "guest.tags";
  if (numbered("virtqueue.irq")) return "virtqueue.irq";
  return station;
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
