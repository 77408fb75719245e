// `vqsim plan`: goal-seeking over one integer knob under constraints (models/plan.h does the
// search; this file parses the command line and prints the answer, its intervals and the points
// tried). Exit status 0: an answer; 1: no value in the range satisfies the constraints; 2: bad
// usage or input.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "calibration/predict/prediction.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "cli/io_report.h"
#include "models/io_metrics.h"
#include "models/plan.h"
#include "models/scenario.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {

std::size_t display_width(const std::string& text) {
  std::size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return chars;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  std::string s = text;
  s.append(w >= width ? 0 : width - w, ' ');
  return s;
}

nlohmann::ordered_json interval_json(const sim::Interval& i) {
  nlohmann::ordered_json j;
  // Non-finite values (an open loop beyond capacity) become null.
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  j["mean"] = num(i.mean);
  j["half_width_95"] = num(i.half_width);
  j["lower"] = num(i.lower);
  j["upper"] = num(i.upper);
  return j;
}

nlohmann::ordered_json check_json(const models::PlanCheck& k, bool des) {
  nlohmann::ordered_json j;
  j["constraint"] = k.constraint.text();
  j["metric"] = k.metric;
  if (des) {
    j["value"] = interval_json(k.value);
    j["satisfied"] = k.satisfied;
    j["whole_interval_satisfies"] = k.whole_interval;
    j["borderline"] = k.straddles;
  } else {
    j["value"] = std::isfinite(k.value.mean) ? nlohmann::ordered_json(k.value.mean) : nlohmann::ordered_json(nullptr);
    j["guide"] = k.guide;
    j["satisfied"] = k.satisfied;
  }
  j["verdict"] = k.verdict();
  return j;
}

std::string check_cell(const models::PlanCheck& k, const std::string& method) {
  std::string s = method == "MVA-cal" ? "~" : "";
  s.append(models::plan_interval(k.value));
  if (method == "MVA" && k.guide) s.append(" (mean clat)");
  return s;
}

std::string search_summary(const models::PlanResult& r) {
  int mva = 0, des = 0;
  for (const auto& p : r.tried) (p.method == "MVA" ? mva : des) += 1;
  std::string s = "search: ";
  s.append(std::to_string(mva))
      .append(mva == 1 ? " MVA point" : " MVA points")
      .append(" (binary search), candidate ")
      .append(std::to_string(r.mva_candidate));
  s.append("; ")
      .append(std::to_string(des))
      .append(des == 1 ? " DES point (" : " DES points (")
      .append(std::to_string(r.request.replications));
  s.append(" replications x ").append(std::to_string(r.request.ios)).append(" I/Os each) to find the boundary");
  return s;
}

// A calibrated scenario's answer judged with the whole prediction interval (the model's own
// error, the parameters and the simulation; docs/prediction.md), not the simulation's alone: the
// plan searches with the DES's means, and a capacity answer that only the simulation's noise
// separates from the bound is borderline once the calibration's uncertainty is counted.
struct PredictionCheck {
  std::string constraint, metric, verdict;
  double mean = 0, lower = 0, upper = 0;
};

std::vector<PredictionCheck> prediction_checks(const models::PlanResult& r, const std::vector<std::string>& at_overrides,
                                               int threads) {
  std::vector<PredictionCheck> out;
  const auto& q = r.request;
  std::vector<std::string> ov = at_overrides;
  ov.push_back("workload.ios=" + std::to_string(q.ios));
  ov.push_back("workload.runtime=0");
  ov.push_back("run.replications=" + std::to_string(q.replications));
  models::IoScenario s = models::load_io_scenario(q.scenario_path, ov);
  if (!s.calibration.present() || s.calibration.draws <= 0) return out;
  // The nominal is the plan's own run at the answer (the same overrides, seed and length).
  const predict::Prediction p = predict::predict(q.scenario_path, ov, s, r.answer_report, threads);
  for (const auto& c : q.constraints) {
    PredictionCheck k;
    k.constraint = c.text();
    k.metric = c.metric;
    // A [[vm]] file's constraint on any profile's figure or the host's: that one's interval.
    const predict::MetricPrediction* m = p.find(c.metric);
    if (!m) {
      k.verdict = "not predicted (vqsim run predicts iops, bw_kib, lat/clat means and clat p50/p99/p99.9)";
      out.push_back(k);
      continue;
    }
    k.mean = m->mean;
    k.lower = m->lower;
    k.upper = m->upper;
    const bool lo = c.holds(m->lower), hi = c.holds(m->upper), mean = c.holds(m->mean);
    k.verdict = lo && hi     ? "satisfied"
                : !lo && !hi ? "violated"
                : mean       ? "borderline (mean satisfies)"
                             : "borderline (mean violates)";
    out.push_back(k);
  }
  return out;
}

