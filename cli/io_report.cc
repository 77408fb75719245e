#include "cli/io_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/common.h"
#include "models/core_share.h"
#include "models/fio_workload.h"
#include "sim/fio_histogram.h"

namespace vqsim::cli {

std::string printf_string(const char* format, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

namespace {

// fio's "usec"/"msec" choice: the unit that keeps the mean below 10000.
void pick_unit(double ns, const char** unit, double* scale) {
  if (ns < 10000) {
    *unit = "nsec";
    *scale = 1;
  } else if (ns < 10000000) {
    *unit = "usec";
    *scale = 1e3;
  } else {
    *unit = "msec";
    *scale = 1e6;
  }
}

std::string si(double v) {
  if (v >= 1e6) return printf_string("%.3fM", v / 1e6);
  if (v >= 1e4) return printf_string("%.1fk", v / 1e3);
  return printf_string("%.0f", v);
}

std::string bytes_rate(double b) {
  if (b >= 1024.0 * 1024 * 1024) return printf_string("%.2fGiB/s", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return printf_string("%.1fMiB/s", b / (1024.0 * 1024));
  return printf_string("%.0fKiB/s", b / 1024.0);
}

const char* kDirs[] = {"read", "write"};

// About four significant figures without an exponent: 37051, 812.4, 95.21, 1.234, 0.0123.
std::string figure(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return printf_string("%.0f", v);
  if (a >= 100) return printf_string("%.1f", v);
  if (a >= 10) return printf_string("%.2f", v);
  if (a >= 1) return printf_string("%.3f", v);
  return printf_string("%.3g", v);
}

// Left-aligns `text` in `width` columns, counting UTF-8 characters (the en dash is three bytes).
std::string pad_right(const std::string& text, std::size_t width) {
  std::size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return chars >= width ? text + " " : text + std::string(width - chars, ' ');
}

// fio's per-direction block (IOPS, bandwidth, slat/clat/lat, clat percentiles) of the VM whose
// figures carry `prefix` ("" for a single VM's).
// The name prefixes of every VM but each [[vm]] profile's first (none for a single-VM file).
std::vector<std::string> replica_prefixes(const models::IoScenario& s) {
  std::vector<std::string> out;
  if (!s.multi_vm()) return out;
  for (const auto& i : models::vm_instances(s))
    if (i.replica > 0) out.push_back(i.prefix);
  return out;
}

// Who fills each device: every [[vm]] profile's disk on it (all the profile's VMs together),
// with its share of the device's I/Os and bytes. A VM of one disk counts its figures; a VM of
// several counts each disk's own (disk:<name>.*) on the device that disk names.
struct DeviceUse {
  std::size_t profile = 0;
  int disk = -1;              // the disk of a VM of several (models::IoScenario::disks), -1 for a VM of one
  double ios = 0, bytes = 0;  // shares of the device's
};
struct DeviceShares {
  std::string device;  // the [[backend]] name ("" = the file's one [backend])
  std::vector<DeviceUse> uses;
};
std::vector<DeviceShares> device_shares(const models::IoScenario& s, const IoRunReport& r) {
  std::vector<DeviceShares> out;
  const auto device = [&](const std::string& name) -> DeviceShares& {
    for (auto& d : out)
      if (d.device == name) return d;
    out.push_back({name, {}});
    return out.back();
  };
  const auto instances = models::vm_instances(s);
  for (std::size_t p = 0; p < s.profiles.size(); ++p) {
    const models::VmProfile& vm = s.profiles[p];
    if (vm.count == 0) continue;
    const bool several = vm.scenario.multi_disk();
    for (std::size_t d = 0; d < (several ? vm.scenario.disks.size() : 1); ++d) {
      const std::string disk = several ? models::disk_prefix(vm.scenario.disks[d]) : "";
      DeviceUse use{p, several ? static_cast<int>(d) : -1, 0, 0};
      for (const auto& i : instances) {
        if (i.profile != static_cast<int>(p)) continue;
        for (const char* dir : kDirs) {
          use.ios += r.get(i.prefix + disk + dir + ".iops").mean;
          use.bytes += r.get(i.prefix + disk + dir + ".bw_bytes_per_s").mean;
        }
      }
      device(several ? vm.scenario.disks[d].backend : vm.backend).uses.push_back(use);
    }
  }
  for (auto& d : out) {
    double ios = 0, bytes = 0;
    for (const auto& u : d.uses) {
      ios += u.ios;
      bytes += u.bytes;
    }
    for (auto& u : d.uses) {
      u.ios = ios > 0 ? u.ios / ios : 0;
      u.bytes = bytes > 0 ? u.bytes / bytes : 0;
    }
  }
  return out;
}

// The share of profile p's disk `disk` (-1: its one disk, or its first) of its device.
DeviceUse device_use(const std::vector<DeviceShares>& shares, std::size_t p, int disk) {
  for (const auto& d : shares)
    for (const auto& u : d.uses)
      if (u.profile == p && (u.disk == disk || (disk == -1 && u.disk == 0))) return u;
  return DeviceUse{p, disk, 0, 0};
}

void directions_text(std::ostringstream& out, const IoRunReport& r, const std::string& prefix) {
  for (const char* d : kDirs) {
    const std::string dir = d;
    const auto iops = r.get(prefix + dir + ".iops");
    if (iops.mean <= 0) continue;
    const auto bw = r.get(prefix + dir + ".bw_bytes_per_s");
    char head[64];
    std::snprintf(head, sizeof head, "%5s: IOPS=", d);
    out << head << si(iops.mean) << " ± " << si(iops.half_width) << ", BW=" << bytes_rate(bw.mean) << " ± "
        << bytes_rate(bw.half_width) << "\n";
    for (const char* kind : {"slat", "clat", "lat"}) {
      const std::string p = dir + "." + kind;
      const auto mean = r.get(prefix + p + ".mean_ns");
      const char* unit;
      double scale;
      pick_unit(mean.mean, &unit, &scale);
      char line[256];
      std::snprintf(line, sizeof line, "    %4s (%s): min=%.0f, max=%.0f, avg=%.2f ± %.2f, stdev=%.2f\n", kind, unit,
                    r.get(prefix + p + ".min_ns").mean / scale, r.get(prefix + p + ".max_ns").mean / scale, mean.mean / scale,
                    mean.half_width / scale, r.get(prefix + p + ".stddev_ns").mean / scale);
      out << line;
    }
    const std::string clat = dir + ".clat";
    const char* unit;
    double scale;
    pick_unit(r.get(prefix + clat + ".p50.000000_ns").mean, &unit, &scale);
    out << "    clat percentiles (" << unit << "):\n";
    const auto pct = sim::FioHistogram::fio_default_percentiles();
    for (std::size_t i = 0; i < pct.size(); ++i) {
      const auto v = r.get(prefix + clat + ".p" + sim::FioHistogram::percentile_key(pct[i]) + "_ns");
      char cell[64];
      std::snprintf(cell, sizeof cell, "%s%5.2fth=[%6.0f]%s", i % 4 == 0 ? "     | " : " ", pct[i], v.mean / scale,
                    i + 1 == pct.size() ? "\n" : (i % 4 == 3 ? ",\n" : ","));
      out << cell;
    }
  }
}

// The jobs of stonewall group k, every VM's: "reader, writer" or "db/reader, web/scan".
std::string phase_jobs(const models::IoScenario& s, int k) {
  std::string out;
  const auto add = [&](const models::IoScenario& v, const std::string& vm) {
    for (const auto& j : v.jobs)
      if (j.phase == k) out += (out.empty() ? "" : ", ") + vm + j.name;
  };
  if (!s.multi_vm()) add(s, "");
  for (const auto& p : s.profiles) {
    if (p.count > 0) add(p.scenario, p.name + "/");
    if (p.count > 0 && !p.scenario.multi_job() && k == 0) out += (out.empty() ? "" : ", ") + p.name;  // its one job
  }
  return out;
}

// A VM of several fio jobs: each job's block, as fio prints one per job, then (one stonewall
// group) every job together.
void jobs_text(std::ostringstream& out, const IoRunReport& r, const models::IoScenario& v, const std::string& prefix) {
  const bool groups = models::scenario_phases(v) > 1;
  for (const auto& j : v.jobs) {
    out << "job " << j.name;
    if (groups) out << " (stonewall group " << j.phase + 1 << ")";
    out << ": " << job_line(j.workload) << "\n";
    directions_text(out, r, prefix + models::job_metric_prefix(j.name));
  }
  if (groups) return;  // the VM's own figures are those of its first group only
  out << "all jobs:";
  for (const char* d : kDirs) {
    const auto iops = r.get(prefix + d + ".iops");
    if (iops.mean > 0) out << " " << d << " IOPS=" << si(iops.mean) << " ± " << si(iops.half_width) << ";";
  }
  const auto lat_r = r.get(prefix + "read.iops").mean, lat_w = r.get(prefix + "write.iops").mean;
  const double lat =
      lat_r + lat_w > 0
          ? (lat_r * r.get(prefix + "read.lat.mean_ns").mean + lat_w * r.get(prefix + "write.lat.mean_ns").mean) / (lat_r + lat_w)
          : 0;
  out << printf_string(" mean lat %.2f usec\n", lat / 1e3);
}

// A VM of several disks: one line per disk (its I/Os from every job that drives it), the
// figures that its jobs' blocks do not show when jobs share a disk.
// A disk that one job drives has that job's figures: it gets no line of its own.
void disks_text(std::ostringstream& out, const IoRunReport& r, const models::IoScenario& v, const std::string& prefix) {
  for (std::size_t k = 0; k < v.disks.size(); ++k) {
    const models::DiskSpec& d = v.disks[k];
    int jobs = v.multi_job() ? 0 : v.workload.disk == static_cast<int>(k);
    for (const auto& j : v.jobs) jobs += j.workload.disk == static_cast<int>(k) && j.phase == 0;
    if (jobs == 1) continue;
    out << "disk " << d.name << " (" << d.filename << (d.backend.empty() ? "" : ", on " + d.backend) << "):";
    bool any = false;
    for (const char* dir : kDirs) {
      const std::string p = prefix + models::disk_prefix(d) + dir;
      const auto iops = r.get(p + ".iops");
      if (iops.mean <= 0) continue;
      out << (any ? ";" : "") << " " << dir << " IOPS=" << si(iops.mean) << " ± " << si(iops.half_width)
          << ", BW=" << bytes_rate(r.get(p + ".bw_bytes_per_s").mean)
          << printf_string(", clat avg %.2f usec, p99 %.0f usec", r.get(p + ".clat.mean_ns").mean / 1e3,
                           r.get(p + ".clat.p99.000000_ns").mean / 1e3);
      any = true;
    }
    out << (any ? "\n" : " idle (no job names it)\n");
  }
}

// A distance in words: "new combination" says of what.
std::string distance_words(const std::string& distance) {
  if (distance == "another depth") return "another depth (a fitted configuration, at another iodepth or numjobs)";
  return distance == "new combination" ? "new combination of fitted values (each one fitted, not together)" : distance;
}

}  // namespace

std::string prediction_text(const predict::Prediction& p) {
  std::ostringstream out;
  if (p.draws <= 0) return "";
  out << "prediction (95%: the model's own error + parameter uncertainty from " << p.draws << " draws + simulation noise):\n";
  if (!p.source.empty()) out << "  " << p.source << "\n";
  if (p.profiles.empty()) {
    out << "  this setup: " << distance_words(p.distance) << "; model error from " << p.model_error_source << "\n";
    if (!p.distance_note.empty()) out << "  (" << p.distance_note << ")\n";
  }
  // A file of [[vm]] tables: each profile's distance from what its own base measured.
  for (const auto& d : p.profiles) {
    out << "  vm." << d.vm << ": " << distance_words(d.distance) << "; model error from " << d.model_error_source << "\n";
    if (!d.distance_note.empty()) out << "    (" << d.distance_note << ")\n";
  }
  auto list = [](const std::vector<std::string>& keys) {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
    return s.empty() ? std::string("none") : s;
  };
  out << "  sampled: " << list(p.sampled) << "\n";
  if (!p.fixed_by_set.empty()) out << "  fixed by --set: " << list(p.fixed_by_set) << "\n";
  std::size_t width = 20;
  for (const auto& m : p.metrics) width = std::max(width, m.name.size() + 1);
  out << "  " << pad_right("metric", width) << pad_right("value", 11) << pad_right("95% prediction interval", 28)
      << "its parts (±, 95%): model error, parameters, simulation\n";
  for (const auto& m : p.metrics) {
    // Each part as the factor it alone would put on the value, e.g. ±48% = x / 1.48 to x * 1.48;
    // the parameters' part as its two sides where the draws are asymmetric (-20%/+45%).
    auto part = [](double log_half) { return printf_string("±%.0f%%", 100 * (std::exp(log_half) - 1)); };
    const std::string parts = part(1.96 * m.model_sd_rel) + ", " + predict::parameters_part_text(m) + ", " +
                              part(m.mean > 0 ? m.sim_half_width / m.mean : 0);
    out << "  " << pad_right(m.name, width) << pad_right(figure(m.mean), 11)
        << pad_right("[" + figure(m.lower) + " – " + figure(m.upper) + "]", 28) << parts << "\n";
  }
  if (p.metrics.empty()) out << "  (no metric is positive in every draw)\n";
  return out.str();
}

namespace {
nlohmann::ordered_json metric_prediction_json(const predict::MetricPrediction& m) {
  return {{"mean", m.mean},
          {"lower", m.lower},
          {"upper", m.upper},
          {"median", m.median},
          {"param_sd_rel", m.param_sd_rel},
          {"model_sd_rel", m.model_sd_rel},
          {"sim_half_width", m.sim_half_width},
          {"param_share", m.param_share},
          // the interval's parts, each a 95% half-width of ln(value)
          {"parts_log_half_width",
           {{"model", 1.96 * m.model_sd_rel},
            {"parameters", 0.5 * (m.param_upper_log - m.param_lower_log)},
            {"simulation", m.mean > 0 ? m.sim_half_width / m.mean : 0.0}}},
          // the parameters' part as its two sides, ln(lower / mean) and ln(upper / mean)
          {"parameters_log_interval", {m.param_lower_log, m.param_upper_log}}};
}
}  // namespace

nlohmann::ordered_json prediction_json(const predict::Prediction& p) {
  nlohmann::ordered_json j;
  j["draws"] = p.draws;
  j["source"] = p.source;
  j["sampled"] = p.sampled;
  j["fixed_by_set"] = p.fixed_by_set;
  j["distance"] = p.distance;
  if (!p.distance_note.empty()) j["distance_note"] = p.distance_note;
  j["model_error_source"] = p.model_error_source;
  // A file of [[vm]] tables: the fields above are the first running profile's; each one's here.
  if (!p.profiles.empty()) {
    j["profiles"] = nlohmann::ordered_json::array();
    for (const auto& d : p.profiles) {
      nlohmann::ordered_json o{{"vm", d.vm}, {"calibrated", d.calibrated}, {"distance", d.distance}};
      if (!d.distance_note.empty()) o["distance_note"] = d.distance_note;
      o["model_error_source"] = d.model_error_source;
      j["profiles"].push_back(o);
    }
  }
  j["metrics"] = nlohmann::ordered_json::object();
  for (const auto& m : p.metrics) j["metrics"][m.name] = metric_prediction_json(m);
  return j;
}

double offered_iops(const models::IoScenario& s) {
  if (!s.multi_job()) return s.workload.rate_iops * s.workload.numjobs;
  // Every job of the first stonewall group, whose figures the VM's are.
  double offered = 0;
  for (const auto& j : s.jobs)
    if (j.phase == 0) offered += j.workload.rate_iops * j.workload.numjobs;
  return offered;
}

double capacity_iops(const models::IoScenario& s) {
  models::IoScenario closed = s;
  closed.workload.rate_iops = 0;
  // A VM of several disks, which the MVA does not model: its first disk's path, for the run-size
  // estimate only (a rough one: the other disks add their own capacity).
  if (closed.multi_disk()) closed.disks.clear();
  return models::solve_io_mva(closed).iops;
}

std::string idle_iothreads_warning(const models::IoScenario& s) {
  const bool qemu = s.guest.driver == models::GuestDriver::virtio_blk || s.guest.driver == models::GuestDriver::virtio_scsi ||
                    s.guest.driver == models::GuestDriver::scsi_hba;
  if (!qemu || s.host.iothreads <= 1) return "";
  const models::QueueReach reach = models::queue_reach(s);
  if (reach.threads >= s.host.iothreads) return "";
  const int n = s.host.iothreads;
  std::string raise;
  auto below = [&](const char* key, int v) {
    if (v < n) raise += std::string(raise.empty() ? "" : ", ") + key + " (" + std::to_string(v) + ")";
  };
  below("workload.numjobs", s.workload.numjobs);
  below("guest.vcpus", s.guest.vcpus);
  below("guest.num_queues", s.queues());
  char buf[640];
  std::snprintf(
      buf, sizeof buf,
      "host.iothreads = %d, but only %d of them get%s requests: each virtqueue is served by one IOThread, and the jobs reach "
      "%d queue%s (job j runs on vCPU j mod guest.vcpus, vCPU v submits to queue v mod guest.num_queues); to give every "
      "IOThread a queue raise to %d: %s",
      n, reach.threads, reach.threads == 1 ? "s" : "", reach.queues, reach.queues == 1 ? "" : "s", n, raise.c_str());
  return buf;
}

std::string open_loop_warning(const models::IoScenario& s, double offered, double served, const char* how) {
  if (offered <= 0 || !(served < 0.95 * offered)) return "";
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "open loop beyond capacity: offered %.0f IOPS (workload.rate_iops %g x %d job%s), served %.0f (%s); arrivals wait "
      "for a free iodepth slot in a backlog that grows without bound with run length",
      offered, s.workload.rate_iops, s.workload.numjobs, s.workload.numjobs == 1 ? "" : "s", served, how);
  return buf;
}

void check_run_size(const models::IoScenario& vms, bool allow_long_runs) {
  if (allow_long_runs) return;
  models::IoScenario s = vms;
  double served = 0, offered = 0;
  if (vms.multi_vm()) {
    // Every VM together, in the one window they run in: each profile's VMs by their MVA alone
    // (an upper bound of what they serve beside the others), the run's length from all of them.
    const sim::RunLimits limits = models::io_run_limits(vms);
    for (const auto& p : vms.profiles) {
      if (p.count == 0) continue;
      const double o = offered_iops(p.scenario) * p.count;
      const double c = capacity_iops(p.scenario) * p.count;
      offered += o;
      served += o > 0 ? std::min(o, c) : c;
    }
    s.workload.runtime_ns = limits.measure_ns;
    s.workload.ios = limits.measure_completions;
    s.workload.ramp_time_ns = limits.warmup_ns;
    s.workload.rate_iops = 0;
  } else {
    offered = offered_iops(s);
    // What the MVA expects the path to serve (milliseconds to compute).
    served = capacity_iops(s);
    if (offered > 0) served = std::min(served, offered);
    // Several fio jobs: workload.ios per job, every stonewall group after the other.
    if (s.multi_job() && s.workload.runtime_ns == 0) s.workload.ios = models::io_run_limits(vms).measure_completions;
  }
  const auto& w = s.workload;
  constexpr double kIosPerSecond = 1e6;  // simulated I/Os per wall second on one core (vqsim bench e2e)
  const bool runtime = w.runtime_ns > 0;
  const double ramp_s = static_cast<double>(w.ramp_time_ns) / 1e9;
  const double measured = runtime ? static_cast<double>(w.runtime_ns) / 1e9 * served : static_cast<double>(w.ios);
  const double ios = measured + ramp_s * served;
  const double sim_s = (runtime ? static_cast<double>(w.runtime_ns) / 1e9 : (served > 0 ? measured / served : 0)) + ramp_s;
  const double arrivals = offered * sim_s;
  auto duration = [](double ios_count) {
    const double seconds = ios_count / kIosPerSecond;
    char buf[64];
    if (seconds < 120)
      std::snprintf(buf, sizeof buf, "%.0f seconds", seconds);
    else if (seconds < 7200)
      std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
    else if (seconds < 2 * 86400)
      std::snprintf(buf, sizeof buf, "%.0f hours", seconds / 3600);
    else
      std::snprintf(buf, sizeof buf, "%.3g days", seconds / 86400);
    return std::string(buf);
  };
  const std::string lift = " (use --allow-long-runs to lift it)";
  char buf[768];
  if (ios > kMaxIosPerReplication) {
    if (ramp_s * served > measured)
      std::snprintf(
          buf, sizeof buf,
          "%s: workload.ramp_time: %g s of warm-up at about %.0f IOPS (MVA) is %.3g I/Os per replication and would take "
          "about %s on one core; the limit is %.0f I/Os per replication%s",
          s.path.c_str(), ramp_s, served, ios, duration(ios).c_str(), kMaxIosPerReplication, lift.c_str());
    else if (runtime)
      std::snprintf(
          buf, sizeof buf,
          "%s: workload.runtime: %g s at about %.0f IOPS (MVA) is %.3g I/Os per replication and would take about %s on one "
          "core; the limit is %.0f I/Os per replication%s",
          s.path.c_str(), static_cast<double>(w.runtime_ns) / 1e9, served, ios, duration(ios).c_str(), kMaxIosPerReplication,
          lift.c_str());
    else
      std::snprintf(buf, sizeof buf,
                    "%s: workload.ios: %.3g I/Os per replication would take about %s on one core; the limit is %.0f%s",
                    s.path.c_str(), static_cast<double>(w.ios), duration(ios).c_str(), kMaxIosPerReplication, lift.c_str());
    throw UsageError(buf);
  }
  if (arrivals > kMaxIosPerReplication) {
    std::snprintf(
        buf, sizeof buf,
        "%s: workload.rate_iops: %.0f IOPS offered over %.3g simulated seconds is %.3g arrivals per replication (the path "
        "serves about %.0f IOPS) and would take about %s on one core; the limit is %.0f%s",
        s.path.c_str(), offered, sim_s, arrivals, served, duration(arrivals).c_str(), kMaxIosPerReplication, lift.c_str());
    throw UsageError(buf);
  }
  const double total = (ios + arrivals) * s.run.replications;
  if (total > kMaxIosPerRun) {
    std::snprintf(
        buf, sizeof buf,
        "%s: run.replications: %d replications x %.3g I/Os is %.3g simulated I/Os and would take about %s on one core; the "
        "limit is %.0f in all%s",
        s.path.c_str(), s.run.replications, ios + arrivals, total, duration(total).c_str(), kMaxIosPerRun, lift.c_str());
    throw UsageError(buf);
  }
}

std::string setup_line(const models::IoScenario& s) {
  std::ostringstream os;
  if (s.bare_metal()) {
    os << "bare metal";
  } else {
    os << models::driver_name(s.guest.driver) << ", " << s.guest.vcpus << " vCPU, ";
    if (s.guest.driver == models::GuestDriver::vhost_scsi || s.guest.driver == models::GuestDriver::vhost_user_blk)
      os << "vhost worker";
    else if (s.host.iothreads == 0)
      os << "main loop";
    else
      os << s.host.iothreads << " IOThread" << (s.host.iothreads > 1 ? "s" : "");
    os << ", aio=" << models::aio_name(s.host.aio) << ", cache=" << models::cache_name(s.host.cache);
  }
  if (s.multi_disk()) {
    os << ", " << s.disks.size() << " disks:";
    for (std::size_t d = 0; d < s.disks.size(); ++d)
      os << (d ? ", " : " ") << s.disks[d].name << " " << models::backend_name(s.disks[d].params.kind);
    os << "; ";
  } else {
    os << ", " << models::backend_name(s.backend.kind) << "; ";
  }
  if (!s.multi_job()) {
    os << job_line(s.workload);
  } else {
    os << s.jobs.size() << " fio jobs";
    const int phases = models::scenario_phases(s);
    if (phases > 1) os << " in " << phases << " stonewall groups";
    os << ":";
    for (std::size_t k = 0; k < s.jobs.size(); ++k)
      os << (k ? "; " : " ") << s.jobs[k].name << " " << job_line(s.jobs[k].workload);
  }
  return os.str();
}

std::string job_line(const models::WorkloadParams& w) {
  std::ostringstream os;
  os << w.rw << " " << w.bs_read_bytes / 1024 << "k";
  if (w.rw == "rw" || w.rw == "randrw") os << " (" << w.rwmixread << "% reads)";
  os << " " << w.ioengine_name << " iodepth " << w.iodepth << " x " << w.numjobs << " job" << (w.numjobs > 1 ? "s" : "");
  if (w.rate_iops > 0) os << " at " << w.rate_iops << " IOPS each (Poisson)";
  return os.str();
}

std::string io_report_text(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva,
                           const predict::Prediction* prediction) {
  std::ostringstream out;
  out << "vqsim " << VQSIM_VERSION << " run " << s.path << "\n";
  if (!s.description.empty()) out << s.description << "\n";
  if (s.multi_vm()) {
    const sim::RunLimits limits = models::io_run_limits(s);
    int vms = 0;
    for (const auto& vm : s.profiles) vms += vm.count;
    out << vms << " VM" << (vms == 1 ? "" : "s") << " of " << s.profiles.size() << " profile"
        << (s.profiles.size() == 1 ? "" : "s") << " on one host";
    if (s.host.cores > 0) out << " (" << s.host.cores << " cores)";
    out << "\n" << s.run.replications << " replications, seed " << s.run.seed << ", ";
    if (limits.measure_ns > 0)
      out << static_cast<double>(limits.measure_ns) / 1e9 << " s simulated";
    else
      out << limits.measure_completions << " I/Os of all VMs together";
    out << " each after a " << static_cast<double>(limits.warmup_ns) / 1e6 << " ms ramp; ± are 95% intervals\n";
  } else {
    out << setup_line(s) << "\n";
    out << s.run.replications << " replications, seed " << s.run.seed << ", ";
    if (s.workload.runtime_ns > 0)
      out << s.workload.runtime_ns / 1e9 << " s simulated";
    else
      out << s.workload.ios << " I/Os" << (s.multi_job() ? " per job" : "");
    out << " each after a " << s.workload.ramp_time_ns / 1e6 << " ms ramp; ± are 95% intervals\n";
  }
  if (models::scenario_phases(s) > 1)
    out << "stonewall groups run one after the other, each simulated by itself; the stage table is each group's\n";
  for (const auto& n : s.notes) out << "note: " << n << "\n";
  out << "\n";
  if (!s.multi_vm()) {
    if (s.multi_job())
      jobs_text(out, r, s, "");
    else
      directions_text(out, r, "");
  } else {
    for (std::size_t p = 0; p < s.profiles.size(); ++p) {
      const models::VmProfile& vm = s.profiles[p];
      out << "vm " << vm.name << ": " << vm.count << " VM" << (vm.count == 1 ? "" : "s");
      if (vm.scenario.multi_disk()) {
        std::vector<std::string> names;  // its disks' backends, each once
        for (const auto& d : vm.scenario.disks)
          if (!d.backend.empty() && std::find(names.begin(), names.end(), d.backend) == names.end()) names.push_back(d.backend);
        for (std::size_t k = 0; k < names.size(); ++k)
          out << (k == 0 ? (names.size() == 1 ? " on backend " : " on backends ") : ", ") << names[k];
      } else if (!vm.backend.empty()) {
        out << " on backend " << vm.backend;
      }
      if (vm.count == 0) {
        out << " (switched off)\n\n";
        continue;
      }
      out << (vm.count > 1 ? " (the figures are one VM's)" : "") << "; " << setup_line(vm.scenario) << "\n";
      if (vm.scenario.multi_job())
        jobs_text(out, r, vm.scenario, models::vm_profile_prefix(s, p));
      else
        directions_text(out, r, models::vm_profile_prefix(s, p));
      if (vm.scenario.multi_disk()) disks_text(out, r, vm.scenario, models::vm_profile_prefix(s, p));
      out << "\n";
    }
  }
  if (s.multi_vm()) {
    const auto total = r.get("host.total.iops");
    const auto lat = r.get("host.total.lat.mean_ns");
    int vms = 0;
    for (const auto& vm : s.profiles) vms += vm.count;
    out << "host (" << vms << " VMs): IOPS=" << si(total.mean) << " ± " << si(total.half_width)
        << printf_string(", mean lat %.2f ± %.2f usec\n", lat.mean / 1e3, lat.half_width / 1e3);
    // Who fills each device: every profile's (or, for a VM of several disks, every disk's)
    // share of its I/Os and bytes.
    for (const auto& d : device_shares(s, r)) {
      out << "  device" << (d.device.empty() ? std::string() : " " + d.device) << ":";
      bool first = true;
      for (const auto& u : d.uses) {
        const models::VmProfile& vm = s.profiles[u.profile];
        out << (first ? " " : "; ") << vm.name
            << (u.disk >= 0 ? " " + vm.scenario.disks[static_cast<std::size_t>(u.disk)].name : std::string())
            << printf_string(" %.1f%% of its I/Os, %.1f%% of its bytes", 100 * u.ios, 100 * u.bytes);
        first = false;
      }
      out << "\n";
    }
    // Who keeps the shared cores busy: every profile's threads' share of their busy time.
    const models::HostCoreUse cores = models::host_core_use(s, r);
    if (cores.present) {
      out << "  host.cpu (" << cores.cores << " cores, " << printf_string("%.1f%% busy", 100 * cores.utilization.mean) << "):";
      bool first = true;
      for (std::size_t p = 0; p < cores.profiles.size(); ++p) {
        const models::HostCoreShare& c = cores.profiles[p];
        if (s.profiles[p].count == 0) continue;
        out << (first ? " " : "; ") << c.vm << printf_string(" %.1f%%", 100 * c.share) << (first ? " of its busy time" : "");
        std::string parts;
        for (std::size_t k = 0; k < c.kind.size(); ++k)
          if (c.kind[k] > 0)
            parts +=
                (parts.empty() ? "" : ", ") + models::host_thread_kinds()[k].second + printf_string(" %.1f%%", 100 * c.kind[k]);
        if (!parts.empty()) out << " (" << parts << ")";
        first = false;
      }
      out << "\n";
    }
  } else if (s.vms > 1) {
    const auto total = r.get("host.total.iops");
    const auto lat = r.get("host.total.lat.mean_ns");
    out << "\nhost (" << s.vms << " VMs of this profile; the figures above are one VM's): IOPS=" << si(total.mean) << " ± "
        << si(total.half_width) << printf_string(", mean lat %.2f ± %.2f usec\n", lat.mean / 1e3, lat.half_width / 1e3);
  }
  if (prediction && prediction->draws > 0) out << "\n" << prediction_text(*prediction);
  const std::vector<std::string> replicas = replica_prefixes(s);
  bool skipped = false;
  const auto stage_table = [&](const IoRunReport& r) {
    out << "\nstage                    capacity  utilization        queue    wait (µs)   time/visit (µs)  share of lat\n";
    for (const auto& st : r.stages) {
      if (std::any_of(replicas.begin(), replicas.end(), [&](const std::string& p) { return st.name.rfind(p, 0) == 0; })) {
        skipped = true;  // a replica's stations are its profile's first VM's again
        continue;
      }
      char line[256];
      const std::string cap = st.capacity > 0 ? std::to_string(st.capacity) : "infinite";
      const std::string util =
          st.has_utilization ? printf_string("%.3f ± %.3f", st.utilization.mean, st.utilization.half_width) : "-";
      const std::string queue = st.has_wait ? printf_string("%.2f", st.queue_mean.mean) : "-";
      const std::string wait = st.has_wait ? printf_string("%.2f", st.wait_mean_ns.mean / 1e3) : "-";
      std::snprintf(line, sizeof line, "%-24s %8s  %-15s %8s %12s %17.2f %12.1f%%\n", st.name.c_str(), cap.c_str(), util.c_str(),
                    queue.c_str(), wait.c_str(), st.response_mean_ns.mean / 1e3, 100 * st.share_of_latency);
      out << line;
    }
    if (skipped) out << "(each profile's first VM and the shared stations; --format json lists every VM's)\n";
    out << "\nbottleneck: " << (r.bottleneck.empty() ? "-" : r.bottleneck)
        << printf_string(" (utilization %.3f)\n", r.bottleneck_utilization);
  };
  if (r.phases.empty()) {
    stage_table(r);
  } else {
    for (std::size_t k = 0; k < r.phases.size(); ++k) {
      out << "\nstonewall group " << k + 1 << " (" << phase_jobs(s, static_cast<int>(k)) << "):";
      stage_table(r.phases[k]);
    }
  }
  if (mva) {
    const double des_iops = r.get("read.iops").mean + r.get("write.iops").mean;
    const double des_lat = des_iops > 0 ? (r.get("read.iops").mean * r.get("read.lat.mean_ns").mean +
                                           r.get("write.iops").mean * r.get("write.lat.mean_ns").mean) /
                                              des_iops
                                        : 0;
    const double d_iops = des_iops > 0 ? (mva->iops - des_iops) / des_iops : 0;
    const double d_lat = des_lat > 0 ? (mva->lat_mean_ns - des_lat) / des_lat : 0;
    out << printf_string("MVA: %.0f IOPS, mean lat %.2f µs", mva->iops, mva->lat_mean_ns / 1e3)
        << printf_string(" (%+.1f%% and %+.1f%% vs the simulation)", 100 * d_iops, 100 * d_lat) << "; bottleneck "
        << mva->bottleneck << "\n";
    if (std::fabs(d_iops) > 0.10 || std::fabs(d_lat) > 0.10)
      out << "MVA and DES disagree by more than 10%: the stages' non-exponential times, token limits or state-dependent kicks "
             "matter here;"
             " trust the DES\n";
    // Where: stages whose time per I/O differs by more than 10% (and 1 µs).
    for (const auto& st : mva->stages) {
      for (const auto& row : r.stages) {
        if (row.name != st.name || des_iops <= 0) continue;
        const double des_ns = row.throughput_per_s.mean / des_iops * row.response_mean_ns.mean;
        if (std::fabs(des_ns - st.residence_ns) > std::max(0.10 * des_ns, 1000.0))
          out << "  differs at " << st.name
              << printf_string(": %.2f µs per I/O by MVA, %.2f by DES\n", st.residence_ns / 1e3, des_ns / 1e3);
      }
    }
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "Little's law: worst relative error %.4f%% (%s, replication %llu), %.4f%% beyond edge effects: %s\n",
                100 * r.little_worst, r.little_where.empty() ? "-" : r.little_where.c_str(),
                static_cast<unsigned long long>(r.little_replication), 100 * r.little_excess, r.little_ok ? "ok" : "VIOLATED");
  out << line;
  return out.str();
}

nlohmann::ordered_json io_report_json(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva,
                                      const predict::Prediction* prediction) {
  auto interval = [](const sim::Interval& i) {
    return nlohmann::ordered_json{{"mean", i.mean}, {"half_width_95", i.half_width}, {"lower", i.lower}, {"upper", i.upper}};
  };
  nlohmann::ordered_json j;
  j["vqsim_version"] = VQSIM_VERSION;
  j["scenario"] = s.path;
  j["description"] = s.description;
  j["setup"] = setup_line(s);
  j["seed"] = s.run.seed;
  j["replications"] = s.run.replications;
  j["notes"] = s.notes;
  // One VM's directions: fio's figures of the VM whose names carry `prefix`.
  const auto directions = [&](const std::string& prefix) {
    nlohmann::ordered_json out;
    for (const char* d : kDirs) {
      const std::string dir = d;
      auto& o = out[dir];
      o["iops"] = interval(r.get(prefix + dir + ".iops"));
      o["bw_bytes_per_s"] = interval(r.get(prefix + dir + ".bw_bytes_per_s"));
      for (const char* kind : {"slat", "clat", "lat"}) {
        const std::string p = prefix + dir + "." + kind;
        auto& k = o[kind];
        k["mean_ns"] = interval(r.get(p + ".mean_ns"));
        k["stddev_ns"] = interval(r.get(p + ".stddev_ns"));
        k["min_ns"] = r.get(p + ".min_ns").mean;
        k["max_ns"] = r.get(p + ".max_ns").mean;
        if (std::string(kind) != "slat")
          for (double pc : sim::FioHistogram::fio_default_percentiles()) {
            const std::string key = sim::FioHistogram::percentile_key(pc);
            k["percentiles_ns"][key] = interval(r.get(p + ".p" + key + "_ns"));
          }
      }
    }
    return out;
  };
  // A VM of several fio jobs: each job's figures (the VM's "directions" are every job together).
  const auto jobs_json = [&](const models::IoScenario& v, const std::string& prefix) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& job : v.jobs) {
      nlohmann::ordered_json o;
      o["name"] = job.name;
      o["where"] = job.where;
      o["groupid"] = job.group;
      o["stonewall_group"] = job.phase;
      o["numjobs"] = job.workload.numjobs;
      o["setup"] = job_line(job.workload);
      o["directions"] = directions(prefix + models::job_metric_prefix(job.name));
      out.push_back(o);
    }
    return out;
  };
  if (s.multi_vm()) {
    // Each profile's figures are its first VM's (its replicas are the same VM again); the
    // top-level "directions" are the first profile's, as in a single-VM file.
    j["vms"] = nlohmann::ordered_json::array();
    const std::vector<DeviceShares> shares = device_shares(s, r);
    const models::HostCoreUse cores = models::host_core_use(s, r);
    for (std::size_t p = 0; p < s.profiles.size(); ++p) {
      const models::VmProfile& vm = s.profiles[p];
      nlohmann::ordered_json v;
      v["name"] = vm.name;
      v["count"] = vm.count;
      v["backend"] = vm.backend;
      v["setup"] = setup_line(vm.scenario);
      v["prefix"] = models::vm_profile_prefix(s, p);
      if (vm.count > 0) {
        v["directions"] = directions(models::vm_profile_prefix(s, p));
        if (vm.scenario.multi_job()) v["jobs"] = jobs_json(vm.scenario, models::vm_profile_prefix(s, p));
        // All its VMs' share of the I/Os and bytes of the device its (first) disk is on.
        const DeviceUse use = device_use(shares, p, -1);
        v["device_share"] = {{"ios", use.ios}, {"bytes", use.bytes}};
        // Several disks: each one's figures (every job that drives it) and its device's share.
        if (vm.scenario.multi_disk()) {
          v["disks"] = nlohmann::ordered_json::array();
          for (std::size_t d = 0; d < vm.scenario.disks.size(); ++d) {
            const models::DiskSpec& disk = vm.scenario.disks[d];
            const DeviceUse du = device_use(shares, p, static_cast<int>(d));
            nlohmann::ordered_json o;
            o["name"] = disk.name;
            o["filename"] = disk.filename;
            o["backend"] = disk.backend;
            o["where"] = disk.where;
            if (disk.iothread >= 0) o["iothread"] = disk.iothread;
            o["directions"] = directions(models::vm_profile_prefix(s, p) + models::disk_prefix(disk));
            o["device_share"] = {{"ios", du.ios}, {"bytes", du.bytes}};
            v["disks"].push_back(o);
          }
        }
        // With host.cores: all its VMs' threads' share of the cores' busy time, by kind of thread.
        if (cores.present) {
          const models::HostCoreShare& c = cores.profiles[p];
          nlohmann::ordered_json by = nlohmann::ordered_json::object();
          for (std::size_t k = 0; k < c.kind.size(); ++k) by[models::host_thread_kinds()[k].first] = c.kind[k];
          v["host_cpu_share"] = {{"busy_share", c.share}, {"cores", c.cores}, {"by_thread", by}};
        }
        // A calibrated scenario: this profile's prediction intervals, named as within the VM
        // (read.iops, <job>.read.iops), and how far they extrapolate.
        if (prediction != nullptr && prediction->draws > 0) {
          nlohmann::ordered_json pj;
          for (const auto& d : prediction->profiles)
            if (d.vm == vm.name) {
              pj["distance"] = d.distance;
              if (!d.distance_note.empty()) pj["distance_note"] = d.distance_note;
              pj["model_error_source"] = d.model_error_source;
            }
          pj["metrics"] = nlohmann::ordered_json::object();
          const std::string head = "vm." + vm.name + ".";
          for (const auto& m : prediction->metrics)
            if (m.vm == vm.name) pj["metrics"][m.name.substr(head.size())] = metric_prediction_json(m);
          v["prediction"] = pj;
        }
      }
      j["vms"].push_back(v);
    }
  }
  j["directions"] = directions("");
  if (!s.multi_vm() && s.multi_job()) j["jobs"] = jobs_json(s, "");
  const auto stages_json = [&](const IoRunReport& r) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& st : r.stages) {
      nlohmann::ordered_json row;
      row["name"] = st.name;
      row["stage"] = st.stage;
      row["capacity"] = st.capacity;
      if (st.has_utilization) row["utilization"] = interval(st.utilization);
      if (st.has_wait) {
        row["queue_mean"] = interval(st.queue_mean);
        row["wait_mean_ns"] = interval(st.wait_mean_ns);
      }
      row["time_per_visit_ns"] = interval(st.response_mean_ns);
      row["visits_per_s"] = interval(st.throughput_per_s);
      row["share_of_latency"] = st.share_of_latency;
      rows.push_back(row);
    }
    return rows;
  };
  for (auto& row : stages_json(r)) j["stages"].push_back(row);
  if (!r.phases.empty()) {
    // Stonewall groups: each group's own stage table and bottleneck (the top level's are the first's).
    j["stonewall_groups"] = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < r.phases.size(); ++k) {
      const IoRunReport& ph = r.phases[k];
      j["stonewall_groups"].push_back({{"group", k},
                                       {"jobs", phase_jobs(s, static_cast<int>(k))},
                                       {"stages", stages_json(ph)},
                                       {"bottleneck", {{"stage", ph.bottleneck}, {"utilization", ph.bottleneck_utilization}}}});
    }
  }
  if (s.multi_vm()) {
    int vms = 0;
    for (const auto& vm : s.profiles) vms += vm.count;
    j["host"] = {{"vms", vms},
                 {"cores", s.host.cores},
                 {"total_iops", interval(r.get("host.total.iops"))},
                 {"total_lat_mean_ns", interval(r.get("host.total.lat.mean_ns"))}};
    // host.cpu as a whole: its utilization and the cores every VM's threads kept busy (each
    // profile's part is its vms[] entry's host_cpu_share).
    const models::HostCoreUse cores = models::host_core_use(s, r);
    if (cores.present) {
      j["host"]["cpu"] = {{"utilization", interval(cores.utilization)}, {"busy_cores", cores.busy_cores}};
      if (cores.off_cpu_cores != 0) j["host"]["cpu"]["off_cpu_cores"] = cores.off_cpu_cores;
    }
  } else if (s.vms > 1)
    j["host"] = {{"vms", s.vms},
                 {"total_iops", interval(r.get("host.total.iops"))},
                 {"total_lat_mean_ns", interval(r.get("host.total.lat.mean_ns"))}};
  if (!s.multi_vm()) {
    // With host.cores: the cores each kind of thread kept busy (its core time over the window),
    // which a measurement of each thread's CPU time (the lab's meta.json) compares with.
    const models::HostCoreUse cores = models::host_core_use(s, r);
    if (cores.present) {
      nlohmann::ordered_json by = nlohmann::ordered_json::object();
      for (std::size_t k = 0; k < cores.profiles[0].kind.size(); ++k)
        by[models::host_thread_kinds()[k].first] = cores.profiles[0].kind[k] * cores.busy_cores;
      j["host_cpu"] = {{"cores", s.host.cores},
                       {"utilization", interval(cores.utilization)},
                       {"busy_cores", cores.busy_cores},
                       {"by_thread", by}};
      // TCG's vCPUs: what busy_cores holds beyond host.cpu's utilization (host.tcg_vcpu_busy).
      if (cores.off_cpu_cores != 0) j["host_cpu"]["off_cpu_cores"] = cores.off_cpu_cores;
    }
  }
  // The summary's figures whose names end in `suffix`, by what comes before it.
  auto by_name = [&r, &interval](const std::string& suffix) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& m : r.summary)
      if (m.name.size() > suffix.size() && m.name.ends_with(suffix))
        out[m.name.substr(0, m.name.size() - suffix.size())] = interval(m.interval);
    return out;
  };
  // Each interrupt line's completions per interrupt, which a guest's /proc/interrupts over a
  // job measures (the lab's meta.json: its virtio request vectors' count over fio's I/Os).
  if (auto irqs = by_name(".completions_per_interrupt"); !irqs.empty()) j["completions_per_interrupt"] = irqs;
  // Each thread's wake-ups per second (work that found it asleep, waits for a lock held by another
  // thread's pass), which the lab counts as each QEMU thread's voluntary context switches.
  if (auto wakeups = by_name(".wakeups_per_s"); !wakeups.empty()) j["wakeups_per_s"] = wakeups;
  j["bottleneck"] = {{"stage", r.bottleneck}, {"utilization", r.bottleneck_utilization}};
  j["little"] = {{"worst_rel_error", r.little_worst},
                 {"beyond_edge_effects", r.little_excess},
                 {"where", r.little_where},
                 {"replication", r.little_replication},
                 {"ok", r.little_ok}};
  if (s.run.hash_events) j["event_hash"] = event_hash_hex(r.event_hash);
  if (mva) {
    nlohmann::ordered_json m;
    m["iops"] = mva->iops;
    m["read_iops"] = mva->read_iops;
    m["write_iops"] = mva->write_iops;
    m["lat_mean_ns"] = mva->lat_mean_ns;
    m["slat_mean_ns"] = mva->slat_mean_ns;
    m["clat_mean_ns"] = mva->clat_mean_ns;
    m["bottleneck"] = mva->bottleneck;
    for (const auto& st : mva->stages)
      m["stages"].push_back({{"name", st.name},
                             {"residence_ns", st.residence_ns},
                             {"utilization", st.utilization},
                             {"number_mean", st.number_mean}});
    j["mva"] = m;
  }
  if (prediction && prediction->draws > 0) j["prediction"] = prediction_json(*prediction);
  return j;
}

