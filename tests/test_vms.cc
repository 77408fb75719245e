// vm.count: identical VMs of one profile on one host, sharing host.cores and the backend.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {
std::string scenario_path(const std::string& name) { return std::string(VQSIM_SOURCE_DIR) + "/scenarios/" + name; }

models::IoScenario short_run(models::ScenarioSource src, int vms, int replications = 5) {
  src.set("workload.ios", 20000).set("run.replications", replications).set("vm.count", vms);
  return src.scenario();
}

// a and b agree within their 95% intervals.
bool overlap(const sim::Interval& a, const sim::Interval& b) { return std::fabs(a.mean - b.mean) <= a.half_width + b.half_width; }
}  // namespace

TEST_CASE("one VM of vm.count is the single-VM scenario, figure for figure and event for event") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("workload.ios", 20000).set("run.replications", 2);
  models::IoScenario plain = src.scenario();
  models::IoScenario one = plain;
  src.set("vm.count", 1);
  one = src.scenario();
  plain.run.hash_events = one.run.hash_events = true;
  const auto a = models::simulate_io(plain, 1);
  const auto b = models::simulate_io(one, 1);
  CHECK(a.event_hash == b.event_hash);
  REQUIRE(a.replications.size() == b.replications.size());
  for (std::size_t r = 0; r < a.replications.size(); ++r) CHECK(a.replications[r].values == b.replications[r].values);
}

TEST_CASE("two identical VMs on one NVMe: each gets no more than one alone, together at least as much") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("workload.numjobs", 2);  // enough load that the shared device matters
  const auto alone = models::simulate_io(short_run(src, 1), 1);
  const auto two = models::simulate_io(short_run(src, 2), 1);
  const auto single = alone.get("read.iops");
  const auto first = two.get("read.iops"), second = two.get("vm1.read.iops");
  CHECK(first.mean <= single.mean + single.half_width + first.half_width);
  CHECK(second.mean <= single.mean + single.half_width + second.half_width);
  const auto total = two.get("host.total.iops");
  CHECK(total.mean + total.half_width >= single.mean - single.half_width);
  CHECK(std::fabs(total.mean - (first.mean + second.mean)) <= 1e-6 * total.mean);
  // Identical VMs: within each other's intervals.
  CHECK(overlap(first, second));
  CHECK(overlap(two.get("read.lat.mean_ns"), two.get("vm1.read.lat.mean_ns")));
  CHECK(overlap(two.get("read.clat.p99.000000_ns"), two.get("vm1.read.clat.p99.000000_ns")));
}

TEST_CASE("VMs on a null device with host.cores = 2 saturate the cores, below the MVA's bound") {
  models::ScenarioSource src(scenario_path("default.toml"));
  src.set("backend.kind=\"null\"").set("host.cores", 2).set("workload.iodepth", 8);
  double previous = 0;
  for (int vms : {1, 2, 4, 8}) {
    const models::IoScenario s = short_run(src, vms, 3);
    const auto r = models::simulate_io(s, 1);
    const double total = r.get("host.total.iops").mean;
    const double cpu = r.get("host.cpu.utilization").mean;
    CAPTURE(vms);
    CAPTURE(total);
    CAPTURE(cpu);
    // More VMs never lower the host's throughput much; past the cores' capacity they add nothing.
    // (Eight VMs' threads on two cores each wake more often than four's: about 5% less.)
    CHECK(total >= 0.93 * previous);
    if (vms >= 4) {
      CHECK(cpu > 0.97);                // both cores busy all the time
      CHECK(total <= 1.05 * previous);  // the aggregate has saturated
      // The MVA puts the guests' CPU work on the shared cores and the QEMU threads beside them:
      // its throughput bounds the simulation's, where both compete for the cores.
      CHECK(total <= 1.02 * models::solve_io_mva(s).total_iops);
    }
    previous = total;
  }
}

TEST_CASE("vm.count is checked like every key: at least one VM") {
  models::ScenarioSource src(scenario_path("default.toml"));
  CHECK_THROWS_WITH_AS(src.set("vm.count", 0).scenario(), doctest::Contains("vm.count"), models::ConfigError);
}

