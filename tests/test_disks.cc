// Several disks per VM: [[vm.disk]] tables, each its own virtio-blk device on the backend it
// names, driven by the fio jobs whose filename= names it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
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
std::string example() { return std::string(VQSIM_SOURCE_DIR) + "/scenarios/consolidation/db-data-log.toml"; }

std::string write_disk_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-disks";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string disk_error(const std::string& path, const std::vector<std::string>& edits = {}) {
  try {
    (void)models::load_io_scenario(path, edits);
  } catch (const models::ConfigError& e) {
    return e.what();
  }
  return "";
}

models::IoScenario short_example(const std::vector<std::string>& edits = {}) {
  models::ScenarioSource src(example());
  src.set("workload.ios", 4000).set("run.replications", 2);
  for (const auto& e : edits) src.set(e);
  return src.scenario();
}

// A VM "db" of two disks on two devices whose jobs (in `jobs`, a fio job file's text) name them.
std::string two_disk_file(const std::string& name, const std::string& jobs, const std::string& vm_extra = "") {
  const std::string fio = write_disk_file(name + ".fio", jobs);
  return write_disk_file(name + ".toml",
                         "[[backend]]\nname = \"nvme\"\nkind = \"nvme\"\n\n[[backend]]\nname = \"ssd\"\nkind = "
                         "\"sata-ssd\"\n\n[[vm]]\nname = \"db\"\n" +
                             vm_extra +
                             "\n[[vm.disk]]\nbackend = \"nvme\"\n\n[[vm.disk]]\nbackend = \"ssd\"\n\n[vm.workload]\n"
                             "fio_job = \"" +
                             fio + "\"\n");
}
}  // namespace

TEST_CASE("a VM of one [[vm.disk]] is the VM of one disk, event for event") {
  const std::string with = write_disk_file("one-disk.toml",
                                           "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"web\"\n[[vm.disk]]\nbackend = "
                                           "\"nvme\"\nfilename = \"/dev/vdq\"\n[vm.workload]\nios = 3000\n");
  const std::string without = write_disk_file(
      "no-disk.toml", "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"web\"\nbackend = \"nvme\"\n[vm.workload]\nios = 3000\n");
  models::IoScenario a = models::load_io_scenario(with, {"run.replications=2"});
  models::IoScenario b = models::load_io_scenario(without, {"run.replications=2"});
  REQUIRE(a.profiles.front().scenario.disks.size() == 1);
  CHECK(a.profiles.front().scenario.disks.front().filename == "/dev/vdq");
  CHECK_FALSE(a.profiles.front().scenario.multi_disk());
  a.run.hash_events = b.run.hash_events = true;
  const auto ra = models::simulate_io(a, 1), rb = models::simulate_io(b, 1);
  CHECK(ra.event_hash == rb.event_hash);
  CHECK(ra.get("read.iops").mean == rb.get("read.iops").mean);
}