namespace {
fio::JobResult fio_job(const models::IoScenario& s, const IoRunReport& r, const std::string& prefix, const std::string& name,
                       const std::string& runtime_key = "run.simulated_ns");
// Each job of a VM of several fio jobs, as fio writes them (one entry per job section, its
// numjobs clones together as with group_reporting): `vm` before the job's name ("db/"), the
// group ids from `groupid` on, one per fio reporting group of the VM's job file.
void fio_jobs(fio::FioResult& res, const models::IoScenario& v, const IoRunReport& r, const std::string& prefix,
              const std::string& vm, int groupid) {
  for (const auto& j : v.jobs) {
    models::IoScenario one = v;
    one.workload = j.workload;
    const std::string mine = prefix + models::job_metric_prefix(j.name);
    fio::JobResult job = fio_job(one, r, mine, vm + j.name, mine + "simulated_ns");
    job.groupid = groupid + j.group;
    res.jobs.push_back(job);
  }
}
}  // namespace

fio::FioResult to_fio_result(const models::IoScenario& s, const IoRunReport& r) {
  fio::FioResult res;
  res.format = fio::Format::json;
  res.fio_version = std::string("vqsim-") + VQSIM_VERSION;
  if (!s.multi_vm()) {
    if (s.multi_job())
      fio_jobs(res, s, r, "", "", 0);
    else
      res.jobs.push_back(fio_job(s, r, "", "vqsim"));
    return res;
  }
  // One job per VM profile and fio job ("<vm name>/<job name>"; "<vm name>/vqsim" for a VM of one
  // job), with the figures of one VM of it; each VM's reporting groups get group ids of their own.
  int groupid = 0;
  for (std::size_t p = 0; p < s.profiles.size(); ++p) {
    const models::VmProfile& vm = s.profiles[p];
    if (vm.count == 0) continue;
    if (vm.scenario.multi_job()) {
      fio_jobs(res, vm.scenario, r, models::vm_profile_prefix(s, p), vm.name + "/", groupid);
      groupid += vm.scenario.jobs.back().group + 1;
      continue;
    }
    fio::JobResult job = fio_job(vm.scenario, r, models::vm_profile_prefix(s, p), vm.name + "/vqsim");
    job.groupid = groupid++;
    res.jobs.push_back(job);
  }
  return res;
}

