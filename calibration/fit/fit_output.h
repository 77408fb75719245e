// What calibration writes: the calibrated scenario (FIT.toml: the base scenario, the fitted
// values, and a [calibration] table with their log-normal uncertainty that `vqsim run` samples)
// and the report (JSON for tools, text for people).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibration/fit/calibrate.h"

namespace vqsim::fit {

// FIT.toml's text; `fit_path` is where it will be written (its `base` is relative to it).
std::string fit_toml(const Dataset& d, const CalibrationResult& r, const std::string& fit_path, const std::string& command_line);

nlohmann::ordered_json report_json(const Dataset& d, const CalibrationResult& r);

std::string report_text(const Dataset& d, const CalibrationResult& r);

// One line when fitted figures are beyond their bars: how many, and the pattern of the misses
// ("QD1 runs too fast (6 of 6 figures), writes too slow (4 of 5 figures)"); "" when none is.
std::string fit_quality_line(const Dataset& d, const CalibrationResult& r);

}  // namespace vqsim::fit
