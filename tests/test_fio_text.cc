// fio normal text (2.x and 3.x layouts, also quoted in e-mails) and terse (v2-v5) readers.
//
// Expected values are read by eye from the fixture files under tests/data/fio/, never produced by
// the code under test:
//   mixed.*.out          fio 3.33, mixed.fio (ioengine=null, numjobs=2), one run per format
//   mixed.normal-terse.out  one run of `fio --output-format=normal,terse mixed.fio`: the same
//                        numbers in both formats, so the two readers must agree within rounding
//   status.normal.out / status.terse.out  `fio --status-interval=1 --output-format=… status.fio`
//   seed000-email.txt    fio 2.1.11 in a Qemu-devel mail (virtio-scsi vs virtio-blk), quoted with
//                        ">> " and wrapped by the mail client
//   seed002-email.txt    fio 2.1.11 in a ceph-users mail (two Proxmox runs), with U+00A0 spaces
//   seed000-post.txt     the two seed 000 outputs of calibration/data/seeds/ as sent in one post
//                        and quoted in the reply ("> ", not wrapped), with the prose between
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/fio/parse.h"
#include "calibration/fio/result.h"
#include "calibration/fio/writer.h"

using namespace vqsim::fio;

namespace {

std::string fixture(const std::string& name) {
  std::string path = VQSIM_SOURCE_DIR;
  path.append("/tests/data/fio/").append(name);
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<FioResult> normal(const std::string& name) { return parse_normal_text(fixture(name), name); }
std::vector<FioResult> terse(const std::string& name) { return parse_terse(fixture(name), name); }

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

// The percentile fio printed for p, or NaN.
double pct(const LatencyStats& s, double p) {
  for (auto [q, v] : s.percentiles)
    if (std::abs(q - p) < 1e-9) return v;
  return std::nan("");
}

double share(const PercentMap& m, const std::string& key) {
  for (const auto& [k, v] : m)
    if (k == key) return v;
  return std::nan("");
}

bool has_note(const FioResult& r, const std::string& part) {
  for (const std::string& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// The 1-based line a ParseError names, or -1 when nothing was thrown.
template <class F>
int error_line(F&& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.line();
  }
  return -1;
}

std::vector<double> default_percent_list() {
  return {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
}

}  // namespace

TEST_CASE("fio 3.x normal text, one entry per numjobs clone") {
  auto docs = normal("mixed.normal.out");
  REQUIRE(docs.size() == 1);
  const FioResult& r = docs[0];
  CHECK(r.format == Format::normal);
  CHECK(r.fio_version == "fio-3.33");
  CHECK(has_note(r, "fio 3.x layout"));
  CHECK_FALSE(has_note(r, "e-mail"));
  CHECK(r.disks.empty());
  REQUIRE(r.jobs.size() == 2);

  const JobResult& j = r.jobs[0];
  CHECK(j.name == "randrw");
  CHECK(j.groupid == 0);
  CHECK(j.jobs == 1);
  CHECK(j.error == 0);
  CHECK_FALSE(j.is_aggregate);
  CHECK(j.options.at("rw") == "randrw");
  CHECK(j.options.at("ioengine") == "null");
  CHECK(j.options.at("iodepth") == "8");
  CHECK(j.options.at("bs") == "(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B");

  // read: IOPS=2565k, BW=9.78GiB/s (10.5GB/s)(9.79GiB/1001msec)
  CHECK(*j.read.iops == doctest::Approx(2565e3));
  CHECK(*j.read.bw_bytes_per_s == doctest::Approx(9.78 * kGiB));
  CHECK(static_cast<double>(*j.read.io_bytes) == doctest::Approx(9.79 * kGiB).epsilon(1e-9));
  CHECK(*j.read.runtime_ms == 1001);
  CHECK(*j.read.total_ios == 2567383);
  CHECK(*j.read.short_ios == 0);
  CHECK(*j.read.drop_ios == 0);
  // slat (nsec): min=10, max=133127, avg=22.77, stdev=210.31
  CHECK(*j.read.slat.min_ns == 10);
  CHECK(*j.read.slat.max_ns == 133127);
  CHECK(*j.read.slat.mean_ns == doctest::Approx(22.77));
  CHECK(*j.read.slat.stddev_ns == doctest::Approx(210.31));
  // clat (nsec): min=130, max=4042.9k, avg=174.07, stdev=2952.12
  CHECK(*j.read.clat.min_ns == 130);
  CHECK(*j.read.clat.max_ns == doctest::Approx(4042.9e3));
  CHECK(*j.read.clat.mean_ns == doctest::Approx(174.07));
  CHECK(*j.read.lat.mean_ns == doctest::Approx(196.84));
  CHECK(j.read.lat.percentiles.empty());
  REQUIRE(j.read.clat.percentiles.size() == 17);
  std::vector<double> ps = default_percent_list();
  for (std::size_t i = 0; i < ps.size(); ++i) CHECK(j.read.clat.percentiles[i].first == doctest::Approx(ps[i]));
  CHECK(pct(j.read.clat, 1) == 131);
  CHECK(pct(j.read.clat, 50) == 161);
  CHECK(pct(j.read.clat, 99.95) == 2128);
  CHECK(pct(j.read.clat, 99.99) == 19840);
  // bw (  MiB/s): min= 9824, max= 9824, per=49.15%, avg=9824.87, stdev= 0.00, samples=1
  CHECK(*j.read.bw_min_bytes_per_s == doctest::Approx(9824 * kMiB));
  CHECK(*j.read.bw_mean_bytes_per_s == doctest::Approx(9824.87 * kMiB));
  CHECK(*j.read.bw_agg_percent == doctest::Approx(49.15));
  CHECK(*j.read.bw_samples == 1);
  CHECK(*j.read.iops_min == 2515167);
  CHECK(*j.read.iops_samples == 1);

  // write: IOPS=1100k, BW=4295MiB/s (4504MB/s)(4300MiB/1001msec); 0 zone resets
  CHECK(*j.write.iops == doctest::Approx(1100e3));
  CHECK(*j.write.bw_bytes_per_s == doctest::Approx(4295 * kMiB));
  CHECK(*j.write.io_bytes == static_cast<std::uint64_t>(4300 * kMiB));
  CHECK(*j.write.total_ios == 1100742);
  CHECK(pct(j.write.clat, 99.9) == 668);
  CHECK(pct(j.write.clat, 99.99) == 20096);
  CHECK_FALSE(j.trim.active());
  CHECK_FALSE(j.mixed.has_value());

  // lat (nsec)   : 250=97.29%, …  lat (usec)   : 2=0.02%, …  lat (msec)   : 2=0.01%, 10=0.01%
  CHECK(j.latency_buckets_ns.size() == 14);
  CHECK(j.latency_buckets_ns.front() == std::make_pair(std::string("250"), 97.29));
  CHECK(share(j.latency_buckets_ns, "2000") == doctest::Approx(0.02));      // 2 usec
  CHECK(share(j.latency_buckets_ns, "1000000") == doctest::Approx(0.01));   // 1000 usec
  CHECK(share(j.latency_buckets_ns, "10000000") == doctest::Approx(0.01));  // 10 msec
  CHECK(*j.usr_cpu_percent == doctest::Approx(98.40));
  CHECK(*j.sys_cpu_percent == 0);
  CHECK(*j.ctx == 107);
  CHECK(*j.majf == 0);
  CHECK(*j.minf == 10);
  REQUIRE(j.iodepth_level.size() == 7);
  CHECK(j.iodepth_level[0] == std::make_pair(std::string("1"), 100.0));
  CHECK(j.iodepth_level[6] == std::make_pair(std::string(">=64"), 0.0));
  CHECK(share(j.iodepth_submit, "4") == 100);
  CHECK(share(j.iodepth_complete, "4") == 100);

  const JobResult& k = r.jobs[1];
  CHECK(*k.read.iops == doctest::Approx(2552e3));
  CHECK(*k.read.bw_bytes_per_s == doctest::Approx(9971 * kMiB));
  CHECK(*k.read.total_ios == 2555032);
  CHECK(pct(k.read.clat, 99.99) == 4048);
  CHECK(*k.write.clat.max_ns == doctest::Approx(4054.6e3));
  CHECK(pct(k.write.clat, 99.99) == 4384);
  CHECK(*k.read.bw_max_bytes_per_s == doctest::Approx(10204 * kMiB));
  CHECK(*k.read.bw_stddev_bytes_per_s == doctest::Approx(310.82 * kMiB));
  CHECK(*k.read.iops_stddev == doctest::Approx(79569.31));
  CHECK(*k.usr_cpu_percent == doctest::Approx(98.90));
  CHECK(*k.sys_cpu_percent == doctest::Approx(0.30));
  CHECK(*k.ctx == 35);
}

TEST_CASE("fio 3.x normal text with group_reporting is one aggregate entry") {
  auto docs = normal("mixed.group.normal.out");
  REQUIRE(docs.size() == 1);
  REQUIRE(docs[0].jobs.size() == 1);
  const JobResult& j = docs[0].jobs[0];
  CHECK(j.jobs == 2);
  CHECK(j.is_aggregate);
  CHECK(*j.read.iops == doctest::Approx(5345e3));
  CHECK(*j.read.bw_bytes_per_s == doctest::Approx(20.4 * kGiB));
  CHECK(*j.read.total_ios == 5350541);
  CHECK(*j.write.iops == doctest::Approx(2291e3));
  CHECK(*j.write.bw_bytes_per_s == doctest::Approx(8949 * kMiB));
  CHECK(*j.write.total_ios == 2293322);
  CHECK(*j.read.clat.max_ns == doctest::Approx(1037.3e3));
  CHECK(*j.write.slat.max_ns == doctest::Approx(2854.1e3));
  CHECK(*j.write.lat.stddev_ns == doctest::Approx(2033.63));
  CHECK(pct(j.read.clat, 99.99) == 2576);
  CHECK(pct(j.write.clat, 99.99) == 2224);
  CHECK(*j.read.bw_agg_percent == 100);
  CHECK(*j.read.bw_samples == 2);
  CHECK(*j.usr_cpu_percent == doctest::Approx(99.35));
  CHECK(*j.ctx == 140);
  CHECK(*j.minf == 22);
  // The "Run status group" totals are not a job.
  CHECK(has_note(docs[0], "READ: bw=20.4GiB/s"));
}

TEST_CASE("normal text followed by other output: the JSON part is skipped, disk stats are read") {
  auto docs = normal("libaio.normal-json.out");
  REQUIRE(docs.size() == 1);
  REQUIRE(docs[0].jobs.size() == 1);
  const JobResult& j = docs[0].jobs[0];
  CHECK(j.name == "aio");
  CHECK(j.options.at("ioengine") == "libaio");
  CHECK(*j.read.iops == doctest::Approx(44.8e3));
  CHECK(*j.read.bw_bytes_per_s == doctest::Approx(175 * kMiB));
  CHECK(*j.read.total_ios == 44877);
  CHECK_FALSE(j.write.active());
  // slat (nsec) but clat (usec): the unit is per line.
  CHECK(*j.read.slat.mean_ns == doctest::Approx(6992.32));
  CHECK(*j.read.clat.min_ns == 23000);
  CHECK(*j.read.clat.mean_ns == doctest::Approx(81800));
  CHECK(*j.read.lat.max_ns == 2286000);
  CHECK(pct(j.read.clat, 1) == 53000);
  CHECK(pct(j.read.clat, 99.99) == 865000);
  CHECK(*j.read.bw_min_bytes_per_s == doctest::Approx(206147 * kKiB));
  CHECK(share(j.latency_buckets_ns, "50000") == doctest::Approx(0.17));
  CHECK(share(j.latency_buckets_ns, "4000000") == doctest::Approx(0.01));
  CHECK(share(j.iodepth_level, "4") == 100);
  CHECK(*j.sys_cpu_percent == doctest::Approx(42.10));
  REQUIRE(docs[0].disks.size() == 1);
  const DiskStats& d = docs[0].disks[0];
  CHECK(d.name == "vda");
  CHECK(*d.read_ios == 36871);
  CHECK(*d.write_ios == 0);
  CHECK(*d.read_merges == 0);
  CHECK(*d.read_ticks_ms == 2120);
  CHECK(*d.in_queue_ms == 2120);
  CHECK(*d.util_percent == doctest::Approx(65.30));
}

TEST_CASE("terse v2..v5 field layouts") {
  SUBCASE("v3: no TRIM block, fio version in field 2") {
    auto docs = terse("mixed.terse3.out");
    REQUIRE(docs.size() == 1);
    const FioResult& r = docs[0];
    CHECK(r.format == Format::terse);
    CHECK(r.terse_version == 3);
    CHECK(r.fio_version == "fio-3.33");
    REQUIRE(r.jobs.size() == 2);
    const JobResult& j = r.jobs[0];
    CHECK(j.name == "randrw");
    CHECK(j.groupid == 0);
    CHECK(j.error == 0);
    // 10925068;10914153;2728538;1001 (KiB, KiB/s, IOPS, ms)
    CHECK(*j.read.io_bytes == 10925068ULL * 1024);
    CHECK(*j.read.bw_bytes_per_s == 10914153.0 * kKiB);
    CHECK(*j.read.iops == 2728538);
    CHECK(*j.read.runtime_ms == 1001);
    // slat 0;52;0.021457;0.064153 and clat 0;1544;0.162995;1.182889 (usec)
    CHECK(*j.read.slat.max_ns == 52000);
    CHECK(*j.read.slat.mean_ns == doctest::Approx(21.457));
    CHECK(*j.read.clat.max_ns == 1544000);
    CHECK(*j.read.clat.mean_ns == doctest::Approx(162.995));
    CHECK(*j.read.clat.stddev_ns == doctest::Approx(1182.889));
    // 17 percentiles; the three "0%=0" slots are dropped.
    REQUIRE(j.read.clat.percentiles.size() == 17);
    CHECK(pct(j.read.clat, 1) == 0);
    CHECK(pct(j.read.clat, 99.99) == 2000);
    CHECK(*j.read.lat.mean_ns == doctest::Approx(184.452));
    CHECK(*j.read.bw_min_bytes_per_s == 10925880.0 * kKiB);
    CHECK(*j.read.bw_agg_percent == doctest::Approx(50.305870));
    CHECK_FALSE(j.read.bw_samples.has_value());
    CHECK(*j.write.iops == 1169464);
    CHECK(*j.write.clat.max_ns == 831000);
    CHECK_FALSE(j.trim.active());
    CHECK(*j.usr_cpu_percent == doctest::Approx(98.7));
    CHECK(*j.sys_cpu_percent == doctest::Approx(0.3));
    CHECK(*j.ctx == 33);
    CHECK(*j.minf == 12);
    CHECK(j.iodepth_level.size() == 7);
    CHECK(share(j.iodepth_level, "1") == 100);
    CHECK(share(j.iodepth_level, ">=64") == 0);
    REQUIRE(j.latency_buckets_ns.size() == 22);
    CHECK(j.latency_buckets_ns.front() == std::make_pair(std::string("2000"), 99.99));
    CHECK(share(j.latency_buckets_ns, "1000000") == doctest::Approx(0.01));  // 1000 usec
    CHECK(share(j.latency_buckets_ns, "2000000") == doctest::Approx(0.01));  // 2 msec
    CHECK(j.latency_buckets_ns.back().first == ">=2000000000");
    CHECK(*r.jobs[1].read.iops == 2701185);
    CHECK(*r.jobs[1].ctx == 107);
  }
  SUBCASE("v2: no version fields; fio 3 writes a TRIM block") {
    auto docs = terse("mixed.terse2.out");
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].terse_version == 2);
    CHECK(docs[0].fio_version.empty());
    REQUIRE(docs[0].jobs.size() == 2);
    const JobResult& j = docs[0].jobs[0];
    CHECK(*j.read.iops == 2615201);
    CHECK(*j.write.iops == 1121053);
    CHECK(*j.write.clat.max_ns == 2092000);
    CHECK(*j.trim.iops == 0);
    CHECK_FALSE(j.trim.active());
    CHECK(j.trim.clat.empty());
    CHECK(*j.usr_cpu_percent == doctest::Approx(99.1));
    CHECK(*j.ctx == 16);
    CHECK(*docs[0].jobs[1].read.iops == 2535857);
  }
  SUBCASE("v4: TRIM block") {
    auto docs = terse("mixed.terse4.out");
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].terse_version == 4);
    REQUIRE(docs[0].jobs.size() == 2);
    const JobResult& j = docs[0].jobs[0];
    CHECK(*j.read.iops == 2666051);
    CHECK(*j.write.iops == 1142801);
    CHECK(*j.trim.iops == 0);
    CHECK(*j.usr_cpu_percent == doctest::Approx(99.2));
    CHECK(*docs[0].jobs[1].sys_cpu_percent == doctest::Approx(0.3));
  }
  SUBCASE("v5: bw samples and IOPS statistics per direction") {
    auto docs = terse("mixed.terse5.out");
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].terse_version == 5);
    REQUIRE(docs[0].jobs.size() == 2);
    const JobResult& j = docs[0].jobs[0];
    CHECK(*j.read.iops == 2656268);
    CHECK(*j.read.slat.max_ns == 1590000);
    CHECK(*j.read.bw_samples == 1);
    CHECK(*j.read.iops_min == 2645244);
    CHECK(*j.read.iops_mean == 2645244);
    CHECK(*j.read.iops_samples == 1);
    CHECK(*j.write.iops == 1138678);
    CHECK(*j.write.iops_max == 1134472);
    CHECK_FALSE(j.trim.iops_samples.has_value());
    CHECK(*j.ctx == 102);
    CHECK(*docs[0].jobs[1].write.iops == 975963);
  }
}