namespace {
fio::JobResult fio_job(const models::IoScenario& s, const IoRunReport& r, const std::string& prefix, const std::string& name,
                       const std::string& runtime_key) {
  fio::JobResult job;
  job.name = name;
  job.groupid = 0;
  job.jobs = s.workload.numjobs;
  job.error = 0;
  // The fio job the scenario models, as fio's "job options" would list it. The model is of
  // O_DIRECT I/O (no guest page cache), so direct=1; bs per direction ("r,w") when they differ;
  // an open loop or a think time as fio's rate_iops (per direction) and thinktime (us), so that
  // `vqsim check` of this output judges the same job.
  const auto& w = s.workload;
  job.options = {
      {"rw", w.rw},
      {"bs", w.bs_read_bytes == w.bs_write_bytes ? std::to_string(w.bs_read_bytes)
                                                 : std::to_string(w.bs_read_bytes) + "," + std::to_string(w.bs_write_bytes)},
      {"direct", "1"},
      {"ioengine", w.ioengine_name},
      {"iodepth", std::to_string(w.iodepth)},
      {"numjobs", std::to_string(w.numjobs)},
      {"rwmixread", std::to_string(w.rwmixread)}};
  if (w.iodepth_batch_submit != 1) job.options["iodepth_batch_submit"] = std::to_string(w.iodepth_batch_submit);
  if (w.rate_iops > 0) {
    const auto per = [&](double share) { return std::to_string(static_cast<std::uint64_t>(std::llround(w.rate_iops * share))); };
    job.options["rate_iops"] = w.read_fraction >= 1   ? per(1)
                               : w.read_fraction <= 0 ? "," + per(1)
                                                      : per(w.read_fraction) + "," + per(1 - w.read_fraction);
    job.options["rate_process"] = "poisson";
  }
  if (w.thinktime_ns > 0) job.options["thinktime"] = std::to_string(std::max<long long>(1, std::llround(w.thinktime_ns / 1e3)));
  const double runtime_ms = r.get(runtime_key).mean / 1e6;
  job.job_runtime_ms = runtime_ms;
  for (const char* d : kDirs) {
    const std::string dir = d;
    fio::DirectionStats& out = dir == "read" ? job.read : job.write;
    out.iops = r.get(prefix + dir + ".iops").mean;
    out.bw_bytes_per_s = r.get(prefix + dir + ".bw_bytes_per_s").mean;
    out.runtime_ms = runtime_ms;
    out.total_ios = static_cast<std::uint64_t>(std::llround(r.get(prefix + dir + ".ios").mean));
    out.io_bytes = static_cast<std::uint64_t>(std::llround(*out.bw_bytes_per_s * runtime_ms / 1e3));
    out.short_ios = 0;
    out.drop_ios = 0;
    for (const char* kind : {"slat", "clat", "lat"}) {
      const std::string p = dir + "." + kind;
      fio::LatencyStats& l = std::string(kind) == "slat" ? out.slat : std::string(kind) == "clat" ? out.clat : out.lat;
      l.min_ns = r.get(prefix + p + ".min_ns").mean;
      l.max_ns = r.get(prefix + p + ".max_ns").mean;
      l.mean_ns = r.get(prefix + p + ".mean_ns").mean;
      l.stddev_ns = r.get(prefix + p + ".stddev_ns").mean;
      l.samples = out.total_ios;
      if (std::string(kind) == "clat" && *out.total_ios > 0)
        for (double pc : sim::FioHistogram::fio_default_percentiles())
          l.percentiles.emplace_back(pc,
                                     std::round(r.get(prefix + p + ".p" + sim::FioHistogram::percentile_key(pc) + "_ns").mean));
    }
  }
  return job;
}
}  // namespace

}  // namespace vqsim::cli
