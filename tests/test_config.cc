// Units at the edge and scenario errors that say where: file, line, key, and what was expected.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/network.h"

using namespace vqsim::models;

namespace {
// Writes `text` to a scenario file in the temporary directory and returns its path.
std::string scenario_file(const std::string& name, const std::string& text) {
  std::string path = "/tmp/vqsim-test-";
  path += name;
  path += ".toml";
  std::ofstream(path) << text;
  return path;
}

std::string load_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    load_network(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const char* kGood = R"(
[run]
completions = 1000
[population]
customers = 4
[[station]]
name = "a"
service = { dist = "exponential", mean = "10us" }
[[station]]
name = "b"
kind = "delay"
service = "5us"
)";
}  // namespace

TEST_CASE("units: durations become integer ns, sizes bytes, frequencies Hz") {
  CHECK(parse_duration_ns("250ns") == 250);
  CHECK(parse_duration_ns("12us") == 12'000);
  CHECK(parse_duration_ns("12µs") == 12'000);
  CHECK(parse_duration_ns("1.5ms") == 1'500'000);
  CHECK(parse_duration_ns("10s") == 10'000'000'000);
  CHECK(parse_duration_ns("2min") == 120'000'000'000);
  CHECK(parse_size_bytes("4k") == 4096);
  CHECK(parse_size_bytes("4KiB") == 4096);
  CHECK(parse_size_bytes("1MB") == 1'000'000);
  CHECK(parse_size_bytes("512") == 512);
  CHECK(parse_frequency_hz("3.2GHz") == doctest::Approx(3.2e9));
  CHECK_THROWS_AS(parse_duration_ns("12"), std::invalid_argument);  // a duration needs a unit
  CHECK_THROWS_AS(parse_duration_ns("12 parsecs"), std::invalid_argument);
  CHECK_THROWS_AS(parse_duration_ns("-3us"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size_bytes("1.5B"), std::invalid_argument);
}

TEST_CASE("did you mean: the nearest known word within a small edit distance") {
  CHECK(did_you_mean("sevrers", {"servers", "service", "name"}) == " (did you mean 'servers'?)");
  CHECK(did_you_mean("zzzzzz", {"servers", "service"}).empty());
}

TEST_CASE("did you mean: a dotted key written without its section matches on the last part (issue 17, item 9)") {
  const std::vector<std::string> keys = {"workload.iodepth", "host.iothreads", "host.aio", "guest.cpu_cv", "host.cpu_cv"};
  CHECK(did_you_mean("iothreads", keys) == " (did you mean 'host.iothreads'?)");
  CHECK(did_you_mean("iothread", keys) == " (did you mean 'host.iothreads'?)");
  CHECK(did_you_mean("guest.iothreads", keys) == " (did you mean 'host.iothreads'?)");
  CHECK(did_you_mean("cpu_cv", keys) == " (did you mean 'guest.cpu_cv' or 'host.cpu_cv'?)");
  CHECK(did_you_mean("zzzzzzzz", keys).empty());
}

TEST_CASE("a ConfigError can carry several errors, one per line") {
  const ConfigError one("a.toml:2: x: bad");
  CHECK(one.messages() == std::vector<std::string>{"a.toml:2: x: bad"});
  const ConfigError three(std::vector<std::string>{"a.toml:2: x: bad", "a.toml:5: y: bad", "(from --set): z: bad"});
  CHECK(std::string(three.what()) == "a.toml:2: x: bad\na.toml:5: y: bad\n(from --set): z: bad");
  CHECK(three.messages().size() == 3);
  CHECK(three.messages()[2] == "(from --set): z: bad");
}

TEST_CASE("network scenario: a valid file loads with its units converted") {
  const NetworkScenario sc = load_network(scenario_file("good", kGood));
  CHECK(sc.closed);
  CHECK(sc.customers == 4);
  REQUIRE(sc.stations.size() == 2);
  CHECK(sc.stations[0].service.mean() == doctest::Approx(10'000));
  CHECK(sc.stations[1].kind == NetworkStation::Kind::Delay);
  CHECK(sc.stations[1].service.mean() == doctest::Approx(5'000));
  CHECK(sc.limits.measure_completions == 1000);
}

TEST_CASE("network scenario: an unknown key names file, line and a suggestion") {
  std::string text = kGood;
  text += "[[station]]\nname = \"c\"\nsevrers = 2\nservice = \"1us\"\n";
  const std::string path = scenario_file("unknown-key", text);
  const std::string err = load_error(path);
  CHECK(err.find(path + ":15:") != std::string::npos);
  CHECK(err.find("station[2].sevrers") != std::string::npos);
  CHECK(err.find("did you mean 'servers'") != std::string::npos);
}

TEST_CASE("network scenario: a duration without a unit is rejected with an example") {
  std::string text = kGood;
  text.replace(text.find("\"10us\""), 6, "10");
  const std::string err = load_error(scenario_file("no-unit", text));
  CHECK(err.find(":8:") != std::string::npos);
  CHECK(err.find("station[0].service.mean") != std::string::npos);
  CHECK(err.find("\"12us\"") != std::string::npos);
}

TEST_CASE("network scenario: invalid TOML reports line and column") {
  const std::string err = load_error(scenario_file("bad-toml", "[run\ncompletions = 1\n"));
  CHECK(err.find("bad-toml.toml:1:") != std::string::npos);
  CHECK(err.find("not valid TOML") != std::string::npos);
}

TEST_CASE("network scenario: a missing file and a missing stop rule are clear errors") {
  CHECK(load_error("/nonexistent/scenario.toml").find("cannot read") != std::string::npos);
  std::string text = kGood;
  text.replace(text.find("completions = 1000"), 18, "seed = 3");
  CHECK(load_error(scenario_file("no-stop", text)).find("'duration'") != std::string::npos);
}

TEST_CASE("--set overrides values, indexes station lists, and unknown keys still fail") {
  const std::string path = scenario_file("set", kGood);
  const NetworkScenario sc =
      load_network(path, {"population.customers=9", "station.0.servers=3", "station.1.service=\"2us\"", "run.seed=77"});
  CHECK(sc.customers == 9);
  CHECK(sc.stations[0].servers == 3);
  CHECK(sc.stations[1].service.mean() == doctest::Approx(2'000));
  CHECK(sc.seed == 77);
  // A bare word is read as a string.
  CHECK(load_network(path, {"station.1.service=3us"}).stations[1].service.mean() == doctest::Approx(3'000));
  const std::string err = load_error(path, {"population.custmers=3"});
  CHECK(err.find("(from --set)") != std::string::npos);
  CHECK(err.find("did you mean 'customers'") != std::string::npos);
  CHECK(load_error(path, {"station.5.servers=1"}).find("index") != std::string::npos);
  CHECK(load_error(path, {"nonsense"}).find("key=value") != std::string::npos);
}
