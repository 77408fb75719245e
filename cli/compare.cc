// `vqsim compare`: a what-if as a paired difference with its own 95% interval and a verdict
// (calibration/predict/compare.h does the statistics; this file parses and prints).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibration/predict/compare.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "cli/io_report.h"
#include "models/io_metrics.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {

// Figures in the metric's unit with the precision a reader needs: IOPS and KiB/s whole, µs to 0.01.
std::string figure(const std::string& metric, double v) {
  const bool latency = metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_us") == 0;
  return printf_string(latency ? "%.2f" : "%.0f", v);
}

std::string percent(double rel) { return printf_string("%+.2f%%", 100 * rel); }

std::string settings(const std::vector<std::string>& vs) {
  std::string s;
  for (const auto& x : vs) s += (s.empty() ? "" : ",") + x;
  return s;
}

nlohmann::ordered_json to_json(const predict::CompareResult& r, const std::vector<std::string>& warnings) {
  nlohmann::ordered_json j;
  j["vqsim_version"] = VQSIM_VERSION;
  j["scenario"] = r.base.path;
  j["setup"] = setup_line(r.base);
  j["replications"] = r.replications;
  j["parameter_draws"] = r.draws;
  j["comparisons"] = nlohmann::ordered_json::array();
  for (const auto& c : r.comparisons) {
    nlohmann::ordered_json cj;
    cj["vs"] = nlohmann::ordered_json::object();
    for (const auto& kv : c.vs) {
      const auto eq = kv.find('=');
      cj["vs"][kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    cj["setup"] = setup_line(c.alt);
    cj["metrics"] = nlohmann::ordered_json::object();
    for (const auto& m : c.metrics) {
      cj["metrics"][m.name] = {{"base", m.base},
                               {"alt", m.alt},
                               {"delta", m.delta},
                               {"delta_rel", m.delta_rel},
                               {"lower_rel", m.lower_rel},
                               {"upper_rel", m.upper_rel},
                               {"verdict", m.verdict},
                               {"higher_is_better", m.higher_is_better},
                               {"sim_half_width_log", m.sim_half_width_log},
                               {"param_half_width_log", m.param_half_width_log},
                               {"unpaired_half_width_rel", m.unpaired_half_width_rel}};
    }
    cj["one_sided"] = c.one_sided;
    j["comparisons"].push_back(cj);
  }
  j["warnings"] = warnings;
  return j;
}

std::string to_text(const predict::CompareResult& r) {
  std::string out;
  out += "vqsim " + std::string(VQSIM_VERSION) + " compare " + r.base.path + "\n";
  out += "base: " + setup_line(r.base) + "\n";
  out += std::to_string(r.replications) + " replications on common random numbers";
  if (r.draws > 0) out += ", " + std::to_string(r.draws) + " parameter draws shared by both sides";
  out += "; intervals are 95% intervals of the paired difference\n";
  for (const auto& c : r.comparisons) {
    out += "\n--vs " + settings(c.vs) + "\n";
    out += "alt:  " + setup_line(c.alt) + "\n";
    char head[256];
    std::snprintf(head, sizeof head, "%-20s %12s %12s %12s %9s  %-21s %10s  %s\n", "metric", "base", "alt", "delta", "delta %",
                  "95% interval of delta", "unpaired ±", "verdict");
    out += head;
    for (const auto& m : c.metrics) {
      // (snprintf, not operator+ on temporaries: GCC 12 reports a false -Wrestrict for "[" + ...)
      char interval[64];
      std::snprintf(interval, sizeof interval, "[%+.2f%%, %+.2f%%]", 100 * m.lower_rel, 100 * m.upper_rel);
      std::string delta = figure(m.name, m.delta);
      if (m.delta >= 0) delta.insert(0, 1, '+');
      // Common random numbers resolve differences no one would act on: say when it is one.
      std::string verdict = m.verdict;
      if (verdict != "no significant difference" && std::fabs(m.delta_rel) < 0.01) verdict += " (by < 1%)";
      char line[320];
      std::snprintf(line, sizeof line, "%-20s %12s %12s %12s %9s  %-21s %9.2f%%  %s\n", m.name.c_str(),
                    figure(m.name, m.base).c_str(), figure(m.name, m.alt).c_str(), delta.c_str(), percent(m.delta_rel).c_str(),
                    interval, 100 * m.unpaired_half_width_rel, verdict.c_str());
      out += line;
    }
    if (!c.one_sided.empty()) {
      out += "not compared (zero or absent on one side):";
      for (const auto& n : c.one_sided) out += " " + n;
      out += "\n";
    }
  }
  out += "\n'unpaired ±' is what two separate runs' intervals would give, sqrt(h_base^2 + h_alt^2) relative.\n";
  return out;
}

}  // namespace

namespace {

// compare_main and compare_json: `json_out` null prints (text or --format json), else receives the JSON.
int compare_command(const std::vector<std::string>& args, nlohmann::ordered_json* json_out) {
  predict::CompareOptions o;
  std::vector<std::string> vs_args, metric_args;
  std::string format = "text", ios, runtime;
  int replications = 0, draws = -1;
  po::options_description opts(
      "usage: vqsim compare SCENARIO.toml --vs KEY=VALUE[,KEY=VALUE...] [--vs ...] [options]\n\n"
      "The what-if question as a paired difference: \"is aio=native really better here?\". The base\n"
      "scenario and each alternative (--vs: the keys it changes) run on common random numbers\n"
      "(replication r of every side uses the same random streams) and, for a calibrated scenario,\n"
      "on the same parameter draws. What both sides share then cancels in their difference, whose\n"
      "95% interval is far narrower than the two separate intervals (shown beside it as 'unpaired').\n"
      "Per metric: base, alternative, the difference (absolute and %), its interval, and a verdict:\n"
      "better / worse (higher is better for IOPS and bandwidth, lower for every latency) when the\n"
      "interval excludes 0, else no significant difference. docs/compare.md.\n\n"
      "Examples:\n"
      "  vqsim compare scenarios/default.toml --vs host.aio=io_uring --vs host.iothreads=0\n"
      "  vqsim compare scenarios/seed000-virtio-scsi.toml --vs guest.driver=virtio-blk\n"
      "  vqsim compare scenarios/calibrated/seed000.toml --vs host.iothreads=1,host.aio=native --format json\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&o.scenario_path),
                                                 "I/O-path scenario TOML file (a calibrated one too)")(
      "vs", po::value(&vs_args)->composing(), "an alternative: KEY=VALUE[,KEY=VALUE...] (repeatable: one comparison each)")(
      "set", po::value(&o.overrides)->composing(), "override a scenario key on every side (repeatable)")(
      "metric", po::value(&metric_args)->composing(),
      "a metric to compare, e.g. read.clat_p99_us (repeatable; default: IOPS, bandwidth, mean latencies and p50/p99/p99.9 per "
      "direction)")("replications", po::value(&replications),
                    "replications per side (default: the scenario's run.replications; at least 2)")(
      "ios", po::value(&ios), "measured I/Os per replication (sets workload.ios, clears runtime)")(
      "runtime", po::value(&runtime), "simulated measured time per replication, e.g. 2s (sets workload.runtime)")(
      "seed", po::value(&o.seed), "override run.seed (the same on every side)")(
      "draws", po::value(&draws),
      "calibrated scenarios: parameter draws shared by every side (default: the [calibration] table's; 0 = none)")(
      "threads", po::value(&o.threads)->default_value(0), "worker threads (0 = all cores); the output does not depend on it")(
      "format", po::value(&format)->default_value("text"), "text | json")("allow-long-runs",
                                                                          "lift the run-size limits (as vqsim run)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (o.scenario_path.empty())
    throw UsageError("vqsim compare needs a scenario file, e.g. vqsim compare scenarios/default.toml --vs host.aio=io_uring");
  o.scenario_path = resolve_scenario(o.scenario_path);
  if (!models::is_io_scenario_file(o.scenario_path))
    throw UsageError(o.scenario_path + " is a generic [[station]] network; vqsim compare takes I/O-path scenarios");
  if (vs_args.empty()) throw UsageError("vqsim compare needs at least one --vs KEY=VALUE, e.g. --vs host.aio=io_uring");
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  if (o.threads < 0) throw UsageError("--threads must be >= 0");
  if (vm.count("replications") && replications < 2)
    throw UsageError("--replications must be at least 2: a paired interval needs the spread of the differences");
  if (vm.count("draws") && (draws < 0 || draws == 1 || draws > 10000))
    throw UsageError("--draws must be 0 (none) or from 2 to 10000");
  o.replications = replications;
  o.draws = draws;
  for (const auto& v : vs_args) {
    try {
      o.vs.push_back(predict::split_settings(v));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  for (const auto& m : metric_args)
    if (!models::is_io_metric(m)) throw UsageError("--metric: unknown metric '" + m + "'" + models::io_metric_suggestion(m));
  o.metrics = metric_args;
  if (!ios.empty()) {
    o.overrides.push_back("workload.ios=" + ios);
    o.overrides.push_back("workload.runtime=0");
  }
  if (!runtime.empty()) o.overrides.push_back("workload.runtime=\"" + runtime + "\"");

  // Sizes and setups first, so that a bad --vs or a runaway size fails before any simulation.
  {
    models::IoScenario base = models::load_io_scenario(o.scenario_path, o.overrides);
    if (replications > 0) base.run.replications = replications;
    if (base.run.replications < 2)
      throw UsageError(o.scenario_path + ": run.replications = " + std::to_string(base.run.replications) +
                       ": a paired interval needs at least 2 replications (--replications 3)");
    check_run_size(base, vm.count("allow-long-runs") > 0);
    for (const auto& m : o.metrics)
      if (const std::string e = models::io_metric_scenario_error(base, m); !e.empty()) throw UsageError("--metric: " + e);
    for (const auto& vs : o.vs) {
      models::IoScenario alt = predict::load_alternative(o.scenario_path, o.overrides, vs);
      if (replications > 0) alt.run.replications = replications;
      check_run_size(alt, vm.count("allow-long-runs") > 0);
    }
  }

  const bool tty = ::isatty(STDERR_FILENO) == 1;
  predict::Progress progress;
  if (tty)
    progress = [](int done, int total) { std::cerr << "\rcompare: " << done << "/" << total << " simulations" << std::flush; };
  const predict::CompareResult r = predict::compare(o, progress);
  if (tty) std::cerr << "\r\033[K" << std::flush;

  std::vector<std::string> warnings;
  for (const auto* s : {&r.base}) {
    const std::string w = idle_iothreads_warning(*s);
    if (!w.empty()) warnings.push_back("base: " + w);
  }
  for (const auto& c : r.comparisons) {
    const std::string w = idle_iothreads_warning(c.alt);
    if (!w.empty()) warnings.push_back("--vs " + settings(c.vs) + ": " + w);
  }
  // Several [[vm]] profiles: a figure without vm.<name>. is the first profile's; say so.
  if (o.metrics.empty() && r.base.profiles.size() > 1)
    warnings.push_back("the figures compared are the first [[vm]] profile's (" + r.base.profiles.front().name +
                       "); name another profile's with --metric vm.<name>.read.iops (…), the host's with --metric "
                       "host.total.iops");
  for (const auto& m : o.metrics) {
    const std::string w = models::first_profile_metric_warning(r.base, m);
    if (!w.empty()) warnings.push_back(w);
  }
  if (json_out != nullptr)
    *json_out = to_json(r, warnings);
  else if (format == "json")
    std::cout << to_json(r, warnings).dump(2) << "\n";
  else
    std::cout << to_text(r);
  std::cout << std::flush;
  for (const auto& w : warnings) std::cerr << "vqsim: warning: " << w << "\n";

  bool little_ok = r.base_report.little_ok;
  std::string where = r.base_report.little_where;
  for (const auto& c : r.comparisons)
    if (!c.alt_report.little_ok) {
      little_ok = false;
      where = "--vs " + settings(c.vs) + ": " + c.alt_report.little_where;
    }
  if (!little_ok)
    std::cerr << "vqsim: Little's law is violated by more than 1% beyond what edge effects explain (" << where
              << "): this is a bug in the model or the engine\n";
  return little_ok ? 0 : 1;
}

}  // namespace

int compare_main(const std::vector<std::string>& args) { return compare_command(args, nullptr); }

int compare_json(const std::vector<std::string>& args, nlohmann::ordered_json* out) { return compare_command(args, out); }

}  // namespace vqsim::cli
