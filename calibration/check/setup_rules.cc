// Rules on the setup a result describes (fio's options, or a manifest's `set`): does the setup
// measure what it seems to? Rules and thresholds are documented in docs/check.md.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"
#include "models/fio_jobfile.h"

namespace vqsim::check {
namespace {

using namespace detail;

// true = O_DIRECT, false = buffered, nullopt = unknown.
std::optional<bool> direct(const Measured& m) {
  if (auto d = key(m, "workload.direct")) return !(*d == "false" || *d == "0");
  if (defaults_apply(m)) return false;
  return std::nullopt;
}
std::string depth_text(const fio::JobResult* j) {
  if (!j || j->iodepth_level.empty()) return "";
  std::string s;
  for (const auto& [k, p] : j->iodepth_level)
    if (p >= 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s=%.1f%%", s.empty() ? "" : ", ", k.c_str(), p);
      s += buf;
    }
  return s.empty() ? "" : "; IO depths: " + s;
}

constexpr double kCacheLatUs = 10.0;  // a device read (even NVMe through the kernel) takes longer

// Engines whose latency is not a storage device's.
bool memory_engine(const std::string& e) { return e == "null" || e == "dev-dax" || e == "libpmem" || e == "cpuio"; }

}  // namespace

std::vector<Finding> check_setup(const std::vector<Measured>& ms) {
  std::vector<Finding> out;
  std::set<std::string> job_done;  // per-job rules once per job
  std::set<std::string> page_cache_jobs;

  // Page cache: buffered reads faster than any device.
  for (const auto& m : ms) {
    if (m.dir == "write") continue;
    auto eng = engine(m);
    if (eng && memory_engine(*eng)) continue;
    const auto lat = m.lat_mean_us ? m.lat_mean_us : m.clat_mean_us;
    if (!lat || !(*lat > 0) || *lat >= kCacheLatUs) continue;
    auto d = direct(m);
    if (d && *d) continue;
    std::string ev = "mean read latency " + num(*lat) + " us";
    if (m.iops) ev += " at " + num(*m.iops) + " IOPS";
    ev += d ? " with buffered I/O (direct=0" +
                  std::string(defaults_apply(m) && !key(m, "workload.direct") ? ", fio's default)" : ")")
            : " (whether direct=1 was set is not in the output)";
    if (auto size = key(m, "workload.size")) ev += ", size=" + *size;
    if (eng) ev += ", ioengine=" + *eng;
    std::string cause =
        "the reads were served from the page cache (RAM), not the device (fio#41): no disk answers a read in under " +
        num(kCacheLatUs) + " us through the kernel; use direct=1, or a file much larger than RAM";
    if (eng && *eng == "libaio") cause += " (libaio without direct=1 is also synchronous, so iodepth had no effect)";
    out.push_back(make(d ? Severity::error : Severity::warning, "page-cache", where_dir(m), ev, cause));
    page_cache_jobs.insert(where(m));
  }

  for (const auto& m : ms) {
    const std::string job = where(m);
    if (job_done.count(job)) continue;
    job_done.insert(job);
    auto eng = engine(m);
    auto depth = key_number(m, "workload.iodepth");
    // iodepth > 1 with a synchronous engine (fio#1388).
    if (eng && fio::is_synchronous_engine(*eng) && depth && *depth > 1) {
      out.push_back(
          make(Severity::warning, "sync-iodepth", job,
               "ioengine=" + *eng + (key(m, "workload.ioengine") || key(m, "fio.ioengine") ? "" : " (fio's default)") +
                   " with iodepth=" + num(*depth) + depth_text(m.job_result),
               "iodepth has no effect on a synchronous engine (fio#1388): each job keeps one I/O in flight, so the figures "
               "are for depth 1 per job; use ioengine=libaio or io_uring with direct=1 for a deeper queue"));
    }
    // libaio without O_DIRECT.
    auto d = direct(m);
    if (eng && *eng == "libaio" && d && !*d && !page_cache_jobs.count(job)) {
      out.push_back(make(Severity::warning, "libaio-buffered", job,
                         "ioengine=libaio with direct=0" + std::string(key(m, "workload.direct") ? "" : " (fio's default)") +
                             (depth ? ", iodepth=" + num(*depth) : std::string()) + depth_text(m.job_result),
                         "Linux buffered I/O is not asynchronous: io_submit blocks until each I/O is done, so iodepth does not "
                         "queue I/Os at the device, and reads may come from the page cache; set direct=1"));
    }
    // ramp_time on writes to a thin device.
    bool writes = false;
    for (const auto& x : ms)
      if (where(x) == job && (x.dir == "write" || x.dir == "mixed")) writes = true;
    if (writes) {
      std::string thin;
      if (auto k = key(m, "backend.kind"); k && (*k == "ceph-rbd" || *k == "krbd"))
        thin = "backend.kind=" + *k + " (thin-provisioned RBD image)";
      if (auto f = key(m, "backend.image_format"); f && (*f == "qcow2" || *f == "vmdk" || *f == "vdi" || *f == "vhdx"))
        thin = "backend.image_format=" + *f + " (allocates clusters on first write)";
      if (auto t = key(m, "backend.thin"); t && (*t == "true" || *t == "1")) thin = "backend.thin=true";
      auto ramp = key(m, "workload.ramp_time");
      double ramp_s = 0;
      if (ramp) ramp_s = number_of(*ramp).value_or(1);
      if (!thin.empty() && !(ramp && ramp_s > 0)) {
        const bool known = defaults_apply(m) || (ramp && ramp_s == 0);
        out.push_back(
            make(known ? Severity::warning : Severity::info, "ramp-time", job,
                 "writes to " + thin + (known ? " with no ramp_time" : "; whether ramp_time was set is not in the output"),
                 "if these were the first writes to the image, each one also allocated space (and zeroed it), which is slower "
                 "than rewriting: the figures mix allocation with steady state; precondition the device (write it once) or "
                 "set ramp_time"));
      }
    }
  }

  // A run too short for the percentiles it reports.
  for (const auto& m : ms) {
    std::optional<double> n = m.total_ios;
    if (!n && m.iops && m.runtime_s) n = *m.iops * *m.runtime_s;
    if (!n || !(*n > 0)) continue;
    std::vector<double> ps;
    if (const auto* st = stats(m)) {
      for (const auto& [p, v] : st->clat.percentiles) ps.push_back(p);
      for (const auto& [p, v] : st->lat.percentiles) ps.push_back(p);
    } else {
      if (m.clat_p99_us) ps.push_back(99);
      if (m.clat_p999_us) ps.push_back(99.9);
    }
    double worst_warn = 0, worst_info = 0;
    for (double p : ps) {
      if (p <= 50 || p >= 100) continue;
      if (*n * (1 - p / 100) >= 1) continue;
      if (p <= 99.9 + 1e-9)
        worst_warn = std::max(worst_warn, p);
      else
        worst_info = std::max(worst_info, p);
    }
    const double worst = worst_warn > 0 ? worst_warn : worst_info;
    if (worst <= 0) continue;
    const double needed = 1 / (1 - worst / 100);
    std::string ev =
        num(*n) + " I/Os in the run, but p" + num(worst) + " needs at least " + num(needed) + " to have one I/O beyond it";
    if (m.iops && *m.iops > 0)
      ev += " (" + num(needed / *m.iops) + " s at " + num(*m.iops) + " IOPS; 10x that for a stable estimate)";
    out.push_back(make(worst_warn > 0 ? Severity::warning : Severity::info, "short-run", where_dir(m), ev,
                       "the run is too short for the percentiles it reports: p" + num(worst) +
                           " and above are just the largest samples, not a tail estimate; run longer (runtime=, time_based)"));
  }
  for (auto& f : unstated_workload_findings(ms)) out.push_back(std::move(f));
  return out;
}

}  // namespace vqsim::check
