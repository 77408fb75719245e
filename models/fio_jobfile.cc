// fio job files and command lines -> JobSpec. See jobfile.h for the contract.
//
// Sources: fio's HOWTO.rst ("Job file format", "Environment variables", "Reserved keywords",
// "Parameter types", and each option's entry), fio's init.c / options.c / parse.c where the
// HOWTO is silent, and fio 3.33 itself (null engine, --output-format=json) where the two
// disagree. Where vqsim departs from fio on purpose, the comment says so.
#include "models/fio_jobfile.h"

#include "models/config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

namespace vqsim::fio {

namespace {

using models::edit_distance;
using models::trim;

std::string make_message(const std::string& source, int line, const std::string& option, const std::string& reason) {
  std::string m = source;
  if (line > 0) {
    m.append(":");
    m.append(std::to_string(line));
  }
  m.append(": ");
  if (!option.empty()) {
    m.append(option);
    m.append(": ");
  }
  m.append(reason);
  return m;
}

}  // namespace

JobFileError::JobFileError(std::string source, int line, std::string option, const std::string& reason)
    : std::runtime_error(make_message(source, line, option, reason)),
      source_(std::move(source)),
      line_(line),
      option_(std::move(option)) {}

std::string SourceLocation::str() const {
  std::string s = file;
  if (line > 0) {
    s.append(":");
    s.append(std::to_string(line));
  }
  return s;
}

std::string_view to_string(RwMode mode) {
  switch (mode) {
    case RwMode::read:
      return "read";
    case RwMode::write:
      return "write";
    case RwMode::trim:
      return "trim";
    case RwMode::randread:
      return "randread";
    case RwMode::randwrite:
      return "randwrite";
    case RwMode::randtrim:
      return "randtrim";
    case RwMode::readwrite:
      return "readwrite";
    case RwMode::randrw:
      return "randrw";
    case RwMode::trimwrite:
      return "trimwrite";
    case RwMode::randtrimwrite:
      return "randtrimwrite";
  }
  return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Small string helpers.

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string in_quotes(std::string_view s) {
  std::string q = "'";
  q.append(s);
  q.append("'");
  return q;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.emplace_back(s.substr(start));
      return parts;
    }
    parts.emplace_back(s.substr(start, at - start));
    start = at + 1;
  }
}

// The closest candidate within a small distance: 1 for words of up to 4 letters (so that "xy"
// is not taken for "rw"), else 2, which catches "iodeth" and "ramptime".
std::string closest(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::size_t limit = word.size() <= 4 ? 1 : 2;
  std::string best;
  std::size_t best_distance = limit + 1;
  for (std::string_view c : candidates) {
    // The edit distance is at least the difference in length: skip those that cannot be close
    // (most of fio's ~400 option names), which keeps a file full of unknown options fast.
    const std::size_t length_gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (length_gap > limit) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::string c = closest(word, candidates);
  if (c.empty()) return "";
  std::string s = " (did you mean ";
  s.append(in_quotes(c));
  s.append("?)");
  return s;
}

// ---------------------------------------------------------------------------------------------
// Value parsers.

[[noreturn]] void bad_value(const std::string& reason) { throw std::invalid_argument(reason); }

void reject_arithmetic(std::string_view text) {
  // The HOWTO allows "(1+2)*4k"-style expressions, but only in fio builds with its expression
  // parser (Debian's fio 3.33 rejects "size=(2*1024)"); vqsim does not evaluate them.
  if (text.find_first_of("()+*/^") != std::string_view::npos) {
    std::string r = "arithmetic expressions are not supported, write the value; got ";
    r.append(in_quotes(text));
    bad_value(r);
  }
}

std::uint64_t checked_multiply(std::uint64_t a, std::uint64_t b, std::string_view text) {
  if (b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b) {
    std::string r = "value too large: ";
    r.append(in_quotes(text));
    bad_value(r);
  }
  return a * b;
}

// Leading digits (decimal, or hex after 0x) and the rest.
std::pair<std::uint64_t, std::string_view> leading_number(std::string_view text, const char* expected) {
  const auto fail = [&] {
    std::string r = "expected ";
    r.append(expected);
    r.append(", got ");
    r.append(in_quotes(text));
    bad_value(r);
  };
  if (text.empty()) fail();
  reject_arithmetic(text);
  if (text.front() == '-') fail();
  std::size_t i = 0;
  std::uint64_t value = 0;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) {
    i = 2;
    const std::size_t first = i;
    while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      const unsigned digit = c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>(c - 'a' + 10);
      value = checked_multiply(value, 16, text) + digit;
      ++i;
    }
    if (i == first || i != text.size()) fail();  // no unit after a hex number
    return {value, {}};
  }
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    value = checked_multiply(value, 10, text);
    if (value > std::numeric_limits<std::uint64_t>::max() - digit) fail();
    value += digit;
    ++i;
  }
  if (i == 0) fail();
  if (i < text.size() && text[i] == '.') {
    // fio 3.33 truncates these oddly ("size=1.5k" became 1 byte); better to say so.
    std::string r = "fractional values are not supported, got ";
    r.append(in_quotes(text));
    bad_value(r);
  }
  return {value, text.substr(i)};
}

}  // namespace

// Sizes, as fio 3.33's parse.c (__get_mult_bytes) reads them, measured with the null engine:
//   * a plain number is bytes; "0x" hex is allowed (without a unit);
//   * k/m/g/t/p, optionally followed by "b" or "i", multiply by kb_base^n: with the default
//     kb_base=1024, 4k = 4kb = 4kB = 4ki = 4096 and 1mi = 1048576;
//   * the three-letter IEC forms kib/mib/gib/tib/pib (any case) use the *other* base: with
//     kb_base=1024, 1MiB = 1000000 ("opposite units ... to provide compatibility with old
//     scripts", HOWTO "Parameter types"); with kb_base=1000, 4KiB = 4096 and 4k = 4000.
// The HOWTO's own table says "1mi" is 10^6 under kb_base=1024, but fio 3.33 only flips the base
// when the unit ends in "ib" (it compares "kib" etc. first, then falls back to the first
// letter); we follow the program, since the program is what produced the measurements.
std::uint64_t parse_fio_size_bytes(std::string_view text, unsigned kb_base) {
  text = trim(text);
  auto [value, unit_text] = leading_number(text, "a size such as 4096, 4k or 1m");
  const std::string unit = lower(unit_text);
  if (unit.empty() || unit == "b") return value;
  static constexpr std::string_view kPrefixes = "kmgtp";
  const std::size_t power = kPrefixes.find(unit[0]);
  const std::string rest = unit.substr(1);
  if (power == std::string_view::npos || !(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) {
    std::string r = "unknown size unit ";
    r.append(in_quotes(unit_text));
    r.append(" in ");
    r.append(in_quotes(text));
    r.append(" (fio takes k, m, g, t, p with an optional b, i or ib; the kib forms flip kb_base)");
    bad_value(r);
  }
  const std::uint64_t base = rest == "ib" ? (kb_base == 1000 ? 1024 : 1000) : kb_base;
  std::uint64_t multiplier = 1;
  for (std::size_t i = 0; i <= power; ++i) multiplier = checked_multiply(multiplier, base, text);
  return checked_multiply(value, multiplier, text);
}

namespace {

// True when a size is written with one of the three-letter IEC units ("4KiB", "1mib"), which
// fio's default kb_base=1024 reads as powers of 1000: the spelling that surprises.
bool flipped_iec_unit(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t.size() < 4 || !t.ends_with("ib")) return false;
  const char prefix = t[t.size() - 3];
  return std::string_view("kmgtp").find(prefix) != std::string_view::npos &&
         std::isdigit(static_cast<unsigned char>(t[t.size() - 4]));
}

// The same for any size in a bssplit list ("4KiB/50:64k/50,8k").
bool flipped_iec_unit_in_list(std::string_view text) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find_first_of("/:,", start);
    if (flipped_iec_unit(text.substr(start, end == std::string_view::npos ? end : end - start))) return true;
    if (end == std::string_view::npos) return false;
    start = end + 1;
  }
}

}  // namespace

