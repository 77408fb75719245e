// `vqsim bench e2e`: end-to-end speed of the I/O-path simulation — simulated I/Os per wall-clock
// second on one core for a scenario (default: seed 000, virtio-blk), and the peak resident
// memory of a long run, to show that memory stays flat in run length. With --vms N the scenario
// becomes one [[vm]] profile of N VMs on one [[backend]] (the consolidation path: per-VM
// stations, shared device and return routing), to show what each VM costs.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "models/io_path.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {
// CPU time of this process: on a shared machine a run descheduled for a while loses wall time
// but not CPU time, so the CPU rate is the steadier figure when other work competes for the cores.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

// `scenario` as one [[vm]] profile of `vms` VMs whose disks share one [[backend]], written to a
// temporary file (removed when this goes out of scope): base = the scenario, so every key of it
// is the profile's and its backend.* values go to the shared backend.
struct VmWrapper {
  std::filesystem::path path;
  VmWrapper(const std::string& scenario, int vms) {
    path = std::filesystem::temp_directory_path() / ("vqsim-bench-vms-" + std::to_string(::getpid()) + ".toml");
    std::ofstream f(path);
    f << "description = \"bench e2e: " << vms << " VMs of one profile on one backend\"\n\n"
      << "[[backend]]\nname = \"disk\"\n\n"
      << "[[vm]]\nname = \"vm\"\ncount = " << vms << "\nbackend = \"disk\"\nbase = '"
      << std::filesystem::absolute(scenario).string() << "'\n";  // a literal string: no escapes
    if (!f) throw UsageError("bench e2e --vms: cannot write " + path.string());
  }
  ~VmWrapper() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  VmWrapper(const VmWrapper&) = delete;
  VmWrapper& operator=(const VmWrapper&) = delete;
};
}  // namespace

