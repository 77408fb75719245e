#include "models/io_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "models/config.h"
#include "models/core_share.h"
#include "models/guest_cpu.h"
#include "sim/fio_histogram.h"

namespace vqsim::models {

namespace {

// A VM's interrupt line as the simulation names it, without the VM's prefix: virtqueue.irq<q>.
bool is_interrupt_line(const std::string& name) {
  const std::string head = "virtqueue.irq";
  return name.size() > head.size() && name.rfind(head, 0) == 0 &&
         name.find_first_not_of("0123456789", head.size()) == std::string::npos;
}

// An MVA station's name without the VM copy's "vm<k>." (vm.count VMs of one profile).
std::string bare_stage_name(const std::string& name) {
  const auto dot = name.find('.');
  if (name.rfind("vm", 0) == 0 && dot != std::string::npos && name.find_first_not_of("0123456789", 2) == dot)
    return name.substr(dot + 1);
  return name;
}

sim::Interval scaled(sim::Interval i, double k) {
  i.mean *= k;
  i.half_width *= k;
  i.lower *= k;
  i.upper *= k;
  return i;
}

sim::Interval point(double v) {
  sim::Interval i{};
  i.mean = i.lower = i.upper = v;
  i.half_width = 0;
  return i;
}

// "read.clat_p99.9_us" -> ("read", "clat", 99.9); false when it is not a percentile name.
// Percentiles exist for clat and for lat (fio's total latency, slat + clat).
bool parse_percentile(const std::string& name, std::string* dir, double* pct, std::string* kind = nullptr) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) return false;
  const std::string rest = name.substr(dot + 1);
  const std::string suffix = "_us";
  for (const std::string k : {"clat", "lat"}) {
    const std::string prefix = k + "_p";
    if (rest.rfind(prefix, 0) != 0 || rest.size() <= prefix.size() + suffix.size() ||
        rest.substr(rest.size() - suffix.size()) != suffix)
      continue;
    const std::string number = rest.substr(prefix.size(), rest.size() - prefix.size() - suffix.size());
    char* end = nullptr;
    const double p = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !(p > 0 && p < 100)) return false;
    *dir = name.substr(0, dot);
    *pct = p;
    if (kind) *kind = k;
    return true;
  }
  return false;
}

bool is_dir(const std::string& d) { return d == "read" || d == "write" || d == "total"; }

// "vm.web.read.iops" -> ("web", "read.iops"); false for any other name.
bool split_vm_metric(const std::string& name, std::string* vm, std::string* rest) {
  if (name.rfind("vm.", 0) != 0) return false;
  const auto dot = name.find('.', 3);
  if (dot == std::string::npos || dot == 3) return false;
  *vm = name.substr(3, dot - 3);
  *rest = name.substr(dot + 1);
  return true;
}

// A metric of one VM (or of one job): read.iops, total.lat_mean_us, read.clat_p99.9_us, ...
bool is_vm_metric(const std::string& name) {
  if (name.rfind("host.", 0) == 0) return false;
  for (const auto& n : io_metric_names())
    if (n == name) return true;
  if (cpu_metric_kind(name) >= 0 || is_count_metric(name)) return true;
  std::string dir;
  double p;
  return parse_percentile(name, &dir, &p) && dir != "total";
}

// "reader.read.clat_p99_us" -> ("reader", "read.clat_p99_us"): a job's name, then a metric of one
// VM. The split is the one with the shortest such tail, and it is the only one: a VM's metric
// has no "read.", "write." or "total." after its first word, so no longer tail is one too. A
// job name may hold dots ("a.read.read.iops" is job "a.read"); it may not begin with vm or host
// (the loader refuses such names in a job file of several jobs).
bool split_job_metric(const std::string& name, std::string* job, std::string* rest) {
  for (std::size_t at = name.rfind('.'); at != std::string::npos && at > 0; at = name.rfind('.', at - 1)) {
    const std::string tail = name.substr(at + 1);
    if (!is_vm_metric(tail)) continue;
    const std::string j = name.substr(0, at);
    const std::string first = j.substr(0, j.find('.'));
    if (first == "vm" || first == "host") return false;
    *job = j;
    *rest = tail;
    return true;
  }
  return false;
}

