#include "models/scenario.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "models/backend.h"
#include "models/config.h"
#include "models/fio_jobfile.h"
#include "models/guest_driver.h"
#include "models/io_metrics.h"  // kFigureKinds
#include "models/io_path.h"
#include "models/param.h"
#include "models/stage.h"
#include "sim/rng.h"

namespace vqsim::models {

const char* direction_name(Direction d) { return d == Direction::read ? "read" : "write"; }
const char* driver_name(GuestDriver d) {
  switch (d) {
    case GuestDriver::virtio_blk:
      return "virtio-blk";
    case GuestDriver::virtio_scsi:
      return "virtio-scsi";
    case GuestDriver::vhost_scsi:
      return "vhost-scsi";
    case GuestDriver::vhost_user_blk:
      return "vhost-user-blk";
    case GuestDriver::scsi_hba:
      return "scsi-hba";
    case GuestDriver::none:
      return "none";
  }
  return "?";
}
const char* aio_name(Aio a) { return a == Aio::threads ? "threads" : a == Aio::native ? "native" : "io_uring"; }
const char* accel_name(Accel a) { return a == Accel::tcg ? "tcg" : "kvm"; }
const char* cache_name(CacheMode c) {
  switch (c) {
    case CacheMode::none:
      return "none";
    case CacheMode::writeback:
      return "writeback";
    case CacheMode::writethrough:
      return "writethrough";
    case CacheMode::directsync:
      return "directsync";
    case CacheMode::unsafe:
      return "unsafe";
  }
  return "?";
}
const char* backend_name(BackendKind b) {
  switch (b) {
    case BackendKind::nvme:
      return "nvme";
    case BackendKind::sata_ssd:
      return "sata-ssd";
    case BackendKind::hdd:
      return "hdd";
    case BackendKind::md_raid1:
      return "md-raid1";
    case BackendKind::ceph_rbd:
      return "ceph-rbd";
    case BackendKind::krbd:
      return "krbd";
    case BackendKind::pagecache:
      return "pagecache";
    case BackendKind::null:
      return "null";
  }
  return "?";
}

namespace {

const std::vector<Param>& params() { return io_keys(); }

const Param* find_param(const std::string& key) {
  for (const auto& p : params())
    if (p.key == key) return &p;
  return nullptr;
}

std::vector<std::string> all_keys() {
  std::vector<std::string> keys;
  for (const auto& p : params()) keys.push_back(p.key);
  keys.emplace_back("base");
  keys.emplace_back("description");
  return keys;
}

// One key=value as found: the node, and where it came from.
struct Entry {
  const toml::node* node;
  std::string file;  // "(from --set)" for overrides
  int level = 0;     // 0 = --set, 1 = the scenario file, 2 = its base, 3 = the base's base, ...
  // A key of one [[vm]] table ("vm.<name>.") or one [[backend]] table (its name): errors name
  // the key as the file and --set write it.
  std::string vm = {}, backend = {};
};

// Flattens nested tables into dotted keys.
void flatten(const toml::table& table, const std::string& prefix, const std::string& file, int level,
             std::map<std::string, Entry>& out) {
  for (const auto& [k, node] : table) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = node.as_table())
      flatten(*sub, key, file, level, out);
    else
      out[key] = Entry{&node, file, level};
  }
}

std::string where(const Entry& e, const std::string& key) {
  std::string w = e.file;
  if (e.node->source().begin.line > 0 && e.file != "(from --set)") w += ":" + std::to_string(e.node->source().begin.line);
  w += ": ";
  if (!e.backend.empty() && key.rfind("backend.", 0) == 0)
    w += "backend." + e.backend + key.substr(7);
  else
    w += e.vm + key;
  return w;
}

[[noreturn]] void fail(const Entry& e, const std::string& key, const std::string& message) {
  throw ConfigError(where(e, key) + ": " + message);
}

std::string node_text(const toml::node& n) {
  if (auto s = n.value_exact<std::string>()) return "\"" + *s + "\"";
  std::ostringstream os;
  if (auto d = n.value_exact<double>()) {
    os << std::setprecision(15) << *d;  // 2.4, not 2.3999999999999999
    return os.str();
  }
  n.visit([&](const auto& v) { os << v; });
  return os.str();
}

Value convert(const Param& p, const Entry& e) {
  const toml::node& n = *e.node;
  Value v;
  auto number = [&](const char* expected) -> double {
    if (auto i = n.value_exact<std::int64_t>()) return static_cast<double>(*i);
    if (auto d = n.value_exact<double>()) {
      if (!std::isfinite(*d)) fail(e, p.key, std::string("expected a finite number (") + expected + "), got " + node_text(n));
      return *d;
    }
    fail(e, p.key, std::string("expected ") + expected + ", got " + node_text(n));
  };
  auto time_value = [&](double unit_ns, const char* unit) -> double {
    if (n.is_string()) {
      try {
        return parse_duration_ns_real(*n.value<std::string>());
      } catch (const std::invalid_argument& ex) {
        fail(e, p.key, ex.what());
      }
    }
    return number((std::string("a number of ") + unit + " or a duration string such as \"12us\"").c_str()) * unit_ns;
  };
  switch (p.kind) {
    case Kind::integer: {
      const double x = number("a whole number");
      if (x != std::floor(x)) fail(e, p.key, "expected a whole number, got " + node_text(n));
      v.number = x;
      break;
    }
    case Kind::real:
      v.number = number("a number");
      break;
    case Kind::time_us:
      v.number = time_value(1e3, "microseconds");
      break;
    case Kind::time_ms:
      v.number = time_value(1e6, "milliseconds");
      break;
    case Kind::time_s:
      v.number = time_value(1e9, "seconds");
      break;
    case Kind::size:
    case Kind::rate:
      if (n.is_string()) {
        std::string text = *n.value<std::string>();
        if (p.kind == Kind::rate && text.size() > 2 && text.substr(text.size() - 2) == "/s") text.resize(text.size() - 2);
        try {
          v.number = static_cast<double>(parse_size_bytes(text));
        } catch (const std::invalid_argument& ex) {
          fail(e, p.key, ex.what());
        }
        // A size that fio also reads (bs, request and file sizes) in SI units: fio's kb_base=1024
        // takes "8MB" as 8388608 bytes, the scenario as 8000000. Bandwidths (rates) keep SI, as
        // vendors state them.
        const auto unit_at = text.find_first_not_of("0123456789.+-eE ");
        const std::string unit = unit_at == std::string::npos ? "" : text.substr(unit_at);
        if (p.kind == Kind::size && (unit == "kB" || unit == "MB" || unit == "GB" || unit == "TB")) {
          const double binary = v.number / std::pow(1000.0, static_cast<double>(std::string("kMGT").find(unit[0]) + 1)) *
                                std::pow(1024.0, static_cast<double>(std::string("kMGT").find(unit[0]) + 1));
          std::ostringstream msg;
          msg << std::setprecision(15) << "\"" << text << "\" is " << v.number
              << " bytes in a scenario (SI), but fio reads it as " << binary << " (kb_base=1024): write \""
              << text.substr(0, unit_at) << (unit == "kB" ? "KiB" : unit.substr(0, 1) + "iB") << "\" (or " << binary
              << ") for fio's reading, or " << v.number << " for the SI size";
          fail(e, p.key, msg.str());
        }
      } else {
        v.number = number(p.kind == Kind::size ? "a size such as \"4k\" or a number of bytes" : "bytes per second or \"550MB\"");
      }
      break;
    case Kind::choice: {
      if (!n.is_string())
        fail(
            e, p.key, "expected a word, one of " + [&] {
              std::string l;
              for (const auto& c : p.choices) l += (l.empty() ? "" : ", ") + c;
              return l;
            }());
      v.word = *n.value<std::string>();
      bool ok = false;
      for (const auto& c : p.choices) ok = ok || c == v.word;
      if (!ok) {
        std::string list;
        for (const auto& c : p.choices) {
          if (!list.empty()) list += ", ";
          list += c;
        }
        fail(e, p.key, "\"" + v.word + "\" is not one of " + list + did_you_mean(v.word, p.choices));
      }
      return v;
    }
    case Kind::boolean:
      if (auto b = n.value_exact<bool>())
        v.flag = *b;
      else
        fail(e, p.key, "expected true or false, got " + node_text(n));
      return v;
    case Kind::text:
      if (!n.is_string())
        fail(e, p.key,
             "expected a string, got " + node_text(n) +
                 (n.is_number() ? " (a number): quote it, e.g. \"" + node_text(n) + "\"" : ""));
      v.word = *n.value<std::string>();
      return v;
  }
  if (!std::isfinite(v.number)) fail(e, p.key, "expected a finite number, got " + node_text(n));
  if (v.number < p.min || v.number > p.max) {
    std::ostringstream os;
    os << "value " << node_text(n) << " is out of range [" << p.min << ", " << p.max << "]";
    if (!p.unit.empty()) os << " (" << p.unit << ")";
    fail(e, p.key, os.str());
  }
  return v;
}

struct Loader {
  std::vector<std::shared_ptr<const toml::table>> documents;  // keeps the nodes alive
  std::map<std::string, Entry> entries;
  std::vector<std::string> chain;  // files being loaded, to catch base cycles

  void load_file(const std::string& path) {
    const std::string canonical = std::filesystem::weakly_canonical(path).string();
    for (const auto& c : chain)
      if (c == canonical) throw ConfigError(path + ": base chain loops back to this file");
    if (chain.size() > 16) throw ConfigError(path + ": base chain deeper than 16 files");
    std::shared_ptr<toml::table> doc;
    try {
      doc = std::make_shared<toml::table>(parse_toml_file(path, chain.empty() ? "a scenario" : "a base scenario"));
    } catch (const ConfigError&) {
      both_backend_forms(path);  // TOML's own message for this one does not say what to write
      throw;
    }
    chain.push_back(canonical);
    if (const toml::node* base = doc->get("base")) {
      if (!base->is_string())
        throw ConfigError(path + ":" + std::to_string(base->source().begin.line) + ": base: expected a file name");
      std::filesystem::path base_path = *base->value<std::string>();
      if (base_path.is_relative()) base_path = std::filesystem::path(path).parent_path() / base_path;
      if (const std::string why = missing_file(base_path.string()); !why.empty())
        throw ConfigError(path + ":" + std::to_string(base->source().begin.line) + ": base: " + why);
      load_file(base_path.string());
    }
    const int level = static_cast<int>(chain.size());
    chain.pop_back();
    std::map<std::string, Entry> mine;
    flatten(*doc, "", path, level, mine);
    for (auto& [k, e] : mine) entries[k] = e;
    documents.push_back(std::move(doc));
  }

  // The `base = "FIT.toml"` of each [[vm]] table, each read once with its own chain.
  std::map<std::string, std::shared_ptr<const Loader>> vm_bases;  // by the path as resolved
  void load_vm_bases() {
    const auto it = entries.find("vm");
    if (it == entries.end() || !it->second.node->is_array()) return;
    for (const auto& element : *it->second.node->as_array()) {
      const toml::table* vm = element.as_table();
      const toml::node* base = vm ? vm->get("base") : nullptr;
      if (base == nullptr || !base->is_string()) continue;  // derive_multi says what is wrong
      const std::string resolved = vm_base_path(it->second.file, *base->value<std::string>());
      if (vm_bases.count(resolved)) continue;
      if (const std::string why = missing_file(resolved); !why.empty())
        throw ConfigError(it->second.file + ":" + std::to_string(base->source().begin.line) + ": vm." +
                          (vm->get("name") ? vm->get("name")->value_or(std::string("?")) : std::string("?")) + ".base: " + why);
      auto sub = std::make_shared<Loader>();
      sub->load_file(resolved);
      vm_bases[resolved] = std::move(sub);
    }
  }
  static std::string vm_base_path(const std::string& file, const std::string& base) {
    std::filesystem::path p = base;
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    return p.string();
  }

  // A file that has both a [backend] table and [[backend]] tables is not TOML (one key, two
  // kinds): say so in the scenario's words, at the line of the second.
  static void both_backend_forms(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    int n = 0, single = 0, array = 0;
    while (std::getline(in, line)) {
      ++n;
      std::string t(trim(line));
      if (const auto hash = t.find('#'); hash != std::string::npos) t = std::string(trim(t.substr(0, hash)));
      std::string squeezed;
      for (const char c : t)
        if (c != ' ' && c != '\t') squeezed += c;
      if (squeezed == "[backend]" && single == 0) single = n;
      if (squeezed == "[[backend]]" && array == 0) array = n;
    }
    if (single == 0 || array == 0) return;
    throw ConfigError(path + ":" + std::to_string(std::max(single, array)) + ": backend: both a [backend] table (line " +
                      std::to_string(single) + ") and [[backend]] tables (line " + std::to_string(array) +
                      "); a file uses one or the other: one [backend] for one device, or a [[backend]] table with a name "
                      "for each device and `backend = \"<name>\"` in each [[vm]]");
  }
};

