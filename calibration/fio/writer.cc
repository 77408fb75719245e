#include "calibration/fio/writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/fio_jobfile.h"
#include "sim/fio_histogram.h"

namespace vqsim::fio {
namespace {

using ojson = nlohmann::ordered_json;

// ---- Small helpers -----------------------------------------------------------------------------

// fio's idle fields are 0; a NaN from a computation must not reach the JSON either.
double real(std::optional<double> v) { return v && std::isfinite(*v) ? *v : 0.0; }

std::uint64_t whole(std::optional<double> v) {
  const double d = real(v);
  if (d <= 0) return 0;
  if (d >= 1.8e19) return UINT64_MAX;
  return static_cast<std::uint64_t>(std::llround(d));
}

std::uint64_t whole(std::optional<std::uint64_t> v) { return v.value_or(0); }

std::optional<double> per_kib(std::optional<double> bytes) {
  if (bytes) *bytes /= 1024.0;
  return bytes;
}

// printf into a std::string; fio's text layout is printf formats, so these mirror stat.c.
__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n <= 0) return;
  if (static_cast<std::size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<std::size_t>(n));
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  big.resize(static_cast<std::size_t>(n));
  out.append(big);
}

// fio's "time": ctime() without the newline ("Mon Nov 30 10:11:12 2026"), here in UTC so the
// output does not depend on the machine's time zone.
std::string ctime_string(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return std::string(buf, n);
}

const std::string* find_option(const JobResult& job, const FioResult& r, const std::string& key) {
  if (auto it = job.options.find(key); it != job.options.end()) return &it->second;
  if (auto it = r.global_options.find(key); it != r.global_options.end()) return &it->second;
  return nullptr;
}

// The job's iodepth as its options state it; nullopt when they do not (terse output carries no
// options) or the value is not a plain number.
std::optional<unsigned> stated_iodepth(const JobResult& job, const FioResult& r) {
  const std::string* v = find_option(job, r, "iodepth");
  if (!v) return std::nullopt;
  unsigned depth = 0;
  const auto res = std::from_chars(v->data(), v->data() + v->size(), depth);
  if (res.ec != std::errc() || res.ptr != v->data() + v->size() || depth == 0) return std::nullopt;
  return depth;
}

// fio's JSON always has a latency_depth; fio's default iodepth is 1.
unsigned iodepth_of(const JobResult& job, const FioResult& r) { return stated_iodepth(job, r).value_or(1); }

// kb_base of a job (job options over global ones): how fio read the sizes it echoes.
unsigned kb_base_of(const JobResult& job, const FioResult& r) {
  const std::string* v = find_option(job, r, "kb_base");
  return v && *v == "1000" ? 1000 : 1024;
}

std::optional<double> percent_of(const PercentMap& map, std::string_view key) {
  for (const auto& [k, v] : map)
    if (k == key) return v;
  return std::nullopt;
}

// fio's fixed bucket keys (stat.c) and their value in ns.
struct Bucket {
  const char* fio_key;  // as fio prints it in its unit
  const char* ns_key;   // PercentMap key in ns
};
constexpr std::array<Bucket, 10> kLatencyNs{{{"2", "2"},
                                             {"4", "4"},
                                             {"10", "10"},
                                             {"20", "20"},
                                             {"50", "50"},
                                             {"100", "100"},
                                             {"250", "250"},
                                             {"500", "500"},
                                             {"750", "750"},
                                             {"1000", "1000"}}};
constexpr std::array<Bucket, 10> kLatencyUs{{{"2", "2000"},
                                             {"4", "4000"},
                                             {"10", "10000"},
                                             {"20", "20000"},
                                             {"50", "50000"},
                                             {"100", "100000"},
                                             {"250", "250000"},
                                             {"500", "500000"},
                                             {"750", "750000"},
                                             {"1000", "1000000"}}};
constexpr std::array<Bucket, 12> kLatencyMs{{{"2", "2000000"},
                                             {"4", "4000000"},
                                             {"10", "10000000"},
                                             {"20", "20000000"},
                                             {"50", "50000000"},
                                             {"100", "100000000"},
                                             {"250", "250000000"},
                                             {"500", "500000000"},
                                             {"750", "750000000"},
                                             {"1000", "1000000000"},
                                             {"2000", "2000000000"},
                                             {">=2000", ">=2000000000"}}};
constexpr std::array<const char*, 7> kDepthLevels{"1", "2", "4", "8", "16", "32", ">=64"};
constexpr std::array<const char*, 7> kDepthSubmit{"0", "4", "8", "16", "32", "64", ">=64"};

