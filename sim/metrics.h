// A flat, ordered list of named numbers: what one replication reports. Components append their
// figures in a fixed order, so lists from different replications line up name by name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vqsim::sim {

struct Metrics {
  std::vector<std::pair<std::string, double>> values;

  void add(std::string name, double value) { values.emplace_back(std::move(name), value); }
  // The value of `name`, or `fallback` when absent.
  double get(const std::string& name, double fallback = 0.0) const {
    for (const auto& [n, v] : values)
      if (n == name) return v;
    return fallback;
  }
  bool has(const std::string& name) const {
    for (const auto& nv : values)
      if (nv.first == name) return true;
    return false;
  }
};

}  // namespace vqsim::sim