// Fills the workload keys of one fio job (only the keys the scenario did not set); its notes go
// to s.notes, each after `note_prefix` ("" for the one job of a file, "job 'b': " for several).
void apply_fio_job_spec(IoScenario& s, const fio::JobSpec& j, const std::string& job_path,
                        const std::function<bool(const char*)>& unset, const Entry& where_entry, const std::string& note_prefix) {
  const auto note = [&](const std::string& text) { s.notes.push_back(note_prefix + text); };
  auto& w = s.workload;
  const auto rd = static_cast<std::size_t>(fio::Direction::read), wr = static_cast<std::size_t>(fio::Direction::write);
  std::string rw(fio::to_string(j.rw));
  if (rw == "readwrite") rw = "rw";
  if (rw.find("trim") != std::string::npos)
    fail(where_entry, "workload.fio_job", note_prefix + "rw=" + rw + " (trim) is not modelled");
  if (unset("workload.rwmixread")) w.rwmixread = static_cast<int>(j.rwmixread);
  if (unset("workload.rw")) set_rw(s, rw);
  if (unset("workload.bs")) w.bs_read_bytes = j.bs_bytes[rd];
  if (unset("workload.bs") && unset("workload.bs_write")) w.bs_write_bytes = j.bs_bytes[wr];
  if (!j.bssplit[rd].empty() || !j.bssplit[wr].empty()) note("fio bssplit is modelled as its mean block size");
  auto mean_split = [](const std::vector<fio::BlockSplit>& split, std::uint64_t fallback) {
    if (split.empty()) return fallback;
    double sum = 0, weight = 0;
    for (const auto& b : split) {
      sum += static_cast<double>(b.bytes) * b.percent;
      weight += b.percent;
    }
    return weight > 0 ? static_cast<std::uint64_t>(sum / weight) : fallback;
  };
  // fio with direct=1 fails on a block size that is not a multiple of the 512-byte sector ("io_u
  // error ... Invalid argument"): with its default kb_base=1024, bs=4KiB is 4000 bytes. A job
  // that cannot run has no performance to predict.
  for (const auto d : {rd, wr}) {
    const bool used = d == rd ? w.read_fraction > 0 : w.read_fraction < 1;
    const bool from_job = d == rd ? unset("workload.bs") : unset("workload.bs") && unset("workload.bs_write");
    if (j.direct && used && from_job && j.bssplit[d].empty() && j.bs_bytes[d] % 512 != 0)
      fail(where_entry, "workload.fio_job",
           job_path + ": " + note_prefix + "bs is " + std::to_string(j.bs_bytes[d]) + " bytes for " +
               (d == rd ? "reads" : "writes") +
               ", not a multiple of 512, and fio with direct=1 fails on it (io_u error: Invalid argument); fio reads KiB as 1000 "
               "under its default kb_base=1024: write bs=4k for 4096 bytes");
  }
  if (unset("workload.bs")) w.bs_read_bytes = mean_split(j.bssplit[rd], w.bs_read_bytes);
  if (unset("workload.bs") && unset("workload.bs_write")) w.bs_write_bytes = mean_split(j.bssplit[wr], w.bs_write_bytes);
  if (unset("workload.iodepth")) w.iodepth = static_cast<int>(j.iodepth);
  if (unset("workload.numjobs")) w.numjobs = static_cast<int>(j.numjobs);
  if (unset("workload.iodepth_batch_submit")) w.iodepth_batch_submit = static_cast<int>(std::max(1u, j.iodepth_batch_submit));
  if (unset("workload.iodepth_batch_complete_min"))
    w.iodepth_batch_complete_min = static_cast<int>(std::max(1u, j.iodepth_batch_complete_min));
  if (unset("workload.iodepth_batch_complete_max"))
    w.iodepth_batch_complete_max = static_cast<int>(std::max(1u, j.iodepth_batch_complete_max));
  if (unset("workload.ioengine")) {
    w.ioengine_name = j.ioengine;
    w.ioengine = (j.ioengine == "libaio") ? FioEngine::libaio : j.ioengine == "io_uring" ? FioEngine::io_uring : FioEngine::psync;
    const auto& modelled = fio::modelled_ioengines();
    if (std::find(modelled.begin(), modelled.end(), j.ioengine) == modelled.end())
      note("fio ioengine " + j.ioengine + " is modelled as psync (one I/O at a time)");
  }
  if (unset("workload.thinktime") && j.thinktime_ns > 0) w.thinktime_ns = static_cast<double>(j.thinktime_ns);
  if (unset("workload.rate_iops") && (j.rate_iops[rd] || j.rate_iops[wr])) {
    // fio caps each direction; with a fixed mix the total is the largest rate that keeps both
    // directions under their caps.
    double rate = 1e18;
    if (j.rate_iops[rd] && w.read_fraction > 0) rate = std::min(rate, static_cast<double>(*j.rate_iops[rd]) / w.read_fraction);
    if (j.rate_iops[wr] && w.read_fraction < 1)
      rate = std::min(rate, static_cast<double>(*j.rate_iops[wr]) / (1 - w.read_fraction));
    if (rate < 1e18) {
      w.rate_iops = rate;
      if (j.rate_process != "poisson") note("fio rate_process=" + j.rate_process + " is modelled as poisson arrivals");
    }
  }
  if (unset("workload.runtime") && j.runtime_ns && *j.runtime_ns > 0) w.runtime_ns = *j.runtime_ns;
  if (unset("workload.ramp_time") && j.ramp_time_ns > 0) w.ramp_time_ns = j.ramp_time_ns;
  // The disk the job drives, in a VM of several disks (derive_multi resolves it).
  w.filename = j.filename;
  const auto at = j.origin.find("filename");
  w.filename_where = at != j.origin.end() ? at->second.str() : j.section.str();
}

// fio options about how a file's jobs run with each other that vqsim does not model: with
// several jobs they decide who runs beside whom, so the figures would be of another run.
const std::vector<std::pair<const char*, const char*>>& job_interplay_options() {
  static const std::vector<std::pair<const char*, const char*>> options = {
      {"wait_for", "starts the job when a named job has finished; write stonewall on it to start it after every earlier job"},
      {"startdelay", "delays the job's start, so that it runs beside the others only part of the time"},
      {"exitall", "ends every job when the first one finishes"},
      {"exitall_on_error", "ends every job when one fails"},
      {"exit_what", "chooses which jobs end when one finishes"},
      {"flow", "throttles jobs against each other's progress"},
      {"flow_id", "throttles jobs against each other's progress"},
      {"flow_watermark", "throttles jobs against each other's progress"},
      {"flow_sleep", "throttles jobs against each other's progress"},
  };
  return options;
}

// A job name that metrics can name (<job>.read.iops, vm.<name>.<job>.read.iops) without reading
// as something else: "" when fine, else why not.
std::string job_name_problem(const std::string& name) {
  if (name.empty()) return "an empty name";
  for (const char c : name)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '=' || c == '<' || c == '>' || c == '!' || c == '"' || c == '\'')
      return "a space, quote or one of = < > ! in its name, which metric names (plan's 'metric <= bound') cannot hold";
  const std::string first = name.substr(0, name.find('.'));
  if (first == "vm" || first == "host") return "a name beginning with \"" + first + "\", which metrics read as " + first + ".*";
  return "";
}

// Fills workload keys from a fio job file (only the keys the scenario did not set). A file of
// several jobs fills s.jobs, one workload per job, and s.workload with the first job's.
void apply_fio_job(IoScenario& s, const std::string& job_path, const std::map<std::string, Entry>& explicit_keys,
                   const Entry& where_entry) {
  fio::JobFile jf;
  try {
    jf = fio::parse_job_file(job_path);
  } catch (const std::exception& ex) {
    fail(where_entry, "workload.fio_job", ex.what());
  }
  if (jf.jobs.empty()) fail(where_entry, "workload.fio_job", "the job file defines no job");
  // The job file stands where it is named: keys of that file (and of files and --set that
  // override it) win over it; keys inherited from its bases do not.
  const std::function<bool(const char*)> unset = [&](const char* key) {
    const auto it = explicit_keys.find(key);
    return it == explicit_keys.end() || it->second.level > where_entry.level;
  };
  if (jf.jobs.size() == 1) {
    apply_fio_job_spec(s, jf.jobs.front(), job_path, unset, where_entry, "");
  } else {
    // Several jobs run in one guest: each is modelled with its own figures, so each needs a name
    // of its own, and what vqsim does not model about how jobs run together is refused.
    std::map<std::string, const fio::JobSpec*> by_name;
    int phase = 0;
    for (std::size_t k = 0; k < jf.jobs.size(); ++k) {
      const fio::JobSpec& j = jf.jobs[k];
      const auto [at, fresh] = by_name.emplace(j.name, &j);
      if (!fresh)
        fail(where_entry, "workload.fio_job",
             j.section.str() + ": a second job named '" + j.name + "' (the first is at " + at->second->section.str() +
                 "): fio runs both, but vqsim reports each job's figures under its name; rename one, e.g. [" + j.name + "-2]");
      if (const std::string why = job_name_problem(j.name); !why.empty())
        fail(where_entry, "workload.fio_job",
             j.section.str() + ": job '" + j.name + "' has " + why + "; rename the section (letters, digits, - and _)");
      for (const auto& [option, effect] : job_interplay_options()) {
        const auto it = j.raw.find(option);
        if (it == j.raw.end() || it->second == "0") continue;
        const auto o = j.origin.find(option);
        fail(where_entry, "workload.fio_job",
             (o != j.origin.end() ? o->second.str() : j.section.str()) + ": job '" + j.name + "': option '" + option +
                 "' is not modelled and with several jobs it changes the answer (it " + effect +
                 "); vqsim starts a stonewall group's jobs together and runs them for the same time: remove it, or use "
                 "stonewall to run jobs one group after another");
      }
      // fio's backend.c: a stonewall job waits for every job started before it (none for the first).
      if (k > 0 && j.stonewall) ++phase;
      IoScenario one = s;
      one.notes.clear();
      apply_fio_job_spec(one, j, job_path, unset, where_entry, "job '" + j.name + "': ");
      set_rw(one, one.workload.rw);
      for (auto& n : one.notes) s.notes.push_back(std::move(n));
      s.jobs.push_back(FioJob{j.name, j.section.str(), phase, j.group, one.workload});
    }
    s.workload = s.jobs.front().workload;
    std::string names;
    for (const auto& j : s.jobs) names += (names.empty() ? "" : ", ") + j.name;
    s.notes.push_back("fio job file " + job_path + ": " + std::to_string(s.jobs.size()) + " jobs (" + names +
                      "), modelled job by job in one guest" +
                      (phase > 0 ? ", in " + std::to_string(phase + 1) + " stonewall groups simulated one after the other" : ""));
  }
  for (const auto& u : jf.unsupported) s.notes.push_back(u);
  for (const auto& w : jf.warnings) s.notes.push_back(w);
}

// The [calibration] table of a calibrated scenario (see CalibrationUncertainty).
void read_calibration(IoScenario& s, const std::map<std::string, Entry>& entries) {
  static const std::vector<std::string> fields = {"calibration.params",
                                                  "calibration.log_sd",
                                                  "calibration.log_corr",
                                                  "calibration.draws",
                                                  "calibration.source",
                                                  "calibration.model_error",
                                                  "calibration.model_error_fitted",
                                                  "calibration.model_error_source",
                                                  "calibration.fitted_setups",
                                                  "calibration.modes",
                                                  "calibration.mode_weights",
                                                  "calibration.model_error_workload",
                                                  "calibration.model_error_combination",
                                                  "calibration.model_error_depth"};
  static const std::vector<std::string> kinds(kFigureKinds.begin(), kFigureKinds.end());
  const Entry* first = nullptr;
  for (const auto& [key, e] : entries) {
    if (key.rfind("calibration.", 0) != 0) continue;
    // model_error = { throughput = 0.2, ... } arrives flattened: calibration.model_error.throughput.
    const bool per_kind = key.rfind("calibration.model_error.", 0) == 0 || key.rfind("calibration.model_error_fitted.", 0) == 0 ||
                          key.rfind("calibration.model_error_workload.", 0) == 0 ||
                          key.rfind("calibration.model_error_combination.", 0) == 0 ||
                          key.rfind("calibration.model_error_depth.", 0) == 0;
    if (per_kind) {
      const std::string kind = key.substr(key.find('.', std::string("calibration.model_error").size()) + 1);
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        fail(e, key,
             "unknown figure kind '" + kind + "'" + did_you_mean(kind, kinds) +
                 "; kinds are throughput, \"mean latency\", p50, p99, \"p99.9\"");
      const auto v = e.node->value<double>();
      if (!e.node->is_number() || !v || !std::isfinite(*v) || *v < 0)
        fail(e, key, "expected the sd of ln(model / measured), a number >= 0");
      (key.rfind("calibration.model_error_fitted.", 0) == 0        ? s.calibration.model_error_fitted_log_sd
       : key.rfind("calibration.model_error_workload.", 0) == 0    ? s.calibration.model_error_workload_log_sd
       : key.rfind("calibration.model_error_combination.", 0) == 0 ? s.calibration.model_error_combination_log_sd
       : key.rfind("calibration.model_error_depth.", 0) == 0       ? s.calibration.model_error_depth_log_sd
                                                                   : s.calibration.model_error_log_sd)[kind] = *v;
      if (!first) first = &e;
      continue;
    }
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) fail(e, key, "unknown key" + did_you_mean(key, fields));
    if (!first) first = &e;
  }
  if (!first) return;
  auto need = [&](const char* key) -> const Entry& {
    const auto it = entries.find(key);
    if (it == entries.end())
      fail(*first, key, "missing; [calibration] needs params, log_sd and log_corr (as `vqsim calibrate` writes them)");
    return it->second;
  };
  auto numbers = [&](const Entry& e, const char* key, const toml::array& a) {
    std::vector<double> out;
    for (const auto& n : a) {
      const auto d = n.value<double>();
      if (!n.is_number() || !d || !std::isfinite(*d)) fail(e, key, "expected an array of finite numbers");
      out.push_back(*d);
    }
    return out;
  };
  CalibrationUncertainty& c = s.calibration;
  const Entry& pe = need("calibration.params");
  const auto* params_array = pe.node->as_array();
  if (!params_array || params_array->empty()) fail(pe, "calibration.params", "expected a non-empty array of scenario keys");
  for (const auto& n : *params_array) {
    const auto k = n.value<std::string>();
    if (!n.is_string() || !k) fail(pe, "calibration.params", "expected an array of scenario keys (strings)");
    if (!is_numeric_io_key(*k))
      fail(pe, "calibration.params", "'" + *k + "' is not a numeric scenario key" + did_you_mean(*k, all_keys()));
    const auto it = entries.find(*k);
    if (it == entries.end())
      fail(pe, "calibration.params", "'" + *k + "' is listed but the scenario does not set its fitted value");
    const auto v = it->second.node->value<double>();
    if (!it->second.node->is_number() || !v || !(*v > 0)) fail(it->second, *k, "a fitted value must be a number > 0");
    c.keys.push_back(*k);
    c.values.push_back(*v);
    c.fixed_by_set.push_back(it->second.level == 0);
  }
  const std::size_t n = c.keys.size();
  const Entry& se = need("calibration.log_sd");
  const auto* sd_array = se.node->as_array();
  if (!sd_array) fail(se, "calibration.log_sd", "expected an array of numbers, one per params entry");
  c.log_sd = numbers(se, "calibration.log_sd", *sd_array);
  if (c.log_sd.size() != n)
    fail(se, "calibration.log_sd", "has " + std::to_string(c.log_sd.size()) + " entries for " + std::to_string(n) + " params");
  for (double x : c.log_sd)
    if (x < 0) fail(se, "calibration.log_sd", "standard deviations must be >= 0");
  const Entry& ce = need("calibration.log_corr");
  const auto* rows = ce.node->as_array();
  if (!rows || rows->size() != n)
    fail(ce, "calibration.log_corr", "expected a " + std::to_string(n) + " x " + std::to_string(n) + " array of arrays");
  for (const auto& r : *rows) {
    const auto* row = r.as_array();
    if (!row || row->size() != n)
      fail(ce, "calibration.log_corr", "expected a " + std::to_string(n) + " x " + std::to_string(n) + " array of arrays");
    c.log_corr.push_back(numbers(ce, "calibration.log_corr", *row));
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double x = c.log_corr[i][j];
      if ((i == j && std::fabs(x - 1) > 1e-6) || std::fabs(x) > 1 + 1e-9 || std::fabs(x - c.log_corr[j][i]) > 1e-6)
        fail(ce, "calibration.log_corr", "not a correlation matrix (unit diagonal, symmetric, entries in [-1, 1])");
    }
  if (const auto it = entries.find("calibration.draws"); it != entries.end()) {
    const auto d = it->second.node->value<std::int64_t>();
    if (!it->second.node->is_integer() || !d || *d < 2 || *d > 10000)
      fail(it->second, "calibration.draws", "expected a whole number from 2 to 10000");
    c.draws = static_cast<int>(*d);
  }
  if (const auto it = entries.find("calibration.source"); it != entries.end())
    c.source = it->second.node->value<std::string>().value_or("");
  if (const auto it = entries.find("calibration.model_error_source"); it != entries.end())
    c.model_error_source = it->second.node->value<std::string>().value_or("");
  if (const auto it = entries.find("calibration.modes"); it != entries.end()) {
    const auto* modes = it->second.node->as_array();
    if (!modes) fail(it->second, "calibration.modes", "expected an array of arrays, one value per params entry");
    for (const auto& m : *modes) {
      const auto* row = m.as_array();
      if (!row || row->size() != n)
        fail(it->second, "calibration.modes", "each mode needs " + std::to_string(n) + " values, one per params entry");
      std::vector<double> v = numbers(it->second, "calibration.modes", *row);
      for (double x : v)
        if (!(x > 0)) fail(it->second, "calibration.modes", "a mode's values must be > 0");
      c.modes.push_back(std::move(v));
    }
  }
  if (const auto it = entries.find("calibration.mode_weights"); it != entries.end()) {
    const auto* a = it->second.node->as_array();
    if (!a || a->size() != c.modes.size()) fail(it->second, "calibration.mode_weights", "expected one weight per mode");
    c.mode_weights = numbers(it->second, "calibration.mode_weights", *a);
    double sum = 0;
    for (double x : c.mode_weights) {
      if (x < 0) fail(it->second, "calibration.mode_weights", "weights must be >= 0");
      sum += x;
    }
    if (sum > 1 + 1e-9)
      fail(it->second, "calibration.mode_weights", "the weights add up to more than 1 (the estimate has the rest)");
  }
  if (const auto it = entries.find("calibration.fitted_setups"); it != entries.end()) {
    const auto* a = it->second.node->as_array();
    if (!a)
      fail(it->second, "calibration.fitted_setups",
           "expected an array of setup signatures (strings), as `vqsim calibrate` writes them");
    for (const auto& n : *a) {
      const auto v = n.value<std::string>();
      if (!n.is_string() || !v) fail(it->second, "calibration.fitted_setups", "expected an array of strings");
      c.fitted_setups.push_back(*v);
    }
  }
}