TEST_CASE("the repository's terse and normal samples are the same workload") {
  // Separate runs of mixed.fio, so only the workload's shape must agree: rwmixread=70, two clones.
  auto check = [](const std::vector<FioResult>& docs, std::size_t jobs) {
    REQUIRE(docs.size() == 1);
    REQUIRE(docs[0].jobs.size() == jobs);
    for (const JobResult& j : docs[0].jobs) {
      double read_share = *j.read.iops / (*j.read.iops + *j.write.iops);
      CHECK(read_share == doctest::Approx(0.70).epsilon(0.03));
      CHECK(j.name == "randrw");
    }
  };
  check(normal("mixed.normal.out"), 2);
  check(normal("mixed.group.normal.out"), 1);
  for (const char* f : {"mixed.terse2.out", "mixed.terse3.out", "mixed.terse4.out", "mixed.terse5.out"}) check(terse(f), 2);
}

TEST_CASE("one run printed as normal text and terse: both readers agree within fio's rounding") {
  // `fio --output-format=normal,terse mixed.fio` prints each job in both formats.
  const std::string text = fixture("mixed.normal-terse.out");
  auto n = parse_normal_text(text, "mixed.normal-terse.out");
  auto t = parse_terse(text, "mixed.normal-terse.out");
  REQUIRE(n.size() == 1);
  REQUIRE(t.size() == 1);
  REQUIRE(n[0].jobs.size() == 2);
  REQUIRE(t[0].jobs.size() == 2);
  CHECK(t[0].terse_version == 3);
  CHECK(n[0].fio_version == t[0].fio_version);
  for (std::size_t i = 0; i < 2; ++i) {
    const JobResult& a = n[0].jobs[i];
    const JobResult& b = t[0].jobs[i];
    CAPTURE(i);
    for (auto dir : {&JobResult::read, &JobResult::write}) {
      const DirectionStats& x = a.*dir;
      const DirectionStats& y = b.*dir;
      // Normal text: IOPS to 4 significant figures ("2501k"); terse: the integer.
      CHECK(*x.iops == doctest::Approx(*y.iops).epsilon(5e-4));
      CHECK(*x.bw_bytes_per_s == doctest::Approx(*y.bw_bytes_per_s).epsilon(5e-4));
      CHECK(*x.runtime_ms == *y.runtime_ms);
      // Latency means: normal "avg=175.69" (nsec, 2 decimals); terse "0.175688" (usec, 6 decimals).
      CHECK(std::abs(*x.clat.mean_ns - *y.clat.mean_ns) <= 0.006);
      CHECK(std::abs(*x.slat.mean_ns - *y.slat.mean_ns) <= 0.006);
      CHECK(std::abs(*x.lat.mean_ns - *y.lat.mean_ns) <= 0.006);
      // Maxima: normal "3667.2k" nsec (5 significant figures); terse truncated to whole usec.
      CHECK(std::abs(*x.clat.max_ns - *y.clat.max_ns) <= 1000);
      // Percentiles: normal exact nsec, terse truncated to whole usec.
      REQUIRE(x.clat.percentiles.size() == y.clat.percentiles.size());
      for (std::size_t k = 0; k < x.clat.percentiles.size(); ++k) {
        CHECK(x.clat.percentiles[k].first == doctest::Approx(y.clat.percentiles[k].first));
        CHECK(y.clat.percentiles[k].second <= x.clat.percentiles[k].second);
        CHECK(x.clat.percentiles[k].second < y.clat.percentiles[k].second + 1000);
      }
      CHECK(*x.bw_agg_percent == doctest::Approx(*y.bw_agg_percent).epsilon(1e-4));
    }
    CHECK(*a.usr_cpu_percent == doctest::Approx(*b.usr_cpu_percent));
    CHECK(*a.sys_cpu_percent == doctest::Approx(*b.sys_cpu_percent));
    CHECK(*a.ctx == *b.ctx);
    CHECK(*a.majf == *b.majf);
    CHECK(*a.minf == *b.minf);
    CHECK(a.iodepth_level == b.iodepth_level);
    // Latency buckets above 2 usec are the same shares; normal text omits the zero ones.
    for (const auto& [key, value] : b.latency_buckets_ns) {
      if (key == "2000") continue;  // terse folds the nsec buckets into its first bucket
      double text_share = share(a.latency_buckets_ns, key);
      CHECK((std::isnan(text_share) ? 0.0 : text_share) == doctest::Approx(value));
    }
  }
}