// The block sizes a job's bs option (or blocksize) means, as fio read it with the job's
// kb_base (fio's default 1024 makes "4KiB" 4000 bytes); nullopt when no option states them in
// fio's option syntax (terse output, the text header's "4K-4K/4K-4K/4K-4K" ranges).
std::optional<PerDirection<std::uint64_t>> block_sizes(const JobResult& job, const FioResult& r) {
  const std::string* bs = find_option(job, r, "bs");
  if (!bs) bs = find_option(job, r, "blocksize");
  if (!bs) return std::nullopt;
  try {
    return parse_fio_block_sizes(*bs, kb_base_of(job, r));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// ---- fio JSON ----------------------------------------------------------------------------------

ojson latency_json(const LatencyStats& l) {
  ojson o = ojson::object();
  o["min"] = whole(l.min_ns);
  o["max"] = whole(l.max_ns);
  o["mean"] = real(l.mean_ns);
  o["stddev"] = real(l.stddev_ns);
  o["N"] = whole(l.samples);
  if (!l.percentiles.empty()) {
    ojson p = ojson::object();
    for (const auto& [percent, value_ns] : l.percentiles)
      p[sim::FioHistogram::percentile_key(percent)] = whole(std::optional<double>(value_ns));
    o["percentile"] = std::move(p);
  }
  if (!l.bins.empty()) {
    ojson b = ojson::object();
    for (const auto& [value_ns, n] : l.bins) b[std::to_string(value_ns)] = n;
    o["bins"] = std::move(b);
  }
  return o;
}

ojson direction_json(const DirectionStats& s) {
  ojson o = ojson::object();
  const std::uint64_t io = whole(s.io_bytes);
  const std::uint64_t bw_bytes = whole(s.bw_bytes_per_s);
  o["io_bytes"] = io;
  o["io_kbytes"] = io >> 10;
  o["bw_bytes"] = bw_bytes;
  o["bw"] = bw_bytes / 1024;  // fio: KiB/s, integer
  o["iops"] = real(s.iops);
  o["runtime"] = whole(s.runtime_ms);
  o["total_ios"] = whole(s.total_ios);
  o["short_ios"] = whole(s.short_ios);
  o["drop_ios"] = whole(s.drop_ios);
  o["slat_ns"] = latency_json(s.slat);
  o["clat_ns"] = latency_json(s.clat);
  o["lat_ns"] = latency_json(s.lat);
  o["bw_min"] = whole(per_kib(s.bw_min_bytes_per_s));
  o["bw_max"] = whole(per_kib(s.bw_max_bytes_per_s));
  o["bw_agg"] = real(s.bw_agg_percent);
  o["bw_mean"] = real(per_kib(s.bw_mean_bytes_per_s));
  o["bw_dev"] = real(per_kib(s.bw_stddev_bytes_per_s));
  o["bw_samples"] = whole(s.bw_samples);
  o["iops_min"] = whole(s.iops_min);
  o["iops_max"] = whole(s.iops_max);
  o["iops_mean"] = real(s.iops_mean);
  o["iops_stddev"] = real(s.iops_stddev);
  o["iops_samples"] = whole(s.iops_samples);
  return o;
}

template <std::size_t N>
ojson depth_json(const PercentMap& map, const std::array<const char*, N>& keys) {
  ojson o = ojson::object();
  for (const char* k : keys) o[k] = real(percent_of(map, k));
  return o;
}

template <std::size_t N>
ojson bucket_json(const PercentMap& ns_map, const std::array<Bucket, N>& buckets) {
  ojson o = ojson::object();
  for (const Bucket& b : buckets) o[b.fio_key] = real(percent_of(ns_map, b.ns_key));
  return o;
}

ojson job_json(const JobResult& job, const FioResult& r) {
  ojson o = ojson::object();
  o["jobname"] = job.name;
  o["groupid"] = job.groupid.value_or(0);
  o["error"] = job.error.value_or(0);
  o["eta"] = 0;
  o["elapsed"] = static_cast<std::uint64_t>(std::ceil(real(job.job_runtime_ms) / 1000.0));
  if (!job.options.empty()) {
    ojson opts = ojson::object();
    for (const auto& [k, v] : job.options) opts[k] = v;
    o["job options"] = std::move(opts);
  }
  // unified_rw_reporting=mixed prints only "mixed"; =both prints read/write/trim and "mixed".
  const bool only_mixed = job.mixed && !job.read.active() && !job.write.active() && !job.trim.active();
  if (!only_mixed) {
    o["read"] = direction_json(job.read);
    o["write"] = direction_json(job.write);
    o["trim"] = direction_json(job.trim);
  }
  if (job.mixed) o["mixed"] = direction_json(*job.mixed);
  // fsync latencies are not part of the normalized result; fio prints them idle like this.
  o["sync"] = {{"total_ios", whole(job.sync_total_ios)}, {"lat_ns", latency_json(LatencyStats{})}};
  o["job_runtime"] = whole(job.job_runtime_ms);
  o["usr_cpu"] = real(job.usr_cpu_percent);
  o["sys_cpu"] = real(job.sys_cpu_percent);
  o["ctx"] = whole(job.ctx);
  o["majf"] = whole(job.majf);
  o["minf"] = whole(job.minf);
  o["iodepth_level"] = depth_json(job.iodepth_level, kDepthLevels);
  o["iodepth_submit"] = depth_json(job.iodepth_submit, kDepthSubmit);
  o["iodepth_complete"] = depth_json(job.iodepth_complete, kDepthSubmit);
  o["latency_ns"] = bucket_json(job.latency_buckets_ns, kLatencyNs);
  o["latency_us"] = bucket_json(job.latency_buckets_ns, kLatencyUs);
  o["latency_ms"] = bucket_json(job.latency_buckets_ns, kLatencyMs);
  o["latency_depth"] = iodepth_of(job, r);
  o["latency_target"] = 0;
  o["latency_percentile"] = 100.0;
  o["latency_window"] = 0;
  if (!job.hostname.empty()) o["hostname"] = job.hostname;
  return o;
}

ojson disk_json(const DiskStats& d) {
  ojson o = ojson::object();
  o["name"] = d.name;
  o["read_ios"] = whole(d.read_ios);
  o["write_ios"] = whole(d.write_ios);
  // fio 3.33 has no sector counts; later versions print them here.
  if (d.read_sectors || d.write_sectors) {
    o["read_sectors"] = whole(d.read_sectors);
    o["write_sectors"] = whole(d.write_sectors);
  }
  o["read_merges"] = whole(d.read_merges);
  o["write_merges"] = whole(d.write_merges);
  o["read_ticks"] = whole(d.read_ticks_ms);
  o["write_ticks"] = whole(d.write_ticks_ms);
  o["in_queue"] = whole(d.in_queue_ms);
  o["util"] = real(d.util_percent);
  return o;
}

// fio's json.c layout. Recursion is bounded by to_fio_json()'s own nesting (5 levels).
void dump_fio_style(const ojson& v, int level, std::string& out) {
  auto indent = [&out](int n) { out.append(static_cast<std::size_t>(2 * n), ' '); };
  switch (v.type()) {
    case ojson::value_t::object: {
      if (v.empty()) {
        out.append("{}");
        return;
      }
      out.append("{\n");
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out.append(",\n");
        first = false;
        indent(level + 1);
        out.append(ojson(it.key()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).append(" : ");
        dump_fio_style(*it, level + 1, out);
      }
      out.append("\n");
      indent(level);
      out.append("}");
      return;
    }
    case ojson::value_t::array: {
      if (v.empty()) {
        out.append("[]");
        return;
      }
      out.append("[\n");
      bool first = true;
      for (const ojson& e : v) {
        if (!first) out.append(",\n");
        first = false;
        indent(level + 1);
        dump_fio_style(e, level + 1, out);
      }
      out.append("\n");
      indent(level);
      out.append("]");
      return;
    }
    case ojson::value_t::number_float: {
      // fio prints doubles with "%f"; to_chars is its locale-independent equivalent.
      char buf[400];
      const double d = v.get<double>();
      const auto res = std::to_chars(buf, buf + sizeof buf, std::isfinite(d) ? d : 0.0, std::chars_format::fixed, 6);
      out.append(buf, res.ptr);
      return;
    }
    default:  // strings from fio's output may hold invalid UTF-8: written as U+FFFD
      out.append(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
  }
}

// ---- fio's number formatting (lib/num2str.c) ---------------------------------------------------

enum class Unit { none, byte, byte_per_s };

// num2str(num, maxlen, base=1, pow2, unit): divide by 1000 (or 1024) until at most maxlen digits
// remain, then fill the remaining width with decimals of the last remainder: 9.78GiB, 2565k.
std::string num2str(std::uint64_t num, int maxlen, bool pow2, Unit unit) {
  static constexpr const char* kSi[] = {"", "k", "M", "G", "T", "P"};
  static constexpr const char* kIec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  const char* const* prefix = pow2 ? kIec : kSi;
  const char* suffix = unit == Unit::byte ? "B" : unit == Unit::byte_per_s ? "B/s" : "";
  const std::uint64_t thousand = pow2 ? 1024 : 1000;
  int post = 0;
  std::uint64_t modulo = 0;
  bool divided = false, carry = false;
  while (post < 6 && static_cast<int>(std::to_string(num).size()) > maxlen) {
    modulo = num % thousand;
    num /= thousand;
    carry = modulo >= thousand / 2;
    divided = true;
    ++post;
  }
  if (post >= 6) post = 0;
  std::string out;
  const int digits = static_cast<int>(std::to_string(num).size());
  if (!divided || maxlen - digits <= 1) {
    if (divided && carry) ++num;
    out = std::to_string(num);
  } else {
    char frac[32];
    std::snprintf(frac, sizeof frac, "%.*f", maxlen - digits - 1, static_cast<double>(modulo) / static_cast<double>(thousand));
    out = std::to_string(num);
    out.append(".").append(frac + 2);  // fio drops the "0." (and, like fio, never carries 0.999)
  }
  out.append(prefix[post]).append(suffix);
  return out;
}

// ---- fio normal text (stat.c show_thread_status_normal) ----------------------------------------

const char* const kDirNames[] = {"read", "write", "trim", "mixed"};

void latency_line(std::string& out, const char* name, const LatencyStats& l) {
  if (!l.mean_ns || (l.samples && *l.samples == 0)) return;
  std::uint64_t min = whole(l.min_ns), max = whole(l.max_ns);
  double mean = real(l.mean_ns), dev = real(l.stddev_ns);
  const char* base = "nsec";
  // stat.c nsec_to_msec / nsec_to_usec.
  if (min > 2000000 && max > 99999999ull && dev > 1000000.0) {
    min /= 1000000;
    max /= 1000000;
    mean /= 1e6;
    dev /= 1e6;
    base = "msec";
  } else if (min > 2000 && max > 99999 && dev > 1000.0) {
    min /= 1000;
    max /= 1000;
    mean /= 1e3;
    dev /= 1e3;
    base = "usec";
  }
  appendf(out, "    %s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base, num2str(min, 6, false, Unit::none).c_str(),
          num2str(max, 6, false, Unit::none).c_str(), mean, dev);
}

void percentile_block(std::string& out, const char* name, const LatencyStats& l) {
  if (l.percentiles.empty()) return;
  std::uint64_t minv = UINT64_MAX, maxv = 0;
  for (const auto& [p, v] : l.percentiles) {
    minv = std::min(minv, whole(std::optional<double>(v)));
    maxv = std::max(maxv, whole(std::optional<double>(v)));
  }
  int scale_down = 0;
  std::uint64_t divisor = 1;
  const char* unit = "nsec";
  if (minv > 2000000 && maxv > 99999999ull) {
    scale_down = 2;
    divisor = 1000000;
    unit = "msec";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1;
    divisor = 1000;
    unit = "usec";
  }
  // As many decimals as the list needs, at least fio's 2 ("99.95th").
  int precision = 2;
  for (const auto& [p, v] : l.percentiles) {
    while (precision < 6 && std::fabs(p * std::pow(10.0, precision) - std::round(p * std::pow(10.0, precision))) > 1e-6)
      ++precision;
  }
  const int width =
      std::max(5, static_cast<int>(std::log10(static_cast<double>(std::max<std::uint64_t>(maxv / divisor, 1))) + 1));
  appendf(out, "    %s percentiles (%s):\n     |", name, unit);
  const std::size_t per_line = 4;
  for (std::size_t j = 0; j < l.percentiles.size(); ++j) {
    if (j != 0 && j % per_line == 0) out.append("     |");
    std::uint64_t v = whole(std::optional<double>(l.percentiles[j].second));
    for (int i = 0; i < scale_down; ++i) v = (v + 999) / 1000;  // fio rounds up
    const bool last = j + 1 == l.percentiles.size();
    appendf(out, " %*.*fth=[%*llu]%c", precision + 3, precision, l.percentiles[j].first, width,
            static_cast<unsigned long long>(v), last ? '\n' : ',');
    if (!last && j % per_line == per_line - 1) out.append("\n");
  }
}

void direction_block(std::string& out, int dir, const DirectionStats& s) {
  const std::uint64_t bw = whole(s.bw_bytes_per_s);
  const std::uint64_t io = whole(s.io_bytes);
  // fio 3.x ends a write line with "; N zone resets"; no source format vqsim reads carries the
  // count, so it is left out rather than written as 0.
  appendf(out, "  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)\n", kDirNames[dir], num2str(whole(s.iops), 4, false, Unit::none).c_str(),
          num2str(bw, 4, true, Unit::byte_per_s).c_str(), num2str(bw, 4, false, Unit::byte_per_s).c_str(),
          num2str(io, 4, true, Unit::byte).c_str(), static_cast<unsigned long long>(whole(s.runtime_ms)));
  latency_line(out, "slat", s.slat);
  latency_line(out, "clat", s.clat);
  latency_line(out, " lat", s.lat);
  percentile_block(out, "slat", s.slat);
  percentile_block(out, "clat", s.clat);
  percentile_block(out, " lat", s.lat);
  if (s.bw_mean_bytes_per_s) {
    double min = std::floor(real(per_kib(s.bw_min_bytes_per_s)));
    double max = std::floor(real(per_kib(s.bw_max_bytes_per_s)));
    double mean = real(per_kib(s.bw_mean_bytes_per_s)), dev = real(per_kib(s.bw_stddev_bytes_per_s));
    const char* unit = "KiB";
    if (mean > 1024.0 * 1024.0) {
      min = std::floor(min / 1024);
      max = std::floor(max / 1024);
      mean /= 1024;
      dev /= 1024;
      unit = "MiB";
    }
    appendf(out, "   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f", unit,
            static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), real(s.bw_agg_percent), mean, dev);
    // fio 2.x printed no sample count; do not invent one.
    if (s.bw_samples) appendf(out, ", samples=%llu", static_cast<unsigned long long>(*s.bw_samples));
    out.append("\n");
  }
  if (s.iops_mean) {
    appendf(out, "   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f",
            static_cast<unsigned long long>(whole(s.iops_min)), static_cast<unsigned long long>(whole(s.iops_max)),
            real(s.iops_mean), real(s.iops_stddev));
    if (s.iops_samples) appendf(out, ", samples=%llu", static_cast<unsigned long long>(*s.iops_samples));
    out.append("\n");
  }
}

template <std::size_t N>
void bucket_lines(std::string& out, const char* unit, const PercentMap& ns_map, const std::array<Bucket, N>& buckets) {
  int on_line = 0;
  bool any = false;
  for (const Bucket& b : buckets) {
    const double v = real(percent_of(ns_map, b.ns_key));
    if (v <= 0.0) continue;
    if (on_line == 0) {
      if (any) out.append("\n");
      appendf(out, "  lat (%s)   : ", unit);
    } else {
      out.append(", ");
    }
    any = true;
    appendf(out, "%s=%3.2f%%", b.fio_key, v);
    if (++on_line == 5) on_line = 0;
  }
  if (any) out.append("\n");
}

template <std::size_t N>
void depth_line(std::string& out, const char* label, const PercentMap& map, const std::array<const char*, N>& keys) {
  out.append(label);
  bool first = true;
  for (const char* k : keys) {
    if (!first) out.append(", ");
    first = false;
    appendf(out, "%s=%3.1f%%", k, real(percent_of(map, k)));
  }
  out.append("\n");
}

// fio's job header "name: (groupid=0, jobs=1): err= 0: pid=707: Wed Apr  8 07:35:01 2015" with
// only what the result states: no result carries fio's pid, and jobs=, err= and the date are
// left out when the source did not give them (terse output has no clone count and no date), so
// nothing printed here is invented.
void job_block(std::string& out, const JobResult& job, const FioResult& r) {
  appendf(out, "%s: (groupid=%d", job.name.c_str(), job.groupid.value_or(0));
  if (job.jobs) appendf(out, ", jobs=%d", *job.jobs);
  out.append(")");
  if (job.error) appendf(out, ": err=%2d", *job.error);
  if (r.timestamp) appendf(out, ": %s", ctime_string(*r.timestamp).c_str());
  out.append("\n");
  if (job.hostname.size()) appendf(out, "  hostname=%s\n", job.hostname.c_str());
  const DirectionStats* dirs[] = {&job.read, &job.write, &job.trim};
  for (int d = 0; d < 3; ++d)
    if (dirs[d]->active()) direction_block(out, d, *dirs[d]);
  if (job.mixed && job.mixed->active()) direction_block(out, 3, *job.mixed);
  bucket_lines(out, "nsec", job.latency_buckets_ns, kLatencyNs);
  bucket_lines(out, "usec", job.latency_buckets_ns, kLatencyUs);
  bucket_lines(out, "msec", job.latency_buckets_ns, kLatencyMs);
  if (job.usr_cpu_percent || job.sys_cpu_percent || job.ctx) {
    appendf(out, "  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%llu, majf=%llu, minf=%llu\n", real(job.usr_cpu_percent),
            real(job.sys_cpu_percent), static_cast<unsigned long long>(whole(job.ctx)),
            static_cast<unsigned long long>(whole(job.majf)), static_cast<unsigned long long>(whole(job.minf)));
  }
  if (!job.iodepth_level.empty()) depth_line(out, "  IO depths    : ", job.iodepth_level, kDepthLevels);
  if (!job.iodepth_submit.empty()) depth_line(out, "     submit    : ", job.iodepth_submit, kDepthSubmit);
  if (!job.iodepth_complete.empty()) depth_line(out, "     complete  : ", job.iodepth_complete, kDepthSubmit);
  // fio 3.33's "issued rwts" (read, write, trim and sync counts; short= and dropped= print 0
  // for syncs) when the source stated the syncs, else fio 3.0's "issued rwt" with three. Each of
  // total/short/dropped only when the source stated all three directions' counts (terse output
  // states none; fio 2.x text has no dropped counts). Under unified_rw_reporting=mixed fio
  // counts every I/O in the first column.
  const bool only_mixed = job.mixed && !job.read.active() && !job.write.active() && !job.trim.active();
  const DirectionStats& first = only_mixed ? *job.mixed : job.read;
  using Count = std::optional<std::uint64_t> DirectionStats::*;
  std::string issued;
  for (const auto& [label, field] : {std::pair<const char*, Count>{"total", &DirectionStats::total_ios},
                                     {"short", &DirectionStats::short_ios},
                                     {"dropped", &DirectionStats::drop_ios}}) {
    const auto& a = first.*field;
    const auto& b = job.write.*field;
    const auto& c = job.trim.*field;
    if (!a || !b || !c) continue;
    appendf(issued, " %s=%llu,%llu,%llu", label, static_cast<unsigned long long>(*a), static_cast<unsigned long long>(*b),
            static_cast<unsigned long long>(*c));
    if (job.sync_total_ios)
      appendf(issued, ",%llu", field == &DirectionStats::total_ios ? static_cast<unsigned long long>(*job.sync_total_ios) : 0ULL);
  }
  if (!issued.empty()) appendf(out, "     issued %s:%s\n", job.sync_total_ios ? "rwts" : "rwt", issued.c_str());
  // fio prints target=0, window=0, percentile=100% and depth=iodepth unless a latency_target
  // run moved them: printed only when the depth is known and no latency_* option is set. fio's
  // JSON lists only the options a job changed, so there an absent iodepth is fio's default 1.
  const bool json_options =
      (r.format == Format::json || r.format == Format::json_plus) && (!job.options.empty() || !r.global_options.empty());
  const auto depth = json_options ? std::optional<unsigned>(iodepth_of(job, r)) : stated_iodepth(job, r);
  const bool latency_options =
      find_option(job, r, "latency_target") || find_option(job, r, "latency_window") || find_option(job, r, "latency_percentile");
  if (depth && !latency_options) appendf(out, "     latency   : target=0, window=0, percentile=100.00%%, depth=%u\n", *depth);
}

// "Run status group G (all jobs):" and one line per direction: aggregate bandwidth (all bytes
// over the longest runtime), the per-job bandwidth range, total I/O and the runtime range.
void group_summary(std::string& out, const FioResult& r) {
  std::map<int, std::vector<const JobResult*>> groups;
  for (const JobResult& j : r.jobs)
    if (j.name != "All clients") groups[j.groupid.value_or(0)].push_back(&j);
  const char* const labels[] = {"   READ", "  WRITE", "   TRIM", "  MIXED"};
  for (const auto& [gid, jobs] : groups) {
    appendf(out, "\nRun status group %d (all jobs):\n", gid);
    for (int d = 0; d < 4; ++d) {
      std::uint64_t io_total = 0, run_min = UINT64_MAX, run_max = 0, bw_min = UINT64_MAX, bw_max = 0;
      bool any = false;
      for (const JobResult* j : jobs) {
        const DirectionStats* s = d == 0 ? &j->read : d == 1 ? &j->write : d == 2 ? &j->trim : (j->mixed ? &*j->mixed : nullptr);
        if (!s || !s->active()) continue;
        any = true;
        const std::uint64_t io = whole(s->io_bytes);
        const std::uint64_t run = whole(s->runtime_ms);
        const std::uint64_t bw = s->bw_bytes_per_s ? whole(s->bw_bytes_per_s) : (run ? io * 1000 / run : 0);
        io_total += io;
        run_min = std::min(run_min, run);
        run_max = std::max(run_max, run);
        bw_min = std::min(bw_min, bw);
        bw_max = std::max(bw_max, bw);
      }
      if (!any) continue;
      const std::uint64_t agg =
          run_max ? static_cast<std::uint64_t>(static_cast<double>(io_total) * 1000.0 / static_cast<double>(run_max)) : 0;
      appendf(out, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n", labels[d],
              num2str(agg, 4, true, Unit::byte_per_s).c_str(), num2str(agg, 4, false, Unit::byte_per_s).c_str(),
              num2str(bw_min, 4, true, Unit::byte_per_s).c_str(), num2str(bw_max, 4, true, Unit::byte_per_s).c_str(),
              num2str(bw_min, 4, false, Unit::byte_per_s).c_str(), num2str(bw_max, 4, false, Unit::byte_per_s).c_str(),
              num2str(io_total, 4, true, Unit::byte).c_str(), num2str(io_total, 4, false, Unit::byte).c_str(),
              static_cast<unsigned long long>(run_min), static_cast<unsigned long long>(run_max));
    }
  }
}

// "randrw: (g=0): rw=randrw, bs=(R) 4096B-4096B, …, ioengine=null, iodepth=8", fio's start-up
// line per job section, from the options the result carries.
void option_preamble(std::string& out, const FioResult& r) {
  std::vector<std::string> seen;
  for (const JobResult& job : r.jobs) {
    if (job.is_aggregate && job.name == "All clients") continue;
    if (std::find(seen.begin(), seen.end(), job.name) != seen.end()) continue;
    seen.push_back(job.name);
    const std::string* rw = find_option(job, r, "rw");
    if (!rw) rw = find_option(job, r, "readwrite");
    const std::string* bs = find_option(job, r, "bs");
    const std::string* engine = find_option(job, r, "ioengine");
    if (!rw && !bs && !engine) continue;
    PerDirection<std::string> bs_text{"4096B", "4096B", "4096B"};  // fio's default
    if (bs && bs->find_first_of("(-/") != std::string::npos) {
      // fio's own spelling of ranges ("(R) 4096B-4096B, …", 2.x "4K-4K/4K-4K/4K-4K"): as it was.
      appendf(out, "%s: (g=%d): rw=%s, bs=%s, ioengine=%s, iodepth=%u\n", job.name.c_str(), job.groupid.value_or(0),
              rw ? rw->c_str() : "read", bs->c_str(), engine ? engine->c_str() : "psync", iodepth_of(job, r));
      continue;
    }
    if (bs) {
      // In bytes as fio read it, with the job's kb_base: "4k" is 4096B, and "4KiB" 4000B under
      // fio's default kb_base=1024 (the "ib" forms take the other base; parse.c get_mult_bytes).
      // Anything fio's size syntax does not cover is shown as written.
      try {
        const PerDirection<std::uint64_t> bytes = parse_fio_block_sizes(*bs, kb_base_of(job, r));
        for (std::size_t d = 0; d < 3; ++d) bs_text[d] = std::to_string(bytes[d]) + "B";
      } catch (const std::exception&) {
        bs_text = {*bs, *bs, *bs};
      }
    }
    appendf(out, "%s: (g=%d): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%u\n", job.name.c_str(),
            job.groupid.value_or(0), rw ? rw->c_str() : "read", bs_text[0].c_str(), bs_text[0].c_str(), bs_text[1].c_str(),
            bs_text[1].c_str(), bs_text[2].c_str(), bs_text[2].c_str(), engine ? engine->c_str() : "psync", iodepth_of(job, r));
  }
}

// ---- Normalized JSON ---------------------------------------------------------------------------

template <class T>
void put(ojson& o, const char* key, const std::optional<T>& v) {
  if (!v) return;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*v)) return;
  }
  o[key] = *v;
}