// Times, as fio 3.33's parse.c (get_mult_time) reads them: us/usec, ms/msec, s, m (minutes),
// h, d, in any case; a plain number is in the option's default unit (seconds for runtime and
// ramp_time, microseconds for thinktime). fio works in microseconds, so nothing finer exists.
// The HOWTO also lists "sec" (and people write "min"), but fio 3.33 matches "s" and "m" only
// exactly and silently reads 1sec or 1min as 1 microsecond (measured: thinktime=1sec and 1min
// behave as 1us). Rather than copy that trap, vqsim rejects those spellings.
sim::time_ns parse_fio_time_ns(std::string_view text, sim::time_ns plain_unit_ns) {
  text = trim(text);
  auto [value, unit_text] = leading_number(text, "a time such as 10, 500ms or 2m");
  const std::string unit = lower(unit_text);
  std::uint64_t unit_ns = 0;
  if (unit.empty())
    unit_ns = static_cast<std::uint64_t>(plain_unit_ns);
  else if (unit == "us" || unit == "usec")
    unit_ns = 1'000;
  else if (unit == "ms" || unit == "msec")
    unit_ns = 1'000'000;
  else if (unit == "s")
    unit_ns = 1'000'000'000;
  else if (unit == "m")
    unit_ns = 60'000'000'000;
  else if (unit == "h")
    unit_ns = 3'600'000'000'000;
  else if (unit == "d")
    unit_ns = 86'400'000'000'000;
  else {
    std::string r = "unknown time unit ";
    r.append(in_quotes(unit_text));
    r.append(" in ");
    r.append(in_quotes(text));
    if (unit == "sec" || unit == "min") {
      r.append(" (fio 3.33 ignores it and reads the number as microseconds; write ");
      r.append(std::to_string(value));
      r.append(unit == "sec" ? "s" : "m");
      r.append(")");
    } else {
      r.append(" (fio takes us, ms, s, m, h, d)");
    }
    bad_value(r);
  }
  const std::uint64_t ns = checked_multiply(value, unit_ns, text);
  if (ns > static_cast<std::uint64_t>(std::numeric_limits<sim::time_ns>::max())) {
    std::string r = "time too large: ";
    r.append(in_quotes(text));
    bad_value(r);
  }
  return static_cast<sim::time_ns>(ns);
}

// Engines whose submission returns only when the I/O is done: iodepth has no effect with them
// (HOWTO, iodepth: "increasing iodepth beyond 1 will not affect synchronous ioengines").
bool is_synchronous_engine(std::string_view engine) {
  static const std::set<std::string_view> sync = {"sync", "psync",  "vsync",     "pvsync", "pvsync2",
                                                  "mmap", "splice", "ftruncate", "falloc", "e4defrag"};
  return sync.count(engine) != 0;
}

