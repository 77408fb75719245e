// Named figures of an I/O-path result, in the units people quote: the metric names of
// the measurement manifest, docs/calibration.md (`read.iops`, `read.bw_kib`, `read.lat_mean_us`,
// `read.clat_mean_us`, `read.clat_p50_us`, `read.clat_p99_us`, `read.clat_p99.9_us`, and the
// same for write), plus `<dir>.slat_mean_us`, any fio percentile of clat or of the total latency
// (`<dir>.clat_p<P>_us`, `<dir>.lat_p<P>_us`), and
// `total.iops` / `total.bw_kib` / `total.lat_mean_us` over both directions. Sweeps, plans
// and calibration all speak these names.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "sim/student_t.h"

namespace vqsim::models {

// The standard list, in output order.
const std::vector<std::string>& io_metric_names();

// True when `name` is a metric this module knows (including any clat percentile). The grammar:
//   <read|write|total>.<figure>            the VM's figures (every fio job together)
//   host.total.<iops|lat_mean_us>          the host's aggregate
//   <job>.<read|write|total>.<figure>      one job of a job file of several (its section name)
//   vm.<name>.<...>                        the same of one [[vm]] profile (not host.*)
// A name is read as a VM's figure first; a job's needs its job name before the direction, so a
// job named "read" is "read.read.iops". Job names beginning with vm or host are refused by the
// loader. Whether the scenario has the job is io_metric_scenario_error's to say.
bool is_io_metric(const std::string& name);

// What is wrong with a metric for this scenario ("" when nothing): a job metric naming a job the
// scenario (or that VM) does not run, with the jobs it does run.
std::string io_metric_scenario_error(const IoScenario& s, const std::string& name);

// " (did you mean 'read.clat_p99_us'?)" for what people type ("read.p99", "write.latency",
// "read.bw"), else the closest name within a small edit distance, else "".
std::string io_metric_suggestion(const std::string& name);

// The kind of figure a metric is, as calibration weighs and errs on it: "throughput" (iops,
// bw_kib), "mean latency" (lat/clat/slat means), "p50", "p99", "p99.9" (a percentile belongs to the
// nearest of these: below 90 p50, below 99.5 p99, else p99.9).
std::string figure_kind(const std::string& metric);

// The kinds figure_kind names (but "cpu", a thread's CPU time per I/O), in the order calibration
// reports them and keeps a model-error term for each (docs/calibration.md).
inline constexpr std::array<const char*, 5> kFigureKinds = {"throughput", "mean latency", "p50", "p99", "p99.9"};

// A metric of a simulated result, with its 95% interval. Throws std::invalid_argument on an
// unknown name (with a suggestion).
// `interpolated`: a percentile read within fio's bins (FioHistogram::interpolated_percentiles_ns)
// rather than fio's bin value; other metrics are the same either way.
sim::Interval io_metric(const IoRunReport& r, const std::string& name, bool interpolated = false);

// In a file of several [[vm]] profiles a metric without `vm.<name>.` (or `host.`) is the first
// profile's figure: the text of a warning that says so and names what to write instead; "" when
// the name is not ambiguous (one profile, or a prefixed name).
std::string first_profile_metric_warning(const IoScenario& s, const std::string& metric);

// The same metric from the MVA answer (means only; percentiles are not available and throw).
double io_metric_mva(const IoMvaResult& r, const IoScenario& s, const std::string& name);

// The same from the multi-class MVA (solve_io_mva_classes: several running [[vm]] profiles, or
// VMs of several fio jobs): vm.<name>.<metric> is that profile's one-VM figure (over its first
// stonewall group's jobs), vm.<name>.<job>.<metric> (<job>.<metric> in a single-VM file) one
// job's, host.total.iops and host.total.lat_mean_us the host's, a name without vm.<name>. the
// first running profile's. Throws std::invalid_argument for a percentile, a job or a profile
// that does not run.
double io_metric_mva_classes(const IoMvaClassesResult& r, const IoScenario& s, const std::string& name);

}  // namespace vqsim::models