// Percent keys like fio's ("99.900000"); values as integers when they are whole ns.
ojson number_json(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

ojson latency_normalized(const LatencyStats& l) {
  ojson o = ojson::object();
  put(o, "min_ns", l.min_ns);
  put(o, "max_ns", l.max_ns);
  put(o, "mean_ns", l.mean_ns);
  put(o, "stddev_ns", l.stddev_ns);
  put(o, "samples", l.samples);
  if (!l.percentiles.empty()) {
    ojson p = ojson::object();
    for (const auto& [percent, value] : l.percentiles) p[sim::FioHistogram::percentile_key(percent)] = number_json(value);
    o["percentiles_ns"] = std::move(p);
  }
  if (!l.bins.empty()) {
    ojson b = ojson::object();
    for (const auto& [value, n] : l.bins) b[std::to_string(value)] = n;
    o["bins_ns"] = std::move(b);
  }
  return o;
}

ojson direction_normalized(const DirectionStats& s) {
  ojson o = ojson::object();
  put(o, "iops", s.iops);
  put(o, "bw_bytes_per_s", s.bw_bytes_per_s);
  put(o, "io_bytes", s.io_bytes);
  put(o, "runtime_ms", s.runtime_ms);
  put(o, "total_ios", s.total_ios);
  put(o, "short_ios", s.short_ios);
  put(o, "drop_ios", s.drop_ios);
  const std::pair<const char*, const LatencyStats*> lats[] = {{"slat", &s.slat}, {"clat", &s.clat}, {"lat", &s.lat}};
  for (const auto& [name, l] : lats) {
    ojson lj = latency_normalized(*l);
    if (!lj.empty()) o[name] = std::move(lj);
  }
  ojson bw = ojson::object();
  put(bw, "min_bytes_per_s", s.bw_min_bytes_per_s);
  put(bw, "max_bytes_per_s", s.bw_max_bytes_per_s);
  put(bw, "mean_bytes_per_s", s.bw_mean_bytes_per_s);
  put(bw, "stddev_bytes_per_s", s.bw_stddev_bytes_per_s);
  put(bw, "agg_percent", s.bw_agg_percent);
  put(bw, "samples", s.bw_samples);
  if (!bw.empty()) o["bw_samples"] = std::move(bw);
  ojson iops = ojson::object();
  put(iops, "min", s.iops_min);
  put(iops, "max", s.iops_max);
  put(iops, "mean", s.iops_mean);
  put(iops, "stddev", s.iops_stddev);
  put(iops, "samples", s.iops_samples);
  if (!iops.empty()) o["iops_samples"] = std::move(iops);
  return o;
}

ojson percent_map_json(const PercentMap& map) {
  ojson o = ojson::object();
  for (const auto& [k, v] : map) o[k] = v;
  return o;
}

ojson job_normalized(const JobResult& job, const FioResult& r) {
  ojson o = ojson::object();
  o["name"] = job.name;
  put(o, "groupid", job.groupid);
  put(o, "jobs", job.jobs);
  put(o, "error", job.error);
  if (!job.hostname.empty()) o["hostname"] = job.hostname;
  o["is_aggregate"] = job.is_aggregate;
  put(o, "job_runtime_ms", job.job_runtime_ms);
  if (!job.options.empty()) o["options"] = job.options;
  if (auto bs = block_sizes(job, r)) o["bs_bytes"] = {{"read", (*bs)[0]}, {"write", (*bs)[1]}, {"trim", (*bs)[2]}};
  const std::pair<const char*, const DirectionStats*> dirs[] = {{"read", &job.read}, {"write", &job.write}, {"trim", &job.trim}};
  for (const auto& [name, s] : dirs)
    if (s->active()) o[name] = direction_normalized(*s);
  if (job.mixed) o["mixed"] = direction_normalized(*job.mixed);
  ojson cpu = ojson::object();
  put(cpu, "usr_percent", job.usr_cpu_percent);
  put(cpu, "sys_percent", job.sys_cpu_percent);
  put(cpu, "ctx", job.ctx);
  put(cpu, "majf", job.majf);
  put(cpu, "minf", job.minf);
  if (!cpu.empty()) o["cpu"] = std::move(cpu);
  ojson depth = ojson::object();
  if (!job.iodepth_level.empty()) depth["level_percent"] = percent_map_json(job.iodepth_level);
  if (!job.iodepth_submit.empty()) depth["submit_percent"] = percent_map_json(job.iodepth_submit);
  if (!job.iodepth_complete.empty()) depth["complete_percent"] = percent_map_json(job.iodepth_complete);
  if (!depth.empty()) o["iodepth"] = std::move(depth);
  if (!job.latency_buckets_ns.empty()) o["latency_buckets_ns_percent"] = percent_map_json(job.latency_buckets_ns);
  return o;
}

ojson disk_normalized(const DiskStats& d) {
  ojson o = ojson::object();
  o["name"] = d.name;
  put(o, "read_ios", d.read_ios);
  put(o, "write_ios", d.write_ios);
  put(o, "read_sectors", d.read_sectors);
  put(o, "write_sectors", d.write_sectors);
  put(o, "read_merges", d.read_merges);
  put(o, "write_merges", d.write_merges);
  put(o, "read_ticks_ms", d.read_ticks_ms);
  put(o, "write_ticks_ms", d.write_ticks_ms);
  put(o, "in_queue_ms", d.in_queue_ms);
  put(o, "util_percent", d.util_percent);
  return o;
}

}  // namespace