TEST_CASE("--status-interval files hold one document per report") {
  auto n = normal("status.normal.out");
  auto t = terse("status.terse.out");
  REQUIRE(n.size() == 4);
  REQUIRE(t.size() == 4);
  // Per report the two clones (same name, same group) are two jobs; run times grow report by
  // report, and the last one is the final result.
  const double normal_runtime[] = {897, 1897, 2897, 3001};
  const double terse_runtime[] = {896, 1897, 2896, 3001};
  for (std::size_t d = 0; d < 4; ++d) {
    CAPTURE(d);
    REQUIRE(n[d].jobs.size() == 2);
    REQUIRE(t[d].jobs.size() == 2);
    CHECK(*n[d].jobs[0].read.runtime_ms == normal_runtime[d]);
    CHECK(*t[d].jobs[0].read.runtime_ms == terse_runtime[d]);
    CHECK(*t[d].jobs[1].read.runtime_ms == terse_runtime[d]);
  }
  CHECK(*n[3].jobs[0].read.iops == doctest::Approx(1833e3));
  CHECK(*n[3].jobs[1].read.total_ios == 6038846);
  CHECK(*t[0].jobs[0].read.io_bytes == 6228612ULL * 1024);
  CHECK(*t[3].jobs[1].read.io_bytes == 24917212ULL * 1024);
}