// guest.cpu_scale (times host.tcg_cpu_scale under TCG) and host.cpu_scale: every CPU cost given
// in the file (or its default) times the scale. The per-driver defaults are scaled where they are
// resolved (driver_costs).
void apply_cpu_scales(IoScenario& s) {
  const double g = s.guest_cpu_factor(), h = s.host.cpu_scale;
  for (double* x :
       {&s.guest.fio_submit_ns, &s.guest.fio_complete_ns, &s.guest.fio_outside_ns, &s.guest.per_page_ns, &s.guest.scheduler_ns,
        &s.guest.request_path_ns, &s.guest.wake_ns, &s.guest.halt_after_ns, &s.vq.kick_exit_ns, &s.vq.irq_handler_ns})
    *x *= g;
  if (s.guest.driver_submit_ns >= 0) s.guest.driver_submit_ns *= g;
  if (s.guest.driver_complete_ns >= 0) s.guest.driver_complete_ns *= g;
  for (double* x : {&s.host.main_loop_ns, &s.host.loop_wake_ns, &s.host.tcg_irq_relay_ns, &s.host.emu_per_page_ns,
                    &s.host.threads_handoff_ns, &s.host.native_submit_ns, &s.host.io_uring_submit_ns, &s.host.vhost_worker_ns,
                    &s.host.vhost_user_ns, &s.host.pagecache_ns, &s.backend.msgr_ns})
    *x *= h;
  if (s.host.emu_submit_ns >= 0) s.host.emu_submit_ns *= h;
  if (s.host.emu_complete_ns >= 0) s.host.emu_complete_ns *= h;
}

}  // namespace

namespace {
bool is_number_kind(Kind k) {
  return k == Kind::integer || k == Kind::real || k == Kind::time_us || k == Kind::time_ms || k == Kind::time_s ||
         k == Kind::size || k == Kind::rate;
}
}  // namespace

bool is_numeric_io_key(const std::string& key) {
  const Param* p = find_param(key);
  return p && is_number_kind(p->kind) && !p->recorded;
}

const std::vector<std::string>& io_fittable_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& p : params())
      if (p.get) k.push_back(p.key);
    std::sort(k.begin(), k.end());
    return k;
  }();
  return keys;
}

double io_parameter_value(const IoScenario& s, const std::string& key) {
  const Param* p = find_param(key);
  if (p == nullptr || !p->get) throw std::invalid_argument(key + " is not a parameter calibration can fit");
  return p->get(s);
}

std::vector<std::string> io_scenario_keys() { return all_keys(); }

const std::vector<std::pair<std::string, std::string>>& setup_signature_fields() {
  static const std::vector<std::pair<std::string, std::string>> fields = {
      {"driver", "guest.driver"},      {"vcpus", "guest.vcpus"},
      {"queues", "guest.num_queues"},  {"queue_size", "guest.queue_size"},
      {"iothreads", "host.iothreads"}, {"aio", "host.aio"},
      {"cache", "host.cache"},         {"backend", "backend.kind"},
      {"qemu", "host.qemu_version"},   {"accel", "host.accel"}};
  return fields;
}

const std::vector<std::string>& setup_signature_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& field : setup_signature_fields()) k.push_back(field.second);
    return k;
  }();
  return keys;
}

std::string setup_signature(const IoScenario& s, bool with_depth) {
  std::ostringstream os;
  os << "driver=" << driver_name(s.guest.driver) << ";vcpus=" << s.guest.vcpus << ";queues=" << s.queues()
     << ";queue_size=" << s.guest.queue_size << ";iothreads=" << s.host.iothreads << ";aio=" << aio_name(s.host.aio)
     << ";cache=" << cache_name(s.host.cache) << ";backend=" << backend_name(s.backend.kind) << ";rw=" << s.workload.rw;
  if (s.workload.read_fraction > 0 && s.workload.read_fraction < 1) os << ";rwmixread=" << s.workload.rwmixread;
  os << ";bs=" << s.workload.bs_read_bytes << "," << s.workload.bs_write_bytes << ";ioengine=" << s.workload.ioengine_name;
  if (with_depth) os << ";iodepth=" << s.workload.iodepth << ";numjobs=" << s.workload.numjobs;
  if (s.workload.rate_iops > 0) os << ";rate_iops=" << s.workload.rate_iops;
  if (!s.host.qemu_version.empty()) os << ";qemu=" << s.host.qemu_version;
  // KVM, the default, adds nothing, so that the signatures written before the key existed hold.
  if (s.host.accel == Accel::tcg) os << ";accel=" << accel_name(s.host.accel);
  return os.str();
}

std::string io_scenario_value_error(const std::string& key, const std::string& value_toml) {
  const Param* p = find_param(key);
  if (!p) return "unknown key" + did_you_mean(key, all_keys());
  toml::table doc;
  try {
    doc = toml::parse("v = " + value_toml);
  } catch (const toml::parse_error&) {
    return "not a TOML value: " + value_toml;
  }
  // convert() says where (as for --set, without a line); the caller names its own place.
  const std::string prefix = "(from --set): " + key + ": ";
  try {
    (void)convert(*p, Entry{doc.get("v"), "(from --set)", 0});
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
  }
  return "";
}

double clamp_to_key_range(const std::string& key, double value) {
  const Param* p = find_param(declared_key(key));
  if (!p || !is_number_kind(p->kind)) return value;
  // The table's range is in stored units (ns for times); a file writes the key's unit.
  const double unit = p->kind == Kind::time_us ? 1e3 : p->kind == Kind::time_ms ? 1e6 : p->kind == Kind::time_s ? 1e9 : 1.0;
  return std::clamp(value, p->min / unit, p->max / unit);
}

namespace {

// Every error of one load. The loader goes on past each bad key, so that one run names them
// all; they are reported in file order (the scenario, then its bases, then --set), by line.
class Errors {
 public:
  // Runs `f`; a ConfigError it throws is recorded against `e` (which orders it). False on error.
  template <typename F>
  bool attempt(const Entry* e, F&& f) {
    try {
      f();
      return true;
    } catch (const ConfigError& ex) {
      add(e, ex.what());
      return false;
    }
  }
  void add(const Entry* e, const std::string& message) {
    const int rank = e == nullptr || e->level == 0 ? INT_MAX : e->level;
    const long line = e == nullptr ? 0 : static_cast<long>(e->node->source().begin.line);
    items_.push_back({rank, line, items_.size(), message});
  }
  void throw_if_any() {
    if (items_.empty()) return;
    std::sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.line != b.line ? a.line < b.line : a.order < b.order;
    });
    std::vector<std::string> messages;
    for (const auto& i : items_) messages.push_back(i.message);
    throw ConfigError(messages);
  }

 private:
  struct Item {
    int rank;
    long line;
    std::size_t order;
    std::string message;
  };
  std::vector<Item> items_;
};

// A QEMU version as `qemu-system-x86_64 --version` prints it: "2.4.0", "2.4.0.1", "7.2.22",
// "10.1", with or without a distribution's suffix ("7.2.22 (Debian 1:7.2+dfsg-7)", "2.4-12").
// Compared as numbers: a development (x.y.50) or release-candidate (x.y.90) build counts as x.y.
struct QemuVersion {
  int major = 0, minor = 0;
  bool before(int maj, int min) const { return major != maj ? major < maj : minor < min; }
};

std::optional<QemuVersion> parse_qemu_version(const std::string& text) {
  std::size_t i = 0;
  auto number = [&](int& out) {
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 4) ++i;
    if (i == start || (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))) return false;
    out = std::stoi(text.substr(start, i - start));
    return true;
  };
  QemuVersion v;
  int micro = 0;
  if (!number(v.major) || i >= text.size() || text[i] != '.') return std::nullopt;
  ++i;
  if (!number(v.minor)) return std::nullopt;
  while (i < text.size() && text[i] == '.') {  // micro and a packager's fourth part
    ++i;
    if (!number(micro)) return std::nullopt;
  }
  if (i < text.size() && std::string("-+~ (").find(text[i]) == std::string::npos) return std::nullopt;
  if (v.major > 99) return std::nullopt;
  return v;
}

// A default that the stated QEMU version decides (docs/sources.md §8). The rule applies where
// the key is not stated at the version's level or above: a key of the same file, of a file
// based on it, or of --set wins; a key inherited from a base the version's file overrides does
// not (as with workload.fio_job), so `--set host.qemu_version=7.2.0` on a seed asks what that
// version's defaults would do.
struct VersionRule {
  const char* key;
  const char* rule;    // for docs
  const char* source;  // for docs
  void (*apply)(IoScenario&, const QemuVersion&);
};

const std::vector<VersionRule>& version_rules() {
  static const std::vector<VersionRule> rules = {
      {"host.virtio_blk_batching", "writes up to 2.2 (bdrv_aio_multiwrite), all since 2.3 (multireq)",
       "QEMU commit 95f7142abc86 \"virtio-blk: introduce multiread\" (Feb 2015, QEMU 2.3)",
       [](IoScenario& s, const QemuVersion& v) {
         s.host.virtio_blk_batching = v.before(2, 3) ? VirtioBlkBatching::writes : VirtioBlkBatching::all;
       }},
      {"host.poll_max_us", "0 (no IOThread polling) before 2.9, 32.768 since",
       "QEMU qapi/misc.json IOThreadInfo: poll-max-ns \"(since 2.9)\"; include/system/iothread.h IOTHREAD_POLL_MAX_NS_DEFAULT "
       "32768",
       [](IoScenario& s, const QemuVersion& v) { s.host.poll_max_ns = v.before(2, 9) ? 0.0 : 32768.0; }},
      {"guest.queue_size", "128 before 5.0, 256 since",
       "qemu-devel \"[PATCH v3] virtio: increase virtqueue size for virtio-scsi and virtio-blk\" (Feb 2020, QEMU 5.0; "
       "hw_compat_4_2 keeps 128)",
       [](IoScenario& s, const QemuVersion& v) { s.guest.queue_size = v.before(5, 0) ? 128 : 256; }},
      {"guest.num_queues", "1 before 5.2, 0 (= vcpus) since",
       "QEMU commit 9445e1e15e66 \"virtio-blk-pci: default num_queues to -smp N\" and 6a558822849f (virtio-scsi), QEMU 5.2; "
       "hw_compat_5_1 pins 1",
       [](IoScenario& s, const QemuVersion& v) { s.guest.num_queues = v.before(5, 2) ? 1 : 0; }},
  };
  return rules;
}

