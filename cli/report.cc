// `vqsim report`: the command line, the four kinds of input, and what the page derives (a
// sweep's knee, a plan's margins). The what-if and the plan run through compare's and plan's own
// code (compare_json, plan_json): the page holds the JSON those commands print with --format json.
#include "cli/report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io_report.h"
#include "cli/report_html.h"
#include "models/config.h"
#include "models/scenario.h"

namespace vqsim::cli {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

json make_doc(const std::string& kind, const std::string& title, const std::string& source, const json& data,
              const json& derived) {
  json doc;
  doc["vqsim_report"] = 1;
  doc["kind"] = kind;
  doc["title"] = title;
  doc["source"] = source;
  doc["generator"] = VQSIM_VERSION;
  doc["data"] = data;
  doc["derived"] = derived;
  return doc;
}

// A number written as text (a sweep's settings are TOML text: "4", "0.5", "\"threads\"").
bool parse_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// A metric's mean at a point, or NaN when the point has none (MVA percentiles are null).
double metric_mean(const json& row, const std::string& metric) {
  if (!row.contains("metrics") || !row["metrics"].contains(metric)) return NAN;
  const json& m = row["metrics"][metric];
  if (!m.is_object() || !m.contains("mean") || !m["mean"].is_number()) return NAN;
  return m["mean"].get<double>();
}

bool metric_everywhere(const json& rows, const std::string& metric) {
  for (const auto& row : rows)
    if (!std::isfinite(metric_mean(row, metric))) return false;
  return !rows.empty();
}

std::string first_present(const json& rows, std::initializer_list<const char*> candidates) {
  for (const char* m : candidates)
    if (metric_everywhere(rows, m)) return m;
  return "";
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

json sweep_derived(const json& rows) {
  json d;
  // The keys in axis order (the sweep writes every point's settings in the spec's order), their
  // distinct values in order of appearance, and whether all of them are numbers.
  std::vector<std::string> keys;
  if (!rows.empty())
    for (auto it = rows[0]["settings"].begin(); it != rows[0]["settings"].end(); ++it) keys.push_back(it.key());
  auto value = [](const json& row, const std::string& k) {
    return row["settings"].contains(k) ? row["settings"][k].get<std::string>() : std::string();
  };
  std::map<std::string, std::vector<std::string>> distinct;
  std::map<std::string, bool> numeric;
  for (const auto& k : keys) {
    numeric[k] = true;
    for (const auto& row : rows) {
      const std::string v = value(row, k);
      auto& list = distinct[k];
      if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
      double x;
      numeric[k] = numeric[k] && parse_number(v, &x);
    }
  }
  // The x axis: the last key that varies and is a number (the fastest-moving axis of a range);
  // failing that, the last that varies.
  std::string x;
  for (auto it = keys.rbegin(); it != keys.rend() && x.empty(); ++it)
    if (distinct[*it].size() > 1 && numeric[*it]) x = *it;
  for (auto it = keys.rbegin(); it != keys.rend() && x.empty(); ++it)
    if (distinct[*it].size() > 1) x = *it;
  // Keys that move with x (a zip axis: one value per value of x) are not series of their own.
  std::vector<std::string> series_keys, with_x;
  json fixed = json::object();
  for (const auto& k : keys) {
    if (k == x) continue;
    if (distinct[k].size() <= 1) {
      fixed[k] = distinct[k].empty() ? "" : distinct[k][0];
      continue;
    }
    bool function_of_x = !x.empty();
    std::map<std::string, std::string> seen;
    for (const auto& row : rows) {
      const auto [it, inserted] = seen.emplace(value(row, x), value(row, k));
      if (!inserted && it->second != value(row, k)) function_of_x = false;
    }
    (function_of_x ? with_x : series_keys).push_back(k);
  }
  const bool x_numeric = !x.empty() && numeric[x];
  d["x"] = x.empty() ? json(nullptr) : json(x);
  d["x_numeric"] = x_numeric;
  // A log axis for values spread over 16x or more (iodepth 1..256), base 2 when all are powers of 2.
  std::string scale = "linear";
  if (x_numeric) {
    double lo = INFINITY, hi = 0;
    bool positive = true, powers_of_two = true;
    for (const auto& v : distinct[x]) {
      double n = 0;
      parse_number(v, &n);
      positive = positive && n > 0;
      if (n > 0) {
        lo = std::min(lo, n);
        hi = std::max(hi, n);
        const double l = std::log2(n);
        powers_of_two = powers_of_two && std::fabs(l - std::round(l)) < 1e-9;
      }
    }
    if (positive && hi >= 16 * lo) scale = powers_of_two ? "log2" : "log";
  }
  d["x_scale"] = scale;
  d["series_keys"] = series_keys;
  d["with_x"] = with_x;
  d["fixed"] = fixed;

  // The knee's figures: throughput (IOPS, else bandwidth) and tail latency (p99, else a mean).
  const std::string tput =
      first_present(rows, {"total.iops", "read.iops", "write.iops", "total.bw_kib", "read.bw_kib", "write.bw_kib"});
  const std::string lat = first_present(rows, {"read.clat_p99_us", "write.clat_p99_us", "total.lat_mean_us", "read.lat_mean_us",
                                               "write.lat_mean_us", "read.clat_mean_us", "write.clat_mean_us"});
  d["throughput_metric"] = tput.empty() ? json(nullptr) : json(tput);
  d["latency_metric"] = lat.empty() ? json(nullptr) : json(lat);
  d["knee_rule"] = {{"throughput_gain_below", kKneeThroughputGain}, {"latency_gain_above", kKneeLatencyGain}};

  std::set<std::string> bottlenecks;
  for (const auto& row : rows)
    if (row.contains("bottleneck") && row["bottleneck"].is_string()) bottlenecks.insert(row["bottleneck"].get<std::string>());
  d["bottlenecks"] = json(std::vector<std::string>(bottlenecks.begin(), bottlenecks.end()));

  // The series, in order of first appearance; each one's points sorted by x.
  std::vector<std::string> labels;
  std::map<std::string, std::vector<std::size_t>> members;
  std::map<std::string, json> label_settings;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string label;
    json settings = json::object();
    for (const auto& k : series_keys) {
      // One series key: its value is the label (the legend names the key); several: key=value.
      label += (label.empty() ? "" : ", ") + (series_keys.size() == 1 ? "" : k + "=") + value(rows[i], k);
      settings[k] = value(rows[i], k);
    }
    if (!members.count(label)) {
      labels.push_back(label);
      label_settings[label] = settings;
    }
    members[label].push_back(i);
  }
  d["series"] = json::array();
  for (const auto& label : labels) {
    std::vector<std::size_t> idx = members[label];
    if (x_numeric)
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        double xa = 0, xb = 0;
        parse_number(value(rows[a], x), &xa);
        parse_number(value(rows[b], x), &xb);
        return xa < xb;
      });
    json s;
    s["label"] = label.empty() ? "all points" : label;
    s["settings"] = label_settings[label];
    s["rows"] = idx;
    json knee = nullptr;
    std::string note;
    if (!x_numeric)
      note = x.empty() ? "no knob varies" : "the swept knob " + x + " is not a number";
    else if (tput.empty() || lat.empty())
      note = "the sweep has no " + std::string(tput.empty() ? "throughput" : "latency") + " metric at every point";
    else if (idx.size() < 2)
      note = "one point";
    for (std::size_t j = 0; note.empty() && j + 1 < idx.size() && knee.is_null(); ++j) {
      const json& a = rows[idx[j]];
      const json& b = rows[idx[j + 1]];
      const double ta = metric_mean(a, tput), tb = metric_mean(b, tput), la = metric_mean(a, lat), lb = metric_mean(b, lat);
      if (!(ta > 0) || !(la > 0)) continue;
      const double tg = tb / ta - 1, lg = lb / la - 1;
      if (tg < kKneeThroughputGain && lg > kKneeLatencyGain) {
        double xa = 0, xb = 0;
        parse_number(value(a, x), &xa);
        parse_number(value(b, x), &xb);
        knee = {{"row", idx[j]},      {"point", a["point"]},       {"x_value", xa},         {"next_row", idx[j + 1]},
                {"next_x_value", xb}, {"throughput_gain_rel", tg}, {"latency_gain_rel", lg}};
      }
    }
    if (knee.is_null() && note.empty())
      note = "no step in the swept range where " + tput + " grows by less than 10% while " + lat + " grows by more than 50%";
    s["knee"] = knee;
    s["knee_note"] = note;
    d["series"].push_back(s);
  }
  return d;
}

