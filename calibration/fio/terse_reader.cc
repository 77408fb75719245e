// fio's terse output (--minimal / --output-format=terse, --terse-version=2..5): one line of
// ';'-separated fields per job or group. Field layout from fio's stat.c
// (show_thread_status_terse_all, show_ddir_status_terse, print_disk_util):
//
//   header   v2: 2;name;groupid;error            v3+: V;fio-X.Y;name;groupid;error
//   per direction (READ, WRITE, then TRIM in v2 of fio >= 3 and in v4/v5; a single "mixed" block
//   under unified_rw_reporting=mixed, an extra one after the others under =both):
//     io KiB; bw KiB/s; iops; runtime ms;
//     slat min;max;mean;stdev (µs); clat min;max;mean;stdev (µs);
//     20 × "P%=usec" clat (or lat) percentiles, unused slots "0%=0";
//     lat min;max;mean;stdev (µs); bw min;max;agg%;mean;stdev (KiB/s)
//     v5 only: bw samples; iops min;max;mean;stdev;samples
//   usr%;sys%;ctx;majf;minf
//   IO depths <=1;2;4;8;16;32;>=64 (%)
//   latency µs <=2;4;10;20;50;100;250;500;750;1000 (%; the ns buckets are folded into the first)
//   latency ms <=2;4;10;20;50;100;250;500;750;1000;2000;>=2000 (%)
//   v3+: disk util groups name;read_ios;write_ios;read_merges;write_merges;read_ticks;
//        write_ticks;in_queue;util% (a device with slaves adds "slaves;" + 8 aggregate fields)
//   continue_on_error: total_err;first_error; then an optional description.
//
// Rather than trusting a per-version direction count (fio 2.x's v2 had no TRIM block, fio 3's v2
// has one), the direction blocks are counted: a block starts with an integer KiB total, while the
// CPU section that follows them starts with a "%" field.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/fio/parse.h"
#include "calibration/fio/result.h"
#include "models/config.h"

namespace vqsim::fio {
namespace {

constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
constexpr std::size_t kPercentileSlots = 20;  // fio's FIO_IO_U_LIST_MAX_LEN
constexpr double kUsToNs = 1e3;
constexpr double kKiB = 1024;

using models::trim;

bool ends_with_percent(std::string_view s) { return !s.empty() && s.back() == '%'; }

// Terse latency bucket keys in ns, as result.h's PercentMap wants them.
constexpr const char* kLatUsKeys[] = {"2000",   "4000",   "10000",  "20000",  "50000",
                                      "100000", "250000", "500000", "750000", "1000000"};
constexpr const char* kLatMsKeys[] = {"2000000",   "4000000",   "10000000",  "20000000",   "50000000",   "100000000",
                                      "250000000", "500000000", "750000000", "1000000000", "2000000000", ">=2000000000"};
constexpr const char* kDepthKeys[] = {"1", "2", "4", "8", "16", "32", ">=64"};

// One terse record being read, field by field, with errors naming the line and the field.
class Record {
 public:
  Record(std::vector<std::string_view> fields, int line, const std::string& source)
      : f_(std::move(fields)), line_(line), source_(source) {}

  std::size_t size() const { return f_.size(); }
  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= f_.size(); }
  std::string_view peek(std::size_t ahead = 0) const { return pos_ + ahead < f_.size() ? f_[pos_ + ahead] : std::string_view(); }

  [[noreturn]] void fail(const std::string& reason) const {
    std::string msg = "terse field ";
    msg.append(std::to_string(pos_ + 1));
    msg.append(": ");
    msg.append(reason);
    throw ParseError(source_, line_, msg);
  }

