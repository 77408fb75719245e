// How `vqsim run` presents an I/O-path run: text for people, vqsim's JSON schema, and the
// normalized fio result that the fio JSON writer turns into fio 3.x JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibration/fio/result.h"
#include "calibration/predict/prediction.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"

namespace vqsim::cli {

using models::IoRunReport;
using models::simulate_io;

// `prediction` (a calibrated scenario's intervals with parameter uncertainty) may be null or empty
// (draws 0): then the output is that of an uncalibrated run.
std::string io_report_text(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva,
                           const predict::Prediction* prediction = nullptr);
nlohmann::ordered_json io_report_json(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva,
                                      const predict::Prediction* prediction = nullptr);
// The prediction block of the text report ("prediction (95%, ...):" and one line per metric) and
// the JSON "prediction" object ({draws, source, sampled, fixed_by_set, metrics: {name: {...}}}).
std::string prediction_text(const predict::Prediction& p);
nlohmann::ordered_json prediction_json(const predict::Prediction& p);
fio::FioResult to_fio_result(const models::IoScenario& s, const IoRunReport& r);
// The size guard of a DES run: refuses (UsageError, exit 2) a run whose simulated I/Os per
// replication (workload.ios, or workload.runtime x the MVA's IOPS), open-loop arrivals per
// replication, or I/Os over all replications exceed the limits below, with an estimate of the
// time it would take; `allow_long_runs` lifts them. Memory does not grow with run length (the
// statistics are fixed-size histograms and the open loop's backlog is a counter), so the limits
// are about time.
inline constexpr double kMaxIosPerReplication = 2e8;
inline constexpr double kMaxIosPerRun = 2e9;
void check_run_size(const models::IoScenario& s, bool allow_long_runs);

// The open-loop overload message shared by `run` and `solve`: "" when `served_iops` is at least
// 95% of `offered_iops` (or the loop is closed), else "open loop beyond capacity: offered X IOPS,
// served Y; ...". `how` says where `served` comes from.
std::string open_loop_warning(const models::IoScenario& s, double offered_iops, double served_iops, const char* how);
// The scenario's offered open-loop rate (rate_iops x numjobs; 0 in a closed loop) and the most
// the path serves (closed-loop MVA at the same iodepth and jobs).
double offered_iops(const models::IoScenario& s);
double capacity_iops(const models::IoScenario& s);

// IOThreads that get no request (more of them than the virtqueues the jobs reach), or "": the
// reach, and which keys to raise.
std::string idle_iothreads_warning(const models::IoScenario& s);

// snprintf of one or two numbers into a string (the reports' figures, "%.2f", "%+.1f%%").
std::string printf_string(const char* format, double a, double b = 0);

// One line: "virtio-blk, main loop, aio=threads, cache=none, nvme; randread 4k iodepth 32 x 1 job".
std::string setup_line(const models::IoScenario& s);
// One fio job's part of it: "randread 4k libaio iodepth 32 x 1 job".
std::string job_line(const models::WorkloadParams& w);

}  // namespace vqsim::cli
