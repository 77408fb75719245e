// A queueing network described by a scenario file: stations visited in order (a tandem),
// fed by a closed population or an open Poisson source, optionally sharing CPU resources.
// It is the general-purpose model the engine can run before any I/O-path stage exists, and the
// form in which the engine's benchmark and validation networks can be written down.
//
//   [run]        seed, replications, warmup / warmup_completions, duration / completions
//   [population] customers                      (closed)   or   [source] interarrival (open)
//   [[cpu]]      name, cores
//   [[station]]  name, kind = fcfs | ps | delay, servers, service, cpu
//
// docs/scenario.md describes every key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/distribution.h"
#include "sim/mva.h"
#include "sim/simulator.h"

namespace vqsim::models {

struct NetworkStation {
  enum class Kind { Fcfs, ProcessorSharing, Delay };
  std::string name;
  Kind kind = Kind::Fcfs;
  int servers = 1;
  sim::Distribution service;
  std::string cpu;  // name of a [[cpu]] the station's servers run on; empty = own servers
};

struct NetworkCpu {
  std::string name;
  int cores = 1;
};

struct NetworkScenario {
  std::string path;
  std::uint64_t seed = 1;
  int replications = 10;
  sim::RunLimits limits;
  bool closed = true;
  int customers = 1;
  sim::Distribution interarrival;  // open networks
  std::vector<NetworkCpu> cpus;
  std::vector<NetworkStation> stations;
};

// Reads a scenario file, with "--set key=value" overrides applied first. Throws ConfigError
// naming file, line and key.
NetworkScenario load_network(const std::string& path, const std::vector<std::string>& overrides = {});

// Builds the network's components in `sim`. Component names are the station names, plus
// "population" (closed) or "source" and "sink" (open), and each cpu's name.
void build_network(const NetworkScenario& scenario, sim::Simulator& sim);

// The exact MVA solution when the network is closed and product-form (every station an
// exponential FCFS queue, a PS queue or a delay, none on a shared CPU); nullopt otherwise.
std::optional<sim::MvaResult> solve_network_mva(const NetworkScenario& scenario);

// The figure that names the whole network's response and throughput: "population" or "sink".
std::string network_flow_name(const NetworkScenario& scenario);

}  // namespace vqsim::models