  std::string_view text(const char* what) {
    if (at_end()) fail(std::string("record ends before ") + what);
    return f_[pos_++];
  }
  double number(const char* what) {
    std::string_view s = text(what);
    auto v = to_double(s);
    if (!v) {
      --pos_;
      fail(std::string("expected a number for ") + what + ", got \"" + std::string(s) + "\"");
    }
    return *v;
  }
  std::uint64_t count(const char* what) {
    std::string_view s = text(what);
    auto v = to_uint(s);
    if (!v) {
      --pos_;
      fail(std::string("expected an integer for ") + what + ", got \"" + std::string(s) + "\"");
    }
    return *v;
  }
  double percent(const char* what) {
    std::string_view s = text(what);
    std::optional<double> v;
    if (ends_with_percent(s)) v = to_double(s.substr(0, s.size() - 1));
    if (!v) {
      --pos_;
      fail(std::string("expected a percentage for ") + what + ", got \"" + std::string(s) + "\"");
    }
    return *v;
  }
  // "99.000000%=1544" -> (99, 1544); "0%=0" (an unused slot) -> nullopt.
  std::optional<std::pair<double, double>> percentile() {
    std::string_view s = text("a clat percentile");
    std::size_t eq = s.find("%=");
    std::optional<double> p, v;
    if (eq != std::string_view::npos) {
      p = to_double(s.substr(0, eq));
      v = to_double(s.substr(eq + 2));
    }
    if (!p || !v) {
      --pos_;
      fail("expected \"P%=usec\" for a clat percentile, got \"" + std::string(s) + "\"");
    }
    if (*p == 0 && *v == 0) return std::nullopt;
    return std::make_pair(*p, *v);
  }

 private:
  std::vector<std::string_view> f_;
  std::size_t pos_ = 0;
  int line_;
  const std::string& source_;
};

// min;max;mean;stdev in µs. fio prints all zeros when there were no samples (calc_lat false), so
// all zeros stay "not reported".
void read_latency(Record& r, LatencyStats& s) {
  double min = r.number("latency min"), max = r.number("latency max");
  double mean = r.number("latency mean"), dev = r.number("latency stdev");
  if (min == 0 && max == 0 && mean == 0 && dev == 0) return;
  s.min_ns = min * kUsToNs;
  s.max_ns = max * kUsToNs;
  s.mean_ns = mean * kUsToNs;
  s.stddev_ns = dev * kUsToNs;
}

void read_direction(Record& r, int version, DirectionStats& d) {
  d.io_bytes = r.count("io KiB") * static_cast<std::uint64_t>(kKiB);
  d.bw_bytes_per_s = r.number("bw KiB/s") * kKiB;
  d.iops = r.number("iops");
  d.runtime_ms = r.number("runtime ms");
  read_latency(r, d.slat);
  read_latency(r, d.clat);
  for (std::size_t i = 0; i < kPercentileSlots; ++i) {
    if (auto p = r.percentile()) d.clat.percentiles.emplace_back(p->first, p->second * kUsToNs);
  }
  // An idle direction prints its percentile list with zero values; without clat samples they
  // carry no information.
  if (!d.clat.mean_ns) d.clat.percentiles.clear();
  read_latency(r, d.lat);
  double bw_min = r.number("bw min"), bw_max = r.number("bw max");
  double agg = r.percent("bw agg");
  double bw_mean = r.number("bw mean"), bw_dev = r.number("bw stdev");
  bool have_bw = bw_min != 0 || bw_max != 0 || bw_mean != 0 || agg != 0;
  if (have_bw) {
    d.bw_min_bytes_per_s = bw_min * kKiB;
    d.bw_max_bytes_per_s = bw_max * kKiB;
    d.bw_agg_percent = agg;
    d.bw_mean_bytes_per_s = bw_mean * kKiB;
    d.bw_stddev_bytes_per_s = bw_dev * kKiB;
  }
  if (version == 5) {
    std::uint64_t bw_samples = r.count("bw samples");
    double iops_min = r.number("iops min"), iops_max = r.number("iops max");
    double iops_mean = r.number("iops mean"), iops_dev = r.number("iops stdev");
    std::uint64_t iops_samples = r.count("iops samples");
    if (have_bw || bw_samples) d.bw_samples = bw_samples;
    if (iops_samples) {
      d.iops_min = iops_min;
      d.iops_max = iops_max;
      d.iops_mean = iops_mean;
      d.iops_stddev = iops_dev;
      d.iops_samples = iops_samples;
    }
  }
}

struct ParsedRecord {
  JobResult job;
  std::string fio_version;
  int version = 0;
  std::vector<DiskStats> disks;
  std::vector<std::string> notes;
  int line = 0;
};

ParsedRecord read_record(std::string_view line_text, int line, const std::string& source) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    std::size_t semi = line_text.find(';', start);
    fields.push_back(line_text.substr(start, semi == std::string_view::npos ? semi : semi - start));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  Record r(std::move(fields), line, source);
  ParsedRecord out;
  out.line = line;
  out.version = static_cast<int>(r.count("the terse version"));
  if (out.version < 2 || out.version > 5) {
    throw ParseError(source, line, "unsupported terse version " + std::to_string(out.version) + " (fio writes 2 to 5)");
  }
  if (out.version >= 3) out.fio_version = std::string(r.text("the fio version"));
  JobResult& j = out.job;
  j.name = std::string(r.text("the job name"));
  j.groupid = static_cast<int>(r.count("the group id"));
  j.error = static_cast<int>(r.count("the error code"));