// A metric without its vm.<name>. and <job>. parts: what kind of figure it is.
std::string plain_tail(const std::string& name) {
  std::string vm, rest = name, job, tail;
  if (name.rfind("host.", 0) == 0) return name.substr(5);  // host.total.iops: a throughput
  if (split_vm_metric(name, &vm, &rest) && rest.rfind("host.", 0) == 0) return rest;
  if (!is_vm_metric(rest) && split_job_metric(rest, &job, &tail)) return tail;
  return rest;
}

}  // namespace

std::string figure_kind(const std::string& full_metric) {
  const std::string metric = plain_tail(full_metric);
  std::string dir, kind;
  double pct = 0;
  if (parse_percentile(metric, &dir, &pct, &kind)) return pct < 90 ? "p50" : pct < 99.5 ? "p99" : "p99.9";
  if (cpu_metric_kind(metric) >= 0) return "cpu";
  if (is_count_metric(metric)) return "count";
  const std::string m = metric.substr(metric.find('.') + 1);
  return m == "iops" || m == "bw_kib" ? "throughput" : "mean latency";
}

std::string io_metric_suggestion(const std::string& name) {
  std::string vm_name, vm_rest;
  if (split_vm_metric(name, &vm_name, &vm_rest)) {
    const std::string inner = io_metric_suggestion(vm_rest);
    const auto q1 = inner.find('\''), q2 = inner.rfind('\'');
    if (q1 == std::string::npos || q2 == q1) return "";
    return " (did you mean 'vm." + vm_name + "." + inner.substr(q1 + 1, q2 - q1 - 1) + "'?)";
  }
  // What people type for fio's figures ("read.p99", "write.latency", "read.bw"): the name with
  // vqsim's spelling, which an edit distance alone does not reach.
  const auto dot = name.find('.');
  std::string dir = dot == std::string::npos ? "" : name.substr(0, dot);
  std::string rest = dot == std::string::npos ? name : name.substr(dot + 1);
  if (!is_dir(dir)) {
    const std::string d = did_you_mean(dir, {"read", "write", "total"});
    const auto q1 = d.find('\''), q2 = d.rfind('\'');
    dir = d.empty() ? "read" : d.substr(q1 + 1, q2 - q1 - 1);
  }
  for (const std::string unit : {"_us", "_usec", "_ms", "_ns"})
    if (rest.size() > unit.size() && rest.compare(rest.size() - unit.size(), unit.size(), unit) == 0)
      rest.resize(rest.size() - unit.size());
  std::string kind = "clat";
  for (const std::string k : {"clat_", "lat_", "clat", "lat"})
    if (rest.rfind(k, 0) == 0 && rest.size() > k.size() && (rest[k.size()] == 'p' || rest[k.size()] == '_')) {
      kind = k.substr(0, k.find('_') == std::string::npos ? k.size() : k.find('_'));
      rest = rest.substr(k.size());
      if (!rest.empty() && rest[0] == '_') rest = rest.substr(1);
      break;
    }
  std::string candidate;
  if (rest.size() > 1 && (rest[0] == 'p' || rest[0] == 'P')) {
    char* end = nullptr;
    const double p = std::strtod(rest.c_str() + 1, &end);
    if (*end == '\0' && p > 0 && p < 100)
      candidate = (dir == "total" ? std::string("read") : dir) + "." + kind + "_p" + rest.substr(1) + "_us";
  } else if (rest == "iops" || rest == "IOPS") {
    candidate = dir + ".iops";
  } else if (rest == "bw" || rest == "bandwidth" || rest == "bw_kb" || rest == "bw_kbs" || rest == "bw_bytes" ||
             rest == "bw_mib") {
    candidate = dir + ".bw_kib";
  } else if (rest == "lat" || rest == "latency" || rest == "lat_mean" || rest == "mean_lat" || rest == "mean" ||
             rest == "avg_lat") {
    candidate = dir + ".lat_mean_us";
  } else if ((rest == "clat" || rest == "clat_mean" || rest == "slat" || rest == "slat_mean") && dir != "total") {
    candidate = dir + "." + rest.substr(0, 4) + "_mean_us";
  }
  if (!candidate.empty() && candidate != name && is_io_metric(candidate)) return " (did you mean '" + candidate + "'?)";
  return did_you_mean(name, io_metric_names());
}

