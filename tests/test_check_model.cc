// `vqsim check`'s model-side rules (calibration/check/physics.cc, envelope.cc, spread.cc): each
// physics rule flags a violating result and not a plausible one; a guest above its host's bare
// metal; the model envelope inside and far outside; seed 003's five aio-stress runs get a spread
// verdict with numbers, and five runs with a tiny spread are explained by queueing noise.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"

using namespace vqsim;
using check::Finding;
using check::Measured;
using check::Severity;

namespace {

const std::string kDefault = VQSIM_SOURCE_DIR "/scenarios/default.toml";

Measured make(const std::string& dir, std::map<std::string, std::string> setup) {
  Measured m;
  m.source = "test.toml: run 'x'";
  m.dir = dir;
  m.setup = std::move(setup);
  return m;
}

std::vector<Finding> with_rule(const std::vector<Finding>& fs, const std::string& rule) {
  std::vector<Finding> out;
  for (const auto& f : fs)
    if (f.rule == rule) out.push_back(f);
  return out;
}

bool no_nan(const std::vector<Finding>& fs) {
  for (const auto& f : fs)
    if (f.evidence.find("nan") != std::string::npos || f.evidence.find("NaN") != std::string::npos) return false;
  return true;
}

// Seed 003's five repeated aio-stress runs (read.bw_kib from calibration/data/seeds/003-*.toml).
std::vector<Measured> seed003_runs(const std::vector<double>& bw_kib) {
  std::vector<Measured> runs;
  int i = 1;
  for (double bw : bw_kib) {
    Measured m = make("read", {{"guest.driver", "virtio-blk"},
                               {"backend.kind", "nvme"},
                               {"backend.model", "Fusion-io PCIe flash"},
                               {"guest.block_path", "bio"},
                               {"guest.scheduler", "deadline"},
                               {"workload.tool", "aio-stress"},
                               {"workload.rw", "randread"},
                               {"workload.bs", "8k"},
                               {"workload.iodepth", "512"},
                               {"workload.iodepth_batch", "8"},
                               {"workload.numjobs", "1"},
                               {"workload.ioengine", "libaio"},
                               {"workload.size", "128m"},
                               {"workload.ios", "16384"}});
    m.source = "003-virtio-blk-bio-path.toml: run 'aio-stress-" + std::to_string(i++) + "'";
    m.bw_kib = bw;
    runs.push_back(m);
  }
  return runs;
}

}  // namespace

TEST_CASE("physics: device classes are listed and unknown ones rejected") {
  const auto names = check::device_classes();
  for (const char* n : {"hdd-7200", "hdd-10k", "hdd-15k", "sata-ssd", "nvme", "ceph-rbd", "pagecache", "null", "md-raid1", "krbd", "hdd"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_THROWS_AS(check::check_physics({}, "floppy"), std::invalid_argument);
}

TEST_CASE("physics-iops: a 7200 rpm disk at QD1") {
  Measured m = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "1"}, {"workload.ioengine", "libaio"}});
  m.iops = 20000;
  auto fs = with_rule(check::check_physics({m}, "hdd-7200"), "physics-iops");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);
  CHECK(fs[0].evidence.find("20000") != std::string::npos);
  CHECK(fs[0].cause.find("80 random IOPS") == std::string::npos);  // 79: the number is derived, not rounded
  CHECK(fs[0].cause.find("79 random IOPS per actuator at QD1") != std::string::npos);

  m.iops = 70;  // plausible
  CHECK(check::check_physics({m}, "hdd-7200").empty());

  m.iops = 150;  // above full-span, below the rotational limit: a short-stroked file, warning
  fs = with_rule(check::check_physics({m}, "hdd-7200"), "physics-iops");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::warning);

  // The same 150 at depth 32 is fine (NCQ), and sequential access is not judged by IOPS.
  m.setup["workload.iodepth"] = "32";
  CHECK(check::check_physics({m}, "hdd-7200").empty());
  m.setup["workload.iodepth"] = "1";
  m.setup["workload.rw"] = "read";
  m.iops = 20000;
  CHECK(with_rule(check::check_physics({m}, "hdd-7200"), "physics-iops").empty());

  // psync ignores iodepth: numjobs is the depth.
  Measured p = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}, {"workload.ioengine", "psync"}});
  p.iops = 300;
  CHECK(with_rule(check::check_physics({p}, "hdd-7200"), "physics-iops").size() == 1);
}