TEST_CASE("two disks on two devices: each job's I/Os reach the device its filename= names, through the disk's own stages") {
  const models::IoScenario s = short_example();
  REQUIRE(s.profiles.size() == 2);
  const models::IoScenario& db = s.profiles[0].scenario;
  REQUIRE(db.disks.size() == 2);
  CHECK(db.disks[0].name == "vda");
  CHECK(db.disks[1].filename == "/dev/vdb");
  CHECK(db.disks[1].backend == "ssd");
  CHECK(db.disks[1].params.kind == models::BackendKind::sata_ssd);
  CHECK(db.disks[0].params.kind == models::BackendKind::nvme);
  REQUIRE(db.jobs.size() == 2);
  CHECK(db.jobs[0].workload.disk == 0);  // data: filename=/dev/vda
  CHECK(db.jobs[1].workload.disk == 1);  // log: filename=/dev/vdb

  // The second disk has its own tags, ring (interrupts) and AIO state; the VM's IOThread serves both.
  std::vector<std::string> names;
  for (const auto& st : models::io_stages(s)) names.push_back(st.name);
  const auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(has("disk:vdb.guest.tags1"));
  CHECK(has("disk:vdb.virtqueue.irq1"));
  CHECK(has("disk:vdb.aio.slots"));
  CHECK(has("host.iothread0"));
  CHECK_FALSE(has("disk:vdb.host.iothread0"));
  CHECK(has("ssd.device"));

  const models::IoRunReport r = models::simulate_io(s, 1);
  CHECK(r.little_ok);
  // Per disk: the log disk carries exactly the log job's writes, the data disk the data job's.
  CHECK(r.get("disk:vdb.write.iops").mean == doctest::Approx(r.get("fio:log.write.iops").mean));
  CHECK(r.get("disk:vdb.read.iops").mean == 0);
  CHECK(r.get("disk:vda.read.iops").mean == doctest::Approx(r.get("fio:data.read.iops").mean));
  // The SSD serves the log disk alone; the NVMe the data disk and both web VMs.
  CHECK(r.get("ssd.device.throughput_per_s").mean == doctest::Approx(r.get("fio:log.write.iops").mean).epsilon(0.02));
  const double nvme_in = r.get("disk:vda.read.iops").mean + r.get("disk:vda.write.iops").mean + r.get("web.read.iops").mean +
                         r.get("web.1.read.iops").mean;
  CHECK(r.get("device.throughput_per_s").mean == doctest::Approx(nvme_in).epsilon(0.02));
}

TEST_CASE("a disk's figures are metrics: vm.<name>.disk:<disk>.<direction>.<figure>") {
  const models::IoScenario s = short_example();
  CHECK(models::io_metric_scenario_error(s, "vm.db.disk:vdb.write.iops").empty());
  CHECK(models::io_metric_scenario_error(s, "vm.db.disk:vdc.write.iops") ==
        "metric vm.db.disk:vdc.write.iops: vm.db has no disk:vdc; its disks are 'disk:vda', 'disk:vdb'");
  CHECK(models::io_metric_scenario_error(s, "vm.web.disk:vda.read.iops") ==
        "metric vm.web.disk:vda.read.iops: vm.web has one disk, so it has no per-disk figures; write vm.web.read.iops");
  const models::IoRunReport r = models::simulate_io(s, 1);
  CHECK(models::io_metric(r, "vm.db.disk:vdb.write.iops").mean == r.get("disk:vdb.write.iops").mean);
  CHECK(models::io_metric(r, "vm.db.disk:vdb.write.iops").mean ==
        doctest::Approx(models::io_metric(r, "vm.db.log.write.iops").mean));
  CHECK(models::io_metric(r, "vm.db.disk:vda.total.iops").mean ==
        doctest::Approx(models::io_metric(r, "vm.db.data.total.iops").mean));
}

TEST_CASE("two disks on one device: one device, which both disks' I/Os fill") {
  const models::IoScenario s = short_example({"vm.db.disk.1.backend=nvme"});
  const models::IoScenario& db = s.profiles[0].scenario;
  CHECK(db.disks[1].backend == "nvme");
  CHECK(db.disks[1].params.kind == models::BackendKind::nvme);
  bool unused_warned = false;
  for (const auto& w : s.warnings)
    unused_warned = unused_warned || w.find("backend.ssd: no running VM's disk") != std::string::npos;
  CHECK(unused_warned);
  const models::IoRunReport r = models::simulate_io(s, 1);
  CHECK_FALSE(r.has("ssd.device.throughput_per_s"));
  // Every I/O of the db VM (both disks) and of the web VMs.
  const double nvme_in =
      r.get("read.iops").mean + r.get("write.iops").mean + r.get("web.read.iops").mean + r.get("web.1.read.iops").mean;
  CHECK(r.get("device.throughput_per_s").mean == doctest::Approx(nvme_in).epsilon(0.02));
  // A device's keys reach every disk that names it: backend.ssd.* the log disk's device.
  const models::IoScenario slow = short_example({"backend.ssd.write_us=300"});
  CHECK(slow.profiles[0].scenario.disks[1].params.write_ns == doctest::Approx(300e3));
  CHECK(slow.profiles[0].scenario.backend.write_ns != doctest::Approx(300e3));
}

