// The multi-class MVA of several VM profiles on one host (models::solve_io_mva_classes) against
// the single-class MVA where they must agree and against the simulation where the host's cores
// bound the aggregate.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {
std::string scenario_path(const std::string& name) { return std::string(VQSIM_SOURCE_DIR) + "/scenarios/" + name; }

std::string write_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-mva-classes";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// Two profiles on a null device and 2 host cores: `a` VMs reading 4 KiB at iodepth 8, `b` VMs
// writing 16 KiB at iodepth 4 (main loop, aio=threads: the default QEMU process).
std::string null_host(int a, int b) {
  return write_file("null-" + std::to_string(a) + "-" + std::to_string(b) + ".toml",
                    "[run]\nseed = 1\nreplications = 2\n[host]\ncores = 2\n"
                    "[[backend]]\nname = \"null\"\nkind = \"null\"\n"
                    "[[vm]]\nname = \"a\"\ncount = " +
                        std::to_string(a) +
                        "\nbackend = \"null\"\n[vm.workload]\nrw = \"randread\"\nbs = \"4k\"\niodepth = 8\nios = 4000\n"
                        "ramp_time = \"5ms\"\n"
                        "[[vm]]\nname = \"b\"\ncount = " +
                        std::to_string(b) +
                        "\nbackend = \"null\"\n[vm.workload]\nrw = \"randwrite\"\nbs = \"16k\"\niodepth = 4\nios = 4000\n"
                        "ramp_time = \"5ms\"\n");
}

const models::IoMvaStage& stage(const models::IoMvaResult& r, const std::string& name) {
  for (const auto& st : r.stages)
    if (st.name == name) return st;
  FAIL("no stage " << name);
  return r.stages.front();
}
}  // namespace

TEST_CASE("the multi-class MVA of one VM is the single-class MVA's answer") {
  for (const char* file : {"default.toml", "seed000-virtio-blk.toml", "seed004-vm.toml"}) {
    CAPTURE(file);
    const models::IoScenario s = models::load_io_scenario(scenario_path(file));
    const models::IoMvaResult one = models::solve_io_mva(s);
    const models::IoMvaClassesResult many = models::solve_io_mva_classes(s);
    REQUIRE(many.profiles.size() == 1);
    CHECK(many.exact);
    CHECK(many.profiles[0].figures.iops == doctest::Approx(one.iops).epsilon(1e-6));
    CHECK(many.profiles[0].figures.lat_mean_ns == doctest::Approx(one.lat_mean_ns).epsilon(1e-6));
    CHECK(many.profiles[0].figures.slat_mean_ns == doctest::Approx(one.slat_mean_ns).epsilon(1e-6));
  }
}

TEST_CASE("two [[vm]] profiles on one NVMe: one class each, the device shared, exact on a small lattice") {
  const models::IoScenario s = models::load_io_scenario(scenario_path("consolidation/noisy-neighbour.toml"));
  const models::IoMvaClassesResult r = models::solve_io_mva_classes(s);
  REQUIRE(r.profiles.size() == 2);
  CHECK(r.exact);
  CHECK(r.lattice_points == doctest::Approx(2.0 * 33.0));  // db: 1 request in flight, backup: 32
  CHECK(r.profiles[0].name == "db");
  CHECK(r.profiles[1].name == "backup");
  CHECK(r.total_iops == doctest::Approx(r.profiles[0].figures.iops + r.profiles[1].figures.iops));
  // The device is one station both visit; each profile's own threads have the profile's names.
  REQUIRE(r.shared.size() == 1);
  CHECK(r.shared[0].name == "device");
  CHECK(r.shared[0].utilization == doctest::Approx(r.shared[0].by_profile[0] + r.shared[0].by_profile[1]));
  CHECK(r.shared[0].by_profile[1] > 0.9);  // the backup's 1 MiB reads fill it
  CHECK(stage(r.profiles[0].figures, "host.iothread").utilization > 0);
  CHECK(stage(r.profiles[1].figures, "backup.host.main_loop").utilization > 0);
  // The database alone is faster than beside the backup.
  const models::IoMvaClassesResult alone = models::solve_io_mva_classes(
      models::load_io_scenario(scenario_path("consolidation/noisy-neighbour.toml"), {"vm.backup.count=0"}));
  REQUIRE(alone.profiles.size() == 1);
  CHECK(alone.profiles[0].figures.iops > r.profiles[0].figures.iops);
}

