// `vqsim check`: is this fio result plausible? Reads fio outputs (any format) and measurement
// manifests, runs the rule families of calibration/check (consistency, setup, device physics,
// the model's envelope, run-to-run spread) and prints the findings. Exit 0 when nothing is
// implausible, 3 when something is, 2 on bad input.
#include <algorithm>
#include <boost/program_options.hpp>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "calibration/check/check.h"
#include "calibration/fio/parse.h"
#include "cli/commands.h"
#include "cli/common.h"

namespace vqsim::cli {
namespace po = boost::program_options;

namespace {

struct Input {
  std::string path;
  std::string detected;
  std::vector<std::string> sources;  // the Measured::source values it produced
  std::size_t measured = 0;
};

bool is_manifest(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  return ext == ".toml";
}

int rank(check::Severity s) { return s == check::Severity::error ? 0 : s == check::Severity::warning ? 1 : 2; }

std::string upper(const char* s) {
  std::string u = s;
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

}  // namespace

int check_main(const std::vector<std::string>& args) {
  std::vector<std::string> files, overrides;
  std::string scenario, device, format = "text";
  int threads = 0;
  bool repeats = false;
  std::string classes;
  for (const auto& c : check::device_classes()) classes.append(classes.empty() ? "" : ", ").append(c);
  po::options_description opts(
      "usage: vqsim check FILE... [--scenario FIT.toml] [--set k=v]... [--device KIND] [--threads N] [--format text|json]\n\n"
      "Is this fio result plausible? Each FILE is a fio output (JSON, json+, normal text or terse, any\n"
      "version) or a measurement manifest (.toml with [[run]] tables: fio files or inline numbers).\n"
      "The checks: internal consistency (Little's law, bandwidth = IOPS x bs, io = bw x runtime,\n"
      "latency statistics, slat + clat = lat, read/write mix, group vs per-job figures, errors, unit\n"
      "slips), the setup (page cache, iodepth with a synchronous engine, libaio without direct=1, a\n"
      "run too short for its percentiles, ramp_time on thin devices), the device class's physics,\n"
      "the run-to-run spread of repeated runs, and with --scenario the (calibrated) model's envelope.\n"
      "Each finding has a severity (error = implausible, warning = suspicious, info), the rule, the\n"
      "evidence with its numbers and the likely cause. Rules and thresholds: docs/check.md.\n\n"
      "Device classes (--device, else each run's backend.kind): " +
      classes +
      "\n\n"
      "Examples:\n"
      "  vqsim check run.json\n"
      "  vqsim check calibration/data/seeds/004-epyc-vm-vs-baremetal.toml --format json\n"
      "  vqsim check old-fio2.txt --device hdd-7200\n"
      "  vqsim check run1.json run2.json run3.json --repeats     # is their spread plausible?\n"
      "  vqsim check run.json --scenario fitted.toml --set guest.driver=virtio-scsi\n\n"
      "Exit status: 0 nothing implausible, 3 at least one error finding, 2 bad usage or input.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("file", po::value(&files), "fio output file(s) or manifest(s)")(
      "scenario", po::value(&scenario), "a (calibrated) scenario: check each run against its prediction interval")(
      "set", po::value(&overrides)->composing(), "override a scenario key for --scenario (repeatable)")(
      "device", po::value(&device), "device class for the physics rules (default: each run's backend.kind)")(
      "threads", po::value(&threads)->default_value(0), "threads for the model checks (0 = all cores)")(
      "repeats", po::bool_switch(&repeats),
      "the fio files given are repeated runs of one setup: check their spread (manifest runs with the same `set` always are)")(
      "format", po::value(&format)->default_value("text"), "text | json");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (files.empty()) throw UsageError("vqsim check needs at least one fio output or manifest, e.g. vqsim check result.json");
  if (format != "text" && format != "json") throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!device.empty()) {
    const auto known = check::device_classes();
    const std::string base = device.substr(0, device.find(':'));
    if (std::find(known.begin(), known.end(), base) == known.end())
      throw UsageError("--device: unknown device class '" + device + "'" + did_you_mean(base, known) + "; known: " + classes);
  }