json plan_derived(const json& plan) {
  json d;
  d["margins"] = json::array();
  // .at(): a JSON file that lacks a field throws (report_main says which file), never reads past it.
  if (!plan.contains("checks")) return d;
  std::map<std::string, json> constraints;
  for (const auto& c : plan.at("constraints")) constraints[c.at("text").get<std::string>()] = c;
  for (const auto& k : plan.at("checks")) {
    const std::string text = k.at("constraint").get<std::string>();
    const json& c = constraints[text];
    const std::string op = c.value("op", std::string("<="));
    const double bound = c.value("bound", NAN);
    const json& v = k.at("value");
    auto get = [&](const char* field) { return v.contains(field) && v.at(field).is_number() ? v.at(field).get<double>() : NAN; };
    const double mean = get("mean");
    const bool upper_bound = op == "<=" || op == "<";
    // The interval's end nearest the bound: the upper end under a ceiling, the lower above a floor.
    const double worst = upper_bound ? get("upper") : get("lower");
    auto margin = [&](double x) { return upper_bound ? (bound - x) / std::fabs(bound) : (x - bound) / std::fabs(bound); };
    json m;
    m["constraint"] = text;
    m["metric"] = k.at("metric");
    m["op"] = op;
    m["bound"] = number_or_null(bound);
    m["value"] = number_or_null(mean);
    m["margin_rel"] = bound != 0 ? number_or_null(margin(mean)) : json(nullptr);
    m["interval_end"] = number_or_null(worst);
    m["interval_end_margin_rel"] = bound != 0 ? number_or_null(margin(worst)) : json(nullptr);
    d["margins"].push_back(m);
  }
  // The first point tried beyond the answer in the goal's direction, simulated: what fails there.
  d["beyond"] = nullptr;
  if (plan.at("answer").is_number_integer()) {
    const long long step = plan.value("goal", std::string()) == "maximize" ? 1 : -1;
    const long long next = plan.at("answer").get<long long>() + step;
    const json& tried = plan.at("tried");
    for (std::size_t i = 0; i < tried.size(); ++i)
      if (tried[i].at("value") == next && tried[i].at("method") == "DES") d["beyond"] = {{"tried", i}, {"value", next}};
  }
  return d;
}

