// How a scenario key is declared. Each stage declares the keys it reads in its own file (a
// `<stage>_keys` function beside its model); io_path.cc assembles them into the one table that
// the loader (scenario.cc), `vqsim keys`, docs/scenario.md and calibration's parameter list
// are derived from. A declaration says the key, how its value is written (kind and unit), its
// default and where that comes from, a one-line doc, the accepted range, how a value is applied
// to the scenario, for a fittable key how its value is read back, and whether it is a
// recorded-only fact.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/scenario.h"

namespace vqsim::models {

// How a key's value is written in TOML and what it becomes.
enum class Kind {
  integer,  // whole number
  real,     // any number
  time_us,  // number in µs, or a duration string ("12us", "1.5ms"); stored as ns
  time_ms,  // number in ms, or a duration string; stored as ns
  time_s,   // number in s (fio's runtime, ramp_time), or a duration string; stored as ns
  size,     // bytes, or "4k", "1MiB"
  rate,     // bytes per second, or "550MB" / "3GiB" (per second implied)
  choice,   // one word of a list
  boolean,
  text,
};

// One value read from a file or from --set, already converted to the key's kind.
struct Value {
  double number = 0;
  std::string word;
  bool flag = false;
};

struct Param {
  std::string key;
  Kind kind;
  std::string unit;
  std::string default_text;
  std::string source;
  std::string doc;
  std::vector<std::string> choices;  // for Kind::choice
  double min = 0, max = 1e18;
  std::function<void(IoScenario&, const Value&)> set;
  // The value in the key's unit as the model uses it (a fitted parameter's read-back: the CPU
  // scales divided out of stored costs, a device figure resolved by kind); empty for keys
  // calibration does not fit.
  std::function<double(const IoScenario&)> get = {};
  // A fact of a recorded setup that the model does not use: accepted, shown back, never swept
  // as a number.
  bool recorded = false;
};

template <typename E>
E pick(const std::vector<std::string>& choices, const std::vector<E>& values, const std::string& word) {
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == word) return values[i];
  return values.front();
}

// rw (and rwmixread) as the read fraction and access pattern.
void set_rw(IoScenario& s, const std::string& rw);

// A fact of a recorded setup that the model does not use (yet): accepted so that measurement
// manifests can describe their runs with it, and shown back to the reader.
Param recorded_key(const char* key, Kind kind, const char* doc);

// Every key of the I/O path, stage by stage (io_path.cc).
const std::vector<Param>& io_keys();

}  // namespace vqsim::models