// [[vm]] and [[backend]] tables: VMs of several profiles on one host.
namespace {
std::string consolidation(const std::string& name) { return scenario_path("consolidation/" + name); }

// A scenario file in a fresh temporary directory (the bad-input cases).
std::string write_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-vms";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// The message of the ConfigError that loading `path` (with `edits`) throws, or "" if it loads.
std::string load_error(const std::string& path, const std::vector<std::string>& edits = {}) {
  try {
    (void)models::load_io_scenario(path, edits);
  } catch (const models::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a [[vm]] file with one VM of the default profile is the default scenario, event for event") {
  auto short_src = [](const std::string& path) {
    models::ScenarioSource src(path);
    src.set("workload.ios", 20000).set("run.replications", 2);
    models::IoScenario s = src.scenario();
    s.run.hash_events = true;
    return s;
  };
  const models::IoScenario plain = short_src(scenario_path("default.toml"));
  const models::IoScenario one = short_src(consolidation("one-default-vm.toml"));
  REQUIRE(one.multi_vm());
  REQUIRE(one.profiles.size() == 1);
  CHECK(one.profiles[0].name == "web");
  CHECK(setup_signature(one.profiles[0].scenario) == setup_signature(plain));
  const auto a = models::simulate_io(plain, 1);
  const auto b = models::simulate_io(one, 1);
  CHECK(a.event_hash == b.event_hash);
  REQUIRE(a.replications.size() == b.replications.size());
  for (std::size_t r = 0; r < a.replications.size(); ++r)
    for (const auto& [name, value] : a.replications[r].values) CHECK(b.replications[r].get(name) == value);
  // Its figures by the VM's name are the same figures.
  CHECK(models::io_metric(b, "vm.web.read.iops").mean == models::io_metric(a, "read.iops").mean);
  CHECK(models::io_metric(b, "vm.web.read.clat_p99_us").mean == models::io_metric(a, "read.clat_p99_us").mean);
  CHECK(models::io_metric(b, "host.total.iops").mean == doctest::Approx(models::io_metric(a, "read.iops").mean));
  // One running profile: the MVA is that profile's.
  CHECK(models::solve_io_mva(one).iops == doctest::Approx(models::solve_io_mva(plain).iops));
}

TEST_CASE("two profiles on one NVMe: the backup's 1 MiB reads slow the database's 4 KiB reads down") {
  models::ScenarioSource src(consolidation("noisy-neighbour.toml"));
  src.set("vm.db.workload.ios", 5000).set("vm.backup.workload.ios", 500).set("run.replications", 3);
  const auto both = models::simulate_io(src.scenario(), 1);
  models::ScenarioSource alone_src = src;
  alone_src.set("vm.backup.count", 0);
  const models::IoScenario alone_s = alone_src.scenario();
  const auto alone = models::simulate_io(alone_s, 1);
  const auto db = models::io_metric(both, "vm.db.read.iops"), db_alone = models::io_metric(alone, "vm.db.read.iops");
  CAPTURE(db.mean);
  CAPTURE(db_alone.mean);
  CHECK(db.mean + db.half_width < db_alone.mean - db_alone.half_width);
  CHECK(models::io_metric(both, "vm.db.read.clat_p99_us").mean > 2 * models::io_metric(alone, "vm.db.read.clat_p99_us").mean);
  // The backup streams at most the device's bandwidth (3.2 GB/s by default), and close to it.
  const double backup_bytes_per_s = models::io_metric(both, "vm.backup.read.bw_kib").mean * 1024;
  CHECK(backup_bytes_per_s < 3.3e9);
  CHECK(backup_bytes_per_s > 2.5e9);
  CHECK(both.get("device.utilization").mean > 0.95);
  // The aggregate is the VMs' sum; switched off, the backup has no figures.
  CHECK(models::io_metric(both, "host.total.iops").mean ==
        doctest::Approx(db.mean + models::io_metric(both, "vm.backup.read.iops").mean));
  CHECK_THROWS_WITH_AS(models::io_metric(alone, "vm.backup.read.iops"), doctest::Contains("no running VM named 'backup'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(models::io_metric(both, "vm.bakup.read.iops"), doctest::Contains("did you mean 'backup'"),
                       std::invalid_argument);
  CHECK(models::is_io_metric("vm.db.read.clat_p99.9_us"));
  CHECK_FALSE(models::is_io_metric("vm.db.host.total.iops"));
  // One profile left: the MVA answers; two: it says it does not, rather than answer for one.
  CHECK(models::solve_io_mva(alone_s).iops > 0);
  CHECK_THROWS_WITH_AS(models::solve_io_mva(src.scenario()), doctest::Contains("2 [[vm]] profiles (db, backup)"),
                       std::invalid_argument);
}

TEST_CASE("every key of a [[vm]] or [[backend]] is addressable as vm.<name>.<key> and backend.<name>.<key>") {
  models::ScenarioSource src(consolidation("two-backends.toml"));
  src.set("vm.log.workload.iodepth", 4).set("vm.web.count", 3).set("backend.ceph.osd_slots", 8).set("vm.log.host.cache=none");
  src.set("workload.ios", 1234);  // without vm.<name>.: every VM's
  const models::IoScenario s = src.scenario();
  REQUIRE(s.profiles.size() == 2);
  const auto& web = s.profiles[0];
  const auto& log = s.profiles[1];
  CHECK(web.count == 3);
  CHECK(web.scenario.vms == 3);
  CHECK(log.scenario.workload.iodepth == 4);
  CHECK(log.scenario.host.cache == models::CacheMode::none);
  CHECK(log.backend == "ceph");
  CHECK(log.scenario.backend.kind == models::BackendKind::ceph_rbd);
  CHECK(log.scenario.backend.osd_slots == 8);
  CHECK(web.scenario.workload.ios == 1234);
  CHECK(log.scenario.workload.ios == 1234);
  // Shared: the host's cores.
  CHECK(web.scenario.host.cores == 8);
  CHECK(log.scenario.host.cores == 8);
  // base = "FIT.toml": the web profile takes the calibrated parameters, the fitted backend
  // values go to its disk's backend, whose own table sets the kind.
  CHECK(web.backend == "nvme");
  CHECK(web.scenario.backend.kind == models::BackendKind::nvme);
  const models::IoScenario fit = models::load_io_scenario(scenario_path("calibrated/seed000.toml"));
  for (const auto& key : fit.calibration.keys) {
    CAPTURE(key);
    CHECK(models::io_parameter_value(web.scenario, key) == doctest::Approx(models::io_parameter_value(fit, key)));
  }
  CHECK(web.scenario.guest.driver == models::GuestDriver::virtio_scsi);
  // Its parameter uncertainty, by the names that edit it in this file.
  REQUIRE(s.calibration.present());
  CHECK(s.calibration.keys.size() == fit.calibration.keys.size());
  for (const auto& key : s.calibration.keys) {
    CAPTURE(key);
    CHECK((key.rfind("vm.web.", 0) == 0 || key.rfind("backend.nvme.", 0) == 0));
  }
  CHECK(std::find(s.calibration.keys.begin(), s.calibration.keys.end(), "backend.nvme.read_us") != s.calibration.keys.end());
  models::ScenarioSource fixed(consolidation("two-backends.toml"));
  fixed.set("vm.web.guest.cpu_scale", 1.3);
  const auto c = fixed.scenario().calibration;
  for (std::size_t k = 0; k < c.keys.size(); ++k) CHECK(c.fixed_by_set[k] == (c.keys[k] == "vm.web.guest.cpu_scale"));
  // Instances: the first VM keeps a single VM's names; replicas and other profiles are prefixed.
  const auto inst = models::vm_instances(s);
  REQUIRE(inst.size() == 4);
  CHECK(inst[0].prefix.empty());
  CHECK(inst[1].prefix == "web.1.");
  CHECK(inst[2].prefix == "web.2.");
  CHECK(inst[3].prefix == "log.");
  // --set vm.<name>.backend moves a disk to another device.
  models::ScenarioSource moved(consolidation("two-backends.toml"));
  moved.set("vm.log.backend=nvme");
  CHECK(moved.scenario().profiles[1].scenario.backend.kind == models::BackendKind::nvme);
}

TEST_CASE("bad [[vm]] and [[backend]] input: file, line, key and what to write instead") {
  const std::string missing =
      write_file("missing-backend.toml", "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"web\"\nbackend = \"nvme0\"\n");
  CHECK(load_error(missing) ==
        missing + ":6: vm.web.backend: no [[backend]] named \"nvme0\" (did you mean 'nvme'?); the backends are nvme");
  const std::string disk = write_file("missing-disk-backend.toml",
                                      "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"web\"\n[[vm.disk]]\nbackend = \"ssd\"\n");
  CHECK_MESSAGE(load_error(disk).find(disk + ":7: vm.web.backend: no [[backend]] named \"ssd\"") == 0, load_error(disk));
  const std::string twice = write_file("two-names.toml", "[[vm]]\nname = \"web\"\n\n[[vm]]\nname = \"web\"\n");
  CHECK(load_error(twice) == twice +
                                 ":5: vm.name: two [[vm]] tables named \"web\" (lines 2 and 5): give each its own name; for "
                                 "identical VMs write count = N in one table");
  for (const std::string count : {"0", "-1"}) {
    const std::string f = write_file("count" + count + ".toml", "[[vm]]\nname = \"web\"\ncount = " + count + "\n");
    CHECK_MESSAGE(load_error(f).find(f + ":3: vm.web.count: count = " + count + ": a [[vm]] table stands for 1 to 4096") == 0,
                  load_error(f));
  }
  const std::string both =
      write_file("both-backends.toml", "[backend]\nkind = \"nvme\"\n\n[[backend]]\nname = \"a\"\n\n[[vm]]\nname = \"web\"\n");
  CHECK_MESSAGE(load_error(both).find(both + ":4: backend: both a [backend] table (line 1) and [[backend]] tables (line 4)") == 0,
                load_error(both));
  // A key naming no VM, with a did-you-mean; an edit of another VM count switched off is fine.
  const std::string noisy = consolidation("noisy-neighbour.toml");
  CHECK(load_error(noisy, {"vm.bakup.workload.iodepth=4"}) ==
        "(from --set): vm.bakup.workload.iodepth: names no VM: \"bakup\" is not a [[vm]] of this file (did you mean "
        "'backup'?); its VMs are db, backup");
  CHECK(load_error(noisy, {"vm.db.workload.iodeth=4"}).find("unknown key (did you mean 'vm.db.workload.iodepth'?)") !=
        std::string::npos);
  CHECK(load_error(noisy, {"vm.backup.count=0"}).empty());
  CHECK(load_error(noisy, {"vm.backup.count=0", "vm.db.count=0"}).find("at least one VM must run") != std::string::npos);
  CHECK(load_error(noisy, {"vm.db.count=-1"}).find("vm.db.count: expected a whole number of VMs from 0") != std::string::npos);
  CHECK(load_error(noisy, {"vm.count=2"}).find("write vm.<name>.count") != std::string::npos);
  CHECK(load_error(noisy, {"backend.kind=hdd"}).find("write backend.<name>.kind (backends: nvme)") != std::string::npos);
  CHECK(load_error(noisy, {"backend.nvmee.kind=hdd"}).find("names no backend: \"nvmee\"") != std::string::npos);
  // A single-VM file has no named VMs.
  CHECK(load_error(scenario_path("default.toml"), {"vm.web.count=2"}).find("names no VM") != std::string::npos);
  // A per-VM key at the top of a [[vm]] file.
  const std::string top = write_file("top-key.toml", "[workload]\niodepth = 4\n\n[[vm]]\nname = \"web\"\n");
  CHECK(load_error(top).find(top + ":2: workload.iodepth: in a file of [[vm]] tables this is each VM's own") == 0);
  // Each VM is checked as a single-VM file is, its keys named as the file writes them.
  const std::string bad_value = write_file("bad-value.toml", "[[vm]]\nname = \"db\"\n[vm.workload]\niodepth = 0\n");
  CHECK(load_error(bad_value).find(bad_value + ":4: vm.db.workload.iodepth: value 0 is out of range") == 0);
}

TEST_CASE(
    "one device, one set of values: a base's fitted device figures reach its neighbours in either order; two that disagree are "
    "refused") {
  const std::string fit = scenario_path("calibrated/seed000.toml");
  const std::string other_fit = scenario_path("calibrated/seed004.toml");
  const double fitted_read_ns = models::load_io_scenario(fit).backend.read_ns;
  const auto two_vms = [](const std::string& name, const std::string& first_base, const std::string& second_base) {
    std::string text = "[[backend]]\nname = \"nvme\"\nkind = \"nvme\"\n";
    for (const auto& [vm, base] : {std::pair{"a", first_base}, std::pair{"b", second_base}}) {
      text += std::string("\n[[vm]]\nname = \"") + vm + "\"\nbackend = \"nvme\"\n";
      if (!base.empty()) text += "base = \"" + base + "\"\n";
    }
    return write_file(name, text);
  };
  for (const bool fitted_first : {true, false}) {
    CAPTURE(fitted_first);
    const models::IoScenario s =
        models::load_io_scenario(two_vms("order.toml", fitted_first ? fit : "", fitted_first ? "" : fit));
    REQUIRE(s.profiles.size() == 2);
    // The device is built from the first profile's values: both must be the fitted device's.
    CHECK(s.profiles[0].scenario.backend.read_ns == doctest::Approx(fitted_read_ns));
    CHECK(s.profiles[1].scenario.backend.read_ns == doctest::Approx(fitted_read_ns));
  }
  const std::string clash = two_vms("clash.toml", fit, other_fit);
  const std::string e = load_error(clash);
  CHECK(e.find(clash + ":") == 0);
  CHECK(e.find("device nvme is shared, but VM a gives backend.read_us = ") != std::string::npos);
  CHECK(e.find("set backend.nvme.read_us in its [[backend]] table") != std::string::npos);
  // Said in the [[backend]] table, the value is the file's choice, and the fits no longer clash there.
  const std::string chosen = write_file("chosen.toml",
                                        "[[backend]]\nname = \"nvme\"\nkind = \"nvme\"\nread_us = 80\nwrite_us = 60\n"
                                        "service_cv = 1\nbandwidth = 3e9\nwrite_bandwidth = 2e9\n\n"
                                        "[[vm]]\nname = \"a\"\nbackend = \"nvme\"\nbase = \"" +
                                            fit +
                                            "\"\n\n"
                                            "[[vm]]\nname = \"b\"\nbackend = \"nvme\"\nbase = \"" +
                                            other_fit + "\"\n");
  const std::string chosen_error = load_error(chosen);
  CHECK(chosen_error.find("backend.read_us") == std::string::npos);
}

TEST_CASE("two calibrated profiles keep both parameter uncertainties: each profile's draws, paired across profiles") {
  const std::string fit = scenario_path("calibrated/seed000.toml");
  const std::string other_fit = scenario_path("calibrated/seed004.toml");
  const std::string file =
      write_file("two-fits.toml",
                 "[[backend]]\nname = \"a\"\nkind = \"nvme\"\n\n[[backend]]\nname = \"b\"\nkind = \"nvme\"\n\n"
                 "[[vm]]\nname = \"x\"\nbackend = \"a\"\nbase = \"" +
                     fit +
                     "\"\n\n"
                     "[[vm]]\nname = \"y\"\nbackend = \"b\"\nbase = \"" +
                     other_fit + "\"\n");
  const models::IoScenario s = models::load_io_scenario(file);
  const models::CalibrationUncertainty& c = s.calibration;
  const models::CalibrationUncertainty& cx = models::load_io_scenario(fit).calibration;
  const models::CalibrationUncertainty& cy = models::load_io_scenario(other_fit).calibration;
  REQUIRE(c.keys.size() == cx.keys.size() + cy.keys.size());
  REQUIRE(c.modes.size() == static_cast<std::size_t>(c.draws));
  // Every draw of the whole is one of each profile's own draws: x's in its order, y's shuffled,
  // so that y's strata do not move with x's; over all draws, each profile's own draws, each once.
  std::vector<std::vector<double>> x_rows, y_rows, x_own, y_own;
  for (int d = 0; d < c.draws; ++d) {
    const std::vector<double>& row = c.centre(c.component_of_draw(d, c.draws));
    x_rows.emplace_back(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(cx.keys.size()));
    y_rows.emplace_back(row.begin() + static_cast<std::ptrdiff_t>(cx.keys.size()), row.end());
    x_own.push_back(cx.centre(cx.component_of_draw(d, c.draws)));
    y_own.push_back(cy.centre(cy.component_of_draw(d, c.draws)));
  }
  CHECK(x_rows == x_own);
  CHECK(y_rows != y_own);
  std::sort(y_rows.begin(), y_rows.end());
  std::sort(y_own.begin(), y_own.end());
  CHECK(y_rows == y_own);
  // Not a point: the draws differ (before, two calibrated profiles dropped every draw).
  CHECK(std::adjacent_find(x_rows.begin(), x_rows.end(), std::not_equal_to<>()) != x_rows.end());
}