const std::vector<std::string>& io_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* d : {"read", "write"})
      for (const char* m :
           {"iops", "bw_kib", "lat_mean_us", "slat_mean_us", "clat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99.9_us"})
        n.push_back(std::string(d) + "." + m);
    n.emplace_back("total.iops");
    n.emplace_back("total.bw_kib");
    n.emplace_back("total.lat_mean_us");
    // The host's aggregate over vm.count VMs (the same as total.* with one VM).
    n.emplace_back("host.total.iops");
    n.emplace_back("host.total.lat_mean_us");
    return n;
  }();
  return names;
}

bool is_io_metric(const std::string& name) {
  std::string vm, rest, job, tail;
  if (split_vm_metric(name, &vm, &rest))
    return rest.rfind("host.", 0) != 0 && rest.rfind("vm.", 0) != 0 &&
           (is_vm_metric(rest) || split_job_metric(rest, &job, &tail));
  if (name == "host.total.iops" || name == "host.total.lat_mean_us" || is_vm_metric(name)) return true;
  // A job's metric: whether the scenario has that job is io_metric_scenario_error's to say.
  return split_job_metric(name, &job, &tail);
}

std::string io_metric_scenario_error(const IoScenario& s, const std::string& name) {
  std::string vm, rest = name, job, tail;
  const IoScenario* v = &s;
  std::string where = "the scenario";
  if (split_vm_metric(name, &vm, &rest)) {
    v = nullptr;
    for (const VmProfile& p : s.profiles)
      if (p.name == vm) v = &p.scenario;
    if (v == nullptr) return "";  // io_metric names the VMs
    where = "vm." + vm;
  }
  if (is_vm_metric(rest) || rest.rfind("host.", 0) == 0 || !split_job_metric(rest, &job, &tail)) return "";
  // A disk of a VM of several disks: "disk:vdb.write.iops" (a job named so would be read first).
  const bool is_job = std::any_of(v->jobs.begin(), v->jobs.end(), [&](const FioJob& j) { return j.name == job; });
  if (job.rfind("disk:", 0) == 0 && !is_job) {
    std::string disks;
    for (const DiskSpec& d : v->disks) {
      if ("disk:" + d.name == job && v->multi_disk()) return "";
      disks += (disks.empty() ? "'disk:" : ", 'disk:") + d.name + "'";
    }
    if (!v->multi_disk())
      return "metric " + name + ": " + where + " has one disk, so it has no per-disk figures; write " +
             (where == "the scenario" ? tail : "vm." + vm + "." + tail);
    return "metric " + name + ": " + where + " has no " + job + "; its disks are " + disks;
  }
  std::string names;
  for (const FioJob& j : v->jobs) {
    if (j.name == job) return "";
    if (j.name == job) return "";
    names += (names.empty() ? "'" : ", '") + j.name + "'";
  }
  if (names.empty())
    return "metric " + name + ": " + where + " runs one fio job, so it has no per-job figures; write " +
           (where == "the scenario" ? tail : "vm." + vm + "." + tail);
  return "metric " + name + ": no fio job named '" + job + "' in " + where + "'s job file; its jobs are " + names;
}