// fio's synchronous engines (FIO_SYNCIO in engines/sync.c). Other engines a job file names are
// modelled as psync too, with a note of their own (apply_fio_job).
bool is_sync_engine(const WorkloadParams& w) { return fio::is_synchronous_engine(w.ioengine_name); }
bool is_pure_direction(const std::string& rw) { return rw == "read" || rw == "randread" || rw == "write" || rw == "randwrite"; }

// An edit as a one-key document at level 0 (above the file and its bases), as --set makes it.
void add_edit(Loader& loader, std::unique_ptr<toml::table> doc) {
  std::map<std::string, Entry> mine;
  flatten(*doc, "", "(from --set)", 0, mine);
  for (auto& [k, e] : mine) loader.entries[k] = e;
  loader.documents.push_back(std::shared_ptr<const toml::table>(std::move(doc)));
}

// Everything after the documents are read: the values, the defaults that depend on other keys,
// the job file, the version rules and the cross-key checks.
IoScenario derive_io_scenario(const std::string& path, const Loader& loader);

}  // namespace

struct ScenarioSource::Parsed {
  Loader loader;
};

ScenarioSource::ScenarioSource(const std::string& path) : path_(path) {
  auto parsed = std::make_shared<Parsed>();
  parsed->loader.load_file(path);
  parsed->loader.load_vm_bases();
  parsed_ = std::move(parsed);
}

ScenarioSource& ScenarioSource::set(const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + item + ": expected key=value, e.g. --set workload.iodepth=32");
  // A text key takes the rest of the line as it is: --set host.qemu_version=2.10 is "2.10",
  // not the number 2.1.
  std::string text = item;
  const std::string value = item.substr(eq + 1);
  if (const Param* p = find_param(declared_key(item.substr(0, eq)));
      p && p->kind == Kind::text && !value.empty() && value.front() != '"') {
    std::string quoted;
    for (const char c : value) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    text = item.substr(0, eq + 1) + "\"" + quoted + "\"";
  }
  auto doc = std::make_unique<toml::table>();
  apply_overrides(*doc, {text});
  add_edit(writable().loader, std::move(doc));
  return *this;
}

ScenarioSource& ScenarioSource::set(const std::string& key, double value) {
  const Param* p = find_param(declared_key(key));
  if (p == nullptr) throw ConfigError("(from --set): " + key + ": unknown key" + did_you_mean(key, all_keys()));
  if (p->kind == Kind::text || p->kind == Kind::choice || p->kind == Kind::boolean)
    throw ConfigError("(from --set): " + key + ": expected " + (p->kind == Kind::boolean ? "true or false" : "a text value") +
                      ", not the number " + node_text(toml::value<double>(value)));
  auto doc = std::make_unique<toml::table>();
  toml::table* at = doc.get();
  std::size_t start = 0;
  for (std::size_t dot = key.find('.'); dot != std::string::npos; start = dot + 1, dot = key.find('.', start))
    at = at->insert_or_assign(key.substr(start, dot - start), toml::table{}).first->second.as_table();
  const std::string leaf = key.substr(start);
  // An integer key takes an integral value as a TOML integer, as a file would write it.
  if (p->kind == Kind::integer && value == std::floor(value) && std::fabs(value) < 9e15)
    at->insert_or_assign(leaf, static_cast<std::int64_t>(value));
  else
    at->insert_or_assign(leaf, value);
  add_edit(writable().loader, std::move(doc));
  return *this;
}

ScenarioSource::Parsed& ScenarioSource::writable() {
  // Copy on write: a copy of this source shares the entries until one of them is edited; the
  // documents themselves are shared for good (shared_ptr<const toml::table>). Sole owner, the
  // edit goes in place, so k edits of a fresh copy cost one copy of the entries, not k.
  if (parsed_.use_count() != 1) parsed_ = std::make_shared<Parsed>(*parsed_);
  return *parsed_;
}

IoScenario ScenarioSource::scenario() const { return derive_io_scenario(path_, parsed_->loader); }

IoScenario load_io_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  ScenarioSource source(path);
  for (const auto& item : overrides) source.set(item);
  return source.scenario();
}

namespace {

// A VM's or a backend's name: what follows vm. or backend. in a key.
bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (const char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

bool is_multi_vm(const Loader& l) {
  const auto vm = l.entries.find("vm"), be = l.entries.find("backend");
  return (vm != l.entries.end() && vm->second.node->is_array()) || (be != l.entries.end() && be->second.node->is_array());
}

// What every VM of a [[vm]] file shares: the run, the host's cores and its page cache.
bool shared_key(const std::string& key) { return key.rfind("run.", 0) == 0 || key == "host.cores" || key == "host.pagecache_us"; }

std::string join_names(const std::vector<std::string>& names) {
  std::string l;
  for (const auto& n : names) l += (l.empty() ? "" : ", ") + n;
  return l;
}

// A file of [[vm]] tables (and [[backend]] tables): each VM profile is derived as a single-VM
// scenario from the keys that are its own (its table, its base, its edits), its backend's and
// the shared ones, so that every rule of a single-VM file holds for each VM; then they are put
// together on one host.
IoScenario derive_multi(const std::string& path, const Loader& loader) {
  Errors errors;
  const auto entry_of = [&](const std::string& key) -> const Entry* {
    const auto it = loader.entries.find(key);
    return it == loader.entries.end() ? nullptr : &it->second;
  };
  const Entry* vm_entry = entry_of("vm");
  const Entry* be_entry = entry_of("backend");
  if (vm_entry && !vm_entry->node->is_array()) vm_entry = nullptr;
  if (be_entry && !be_entry->node->is_array()) be_entry = nullptr;
  const auto line_of = [](const toml::node& n) { return std::to_string(n.source().begin.line); };
  const auto inside = [](const Entry& e, const toml::node& n) { return Entry{&n, e.file, e.level}; };

  // [[backend]] tables.
  struct Named {
    std::string name;
    const toml::table* table;
    Entry entry;
  };
  std::vector<Named> backends;
  std::vector<std::string> backend_names;
  if (be_entry) {
    if (!vm_entry)
      errors.add(be_entry, where(*be_entry, "backend") +
                               ": [[backend]] tables are the devices that [[vm]] tables name, and this file has no [[vm]] "
                               "table: write one [backend] table for a single VM, or add [[vm]] tables with backend = "
                               "\"<name>\"");
    for (const auto& n : *be_entry->node->as_array()) {
      const Entry e = inside(*be_entry, n);
      const toml::table* t = n.as_table();
      const toml::node* name = t ? t->get("name") : nullptr;
      if (!name || !name->is_string()) {
        errors.add(&e, where(e, "backend") +
                           ": a [[backend]] table needs a name (e.g. name = \"nvme\"), which each [[vm]] names with backend = "
                           "\"nvme\" and --set with backend.nvme.<key>");
        continue;
      }
      const std::string nm = *name->value<std::string>();
      const Entry ne = inside(*be_entry, *name);
      if (!valid_name(nm) || find_param("backend." + nm)) {
        errors.add(&ne, where(ne, "backend.name") + ": \"" + nm + "\" " +
                            (valid_name(nm) ? "is a backend key; name the device otherwise, e.g. \"nvme0\""
                                            : "is not a name: use letters, digits, - and _ (e.g. \"nvme0\")"));
        continue;
      }
      bool twice = false;
      for (const auto& b : backends)
        if (b.name == nm) {
          errors.add(&ne, where(ne, "backend.name") + ": two [[backend]] tables named \"" + nm + "\" (lines " +
                              line_of(*b.table->get("name")) + " and " + line_of(*name) + "): give each device its own name");
          twice = true;
        }
      if (twice) continue;
      backends.push_back({nm, t, e});
      backend_names.push_back(nm);
    }
  }
  const auto backend_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < backends.size(); ++i)
      if (backends[i].name == name) return static_cast<int>(i);
    return -1;
  };

