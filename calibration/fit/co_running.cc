#include "calibration/fit/co_running.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "calibration/check/measured_access.h"
#include "models/config.h"

namespace vqsim::fit {

namespace {

// What every VM on the host shares (docs/scenario.md): the run, the host's cores, its page cache.
bool shared_key(const std::string& key) { return key.rfind("run.", 0) == 0 || key == "host.cores" || key == "host.pagecache_us"; }

// The keys calibration sets itself for the simulation (dataset.cc's `controlled`): a neighbour's
// are left out as the run's own are.
bool controlled(const std::string& key) {
  return key == "workload.runtime" || key == "workload.ramp_time" || key == "workload.ios" || key.rfind("run.", 0) == 0;
}

std::string key_of(const std::string& key_equals_value) { return key_equals_value.substr(0, key_equals_value.find('=')); }
std::string value_of(const std::string& key_equals_value) { return key_equals_value.substr(key_equals_value.find('=') + 1); }

bool same_value(const std::string& a, const std::string& b) {
  if (check::detail::plain_number(a) && check::detail::plain_number(b)) {
    const double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
    return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), 1.0);
  }
  return a == b;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string toml_string(const std::string& s) {
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// The device kind a set of key=value edits gives, else the base's.
std::string device_kind(const std::map<std::string, std::string>& backend_keys, const models::IoScenario& base) {
  const auto it = backend_keys.find("backend.kind");
  if (it == backend_keys.end()) return models::backend_name(base.backend.kind);
  std::string v = it->second;
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

CoRunningModel co_running_model(const std::string& base, const models::IoScenario& base_scenario,
                                const std::vector<std::string>& overrides, const std::vector<check::CoRunning>& entries,
                                const std::string& manifest, const std::string& where) {
  CoRunningModel m;
  // "manifest.toml:<the entry's line>: run 'name': co_running entry i".
  const auto entry_where = [&](const check::CoRunning& c, std::size_t i) {
    const auto run = where.find(": run '");
    const std::string at =
        c.line > 0 && run != std::string::npos ? manifest + ":" + std::to_string(c.line) + where.substr(run) : where;
    return at + ": co_running entry " + std::to_string(i + 1);
  };

  // The host: the base's cores and page cache, the run's set over them.
  std::map<std::string, std::string> host = {{"host.cores", std::to_string(base_scenario.host.cores)},
                                             {"host.pagecache_us", number(base_scenario.host.pagecache_ns / 1000)}};
  std::map<std::string, std::string> device;  // the run's device: backend.<key> -> value
  std::vector<std::string> measured;          // the run's own keys, as edits of VM "measured"
  for (const std::string& o : overrides) {
    const std::string k = key_of(o);
    if (shared_key(k)) {
      host[k] = value_of(o);
    } else if (k.rfind("vm.", 0) == 0) {
      throw models::ConfigError(where + ": set " + k +
                                ": a run with co_running is modelled as one VM beside the guests its entries name; "
                                "write the other guests as co_running entries (count = K) instead of " +
                                k);
    } else if (k.rfind("backend.", 0) == 0) {
      device[k] = value_of(o);
    } else {
      measured.push_back(o);
    }
  }

  // One profile per entry (per guest for backend = "own"), each with its edits.
  struct Profile {
    std::string name, backend;
    int count = 1;
    std::vector<std::string> edits;  // key=value without the vm.<name>. prefix
  };
  std::vector<Profile> profiles;
  std::vector<std::string> own_devices;
  std::map<std::string, std::map<std::string, std::string>> own_device_keys;
  std::string signature;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const check::CoRunning& c = entries[i];
    const std::string at = entry_where(c, i);
    std::map<std::string, std::string> backend_keys;
    std::vector<std::string> edits;
    std::string set_text;
    for (const auto& [k, v] : c.set) {
      const std::string o = check::detail::override_of(k, v);
      set_text += (set_text.empty() ? "" : ",") + o;
      if (controlled(k)) continue;
      if (shared_key(k)) {
        if (!same_value(host.at(k), value_of(o)))
          throw models::ConfigError(at + ": set " + o + ", but the run's host has " + k + " = " + host.at(k) + ": " + k +
                                    " is the host's, shared by every guest on it (docs/scenario.md); give the run's value "
                                    "or leave it out of the entry");
        continue;
      }
      if (k.rfind("vm.", 0) == 0)
        throw models::ConfigError(at + ": set " + k + ": an entry is count guests of one setup: write count = K (and another " +
                                  "entry for guests of another setup), not vm.* keys");
      if (k.rfind("backend.", 0) == 0) {
        backend_keys[k] = value_of(o);
        continue;
      }
      edits.push_back(o);
    }
    // Own devices or the run's: where it matters (a device with a queue), the manifest says it.
    std::string mode = c.backend;
    if (mode.empty()) {
      std::map<std::string, std::string> theirs = device;
      for (const auto& [k, v] : backend_keys) theirs[k] = v;
      if (device_kind(theirs, base_scenario) == "null" && device_kind(device, base_scenario) == "null") {
        mode = "own";  // a null device has a fixed latency and no queue: own or shared is the same device
      } else {
        throw models::ConfigError(
            at +
            ": say where these guests' disks were: backend = \"shared\" (on the run's device, e.g. each its own file on "
            "the same host disk) or backend = \"own\" (each guest a device of its own, e.g. its own null device or "
            "disk), e.g. co_running = [{ count = " +
            std::to_string(c.count) + ", backend = \"shared\", set = { ... } }]; on a device with a queue (backend.kind = " +
            device_kind(device, base_scenario) + ") the two differ");
      }
    }
    signature += (signature.empty() ? "" : " + ") + std::to_string(c.count) + "x{" + set_text + "};backend=" + mode;
    if (mode == "shared") {
      for (const auto& [k, v] : backend_keys) {
        const auto have = device.find(k);
        if (have != device.end() && !same_value(have->second, v))
          throw models::ConfigError(at + ": backend = \"shared\", but set " + k + " = " + v + " and the run's device has " + k +
                                    " = " + have->second +
                                    ": one device has one value; give the run's, or backend = \"own\" if these guests had "
                                    "devices of their own");
        device[k] = v;
      }
      profiles.push_back({"co" + std::to_string(i + 1), "dev", static_cast<int>(c.count), edits});
    } else {
      if (c.count > 4096)
        throw models::ConfigError(at + ": count = " + std::to_string(c.count) + ": a host of 1 to 4096 guests is modelled");
      for (std::int64_t g = 1; g <= c.count; ++g) {
        const std::string name = "co" + std::to_string(i + 1) + "-" + std::to_string(g);
        profiles.push_back({name, name, 1, edits});
        own_devices.push_back(name);
        own_device_keys[name] = backend_keys;
      }
    }
    m.vms += static_cast<int>(c.count);
  }
  m.signature = signature;

  // The [[vm]] file: its tables only; every key is an edit below, as --set would make it.
  const std::string base_path = std::filesystem::absolute(base).string();
  std::string text = "# vqsim calibrate: a run and the guests beside it (co_running), one [[vm]] each\n";
  m.backends.push_back("dev");
  for (const auto& d : own_devices) m.backends.push_back(d);
  for (const auto& b : m.backends) text += "[[backend]]\nname = \"" + b + "\"\n";
  text += "[[vm]]\nname = \"measured\"\nbase = " + toml_string(base_path) + "\nbackend = \"dev\"\n";
  m.vm_names.push_back("measured");
  for (const auto& p : profiles) {
    text += "[[vm]]\nname = \"" + p.name + "\"\ncount = " + std::to_string(p.count) + "\nbase = " + toml_string(base_path) +
            "\nbackend = \"" + p.backend + "\"\n";
    m.vm_names.push_back(p.name);
  }
  static std::atomic<int> serial{0};
  const std::filesystem::path file = std::filesystem::temp_directory_path() / ("vqsim-co-running-" + std::to_string(::getpid()) +
                                                                               "-" + std::to_string(serial++) + ".toml");
  {
    std::ofstream out(file);
    out << text;
    if (!out) throw models::ConfigError(where + ": co_running: cannot write the scenario of its guests to " + file.string());
  }
  std::shared_ptr<models::ScenarioSource> source;
  try {
    source = std::make_shared<models::ScenarioSource>(file.string());
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    throw;
  }
  std::error_code ignored;
  std::filesystem::remove(file, ignored);  // parsed: the source holds it in memory

  try {
    for (const auto& [k, v] : host) source->set(k + "=" + v);
    for (const auto& [k, v] : device) source->set("backend.dev." + k.substr(8) + "=" + v);
    for (const auto& [d, keys] : own_device_keys)
      for (const auto& [k, v] : keys) source->set("backend." + d + "." + k.substr(8) + "=" + v);
    for (const auto& o : measured) source->set("vm.measured." + o);
    for (const auto& p : profiles)
      for (const auto& o : p.edits) source->set("vm." + p.name + "." + o);
    (void)source->scenario();
  } catch (const models::ConfigError& e) {
    throw models::ConfigError(where + ": the run and the guests beside it (co_running) do not make a valid scenario on " + base +
                              ": " + e.what());
  }
  m.source = std::move(source);
  return m;
}

void set_co_running_parameter(models::ScenarioSource& source, const CoRunningModel& m, const std::string& key, double value) {
  if (shared_key(key)) {
    source.set(key, value);
  } else if (key.rfind("backend.", 0) == 0) {
    for (const auto& b : m.backends) source.set("backend." + b + key.substr(7), value);
  } else {
    for (const auto& v : m.vm_names) source.set("vm." + v + "." + key, value);
  }
}

}  // namespace vqsim::fit
