// Sweep specifications: a base scenario, axes over any scenario keys (lists, numeric ranges with
// a step or powers of two, or `zip` groups of keys that move together), combined as a cartesian
// product in the order written (the last axis moves fastest), minus `exclude` rules; the metrics
// to record; replications, run length and the seed (one seed for every point: common random
// numbers, so differences between points are not noise). docs/sweep.md describes the format.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/scenario.h"

namespace vqsim::models {

struct SweepAxis {
  std::vector<std::string> keys;                 // one key, or a zip group
  std::vector<std::vector<std::string>> values;  // per step: one value per key, as TOML text
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::pair<std::string, std::string>> settings;  // key, value (TOML text)
  std::vector<std::string> overrides() const;                 // "key=value" for load_io_scenario
};

struct SweepSpec {
  std::string path;
  std::string scenario;  // resolved path of the base scenario
  std::string description;
  std::vector<std::string> set;  // fixed overrides for every point
  std::vector<SweepAxis> axes;
  std::vector<std::vector<std::pair<std::string, std::string>>> excludes;  // all must match
  std::vector<std::string> metrics;
  int replications = 3;
  std::uint64_t ios = 0;  // 0 = the scenario's
  std::uint64_t seed = 1;
  std::vector<SweepPoint> points;  // after exclusions, indices 0..n-1
  std::string fingerprint;         // of everything that decides the results (for --resume)
  // The base scenario parsed once; every point edits a copy in memory (ScenarioSource).
  std::shared_ptr<const ScenarioSource> source;
};

// Reads and validates a spec (every axis key and metric checked; every point's scenario loads).
// Throws ConfigError with file:line.
SweepSpec load_sweep(const std::string& path, const std::vector<std::string>& extra_set = {});

}  // namespace vqsim::models
