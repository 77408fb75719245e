// fio JSON / json+ reading (fio 2.x and 3.x), format detection, and vqsim's fio JSON / text
// writers. Expected values are read by eye from the real fio 3.33 outputs in tests/data/fio and
// from the hand-written fio 2.x and client/server fixtures there (kb_base.fio with its JSON and
// normal outputs: fio's size units, run by fio 3.33 with the null engine).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/fio/parse.h"
#include "calibration/fio/writer.h"
#include "models/fio_jobfile.h"

using namespace vqsim::fio;

namespace {

std::string data_path(const char* name) {
  std::string path = VQSIM_SOURCE_DIR;
  path.append("/tests/data/fio/").append(name);
  return path;
}

std::string slurp(const char* name) {
  std::ifstream in(data_path(name), std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double percentile(const LatencyStats& l, double p) {
  for (const auto& [percent, value] : l.percentiles)
    if (percent == p) return value;
  FAIL("percentile " << p << " missing");
  return -1;
}

double bucket(const PercentMap& m, const std::string& key) {
  for (const auto& [k, v] : m)
    if (k == key) return v;
  FAIL("bucket " << key << " missing");
  return -1;
}

bool has_note(const FioResult& r, const std::string& part) {
  for (const std::string& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// The ParseError a parse of `text` throws (fails the test when none is thrown).
ParseError parse_error_of(const std::string& text, bool json_only = false) {
  try {
    if (json_only)
      parse_json_documents(text, "input.json");
    else
      parse_fio_output(text, "input.json");
  } catch (const ParseError& e) {
    return e;
  }
  FAIL("no ParseError for input starting with " << text.substr(0, 40));
  return ParseError("", 0, "");
}

int count_lines(const std::string& s) { return 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void check_same_latency(const LatencyStats& a, const LatencyStats& b) {
  CHECK(a.min_ns == b.min_ns);
  CHECK(a.max_ns == b.max_ns);
  CHECK(a.mean_ns == b.mean_ns);
  CHECK(a.stddev_ns == b.stddev_ns);
  CHECK(a.samples.value_or(0) == b.samples.value_or(0));
  CHECK(a.percentiles == b.percentiles);
  CHECK(a.bins == b.bins);
}

void check_same_direction(const DirectionStats& a, const DirectionStats& b) {
  CHECK(a.iops == b.iops);
  CHECK(a.bw_bytes_per_s == b.bw_bytes_per_s);
  CHECK(a.io_bytes == b.io_bytes);
  CHECK(a.runtime_ms == b.runtime_ms);
  CHECK(a.total_ios == b.total_ios);
  CHECK(a.short_ios == b.short_ios);
  CHECK(a.drop_ios == b.drop_ios);
  check_same_latency(a.slat, b.slat);
  check_same_latency(a.clat, b.clat);
  check_same_latency(a.lat, b.lat);
  CHECK(a.bw_min_bytes_per_s == b.bw_min_bytes_per_s);
  CHECK(a.bw_max_bytes_per_s == b.bw_max_bytes_per_s);
  CHECK(a.bw_mean_bytes_per_s == b.bw_mean_bytes_per_s);
  CHECK(a.bw_stddev_bytes_per_s == b.bw_stddev_bytes_per_s);
  CHECK(a.bw_agg_percent == b.bw_agg_percent);
  CHECK(a.bw_samples == b.bw_samples);
  CHECK(a.iops_min == b.iops_min);
  CHECK(a.iops_max == b.iops_max);
  CHECK(a.iops_mean == b.iops_mean);
  CHECK(a.iops_stddev == b.iops_stddev);
  CHECK(a.iops_samples == b.iops_samples);
}

void check_same_result(const FioResult& a, const FioResult& b) {
  REQUIRE(a.jobs.size() == b.jobs.size());
  CHECK(a.global_options == b.global_options);
  CHECK(a.timestamp == b.timestamp);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    CAPTURE(i);
    const JobResult& x = a.jobs[i];
    const JobResult& y = b.jobs[i];
    CHECK(x.name == y.name);
    CHECK(x.groupid == y.groupid);
    CHECK(x.hostname == y.hostname);
    CHECK(x.is_aggregate == y.is_aggregate);
    CHECK(x.options == y.options);
    check_same_direction(x.read, y.read);
    check_same_direction(x.write, y.write);
    check_same_direction(x.trim, y.trim);
    CHECK(x.usr_cpu_percent == y.usr_cpu_percent);
    CHECK(x.sys_cpu_percent == y.sys_cpu_percent);
    CHECK(x.ctx == y.ctx);
    CHECK(x.minf == y.minf);
    CHECK(x.iodepth_level == y.iodepth_level);
    CHECK(x.iodepth_submit == y.iodepth_submit);
    CHECK(x.latency_buckets_ns == y.latency_buckets_ns);
    CHECK(x.job_runtime_ms == y.job_runtime_ms);
  }
  REQUIRE(a.disks.size() == b.disks.size());
  for (std::size_t i = 0; i < a.disks.size(); ++i) {
    CHECK(a.disks[i].name == b.disks[i].name);
    CHECK(a.disks[i].read_ios == b.disks[i].read_ios);
    CHECK(a.disks[i].util_percent == b.disks[i].util_percent);
  }
}

}  // namespace

TEST_CASE("fio 3.33 JSON: two clones reported separately") {
  const ParsedFile f = parse_fio_file(data_path("mixed.json.out"));
  CHECK(f.format == Format::json);
  CHECK(f.detected == "fio-3.33 JSON, 1 document");
  REQUIRE(f.documents.size() == 1);
  const FioResult& r = f.final_result();
  CHECK(r.fio_version == "fio-3.33");
  CHECK(r.timestamp == 1796033472);
  CHECK(r.global_options.at("iodepth") == "8");
  CHECK(r.global_options.at("ioengine") == "null");
  REQUIRE(r.jobs.size() == 2);
  const JobResult& j = r.jobs[0];
  CHECK(j.name == "randrw");
  CHECK(j.groupid == 0);
  CHECK(j.error == 0);
  CHECK(j.jobs == 1);  // numjobs=2 and two entries: clones one by one
  CHECK_FALSE(j.is_aggregate);
  CHECK(j.options.at("rwmixread") == "70");
  CHECK(j.read.iops == doctest::Approx(2705608.0));
  CHECK(j.read.bw_bytes_per_s == 11082170368.0);
  CHECK(j.read.io_bytes == 11082170368ull);
  CHECK(j.read.runtime_ms == 1000.0);
  CHECK(j.read.total_ios == 2705608ull);
  CHECK(j.read.slat.mean_ns == doctest::Approx(22.136539));
  CHECK(j.read.clat.min_ns == 130.0);
  CHECK(j.read.clat.max_ns == 173372.0);
  CHECK(j.read.clat.mean_ns == doctest::Approx(164.253440));
  CHECK(j.read.clat.samples == 2705608ull);
  REQUIRE(j.read.clat.percentiles.size() == 17);
  CHECK(j.read.clat.percentiles.front().first == 1.0);  // numeric order, as fio printed them
  CHECK(j.read.clat.percentiles[2].first == 10.0);
  CHECK(j.read.clat.percentiles.back().first == doctest::Approx(99.99));
  CHECK(percentile(j.read.clat, 99.0) == 270.0);
  CHECK(percentile(j.read.clat, 99.9) == 402.0);
  CHECK(percentile(j.read.clat, 99.99) == 2224.0);
  CHECK(j.read.slat.percentiles.empty());  // slat_percentiles is off by default
  CHECK(j.read.lat.mean_ns == doctest::Approx(186.389979));
  CHECK(j.read.bw_min_bytes_per_s == 10695184.0 * 1024);
  CHECK(j.read.bw_agg_percent == doctest::Approx(50.721648));
  CHECK(j.read.bw_samples == 1ull);
  CHECK(j.read.iops_mean == doctest::Approx(2673796.0));
  CHECK(j.write.iops == doctest::Approx(1159562.0));
  CHECK(percentile(j.write.clat, 99.99) == 2320.0);
  CHECK(j.trim.total_ios == 0ull);
  CHECK_FALSE(j.trim.active());
  CHECK_FALSE(j.mixed.has_value());
  CHECK(j.usr_cpu_percent == doctest::Approx(99.6));
  CHECK(j.ctx == 9ull);
  CHECK(j.minf == 12ull);
  CHECK(j.job_runtime_ms == 1000.0);
  CHECK(bucket(j.iodepth_level, "1") == 100.0);
  CHECK(j.iodepth_level.back().first == ">=64");
  CHECK(bucket(j.iodepth_submit, "4") == 100.0);
  // latency_ns / _us / _ms merged with keys in ns
  CHECK(bucket(j.latency_buckets_ns, "250") == doctest::Approx(98.349956));
  CHECK(bucket(j.latency_buckets_ns, "2000") == doctest::Approx(0.01));    // latency_us "2"
  CHECK(bucket(j.latency_buckets_ns, "250000") == doctest::Approx(0.01));  // latency_us "250"
  CHECK(bucket(j.latency_buckets_ns, ">=2000000000") == 0.0);              // latency_ms ">=2000"
  CHECK(j.latency_buckets_ns.size() == 10 + 10 + 12);
  CHECK(j.latency_buckets_ns.front().first == "2");
  CHECK(j.latency_buckets_ns.back().first == ">=2000000000");
  const JobResult& k = r.jobs[1];
  CHECK(k.read.iops == doctest::Approx(2568603.396603));
  CHECK(k.read.runtime_ms == 1001.0);
  CHECK(percentile(k.write.clat, 99.99) == 17024.0);
  CHECK(k.ctx == 126ull);
  CHECK(r.disks.empty());  // the null engine has no disk
}

TEST_CASE("fio 3.33 JSON with group_reporting: one aggregate of 2 jobs") {
  const ParsedFile f = parse_fio_file(data_path("mixed.group.json.out"));
  const FioResult& r = f.final_result();
  REQUIRE(r.jobs.size() == 1);
  CHECK(r.jobs[0].jobs == 2);
  CHECK(r.jobs[0].is_aggregate);
  CHECK(r.jobs[0].read.iops == doctest::Approx(5081732.267732));
  CHECK(r.jobs[0].read.clat.mean_ns == doctest::Approx(173.116028));
  CHECK(r.jobs[0].write.bw_bytes_per_s == 8921984127.0);
  CHECK(percentile(r.jobs[0].read.clat, 99.9) == 502.0);
}

TEST_CASE("fio 3.33 json+: bins") {
  const ParsedFile f = parse_fio_file(data_path("mixed.json+.out"));
  CHECK(f.format == Format::json_plus);
  CHECK(f.detected == "fio-3.33 JSON+, 1 document");
  const JobResult& j = f.final_result().jobs.at(0);
  CHECK(j.read.iops == doctest::Approx(2599976.023976));
  CHECK(j.read.clat.bins.size() == 438);
  CHECK(j.read.clat.bins.at(131) == 61895ull);
  CHECK(j.read.clat.bins.at(141) == 542898ull);
  std::uint64_t total = 0;
  for (const auto& [v, n] : j.read.clat.bins) total += n;
  CHECK(total == 2602576ull);  // == N
  CHECK(j.read.clat.samples == 2602576ull);
  CHECK(percentile(j.read.clat, 99.9) == 502.0);
}

TEST_CASE("fio 3.33 --status-interval JSON: concatenated documents") {
  const ParsedFile f = parse_fio_file(data_path("status.json.out"));
  REQUIRE(f.documents.size() == 2);
  CHECK(f.detected == "fio-3.33 JSON, 2 documents (status-interval)");
  CHECK(f.documents[0].jobs.size() == 2);
  CHECK(f.documents[0].jobs[0].read.iops == doctest::Approx(2249978.818283));
  CHECK(percentile(f.documents[0].jobs[0].read.clat, 99.0) == 350.0);
  CHECK(f.documents[0].jobs[1].write.total_ios == 1017543ull);
  const FioResult& last = f.final_result();
  CHECK(last.jobs[0].read.iops == doctest::Approx(2293688.311688));
  CHECK(percentile(last.jobs[0].read.clat, 99.0) == 342.0);
  CHECK(last.jobs[1].write.total_ios == 1138861ull);
  // "global options" repeats "runtime" (fio #1571): the later value wins, as fio applies it
  CHECK(last.global_options.at("runtime") == "1");
}

TEST_CASE("fio 3.33 normal text, then JSON, then normal text: the JSON is read") {
  const ParsedFile f = parse_fio_file(data_path("libaio.normal-json.out"));
  CHECK(f.format == Format::json);
  REQUIRE(f.documents.size() == 1);
  const FioResult& r = f.final_result();
  CHECK(has_note(r, "skipped 4 lines of text before the JSON"));
  CHECK(has_note(r, "lines of text after the JSON"));
  REQUIRE(r.jobs.size() == 1);
  const JobResult& j = r.jobs[0];
  CHECK(j.name == "aio");
  CHECK(j.options.at("ioengine") == "libaio");
  CHECK(j.options.at("iodepth") == "4");
  CHECK(j.read.iops == doctest::Approx(44832.167832));
  CHECK(j.read.bw_bytes_per_s == 183632559.0);
  CHECK(j.read.io_bytes == 183816192ull);
  CHECK(j.read.clat.mean_ns == doctest::Approx(81802.023197));
  CHECK(percentile(j.read.clat, 99.0) == 150528.0);
  CHECK(percentile(j.read.clat, 99.99) == 864256.0);
  CHECK(j.sys_cpu_percent == doctest::Approx(42.1));
  CHECK_FALSE(j.write.active());
  REQUIRE(r.disks.size() == 1);
  CHECK(r.disks[0].name == "vda");
  CHECK(r.disks[0].read_ios == 36871ull);
  CHECK(r.disks[0].read_ticks_ms == 2120ull);
  CHECK(r.disks[0].in_queue_ms == 2120ull);
  CHECK_FALSE(r.disks[0].read_sectors.has_value());  // fio 3.33 prints none
  CHECK(r.disks[0].util_percent == doctest::Approx(65.296804));
  // The same through parse_json_documents directly.
  const auto docs = parse_json_documents(slurp("libaio.normal-json.out"), "x");
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].jobs[0].read.total_ios == 44877ull);
}

TEST_CASE("fio 2.x JSON: usec latencies, KiB io_bytes, padded percentiles") {
  const ParsedFile f = parse_fio_file(data_path("fio2-padded.json"));
  CHECK(f.detected == "fio-2.1.11 JSON, 1 document");
  const FioResult& r = f.final_result();
  CHECK(fio_major_version(r.fio_version) == 2);
  CHECK(has_note(r, "dropped 43 padding percentile keys"));
  CHECK(has_note(r, "usec to ns"));
  CHECK(has_note(r, "io_bytes is in KiB"));
  const JobResult& j = r.jobs.at(0);
  CHECK(j.name == "seqread");
  CHECK(j.read.io_bytes == 524288ull * 1024);
  CHECK(j.read.bw_bytes_per_s == 104857.0 * 1024);
  CHECK(j.read.iops == 26214.0);
  CHECK(j.read.runtime_ms == 5000.0);
  CHECK(j.read.clat.min_ns == 88000.0);
  CHECK(j.read.clat.mean_ns == doctest::Approx(152340.0));
  CHECK(j.read.slat.mean_ns == doctest::Approx(3500.0));
  CHECK(j.read.lat.max_ns == 9220000.0);
  REQUIRE(j.read.clat.percentiles.size() == 17);  // the three "0.00": 0 are gone
  CHECK(j.read.clat.percentiles.front() == std::pair<double, double>(1.0, 98000.0));
  CHECK(percentile(j.read.clat, 99.0) == 310000.0);
  CHECK(percentile(j.read.clat, 99.9) == 1012000.0);
  CHECK(percentile(j.read.clat, 99.99) == 4080000.0);
  CHECK_FALSE(j.read.clat.samples.has_value());  // 2.x has no "N"
  CHECK_FALSE(j.read.total_ios.has_value());
  CHECK(j.read.bw_mean_bytes_per_s == 104448.5 * 1024);
  CHECK(j.write.io_bytes == 0ull);
  CHECK(j.write.clat.percentiles.empty());  // idle: fio 2.x prints 20 padding keys
  CHECK(bucket(j.latency_buckets_ns, "250000") == doctest::Approx(95.25));
  CHECK(bucket(j.latency_buckets_ns, "2000000") == doctest::Approx(0.1));
  CHECK(bucket(j.latency_buckets_ns, ">=2000000000") == doctest::Approx(0.03));
  CHECK(j.latency_buckets_ns.size() == 22);
  CHECK(r.disks.at(0).name == "sda");
  CHECK(r.disks.at(0).util_percent == doctest::Approx(99.12));
}

TEST_CASE("client/server JSON: client_stats with hostnames and All clients") {
  const ParsedFile f = parse_fio_file(data_path("client-stats.json"));
  const FioResult& r = f.final_result();
  REQUIRE(r.jobs.size() == 3);
  CHECK(r.jobs[0].hostname == "host-a");
  CHECK(r.jobs[1].hostname == "host-b");
  CHECK_FALSE(r.jobs[0].is_aggregate);
  CHECK(r.jobs[2].name == "All clients");
  CHECK(r.jobs[2].is_aggregate);
  CHECK(r.jobs[0].read.iops == 50000.0);
  CHECK(r.jobs[2].read.iops == 90000.0);
  CHECK(percentile(r.jobs[1].read.clat, 99.0) == 798720.0);
  CHECK(r.jobs[0].read.slat.empty());
  // Written back, it is client_stats again.
  const nlohmann::ordered_json j = to_fio_json(r);
  CHECK(j.contains("client_stats"));
  CHECK_FALSE(j.contains("jobs"));
  const FioResult back = parse_json_documents(j.dump(), "back").at(0);
  REQUIRE(back.jobs.size() == 3);
  CHECK(back.jobs[1].hostname == "host-b");
  CHECK(back.jobs[2].is_aggregate);
  CHECK(back.jobs[1].read.iops == r.jobs[1].read.iops);
  CHECK(back.jobs[1].read.clat.percentiles == r.jobs[1].read.clat.percentiles);
}

TEST_CASE("JSON quoted in an e-mail, or behind a warning without its newline") {
  std::string mail = "On Mon, Alice wrote:\n> Here is my run:\n>\n";
  std::istringstream in(slurp("mixed.json.out"));
  for (std::string line; std::getline(in, line);) mail.append("> ").append(line).append("\n");
  mail.append("\nThanks!\n");
  const ParsedFile f = parse_fio_output(mail, "mail.txt");
  CHECK(f.detected == "fio-3.33 JSON, 1 document, quoted e-mail");
  REQUIRE(f.final_result().jobs.size() == 2);
  CHECK(percentile(f.final_result().jobs[1].write.clat, 99.99) == 17024.0);
  // A broken quoted document reports the mail's line.
  std::string broken = mail;
  const std::string from = "\"iops\" : 2705608.000000";
  broken.replace(broken.find(from), from.size(), "\"iops\" : [");
  const ParseError e = parse_error_of(broken);
  CHECK(e.line() == 31 + 3);

  const ParsedFile w = parse_fio_output("fio: warning: no newline{\"fio version\" : \"fio-3.33\", \"jobs\" : []}", "w.json");
  CHECK(w.final_result().fio_version == "fio-3.33");
  CHECK(has_note(w.final_result(), "skipped 1 line of text before the JSON"));
}

TEST_CASE("malformed JSON: ParseError naming the line") {
  const std::string good = slurp("mixed.json.out");

  SUBCASE("truncated") {
    const std::string cut = good.substr(0, 5000);
    const ParseError e = parse_error_of(cut);
    CHECK(e.line() == count_lines(cut));
    CHECK(e.reason().find("truncated") != std::string::npos);
    CHECK(std::string(e.what()).starts_with("input.json:"));
  }
  SUBCASE("a string where a number belongs") {
    std::string bad = good;
    const std::string from = "\"iops\" : 2705608.000000";
    bad.replace(bad.find(from), from.size(), "\"iops\" : \"fast\"");
    const ParseError e = parse_error_of(bad);
    CHECK(e.line() == 31);
    CHECK(e.reason().find("jobs[0].read.iops") != std::string::npos);
    CHECK(e.reason().find("expected a number") != std::string::npos);
  }
  SUBCASE("a missing comma") {
    std::string bad = good;
    const std::string from = "\"runtime\" : 1000,";
    bad.replace(bad.find(from), from.size(), "\"runtime\" : 1000");  // line 32
    const ParseError e = parse_error_of(bad);
    CHECK(e.line() == 33);  // nlohmann sees the problem at the next key
    CHECK(e.reason().find("invalid JSON") != std::string::npos);
  }
  SUBCASE("a job that is not an object") {
    const ParseError e = parse_error_of("{\n  \"jobs\" : [\n    1\n  ]\n}\n");
    CHECK(e.line() == 3);
  }
  SUBCASE("negative count") {
    const ParseError e = parse_error_of("{\"jobs\": [{\"jobname\": \"x\",\n \"read\": {\"total_ios\": -5}}]}");
    CHECK(e.line() == 2);
  }
  SUBCASE("JSON that is not fio's") {
    const ParseError e = parse_error_of("{\"hello\": 1}\n");
    CHECK(e.reason().find("\"jobs\"") != std::string::npos);
  }
  SUBCASE("unterminated string") {
    const ParseError e = parse_error_of("{\n\"jobs\": [{\"jobname\": \"x}]\n}\n");
    CHECK(e.line() == 2);
  }
}

TEST_CASE("garbage and hostile input fail fast with a ParseError") {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  SUBCASE("empty") {
    CHECK(parse_error_of("").reason() == "empty file");
    CHECK(parse_error_of(" \n\t\n").reason() == "empty file");
    CHECK(parse_error_of("\xEF\xBB\xBF").reason() == "empty file");
  }
  SUBCASE("binary with NUL bytes") {
    std::string bin;
    for (int i = 0; i < 4096; ++i) bin.push_back(static_cast<char>((i * 7919) & 0xFF));
    const ParseError e = parse_error_of(bin);
    CHECK(e.reason().find("binary") != std::string::npos);
  }
  SUBCASE("binary without NUL bytes") {
    std::string bin;
    for (int i = 0; i < 4096; ++i) bin.push_back(static_cast<char>(0x80 + (i * 31) % 0x7F));
    CHECK(parse_error_of(bin).reason().find("binary") != std::string::npos);
  }
  SUBCASE("plain text") {
    const ParseError e = parse_error_of("hello\nworld\n");
    CHECK(e.line() == 1);
    CHECK(e.reason() == "not a fio output: expected JSON, normal text or terse lines");
  }
  SUBCASE("10 MB of '[' on one line") {
    CHECK(parse_error_of(std::string(10'000'000, '[')).line() == 1);
    CHECK(parse_error_of(std::string(10'000'000, '['), true).line() == 1);
  }
  SUBCASE("10 MB of digits on one line") { CHECK(parse_error_of(std::string(10'000'000, '7')).line() == 1); }
  SUBCASE("a brace and 10 MB of '['") {
    const ParseError e = parse_error_of("{" + std::string(10'000'000, '['));
    CHECK(e.reason().find("nested deeper") != std::string::npos);
  }
  SUBCASE("a 10 MB number") {
    const ParseError e = parse_error_of("{\"jobs\": " + std::string(10'000'000, '9') + "}");
    CHECK(e.reason().find("number longer") != std::string::npos);
  }
  SUBCASE("a 10 MB string value") {
    const ParseError e = parse_error_of("{\"jobs\": \"" + std::string(10'000'000, 'x') + "\"}");
    CHECK(e.reason().find("expected an array") != std::string::npos);
  }
  SUBCASE("many keys") {
    std::string many = "{\"jobs\": [], \"x\": {";
    for (int i = 0; i < 300'000; ++i) many.append("\"k").append(std::to_string(i)).append("\": 1,");
    many.append("\"end\": 0}}");
    const auto docs = parse_json_documents(many, "many");
    CHECK(docs.at(0).jobs.empty());
  }
  SUBCASE("many jobs") {
    std::string many = "{\"global options\": {\"numjobs\": \"4\"}, \"jobs\": [";
    for (int i = 0; i < 20'000; ++i) many.append("{\"jobname\": \"j\"},");
    many.append("{}]}");
    const auto docs = parse_json_documents(many, "many");
    CHECK(docs.at(0).jobs.size() == 20'001);
    // Past 100000 entries (~3 KiB of memory each, 2 bytes of input) it is not fio's.
    std::string more = "{\"jobs\": [";
    for (int i = 0; i < 100'000; ++i) more.append("{},\n");
    more.append("{}]}");
    const ParseError e = parse_error_of(more, true);
    CHECK(e.line() == 100'001);
    CHECK(e.reason().find("100000 job entries") != std::string::npos);
  }
  CHECK(clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("non-JSON nan from fio reads as not reported") {
  const auto docs = parse_json_documents(
      "{\"fio version\": \"fio-3.1\", \"jobs\": [{\"jobname\": \"j\", \"read\": {\"iops\": 5.0, \"bw_agg\": -nan, "
      "\"bw_dev\": nan}}]}",
      "nan.json");
  const JobResult& j = docs.at(0).jobs.at(0);
  CHECK(j.read.iops == 5.0);
  CHECK_FALSE(j.read.bw_agg_percent.has_value());
  CHECK_FALSE(j.read.bw_stddev_bytes_per_s.has_value());
  CHECK(has_note(docs[0], "2 nan/inf values"));
}

TEST_CASE("to_fio_json round trip keeps every figure") {
  for (const char* name : {"mixed.json.out", "mixed.json+.out", "mixed.group.json.out", "libaio.normal-json.out"}) {
    CAPTURE(name);
    const FioResult original = parse_fio_file(data_path(name)).final_result();
    const nlohmann::ordered_json j = to_fio_json(original);
    // Key order as fio prints it.
    std::vector<std::string> top;
    for (auto it = j.begin(); it != j.end(); ++it) top.push_back(it.key());
    REQUIRE(top.size() >= 5);
    CHECK(top[0] == "fio version");
    CHECK(top[1] == "timestamp");
    CHECK(top[2] == "timestamp_ms");
    CHECK(top[3] == "time");
    const auto& job = j["jobs"][0];
    std::vector<std::string> keys;
    for (auto it = job["read"].begin(); it != job["read"].end(); ++it) keys.push_back(it.key());
    const std::vector<std::string> fio_order = {"io_bytes",  "io_kbytes", "bw_bytes",  "bw",          "iops",        "runtime",
                                                "total_ios", "short_ios", "drop_ios",  "slat_ns",     "clat_ns",     "lat_ns",
                                                "bw_min",    "bw_max",    "bw_agg",    "bw_mean",     "bw_dev",      "bw_samples",
                                                "iops_min",  "iops_max",  "iops_mean", "iops_stddev", "iops_samples"};
    CHECK(keys == fio_order);
    CHECK(job["read"]["clat_ns"]["percentile"]["99.000000"].is_number_integer());

    const auto again = parse_json_documents(j.dump(2), "again");
    REQUIRE(again.size() == 1);
    check_same_result(original, again[0]);
    CHECK(again[0].format == original.format);

    // fio's own layout (" : ", "%f") reads back the same.
    const std::string text = to_fio_json_text(original);
    const auto again_text = parse_json_documents(text, "again-text");
    check_same_result(original, again_text.at(0));
  }
}

TEST_CASE("to_fio_json_text looks like fio's JSON") {
  const std::string original = slurp("mixed.json.out");
  const std::string ours = to_fio_json_text(parse_fio_output(original, "m").final_result());
  // The first 200 lines match byte for byte, except for what the normalized result does not keep:
  // "time" (fio's is local time), timestamp_ms, eta, elapsed, and the order of the options
  // (kept in a std::map), so lines with string values are skipped.
  std::istringstream a(original), b(ours);
  std::string la, lb;
  int same = 0;
  for (int i = 0; i < 200 && std::getline(a, la) && std::getline(b, lb); ++i) {
    if (la.find(": \"") != std::string::npos || la.find("\"timestamp_ms\"") != std::string::npos ||
        la.find("\"eta\"") != std::string::npos || la.find("\"elapsed\"") != std::string::npos)
      continue;
    CHECK(la == lb);
    same += la == lb;
  }
  CHECK(same > 180);
}

TEST_CASE("fio 2.x JSON written as fio 3.x JSON") {
  const FioResult old = parse_fio_file(data_path("fio2-padded.json")).final_result();
  FioResult renamed = old;
  renamed.fio_version = "vqsim-0.1.0";
  const nlohmann::ordered_json j = to_fio_json(renamed);
  CHECK(j["fio version"] == "vqsim-0.1.0");
  CHECK(j["jobs"][0]["read"]["clat_ns"]["percentile"]["99.900000"] == 1012000);
  CHECK(j["jobs"][0]["read"]["io_kbytes"] == 524288);
  CHECK(j["jobs"][0]["latency_us"]["250"] == 95.25);
  CHECK(j["jobs"][0]["latency_ms"][">=2000"] == 0.03);
  const FioResult back = parse_json_documents(j.dump(), "b").at(0);
  CHECK(back.jobs[0].read.io_bytes == old.jobs[0].read.io_bytes);  // io_kbytes present: bytes
  CHECK(back.jobs[0].read.clat.percentiles == old.jobs[0].read.clat.percentiles);
  CHECK(back.jobs[0].read.clat.mean_ns == old.jobs[0].read.clat.mean_ns);
  CHECK(back.jobs[0].latency_buckets_ns.size() == 32);
}

TEST_CASE("to_normalized_json: units in names, absent figures omitted") {
  const ParsedFile f = parse_fio_file(data_path("libaio.normal-json.out"));
  const nlohmann::ordered_json n = to_normalized_json(f);
  CHECK(n["format"] == "json");
  CHECK(n["documents"] == 1);
  CHECK(n["detected"] == "fio-3.33 JSON, 1 document");
  const auto& job = n["jobs"][0];
  CHECK(job["name"] == "aio");
  CHECK(job["read"]["iops"] == doctest::Approx(44832.167832));
  CHECK(job["read"]["bw_bytes_per_s"] == 183632559.0);
  CHECK(job["read"]["clat"]["mean_ns"] == doctest::Approx(81802.023197));
  CHECK(job["read"]["clat"]["percentiles_ns"]["99.900000"] == 234496);
  CHECK_FALSE(job["read"]["slat"].contains("percentiles_ns"));
  CHECK_FALSE(job.contains("write"));  // idle
  CHECK(job["cpu"]["sys_percent"] == doctest::Approx(42.1));
  CHECK(job["iodepth"]["level_percent"]["4"] == doctest::Approx(99.993315));
  CHECK(n["disks"][0]["util_percent"] == doctest::Approx(65.296804));
  CHECK(n["notes"].size() >= 2);

  const nlohmann::ordered_json old = to_normalized_json(parse_fio_file(data_path("fio2-padded.json")));
  CHECK_FALSE(old["jobs"][0]["read"]["clat"].contains("samples"));  // fio 2.x has no N
  CHECK_FALSE(old["jobs"][0]["read"].contains("total_ios"));
}

TEST_CASE("to_fio_text reproduces fio 3.33's normal text for the same run") {
  // libaio.normal-json.out holds fio's JSON and its normal text of one run: every line of our
  // text rendering of the JSON, from the IOPS line to the latency line, appears in fio's text.
  const std::string original = slurp("libaio.normal-json.out");
  const FioResult r = parse_fio_output(original, "libaio").final_result();
  const std::string text = to_fio_text(r);
  std::istringstream lines(text);
  std::string line;
  int matched = 0;
  bool in_job = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("  read: IOPS=")) in_job = true;
    if (line.starts_with("Run status group") || line.starts_with("   READ:") || line.starts_with("  vda:") ||
        line.starts_with("Disk stats"))
      in_job = true;
    if (!in_job || line.empty()) continue;
    CAPTURE(line);
    CHECK(original.find(line + "\n") != std::string::npos);
    ++matched;
  }
  CHECK(matched >= 20);
  // fio's JSON has no pid and no clone count: the header leaves them out instead of inventing.
  CHECK(text.find("aio: (groupid=0): err= 0: ") != std::string::npos);
  CHECK(text.find(": pid=") == std::string::npos);
  CHECK(text.find("jobs=") == std::string::npos);
  CHECK(
      text.starts_with("aio: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, "
                       "ioengine=libaio, iodepth=4\nfio-3.33\n"));
}

TEST_CASE("to_fio_text is read back by the normal-text parser") {
  for (const char* name : {"mixed.json.out", "libaio.normal-json.out", "fio2-padded.json"}) {
    CAPTURE(name);
    const FioResult r = parse_fio_file(data_path(name)).final_result();
    const ParsedFile back = parse_fio_output(to_fio_text(r), "text");
    CHECK(back.format == Format::normal);
    const FioResult& t = back.final_result();
    REQUIRE(t.jobs.size() == r.jobs.size());
    for (std::size_t i = 0; i < r.jobs.size(); ++i) {
      const DirectionStats& a = r.jobs[i].read;
      const DirectionStats& b = t.jobs[i].read;
      // Normal text rounds to 4 significant figures.
      CHECK(b.iops.value_or(0) == doctest::Approx(*a.iops).epsilon(0.002));
      CHECK(b.bw_bytes_per_s.value_or(0) == doctest::Approx(*a.bw_bytes_per_s).epsilon(0.01));
      CHECK(b.clat.mean_ns.value_or(0) == doctest::Approx(*a.clat.mean_ns).epsilon(0.01));
      REQUIRE(b.clat.percentiles.size() == a.clat.percentiles.size());
      for (std::size_t p = 0; p < a.clat.percentiles.size(); ++p) {
        CHECK(b.clat.percentiles[p].first == doctest::Approx(a.clat.percentiles[p].first));
        // usec-scaled percentiles are rounded up to whole usec
        const double a_ns = a.clat.percentiles[p].second, b_ns = b.clat.percentiles[p].second;
        CHECK(b_ns >= a_ns);
        CHECK(b_ns - a_ns < std::max(1000.0, 0.001 * a_ns));
      }
    }
  }
}

TEST_CASE("issue 17, item 6: fio JSON's bs=4KiB is 4000 bytes, as fio ran it (kb_base honoured)") {
  // kb_base.fio run twice by fio 3.33 (null engine): its normal text states the bytes fio used,
  // "kib: (g=0): rw=randrw, bs=(R) 4000B-4000B, …" and "kb1000: …, bs=(R) 4096B-4096B, (W) 4000B-4000B";
  // its JSON only echoes the options as written ("bs" : "4KiB"; kb_base=1000 with "4KiB,4k").
  const ParsedFile f = parse_fio_file(data_path("kb_base.json.out"));
  const FioResult& r = f.final_result();
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].options.at("bs") == "4KiB");
  const nlohmann::ordered_json n = to_normalized_json(f);
  CHECK(n["jobs"][0]["bs_bytes"] == nlohmann::ordered_json({{"read", 4000}, {"write", 4000}, {"trim", 4000}}));
  CHECK(n["jobs"][1]["bs_bytes"] == nlohmann::ordered_json({{"read", 4096}, {"write", 4000}, {"trim", 4000}}));
  // The text form's start-up lines are fio's own, byte for byte.
  const std::string fio_text = slurp("kb_base.normal.out");
  std::istringstream fio_lines(fio_text);
  std::string kib_line, kb1000_line;
  std::getline(fio_lines, kib_line);
  std::getline(fio_lines, kb1000_line);
  REQUIRE(kib_line.starts_with("kib: (g=0): rw=randrw, bs=(R) 4000B-4000B"));
  const std::string text = to_fio_text(r);
  CHECK(text.starts_with(kib_line + "\n" + kb1000_line + "\nfio-3.33\n"));
  // And the job file fio ran reads the same.
  const auto jf = parse_job_file(data_path("kb_base.fio"));
  REQUIRE(jf.jobs.size() == 2);
  CHECK(jf.jobs[0].bs_bytes == PerDirection<std::uint64_t>{4000, 4000, 4000});
  CHECK(jf.jobs[1].bs_bytes == PerDirection<std::uint64_t>{4096, 4000, 4000});
}

TEST_CASE("issue 17, item 9: the text form of a terse import states only what the terse line did") {
  // Terse has no pid, no clone count, no date, no issued counts and no options (so no iodepth):
  // the text form used to print "pid=1", "jobs=1", "Thu Jan  1 00:00:00 1970",
  // "issued rwts: total=0,0,0,0 …" and "latency … depth=1".
  const ParsedFile f = parse_fio_file(data_path("mixed.terse3.out"));
  const std::string text = to_fio_text(f.final_result());
  CAPTURE(text);
  CHECK(text.find("randrw: (groupid=0): err= 0\n") != std::string::npos);
  for (const char* invented : {": pid=", "jobs=", "1970", "issued", "latency   :", "depth=", "zone resets", "(g=0)"}) {
    CAPTURE(invented);
    CHECK(text.find(invented) == std::string::npos);
  }
  // What the terse line states is all there, and reads back.
  CHECK(text.find("  read: IOPS=2729k") != std::string::npos);
  CHECK(text.find("  cpu          : usr=98.70%") != std::string::npos);
  CHECK(text.find("  IO depths    : 1=100.0%") != std::string::npos);
  const ParsedFile back = parse_fio_output(text, "text");
  REQUIRE(back.final_result().jobs.size() == f.final_result().jobs.size());
  CHECK_FALSE(back.final_result().jobs[0].jobs.has_value());
  CHECK(*back.final_result().jobs[0].read.iops == doctest::Approx(*f.final_result().jobs[0].read.iops).epsilon(0.002));

  // A source that states them keeps them: fio 3.33's "issued rwts" (with the sync count from
  // the JSON's "sync") and the latency line, as fio printed them for the same run.
  const std::string original = slurp("libaio.normal-json.out");
  const std::string from_json = to_fio_text(parse_fio_output(original, "libaio").final_result());
  CHECK(from_json.find("     issued rwts: total=44877,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n") != std::string::npos);
  CHECK(original.find("     issued rwts: total=44877,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n") != std::string::npos);
  CHECK(from_json.find("     latency   : target=0, window=0, percentile=100.00%, depth=4\n") != std::string::npos);
  // fio 2.x text has total= and short= only: the text form says no more ("issued rwt", 3 columns).
  const std::string from_2x = to_fio_text(parse_fio_file(data_path("seed000-email.txt")).final_result());
  CHECK(from_2x.find("     issued rwt: total=1310044,1309348,0 short=0,0,0\n") != std::string::npos);
  CHECK(from_2x.find("depth=32") != std::string::npos);  // its header said iodepth=32
}

TEST_CASE("ParseError message and fio_major_version") {
  CHECK(std::string(ParseError("a.json", 12, "bad").what()) == "a.json:12: bad");
  CHECK(std::string(ParseError("a.json", 0, "bad").what()) == "a.json: bad");
  CHECK(ParseError("a.json", 12, "bad").line() == 12);
  CHECK(fio_major_version("fio-3.33") == 3);
  CHECK(fio_major_version("fio-2.1.11") == 2);
  CHECK(fio_major_version("fio-3.36-12-gdeadbeef") == 3);
  CHECK(fio_major_version("3.5") == 3);
  CHECK(fio_major_version("vqsim-0.1.0") == 0);
  CHECK(fio_major_version("") == 0);
  CHECK(std::string(format_name(Format::json_plus)) == "json+");
  try {
    parse_fio_file(data_path("does-not-exist.json"));
    FAIL("no error");
  } catch (const ParseError& e) {
    CHECK(e.line() == 0);
  }
}
