#include "calibration/fit/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"

namespace vqsim::fit {

namespace {

// Setup keys calibration controls itself, or that fio reports but the model does not take.
bool controlled(const std::string& key) {
  return key == "workload.runtime" || key == "workload.ramp_time" || key == "workload.ios" || key == "run.seed" ||
         key == "run.replications";
}

std::string normalized(const std::string& key, const std::string& value) {
  if (key == "workload.ioengine" && value == "aio") return "libaio";
  if (key == "workload.rw" && value == "readwrite") return "rw";
  return value;
}

bool same_value(const std::string& key, const std::string& a, const std::string& b) {
  if (check::detail::plain_number(a) && check::detail::plain_number(b)) {
    const double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
    return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), 1.0);
  }
  return normalized(key, a) == normalized(key, b);
}

std::string run_where(const std::string& manifest, const check::Measured& m) {
  std::string w = manifest;
  if (m.manifest_line > 0) w.append(":").append(std::to_string(m.manifest_line));
  return w.append(": run '").append(m.run_name).append("'");
}

void add_targets(const check::Measured& m, std::vector<Target>& out) {
  const std::string dir = m.dir == "mixed" ? "total" : m.dir;
  auto add = [&](const std::string& metric, const char* kind, const std::optional<double>& v, double sigma) {
    if (v && std::isfinite(*v) && *v > 0) out.push_back({dir + "." + metric, kind, *v, sigma});
  };
  // A figure given with its standard deviation over repeated runs: its residual is measured in
  // that spread where it is wider than the 3% a single measurement is assumed to err by, and a
  // fit within mean ± sd meets the bar (Target::spread_lo/hi).
  auto add_mean = [&](const std::string& metric, const char* kind, const std::optional<double>& v) {
    const std::size_t before = out.size();
    add(metric, kind, v, 0.03);
    const auto sd = m.replicate_stddev.find(metric);
    if (out.size() == before || sd == m.replicate_stddev.end()) return;
    Target& t = out.back();
    t.sigma_rel = std::max(t.sigma_rel, sd->second / t.measured);
    t.spread_lo = std::max(0.0, t.measured - sd->second);
    t.spread_hi = t.measured + sd->second;
  };
  if (m.iops && *m.iops > 0)
    add_mean("iops", "throughput", m.iops);
  else
    add_mean("bw_kib", "throughput", m.bw_kib);
  if (m.lat_mean_us && *m.lat_mean_us > 0)
    add_mean("lat_mean_us", "mean latency", m.lat_mean_us);
  else if (dir != "total")
    add_mean("clat_mean_us", "mean latency", m.clat_mean_us);
  // Each thread's CPU time per I/O (the run's, on its first direction): its measurement reads
  // the thread's CPU seconds over a job that also starts and stops fio (a few percent), so it
  // weighs less than the run's throughput.
  for (const auto& [metric, v] : m.cpu_us_per_io)
    if (std::isfinite(v) && v > 0) out.push_back({metric, "cpu", v, 0.05});
  // The counts per I/O (interrupts, each kind of thread's wake-ups) span the same window, and the
  // model's are its own events' (a thread's wake-ups also count the recording's other sleeps),
  // so they weigh half as much as the CPU times.
  for (const auto& [metric, v] : m.counts_per_io)
    if (std::isfinite(v) && v > 0) out.push_back({metric, "count", v, 0.10});
  if (dir == "total") return;  // vqsim keeps percentiles per direction only
  add("clat_p50_us", "p50", m.clat_p50_us, 0.05);
  add("clat_p99_us", "p99", m.clat_p99_us, 0.10);
  add("clat_p99.9_us", "p99.9", m.clat_p999_us, 0.20);
}

// Adds `note` unless a note that begins with `head` is there already: said once per kind.
void note_once(std::vector<std::string>& notes, const std::string& head, const std::string& note) {
  if (std::none_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.rfind(head, 0) == 0; }))
    notes.push_back(note);
}