TEST_CASE(
    "K VMs of two profiles on a null device with host.cores = 2: the aggregate saturates at the cores' capacity, the MVA's "
    "bound") {
  // Past a few VMs the two cores are busy all the time; then the host's I/Os times their CPU
  // work per I/O (the MVA's demands at host.cpu) is the cores' capacity, and the aggregate
  // stops growing. The MVA's own aggregate is close to the simulation's.
  double previous = 0;
  for (const auto& profile_vms : {std::pair{1, 1}, std::pair{3, 2}, std::pair{6, 4}}) {
    const int a = profile_vms.first, b = profile_vms.second;  // named, for CAPTURE (see test_calibrate.cc)
    CAPTURE(a);
    CAPTURE(b);
    const models::IoScenario s = models::load_io_scenario(null_host(a, b));
    const models::IoMvaClassesResult mva = models::solve_io_mva_classes(s);
    const models::IoRunReport des = models::simulate_io(s, 1);
    const double total = models::io_metric(des, "host.total.iops").mean;
    const double cpu = des.get("host.cpu.utilization").mean;
    // The utilization law with the MVA's CPU demand per I/O and the simulation's throughput.
    double busy = 0;  // cores kept busy
    for (const auto& p : mva.profiles)
      busy +=
          models::io_metric(des, "vm." + p.name + ".total.iops").mean * p.count * stage(p.figures, "host.cpu").demand_ns / 1e9;
    CAPTURE(total);
    CAPTURE(cpu);
    CAPTURE(busy);
    CAPTURE(mva.total_iops);
    // The MVA's CPU work per I/O is the simulation's within a few percent (its kicks and
    // interrupts per I/O are estimates from the threads' utilization: 4% high here).
    CHECK(busy / (2 * cpu) > 0.97);
    CHECK(busy / (2 * cpu) < 1.06);
    CHECK(mva.total_iops == doctest::Approx(total).epsilon(0.10));
    if (a + b >= 5) {
      CHECK(cpu > 0.97);
      CHECK(mva.bottleneck == "host.cpu");
      CHECK(total <= 1.05 * previous);  // saturated: more VMs add nothing
      // The aggregate is at the cores' bound: 2 cores over the MVA's CPU work per I/O, and the
      // MVA's own answer (which saturates them too) within 6% of the simulation's.
      CHECK(mva.shared.front().name == "host.cpu");
      CHECK(mva.shared.front().utilization > 0.98);
      CHECK(total == doctest::Approx(mva.total_iops).epsilon(0.06));
    }
    previous = total;
  }
}

TEST_CASE("the multi-class MVA refuses a mix of open- and closed-loop profiles") {
  const models::IoScenario s =
      models::load_io_scenario(scenario_path("consolidation/noisy-neighbour.toml"), {"vm.db.workload.rate_iops=1000"});
  CHECK_THROWS_WITH_AS(models::solve_io_mva_classes(s), doctest::Contains("open loop"), std::invalid_argument);
}

namespace {
// A single-VM file running `jobfile` on an NVMe drive (2 vCPUs, one IOThread, aio=native).
std::string jobs_vm(const std::string& name, const std::string& jobfile, int vcpus = 2) {
  write_file(name + ".fio", jobfile);
  return write_file(name + ".toml",
                    "[run]\nseed = 1\nreplications = 2\n[workload]\nfio_job = \"" + name +
                        ".fio\"\nios = 8000\nramp_time = \"5ms\"\n[guest]\nvcpus = " + std::to_string(vcpus) +
                        "\n[host]\niothreads = 1\naio = \"native\"\ncache = \"none\"\n[backend]\nkind = \"nvme\"\n");
}
const std::string kJobGlobal = "[global]\nioengine=libaio\ndirect=1\n";
}  // namespace

TEST_CASE("a VM's fio jobs are classes of one VM: reader-writer.toml's reader and writer, each near the simulation") {
  const models::IoScenario s = models::load_io_scenario(scenario_path("consolidation/reader-writer.toml"));
  const models::IoMvaClassesResult r = models::solve_io_mva_classes(s);
  CHECK(r.exact);
  CHECK(r.lattice_points == doctest::Approx(9.0 * 2.0 * 2.0 * 2.0));  // reader 8 in flight, writer 1, two web VMs of 1
  REQUIRE(r.profiles.size() == 2);
  const models::IoMvaProfile& app = r.profiles[0];
  REQUIRE(app.jobs.size() == 2);
  CHECK(app.jobs[0].name == "reader");
  CHECK(app.jobs[1].name == "writer");
  CHECK(app.population == 9);
  CHECK(r.profiles[1].jobs.empty());  // web runs one job
  const models::IoMvaResult &reader = app.jobs[0].figures, &writer = app.jobs[1].figures;
  // The VM's figures are its jobs' together; its own stations are the jobs' one station each.
  CHECK(app.figures.iops == doctest::Approx(reader.iops + writer.iops));
  CHECK(app.figures.read_iops == doctest::Approx(reader.iops));
  CHECK(app.figures.write_iops == doctest::Approx(writer.iops));
  CHECK(app.figures.lat_mean_ns ==
        doctest::Approx((reader.iops * reader.lat_mean_ns + writer.iops * writer.lat_mean_ns) / app.figures.iops));
  CHECK(stage(app.figures, "host.iothread").utilization ==
        doctest::Approx(stage(reader, "host.iothread").utilization + stage(writer, "host.iothread").utilization));
  // Each job visits the device with its own demand (16 KiB writes, 4 KiB reads).
  CHECK(stage(writer, "device").demand_ns != doctest::Approx(stage(reader, "device").demand_ns));
  // Metric names: vm.<name>.<job>.*, the VM's bandwidth from each job's block size.
  CHECK(models::io_metric_mva_classes(r, s, "vm.app.writer.write.iops") == doctest::Approx(writer.write_iops));
  CHECK(models::io_metric_mva_classes(r, s, "vm.app.reader.read.lat_mean_us") == doctest::Approx(reader.lat_mean_ns / 1e3));
  CHECK(models::io_metric_mva_classes(r, s, "vm.app.total.bw_kib") ==
        doctest::Approx((reader.iops * 4096 + writer.iops * 16384) / 1024));
  CHECK_THROWS_WITH_AS(models::io_metric_mva_classes(r, s, "vm.app.scan.read.iops"), doctest::Contains("no fio job named 'scan'"),
                       std::invalid_argument);
  // Against the simulation, job by job (measured: reader +1.2% IOPS, writer -0.5%).
  const models::IoRunReport des = models::simulate_io(s, 1);
  for (const auto& job_mva : {std::pair{"reader", &reader}, std::pair{"writer", &writer}}) {
    const char* job = job_mva.first;  // named, for CAPTURE (see test_calibrate.cc)
    const auto* mva = job_mva.second;
    CAPTURE(job);
    const std::string at = std::string("vm.app.") + job + ".total.";
    CHECK(mva->iops == doctest::Approx(models::io_metric(des, at + "iops").mean).epsilon(0.05));
    CHECK(mva->lat_mean_ns / 1e3 == doctest::Approx(models::io_metric(des, at + "lat_mean_us").mean).epsilon(0.05));
  }
}