  // Read everything first: bad input exits 2 before any finding is printed.
  std::deque<fio::ParsedFile> parsed;
  std::deque<std::vector<fio::FioResult>> kept;
  std::vector<check::Measured> ms;
  std::vector<bool> plain_file;  // per Measured: from a fio output named on the command line
  std::vector<Input> inputs;
  std::vector<check::Finding> no_io;  // jobs of fio files without any measured direction
  for (const auto& f : files) {
    Input in;
    in.path = f;
    std::vector<check::Measured> got;
    if (is_manifest(f)) {
      if (!std::filesystem::exists(f)) throw UsageError(f + ": no such file");
      kept.emplace_back();
      got = check::measured_from_manifest(f, kept.back());
      in.detected = "measurement manifest";
    } else {
      try {
        parsed.push_back(fio::parse_fio_file(f));
      } catch (const fio::ParseError& e) {
        throw UsageError(e.what());
      }
      in.detected = parsed.back().detected;
      got = check::measured_from_result(parsed.back().final_result(), f);
      // A job that did no I/O has no measured direction for the rules to look at: a failed run
      // (fio's error= set, e.g. 5 = EIO at the first I/O) is an error finding, else a warning.
      for (const auto& job : parsed.back().final_result().jobs) {
        if (std::any_of(got.begin(), got.end(), [&](const check::Measured& m) { return m.job == job.name; })) continue;
        if (job.trim.total_ios.value_or(0) > 0 || job.trim.io_bytes.value_or(0) > 0) continue;  // trim only: not checked
        const int err = job.error.value_or(0);
        check::Finding x;
        x.severity = err != 0 ? check::Severity::error : check::Severity::warning;
        x.rule = err != 0 ? "errors" : "no-io";
        x.subject = f + ": job '" + job.name + "'";
        x.evidence = err != 0 ? "err=" + std::to_string(err) + " and no I/O completed in any direction" : "no I/O completed in any direction";
        x.cause = err != 0 ? "the run failed: fio stopped the job at its first I/O error, so there are no figures to check"
                           : "the job did not run (time_based with runtime 0, size 0, or a filter that skipped it)";
        no_io.push_back(std::move(x));
        if (std::find(in.sources.begin(), in.sources.end(), f) == in.sources.end()) in.sources.push_back(f);
      }
    }
    in.measured = got.size();
    for (const auto& m : got)
      if (std::find(in.sources.begin(), in.sources.end(), m.source) == in.sources.end()) in.sources.push_back(m.source);
    for (auto& m : got) {
      ms.push_back(std::move(m));
      plain_file.push_back(!is_manifest(f));
    }
    inputs.push_back(std::move(in));
  }

  std::vector<check::Finding> findings;
  auto add = [&](std::vector<check::Finding> v) {
    for (auto& x : v) findings.push_back(std::move(x));
  };
  add(std::move(no_io));
  add(check::check_consistency(ms));
  add(check::check_setup(ms));
  try {
    add(check::check_physics(ms, device));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--device: ") + e.what());
  }
  if (!scenario.empty()) {
    try {
      add(check::check_envelope(ms, scenario, overrides, threads));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  // Repeated runs: the same setup, job and direction. A manifest states each run's setup, so its
  // runs with the same `set` are repeats. A fio output does not say which QEMU knobs it ran
  // under (seed 002's two runs differ in cache mode and IOThread, invisibly to fio), so plain
  // fio files count as repeats only when --repeats says so. The disks fio's disk stats name are
  // part of the setup: two runs of one job file on different disks (seed 000) are not repeats.
  std::map<std::tuple<std::map<std::string, std::string>, std::string, std::string, std::string>, std::vector<check::Measured>> same;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const check::Measured& m = ms[i];
    if (plain_file[i] && !repeats) continue;
    std::string disks;
    if (m.result)
      for (const auto& d : m.result->disks) disks.append(disks.empty() ? "" : ",").append(d.name);
    // Clones of one job and the clients of one client/server run share a source: they ran in
    // parallel, they are not repeats.
    auto& runs = same[{m.setup, m.job, m.dir, disks}];
    if (std::none_of(runs.begin(), runs.end(), [&](const check::Measured& x) { return x.source == m.source; })) runs.push_back(m);
  }
  std::string spread_scenario = scenario;
#ifdef VQSIM_SOURCE_DIR
  if (spread_scenario.empty()) spread_scenario = std::string(VQSIM_SOURCE_DIR) + "/scenarios/default.toml";
#endif
  for (const auto& [k, runs] : same) {
    if (runs.size() < 2 || spread_scenario.empty() || !std::filesystem::exists(spread_scenario)) continue;
    try {
      add(check::check_spread(runs, spread_scenario, overrides, threads));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }

  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) { return rank(a.severity) < rank(b.severity); });
  int errors = 0, warnings = 0, notes = 0;
  for (const auto& f : findings) (f.severity == check::Severity::error ? errors : f.severity == check::Severity::warning ? warnings : notes)++;
  const int status = errors > 0 ? 3 : 0;

