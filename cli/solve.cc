// `vqsim solve`, `vqsim graph` and `vqsim keys`: the analytic answer, the stage graph and the
// scenario keys of an I/O-path scenario. Each only wires the models to the command line.
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "cli/io_report.h"
#include "cli/solve_classes.h"
#include "models/io_path_mva.h"
#include "models/scenario.h"
#include "models/topology.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {
models::IoScenario load_for(const std::string& arg, const std::vector<std::string>& overrides, const char* command) {
  if (arg.empty())
    throw UsageError(std::string("vqsim ") + command + " needs a scenario file, e.g. vqsim " + command +
                     " scenarios/default.toml");
  const std::string path = resolve_scenario(arg);
  if (!models::is_io_scenario_file(path))
    throw UsageError(path + " is a generic [[station]] network; vqsim " + command +
                     " takes I/O-path scenarios (vqsim run solves networks by MVA)");
  models::IoScenario s = models::load_io_scenario(path, overrides);
  for (const auto& w : s.warnings) std::cerr << "vqsim: warning: " << w << "\n";
  return s;
}
}  // namespace

int solve_main(const std::vector<std::string>& args) {
  std::string path, format = "text";
  std::vector<std::string> overrides;
  po::options_description opts(
      "usage: vqsim solve SCENARIO.toml [options]\n\n"
      "Solves the I/O-path scenario by mean-value analysis (exact MVA with multi-server stations, or\n"
      "open-network formulas for rate_iops): IOPS, mean slat/clat/lat, per-stage residence and\n"
      "utilization, the bottleneck. Means only, in milliseconds; for sweeps and searches. Compare\n"
      "with the simulation: vqsim run S.toml --compare-mva.\n\n"
      "A [[vm]] file with several VM profiles is solved as a multi-class network (one class per\n"
      "profile, each of its VMs a replica with stations of its own; host.cores and the backends\n"
      "shared): exact MVA when the population lattice is small, Schweitzer-Bard approximate MVA\n"
      "otherwise (the first line says which); per profile IOPS, mean latencies and per-class\n"
      "utilization of every station.\n\n"
      "A VM whose fio job file has several jobs is solved the same way, one class per job: the\n"
      "jobs share that VM's vCPUs, virtqueue, QEMU threads and AIO, each with its own population\n"
      "(iodepth x numjobs) and demands; stonewall groups are solved one after the other. Per job:\n"
      "IOPS, mean latencies, its utilization of every station it visits.\n\n"
      "Example: vqsim solve scenarios/seed004-vm.toml --set host.iothreads=4\n\nOptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&path), "scenario TOML file")(
      "set", po::value(&overrides)->composing(), "override a scenario key (repeatable)")(
      "format", po::value(&format)->default_value("text"), "text | json");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  const models::IoScenario s = load_for(path, overrides, "solve");
  refuse_several_disks_for_mva(s, "solve");
  const auto t0 = std::chrono::steady_clock::now();
  if (mva_by_classes(s)) {
    // [[vm]] tables of several running profiles, or a VM of several fio jobs: one class per
    // profile and job (multi-class MVA).
    const models::IoMvaClassesResult r = [&] {
      try {
        return models::solve_io_mva_classes(s);
      } catch (const std::invalid_argument& e) {
        throw UsageError(s.path + ": " + e.what());
      }
    }();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (format == "json") {
      nlohmann::ordered_json j;
      j["vqsim_version"] = VQSIM_VERSION;
      j["scenario"] = s.path;
      j["setup"] = setup_line(s);
      const nlohmann::ordered_json body = mva_classes_json(r);  // kept: items() refers to it
      for (const auto& [key, value] : body.items()) j[key] = value;
      j["warnings"] = nlohmann::ordered_json::array();
      for (const auto& w : s.warnings) j["warnings"].push_back(w);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << mva_classes_text(s, r, ms) << std::flush;
    }
    return 0;
  }
  const models::IoMvaResult r = [&] {
    try {
      return models::solve_io_mva(s);
    } catch (const std::invalid_argument& e) {
      throw UsageError(s.path + ": " + e.what());  // several profiles or jobs: not an answer to give wrong
    }
  }();
  // The VMs the MVA solved: vm.count, or the one running [[vm]] profile's count.
  int vms = s.vms;
  for (const auto& p : s.profiles)
    if (p.count > 0) vms = p.count;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string idle_threads = idle_iothreads_warning(s);
  // An open loop beyond what the path serves at this iodepth: the same words as `vqsim run`.
  const std::string overload = open_loop_warning(s, offered_iops(s), r.open_loop ? capacity_iops(s) : 0,
                                                 "the most the path serves at this iodepth, by MVA");
  // Past saturation the open-network formulas give unbounded means; JSON has null for them.
  if (format == "json") {
    nlohmann::ordered_json j;
    j["vqsim_version"] = VQSIM_VERSION;
    j["scenario"] = s.path;
    j["setup"] = setup_line(s);
    j["iops"] = r.iops;
    j["read_iops"] = r.read_iops;
    j["write_iops"] = r.write_iops;
    j["bw_bytes_per_s"] = r.read_iops * static_cast<double>(s.workload.bs_read_bytes) +
                          r.write_iops * static_cast<double>(s.workload.bs_write_bytes);
    j["lat_mean_ns"] = finite_or_null(r.lat_mean_ns);
    j["slat_mean_ns"] = finite_or_null(r.slat_mean_ns);
    j["clat_mean_ns"] = finite_or_null(r.clat_mean_ns);
    j["bottleneck"] = r.bottleneck;
    j["open_loop"] = r.open_loop;
    if (vms > 1) j["host"] = {{"vms", vms}, {"total_iops", r.total_iops}};
    j["saturated"] = r.saturated || !overload.empty();
    j["warnings"] = nlohmann::ordered_json::array();
    for (const auto& w : s.warnings) j["warnings"].push_back(w);
    if (!overload.empty()) j["warnings"].push_back(overload);
    if (!idle_threads.empty()) j["warnings"].push_back(idle_threads);
    for (const auto& st : r.stages)
      j["stages"].push_back({{"name", st.name},
                             {"residence_ns", finite_or_null(st.residence_ns)},
                             {"utilization", finite_or_null(st.utilization)},
                             {"number_mean", finite_or_null(st.number_mean)}});
    std::cout << j.dump(2) << "\n";
    if (!overload.empty()) std::cerr << "vqsim: warning: " << overload << "\n";
    if (!idle_threads.empty()) std::cerr << "vqsim: warning: " << idle_threads << "\n";
    return 0;
  }
  auto us = [](double ns) {
    char buf[32];
    if (!std::isfinite(ns)) return std::string("unbounded");
    std::snprintf(buf, sizeof buf, "%.2f", ns / 1e3);
    return std::string(buf);
  };
  std::printf("vqsim %s solve %s (MVA, %.1f ms)\n%s\n\n", VQSIM_VERSION, s.path.c_str(), ms, setup_line(s).c_str());
  if (!overload.empty())
    std::printf("%s%s\n", overload.c_str(),
                r.saturated ? "; some stage is over 100% busy and the mean latencies are unbounded" : "");
  std::printf("IOPS %.0f (read %.0f, write %.0f); mean lat %s µs = slat %s + clat %s\n", r.iops, r.read_iops, r.write_iops,
              us(r.lat_mean_ns).c_str(), us(r.slat_mean_ns).c_str(), us(r.clat_mean_ns).c_str());
  if (vms > 1) std::printf("host (%d VMs of this profile; the figures above are one VM's): IOPS %.0f\n", vms, r.total_iops);
  std::printf("\n");
  std::printf("%-26s %14s %12s %10s\n", "stage", "residence (µs)", "utilization", "number");
  for (const auto& st : r.stages) {
    const std::string number = std::isfinite(st.number_mean) ? [&] {
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", st.number_mean);
      return std::string(b);
    }() : std::string("unbounded");
    std::printf("%-26s %14s %12.3f %10s\n", st.name.c_str(), us(st.residence_ns).c_str(), st.utilization, number.c_str());
  }
  std::printf("\nbottleneck: %s\n", r.bottleneck.c_str());
  std::fflush(stdout);
  if (!overload.empty()) std::fprintf(stderr, "vqsim: warning: %s\n", overload.c_str());
  if (!idle_threads.empty()) std::fprintf(stderr, "vqsim: warning: %s\n", idle_threads.c_str());
  return 0;
}