json calibration_doc(const json& report, const std::string& source) {
  const std::string title = "Calibration: " + file_name(report.value("manifest", std::string("?"))) + " on " +
                            file_name(report.value("base", std::string("?")));
  return make_doc("calibration", title, source, report, json::object());
}

json compare_doc(const json& compare, const std::string& source) {
  std::string vs;
  for (const auto& c : compare.at("comparisons")) {
    std::string one;
    for (auto it = c.at("vs").begin(); it != c.at("vs").end(); ++it)
      one += (one.empty() ? "" : ",") + it.key() + "=" + it.value().get<std::string>();
    vs += " --vs " + one;
  }
  return make_doc("compare", "What-if: " + file_name(compare.value("scenario", std::string("?"))) + vs, source, compare,
                  json::object());
}

json plan_doc(const json& plan, const std::string& source) {
  return make_doc("plan", "Plan: " + plan.value("question", std::string("?")), source, plan, plan_derived(plan));
}

json sweep_doc(const json& rows, const std::string& source) {
  return make_doc("sweep", "Sweep: " + source + " (" + std::to_string(rows.size()) + " points)", source, rows,
                  sweep_derived(rows));
}

void write_report_page(const std::string& path, const json& doc) { write_atomically(path, report_page_html(doc)); }

namespace {

// ---------------------------------------------------------------- reading the inputs

int line_of(const std::string& text, std::size_t byte) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(std::min(byte, text.size())), '\n'));
}

