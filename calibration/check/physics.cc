// Physics rules of `vqsim check`: what a device class can do at a given depth.
//
// Rules (ids):
//   physics-iops           random IOPS (or bandwidth / bs) above the class's bound at that
//                          depth: warning above it, error above 2x; rotating disks: reads warn
//                          above 1.5x the full-span figure and err above max(2x it, the
//                          rotational limit), writes (write cache) are held to the rotational
//                          limit only;
//   physics-bandwidth      bandwidth above the media rate (warning) or above the interface /
//                          link rate x 1.05 (error; 5% leaves room for a MB-vs-MiB slip, which
//                          the consistency rules report on their own);
//   physics-latency-floor  mean latency of a random workload below the class's floor (error);
//   guest-above-host       a guest's IOPS > 1.05 x its host's bare-metal IOPS for the same
//                          workload: warning up to 1.25x (single runs have run-to-run noise),
//                          error above; info when caching on the host explains it.
//
// Depth: outstanding I/Os = numjobs x iodepth; a synchronous engine (sync, psync, vsync,
// pvsync, pvsync2, mmap) counts numjobs only. iodepth absent: fio's default 1, unless
// workload.tool names another generator (then the depth is unknown and the deep-queue bound is
// used).
//
// When caching is evident (workload.direct = 0, host.cache other than none/directsync, or
// host.pagecache_hit_ratio > 0), the device is not what answered, and errors become warnings.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/check/measured_access.h"