  // [[vm]] tables.
  // One [[vm.disk]] table beyond what the VM's first disk shares with a one-disk VM (whose
  // backend is Vm::backend): its filename and IOThread; for disks after the first, its backend.
  struct Disk {
    std::string backend;
    const Entry* backend_entry = nullptr;
    std::string filename;  // "" = /dev/<name>
    const Entry* filename_entry = nullptr;
    int iothread = -1;
    const Entry* iothread_entry = nullptr;
    const Entry* entry = nullptr;  // its table (null for the implicit one disk)
  };
  struct Vm {
    std::string name;
    int count = 1;
    std::string backend;
    const Entry* backend_entry = nullptr;  // where the disk names it
    Entry entry;                           // the table
    std::map<std::string, Entry> own;      // its keys, as a single-VM file writes them
    std::string base;
    const Entry* base_entry = nullptr;
    std::vector<Disk> disks;  // at least one once its table is read
  };
  std::vector<Vm> vms;
  std::vector<std::string> vm_names;
  std::vector<std::unique_ptr<Entry>> held;  // entries made here that messages point at
  const auto hold = [&](Entry e) { return held.emplace_back(std::make_unique<Entry>(std::move(e))).get(); };
  // A VM's [[vm.disk]] tables: each a virtio-blk device of the VM, naming its backend.
  const auto read_disks = [&](Vm& vm, const Entry& x, const Entry* xe, const std::string& prefix) {
    const toml::array* list = x.node->as_array();
    if (list == nullptr || list->empty()) {
      errors.add(xe, where(*xe, "disk") + ": expected [[vm.disk]] tables, each with backend = \"<name>\"");
      return;
    }
    if (list->size() > kMaxDisks) {
      errors.add(xe, where(*xe, "disk") + ": " + std::to_string(list->size()) + " [[vm.disk]] tables: a VM has 1 to " +
                         std::to_string(kMaxDisks) + " disks here");
      return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const toml::table* d = list->get(i)->as_table();
      Entry de = inside(x, *list->get(i));
      de.vm = prefix;
      const std::string dk = "disk." + std::to_string(i);
      Disk disk;
      disk.entry = hold(de);
      if (d == nullptr) {
        errors.add(disk.entry, where(de, dk) + ": expected a [[vm.disk]] table, e.g. backend = \"nvme\"");
        continue;
      }
      for (const auto& [key, node] : *d) {
        const std::string kk(key.str());
        Entry ke = inside(x, node);
        ke.vm = prefix;
        const Entry* kep = hold(ke);
        if (kk == "backend" || kk == "filename") {
          if (!node.is_string()) {
            errors.add(kep, where(ke, dk + "." + kk) + ": expected " +
                                (kk == "backend" ? "the name of a [[backend]] table, e.g. backend = \"nvme\""
                                                 : "the guest path a fio job names, e.g. filename = \"/dev/vdb\""));
            continue;
          }
          (kk == "backend" ? disk.backend : disk.filename) = *node.value<std::string>();
          (kk == "backend" ? disk.backend_entry : disk.filename_entry) = kep;
        } else if (kk == "iothread") {
          const auto v = node.value_exact<std::int64_t>();
          if (!v || *v < 0 || *v > 4095) {
            errors.add(kep, where(ke, dk + ".iothread") +
                                ": expected the index of one of the VM's IOThreads (0 to host.iothreads - 1), got " +
                                node_text(node));
            continue;
          }
          disk.iothread = static_cast<int>(*v);
          disk.iothread_entry = kep;
        } else {
          errors.add(kep, where(ke, dk + "." + kk) + ": unknown key of a [[vm.disk]] table" +
                              did_you_mean(kk, {"backend", "filename", "iothread"}) +
                              " (its keys are backend, filename, iothread)");
        }
      }
      if (i == 0 && disk.backend_entry) {
        if (vm.backend_entry) {
          errors.add(disk.backend_entry, where(*disk.backend_entry, "disk.0.backend") +
                                             ": the VM's first disk names its backend twice (backend in the [[vm]] table "
                                             "and in its first [[vm.disk]]): keep one");
        } else {
          vm.backend = disk.backend;
          vm.backend_entry = disk.backend_entry;
        }
      }
      vm.disks.push_back(std::move(disk));
    }
  };
  if (vm_entry) {
    for (const auto& n : *vm_entry->node->as_array()) {
      const Entry e = inside(*vm_entry, n);
      const toml::table* t = n.as_table();
      const toml::node* name = t ? t->get("name") : nullptr;
      if (!name || !name->is_string()) {
        errors.add(&e, where(e, "vm") +
                           ": a [[vm]] table needs a name (e.g. name = \"web\"): its keys are then vm.web.<section>.<key> "
                           "and its figures vm.web.read.iops, ...");
        continue;
      }
      const std::string nm = *name->value<std::string>();
      const Entry* ne = hold(inside(*vm_entry, *name));
      if (!valid_name(nm) || nm == "count") {
        errors.add(ne, where(*ne, "vm.name") + ": \"" + nm + "\" " +
                           (nm == "count" ? "would make vm.count.<key> read as vm.count; name the VM otherwise"
                                          : "is not a name: use letters, digits, - and _ (e.g. \"web\")"));
        continue;
      }
      bool twice = false;
      for (const auto& v : vms)
        if (v.name == nm) {
          errors.add(ne, where(*ne, "vm.name") + ": two [[vm]] tables named \"" + nm + "\" (lines " +
                             line_of(*v.entry.node->as_table()->get("name")) + " and " + line_of(*name) +
                             "): give each its own name; for identical VMs write count = N in one table");
          twice = true;
        }
      if (twice) continue;
      Vm vm{nm, 1, "", nullptr, e, {}, "", nullptr, {}};
      const std::string prefix = "vm." + nm + ".";
      std::map<std::string, Entry> mine;
      flatten(*t, "", e.file, e.level, mine);
      for (auto& [k, x] : mine) {
        x.vm = prefix;
        const Entry* xe = hold(x);
        if (k == "name") continue;
        if (k == "count") {
          const auto c = x.node->value_exact<std::int64_t>();
          if (!c)
            errors.add(xe, where(*xe, k) + ": expected a whole number of VMs, got " + node_text(*x.node));
          else if (*c < 1 || *c > 4096)
            errors.add(xe, where(*xe, k) + ": count = " + std::to_string(*c) +
                               ": a [[vm]] table stands for 1 to 4096 identical VMs; write count = 1 or more, or delete the "
                               "table (--set " +
                               prefix + "count=0 switches it off for a comparison)");
          else
            vm.count = static_cast<int>(*c);
        } else if (k == "backend") {
          if (!x.node->is_string())
            errors.add(xe, where(*xe, k) + ": expected the name of a [[backend]] table, e.g. backend = \"nvme\"");
          else {
            vm.backend = *x.node->value<std::string>();
            vm.backend_entry = xe;
          }
        } else if (k == "disk") {
          read_disks(vm, x, xe, prefix);
        } else if (k.rfind("disk.", 0) == 0) {
          errors.add(xe, where(*xe, k) +
                             ": a VM's disks are [[vm.disk]] tables (one per disk, in order), not a [vm.disk] "
                             "table: write [[vm.disk]]");
        } else if (k == "base") {
          if (!x.node->is_string())
            errors.add(xe, where(*xe, k) + ": expected a file name, e.g. base = \"../calibrated/FIT.toml\"");
          else {
            vm.base = Loader::vm_base_path(x.file, *x.node->value<std::string>());
            vm.base_entry = xe;
          }
        } else if (shared_key(k)) {
          errors.add(xe, where(*xe, k) + ": every VM on the host shares it: write it at the top of the file (" +
                             (k.rfind("run.", 0) == 0 ? "[run]" : "[host]") + ")");
        } else if (k.rfind("backend.", 0) == 0) {
          errors.add(xe, where(*xe, k) +
                             ": a device is shared by the disks that name it: write its keys in a [[backend]] "
                             "table (or the file's one [backend]) and backend = \"<name>\" in the [[vm]] table");
        } else if (k.rfind("vm.", 0) == 0 || k == "description" || k.rfind("calibration.", 0) == 0) {
          errors.add(xe, where(*xe, k) +
                             ": not a key of a [[vm]] table (its keys are name, count, backend, base and "
                             "[vm.workload], [vm.guest], [vm.virtqueue], [vm.host] tables)");
        } else {
          vm.own[k] = x;
        }
      }
      if (vm.disks.empty()) vm.disks.emplace_back();  // a VM without [[vm.disk]] tables has one disk
      vms.push_back(std::move(vm));
      vm_names.push_back(nm);
    }
  }
  // An edit of one disk: vm.<name>.disk.<i>.<key> (vm.<name>.backend is disk 0's).
  const auto edit_disk = [&](Vm& vm, const std::string& sub, const Entry& e, const Entry* xe, const std::string& key) {
    const std::string rest = sub.substr(5);
    const auto dot = rest.find('.');
    const std::string index_text = rest.substr(0, dot), field = dot == std::string::npos ? "" : rest.substr(dot + 1);
    const bool number = !index_text.empty() && index_text.size() < 4 &&
                        std::all_of(index_text.begin(), index_text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const std::string disks = std::to_string(vm.disks.size());
    if (!number || field.empty()) {
      errors.add(xe, where(e, key) + ": expected vm." + vm.name + ".disk.<i>.<key>, the disk by its index (0 to " +
                         std::to_string(vm.disks.size() - 1) + ") and one of backend, filename, iothread");
      return;
    }
    const auto i = static_cast<std::size_t>(std::stoi(index_text));
    if (i >= vm.disks.size()) {
      errors.add(xe, where(e, key) + ": vm." + vm.name + " has " + disks + " disk" + (vm.disks.size() == 1 ? "" : "s") +
                         " (disk." +
                         (vm.disks.size() == 1 ? std::string("0") : "0 to disk." + std::to_string(vm.disks.size() - 1)) +
                         "); an edit cannot add one: write another [[vm.disk]] table in the file");
      return;
    }
    Disk& d = vm.disks[i];
    if (field == "backend" || field == "filename") {
      if (!e.node->is_string()) {
        errors.add(xe, where(e, key) + ": expected " +
                           (field == "backend" ? "the name of a [[backend]] table" : "a guest path such as /dev/vdb"));
        return;
      }
      if (field == "filename") {
        d.filename = *e.node->value<std::string>();
        d.filename_entry = xe;
      } else if (i == 0) {
        vm.backend = *e.node->value<std::string>();
        vm.backend_entry = xe;
      } else {
        d.backend = *e.node->value<std::string>();
        d.backend_entry = xe;
      }
    } else if (field == "iothread") {
      const auto v = e.node->value_exact<std::int64_t>();
      if (!v || *v < -1 || *v > 4095) {
        errors.add(xe, where(e, key) + ": expected the index of one of the VM's IOThreads (-1: the VM's mapping), got " +
                           node_text(*e.node));
        return;
      }
      d.iothread = static_cast<int>(*v);
      d.iothread_entry = *v >= 0 ? xe : nullptr;
    } else {
      errors.add(xe, where(e, key) + ": unknown key of a disk" + did_you_mean(field, {"backend", "filename", "iothread"}) +
                         " (a disk's keys are backend, filename, iothread)");
    }
  };
  const auto vm_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < vms.size(); ++i)
      if (vms[i].name == name) return static_cast<int>(i);
    return -1;
  };

  // The other keys: shared ones, edits of one VM or one backend, and keys a [[vm]] file does not
  // take at its top.
  std::map<std::string, Entry> shared, single_backend, every_vm;
  std::vector<std::map<std::string, Entry>> backend_keys(backends.size());
  for (std::size_t b = 0; b < backends.size(); ++b) {
    std::map<std::string, Entry> mine;
    flatten(*backends[b].table, "backend", backends[b].entry.file, backends[b].entry.level, mine);
    for (auto& [k, x] : mine) {
      if (k == "backend.name") continue;
      x.backend = backends[b].name;
      backend_keys[b][k] = x;
    }
  }
  for (const auto& [key, e] : loader.entries) {
    if (key == "vm" || key == "backend" || key == "base") continue;
    if (key == "description") continue;
    if (key.rfind("vm.", 0) == 0) {
      const std::string rest = key.substr(3);
      const auto dot = rest.find('.');
      if (dot == std::string::npos) {
        errors.add(&e, where(e, key) + ": in a file of [[vm]] tables each VM has its own " + rest + ": write vm.<name>." + rest +
                           " (VMs: " + join_names(vm_names) + ")");
        continue;
      }
      const std::string name = rest.substr(0, dot), sub = rest.substr(dot + 1);
      const int v = vm_index(name);
      if (v < 0) {
        errors.add(&e, where(e, key) + ": names no VM: \"" + name + "\" is not a [[vm]] of this file" +
                           did_you_mean(name, vm_names) + "; its VMs are " + join_names(vm_names));
        continue;
      }
      Vm& vm = vms[static_cast<std::size_t>(v)];
      Entry x = e;
      x.vm = "vm." + name + ".";
      const Entry* xe = hold(x);
      if (sub == "count") {
        // An edit may switch a profile off (0), for a comparison or a sweep from none.
        const auto c = e.node->value_exact<std::int64_t>();
        if (!c || *c < 0 || *c > 4096)
          errors.add(xe, where(e, key) + ": expected a whole number of VMs from 0 (this profile switched off) to 4096, got " +
                             node_text(*e.node));
        else
          vm.count = static_cast<int>(*c);
      } else if (sub == "backend" && vm.disks.size() > 1) {
        errors.add(xe, where(e, key) + ": vm." + name + " has " + std::to_string(vm.disks.size()) +
                           " disks: name the one whose backend this is, vm." + name + ".disk.<i>.backend (i from 0 to " +
                           std::to_string(vm.disks.size() - 1) + ")");
      } else if (sub == "backend" || sub.rfind("disk.", 0) == 0) {
        edit_disk(vm, sub == "backend" ? "disk.0.backend" : sub, e, xe, key);
      } else if (sub == "base") {
        errors.add(xe, where(e, key) + ": a [[vm]]'s base is read from the file only: edit base = \"...\" there");
      } else if (shared_key(sub)) {
        errors.add(xe, where(e, key) + ": every VM on the host shares it: write --set " + sub);
      } else if (sub.rfind("backend.", 0) == 0) {
        errors.add(xe, where(e, key) + ": a device's keys are its backend's: write backend.<name>." + sub.substr(8) +
                           (backends.empty() ? std::string(" (or ") + sub + " for the file's one [backend])" : std::string()));
      } else {
        vm.own[sub] = x;  // an edit (level 0) over the table's own
      }
      continue;
    }
    if (key.rfind("backend.", 0) == 0) {
      const std::string rest = key.substr(8);
      const auto dot = rest.find('.');
      if (be_entry) {
        const int b = dot == std::string::npos ? -1 : backend_index(rest.substr(0, dot));
        if (b >= 0) {
          Entry x = e;
          x.backend = backends[static_cast<std::size_t>(b)].name;
          backend_keys[static_cast<std::size_t>(b)]["backend." + rest.substr(dot + 1)] = x;
        } else if (find_param(key)) {
          errors.add(&e, where(e, key) +
                             (e.level > 0 ? ": both a [backend] table and [[backend]] tables in one scenario" +
                                                std::string(e.level > 1 ? " (a [backend] in its base)" : "") +
                                                "; a file uses one or the other: "
                                          : ": this file's devices are [[backend]] tables: ") +
                             "write backend.<name>." + rest + " (backends: " + join_names(backend_names) + ")");
        } else {
          const std::string name = dot == std::string::npos ? rest : rest.substr(0, dot);
          errors.add(&e, where(e, key) + ": names no backend: \"" + name + "\" is not a [[backend]] of this file" +
                             did_you_mean(name, backend_names) + "; its backends are " + join_names(backend_names));
        }
      } else if (dot != std::string::npos && !find_param(key)) {
        errors.add(
            &e, where(e, key) + ": names no backend: this file has one [backend] table: write backend." + rest.substr(dot + 1));
      } else {
        single_backend[key] = e;
      }
      continue;
    }
    if (shared_key(key)) {
      shared[key] = e;
      continue;
    }
    if (find_param(key) && e.level == 0 && key != "vm.count") {
      every_vm[key] = e;  // an edit without vm.<name>.: every VM's (run --ios, plan --ios)
      continue;
    }
    if (find_param(key))
      errors.add(&e, where(e, key) + ": in a file of [[vm]] tables this is each VM's own: write it in the [vm." +
                         key.substr(0, key.find('.')) + "] table of a [[vm]] (--set vm.<name>." + key +
                         "; VMs: " + join_names(vm_names) + ")");
    else
      errors.add(&e, where(e, key) + ": unknown key" + did_you_mean(key, all_keys()));
  }

  // Each VM profile as a single-VM scenario.
  std::vector<VmProfile> profiles;
  std::set<std::string> seen;
  std::vector<bool> used(backends.size(), false);
  // Each VM's keys as one single-VM file would have them, before the devices are merged below.
  struct VmView {
    Vm* vm;
    int backend;
    std::map<std::string, Entry> keys;
    std::vector<int> disk_backends;  // each disk's device (the first is `backend`)
  };
  std::vector<VmView> views;
  // The device a VM's disk after the first names: its [[backend]] index, -1 for the file's one
  // [backend] table, or -2 after an error.
  const auto disk_backend = [&](const Vm& vm, std::size_t i) {
    const Disk& d = vm.disks[i];
    const std::string key = "disk." + std::to_string(i) + ".backend";
    if (d.backend_entry) {
      if (!be_entry) {
        errors.add(d.backend_entry, where(*d.backend_entry, key) + ": names \"" + d.backend +
                                        "\", but this file has no [[backend]] tables (its one [backend] table, or the default "
                                        "NVMe, holds every disk): remove it, or add [[backend]] tables with names");
        return -2;
      }
      const int b = backend_index(d.backend);
      if (b < 0)
        errors.add(d.backend_entry, where(*d.backend_entry, key) + ": no [[backend]] named \"" + d.backend + "\"" +
                                        did_you_mean(d.backend, backend_names) + "; the backends are " +
                                        join_names(backend_names));
      return b < 0 ? -2 : b;
    }
    if (be_entry && backends.size() != 1) {
      errors.add(d.entry, where(*d.entry, key) + ": missing: each disk names its device among several, e.g. backend = \"" +
                              (backends.empty() ? std::string("nvme") : backends.front().name) +
                              "\" (backends: " + join_names(backend_names) + ")");
      return -2;
    }
    return be_entry ? 0 : -1;
  };
  for (Vm& vm : vms) {
    std::vector<int> disk_backends(vm.disks.size(), -1);
    bool disk_error = false;
    for (std::size_t i = 1; i < vm.disks.size(); ++i) {
      disk_backends[i] = disk_backend(vm, i);
      disk_error = disk_error || disk_backends[i] == -2;
    }
    if (disk_error) continue;
    int b = -1;
    if (vm.backend_entry) {
      if (!be_entry) {
        errors.add(vm.backend_entry, where(*vm.backend_entry, "backend") + ": names \"" + vm.backend +
                                         "\", but this file has no [[backend]] tables (its one [backend] table, or the "
                                         "default NVMe, serves every VM): remove it, or add [[backend]] tables with names");
        continue;
      }
      b = backend_index(vm.backend);
      if (b < 0) {
        errors.add(vm.backend_entry, where(*vm.backend_entry, "backend") + ": no [[backend]] named \"" + vm.backend + "\"" +
                                         did_you_mean(vm.backend, backend_names) + "; the backends are " +
                                         join_names(backend_names));
        continue;
      }
    } else if (be_entry) {
      if (backends.size() != 1) {
        errors.add(&vm.entry, where(vm.entry, "vm." + vm.name + ".backend") +
                                  ": missing: the VM's disk names its device among several, e.g. backend = \"" +
                                  (backends.empty() ? std::string("nvme") : backends.front().name) +
                                  "\" (backends: " + join_names(backend_names) + ")");
        continue;
      }
      b = 0;
    }
    std::map<std::string, Entry> view = shared;
    for (const auto& [k, x] : b >= 0 ? backend_keys[static_cast<std::size_t>(b)] : single_backend) view[k] = x;
    for (const auto& [k, x] : vm.own) view[k] = x;
    for (const auto& [k, x] : every_vm)
      if (!view.count(k) || view.at(k).level > 0) view[k] = x;  // vm.<name>.<key> edits win over it
    if (vm.base_entry) {
      const auto it = loader.vm_bases.find(vm.base);
      if (it == loader.vm_bases.end()) {
        errors.add(vm.base_entry, where(*vm.base_entry, "base") + ": no such file " + vm.base);
        continue;
      }
      // The profile's keys, below the VM's table and its backend's: the run, the VM count and what
      // the host shares are this file's.
      if (it->second->entries.count("vm") ||
          (it->second->entries.count("backend") && it->second->entries.at("backend").node->is_array())) {
        errors.add(vm.base_entry, where(*vm.base_entry, "base") + ": " + vm.base +
                                      " is a file of [[vm]] or [[backend]] tables; a [[vm]]'s base is one VM profile (a "
                                      "single-VM scenario or a calibrated FIT.toml)");
        continue;
      }
      for (const auto& [k, x] : it->second->entries) {
        if (shared_key(k) || k == "vm.count" || k == "description" || k == "base") continue;
        Entry shifted = x;
        shifted.level = x.level + vm.entry.level;
        shifted.vm = "vm." + vm.name + ".";
        if (k.rfind("backend.", 0) == 0 && b >= 0) shifted.backend = backends[static_cast<std::size_t>(b)].name;
        const auto at = view.find(k);
        if (at == view.end() || at->second.level > shifted.level) view[k] = shifted;
      }
    }
    disk_backends[0] = b;
    for (const int d : disk_backends)
      if (d >= 0 && vm.count > 0) used[static_cast<std::size_t>(d)] = true;
    views.push_back(VmView{&vm, b, std::move(view), std::move(disk_backends)});
  }
  // One device, one set of backend.* values: every VM whose disk names a device sees the values
  // any of them gives it (its [[backend]] table, or a calibrated base's fitted device figures),
  // so that a fitted device is the same device for its neighbours whatever the order of the
  // [[vm]] tables; two VMs giving one key two values is an error, not a silent choice.
  std::vector<std::map<std::string, Entry>> device_keys(backends.size());
  for (std::size_t d = 0; d < backends.size(); ++d) {
    std::map<std::string, std::pair<const VmView*, Entry>> given;
    for (const VmView& v : views) {
      if (v.backend != static_cast<int>(d)) continue;
      for (const auto& [k, x] : v.keys) {
        if (k.rfind("backend.", 0) != 0) continue;
        const auto at = given.find(k);
        if (at == given.end()) {
          given.emplace(k, std::make_pair(&v, x));
        } else if (node_text(*at->second.second.node) != node_text(*x.node)) {
          const std::string& dev = backends[d].name;
          errors.add(&v.vm->entry,
                     where(v.vm->entry, "vm." + v.vm->name + ".backend") + ": device " + dev + " is shared, but VM " +
                         at->second.first->vm->name + " gives " + k + " = " + node_text(*at->second.second.node) + " (" +
                         at->second.second.file + ") and VM " + v.vm->name + " " + node_text(*x.node) + " (" + x.file +
                         "): one device has one value; set backend." + dev + k.substr(7) + " in its [[backend]] table");
        }
      }
    }
    for (VmView& v : views)
      if (v.backend == static_cast<int>(d))
        for (const auto& [k, x] : given)
          if (!v.keys.count(k)) v.keys.emplace(k, x.second);
    // What a disk after a VM's first sees of this device: the same values (a VM's calibrated
    // base brings device figures for its first disk's device only).
    device_keys[d] = backend_keys[d];
    for (const auto& [k, x] : given) device_keys[d][k] = x.second;
  }
  // A profile's disks (DiskSpec), each disk's device parameters, and the disk each of its fio
  // jobs drives (filename=). False after an error.
  const auto resolve_disks = [&](VmProfile& p, const Vm& vm, const VmView& v, const Loader& one) {
    IoScenario& s = p.scenario;
    const std::string prefix = "vm." + vm.name + ".";
    bool ok = true;
    for (std::size_t i = 0; i < vm.disks.size(); ++i) {
      const Disk& d = vm.disks[i];
      DiskSpec spec;
      // Linux's virtio_blk names its disks vda, vdb, ... in probe order (virtblk_name_format).
      spec.name = std::string("vd") + static_cast<char>('a' + i);
      spec.filename = d.filename.empty() ? "/dev/" + spec.name : d.filename;
      spec.iothread = d.iothread;
      if (d.entry) spec.where = d.entry->file + ":" + line_of(*d.entry->node);
      const int b = v.disk_backends[i];
      spec.backend = b >= 0 ? backends[static_cast<std::size_t>(b)].name : "";
      spec.params = s.backend;
      if (b != v.backend && b >= 0) {
        // Another device: the VM as it is, on that device's values.
        Loader other;
        for (const auto& [k, x] : one.entries)
          if (k.rfind("backend.", 0) != 0) other.entries.emplace(k, x);
        for (const auto& [k, x] : device_keys[static_cast<std::size_t>(b)]) other.entries[k] = x;
        try {
          spec.params = derive_io_scenario(path, other).backend;
        } catch (const ConfigError& ex) {
          for (const auto& m : ex.messages())
            if (seen.insert(m).second) errors.add(&vm.entry, m);
          ok = false;
        }
      }
      if (d.iothread_entry && s.guest.driver != GuestDriver::virtio_blk) {
        errors.add(d.iothread_entry, where(*d.iothread_entry, "disk." + std::to_string(i) + ".iothread") +
                                         ": a disk's IOThread is a virtio-blk device's (iothread=), and vm." + vm.name +
                                         " has guest.driver = " + driver_name(s.guest.driver) + ": remove it");
        ok = false;
      } else if (d.iothread_entry && (s.host.iothreads == 0 || d.iothread >= s.host.iothreads)) {
        errors.add(d.iothread_entry,
                   where(*d.iothread_entry, "disk." + std::to_string(i) + ".iothread") + ": IOThread " +
                       std::to_string(d.iothread) + ", but the VM has " +
                       (s.host.iothreads == 0
                            ? std::string("none (host.iothreads = 0: the QEMU main loop serves its disks)")
                            : std::to_string(s.host.iothreads) + " (0 to " + std::to_string(s.host.iothreads - 1) + ")") +
                       ": set " + prefix + "host.iothreads, or give an IOThread it has");
        ok = false;
      }
      for (const DiskSpec& before : s.disks)
        if (before.filename == spec.filename) {
          errors.add(d.filename_entry ? d.filename_entry : d.entry,
                     where(d.filename_entry ? *d.filename_entry : *d.entry, "disk." + std::to_string(i) + ".filename") +
                         ": two disks with filename " + spec.filename + " (" + before.name + " and " + spec.name +
                         "): a fio job's filename= names one disk; give each its own");
          ok = false;
        }
      s.disks.push_back(std::move(spec));
    }
    if (!s.multi_disk() || !ok) return ok;
    const std::string disk0 = s.disks.front().filename, disk1 = s.disks[1].filename;
    std::string listed;
    for (const DiskSpec& d : s.disks)
      listed += (listed.empty() ? "" : ", ") + d.filename + (d.backend.empty() ? "" : " on " + d.backend);
    if (s.guest.driver != GuestDriver::virtio_blk) {
      errors.add(vm.disks[1].entry, where(*vm.disks[1].entry, "disk.1") +
                                        ": several disks are modelled with guest.driver = "
                                        "virtio-blk (each disk its own virtio-blk device), and vm." +
                                        vm.name + " has " + driver_name(s.guest.driver) +
                                        " (one controller's LUNs, or vhost devices with workers of their own, are not modelled): "
                                        "use virtio-blk, or one disk");
      return false;
    }
    // Which disk each fio job drives: the one its filename= names. A VM of several disks and a
    // job that names none, or several (fio then spreads its I/O over them), is refused rather
    // than guessed.
    const auto job_file = s.workload.fio_job.empty() ? one.entries.end() : one.entries.find("workload.fio_job");
    const auto resolve = [&](WorkloadParams& w, const std::string& job) {
      const std::string what = job.empty() ? "its fio job" : "job '" + job + "'";
      const std::string at = w.filename_where.empty() ? "" : w.filename_where + ": ";
      const auto fail_job = [&](const std::string& why) {
        if (job_file != one.entries.end())
          errors.add(&job_file->second, where(job_file->second, "workload.fio_job") + ": " + at + what + ": " + why);
        else
          errors.add(&vm.entry, where(vm.entry, prefix + "disk") + ": " + what + " (its [vm.workload] keys): " + why);
        ok = false;
      };
      if (w.filename.empty()) {
        fail_job("names no disk, and vm." + vm.name + " has " + std::to_string(s.disks.size()) + " (" + listed + "): " +
                 (job_file != one.entries.end() ? "write filename=" + disk0 + " (or " + disk1 + ", ...) in its section"
                                                : "give the VM a job file (workload.fio_job) with a job per disk, each with "
                                                  "filename=" +
                                                      disk0 + " or " + disk1 + ", ..."));
        return;
      }
      // fio: "filename=a:b" is two files, a colon in a name is written "\:".
      std::string name;
      bool several = false;
      for (std::size_t k = 0; k < w.filename.size(); ++k) {
        if (w.filename[k] == '\\' && k + 1 < w.filename.size() && w.filename[k + 1] == ':') {
          name += ':';
          ++k;
        } else if (w.filename[k] == ':') {
          several = true;
        } else {
          name += w.filename[k];
        }
      }
      if (several) {
        fail_job("filename=" + w.filename +
                 " names several files, over which fio spreads the job's I/O (file_service_type); vqsim runs each job on "
                 "one disk: write a job per disk, e.g. [" +
                 (job.empty() ? std::string("data") : job) + "-" + s.disks.front().name + "] with filename=" + disk0 + " and [" +
                 (job.empty() ? std::string("data") : job) + "-" + s.disks[1].name + "] with filename=" + disk1 +
                 ", each with its share of numjobs or iodepth");
        return;
      }
      for (std::size_t i = 0; i < s.disks.size(); ++i)
        if (s.disks[i].filename == name) {
          w.disk = static_cast<int>(i);
          return;
        }
      fail_job("filename=" + w.filename + " is none of vm." + vm.name + "'s disks (" + listed +
               "): name one of them (a [[vm.disk]] table's filename = \"...\" sets the path a job names)");
    };
    if (s.multi_job()) {
      for (FioJob& j : s.jobs) resolve(j.workload, j.name);
      s.workload.disk = s.jobs.front().workload.disk;
    } else {
      resolve(s.workload, "");
    }
    if (!ok) return false;
    for (std::size_t i = 0; i < s.disks.size(); ++i) {
      bool named = s.multi_job() ? false : s.workload.disk == static_cast<int>(i);
      for (const FioJob& j : s.jobs) named = named || j.workload.disk == static_cast<int>(i);
      if (!named)
        s.warnings.push_back(where(*vm.disks[i].entry, "disk." + std::to_string(i)) + ": no fio job of vm." + vm.name +
                             " names " + s.disks[i].filename + " (filename=): the disk is idle");
    }
    return true;
  };
  for (VmView& v : views) {
    Vm& vm = *v.vm;
    const int b = v.backend;
    Loader one;
    one.entries = std::move(v.keys);
    VmProfile p;
    p.name = vm.name;
    p.count = vm.count;
    p.backend = b >= 0 ? backends[static_cast<std::size_t>(b)].name : "";
    try {
      p.scenario = derive_io_scenario(path, one);
    } catch (const ConfigError& ex) {
      for (const auto& m : ex.messages())
        if (seen.insert(m).second) errors.add(&vm.entry, m);
      continue;
    }
    p.scenario.vms = std::max(1, vm.count);
    if (!resolve_disks(p, vm, v, one)) continue;
    // A fitted key that this file sets itself (the VM's table, its backend's, an edit) is not
    // the fit's any more: it stays where the file puts it.
    CalibrationUncertainty& c = p.scenario.calibration;
    for (std::size_t k = 0; k < c.keys.size(); ++k)
      if (const auto at = one.entries.find(c.keys[k]); at != one.entries.end() && at->second.level <= vm.entry.level)
        c.fixed_by_set[k] = true;
    profiles.push_back(std::move(p));
  }
  if (vm_entry && vms.empty()) errors.add(vm_entry, where(*vm_entry, "vm") + ": expected [[vm]] tables, each with a name");
  errors.throw_if_any();
  int running = 0;
  for (const auto& p : profiles) running += p.count;
  if (running == 0)
    throw ConfigError(path +
                      ": vm: every [[vm]] is switched off (count 0): at least one VM must run; set vm.<name>.count=1 "
                      "or more");

  IoScenario s = profiles.front().scenario;
  for (const auto& p : profiles)
    if (p.count > 0) {
      s = p.scenario;
      break;
    }
  s.path = path;
  s.vms = 1;
  if (const Entry* d = entry_of("description")) s.description = d->node->value<std::string>().value_or("");
  s.notes.clear();
  s.warnings.clear();
  // The profiles' parameter uncertainty, as one: each fitted key by the name that edits it in
  // this file (vm.<name>.<key>, backend.<name>.<key>), independent across profiles. The
  // prediction covers every profile's figures (calibration/predict/prediction.h).
  s.calibration = CalibrationUncertainty{};
  CalibrationUncertainty& m = s.calibration;
  struct Fitted {
    const VmProfile* profile;
    std::vector<std::size_t> kept;  // its keys that are not another profile's already
  };
  std::vector<Fitted> fitted;
  for (const auto& p : profiles) {
    const CalibrationUncertainty& c = p.scenario.calibration;
    if (p.count == 0 || !c.present()) continue;
    if (fitted.empty()) {
      m.model_error_log_sd = c.model_error_log_sd;
      m.model_error_workload_log_sd = c.model_error_workload_log_sd;
      m.model_error_combination_log_sd = c.model_error_combination_log_sd;
      m.model_error_depth_log_sd = c.model_error_depth_log_sd;
      m.model_error_fitted_log_sd = c.model_error_fitted_log_sd;
      m.model_error_source = c.model_error_source;
    }
    m.draws = std::max(m.draws, c.draws);
    m.source += (m.source.empty() ? "" : "; ") + ("vm." + p.name + ": " + c.source);
    for (const auto& f : c.fitted_setups)
      if (std::find(m.fitted_setups.begin(), m.fitted_setups.end(), f) == m.fitted_setups.end()) m.fitted_setups.push_back(f);
    const std::size_t offset = m.keys.size();
    Fitted& here = fitted.emplace_back(Fitted{&p, {}});
    for (std::size_t k = 0; k < c.keys.size(); ++k) {
      const std::string& key = c.keys[k];
      const std::string named = key.rfind("backend.", 0) == 0 ? (p.backend.empty() ? key : "backend." + p.backend + key.substr(7))
                                                              : "vm." + p.name + "." + key;
      if (std::find(m.keys.begin(), m.keys.end(), named) != m.keys.end()) continue;  // a shared device's key, fitted twice
      here.kept.push_back(k);
      m.keys.push_back(named);
      m.values.push_back(c.values[k]);
      m.log_sd.push_back(c.log_sd[k]);
      m.fixed_by_set.push_back(c.fixed_by_set[k]);
    }
    for (auto& row : m.log_corr) row.resize(m.keys.size(), 0.0);
    for (std::size_t i = 0; i < here.kept.size(); ++i) {
      std::vector<double> row(m.keys.size(), 0.0);
      for (std::size_t j = 0; j < here.kept.size(); ++j) row[offset + j] = c.log_corr[here.kept[i]][here.kept[j]];
      m.log_corr.push_back(std::move(row));
    }
  }
  if (fitted.size() == 1 && fitted.front().kept.size() == fitted.front().profile->scenario.calibration.keys.size()) {
    // One calibrated profile: its mixture as it is.
    m.modes = fitted.front().profile->scenario.calibration.modes;
    m.mode_weights = fitted.front().profile->scenario.calibration.mode_weights;
  } else if (!fitted.empty()) {
    // Several, independent of each other: draw d of the whole takes each profile's own centre for
    // a draw of its (component_of_draw, as a file of that profile alone would), the profiles after
    // the first at a shuffled draw index so that their strata do not move together; the rows are
    // the mixture's components, one per draw and of equal share (the fitted values have none).
    const int n = m.draws;
    std::vector<std::vector<double>> rows(static_cast<std::size_t>(n));
    for (std::size_t q = 0; q < fitted.size(); ++q) {
      const CalibrationUncertainty& c = fitted[q].profile->scenario.calibration;
      std::vector<int> order(static_cast<std::size_t>(n));
      for (int d = 0; d < n; ++d) order[static_cast<std::size_t>(d)] = d;
      if (q > 0) {
        sim::Rng rng = sim::Rng::for_stream(0, 0, q);  // fixed: the same file, the same rows
        for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      }
      for (int d = 0; d < n; ++d) {
        const std::vector<double>& centre = c.centre(c.component_of_draw(order[static_cast<std::size_t>(d)], n));
        for (std::size_t k : fitted[q].kept) rows[static_cast<std::size_t>(d)].push_back(centre[k]);
      }
    }
    m.modes = std::move(rows);
    m.mode_weights.assign(static_cast<std::size_t>(n), 1.0 / n);
  }
  for (std::size_t b = 0; b < backends.size(); ++b)
    if (!used[b])
      s.warnings.push_back(where(backends[b].entry, "backend." + backends[b].name) +
                           ": no running VM's disk names this device: it is left out");
  // Stonewall groups run in step across the VMs (phase_scenario): a VM whose job file has fewer
  // groups than another's is idle in the later ones, as its fio has finished by then.
  int most_phases = 1;
  std::string most_name;
  for (const auto& p : profiles)
    if (p.count > 0 && scenario_phases(p.scenario) > most_phases) {
      most_phases = scenario_phases(p.scenario);
      most_name = p.name;
    }
  for (const auto& p : profiles)
    if (p.count > 0 && scenario_phases(p.scenario) < most_phases) {
      const int mine = scenario_phases(p.scenario);
      s.warnings.push_back(path + ": vm." + p.name + ": its fio runs " + std::to_string(mine) + " stonewall group" +
                           (mine == 1 ? "" : "s") + " and vm." + most_name + "'s " + std::to_string(most_phases) +
                           ": the groups run in step (group i of every VM together, each after the one before), so vm." + p.name +
                           " is idle from group " + std::to_string(mine + 1) +
                           " on; give its job file as many groups to keep it running");
    }
  for (const auto& p : profiles) {
    for (const auto& n : p.scenario.notes) s.notes.push_back("vm." + p.name + ": " + n);
    for (const auto& w : p.scenario.warnings)
      if (std::find(s.warnings.begin(), s.warnings.end(), w) == s.warnings.end()) s.warnings.push_back(w);
  }
  if (s.calibration.present())
    s.notes.push_back(
        "the prediction intervals cover every VM profile's figures (vm.<name>.*) and the host's (host.total.*), with the "
        "parameter uncertainty of every calibrated [[vm]] base");
  s.backend_names = backend_names;
  s.profiles = std::move(profiles);
  return s;
}

