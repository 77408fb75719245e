// vqsim check: the consistency and setup rules on hand-built results, the seeds, and the manifest
// reader (calibration/check/measured.cc, consistency.cc, setup_rules.cc).
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/fio/parse.h"
#include "doctest/doctest.h"
#include "models/config.h"

using namespace vqsim;
using check::Finding;
using check::Measured;
using check::Severity;

namespace {

// A consistent fio 3.x JSON job: libaio, direct=1, randread 4k, iodepth 8, 2 s, 64000 IOPS at
// 125 us (8 in flight).
fio::FioResult clean_result() {
  fio::FioResult r;
  r.format = fio::Format::json;
  r.fio_version = "fio-3.33";
  fio::JobResult j;
  j.name = "clean";
  j.groupid = 0;
  j.jobs = 1;
  j.error = 0;
  j.options = {{"ioengine", "libaio"}, {"direct", "1"}, {"rw", "randread"}, {"bs", "4k"},
               {"iodepth", "8"},       {"size", "64m"}, {"runtime", "2"}};
  auto& d = j.read;
  d.iops = 64000;
  d.runtime_ms = 2000;
  d.total_ios = 128000;
  d.bw_bytes_per_s = 64000.0 * 4096;
  d.io_bytes = 128000ull * 4096;
  d.short_ios = 0;
  d.drop_ios = 0;
  d.slat.min_ns = 1000, d.slat.max_ns = 50000, d.slat.mean_ns = 5000, d.slat.stddev_ns = 2000;
  d.clat.min_ns = 30000, d.clat.max_ns = 3000000, d.clat.mean_ns = 120000, d.clat.stddev_ns = 40000;
  d.lat.min_ns = 31000, d.lat.max_ns = 3010000, d.lat.mean_ns = 125000, d.lat.stddev_ns = 41000;
  d.clat.percentiles = {{1, 50000}, {50, 110000}, {99, 250000}, {99.9, 500000}, {99.99, 1200000}};
  d.iops_mean = 64100;
  d.iops_samples = 4;
  j.iodepth_level = {{"1", 0.1}, {"2", 0.1}, {"4", 0.1}, {"8", 99.9}, {"16", 0}, {"32", 0}, {">=64", 0}};
  r.jobs.push_back(j);
  return r;
}

std::vector<Finding> all_rules(const std::vector<Measured>& ms) {
  auto a = check::check_consistency(ms);
  auto b = check::check_setup(ms);
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The rules with a warning or an error.
std::set<std::string> flagged(const std::vector<Finding>& fs) {
  std::set<std::string> s;
  for (const auto& f : fs) {
    CHECK(f.evidence.find("nan") == std::string::npos);
    CHECK(f.evidence.find("inf") == std::string::npos);
    if (f.severity != Severity::info) s.insert(f.rule);
  }
  return s;
}
std::set<std::string> errors(const std::vector<Finding>& fs) {
  std::set<std::string> s;
  for (const auto& f : fs)
    if (f.severity == Severity::error) s.insert(f.rule);
  return s;
}

std::set<std::string> run(const fio::FioResult& r) { return flagged(all_rules(check::measured_from_result(r, "t.json"))); }

std::string seed(const char* name) { return std::string(VQSIM_SOURCE_DIR) + "/calibration/data/seeds/" + name; }

}  // namespace

TEST_CASE("check: measured views of a fio result carry the figures and the setup") {
  const auto r = clean_result();
  const auto ms = check::measured_from_result(r, "t.json");
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].dir == "read");
  CHECK(ms[0].job == "clean");
  CHECK(*ms[0].iops == doctest::Approx(64000));
  CHECK(*ms[0].bw_kib == doctest::Approx(256000));
  CHECK(*ms[0].lat_mean_us == doctest::Approx(125));
  CHECK(*ms[0].clat_p99_us == doctest::Approx(250));
  CHECK(*ms[0].runtime_s == doctest::Approx(2));
  CHECK(ms[0].setup.at("workload.bs") == "4096");
  CHECK(ms[0].setup.at("workload.iodepth") == "8");
  CHECK(ms[0].setup.at("workload.direct") == "true");
  CHECK(ms[0].setup.at("workload.runtime") == "2s");
}

TEST_CASE("check: a clean result draws no warning or error") { CHECK(run(clean_result()).empty()); }