  // Which input a finding belongs to: the longest source its subject starts with.
  auto input_of = [&](const check::Finding& f) -> int {
    int best = -1;
    std::size_t best_len = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (const auto& s : inputs[i].sources)
        if (f.subject.compare(0, s.size(), s) == 0 && s.size() > best_len) best = static_cast<int>(i), best_len = s.size();
    return best;
  };

  if (format == "json") {
    nlohmann::ordered_json out;
    out["files"] = nlohmann::ordered_json::array();
    for (const auto& in : inputs)
      out["files"].push_back({{"file", in.path}, {"detected", in.detected}, {"measured", in.measured}});
    out["findings"] = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
      nlohmann::ordered_json j = {{"severity", check::severity_name(f.severity)}, {"rule", f.rule}, {"subject", f.subject},
                                  {"evidence", f.evidence},                       {"cause", f.cause}};
      if (f.corrected && std::isfinite(*f.corrected)) j["corrected"] = *f.corrected;
      const int i = input_of(f);
      j["file"] = i >= 0 ? nlohmann::ordered_json(inputs[static_cast<std::size_t>(i)].path) : nlohmann::ordered_json(nullptr);
      out["findings"].push_back(std::move(j));
    }
    out["summary"] = {{"errors", errors}, {"warnings", warnings}, {"notes", notes}, {"exit", status}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return status;
  }

  auto print = [&](const check::Finding& f) {
    std::cout << upper(check::severity_name(f.severity)) << " " << f.rule << ": " << f.subject << "\n";
    std::cout << "  evidence: " << f.evidence << "\n";
    std::cout << "  likely cause: " << f.cause << "\n";
    if (f.corrected && std::isfinite(*f.corrected)) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.10g", *f.corrected);
      std::cout << "  corrected: " << buf << "\n";
    }
  };
  std::vector<bool> shown(findings.size(), false);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::cout << "== " << inputs[i].path << " (" << inputs[i].detected << "; " << inputs[i].measured << " measured direction"
              << (inputs[i].measured == 1 ? "" : "s") << ")\n";
    int n = 0;
    for (std::size_t k = 0; k < findings.size(); ++k)
      if (input_of(findings[k]) == static_cast<int>(i)) {
        print(findings[k]);
        shown[k] = true;
        ++n;
      }
    if (n == 0) std::cout << "  no findings\n";
  }
  bool header = false;
  for (std::size_t k = 0; k < findings.size(); ++k)
    if (!shown[k]) {
      if (!header) std::cout << "== across files\n";
      header = true;
      print(findings[k]);
    }
  std::cout << "\n" << errors << (errors == 1 ? " error, " : " errors, ") << warnings << (warnings == 1 ? " warning, " : " warnings, ")
            << notes << (notes == 1 ? " note" : " notes") << "\n";
  std::cout << (status == 3 ? "exit 3: at least one result is implausible\n" : "exit 0: nothing implausible\n");
  return status;
}

}  // namespace vqsim::cli