  // Direction blocks until the "%" field that opens the CPU section.
  std::vector<DirectionStats> blocks;
  while (!r.at_end() && !ends_with_percent(r.peek())) {
    if (blocks.size() == 4) r.fail("more than four direction blocks");
    blocks.emplace_back();
    read_direction(r, out.version, blocks.back());
  }
  const bool has_trim_slot = out.version != 3;
  switch (blocks.size()) {
    case 1:
      j.mixed = std::move(blocks[0]);
      break;  // unified_rw_reporting=mixed
    case 2:
      j.read = std::move(blocks[0]);
      j.write = std::move(blocks[1]);
      break;
    case 3:
      j.read = std::move(blocks[0]);
      j.write = std::move(blocks[1]);
      if (has_trim_slot)
        j.trim = std::move(blocks[2]);
      else
        j.mixed = std::move(blocks[2]);  // v3 with unified_rw_reporting=both
      break;
    case 4:
      j.read = std::move(blocks[0]);
      j.write = std::move(blocks[1]);
      j.trim = std::move(blocks[2]);
      j.mixed = std::move(blocks[3]);
      break;
    default:
      r.fail("no direction block before the CPU fields");
  }

  j.usr_cpu_percent = r.percent("usr cpu");
  j.sys_cpu_percent = r.percent("sys cpu");
  j.ctx = r.count("ctx");
  j.majf = r.count("majf");
  j.minf = r.count("minf");
  for (const char* key : kDepthKeys) j.iodepth_level.emplace_back(key, r.percent("an IO depth share"));
  for (const char* key : kLatUsKeys) j.latency_buckets_ns.emplace_back(key, r.percent("a usec latency bucket"));
  for (const char* key : kLatMsKeys) j.latency_buckets_ns.emplace_back(key, r.percent("a msec latency bucket"));

  // Disk util groups (v3+), then continue_on_error's total_err;first_error, then a description.
  while (!r.at_end()) {
    std::string_view name = r.peek();
    if (trim(name).empty() && r.pos() + 1 == r.size()) break;  // a trailing ';'
    bool disk_group = r.pos() + 9 <= r.size() && !to_double(name) && ends_with_percent(r.peek(8));
    if (disk_group && name == "slaves") {
      r.text("slaves");
      for (int i = 0; i < 8; ++i) r.text("an aggregate disk field");
      out.notes.push_back("skipped aggregate disk stats of the slaves of " +
                          (out.disks.empty() ? std::string("a device") : out.disks.back().name));
      continue;
    }
    if (disk_group) {
      DiskStats d;
      d.name = std::string(r.text("a disk name"));
      d.read_ios = r.count("disk read ios");
      d.write_ios = r.count("disk write ios");
      d.read_merges = r.count("disk read merges");
      d.write_merges = r.count("disk write merges");
      d.read_ticks_ms = r.count("disk read ticks");
      d.write_ticks_ms = r.count("disk write ticks");
      d.in_queue_ms = r.count("disk in_queue");
      d.util_percent = r.percent("disk util");
      out.disks.push_back(std::move(d));
      continue;
    }
    if (r.pos() + 2 <= r.size() && to_uint(r.peek()) && to_uint(r.peek(1))) {
      std::uint64_t total = r.count("total_err");
      std::uint64_t first = r.count("first_error");
      out.notes.push_back("job " + j.name + ": continue_on_error total_err=" + std::to_string(total) +
                          ", first_error=" + std::to_string(first));
      continue;
    }
    // fio appends the job description as the last field (it may itself contain ';').
    std::string desc;
    while (!r.at_end()) {
      if (!desc.empty()) desc.push_back(';');
      desc.append(r.text("the description"));
    }
    out.notes.push_back("job " + j.name + ": description \"" + desc + "\"");
  }
  return out;
}

// The largest run time of a record's directions: a later --status-interval report of the same job
// has run longer, while clones of one job (numjobs, same name) ran side by side.
double max_runtime(const JobResult& j) {
  double m = 0;
  for (const DirectionStats* d : {&j.read, &j.write, &j.trim})
    if (d->runtime_ms) m = std::max(m, *d->runtime_ms);
  if (j.mixed && j.mixed->runtime_ms) m = std::max(m, *j.mixed->runtime_ms);
  return m;
}