const std::vector<std::string>& modelled_ioengines() {
  static const std::vector<std::string> engines = {"psync", "sync", "pvsync", "libaio", "io_uring", "aio"};
  return engines;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Option tables.

// Every job option named in fio 3.33's HOWTO.rst (".. option::" entries with their aliases,
// which is also what `fio --cmdhelp=all` lists), plus a few from older fio versions. An option
// here that vqsim does not model is reported as unsupported; one not here is reported as
// unknown (fio itself would refuse the job).
const std::set<std::string_view>& known_fio_options() {
  static const std::set<std::string_view> names = {
      "allow_file_create",
      "allow_mounted_write",
      "allrandrepeat",
      "arguments",
      "atomic",
      "ba",
      "bindname",
      "block",
      "block_error_percentiles",
      "blockalign",
      "blocksize",
      "blocksize_range",
      "blocksize_unaligned",
      "bs",
      "bs_is_seq_rand",
      "bs_unaligned",
      "bsrange",
      "bssplit",
      "buffer_compress_chunk",
      "buffer_compress_percentage",
      "buffer_pattern",
      "buffered",
      "busy_poll",
      "busy_wait_polling",
      "bwavgtime",
      "cgroup",
      "cgroup_nodelete",
      "cgroup_weight",
      "chunk_size",
      "clat_percentiles",
      "clientname",
      "clocksource",
      "clustername",
      "cmd_type",
      "cmdprio",
      "cmdprio_bssplit",
      "cmdprio_class",
      "cmdprio_percentage",
      "conf",
      "cont",
      "continue_on_error",
      "cpuchunks",
      "cpuload",
      "cpumask",
      "cpumode",
      "cpus_allowed",
      "cpus_allowed_policy",
      "create_fsync",
      "create_on_open",
      "create_only",
      "create_serialize",
      "cuda_io",
      "dedupe_global",
      "dedupe_mode",
      "dedupe_percentage",
      "dedupe_working_set_percentage",
      "description",
      "dir",
      "direct",
      "direct_write_to_pmem",
      "directory",
      "disable_bw",
      "disable_bw_measurement",
      "disable_clat",
      "disable_lat",
      "disable_slat",
      "disk_util",
      "do_verify",
      "donorname",
      "end_fsync",
      "error_dump",
      "exec_postrun",
      "exec_prerun",
      "exit_on_io_done",
      "exit_what",
      "exitall",
      "exitall_on_error",
      "experimental_verify",
      "fadvise_hint",
      "fallocate",
      "fdatasync",
      "file_append",
      "file_service_type",
      "filename",
      "filename_format",
      "filesize",
      "fill_device",
      "fill_fs",
      "fixedbufs",
      "flow",
      "flow_id",
      "flow_sleep",
      "force_async",
      "fsync",
      "fsync_on_close",
      "gid",
      "gpu_dev_ids",
      "grace_time",
      "group_reporting",
      "gtod_cpu",
      "gtod_reduce",
      "hdfsdirectory",
      "hipri",
      "hipri_percentage",
      "hostname",
      "http_host",
      "http_mode",
      "http_pass",
      "http_s3_key",
      "http_s3_keyid",
      "http_s3_region",
      "http_s3_sse_customer_algorithm",
      "http_s3_sse_customer_key",
      "http_s3_storage_class",
      "http_swift_auth_token",
      "http_user",
      "http_verbose",
      "https",
      "ignore_error",
      "ignore_zone_limits",
      "inplace",
      "interface",
      "invalidate",
      "io_limit",
      "io_size",
      "io_submit_mode",
      "iodepth",
      "iodepth_batch",
      "iodepth_batch_complete",
      "iodepth_batch_complete_max",
      "iodepth_batch_complete_min",
      "iodepth_batch_submit",
      "iodepth_low",
      "ioengine",
      "iomem",
      "iomem_align",
      "iopsavgtime",
      "ioscheduler",
      "job_max_open_zones",
      "kb_base",
      "lat_percentiles",
      "latency_percentile",
      "latency_run",
      "latency_target",
      "latency_window",
      "listen",
      "load",
      "lockfile",
      "lockmem",
      "log_alternate_epoch",
      "log_alternate_epoch_clock_id",
      "log_avg_msec",
      "log_compression",
      "log_compression_cpus",
      "log_entries",
      "log_hist_coarseness",
      "log_hist_msec",
      "log_max_value",
      "log_offset",
      "log_prio",
      "log_store_compressed",
      "log_unix_epoch",
      "loops",
      "max_latency",
      "max_open_zones",
      "mem",
      "mem_align",
      "merge_blktrace_file",
      "merge_blktrace_iters",
      "merge_blktrace_scalars",
      "mss",
      "name",
      "namenode",
      "new_group",
      "nfs_url",
      "nice",
      "nodelay",
      "nonvectored",
      "norandommap",
      "nowait",
      "nrfiles",
      "numa_cpu_nodes",
      "numa_mem_policy",
      "number_ios",
      "numjobs",
      "numruns",
      "object_class",
      "offset",
      "offset_align",
      "offset_increment",
      "opendir",
      "openfiles",
      "overwrite",
      "per_job_logs",
      "percentage_random",
      "percentile_list",
      "pingpong",
      "pool",
      "port",
      "pre_read",
      "prep",
      "prio",
      "prioclass",
      "profile",
      "program",
      "proto",
      "protocol",
      "ramp_time",
      "random_distribution",
      "random_generator",
      "randrepeat",
      "randseed",
      "rate",
      "rate_cycle",
      "rate_ignore_thinktime",
      "rate_iops",
      "rate_iops_min",
      "rate_min",
      "rate_process",
      "rbdname",
      "read_beyond_wp",
      "read_iolog",
      "read_iolog_chunked",
      "readfua",
      "readwrite",
      "refill_buffers",
      "registerfiles",
      "replay_align",
      "replay_no_stall",
      "replay_redirect",
      "replay_scale",
      "replay_skip",
      "replay_time_scale",
      "runtime",
      "rw",
      "rw_sequencer",
      "rwmixcycle",
      "rwmixread",
      "rwmixwrite",
      "scramble_buffers",
      "serialize_overlap",
      "serverip",
      "sg_write_mode",
      "significant_figures",
      "size",
      "skip_bad",
      "slat_percentiles",
      "softrandommap",
      "sqthread_poll",
      "sqthread_poll_cpu",
      "ss",
      "ss_dur",
      "ss_ramp",
      "startdelay",
      "stat_type",
      "stats",
      "std_redirect",
      "steadystate",
      "steadystate_duration",
      "steadystate_ramp_time",
      "stonewall",
      "str",
      "stream_id",
      "sync",
      "sync_file_range",
      "thinktime",
      "thinktime_blocks",
      "thinktime_blocks_type",
      "thinktime_iotime",
      "thinktime_spin",
      "thread",
      "threads",
      "time_based",
      "touch_objects",
      "trim_backlog",
      "trim_backlog_batch",
      "trim_percentage",
      "trim_verify_zero",
      "ttl",
      "uid",
      "unified_rw_reporting",
      "unique_filename",
      "unit_base",
      "unlink",
      "unlink_each_loop",
      "uri",
      "use_os_rand",
      "userspace_reap",
      "verb",
      "verify",
      "verify_async",
      "verify_async_cpus",
      "verify_backlog",
      "verify_backlog_batch",
      "verify_dump",
      "verify_fatal",
      "verify_interval",
      "verify_offset",
      "verify_only",
      "verify_pattern",
      "verify_state_load",
      "verify_state_save",
      "wait_for",
      "wait_for_previous",
      "window_size",
      "write_barrier",
      "write_bw_log",
      "write_hint",
      "write_hist_log",
      "write_iolog",
      "write_iops_log",
      "write_lat_log",
      "writefua",
      "xnvme_admin",
      "xnvme_async",
      "xnvme_dev_nsid",
      "xnvme_iovec",
      "xnvme_sync",
      "zero_buffers",
      "zone_reset_frequency",
      "zone_reset_threshold",
      "zonecapacity",
      "zonemode",
      "zonerange",
      "zonesize",
      "zoneskip",
  };
  return names;
}

// fio's own command-line options (HOWTO "Command line options"): they steer fio, not a job.
// The bool says whether the option takes a value that may come as the next argument.
const std::map<std::string_view, bool>& fio_command_options() {
  static const std::map<std::string_view, bool> options = {
      {"debug", true},        {"parse-only", false},    {"merge-blktrace-only", false},
      {"output", true},       {"output-format", true},  {"bandwidth-log", false},
      {"minimal", false},     {"append-terse", false},  {"terse-version", true},
      {"version", false},     {"help", false},          {"cpuclock-test", false},
      {"crctest", false},     {"cmdhelp", false},       {"enghelp", false},
      {"showcmd", false},     {"readonly", false},      {"eta", true},
      {"eta-interval", true}, {"eta-newline", true},    {"status-interval", true},
      {"section", true},      {"alloc-size", true},     {"warnings-fatal", false},
      {"max-jobs", true},     {"server", false},        {"daemonize", true},
      {"client", true},       {"remote-config", true},  {"idle-prof", true},
      {"inflate-log", true},  {"trigger-file", true},   {"trigger-timeout", true},
      {"trigger", true},      {"trigger-remote", true}, {"aux-path", true},
      {"latency-log", false},
  };
  return options;
}

// Aliases fio accepts for the options vqsim models, mapped to the main name.
const std::map<std::string_view, std::string_view>& aliases() {
  static const std::map<std::string_view, std::string_view> map = {
      {"readwrite", "rw"},
      {"blocksize", "bs"},
      {"iodepth_batch", "iodepth_batch_submit"},
      {"iodepth_batch_complete", "iodepth_batch_complete_min"},
      {"wait_for_previous", "stonewall"},
      {"timeout", "runtime"},  // `fio --cmdhelp=runtime`: "alias: timeout"
  };
  return map;
}

enum class Kind { flag, value };  // flag: a bool that may stand bare ("time_based")

// The options vqsim turns into JobSpec fields (by main name).
const std::map<std::string_view, Kind>& modelled_options() {
  static const std::map<std::string_view, Kind> map = {
      {"name", Kind::value},
      {"rw", Kind::value},
      {"rwmixread", Kind::value},
      {"rwmixwrite", Kind::value},
      {"bs", Kind::value},
      {"bssplit", Kind::value},
      {"iodepth", Kind::value},
      {"iodepth_batch_submit", Kind::value},
      {"iodepth_batch_complete_min", Kind::value},
      {"iodepth_batch_complete_max", Kind::value},
      {"ioengine", Kind::value},
      {"direct", Kind::flag},
      {"buffered", Kind::flag},
      {"size", Kind::value},
      {"runtime", Kind::value},
      {"ramp_time", Kind::value},
      {"time_based", Kind::flag},
      {"thinktime", Kind::value},
      {"thinktime_blocks", Kind::value},
      {"rate_iops", Kind::value},
      {"rate_process", Kind::value},
      {"numjobs", Kind::value},
      {"group_reporting", Kind::flag},
      {"filename", Kind::value},
      {"kb_base", Kind::value},
      {"stonewall", Kind::flag},
      {"new_group", Kind::flag},
  };
  return map;
}

std::string main_name(const std::string& name) {
  const auto it = aliases().find(name);
  return it == aliases().end() ? name : std::string(it->second);
}

bool is_modelled(const std::string& name) { return modelled_options().count(main_name(name)) != 0; }

std::vector<std::string_view> modelled_spellings() {
  std::vector<std::string_view> v;
  for (const auto& [name, kind] : modelled_options()) v.push_back(name);
  for (const auto& [alias, name] : aliases()) v.push_back(alias);
  return v;
}

// fio 3.33's engines (`fio --enghelp` and the HOWTO's ioengine list) and a few older ones.
const std::vector<std::string_view>& known_engines() {
  static const std::vector<std::string_view> engines = {
      "sync",      "psync",      "vsync",          "pvsync",      "pvsync2",   "io_uring",  "io_uring_cmd", "libaio",
      "posixaio",  "solarisaio", "windowsaio",     "mmap",        "splice",    "sg",        "libzbc",       "null",
      "net",       "netsplice",  "cpuio",          "rdma",        "falloc",    "ftruncate", "e4defrag",     "rados",
      "rbd",       "http",       "gfapi",          "gfapi_async", "libhdfs",   "mtd",       "pmemblk",      "dev-dax",
      "external",  "filecreate", "filestat",       "filedelete",  "libpmem",   "ime_psync", "ime_psyncv",   "ime_aio",
      "libiscsi",  "nbd",        "libcufile",      "dfs",         "nfs",       "exec",      "xnvme",        "binject",
      "syslet-rw", "guasi",      "fusion-aw-sync", "spdk",        "spdk_bdev",
  };
  return engines;
}

// ---------------------------------------------------------------------------------------------
// The parser proper.

struct Option {
  std::string key;    // as written
  std::string value;  // after ${VAR} substitution; "" for a bare flag
  bool has_value = false;
  SourceLocation where;
};

struct Section {
  bool open = false;
  bool global = false;
  std::string name;
  SourceLocation where;
  std::vector<Option> options;
};

class Builder {
 public:
  explicit Builder(const std::map<std::string, std::string>& env) : env_(env) {
    // fio has no default for iodepth_batch_complete_max (0 = unset) until fixup_options makes it
    // the min; finish_job does the same, so an explicit 0 with complete_min=0 stays 0.
    defaults_.iodepth_batch_complete_max = 0;
  }

  // Reads one job file; `implied_stonewall` for the 2nd, 3rd... job file of a command line.
  void read_file(const std::string& path, bool implied_stonewall) {
    implied_stonewall_ = implied_stonewall;
    std::vector<std::string> stack;
    read_file_at(path, SourceLocation{}, stack, false);
    close_section();
  }

  void read_text(std::string_view text, const std::string& source, const std::string& base_dir) {
    std::vector<std::string> stack;
    process_text(text, source, base_dir, stack, false);
    close_section();
  }

  void begin_section(std::string name, SourceLocation where) {
    close_section();
    current_.open = true;
    current_.global = name == "global";
    current_.name = std::move(name);
    current_.where = std::move(where);
    current_.options.clear();
  }

  // Checks one option line and files it under the open section.
  void add_option(const std::string& key, std::string_view raw_value, bool has_value, const SourceLocation& where) {
    if (!current_.open) {
      throw JobFileError(where.file, where.line, key, "option outside any section (start a job with [name] or [global])");
    }
    Option o;
    o.key = key;
    o.has_value = has_value;
    o.where = where;
    o.value = substitute(raw_value, where, key);
    if (!is_modelled(key)) {
      if (known_fio_options().count(key) != 0) {
        std::string m = where.str();
        m.append(": option ");
        m.append(in_quotes(key));
        m.append(" is not modelled and is ignored");
        out_.unsupported.push_back(std::move(m));
      } else {
        const std::string typo = did_you_mean(key, modelled_spellings());
        if (!typo.empty()) {
          std::string r = "unknown option";
          r.append(typo);
          throw JobFileError(where.file, where.line, key, r);
        }
        std::vector<std::string_view> known(known_fio_options().begin(), known_fio_options().end());
        std::string m = where.str();
        m.append(": option ");
        m.append(in_quotes(key));
        m.append(" is not a fio option vqsim knows (fio 3.33 HOWTO) and is ignored");
        m.append(did_you_mean(key, known));
        out_.unsupported.push_back(std::move(m));
      }
    } else if (modelled_options().at(main_name(key)) == Kind::value && o.value.empty()) {
      // Also catches "bs=" and a ${VAR} that expanded to nothing.
      throw JobFileError(where.file, where.line, key, "expected a value (option=value)");
    }
    current_.options.push_back(std::move(o));
  }

  void report_unsupported(std::string line) { out_.unsupported.push_back(std::move(line)); }
  void set_implied_stonewall(bool on) { implied_stonewall_ = on; }

  // Ends the open section: a [global] updates the defaults, a job is built and appended.
  void close_section();

  JobFile take() { return std::move(out_); }
  std::size_t job_count() const { return out_.jobs.size(); }

 private:
  void read_file_at(const std::string& path, const SourceLocation& included_from, std::vector<std::string>& stack,
                    bool in_include);
  void process_text(std::string_view text, const std::string& source, const std::string& base_dir,
                    std::vector<std::string>& stack, bool in_include);
  std::string substitute(std::string_view value, const SourceLocation& where, const std::string& key) const;
  void apply(JobSpec& job, const Option& o);
  void finish_job(JobSpec& job);
  void warn(const SourceLocation& where, const std::string& text) {
    std::string m = where.str();
    m.append(": ");
    m.append(text);
    out_.warnings.push_back(std::move(m));
  }

  const std::map<std::string, std::string>& env_;
  JobFile out_;
  JobSpec defaults_;
  Section current_;
  bool implied_stonewall_ = false;
  int group_ = 0;
  int jobs_in_group_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Typed values of one option.

std::string integer_expectation(std::uint64_t lo, std::uint64_t hi) {
  if (hi == std::numeric_limits<unsigned>::max()) return lo == 0 ? "a non-negative integer" : "a positive integer";
  std::string s = "an integer from ";
  s.append(std::to_string(lo));
  s.append(" to ");
  s.append(std::to_string(hi));
  return s;
}

// fio reads integer options with the same routine as sizes (str_to_decimal), so "iodepth=1k" is
// 1024 there; vqsim does the same rather than reject what fio ran.
unsigned integer_in(const std::string& text, unsigned lo, unsigned hi, unsigned kb_base) {
  std::uint64_t v = 0;
  bool ok = true;
  try {
    v = parse_fio_size_bytes(text, kb_base);
  } catch (const std::invalid_argument&) {
    ok = false;
  }
  if (!ok || v < lo || v > hi) {
    std::string r = "expected ";
    r.append(integer_expectation(lo, hi));
    r.append(", got ");
    r.append(in_quotes(text));
    bad_value(r);
  }
  return static_cast<unsigned>(v);
}

constexpr unsigned kMaxUnsigned = std::numeric_limits<unsigned>::max();

// fio's comma lists for reads, writes and trims (HOWTO, blocksize): "a" sets all three; "a,b"
// sets reads to a, writes and trims to b ("a value not terminated in a comma applies to
// subsequent types"); "a,b," leaves trims alone; ",b" leaves reads alone. An element left empty
// keeps what the job had before (inherited from [global], or fio's default): measured with fio
// 3.33, [global] bs=16k then bs=,8k reads 16 KiB, and rate_iops=100 then rate_iops=,50 caps
// reads at 100.
PerDirection<std::optional<std::string>> per_direction(const std::string& text) {
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() > 3) {
    std::string r = "expected at most three comma-separated values (reads, writes, trims), got ";
    r.append(in_quotes(text));
    bad_value(r);
  }
  PerDirection<std::optional<std::string>> out;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string_view part = trim(i < parts.size() ? parts[i] : parts.back());
    if (!part.empty()) out[i] = std::string(part);
  }
  return out;
}

