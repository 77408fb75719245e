#include "models/io_results.h"

#include <algorithm>

#include <cmath>

namespace vqsim::models {

sim::Interval IoRunReport::get(const std::string& name) const {
  const sim::MetricSummary* m = sim::find(summary, name);
  return m ? m->interval : sim::Interval{};
}

bool IoRunReport::has(const std::string& name) const { return sim::find(summary, name) != nullptr; }

namespace {

IoRunReport simulate_phase(const IoScenario& s, int threads) {
  const auto n = static_cast<std::size_t>(s.run.replications);
  std::vector<double> worst(n, 0.0), excess_worst(n, 0.0);
  std::vector<std::string> where(n);
  std::vector<sim::RunResult> results(n);
  const auto runs = sim::run_replications(s.run.replications, threads, [&](std::uint64_t r) {
    sim::Metrics m = run_io_replication(s, r, &results[r]);
    // Little's law on every station: the simulator reports each flow's own relative error and
    // what edge effects can explain; the check is on the part beyond that.
    for (const auto& [name, value] : m.values) {
      const std::string suffix = ".little_rel_error";
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string station = name.substr(0, name.size() - suffix.size());
      excess_worst[r] = std::max(excess_worst[r], value - m.get(station + ".little_edge_allowance"));
      if (value > worst[r]) {
        worst[r] = value;
        where[r] = station;
      }
    }
    return m;
  });
  IoRunReport rep;
  rep.summary = sim::summarize(runs);
  rep.replications = runs;
  for (std::size_t r = 0; r < n; ++r) {
    rep.events_per_replication += static_cast<double>(results[r].events) / static_cast<double>(n);
    rep.event_hash = sim::combine_event_hashes(rep.event_hash, results[r].event_hash);
    rep.little_excess = std::max(rep.little_excess, excess_worst[r]);
    if (worst[r] > rep.little_worst) {
      rep.little_worst = worst[r];
      rep.little_where = where[r];
      rep.little_replication = r;
    }
  }
  rep.little_ok = rep.little_excess <= 0.01;

  // A station's share of the mean latency, over every VM's I/Os (the shared device serves all).
  double iops = 0, lat = 0;
  for (const VmInstance& inst : vm_instances(s)) {
    const std::string& vm = inst.prefix;
    iops += rep.get(vm + "read.iops").mean + rep.get(vm + "write.iops").mean;
    lat += rep.get(vm + "read.iops").mean * rep.get(vm + "read.lat.mean_ns").mean +
           rep.get(vm + "write.iops").mean * rep.get(vm + "write.lat.mean_ns").mean;
  }
  lat = iops > 0 ? lat / iops : 0.0;
  for (const StageInfo& info : io_stages(s)) {
    if (info.stage == "fio") continue;
    StageRow row;
    row.name = info.name;
    row.stage = info.stage;
    row.capacity = info.capacity;
    row.has_utilization = rep.has(info.name + ".utilization");
    row.has_wait = rep.has(info.name + ".wait_mean_ns");
    row.utilization = rep.get(info.name + ".utilization");
    row.queue_mean = rep.get(info.name + ".queue_mean");
    row.wait_mean_ns = rep.get(info.name + ".wait_mean_ns");
    row.response_mean_ns = rep.get(info.name + ".response_mean_ns");
    row.throughput_per_s = rep.get(info.name + ".throughput_per_s");
    // A token pool's stay spans the stations inside it: only its wait for a token is its own.
    // A shared CPU's time is already inside the threads that run on it.
    const bool pool = info.name.find("tags") != std::string::npos || info.name.find("limit") != std::string::npos ||
                      info.name.find("slots") != std::string::npos;
    double per_io = 0;
    if (info.stage != "cpu" && iops > 0) {
      const double time = pool ? row.wait_mean_ns.mean : row.response_mean_ns.mean;
      per_io = row.throughput_per_s.mean / iops * time;
    }
    row.share_of_latency = lat > 0 ? per_io / lat : 0.0;
    if (row.throughput_per_s.mean <= 0) {  // a stage this workload never visits
      rep.unvisited.push_back(row.name);
      continue;
    }
    if (row.has_utilization && !pool && row.utilization.mean > rep.bottleneck_utilization) {
      rep.bottleneck_utilization = row.utilization.mean;
      rep.bottleneck = row.name;
    }
    rep.stages.push_back(row);
  }
  return rep;
}

}  // namespace

IoRunReport simulate_io(const IoScenario& s, int threads) {
  const int phases = scenario_phases(s);
  if (phases <= 1) return simulate_phase(s, threads);
  // Stonewall groups: fio starts a group once the previous one has finished, on a path its
  // I/Os have left (nothing the model keeps carries over: no device state, the page cache is a
  // hit ratio), so each group is simulated as its own run, one after the other, with the same
  // seed. The report is the first group's (its stage table, its VMs' figures), with every other
  // group's jobs' figures added; `phases` keeps each group's own report.
  IoRunReport rep;
  for (int k = 0; k < phases; ++k) {
    const IoScenario ps = phase_scenario(s, k);
    IoRunReport part = simulate_phase(ps, threads);
    if (k == 0) {
      rep = part;
    } else {
      // The job figures of this group: names under "<vm prefix>fio:<job>." of its jobs.
      std::vector<std::string> prefixes;
      for (const VmInstance& inst : vm_instances(ps))
        for (const FioJob& j : profile_scenario(ps, inst).jobs) prefixes.push_back(inst.prefix + job_metric_prefix(j.name));
      const auto mine = [&](const std::string& name) {
        return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return name.rfind(p, 0) == 0; });
      };
      for (std::size_t r = 0; r < rep.replications.size() && r < part.replications.size(); ++r)
        for (const auto& [name, value] : part.replications[r].values)
          if (mine(name)) rep.replications[r].add(name, value);
      rep.events_per_replication += part.events_per_replication;
      rep.event_hash = sim::combine_event_hashes(rep.event_hash, part.event_hash);
      if (part.little_excess > rep.little_excess) rep.little_excess = part.little_excess;
      if (part.little_worst > rep.little_worst) {
        rep.little_worst = part.little_worst;
        rep.little_where = part.little_where;
        rep.little_replication = part.little_replication;
      }
      rep.little_ok = rep.little_ok && part.little_ok;
    }
    part.phases.clear();
    rep.phases.push_back(std::move(part));
  }
  rep.phases.front().phases.clear();
  rep.summary = sim::summarize(rep.replications);
  return rep;
}

}  // namespace vqsim::models