TEST_CASE("check: each broken figure is flagged by exactly its rule") {
  SUBCASE("unit slip of IOPS, corrected") {
    auto r = clean_result();
    r.jobs[0].read.iops = 64000.0 * 1e3;
    const auto fs = all_rules(check::measured_from_result(r, "t.json"));
    CHECK(flagged(fs) == std::set<std::string>{"unit-slip"});
    auto it = std::find_if(fs.begin(), fs.end(), [](const Finding& f) { return f.rule == "unit-slip"; });
    REQUIRE(it != fs.end());
    REQUIRE(it->corrected);
    CHECK(*it->corrected == doctest::Approx(64000));
  }
  SUBCASE("unit slip of the latency (ms read as us)") {
    auto r = clean_result();
    r.jobs[0].read.lat.mean_ns = 125000.0 * 1000;
    r.jobs[0].read.clat.mean_ns = 120000.0 * 1000;
    r.jobs[0].read.slat.mean_ns = 5000.0 * 1000;
    const auto fs = all_rules(check::measured_from_result(r, "t.json"));
    CHECK(errors(fs).count("unit-slip") == 1);
  }
  SUBCASE("bandwidth") {
    auto r = clean_result();
    *r.jobs[0].read.bw_bytes_per_s /= 2;
    CHECK(run(r) == std::set<std::string>{"bw-vs-iops"});
  }
  SUBCASE("io bytes") {
    auto r = clean_result();
    *r.jobs[0].read.io_bytes /= 2;
    CHECK(run(r) == std::set<std::string>{"io-bytes"});
  }
  SUBCASE("total_ios") {
    auto r = clean_result();
    *r.jobs[0].read.total_ios /= 2;
    CHECK(run(r) == std::set<std::string>{"total-ios"});
  }
  SUBCASE("runtime") {
    auto r = clean_result();
    *r.jobs[0].read.runtime_ms /= 2;
    CHECK(run(r) == std::set<std::string>{"runtime"});
  }
  SUBCASE("Little: more in flight than the depth allows") {
    auto r = clean_result();
    r.jobs[0].options["iodepth"] = "2";
    r.jobs[0].iodepth_level.clear();
    CHECK(run(r) == std::set<std::string>{"little"});
  }
  SUBCASE("Little: far fewer in flight, unexplained") {
    auto r = clean_result();
    r.jobs[0].options["iodepth"] = "64";
    r.jobs[0].iodepth_level.clear();
    CHECK(errors(all_rules(check::measured_from_result(r, "t.json"))) == std::set<std::string>{"little"});
  }
  SUBCASE("Little: the achieved depth explains a shallow queue") {
    auto r = clean_result();
    r.jobs[0].options["iodepth"] = "64";
    CHECK(run(r).empty());
  }
  SUBCASE("latency statistics") {
    auto r = clean_result();
    r.jobs[0].read.clat.percentiles.back().second = 9e6;  // p99.99 above max
    CHECK(run(r) == std::set<std::string>{"latency-stats"});
    r = clean_result();
    r.jobs[0].read.clat.stddev_ns = 2e6;  // impossible for mean 120 us within [30 us, 3 ms]
    CHECK(run(r) == std::set<std::string>{"latency-stats"});
  }
  SUBCASE("slat + clat = lat") {
    auto r = clean_result();
    r.jobs[0].read.clat.mean_ns = 60000;
    CHECK(run(r) == std::set<std::string>{"slat-clat-lat"});
  }
  SUBCASE("read/write mix") {
    auto r = clean_result();
    r.jobs[0].options["rw"] = "randrw";
    r.jobs[0].options["rwmixread"] = "70";
    CHECK(run(r) == std::set<std::string>{"rwmix"});
  }
  SUBCASE("group vs job (fio#519)") {
    auto r = clean_result();
    r.jobs[0].read.iops_mean = 20000;
    CHECK(run(r) == std::set<std::string>{"group-vs-job"});
  }
  SUBCASE("errors and short I/Os") {
    auto r = clean_result();
    r.jobs[0].error = 5;
    CHECK(run(r) == std::set<std::string>{"errors"});
    r = clean_result();
    r.jobs[0].read.short_ios = 3;
    CHECK(run(r) == std::set<std::string>{"short-io"});
  }
  SUBCASE("All clients double counting (fio#752)") {
    auto r = clean_result();
    auto a = r.jobs[0], b = r.jobs[0], all = r.jobs[0];
    a.hostname = "h1", b.hostname = "h2";
    all.name = "All clients";
    all.is_aggregate = true;
    all.options.clear();
    auto& d = all.read;
    *d.iops *= 4, *d.bw_bytes_per_s *= 4, *d.io_bytes *= 4, *d.total_ios *= 4, *d.iops_mean *= 4;
    r.jobs = {a, b, all};
    CHECK(run(r) == std::set<std::string>{"all-clients"});
  }
  SUBCASE("page cache") {
    auto r = clean_result();
    r.jobs[0].options["direct"] = "0";
    auto& d = r.jobs[0].read;
    const double k = 50;
    *d.iops *= k, *d.bw_bytes_per_s *= k, *d.io_bytes = static_cast<std::uint64_t>(*d.io_bytes * k), *d.total_ios *= 50,
                                          *d.iops_mean *= k;
    for (auto* l : {&d.slat, &d.clat, &d.lat}) {
      *l->min_ns /= k, *l->max_ns /= k, *l->mean_ns /= k, *l->stddev_ns /= k;
      for (auto& p : l->percentiles) p.second /= k;
    }
    CHECK(run(r) == std::set<std::string>{"page-cache"});
  }
  SUBCASE("libaio without direct=1") {
    auto r = clean_result();
    r.jobs[0].options.erase("direct");  // fio's default: buffered
    CHECK(run(r) == std::set<std::string>{"libaio-buffered"});
  }
  SUBCASE("iodepth with a synchronous engine (fio#1388)") {
    auto r = clean_result();
    r.jobs[0].options["ioengine"] = "psync";
    auto& d = r.jobs[0].read;  // what psync does: one I/O in flight
    const double k = 8;
    *d.iops /= k, *d.bw_bytes_per_s /= k, *d.io_bytes = static_cast<std::uint64_t>(*d.io_bytes / k), *d.total_ios /= 8,
                                          *d.iops_mean /= k;
    r.jobs[0].iodepth_level = {{"1", 100}};
    CHECK(run(r) == std::set<std::string>{"sync-iodepth"});
  }
  SUBCASE("a run too short for its percentiles") {
    auto r = clean_result();
    auto& d = r.jobs[0].read;
    *d.runtime_ms = 2, *d.total_ios = 128, *d.io_bytes = 128 * 4096;
    d.iops_mean.reset();
    CHECK(run(r) == std::set<std::string>{"short-run"});
  }
  SUBCASE("ramp_time on writes to a thin device") {
    auto r = clean_result();
    std::swap(r.jobs[0].read, r.jobs[0].write);
    r.jobs[0].options["rw"] = "randwrite";
    auto ms = check::measured_from_result(r, "t.json");
    CHECK(flagged(all_rules(ms)).empty());
    for (auto& m : ms) m.setup["backend.image_format"] = "qcow2";
    CHECK(flagged(all_rules(ms)) == std::set<std::string>{"ramp-time"});
    for (auto& m : ms) m.setup["workload.ramp_time"] = "5s";
    CHECK(flagged(all_rules(ms)).empty());
  }
}

