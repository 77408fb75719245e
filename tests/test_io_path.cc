// The I/O-path model end to end: every scenario runs and obeys Little's law; the seed scenarios
// (uncalibrated) order their setups the way the seeds measured them (how close the calibrated
// scenarios come is test_seed_accuracy.cc; every scenario's figures are pinned by the golden
// runs, scripts/golden); each knob moves the results the way the domain notes say; the scenario
// loader's errors; the topology checks; DES against MVA where the MVA is a fair approximation.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/io_path.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"
#include "models/scenario.h"
#include "models/topology.h"

using namespace vqsim;

namespace {

const std::string kScenarios = VQSIM_SOURCE_DIR "/scenarios/";

struct Figures {
  double iops = 0, read_iops = 0, write_iops = 0, lat_ns = 0, little = 0;
  std::string bottleneck;
};

// `base` followed by `extra`: a test's shared overrides and one case's own.
std::vector<std::string> plus(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

models::IoRunReport run_report(const std::string& file, std::vector<std::string> overrides, int replications = 2) {
  overrides.push_back("run.replications=" + std::to_string(replications));
  return models::simulate_io(models::load_io_scenario(kScenarios + file, overrides), 2);
}

Figures simulate(const std::string& file, std::vector<std::string> overrides, int replications = 2) {
  const models::IoRunReport r = run_report(file, std::move(overrides), replications);
  Figures f;
  f.read_iops = r.get("read.iops").mean;
  f.write_iops = r.get("write.iops").mean;
  f.iops = f.read_iops + f.write_iops;
  f.lat_ns =
      f.iops > 0 ? (f.read_iops * r.get("read.lat.mean_ns").mean + f.write_iops * r.get("write.lat.mean_ns").mean) / f.iops : 0;
  f.little = r.little_worst;
  f.bottleneck = r.bottleneck;
  return f;
}

}  // namespace

TEST_CASE("every scenario in scenarios/ runs, and Little's law holds within 1% on every station") {
  for (const auto& entry : std::filesystem::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".toml") continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    const Figures f = simulate(name, {"workload.ios=20000"});
    CHECK(f.iops > 0);
    CHECK(f.little < 0.01);
    // The topology of each scenario is whole: paths reach the device and return.
    const models::IoScenario s = models::load_io_scenario(entry.path().string());
    CHECK_NOTHROW(models::check_topology(models::build_topology(s)));
  }
}

TEST_CASE("seed 000: virtio-blk beats virtio-scsi in IOPS and latency, as measured") {
  const Figures scsi = simulate("seed000-virtio-scsi.toml", {"workload.ios=60000"});
  const Figures blk = simulate("seed000-virtio-blk.toml", {"workload.ios=60000"});
  CHECK(blk.iops > scsi.iops * 1.05);
  CHECK(blk.lat_ns < scsi.lat_ns);
}

TEST_CASE("seed 002: QEMU 2.4 writeback + IOThread is faster than QEMU 2.2 writethrough, as measured") {
  const Figures wt = simulate("seed002-qemu2.2-writethrough.toml", {"workload.ios=20000"});
  const Figures wb = simulate("seed002-qemu2.4-writeback-iothread.toml", {"workload.ios=20000"});
  CHECK(wb.iops > 1.3 * wt.iops);
  CHECK(wb.lat_ns < wt.lat_ns);
}

TEST_CASE("seed 004: the VM is emulation-bound far below bare metal, as measured") {
  const Figures bare = simulate("seed004-bare-metal.toml", {"workload.ios=100000"});
  const Figures vm = simulate("seed004-vm.toml", {"workload.ios=40000"});
  CHECK(vm.lat_ns > bare.lat_ns * 5);
  CHECK(vm.iops < bare.iops / 5);
  CHECK(vm.bottleneck == "host.main_loop");
}

TEST_CASE("knob: IOThreads raise the ceiling only while the emulation thread is the bottleneck") {
  // Emulation-bound (seed 004's VM with 4 queues): more IOThreads, more IOPS.
  const std::vector<std::string> vm{"workload.ios=30000", "guest.num_queues=4"};
  const Figures one = simulate("seed004-vm.toml", plus(vm, {"host.iothreads=1"}));
  const Figures four = simulate("seed004-vm.toml", plus(vm, {"host.iothreads=4"}));
  CHECK(one.bottleneck == "host.iothread0");
  CHECK(four.iops > 1.5 * one.iops);
  // Guest-bound (the default: one fio job saturates its vCPU): IOThreads change nothing.
  const Figures d1 = simulate("default.toml", {"workload.ios=30000", "host.iothreads=1"});
  const Figures d4 =
      simulate("default.toml", {"workload.ios=30000", "host.iothreads=2", "guest.num_queues=2", "workload.numjobs=1"});
  CHECK(d1.bottleneck == "guest.fio_job0");
  CHECK(std::fabs(d4.iops - d1.iops) / d1.iops < 0.03);
}

TEST_CASE("knob: aio=threads adds latency at QD1 over aio=native") {
  const Figures native = simulate("default.toml", {"workload.ios=20000", "workload.iodepth=1", "host.aio=native"});
  const Figures threads = simulate("default.toml", {"workload.ios=20000", "workload.iodepth=1", "host.aio=threads"});
  CHECK(threads.lat_ns > native.lat_ns + 5000);  // two worker hand-offs of ~5 us
  CHECK(threads.iops < native.iops);
}