int graph_main(const std::vector<std::string>& args) {
  std::string path;
  std::vector<std::string> overrides;
  bool with_results = false;
  std::uint64_t ios = 20000;
  int replications = 2, threads = 0;
  po::options_description opts(
      "usage: vqsim graph SCENARIO.toml [--set key=value]... [--with-results [--ios N] [--replications R]]\n\n"
      "Builds the scenario's stage graph (Boost.Graph): the stations a request visits from fio to\n"
      "the device and back, the token pools it holds and the CPUs the threads run on. Checks that\n"
      "every path reaches the device and returns and that no resource dangles, then prints\n"
      "Graphviz DOT.\n\n"
      "--with-results also simulates the scenario briefly (R replications of N measured I/Os; the\n"
      "scenario's own length is not used) and fills each node by its utilization: white (idle),\n"
      "orange (50%), red (100%); servers are labelled \"busy\", token pools \"held\" (tokens in use),\n"
      "with the node's share of fio's mean latency; per-job and per-queue stations drawn as one node\n"
      "show the busiest (\"max\"). The bottleneck is drawn bold. Nodes without servers (delays) stay\n"
      "white. For the full figures: vqsim run SCENARIO.toml.\n\n"
      "Examples:\n"
      "  vqsim graph scenarios/seed000-virtio-blk.toml | dot -Tsvg > path.svg\n"
      "  vqsim graph scenarios/seed004-vm.toml --with-results | dot -Tpng > load.png\n\nOptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&path), "scenario TOML file")(
      "set", po::value(&overrides)->composing(), "override a scenario key (repeatable)")(
      "with-results", po::bool_switch(&with_results), "simulate briefly and colour the nodes by utilization")(
      "ios", po::value(&ios)->default_value(20000), "--with-results: measured I/Os per replication")(
      "replications", po::value(&replications)->default_value(2), "--with-results: replications (2 or more)")(
      "threads", po::value(&threads)->default_value(0),
      "--with-results: worker threads (0 = all cores); the output does not depend on it");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (!with_results && (!vm["ios"].defaulted() || !vm["replications"].defaulted() || !vm["threads"].defaulted()))
    throw UsageError("--ios, --replications and --threads go with --with-results");
  if (with_results) {
    if (ios < 100 || ios > 10000000) throw UsageError("--ios must be from 100 to 10000000");
    if (replications < 2 || replications > 100) throw UsageError("--replications must be 2..100");
    if (threads < 0) throw UsageError("--threads must be >= 0");
    overrides.push_back("workload.ios=" + std::to_string(ios));
    overrides.push_back("workload.runtime=0");
  }
  models::IoScenario s = load_for(path, overrides, "graph");
  const models::TopologyGraph g = models::build_topology(s);
  models::check_topology(g);
  if (!with_results) {
    std::cout << models::topology_dot(g, setup_line(s));
    return 0;
  }
  s.run.replications = replications;
  check_run_size(s, false);
  const models::IoRunReport report = simulate_io(s, threads);
  models::TopologyLoads loads;
  for (const auto& st : report.stages)
    models::add_station_load(loads, st.name, st.has_utilization, st.utilization.mean, st.share_of_latency);
  char note[160];
  std::snprintf(note, sizeof note,
                "fill: utilization, white 0%% → orange 50%% → red 100%% (%d x %llu simulated I/Os); bold: bottleneck",
                replications, static_cast<unsigned long long>(ios));
  std::cout << models::topology_dot(g, setup_line(s), &loads, models::topology_node_of(report.bottleneck), note);
  return 0;
}

