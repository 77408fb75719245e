#include "sim/replications.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

namespace vqsim::sim {

std::vector<Metrics> run_replications(int replications, int threads, const ReplicationFn& fn) {
  if (replications < 1) throw std::invalid_argument("need at least one replication");
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, replications);
  std::vector<Metrics> results(static_cast<std::size_t>(replications));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(replications));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int r; (r = next.fetch_add(1)) < replications;) {
      try {
        results[static_cast<std::size_t>(r)] = fn(static_cast<std::uint64_t>(r));
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    }
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

std::vector<MetricSummary> summarize(const std::vector<Metrics>& runs, double level) {
  std::vector<MetricSummary> out;
  if (runs.empty()) return out;
  const auto& first = runs.front().values;
  std::vector<double> column(runs.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto& values = runs[r].values;
      if (values.size() != first.size() || values[i].first != first[i].first)
        throw std::logic_error("replication " + std::to_string(r) + " reports other figures than replication 0");
      column[r] = values[i].second;
    }
    out.push_back(MetricSummary{first[i].first, confidence_interval(column, level)});
  }
  return out;
}

const MetricSummary* find(const std::vector<MetricSummary>& summaries, const std::string& name) {
  for (const auto& s : summaries)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace vqsim::sim