TEST_CASE("aio=threads: a request the page cache serves returns without the worker's wake-up; one the device serves pays it") {
  // util/thread-pool.c: the worker runs the request's syscall and schedules the completion's
  // bottom half. A worker that slept in preadv (the device) is woken before it can; one the page
  // cache answered never slept. So a longer hand-off lengthens a hit by one leg, a miss by two.
  auto lat_ns = [](const std::string& hit_ratio, const std::string& handoff_us) {
    const std::vector<std::string> o{"workload.ios=20000",
                                     "workload.iodepth=1",
                                     "workload.rw=randread",
                                     "host.aio=threads",
                                     "host.cache=writeback",
                                     "host.pagecache_hit_ratio=" + hit_ratio,
                                     "host.threads_handoff_us=" + handoff_us};
    const double des = simulate("default.toml", o).lat_ns;
    const double mva = models::solve_io_mva(models::load_io_scenario(kScenarios + "default.toml", o)).lat_mean_ns;
    return std::pair{des, mva};
  };
  // Both hand-offs long enough that every thread on the way sleeps in both (its wake-ups the same).
  const auto [hit_short, hit_short_mva] = lat_ns("1", "45");
  const auto [hit_long, hit_long_mva] = lat_ns("1", "85");
  const auto [miss_short, miss_short_mva] = lat_ns("0", "45");
  const auto [miss_long, miss_long_mva] = lat_ns("0", "85");
  const double leg_ns = 40'000;  // host.threads_handoff_us 85 against 45, at host.cpu_scale 1
  CHECK((hit_long - hit_short) == doctest::Approx(leg_ns).epsilon(0.1));
  CHECK((miss_long - miss_short) == doctest::Approx(2 * leg_ns).epsilon(0.1));
  CHECK((hit_long_mva - hit_short_mva) == doctest::Approx(leg_ns).epsilon(0.1));
  CHECK((miss_long_mva - miss_short_mva) == doctest::Approx(2 * leg_ns).epsilon(0.1));
}

TEST_CASE("knob: cache=writethrough lowers write IOPS (a flush after every write)") {
  const std::vector<std::string> base{"workload.ios=20000", "workload.rw=randwrite", "host.aio=threads", "backend.kind=sata-ssd"};
  auto with = [&](const std::string& kv) {
    auto v = base;
    v.push_back(kv);
    return v;
  };
  const Figures none = simulate("default.toml", with("host.cache=none"));
  const Figures wt = simulate("default.toml", with("host.cache=writethrough"));
  const Figures ds = simulate("default.toml", with("host.cache=directsync"));
  CHECK(wt.write_iops < 0.8 * none.write_iops);
  CHECK(ds.write_iops < 0.8 * none.write_iops);
}

TEST_CASE("knob: psync and sync ignore iodepth (one I/O at a time per job)") {
  const Figures qd1 = simulate("default.toml", {"workload.ios=20000", "workload.ioengine=psync", "workload.iodepth=1"});
  const Figures qd32 = simulate("default.toml", {"workload.ios=20000", "workload.ioengine=psync", "workload.iodepth=32"});
  const Figures aio32 = simulate("default.toml", {"workload.ios=20000", "workload.ioengine=libaio", "workload.iodepth=32"});
  CHECK(qd32.iops == doctest::Approx(qd1.iops).epsilon(1e-12));  // the same model, the same draws
  CHECK(aio32.iops > 2 * qd1.iops);
}

TEST_CASE("knob: sequential I/Os submitted in batches merge under the plug; random ones do not") {
  const std::vector<std::string> seq{"workload.ios=40000", "workload.rw=read", "workload.iodepth_batch_submit=8"};
  const Figures merged = simulate("default.toml", seq);
  const Figures single = simulate("default.toml", {"workload.ios=40000", "workload.rw=read", "workload.iodepth_batch_submit=1"});
  const Figures random =
      simulate("default.toml", {"workload.ios=40000", "workload.rw=randread", "workload.iodepth_batch_submit=8"});
  CHECK(merged.iops > 1.2 * single.iops);   // per-request guest and host costs are shared
  CHECK(random.iops < 1.05 * single.iops);  // nothing to merge
  CHECK(merged.little < 0.01);
}

TEST_CASE("HDD: a sequential stream at depth runs at media rate (pipelining hides the command overhead); alone it pays it") {
  // seed001-bare-metal: 70 MB/s media rate; 200 us overhead so that paying it would show.
  const std::vector<std::string> base{"workload.ios=20000", "workload.rw=read", "workload.bs=8k", "backend.seq_overhead_us=200",
                                      "backend.bandwidth=70MB"};
  auto with = [&](const std::string& kv) {
    auto v = base;
    v.push_back(kv);
    return v;
  };
  const double transfer_ns = 8192.0 / 70e6 * 1e9;
  const Figures deep = simulate("seed001-bare-metal.toml", with("workload.iodepth=8"));
  const Figures alone = simulate("seed001-bare-metal.toml", with("workload.iodepth=1"));
  CHECK(deep.iops == doctest::Approx(1e9 / transfer_ns).epsilon(0.01));
  CHECK(alone.iops < 1e9 / (transfer_ns + 200000) * 1.01);  // overhead + transfer, plus the host path
  // The MVA makes the same distinction.
  const auto mva = [&](const std::string& kv) {
    return models::solve_io_mva(models::load_io_scenario(kScenarios + "seed001-bare-metal.toml", with(kv))).iops;
  };
  CHECK(mva("workload.iodepth=8") == doctest::Approx(1e9 / transfer_ns).epsilon(0.01));
  CHECK(mva("workload.iodepth=1") < 1e9 / (transfer_ns + 200000) * 1.01);
}