TEST_CASE("check: open-loop jobs skip Little's law") {
  auto r = clean_result();
  r.jobs[0].options["rate_iops"] = "1000";
  r.jobs[0].options["iodepth"] = "64";
  r.jobs[0].iodepth_level.clear();
  const auto fs = all_rules(check::measured_from_result(r, "t.json"));
  CHECK(flagged(fs).empty());
}

TEST_CASE("check: seeds 000 and 002 pass the consistency rules") {
  for (const char* f : {"000-virtio-blk.fio.txt", "000-virtio-scsi.fio.txt", "002-qemu2.2-writethrough.fio.txt",
                        "002-qemu2.4-writeback-iothread.fio.txt"}) {
    CAPTURE(f);
    const auto parsed = fio::parse_fio_file(seed(f));
    const auto ms = check::measured_from_result(parsed.final_result(), f);
    REQUIRE(!ms.empty());
    const auto fs = all_rules(ms);
    CHECK(errors(fs).empty());
    for (const auto& x : fs) {
      CAPTURE(x.rule);
      CAPTURE(x.evidence);
      CHECK(x.rule != "little");
      // The one warning: fio 2.1.11 printed "write: io=0B" for the PVE 4 run.
      if (x.severity == Severity::warning) {
        CHECK(x.rule == "io-bytes");
        CHECK(std::string(f) == "002-qemu2.4-writeback-iothread.fio.txt");
      }
    }
  }
}

TEST_CASE("check: the seed manifests load, and seed 004 as posted is a unit slip") {
  for (const char* f : {"000-virtio-scsi-vs-blk.toml", "001-tcm-vhost.toml", "002-ceph-proxmox.toml",
                        "003-virtio-blk-bio-path.toml", "004-epyc-vm-vs-baremetal.toml"}) {
    CAPTURE(f);
    std::vector<fio::FioResult> keep;
    const auto ms = check::measured_from_manifest(seed(f), keep);
    CHECK(!ms.empty());
    CHECK(errors(check::check_consistency(ms)).empty());
  }
  std::vector<fio::FioResult> keep;
  const auto ms = check::measured_from_manifest(std::string(VQSIM_SOURCE_DIR) + "/tests/data/check/seed004-as-posted.toml", keep);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].setup.at("workload.bs") == "1048576");
  const auto fs = all_rules(ms);
  CHECK(flagged(fs) == std::set<std::string>{"unit-slip"});
  REQUIRE(fs.size() >= 1);
  REQUIRE(fs[0].corrected);
  CHECK(*fs[0].corrected == doctest::Approx(8097).epsilon(0.01));
}

TEST_CASE("check: a bad manifest is a ConfigError with file and line") {
  const std::string path = std::string(VQSIM_SOURCE_DIR) + "/tests/data/check/seed004-as-posted.toml";
  std::vector<fio::FioResult> keep;
  CHECK_THROWS_AS(check::measured_from_manifest(path + ".missing", keep), models::ConfigError);
}