TEST_CASE("seed 000: fio 2.1.11 in a quoted, wrapped e-mail (virtio-scsi vs virtio-blk)") {
  auto docs = normal("seed000-email.txt");
  REQUIRE(docs.size() == 2);  // two runs pasted into one mail
  for (const FioResult& r : docs) {
    CHECK(r.fio_version == "fio-2.1.11");
    CHECK(has_note(r, "fio 2.x layout"));
    CHECK(has_note(r, "e-mail quoting removed"));
    REQUIRE(r.jobs.size() == 1);
    const JobResult& j = r.jobs[0];
    CHECK(j.name == "readtest");
    CHECK(j.jobs == 1);
    // "readtest: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio," + wrapped "iodepth=32"
    CHECK(j.options.at("rw") == "randrw");
    CHECK(j.options.at("bs") == "4K-4K/4K-4K/4K-4K");
    CHECK(j.options.at("ioengine") == "libaio");
    CHECK(j.options.at("iodepth") == "32");
    CHECK(*j.read.total_ios == 1310044);
    CHECK(*j.write.total_ios == 1309348);
    CHECK(*j.trim.total_ios == 0);
    CHECK(*j.read.short_ios == 0);
    CHECK(static_cast<double>(*j.read.io_bytes) == doctest::Approx(5117.4 * kMiB).epsilon(1e-9));
    CHECK(static_cast<double>(*j.write.io_bytes) == doctest::Approx(5114.7 * kMiB).epsilon(1e-9));
    // IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=0.1%, 32=100.0%,
    // >>> =64=0.0%            <- the mail client's wrap ate the '>' of ">=64"
    const PercentMap depths = {{"1", 0.1}, {"2", 0.1}, {"4", 0.1}, {"8", 0.1}, {"16", 0.1}, {"32", 100.0}, {">=64", 0.0}};
    CHECK(j.iodepth_level == depths);
    const PercentMap submit = {{"0", 0.0}, {"4", 100.0}, {"8", 0.0}, {"16", 0.0}, {"32", 0.0}, {"64", 0.0}, {">=64", 0.0}};
    CHECK(j.iodepth_submit == submit);
    const PercentMap complete = {{"0", 0.0}, {"4", 100.0}, {"8", 0.0}, {"16", 0.0}, {"32", 0.1}, {"64", 0.0}, {">=64", 0.0}};
    CHECK(j.iodepth_complete == complete);
    CHECK(*j.majf == 0);
    CHECK(*j.minf == 7);
    REQUIRE(r.disks.size() == 1);
  }

  SUBCASE("virtio-scsi") {
    const JobResult& j = docs[0].jobs[0];
    //    read : io=5117.4MB, bw=125830KB/s, iops=31457, runt= 41645msec
    CHECK(*j.read.iops == 31457);
    CHECK(*j.read.bw_bytes_per_s == 125830 * kKiB);
    CHECK(*j.read.runtime_ms == 41645);
    CHECK(*j.write.iops == 31440);
    CHECK(*j.write.bw_bytes_per_s == 125763 * kKiB);
    //      clat (usec): min=104, max=16667, avg=484.09, stdev=121.96
    CHECK(*j.read.clat.min_ns == 104000);
    CHECK(*j.read.clat.max_ns == 16667000);
    CHECK(*j.read.clat.mean_ns == doctest::Approx(484090));
    CHECK(*j.read.slat.mean_ns == doctest::Approx(11450));
    CHECK(*j.write.lat.mean_ns == doctest::Approx(517450));
    const std::vector<double> read_us = {302, 346, 374, 406, 426, 446, 462, 482, 506, 540, 596, 732, 948, 996, 1176, 1240, 1384};
    const std::vector<double> write_us = {334, 370, 394, 426, 446,  462,  478,  498, 524,
                                          556, 628, 756, 988, 1064, 1288, 1368, 2224};
    std::vector<double> ps = default_percent_list();
    REQUIRE(j.read.clat.percentiles.size() == 17);
    REQUIRE(j.write.clat.percentiles.size() == 17);
    for (std::size_t i = 0; i < 17; ++i) {
      CHECK(j.read.clat.percentiles[i] == std::make_pair(ps[i], read_us[i] * 1000));
      CHECK(j.write.clat.percentiles[i] == std::make_pair(ps[i], write_us[i] * 1000));
    }
    //      bw (KB  /s): min=67392, max=135216, per=99.99%, avg=125813.01,
    // >> stdev=12524.05
    CHECK(*j.read.bw_min_bytes_per_s == 67392 * kKiB);
    CHECK(*j.read.bw_mean_bytes_per_s == doctest::Approx(125813.01 * kKiB));
    CHECK(*j.read.bw_stddev_bytes_per_s == doctest::Approx(12524.05 * kKiB));
    CHECK(*j.read.bw_agg_percent == doctest::Approx(99.99));
    CHECK_FALSE(j.read.bw_samples.has_value());
    CHECK_FALSE(j.read.iops_mean.has_value());  // fio 2.1 printed no iops line
    CHECK(*j.usr_cpu_percent == doctest::Approx(18.03));
    CHECK(*j.sys_cpu_percent == doctest::Approx(76.42));
    CHECK(*j.ctx == 26617);
    const PercentMap buckets = {{"250000", 0.05},  {"500000", 64.27}, {"750000", 30.80},  {"1000000", 4.20},
                                {"2000000", 0.67}, {"4000000", 0.01}, {"10000000", 0.01}, {"20000000", 0.01}};
    CHECK(j.latency_buckets_ns == buckets);
    //    sda: ios=1302885/1302192, merge=55/0, ticks=281040/321660,
    // >> in_queue=601264, util=99.29%
    const DiskStats& d = docs[0].disks[0];
    CHECK(d.name == "sda");
    CHECK(*d.read_ios == 1302885);
    CHECK(*d.write_ios == 1302192);
    CHECK(*d.read_merges == 55);
    CHECK(*d.write_ticks_ms == 321660);
    CHECK(*d.in_queue_ms == 601264);
    CHECK(*d.util_percent == doctest::Approx(99.29));
  }
  SUBCASE("virtio-blk") {
    const JobResult& j = docs[1].jobs[0];
    CHECK(*j.read.iops == 37051);
    CHECK(*j.write.iops == 37032);
    CHECK(*j.read.bw_bytes_per_s == 148208 * kKiB);
    CHECK(*j.read.runtime_ms == 35357);
    CHECK(*j.read.slat.mean_ns == doctest::Approx(7270));  // "avg= 7.27"
    CHECK(*j.read.clat.mean_ns == doctest::Approx(382300));
    CHECK(*j.write.clat.mean_ns == doctest::Approx(461920));
    CHECK(pct(j.read.clat, 1) == 215000);
    CHECK(pct(j.read.clat, 50) == 358000);
    CHECK(pct(j.read.clat, 99) == 756000);
    CHECK(pct(j.read.clat, 99.99) == 2256000);
    CHECK(pct(j.write.clat, 50) == 438000);
    CHECK(pct(j.write.clat, 99.9) == 1336000);
    CHECK(pct(j.write.clat, 99.99) == 3408000);
    CHECK(*j.write.bw_stddev_bytes_per_s == doctest::Approx(11824.30 * kKiB));
    CHECK(*j.usr_cpu_percent == doctest::Approx(27.92));
    CHECK(*j.sys_cpu_percent == doctest::Approx(55.44));
    CHECK(*j.ctx == 91283);
    CHECK(share(j.latency_buckets_ns, "500000") == doctest::Approx(77.22));
    const DiskStats& d = docs[1].disks[0];
    CHECK(d.name == "vdb");
    CHECK(*d.read_ios == 1302512);
    CHECK(*d.in_queue_ms == 701380);
    CHECK(*d.util_percent == doctest::Approx(99.51));
  }
}