// bssplit=4k/10:64k/50:32k/40 (HOWTO, bssplit), as fio's bssplit_ddir (options.c) fills it in:
// a blank (or 0) percentage is missing, and the missing ones share what the others leave of 100
// equally, by integer division; a lone entry without a percentage gets 100. The HOWTO says the
// percentages always add up to 100, but fio 3.33 only refuses more than 100 when several are
// blank (bssplit=4k/60:64k/50 runs); a total other than 100 is kept and noted in `notes`.
std::vector<BlockSplit> parse_bssplit(const std::string& text, unsigned kb_base, std::vector<std::string>& notes) {
  std::vector<BlockSplit> entries;
  unsigned given = 0;
  unsigned missing = 0;
  for (const std::string& item : split(text, ':')) {
    const std::string_view entry = trim(item);
    if (entry.empty()) {
      std::string r = "empty entry in ";
      r.append(in_quotes(text));
      r.append(" (expected size/percent:size/percent...)");
      bad_value(r);
    }
    const std::size_t slash = entry.find('/');
    BlockSplit split_entry;
    split_entry.bytes = parse_fio_size_bytes(entry.substr(0, slash), kb_base);
    if (split_entry.bytes == 0) bad_value("a bssplit block size must be at least 1 byte");
    if (slash != std::string_view::npos) {
      const std::string_view percent = trim(entry.substr(slash + 1));
      if (!percent.empty()) {
        const bool digits =
            std::all_of(percent.begin(), percent.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
        if (!digits || percent.size() > 3 || std::stoul(std::string(percent)) > 100) {
          std::string r = "expected a percentage from 0 to 100 after '/', got ";
          r.append(in_quotes(percent));
          bad_value(r);
        }
        split_entry.percent = static_cast<unsigned>(std::stoul(std::string(percent)));
      }
    }
    if (split_entry.percent == 0) ++missing;
    given += split_entry.percent;
    entries.push_back(split_entry);
  }
  if (entries.size() > 64) bad_value("fio takes at most 64 bssplit entries per direction");
  if (given > 100 && missing > 0) {
    std::string r = "percentages add up to more than 100 in ";
    r.append(in_quotes(text));
    bad_value(r);
  }
  if (missing > 0) {
    const unsigned share = entries.size() == 1 ? 100 : (100 - given) / missing;
    for (BlockSplit& e : entries) {
      if (e.percent == 0) e.percent = share;
    }
  }
  unsigned total = 0;
  for (const BlockSplit& e : entries) total += e.percent;
  if (total != 100) {
    std::string n = "bssplit ";
    n.append(in_quotes(text));
    n.append(" adds up to ");
    n.append(std::to_string(total));
    n.append("%, not 100% (fio runs it anyway; its choice of block size is then skewed)");
    notes.push_back(std::move(n));
  }
  return entries;
}

const std::vector<std::pair<std::string_view, RwMode>>& rw_modes() {
  static const std::vector<std::pair<std::string_view, RwMode>> modes = {
      {"read", RwMode::read},
      {"write", RwMode::write},
      {"trim", RwMode::trim},
      {"randread", RwMode::randread},
      {"randwrite", RwMode::randwrite},
      {"randtrim", RwMode::randtrim},
      {"rw", RwMode::readwrite},
      {"readwrite", RwMode::readwrite},
      {"randrw", RwMode::randrw},
      {"trimwrite", RwMode::trimwrite},
      {"randtrimwrite", RwMode::randtrimwrite},
  };
  return modes;
}

// ---------------------------------------------------------------------------------------------
// Builder.

std::string Builder::substitute(std::string_view value, const SourceLocation& where, const std::string& key) const {
  const auto fail = [&](const std::string& reason) { throw JobFileError(where.file, where.line, key, reason); };
  std::string out;
  std::size_t i = 0;
  while (i < value.size()) {
    if (value.compare(i, 2, "${") == 0) {
      // HOWTO "Environment variables": ${VARNAME} on the right of '=' is replaced by the
      // variable's value. fio substitutes "" for an undefined one; a simulator input that
      // silently lost a value would be worse, so vqsim refuses it.
      const std::size_t close = value.find('}', i + 2);
      if (close == std::string_view::npos) {
        std::string r = "unterminated ${ in ";
        r.append(in_quotes(value));
        fail(r);
      }
      const std::string name(value.substr(i + 2, close - i - 2));
      if (name.empty()) fail("empty ${} in the value");
      if (const auto it = env_.find(name); it != env_.end()) {
        out.append(it->second);
      } else if (const char* from_process = std::getenv(name.c_str())) {
        out.append(from_process);
      } else {
        std::string r = "environment variable ";
        r.append(in_quotes(name));
        r.append(" is not defined (fio would substitute an empty string)");
        fail(r);
      }
      i = close + 1;
      continue;
    }
    if (value[i] == '$') {
      // HOWTO "Reserved keywords": values of the machine fio ran on, so they come from `env`
      // only, never from the machine running vqsim.
      bool replaced = false;
      for (const std::string_view keyword : {"pagesize", "mb_memory", "ncpus"}) {
        if (value.compare(i + 1, keyword.size(), keyword) != 0) continue;
        const auto it = env_.find(std::string(keyword));
        if (it == env_.end()) {
          std::string r = "$";
          r.append(keyword);
          r.append(" describes the machine fio ran on; pass ");
          r.append(keyword);
          r.append(" in the environment map or write the number");
          fail(r);
        }
        out.append(it->second);
        i += 1 + keyword.size();
        replaced = true;
        break;
      }
      if (replaced) continue;
    }
    out.push_back(value[i]);
    ++i;
  }
  return out;
}

void Builder::read_file_at(const std::string& path, const SourceLocation& included_from, std::vector<std::string>& stack,
                           bool in_include) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::path(path), ec);
  if (ec) canonical = fs::absolute(fs::path(path));
  const std::string id = canonical.string();
  if (std::find(stack.begin(), stack.end(), id) != stack.end()) {
    std::string r = "include cycle: ";
    for (const std::string& s : stack) {
      r.append(fs::path(s).filename().string());
      r.append(" -> ");
    }
    r.append(canonical.filename().string());
    throw JobFileError(included_from.file, included_from.line, "include", r);
  }
  std::ifstream in(path, std::ios::binary);
  // A directory opens as a stream on Linux and reads as nothing: say what it is.
  if (!in || fs::is_directory(fs::path(path), ec)) {
    if (included_from.file.empty())
      throw JobFileError(
          path, 0, "",
          fs::is_directory(fs::path(path), ec) ? "cannot read the job file: it is a directory" : "cannot read the job file");
    std::string r = "cannot read ";
    r.append(in_quotes(path));
    throw JobFileError(included_from.file, included_from.line, "include", r);
  }
  std::ostringstream text;
  text << in.rdbuf();
  stack.push_back(id);
  process_text(text.str(), path, canonical.parent_path().string(), stack, in_include);
  stack.pop_back();
}