TEST_CASE("emulated LSI HBA: QEMU's scsi-disk takes a request over its 128 KiB bounce buffer as one device command per chunk") {
  // seed 001's LSI setup (an HDD), 256 KiB random reads at depth 8: each later chunk is a
  // command of its own, and with others queued the drive positions again for it.
  const std::vector<std::string> lsi{"workload.ios=3000", "workload.bs=256k"};
  const Figures chunked = simulate("seed001-scsi-disk-lsi.toml", lsi);
  const Figures whole = simulate("seed001-scsi-disk-lsi.toml", plus(lsi, {"guest.hba_bounce=0"}));
  // Two positionings (shortened by NCQ at 7 queued) per request instead of one: about 35% fewer.
  CHECK(chunked.iops < 0.75 * whole.iops);
  CHECK(chunked.iops > 0.5 * whole.iops);
  // A request that fits the buffer is one command: nothing changes.
  CHECK(simulate("seed001-scsi-disk-lsi.toml", plus(lsi, {"workload.bs=128k"})).iops ==
        doctest::Approx(simulate("seed001-scsi-disk-lsi.toml", plus(lsi, {"workload.bs=128k", "guest.hba_bounce=0"})).iops));
  // virtio-blk passes scatter-gather lists: the key is the LSI's alone.
  CHECK(simulate("seed001-virtio-blk.toml", plus(lsi, {"guest.hba_bounce=128k"})).iops ==
        doctest::Approx(simulate("seed001-virtio-blk.toml", plus(lsi, {"guest.hba_bounce=0"})).iops));
  // The MVA pays the same second positioning.
  const auto mva = [&](std::vector<std::string> kv) {
    return models::solve_io_mva(models::load_io_scenario(kScenarios + "seed001-scsi-disk-lsi.toml", plus(lsi, kv))).iops;
  };
  CHECK(mva({}) == doctest::Approx(chunked.iops).epsilon(0.1));
  CHECK(mva({"guest.hba_bounce=0"}) == doctest::Approx(whole.iops).epsilon(0.1));
}

TEST_CASE(
    "fio's iodepth_batch_complete_min: completions wait in the ring until that many have come, then fio reaps and refills") {
  // CPU-bound (the default scenario at QD32, fio's thread the bottleneck): the same IOPS, and by
  // Little's law the same lat, but the wait moves into clat (fio stamps a completion when it reaps
  // it). Its thread in arrival order, where a submit's wait behind completions is slat: with
  // guest.fio_submit_first that wait is clat already.
  const std::vector<std::string> cpu{"workload.iodepth=32", "workload.ios=40000", "guest.fio_submit_first=false"};
  const auto one = run_report("default.toml", cpu);
  const auto eight = run_report("default.toml", plus(cpu, {"workload.iodepth_batch_complete_min=8"}));
  CHECK(eight.get("read.iops").mean == doctest::Approx(one.get("read.iops").mean).epsilon(0.02));
  CHECK(eight.get("read.clat.mean_ns").mean > one.get("read.clat.mean_ns").mean * 1.05);
  CHECK(eight.little_worst < 0.01);
  // Device-bound (500 us reads at QD16): fio keeps fewer at the device while it waits, so fewer
  // IOPS; waiting for all 16 leaves the device idle between batches. The MVA's unreaped I/Os
  // (a delay in the loop, not at the device) follow within 15%.
  const std::vector<std::string> dev{"workload.iodepth=16", "backend.read_us=500", "workload.ios=20000"};
  double last = simulate("default.toml", dev).iops;
  for (const char* m : {"4", "16"}) {
    const auto o = plus(dev, {std::string("workload.iodepth_batch_complete_min=") + m});
    const double iops = simulate("default.toml", o).iops;
    CHECK(iops < 0.95 * last);
    CHECK(models::solve_io_mva(models::load_io_scenario(kScenarios + "default.toml", o)).iops ==
          doctest::Approx(iops).epsilon(0.15));
    last = iops;
  }
  // max below min is taken as min, as fio does.
  CHECK(simulate("default.toml", plus(dev, {"workload.iodepth_batch_complete_min=4", "workload.iodepth_batch_complete_max=2"}))
            .iops == doctest::Approx(simulate("default.toml", plus(dev, {"workload.iodepth_batch_complete_min=4"})).iops));
}

TEST_CASE("Ceph stalls: a share of ops waits the stall's mean after the OSD; writethrough's barrier spreads it to later writes") {
  const std::vector<std::string> base{"workload.ios=40000", "run.seed=3"};
  // Writeback: only the stalled op waits. QD1 keeps queueing out, so the mean grows by ratio x mean.
  const auto qd1 = [&](const std::string& ratio) {
    return simulate(
        "seed002-qemu2.4-writeback-iothread.toml",
        plus(base, {"workload.numjobs=1", "workload.iodepth=1", "backend.osd_stall_ms=20", "backend.osd_stall_ratio=" + ratio}),
        4);
  };
  const Figures none = qd1("0"), some = qd1("0.02");
  CHECK(some.lat_ns - none.lat_ns == doctest::Approx(0.02 * 20e6).epsilon(0.15));
  const auto mva = [&](const std::string& ratio) {
    return models::solve_io_mva(
               models::load_io_scenario(kScenarios + "seed002-qemu2.4-writeback-iothread.toml",
                                        plus(base, {"workload.numjobs=1", "workload.iodepth=1", "backend.osd_stall_ms=20",
                                                    "backend.osd_stall_ratio=" + ratio})))
        .lat_mean_ns;
  };
  CHECK(mva("0.02") - mva("0") == doctest::Approx(0.02 * 20e6).epsilon(0.01));
  // Writethrough at depth: every flush waits for the writes before it, so the same stalls cost
  // far more throughput than they do with writeback.
  const auto deep = [&](const std::string& file, const std::string& ratio) {
    return simulate(file,
                    plus(base, {"workload.numjobs=1", "workload.iodepth=32", "backend.osd_stall_ms=20",
                                "backend.osd_stall_ratio=" + ratio}),
                    3)
        .iops;
  };
  const double wb_loss =
      1 - deep("seed002-qemu2.4-writeback-iothread.toml", "0.01") / deep("seed002-qemu2.4-writeback-iothread.toml", "0");
  const double wt_loss = 1 - deep("seed002-qemu2.2-writethrough.toml", "0.01") / deep("seed002-qemu2.2-writethrough.toml", "0");
  CHECK(wt_loss > 2 * wb_loss);
}

