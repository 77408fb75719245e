// vqsim: the command-line entry point. It parses the command name and hands the rest of the
// arguments to the subcommand; it holds no model logic.
#include <unistd.h>
#include <algorithm>

#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "models/config.h"

namespace {

struct Command {
  const char* name;
  int (*main)(const std::vector<std::string>&);
  const char* summary;
};

const Command kCommands[] = {
    {"run", vqsim::cli::run_main, "simulate a scenario: figures with 95% intervals, MVA where exact, Little's law checked"},
    {"solve", vqsim::cli::solve_main, "the same I/O-path scenario by mean-value analysis: means in milliseconds"},
    {"plan", vqsim::cli::plan_main,
     "goal-seek one knob under constraints (MVA, then DES at the boundary): answer with intervals"},
    {"compare", vqsim::cli::compare_main,
     "a what-if as a paired difference (common random numbers, shared draws): interval and verdict"},
    {"graph", vqsim::cli::graph_main, "print the scenario's stage graph (Boost.Graph) as Graphviz DOT, after checking it"},
    {"sweep", vqsim::cli::sweep_main,
     "run a sweep spec's points in parallel (and under MPI): CSV, JSONL, fio-plot tree; resumable"},
    {"calibrate", vqsim::cli::calibrate_main,
     "fit stage parameters to measured fio runs; write a calibrated scenario with uncertainty"},
    {"report", vqsim::cli::report_main,
     "one self-contained HTML page (Vega-Lite charts) for a calibration, a what-if, a sweep directory or a plan"},
    {"check", vqsim::cli::check_main, "is this fio result plausible? consistency, setup, device physics, model envelope"},
    {"import", vqsim::cli::import_main, "read fio output (JSON, json+, normal text, terse; any version) and print it normalized"},
    {"keys", vqsim::cli::keys_main, "list every I/O-path scenario key with its unit, default and source"},
    {"bench", vqsim::cli::bench_main,
     "speed: engine vs a hand-written loop (tandem), event queues (queue), the I/O path end to end (e2e)"},
};

void print_help(std::ostream& out) {
  out << "vqsim " << VQSIM_VERSION
      << " — discrete-event performance simulator of the virtualized storage I/O path\n\n"
         "usage: vqsim COMMAND [options]      (vqsim COMMAND --help for each command's options)\n\n"
         "commands:\n";
  std::size_t width = 0;
  for (const auto& c : kCommands) width = std::max(width, std::string(c.name).size());
  for (const auto& c : kCommands)
    out << "  " << c.name << std::string(width + 2 - std::string(c.name).size(), ' ') << c.summary << "\n";
  out << "\noptions:\n"
         "  -h, --help     this help\n"
         "  --version      print the version\n\n"
         "examples:\n"
         "  vqsim run default      (an installed example by name: share/vqsim/scenarios/default.toml)\n"
         "  vqsim run scenarios/default.toml\n"
         "  vqsim run scenarios/default.toml --set host.iothreads=2 --format json\n"
         "  vqsim solve scenarios/seed004-vm.toml --set host.iothreads=4\n"
         "  vqsim plan scenarios/seed004-vm.toml --maximize workload.numjobs --subject-to 'read.lat_mean_us <= 2000'\n"
         "  vqsim compare scenarios/default.toml --vs host.aio=io_uring --vs host.iothreads=0\n"
         "  vqsim graph scenarios/seed000-virtio-blk.toml | dot -Tsvg > path.svg\n"
         "  vqsim sweep scenarios/sweeps/iothreads-iodepth.toml --out out/iothreads\n"
         "  vqsim import calibration/data/seeds/000-virtio-blk.fio.txt --format fio-json\n"
         "  vqsim report scenarios/default.toml --vs host.iothreads=2 --out whatif.html\n"
         "  vqsim check calibration/data/seeds/004-epyc-vm-vs-baremetal.toml\n"
         "  vqsim bench tandem --customers 32 --stations 5 --cycles 2000000 --json\n\n"
         "exit status: 0 success, 1 a self-check failed (Little's law) or no value satisfies a plan's constraints,\n"
         "2 bad usage or input, 3 `check` found an implausible result.\n";
}

// Ctrl-C: a clean stop with a message and the conventional status 130. Commands that hold
// unfinished work (sweep) install their own handler, which saves what is done first.
extern "C" void on_interrupt(int) {
  static const char message[] = "\nvqsim: interrupted\n";
  const ssize_t ignored = ::write(2, message, sizeof message - 1);
  (void)ignored;
  ::_exit(130);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  try {
    if (args.empty()) {
      print_help(std::cerr);
      return 2;
    }
    const std::string& name = args[0];
    if (name == "-h" || name == "--help" || name == "help") {
      print_help(std::cout);
      return 0;
    }
    if (name == "--version" || name == "version") {
      std::cout << "vqsim " << VQSIM_VERSION << "\n";
      return 0;
    }
    std::vector<std::string> names;
    for (const auto& c : kCommands) {
      if (name == c.name) return c.main(std::vector<std::string>(args.begin() + 1, args.end()));
      names.push_back(c.name);
    }
    throw vqsim::cli::UsageError("unknown command '" + name + "'" + vqsim::models::did_you_mean(name, names) +
                                 "; see vqsim --help");
  } catch (const vqsim::cli::UsageError& e) {
    std::cerr << "vqsim: " << e.what() << "\n";
    return 2;
  } catch (const vqsim::models::ConfigError& e) {
    // One line per error: a file with several mistakes names each.
    for (const auto& line : e.messages()) std::cerr << "vqsim: " << line << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vqsim: error: " << e.what() << "\n";
    return 1;
  }
}
