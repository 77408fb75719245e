// The one normalized, in-memory form of a fio result, whatever format and fio version it was read
// from (JSON 2.x/3.x, json+, normal text 2.x/3.x, terse v2-v5) and whatever vqsim writes back out.
//
// Units are fixed here, not by the source format: latencies in nanoseconds, bandwidth in bytes
// per second, sizes in bytes, runtimes in milliseconds, shares in percent. Parsers convert (a
// 2.x "clat (usec)" line is multiplied by 1000); a field the source did not carry stays
// std::nullopt / empty, so "not reported" is never confused with zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vqsim::fio {

// Which of fio's output formats a result was read from.
enum class Format { json, json_plus, normal, terse };
const char* format_name(Format f);

// One latency summary (fio's slat, clat or lat object / line).
struct LatencyStats {
  std::optional<double> min_ns, max_ns, mean_ns, stddev_ns;
  std::optional<std::uint64_t> samples;  // JSON "N"
  // (percent, value ns) in the order fio printed them, e.g. {99.9, 1531904}. fio 2.x JSON padding
  // entries ("0.00": 0) are dropped.
  std::vector<std::pair<double, double>> percentiles;
  // json+ "bins": bucket value in ns -> count.
  std::map<std::uint64_t, std::uint64_t> bins;
  bool empty() const { return !mean_ns && !min_ns && percentiles.empty() && bins.empty(); }
};

// Everything fio reports for one data direction of one job or group.
struct DirectionStats {
  std::optional<double> iops;
  std::optional<double> bw_bytes_per_s;
  std::optional<std::uint64_t> io_bytes;
  std::optional<double> runtime_ms;
  std::optional<std::uint64_t> total_ios, short_ios, drop_ios;
  LatencyStats slat, clat, lat;
  // Per-interval bandwidth samples (fio's "bw (KiB/s): min=…"), in bytes/s.
  std::optional<double> bw_min_bytes_per_s, bw_max_bytes_per_s, bw_mean_bytes_per_s, bw_stddev_bytes_per_s, bw_agg_percent;
  std::optional<std::uint64_t> bw_samples;
  std::optional<double> iops_min, iops_max, iops_mean, iops_stddev;
  std::optional<std::uint64_t> iops_samples;
  // True when at least one field was reported with a non-zero value (fio prints idle directions
  // as all zeros in JSON and terse and omits them in normal text).
  bool active() const { return (total_ios && *total_ios > 0) || (iops && *iops > 0) || (io_bytes && *io_bytes > 0); }
};

// A distribution fio prints as "key=percent" pairs: IO depths ("1", "2", …, ">=64") and latency
// buckets. Keys are kept as fio spells them; for latency buckets they are normalized to ns
// ("lat (usec): 250=0.04%" becomes {"250000", 0.04}; fio's ">=2000" msec becomes ">=2000000000").
using PercentMap = std::vector<std::pair<std::string, double>>;

struct DiskStats {
  std::string name;
  std::optional<std::uint64_t> read_ios, write_ios, read_merges, write_merges, read_ticks_ms, write_ticks_ms, in_queue_ms,
      read_sectors, write_sectors;
  std::optional<double> util_percent;
};

// One job entry (a single job, one clone of numjobs, or a group_reporting aggregate).
struct JobResult {
  std::string name;
  std::optional<int> groupid;
  std::optional<int> jobs;  // "(groupid=0, jobs=4)": clones aggregated into this entry
  std::optional<int> error;
  std::string hostname;       // client/server mode only
  bool is_aggregate = false;  // "All clients" or a group_reporting entry of jobs > 1
  DirectionStats read, write, trim;
  std::optional<DirectionStats> mixed;  // unified_rw_reporting
  std::optional<double> usr_cpu_percent, sys_cpu_percent;
  std::optional<std::uint64_t> ctx, majf, minf;
  // fsync/fdatasync/sync_file_range calls (fio >= 3.3: JSON "sync" "total_ios", the fourth
  // count of the text's "issued rwts: total=…").
  std::optional<std::uint64_t> sync_total_ios;
  PercentMap iodepth_level, iodepth_submit, iodepth_complete;
  PercentMap latency_buckets_ns;
  std::optional<double> job_runtime_ms;
  // The job options fio printed ("job options" in JSON, or from the text header such as
  // "rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32"): rw, bs, ioengine,
  // iodepth, numjobs, …, as strings, as fio spelled them.
  std::map<std::string, std::string> options;
};

// A whole fio output file (one document; --status-interval files yield several, see ParsedFile).
struct FioResult {
  Format format = Format::json;
  std::string fio_version;  // "fio-3.33", "fio-2.1.11"; empty when the source lacks it
  int terse_version = 0;    // 2..5 for terse input
  // Which fio run of the file this document reports, from 0. The documents of one run are its
  // --status-interval reports, each superseding the one before; a second run is a second fio
  // output in the same file (two outputs pasted one after the other into an e-mail).
  int run = 0;
  std::optional<std::int64_t> timestamp;
  std::map<std::string, std::string> global_options;
  std::vector<JobResult> jobs;
  std::vector<DiskStats> disks;
  // Human-readable notes about what the parser met: "detected fio 2.x normal text",
  // "dropped 3 padding percentile keys", "skipped 2 lines of text before the JSON".
  std::vector<std::string> notes;
};

// The major version of a "fio-X.Y" string (2, 3, …), 0 when unknown.
int fio_major_version(const std::string& fio_version);

}  // namespace vqsim::fio