TEST_CASE("physics-iops: class from the scenario's backend.kind, NVMe and SATA SSD bounds") {
  Measured m = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}, {"backend.kind", "sata-ssd"}});
  m.iops = 95800;  // S-VBLK22 B1: a host SSD
  CHECK(check::check_physics({m}, "").empty());
  m.iops = 400000;
  auto fs = with_rule(check::check_physics({m}, ""), "physics-iops");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);

  Measured n = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "64"}, {"backend.kind", "nvme"}});
  n.iops = 200000;  // S-PVEFORUM J1
  CHECK(check::check_physics({n}, "").empty());
  n.iops = 6e6;
  CHECK(with_rule(check::check_physics({n}, ""), "physics-iops").size() == 1);

  // md RAID1 of HDDs: reads from both legs (2x), writes at one leg's bound.
  Measured r = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "1"},
                             {"backend.kind", "md-raid1"}, {"backend.leg", "hdd"}});
  r.iops = 140;  // under 2 x 79
  CHECK(check::check_physics({r}, "").empty());
  r.dir = "write";
  r.setup["workload.rw"] = "randwrite";
  CHECK(check::check_physics({r}, "").empty());  // writes: the drive's cache; rotational bound 240
  r.iops = 300;                                  // above one leg's rotational limit
  auto ws = with_rule(check::check_physics({r}, ""), "physics-iops");
  REQUIRE(ws.size() == 1);
  CHECK(ws[0].severity == Severity::warning);
  r.iops = 1000;  // above 2x of it
  ws = with_rule(check::check_physics({r}, ""), "physics-iops");
  REQUIRE(ws.size() == 1);
  CHECK(ws[0].severity == Severity::error);

  // IOPS from bandwidth / bs when the result has only bandwidth (seed 001's tables).
  Measured b = make("read", {{"workload.rw", "randread"}, {"workload.bs", "8k"}, {"workload.iodepth", "1"}, {"backend.kind", "hdd"}});
  b.bw_kib = 8192;  // 1024 IOPS at QD1 from a 7200 rpm disk
  ws = with_rule(check::check_physics({b}, ""), "physics-iops");
  REQUIRE(ws.size() == 1);
  CHECK(ws[0].evidence.find("bandwidth / bs") != std::string::npos);

  // No backend.kind and no --device: nothing to judge.
  Measured u = make("read", {{"workload.rw", "randread"}});
  u.iops = 1e9;
  CHECK(check::check_physics({u}, "").empty());
}

TEST_CASE("physics-bandwidth: SATA link and HDD media") {
  Measured m = make("read", {{"workload.rw", "read"}, {"workload.bs", "1m"}, {"workload.iodepth", "8"}});
  m.bw_kib = 520 * 1000.0 * 1000.0 / 1024.0;  // 520 MB/s
  CHECK(check::check_physics({m}, "sata-ssd").empty());
  m.bw_kib = 2.0e9 / 1024.0;  // 2 GB/s over SATA
  auto fs = with_rule(check::check_physics({m}, "sata-ssd"), "physics-bandwidth");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);
  CHECK(fs[0].evidence.find("2.00 GB/s") != std::string::npos);

  m.bw_kib = 200 * 1000.0 * 1000.0 / 1024.0;  // 200 MB/s from a 7200 rpm disk: fine
  CHECK(check::check_physics({m}, "hdd-7200").empty());
  m.bw_kib = 400 * 1000.0 * 1000.0 / 1024.0;  // above the media, below the link: warning
  fs = with_rule(check::check_physics({m}, "hdd-7200"), "physics-bandwidth");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::warning);

  // Without bw, IOPS x bs.
  Measured k = make("read", {{"workload.rw", "read"}, {"workload.bs", "1m"}});
  k.iops = 30000;  // 31 GB/s from one NVMe at 1 MiB
  CHECK(with_rule(check::check_physics({k}, "nvme"), "physics-bandwidth").size() == 1);
  k.iops = 3000;
  CHECK(check::check_physics({k}, "nvme").empty());
}

TEST_CASE("physics-latency-floor: random reads below the class floor") {
  Measured m = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "1"}});
  m.lat_mean_us = 150;  // 0.15 ms random read from a 7200 rpm disk
  auto fs = with_rule(check::check_physics({m}, "hdd-7200"), "physics-latency-floor");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);
  m.lat_mean_us = 9000;
  CHECK(check::check_physics({m}, "hdd-7200").empty());

  Measured c = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "1"}});
  c.clat_mean_us = 40;  // Ceph RBD cannot answer in 40 us
  CHECK(with_rule(check::check_physics({c}, "ceph-rbd"), "physics-latency-floor").size() == 1);
  c.clat_mean_us = 800;
  CHECK(check::check_physics({c}, "ceph-rbd").empty());

  // With caching evident the error becomes a warning.
  m.lat_mean_us = 150;
  m.setup["workload.direct"] = "0";
  fs = with_rule(check::check_physics({m}, "hdd-7200"), "physics-latency-floor");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::warning);
}