IoScenario derive_io_scenario(const std::string& path, const Loader& loader) {
  if (is_multi_vm(loader)) return derive_multi(path, loader);
  IoScenario s;
  s.path = path;
  s.workload.ramp_time_ns = 20'000'000;
  Errors errors;
  std::set<std::string> bad;  // keys whose value was refused: the checks that read them are skipped
  auto entry_of = [&](const std::string& key) -> const Entry* {
    const auto it = loader.entries.find(key);
    return it == loader.entries.end() ? nullptr : &it->second;
  };
  // 0 = --set, 1 = the file, 2 = its base, ...; a key nobody stated is below every base.
  auto level_of = [&](const std::string& key) {
    const Entry* e = entry_of(key);
    return e == nullptr ? INT_MAX : e->level;
  };
  const auto keys = all_keys();
  for (const auto& [key, entry] : loader.entries) {
    if (key == "base") continue;
    if (key == "description") {
      s.description = entry.node->value<std::string>().value_or("");
      continue;
    }
    if (key.rfind("calibration.", 0) == 0) continue;  // read below
    if (!find_param(key)) {
      std::string why = ": unknown key" + did_you_mean(key, keys);
      // vm.<name>.… and backend.<name>.… are keys of [[vm]] and [[backend]] tables.
      const auto dots = std::count(key.begin(), key.end(), '.');
      if (key.rfind("vm.", 0) == 0 && dots >= 2) {
        const std::string sub = key.substr(key.find('.', 3) + 1);
        why = ": names no VM: this file is one VM profile (no [[vm]] tables); write " + (sub == "count" ? "vm.count" : sub) +
              (find_param(sub) || sub == "count" ? std::string() : did_you_mean(sub, keys));
      } else if (key.rfind("backend.", 0) == 0 && dots >= 2)
        why = ": names no backend: this file has one [backend] table; write backend." + key.substr(key.find('.', 8) + 1);
      if (!entry.vm.empty()) {  // a [[vm]]'s key: the suggestions as that VM's keys
        for (const std::string from : {"did you mean '", " or '"})
          for (auto at = why.find(from); at != std::string::npos; at = why.find(from, at + from.size() + entry.vm.size()))
            why.insert(at + from.size(), entry.vm);
      }
      errors.add(&entry, where(entry, key) + why);
      bad.insert(key);
    }
  }
  // rwmixread must be known before rw turns it into a read fraction; the table order does that
  // for files, and set_rw is re-run when rwmixread arrives later.
  for (const auto& p : params()) {
    const Entry* e = entry_of(p.key);
    if (e != nullptr && !errors.attempt(e, [&] { p.set(s, convert(p, *e)); })) bad.insert(p.key);
  }
  set_rw(s, s.workload.rw);
  errors.attempt(entry_of("calibration.params"), [&] { read_calibration(s, loader.entries); });
  if (!s.workload.fio_job.empty()) {
    const Entry& e = loader.entries.at("workload.fio_job");
    const bool ok = errors.attempt(&e, [&] {
      std::filesystem::path job = s.workload.fio_job;
      if (job.is_relative() && e.file != "(from --set)") job = std::filesystem::path(e.file).parent_path() / job;
      if (const std::string why = missing_file(job.string()); !why.empty()) fail(e, "workload.fio_job", why);
      apply_fio_job(s, job.string(), loader.entries, e);
      set_rw(s, s.workload.rw);
    });
    if (!ok) bad.insert("workload.fio_job");
  }
  if (s.workload.runtime_ns == 0 && s.workload.ios == 0) s.workload.ios = 200000;

  // The stated QEMU version sets the defaults that depend on it.
  std::optional<QemuVersion> qemu;
  if (const Entry* e = entry_of("host.qemu_version"); e != nullptr && !bad.count("host.qemu_version")) {
    qemu = parse_qemu_version(s.host.qemu_version);
    if (!qemu) {
      errors.add(
          e, where(*e, "host.qemu_version") + ": \"" + s.host.qemu_version +
                 "\" is not a QEMU version; write it as `qemu-system-x86_64 --version` prints it, e.g. \"2.4.0\" or \"7.2.22\"");
      bad.insert("host.qemu_version");
    } else {
      for (const auto& rule : version_rules())
        if (level_of(rule.key) > e->level) rule.apply(s, *qemu);
    }
  }

  // fio runs a synchronous engine one I/O at a time and caps iodepth_batch at iodepth
  // (fio init.c fixup_options); the model does the same, and says so where it matters.
  auto warn = [&](const std::string& key, const std::string& message) {
    const Entry* e = entry_of(key);
    s.warnings.push_back((e ? where(*e, key) : key) + ": " + message);
  };
  if (is_sync_engine(s.workload) && s.workload.iodepth > 1 && !bad.count("workload.iodepth") && !bad.count("workload.ioengine"))
    warn(entry_of("workload.iodepth")    ? "workload.iodepth"
         : entry_of("workload.ioengine") ? "workload.ioengine"
                                         : "workload.fio_job",
         "iodepth = " + std::to_string(s.workload.iodepth) + " with ioengine = \"" + s.workload.ioengine_name +
             "\": a synchronous engine has one I/O in flight, so fio runs it at depth 1 (fio: \"note: both iodepth >= 1 and "
             "synchronous I/O engine are selected, queue depth will be capped at 1\") and so does the simulation; for " +
             std::to_string(s.workload.iodepth) + " in flight write ioengine = \"libaio\" or \"io_uring\"");
  if (s.workload.iodepth_batch_submit > s.workload.effective_depth()) {
    const char* key = entry_of("workload.iodepth_batch_submit") ? "workload.iodepth_batch_submit"
                      : entry_of("workload.iodepth_batch")      ? "workload.iodepth_batch"
                                                                : nullptr;
    if (key != nullptr && !bad.count(key))
      warn(key, std::to_string(s.workload.iodepth_batch_submit) + " is more than the " +
                    std::to_string(s.workload.effective_depth()) +
                    " I/Os in flight; fio caps it at that depth, and so does the simulation");
    s.workload.iodepth_batch_submit = s.workload.effective_depth();
  }
  // A key that the rest of the setup makes meaningless: fio and QEMU accept and ignore it, so
  // the loader does too, with a warning where the key is stated at the level of what voids it
  // or above (a key inherited from a base whose setup the file changed is not the user's doing).
  auto ignored = [&](const std::string& key, const std::string& by, const std::string& message) {
    if (entry_of(key) && !bad.count(key) && !bad.count(by) && level_of(key) <= level_of(by)) warn(key, message);
  };
  if (is_pure_direction(s.workload.rw)) {
    ignored("workload.rwmixread", "workload.rw",
            std::to_string(s.workload.rwmixread) + " has no effect with rw = \"" + s.workload.rw +
                "\" (fio applies rwmixread to rw/randrw only): remove it, or write rw = \"" +
                (s.workload.random ? "randrw" : "rw") + "\" for a " + std::to_string(s.workload.rwmixread) + "/" +
                std::to_string(100 - s.workload.rwmixread) + " mix");
    if (s.workload.read_fraction == 1)
      ignored("workload.bs_write", "workload.rw", "has no effect with rw = \"" + s.workload.rw + "\" (no writes): remove it");
  }
  if (!s.workload.direct && !bad.count("workload.direct"))
    warn("workload.direct",
         "false: the simulation models direct I/O only (O_DIRECT, fio direct=1); buffered guest I/O goes through the guest page "
         "cache, which is not modelled, so these figures are those of direct=1");
  const bool direct = s.host.cache == CacheMode::none || s.host.cache == CacheMode::directsync;
  if (direct && s.host.pagecache_hit_ratio > 0)
    ignored("host.pagecache_hit_ratio", "host.cache",
            "has no effect with cache = \"" + std::string(cache_name(s.host.cache)) +
                "\" (O_DIRECT bypasses the host page cache): remove it, or use cache = \"writeback\", \"writethrough\" or "
                "\"unsafe\"");
  // Backend keys of another kind of device.
  const BackendKind kind = s.backend.kind;
  const bool hdd = kind == BackendKind::hdd || (kind == BackendKind::md_raid1 && s.backend.leg == BackendKind::hdd);
  const std::string kind_text = std::string("with backend.kind = \"") + backend_name(kind) + "\"";
  if (!hdd)
    for (const char* key : {"backend.seek_ms", "backend.rpm", "backend.ncq_depth", "backend.seq_overhead_us"})
      ignored(key, "backend.kind",
              "has no effect " + kind_text + " (a hard-disk key: kind = \"hdd\", or md-raid1 with leg = \"hdd\")");
  if (kind != BackendKind::ceph_rbd && kind != BackendKind::krbd)
    for (const char* key : {"backend.rtt_us", "backend.osd_slots", "backend.osd_read_us", "backend.osd_write_us",
                            "backend.osd_stall_ratio", "backend.osd_stall_ms", "backend.msgr_us", "backend.replicas"})
      ignored(key, "backend.kind", "has no effect " + kind_text + " (a Ceph key: kind = \"ceph-rbd\" or \"krbd\")");
  if (kind != BackendKind::ceph_rbd)
    ignored("backend.msgr_threads", "backend.kind", "has no effect " + kind_text + " (librbd only: kind = \"ceph-rbd\")");
  if (kind != BackendKind::null) {
    ignored("backend.latency_us", "backend.kind", "has no effect " + kind_text + " (the null device's latency)");
    ignored("backend.null_co", "backend.kind", "has no effect " + kind_text + " (says what the null device is)");
  }
  if (kind != BackendKind::nvme && kind != BackendKind::sata_ssd) {
    for (const char* key : {"backend.batched", "backend.batch_us"})
      ignored(key, "backend.kind", "has no effect " + kind_text + " (batch service: kind = \"nvme\" or \"sata-ssd\")");
  } else if (!s.backend.batched) {
    ignored("backend.batch_us", "backend.batched", "has no effect without backend.batched = true (the device serves in batches)");
  }
  if (kind != BackendKind::md_raid1) ignored("backend.leg", "backend.kind", "has no effect " + kind_text + " (md-raid1 only)");
  // Under TCG the vCPU thread's own wake-up replaces KVM's halted-vCPU wake-up.
  if (s.host.accel == Accel::tcg && s.host.tcg_wake_ns > 0 && !s.bare_metal())
    ignored("guest.wake_us", "host.accel",
            "has no effect under host.accel = \"tcg\": the vCPU thread's own wake-up, host.tcg_wake_us, takes its place "
            "(write host.tcg_wake_us, or host.tcg_wake_us = 0 to use guest.wake_us x host.tcg_cpu_scale)");
  // A TCG scale with no accelerator stated anywhere: probably a lab file that lost its
  // host.accel = "tcg". One that states kvm (a TCG fit predicted for KVM) means it.
  if (s.host.accel == Accel::kvm && entry_of("host.tcg_cpu_scale") && !entry_of("host.accel") && !bad.count("host.tcg_cpu_scale"))
    warn("host.tcg_cpu_scale",
         "has no effect: host.accel is kvm (the default), so the guest's costs are KVM's; write host.accel = \"tcg\" for "
         "a guest under TCG, or host.accel = \"kvm\" to say the KVM prediction is meant");
  apply_cpu_scales(s);
  // Impossible combinations, named like QEMU or fio would name them. Each is checked only when
  // the keys it reads were accepted, so that one mistake is reported once.
  auto reject = [&](const char* key, const std::string& message, std::initializer_list<const char*> reads = {}) {
    if (bad.count(key)) return;
    for (const char* k : reads)
      if (bad.count(k)) return;
    const Entry* e = entry_of(key);
    errors.add(e, (e ? where(*e, key) : path + ": " + key) + ": " + message);
  };
  // fio opens the guest disk with O_DIRECT: a block size that is not a multiple of the 512-byte
  // sector is refused by the kernel (EINVAL), so fio would not run at all.
  // (Checked where the scenario or --set names the size; a fio job's bssplit is modelled by its mean.)
  const char* const sector = " bytes is not a multiple of 512 (the sector size; fio rejects it for direct I/O)";
  if (entry_of("workload.bs") && s.workload.bs_read_bytes % 512 != 0)
    reject("workload.bs", std::to_string(s.workload.bs_read_bytes) + sector);
  if (entry_of("workload.bs_write") && s.workload.bs_write_bytes % 512 != 0)
    reject("workload.bs_write", std::to_string(s.workload.bs_write_bytes) + sector);
  if (s.host.aio == Aio::native && !direct && !s.bare_metal())
    reject("host.aio",
           std::string("aio=native requires cache.direct=on (cache=none or directsync), but cache=") + cache_name(s.host.cache) +
               " (QEMU: \"aio=native was specified, but it requires cache.direct=on\")",
           {"host.cache", "guest.driver"});
  if (s.guest.driver == GuestDriver::scsi_hba && s.host.iothreads > 0)
    reject("host.iothreads", "an emulated SCSI HBA (lsi) cannot use IOThreads; only virtio devices can", {"guest.driver"});
  if (s.backend.kind == BackendKind::md_raid1 && s.backend.leg == BackendKind::md_raid1)
    reject("backend.leg", "md-raid1 legs must be devices", {"backend.kind"});
  if (s.bare_metal() && s.host.iothreads > 0)
    reject("host.iothreads", "guest.driver = none is bare metal: there is no QEMU to run IOThreads", {"guest.driver"});
  // A hard disk has one actuator: it positions for one request at a time, and NCQ reorders the
  // queue in front of it (backend.ncq_depth). Parallel "channels" would multiply its IOPS.
  if (hdd && s.backend.channels > 1)
    reject("backend.channels",
           std::to_string(s.backend.channels) + " " + kind_text + (kind == BackendKind::md_raid1 ? " and leg = \"hdd\"" : "") +
               ": a hard disk has one actuator and serves one request at a time (NCQ reordering is backend.ncq_depth); remove "
               "backend.channels",
           {"backend.kind", "backend.leg"});
  // Features the stated QEMU version predates (docs/sources.md §8).
  if (qemu) {
    const std::string stated = " (host.qemu_version = \"" + s.host.qemu_version + "\")";
    if (s.host.aio == Aio::io_uring && qemu->before(5, 0) && !s.bare_metal())
      reject("host.aio",
             "aio=io_uring needs QEMU 5.0 or later (qapi/block-core.json: io_uring \"since 5.0\")" + stated +
                 ": write aio = \"native\" or \"threads\", or a qemu_version of 5.0 or later",
             {"host.qemu_version", "guest.driver"});
    // Several IOThreads for one device: QEMU before 9.0 cannot be told so, but the question "what
    // would N IOThreads give here" (vqsim plan, sweeps over a seed) has an answer, that of 9.0's
    // mapping on this setup. So it runs, with a warning that says which QEMU it describes.
    const bool emulated = s.guest.driver == GuestDriver::virtio_blk || s.guest.driver == GuestDriver::virtio_scsi;
    if (emulated && s.host.iothreads > 1 && qemu->before(9, 0) && !bad.count("host.iothreads") && !bad.count("guest.driver"))
      warn("host.iothreads",
           std::to_string(s.host.iothreads) +
               " IOThreads for one device needs QEMU 9.0 or later (iothread-vq-mapping, commit b6948ab01df0); before "
               "it a device is served by one IOThread" +
               stated + ": these figures are those of 9.0's mapping; write iothreads = 1 for this version");
    if (s.guest.driver == GuestDriver::virtio_scsi && s.host.iothreads > 0 && qemu->before(2, 4))
      reject("host.iothreads",
             "virtio-scsi takes an IOThread since QEMU 2.4 (virtio-scsi dataplane, commit 91cb1c9b5606)" + stated +
                 ": write iothreads = 0, or a qemu_version of 2.4 or later",
             {"host.qemu_version", "guest.driver"});
  }
  // The jobs of a multi-job file: the run length is the scenario's, the batch is capped at each
  // job's depth as fio caps it, and the jobs of one stonewall group run for one measured time.
  for (FioJob& j : s.jobs) {
    j.workload.ios = s.workload.ios;
    j.workload.iodepth_batch_submit = std::min(j.workload.iodepth_batch_submit, j.workload.effective_depth());
  }
  for (std::size_t a = 0; a < s.jobs.size() && !bad.count("workload.fio_job"); ++a)
    for (std::size_t b = a + 1; b < s.jobs.size(); ++b) {
      const FioJob &x = s.jobs[a], &y = s.jobs[b];
      if (x.phase != y.phase || x.workload.runtime_ns == y.workload.runtime_ns) continue;
      const auto secs = [](const FioJob& j) {
        const auto seconds_text = [](sim::time_ns ns) {
          std::ostringstream os;
          os << static_cast<double>(ns) / 1e9 << "s";
          return os.str();
        };
        return j.workload.runtime_ns > 0 ? "runtime=" + seconds_text(j.workload.runtime_ns) : std::string("no runtime");
      };
      reject("workload.fio_job",
             y.where + ": job '" + y.name + "' (" + secs(y) + ") and job '" + x.name + "' at " + x.where + " (" + secs(x) +
                 ") run in one stonewall group for different times; vqsim runs a group's jobs beside each other for one "
                 "measured time, so the shorter job's neighbour would be there when it is not: give them one runtime, "
                 "put stonewall on the second to run it after the first, or set workload.runtime for all");
      a = s.jobs.size();
      break;
    }
  errors.throw_if_any();
  return s;
}

}  // namespace