// Takes a run's counts per I/O out of its targets; true when it had any.
bool remove_counts(CalRun& r) {
  return std::erase_if(r.targets, [](const Target& t) { return t.kind == "count"; }) > 0;
}

// A thread's measured CPU time, and a count per I/O, is fitted where the model has that work or
// those events; CPU time needs host.cores, since the simulation times the threads on the host's
// cores, and counts a single VM (the surrogate solves one). A figure the setup has none of (the
// main loop beside an IOThread under KVM, where it gets no work per I/O) is left out and said
// once per metric in `notes`.
void drop_unmodelled_per_io(CalRun& r, std::vector<std::string>& notes) {
  const auto per_io = [](const Target& t) { return t.kind == "cpu" || t.kind == "count"; };
  if (std::none_of(r.targets.begin(), r.targets.end(), per_io)) return;
  const bool cpu = std::any_of(r.targets.begin(), r.targets.end(), [](const Target& t) { return t.kind == "cpu"; });
  if (cpu && (r.scenario.host.cores <= 0 || r.scenario.multi_vm()))
    throw models::ConfigError(r.where + ": measured CPU time per I/O (cpu.*_us_per_io) is fitted on a single VM whose scenario " +
                              "sets host.cores (the host's cores its threads share); set host.cores in the run's set or the base "
                              "scenario, or remove the cpu.* figures");
  if (r.scenario.multi_vm()) {
    remove_counts(r);
    const std::string head = "count.* figures of runs beside other guests";
    note_once(notes, head, head + " (" + r.name + ", and others like it): not fitted");
    return;
  }
  models::IoMvaResult mva;
  try {
    mva = models::solve_io_mva(r.scenario);
  } catch (const std::exception& e) {
    throw models::ConfigError(r.where +
                              ": measured figures per I/O (cpu.*, count.*), but the MVA cannot solve this setup: " + e.what());
  }
  std::vector<Target> kept;
  for (Target& t : r.targets) {
    if (per_io(t) && !(models::io_metric_mva(mva, r.scenario, t.metric) > 0)) {
      note_once(notes, t.metric + " is measured",
                t.metric + " is measured where the model " +
                    (t.kind == "cpu" ? "puts no work per I/O on that thread" : "has none of these events") + " (" + r.name +
                    ", and others like it): not fitted");
      continue;
    }
    kept.push_back(std::move(t));
  }
  r.targets = std::move(kept);
}

}  // namespace

void leave_out_counts(Dataset& d) {
  int runs = 0;
  for (CalRun& r : d.runs) runs += remove_counts(r);
  if (runs == 0) return;
  std::erase_if(d.notes, [](const std::string& n) { return n.rfind("count.", 0) == 0; });
  d.notes.push_back("the counts per I/O (count.*) of " + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") +
                    " are not fitted; vqsim calibrate --fit-counts fits them");
}

double tolerance_of(const std::string& kind) { return kind == "throughput" || kind == "mean latency" ? 0.05 : 0.15; }

bool within_bar(const std::string& kind, double model, double measured, double spread_lo, double spread_hi) {
  if (measured > 0 && std::fabs(model - measured) / measured <= tolerance_of(kind)) return true;
  return spread_hi > 0 && model >= spread_lo && model <= spread_hi;
}

namespace {
// Runs of one setup (one simulation_key, each alone on its host) are replicates: each figure's
// spread takes in the range of that figure over all of them.
void add_replicate_spreads(std::vector<CalRun>& runs) {
  std::map<std::string, std::vector<CalRun*>> groups;
  for (CalRun& r : runs)
    if (!r.co_running) groups[r.simulation_key].push_back(&r);
  for (auto& [key, group] : groups) {
    if (group.size() < 2) continue;
    std::map<std::string, std::pair<double, double>> range;  // metric -> min, max measured
    std::map<std::string, int> count;
    for (const CalRun* r : group)
      for (const Target& t : r->targets) {
        auto [it, fresh] = range.try_emplace(t.metric, t.measured, t.measured);
        if (!fresh) it->second = {std::min(it->second.first, t.measured), std::max(it->second.second, t.measured)};
        ++count[t.metric];
      }
    for (CalRun* r : group)
      for (Target& t : r->targets) {
        if (count[t.metric] < 2) continue;
        const auto [lo, hi] = range[t.metric];
        t.spread_lo = t.spread_hi > 0 ? std::min(t.spread_lo, lo) : lo;
        t.spread_hi = std::max(t.spread_hi, hi);
      }
  }
}
}  // namespace

