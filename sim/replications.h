// Independent replications, run in parallel, summarised with Student-t intervals.
//
// Replication r is a whole run with its own random streams (seed, r, ·). Runs are handed out to
// worker threads, but each result is stored at its own index and summarised in index order, so
// the output is the same whatever the thread count. The function is called once per
// replication (never per event), so std::function is fine here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/metrics.h"
#include "sim/student_t.h"

namespace vqsim::sim {

struct MetricSummary {
  std::string name;
  Interval interval;  // over replications; half_width is 0 with one replication
};

using ReplicationFn = std::function<Metrics(std::uint64_t replication)>;

// Runs `replications` calls of `fn` (replication indices 0..n-1) on `threads` threads
// (0 = all hardware threads) and returns each replication's metrics, in index order.
// An exception in any replication is rethrown here, the lowest index first.
std::vector<Metrics> run_replications(int replications, int threads, const ReplicationFn& fn);

// Per-metric intervals at `level` across replications. Every replication must report the same
// names in the same order (std::logic_error otherwise).
std::vector<MetricSummary> summarize(const std::vector<Metrics>& runs, double level = 0.95);

// The interval of one metric, or nullptr when absent.
const MetricSummary* find(const std::vector<MetricSummary>& summaries, const std::string& name);

}  // namespace vqsim::sim