int IoScenario::fio_threads() const {
  if (jobs.empty()) return workload.numjobs;
  int n = 0;
  for (const FioJob& j : jobs) n += j.workload.numjobs;
  return n;
}

int scenario_phases(const IoScenario& s) {
  int phases = 1;
  for (const FioJob& j : s.jobs) phases = std::max(phases, j.phase + 1);
  for (const VmProfile& p : s.profiles)
    for (const FioJob& j : p.scenario.jobs) phases = std::max(phases, j.phase + 1);
  return phases;
}

IoScenario phase_scenario(const IoScenario& s, int k) {
  if (scenario_phases(s) <= 1) return s;
  // One VM's jobs of phase k; false when it has none (a single job runs in phase 0 only).
  const auto keep = [k](IoScenario& v) {
    if (v.jobs.empty()) return k == 0;
    std::vector<FioJob> mine;
    for (const FioJob& j : v.jobs)
      if (j.phase == k) mine.push_back(j);
    if (mine.empty()) return false;
    v.workload = mine.front().workload;
    // fio ramps each job by itself; the simulation has one warm-up, the longest of them.
    for (FioJob& j : mine) {
      v.workload.ramp_time_ns = std::max(v.workload.ramp_time_ns, j.workload.ramp_time_ns);
      j.phase = 0;  // the run of one group is a scenario of one phase
    }
    v.jobs = std::move(mine);
    return true;
  };
  IoScenario out = s;
  keep(out);
  for (VmProfile& p : out.profiles)
    if (!keep(p.scenario)) p.count = 0;
  return out;
}

