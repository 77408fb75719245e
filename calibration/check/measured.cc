// The measured views the check rules work on: every active direction of every job of a fio
// result, and the runs of a measurement manifest (fio output files or inline numbers).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <utility>

#include <toml++/toml.h>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "calibration/fio/parse.h"
#include "models/config.h"
#include "models/core_share.h"
#include "models/fio_jobfile.h"
#include "models/scenario.h"

namespace vqsim::check {
namespace {

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The number a fio value starts with ("4" of "4k", "1.5" of "1.5ms") and the unit after it.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  try {
    return std::make_pair(std::stod(text.substr(0, i)), text.substr(i));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// fio's size syntax ("4k", "4K", "1m", "4096", "4KiB") read as fio reads it, with the job's
// kb_base (fio's default 1024 makes "4KiB" 4000 bytes and "4KB" 4096): bytes, or nullopt.
std::optional<double> fio_size(const std::string& text, unsigned kb_base = 1024) {
  if (text.empty()) return std::nullopt;
  try {
    return static_cast<double>(fio::parse_fio_size_bytes(text, kb_base));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A block size for one direction: "4k", "4k,8k" (read,write,trim), "4K-4K/4K-4K/4K-4K" (fio's
// header: ranges per direction). Only a fixed size counts.
std::optional<double> block_size(const std::string& bs, int dir_index, unsigned kb_base) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : bs) {
    if (c == ',' || c == '/') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  std::string part = parts[std::min<std::size_t>(static_cast<std::size_t>(dir_index), parts.size() - 1)];
  if (part.empty()) part = parts[0];
  const auto dash = part.find('-');
  if (dash != std::string::npos) {
    const auto lo = fio_size(part.substr(0, dash), kb_base);
    const auto hi = fio_size(part.substr(dash + 1), kb_base);
    if (!lo || !hi || *lo != *hi) return std::nullopt;
    return lo;
  }
  return fio_size(part, kb_base);
}

// fio's time syntax for runtime/ramp_time: seconds by default, or with a unit suffix.
std::optional<double> fio_seconds(const std::string& text) {
  const auto parsed = number_and_unit(text);
  if (!parsed) return std::nullopt;
  const double v = parsed->first;
  const std::string& u = parsed->second;
  if (u.empty() || u == "s") return v;
  if (u == "ms") return v / 1e3;
  if (u == "us" || u == "usec") return v / 1e6;
  if (u == "m" || u == "min") return v * 60;
  if (u == "h") return v * 3600;
  if (u == "d") return v * 86400;
  return std::nullopt;
}

std::string seconds_text(double s) { return number_text(s) + "s"; }

// The options fio printed, job options over global ones.
std::map<std::string, std::string> merged_options(const fio::FioResult& r, const fio::JobResult& j) {
  std::map<std::string, std::string> o = r.global_options;
  for (const auto& [k, v] : j.options) o[k] = v;
  return o;
}

// Scenario keys from fio's options (the units and spellings check.h documents).
std::map<std::string, std::string> setup_from_options(const std::map<std::string, std::string>& o, int dir_index) {
  std::map<std::string, std::string> s;
  auto get = [&](const char* k) -> const std::string* {
    auto it = o.find(k);
    return it == o.end() ? nullptr : &it->second;
  };
  if (const auto* v = get("rw"))
    s["workload.rw"] = v->substr(0, v->find(':'));
  else if (const auto* v2 = get("readwrite"))
    s["workload.rw"] = v2->substr(0, v2->find(':'));
  const auto* kb = get("kb_base");
  const unsigned kb_base = kb && *kb == "1000" ? 1000 : 1024;
  if (const auto* v = get("bs")) {
    if (auto b = block_size(*v, dir_index, kb_base)) s["workload.bs"] = number_text(*b);
  } else if (const auto* v2 = get("blocksize")) {
    if (auto b = block_size(*v2, dir_index, kb_base)) s["workload.bs"] = number_text(*b);
  }
  if (get("bsrange") || get("bssplit")) s.erase("workload.bs");
  if (const auto* v = get("iodepth")) s["workload.iodepth"] = *v;
  if (const auto* v = get("numjobs")) s["workload.numjobs"] = *v;
  // The scenario knows a few engines; any engine is kept as fio spelled it under fio.ioengine
  // (the rules read that), and workload.ioengine only when the scenario accepts it.
  if (const auto* v = get("ioengine")) {
    s["fio.ioengine"] = *v;
    static const std::set<std::string> modelled = {"psync", "sync", "pvsync", "libaio", "io_uring", "aio"};
    if (modelled.count(*v)) s["workload.ioengine"] = *v;
  }
  if (const auto* v = get("rwmixread"))
    s["workload.rwmixread"] = *v;
  else if (const auto* w = get("rwmixwrite")) {
    try {
      s["workload.rwmixread"] = number_text(100.0 - std::stod(*w));
    } catch (const std::exception&) {
    }
  }
  if (const auto* v = get("direct"))
    s["workload.direct"] = (*v == "0" || *v == "false") ? "false" : "true";
  else if (const auto* b = get("buffered"))
    s["workload.direct"] = (*b == "0" || *b == "false") ? "true" : "false";
  if (const auto* v = get("size")) s["workload.size"] = *v;
  if (const auto* v = get("runtime")) {
    if (auto t = fio_seconds(*v)) s["workload.runtime"] = seconds_text(*t);
  }
  if (const auto* v = get("ramp_time")) {
    if (auto t = fio_seconds(*v)) s["workload.ramp_time"] = seconds_text(*t);
  }
  if (const auto* v = get("rate_iops")) s["workload.rate_iops"] = *v;
  if (const auto* v = get("thinktime")) {
    // fio's thinktime is in microseconds unless suffixed.
    if (auto t = fio_seconds(*v)) {
      const bool bare = v->find_first_not_of("0123456789.") == std::string::npos;
      s["workload.thinktime"] = number_text(bare ? *t : *t * 1e6) + "us";
    }
  }
  return s;
}

std::optional<double> percentile(const fio::LatencyStats& l, double p) {
  for (const auto& [q, v] : l.percentiles)
    if (std::fabs(q - p) < 1e-6) return v / 1e3;
  return std::nullopt;
}

Measured from_direction(const fio::FioResult& r, const fio::JobResult& j, const fio::DirectionStats& d, const char* dir,
                        int dir_index, const std::string& source) {
  Measured m;
  m.source = source;
  m.job = j.name;
  m.dir = dir;
  m.result = &r;
  m.job_result = &j;
  m.iops = d.iops;
  if (d.bw_bytes_per_s) m.bw_kib = *d.bw_bytes_per_s / 1024.0;
  if (d.lat.mean_ns)
    m.lat_mean_us = *d.lat.mean_ns / 1e3;
  else if (d.clat.mean_ns && d.slat.mean_ns)
    m.lat_mean_us = (*d.clat.mean_ns + *d.slat.mean_ns) / 1e3;
  if (d.clat.mean_ns) m.clat_mean_us = *d.clat.mean_ns / 1e3;
  m.clat_p50_us = percentile(d.clat, 50);
  m.clat_p99_us = percentile(d.clat, 99);
  m.clat_p999_us = percentile(d.clat, 99.9);
  if (d.runtime_ms) m.runtime_s = *d.runtime_ms / 1e3;
  if (d.total_ios) m.total_ios = static_cast<double>(*d.total_ios);
  m.setup = setup_from_options(merged_options(r, j), dir_index);
  return m;
}

[[noreturn]] void fail(const std::string& path, const toml::node* node, const std::string& what) {
  std::string msg = path;
  if (node && node->source().begin.line > 0) msg += ":" + std::to_string(node->source().begin.line);
  msg += ": ";
  msg += what;
  throw models::ConfigError(msg);
}

// The value as TOML writes it (a string quoted), for the scenario's own value checks.
std::string toml_text(const toml::node& n) {
  if (auto s = n.value_exact<std::string>()) {
    std::string q = "\"";
    for (char c : *s) {
      if (c == '"' || c == '\\') q += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;  // a control character cannot be a key's value anyway
      q += c;
    }
    return q + "\"";
  }
  if (auto i = n.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = n.value_exact<double>()) {
    if (std::isnan(*d)) return "nan";
    if (std::isinf(*d)) return *d > 0 ? "inf" : "-inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    std::string t = buf;
    if (t.find_first_of(".e") == std::string::npos) t += ".0";  // stays a float
    return t;
  }
  if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
  return "";
}

// A run's `set` as dotted keys: TOML reads a bare dotted key (set = { workload.iodepth = 4 }) as
// nested tables, the quoted form ("workload.iodepth" = 4) as one key; both mean the same.
void flatten_set(const toml::table& t, const std::string& prefix, std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = v.as_table())
      flatten_set(*sub, key, out);
    else
      out.emplace_back(key, &v);
  }
}

std::string at_line(const std::string& path, const toml::node& node) {
  return node.source().begin.line > 0 ? path + ":" + std::to_string(node.source().begin.line) : path;
}

std::string toml_value_text(const toml::node& n) {
  if (auto s = n.value<std::string>(); s && n.is_string()) return *s;
  if (n.is_integer()) return std::to_string(*n.value<std::int64_t>());
  if (n.is_floating_point()) return number_text(*n.value<double>());
  if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
  return "";
}

// A `set` table's keys and values, each checked as a scenario would check it; every bad one is
// an error line of its own in `errors` (a misspelt key would otherwise describe nothing, silently).
// `where` names the run (and the co_running entry) for the error lines.
std::map<std::string, std::string> checked_set(const std::string& path, const toml::table& t, const std::string& where,
                                               std::vector<std::string>& errors) {
  std::map<std::string, std::string> out;
  std::vector<std::pair<std::string, const toml::node*>> flat;
  flatten_set(t, "", flat);
  for (const auto& [key, v] : flat) {
    const std::string at = at_line(path, *v) + ": " + where + ": set " + key + ": ";
    std::string value = toml_value_text(*v);
    if (value.empty() && !v->is_string()) {
      errors.push_back(at + "must be a number, string or boolean, e.g. \"" + key + "\" = 4");
      continue;
    }
    std::string checked = toml_text(*v);
    if (key == "workload.bs" && v->is_string()) {
      // A set holds scenario keys, so the scenario's units (docs/scenario.md, "Sizes"), not
      // fio's job-file reading of "4KiB".
      try {
        value = checked = number_text(static_cast<double>(models::parse_size_bytes(value)));
      } catch (const std::invalid_argument& e) {
        errors.push_back(at + e.what());
        continue;
      }
    }
    const std::string bad = models::io_scenario_value_error(key, checked);
    if (!bad.empty()) {
      const bool unknown = bad.rfind("unknown key", 0) == 0;
      errors.push_back(at + bad + (unknown ? "; a set names scenario keys (`vqsim keys` lists them)" : ""));
      continue;
    }
    out[key] = value;
  }
  return out;
}

// co_running = [{ count = K, set = { ... } }, ...]: the other guests that ran on the host beside
// this run (issue 19's consolidation), each entry K identical guests of the setup its set names.
std::vector<CoRunning> read_co_running(const std::string& path, const toml::node& node, const std::string& where,
                                       std::vector<std::string>& errors) {
  static const char* kExample = "e.g. co_running = [{ count = 2, set = { \"workload.iodepth\" = 16 } }]";
  const toml::array* a = node.as_array();
  if (!a) fail(path, &node, where + ": co_running must be an array of tables, " + kExample);
  std::vector<CoRunning> out;
  std::size_t i = 0;
  for (const auto& e : *a) {
    ++i;
    const std::string at = where + ": co_running entry " + std::to_string(i);
    const toml::table* t = e.as_table();
    if (!t) fail(path, &e, at + " is not a table; " + kExample);
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      if (key != "count" && key != "set" && key != "backend")
        fail(path, &v,
             at + ": unknown key '" + key + "'" + models::did_you_mean(key, {"count", "set", "backend"}) +
                 "; an entry has count (how many such guests), set (their setup) and backend (\"shared\" or \"own\")");
    }
    CoRunning c;
    c.line = static_cast<int>(e.source().begin.line);
    if (const toml::node* b = t->get("backend")) {
      const auto v = b->value<std::string>();
      if (!b->is_string() || (*v != "shared" && *v != "own"))
        fail(path, b,
             at + ": backend must be \"shared\" (these guests' disks were on the run's device, e.g. files on one host "
                  "disk) or \"own\" (each guest had a device of its own, e.g. its own null device or disk)");
      c.backend = *v;
    }
    const toml::node* count = t->get("count");
    if (!count) fail(path, &e, at + ": needs count, the number of such guests (an integer >= 1)");
    if (!count->is_integer() || *count->value<std::int64_t>() < 1)
      fail(path, count, at + ": count must be an integer >= 1 (how many guests of this setup ran beside the run)");
    c.count = *count->value<std::int64_t>();
    if (const toml::node* set = t->get("set")) {
      const toml::table* st = set->as_table();
      if (!st) fail(path, set, at + ": set must be a table of scenario keys, e.g. set = { \"workload.iodepth\" = 16 }");
      c.set = checked_set(path, *st, at, errors);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<Measured> measured_from_result(const fio::FioResult& r, const std::string& source) {
  std::vector<Measured> out;
  for (const auto& j : r.jobs) {
    if (j.mixed && j.mixed->active()) out.push_back(from_direction(r, j, *j.mixed, "mixed", 0, source));
    if (j.read.active()) out.push_back(from_direction(r, j, j.read, "read", 0, source));
    if (j.write.active()) out.push_back(from_direction(r, j, j.write, "write", 1, source));
  }
  return out;
}

std::vector<Measured> measured_from_manifest(const std::string& path, std::vector<fio::FioResult>& keep,
                                             std::vector<std::string>* run_names) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto line = e.source().begin.line;
    std::string msg = path;
    if (line > 0) msg += ":" + std::to_string(line);
    msg += ": not a valid manifest (TOML): ";
    msg += std::string(e.description());
    throw models::ConfigError(msg);
  }
  for (const auto& [k, v] : root) {
    const std::string key(k.str());
    if (key != "setup" && key != "run")
      fail(path, &v,
           "unknown top-level key '" + key + "'" + models::did_you_mean(key, {"setup", "run"}) +
               "; a manifest has [setup] and [[run]] tables");
  }
  const toml::array* runs = root["run"].as_array();
  if (!runs || runs->empty())
    fail(path, nullptr, "no [[run]] table; a manifest lists its runs as [[run]] with `file` or `measured`");

  static const std::vector<std::string> kRunFields = {"name", "file", "measured", "set", "weight", "base_workload", "co_running"};
  static const std::vector<std::string> kMetrics = {"iops",        "bw_kib",      "lat_mean_us",  "clat_mean_us",
                                                    "clat_p50_us", "clat_p99_us", "clat_p99.9_us"};
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  const std::string file_name = std::filesystem::path(path).filename().string();

  struct Pending {
    std::string name;
    std::map<std::string, std::string> set;
    std::optional<std::size_t> kept;  // index into keep
    std::string file;
    std::map<std::string, std::map<std::string, double>> inline_numbers;  // dir -> metric -> value
    std::map<std::string, std::map<std::string, double>> inline_stddev;   // dir -> metric -> its replicates' sd
    std::map<std::string, double> cpu_us_per_io;                          // cpu.<kind>_us_per_io -> value
    std::map<std::string, double> counts_per_io;                          // count.* -> value
    bool has_set = false;
    bool base_workload = false;
    double weight = 1;
    int line = 0;
    std::vector<CoRunning> co_running;
  };
  std::vector<Pending> pending;
  std::vector<fio::FioResult> parsed;
  std::vector<std::string> set_errors;  // of every run, reported together
  int index = 0;
  for (const auto& node : *runs) {
    ++index;
    const toml::table* run = node.as_table();
    if (!run) fail(path, &node, "run " + std::to_string(index) + " is not a table; write [[run]]");
    Pending p;
    for (const auto& [k, v] : *run) {
      const std::string key(k.str());
      if (std::find(kRunFields.begin(), kRunFields.end(), key) == kRunFields.end())
        fail(path, &v,
             "run " + std::to_string(index) + ": unknown key '" + key + "'" + models::did_you_mean(key, kRunFields) +
                 "; a run has name, file, measured, set, weight, base_workload and co_running");
    }
    if (const auto* n = run->get("name")) {
      if (!n->is_string()) fail(path, n, "run " + std::to_string(index) + ": name must be a string");
      p.name = *n->value<std::string>();
    } else {
      p.name = "#" + std::to_string(index);
    }
    const std::string where = "run '" + p.name + "'";
    p.line = static_cast<int>(node.source().begin.line);
    if (const auto* w = run->get("weight")) {
      const auto x = w->value<double>();
      if (!w->is_number() || !x || !std::isfinite(*x) || *x <= 0)
        fail(path, w, where + ": weight must be a number > 0 (default 1)");
      p.weight = *x;
    }
    if (const auto* b = run->get("base_workload")) {
      if (!b->is_boolean())
        fail(path, b,
             where + ": base_workload must be true or false (true: the base scenario's workload is the one this run ran)");
      p.base_workload = *b->value<bool>();
    }
    if (const auto* s = run->get("set")) {
      p.has_set = true;
      const toml::table* t = s->as_table();
      if (!t) fail(path, s, where + ": set must be a table of scenario keys, e.g. set = { \"workload.iodepth\" = 32 }");
      p.set = checked_set(path, *t, where, set_errors);
    }
    if (const auto* c = run->get("co_running")) p.co_running = read_co_running(path, *c, where, set_errors);
    const auto* file = run->get("file");
    const auto* measured = run->get("measured");
    if (!file && !measured) fail(path, &node, where + ": needs `file` (a fio output) or inline `measured` numbers");
    if (measured) {
      const toml::table* t = measured->as_table();
      if (!t) fail(path, measured, where + ": measured must be a table, e.g. measured = { \"read.iops\" = 151000 }");
      for (const auto& [k, v] : *t) {
        const std::string key(k.str());
        const auto dot = key.find('.');
        const std::string dir = key.substr(0, dot);
        // A per-I/O key of an unknown kind: the one meant, and every name of its family. (The value's
        // node by pointer: clang 14, the sanitizer build's, cannot capture a structured binding.)
        const toml::node* value = &v;
        const auto refuse = [&](std::vector<std::string> names, const std::string& head, const std::string& tail,
                                const std::string& what) {
          for (const auto& [kind, said] : models::host_thread_kinds()) names.push_back(head + kind + tail);
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          fail(path, value,
               where + ": measured key '" + key + "'" + models::did_you_mean(key, names) + ": " + what + " is one of " + list);
        };
        if (dir == "cpu" && models::cpu_metric_kind(key) < 0) refuse({}, "cpu.", "_us_per_io", "a thread's CPU time per I/O");
        if (dir == "count" && !models::is_count_metric(key))
          refuse({models::kInterruptsPerIoMetric}, "count.", "_wakes_per_io", "a count per I/O");
        if (dot == std::string::npos || (dir != "read" && dir != "write" && dir != "cpu" && dir != "count"))
          fail(path, &v,
               where + ": measured key '" + key +
                   "' must be <dir>.<metric> with <dir> read or write, e.g. read.iops, or a thread's CPU time per I/O, "
                   "e.g. cpu.vcpus_us_per_io, or a count per I/O, e.g. count.interrupts_per_io");
        if (!v.is_number()) fail(path, &v, where + ": measured." + key + " must be a number");
        const double x = *v.value<double>();
        if (!std::isfinite(x) || x < 0) fail(path, &v, where + ": measured." + key + " must be a finite number >= 0");
        if (dir == "cpu" || dir == "count") {
          (dir == "cpu" ? p.cpu_us_per_io : p.counts_per_io)[key] = x;
          continue;
        }
        const std::string metric = key.substr(dot + 1);
        if (std::find(kMetrics.begin(), kMetrics.end(), metric) != kMetrics.end()) {
          p.inline_numbers[dir][metric] = x;
          continue;
        }
        // `<metric>_stddev`: the standard deviation of the figure over the repeated runs it is
        // the mean of (a table of means and deviations); anything else is a misspelling, which
        // would otherwise leave the figure out of the fit without a word.
        const std::string suffix = "_stddev";
        const std::string of =
            metric.size() > suffix.size() && metric.ends_with(suffix) ? metric.substr(0, metric.size() - suffix.size()) : "";
        if (std::find(kMetrics.begin(), kMetrics.end(), of) != kMetrics.end()) {
          p.inline_stddev[dir][of] = x;
          continue;
        }
        std::vector<std::string> names;
        for (const auto& m : kMetrics) {
          names.push_back(dir + "." + m);
          names.push_back(dir + "." + m + suffix);
        }
        std::string list;
        for (const auto& m : kMetrics) list += (list.empty() ? "" : ", ") + m;
        fail(path, &v,
             where + ": measured key '" + key + "'" + models::did_you_mean(key, names) +
                 ": a figure is <dir>.<metric> with <metric> one of " + list +
                 ", or <dir>.<metric>_stddev for its standard deviation over repeated runs");
      }
      for (const auto& [dir, sds] : p.inline_stddev)
        for (const auto& [metric, sd] : sds)
          if (!p.inline_numbers[dir].count(metric))
            fail(path, measured,
                 where + ": measured " + dir + "." + metric + "_stddev without " + dir + "." + metric +
                     ": give the mean it is the standard deviation of beside it");
    }
    if (file) {
      if (!file->is_string()) fail(path, file, where + ": file must be a string (a path relative to the manifest)");
      p.file = *file->value<std::string>();
      const std::string full = (base / p.file).string();
      try {
        fio::ParsedFile f = fio::parse_fio_file(full);
        // Two outputs one after the other (pasted in one mail): which one this run measured is a
        // guess the user did not make.
        if (f.run_count() > 1)
          fail(path, file,
               where + ": " + p.file + " holds " + std::to_string(f.run_count()) + " fio runs one after the other (" +
                   f.detected + "); a manifest run takes one: split the file, one [[run]] per output");
        parsed.push_back(f.final_result());
        p.kept = parsed.size() - 1;
      } catch (const fio::ParseError& e) {
        fail(path, file, where + ": " + e.what());
      }
    }
    pending.push_back(std::move(p));
  }
  if (!set_errors.empty()) throw models::ConfigError(detail::error_lines(set_errors));

  // Move the parsed files into `keep` first, so that the pointers taken below stay valid.
  const std::size_t first = keep.size();
  for (auto& r : parsed) keep.push_back(std::move(r));

  std::vector<Measured> out;
  for (const auto& p : pending) {
    if (run_names) run_names->push_back(p.name);
    const std::size_t first_of_run = out.size();
    const std::string source = file_name + ": run '" + p.name + "'";
    if (p.kept) {
      for (Measured m : measured_from_result(keep[first + *p.kept], source + " (" + p.file + ")")) {
        for (const auto& [k, v] : p.set) m.setup[k] = v;
        m.run_name = p.name;
        m.manifest_set = p.set;
        m.has_set = p.has_set;
        m.base_workload = p.base_workload;
        m.weight = p.weight;
        m.manifest_line = p.line;
        m.co_running = p.co_running;
        out.push_back(std::move(m));
      }
    }
    for (const auto& [dir, numbers] : p.inline_numbers) {
      Measured m;
      m.source = source;
      m.dir = dir;
      m.setup = p.set;
      m.run_name = p.name;
      m.manifest_set = p.set;
      m.has_set = p.has_set;
      m.base_workload = p.base_workload;
      m.weight = p.weight;
      m.manifest_line = p.line;
      m.co_running = p.co_running;
      auto get = [&numbers = numbers](const char* k) -> std::optional<double> {  // (clang 14: no capture of a binding)
        auto it = numbers.find(k);
        return it == numbers.end() ? std::nullopt : std::optional<double>(it->second);
      };
      m.iops = get("iops");
      m.bw_kib = get("bw_kib");
      m.lat_mean_us = get("lat_mean_us");
      m.clat_mean_us = get("clat_mean_us");
      m.clat_p50_us = get("clat_p50_us");
      m.clat_p99_us = get("clat_p99_us");
      m.clat_p999_us = get("clat_p99.9_us");
      if (const auto sd = p.inline_stddev.find(dir); sd != p.inline_stddev.end()) m.replicate_stddev = sd->second;
      if (auto it = p.set.find("workload.runtime"); it != p.set.end()) {
        try {
          m.runtime_s = models::parse_duration_ns_real(it->second) / 1e9;
        } catch (const std::exception&) {
          if (auto s = fio_seconds(it->second)) m.runtime_s = *s;
        }
      }
      out.push_back(std::move(m));
    }
    if (!p.cpu_us_per_io.empty() || !p.counts_per_io.empty()) {
      // The threads' CPU time and the counts are the run's, not a direction's: they go with the
      // run's first.
      if (out.size() == first_of_run)
        throw models::ConfigError(path + ":" + std::to_string(p.line) + ": run '" + p.name +
                                  "': measured figures per I/O (cpu.*, count.*) need the run's I/O too (a fio output in "
                                  "`file`, or iops)");
      out[first_of_run].cpu_us_per_io = p.cpu_us_per_io;
      out[first_of_run].counts_per_io = p.counts_per_io;
    }
  }
  return out;
}

}  // namespace vqsim::check