void print_prediction_checks(const std::vector<PredictionCheck>& checks) {
  if (checks.empty()) return;
  std::printf("\nwith the calibration's uncertainty (95%% prediction interval: model error, parameters, simulation):\n");
  for (const auto& k : checks) {
    if (k.verdict.rfind("not predicted", 0) == 0) {
      std::printf("  %s: %s\n", k.constraint.c_str(), k.verdict.c_str());
      continue;
    }
    std::printf("  %s: %s [%s – %s]: %s\n", k.constraint.c_str(), models::plan_number(k.mean).c_str(),
                models::plan_number(k.lower).c_str(), models::plan_number(k.upper).c_str(), k.verdict.c_str());
  }
  bool borderline = false;
  for (const auto& k : checks) borderline = borderline || k.verdict.rfind("borderline", 0) == 0 || k.verdict == "violated";
  if (borderline)
    std::printf(
        "  the answer holds by the simulation's figures but not across the whole prediction interval: a measurement of this "
        "setup may well miss the bound\n");
}

void print_text(const models::PlanResult& r, const models::IoScenario& at) {
  const auto& q = r.request;
  std::printf("vqsim %s plan %s\n", VQSIM_VERSION, q.scenario_path.c_str());
  std::printf("question: %s\n", r.question.c_str());
  std::printf("setup at the answer: %s\n", setup_line(at).c_str());
  std::printf("%s; ± are 95%% intervals, seed %llu\n\n", search_summary(r).c_str(), static_cast<unsigned long long>(at.run.seed));
  if (r.feasible) {
    std::printf("answer: %s = %lld\n", q.knob.c_str(), r.answer);
  } else {
    std::printf("answer: none (infeasible); the nearest miss is %s = %lld\n", q.knob.c_str(), r.answer);
  }
  std::size_t w = 0;
  for (const auto& k : r.answer_checks) w = std::max(w, k.metric.size());
  for (const auto& [name, v] : r.answer_metrics) w = std::max(w, name.size());
  for (const auto& k : r.answer_checks) {
    const std::string bound = std::string(models::plan_op_symbol(k.constraint.op)).append(" ").append(k.constraint.bound_text);
    std::printf("  %s %s %s %s\n", pad_right(k.metric, w).c_str(), pad_right(models::plan_interval(k.value), 18).c_str(),
                pad_right(bound, 12).c_str(), k.verdict().c_str());
  }
  for (const auto& [name, v] : r.answer_metrics) {
    bool constrained = false;
    for (const auto& k : r.answer_checks) constrained = constrained || k.metric == name;
    if (!constrained) std::printf("  %s %s\n", pad_right(name, w).c_str(), models::plan_interval(v).c_str());
  }
  std::printf("\n%s\n\npoints tried, in order:\n", r.message.c_str());
  std::vector<std::size_t> widths;
  std::string header = pad_right(q.knob, std::max<std::size_t>(q.knob.size(), 6)) + "  method   ";
  std::vector<std::string> names;
  for (const auto& c : q.constraints) names.push_back(c.text());
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::size_t cw = names[i].size();
    for (const auto& p : r.tried)
      cw = std::max(cw, display_width(check_cell(p.checks[i], p.method)) + 3 + p.checks[i].verdict().size());
    widths.push_back(cw);
    header.append(pad_right(names[i], cw + 2));
  }
  header.append("point");
  std::printf("  %s\n", header.c_str());
  for (const auto& p : r.tried) {
    std::string line =
        pad_right(std::to_string(p.value), std::max<std::size_t>(q.knob.size(), 6)) + "  " + pad_right(p.method, 7) + "  ";
    for (std::size_t i = 0; i < p.checks.size(); ++i) {
      std::string cell = check_cell(p.checks[i], p.method);
      cell.append(" : ").append(p.checks[i].verdict());
      line.append(pad_right(cell, widths[i] + 2));
    }
    line.append(p.satisfied ? "ok" : "fails");
    std::printf("  %s\n", line.c_str());
  }
  bool guide = false;
  for (const auto& p : r.tried)
    for (const auto& k : p.checks) guide = guide || (p.method == "MVA" && k.guide);
  if (guide)
    std::printf("\nMVA has no percentiles: its mean clat of the same direction guided the search for percentile bounds.\n");
  bool cal = false;
  for (const auto& p : r.tried) cal = cal || p.method == "MVA-cal";
  if (cal)
    std::printf(
        "MVA-cal: the MVA scaled by DES / MVA at the last simulated point, searched again between the simulated points; its "
        "answer.\n");
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
}