TEST_CASE("issue 17, item 8: a mail post with two fio outputs, both quoted, holds two runs") {
  // seed000-post.txt: the two seed 000 outputs (calibration/data/seeds/000-virtio-scsi.fio.txt,
  // then 000-virtio-blk.fio.txt) quoted with "> " in a reply, with the post's prose around and
  // between them. `vqsim import` returned only the second job: the reports were taken for
  // --status-interval reports of one run, of which the last is final.
  const ParsedFile f = parse_fio_output(fixture("seed000-post.txt"), "seed000-post.txt");
  REQUIRE(f.documents.size() == 2);
  CHECK(f.run_count() == 2);
  CHECK(f.documents[0].run == 0);
  CHECK(f.documents[1].run == 1);
  CHECK(f.detected == "fio-2.1.11 normal text (fio 2.x layout), 2 documents (2 runs, one after the other), quoted e-mail");
  const std::vector<const FioResult*> runs = f.final_results();
  REQUIRE(runs.size() == 2);
  REQUIRE(runs[0]->jobs.size() == 1);
  REQUIRE(runs[1]->jobs.size() == 1);
  //    read : io=5117.4MB, bw=125830KB/s, iops=31457, runt= 41645msec   (virtio-scsi, pid=707, sda)
  //    read : io=5117.4MB, bw=148208KB/s, iops=37051, runt= 35357msec   (virtio-blk, pid=810, vdb)
  CHECK(*runs[0]->jobs[0].read.iops == 31457);
  CHECK(*runs[0]->jobs[0].write.iops == 31440);
  CHECK(*runs[1]->jobs[0].read.iops == 37051);
  CHECK(*runs[1]->jobs[0].write.iops == 37032);
  REQUIRE(runs[0]->disks.size() == 1);
  REQUIRE(runs[1]->disks.size() == 1);
  CHECK(runs[0]->disks[0].name == "sda");
  CHECK(runs[1]->disks[0].name == "vdb");
  CHECK(runs[1]->jobs[0].options.at("iodepth") == "32");
  // vqsim's normalized JSON: one object per run.
  CHECK(to_normalized_json(f, 0)["jobs"][0]["read"]["iops"] == 31457.0);
  CHECK(to_normalized_json(f, 0)["run"] == 1);
  CHECK(to_normalized_json(f, 1)["jobs"][0]["read"]["iops"] == 37051.0);
  CHECK(to_normalized_json(f, 1)["runs"] == 2);
  CHECK(to_normalized_json(f, 1)["documents"] == 1);

  // The older fixture (the reply as the archive shows it, wrapped lines) gives the same two runs.
  const ParsedFile wrapped = parse_fio_output(fixture("seed000-email.txt"), "seed000-email.txt");
  CHECK(wrapped.run_count() == 2);

  // Without fio's start-up lines, a report whose pids are all new is another run; a
  // --status-interval file repeats its pids and stays one run of several reports.
  const std::string text = fixture("seed000-post.txt");
  std::string bare;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("(g=0)") == std::string::npos && line.find("fio-2.1.11") == std::string::npos) bare += line + "\n";
  CHECK(parse_fio_output(bare, "bare").run_count() == 2);
  const ParsedFile status = parse_fio_output(fixture("status.normal.out"), "status.normal.out");
  CHECK(status.documents.size() == 4);
  CHECK(status.run_count() == 1);
  CHECK(status.final_results().size() == 1);
  CHECK(status.detected.find("(status-interval)") != std::string::npos);
}