ojson to_fio_json(const FioResult& result) {
  ojson o = ojson::object();
  const std::int64_t ts = result.timestamp.value_or(0);
  o["fio version"] = result.fio_version;
  o["timestamp"] = ts;
  o["timestamp_ms"] = ts * 1000;
  o["time"] = ctime_string(ts);
  if (!result.global_options.empty()) {
    ojson g = ojson::object();
    for (const auto& [k, v] : result.global_options) g[k] = v;
    o["global options"] = std::move(g);
  }
  // client.c names the array "client_stats" and adds each entry's hostname.
  const bool client = std::any_of(result.jobs.begin(), result.jobs.end(), [](const JobResult& j) { return !j.hostname.empty(); });
  ojson jobs = ojson::array();
  for (const JobResult& job : result.jobs) jobs.push_back(job_json(job, result));
  o[client ? "client_stats" : "jobs"] = std::move(jobs);
  if (!result.disks.empty()) {
    ojson disks = ojson::array();
    for (const DiskStats& d : result.disks) disks.push_back(disk_json(d));
    o["disk_util"] = std::move(disks);
  }
  return o;
}

std::string to_fio_json_text(const FioResult& result) {
  std::string out;
  dump_fio_style(to_fio_json(result), 0, out);
  out.append("\n");
  return out;
}