void Builder::process_text(std::string_view text, const std::string& source, const std::string& base_dir,
                           std::vector<std::string>& stack, bool in_include) {
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    // fio's strip_blank_end cuts every line at its first ';' or '#', so a comment may also
    // trail an option or a section header ("bs=4k ; data", "[a] # x"; fio 3.33 reads both),
    // and a value cannot contain either character.
    if (const std::size_t comment = line.find_first_of(";#"); comment != std::string_view::npos) {
      line = line.substr(0, comment);
    }
    line = trim(line);  // also drops a '\r' of CRLF files
    if (line.empty()) continue;
    const SourceLocation where{source, line_number};
    if (line.front() == '[') {
      if (in_include) {
        throw JobFileError(source, line_number, "", "an included file may not contain [] sections (fio HOWTO, Job file format)");
      }
      if (line.back() != ']') {
        std::string r = "expected a section header [name], got ";
        r.append(in_quotes(line));
        throw JobFileError(source, line_number, "", r);
      }
      const std::string_view name = trim(line.substr(1, line.size() - 2));
      if (name.empty()) throw JobFileError(source, line_number, "", "empty section name []");
      begin_section(std::string(name), where);
      continue;
    }
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos && line.substr(0, 7) == "include" &&
        (line.size() == 7 || std::isspace(static_cast<unsigned char>(line[7])))) {
      // HOWTO: "any section may pull in an external filename.fio file with include filename";
      // vqsim resolves a relative name against the including file's directory.
      const std::string_view file = trim(line.substr(7));
      if (file.empty()) throw JobFileError(source, line_number, "include", "expected a file name");
      std::filesystem::path target{std::string(file)};
      if (target.is_relative()) target = std::filesystem::path(base_dir) / target;
      read_file_at(target.string(), where, stack, true);
      continue;
    }
    // Blanks around '=' are dropped. (fio 3.33 keeps a blank after '=' in string values, so
    // "ioengine = null" fails there to load the engine " null"; the intent is plain.)
    const std::string key(trim(line.substr(0, eq)));
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : trim(line.substr(eq + 1));
    const bool spaced =
        std::any_of(key.begin(), key.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
    if (key.empty() || spaced) {
      std::string r = "expected option=value or a bare option name, got ";
      r.append(in_quotes(line));
      throw JobFileError(source, line_number, "", r);
    }
    add_option(key, value, eq != std::string_view::npos, where);
  }
}

