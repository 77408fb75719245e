// Configuration at the edge: scenario files are TOML; quantities carry units ("12us", "4KiB",
// "3.2GHz") and become integer ns, bytes and Hz once, here. Every error names the file, the
// line and the key, and unknown keys come with a "did you mean".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "sim/distribution.h"
#include "sim/time.h"

namespace vqsim::models {

// A bad scenario: the message already says where ("file:line: key: what was expected").
// A loader that finds several errors in one file reports them together: what() holds one per
// line, in file order, and the command line prints each line as its own "vqsim: ..." line.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
  explicit ConfigError(const std::vector<std::string>& messages);
  // The errors, one per line of what().
  std::vector<std::string> messages() const;
};

// Unit parsers; they throw std::invalid_argument with the accepted forms in the message.
// Durations: ns, us (or µs), ms, s, min, h; a number without a unit is rejected.
sim::time_ns parse_duration_ns(std::string_view text);
double parse_duration_ns_real(std::string_view text);  // the same, unrounded
// Sizes: B, KiB/MiB/GiB/TiB (powers of 1024), kB/MB/GB/TB (powers of 1000, SI), and fio's
// shorthands k/m/g/t, which fio reads as powers of 1024 by default (kb_base=1024). Spellings
// fio reads otherwise than a standard does ("4KB": fio 4096, SI 4000; "4kib": fio 4000, IEC
// 4096) are refused with both readings and what to write instead.
std::uint64_t parse_size_bytes(std::string_view text);
// Frequencies: Hz, kHz, MHz, GHz.
double parse_frequency_hz(std::string_view text);

// " (did you mean 'x'?)" for the closest candidate within a small edit distance, else "".
// Dotted candidates also match on their last part, so "iothreads" finds "host.iothreads"
// (" (did you mean 'guest.cpu_cv' or 'host.cpu_cv'?)" when several sections have it).
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);
// Levenshtein distance (insertions, deletions, substitutions), behind every "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);
// `s` without leading and trailing white space (std::isspace).
std::string_view trim(std::string_view s);

// Reads values out of one TOML document and reports errors with file, line and dotted key.
class ConfigReader {
 public:
  explicit ConfigReader(std::string path) : path_(std::move(path)) {}
  const std::string& path() const noexcept { return path_; }

  // "file:line: key: message" (line omitted for nodes that came from --set).
  [[noreturn]] void fail(const toml::node* node, const std::string& key, const std::string& message) const;
  // Every key of `table` must be in `allowed`.
  void check_keys(const toml::table& table, const std::string& prefix, const std::vector<std::string>& allowed) const;

  std::int64_t integer(const toml::table& t, const std::string& prefix, const std::string& key, std::int64_t fallback,
                       std::int64_t min, std::int64_t max) const;
  std::string string(const toml::table& t, const std::string& prefix, const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& choices = {}) const;
  sim::time_ns duration(const toml::table& t, const std::string& prefix, const std::string& key, sim::time_ns fallback) const;
  // A distribution of durations: { dist = "exponential", mean = "10us" }, a bare duration
  // string (deterministic), and the other forms documented in docs/scenario.md.
  sim::Distribution distribution(const toml::node& node, const std::string& key) const;

 private:
  double duration_value(const toml::node& node, const std::string& key) const;
  std::string path_;
};

// "" when `p` names an existing file, else why not: "no such file <p>", or the system's reason
// when it cannot even be looked up (a name too long, a path through a file): never an exception.
std::string missing_file(const std::string& p);

// Reads and parses a TOML file. Every failure is a ConfigError naming the file (and the line
// where there is one): no such file, a directory, an unreadable or empty file, a file over
// 64 MiB or with a line over 1 MiB (not a hand-written TOML file), invalid UTF-8, bad syntax.
// `what` names the expected content in messages, e.g. "a scenario".
toml::table parse_toml_file(const std::string& path, const char* what);

// Applies "dotted.key=value" overrides to `root`. The value is read as TOML ("8", "true",
// "\"10us\"", "[1, 2]") and, failing that, as a plain string. Numeric path parts index arrays
// of tables ("station.1.servers=2"). Unknown keys are left for the scenario's own checks.
void apply_overrides(toml::table& root, const std::vector<std::string>& overrides);

}  // namespace vqsim::models