namespace {
sim::Interval io_metric_of(const IoRunReport& r, const std::string& prefix, const std::string& name, bool interpolated);
sim::Interval job_metric(const IoRunReport& r, const std::string& prefix, const std::string& vm, const std::string& name,
                         bool interpolated);
}  // namespace

std::string first_profile_metric_warning(const IoScenario& s, const std::string& metric) {
  if (s.profiles.size() < 2 || metric.rfind("vm.", 0) == 0 || metric.rfind("host.", 0) == 0) return "";
  std::string others;
  for (std::size_t i = 1; i < s.profiles.size(); ++i)
    others += (others.empty() ? "vm." : ", vm.") + s.profiles[i].name + "." + metric;
  const std::string& first = s.profiles.front().name;
  return "metric " + metric + " names no VM in a file of " + std::to_string(s.profiles.size()) +
         " [[vm]] profiles: it is the first profile's (" + first + "); write vm." + first + "." + metric + " to say so, or " +
         others + " for the others, or host.total.iops / host.total.lat_mean_us for the whole host";
}

sim::Interval io_metric(const IoRunReport& r, const std::string& name, bool interpolated) {
  std::string vm, rest;
  if (split_vm_metric(name, &vm, &rest)) {
    // A running profile reports "vm.<name>.profile" (its index): its figures are those of its
    // first VM, named as vm_profile_prefix names them ("" for the first profile, "<name>." else).
    if (r.has("vm." + vm + ".profile")) {
      if (!is_io_metric(name))
        throw std::invalid_argument("unknown metric '" + name + "'" + io_metric_suggestion(name) +
                                    "; a VM's metrics are vm.<name>.<read|write|total>.<...>, a job's "
                                    "vm.<name>.<job>.<read|write|total>.<...>, the host's host.total.*");
      const bool first = r.get("vm." + vm + ".profile").mean == 0;
      const std::string prefix = first ? "" : vm + ".";
      if (!is_vm_metric(rest)) return job_metric(r, prefix, "vm." + vm, rest, interpolated);
      return io_metric_of(r, prefix, rest, interpolated);
    }
    std::vector<std::string> names;
    for (const auto& m : r.summary) {
      const std::string& n = m.name;
      const std::string tail = ".profile";
      if (n.rfind("vm.", 0) == 0 && n.size() > 3 + tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0)
        names.push_back(n.substr(3, n.size() - 3 - tail.size()));
    }
    throw std::invalid_argument("metric " + name + ": no running VM named '" + vm + "'" +
                                (names.empty() ? std::string(" (this scenario has no [[vm]] tables; write ") + rest + ")"
                                               : did_you_mean(vm, names) + "; the VMs are " + [&] {
                                                   std::string l;
                                                   for (const auto& x : names) l += (l.empty() ? "" : ", ") + x;
                                                   return l;
                                                 }()));
  }
  if (!is_vm_metric(name) && name.rfind("host.", 0) != 0 && is_io_metric(name)) return job_metric(r, "", "", name, interpolated);
  return io_metric_of(r, "", name, interpolated);
}