TEST_CASE("two identical jobs in a VM of one vCPU are the one job of numjobs 2, split in half") {
  // With more fio threads than vCPUs both networks have the same stations (the vCPUs shared by
  // every thread), so the two classes must add up to the one class exactly.
  const std::string job = "rw=randread\nbs=4k\niodepth=4\n";
  const models::IoScenario two = models::load_io_scenario(jobs_vm("twins", kJobGlobal + "[a]\n" + job + "[b]\n" + job, 1));
  const models::IoScenario one = models::load_io_scenario(jobs_vm("one", kJobGlobal + "[a]\n" + job + "numjobs=2\n", 1));
  const models::IoMvaClassesResult r = models::solve_io_mva_classes(two);
  const models::IoMvaResult single = models::solve_io_mva(one);
  REQUIRE(r.profiles.size() == 1);
  REQUIRE(r.profiles[0].jobs.size() == 2);
  CHECK(r.profiles[0].figures.iops == doctest::Approx(single.iops).epsilon(1e-6));
  CHECK(r.profiles[0].figures.lat_mean_ns == doctest::Approx(single.lat_mean_ns).epsilon(1e-6));
  CHECK(r.profiles[0].jobs[0].figures.iops == doctest::Approx(single.iops / 2).epsilon(1e-6));
  CHECK(r.profiles[0].jobs[1].figures.iops == doctest::Approx(single.iops / 2).epsilon(1e-6));
  // Single-VM metric names: <job>.<metric>.
  CHECK(models::io_metric_mva_classes(r, two, "b.read.iops") == doctest::Approx(single.iops / 2).epsilon(1e-6));
}

TEST_CASE("stonewall groups are solved one after the other: a later group's job is that job alone") {
  const models::IoScenario s = models::load_io_scenario(jobs_vm(
      "groups",
      kJobGlobal + "[reader]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=2\n[writer]\nstonewall\nrw=randwrite\nbs=16k\niodepth=2\n"));
  const models::IoMvaClassesResult r = models::solve_io_mva_classes(s);
  CHECK(r.phases == 2);
  REQUIRE(r.profiles[0].jobs.size() == 2);
  CHECK(r.profiles[0].jobs[1].phase == 1);
  // The VM's and the host's figures are the first group's (as the simulation's report is).
  CHECK(r.total_iops == doctest::Approx(r.profiles[0].jobs[0].figures.iops));
  const auto alone = [](const std::string& name, const std::string& job) {
    return models::solve_io_mva(models::load_io_scenario(jobs_vm(name, kJobGlobal + job)));
  };
  const models::IoMvaResult writer = alone("writer-alone", "[writer]\nrw=randwrite\nbs=16k\niodepth=2\n");
  const models::IoMvaResult reader = alone("reader-alone", "[reader]\nrw=randread\nbs=4k\niodepth=4\nnumjobs=2\n");
  CHECK(r.profiles[0].jobs[1].figures.iops == doctest::Approx(writer.iops).epsilon(1e-9));
  CHECK(r.profiles[0].jobs[1].figures.lat_mean_ns == doctest::Approx(writer.lat_mean_ns).epsilon(1e-9));
  CHECK(r.profiles[0].jobs[0].figures.iops == doctest::Approx(reader.iops).epsilon(1e-9));
}

TEST_CASE("the multi-class MVA refuses a VM whose fio jobs mix open and closed loop") {
  const models::IoScenario s =
      models::load_io_scenario(jobs_vm("mixed", kJobGlobal + "[a]\nrw=randread\nrate_iops=1000\n[b]\nrw=randwrite\n"));
  CHECK_THROWS_WITH_AS(models::solve_io_mva_classes(s), doctest::Contains("open loop"), std::invalid_argument);
}