void Builder::close_section() {
  if (!current_.open) return;
  current_.open = false;
  JobSpec target = defaults_;
  if (!current_.global) {
    target.name = current_.name;
    target.section = current_.where;
  }
  // fio sorts a section's options by priority before parsing them and kb_base comes first, so
  // it governs every size in its section wherever it is written (measured: size=1m then
  // kb_base=1000 gives 10^6 bytes in a job file). Only on fio's command line, which is parsed
  // in order, does a later --kb_base miss earlier sizes; vqsim applies it first there too.
  for (const Option& o : current_.options) {
    if (main_name(o.key) == "kb_base") apply(target, o);
  }
  for (const Option& o : current_.options) {
    if (main_name(o.key) != "kb_base") apply(target, o);
  }
  if (current_.global) {
    defaults_ = std::move(target);
    return;
  }
  finish_job(target);
  out_.jobs.push_back(std::move(target));
}

void Builder::apply(JobSpec& job, const Option& o) {
  job.raw[o.key] = o.value;
  const std::string name = main_name(o.key);
  job.origin[name] = o.where;  // also for the options vqsim does not model: a refusal names their line
  if (!is_modelled(o.key)) return;
  const std::string& v = o.value;
  const unsigned kb = job.kb_base;
  // fio reads "4KiB" as 4000 bytes under its default kb_base=1024: right, but rarely meant.
  const auto note_iec_units = [&](std::string_view text, std::uint64_t bytes) {
    if (kb != 1024 || !flipped_iec_unit(text)) return;
    const std::string written(trim(text));
    std::string w = o.key;
    w.append("=");
    w.append(written);
    w.append(" is ");
    w.append(std::to_string(bytes));
    w.append(
        " bytes: with kb_base=1024, its default, fio reads the units KiB, MiB, GiB as powers of 1000 and k, m, g (also "
        "KB, MB, GB) as powers of 1024 (HOWTO, \"Parameter types\"; parse.c, get_mult_bytes)");
    // "4KiB" -> "4k": the same number with fio's one-letter unit, if fio reads that.
    const std::string shorthand = lower(written.substr(0, written.size() - 2));
    try {
      const std::uint64_t binary = parse_fio_size_bytes(shorthand, 1024);
      w.append("; write ");
      w.append(shorthand);
      w.append(" for ");
      w.append(std::to_string(binary));
      w.append(" bytes, or set kb_base=1000 (then KiB, MiB, GiB are powers of 1024)");
    } catch (const std::invalid_argument&) {
    }
    warn(o.where, w);
  };
  const auto boolean = [&]() -> bool {
    // fio's bool options take 1 or 0, or stand bare ("time_based"). fio 3.33 refuses "true"
    // and "false" ("failed parsing direct=true"); their meaning is plain, so vqsim takes them
    // and says fio would not.
    if (!o.has_value) return true;
    if (v == "1") return true;
    if (v == "0") return false;
    const std::string l = lower(v);
    if (l == "true" || l == "false") {
      std::string w = o.key;
      w.append("=");
      w.append(v);
      w.append(": fio itself accepts only 1 or 0 here and would refuse the job");
      warn(o.where, w);
      return l == "true";
    }
    std::string r = "expected 1 or 0 (or the bare option name), got ";
    r.append(in_quotes(v));
    bad_value(r);
  };
  try {
    if (name == "name") {
      if (v.empty()) bad_value("expected a job name");
      job.name = v;
    } else if (name == "rw") {
      const std::size_t colon = v.find(':');
      const std::string mode = lower(trim(std::string_view(v).substr(0, colon)));
      const auto& modes = rw_modes();
      const auto it = std::find_if(modes.begin(), modes.end(), [&](const auto& m) { return m.first == mode; });
      if (it == modes.end()) {
        std::vector<std::string_view> names;
        for (const auto& m : modes) names.push_back(m.first);
        std::string r =
            "expected read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, "
            "trimwrite or randtrimwrite, got ";
        r.append(in_quotes(v));
        r.append(did_you_mean(mode, names));
        bad_value(r);
      }
      job.rw = it->second;
      job.rw_offset_modifier = colon == std::string::npos ? "" : std::string(trim(std::string_view(v).substr(colon + 1)));
      if (!job.rw_offset_modifier.empty()) {
        std::string m = o.where.str();
        m.append(": option '");
        m.append(o.key);
        m.append("' suffix ':");
        m.append(job.rw_offset_modifier);
        m.append("' (I/Os per new offset, or a gap between sequential I/Os) is not modelled and is ignored");
        out_.unsupported.push_back(std::move(m));
      }
    } else if (name == "rwmixread") {
      job.rwmixread = integer_in(v, 0, 100, kb);
    } else if (name == "rwmixwrite") {
      // HOWTO: if both are given and do not add up to 100, "the latter of the two will be used
      // to override the first" (measured: rwmixread=30 then rwmixwrite=30 reads 70%).
      job.rwmixread = 100 - integer_in(v, 0, 100, kb);
    } else if (name == "bs") {
      const auto values = per_direction(v);
      for (std::size_t d = 0; d < 3; ++d) {
        if (!values[d]) continue;
        if (values[d]->find_first_of("-:") != std::string::npos) {
          bad_value("bs takes one size per direction; a range is bsrange, which vqsim does not model");
        }
        const std::uint64_t bytes = parse_fio_size_bytes(*values[d], kb);
        if (bytes == 0) {
          std::string r = "expected a block size of at least 1 byte, got ";
          r.append(in_quotes(*values[d]));
          bad_value(r);
        }
        job.bs_bytes[d] = bytes;
      }
      // Once per option, for the first size that reads the surprising way.
      for (std::size_t d = 0; d < 3; ++d)
        if (values[d] && flipped_iec_unit(*values[d])) {
          note_iec_units(*values[d], job.bs_bytes[d]);
          break;
        }
    } else if (name == "bssplit") {
      const auto values = per_direction(v);
      for (std::size_t d = 0; d < 3; ++d) {
        if (!values[d]) continue;
        std::vector<std::string> notes;
        job.bssplit[d] = parse_bssplit(*values[d], kb, notes);
        for (const std::string& n : notes) warn(o.where, n);
      }
      if (kb == 1024 && flipped_iec_unit_in_list(v)) {
        std::string w = o.key;
        w.append("=");
        w.append(v);
        w.append(
            ": with kb_base=1024, its default, fio reads the units KiB, MiB, GiB as powers of 1000 (4KiB is 4000 bytes) and "
            "k, m, g as powers of 1024 (HOWTO, \"Parameter types\"); write 4k for 4096 bytes, or set kb_base=1000 (then "
            "KiB, MiB, GiB are powers of 1024)");
        warn(o.where, w);
      }
    } else if (name == "iodepth") {
      job.iodepth = integer_in(v, 1, kMaxUnsigned, kb);
    } else if (name == "iodepth_batch_submit") {
      job.iodepth_batch_submit = integer_in(v, 0, kMaxUnsigned, kb);
    } else if (name == "iodepth_batch_complete_min") {
      job.iodepth_batch_complete_min = integer_in(v, 0, kMaxUnsigned, kb);
    } else if (name == "iodepth_batch_complete_max") {
      job.iodepth_batch_complete_max = integer_in(v, 0, kMaxUnsigned, kb);
    } else if (name == "ioengine") {
      if (v.empty()) bad_value("expected an I/O engine name");
      const auto& engines = known_engines();
      const bool external = v.rfind("external:", 0) == 0 || v.find('/') != std::string::npos;
      if (!external && std::find(engines.begin(), engines.end(), v) == engines.end()) {
        const std::string typo = did_you_mean(v, engines);
        if (!typo.empty()) {
          std::string r = "unknown I/O engine ";
          r.append(in_quotes(v));
          r.append(typo);
          bad_value(r);
        }
        std::string w = "ioengine=";
        w.append(v);
        w.append(" is not one of fio 3.33's engines (an external plugin?)");
        warn(o.where, w);
      }
      job.ioengine = v;
    } else if (name == "direct") {
      job.direct = boolean();
    } else if (name == "buffered") {
      job.direct = !boolean();  // HOWTO: buffered is "the opposite of the direct option"
    } else if (name == "size") {
      if (!v.empty() && v.back() == '%') {
        // HOWTO, size: "a percentage between 1 and 100" of the file or device.
        job.size_percent = integer_in(v.substr(0, v.size() - 1), 1, 100, kb);
        job.size_bytes.reset();
      } else {
        const std::uint64_t bytes = parse_fio_size_bytes(v, kb);
        note_iec_units(v, bytes);
        job.size_percent.reset();
        if (bytes == 0)
          job.size_bytes.reset();  // fio's default 0: the whole file or device
        else
          job.size_bytes = bytes;
      }
    } else if (name == "runtime") {
      const sim::time_ns t = parse_fio_time_ns(v, sim::kNsPerS);  // HOWTO: plain number = seconds
      if (t == 0)
        job.runtime_ns.reset();  // fio: 0 = no limit
      else
        job.runtime_ns = t;
    } else if (name == "ramp_time") {
      job.ramp_time_ns = parse_fio_time_ns(v, sim::kNsPerS);
    } else if (name == "time_based") {
      job.time_based = boolean();
    } else if (name == "thinktime") {
      job.thinktime_ns = parse_fio_time_ns(v, sim::kNsPerUs);  // HOWTO: plain number = microseconds
    } else if (name == "thinktime_blocks") {
      job.thinktime_blocks = integer_in(v, 0, kMaxUnsigned, kb);  // `fio --cmdhelp`: min=0
    } else if (name == "rate_iops") {
      const auto values = per_direction(v);
      for (std::size_t d = 0; d < 3; ++d) {
        if (!values[d]) continue;
        const unsigned iops = integer_in(*values[d], 0, kMaxUnsigned, kb);
        if (iops == 0)
          job.rate_iops[d].reset();  // fio: 0 = no cap
        else
          job.rate_iops[d] = iops;
      }
    } else if (name == "rate_process") {
      const std::string l = lower(v);
      if (l != "linear" && l != "poisson") {
        std::string r = "expected linear or poisson, got ";
        r.append(in_quotes(v));
        r.append(did_you_mean(l, {"linear", "poisson"}));
        bad_value(r);
      }
      job.rate_process = l;
    } else if (name == "numjobs") {
      job.numjobs = integer_in(v, 1, kMaxUnsigned, kb);
    } else if (name == "group_reporting") {
      job.group_reporting = boolean();
    } else if (name == "filename") {
      job.filename = v;
    } else if (name == "kb_base") {
      if (v != "1024" && v != "1000") {
        std::string r = "expected 1024 or 1000, got ";
        r.append(in_quotes(v));
        bad_value(r);
      }
      job.kb_base = v == "1000" ? 1000 : 1024;
    } else if (name == "stonewall") {
      job.stonewall = boolean();
    } else if (name == "new_group") {
      job.new_group = boolean();
    }
  } catch (const std::invalid_argument& e) {
    throw JobFileError(o.where.file, o.where.line, o.key, e.what());
  }
}

