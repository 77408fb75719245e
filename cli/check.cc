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
#include <set>
#include <thread>

#include "calibration/check/check.h"
#include "calibration/fio/parse.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "models/scenario.h"

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
      "usage: vqsim check FILE... [--scenario FIT.toml] [--set k=v]... [--device KIND] [--repeats] [--threads N]\n"
      "                   [--format text|json]\n\n"
      "Is this fio result plausible? Each FILE is a fio output (JSON, json+, normal text or terse, any\n"
      "version) or a measurement manifest (.toml with [[run]] tables: fio files or inline numbers).\n"
      "The checks: internal consistency (Little's law, bandwidth = IOPS x bs, io = bw x runtime,\n"
      "latency statistics, slat + clat = lat, read/write mix, group vs per-job figures, errors, unit\n"
      "slips), the setup (page cache, iodepth with a synchronous engine, libaio without direct=1, a\n"
      "run too short for its percentiles, ramp_time on thin devices), the device class's physics\n"
      "(with --device, a run's backend.kind or --scenario's backend; a note says where they were not\n"
      "applied), the run-to-run spread of repeated runs (--repeats: every fio file given is one run of\n"
      "the same job; runs whose setups differ are an error naming the option), and with --scenario the\n"
      "(calibrated) model's envelope.\n"
      "Each finding has a severity (error = implausible, warning = suspicious, info), the rule, the\n"
      "evidence with its numbers and the likely cause. Rules and thresholds: docs/check.md.\n\n"
      "Device classes (--device, else each run's backend.kind, else --scenario's): " +
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
      "device", po::value(&device), "device class for the physics rules (default: each run's backend.kind, else --scenario's)")(
      "threads", po::value(&threads)->default_value(0), "threads for the model checks (0 = all cores)")(
      "repeats", po::bool_switch(&repeats),
      "the fio files given (any format) are repeated runs of one setup: check that their setups agree, then their spread "
      "(manifest runs with the same `set` always are)")("format", po::value(&format)->default_value("text"), "text | json");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (files.empty()) throw UsageError("vqsim check needs at least one fio output or manifest, e.g. vqsim check result.json");
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!scenario.empty()) scenario = resolve_scenario(scenario);
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
  std::vector<bool> plain_file;          // per Measured: from a fio output named on the command line
  std::vector<std::size_t> input_index;  // per Measured: the input it came from
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
      // Every run of the file (two outputs pasted one after the other are two runs), each named
      // in its findings when there are several.
      const auto finals = parsed.back().final_results();
      for (std::size_t k = 0; k < finals.size(); ++k) {
        const std::string source =
            finals.size() == 1 ? f : f + " (run " + std::to_string(k + 1) + " of " + std::to_string(finals.size()) + ")";
        std::vector<check::Measured> run = check::measured_from_result(*finals[k], source);
        // A job that did no I/O has no measured direction for the rules to look at: a failed run
        // (fio's error= set, e.g. 5 = EIO at the first I/O) is an error finding, else a warning.
        for (const auto& job : finals[k]->jobs) {
          if (std::any_of(run.begin(), run.end(), [&](const check::Measured& m) { return m.job == job.name; })) continue;
          if (job.trim.total_ios.value_or(0) > 0 || job.trim.io_bytes.value_or(0) > 0) continue;  // trim only: not checked
          const int err = job.error.value_or(0);
          check::Finding x;
          x.severity = err != 0 ? check::Severity::error : check::Severity::warning;
          x.rule = err != 0 ? "errors" : "no-io";
          x.subject = source + ": job '" + job.name + "'";
          x.evidence = err != 0 ? "err=" + std::to_string(err) + " and no I/O completed in any direction"
                                : "no I/O completed in any direction";
          x.cause = err != 0 ? "the run failed: fio stopped the job at its first I/O error, so there are no figures to check"
                             : "the job did not run (time_based with runtime 0, size 0, or a filter that skipped it)";
          no_io.push_back(std::move(x));
          if (std::find(in.sources.begin(), in.sources.end(), source) == in.sources.end()) in.sources.push_back(source);
        }
        for (auto& m : run) got.push_back(std::move(m));
      }
    }
    in.measured = got.size();
    for (const auto& m : got)
      if (std::find(in.sources.begin(), in.sources.end(), m.source) == in.sources.end()) in.sources.push_back(m.source);
    for (auto& m : got) {
      ms.push_back(std::move(m));
      plain_file.push_back(!is_manifest(f));
      input_index.push_back(inputs.size());
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
  // The physics rules need a device class: --device, else each run's backend.kind, else (with
  // --scenario) the scenario's backend, which is the device the user says the run measured.
  std::vector<check::Measured> physical = ms;
  if (device.empty() && !scenario.empty()) {
    models::IoScenario sc;
    try {
      sc = models::load_io_scenario(scenario, overrides);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    for (auto& m : physical) {
      if (m.setup.count("backend.kind")) continue;
      m.setup["backend.kind"] = models::backend_name(sc.backend.kind);
      m.setup.emplace("backend.leg", models::backend_name(sc.backend.leg));
      m.setup.emplace("backend.rpm", std::to_string(sc.backend.rpm));
    }
  }
  try {
    add(check::check_physics(physical, device));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--device: ") + e.what());
  }
  // Say where they were not applied: "no findings" must not read as "within the device's bounds".
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<const check::Measured*> unjudged;
    std::set<std::string> unknown_kinds;
    for (std::size_t k = 0; k < physical.size(); ++k) {
      if (input_index[k] != i || !check::physics_class(physical[k], device).empty()) continue;
      unjudged.push_back(&physical[k]);
      if (auto it = physical[k].setup.find("backend.kind"); it != physical[k].setup.end() && !it->second.empty())
        unknown_kinds.insert(it->second);
    }
    if (unjudged.empty()) continue;
    check::Finding x;
    x.severity = check::Severity::info;
    x.rule = "physics-not-applied";
    x.subject = unjudged[0]->source;
    if (unjudged.size() > 1)
      x.subject +=
          " (and " + std::to_string(unjudged.size() - 1) + " more measured direction" + (unjudged.size() > 2 ? "s)" : ")");
    x.evidence = "the device-physics rules (the IOPS, bandwidth and latency bounds of a device class) were not applied to " +
                 std::to_string(unjudged.size()) + " of " + std::to_string(inputs[i].measured) + " measured direction" +
                 (inputs[i].measured == 1 ? "" : "s") + ": no device class is known";
    if (!unknown_kinds.empty()) {
      x.evidence += " (backend.kind";
      for (const auto& kind : unknown_kinds) x.evidence += " '" + kind + "'";
      x.evidence += " is not a device class)";
    } else {
      x.evidence +=
          " (no --device, no backend.kind in the run's setup" + std::string(scenario.empty() ? ", no --scenario)" : ")");
    }
    x.cause = "to apply them, name the device: --device KIND (" + classes +
              "), or backend.kind in a manifest run's `set`, or "
              "--scenario FILE (the device is its backend.kind)";
    findings.push_back(std::move(x));
  }
  // Runs measured beside other guests (a manifest's co_running): the rules on one run as measured
  // apply to them; the model's envelope and the spread of repeats would judge them against one VM
  // alone (calibrate models their neighbours; check does not yet), so they are left out of those,
  // and a warning per manifest says so.
  std::vector<check::Measured> alone;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::set<std::string> runs;
    std::int64_t most = 0;
    const check::Measured* first = nullptr;
    for (std::size_t k = 0; k < ms.size(); ++k) {
      if (input_index[k] != i || ms[k].co_running.empty()) continue;
      if (!first) first = &ms[k];
      runs.insert(ms[k].run_name);
      std::int64_t others = 0;
      for (const auto& c : ms[k].co_running) others += c.count;
      most = std::max(most, others);
    }
    if (!first) continue;
    std::set<std::string> all;
    for (std::size_t k = 0; k < ms.size(); ++k)
      if (input_index[k] == i) all.insert(ms[k].run_name);
    check::Finding x;
    x.severity = check::Severity::warning;
    x.rule = "co-running";
    x.subject = first->source + (runs.size() > 1 ? " (and " + std::to_string(runs.size() - 1) + " more runs)" : "");
    x.evidence = std::to_string(runs.size()) + " of " + std::to_string(all.size()) +
                 " runs ran beside other guests (co_running, up to " + std::to_string(most) + (most == 1 ? " other" : " others") +
                 "): the consistency, setup and device-physics rules were applied to each as measured; the "
                 "model's envelope and the run-to-run spread were not";
    x.cause =
        "the envelope and the spread judge a run as one VM alone, and beside other guests it would look slow or noisy; "
        "vqsim calibrate models the guests beside each such run (several VMs on one host) and fits them with the others";
    findings.push_back(std::move(x));
  }
  for (const auto& m : ms)
    if (m.co_running.empty()) alone.push_back(m);
  if (!scenario.empty()) {
    try {
      add(check::check_envelope(alone, scenario, overrides, threads));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  // Repeated runs: the same setup, job and direction. A manifest states each run's setup, so its
  // runs with the same `set` are repeats. A fio output does not say which QEMU knobs it ran
  // under (seed 002's two runs differ in cache mode and IOThread, invisibly to fio), so plain
  // fio files count as repeats only when --repeats says so. The disks fio's disk stats name are
  // part of the setup: two runs of one job file on different disks (seed 000) are not repeats.
  std::string spread_scenario = scenario;
  if (spread_scenario.empty())
    if (const auto dir = data_dir()) spread_scenario = (*dir / "scenarios" / "default.toml").string();
  // Without a scenario, check_spread says the spread was not checked and how to check it.
  if (!spread_scenario.empty() && !std::filesystem::exists(spread_scenario)) spread_scenario.clear();
  auto spread = [&](const std::vector<check::Measured>& runs, bool given_as_repeats) {
    try {
      add(given_as_repeats ? check::check_repeats(runs, spread_scenario, overrides, threads)
                           : check::check_spread(runs, spread_scenario, overrides, threads));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  };
  std::map<std::tuple<std::map<std::string, std::string>, std::string, std::string, std::string>, std::vector<check::Measured>>
      same;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const check::Measured& m = ms[i];
    if (plain_file[i] || !m.co_running.empty()) continue;
    std::string disks;
    if (m.result)
      for (const auto& d : m.result->disks) disks.append(disks.empty() ? "" : ",").append(d.name);
    // Clones of one job and the clients of one client/server run share a source: they ran in
    // parallel, they are not repeats.
    auto& runs = same[{m.setup, m.job, m.dir, disks}];
    if (std::none_of(runs.begin(), runs.end(), [&](const check::Measured& x) { return x.source == m.source; })) runs.push_back(m);
  }
  for (const auto& [k, runs] : same)
    if (runs.size() >= 2) spread(runs, false);

  // --repeats: every fio file named is one run of the same jobs. Each job and direction is
  // compared across all of them, whatever each file's format; check_repeats says when their
  // setups differ. A file that cannot be compared is named with the reason.
  if (repeats) {
    std::vector<std::size_t> plain;  // inputs that are fio files with a measured direction
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (!is_manifest(inputs[i].path) && inputs[i].measured > 0) plain.push_back(i);
    // Jobs match by name, unless every file holds one job: then its name may differ.
    std::vector<std::set<std::string>> job_names(inputs.size());
    for (std::size_t k = 0; k < ms.size(); ++k)
      if (plain_file[k]) job_names[input_index[k]].insert(ms[k].job);
    const bool one_job_each = std::all_of(plain.begin(), plain.end(), [&](std::size_t i) { return job_names[i].size() == 1; });
    using Slot = std::pair<std::string, std::string>;  // job, direction
    std::map<Slot, std::vector<std::size_t>> slots;    // -> indices into ms, one per input
    std::vector<Slot> slot_order;
    std::map<std::size_t, std::set<Slot>> slots_of;  // input -> its slots
    for (std::size_t k = 0; k < ms.size(); ++k) {
      if (!plain_file[k]) continue;
      const Slot slot{one_job_each ? std::string() : ms[k].job, ms[k].dir};
      auto& at = slots[slot];
      if (at.empty()) slot_order.push_back(slot);
      // Clones of one job (numjobs without group_reporting) ran in parallel: the first stands for them.
      if (std::none_of(at.begin(), at.end(), [&](std::size_t x) { return input_index[x] == input_index[k]; })) at.push_back(k);
      slots_of[input_index[k]].insert(slot);
    }
    auto slot_text = [&](const Slot& s) {
      const std::string job = s.first.empty() ? ms[slots[s][0]].job : s.first;
      return "job '" + job + "' " + s.second;
    };
    if (plain.size() == 1) {
      check::Finding x;
      x.severity = check::Severity::warning;
      x.rule = "repeats";
      x.subject = inputs[plain[0]].path;
      x.evidence = "--repeats was given with one fio output: there is no other run to compare it with";
      x.cause = "--repeats compares two or more fio outputs of one setup (the spread of repeated runs); name every run's file";
      findings.push_back(std::move(x));
    } else if (plain.size() > 1) {
      // Files that do not hold the same jobs and directions did not run one job file.
      bool all_same = true;
      for (std::size_t i : plain) all_same = all_same && slots_of[i] == slots_of[plain[0]];
      if (!all_same) {
        check::Finding x;
        x.severity = check::Severity::error;
        x.rule = "not-repeats";
        x.subject = std::to_string(plain.size()) + " fio outputs given as repeats";
        x.evidence = "they do not hold the same jobs and directions:";
        for (const auto& s : slot_order) {
          x.evidence += " " + slot_text(s) + " in";
          const auto& at = slots[s];
          for (std::size_t j = 0; j < at.size(); ++j) x.evidence += (j ? ", " : " ") + inputs[input_index[at[j]]].path;
          if (at.size() < plain.size()) {
            x.evidence += ", not in";
            bool first = true;
            for (std::size_t i : plain)
              if (!slots_of[i].count(s)) x.evidence += (first ? " " : ", ") + inputs[i].path, first = false;
          }
          x.evidence += ";";
        }
        x.evidence.pop_back();
        x.cause =
            "--repeats compares each job and direction across all the files given, but these ran different jobs or a "
            "different rw (or other job names): a job and direction found in one file only was not compared. Give runs of "
            "one job file, or check them without --repeats";
        findings.push_back(std::move(x));
      }
      for (const auto& s : slot_order) {
        std::vector<check::Measured> runs;
        for (std::size_t k : slots[s]) runs.push_back(ms[k]);
        if (runs.size() >= 2) spread(runs, true);
      }
    }
  }

  std::stable_sort(findings.begin(), findings.end(),
                   [](const auto& a, const auto& b) { return rank(a.severity) < rank(b.severity); });
  int errors = 0, warnings = 0, notes = 0;
  for (const auto& f : findings)
    (f.severity == check::Severity::error ? errors : f.severity == check::Severity::warning ? warnings : notes)++;
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
      nlohmann::ordered_json j = {{"severity", check::severity_name(f.severity)},
                                  {"rule", f.rule},
                                  {"subject", f.subject},
                                  {"evidence", f.evidence},
                                  {"cause", f.cause}};
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
  std::cout << "\n"
            << errors << (errors == 1 ? " error, " : " errors, ") << warnings << (warnings == 1 ? " warning, " : " warnings, ")
            << notes << (notes == 1 ? " note" : " notes") << "\n";
  std::cout << (status == 3 ? "exit 3: at least one result is implausible\n" : "exit 0: nothing implausible\n");
  return status;
}

}  // namespace vqsim::cli
