// Reading a Measured the way the consistency and setup rules both need: its setup keys (with
// fio's defaults where a JSON output implies them), the engine, where it came from, its
// per-direction statistics, and a Finding built in one call. Internal to calibration/check.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibration/check/check.h"

namespace vqsim::check::detail {

std::optional<std::string> key(const Measured& m, const std::string& k);  // empty values are absent
std::optional<double> number_of(const std::string& s);                    // finite numbers only
std::optional<double> key_number(const Measured& m, const std::string& k);
// fio's JSON lists only the options that were set, so an absent one has fio's default.
bool defaults_apply(const Measured& m);
std::optional<std::string> engine(const Measured& m);
std::string where(const Measured& m);      // "file: job 'x' on host"
std::string where_dir(const Measured& m);  // ... plus the direction
const fio::DirectionStats* stats(const Measured& m);
Finding make(Severity s, const char* rule, std::string subject, std::string evidence, std::string cause);

// A setup value without surrounding blanks or quotes.
std::string strip(std::string v);
// A whole finite number such as "4096" or "1.5" (not "4k").
bool plain_number(const std::string& v);
// "key=value" for load_io_scenario: numbers and booleans bare, everything else a TOML string.
std::string override_of(const std::string& key, const std::string& raw);
// Every I/O-path scenario key (what a Measured's setup may pass to the model).
const std::set<std::string>& scenario_keys();
// Several errors as one ConfigError message, one per line (main prints "vqsim: " before each;
// ConfigError::messages() splits them).
std::string error_lines(const std::vector<std::string>& errors);

// The workload a manifest run with a fio output states, as scenario keys (workload.rw, bs,
// iodepth, numjobs, ioengine): from its `set`, then fio's printed options (numjobs also from
// a text header's "jobs=N"), then, for a JSON output (which lists only the options that were
// set), fio's defaults (rw=read, bs=4k, iodepth=1, numjobs=1, ioengine=psync; rwmixread=50
// for a mixed rw).
std::map<std::string, std::string> stated_workload(const Measured& m);
// Those of the five keys the run leaves to the base scenario (terse output states none), and
// workload.rwmixread for a mixed rw whose mix nothing states:
// empty for inline numbers, for base_workload = true, and when all are stated (iodepth is
// not needed with a synchronous engine, which runs at depth 1).
std::vector<std::string> unstated_workload(const Measured& m);
// What a run with unstated_workload(m) should write, quoted keys: "add \"workload.rw\", ... to
// this run's set (or ...)".
std::string unstated_workload_fix(const std::vector<std::string>& keys);
// "seq.terse is fio's terse output, which does not state rw, bs, ...".
std::string unstated_workload_why(const Measured& m, const std::vector<std::string>& keys);

// The rule "unstated-workload" (a warning per manifest run with unstated_workload): `check`
// cannot judge the workload of such a run, and `calibrate` refuses it. Part of check_setup.
std::vector<Finding> unstated_workload_findings(const std::vector<Measured>& ms);

// A figure for the model rules' evidence: whole above 1000 (and whole numbers), one decimal
// above 100, else 3 digits.
std::string evidence_num(double v);
// A figure in a rule's message: 4 significant digits, whole from 1000, an exponent without '+'
// or leading zeros from 1e7 or below 1e-3 (8.097e9, 2.5e-4).
std::string num(double v);

}  // namespace vqsim::check::detail