TEST_CASE("knob: virtio-blk batching holds a notification's writes (QEMU <= 2.2) or every request (>= 2.3) until its last one") {
  // A busy main loop, so that notifications carry several requests.
  const std::vector<std::string> base{"workload.ios=40000", "workload.rw=randrw", "workload.iodepth=32", "host.cpu_scale=2"};
  auto with = [&](const std::string& mode) {
    auto v = base;
    v.push_back("host.virtio_blk_batching=" + mode);
    return v;
  };
  const models::IoScenario none_s = models::load_io_scenario(kScenarios + "seed000-virtio-blk.toml", with("none"));
  const models::IoScenario writes_s = models::load_io_scenario(kScenarios + "seed000-virtio-blk.toml", with("writes"));
  const models::IoRunReport none = models::simulate_io(none_s, 2);
  const models::IoRunReport writes = models::simulate_io(writes_s, 2);
  const double read_gap_ns = writes.get("read.lat.mean_ns").mean - none.get("read.lat.mean_ns").mean;
  const double write_gap_ns = writes.get("write.lat.mean_ns").mean - none.get("write.lat.mean_ns").mean;
  CHECK(write_gap_ns > 20000);            // writes wait for the rest of the notification
  CHECK(read_gap_ns < write_gap_ns / 4);  // reads go at once
  CHECK(writes.get("host.main_loop.batch.response_mean_ns").mean > 10000);
  CHECK(writes.little_worst < 0.01);
  // Since QEMU 2.3 reads wait too, but the buffer is submitted whenever the direction changes,
  // so a 50/50 mix holds each request only briefly.
  const Figures all = simulate("seed000-virtio-blk.toml", with("all"));
  CHECK(all.little < 0.01);
  CHECK(all.lat_ns < (writes.get("write.lat.mean_ns").mean + writes.get("read.lat.mean_ns").mean) / 2);
  // Other drivers are untouched.
  const Figures scsi_none = simulate("seed000-virtio-scsi.toml", with("none"));
  const Figures scsi_writes = simulate("seed000-virtio-scsi.toml", with("writes"));
  CHECK(scsi_writes.lat_ns == doctest::Approx(scsi_none.lat_ns).epsilon(1e-12));
}

TEST_CASE("null-co latency in the main loop waits for its millisecond timeout at QD1; an IOThread waits in ns") {
  // The lab (calibration/data/lab-2026-11-30): null-co with latency-ns = 100000 behind the main
  // loop measured 720 IOPS at QD1 (1.39 ms); null-co without latency 3.2k IOPS.
  const std::vector<std::string> base = {"workload.ios=3000", "backend.latency_us=100", "workload.iodepth=1"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return simulate("lab-tcg.toml", more);
  };
  const Figures none = simulate("lab-tcg.toml", {"workload.ios=3000", "backend.latency_us=0", "workload.iodepth=1"});
  const Figures main_loop = with({});
  const Figures iothread = with({"host.iothreads=1"});
  const Figures exact = with({"host.main_loop_timer_us=0"});
  CHECK(main_loop.lat_ns > none.lat_ns + 900e3);  // the latency rounded up to 1 ms
  CHECK(main_loop.lat_ns < none.lat_ns + 1100e3);
  CHECK(exact.lat_ns == doctest::Approx(none.lat_ns + 100e3).epsilon(0.1));
  CHECK(iothread.lat_ns < none.lat_ns + 250e3);
  CHECK(main_loop.little < 0.01);
  // At depth the other requests' kicks and completions wake the loop: the rounding mostly goes.
  const Figures deep = with({"workload.iodepth=16"});
  const Figures deep_exact = with({"workload.iodepth=16", "host.main_loop_timer_us=0"});
  CHECK(deep.iops > 0.7 * deep_exact.iops);
  // The MVA takes the rounding when the loop sleeps, at QD1 all of it.
  const models::IoScenario s = models::load_io_scenario(kScenarios + "lab-tcg.toml", base);
  const models::IoMvaResult mva = models::solve_io_mva(s);
  CHECK(mva.lat_mean_ns == doctest::Approx(main_loop.lat_ns).epsilon(0.15));
}

TEST_CASE("knob: rate_iops is an open loop: throughput follows the rate below saturation") {
  const Figures f = simulate("default.toml", {"workload.ios=20000", "workload.rate_iops=20000", "workload.iodepth=32"});
  CHECK(f.iops == doctest::Approx(20000).epsilon(0.03));
}

TEST_CASE("DES and MVA agree within 10% where the MVA's assumptions hold") {
  for (const std::string file : {"default.toml", "seed004-vm.toml", "seed004-bare-metal.toml", "seed000-virtio-scsi.toml"}) {
    CAPTURE(file);
    const models::IoScenario s = models::load_io_scenario(kScenarios + file, {"workload.ios=30000", "run.replications=2"});
    const Figures des = simulate(file, {"workload.ios=30000"});
    const models::IoMvaResult mva = models::solve_io_mva(s);
    CHECK(std::fabs(mva.iops - des.iops) / des.iops < 0.10);
    CHECK(std::fabs(mva.lat_mean_ns - des.lat_ns) / des.lat_ns < 0.10);
  }
}