namespace {
// A job's metric ("reader.read.iops") of the VM whose figures carry `prefix`; `vm` names it in
// messages ("vm.db", or "" for a single-VM file).
sim::Interval job_metric(const IoRunReport& r, const std::string& prefix, const std::string& vm, const std::string& name,
                         bool interpolated) {
  std::string job, tail;
  split_job_metric(name, &job, &tail);
  const std::string mine = prefix + job_metric_prefix(job);
  if (r.has(mine + "read.iops")) return io_metric_of(r, mine, tail, interpolated);
  // One disk of a VM of several disks ([[vm.disk]] tables): "disk:vdb.write.iops".
  if (job.rfind("disk:", 0) == 0) {
    if (r.has(prefix + job + ".read.iops")) return io_metric_of(r, prefix + job + ".", tail, interpolated);
    std::string disks;
    const std::string head = prefix + "disk:", end = ".read.iops";
    for (const auto& m : r.summary) {
      const std::string& n = m.name;
      if (n.size() > head.size() + end.size() && n.rfind(head, 0) == 0 &&
          n.compare(n.size() - end.size(), end.size(), end) == 0 && n.find('.', head.size()) == n.size() - end.size())
        disks += (disks.empty() ? "'" : ", '") + n.substr(head.size() - 5, n.size() - head.size() + 5 - end.size()) + "'";
    }
    const std::string whose = vm.empty() ? std::string("the scenario") : vm;
    throw std::invalid_argument(
        "metric " + (vm.empty() ? name : vm + "." + name) + ": " + whose +
        (disks.empty() ? " has one disk, so it has no per-disk figures; write " + (vm.empty() ? tail : vm + "." + tail)
                       : " has no " + job + "; its disks are " + disks));
  }
  // The jobs this VM reports: names "<prefix>fio:<job>.read.iops".
  std::string names;
  std::string head = prefix + job_metric_prefix("");  // "<prefix>fio:."
  head.pop_back();
  const std::string end = ".read.iops";
  for (const auto& m : r.summary) {
    const std::string& n = m.name;
    if (n.size() > head.size() + end.size() && n.rfind(head, 0) == 0 && n.compare(n.size() - end.size(), end.size(), end) == 0)
      names += (names.empty() ? "'" : ", '") + n.substr(head.size(), n.size() - head.size() - end.size()) + "'";
  }
  const std::string whose = vm.empty() ? std::string("the scenario") : vm;
  if (names.empty())
    throw std::invalid_argument("metric " + (vm.empty() ? name : vm + "." + name) + ": " + whose +
                                " runs one fio job, so it has no per-job figures; write " +
                                (vm.empty() ? tail : vm + "." + tail));
  throw std::invalid_argument("metric " + (vm.empty() ? name : vm + "." + name) + ": no fio job named '" + job + "' in " + whose +
                              "'s job file; its jobs are " + names);
}

sim::Interval io_metric_of(const IoRunReport& all, const std::string& prefix, const std::string& name, bool interpolated) {
  // The figures of one VM: those under its prefix.
  struct View {
    const IoRunReport& r;
    const std::string& prefix;
    sim::Interval get(const std::string& n) const { return r.get(prefix + n); }
    bool has(const std::string& n) const { return r.has(prefix + n); }
  } r{all, prefix};
  if (name == "host.total.iops") return r.get("host.total.iops");
  if (name == "host.total.lat_mean_us") return scaled(r.get("host.total.lat.mean_ns"), 1e-3);
  if (const int k = cpu_metric_kind(name); k >= 0) {
    // The VM's threads of that kind (their names under its prefix): the cores they kept busy
    // over the VM's I/Os per second.
    double cores = 0;
    bool timed = false;
    for (const auto& m : all.summary) {
      if (m.name.rfind(prefix, 0) != 0) continue;
      const int kind_of = host_thread_kind(m.name.substr(prefix.size()), ".host_cores");
      if (kind_of < 0) continue;
      timed = true;
      if (kind_of == k) cores += m.interval.mean;
    }
    if (!timed)
      throw std::invalid_argument("metric " + name + ": the threads' CPU time is modelled with host.cores only (the cores " +
                                  "the VM's threads share); set host.cores");
    const double iops = r.get("read.iops").mean + r.get("write.iops").mean;
    return point(iops > 0 ? cores / iops * 1e6 : 0);
  }
  if (is_count_metric(name)) {
    // Per second over the VM's I/Os per second: its interrupt lines' interrupts (the completions
    // through each over the completions an interrupt carries), or its threads' of the kind
    // wake-ups.
    const int k = wake_metric_kind(name);
    const std::string tail = k >= 0 ? ".wakeups_per_s" : ".completions_per_interrupt";
    double per_s = 0;
    bool found = false;
    for (const auto& m : all.summary) {
      if (m.name.rfind(prefix, 0) != 0 || !m.name.ends_with(tail)) continue;
      const std::string bare = m.name.substr(prefix.size(), m.name.size() - prefix.size() - tail.size());
      if (k >= 0) {
        if (host_thread_kind(bare, "") != k) continue;
        per_s += m.interval.mean;
      } else {
        if (!is_interrupt_line(bare)) continue;
        if (m.interval.mean > 0) per_s += r.get(bare + ".throughput_per_s").mean / m.interval.mean;
      }
      found = true;
    }
    if (!found && k < 0)
      throw std::invalid_argument("metric " + name + ": the scenario has no virtio interrupt line (bare metal?)");
    const double iops = r.get("read.iops").mean + r.get("write.iops").mean;
    return point(iops > 0 ? per_s / iops : 0);
  }
  std::string dir, kind;
  double pct = 0;
  if (parse_percentile(name, &dir, &pct, &kind) && dir != "total") {
    const std::string key =
        dir + "." + kind + ".p" + sim::FioHistogram::percentile_key(pct) + (interpolated ? "_interpolated_ns" : "_ns");
    if (!r.has(key))
      throw std::invalid_argument("metric " + name +
                                  ": vqsim records fio's default percentiles (1, 5, 10, 20, …, 99.9, 99.95, 99.99); " +
                                  sim::FioHistogram::percentile_key(pct) + " is not one of them");
    return scaled(r.get(key), 1e-3);
  }
  const auto dot = name.find('.');
  const std::string d = dot == std::string::npos ? "" : name.substr(0, dot);
  const std::string m = dot == std::string::npos ? name : name.substr(dot + 1);
  if (!is_dir(d) || !is_io_metric(name))
    throw std::invalid_argument(
        "unknown metric '" + name + "'" + io_metric_suggestion(name) +
        "; metrics are <read|write>.<iops|bw_kib|lat_mean_us|slat_mean_us|clat_mean_us|clat_p<P>_us|lat_p<P>_us> or "
        "total.<iops|bw_kib|lat_mean_us> or host.total.<iops|lat_mean_us> or "
        "cpu.<vcpus|main_loop|iothreads|vhost_worker>_us_per_io or count.interrupts_per_io or "
        "count.<vcpus|main_loop|iothreads|vhost_worker>_wakes_per_io");
  if (d == "total") {
    const sim::Interval ri = r.get("read.iops"), wi = r.get("write.iops");
    if (m == "iops") {
      sim::Interval t = ri;
      t.mean += wi.mean;
      t.half_width = std::sqrt(ri.half_width * ri.half_width + wi.half_width * wi.half_width);
      t.lower = t.mean - t.half_width;
      t.upper = t.mean + t.half_width;
      return t;
    }
    if (m == "bw_kib") {
      const sim::Interval rb = r.get("read.bw_bytes_per_s"), wb = r.get("write.bw_bytes_per_s");
      sim::Interval t = rb;
      t.mean += wb.mean;
      t.half_width = std::sqrt(rb.half_width * rb.half_width + wb.half_width * wb.half_width);
      t.lower = t.mean - t.half_width;
      t.upper = t.mean + t.half_width;
      return scaled(t, 1.0 / 1024);
    }
    // Mean latency over both directions, weighted by their IOPS.
    const double total = ri.mean + wi.mean;
    if (total <= 0) return point(0);
    const sim::Interval rl = r.get("read.lat.mean_ns"), wl = r.get("write.lat.mean_ns");
    const double a = ri.mean / total, b = wi.mean / total;
    sim::Interval t{};
    t.mean = (a * rl.mean + b * wl.mean) / 1e3;
    t.half_width = std::sqrt(a * a * rl.half_width * rl.half_width + b * b * wl.half_width * wl.half_width) / 1e3;
    t.lower = t.mean - t.half_width;
    t.upper = t.mean + t.half_width;
    return t;
  }
  if (m == "iops") return r.get(d + ".iops");
  if (m == "bw_kib") return scaled(r.get(d + ".bw_bytes_per_s"), 1.0 / 1024);
  if (m == "lat_mean_us") return scaled(r.get(d + ".lat.mean_ns"), 1e-3);
  if (m == "slat_mean_us") return scaled(r.get(d + ".slat.mean_ns"), 1e-3);
  if (m == "clat_mean_us") return scaled(r.get(d + ".clat.mean_ns"), 1e-3);
  throw std::invalid_argument("unknown metric '" + name + "'");
}
}  // namespace

