// The I/O path assembled: fio jobs -> guest block layer -> guest driver -> the jobs' threads ->
// virtqueue -> host emulation thread (or vhost worker) -> AIO engine and cache mode -> backend,
// and back. Each stage is a component in the file named after it (stage.h says what a stage
// declares); this file only builds them from a scenario and connects their ports. The links it
// makes are kept, so the stage graph (topology.h) is drawn from them.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "models/io_request.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/metrics.h"
#include "sim/ps_station.h"
#include "sim/replications.h"
#include "sim/simulator.h"

namespace vqsim::models {

class IoPath {
 public:
  // Builds every stage of `scenario` in `sim`. The path must outlive the run (its stages use
  // its request table).
  IoPath(sim::Simulator& sim, const IoScenario& scenario);
  IoPath(const IoPath&) = delete;
  IoPath& operator=(const IoPath&) = delete;

  // Every station, stage by stage along the path (the shared CPUs after fio).
  std::vector<StageInfo> stations() const;
  // The stages in path order and their connections.
  const std::vector<const Stage*>& stages() const { return stages_; }
  const std::vector<Link>& links() const { return links_; }
  // Every shared-CPU station, with the stage it is listed after (the VM's fio).
  const std::vector<std::pair<const Stage*, const sim::ProcessorSharingStation*>>& cpus() const { return cpus_after_; }

 private:
  template <typename S, typename... Args>
  S& add(sim::Simulator& sim, Args&&... args);
  void link(Stage& from, sim::Port& port, Stage& to, int in_port);

  IoTable io_;
  // A VM of several fio jobs as the stages after fio see it: workload.numjobs is every job's
  // threads together (the guest's fio threads), the rest the first job's. Kept: stages hold it.
  std::deque<IoScenario> views_;
  std::vector<const Stage*> stages_;
  std::vector<Link> links_;
  std::vector<std::pair<const Stage*, const sim::ProcessorSharingStation*>> cpus_after_;  // listed after that stage
};

// One replication of a scenario: builds, runs and reports (a scenario of several stonewall
// groups: its first group; simulate_io runs every group). Metrics hold the workload's figures
// ("read.iops", "read.clat.mean_ns", "read.clat.p99.000000_ns", …), every station's figures
// ("<station>.utilization", …) and "little.worst_rel_error".
sim::Metrics run_io_replication(const IoScenario& s, std::uint64_t replication, sim::RunResult* run = nullptr);

// How long a replication runs: the ramp, then the measured time or I/Os (workload.ios per VM,
// and per job of a multi-job file). With [[vm]] tables, the longest ramp and runtime of any VM,
// or every VM's ios together.
sim::RunLimits io_run_limits(const IoScenario& s);

// The stations of a scenario without running it (for reports and the graph).
std::vector<StageInfo> io_stages(const IoScenario& s);

// The scenario keys of the run, and the CPUs the path's threads share.
void io_path_keys(std::vector<Param>& keys);

}  // namespace vqsim::models
