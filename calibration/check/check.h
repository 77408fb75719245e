// Plausibility checks of fio results (`vqsim check`): internal consistency of one result, the
// setup it describes, the physics of the named device class, the (calibrated) model's envelope,
// and the spread of repeated runs. Each finding says how bad it is, which rule, the evidence
// with its numbers, and the likely cause in plain words.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fio/result.h"

namespace vqsim::check {

enum class Severity { info, warning, error };  // error = implausible (exit 3)
const char* severity_name(Severity s);

struct Finding {
  Severity severity = Severity::info;
  std::string rule;                 // stable id, e.g. "little", "bw-vs-iops", "unit-slip", "physics-iops"
  std::string subject;              // where: "run.json: job 'randrw' read" or "004.toml: run 'bare-metal randread'"
  std::string evidence;             // the numbers: "IOPS x mean lat = 1.9 outstanding, but numjobs x iodepth = 32"
  std::string cause;                // the likely cause, in plain words
  std::optional<double> corrected;  // for unit slips: the value that was probably meant
};

// One direction of one measured job, as the rules see it: from a fio output (then `job` points
// into `result` for full detail) or from a manifest's inline numbers. Units are the manifest's.
// One entry of a manifest run's `co_running`: `count` guests of the setup `set` (scenario keys)
// ran on the same host beside the run (calibration/lab/record writes them; calibration models
// them as a scenario of several VMs: docs/calibration.md). `backend`: "shared" (their disks on
// the run's device), "own" (each guest a device of its own) or "" (not said).
struct CoRunning {
  std::int64_t count = 1;
  std::map<std::string, std::string> set;
  std::string backend;
  int line = 0;  // the manifest line of the entry
};

struct Measured {
  std::string source;  // file name, or "manifest.toml: run 'name'"
  std::string job;     // fio job name ("" for inline numbers)
  std::string dir;     // "read", "write" or "mixed"
  const fio::FioResult* result = nullptr;
  const fio::JobResult* job_result = nullptr;
  std::optional<double> iops, bw_kib, lat_mean_us, clat_mean_us, clat_p50_us, clat_p99_us, clat_p999_us;
  std::optional<double> runtime_s, total_ios;
  // What is known of the setup, as scenario keys and values (from fio's printed options and the
  // job header, or from the manifest's `set`): workload.rw, workload.bs (bytes, as a number),
  // workload.iodepth, workload.numjobs, workload.ioengine, workload.rwmixread, workload.direct,
  // backend.kind, guest.driver, ...
  std::map<std::string, std::string> setup;
  // For manifests: the run's name, its `set` exactly as written (setup = fio's options + set),
  // whether it had a `set` table at all, its weight (default 1) and the manifest line of [[run]];
  // base_workload: the run says the base scenario's workload is the one it ran (for a fio
  // output that does not state it, such as terse).
  std::string run_name;
  std::map<std::string, std::string> manifest_set;
  bool has_set = false;
  bool base_workload = false;
  double weight = 1;
  int manifest_line = 0;
  std::vector<CoRunning> co_running;  // empty: the run had the host to itself (as far as the manifest says)
  // A manifest run's measured CPU time per I/O of each kind of thread (its inline
  // cpu.<kind>_us_per_io numbers, models/core_share.h): the run's, held by its first direction.
  std::map<std::string, double> cpu_us_per_io;
  // Its counts per I/O (count.interrupts_per_io, count.<kind>_wakes_per_io, models/core_share.h),
  // held the same way.
  std::map<std::string, double> counts_per_io;
  // A manifest run's inline `<dir>.<metric>_stddev`, per metric ("iops", "bw_kib", ...): the
  // figure is a mean over repeated runs, and this their standard deviation.
  std::map<std::string, double> replicate_stddev;
};

// Every direction with I/O of every job (the final document of a status-interval file).
std::vector<Measured> measured_from_result(const fio::FioResult& r, const std::string& source);

// A measurement manifest ([[run]] with `file` or inline `measured`, `set`, `name`; the format is
// in docs/calibration.md, "The measurement manifest");
// `file` entries are parsed (relative to the manifest). Throws models::ConfigError with
// file:line on a bad manifest. `keep` holds the parsed files the Measured point into.
// `run_names`, when given, receives every run's name in manifest order (a run whose fio output
// has no I/O yields no Measured but is still named there).
std::vector<Measured> measured_from_manifest(const std::string& path, std::vector<fio::FioResult>& keep,
                                             std::vector<std::string>* run_names = nullptr);

// Rules on one fio result (needs the full result): Little's law, bandwidth = IOPS x bs, io bytes =
// bandwidth x runtime, total_ios vs IOPS x runtime, latency stats (min <= percentiles <= max,
// monotone, mean within, stdev possible), slat + clat = lat, read/write mix vs rwmixread,
// group vs per-job (iops vs iops_mean), "All clients" double counting, errors, short and dropped
// I/Os, unit slips.
std::vector<Finding> check_consistency(const std::vector<Measured>& ms);

// Rules on the setup a result describes: buffered I/O or a small file with suspiciously high
// IOPS (page cache), iodepth > 1 with a synchronous engine, libaio without direct=1, a run too
// short for the percentiles it reports, writes without ramp_time.
std::vector<Finding> check_setup(const std::vector<Measured>& ms);

// Physics of a device class (hdd-7200, hdd-15k, sata-ssd, nvme, ceph-rbd, null, ...; "" = from
// each Measured's backend.kind when known): random IOPS and sequential bandwidth above what the
// class can do at that depth, latency below its floor; a guest above its host's bare-metal bound
// when both are among `ms` (setup guest.driver = "none" vs a virtual driver, same workload).
std::vector<Finding> check_physics(const std::vector<Measured>& ms, const std::string& device_class);
// The device class check_physics judges `m` against ("hdd-7200", "md RAID1 of two SATA SSDs
// ...") or "" when none is known (no `device_class`, no or an unknown backend.kind): the physics
// rules are then not applied to it, and the CLI says so.
std::string physics_class(const Measured& m, const std::string& device_class);
// The device classes check_physics knows, for --help and errors.
std::vector<std::string> device_classes();

// With a (calibrated) scenario: simulate each Measured's workload (its setup keys applied as
// overrides on top of `overrides`) and report where the measurement falls against the
// prediction interval, in sigmas.
std::vector<Finding> check_envelope(const std::vector<Measured>& ms, const std::string& scenario,
                                    const std::vector<std::string>& overrides, int threads);

// Several runs of the same job (same setup): is their spread explained by queueing noise for that
// run length (estimated by DES replications of `scenario` with the runs' setup keys applied), or
// does it point to outside interference? An empty `scenario` gives a warning that the spread was
// not checked (the library does not know where scenarios/default.toml is).
std::vector<Finding> check_spread(const std::vector<Measured>& runs, const std::string& scenario,
                                  const std::vector<std::string>& overrides, int threads);

// Runs the user says repeat one setup (`check --repeats`: one Measured per fio output, all of one
// job and direction), whatever format each output is in. First: do they state, or show, one
// setup? Compared are the options a run states (rw, bs, iodepth, numjobs, ioengine, direct,
// size, rwmixread, rate_iops, thinktime; fio's defaults for what a JSON output leaves out) and
// what every output shows (bytes per I/O, fio's IO depth histogram, the disks of its disk
// stats). The run length may differ. A difference is one error `not-repeats` naming the option
// and each run's value, and the spread is not checked; else check_spread on the setup they share,
// its evidence saying what was compared and what a run does not state.
std::vector<Finding> check_repeats(const std::vector<Measured>& runs, const std::string& scenario,
                                   const std::vector<std::string>& overrides, int threads);

}  // namespace vqsim::check
