// Reading a Measured the way the consistency and setup rules both need: its setup keys (with
// fio's defaults where a JSON output implies them), the engine, where it came from, its
// per-direction statistics, and a Finding built in one call. Internal to calibration/check.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "calibration/check/check.h"

namespace vqsim::check::detail {

std::optional<std::string> key(const Measured& m, const std::string& k);  // empty values are absent
std::optional<double> number_of(const std::string& s);                    // finite numbers only
std::optional<double> key_number(const Measured& m, const std::string& k);
// fio's JSON lists only the options that were set, so an absent one has fio's default.
bool defaults_apply(const Measured& m);
bool is_sync_engine(const std::string& e);
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
// A figure for the model rules' evidence: whole above 1000, one decimal above 100, else 3 digits.
std::string evidence_num(double v);

}  // namespace vqsim::check::detail