ojson to_normalized_json(const ParsedFile& file) {
  return to_normalized_json(file, file.documents.empty() ? 0 : file.run_count() - 1);
}

ojson to_normalized_json(const ParsedFile& file, std::size_t run) {
  ojson o = ojson::object();
  o["source"] = file.source;
  o["format"] = format_name(file.format);
  o["detected"] = file.detected;
  const std::vector<const FioResult*> docs = file.run_documents(run);
  if (!file.documents.empty() && file.run_count() > 1) {
    o["run"] = run + 1;
    o["runs"] = file.run_count();
  }
  o["documents"] = docs.size();
  if (docs.empty()) return o;
  const FioResult& r = *docs.back();
  if (!r.fio_version.empty()) o["fio_version"] = r.fio_version;
  if (r.terse_version) o["terse_version"] = r.terse_version;
  put(o, "timestamp", r.timestamp);
  if (!r.global_options.empty()) o["global_options"] = r.global_options;
  ojson jobs = ojson::array();
  for (const JobResult& job : r.jobs) jobs.push_back(job_normalized(job, r));
  o["jobs"] = std::move(jobs);
  if (!r.disks.empty()) {
    ojson disks = ojson::array();
    for (const DiskStats& d : r.disks) disks.push_back(disk_normalized(d));
    o["disks"] = std::move(disks);
  }
  // Notes of every document of the run (the first one holds "skipped text before the JSON"), each once.
  std::vector<std::string> notes;
  for (const FioResult* doc : docs)
    for (const std::string& n : doc->notes)
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  if (!notes.empty()) o["notes"] = notes;
  return o;
}

std::string to_fio_text(const FioResult& result) {
  std::string out;
  option_preamble(out, result);
  if (!result.fio_version.empty()) appendf(out, "%s\n", result.fio_version.c_str());
  if (!out.empty()) out.append("\n");
  for (const JobResult& job : result.jobs) job_block(out, job, result);
  group_summary(out, result);
  if (!result.disks.empty()) {
    out.append("\nDisk stats (read/write):\n");
    for (const DiskStats& d : result.disks) {
      auto n = [](std::optional<std::uint64_t> v) { return static_cast<unsigned long long>(v.value_or(0)); };
      appendf(out, "  %s: ios=%llu/%llu, ", d.name.c_str(), n(d.read_ios), n(d.write_ios));
      if (d.read_sectors || d.write_sectors) appendf(out, "sectors=%llu/%llu, ", n(d.read_sectors), n(d.write_sectors));
      appendf(out, "merge=%llu/%llu, ticks=%llu/%llu, in_queue=%llu, util=%3.2f%%\n", n(d.read_merges), n(d.write_merges),
              n(d.read_ticks_ms), n(d.write_ticks_ms), n(d.in_queue_ms), real(d.util_percent));
    }
  }
  return out;
}

}  // namespace vqsim::fio
