// fio job files and command lines -> JobSpec (models/fio_jobfile.h). Expected values come
// from fio's HOWTO and, where it and fio disagree, from fio 3.33 runs with the null engine (the
// comments in models/fio_jobfile.cc say which); fixtures live in tests/data/jobfiles/.
#include "models/fio_jobfile.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

using vqsim::fio::BlockSplit;
using vqsim::fio::Direction;
using vqsim::fio::JobFile;
using vqsim::fio::JobFileError;
using vqsim::fio::JobSpec;
using vqsim::fio::parse_fio_size_bytes;
using vqsim::fio::parse_fio_time_ns;
using vqsim::fio::parse_job_command_line;
using vqsim::fio::parse_job_file;
using vqsim::fio::parse_job_text;
using vqsim::fio::RwMode;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kS = 1'000'000'000;

std::string data_dir() {
  std::string d = VQSIM_SOURCE_DIR;
  d.append("/tests/data/jobfiles");
  return d;
}

std::string fixture(const std::string& name) {
  std::string p = data_dir();
  p.append("/");
  p.append(name);
  return p;
}

JobFile parse(const std::string& text, const std::map<std::string, std::string>& env = {}) {
  return parse_job_text(text, "t.fio", data_dir(), env);
}

JobSpec one_job(const std::string& text, const std::map<std::string, std::string>& env = {}) {
  const JobFile f = parse(text, env);
  REQUIRE(f.jobs.size() == 1);
  return f.jobs[0];
}

// The message of the JobFileError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text, const std::map<std::string, std::string>& env = {}) {
  try {
    parse(text, env);
  } catch (const JobFileError& e) {
    return e.what();
  }
  return "";
}

std::string file_error_of(const std::string& name) {
  try {
    parse_job_file(fixture(name));
  } catch (const JobFileError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const std::string& l : lines) {
    if (contains(l, needle)) return true;
  }
  return false;
}

std::size_t R(Direction d) { return static_cast<std::size_t>(d); }

}  // namespace