TEST_CASE("a disk pinned to an IOThread: its requests are served there, the other disk's on the VM's mapping") {
  const models::IoScenario s = short_example({"vm.db.host.iothreads=2", "vm.db.disk.0.iothread=0", "vm.db.disk.1.iothread=1"});
  CHECK(s.profiles[0].scenario.disks[1].iothread == 1);
  const models::IoRunReport r = models::simulate_io(s, 1);
  // The log job's writes alone visit IOThread 1 (twice each: submit and completion).
  CHECK(r.get("host.iothread1.throughput_per_s").mean == doctest::Approx(2 * r.get("fio:log.write.iops").mean).epsilon(0.02));
}

TEST_CASE("the VM's QEMU main loop serves both of its disks: every request of either passes it twice") {
  const models::IoScenario s = short_example({"vm.db.host.iothreads=0"});
  const models::IoRunReport r = models::simulate_io(s, 1);
  const double db_ios = r.get("read.iops").mean + r.get("write.iops").mean;  // both disks
  CHECK(r.get("host.main_loop.throughput_per_s").mean == doctest::Approx(2 * db_ios).epsilon(0.02));
  CHECK_FALSE(r.has("disk:vdb.host.main_loop.throughput_per_s"));
}

TEST_CASE("several disks: which job drives which disk is never guessed") {
  const std::string reader = "[global]\nioengine=libaio\n\n[a]\nrw=randread\nfilename=/dev/vda\n\n[b]\nrw=write\n";
  const std::string none = two_disk_file("none", reader);
  CHECK_MESSAGE(disk_error(none).find(":19: vm.db.workload.fio_job: ") != std::string::npos, disk_error(none));
  CHECK_MESSAGE(disk_error(none).find("none.fio:8: job 'b': names no disk, and vm.db has 2 (/dev/vda on nvme, /dev/vdb on "
                                      "ssd): write filename=/dev/vda (or /dev/vdb, ...) in its section") != std::string::npos,
                disk_error(none));
  const std::string spread = two_disk_file("spread", "[a]\nrw=randread\nfilename=/dev/vda:/dev/vdb\n");
  CHECK_MESSAGE(disk_error(spread).find("spread.fio:3: job 'a'") == std::string::npos,
                disk_error(spread));  // one job: "its fio job"
  CHECK_MESSAGE(
      disk_error(spread).find("spread.fio:3: its fio job: filename=/dev/vda:/dev/vdb names several files") != std::string::npos,
      disk_error(spread));
  const std::string other = two_disk_file("other", "[a]\nrw=randread\nfilename=/dev/sdb\n");
  CHECK_MESSAGE(disk_error(other).find("filename=/dev/sdb is none of vm.db's disks (/dev/vda on nvme, /dev/vdb on ssd)") !=
                    std::string::npos,
                disk_error(other));
  // Without a job file: the one job of the workload keys names no disk.
  const std::string keys = write_disk_file("keys.toml",
                                           "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"db\"\n[[vm.disk]]\nbackend = "
                                           "\"nvme\"\n[[vm.disk]]\nbackend = \"nvme\"\n");
  CHECK_MESSAGE(
      disk_error(keys).find("keys.toml:4: vm.db.disk: its fio job (its [vm.workload] keys): names no disk") != std::string::npos,
      disk_error(keys));
  // A job file whose one job names a disk: the other is idle, with a warning.
  const std::string idle = two_disk_file("idle", "[a]\nrw=randread\nfilename=/dev/vdb\n");
  const models::IoScenario s = models::load_io_scenario(idle);
  CHECK(s.profiles[0].scenario.workload.disk == 1);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("idle.toml:12: vm.db.disk.0: no fio job of vm.db names /dev/vda (filename=): the disk is idle") !=
        std::string::npos);
}