nlohmann::ordered_json plan_to_json(const models::PlanResult& r, const models::IoScenario& at,
                                    const std::vector<PredictionCheck>& pc) {
  const auto& q = r.request;
  nlohmann::ordered_json j;
  j["vqsim_version"] = VQSIM_VERSION;
  j["scenario"] = q.scenario_path;
  j["overrides"] = q.overrides;
  j["knob"] = q.knob;
  j["goal"] = q.goal == models::PlanGoal::maximize ? "maximize" : "minimize";
  j["range"] = {q.lo, q.hi};
  j["constraints"] = nlohmann::ordered_json::array();
  for (const auto& c : q.constraints)
    j["constraints"].push_back(
        {{"metric", c.metric}, {"op", models::plan_op_symbol(c.op)}, {"bound", c.bound}, {"text", c.text()}});
  j["question"] = r.question;
  j["setup_at_answer"] = setup_line(at);
  j["seed"] = at.run.seed;
  j["replications"] = q.replications;
  j["ios"] = q.ios;
  j["feasible"] = r.feasible;
  j["answer"] = r.feasible ? nlohmann::ordered_json(r.answer) : nlohmann::ordered_json(nullptr);
  if (!r.feasible) j["best"] = r.answer;
  j["at_range_end"] = r.at_range_end;
  j["mva_candidate"] = r.mva_candidate;
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& k : r.answer_checks) j["checks"].push_back(check_json(k, true));
  for (const auto& [name, v] : r.answer_metrics) j["metrics"][name] = interval_json(v);
  j["message"] = r.message;
  j["tried"] = nlohmann::ordered_json::array();
  for (const auto& p : r.tried) {
    nlohmann::ordered_json pj;
    pj["value"] = p.value;
    pj["method"] = p.method;
    pj["satisfied"] = p.satisfied;
    pj["checks"] = nlohmann::ordered_json::array();
    for (const auto& k : p.checks) pj["checks"].push_back(check_json(k, p.method == "DES"));
    j["tried"].push_back(pj);
  }
  j["notes"] = r.notes;
  // A calibrated scenario: the answer judged with the whole prediction interval.
  if (!pc.empty()) {
    j["prediction_checks"] = nlohmann::ordered_json::array();
    for (const auto& k : pc)
      j["prediction_checks"].push_back({{"constraint", k.constraint},
                                        {"metric", k.metric},
                                        {"mean", k.mean},
                                        {"lower", k.lower},
                                        {"upper", k.upper},
                                        {"verdict", k.verdict}});
  }
  return j;
}

