// Shared scaffolding for the tests (test_calibrate.cc, test_coverage.cc, the mechanism tests): a
// scratch directory of the process, a simulated figure of a scenario, and manifests of
// "measurements" simulated at a known truth, so that a fit can be judged against the parameters
// and figures it should find.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"

namespace vqsim::test {

inline const std::string kSourceDir = VQSIM_SOURCE_DIR;

// The simulation's mean of `metric` for scenario `s`, on 2 threads (the mechanism tests compare
// it with the MVA's or with another scenario's).
inline double des(const models::IoScenario& s, const std::string& metric) {
  return models::io_metric(models::simulate_io(s, 2), metric).mean;
}

// A scratch directory of this process (CTest may run other test binaries at the same time),
// removed at exit.
inline std::filesystem::path scratch() {
  struct Dir {
    std::filesystem::path path;
    Dir() : path(std::filesystem::temp_directory_path() / ("vqsim-test-calibrate-" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string write(const std::string& name, const std::string& text) {
  const auto path = scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

// A run of a manifest: its name and its `set` (the knobs that make it this setup).
using Setups = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct Simulated {
  std::string source;                   // the manifest's [setup] source line
  std::vector<std::string> truth;       // "key=value" the figures are simulated at
  std::vector<std::string> simulation;  // I/Os, replications and seed of the simulation
  // The figures measured, per run: a fixed list, or (empty) IOPS and mean latency of every
  // direction the run does (read, write or both).
  std::vector<std::string> metrics;
  // A factor each measured figure is multiplied by (noise, or a spoiled run), by run index,
  // run name and metric; none: the simulated figure as it is.
  std::function<double(std::size_t, const std::string&, const std::string&)> factor;
};

// A manifest of inline `measured` runs, one per setup, with the figures each setup gives at the
// truth, on `base`. The simulation should use another seed than calibration's, so that the fit
// sees simulation noise as it would see measurement noise.
inline std::string simulated_manifest(const std::string& name, const std::string& base, const Setups& setups,
                                      const Simulated& how) {
  std::ostringstream m;
  m.precision(10);
  m << "[setup]\nsource = \"" << how.source << "\"\n";
  for (std::size_t i = 0; i < setups.size(); ++i) {
    const auto& [run, set] = setups[i];
    std::vector<std::string> ov = set;
    for (const auto& o : how.truth) ov.push_back(o);
    for (const auto& o : how.simulation) ov.push_back(o);
    const models::IoRunReport rep = models::simulate_io(models::load_io_scenario(base, ov), 2);
    std::vector<std::string> metrics = how.metrics;
    if (metrics.empty())
      for (const char* dir : {"read", "write"})
        if (models::io_metric(rep, std::string(dir) + ".iops").mean > 0)
          for (const char* figure : {".iops", ".lat_mean_us"}) metrics.push_back(dir + std::string(figure));
    m << "\n[[run]]\nname = \"" << run << "\"\nmeasured = { ";
    for (std::size_t k = 0; k < metrics.size(); ++k) {
      const double f = how.factor ? how.factor(i, run, metrics[k]) : 1.0;
      m << (k ? ", " : "") << '"' << metrics[k] << "\" = " << models::io_metric(rep, metrics[k]).mean * f;
    }
    m << " }\nset = { ";
    for (std::size_t k = 0; k < set.size(); ++k) {
      const auto eq = set[k].find('=');
      const std::string value = set[k].substr(eq + 1);
      const bool number = !value.empty() && value.find_first_not_of("0123456789.") == std::string::npos;
      m << (k ? ", " : "") << '"' << set[k].substr(0, eq) << "\" = " << (number ? value : '"' + value + '"');
    }
    m << " }\n";
  }
  return write(name, m.str());
}

}  // namespace vqsim::test