double io_metric_mva(const IoMvaResult& r, const IoScenario& s, const std::string& name) {
  std::string vm, rest = name, job, tail;
  split_vm_metric(name, &vm, &rest);
  if (!is_vm_metric(rest) && rest.rfind("host.", 0) != 0 && split_job_metric(rest, &job, &tail))
    throw std::invalid_argument("metric " + name + ": the MVA gives one figure per VM, not per fio job; run the simulation");
  if (split_vm_metric(name, &vm, &rest)) {
    // The MVA solves a [[vm]] file with one running profile (solve_io_mva): its metrics are that one's.
    for (const VmProfile& p : s.profiles)
      if (p.name == vm && p.count > 0) return io_metric_mva(r, p.scenario, rest);
    throw std::invalid_argument("metric " + name + ": no running VM named '" + vm + "'");
  }
  if (s.multi_vm())
    for (const VmProfile& p : s.profiles)
      if (p.count > 0) return io_metric_mva(r, p.scenario, name);
  std::string dir;
  double pct;
  if (parse_percentile(name, &dir, &pct))
    throw std::invalid_argument("metric " + name + ": MVA gives means only, not percentiles");
  if (name == "host.total.iops") return r.total_iops;
  if (name == "host.total.lat_mean_us") return r.lat_mean_ns / 1e3;  // every VM alike
  if (const int k = cpu_metric_kind(name); k >= 0) {
    // The work per I/O of the kind's stations (every VM's copy of a per-VM station carries its
    // 1/vm.count share of one VM's work: together one VM's).
    double ns = 0;
    for (const IoMvaStage& st : r.stages)
      if (host_thread_kind(bare_stage_name(st.name), "") == k) ns += st.demand_ns - st.wait_ns;  // CPU: a lock's wait is not
    const bool vcpus = host_thread_kinds()[static_cast<std::size_t>(k)].first == "vcpus";
    // The vCPUs' background work (host.tcg_vcpu_busy): their requests' work is stretched by it, and
    // each vCPU is busy that share of every request's share of the time.
    if (const double b = vcpu_background_share(s); b > 0 && vcpus)
      ns = ns * (1 - b) + (r.iops > 0 ? b * s.guest.vcpus * 1e9 / r.iops : 0.0);
    if (vcpus) ns += r.vcpu_halt_path_ns;  // their way into halts, on no station
    return ns / 1e3;
  }
  if (name == kInterruptsPerIoMetric) return r.interrupts_per_io;
  if (const int k = wake_metric_kind(name); k >= 0) {
    double wakes = 0;
    for (const IoMvaStage& st : r.stages)
      if (host_thread_kind(bare_stage_name(st.name), "") == k) wakes += st.wakes;
    return wakes;
  }
  const auto dot = name.find('.');
  const std::string d = dot == std::string::npos ? "" : name.substr(0, dot);
  const std::string m = dot == std::string::npos ? name : name.substr(dot + 1);
  if (!is_dir(d) || !is_io_metric(name))
    throw std::invalid_argument("unknown metric '" + name + "'" + io_metric_suggestion(name));
  const double iops = d == "read" ? r.read_iops : d == "write" ? r.write_iops : r.iops;
  if (m == "iops") return iops;
  if (m == "bw_kib") {
    const double bytes = d == "read"    ? r.read_iops * static_cast<double>(s.workload.bs_read_bytes)
                         : d == "write" ? r.write_iops * static_cast<double>(s.workload.bs_write_bytes)
                                        : r.read_iops * static_cast<double>(s.workload.bs_read_bytes) +
                                              r.write_iops * static_cast<double>(s.workload.bs_write_bytes);
    return bytes / 1024;
  }
  if (iops <= 0) return 0;
  if (m == "lat_mean_us") return r.lat_mean_ns / 1e3;
  if (m == "slat_mean_us") return r.slat_mean_ns / 1e3;
  if (m == "clat_mean_us") return r.clat_mean_ns / 1e3;
  throw std::invalid_argument("unknown metric '" + name + "'");
}

