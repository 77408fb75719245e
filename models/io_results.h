// Runs an I/O-path scenario's replications and condenses them: per-direction figures with 95%
// intervals, and per stage the utilization, mean queue, mean wait and share of the mean
// latency, the bottleneck, and Little's law checked on every station of every replication.
#pragma once

#include <string>
#include <vector>

#include "models/io_path.h"
#include "sim/replications.h"

namespace vqsim::models {

struct StageRow {
  std::string name, stage;
  int capacity = 0;                // servers or tokens, 0 = unlimited
  sim::Interval utilization;       // busy servers / capacity (n/a for delays: number_mean)
  sim::Interval queue_mean;        // jobs waiting (FCFS, pools)
  sim::Interval wait_mean_ns;      // before service (FCFS) or for a token (pools)
  sim::Interval response_mean_ns;  // time per visit
  sim::Interval throughput_per_s;  // visits per second
  double share_of_latency = 0;     // of fio's mean lat, from visits x time per visit
  bool has_utilization = false, has_wait = false;
};

struct IoRunReport {
  std::vector<sim::MetricSummary> summary;  // every figure, across replications
  std::vector<sim::Metrics> replications;   // every figure of each replication (for paired comparisons)
  std::vector<StageRow> stages;
  std::vector<std::string> unvisited;  // stages built but never reached by this workload (not in `stages`)
  std::string bottleneck;
  double bottleneck_utilization = 0;
  double little_worst = 0;
  double little_excess = 0;  // the largest error beyond what edge effects explain (little_edge_allowance); ok <= 1%
  std::string little_where;
  std::uint64_t little_replication = 0;
  bool little_ok = true;
  double events_per_replication = 0;
  std::uint64_t event_hash = 0;  // the replications' event-stream hashes, combined in order
  // A job file of several stonewall groups: each group's own report, in order (the fields above
  // are the first group's, with every group's job figures added to `summary`); empty otherwise.
  std::vector<IoRunReport> phases;
  // The interval of a figure (zero interval when absent).
  sim::Interval get(const std::string& name) const;
  bool has(const std::string& name) const;
};

// Runs every stonewall group of the scenario's job files (scenario_phases) one after the other.
IoRunReport simulate_io(const IoScenario& s, int threads);

}  // namespace vqsim::models
