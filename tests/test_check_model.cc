// `vqsim check`'s model-side rules (calibration/check/physics.cc, envelope.cc, spread.cc): each
// physics rule flags a violating result and not a plausible one; a guest above its host's bare
// metal; the model envelope inside and far outside; seed 003's five aio-stress runs get a spread
// verdict with numbers, and five runs with a tiny spread are explained by queueing noise; runs
// given as repeats (real fio 3.33 outputs in every format) are compared, and a setup that differs
// is an error naming the option.
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/fio/parse.h"

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
  for (const char* n :
       {"hdd-7200", "hdd-10k", "hdd-15k", "sata-ssd", "nvme", "ceph-rbd", "pagecache", "null", "md-raid1", "krbd", "hdd"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_THROWS_AS(check::check_physics({}, "floppy"), std::invalid_argument);
}

TEST_CASE("physics-iops: a 7200 rpm disk at QD1") {
  Measured m = make(
      "read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "1"}, {"workload.ioengine", "libaio"}});
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
  Measured p = make(
      "read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}, {"workload.ioengine", "psync"}});
  p.iops = 300;
  CHECK(with_rule(check::check_physics({p}, "hdd-7200"), "physics-iops").size() == 1);
}

TEST_CASE("physics-iops: class from the scenario's backend.kind, NVMe and SATA SSD bounds") {
  Measured m = make(
      "read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}, {"backend.kind", "sata-ssd"}});
  m.iops = 95800;  // S-VBLK22 (docs/check.md, Sources): a host SSD
  CHECK(check::check_physics({m}, "").empty());
  m.iops = 400000;
  auto fs = with_rule(check::check_physics({m}, ""), "physics-iops");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::error);

  Measured n =
      make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "64"}, {"backend.kind", "nvme"}});
  n.iops = 200000;  // S-PVEFORUM J1
  CHECK(check::check_physics({n}, "").empty());
  n.iops = 6e6;
  CHECK(with_rule(check::check_physics({n}, ""), "physics-iops").size() == 1);

  // md RAID1 of HDDs: reads from both legs (2x), writes at one leg's bound.
  Measured r = make("read", {{"workload.rw", "randread"},
                             {"workload.bs", "4k"},
                             {"workload.iodepth", "1"},
                             {"backend.kind", "md-raid1"},
                             {"backend.leg", "hdd"}});
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
  Measured b =
      make("read", {{"workload.rw", "randread"}, {"workload.bs", "8k"}, {"workload.iodepth", "1"}, {"backend.kind", "hdd"}});
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
  const std::map<std::string, std::string> w = {
      {"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "10"}, {"workload.numjobs", "32"}};
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

TEST_CASE("envelope: a calibrated scenario judges by the whole prediction interval, model error included") {
  // The default scenario with a [calibration] table: a device time known to +-10% and a model
  // error of 0.2 in log space on throughput (a 95% factor of 1.48).
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-envelope";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "calibrated.toml").string();
  std::ofstream(path) << "base = \"" << kDefault << "\"\n[backend]\nread_us = 90\n[calibration]\nparams = [\"backend.read_us\"]\n"
                      << "log_sd = [0.05]\nlog_corr = [[1.0]]\ndraws = 4\nsource = \"test\"\n"
                      << "model_error = { throughput = 0.2, \"mean latency\" = 0.2, p50 = 0.3, p99 = 0.4, \"p99.9\" = 0.5 }\n";
  const std::vector<std::string> over = {"workload.ios=20000", "run.replications=3"};
  Measured probe = make("read", {{"workload.rw", "randread"}, {"workload.bs", "4k"}, {"workload.iodepth", "32"}});
  probe.iops = 1;
  auto fs = check::check_envelope({probe}, path, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].evidence.find("model error ±48%") != std::string::npos);
  CHECK(fs[0].evidence.find("simulation noise only") == std::string::npos);
  const auto at = fs[0].evidence.find("vs predicted ");
  REQUIRE(at != std::string::npos);
  const double predicted = std::stod(fs[0].evidence.substr(at + 13));
  // 30% above the prediction: beyond the simulation's noise, inside the model's error.
  probe.iops = 1.3 * predicted;
  fs = check::check_envelope({probe}, path, over, 2);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].severity == Severity::info);
  CHECK(fs[0].cause == "inside the calibrated model's prediction interval");
  // 1.8x: outside the interval, within 2x: a warning; 1 IOPS: an error.
  probe.iops = 1.8 * predicted;
  CHECK(check::check_envelope({probe}, path, over, 2)[0].severity == Severity::warning);
  probe.iops = 1;
  CHECK(check::check_envelope({probe}, path, over, 2)[0].severity == Severity::error);
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
  CHECK(fs[0].evidence.find("CV 22.") != std::string::npos);  // measured CV of the five runs
  CHECK(fs[0].evidence.find("min 119736 .. max 205865") != std::string::npos);
  CHECK(fs[0].evidence.find("16384 I/Os") != std::string::npos);
  CHECK(no_nan(fs));
  // Without a scenario the spread is not checked, and the finding says so and how to check it.
  const auto none = check::check_spread(runs, "", {}, 2);
  REQUIRE(none.size() == 1);
  CHECK(none[0].severity == Severity::warning);
  CHECK(none[0].evidence.find("not checked") != std::string::npos);
  CHECK(none[0].cause.find("--scenario") != std::string::npos);
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

namespace {

// Real fio 3.33 outputs of one job (randread 4k, libaio, direct=1, 16 MiB file, 1 s) in every
// output format, and variants that change one option (tests/data/check/repeats).
struct Repeats {
  std::deque<fio::ParsedFile> files;
  std::vector<Measured> runs;
  explicit Repeats(const std::vector<std::string>& names) {
    for (const auto& n : names) {
      files.push_back(fio::parse_fio_file(VQSIM_SOURCE_DIR "/tests/data/check/repeats/" + n));
      for (auto& m : check::measured_from_result(files.back().final_result(), n))
        if (m.dir == "read" || m.dir == "write") {
          runs.push_back(std::move(m));
          break;  // one direction of the one job: what the CLI passes per job and direction
        }
    }
  }
};

}  // namespace

TEST_CASE("repeats: one job in JSON, json+, normal text and terse is compared as one setup") {
  Repeats r({"rr-qd8.json", "rr-qd8.jsonplus", "rr-qd8.txt", "rr-qd8.terse"});
  REQUIRE(r.runs.size() == 4);
  const auto fs = check::check_repeats(r.runs, kDefault, {}, 2);
  REQUIRE(fs.size() == 1);
  MESSAGE(fs[0].evidence);
  CHECK(fs[0].rule == "spread");
  for (const char* n : {"rr-qd8.json", "rr-qd8.jsonplus", "rr-qd8.txt", "rr-qd8.terse"})
    CHECK(fs[0].subject.find(n) != std::string::npos);
  CHECK(fs[0].subject.find("4 runs") == 0);
  CHECK(fs[0].evidence.find("setup compared across the runs: rw, bs, iodepth") != std::string::npos);
  CHECK(fs[0].evidence.find("IO depth histogram") != std::string::npos);  // the terse file states no iodepth
  CHECK(fs[0].evidence.find("not stated by rr-qd8.txt: direct") != std::string::npos);
  // The setup simulated is the one they share, including what only the JSON files state.
  CHECK(fs[0].evidence.find("--set workload.iodepth=8") != std::string::npos);
  CHECK(fs[0].evidence.find("--set workload.direct=true") != std::string::npos);
  CHECK(no_nan(fs));
  // Without a scenario: agreed, but the spread is not checked, and the finding says so.
  const auto none = check::check_repeats(r.runs, "", {}, 2);
  REQUIRE(none.size() == 1);
  CHECK(none[0].severity == Severity::warning);
  CHECK(none[0].evidence.find("not checked") != std::string::npos);
}

TEST_CASE("repeats: runs whose setups differ are an error naming the option, in any format") {
  struct Case {
    std::vector<std::string> files;
    std::string differs;
  };
  const std::vector<Case> cases = {
      {{"rr-qd1.json", "rr-qd32.json"}, "iodepth (1 in rr-qd1.json; 32 in rr-qd32.json)"},
      {{"rr-qd8.json", "rr-qd32.txt"}, "iodepth (8 in rr-qd8.json; 32 in rr-qd32.txt)"},
      {{"rr-qd1.terse", "rr-qd32.terse"}, "IO depth histogram (depth 1 in rr-qd1.terse; depth 32 in rr-qd32.terse)"},
      {{"rr-qd8.terse", "rr-qd32.txt"}, "IO depth histogram (depth 8 in rr-qd8.terse; depth 32 in rr-qd32.txt)"},
      {{"rr-qd8.txt", "rr-bs64k.txt"}, "bs (4096 in rr-qd8.txt; 65536 in rr-bs64k.txt)"},
      {{"rr-qd8.json", "rr-buffered.json"}, "direct (true in rr-qd8.json; false in rr-buffered.json)"},
      {{"rr-qd8.json", "rr-io_uring.json"}, "ioengine (libaio in rr-qd8.json; io_uring in rr-io_uring.json)"},
      {{"rr-qd8.json", "rr-nj2.json"}, "numjobs (1 (fio's default) in rr-qd8.json; 2 in rr-nj2.json)"},
      {{"rr-qd8.json", "rr-32m.json"}, "size (16M in rr-qd8.json; 32M in rr-32m.json)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.differs);
    Repeats r(c.files);
    REQUIRE(r.runs.size() == 2);
    const auto fs = check::check_repeats(r.runs, kDefault, {}, 2);
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].rule == "not-repeats");
    CHECK(fs[0].severity == Severity::error);
    CHECK(fs[0].evidence.find("differ in " + c.differs) != std::string::npos);
    CHECK(fs[0].cause.find("not checked") != std::string::npos);
    if (fs[0].evidence.find("differ in " + c.differs) == std::string::npos) MESSAGE(fs[0].evidence);
  }
}

TEST_CASE("physics_class: the class a run is judged against, or none") {
  CHECK(check::physics_class(make("read", {}), "").empty());
  CHECK(check::physics_class(make("read", {{"backend.kind", "floppy"}}), "").empty());
  CHECK(check::physics_class(make("read", {{"backend.kind", "nvme"}}), "").find("nvme") != std::string::npos);
  CHECK(check::physics_class(make("read", {}), "hdd-7200").find("hdd-7200") != std::string::npos);
}
