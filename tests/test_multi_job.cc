// fio job files of several jobs: each job modelled in the one guest with its own figures,
// stonewall groups run one after the other, the metrics that name a job, and what is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_results.h"
#include "models/scenario.h"

using namespace vqsim;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-multi-job";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// A scenario that runs `job` (a job file's text) for a short while; `extra` is more TOML.
models::IoScenario with_job(const std::string& stem, const std::string& job, const std::string& extra = "") {
  write_file(stem + ".fio", job);
  const std::string toml = write_file(stem + ".toml", "[workload]\nfio_job = \"" + stem + ".fio\"\nios = 20000\n" + extra);
  return models::load_io_scenario(toml, {"run.replications=4"});
}

// a and b agree within their 95% intervals.
bool overlap(const sim::Interval& a, const sim::Interval& b) { return std::fabs(a.mean - b.mean) <= a.half_width + b.half_width; }

std::string load_error(const std::string& stem, const std::string& job) {
  try {
    with_job(stem, job);
  } catch (const models::ConfigError& e) {
    return e.what();
  }
  return "";
}

const char* const kGlobal = "[global]\nioengine=libaio\ndirect=1\nbs=4k\n";
// One vCPU: the reader's and the writer's threads share it, so the writer costs the reader.
const char* const kOneVcpu = "[guest]\nvcpus = 1\n";

}  // namespace

TEST_CASE("a reader and a writer in one guest: each job's figures, and the reader gets no more than alone") {
  const auto both =
      with_job("rw", std::string(kGlobal) + "[reader]\nrw=randread\niodepth=4\n[writer]\nrw=randwrite\niodepth=1\n", kOneVcpu);
  REQUIRE(both.jobs.size() == 2);
  CHECK(both.jobs[0].name == "reader");
  CHECK(both.jobs[1].workload.rw == "randwrite");
  CHECK(both.jobs[0].workload.iodepth == 4);
  CHECK(both.fio_threads() == 2);
  const auto alone = with_job("r", std::string(kGlobal) + "[reader]\nrw=randread\niodepth=4\n", kOneVcpu);
  CHECK(alone.jobs.empty());  // one job: today's scenario, unchanged
  const auto r2 = models::simulate_io(both, 1);
  const auto r1 = models::simulate_io(alone, 1);
  const auto reader = r2.get("fio:reader.read.iops"), writer = r2.get("fio:writer.write.iops");
  CHECK(reader.mean > 0);
  CHECK(writer.mean > 0);
  CHECK(r2.get("fio:reader.write.iops").mean == 0);
  CHECK(r2.get("fio:writer.read.iops").mean == 0);
  // The VM's figures are every job's together.
  CHECK(r2.get("read.iops").mean == doctest::Approx(reader.mean));
  CHECK(r2.get("write.iops").mean == doctest::Approx(writer.mean));
  const auto single = r1.get("read.iops");
  CHECK(reader.mean <= single.mean + single.half_width + reader.half_width);
  // The metrics name each job.
  CHECK(models::io_metric(r2, "reader.read.iops").mean == reader.mean);
  CHECK(models::io_metric(r2, "writer.write.clat_p99_us").mean > 0);
  CHECK(models::io_metric(r2, "writer.total.iops").mean == doctest::Approx(writer.mean));
  CHECK_THROWS_WITH_AS(models::io_metric(r2, "raeder.read.iops"),
                       doctest::Contains("no fio job named 'raeder' in the scenario's job file; its jobs are 'reader', 'writer'"),
                       std::invalid_argument);
  CHECK(models::io_metric_scenario_error(both, "raeder.read.iops").find("its jobs are 'reader', 'writer'") != std::string::npos);
  CHECK(models::io_metric_scenario_error(both, "reader.read.iops").empty());
  CHECK(models::io_metric_scenario_error(alone, "reader.read.iops").find("runs one fio job") != std::string::npos);
}