std::string job_metric_prefix(const std::string& job) { return "fio:" + job + "."; }

std::string declared_key(const std::string& key) {
  const auto dots = std::count(key.begin(), key.end(), '.');
  if (key.rfind("vm.", 0) == 0 && dots >= 2) {
    const std::string sub = key.substr(key.find('.', 3) + 1);
    return sub == "count" ? "vm.count" : sub;
  }
  if (key.rfind("backend.", 0) == 0 && dots >= 2) return "backend." + key.substr(key.find('.', 8) + 1);
  return key;
}

std::vector<VmInstance> vm_instances(const IoScenario& s) {
  std::vector<VmInstance> out;
  if (!s.multi_vm()) {
    for (int v = 0; v < std::max(1, s.vms); ++v) out.push_back({0, v, v, vm_prefix(v)});
    return out;
  }
  int index = 0;
  for (std::size_t p = 0; p < s.profiles.size(); ++p)
    for (int r = 0; r < s.profiles[p].count; ++r) {
      // The first VM of the file keeps a single-VM scenario's names (and random streams).
      const std::string& name = s.profiles[p].name;
      std::string prefix = r == 0 ? vm_profile_prefix(s, p) : name + "." + std::to_string(r) + ".";
      out.push_back({static_cast<int>(p), r, index++, std::move(prefix)});
    }
  return out;
}

const IoScenario& profile_scenario(const IoScenario& s, const VmInstance& i) {
  return s.multi_vm() ? s.profiles[static_cast<std::size_t>(i.profile)].scenario : s;
}

std::string vm_profile_prefix(const IoScenario& s, std::size_t p) { return p == 0 ? "" : s.profiles[p].name + "."; }

std::string disk_prefix(const DiskSpec& d) { return "disk:" + d.name + "."; }

bool is_io_scenario_file(const std::string& path) {
  try {
    const toml::table t = parse_toml_file(path, "a scenario");
    return !t.contains("station") && !t.contains("population") && !t.contains("source");
  } catch (const ConfigError&) {
    return true;  // let the I/O-path loader report the error with its line
  }
}

std::vector<ParamDoc> io_scenario_parameters() {
  // Stages declare their keys along the path; readers find them by section.
  std::vector<const Param*> by_section;
  for (const auto& p : params()) by_section.push_back(&p);
  const auto rank = [](const Param* p) {
    static const std::vector<std::string> sections{"run.", "vm.", "workload.", "guest.", "virtqueue.", "host.", "backend."};
    for (std::size_t i = 0; i < sections.size(); ++i)
      if (p->key.rfind(sections[i], 0) == 0) return i;
    return sections.size();
  };
  std::stable_sort(by_section.begin(), by_section.end(), [&](const Param* a, const Param* b) { return rank(a) < rank(b); });
  std::vector<ParamDoc> out;
  for (const Param* pp : by_section) {
    const Param& p = *pp;
    std::string doc = p.doc;
    if (!p.choices.empty()) {
      doc += " (";
      for (std::size_t i = 0; i < p.choices.size(); ++i) doc += (i ? "|" : "") + p.choices[i];
      doc += ")";
    }
    std::vector<std::string> choices = p.choices;
    if (p.kind == Kind::boolean) choices = {"true", "false"};
    out.push_back({p.key, p.unit, p.default_text, p.source, doc, std::move(choices)});
  }
  return out;
}

std::string io_scenario_markdown() {
  std::string md = "| key | unit | default | meaning | source |\n|---|---|---|---|---|\n";
  for (const auto& p : io_scenario_parameters()) {
    md += "| `" + p.key + "` | " + p.unit + " | " + p.default_text + " | " + p.doc + " | " + p.source + " |\n";
  }
  md +=
      "\nThe defaults that `host.qemu_version` drives (\"by qemu_version\" above):\n\n| key | default by QEMU version | source "
      "|\n|---|---|---|\n";
  for (const auto& r : version_rules()) md += "| `" + std::string(r.key) + "` | " + r.rule + " | " + r.source + " |\n";
  return md;
}

std::size_t CalibrationUncertainty::component_of_draw(int d, int n) const {
  std::size_t mode = 0;
  if (modes.empty()) return mode;
  std::vector<double> share(modes.size(), 1.0 / static_cast<double>(modes.size() + 1));
  if (!mode_weights.empty()) share = mode_weights;
  double rest = 1;
  for (double x : share) rest -= x;
  const double at = (d + 0.5) / n;
  double cum = std::max(0.0, rest);
  while (mode < share.size() && at >= cum) cum += share[mode++];
  return mode;
}

}  // namespace vqsim::models