TEST_CASE("scenario errors name the file, the line, the key and a suggestion") {
  const auto dir = std::filesystem::temp_directory_path() / "vqsim-test-io-scenario";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto message = [](const std::string& path, std::vector<std::string> overrides = {}) {
    try {
      models::load_io_scenario(path, overrides);
    } catch (const models::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string typo = write("typo.toml", "[workload]\nrw = \"randread\"\niodeth = 4\n");
  CHECK(message(typo).find("typo.toml:3: workload.iodeth: unknown key (did you mean 'workload.iodepth'?)") != std::string::npos);
  const std::string range = write("range.toml", "[workload]\nrwmixread = 150\n");
  CHECK(message(range).find("range.toml:2: workload.rwmixread: value 150 is out of range") != std::string::npos);
  const std::string type = write("type.toml", "[host]\niothreads = \"two\"\n");
  CHECK(message(type).find("type.toml:2: host.iothreads: expected a whole number") != std::string::npos);
  const std::string word = write("word.toml", "[host]\naio = \"nativ\"\n");
  CHECK(message(word).find("did you mean 'native'?") != std::string::npos);
  const std::string native = write("native.toml", "[host]\naio = \"native\"\ncache = \"writeback\"\n");
  CHECK(message(native).find("native.toml:2: host.aio: aio=native requires cache.direct=on") != std::string::npos);
  CHECK(message(typo, {"workload.iodeth=3"}).find("(from --set)") != std::string::npos);
  const std::string unit = write("unit.toml", "[backend]\nkind = \"null\"\nlatency_us = \"12 parsecs\"\n");
  CHECK(message(unit).find("unit.toml:3: backend.latency_us:") != std::string::npos);
  // Inheritance: the child overrides one key and keeps the rest; a loop is reported.
  const std::string parent = write("parent.toml", "[workload]\niodepth = 8\nnumjobs = 3\n");
  const std::string child = write("child.toml", "base = \"parent.toml\"\n[workload]\niodepth = 2\n");
  const models::IoScenario s = models::load_io_scenario(child);
  CHECK(s.workload.iodepth == 2);
  CHECK(s.workload.numjobs == 3);
  (void)parent;
  write("loop_a.toml", "base = \"loop_b.toml\"\n");
  const std::string loop_b = write("loop_b.toml", "base = \"loop_a.toml\"\n");
  CHECK(message(loop_b).find("base chain loops back") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("units at the edge: durations as numbers in the key's unit or as strings, sizes with suffixes") {
  const auto a = models::load_io_scenario(kScenarios + "default.toml",
                                          {"backend.latency_us=12", "workload.bs=64k", "workload.ramp_time=0.5"});
  const auto b = models::load_io_scenario(kScenarios + "default.toml",
                                          {"backend.latency_us=\"12us\"", "workload.bs=65536", "workload.ramp_time=\"500ms\""});
  CHECK(a.backend.latency_ns == doctest::Approx(12000));
  CHECK(b.backend.latency_ns == doctest::Approx(12000));
  CHECK(a.workload.bs_read_bytes == 65536);
  CHECK(b.workload.bs_read_bytes == 65536);
  CHECK(a.workload.ramp_time_ns == 500'000'000);
  CHECK(b.workload.ramp_time_ns == 500'000'000);
}

namespace {
// A scenario file in a scratch directory (removed with the directory by the caller).
struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& name) : dir(std::filesystem::temp_directory_path() / name) {
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

// The load's errors, one per line, or {} when it loads.
std::vector<std::string> load_errors(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    models::load_io_scenario(path, overrides);
  } catch (const models::ConfigError& e) {
    return e.messages();
  }
  return {};
}

bool has_warning(const models::IoScenario& s, const std::string& text) {
  for (const auto& w : s.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("a scenario with several errors reports each, one per line, in file order (issue 17, item 4)") {
  const ScratchDir d("vqsim-test-multi-error");
  const std::string three = d.write(
      "three.toml", "[workload]\niodeth = 4\nbs = 1000\n[host]\niothreads = \"two\"\n[backend]\nkind = \"hdd\"\nchannels = 32\n");
  const auto errors = load_errors(three);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].find("three.toml:2: workload.iodeth: unknown key (did you mean 'workload.iodepth'?)") != std::string::npos);
  CHECK(errors[1].find("three.toml:3: workload.bs: 1000 bytes is not a multiple of 512") != std::string::npos);
  CHECK(errors[2].find("three.toml:5: host.iothreads: expected a whole number") != std::string::npos);
  CHECK(errors[3].find("three.toml:8: backend.channels: 32 with backend.kind = \"hdd\": a hard disk has one actuator") !=
        std::string::npos);
  // The file's errors first, then --set's; a refused value is not reported again by the checks
  // that read it (aio=native with a misspelt cache mode is one error, not two).
  const auto more = load_errors(three, {"host.cache=writebak", "host.aio=native"});
  REQUIRE(more.size() == 5);
  CHECK(more[4].find("(from --set): host.cache: \"writebak\" is not one of") == 0);
  // One error stays one line.
  CHECK(load_errors(d.write("one.toml", "[workload]\niodepth = 0\n")).size() == 1);
}

TEST_CASE("contradictions: a hard disk has one actuator; QEMU versions reject what they cannot run (issue 17, items 4 and 11)") {
  const std::string def = kScenarios + "default.toml";
  auto first_error = [&](const std::vector<std::string>& overrides) {
    const auto e = load_errors(def, overrides);
    return e.empty() ? std::string("no error") : e.front();
  };
  CHECK(first_error({"backend.kind=hdd", "backend.channels=32"}).find("backend.channels: 32 with backend.kind = \"hdd\"") !=
        std::string::npos);
  CHECK(first_error({"backend.kind=md-raid1", "backend.leg=hdd", "backend.channels=4"}).find("and leg = \"hdd\"") !=
        std::string::npos);
  CHECK(load_errors(def, {"backend.kind=hdd", "backend.channels=1"}).empty());
  CHECK(load_errors(def, {"backend.kind=sata-ssd", "backend.channels=32"}).empty());
  CHECK(first_error({"host.qemu_version=4.2.1", "host.aio=io_uring"}).find("aio=io_uring needs QEMU 5.0 or later") !=
        std::string::npos);
  CHECK(load_errors(def, {"host.qemu_version=5.0.0", "host.aio=io_uring"}).empty());
  // Several IOThreads for one device before 9.0: a what-if that runs (plan and sweeps ask it of
  // the seeds), with a warning that the figures are those of 9.0's iothread-vq-mapping.
  const auto vq_map = models::load_io_scenario(def, {"host.qemu_version=8.2.0", "host.iothreads=2"});
  CHECK(has_warning(vq_map, "host.iothreads: 2 IOThreads for one device needs QEMU 9.0 or later (iothread-vq-mapping"));
  CHECK(models::load_io_scenario(def, {"host.qemu_version=9.0.0", "host.iothreads=2"}).warnings.empty());
  CHECK(models::load_io_scenario(def, {"host.iothreads=2"}).warnings.empty());  // no version stated: nothing to contradict
  CHECK(first_error({"host.qemu_version=2.3.0", "guest.driver=virtio-scsi", "host.iothreads=1"})
            .find("virtio-scsi takes an IOThread since QEMU 2.4") != std::string::npos);
  CHECK(load_errors(def, {"host.qemu_version=2.4.0", "guest.driver=virtio-scsi", "host.iothreads=1"}).empty());
}

TEST_CASE("host.qemu_version drives the version-dependent defaults; an explicit key wins (issue 17, item 11)") {
  const std::string def = kScenarios + "default.toml";
  using models::VirtioBlkBatching;
  const auto none = models::load_io_scenario(def);
  CHECK(none.host.virtio_blk_batching == VirtioBlkBatching::none);  // no version: the table's defaults
  CHECK(none.guest.queue_size == 256);
  CHECK(none.host.poll_max_ns == doctest::Approx(32768));
  const auto v20 = models::load_io_scenario(def, {"host.qemu_version=2.0.0"});
  CHECK(v20.host.virtio_blk_batching == VirtioBlkBatching::writes);  // multiwrite: writes only
  CHECK(v20.host.poll_max_ns == 0);                                  // no IOThread polling before 2.9
  CHECK(v20.guest.queue_size == 128);
  CHECK(v20.guest.num_queues == 1);
  const auto v24 = models::load_io_scenario(def, {"host.qemu_version=2.4"});
  CHECK(v24.host.virtio_blk_batching == VirtioBlkBatching::all);  // multireq since 2.3
  CHECK(v24.queues() == 1);
  const auto v72 = models::load_io_scenario(def, {"host.qemu_version=7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"});
  CHECK(v72.host.virtio_blk_batching == VirtioBlkBatching::all);
  CHECK(v72.guest.queue_size == 256);
  CHECK(v72.host.poll_max_ns == doctest::Approx(32768));
  CHECK(v72.queues() == v72.guest.vcpus);  // num-queues = vCPUs since 5.2
  // --set text is taken as written: 2.10 is not the number 2.1.
  CHECK(models::load_io_scenario(def, {"host.qemu_version=2.10"}).host.poll_max_ns == doctest::Approx(32768));
  // An explicit key wins, given by --set or in the file that states the version.
  CHECK(models::load_io_scenario(def, {"host.qemu_version=2.0.0", "host.virtio_blk_batching=none"}).host.virtio_blk_batching ==
        VirtioBlkBatching::none);
  const ScratchDir d("vqsim-test-qemu-version");
  const std::string old_qemu =
      d.write("old.toml", "[host]\nqemu_version = \"2.0.0\"\nvirtio_blk_batching = \"all\"\npoll_max_us = 10\n");
  const auto own = models::load_io_scenario(old_qemu);
  CHECK(own.host.virtio_blk_batching == VirtioBlkBatching::all);
  CHECK(own.host.poll_max_ns == doctest::Approx(10000));
  CHECK(own.guest.queue_size == 128);  // not stated: the version's
  // A file based on it that states a newer version gets that version's defaults for the keys it
  // inherits; --set of a version does the same to the file's keys.
  const std::string newer = d.write("newer.toml", "base = \"old.toml\"\n[host]\nqemu_version = \"2.9.0\"\n");
  CHECK(models::load_io_scenario(newer).host.poll_max_ns == doctest::Approx(32768));
  CHECK(models::load_io_scenario(old_qemu, {"host.qemu_version=2.2.1"}).host.virtio_blk_batching == VirtioBlkBatching::writes);
  // A malformed version is an error that says how to write it.
  for (const std::string bad : {"two", "2", "2.x", "v2.4.0", ""}) {
    CAPTURE(bad);
    const auto e = load_errors(d.write("bad.toml", "[host]\nqemu_version = \"" + bad + "\"\n"));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("bad.toml:2: host.qemu_version: \"" + bad + "\" is not a QEMU version; write it as") != std::string::npos);
  }
}

TEST_CASE("seed scenarios and manifests that set the version-dependent keys behave as before (issue 17, item 11)") {
  using models::VirtioBlkBatching;
  // Each seed states its QEMU's batching (and its queue count) itself; the version agrees.
  CHECK(models::load_io_scenario(kScenarios + "seed000-virtio-scsi.toml").host.virtio_blk_batching == VirtioBlkBatching::writes);
  CHECK(models::load_io_scenario(kScenarios + "seed002-qemu2.2-writethrough.toml").host.virtio_blk_batching ==
        VirtioBlkBatching::writes);
  CHECK(models::load_io_scenario(kScenarios + "seed002-qemu2.4-writeback-iothread.toml").host.virtio_blk_batching ==
        VirtioBlkBatching::all);
  CHECK(models::load_io_scenario(kScenarios + "seed004-vm.toml").host.virtio_blk_batching == VirtioBlkBatching::all);
  // Seed 000's manifest run on virtio-blk, with the keys it sets (calibration/data/seeds/
  // 000-virtio-scsi-vs-blk.toml), simulates exactly as before; and the same run stating only the
  // version (the case of the issue) now gets QEMU 2.0's batching too.
  const std::vector<std::string> run{"guest.driver=virtio-blk", "workload.rw=randrw",    "workload.rwmixread=50",
                                     "workload.iodepth=32",     "host.aio=threads",      "host.cache=none",
                                     "host.iothreads=0",        "backend.kind=md-raid1", "workload.ios=20000"};
  const Figures stated =
      simulate("seed000-virtio-scsi.toml", plus(run, {"host.qemu_version=2.0.0", "host.virtio_blk_batching=writes"}));
  const Figures before = simulate("seed000-virtio-scsi.toml", run);  // the file's own keys: writes, one queue
  const Figures version_only = simulate("seed000-virtio-scsi.toml", plus(run, {"host.qemu_version=2.0.0"}));
  CHECK(stated.iops == doctest::Approx(before.iops).epsilon(1e-12));
  CHECK(stated.lat_ns == doctest::Approx(before.lat_ns).epsilon(1e-12));
  CHECK(version_only.iops == doctest::Approx(before.iops).epsilon(1e-12));
  const auto v =
      models::load_io_scenario(kScenarios + "seed000-virtio-scsi.toml",
                               {"host.qemu_version=2.0.0", "host.virtio_blk_batching=none", "guest.driver=virtio-blk"});
  CHECK(v.host.virtio_blk_batching == VirtioBlkBatching::none);
}

TEST_CASE("warnings: setups fio runs differently from what they say, and keys another setting voids (issue 17, item 4)") {
  const std::string def = kScenarios + "default.toml";
  CHECK(models::load_io_scenario(def).warnings.empty());
  // A synchronous engine runs at depth 1, as fio does, with fio's own words.
  const auto psync = models::load_io_scenario(def, {"workload.ioengine=psync", "workload.iodepth=32"});
  CHECK(psync.workload.effective_depth() == 1);
  CHECK(has_warning(psync, "(from --set): workload.iodepth: iodepth = 32 with ioengine = \"psync\": a synchronous engine"));
  CHECK(has_warning(psync, "queue depth will be capped at 1"));
  CHECK(models::load_io_scenario(def, {"workload.ioengine=psync", "workload.iodepth=1"}).warnings.empty());
  // fio caps iodepth_batch_submit at iodepth.
  const auto batch = models::load_io_scenario(def, {"workload.iodepth=4", "workload.iodepth_batch_submit=16"});
  CHECK(batch.workload.iodepth_batch_submit == 4);
  CHECK(has_warning(batch, "workload.iodepth_batch_submit: 16 is more than the 4 I/Os in flight"));
  // rwmixread with a pure direction: fio ignores it.
  const auto mix = models::load_io_scenario(def, {"workload.rw=randwrite", "workload.rwmixread=70"});
  CHECK(mix.workload.read_fraction == 0);
  CHECK(has_warning(mix, "workload.rwmixread: 70 has no effect with rw = \"randwrite\""));
  CHECK(has_warning(mix, "write rw = \"randrw\" for a 70/30 mix"));
  CHECK(models::load_io_scenario(def, {"workload.rw=randrw", "workload.rwmixread=70"}).warnings.empty());
  // ... but not for a key inherited from a base whose rw the file changes.
  const ScratchDir d("vqsim-test-warnings");
  d.write("mixed.toml", "[workload]\nrw = \"randrw\"\nrwmixread = 70\n");
  const std::string writes = d.write("writes.toml", "base = \"mixed.toml\"\n[workload]\nrw = \"randwrite\"\n");
  CHECK(models::load_io_scenario(writes).warnings.empty());
  const std::string same = d.write("same.toml", "[workload]\nrw = \"randwrite\"\nrwmixread = 70\n");
  CHECK(has_warning(models::load_io_scenario(same), "same.toml:3: workload.rwmixread: 70 has no effect"));
  // Keys of another kind of device, page-cache hits under O_DIRECT, buffered guest I/O.
  CHECK(has_warning(models::load_io_scenario(def, {"backend.rpm=15000"}),
                    "backend.rpm: has no effect with backend.kind = \"nvme\""));
  CHECK(models::load_io_scenario(def, {"backend.kind=hdd", "backend.rpm=15000"}).warnings.empty());
  CHECK(has_warning(models::load_io_scenario(def, {"backend.rtt_us=100"}), "a Ceph key"));
  CHECK(has_warning(models::load_io_scenario(def, {"host.pagecache_hit_ratio=0.5"}), "O_DIRECT bypasses the host page cache"));
  CHECK(models::load_io_scenario(def, {"host.pagecache_hit_ratio=0.5", "host.cache=writeback", "host.aio=threads"})
            .warnings.empty());
  CHECK(has_warning(models::load_io_scenario(def, {"workload.direct=false"}),
                    "workload.direct: false: the simulation models direct I/O only"));
  // Every scenario of the repository loads without a warning.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".toml" || !models::is_io_scenario_file(entry.path().string())) continue;
    if (entry.path().parent_path().filename() == "sweeps") continue;
    CAPTURE(entry.path().string());
    CHECK(models::load_io_scenario(entry.path().string()).warnings.empty());
  }
}

TEST_CASE("--set of a key without its section suggests the full key (issue 17, item 9)") {
  const auto e = load_errors(kScenarios + "default.toml", {"iothreads=2"});
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "(from --set): iothreads: unknown key (did you mean 'host.iothreads'?)");
}

TEST_CASE("a base whose name the system cannot look up is an input error with file and line, not a crash") {
  // Found by fuzz_scenario: std::filesystem::exists threw on a name longer than NAME_MAX.
  const std::string path = (std::filesystem::temp_directory_path() / "vqsim-test-long-base.toml").string();
  std::ofstream(path) << "# a scenario\nbase = \"" << std::string(400, 'x') << "\"\n";
  std::string error;
  try {
    models::load_io_scenario(path);
  } catch (const models::ConfigError& e) {
    error = e.what();
  }
  CHECK(error.find(path + ":2: base: cannot look up") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("guest.fio_submit_first: fio submits the freed slot's I/O first, so at depth its slat stays the submit's own time") {
  // The lab's TCG guest at iodepth 16, its vCPU the bottleneck: submits and completions queue on
  // fio's thread. In arrival order a submit waits behind the completions (slat); fio submits first
  // (backend.c do_io stamps the I/O's start just before io_u_submit), so they wait instead (clat).
  const std::vector<std::string> deep{"workload.iodepth=16", "workload.ios=20000"};
  const auto fifo = run_report("lab-tcg.toml", plus(deep, {"guest.fio_submit_first=false"}));
  const auto first = run_report("lab-tcg.toml", plus(deep, {"guest.fio_submit_first=true"}));
  const auto lone = run_report("lab-tcg.toml", {"workload.ios=5000", "guest.fio_submit_first=true"});
  const double slat_lone = lone.get("read.slat.mean_ns").mean;
  CHECK(fifo.get("read.slat.mean_ns").mean > 4 * slat_lone);
  CHECK(first.get("read.slat.mean_ns").mean < 2.5 * slat_lone);
  // The thread does the same work: the same IOPS and, by Little's law, the same lat.
  CHECK(first.get("read.iops").mean == doctest::Approx(fifo.get("read.iops").mean).epsilon(0.05));
  CHECK(first.get("read.lat.mean_ns").mean == doctest::Approx(fifo.get("read.lat.mean_ns").mean).epsilon(0.05));
  CHECK(first.little_worst < 0.01);
  // At iodepth 1 nothing waits: the key changes nothing.
  const auto lone_fifo = run_report("lab-tcg.toml", {"workload.ios=5000", "guest.fio_submit_first=false"});
  CHECK(lone_fifo.get("read.iops").mean == doctest::Approx(lone.get("read.iops").mean).epsilon(1e-9));
  // The MVA's slat is the submit's own time too.
  const models::IoScenario s = models::load_io_scenario(kScenarios + "lab-tcg.toml", plus(deep, {"guest.fio_submit_first=true"}));
  CHECK(models::solve_io_mva(s).slat_mean_ns < 2.5 * slat_lone);
}

TEST_CASE("host.drain_ring: the handler pops its whole ring, so virtio-blk's held writes wait for that loop only") {
  // Seed 000's virtio-blk (QEMU 2.0: writes held until the notification's last request) with its
  // main loop the bottleneck (a host twice as slow as the documented costs): submits and
  // completions queue on the loop. In arrival order the ring is "empty" only once no submit is
  // queued, which at this load takes completions' service too, so a held write waits for many of
  // them; the handler's loop (virtqueue_pop until empty) pops what is waiting at once.
  const std::vector<std::string> busy{"host.cpu_scale=2", "backend.service_cv=0.9", "workload.ios=40000"};
  const auto fifo = run_report("seed000-virtio-blk.toml", plus(busy, {"host.drain_ring=false"}));
  const auto drained = run_report("seed000-virtio-blk.toml", plus(busy, {"host.drain_ring=true"}));
  const auto unheld =
      run_report("seed000-virtio-blk.toml", plus(busy, {"host.virtio_blk_batching=none", "host.drain_ring=true"}));
  const auto gap = [](const models::IoRunReport& m) {
    return m.get("write.clat.mean_ns").mean - m.get("read.clat.mean_ns").mean;
  };
  const double device_gap = gap(unheld);  // the writes' own extra (the RAID1's second leg)
  const double hold_fifo = fifo.get("host.main_loop.batch.response_mean_ns").mean;
  const double hold_drained = drained.get("host.main_loop.batch.response_mean_ns").mean;
  CHECK(hold_drained < hold_fifo / 3);
  CHECK(gap(fifo) - device_gap > 3 * (gap(drained) - device_gap));
  CHECK(drained.little_worst < 0.01);
  // Without the held requests the order of the loop's work moves little.
  const auto unheld_fifo =
      run_report("seed000-virtio-blk.toml", plus(busy, {"host.virtio_blk_batching=none", "host.drain_ring=false"}));
  CHECK(unheld.get("read.iops").mean == doctest::Approx(unheld_fifo.get("read.iops").mean).epsilon(0.03));
}