std::string read_file(const std::string& path) {
  if (!fs::exists(path)) throw UsageError(path + ": no such file or directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot read it");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json parse_json_file(const std::string& path) {
  const std::string text = read_file(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw models::ConfigError(path + ":" + std::to_string(line_of(text, e.byte > 0 ? e.byte - 1 : 0)) + ": not valid JSON (" +
                              e.what() + "); vqsim report reads the JSON of calibrate --report, compare or plan --format json");
  }
}

enum class Kind { calibration, compare, plan, sweep_rows, unknown };

Kind kind_of(const json& j) {
  if (j.is_object() && j.contains("comparisons") && j["comparisons"].is_array()) return Kind::compare;
  if (j.is_object() && j.contains("knob") && j.contains("goal") && j.contains("tried")) return Kind::plan;
  if (j.is_object() && j.contains("params") && j.contains("runs") && j.contains("converged")) return Kind::calibration;
  if (j.is_object() && j.contains("point") && j.contains("settings") && j.contains("metrics")) return Kind::sweep_rows;
  return Kind::unknown;
}

// A sweep's results.jsonl: one point per line; each must have its settings and metrics.
json read_sweep_rows(const std::string& path) {
  const std::string text = read_file(path);
  json rows = json::array();
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    json row;
    try {
      row = json::parse(line);
    } catch (const json::parse_error& e) {
      throw models::ConfigError(path + ":" + std::to_string(n) + ": not valid JSON (" + e.what() +
                                "); a sweep's results.jsonl has one JSON object per line");
    }
    if (kind_of(row) != Kind::sweep_rows || !row["settings"].is_object() || !row["metrics"].is_object())
      throw models::ConfigError(
          path + ":" + std::to_string(n) +
          ": not a sweep point: expected {\"point\", \"settings\", \"metrics\", ...} as vqsim sweep writes");
    for (auto it = row["settings"].begin(); it != row["settings"].end(); ++it)
      if (!it.value().is_string())
        throw models::ConfigError(path + ":" + std::to_string(n) + ": settings." + it.key() +
                                  ": expected a string (the value as vqsim sweep writes it)");
    rows.push_back(row);
  }
  if (rows.empty()) throw models::ConfigError(path + ":1: no points: a sweep's results.jsonl has one line per point");
  return rows;
}

json read_sweep_dir(const std::string& dir) {
  const fs::path results = fs::path(dir) / "results.jsonl";
  if (!fs::exists(results)) {
    bool journal = false;
    for (const auto& e : fs::directory_iterator(dir)) journal = journal || e.path().filename().string().rfind("journal", 0) == 0;
    if (journal)
      throw UsageError(dir + ": an unfinished sweep (journals but no results.jsonl): finish it first, vqsim sweep SPEC --out " +
                       dir + " --resume");
    throw UsageError(dir + ": no results.jsonl here: give a directory vqsim sweep SPEC --out DIR has written");
  }
  return read_sweep_rows(results.string());
}

// FIT.toml and the report must be the same fit: the same parameters with the same values (FIT.toml
// writes 6 significant digits).
void check_same_fit(const std::string& fit_path, const models::IoScenario& s, const std::string& report_path, const json& r) {
  std::map<std::string, double> estimates;
  for (const auto& p : r["params"])
    if (p["estimate"].is_number()) estimates[p["key"].get<std::string>()] = p["estimate"].get<double>();
  const auto& c = s.calibration;
  for (std::size_t i = 0; i < c.keys.size(); ++i) {
    const auto it = estimates.find(c.keys[i]);
    if (it == estimates.end())
      throw UsageError(report_path + ": not the report of " + fit_path + "'s fit: " + fit_path + " fits " + c.keys[i] +
                       ", the report does not");
    if (std::fabs(it->second - c.values[i]) > 1e-4 * std::max(std::fabs(c.values[i]), 1e-12))
      throw UsageError(report_path + ": not the report of " + fit_path + "'s fit: " + c.keys[i] + " is " +
                       printf_string("%g", c.values[i]) + " in " + fit_path + " and " + printf_string("%g", it->second) +
                       " in the report");
  }
  if (estimates.size() != c.keys.size())
    throw UsageError(report_path + ": not the report of " + fit_path + "'s fit: it fits " + std::to_string(estimates.size()) +
                     " parameters, " + fit_path + " " + std::to_string(c.keys.size()));
}

bool has_option(const std::vector<std::string>& args, std::initializer_list<const char*> names) {
  for (const auto& a : args)
    for (const char* n : names)
      if (a == n || a.rfind(std::string(n) + "=", 0) == 0) return true;
  return false;
}