TEST_CASE("stonewall groups run one after the other: each group's figures are those of the group alone") {
  const auto groups = with_job("sw", std::string(kGlobal) +
                                         "[reader]\nrw=randread\niodepth=4\n[writer]\nstonewall\nrw=randwrite\niodepth=1\n"
                                         "[writer2]\nrw=randwrite\niodepth=2\nbs=8k\n");
  REQUIRE(groups.jobs.size() == 3);
  CHECK(groups.jobs[0].phase == 0);
  CHECK(groups.jobs[1].phase == 1);
  CHECK(groups.jobs[2].phase == 1);  // starts with the stonewall job before it
  CHECK(models::scenario_phases(groups) == 2);
  const auto first = with_job("sw1", std::string(kGlobal) + "[reader]\nrw=randread\niodepth=4\n");
  const auto second =
      with_job("sw2", std::string(kGlobal) + "[writer]\nrw=randwrite\niodepth=1\n[writer2]\nrw=randwrite\niodepth=2\nbs=8k\n");
  const auto all = models::simulate_io(groups, 1);
  const auto a = models::simulate_io(first, 1), b = models::simulate_io(second, 1);
  REQUIRE(all.phases.size() == 2);
  CHECK(overlap(all.get("fio:reader.read.iops"), a.get("read.iops")));
  CHECK(overlap(all.get("fio:reader.read.clat.p99.000000_ns"), a.get("read.clat.p99.000000_ns")));
  CHECK(overlap(all.get("fio:writer.write.iops"), b.get("fio:writer.write.iops")));
  CHECK(overlap(all.get("fio:writer2.write.iops"), b.get("fio:writer2.write.iops")));
  CHECK(overlap(all.get("fio:writer2.write.lat.mean_ns"), b.get("fio:writer2.write.lat.mean_ns")));
  // The writer's group has its own stage table: the device sees 8 KiB writes there, not reads.
  CHECK(all.phases[1].get("fio:writer2.write.iops").mean > 0);
  CHECK(all.phases[1].get("read.iops").mean == 0);
}

TEST_CASE("[global] inheritance and per-job options: bs, rw, iodepth and numjobs per job") {
  const auto s = with_job(
      "inherit", "[global]\nioengine=libaio\ndirect=1\nbs=16k\niodepth=8\n[a]\nrw=randread\nnumjobs=3\n[b]\nrw=write\nbs=64k\n");
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].workload.bs_read_bytes == 16384);
  CHECK(s.jobs[0].workload.numjobs == 3);
  CHECK(s.jobs[1].workload.bs_write_bytes == 65536);
  CHECK(s.jobs[1].workload.iodepth == 8);
  CHECK_FALSE(s.jobs[1].workload.random);
  CHECK(s.fio_threads() == 4);
  // A scenario key applies to every job.
  write_file("inherit-set.fio", "[a]\nrw=randread\n[b]\nrw=randwrite\n");
  const std::string toml = write_file("inherit-set.toml", "[workload]\nfio_job = \"inherit-set.fio\"\niodepth = 16\n");
  const auto set = models::load_io_scenario(toml);
  CHECK(set.jobs[0].workload.iodepth == 16);
  CHECK(set.jobs[1].workload.iodepth == 16);
}

TEST_CASE("a job file of several jobs: what cannot be told apart or is not modelled is refused with its line") {
  const std::string twice = load_error("twice", "[a]\nrw=randread\n[a]\nrw=randwrite\n");
  CHECK(twice.find("twice.fio:3: a second job named 'a' (the first is at") != std::string::npos);
  CHECK(twice.find("rename one") != std::string::npos);
  const std::string delay = load_error("delay", "[a]\nrw=randread\n[b]\nrw=randwrite\nstartdelay=5s\n");
  CHECK(delay.find("delay.fio:5: job 'b': option 'startdelay' is not modelled") != std::string::npos);
  CHECK(load_error("waitfor", "[a]\nrw=randread\n[b]\nwait_for=a\n").find("option 'wait_for'") != std::string::npos);
  CHECK(load_error("exitall", "[global]\nexitall\n[a]\nrw=randread\n[b]\nrw=write\n").find("exitall.fio:2") != std::string::npos);
  const std::string runtimes = load_error("runtimes", "[a]\nruntime=10\n[b]\nruntime=20\n");
  CHECK(runtimes.find("runtimes.fio:3: job 'b' (runtime=20s) and job 'a'") != std::string::npos);
  CHECK(load_error("host-name", "[host]\nrw=randread\n[b]\nrw=randwrite\n").find("job 'host' has a name beginning with") !=
        std::string::npos);
  // One job: options about jobs' interplay have nothing to change, and stay notes as before.
  CHECK(load_error("one-delay", "[a]\nrw=randread\nstartdelay=5s\n").empty());
  // A job file that cannot be read.
  std::filesystem::create_directories(std::filesystem::temp_directory_path() / "vqsim-test-multi-job" / "dir.fio");
  const std::string toml = write_file("dir.toml", "[workload]\nfio_job = \"dir.fio\"\n");
  CHECK_THROWS_WITH_AS(models::load_io_scenario(toml), doctest::Contains("dir.toml:2: workload.fio_job: "), models::ConfigError);
  CHECK_THROWS_WITH_AS(models::load_io_scenario(toml), doctest::Contains("cannot read the job file: it is a directory"),
                       models::ConfigError);
}