bool same_snapshot(const JobResult& a, const JobResult& b) {
  auto io = [](const DirectionStats& d) { return d.io_bytes.value_or(0); };
  return max_runtime(a) == max_runtime(b) && io(a.read) == io(b.read) && io(a.write) == io(b.write) && io(a.trim) == io(b.trim);
}

// Splits records into --status-interval reports: the smallest period p (dividing the count) such
// that record i + p is the same job (name, group) as record i and a clearly later (or identical)
// snapshot of it. "Clearly later" means at least 20 ms and 1% more runtime: numjobs clones of one
// job also repeat name and group, and their runtimes differ by a few ms (1001 vs 1004 ms in a
// 1 s run), while status reports are an interval apart. Without such a period the whole file is
// one report.
std::size_t report_period(const std::vector<ParsedRecord>& recs) {
  const std::size_t n = recs.size();
  for (std::size_t p = 1; p < n; ++p) {
    if (n % p != 0) continue;
    bool ok = true;
    for (std::size_t i = 0; i + p < n && ok; ++i) {
      const JobResult& a = recs[i].job;
      const JobResult& b = recs[i + p].job;
      ok = a.name == b.name && a.groupid == b.groupid &&
           (max_runtime(b) >= max_runtime(a) + std::max(20.0, 0.01 * max_runtime(a)) || same_snapshot(a, b));
    }
    if (ok) return p;
  }
  return n;
}

}  // namespace

std::vector<FioResult> parse_terse(std::string_view text, const std::string& source) {
  std::vector<ParsedRecord> recs;
  int line_no = 0;
  int first_text_line = 0;
  int skipped = 0;
  int quoted = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    if (raw.size() > kMaxLineBytes)
      throw ParseError(source, line_no, "line of " + std::to_string(raw.size()) + " bytes is too long for fio output");
    std::string_view t = trim(raw);
    // Terse lines quoted in an e-mail ("> 3;fio-3.33;…"): drop the quote markers.
    int depth = 0;
    while (!t.empty() && t.front() == '>') {
      t = trim(t.substr(1));
      ++depth;
    }
    if (depth > 0) ++quoted;
    if (t.empty()) continue;
    if (!first_text_line) first_text_line = line_no;
    // A record starts with the terse version and ';'. fio 2.x's v2 puts a job description on a
    // line of its own that starts with ';'; fio's own messages ("fio: …") may be mixed in.
    std::size_t semi = t.find(';');
    bool numeric_head = semi != std::string_view::npos && semi > 0 && to_uint(t.substr(0, semi)).has_value();
    if (!numeric_head) {
      ++skipped;
      continue;
    }
    recs.push_back(read_record(t, line_no, source));
  }
  if (recs.empty())
    throw ParseError(source, first_text_line ? first_text_line : 1,
                     "no terse records found (expected lines like \"3;fio-3.33;name;0;0;…\")");

  const std::size_t period = report_period(recs);
  std::vector<FioResult> docs;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    ParsedRecord& rec = recs[i];
    if (i % period == 0) {
      docs.emplace_back();
      FioResult& doc = docs.back();
      doc.format = Format::terse;
      doc.terse_version = rec.version;
      doc.fio_version = rec.fio_version;
      doc.notes.push_back("terse v" + std::to_string(rec.version) +
                          ": latencies were printed in usec (truncated), bandwidth in KiB/s");
      if (skipped > 0) doc.notes.push_back("skipped " + std::to_string(skipped) + " non-terse lines");
      if (quoted > 0) doc.notes.push_back("e-mail quoting removed");
    }
    FioResult& doc = docs.back();
    if (rec.version != doc.terse_version)
      doc.notes.push_back("line " + std::to_string(rec.line) + " is terse v" + std::to_string(rec.version));
    // Every record repeats the disk stats of the whole run; keep each device once.
    for (DiskStats& d : rec.disks) {
      bool seen = false;
      for (const DiskStats& have : doc.disks) seen = seen || have.name == d.name;
      if (!seen) doc.disks.push_back(std::move(d));
    }
    for (std::string& n : rec.notes) doc.notes.push_back(std::move(n));
    doc.jobs.push_back(std::move(rec.job));
  }
  return docs;
}

}  // namespace vqsim::fio