TEST_CASE("guest-above-host: a VM cannot beat its own host's bare metal") {
  const std::map<std::string, std::string> w = {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "10"}, {"workload.numjobs", "32"}};
  Measured host = make("read", w), guest = make("read", w);
  host.setup["guest.driver"] = "none";
  guest.setup["guest.driver"] = "virtio-blk";
  host.source = "004.toml: run 'bare-metal'";
  guest.source = "004.toml: run 'vm'";
  host.iops = 2065000;
  guest.iops = 151000;  // seed 004: far below, plausible
  CHECK(with_rule(check::check_physics({host, guest}, ""), "guest-above-host").empty());
  guest.iops = 2700000;  // 31% above
  auto fs = with_rule(check::check_physics({host, guest}, ""), "guest-above-host");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);
  guest.iops = 2065000 * 1.02;  // within 5%: nothing
  CHECK(with_rule(check::check_physics({host, guest}, ""), "guest-above-host").empty());
  guest.iops = 2065000 * 1.10;  // 10% above: within single-run noise, warning
  fs = with_rule(check::check_physics({host, guest}, ""), "guest-above-host");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::warning);
  guest.iops = 2700000;
  CHECK(fs[0].cause.find("cannot beat its own host") != std::string::npos);
  // Different workloads are not compared.
  guest.setup["workload.bs"] = "8k";
  CHECK(with_rule(check::check_physics({host, guest}, ""), "guest-above-host").empty());
  // "4k" and "4096" are the same block size; host cache=writeback explains it (info).
  guest.setup["workload.bs"] = "4096";
  guest.setup["host.cache"] = "writeback";
  fs = with_rule(check::check_physics({host, guest}, ""), "guest-above-host");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::info);
}

TEST_CASE("envelope: inside and far outside the model's interval") {
  const std::vector<std::string> over = {"workload.ios=20000", "run.replications=3"};
  // What the model says for the default scenario.
  Measured probe = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}});
  probe.iops = 1;
  auto fs = check::check_envelope({probe}, kDefault, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);  // 1 IOPS: off by far more than 2x
  CHECK(fs[0].evidence.find("simulation noise only") != std::string::npos);
  CHECK(fs[0].evidence.find("workload.bs=\"4k\"") != std::string::npos);
  CHECK(fs[0].evidence.find("scenario ") != std::string::npos);
  // Read the simulated mean back from the evidence: "vs simulated <x> (".
  const auto at = fs[0].evidence.find("vs simulated ");
  REQUIRE(at != std::string::npos);
  const double predicted = std::stod(fs[0].evidence.substr(at + 13));
  REQUIRE(predicted > 1000);

  Measured inside = probe;
  inside.iops = predicted * 1.02;
  fs = check::check_envelope({inside}, kDefault, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::info);

  Measured off = probe;
  off.iops = predicted * 1.4;  // 40% off: warning
  fs = check::check_envelope({off}, kDefault, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::warning);
  CHECK(fs[0].evidence.find("sigma") != std::string::npos);
  CHECK(no_nan(fs));

  // Setup keys that are not scenario keys are named and ignored; a bad value is reported, not thrown.
  Measured odd = probe;
  odd.setup["vendor.colour"] = "blue";
  odd.setup["guest.driver"] = "floppy-controller";
  fs = check::check_envelope({odd}, kDefault, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].evidence.find("not simulated") != std::string::npos);
  CHECK(fs[0].evidence.find("vendor.colour") != std::string::npos);
}

TEST_CASE("spread: seed 003's five aio-stress runs point to outside interference") {
  const auto runs = seed003_runs({155351.04, 205864.96, 138557.44, 119736.32, 133928.96});
  const auto fs = check::check_spread(runs, kDefault, {}, 2);
  REQUIRE(fs.size() == 1);
  MESSAGE(fs[0].evidence);
  CHECK(fs[0].rule == "spread");
  CHECK(fs[0].severity == Severity::warning);
  CHECK(fs[0].cause.find("outside interference") != std::string::npos);
  CHECK(fs[0].evidence.find("CV 22.") != std::string::npos);          // measured CV of the five runs
  CHECK(fs[0].evidence.find("min 119736 .. max 205865") != std::string::npos);
  CHECK(fs[0].evidence.find("16384 I/Os") != std::string::npos);
  CHECK(no_nan(fs));
  CHECK_THROWS_AS(check::check_spread(runs, "", {}, 2), std::invalid_argument);
}

TEST_CASE("spread: a tiny spread is explained by queueing noise") {
  // +-0.1% around one value: well within the noise of 16k I/Os.
  const auto runs = seed003_runs({150000, 150150, 149850, 150100, 149900});
  const auto fs = check::check_spread(runs, kDefault, {}, 2);
  REQUIRE(fs.size() == 1);
  MESSAGE(fs[0].evidence);
  CHECK(fs[0].severity == Severity::info);
  CHECK(fs[0].cause.find("queueing noise") != std::string::npos);
  CHECK(no_nan(fs));
  // One run: nothing to say.
  CHECK(check::check_spread({runs[0]}, kDefault, {}, 2).empty());
}