TEST_CASE("seed 002: fio 2.1.11 with group_reporting, msec units and non-breaking spaces") {
  auto docs = normal("seed002-email.txt");
  REQUIRE(docs.size() == 2);  // Proxmox VE 3.x run, then 4.x run
  for (const FioResult& r : docs) {
    CHECK(r.fio_version == "fio-2.1.11");
    REQUIRE(r.jobs.size() == 1);
    const JobResult& j = r.jobs[0];
    CHECK(j.name == "benchmark");
    CHECK(j.jobs == 4);
    CHECK(j.is_aggregate);
    CHECK(j.options.at("rw") == "randwrite");
    CHECK(j.options.at("iodepth") == "128");
    CHECK_FALSE(j.read.active());
    CHECK(*j.write.total_ios == 4194304);
    const PercentMap depths = {{"1", 0.1}, {"2", 0.1}, {"4", 0.1}, {"8", 0.1}, {"16", 0.1}, {"32", 0.1}, {">=64", 100.0}};
    CHECK(j.iodepth_level == depths);
    CHECK(share(j.iodepth_submit, "4") == 100);
    CHECK(share(j.iodepth_complete, ">=64") == doctest::Approx(0.1));
    REQUIRE(r.disks.size() == 2);
    CHECK(r.disks[0].name == "dm-0");
    CHECK(r.disks[1].name == "vda");
  }
  SUBCASE("Proxmox VE 3.4, qemu 2.2.1, cache=writethrough") {
    const JobResult& j = docs[0].jobs[0];
    CHECK(*j.write.iops == 5070);
    CHECK(*j.write.bw_bytes_per_s == 20282 * kKiB);
    CHECK(*j.write.io_bytes == static_cast<std::uint64_t>(16384 * kMiB));
    CHECK(*j.write.runtime_ms == 827178);
    CHECK(*j.write.slat.max_ns == doctest::Approx(2531.7e6));  // "max=2531.7K" usec
    CHECK(*j.write.clat.mean_ns == doctest::Approx(99980.14e3));
    CHECK(*j.write.lat.min_ns == 1e6);  // "lat (msec): min=1"
    CHECK(*j.write.lat.mean_ns == doctest::Approx(100.76e6));
    const std::vector<double> ms = {10, 14, 19, 28, 36, 43, 51, 63, 81, 128, 237, 367, 717, 889, 1516, 1713, 2573};
    REQUIRE(j.write.clat.percentiles.size() == 17);
    for (std::size_t i = 0; i < 17; ++i) CHECK(j.write.clat.percentiles[i].second == ms[i] * 1e6);
    CHECK(*j.write.bw_min_bytes_per_s == 4 * kKiB);  // "min=   4" with U+00A0 padding
    CHECK(*j.write.bw_agg_percent == doctest::Approx(26.90));
    CHECK(*j.usr_cpu_percent == doctest::Approx(0.36));
    CHECK(*j.sys_cpu_percent == doctest::Approx(2.31));
    CHECK(*j.ctx == 1148702);
    CHECK(*j.minf == 30);
    CHECK(share(j.latency_buckets_ns, "750000") == doctest::Approx(0.01));
    CHECK(share(j.latency_buckets_ns, "50000000") == doctest::Approx(37.74));
    CHECK(share(j.latency_buckets_ns, "2000000000") == doctest::Approx(0.29));
    CHECK(share(j.latency_buckets_ns, ">=2000000000") == doctest::Approx(0.03));
    CHECK(*docs[0].disks[0].write_ios == 4483641);
    CHECK(*docs[0].disks[1].util_percent == 100);
  }
  SUBCASE("Proxmox VE 4, qemu 2.4, iothread, cache=writeback") {
    const JobResult& j = docs[1].jobs[0];
    CHECK(*j.write.iops == 14856);
    CHECK(*j.write.bw_bytes_per_s == 59425 * kKiB);
    CHECK(*j.write.io_bytes == 0);  // fio printed "io=0B"
    CHECK(*j.write.clat.mean_ns == doctest::Approx(34.04e6));
    CHECK(pct(j.write.clat, 1) == 10e6);
    CHECK(pct(j.write.clat, 50) == 21e6);
    CHECK(pct(j.write.clat, 99) == 95e6);
    CHECK(pct(j.write.clat, 99.99) == 297e6);
    CHECK(*j.usr_cpu_percent == doctest::Approx(2.20));
    CHECK(*j.sys_cpu_percent == doctest::Approx(14.42));
    CHECK(*j.ctx == 2462199);
    CHECK(*docs[1].disks[1].util_percent == doctest::Approx(99.65));
  }
}