// plan_main and plan_json: `json_out` null prints (text or --format json), else receives the JSON.
int plan_command(const std::vector<std::string>& args, nlohmann::ordered_json* json_out) {
  std::string path, format = "text", maximize, minimize, range;
  std::vector<std::string> overrides, subject_to;
  int replications = 3, threads = 0;
  long long ios = 50000;
  bool allow_long_runs = false;
  po::options_description opts(
      "usage: vqsim plan SCENARIO.toml (--maximize KEY | --minimize KEY) --subject-to 'METRIC OP VALUE'\n"
      "                  [--subject-to ...] [--range LO:HI] [--set key=value]... [options]\n\n"
      "Goal-seeking over one integer scenario knob: the largest (or smallest) value whose results\n"
      "satisfy every constraint. Searches by MVA first (binary search, means only), then simulates\n"
      "(DES) from the MVA candidate outwards until the boundary is found, and prints the answer with\n"
      "its 95% intervals and every point it tried. A point satisfies a constraint when the DES mean\n"
      "does; 'borderline' means the interval straddles the bound. The constraints are assumed\n"
      "monotone in the knob (more jobs or depth: more latency; more IOThreads: more IOPS); one that\n"
      "improves towards the goal (total.iops >= X while maximizing iodepth) is a floor, checked at\n"
      "the answer.\n\n"
      "METRIC: read.iops, read.bw_kib, read.lat_mean_us, read.clat_mean_us, read.clat_p99_us (any of\n"
      "fio's percentiles: p50, p90, p99.9, ...), the same for write, total.iops, total.bw_kib,\n"
      "total.lat_mean_us. OP: <=, >=, < or >. VALUE: a number, optionally with k, M or G; for a\n"
      "latency (_us) also a duration with its unit: 'read.clat_p99_us <= 2ms'.\n"
      "Default ranges: workload.numjobs 1:256, workload.iodepth 1:1024, host.iothreads 0:16,\n"
      "guest.vcpus 1:128, guest.num_queues 1:64; other integer knobs need --range.\n\n"
      "Examples:\n"
      "  vqsim plan scenarios/seed004-vm.toml --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2000'\n"
      "  vqsim plan scenarios/seed000-virtio-scsi.toml --maximize workload.iodepth --subject-to 'read.clat_p99_us <= 500'\n"
      "  vqsim plan scenarios/seed000-virtio-blk.toml --minimize host.iothreads --subject-to 'total.iops >= 400k' \\\n"
      "      --set backend.kind=nvme --set guest.vcpus=4 --set guest.num_queues=4 --set workload.numjobs=4\n\n"
      "Exit status: 0 an answer was found, 1 no value in the range satisfies the constraints\n"
      "(the nearest miss is shown), 2 bad usage or input. See docs/plan.md.\n\nOptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&path), "scenario TOML file")(
      "maximize", po::value(&maximize), "the knob to maximize, e.g. workload.numjobs")(
      "minimize", po::value(&minimize), "the knob to minimize, e.g. host.iothreads")(
      "subject-to", po::value(&subject_to)->composing(), "a constraint 'METRIC OP VALUE' (repeatable; all must hold)")(
      "range", po::value(&range), "LO:HI, the values to search (inclusive)")(
      "set", po::value(&overrides)->composing(), "override a scenario key (repeatable), applied at every point")(
      "replications", po::value(&replications)->default_value(3), "DES replications per simulated point")(
      "ios", po::value(&ios)->default_value(50000), "measured I/Os per replication at each simulated point")(
      "allow-long-runs", po::bool_switch(&allow_long_runs), "lift the limits on --ios and --ios x --replications")(
      "threads", po::value(&threads)->default_value(0),
      "worker threads for replications (0 = all cores); the output does not depend on it")(
      "format", po::value(&format)->default_value("text"), "text | json");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (path.empty())
    throw UsageError(
        "vqsim plan needs a scenario file, e.g. vqsim plan scenarios/seed004-vm.toml --maximize workload.numjobs --subject-to "
        "'read.clat_p99_us <= 2000'");
  path = resolve_scenario(path);
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  if (maximize.empty() == minimize.empty()) throw UsageError("vqsim plan needs exactly one of --maximize KEY or --minimize KEY");
  if (subject_to.empty())
    throw UsageError(
        "vqsim plan needs at least one --subject-to 'METRIC OP VALUE', e.g. --subject-to 'read.clat_p99_us <= 2000'");
  if (replications < 1) throw UsageError("--replications must be >= 1");
  if (ios < 1) throw UsageError("--ios must be >= 1");
  if (!allow_long_runs && static_cast<double>(ios) > kMaxIosPerReplication)
    throw UsageError("--ios " + std::to_string(ios) + ": more than " +
                     std::to_string(static_cast<long long>(kMaxIosPerReplication)) +
                     " I/Os per replication at every simulated point (use --allow-long-runs to lift the limit)");
  if (!allow_long_runs && static_cast<double>(ios) * replications > kMaxIosPerRun)
    throw UsageError("--ios x --replications: more than " + std::to_string(static_cast<long long>(kMaxIosPerRun)) +
                     " simulated I/Os per point (use --allow-long-runs to lift the limit)");
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (!models::is_io_scenario_file(path))
    throw UsageError(path + " is a generic [[station]] network; vqsim plan takes I/O-path scenarios");

  models::PlanRequest q;
  q.scenario_path = path;
  q.overrides = overrides;
  q.knob = maximize.empty() ? minimize : maximize;
  q.goal = maximize.empty() ? models::PlanGoal::minimize : models::PlanGoal::maximize;
  q.replications = replications;
  q.threads = threads;
  q.ios = ios;
  models::PlanResult r;
  try {
    models::check_plan_knob(q.knob);
    if (!range.empty()) models::parse_plan_range(range, &q.lo, &q.hi);
    for (const auto& text : subject_to) q.constraints.push_back(models::parse_plan_constraint(text));
    const models::IoScenario base = models::load_io_scenario(path, overrides);
    for (const auto& c : q.constraints) {
      if (const std::string e = models::io_metric_scenario_error(base, c.metric); !e.empty()) throw std::invalid_argument(e);
      const std::string w = models::first_profile_metric_warning(base, c.metric);
      if (!w.empty()) std::cerr << "vqsim: warning: " << w << "\n";
    }
    r = models::run_plan(q);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<std::string> at_overrides = overrides;
  at_overrides.push_back(r.request.knob + "=" + std::to_string(r.answer));
  const models::IoScenario at = models::load_io_scenario(path, at_overrides);
  for (const auto& w : at.warnings) std::cerr << "vqsim: warning: " << w << "\n";
  const std::vector<PredictionCheck> pc = prediction_checks(r, at_overrides, threads);
  if (json_out != nullptr) {
    *json_out = plan_to_json(r, at, pc);
  } else if (format == "json") {
    std::cout << plan_to_json(r, at, pc).dump(2) << "\n";
  } else {
    print_text(r, at);
    print_prediction_checks(pc);
  }
  return r.feasible ? 0 : 1;
}

}  // namespace

int plan_main(const std::vector<std::string>& args) { return plan_command(args, nullptr); }

int plan_json(const std::vector<std::string>& args, nlohmann::ordered_json* out) { return plan_command(args, out); }

}  // namespace vqsim::cli
