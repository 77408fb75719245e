// The multi-class MVA of a host of several VM profiles (models::solve_io_mva_classes) as
// `vqsim solve` prints it, and beside the simulation for `vqsim run --compare-mva`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

namespace vqsim::cli {

// Several running [[vm]] profiles: the scenarios solve_io_mva_classes answers and solve_io_mva
// refuses.
bool several_profiles(const models::IoScenario& s);

// Several running profiles, or a running VM whose job file has several jobs: the scenarios the
// commands answer with solve_io_mva_classes (one class per profile and job), never with one
// job's or one profile's single-class MVA.
bool mva_by_classes(const models::IoScenario& s);

// A figure for JSON: null where the MVA has none (an unbounded queue's residence).
nlohmann::ordered_json finite_or_null(double v);

// The MVA solves one disk per VM (each fio job of a VM is a class of its own, but the stations
// are one disk's path). Throws UsageError naming `what` (solve, run --compare-mva, sweep --mva)
// when any running VM has several disks ([[vm.disk]] tables).
void refuse_several_disks_for_mva(const models::IoScenario& s, const std::string& what);

// `vqsim solve` on such a file: per profile IOPS and mean latencies (one VM's, and the
// profile's VMs together), per fio job the same and its own utilization of every station it
// visits, the per-profile utilization of every shared station, the host's aggregate.
std::string mva_classes_text(const models::IoScenario& s, const models::IoMvaClassesResult& r, double solve_ms);
nlohmann::ordered_json mva_classes_json(const models::IoMvaClassesResult& r);

// `vqsim run --compare-mva`: each profile's and each fio job's MVA figures against the
// simulation's (one VM's IOPS and mean lat), the shared stations' utilization, and where they
// differ by over 10%.
std::string mva_classes_compare_text(const models::IoScenario& s, const models::IoRunReport& des,
                                     const models::IoMvaClassesResult& mva);
nlohmann::ordered_json mva_classes_compare_json(const models::IoScenario& s, const models::IoRunReport& des,
                                                const models::IoMvaClassesResult& mva);

}  // namespace vqsim::cli