TEST_CASE("unquote_email removes quote markers and rejoins wrapped fio lines") {
  const std::string mail =
      "On Wed, someone wrote:\n"
      "> a: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio,\n"
      "> iodepth=32\n"
      ">>    IO depths    : 1=0.1%, 32=100.0%,\n"
      ">>> =64=0.0%\n"
      "> > nested\n"
      "Hi,\n"
      "you are right\n";
  CHECK(unquote_email(mail) ==
        "On Wed, someone wrote:\n"
        "a: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32\n"
        "   IO depths    : 1=0.1%, 32=100.0%, >=64=0.0%\n"
        "nested\n"
        "Hi,\n"
        "you are right\n");
  // Lines that start fio lines of their own are never glued on.
  CHECK(unquote_email("> | 1.00th=[ 1],\n> | 5.00th=[ 2]\n") == "| 1.00th=[ 1],\n| 5.00th=[ 2]\n");
}

TEST_CASE("malformed normal text: ParseError naming the line") {
  const std::string good = fixture("mixed.normal.out");
  // The first 11 lines end with "    clat percentiles (nsec):"; line 12 is the first row.
  std::string head;
  std::size_t pos = 0;
  for (int i = 0; i < 11; ++i) pos = good.find('\n', pos) + 1;
  head = good.substr(0, pos);

  SUBCASE("percentile row cut in half") {
    std::string text = head + "     |  1.00th=[  131],  5.00th=[";
    CHECK(error_line([&] { parse_normal_text(text, "cut"); }) == 12);
  }
  SUBCASE("percentile list cut after a complete row") {
    std::string text = head + "     |  1.00th=[  131],  5.00th=[  141], 10.00th=[  141], 20.00th=[  141],\n";
    CHECK(error_line([&] { parse_normal_text(text, "cut"); }) == 12);
  }
  SUBCASE("a percentile row cut in an e-mail") {
    std::string text = "> " + head;
    for (std::size_t i = 0; i + 1 < text.size(); ++i)
      if (text[i] == '\n') text.insert(i + 1, "> ");
    text += "> |  1.00th=[  131],  5.00th=[\n> \n";
    CHECK(error_line([&] { parse_normal_text(text, "mail"); }) == 12);
  }
  SUBCASE("unreadable IOPS") {
    std::string text = good;
    text.replace(text.find("IOPS=2565k"), 10, "IOPS=lots");
    CHECK(error_line([&] { parse_normal_text(text, "bad"); }) == 7);
  }
  SUBCASE("unknown time unit") {
    std::string text = good;
    text.replace(text.find("slat (nsec)"), 11, "slat (psec)");
    CHECK(error_line([&] { parse_normal_text(text, "bad"); }) == 8);
  }
  SUBCASE("garbage") {
    CHECK(error_line([&] { parse_normal_text("hello world\nthis is not fio\n", "garbage"); }) == 1);
    CHECK(error_line([&] { parse_normal_text("\n\n  \nnot fio either\n", "garbage"); }) == 4);
    CHECK(error_line([&] { parse_normal_text(std::string("\x01\x02\xff\xfe", 4), "binary"); }) == 1);
  }
  SUBCASE("empty") {
    CHECK(error_line([&] { parse_normal_text("", "empty"); }) == 1);
  }
  SUBCASE("a 10 MB line is rejected at once") {
    std::string text = head.substr(0, head.find('\n') + 1) + "fio-3.33\n" + std::string(10 << 20, 'x') + "\n";
    auto start = std::chrono::steady_clock::now();
    CHECK(error_line([&] { parse_normal_text(text, "huge"); }) == 3);
    CHECK(error_line([&] { parse_terse(text, "huge"); }) == 3);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  SUBCASE("long but legal lines stay linear") {
    // A 900 KB IO depths line of 100k entries: parsed, not rejected, and quickly.
    std::string line = "  IO depths    : ";
    for (int i = 0; i < 100000; ++i) line += "1=0.0%, ";
    std::string text = good;
    std::size_t at = text.find("  IO depths");
    text.replace(at, text.find('\n', at) - at, line);
    auto start = std::chrono::steady_clock::now();
    auto docs = parse_normal_text(text, "long");
    CHECK(docs[0].jobs[0].iodepth_level.size() == 100000);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
}

TEST_CASE("malformed terse: ParseError naming the line") {
  const std::string good = fixture("mixed.terse3.out");
  const std::string first = good.substr(0, good.find('\n') + 1);
  CHECK(error_line([&] { parse_terse("3;fio-3.33;job;0;0;1;2;3\n", "short"); }) == 1);
  CHECK(error_line([&] { parse_terse(first + "3;fio-3.33;job;0;0;1;2;3\n", "short"); }) == 2);
  CHECK(error_line([&] { parse_terse("7;fio-9;job;0;0\n", "version"); }) == 1);
  CHECK(error_line([&] { parse_terse("hello\nworld\n", "garbage"); }) == 1);
  CHECK(error_line([&] { parse_terse("", "empty"); }) == 1);
  std::string bad = first;
  bad.replace(bad.find("1.000000%=0"), 11, "1.000000%=x");
  CHECK(error_line([&] { parse_terse("\n" + bad, "bad"); }) == 2);
  std::string cut = first.substr(0, first.size() / 2);
  CHECK(error_line([&] { parse_terse(first + first + cut, "cut"); }) == 3);
  // Quoted in an e-mail, the records still parse.
  std::string quoted;
  for (std::size_t at = 0; at < good.size();) {
    std::size_t end = good.find('\n', at);
    quoted += "> " + good.substr(at, end - at) + "\n";
    at = end == std::string::npos ? good.size() : end + 1;
  }
  auto docs = parse_terse(quoted, "mail");
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].jobs.size() == 2);
  CHECK(has_note(docs[0], "e-mail quoting removed"));
}