TEST_CASE("bad [[vm.disk]] input and edits: file, line, key and what to write instead") {
  const std::string ok = two_disk_file("ok", "[a]\nfilename=/dev/vda\n\n[b]\nfilename=/dev/vdb\nrw=write\n");
  CHECK(disk_error(ok).empty());
  CHECK(disk_error(ok, {"vm.db.disk.2.backend=nvme"}) ==
        "(from --set): vm.db.disk.2.backend: vm.db has 2 disks (disk.0 to disk.1); an edit cannot add one: write another "
        "[[vm.disk]] table in the file");
  CHECK(disk_error(ok, {"vm.db.disk.1.backend=sdd"}) ==
        "(from --set): vm.db.disk.1.backend: no [[backend]] named \"sdd\" (did you mean 'ssd'?); the backends are nvme, ssd");
  CHECK(disk_error(ok, {"vm.db.backend=ssd"})
            .find("vm.db has 2 disks: name the one whose backend this is, "
                  "vm.db.disk.<i>.backend") != std::string::npos);
  CHECK(disk_error(ok, {"vm.db.disk.1.colour=1"}).find("vm.db.disk.1.colour: unknown key of a disk") != std::string::npos);
  CHECK(disk_error(ok, {"vm.db.disk.1.filename=/dev/vda"}).find("two disks with filename /dev/vda") != std::string::npos);
  CHECK(disk_error(ok, {"vm.db.disk.1.iothread=0"})
            .find("vm.db.disk.1.iothread: IOThread 0, but the VM has none "
                  "(host.iothreads = 0") != std::string::npos);
  CHECK(disk_error(ok, {"vm.db.host.iothreads=1", "vm.db.disk.1.iothread=1"}).find("IOThread 1, but the VM has 1 (0 to 0)") !=
        std::string::npos);
  CHECK(disk_error(ok, {"vm.db.guest.driver=virtio-scsi"})
            .find("ok.toml:15: vm.db.disk.1: several disks are modelled with "
                  "guest.driver = virtio-blk") != std::string::npos);
  // A disk's own keys in the file.
  const std::string typo = write_disk_file("typo.toml",
                                           "[[backend]]\nname = \"nvme\"\n\n[[vm]]\nname = \"db\"\n[[vm.disk]]\nbakend = "
                                           "\"nvme\"\n");
  CHECK(disk_error(typo) == typo +
                                ":7: vm.db.disk.0.bakend: unknown key of a [[vm.disk]] table (did you mean 'backend'?) (its "
                                "keys are backend, filename, iothread)");
  const std::string single =
      write_disk_file("single.toml", "[[backend]]\nname = \"nvme\"\n[[vm]]\nname = \"db\"\n[vm.disk]\nbackend = \"nvme\"\n");
  CHECK(disk_error(single).find(single + ":6: vm.db.disk.backend: a VM's disks are [[vm.disk]] tables") == 0);
  std::string many = "[[vm]]\nname = \"db\"\n";
  for (int i = 0; i < 17; ++i) many += "[[vm.disk]]\n";
  CHECK(disk_error(write_disk_file("many.toml", many)).find("17 [[vm.disk]] tables: a VM has 1 to 16 disks") !=
        std::string::npos);
  const std::string missing = write_disk_file("missing.toml",
                                              "[[backend]]\nname = \"a\"\n[[backend]]\nname = \"b\"\n\n[[vm]]\nname = "
                                              "\"db\"\n[[vm.disk]]\nbackend = \"a\"\n[[vm.disk]]\n");
  CHECK(disk_error(missing).find(missing + ":10: vm.db.disk.1.backend: missing: each disk names its device among several") == 0);
}

TEST_CASE("the MVA refuses a VM of several disks rather than answer for one") {
  models::ScenarioSource src(example());
  src.set("vm.db.workload.fio_job=\"" + write_disk_file("one-job.fio", "[log]\nfilename=/dev/vdb\nrw=write\n") + "\"");
  const models::IoScenario s = src.scenario();
  REQUIRE(s.profiles[0].scenario.multi_disk());
  CHECK_THROWS_WITH_AS(models::solve_io_mva_classes(s),
                       doctest::Contains("vm.db has 2 disks (vda on nvme, vdb on ssd): the MVA models one disk per VM"),
                       std::invalid_argument);
  CHECK_THROWS_AS(models::solve_io_mva(s.profiles[0].scenario), std::invalid_argument);
  // Without the db VM, the web VMs alone are solved as before.
  src.set("vm.db.count=0");
  CHECK(models::solve_io_mva(src.scenario()).iops > 0);
}