int bench_e2e(const std::vector<std::string>& args) {
  std::string scenario = "seed000-virtio-blk";  // the installed example (resolve_scenario)
  long long ios = 2'000'000, long_ios = 0;
  int repeat = 3, vms = 1;
  bool json = false;
  po::options_description opts(
      "usage: vqsim bench e2e [options]\n\n"
      "Simulates one replication of an I/O-path scenario on one thread, --repeat times, and prints\n"
      "simulated I/Os per wall-clock second (median), events per second, and the same per CPU second\n"
      "(steadier on a shared machine) with the events per I/O; then, with --long-ios,\n"
      "one long run and the peak resident set size of the process (target: <= 64 MiB at 100M I/Os).\n\n"
      "With --vms K, the scenario becomes one [[vm]] profile of K VMs whose disks share one [[backend]]\n"
      "(the consolidation path); --ios is then per VM, the rate counts every VM's I/Os, and the wall\n"
      "time per simulated I/O shows what a VM costs (target: --vms 16 within 25% of one VM's rate).\n\n"
      "Examples: vqsim bench e2e --long-ios 100000000\n"
      "          vqsim bench e2e --vms 16 --ios 200000\n\nOptions");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&scenario),
                                                 "I/O-path scenario (default: seed 000 virtio-blk)")(
      "ios", po::value(&ios), "measured I/Os per timed run (default 2000000)")(
      "repeat", po::value(&repeat), "timed runs (default 3)")("long-ios", po::value(&long_ios),
                                                              "I/Os of the memory run (0 = skip)")(
      "vms", po::value(&vms), "VMs of the scenario's profile on one backend, as a [[vm]] file (default: the scenario itself)")(
      "json", po::bool_switch(&json), "print JSON");
  po::variables_map vm;
  if (!parse_options(args, opts, vm)) return 0;
  if (ios < 1 || repeat < 1 || long_ios < 0 || vms < 1)
    throw UsageError("--ios, --repeat and --vms must be >= 1, --long-ios >= 0");
  scenario = resolve_scenario(scenario);
  const bool wrapped = vm.count("vms") > 0;
  std::unique_ptr<VmWrapper> wrapper;
  if (wrapped) wrapper = std::make_unique<VmWrapper>(scenario, vms);
  const std::string file = wrapped ? wrapper->path.string() : scenario;
  const std::string key = wrapped ? "vm.vm.workload." : "workload.";
  const auto length = [&](long long n) { return std::vector<std::string>{key + "ios=" + std::to_string(n), key + "runtime=0"}; };
  models::IoScenario s = models::load_io_scenario(file, length(ios));
  const std::vector<models::VmInstance> instances = models::vm_instances(s);
  // Every VM's completed I/Os.
  const auto completed = [&](const sim::Metrics& m) {
    double done = 0;
    for (const auto& inst : instances) done += m.get(inst.prefix + "read.ios") + m.get(inst.prefix + "write.ios");
    return done;
  };
  std::vector<double> rates, event_rates, cpu_rates;
  double events_per_io = 0;
  for (int r = 0; r < repeat; ++r) {
    sim::RunResult run;
    const double cpu0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const sim::Metrics m = models::run_io_replication(s, static_cast<std::uint64_t>(r), &run);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    const double done = completed(m);
    rates.push_back(done / seconds);
    cpu_rates.push_back(done / cpu);
    event_rates.push_back(static_cast<double>(run.events) / seconds);
    events_per_io = static_cast<double>(run.events) / done;  // the same in every run but for noise
  }
  std::sort(rates.begin(), rates.end());
  std::sort(event_rates.begin(), event_rates.end());
  std::sort(cpu_rates.begin(), cpu_rates.end());
  const double median = rates[rates.size() / 2], median_events = event_rates[event_rates.size() / 2];
  const double median_cpu = cpu_rates[cpu_rates.size() / 2];
  const double rss_before = peak_rss_mib();
  double long_seconds = 0, rss_after = rss_before;
  if (long_ios > 0) {
    models::IoScenario l = models::load_io_scenario(file, length(long_ios));
    const auto t0 = std::chrono::steady_clock::now();
    models::run_io_replication(l, 0, nullptr);
    long_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rss_after = peak_rss_mib();
  }
  if (json) {
    nlohmann::ordered_json j;
    j["scenario"] = scenario;
    j["ios_per_run"] = ios;
    j["vms"] = vms;
    j["repeat"] = repeat;
    j["simulated_ios_per_wall_s_median"] = median;
    j["wall_ns_per_simulated_io_median"] = 1e9 / median;
    j["events_per_wall_s_median"] = median_events;
    j["simulated_ios_per_cpu_s_median"] = median_cpu;
    j["cpu_ns_per_simulated_io_median"] = 1e9 / median_cpu;
    j["events_per_simulated_io"] = events_per_io;
    j["peak_rss_mib_after_timed_runs"] = rss_before;
    if (long_ios > 0) {
      j["long_run_ios"] = long_ios;
      j["long_run_wall_s"] = long_seconds;
      j["peak_rss_mib_after_long_run"] = rss_after;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("bench e2e: %s%s\n", scenario.c_str(),
              wrapped ? (", as [[vm]] count = " + std::to_string(vms) + " on one [[backend]]").c_str() : "");
  std::printf(
      "  %lld I/Os per %srun, %d runs on one thread: median %.3g simulated I/Os per wall second (%.3g events/s), "
      "%.0f ns of wall time per simulated I/O\n",
      ios, wrapped ? "VM per " : "", repeat, median, median_events, 1e9 / median);
  std::printf("  CPU time: median %.3g simulated I/Os per CPU second, %.0f ns per simulated I/O; %.2f events per I/O\n",
              median_cpu, 1e9 / median_cpu, events_per_io);
  std::printf("  peak RSS after the timed runs: %.1f MiB\n", rss_before);
  if (long_ios > 0) std::printf("  long run: %lld I/Os in %.1f s; peak RSS %.1f MiB\n", long_ios, long_seconds, rss_after);
  return 0;
}

}  // namespace vqsim::cli