const char* kHelp =
    "usage: vqsim report INPUT --out PAGE.html [options]\n\n"
    "Writes one self-contained HTML page (charts by Vega-Lite, inlined: it opens without a network)\n"
    "for one of four kinds of INPUT. The numbers on the page are the command's own JSON, embedded\n"
    "whole in the page (what --format json prints).\n\n"
    "  FIT.toml --report R.json   a calibration: measured vs fitted per run and metric with intervals,\n"
    "                             the parameters (identified or not, at a limit), leave-one-out errors,\n"
    "                             the fit-quality line. R.json is what calibrate --report wrote with\n"
    "                             FIT.toml (FIT.toml holds no measured values); R.json alone works too.\n"
    "                             (Or while calibrating: vqsim calibrate ... --html PAGE.html.)\n"
    "  S.toml --vs KEY=VALUE ...  a what-if: runs vqsim compare with the same options (--vs, --set,\n"
    "                             --metric, --replications, --ios, --runtime, --seed, --draws,\n"
    "                             --threads): each metric's paired difference, interval and verdict.\n"
    "  DIR                        a sweep's output directory (vqsim sweep SPEC --out DIR): the curves\n"
    "                             with their 95% bands, the knee, the bottleneck per point.\n"
    "  S.toml --maximize|--minimize KEY --subject-to 'METRIC OP VALUE' ...\n"
    "                             a plan: runs vqsim plan with the same options: the goal, the answer,\n"
    "                             the bound and the margin, the points tried.\n"
    "  FILE.json                  the --format json of compare or plan (or calibrate --report) saved\n"
    "                             earlier; DIR/results.jsonl as DIR.\n\n"
    "The knee of a swept curve is the last point before the first step where the throughput grows by\n"
    "less than 10% while the tail latency (p99) grows by more than 50% (docs/report.md).\n\n"
    "Examples:\n"
    "  vqsim calibrate --scenario scenarios/seed000-virtio-scsi.toml \\\n"
    "      --data calibration/data/seeds/000-virtio-scsi-vs-blk.toml --out fit.toml --report r.json --cv loo\n"
    "  vqsim report fit.toml --report r.json --out fit.html\n"
    "  vqsim report scenarios/default.toml --vs host.iothreads=2 --vs host.aio=io_uring --out whatif.html\n"
    "  vqsim sweep scenarios/sweeps/blk-vs-scsi.toml --out out/blk-vs-scsi && vqsim report out/blk-vs-scsi --out sweep.html\n"
    "  vqsim report scenarios/seed004-vm.toml --maximize workload.numjobs --subject-to 'read.clat_p99_us <= 2ms' --out "
    "plan.html\n\n"
    "Exit status: 0 the page was written; 1 the page was written but the command it reports on\n"
    "failed its own way (plan: no value satisfies the constraints; compare: a Little's-law check);\n"
    "2 bad usage or input (nothing written).\n\n"
    "Options:\n"
    "  -h [ --help ]        show this help\n"
    "  --out PAGE.html      the page to write (required)\n"
    "  --report R.json      with FIT.toml: the report calibrate --report wrote with it\n"
    "  (the options of vqsim compare or vqsim plan, with --vs or --maximize/--minimize)\n";

}  // namespace