std::vector<std::string> simulation_overrides(const CalRun& run, int replications, std::uint64_t seed) {
  // Enough I/Os that a replication sees every outstanding I/O complete many times over.
  const auto& w = run.scenario.workload;
  const double outstanding = static_cast<double>(w.numjobs) * w.effective_depth();
  const double ios = std::clamp(200.0 * outstanding, 40000.0, 200000.0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "workload.ios=%.0f", ios);
  return {"workload.runtime=0", buf, "run.replications=" + std::to_string(replications), "run.seed=" + std::to_string(seed)};
}

models::ScenarioSource simulation_source(const CalRun& run, const models::ScenarioSource& base) {
  if (run.co_running) return *run.co_running->source;
  models::ScenarioSource s = base;
  for (const std::string& o : run.overrides) s.set(o);
  return s;
}

models::ScenarioSource mva_source(const CalRun& run, const models::ScenarioSource& base) {
  models::ScenarioSource s = base;
  for (const std::string& o : run.overrides) s.set(o);
  if (run.co_running) s.set("vm.count", run.co_running->vms);
  return s;
}

void set_parameter(models::ScenarioSource& source, const CalRun& run, bool simulated, const std::string& key, double value) {
  if (simulated && run.co_running)
    set_co_running_parameter(source, *run.co_running, key, value);
  else
    source.set(key, value);
}