TEST_CASE("job metrics: the grammar is never ambiguous, also for jobs named like a direction") {
  CHECK(models::is_io_metric("reader.read.iops"));
  CHECK(models::is_io_metric("read.read.clat_p99_us"));  // job "read"
  CHECK(models::is_io_metric("vm.db.reader.read.clat_p99.9_us"));
  CHECK(models::is_io_metric("vm.db.read.iops"));
  CHECK_FALSE(models::is_io_metric("reader.iops"));
  CHECK_FALSE(models::is_io_metric("vm.db.host.read.iops"));  // a job may not be named host
  CHECK_FALSE(models::is_io_metric("host.read.iops"));
  CHECK(models::figure_kind("vm.db.reader.read.clat_p99_us") == "p99");
  CHECK(models::figure_kind("read.read.iops") == "throughput");
  const auto s = with_job("dirnames", std::string(kGlobal) + "[read]\nrw=randread\n[write]\nrw=randwrite\n");
  const auto r = models::simulate_io(s, 1);
  CHECK(models::io_metric(r, "read.read.iops").mean == r.get("fio:read.read.iops").mean);
  CHECK(models::io_metric(r, "write.write.iops").mean == r.get("fio:write.write.iops").mean);
  // read.iops is the VM's, every job together.
  CHECK(models::io_metric(r, "read.iops").mean == r.get("read.iops").mean);
  CHECK(models::io_metric(r, "write.read.iops").mean == 0);
}

TEST_CASE("[[vm]] profiles each name a job file, relative to the scenario; metrics vm.<name>.<job>.*") {
  write_file("vm-app.fio", std::string(kGlobal) + "[reader]\nrw=randread\niodepth=2\n[writer]\nrw=randwrite\n");
  const std::string toml = write_file("vm-app.toml",
                                      "[[vm]]\nname = \"web\"\n[vm.workload]\nrw = \"randread\"\nios = 5000\n"
                                      "[[vm]]\nname = \"app\"\n[vm.workload]\nfio_job = \"vm-app.fio\"\nios = 5000\n");
  const auto s = models::load_io_scenario(toml, {"run.replications=3"});
  REQUIRE(s.profiles.size() == 2);
  CHECK(s.profiles[0].scenario.jobs.empty());
  REQUIRE(s.profiles[1].scenario.jobs.size() == 2);
  const auto r = models::simulate_io(s, 1);
  CHECK(models::io_metric(r, "vm.app.reader.read.iops").mean > 0);
  CHECK(models::io_metric(r, "vm.app.reader.read.iops").mean == r.get("app.fio:reader.read.iops").mean);
  CHECK(models::io_metric(r, "vm.app.writer.write.clat_p99_us").mean > 0);
  CHECK_THROWS_WITH_AS(models::io_metric(r, "vm.web.reader.read.iops"), doctest::Contains("vm.web runs one fio job"),
                       std::invalid_argument);
  CHECK(models::io_metric_scenario_error(s, "vm.app.scan.read.iops").find("its jobs are 'reader', 'writer'") !=
        std::string::npos);
}

TEST_CASE("a job file of one job is the same workload written as keys, event for event") {
  auto file = with_job("solo", std::string(kGlobal) + "[solo]\nrw=randwrite\niodepth=8\n");
  const std::string toml =
      write_file("solo-keys.toml", "[workload]\nrw = \"randwrite\"\niodepth = 8\nioengine = \"libaio\"\nios = 20000\n");
  auto keys = models::load_io_scenario(toml, {"run.replications=4"});
  CHECK(file.jobs.empty());
  file.run.hash_events = keys.run.hash_events = true;
  const auto a = models::simulate_io(file, 1), b = models::simulate_io(keys, 1);
  CHECK(a.event_hash == b.event_hash);
  REQUIRE(a.replications.size() == b.replications.size());
  for (std::size_t r = 0; r < a.replications.size(); ++r) CHECK(a.replications[r].values == b.replications[r].values);
}
