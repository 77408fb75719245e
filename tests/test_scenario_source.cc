// ScenarioSource: typed edits in memory give exactly what a file that states the same value
// gives. For every declared key, a valid non-default value is found, written into a scenario
// file, and that file's run is compared -- every figure and the event-stream hash -- with the
// run of the parsed base edited by set("key=value") and, for numbers, by set(key, number).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = VQSIM_SOURCE_DIR "/";

// The values tried for a key, in order: its other choices, the other boolean, numbers from
// small to large (the first the loader accepts is used), and texts for the text keys.
std::vector<std::string> candidates(const models::ParamDoc& p) {
  std::vector<std::string> out;
  const auto open = p.doc.rfind(" (");
  if (open != std::string::npos && p.doc.back() == ')' && p.doc.find('|', open) != std::string::npos) {
    std::string list = p.doc.substr(open + 2, p.doc.size() - open - 3);
    for (std::size_t start = 0;;) {
      const auto bar = list.find('|', start);
      const std::string word = list.substr(start, bar - start);
      if (word != p.default_text) out.push_back("\"" + word + "\"");
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  }
  for (const char* b : {"false", "true"})
    if (p.default_text != b) out.emplace_back(b);
  for (const char* n : {"3", "2", "0.5", "5", "10", "100", "1000", "4096", "8192", "1000000", "1000000000"})
    if (p.default_text != n) out.emplace_back(n);
  if (p.key == "workload.fio_job") out.push_back("\"" + kRoot + "tests/data/jobfiles/seed000_readtest.fio\"");
  for (const char* t : {"\"7.2.0\"", "\"2.4.0\"", "\"a recorded note\""}) out.emplace_back(t);
  return out;
}

// A scenario file on the default scenario (made short) that states `key = value`.
std::string scenario_file(const fs::path& dir, const std::string& key, const std::string& value) {
  const fs::path f = dir / "edited.toml";
  std::ofstream(f) << "base = \"" << kRoot << "tests/data/scenario_source_base.toml\"\n" << key << " = " << value << "\n";
  return f.string();
}

// Every figure of a run, and its event hash, as text: equal texts are byte-identical runs.
std::string fingerprint(const models::IoScenario& s) {
  const models::IoRunReport r = models::simulate_io(s, 1);
  std::string out = std::to_string(r.event_hash) + "\n";
  char buf[64];
  for (const auto& m : r.summary) {
    std::snprintf(buf, sizeof buf, "%.17g", m.interval.mean);
    out += m.name + " " + buf + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("scenario.set(k, v) runs byte-identically to a file that sets k = v, for every declared key") {
  const fs::path dir = fs::temp_directory_path() / ("vqsim-scenario-source-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string base = kRoot + "tests/data/scenario_source_base.toml";
  const models::ScenarioSource parsed(base);
  std::vector<std::string> untested;
  int compared = 0;
  for (const models::ParamDoc& p : models::io_scenario_parameters()) {
    CAPTURE(p.key);
    std::optional<models::IoScenario> from_file;
    std::string value;
    for (const std::string& v : candidates(p)) {
      try {
        from_file = models::load_io_scenario(scenario_file(dir, p.key, v));
        value = v;
        break;
      } catch (const models::ConfigError&) {
      }
    }
    if (!from_file) {
      untested.push_back(p.key);
      continue;
    }
    CAPTURE(value);
    const std::string expected = fingerprint(*from_file);
    // The --set form: a quoted text goes in as the rest of the line, as on the command line.
    const std::string bare = value.front() == '"' ? value.substr(1, value.size() - 2) : value;
    models::ScenarioSource edited = parsed;
    edited.set(p.key + "=" + bare);
    CHECK(fingerprint(edited.scenario()) == expected);
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && *end == '\0') {
      models::ScenarioSource typed = parsed;
      typed.set(p.key, number);
      CHECK(fingerprint(typed.scenario()) == expected);
    }
    ++compared;
  }
  fs::remove_all(dir);
  INFO("keys with no value the loader accepts on the default scenario: " << untested.size());
  for (const auto& k : untested) MESSAGE("untested: " << k);
  CHECK(untested.empty());
  CHECK(compared > 90);
}

TEST_CASE("scenario.set checks the key's declaration at once") {
  models::ScenarioSource s(kRoot + "scenarios/default.toml");
  CHECK_THROWS_WITH_AS(s.set("host.iothread", 2.0), doctest::Contains("did you mean 'host.iothreads'"), models::ConfigError);
  CHECK_THROWS_WITH_AS(s.set("host.aio", 2.0), doctest::Contains("expected a text value"), models::ConfigError);
  CHECK_THROWS_AS(s.set("no-equals-sign"), models::ConfigError);
  // Copies share the parsed file but not their edits.
  models::ScenarioSource a = s, b = s;
  a.set("workload.iodepth", 8);
  b.set("workload.iodepth=16");
  CHECK(a.scenario().workload.iodepth == 8);
  CHECK(b.scenario().workload.iodepth == 16);
  CHECK(s.scenario().workload.iodepth == models::load_io_scenario(kRoot + "scenarios/default.toml").workload.iodepth);
}