int keys_main(const std::vector<std::string>& args) {
  bool markdown = false, names = false;
  std::string values_of;
  po::options_description opts(
      "usage: vqsim keys [--markdown | --names | --values KEY]\n\n"
      "Lists every key of an I/O-path scenario: unit, default, meaning and source. The same table\n"
      "validates scenario files and --set, and is docs/scenario.md's reference. --names and --values\n"
      "are for scripts and shell completion: one word per line.\n\nOptions");
  opts.add_options()("help,h", "show this help")("markdown", po::bool_switch(&markdown), "print a Markdown table")(
      "names", po::bool_switch(&names), "print only the keys, one per line")(
      "values", po::value(&values_of), "print the values KEY takes, one per line (nothing for a number or free text)");
  po::variables_map vm;
  if (!parse_options(args, opts, vm)) return 0;
  if (markdown + names + vm.count("values") > 1) throw UsageError("--markdown, --names and --values go one at a time");
  if (names || vm.count("values")) {
    const auto params = models::io_scenario_parameters();
    std::vector<std::string> keys;
    for (const auto& p : params) {
      if (names) std::cout << p.key << "\n";
      if (p.key == values_of) {
        for (const auto& c : p.choices) std::cout << c << "\n";
        return 0;
      }
      keys.push_back(p.key);
    }
    if (names) return 0;
    throw UsageError("--values: unknown key '" + values_of + "'" + did_you_mean(values_of, keys) + "; see vqsim keys");
  }
  if (markdown) {
    std::cout << models::io_scenario_markdown();
    return 0;
  }
  for (const auto& p : models::io_scenario_parameters()) {
    std::printf("%-32s %-8s %-12s %s\n", p.key.c_str(), p.unit.c_str(), p.default_text.c_str(), p.doc.c_str());
  }
  return 0;
}

}  // namespace vqsim::cli