TEST_CASE("sizes follow fio 3.33: k/m/g with kb_base, and only the 'ib' forms flip the base") {
  CHECK(parse_fio_size_bytes("4096") == 4096);
  CHECK(parse_fio_size_bytes("4096b") == 4096);
  CHECK(parse_fio_size_bytes("4096B") == 4096);
  CHECK(parse_fio_size_bytes("0x100") == 256);
  CHECK(parse_fio_size_bytes("4k") == 4096);
  CHECK(parse_fio_size_bytes("4K") == 4096);
  CHECK(parse_fio_size_bytes("4kb") == 4096);
  CHECK(parse_fio_size_bytes("4KB") == 4096);
  CHECK(parse_fio_size_bytes("1m") == 1048576);
  CHECK(parse_fio_size_bytes("1g") == 1073741824ULL);
  CHECK(parse_fio_size_bytes("2t") == 2ULL << 40);
  // Measured with fio 3.33 (null engine, bs=8): 1mi = 1 MiB but 1mib = 1MiB = 10^6 bytes under
  // the default kb_base=1024; the HOWTO's table claims 1mi = 10^6, the program does not.
  CHECK(parse_fio_size_bytes("1mi") == 1048576);
  CHECK(parse_fio_size_bytes("1mib") == 1000000);
  CHECK(parse_fio_size_bytes("1MiB") == 1000000);
  CHECK(parse_fio_size_bytes("2gib") == 2000000000ULL);
  // kb_base=1000: SI prefixes are powers of 1000, the IEC ones powers of 1024.
  CHECK(parse_fio_size_bytes("4k", 1000) == 4000);
  CHECK(parse_fio_size_bytes("4kB", 1000) == 4000);
  CHECK(parse_fio_size_bytes("4KiB", 1000) == 4096);
  CHECK(parse_fio_size_bytes("1mi", 1000) == 1000000);
  CHECK(parse_fio_size_bytes("1m", 1000) == 1000000);
  CHECK(parse_fio_size_bytes("2gib", 1000) == 2147483648ULL);

  for (const char* bad : {"", "abc", "k", "-1", "1.5k", "4q", "4kbb", "(2*4k)", "1 k", "0x10k", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_fio_size_bytes(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(parse_fio_size_bytes("(2*4k)"), doctest::Contains("arithmetic"), std::invalid_argument);
}

TEST_CASE("issue 17, item 6: bs=4KiB is 4000 bytes as fio reads it, and the job file's reader says so") {
  // fio 3.33, null engine (tests/data/fio/kb_base.fio): "bs=4KiB" printed "bs=(R) 4000B-4000B".
  const JobFile kib = parse("[j]\nbs=4KiB\n");
  REQUIRE(kib.jobs.size() == 1);
  CHECK(kib.jobs[0].bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{4000, 4000, 4000});
  REQUIRE(kib.warnings.size() == 1);  // buffered (direct=0): 4000-byte I/O runs, so only the unit note
  CHECK(contains(kib.warnings[0], "t.fio:2: bs=4KiB is 4000 bytes: with kb_base=1024, its default, fio reads the units KiB"));
  CHECK(contains(kib.warnings[0], "write 4k for 4096 bytes, or set kb_base=1000"));
  // "4KB" and "4k" are 4096 under the default, and not worth a note.
  CHECK(one_job("[j]\nbs=4KB\n").bs_bytes[0] == 4096);
  CHECK(parse("[j]\nbs=4KB\n").warnings.empty());
  // kb_base=1000 turns both around (fio printed "(R) 4096B-4096B, (W) 4000B-4000B").
  const JobFile si = parse("[j]\nkb_base=1000\nbs=4KiB,4k\n");
  CHECK(si.jobs[0].bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{4096, 4000, 4000});
  CHECK(si.warnings.empty());
  // Other sizes get the same note, with the shorthand fio reads as meant.
  CHECK(any_contains(parse("[j]\nsize=1GiB\n").warnings, "size=1GiB is 1000000000 bytes"));
  CHECK(any_contains(parse("[j]\nsize=1GiB\n").warnings, "write 1g for 1073741824 bytes"));
  CHECK(any_contains(parse("[j]\nbssplit=4KiB/50:64k/50\n").warnings, "(4KiB is 4000 bytes)"));
  // The value parser the readers of fio outputs share.
  CHECK(vqsim::fio::parse_fio_block_sizes("4KiB,4k") == vqsim::fio::PerDirection<std::uint64_t>{4000, 4096, 4096});
  CHECK(vqsim::fio::parse_fio_block_sizes(",8k") == vqsim::fio::PerDirection<std::uint64_t>{4096, 8192, 8192});
  CHECK(vqsim::fio::parse_fio_block_sizes("4KiB", 1000) == vqsim::fio::PerDirection<std::uint64_t>{4096, 4096, 4096});
  CHECK_THROWS_AS(vqsim::fio::parse_fio_block_sizes("4k-8k"), std::invalid_argument);
}

TEST_CASE("issue 17, item 6: with direct=1 a block size that is not whole sectors is flagged, as fio would fail") {
  // fio 3.33, psync, direct=1, bs=4KiB: "fio: io_u error on file …: Invalid argument: read
  // offset=0, buflen=4000".
  const JobFile f = parse("[j]\nioengine=libaio\ndirect=1\niodepth=8\nbs=4KiB\n");
  CHECK(any_contains(f.warnings,
                     "t.fio:5: job 'j': a block size of 4000 bytes for reads is not a multiple of 512 (the sector "
                     "size): with direct=1 the kernel refuses such I/O and fio stops with \"io_u error ...: "
                     "Invalid argument\" (bs=4KiB: fio reads KiB as 1000 bytes under kb_base=1024; 4k is 4096)"));
  // Only the directions the job uses count.
  CHECK(any_contains(parse("[j]\nrw=randwrite\ndirect=1\nbs=4k,4000\n").warnings,
                     "4000 bytes for writes is not a multiple of 512"));
  CHECK_FALSE(any_contains(parse("[j]\nrw=randread\ndirect=1\nbs=4k,4000\n").warnings, "multiple of 512"));
  CHECK(any_contains(parse("[j]\ndirect=1\nbssplit=4k/50:1000/50\n").warnings, "a block size of 1000 bytes for reads"));
  // Buffered I/O of 4000 bytes is legal.
  CHECK_FALSE(any_contains(parse("[j]\nbs=4000\n").warnings, "multiple of 512"));
}

TEST_CASE("times: plain numbers in the option's unit, us/ms/s/m/h/d suffixes in any case") {
  CHECK(parse_fio_time_ns("10", kS) == 10 * kS);      // runtime=10: seconds
  CHECK(parse_fio_time_ns("100", kUs) == 100 * kUs);  // thinktime=100: microseconds
  CHECK(parse_fio_time_ns("10s", kUs) == 10 * kS);
  CHECK(parse_fio_time_ns("10S", kUs) == 10 * kS);
  CHECK(parse_fio_time_ns("1m", kS) == 60 * kS);  // minutes, not milli
  CHECK(parse_fio_time_ns("1M", kUs) == 60 * kS);
  CHECK(parse_fio_time_ns("2h", kS) == 7200 * kS);
  CHECK(parse_fio_time_ns("1d", kS) == 86400 * kS);
  CHECK(parse_fio_time_ns("500ms", kS) == 500 * kMs);
  CHECK(parse_fio_time_ns("500msec", kS) == 500 * kMs);
  CHECK(parse_fio_time_ns("100us", kS) == 100 * kUs);
  CHECK(parse_fio_time_ns("100usec", kS) == 100 * kUs);
  CHECK(parse_fio_time_ns("0", kS) == 0);
  // fio 3.33 reads "1sec" and "1min" as one microsecond; vqsim refuses and says what to write.
  CHECK_THROWS_WITH_AS(parse_fio_time_ns("1sec", kS), doctest::Contains("write 1s"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_fio_time_ns("5min", kS), doctest::Contains("write 5m"), std::invalid_argument);
  for (const char* bad : {"", "x", "10x", "1.5s", "-1", "10ns"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_fio_time_ns(bad, kS), std::invalid_argument);
  }
}

TEST_CASE("several [global] sections, includes, comments and empty jobs") {
  const std::string path = fixture("several_globals.fio");
  const JobFile f = parse_job_file(path);
  REQUIRE(f.jobs.size() == 4);
  CHECK(f.unsupported.empty());
  // third's bs=4k under kb_base=1000 is 4000 bytes, with the first [global]'s direct=1 and
  // libaio: fio parses it, and the kernel then refuses every read (EINVAL).
  REQUIRE(f.warnings.size() == 1);
  CHECK(contains(f.warnings[0],
                 "several_globals.fio:25: job 'third': a block size of 4000 bytes for reads is not a multiple of 512"));
  CHECK(contains(f.warnings[0], "with direct=1 the kernel refuses such I/O"));
  const JobSpec& first = f.jobs[0];
  const JobSpec& second = f.jobs[1];
  const JobSpec& third = f.jobs[2];
  const JobSpec& fourth = f.jobs[3];
  CHECK(first.name == "first");
  CHECK(second.name == "second");
  CHECK(third.name == "third");
  CHECK(fourth.name == "fourth");

  // First [global]: " = " spacing, bs per direction, the include chain, a trailing comment.
  for (const JobSpec* j : {&first, &second}) {
    CHECK(j->ioengine == "libaio");
    CHECK(j->direct);
    CHECK(j->bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{8192, 32768, 32768});
    CHECK(j->iodepth == 4);                                        // inc/common.fio
    CHECK(j->runtime_ns == std::optional<std::int64_t>(10 * kS));  // inc/nested.fio
    CHECK(j->time_based);
    CHECK(j->size_bytes == std::optional<std::uint64_t>(64ULL << 20));
    CHECK(j->kb_base == 1024);
  }
  CHECK(first.rw == RwMode::randrw);
  CHECK(first.random);
  CHECK(first.rwmixread == 70);
  CHECK(first.read_fraction == doctest::Approx(0.7));
  CHECK(second.rw == RwMode::read);  // fio's default
  CHECK(!second.random);
  CHECK(second.read_fraction == 1.0);

  // The second [global] applies to the jobs below it only; its kb_base governs its own size
  // (10^6) and third's bs=4k (4000 bytes; measured with fio 3.33), but not the 8k,32k parsed
  // in the first [global].
  for (const JobSpec* j : {&third, &fourth}) {
    CHECK(j->iodepth == 16);
    CHECK(j->rw == RwMode::randread);
    CHECK(j->kb_base == 1000);
    CHECK(j->size_bytes == std::optional<std::uint64_t>(1000000));
    CHECK(j->ioengine == "libaio");
  }
  CHECK(third.bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{4000, 4000, 4000});
  CHECK(fourth.bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{8192, 32768, 32768});
  CHECK(fourth.numjobs == 4);  // one JobSpec; the clones are made later

  // Reporting groups as fio 3.33 numbered them for this file: 0, 0, 1 (stonewall), 2 (new_group).
  CHECK(first.group == 0);
  CHECK(second.group == 0);
  CHECK(third.group == 1);
  CHECK(third.stonewall);
  CHECK(fourth.group == 2);
  CHECK(fourth.new_group);

  // Where options came from, including included files.
  CHECK(ends_with(first.origin.at("iodepth").file, "inc/common.fio"));
  CHECK(first.origin.at("iodepth").line == 2);
  CHECK(ends_with(first.origin.at("time_based").file, "inc/nested.fio"));
  CHECK(first.origin.at("size").file == path);
  CHECK(first.origin.at("size").line == 8);
  CHECK(first.origin.at("rwmixread").line == 12);
  CHECK(fourth.section.line == 27);
  CHECK(first.raw.at("ioengine") == "libaio");
  CHECK(first.raw.at("time_based").empty());
  CHECK(first.raw.at("size") == "64m");
}

TEST_CASE("the repository's mixed.fio") {
  const JobFile f = parse_job_file(std::string(VQSIM_SOURCE_DIR) + "/tests/data/fio/mixed.fio");
  REQUIRE(f.jobs.size() == 1);
  const JobSpec& j = f.jobs[0];
  CHECK(j.name == "randrw");
  CHECK(j.ioengine == "null");
  CHECK(j.size_bytes == std::optional<std::uint64_t>(64ULL << 20));
  CHECK(j.bs_bytes[R(Direction::read)] == 4096);
  CHECK(j.bs_bytes[R(Direction::write)] == 4096);
  CHECK(j.iodepth == 8);
  CHECK(j.runtime_ns == std::optional<std::int64_t>(1 * kS));
  CHECK(j.time_based);
  CHECK(j.rw == RwMode::randrw);
  CHECK(j.read_fraction == doctest::Approx(0.7));
  CHECK(j.numjobs == 2);
  CHECK(j.group == 0);
  CHECK(f.unsupported.empty());
}

TEST_CASE("seed 000: fio 2.1.11 randrw 4k, iodepth 32, libaio, direct") {
  const JobFile f = parse_job_file(fixture("seed000_readtest.fio"));
  REQUIRE(f.jobs.size() == 1);
  const JobSpec& j = f.jobs[0];
  CHECK(j.name == "readtest");
  CHECK(j.rw == RwMode::randrw);
  CHECK(j.random);
  CHECK(j.read_fraction == 0.5);
  CHECK(j.bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{4096, 4096, 4096});
  CHECK(j.ioengine == "libaio");
  CHECK(j.iodepth == 32);
  CHECK(j.iodepth_batch_submit == 1);
  CHECK(j.iodepth_batch_complete_min == 1);
  CHECK(j.iodepth_batch_complete_max == 1);
  CHECK(j.direct);
  CHECK(j.size_bytes == std::optional<std::uint64_t>(10ULL << 30));
  CHECK(j.filename == "/dev/vdb");
  CHECK(j.numjobs == 1);
  CHECK(!j.runtime_ns);
  CHECK(f.unsupported.empty());
  CHECK(f.warnings.empty());
}

TEST_CASE("defaults of an empty job are fio's") {
  const JobFile f = parse("[a]\n[b]\n");
  REQUIRE(f.jobs.size() == 2);
  const JobSpec& j = f.jobs[1];
  CHECK(j.name == "b");
  CHECK(j.rw == RwMode::read);
  CHECK(j.read_fraction == 1.0);
  CHECK(j.rwmixread == 50);
  CHECK(j.bs_bytes == vqsim::fio::PerDirection<std::uint64_t>{4096, 4096, 4096});
  CHECK(j.bssplit[0].empty());
  CHECK(j.iodepth == 1);
  CHECK(j.iodepth_batch_submit == 1);
  CHECK(j.iodepth_batch_complete_min == 1);
  CHECK(j.iodepth_batch_complete_max == 1);
  CHECK(j.ioengine == "psync");
  CHECK(!j.direct);
  CHECK(!j.size_bytes);
  CHECK(!j.size_percent);
  CHECK(!j.runtime_ns);
  CHECK(j.ramp_time_ns == 0);
  CHECK(!j.time_based);
  CHECK(j.thinktime_ns == 0);
  CHECK(j.thinktime_blocks == 1);
  CHECK(!j.rate_iops[0]);
  CHECK(j.rate_process == "linear");
  CHECK(j.numjobs == 1);
  CHECK(!j.group_reporting);
  CHECK(j.kb_base == 1024);
  CHECK(j.group == 0);
  CHECK(j.raw.empty());
}

TEST_CASE("rw and the read mix") {
  CHECK(one_job("[j]\nrw=randrw\nrwmixread=30\n").read_fraction == doctest::Approx(0.3));
  CHECK(one_job("[j]\nrw=rw\nrwmixwrite=20\n").read_fraction == doctest::Approx(0.8));
  // HOWTO: when both are given, the latter overrides the first (fio 3.33 read 70% here).
  CHECK(one_job("[j]\nrw=randrw\nrwmixread=30\nrwmixwrite=30\n").rwmixread == 70);
  CHECK(one_job("[j]\nrw=randrw\n").read_fraction == 0.5);
  CHECK(one_job("[j]\nrw=rw\n").rw == RwMode::readwrite);
  CHECK(one_job("[j]\nreadwrite=readwrite\n").rw == RwMode::readwrite);
  CHECK(!one_job("[j]\nrw=rw\n").random);
  const JobSpec w = one_job("[j]\nrw=randwrite\n");
  CHECK(w.rw == RwMode::randwrite);
  CHECK(w.random);
  CHECK(w.read_fraction == 0.0);
  CHECK(one_job("[j]\nrw=write\n").read_fraction == 0.0);
  CHECK(one_job("[j]\nrw=trim\n").rw == RwMode::trim);
  CHECK(one_job("[j]\nrw=randtrim\n").random);
  CHECK(one_job("[j]\nrw=trimwrite\n").read_fraction == 0.0);
  CHECK(one_job("[j]\nrw=randread\n").read_fraction == 1.0);
  CHECK(error_of("[j]\nrw=randred\n") ==
        "t.fio:2: rw: expected read, write, trim, randread, randwrite, randtrim, rw, "
        "readwrite, randrw, trimwrite or randtrimwrite, got 'randred' (did you mean "
        "'randread'?)");
  CHECK(to_string(RwMode::readwrite) == "readwrite");
  CHECK(to_string(RwMode::randrw) == "randrw");
}

TEST_CASE("bs per direction, as in the HOWTO's examples") {
  using Bs = vqsim::fio::PerDirection<std::uint64_t>;
  CHECK(one_job("[j]\nbs=256k\n").bs_bytes == Bs{262144, 262144, 262144});
  CHECK(one_job("[j]\nbs=8k,32k\n").bs_bytes == Bs{8192, 32768, 32768});
  CHECK(one_job("[j]\nbs=8k,32k,\n").bs_bytes == Bs{8192, 32768, 4096});
  CHECK(one_job("[j]\nbs=,8k\n").bs_bytes == Bs{4096, 8192, 8192});
  CHECK(one_job("[j]\nbs=,8k,\n").bs_bytes == Bs{4096, 8192, 4096});
  CHECK(one_job("[j]\nblocksize=1k,2k,3k\n").bs_bytes == Bs{1024, 2048, 3072});
  // An empty element keeps the inherited value (fio 3.33: [global] bs=16k then bs=,8k reads 16k).
  CHECK(one_job("[global]\nbs=16k\n[j]\nbs=,8k\n").bs_bytes == Bs{16384, 8192, 8192});
  CHECK(error_of("[j]\nbs=0\n") == "t.fio:2: bs: expected a block size of at least 1 byte, got '0'");
  CHECK(contains(error_of("[j]\nbs=4k-8k\n"), "t.fio:2: bs: bs takes one size per direction"));
  CHECK(contains(error_of("[j]\nbs=1k,2k,3k,4k\n"), "at most three"));
}

TEST_CASE("bssplit") {
  const JobSpec j = one_job("[j]\nbssplit=4k/50:64k/50\n");
  const std::vector<BlockSplit> half_half{{4096, 50}, {65536, 50}};
  for (std::size_t d = 0; d < 3; ++d) CHECK(j.bssplit[d] == half_half);

  // Blank percentages share the rest (HOWTO: 50% 4k, 25% 1k, 25% 32k).
  const std::vector<BlockSplit> filled{{4096, 50}, {1024, 25}, {32768, 25}};
  CHECK(one_job("[j]\nbssplit=4k/50:1k/:32k/\n").bssplit[0] == filled);
  CHECK(one_job("[j]\nbssplit=8k\n").bssplit[0] == std::vector<BlockSplit>{{8192, 100}});

  // Reads and writes apart (HOWTO example); trims follow writes.
  const JobSpec rw = one_job("[j]\nbssplit=2k/50:4k/50,4k/90:8k/10\n");
  CHECK(rw.bssplit[R(Direction::read)] == std::vector<BlockSplit>{{2048, 50}, {4096, 50}});
  CHECK(rw.bssplit[R(Direction::write)] == std::vector<BlockSplit>{{4096, 90}, {8192, 10}});
  CHECK(rw.bssplit[R(Direction::trim)] == std::vector<BlockSplit>{{4096, 90}, {8192, 10}});

  // fio 3.33 runs 4k/60:64k/50; vqsim keeps it and warns.
  const JobFile over = parse("[j]\nbssplit=4k/60:64k/50\n");
  CHECK(over.jobs[0].bssplit[0] == std::vector<BlockSplit>{{4096, 60}, {65536, 50}});
  CHECK(any_contains(over.warnings, "t.fio:2: bssplit '4k/60:64k/50' adds up to 110%"));
  CHECK(contains(error_of("[j]\nbssplit=4k/60:8k/:16k/50\n"), "t.fio:2: bssplit: percentages add up to more than 100"));
  CHECK(contains(error_of("[j]\nbssplit=4k/150\n"), "t.fio:2: bssplit: expected a percentage from 0 to 100"));
  CHECK(contains(error_of("[j]\nbssplit=4k/50::8k/50\n"), "empty entry"));
}

TEST_CASE("iodepth and the batch options, with fio's fixups") {
  const JobSpec j = one_job(
      "[j]\nioengine=libaio\ndirect=1\niodepth=32\niodepth_batch_submit=8\niodepth_batch_complete_min=4\n"
      "iodepth_batch_complete_max=16\n");
  CHECK(j.iodepth == 32);
  CHECK(j.iodepth_batch_submit == 8);
  CHECK(j.iodepth_batch_complete_min == 4);
  CHECK(j.iodepth_batch_complete_max == 16);
  // "If it is set to 0 the iodepth value will be used"; above iodepth is capped (init.c).
  CHECK(one_job("[j]\niodepth=32\niodepth_batch=0\n").iodepth_batch_submit == 32);
  CHECK(one_job("[j]\niodepth=32\niodepth_batch_submit=64\n").iodepth_batch_submit == 32);
  // complete_max defaults to complete_min (HOWTO; init.c fixup_options), not to iodepth.
  const JobSpec min_only = one_job("[j]\niodepth=32\niodepth_batch_complete=8\n");
  CHECK(min_only.iodepth_batch_complete_min == 8);
  CHECK(min_only.iodepth_batch_complete_max == 8);
  CHECK(one_job("[j]\niodepth=32\niodepth_batch_complete_min=0\n").iodepth_batch_complete_max == 0);
  CHECK(one_job("[j]\niodepth=1k\n").iodepth == 1024);  // fio's integers take size suffixes
  CHECK(error_of("[j]\niodepth=0\n") == "t.fio:2: iodepth: expected a positive integer, got '0'");
  CHECK(error_of("[j]\niodepth=-4\n") == "t.fio:2: iodepth: expected a positive integer, got '-4'");
  CHECK(error_of("[j]\niodepth\n") == "t.fio:2: iodepth: expected a value (option=value)");
  CHECK(error_of("[j]\nbs=\n") == "t.fio:2: bs: expected a value (option=value)");
  CHECK(error_of("[j]\nbs=${EMPTY}\n", {{"EMPTY", ""}}) == "t.fio:2: bs: expected a value (option=value)");
}

TEST_CASE("ioengine and direct") {
  CHECK(one_job("[j]\nbuffered=0\n").direct);
  CHECK(!one_job("[j]\ndirect=1\nbuffered=1\n").direct);
  CHECK(one_job("[j]\ndirect\n").direct);
  CHECK(!one_job("[global]\ndirect=1\n[j]\ndirect=0\n").direct);
  CHECK(one_job("[j]\nioengine=io_uring\n").ioengine == "io_uring");
  CHECK(one_job("[j]\nioengine=external:/opt/plugin.so\n").ioengine == "external:/opt/plugin.so");
  CHECK(error_of("[j]\nioengine=liaio\n") == "t.fio:2: ioengine: unknown I/O engine 'liaio' (did you mean 'libaio'?)");
  CHECK(contains(error_of("[j]\ndirect=2\n"), "t.fio:2: direct: expected 1 or 0"));

  const JobFile plugin = parse("[j]\nioengine=mycustomengine\n");
  CHECK(any_contains(plugin.warnings, "t.fio:2: ioengine=mycustomengine is not one of fio 3.33's engines"));

  // Settings that run but do not do what they seem to (HOWTO, iodepth).
  const JobFile sync = parse("[j]\niodepth=16\n");
  CHECK(any_contains(sync.warnings, "t.fio:1: job 'j': iodepth=16 has no effect with the synchronous engine psync"));
  const JobFile buffered = parse("[j]\nioengine=libaio\niodepth=16\n");
  CHECK(any_contains(buffered.warnings, "libaio without direct=1"));

  // fio itself refuses true/false for bools; vqsim takes them and warns.
  const JobFile words = parse("[j]\ndirect=true\ntime_based=false\n");
  CHECK(words.jobs[0].direct);
  CHECK(!words.jobs[0].time_based);
  CHECK(words.warnings.size() == 2);
  CHECK(any_contains(words.warnings, "t.fio:2: direct=true: fio itself accepts only 1 or 0"));
}

TEST_CASE("size, runtime, ramp_time, time_based, thinktime") {
  CHECK(one_job("[j]\nsize=1m\n").size_bytes == std::optional<std::uint64_t>(1048576));
  CHECK(one_job("[j]\nsize=1mi\n").size_bytes == std::optional<std::uint64_t>(1048576));
  CHECK(one_job("[j]\nkb_base=1000\nsize=1m\n").size_bytes == std::optional<std::uint64_t>(1000000));
  // kb_base governs its whole section wherever it is written (fio sorts options by priority).
  CHECK(one_job("[j]\nsize=4k\nkb_base=1000\n").size_bytes == std::optional<std::uint64_t>(4000));
  const JobSpec percent = one_job("[global]\nsize=1g\n[j]\nsize=20%\n");
  CHECK(percent.size_percent == std::optional<unsigned>(20));
  CHECK(!percent.size_bytes);
  CHECK(!one_job("[j]\nsize=0\n").size_bytes);
  CHECK(contains(error_of("[j]\nsize=150%\n"), "t.fio:2: size: expected an integer from 1 to 100"));
  CHECK(contains(error_of("[j]\nkb_base=512\n"), "t.fio:2: kb_base: expected 1024 or 1000, got '512'"));

  const JobSpec t = one_job("[j]\nruntime=1m\nramp_time=5s\ntime_based\nthinktime=100\nthinktime_blocks=4\n");
  CHECK(t.runtime_ns == std::optional<std::int64_t>(60 * kS));
  CHECK(t.ramp_time_ns == 5 * kS);
  CHECK(t.time_based);
  CHECK(t.thinktime_ns == 100 * kUs);
  CHECK(t.thinktime_blocks == 4);
  CHECK(one_job("[j]\nruntime=10\n").runtime_ns == std::optional<std::int64_t>(10 * kS));
  CHECK(one_job("[j]\nruntime=10s\n").runtime_ns == std::optional<std::int64_t>(10 * kS));
  CHECK(one_job("[j]\ntimeout=250ms\n").runtime_ns == std::optional<std::int64_t>(250 * kMs));
  CHECK(!one_job("[j]\nruntime=0\n").runtime_ns);
  CHECK(one_job("[j]\nthinktime=2ms\n").thinktime_ns == 2 * kMs);
  CHECK(!one_job("[global]\ntime_based=1\n[j]\ntime_based=0\nruntime=1\n").time_based);
  CHECK(error_of("[j]\nruntime=1sec\n") ==
        "t.fio:2: runtime: unknown time unit 'sec' in '1sec' (fio 3.33 ignores it and reads the number as "
        "microseconds; write 1s)");
  CHECK(any_contains(parse("[j]\ntime_based\n").warnings, "time_based without runtime"));
  CHECK(any_contains(parse("[j]\nthinktime_blocks=2\n").warnings, "thinktime_blocks has no effect without thinktime"));
}

TEST_CASE("rate_iops and rate_process") {
  const JobSpec j = one_job("[j]\nrw=randrw\nrate_iops=500,200\nrate_process=poisson\n");
  CHECK(j.rate_iops[R(Direction::read)] == std::optional<std::uint64_t>(500));
  CHECK(j.rate_iops[R(Direction::write)] == std::optional<std::uint64_t>(200));
  CHECK(j.rate_iops[R(Direction::trim)] == std::optional<std::uint64_t>(200));
  CHECK(j.rate_process == "poisson");
  // "rate=500k," caps reads only; ",500k" writes only (HOWTO, rate; fio 3.33 agrees).
  const JobSpec reads_only = one_job("[j]\nrate_iops=100,\n");
  CHECK(reads_only.rate_iops[0] == std::optional<std::uint64_t>(100));
  CHECK(!reads_only.rate_iops[1]);
  CHECK(!reads_only.rate_iops[2]);
  const JobSpec inherited = one_job("[global]\nrate_iops=100\n[j]\nrate_iops=,50\n");
  CHECK(inherited.rate_iops[0] == std::optional<std::uint64_t>(100));
  CHECK(inherited.rate_iops[1] == std::optional<std::uint64_t>(50));
  CHECK(!one_job("[global]\nrate_iops=100\n[j]\nrate_iops=0\n").rate_iops[0]);
  CHECK(error_of("[j]\nrate_process=poison\n") ==
        "t.fio:2: rate_process: expected linear or poisson, got 'poison' (did "
        "you mean 'poisson'?)");
}

TEST_CASE("numjobs, group_reporting, stonewall and groups") {
  const JobSpec j = one_job("[j]\nnumjobs=8\ngroup_reporting\n");
  CHECK(j.numjobs == 8);
  CHECK(j.group_reporting);
  CHECK(error_of("[j]\nnumjobs=0\n") == "t.fio:2: numjobs: expected a positive integer, got '0'");
  // A stonewall in [global] makes every job but the first open a group (fio 3.33: 0, 1, 2).
  const JobFile walls = parse("[global]\nstonewall\n[a]\n[b]\n[c]\n");
  REQUIRE(walls.jobs.size() == 3);
  CHECK(walls.jobs[0].group == 0);
  CHECK(walls.jobs[1].group == 1);
  CHECK(walls.jobs[2].group == 2);
  const JobFile groups = parse("[a]\n[b]\nnew_group\n[c]\n[d]\nwait_for_previous\n");
  CHECK(groups.jobs[1].group == 1);
  CHECK(groups.jobs[2].group == 1);
  CHECK(groups.jobs[3].group == 2);
  CHECK(groups.jobs[3].stonewall);
}

TEST_CASE("${VAR} from the map, then the process environment; reserved keywords from the map") {
  const JobFile f = parse_job_file(fixture("env.fio"), {{"DEV", "/dev/vdb"}, {"SIZE", "1g"}});
  REQUIRE(f.jobs.size() == 1);
  CHECK(f.jobs[0].filename == "/dev/vdb");
  CHECK(f.jobs[0].size_bytes == std::optional<std::uint64_t>(1ULL << 30));
  CHECK(f.jobs[0].raw.at("filename") == "/dev/vdb");

  ::setenv("VQSIM_JOBFILE_TEST_DEPTH", "12", 1);
  CHECK(one_job("[j]\niodepth=${VQSIM_JOBFILE_TEST_DEPTH}\n").iodepth == 12);
  CHECK(one_job("[j]\niodepth=${VQSIM_JOBFILE_TEST_DEPTH}\n", {{"VQSIM_JOBFILE_TEST_DEPTH", "3"}}).iodepth == 3);
  ::unsetenv("VQSIM_JOBFILE_TEST_DEPTH");
  CHECK(one_job("[j]\nfilename=/dev/${D}1\n", {{"D", "sdb"}}).filename == "/dev/sdb1");

  std::string message;
  try {
    parse_job_file(fixture("env.fio"), {{"SIZE", "1g"}});
  } catch (const JobFileError& e) {
    message = e.what();
    CHECK(e.line() == 2);
    CHECK(e.option() == "filename");
  }
  CHECK(ends_with(message,
                  "env.fio:2: filename: environment variable 'DEV' is not defined (fio would substitute an "
                  "empty string)"));
  CHECK(contains(error_of("[j]\nsize=${SIZE\n"), "unterminated ${"));

  CHECK(one_job("[j]\nnumjobs=$ncpus\n", {{"ncpus", "8"}}).numjobs == 8);
  CHECK(one_job("[j]\nbs=$pagesize\n", {{"pagesize", "4096"}}).bs_bytes[0] == 4096);
  CHECK(error_of("[j]\nnumjobs=$ncpus\n") ==
        "t.fio:2: numjobs: $ncpus describes the machine fio ran on; pass ncpus in the environment map or write the "
        "number");
}

TEST_CASE("options vqsim does not model are reported by name, never dropped") {
  const JobFile f = parse_job_file(fixture("unsupported.fio"));
  REQUIRE(f.jobs.size() == 1);
  const JobSpec& j = f.jobs[0];
  CHECK(j.rw == RwMode::randread);
  CHECK(j.rw_offset_modifier == "8");
  CHECK(j.raw.at("verify") == "md5");
  CHECK(j.raw.at("norandommap").empty());
  CHECK(j.raw.at("frobnicate") == "1");
  REQUIRE(f.unsupported.size() == 5);
  CHECK(ends_with(f.unsupported[0], "unsupported.fio:4: option 'norandommap' is not modelled and is ignored"));
  CHECK(ends_with(f.unsupported[1], "unsupported.fio:5: option 'randrepeat' is not modelled and is ignored"));
  CHECK(ends_with(f.unsupported[2], "unsupported.fio:7: option 'verify' is not modelled and is ignored"));
  CHECK(ends_with(f.unsupported[3],
                  "unsupported.fio:9: option 'frobnicate' is not a fio option vqsim knows (fio "
                  "3.33 HOWTO) and is ignored"));
  CHECK(any_contains(f.unsupported, "unsupported.fio:8: option 'rw' suffix ':8'"));
  // A [global] option is reported once, at its line, however many jobs inherit it.
  const JobFile g = parse("[global]\nverify=crc32c\n[a]\n[b]\n");
  CHECK(g.unsupported == std::vector<std::string>{"t.fio:2: option 'verify' is not modelled and is ignored"});
  // A near miss of an unmodelled option gets a hint but stays a report.
  CHECK(any_contains(parse("[a]\nverfy=md5\n").unsupported, "(did you mean 'verify'?)"));
}

TEST_CASE("a typo of a modelled option is an error with a suggestion") {
  CHECK(ends_with(file_error_of("typo.fio"), "typo.fio:4: iodeth: unknown option (did you mean 'iodepth'?)"));
  CHECK(error_of("[j]\nramptime=5\n") == "t.fio:2: ramptime: unknown option (did you mean 'ramp_time'?)");
  CHECK(error_of("[j]\nbz=4k\n") == "t.fio:2: bz: unknown option (did you mean 'bs'?)");
  CHECK(error_of("[j]\nrwmixred=70\n") == "t.fio:2: rwmixred: unknown option (did you mean 'rwmixread'?)");
}

TEST_CASE("bad values and bad structure name the file and line") {
  CHECK(ends_with(file_error_of("bad_value.fio"), "bad_value.fio:4: iodepth: expected a positive integer, got 'abc'"));
  CHECK(error_of("[j]\nrwmixread=150\n") == "t.fio:2: rwmixread: expected an integer from 0 to 100, got '150'");
  CHECK(error_of("rw=read\n[j]\n") == "t.fio:1: rw: option outside any section (start a job with [name] or [global])");
  CHECK(error_of("; only defaults\n[global]\nrw=read\n") == "t.fio: no job in the file (only [global] sections, or nothing)");
  CHECK(error_of("") == "t.fio: no job in the file (only [global] sections, or nothing)");
  CHECK(error_of("[j\n") == "t.fio:1: expected a section header [name], got '[j'");
  CHECK(error_of("[ ]\n") == "t.fio:1: empty section name []");
  CHECK(error_of("[j]\nrw read\n") == "t.fio:2: expected option=value or a bare option name, got 'rw read'");
  CHECK(contains(error_of("[j]\nsize=(2*4k)\n"), "t.fio:2: size: arithmetic expressions are not supported"));

  try {
    parse("[j]\n\n\nbs=abc\n");
    FAIL("no error");
  } catch (const JobFileError& e) {
    CHECK(e.source() == "t.fio");
    CHECK(e.line() == 4);
    CHECK(e.option() == "bs");
  }
  const std::string missing = std::string(VQSIM_SOURCE_DIR) + "/tests/data/jobfiles/no_such.fio";
  CHECK_THROWS_WITH_AS(parse_job_file(missing), (missing + ": cannot read the job file").c_str(), JobFileError);
}

TEST_CASE("comments, blanks, CRLF and '=' spacing") {
  const JobFile f = parse(
      "; leading comment\r\n# another\r\n\r\n[global]\r\n  bs  =  8k  ; trailing\r\nsize=1m#no space needed\r\n"
      "[one]   # after a header\r\nrw = randwrite\r\n");
  REQUIRE(f.jobs.size() == 1);
  CHECK(f.jobs[0].name == "one");
  CHECK(f.jobs[0].bs_bytes[0] == 8192);
  CHECK(f.jobs[0].size_bytes == std::optional<std::uint64_t>(1048576));
  CHECK(f.jobs[0].rw == RwMode::randwrite);
  CHECK(f.jobs[0].origin.at("rw").line == 8);
  CHECK(one_job("[j]\nname=renamed\n").name == "renamed");
}

TEST_CASE("includes: relative to the including file, no sections inside, cycles refused") {
  const JobFile f = parse("[j]\ninclude inc/common.fio\n");
  REQUIRE(f.jobs.size() == 1);
  CHECK(f.jobs[0].iodepth == 4);
  CHECK(f.jobs[0].time_based);
  CHECK(f.jobs[0].runtime_ns == std::optional<std::int64_t>(10 * kS));

  const std::string cycle = file_error_of("cycle_a.fio");
  CHECK(contains(cycle, "cycle_b.fio:2: include: include cycle: cycle_a.fio -> cycle_b.fio -> cycle_a.fio"));
  CHECK(contains(file_error_of("include_missing.fio"), "include_missing.fio:3: include: cannot read"));
  CHECK(contains(error_of("[j]\ninclude typo.fio\n"),
                 "typo.fio:1: an included file may not contain [] sections (fio HOWTO, Job file format)"));
  CHECK(error_of("[j]\ninclude\n") == "t.fio:2: include: expected a file name");
}

TEST_CASE("command-line form") {
  const JobFile f =
      parse_job_command_line({"--ioengine=libaio", "--direct=1", "--name=a", "--rw=randread", "--bs", "4k", "--iodepth=8",
                              "--name=b", "--rw=write", "--output-format=json", "--group_reporting", "-numjobs=2"});
  REQUIRE(f.jobs.size() == 2);
  const JobSpec& a = f.jobs[0];
  const JobSpec& b = f.jobs[1];
  CHECK(a.name == "a");
  CHECK(a.ioengine == "libaio");
  CHECK(a.direct);
  CHECK(a.rw == RwMode::randread);
  CHECK(a.bs_bytes[0] == 4096);
  CHECK(a.iodepth == 8);
  CHECK(a.section.file == "command line");
  CHECK(a.section.line == 3);
  CHECK(a.origin.at("bs").line == 5);
  CHECK(b.name == "b");
  CHECK(b.ioengine == "libaio");
  CHECK(b.rw == RwMode::write);
  CHECK(b.iodepth == 1);
  CHECK(b.group_reporting);
  CHECK(b.numjobs == 2);
  CHECK(a.group == 0);
  CHECK(b.group == 0);
  CHECK(f.unsupported ==
        std::vector<std::string>{"command line:10: fio option '--output-format' is not a job option and is ignored"});

  // --name=global opens a global section, as in the HOWTO's example.
  const JobFile g = parse_job_command_line({"--name=global", "--rw=randread", "--size=128m", "--name=job1", "--name=job2"});
  REQUIRE(g.jobs.size() == 2);
  CHECK(g.jobs[1].rw == RwMode::randread);
  CHECK(g.jobs[1].size_bytes == std::optional<std::uint64_t>(128ULL << 20));

  CHECK_THROWS_WITH_AS(parse_job_command_line({"--name=a", "--iodepth=zero"}),
                       "command line:2: iodepth: expected a positive integer, got 'zero'", JobFileError);
  CHECK_THROWS_WITH_AS(parse_job_command_line({"--rw=read"}), "command line: no job (give --name=... or a job file)",
                       JobFileError);
  CHECK_THROWS_WITH_AS(parse_job_command_line({"--name=a", "--iodeth=4"}),
                       "command line:2: iodeth: unknown option (did you mean 'iodepth'?)", JobFileError);
}

TEST_CASE("command line with job files: globals reach them, later files start new groups") {
  const JobFile f = parse_job_command_line(
      {"--runtime=5", "--name=cli", fixture("seed000_readtest.fio"), "--output", "out.json", fixture("several_globals.fio")});
  // fio 3.33 runs the command line's jobs first, then each file's.
  REQUIRE(f.jobs.size() == 6);
  CHECK(f.jobs[0].name == "cli");
  CHECK(f.jobs[0].runtime_ns == std::optional<std::int64_t>(5 * kS));
  CHECK(f.jobs[1].name == "readtest");
  CHECK(f.jobs[1].runtime_ns == std::optional<std::int64_t>(5 * kS));   // from the command line
  CHECK(f.jobs[2].runtime_ns == std::optional<std::int64_t>(10 * kS));  // the file's include wins
  CHECK(f.jobs[0].group == 0);
  CHECK(f.jobs[1].group == 0);  // the first file joins the command line's group (fio 3.33)
  CHECK(f.jobs[2].name == "first");
  CHECK(f.jobs[2].stonewall);  // fio's implied stonewall between job files
  CHECK(f.jobs[2].group == 1);
  CHECK(f.jobs[3].group == 1);
  CHECK(f.jobs[4].group == 2);
  CHECK(f.jobs[5].group == 3);
  REQUIRE(f.unsupported.size() == 1);
  CHECK(contains(f.unsupported[0], "command line:4: fio option '--output'"));
}