int report_main(const std::vector<std::string>& args) {
  std::string out, report;
  std::vector<std::string> rest;
  // report's own options; the rest belongs to compare or plan (or is the INPUT).
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kHelp;
      return 0;
    }
    auto take = [&](const char* name, std::string* value) {
      const std::string n = name;
      if (a == n) {
        if (i + 1 >= args.size()) throw UsageError(n + " needs a value (see --help)");
        *value = args[++i];
        return true;
      }
      if (a.rfind(n + "=", 0) == 0) {
        *value = a.substr(n.size() + 1);
        return true;
      }
      return false;
    };
    if (take("--out", &out) || take("--report", &report)) continue;
    rest.push_back(a);
  }
  if (out.empty()) throw UsageError("vqsim report needs --out PAGE.html (where the page goes; see --help)");
  if (fs::is_directory(out)) throw UsageError("--out " + out + ": is a directory, expected a file name");
  if (has_option(rest, {"--format"}))
    throw UsageError("--format: vqsim report writes HTML to --out; the page holds the JSON --format json prints");

  const bool what_if = has_option(rest, {"--vs"});
  const bool plan = has_option(rest, {"--maximize", "--minimize", "--subject-to"});
  if (what_if && plan) throw UsageError("--vs (a what-if) and --maximize/--minimize (a plan) are two reports: give one");
  if (!report.empty() && (what_if || plan))
    throw UsageError("--report R.json goes with a calibrated FIT.toml, not with --vs or a plan");

  json doc;
  int status = 0;
  if (what_if || plan) {
    std::string source = what_if ? "vqsim compare" : "vqsim plan";
    for (const auto& a : rest) source += " " + a;
    json j;
    if (what_if) {
      status = compare_json(rest, &j);
      doc = compare_doc(j, source);
    } else {
      status = plan_json(rest, &j);
      doc = plan_doc(j, source);
    }
  } else {
    if (rest.empty())
      throw UsageError("vqsim report needs an INPUT: FIT.toml, S.toml --vs ..., a sweep directory or a JSON file (see --help)");
    for (const auto& a : rest)
      if (a.rfind("-", 0) == 0 && a != rest[0])
        throw UsageError("unknown option " + a +
                         " (compare's and plan's options go with --vs or --maximize/--minimize; see --help)");
    if (rest.size() > 1) throw UsageError("one INPUT at a time: " + rest[0] + " and " + rest[1]);
    const std::string input = rest[0];
    if (input.rfind("-", 0) == 0) throw UsageError("unknown option " + input + " (see --help)");
    if (!fs::exists(input)) throw UsageError(input + ": no such file or directory");
    if (fs::is_directory(input)) {
      if (!report.empty()) throw UsageError("--report R.json goes with a calibrated FIT.toml, not with a sweep directory");
      doc = sweep_doc(read_sweep_dir(input), input);
    } else if (fs::path(input).extension() == ".toml") {
      const models::IoScenario s = models::load_io_scenario(input);
      if (!s.calibration.present())
        throw UsageError(input +
                         ": a scenario alone is not a report: add --vs KEY=VALUE (a what-if, as vqsim compare) or "
                         "--maximize/--minimize KEY --subject-to '...' (a plan, as vqsim plan); a calibrated FIT.toml takes "
                         "--report R.json");
      if (report.empty())
        throw UsageError(input +
                         ": a calibrated scenario holds the fitted values but not the measured ones the page sets them "
                         "against: give the report calibrate wrote with it, --report R.json (vqsim calibrate ... --report "
                         "R.json), or write the page while calibrating (vqsim calibrate ... --html PAGE.html)");
      const json r = parse_json_file(report);
      if (kind_of(r) != Kind::calibration)
        throw UsageError(report + ": not a calibration report (the JSON vqsim calibrate --report writes)");
      check_same_fit(input, s, report, r);
      doc = calibration_doc(r, input + " (" + report + ")");
    } else {
      if (!report.empty()) throw UsageError("--report R.json goes with a calibrated FIT.toml; " + input + " is not one");
      // results.jsonl: one object per line; anything else is one JSON document.
      if (fs::path(input).extension() == ".jsonl") {
        doc = sweep_doc(read_sweep_rows(input),
                        fs::path(input).parent_path().string().empty() ? input : fs::path(input).parent_path().string());
      } else {
        const json j = parse_json_file(input);
        const Kind kind = kind_of(j);
        if (kind != Kind::calibration && kind != Kind::compare && kind != Kind::plan)
          throw models::ConfigError(input +
                                    ":1: not a JSON vqsim report knows: expected the --report JSON of vqsim calibrate, "
                                    "or the --format json of vqsim compare or vqsim plan");
        try {
          doc = kind == Kind::calibration ? calibration_doc(j, input)
                : kind == Kind::compare   ? compare_doc(j, input)
                                          : plan_doc(j, input);
        } catch (const json::exception& e) {
          throw models::ConfigError(input + ":1: not the JSON vqsim writes (" + e.what() +
                                    "); give the --format json of compare or plan, or calibrate's --report, unedited");
        }
      }
    }
  }
  write_report_page(out, doc);
  std::cerr << "report: wrote " << out << " (" << doc["kind"].get<std::string>() << ")\n";
  return status;
}

}  // namespace vqsim::cli