void Builder::finish_job(JobSpec& job) {
  switch (job.rw) {
    case RwMode::read:
    case RwMode::randread:
      job.read_fraction = 1.0;
      break;
    case RwMode::readwrite:
    case RwMode::randrw:
      job.read_fraction = job.rwmixread / 100.0;
      break;
    default:
      job.read_fraction = 0.0;
      break;
  }
  job.random = job.rw == RwMode::randread || job.rw == RwMode::randwrite || job.rw == RwMode::randtrim ||
               job.rw == RwMode::randrw || job.rw == RwMode::randtrimwrite;

  // fio's fixup_options (init.c): "If batch number isn't set, default to the same as iodepth"
  // (0 or more than iodepth means iodepth), and "If max batch complete number isn't set or set
  // incorrectly, default to the same as iodepth_batch_complete_min".
  if (job.iodepth_batch_submit == 0 || job.iodepth_batch_submit > job.iodepth) job.iodepth_batch_submit = job.iodepth;
  if (job.iodepth_batch_complete_min > job.iodepth_batch_complete_max) {
    job.iodepth_batch_complete_max = job.iodepth_batch_complete_min;
  }

  // Reporting groups as fio's add_job (init.c) numbers them: a job with stonewall or new_group
  // opens a new group unless it is the first job of the current one.
  if (implied_stonewall_) {
    job.stonewall = true;  // fio sets stonewall on the first job of every job file but the first
    implied_stonewall_ = false;
  }
  if ((job.stonewall || job.new_group) && jobs_in_group_ > 0) {
    ++group_;
    jobs_in_group_ = 0;
  }
  job.group = group_;
  ++jobs_in_group_;

  // Combinations that run but do not do what they seem to (HOWTO, iodepth).
  if (job.iodepth > 1 && is_synchronous_engine(job.ioengine)) {
    std::string w = "job '";
    w.append(job.name);
    w.append("': iodepth=");
    w.append(std::to_string(job.iodepth));
    w.append(" has no effect with the synchronous engine ");
    w.append(job.ioengine);
    warn(job.section, w);
  }
  if (job.iodepth > 1 && job.ioengine == "libaio" && !job.direct) {
    std::string w = "job '";
    w.append(job.name);
    w.append("': libaio without direct=1 is buffered, which Linux does not do asynchronously, so iodepth=");
    w.append(std::to_string(job.iodepth));
    w.append(" is not reached");
    warn(job.section, w);
  }
  // O_DIRECT needs I/O sizes in whole sectors (512 bytes at least): the kernel fails others
  // with EINVAL, fio's "io_u error ...: Invalid argument". "4KiB" under kb_base=1024 is such a
  // size (4000 bytes).
  if (job.direct) {
    static constexpr const char* kDirs[] = {"reads", "writes"};
    const bool used[] = {job.read_fraction > 0, job.read_fraction < 1};
    std::optional<std::pair<std::size_t, std::uint64_t>> odd;  // direction, bytes
    for (std::size_t d = 0; d < 2 && !odd; ++d) {
      if (!used[d]) continue;
      if (job.bssplit[d].empty() && job.bs_bytes[d] % 512 != 0) odd = std::make_pair(d, job.bs_bytes[d]);
      for (const BlockSplit& b : job.bssplit[d])
        if (!odd && b.bytes % 512 != 0) odd = std::make_pair(d, b.bytes);
    }
    if (odd) {
      const std::size_t d = odd->first;
      std::string w = "job '";
      w.append(job.name);
      w.append("': a block size of ");
      w.append(std::to_string(odd->second));
      w.append(" bytes for ");
      w.append(kDirs[d]);
      w.append(
          " is not a multiple of 512 (the sector size): with direct=1 the kernel refuses such I/O and fio stops with "
          "\"io_u error ...: Invalid argument\"");
      const char* option = job.bssplit[d].empty() ? "bs" : "bssplit";
      for (const char* written : {option, job.bssplit[d].empty() ? "blocksize" : "bssplit"}) {
        const auto raw = job.raw.find(written);
        if (raw == job.raw.end() || job.kb_base != 1024 || !flipped_iec_unit_in_list(raw->second)) continue;
        w.append(" (");
        w.append(written);
        w.append("=");
        w.append(raw->second);
        w.append(": fio reads KiB as 1000 bytes under kb_base=1024; 4k is 4096)");
        break;
      }
      const auto at = job.origin.find(option);
      warn(at != job.origin.end() ? at->second : job.section, w);
    }
  }
  if (job.time_based && !job.runtime_ns) {
    std::string w = "job '";
    w.append(job.name);
    w.append("': time_based without runtime runs until it is stopped");
    warn(job.section, w);
  }
  if (job.origin.count("thinktime_blocks") != 0 && job.thinktime_ns == 0) {
    std::string w = "job '";
    w.append(job.name);
    w.append("': thinktime_blocks has no effect without thinktime");
    warn(job.section, w);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points.

PerDirection<std::uint64_t> parse_fio_block_sizes(std::string_view text, unsigned kb_base) {
  const auto values = per_direction(std::string(text));
  PerDirection<std::uint64_t> out{4096, 4096, 4096};
  for (std::size_t d = 0; d < 3; ++d) {
    if (!values[d]) continue;
    if (values[d]->find_first_of("-:") != std::string::npos) bad_value("a range is bsrange, not bs");
    out[d] = parse_fio_size_bytes(*values[d], kb_base);
  }
  return out;
}

JobFile parse_job_file(const std::string& path, const std::map<std::string, std::string>& env) {
  Builder builder(env);
  builder.read_file(path, false);
  if (builder.job_count() == 0) throw JobFileError(path, 0, "", "no job in the file (only [global] sections, or nothing)");
  return builder.take();
}

JobFile parse_job_text(std::string_view text, const std::string& source, const std::string& base_dir,
                       const std::map<std::string, std::string>& env) {
  Builder builder(env);
  builder.read_text(text, source, base_dir);
  if (builder.job_count() == 0) throw JobFileError(source, 0, "", "no job in the file (only [global] sections, or nothing)");
  return builder.take();
}

JobFile parse_job_command_line(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  const std::string source = "command line";
  Builder builder(env);
  // fio's parse_cmd_line: options before the first --name go to a global job.
  builder.begin_section("global", SourceLocation{source, 0});
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const SourceLocation where{source, static_cast<int>(i + 1)};
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!arg.empty()) files.emplace_back(arg);
      continue;
    }
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);  // fio uses getopt_long_only: -name= works too
    const std::size_t eq = arg.find('=');
    const std::string key(arg.substr(0, eq));
    bool has_value = eq != std::string_view::npos;
    std::string value = has_value ? std::string(arg.substr(eq + 1)) : std::string{};
    // getopt also takes "--bs 4k" for options that need a value.
    const auto take_next = [&] {
      if (!has_value && i + 1 < args.size()) {
        value = args[++i];
        has_value = true;
      }
    };
    if (key == "name") {
      take_next();
      if (value.empty()) throw JobFileError(source, where.line, "name", "expected a job name");
      builder.begin_section(value, where);
      continue;
    }
    if (const auto it = fio_command_options().find(key); it != fio_command_options().end()) {
      if (it->second) take_next();
      std::string m = where.str();
      m.append(": fio option '--");
      m.append(key);
      m.append("' is not a job option and is ignored");
      builder.report_unsupported(std::move(m));
      continue;
    }
    if (is_modelled(key) && modelled_options().at(main_name(key)) == Kind::value) take_next();
    builder.add_option(key, value, has_value, where);
  }
  builder.close_section();
  for (std::size_t k = 0; k < files.size(); ++k) builder.read_file(files[k], k > 0);
  if (builder.job_count() == 0) throw JobFileError(source, 0, "", "no job (give --name=... or a job file)");
  return builder.take();
}

}  // namespace vqsim::fio