Dataset load_dataset(const std::string& manifest_path, const std::string& base_path) {
  Dataset d;
  d.manifest_path = manifest_path;
  d.base_path = base_path;
  std::vector<fio::FioResult> keep;
  std::vector<std::string> names;
  const std::vector<check::Measured> ms = check::measured_from_manifest(manifest_path, keep, &names);
  const std::vector<std::string> keys = models::io_scenario_keys();
  const std::set<std::string> known(keys.begin(), keys.end());

  // Runs measured beside other guests (co_running): simulated as a scenario of several VMs, the
  // run's own first (co_running.h), so that the neighbours' load is theirs, not slower stages.
  std::map<std::size_t, std::vector<check::CoRunning>> co_running;
  std::optional<models::IoScenario> base_alone;
  std::vector<std::string> unstated;         // runs whose workload nothing states, one error each
  std::map<std::string, std::size_t> index;  // run name -> d.runs
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second)
      throw models::ConfigError(manifest_path + ": two runs are named '" + n + "'; run names must be unique");

  for (const check::Measured& m : ms) {
    const std::string where = run_where(manifest_path, m);
    auto it = index.find(m.run_name);
    if (it == index.end()) {
      if (!m.has_set)
        throw models::ConfigError(
            where +
            ": no `set`: say which setup this run measured (e.g. set = { \"guest.driver\" = \"virtio-blk\" }), "
            "or write set = {} when it is exactly the base scenario");
      CalRun r;
      r.name = m.run_name;
      r.where = where;
      r.weight = m.weight;
      // The fio output's own options, checked against the manifest's set.
      if (m.result && m.job_result) {
        for (const auto& pure : check::measured_from_result(*m.result, "")) {
          if (pure.job_result != m.job_result || pure.dir != m.dir) continue;
          for (const auto& [k, v] : m.manifest_set) {
            const auto f = pure.setup.find(k);
            if (f != pure.setup.end() && !same_value(k, f->second, v))
              throw models::ConfigError(where + ": set " + k + " = " + v + " contradicts the fio output, which ran with " + k +
                                        " = " + f->second + "; remove it from set or fix the file");
          }
        }
      }
      // (The set's keys and values were checked when the manifest was read; fio's own options
      // that are not scenario keys, such as fio.ioengine, stay out.)
      for (const auto& [k, v] : m.setup) {
        if (controlled(k) || !known.count(k)) continue;
        r.overrides.push_back(check::detail::override_of(k, v));
      }
      // The workload must be the one the run measured, never the base scenario's by accident:
      // what fio's output implies (its defaults in JSON, a text header's jobs=N) is applied,
      // and a run whose output does not say (terse) must say it in its set.
      for (const auto& [k, v] : check::detail::stated_workload(m))
        if (!m.setup.count(k)) r.overrides.push_back(check::detail::override_of(k, v));
      if (const auto missing = check::detail::unstated_workload(m); !missing.empty())
        unstated.push_back(where + ": " + check::detail::unstated_workload_why(m, missing) +
                           "; calibration does not take the workload from the base scenario unless told: " +
                           check::detail::unstated_workload_fix(missing));
      if (!m.co_running.empty()) co_running[d.runs.size()] = m.co_running;
      index[m.run_name] = d.runs.size();
      d.runs.push_back(std::move(r));
      it = index.find(m.run_name);
    }
    CalRun& r = d.runs[it->second];
    // Reads and writes of one job may differ in block size (fio's bs=r,w).
    if (m.dir == "write") {
      const auto bs = m.setup.find("workload.bs");
      if (bs != m.setup.end() && !m.manifest_set.count("workload.bs"))
        r.overrides.push_back(check::detail::override_of("workload.bs_write", bs->second));
    }
    const std::size_t before = r.targets.size();
    add_targets(m, r.targets);
    for (std::size_t i = before; i < r.targets.size(); ++i)
      for (std::size_t j = 0; j < before; ++j)
        if (r.targets[j].metric == r.targets[i].metric)
          throw models::ConfigError(where + ": " + r.targets[i].metric +
                                    " is measured twice (a fio output with several jobs? "
                                    "use group_reporting or one run per job)");
  }
  if (!unstated.empty()) throw models::ConfigError(check::detail::error_lines(unstated));
  for (const auto& n : names)
    if (!index.count(n))
      throw models::ConfigError(manifest_path + ": run '" + n + "': its fio output has no I/O to fit (a failed or empty run?)");

  for (CalRun& r : d.runs) {
    if (r.targets.empty())
      throw models::ConfigError(r.where + ": nothing to fit: give iops or bw_kib, lat_mean_us or percentiles (positive numbers)");
    try {
      r.scenario = models::load_io_scenario(base_path, r.overrides);
    } catch (const models::ConfigError& e) {
      throw models::ConfigError(r.where + ": its setup does not make a valid scenario on " + base_path + ": " + e.what());
    }
    r.simulation_key.clear();
    for (const auto& o : r.overrides) r.simulation_key.append(o).append("\n");
    if (const auto it = co_running.find(static_cast<std::size_t>(&r - d.runs.data())); it != co_running.end()) {
      if (!base_alone) base_alone = models::load_io_scenario(base_path);
      r.co_running = co_running_model(base_path, *base_alone, r.overrides, it->second, manifest_path, r.where);
      r.scenario = r.co_running->source->scenario();
      r.simulation_key.append("co_running=").append(r.co_running->signature);
    }
    drop_unmodelled_per_io(r, d.notes);
    const double reads = r.scenario.workload.read_fraction;
    for (const Target& t : r.targets) {
      const std::string dir = t.metric.substr(0, t.metric.find('.'));
      if ((dir == "read" && reads <= 0) || (dir == "write" && reads >= 1))
        throw models::ConfigError(r.where + ": measured " + t.metric + " but its setup (workload.rw = " + r.scenario.workload.rw +
                                  ") does no " + dir + "s; set workload.rw");
    }
  }
  add_replicate_spreads(d.runs);
  return d;
}

}  // namespace vqsim::fit
