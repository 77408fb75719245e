// `vqsim report`: one self-contained HTML page for a calibration, a what-if (compare), a sweep
// directory or a plan (docs/report.md). The page embeds the command's own JSON (what --format json
// prints, the calibrate --report JSON, a sweep's results.jsonl) and a few figures derived from it
// here (a sweep's knee, a plan's margins); cli/report_page.js draws it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vqsim::cli {

// The knee rule (docs/report.md): the knee of a swept curve is the last point before the first
// step where the throughput grows by less than kKneeThroughputGain while the tail latency grows
// by more than kKneeLatencyGain.
inline constexpr double kKneeThroughputGain = 0.10;
inline constexpr double kKneeLatencyGain = 0.50;

// The page's document for each kind: {"vqsim_report": 1, "kind", "title", "source", "generator",
// "data": the JSON as given, "derived": {...}}.
nlohmann::ordered_json calibration_doc(const nlohmann::ordered_json& report, const std::string& source);
nlohmann::ordered_json compare_doc(const nlohmann::ordered_json& compare, const std::string& source);
nlohmann::ordered_json plan_doc(const nlohmann::ordered_json& plan, const std::string& source);
// `rows`: a sweep's results.jsonl, one object per line, in point order.
nlohmann::ordered_json sweep_doc(const nlohmann::ordered_json& rows, const std::string& source);

// What the page derives from a sweep: the x axis (the last numeric key that varies), the series
// (the other varying keys), the throughput and tail-latency metrics the knee is judged on, and
// each series' points in x order with its knee (or null, and why).
nlohmann::ordered_json sweep_derived(const nlohmann::ordered_json& rows);
// A plan's margins at the answer: per constraint, how far the value is from the bound, for the
// mean and for the interval's end nearest the bound (relative to the bound; > 0: room left).
nlohmann::ordered_json plan_derived(const nlohmann::ordered_json& plan);

// Writes the page for `doc` to `path` (whole or not at all).
void write_report_page(const std::string& path, const nlohmann::ordered_json& doc);

}  // namespace vqsim::cli