double io_metric_mva_classes(const IoMvaClassesResult& r, const IoScenario& s, const std::string& name) {
  std::string vm, rest = name, job, tail;
  if (!split_vm_metric(name, &vm, &rest)) {
    if (name == "host.total.iops") return r.total_iops;
    if (name == "host.total.lat_mean_us") return r.lat_mean_ns / 1e3;
    if (r.profiles.empty()) throw std::invalid_argument("metric " + name + ": the MVA has no running VM");
    vm = r.profiles.front().name;
  }
  // The profile's scenario: its [[vm]] table's, or the file's own in a single-VM file.
  const IoScenario* v = nullptr;
  if (!s.multi_vm()) {
    if (!vm.empty()) throw std::invalid_argument("metric " + name + ": no running VM named '" + vm + "'");
    v = &s;
  }
  for (const VmProfile& p : s.profiles)
    if (p.name == vm && p.count > 0) v = &p.scenario;
  const IoMvaProfile* prof = nullptr;
  for (const IoMvaProfile& p : r.profiles)
    if (p.name == vm) prof = &p;
  if (v == nullptr || prof == nullptr) throw std::invalid_argument("metric " + name + ": no running VM named '" + vm + "'");
  // One job's figure: its class's, read with its own workload (block sizes for bw_kib).
  const auto job_scenario = [&](const std::string& j) {
    IoScenario one = *v;
    for (const FioJob& f : v->jobs)
      if (f.name == j) one.workload = f.workload;
    one.jobs.clear();
    return one;
  };
  if (!is_vm_metric(rest) && split_job_metric(rest, &job, &tail)) {
    for (const IoMvaJob& j : prof->jobs)
      if (j.name == job) return io_metric_mva(j.figures, job_scenario(job), tail);
    std::string names;
    for (const IoMvaJob& j : prof->jobs) names += (names.empty() ? "" : ", ") + j.name;
    throw std::invalid_argument(
        "metric " + name + ": " + (vm.empty() ? "the VM" : "vm." + vm) + " runs no fio job named '" + job + "'" +
        (names.empty() ? " (it runs one job: write the metric without a job)" : " (its jobs: " + names + ")"));
  }
  if (cpu_metric_kind(rest) >= 0 || is_count_metric(rest))
    throw std::invalid_argument("metric " + name + ": the multi-class MVA keeps the host's cores as one station (host.cpu), " +
                                "not split by thread; run the simulation");
  // A VM of several jobs: its bandwidth is its first group's jobs' together (block sizes differ).
  if (!prof->jobs.empty() && rest.size() > 7 && rest.compare(rest.size() - 7, 7, ".bw_kib") == 0) {
    double kib = 0;
    for (const IoMvaJob& j : prof->jobs)
      if (j.phase == 0) kib += io_metric_mva(j.figures, job_scenario(j.name), rest);
    return kib;
  }
  return io_metric_mva(prof->figures, *v, rest);
}

}  // namespace vqsim::models
