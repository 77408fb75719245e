// A run measured beside other guests (a manifest run's `co_running`) as calibration models it: a
// scenario of several VMs on one host (docs/scenario.md, "[[vm]] and [[backend]] tables") whose
// first VM is the measured one, so that its figures (read.iops, ... without vm.<name>.) are the
// ones compared with what the run measured. Every VM takes the base scenario with its own `set`
// on top; host.cores and the host page cache are the host's (shared); each guest has its own
// QEMU process; the disks of an entry with backend = "shared" are on the run's device, those of
// one with backend = "own" each on a device of its own. docs/calibration.md, "Runs beside other
// guests".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "models/scenario.h"

namespace vqsim::fit {

struct CoRunningModel {
  // The [[vm]] scenario with every VM's setup applied: VM "measured" first, then one profile per
  // co_running entry ("co1", "co2", ...; an entry with backend = "own" one profile per guest,
  // "co1-1", "co1-2", ..., each on its device).
  std::shared_ptr<const models::ScenarioSource> source;
  std::vector<std::string> vm_names;  // every profile's name: a fitted per-VM key is set on each
  std::vector<std::string> backends;  // every [[backend]]'s name: a fitted backend.<key> is set on each
  int vms = 1;                        // guests on the host, the measured one included
  // The co_running entries in one line (counts, sets, backend), the part of the run's setup that
  // its setup_signature does not show.
  std::string signature;
};

// Builds the model of a run with co_running. `overrides`: the measured run's own setup (key=value,
// as CalRun::overrides); `base` its scenario file, `base_scenario` that file loaded. Throws
// models::ConfigError with `where` (the run's manifest line) and the entry's line for what cannot
// be modelled: a shared key (host.cores, host.pagecache_us) or a shared device's key with two
// values, vm.* keys, and an entry whose backend is not said where it matters (not a null device).
CoRunningModel co_running_model(const std::string& base, const models::IoScenario& base_scenario,
                                const std::vector<std::string>& overrides, const std::vector<check::CoRunning>& entries,
                                const std::string& manifest, const std::string& where);

// Sets parameter `key` (a fittable key, in its unit) on the co-running scenario: a per-VM key on
// every VM, a backend key on every device, a shared key once: one set of stage parameters for
// every guest on the host.
void set_co_running_parameter(models::ScenarioSource& source, const CoRunningModel& m, const std::string& key, double value);

}  // namespace vqsim::fit
