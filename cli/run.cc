// `vqsim run`: simulate a scenario with independent replications and print the figures with
// 95% intervals, the analytic (MVA) answer where one exists, and Little's law checked.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "models/network.h"
#include "models/scenario.h"
#include "sim/replications.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {

// Little's law is an identity on a sample path; what is left is edge effects of the jobs
// present when the window opens and closes. Above this it points at a model or engine bug.
constexpr double kLittleTolerance = 0.01;

std::string fmt(const char* format, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a);
  return buf;
}

// "12.34 ± 0.05" in the unit chosen by `scale`.
std::string with_interval(const sim::Interval& ci, double scale, int decimals) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.*f ± %.*f", decimals, ci.mean / scale, decimals, ci.half_width / scale);
  return buf;
}

// Right-aligns `text` in `width` columns, counting UTF-8 characters (± and µ are two bytes).
std::string pad(const std::string& text, std::size_t width) {
  std::size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return chars >= width ? " " + text : std::string(width - chars, ' ') + text;
}

}  // namespace

int run_main(const std::vector<std::string>& args) {
  std::string scenario_path, format = "text";
  std::vector<std::string> overrides;
  int threads = 0, replications = 0, draws = -1;
  long long seed = -1;
  std::string ios, runtime;
  po::options_description opts(
      "usage: vqsim run SCENARIO.toml [options]\n\n"
      "SCENARIO.toml may also be the name of an installed example: vqsim run default,\n"
      "vqsim run calibrated/seed004 (docs/install.md); an unknown name lists them.\n\n"
      "I/O-path scenarios (the usual kind; see docs/scenario.md): simulates fio in the guest through\n"
      "every modelled stage to the device and prints fio-like results per direction (IOPS, bandwidth,\n"
      "slat/clat/lat mean, stdev and fio's percentiles) with 95% intervals, then per stage the\n"
      "utilization, mean queue, mean wait and share of the latency, names the bottleneck and checks\n"
      "Little's law. Examples:\n"
      "  vqsim run scenarios/default.toml\n"
      "  vqsim run scenarios/default.toml --set host.iothreads=2 --set workload.iodepth=64\n"
      "  vqsim run scenarios/seed000-virtio-blk.toml --format fio-json > predicted.json\n\n"
      "Calibrated scenarios (a [calibration] table, as vqsim calibrate writes it): after the run above,\n"
      "vqsim draws the fitted parameters from their log-normal uncertainty (the table's draws, or\n"
      "--draws), simulates each draw once on the nominal run's random numbers, and adds per metric a\n"
      "95% prediction interval that combines the parameters' spread with the simulation's own 95%\n"
      "interval, and the parameters' share of it (text: a \"prediction\" block; --format json: a\n"
      "top-level \"prediction\" object; fio-json: unchanged). Keys given with --set are held at that\n"
      "value, not drawn. Each draw costs one replication; results do not depend on --threads\n"
      "(docs/prediction.md).\n\n"
      "Generic network scenarios ([[station]] tables): simulates the scenario: independent replications (in parallel), each with "
      "a warm-up that is\n"
      "discarded and a measured window; prints per-station throughput, response time (mean, p50,\n"
      "p99 from fio's histogram), utilization and mean number present with 95% intervals, the exact\n"
      "MVA answer when the network is closed and product-form, and Little's law checked on every\n"
      "station. Same scenario and seed give byte-identical output whatever --threads is.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&scenario_path), "scenario TOML file")(
      "set", po::value(&overrides)->composing(), "override a scenario key: --set population.customers=16 (repeatable)")(
      "seed", po::value(&seed), "override run.seed")("replications", po::value(&replications), "override run.replications")(
      "threads", po::value(&threads)->default_value(0), "worker threads for replications (0 = all cores)")(
      "format", po::value(&format)->default_value("text"), "text | json | fio-json (I/O-path scenarios: fio 3.x JSON)")(
      "ios", po::value(&ios), "I/O-path scenarios: measured I/Os per replication (sets workload.ios, clears runtime)")(
      "runtime", po::value(&runtime),
      "I/O-path scenarios: simulated measured time per replication, e.g. 2s (sets workload.runtime)")(
      "compare-mva", "I/O-path scenarios: also solve by MVA and report where DES and MVA differ by more than 10%")(
      "allow-long-runs",
      "I/O-path scenarios: lift the run-size limits (2e8 simulated I/Os or open-loop arrivals per replication, 2e9 in all)")(
      "event-hash",
      "hash the event stream (each event's time and component) and print it as event_hash in --format json: two runs "
      "with the same hash behaved identically (scripts/golden)")(
      "draws", po::value(&draws),
      "calibrated scenarios: parameter draws for the prediction intervals (default: the [calibration] table's draws; 0 = none, "
      "the nominal run only)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (scenario_path.empty()) throw UsageError("vqsim run needs a scenario file, e.g. vqsim run scenarios/default.toml");
  scenario_path = resolve_scenario(scenario_path);
  if (format != "text" && format != "json" && format != "fio-json")
    throw UsageError("--format must be text, json or fio-json" + did_you_mean(format, {"text", "json", "fio-json"}));
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (vm.count("draws") && draws < 0) throw UsageError("--draws must be 0 (no prediction) or from 2 to 10000");

  if (models::is_io_scenario_file(scenario_path)) {
    IoRunOptions o;
    o.scenario_path = scenario_path;
    o.overrides = overrides;
    o.threads = threads;
    o.format = format;
    o.seed = seed;
    o.replications = vm.count("replications") ? replications : 0;
    o.ios = ios;
    o.runtime = runtime;
    o.compare_mva = vm.count("compare-mva") > 0;
    o.allow_long_runs = vm.count("allow-long-runs") > 0;
    o.event_hash = vm.count("event-hash") > 0;
    o.draws = vm.count("draws") ? draws : -1;
    return run_io(o);
  }
  if (format == "fio-json")
    throw UsageError("--format fio-json needs an I/O-path scenario; " + scenario_path + " is a generic network");
  models::NetworkScenario sc = models::load_network(scenario_path, overrides);
  sc.limits.hash_events = vm.count("event-hash") > 0;
  if (seed >= 0) sc.seed = static_cast<std::uint64_t>(seed);
  if (vm.count("replications")) {
    if (replications < 1) throw UsageError("--replications must be >= 1");
    sc.replications = replications;
  }

  std::vector<double> little_worst(static_cast<std::size_t>(sc.replications));
  std::vector<std::string> little_where(static_cast<std::size_t>(sc.replications));
  std::vector<std::uint64_t> event_hashes(static_cast<std::size_t>(sc.replications));
  const auto runs = sim::run_replications(sc.replications, threads, [&](std::uint64_t r) {
    sim::Simulator s(sc.seed, r);
    models::build_network(sc, s);
    event_hashes[r] = s.run(sc.limits).event_hash;
    little_worst[r] = s.worst_little_error(&little_where[r]);
    return s.report();
  });
  const auto summary = sim::summarize(runs);
  std::size_t worst_rep = 0;
  for (std::size_t r = 1; r < little_worst.size(); ++r)
    if (little_worst[r] > little_worst[worst_rep]) worst_rep = r;
  const bool little_ok = little_worst[worst_rep] <= kLittleTolerance;
  const auto mva = models::solve_network_mva(sc);
  const std::string flow = models::network_flow_name(sc);
  auto get = [&](const std::string& name) -> const sim::Interval& {
    const sim::MetricSummary* s = sim::find(summary, name);
    if (s == nullptr) throw std::logic_error("missing figure " + name);
    return s->interval;
  };

  if (format == "json") {
    nlohmann::ordered_json j;
    j["vqsim_version"] = VQSIM_VERSION;
    j["scenario"] = sc.path;
    j["seed"] = sc.seed;
    j["replications"] = sc.replications;
    j["network"] = sc.closed ? "closed" : "open";
    auto& metrics = j["metrics"];
    for (const auto& s : summary)
      metrics[s.name] = {{"mean", s.interval.mean},
                         {"half_width_95", s.interval.half_width},
                         {"lower", s.interval.lower},
                         {"upper", s.interval.upper}};
    j["little"] = {{"worst_rel_error", little_worst[worst_rep]},
                   {"where", little_where[worst_rep]},
                   {"replication", worst_rep},
                   {"ok", little_ok}};
    if (sc.limits.hash_events) {
      std::uint64_t event_hash = 0;
      for (const std::uint64_t h : event_hashes) event_hash = sim::combine_event_hashes(event_hash, h);
      j["event_hash"] = event_hash_hex(event_hash);
    }
    if (mva) {
      nlohmann::ordered_json m;
      m["throughput_per_s"] = mva->throughput[0] * 1e9;
      m["response_mean_ns"] = mva->cycle_time[0];
      for (std::size_t k = 0; k < sc.stations.size(); ++k)
        m["stations"][sc.stations[k].name] = {{"residence_ns", mva->residence[k][0]},
                                              {"number_mean", mva->queue_length[k][0]},
                                              {"utilization", mva->utilization[k][0]}};
      j["mva"] = m;
    }
    std::cout << j.dump(2) << '\n';
    return little_ok ? 0 : 1;
  }

  std::ostringstream out;
  out << "vqsim " << VQSIM_VERSION << " run " << sc.path << "\n";
  out << (sc.closed ? "closed network, " + std::to_string(sc.customers) + " customers" : std::string("open network")) << ", "
      << sc.stations.size() << " stations; seed " << sc.seed << ", " << sc.replications << " replications; intervals are 95%\n\n";
  char line[512];
  const std::size_t widths[] = {22, 22, 10, 10, 17, 15};
  auto columns = [&](const std::string& name, const std::vector<std::string>& cells) {
    std::snprintf(line, sizeof line, "%-14s", name.c_str());
    out << line;
    for (std::size_t i = 0; i < cells.size(); ++i) out << pad(cells[i], widths[i]);
    out << "\n";
  };
  columns("station", {"throughput/s", "response mean (µs)", "p50 (µs)", "p99 (µs)", "utilization", "number"});
  auto row = [&](const std::string& name, bool has_util) {
    const sim::MetricSummary* number = sim::find(summary, name + ".number_mean");
    columns(name, {with_interval(get(name + ".throughput_per_s"), 1, 0), with_interval(get(name + ".response_mean_ns"), 1e3, 3),
                   fmt("%.3f", get(name + ".response_p50_ns").mean / 1e3), fmt("%.3f", get(name + ".response_p99_ns").mean / 1e3),
                   has_util ? with_interval(get(name + ".utilization"), 1, 4) : "-",
                   number ? with_interval(number->interval, 1, 3) : "-"});
  };
  for (const auto& c : sc.cpus) row(c.name, true);
  for (const auto& st : sc.stations) row(st.name, st.kind != models::NetworkStation::Kind::Delay);
  row(flow, false);
  out << "\n";
  if (mva) {
    const double x = mva->throughput[0] * 1e9;
    const auto& sim_x = get(flow + ".throughput_per_s");
    const auto& sim_r = get(flow + ".response_mean_ns");
    std::snprintf(
        line, sizeof line, "exact MVA: throughput %.0f/s, cycle time %.3f µs; simulation differs by %+.2f%% and %+.2f%%%s\n", x,
        mva->cycle_time[0] / 1e3, 100 * (sim_x.mean - x) / x, 100 * (sim_r.mean - mva->cycle_time[0]) / mva->cycle_time[0],
        std::fabs(sim_x.mean - x) <= sim_x.half_width ? " (inside the interval)" : " (outside the 95% interval)");
    out << line;
  } else {
    out << "exact MVA: not available ("
        << (sc.closed ? "not product-form: a non-exponential FCFS station, a shared cpu or multi-server PS" : "open network")
        << ")\n";
  }
  std::snprintf(line, sizeof line, "Little's law: worst relative error %.4f%% (%s, replication %zu): %s\n",
                100 * little_worst[worst_rep], little_where[worst_rep].empty() ? "-" : little_where[worst_rep].c_str(), worst_rep,
                little_ok ? "ok" : "VIOLATED");
  out << line;
  std::cout << out.str();
  if (!little_ok)
    std::cerr << "vqsim: Little's law is violated beyond " << 100 * kLittleTolerance
              << "%: this is a bug in the model or the engine\n";
  return little_ok ? 0 : 1;
}

}  // namespace vqsim::cli