namespace vqsim::check {
namespace {

using detail::override_of;
using detail::strip;

// One device class. Every bound is an upper bound on what one device of the class can do
// (lower bound for latency floors); 0 = no bound. Sources: [S: key] a public measurement, listed
// with its reference under "Sources" in docs/check.md; [D] derived by arithmetic; [I] an
// engineering figure chosen conservatively (datasheet ranges from memory, not verified here).
struct DeviceClass {
  const char* name;
  const char* what;
  // Rotating disks: random IOPS at QD1 over the full span (seek + half a rotation) and the hard
  // QD1 limit (half a rotation alone, zero seek); NCQ raises both by at most `ncq_gain` at deep
  // queues. 0 for solid-state classes, which use Little's law with the latency floor instead.
  double qd1_iops = 0, qd1_iops_hard = 0, ncq_gain = 1;
  double max_iops = 0;                           // whole device, any depth, random 4 KiB (0 = none)
  double media_bw = 0;                           // bytes/s, sequential media/typical maximum (warning)
  double link_bw = 0;                            // bytes/s, interface/link limit (error above 1.05 x)
  double floor_read_us = 0, floor_write_us = 0;  // mean latency floors (0 = none)
  const char* iops_source;                       // evidence: where the IOPS bound comes from
  const char* bw_source;                         // ... the bandwidth bounds
  const char* lat_source;                        // ... the latency floors
};

constexpr double MB = 1e6, GB = 1e9;

const std::vector<DeviceClass>& classes() {
  static const std::vector<DeviceClass> table = {
      // 7200 rpm: avg seek 8.5 ms [I, typical 3.5" datasheets; also the scenario's backend.seek_ms
      // default] + half a rotation 60/7200/2 = 4.17 ms [D] -> 1/12.67 ms = 79 IOPS at QD1 [D];
      // rotation alone -> 240 IOPS [D]; NCQ at depth 32 reorders for up to ~2.5x [I]. Media
      // <= 300 MB/s (the fastest 20+ TB drives list 270-285 MB/s) [I]; SATA 6 Gb/s link with 8b/10b
      // = 600 MB/s [D]. Random-read floor 2 ms [I] (below half a rotation: only a cache hit is
      // faster); writes 20 us [I] (the drive's write cache acknowledges them).
      {"hdd-7200", "7200 rpm disk", 79, 240, 2.5, 0, 300 * MB, 600 * MB, 2000, 20,
       "avg seek 8.5 ms + half rotation 4.17 ms = 12.7 ms per random I/O at QD1 [D]; rotation alone 4.17 ms [D]; "
       "NCQ reordering <= 2.5x at depth 32 [I]",
       "media <= 300 MB/s [I]; SATA 6 Gb/s link = 600 MB/s [D]",
       "a random read waits ~half a rotation (4.17 ms) plus a seek; floor 2 ms [I]; writes 20 us (write cache) [I]"},
      // 10k rpm SAS: avg seek ~4 ms [I] + 3.0 ms [D] -> 143 IOPS; rotation alone 333 [D]; media
      // <= 280 MB/s [I]; SAS-3 12 Gb/s = 1200 MB/s [D]; floor 1.5 ms [I].
      {"hdd-10k", "10k rpm disk", 143, 333, 2.5, 0, 280 * MB, 1200 * MB, 1500, 20,
       "avg seek ~4 ms [I] + half rotation 3.0 ms = 7 ms per random I/O at QD1 [D]; NCQ <= 2.5x [I]",
       "media <= 280 MB/s [I]; SAS 12 Gb/s link = 1200 MB/s [D]",
       "half a rotation is 3.0 ms; floor 1.5 ms [I]; writes 20 us (write cache) [I]"},
      // 15k rpm SAS: avg seek ~3 ms [I] + 2.0 ms [D] -> 200 IOPS; rotation alone 500 [D]; media
      // <= 320 MB/s [I]; SAS-3 1200 MB/s [D]; floor 1 ms [I].
      {"hdd-15k", "15k rpm disk", 200, 500, 2.5, 0, 320 * MB, 1200 * MB, 1000, 20,
       "avg seek ~3 ms [I] + half rotation 2.0 ms = 5 ms per random I/O at QD1 [D]; NCQ <= 2.5x [I]",
       "media <= 320 MB/s [I]; SAS 12 Gb/s link = 1200 MB/s [D]",
       "half a rotation is 2.0 ms; floor 1 ms [I]; writes 20 us (write cache) [I]"},
      // SATA SSD: <= ~100k random 4 KiB IOPS (datasheets list ~90-100k) [I]; media ~560 MB/s [I];
      // SATA 6 Gb/s = 600 MB/s [D]; read floor 20 us [I] (NAND read plus AHCI), writes 10 us [I]
      // (DRAM write cache). Public: a host SSD at 95.8k randread QD128 [S: S-VBLK22].
      {"sata-ssd", "SATA SSD", 0, 0, 1, 100000, 560 * MB, 600 * MB, 20, 10,
       "SATA SSDs top out near 100k random 4k IOPS [I] (host SSD 95.8k at QD128 [S: S-VBLK22]); "
       "at low depth depth / 20 us (Little's law at the floor) [D]",
       "media ~560 MB/s [I]; SATA 6 Gb/s link = 600 MB/s [D]",
       "NAND read + AHCI: floor 20 us reads, 10 us writes (DRAM cache) [I]"},
      // NVMe, one device: <= 2.5M random 4 KiB IOPS (PCIe 5 drives) [I] (2.2M on a PCIe 5 host
      // [S: S-VW1482], 1.55M bare metal [S: S-VBLK18]); PCIe 5.0 x4 = 4 x 32 GT/s x 128/130
      // = 15.75 GB/s [D] (warning above it), PCIe 6.0 x4 / 5.0 x8 = 31.5 GB/s (error) [D]; floor
      // 4 us [I], below Optane's 10 us QD1 [S: SH-KVMF20].
      {"nvme", "NVMe SSD", 0, 0, 1, 2.5e6, 15.75 * GB, 31.5 * GB, 4, 4,
       "PCIe 5 NVMe <= 2.5M random 4k IOPS per device [I] (2.2M measured on a PCIe 5 host [S: S-VW1482]); "
       "at low depth depth / 4 us (Little's law at the floor) [D]",
       "PCIe 5.0 x4 = 15.75 GB/s [D]; PCIe 6.0 x4 / 5.0 x8 = 31.5 GB/s [D]", "Optane QD1 10 us [S: SH-KVMF20]; floor 4 us [I]"},
      // Ceph RBD: every op crosses the network to a primary OSD and back: floor 100 us [I] (a
      // fast LAN round trip plus OSD work); no per-cluster IOPS cap without the pool size, so
      // only Little's law (depth / floor) bounds IOPS. Client link: 100 GbE = 12.5 GB/s (warning)
      // [D], 2 x 100 GbE (error) [I].
      {"ceph-rbd", "Ceph RBD volume", 0, 0, 1, 0, 12.5 * GB, 25 * GB, 100, 100,
       "IOPS <= depth / 100 us (Little's law at the network floor) [D]; no cluster cap without the pool size",
       "100 GbE client link = 12.5 GB/s [D]; 2 x 100 GbE = 25 GB/s [I]",
       "a network round trip to the primary OSD per op: floor 100 us [I]"},
      // Host page cache: memory copies. floor 0.3 us per op [I] (a 4 KiB memcpy plus a syscall is
      // ~1-2 us; the scenario's host.pagecache_us default is 1.5 us); bandwidth 100 GB/s (warning),
      // 500 GB/s (error) [I] (memory bandwidth of a large two-socket server).
      {"pagecache", "host page cache", 0, 0, 1, 0, 100 * GB, 500 * GB, 0.3, 0.3, "IOPS <= depth / 0.3 us [D]",
       "memory bandwidth <= 100 GB/s typical, 500 GB/s for any server [I]",
       "a memory copy plus a syscall: floor 0.3 us per op [I]"},
      // null: no bound.
      {"null", "null device", 0, 0, 1, 0, 0, 0, 0, 0, "no bound", "no bound", "no bound"},
  };
  return table;
}

const DeviceClass* find_class(const std::string& name) {
  for (const auto& c : classes())
    if (name == c.name) return &c;
  return nullptr;
}

std::optional<std::string> key(const Measured& m, const std::string& k) {
  const auto it = m.setup.find(k);
  if (it == m.setup.end()) return std::nullopt;
  return strip(it->second);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A number with an optional fio size suffix (k, m, g, t; KiB, MB, ...: powers of 1024, as fio
// reads them by default).
std::optional<double> number(const std::string& text) {
  const std::string t = lower(strip(text));
  if (t.empty()) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!std::isfinite(v)) return std::nullopt;
  const std::string suffix = t.substr(used);
  if (suffix.empty() || suffix == "b") return v;
  const char c = suffix[0];
  const double k = 1024.0;
  if (c == 'k') return v * k;
  if (c == 'm') return v * k * k;
  if (c == 'g') return v * k * k * k;
  if (c == 't') return v * k * k * k * k;
  return std::nullopt;
}

std::optional<double> number_key(const Measured& m, const std::string& k) {
  const auto v = key(m, k);
  return v ? number(*v) : std::nullopt;
}

// Block size of a direction: fio's bs may be "4k" or "4k,64k" (read,write); bs_write wins.
std::optional<double> block_size(const Measured& m, bool write) {
  if (write)
    if (auto bw = number_key(m, "workload.bs_write")) return bw;
  const auto bs = key(m, "workload.bs");
  if (!bs) return std::nullopt;
  const auto comma = bs->find(',');
  if (comma == std::string::npos) return number(*bs);
  return number(write ? bs->substr(comma + 1) : bs->substr(0, comma));
}

bool is_write(const Measured& m) { return m.dir == "write"; }

std::optional<bool> is_random(const Measured& m) {
  const auto rw = key(m, "workload.rw");
  if (!rw) return std::nullopt;
  const std::string r = lower(*rw);
  if (r == "randtrim" || r == "trim") return false;
  return r.rfind("rand", 0) == 0;
}

struct Depth {
  double outstanding = 1;
  bool known = true;
  std::string text;  // "numjobs 1 x iodepth 32 = 32"
};

std::string bytes_rate(double b) {
  char buf[64];
  if (b >= GB)
    std::snprintf(buf, sizeof buf, "%.2f GB/s", b / GB);
  else
    std::snprintf(buf, sizeof buf, "%.1f MB/s", b / MB);
  return buf;
}

std::string lat_text(double us) {
  char buf[64];
  if (us >= 1000)
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.3g us", us);
  return buf;
}

Depth depth_of(const Measured& m) {
  Depth d;
  const double jobs = std::max(1.0, number_key(m, "workload.numjobs").value_or(1));
  const std::string engine = lower(key(m, "workload.ioengine").value_or(""));
  const bool sync =
      engine == "sync" || engine == "psync" || engine == "vsync" || engine == "pvsync" || engine == "pvsync2" || engine == "mmap";
  const auto qd = number_key(m, "workload.iodepth");
  const auto tool = key(m, "workload.tool");
  if (sync) {
    d.outstanding = jobs;
    d.text = "numjobs " + detail::evidence_num(jobs) + " with the synchronous engine " + engine + " = " +
             detail::evidence_num(jobs) + " outstanding";
  } else if (qd) {
    d.outstanding = jobs * std::max(1.0, *qd);
    d.text = "numjobs " + detail::evidence_num(jobs) + " x iodepth " + detail::evidence_num(std::max(1.0, *qd)) + " = " +
             detail::evidence_num(d.outstanding) + " outstanding";
  } else if (tool && lower(*tool) != "fio") {
    d.known = false;
    d.outstanding = std::numeric_limits<double>::infinity();
    d.text = "depth unknown (" + *tool + "), deep-queue bound used";
  } else {
    d.outstanding = jobs;
    d.text =
        "numjobs " + detail::evidence_num(jobs) + " x iodepth 1 (fio's default) = " + detail::evidence_num(jobs) + " outstanding";
  }
  return d;
}

// What answered may not be the device.
std::optional<std::string> caching(const Measured& m) {
  if (auto direct = key(m, "workload.direct"); direct && (*direct == "0" || lower(*direct) == "false"))
    return std::string("buffered I/O (direct=0): the guest's or host's page cache answers");
  if (auto cache = key(m, "host.cache")) {
    const std::string c = lower(*cache);
    if (c != "none" && c != "directsync")
      return "host.cache=" + c + ": the host page cache " + (is_write(m) ? "absorbs writes" : "serves re-read blocks");
  }
  if (auto hit = number_key(m, "host.pagecache_hit_ratio"); hit && *hit > 0)
    return "host.pagecache_hit_ratio=" + detail::evidence_num(*hit) + ": reads are served from the host page cache";
  return std::nullopt;
}

std::string subject_of(const Measured& m) {
  std::string s = m.source;
  if (!m.job.empty()) s.append(": job '").append(m.job).append("'");
  if (!m.dir.empty()) s.append(" ").append(m.dir);
  return s;
}

// The class a Measured is judged against, and the read multiplier for md RAID1.
struct Resolved {
  const DeviceClass* cls = nullptr;
  double read_legs = 1;  // md RAID1 reads from both legs
  std::string label;     // "hdd-7200" or "md-raid1 of sata-ssd"
};

const DeviceClass* class_of_kind(const std::string& kind, const Measured& m) {
  const std::string k = lower(kind);
  if (k == "hdd") {
    const double rpm = number_key(m, "backend.rpm").value_or(7200);
    return find_class(rpm >= 14000 ? "hdd-15k" : rpm >= 9000 ? "hdd-10k" : "hdd-7200");
  }
  if (k == "krbd" || k == "rbd" || k == "ceph") return find_class("ceph-rbd");
  if (k == "ssd") return find_class("sata-ssd");
  if (k == "hdd-5400") return find_class("hdd-7200");  // slower; the 7200 bound is an upper bound
  return find_class(k);
}

std::optional<Resolved> resolve(const std::string& name, const Measured& m) {
  Resolved r;
  const std::string n = lower(name);
  if (n == "md-raid1" || n.rfind("md-raid1:", 0) == 0) {
    std::string leg = n.size() > 9 ? n.substr(9) : key(m, "backend.leg").value_or("sata-ssd");
    r.cls = class_of_kind(leg, m);
    if (!r.cls) return std::nullopt;
    r.read_legs = 2;
    r.label = std::string("md RAID1 of two ") + r.cls->what + "s (md-raid1 of " + r.cls->name + ")";
    return r;
  }
  r.cls = class_of_kind(n, m);
  if (!r.cls) return std::nullopt;
  r.label = std::string(r.cls->what) + " (" + r.cls->name + ")";
  return r;
}

// IOPS bound at `outstanding` I/Os: the class's figure, and the levels that warn and err.
struct IopsBound {
  double bound = 0, warn_at = 0, error_at = 0, hard = 0;
};

IopsBound iops_bound(const Resolved& r, const Depth& d, bool write) {
  const DeviceClass& c = *r.cls;
  const double legs = write ? 1.0 : r.read_legs;
  IopsBound b;
  if (c.qd1_iops > 0) {
    // NCQ gain: 1 at QD1, +0.3 per doubling of the queue, at most ncq_gain (2.5 at depth 32) [I].
    const double gain = d.known ? std::min(c.ncq_gain, 1.0 + 0.3 * std::log2(std::max(1.0, d.outstanding))) : c.ncq_gain;
    b.hard = c.qd1_iops_hard * gain * legs;
    if (write) {
      // Writes: the drive's write cache reorders (and short-strokes) them freely, so the
      // full-span figure is no bound; the rotational one is, with error at twice it.
      b.bound = b.warn_at = b.hard;
      b.error_at = 2 * b.hard;
    } else {
      // Reads: the full-span figure; a test file over part of the disk shortens the seeks, so
      // warn only above 1.5x it [I]; error above max(2x it, the rotational limit).
      b.bound = c.qd1_iops * gain * legs;
      b.warn_at = 1.5 * b.bound;
      b.error_at = std::max(2 * b.bound, b.hard);
    }
    return b;
  }
  double bound = std::numeric_limits<double>::infinity();
  const double floor_us = write ? c.floor_write_us : c.floor_read_us;
  if (floor_us > 0 && d.known) bound = d.outstanding * 1e6 / floor_us;  // Little's law at the floor
  if (c.max_iops > 0) bound = std::min(bound, c.max_iops);
  b.bound = b.warn_at = b.hard = bound * legs;
  b.error_at = 2 * b.bound;
  return b;
}

void physics_one(const Measured& m, const Resolved& r, std::vector<Finding>& out) {
  const DeviceClass& c = *r.cls;
  const bool write = is_write(m);
  const bool mixed = m.dir == "mixed";
  const auto random = is_random(m);
  const Depth d = depth_of(m);
  const auto cached = caching(m);
  const double legs = write ? 1.0 : r.read_legs;
  const std::string subject = subject_of(m);
  const std::string dev = r.label + (r.read_legs > 1 && !write ? " (reads from both legs: 2x a leg)" : "");

  // physics-iops: random workloads only (a sequential stream is merged and read ahead). IOPS
  // from the result, else bandwidth / bs.
  std::optional<double> iops;
  std::string iops_from;
  if (m.iops && *m.iops > 0)
    iops = m.iops;
  else if (m.bw_kib && *m.bw_kib > 0)
    if (auto bs = block_size(m, write); bs && *bs > 0) {
      iops = *m.bw_kib * 1024.0 / *bs;
      iops_from = " (bandwidth / bs)";
    }
  if (random && *random && iops) {
    IopsBound bnd = iops_bound(r, d, write);
    if (mixed) {  // a unified read+write figure: the more generous direction's bound
      const IopsBound other = iops_bound(r, d, !write);
      if (other.warn_at > bnd.warn_at) bnd = other;
    }
    if (std::isfinite(bnd.warn_at) && bnd.bound > 0 && *iops > bnd.warn_at) {
      Finding f;
      f.rule = "physics-iops";
      f.subject = subject;
      f.severity = *iops > bnd.error_at ? Severity::error : Severity::warning;
      f.evidence = detail::evidence_num(*iops) + " random IOPS" + iops_from + "; the bound for " + dev + " is ~" +
                   detail::evidence_num(bnd.bound) + " at " + d.text + " (" + detail::evidence_num(*iops / bnd.bound) +
                   "x it; warning above " + detail::evidence_num(bnd.warn_at) + ", error above " +
                   detail::evidence_num(bnd.error_at);
      if (bnd.hard > bnd.bound) f.evidence.append("; rotational limit ").append(detail::evidence_num(bnd.hard));
      f.evidence.append("). ").append(c.iops_source);
      if (c.qd1_iops > 0) {
        f.cause = std::string("page cache, the drive's own cache, or sequential access; a ") + c.what + " does about " +
                  detail::evidence_num(c.qd1_iops * legs) + " random IOPS per actuator at QD1" +
                  (f.severity == Severity::warning ? " (a short-stroked test file can come near the hard limit)" : "");
      } else {
        f.cause = std::string("more than one ") + c.what +
                  " behind the disk, a cache (page cache, controller or array cache), "
                  "or the wrong device class";
      }
      if (cached && f.severity == Severity::error) {
        f.severity = Severity::warning;
        f.cause = *cached + "; the device class bound does not apply to cache hits";
      }
      out.push_back(std::move(f));
    }
  }

  // physics-bandwidth: any workload.
  std::optional<double> bw;
  if (m.bw_kib && *m.bw_kib > 0)
    bw = *m.bw_kib * 1024.0;
  else if (m.iops && *m.iops > 0)
    if (auto bs = block_size(m, write)) bw = *m.iops * *bs;
  if (bw && c.media_bw > 0) {
    const double media = c.media_bw * legs, link = c.link_bw * legs;
    if (*bw > media) {
      Finding f;
      f.rule = "physics-bandwidth";
      f.subject = subject;
      f.severity = *bw > 1.05 * link ? Severity::error : Severity::warning;
      f.evidence = bytes_rate(*bw) +
                   (m.bw_kib ? " (" + detail::evidence_num(*m.bw_kib) + " KiB/s)" : std::string(" (IOPS x bs)")) +
                   " is above the " +
                   (f.severity == Severity::error ? "interface limit of " + dev + ", " + bytes_rate(link)
                                                  : "media rate of " + dev + ", " + bytes_rate(media)) +
                   ". " + c.bw_source;
      f.cause = f.severity == Severity::error
                    ? std::string("more than the link can carry: several devices, a cache, or a unit slip (MB vs MiB, KiB vs KB)")
                    : std::string("faster than the media: the drive's cache, several devices, or a faster device than the class");
      if (cached && f.severity == Severity::error) {
        f.severity = Severity::warning;
        f.cause = *cached;
      }
      out.push_back(std::move(f));
    }
  }

  // physics-latency-floor: random workloads only.
  const std::optional<double> lat = m.lat_mean_us ? m.lat_mean_us : m.clat_mean_us;
  const double floor_us = mixed ? std::min(c.floor_read_us, c.floor_write_us) : write ? c.floor_write_us : c.floor_read_us;
  if (random && *random && lat && *lat > 0 && floor_us > 0 && *lat < floor_us) {
    Finding f;
    f.rule = "physics-latency-floor";
    f.subject = subject;
    f.severity = cached ? Severity::warning : Severity::error;
    f.evidence = std::string("mean ") + (m.lat_mean_us ? "lat " : "clat ") + lat_text(*lat) + " is below the " +
                 (write ? "write" : "read") + " floor for " + r.label + " (" + lat_text(floor_us) + "). " + c.lat_source;
    f.cause = cached ? *cached
                     : (c.qd1_iops > 0 ? std::string("a random read on a rotating disk waits for the platter; this answer came "
                                                     "from a cache (page cache, the drive's buffer) or the device is not a disk")
                                       : std::string("faster than the device can answer: a cache answered, the unit is wrong "
                                                     "(ns vs us), or the device class is wrong"));
    out.push_back(std::move(f));
  }
}

// Workload keys that must agree for two results to be "the same workload"; absent on one side
// counts as agreeing, except rw and bs, which both must name.
const std::vector<std::string>& workload_keys() {
  static const std::vector<std::string> k = {"workload.rw",
                                             "workload.bs",
                                             "workload.bs_write",
                                             "workload.iodepth",
                                             "workload.numjobs",
                                             "workload.rwmixread",
                                             "workload.ioengine",
                                             "workload.direct",
                                             "workload.iodepth_batch_submit",
                                             "workload.iodepth_batch",
                                             "backend.kind",
                                             "backend.model"};
  return k;
}

bool same_value(const std::string& a, const std::string& b) {
  if (lower(a) == lower(b)) return true;
  const auto na = number(a), nb = number(b);
  return na && nb && *na == *nb;
}

bool same_workload(const Measured& a, const Measured& b) {
  if (a.dir != b.dir) return false;
  for (const auto& k : workload_keys()) {
    const auto va = key(a, k), vb = key(b, k);
    if (!va || !vb) {
      if (k == "workload.rw" || k == "workload.bs") return false;
      continue;
    }
    if (!same_value(*va, *vb)) return false;
  }
  return true;
}

void guest_above_host(const std::vector<Measured>& ms, std::vector<Finding>& out) {
  for (const auto& g : ms) {
    const auto gd = key(g, "guest.driver");
    if (!gd || lower(*gd) == "none") continue;
    const Measured* host = nullptr;
    bool use_iops = true;
    for (const auto& h : ms) {
      const auto hd = key(h, "guest.driver");
      if (!hd || lower(*hd) != "none" || !same_workload(g, h)) continue;
      const bool iops = g.iops && h.iops && *g.iops > 0 && *h.iops > 0;
      const bool bw = g.bw_kib && h.bw_kib && *g.bw_kib > 0 && *h.bw_kib > 0;
      if (!iops && !bw) continue;
      const double hv = iops ? *h.iops : *h.bw_kib;
      const double best = host ? (use_iops ? *host->iops : *host->bw_kib) : 0;
      if (!host || (iops == use_iops && hv > best)) {
        host = &h;
        use_iops = iops;
      }
    }
    if (!host) continue;
    const double gv = use_iops ? *g.iops : *g.bw_kib, hv = use_iops ? *host->iops : *host->bw_kib;
    if (hv <= 0 || gv <= 1.05 * hv) continue;
    Finding f;
    f.rule = "guest-above-host";
    f.subject = subject_of(g);
    const auto cached = caching(g);
    // Above 1.25x: error. Between 1.05x and 1.25x: warning, since two single runs carry their own
    // run-to-run noise (seed 003's repeated runs spread 22%), and a few percent is within it.
    f.severity = cached ? Severity::info : gv > 1.25 * hv ? Severity::error : Severity::warning;
    const std::string unit = use_iops ? " IOPS" : " KiB/s";
    f.evidence = "guest (" + *gd + ") " + detail::evidence_num(gv) + unit + " vs its host's bare metal " +
                 detail::evidence_num(hv) + unit + " (" + subject_of(*host) +
                 "): " + detail::evidence_num(100.0 * (gv / hv - 1.0)) + "% above, same workload";
    f.cause =
        cached ? *cached + ", so the guest may beat the device"
               : std::string(
                     "a VM cannot beat its own host's bare metal: the runs differ in something not recorded "
                     "(cache mode, file size, device), or one of them is mislabelled") +
                     (f.severity == Severity::warning ? "; by this little, run-to-run noise of single runs can do it: repeat both"
                                                      : "");
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<std::string> device_classes() {
  std::vector<std::string> names;
  for (const auto& c : classes()) names.emplace_back(c.name);
  // Scenario backend kinds and spellings accepted as well.
  for (const char* alias : {"hdd", "md-raid1", "krbd"}) names.emplace_back(alias);
  return names;
}

std::string physics_class(const Measured& m, const std::string& device_class) {
  std::optional<Resolved> r;
  if (!device_class.empty())
    r = resolve(device_class, m);
  else if (auto kind = key(m, "backend.kind"))
    r = resolve(*kind, m);
  return r && r->cls ? r->label : std::string();
}

std::vector<Finding> check_physics(const std::vector<Measured>& ms, const std::string& device_class) {
  std::vector<Finding> out;
  if (!device_class.empty()) {
    // Validate once, against a Measured with no setup (md-raid1 then takes the scenario's
    // default leg, sata-ssd, unless spelled md-raid1:<leg>).
    if (!resolve(device_class, Measured{})) {
      std::string list;
      for (const auto& n : device_classes()) list.append(list.empty() ? "" : ", ").append(n);
      throw std::invalid_argument("unknown device class '" + device_class + "' (known: " + list + ", md-raid1:<leg>)");
    }
  }
  for (const auto& m : ms) {
    std::optional<Resolved> r;
    if (!device_class.empty())
      r = resolve(device_class, m);
    else if (auto kind = key(m, "backend.kind"))
      r = resolve(*kind, m);
    if (!r || !r->cls) continue;  // no class known: no physics to check
    physics_one(m, *r, out);
  }
  guest_above_host(ms, out);
  return out;
}

}  // namespace vqsim::check
