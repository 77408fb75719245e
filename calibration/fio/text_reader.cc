// fio's normal (human-readable) text output, in both layouts fio has printed over the years:
//   fio <= 2.16  "  read : io=5117.4MB, bw=125830KB/s, iops=31457, runt= 41645msec"
//   fio >= 2.17  "  read: IOPS=2565k, BW=9.78GiB/s (10.5GB/s)(9.79GiB/1001msec)"
// also when it was pasted into an e-mail ("> " quoting, lines wrapped by the mail client,
// non-breaking spaces) with prose around it. Format strings are those of fio's stat.c
// (show_thread_status_normal, show_ddir_status, display_lat, show_clat_percentiles, show_lat,
// print_disk_util; fio's HOWTO, "Interpreting the output", explains the fields).
//
// The text is rounded (IOPS and bandwidth to 4 significant figures, latencies to 2 decimals), so
// values here are exactly what fio printed, converted to result.h's units, never "improved".
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/fio/parse.h"
#include "calibration/fio/result.h"
#include "models/config.h"

namespace vqsim::fio {
namespace {

// Longer lines are not fio output; rejecting them up front keeps every later step cheap.
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

// ---------------------------------------------------------------------------------------------
// Small string helpers

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

using models::trim;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// True when s starts with the word w followed by spaces and then one of `next` (or the end of s).
// "iops        :" starts the word "iops"; "iodepth=32" does not.
bool starts_with_word(std::string_view s, std::string_view w, std::string_view next) {
  if (!starts_with(s, w)) return false;
  std::size_t i = w.size();
  while (i < s.size() && s[i] == ' ') ++i;
  return i < s.size() && next.find(s[i]) != std::string_view::npos;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

// Splits "12.5k" into the number and what follows it.
std::optional<std::pair<double, std::string_view>> number_prefix(std::string_view s) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.' || (i == 0 && s[i] == '-'))) ++i;
  auto v = to_double(s.substr(0, i));
  if (!v) return std::nullopt;
  return std::make_pair(*v, trim(s.substr(i)));
}

// fio's num2str with base 1000 (IOPS, latency values, percentile values): "4042.9k", "2531.7K"
// (fio 2.x spelled kilo with a capital K), "12.3M".
std::optional<double> to_si_number(std::string_view s) {
  auto np = number_prefix(s);
  if (!np) return std::nullopt;
  auto [v, suffix] = *np;
  if (suffix.empty()) return v;
  if (suffix.size() != 1) return std::nullopt;
  switch (suffix[0]) {
    case 'k':
    case 'K':
      return v * 1e3;
    case 'M':
      return v * 1e6;
    case 'G':
      return v * 1e9;
    case 'T':
      return v * 1e12;
    case 'P':
      return v * 1e15;
    default:
      return std::nullopt;
  }
}

// Bytes per unit: "B", "KiB"/"MiB"/… (IEC), "kB"/"MB"/… (SI in fio 3.x; fio 2.x printed "KB",
// "MB" for powers of 1024 under the default kb_base=1024), and the bit forms "Kibit", "kbit".
std::optional<double> unit_bytes(std::string_view unit, bool fio2_units) {
  unit = trim(unit);
  double per_unit = 1;
  bool bits = false;
  if (unit.size() >= 3 && unit.substr(unit.size() - 3) == "bit") {
    bits = true;
    unit.remove_suffix(3);
  } else if (!unit.empty() && unit.back() == 'B') {
    unit.remove_suffix(1);
  } else {
    return std::nullopt;
  }
  if (!unit.empty()) {
    bool iec = unit.size() == 2 && unit[1] == 'i';
    if (unit.size() > 2 || (unit.size() == 2 && !iec)) return std::nullopt;
    int power = 0;
    switch (unit[0]) {
      case 'k':
      case 'K':
        power = 1;
        break;
      case 'M':
        power = 2;
        break;
      case 'G':
        power = 3;
        break;
      case 'T':
        power = 4;
        break;
      case 'P':
        power = 5;
        break;
      case 'E':
        power = 6;
        break;
      default:
        return std::nullopt;
    }
    // "KB" (capital K, no i) only ever meant 1024 in fio; "kB" is SI; "MB" depends on the era.
    bool binary = iec || unit == "K" || fio2_units;
    per_unit = std::pow(binary ? 1024.0 : 1000.0, power);
  }
  return bits ? per_unit / 8 : per_unit;
}

// "9.78GiB", "125830KB", "0B", "4300MiB/s" -> bytes (or bytes/s).
std::optional<double> to_bytes(std::string_view s, bool fio2_units) {
  s = trim(s);
  if (s.size() >= 2 && s.substr(s.size() - 2) == "/s") s.remove_suffix(2);
  auto np = number_prefix(s);
  if (!np) return std::nullopt;
  if (np->second.empty()) return np->first;  // fio prints a zero rate as "BW=0 (0)"
  auto unit = unit_bytes(np->second, fio2_units);
  if (!unit) return std::nullopt;
  return np->first * *unit;
}

// ns per unit in "(nsec)", "(usec)", "(msec)".
std::optional<double> time_unit_ns(std::string_view unit) {
  unit = trim(unit);
  if (unit == "nsec") return 1.0;
  if (unit == "usec") return 1e3;
  if (unit == "msec") return 1e6;
  if (unit == "sec") return 1e9;
  return std::nullopt;
}

// "key=value, key=value" -> pairs (split at each ',' and each item's first '=').
std::vector<std::pair<std::string_view, std::string_view>> key_values(std::string_view s) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (std::string_view item : split(s, ',')) {
    item = trim(item);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    out.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Lines, e-mail quoting and wrapped lines

struct SourceLine {
  std::string text;  // quoting removed, wrapped pieces rejoined
  int line = 0;      // 1-based input line of the first piece
  int depth = 0;     // number of quote markers removed
};

// Removes leading quote markers (">", "> ", ">>", "> > ") and returns how many there were.
int strip_quotes(std::string& s) {
  std::size_t i = 0;
  int depth = 0;
  while (i < s.size() && s[i] == '>') {
    ++depth;
    ++i;
    if (i + 1 < s.size() && s[i] == ' ' && s[i + 1] == '>') ++i;
  }
  if (depth > 0 && i < s.size() && s[i] == ' ') ++i;
  s.erase(0, i);
  return depth;
}

// Could this (trimmed) line begin a line of fio output on its own? A wrapped continuation never
// does, so it must not be glued to the line before.
bool starts_fio_line(std::string_view t) {
  if (t.empty()) return false;
  if (t.front() == '|') return true;
  static constexpr std::string_view kWords[] = {"read", "write", "trim",   "mixed",    "slat",   "clat",    "lat",  "bw",
                                                "iops", "cpu",   "submit", "complete", "issued", "latency", "sync", "errors"};
  for (std::string_view w : kWords)
    if (starts_with_word(t, w, ":(")) return true;
  static constexpr std::string_view kPrefixes[] = {
      "IO depths", "Run status", "READ:", "WRITE:", "TRIM:", "MIXED:", "Disk stats", "fio-", "Starting ", "Jobs:"};
  for (std::string_view p : kPrefixes)
    if (starts_with(t, p)) return true;
  return t.find(": (groupid=") != std::string_view::npos || t.find(": (g=") != std::string_view::npos ||
         t.find(": ios=") != std::string_view::npos;
}

// A piece a mail client broke off the end of a fio line: "stdev=12524.05", "in_queue=601264, …",
// "iodepth=32", or "=64=0.0%" whose leading '>' the quoting swallowed (">>> =64=0.0%").
bool looks_like_continuation(std::string_view t) {
  if (t.empty()) return false;
  if (t.front() == '=') return t.size() > 1 && is_digit(t[1]);
  std::size_t i = 0;
  while (i < t.size() && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '_' || t[i] == '.' || t[i] == '>')) ++i;
  return i > 0 && i < t.size() && t[i] == '=';
}

// Splits the input into lines, normalizes e-mail artifacts and rejoins wrapped lines.
std::vector<SourceLine> prepare_lines(std::string_view text, const std::string* source_for_errors, int* quoted_lines,
                                      int* rejoined_lines) {
  std::vector<SourceLine> out;
  int quoted = 0, rejoined = 0;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    if (source_for_errors && raw.size() > kMaxLineBytes)
      throw ParseError(*source_for_errors, line_no,
                       "line of " + std::to_string(raw.size()) + " bytes is too long for fio output");
    std::string s;
    s.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      // Mail archives turn runs of spaces into U+00A0 (UTF-8 C2 A0); fio only prints spaces.
      if (raw[i] == '\xC2' && i + 1 < raw.size() && raw[i + 1] == '\xA0') {
        s.push_back(' ');
        ++i;
      } else if (raw[i] != '\r') {
        s.push_back(raw[i]);
      }
    }
    int depth = strip_quotes(s);
    if (depth > 0) ++quoted;
    std::string_view t = trim(s);
    if (!out.empty()) {
      SourceLine& prev = out.back();
      std::string_view pt = trim(prev.text);
      bool prev_open = !pt.empty() && (pt.back() == ',' || pt.back() == '[');
      bool same_depth = depth == prev.depth;
      bool lost_gt = depth == prev.depth + 1 && !t.empty() && t.front() == '=';
      if (prev_open && (same_depth || lost_gt) && !starts_fio_line(t) &&
          (looks_like_continuation(t) || (pt.back() == '[' && !t.empty() && is_digit(t.front()))) &&
          (!source_for_errors || prev.text.size() + t.size() < kMaxLineBytes)) {
        prev.text.erase(prev.text.find_last_not_of(" \t") + 1);
        if (pt.back() != '[') prev.text.push_back(' ');
        if (t.front() == '=') prev.text.push_back('>');
        prev.text.append(t);
        ++rejoined;
        continue;
      }
    }
    out.push_back(SourceLine{std::move(s), line_no, depth});
  }
  if (quoted_lines) *quoted_lines = quoted;
  if (rejoined_lines) *rejoined_lines = rejoined;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The parser proper: a line-by-line state machine over the prepared lines.

enum class Section { none, job, group, disk };

class NormalTextParser {
 public:
  explicit NormalTextParser(const std::string& source) : source_(source) {}

  std::vector<FioResult> parse(std::string_view text) {
    int quoted = 0, rejoined = 0;
    std::vector<SourceLine> lines = prepare_lines(text, &source_, &quoted, &rejoined);
    int first_text_line = 0;
    for (const SourceLine& l : lines) {
      if (!first_text_line && !trim(l.text).empty()) first_text_line = l.line;
      handle(l);
    }
    end_percentiles();
    if (docs_.empty())
      throw ParseError(source_, first_text_line ? first_text_line : 1,
                       "no fio job results found (expected a line like "
                       "\"name: (groupid=0, jobs=1): err= 0: pid=…\")");
    for (std::size_t d = 0; d < docs_.size(); ++d) {
      std::vector<std::string> notes;
      if (layouts_[d] & 1) notes.push_back("fio 2.x layout (normal text: io=, bw=, iops=, runt=)");
      if (layouts_[d] & 2) notes.push_back("fio 3.x layout (normal text: IOPS=, BW=)");
      if (quoted > 0) notes.push_back("e-mail quoting removed");
      if (rejoined > 0)
        notes.push_back("rejoined " + std::to_string(rejoined) + " lines of the input that a mail client had wrapped");
      FioResult& doc = docs_[d];
      doc.notes.insert(doc.notes.begin(), notes.begin(), notes.end());
    }
    return std::move(docs_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& reason) const { throw ParseError(source_, line, reason); }

  JobResult& job() { return docs_.back().jobs.back(); }
  bool in_job() const { return section_ == Section::job && !docs_.empty() && !docs_.back().jobs.empty(); }

  void handle(const SourceLine& l) {
    std::string_view t = trim(l.text);

    if (json_depth_ > 0 || t == "{") {  // a JSON document in the same file (normal,json output)
      skip_json(t);
      return;
    }

    if (t.empty()) {
      end_percentiles();
      if (section_ == Section::disk || section_ == Section::group) section_ = Section::none;
      return;
    }
    if (t.front() == '|') {
      if (pct_active_) parse_percentile_row(t, l.line);
      return;  // rows of a block we do not keep (block lifetime percentiles)
    }
    end_percentiles();

    if (t.size() > 4 && starts_with(t, "fio-") && is_digit(t[4]) && t.find(' ') == std::string_view::npos) {
      version_ = std::string(t);
      if (!docs_.empty()) run_start_seen_ = true;
      return;
    }
    if (std::size_t g = t.find(": (g="); g != std::string_view::npos) {
      parse_preamble(t, g);
      if (!docs_.empty()) run_start_seen_ = true;
      return;
    }
    if (std::size_t g = t.find(": (groupid="); g != std::string_view::npos) {
      parse_job_header(t, g, l.line);
      return;
    }
    if (starts_with(t, "Run status group")) {
      section_ = Section::group;
      group_label_ = std::string(t);
      if (!docs_.empty()) closed_ = true;
      return;
    }
    if (starts_with(t, "Disk stats")) {
      section_ = Section::disk;
      if (!docs_.empty()) closed_ = true;
      return;
    }
    switch (section_) {
      case Section::group:
        if (!docs_.empty() &&
            (starts_with(t, "READ:") || starts_with(t, "WRITE:") || starts_with(t, "TRIM:") || starts_with(t, "MIXED:"))) {
          std::string note = group_label_;
          note.append(" ");
          note.append(t);
          docs_.back().notes.push_back(std::move(note));
        }
        return;
      case Section::disk:
        if (t.find(": ios=") != std::string_view::npos && !docs_.empty()) parse_disk(t, l.line);
        return;
      case Section::job:
        if (in_job()) parse_job_line(t, l.line);
        return;
      case Section::none:
        return;
    }
  }

  // Skips a JSON document line by line, counting braces outside strings.
  void skip_json(std::string_view t) {
    bool in_string = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      char c = t[i];
      if (in_string) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++json_depth_;
      } else if (c == '}' || c == ']') {
        --json_depth_;
      }
    }
    if (json_depth_ < 0) json_depth_ = 0;
  }

  // "readtest: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32" (2.x) or
  // "randrw: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) …, ioengine=null, iodepth=8".
  void parse_preamble(std::string_view t, std::size_t g) {
    std::string name(trim(t.substr(0, g)));
    std::size_t close = t.find("): ", g);
    if (close == std::string_view::npos) return;
    std::map<std::string, std::string> options;
    std::string* last = nullptr;
    for (std::string_view item : split(t.substr(close + 3), ',')) {
      item = trim(item);
      std::size_t eq = item.find('=');
      if (eq == std::string_view::npos || item.front() == '(') {
        // 3.x's "bs=(R) 4096B-4096B, (W) 4096B-4096B" puts commas inside one value.
        if (last) {
          last->append(", ");
          last->append(item);
        }
        continue;
      }
      last = &(options[std::string(trim(item.substr(0, eq)))] = std::string(trim(item.substr(eq + 1))));
    }
    preamble_[name] = std::move(options);
  }

  // "name: (groupid=0, jobs=1): err= 0: pid=707: Wed Apr  8 07:35:01 2015"
  void parse_job_header(std::string_view t, std::size_t g, int line) {
    end_percentiles();
    auto int_after = [&](std::string_view key) -> std::optional<long long> {
      std::size_t p = t.find(key, g);
      if (p == std::string_view::npos) return std::nullopt;
      p += key.size();
      while (p < t.size() && t[p] == ' ') ++p;
      std::size_t e = p;
      if (e < t.size() && t[e] == '-') ++e;
      while (e < t.size() && is_digit(t[e])) ++e;
      long long v = 0;
      auto [ptr, ec] = std::from_chars(t.data() + p, t.data() + e, v);
      if (ec != std::errc() || ptr != t.data() + e) return std::nullopt;
      return v;
    };
    auto groupid = int_after("(groupid=");
    auto jobs = int_after("jobs=");
    auto err = int_after("err=");
    auto pid = int_after(": pid=");  // not the "pid=" inside "groupid="
    // fio always prints jobs=; vqsim's own text leaves it out when its source did not say (terse).
    if (!groupid) fail(line, "job header without a readable groupid: \"" + std::string(t) + "\"");

    // A repeated pid, or a job after the group summary, starts the next document. It is the next
    // report of the same run (--status-interval: the same pids again, no new start-up lines) or
    // the next run, pasted after the first into one e-mail: fio printed its version or a job's
    // "(g=0): rw=…" line again before it, or none of its pids is the previous report's.
    if (docs_.empty() || closed_ || (pid && pids_.count(*pid))) {
      const bool new_run = !docs_.empty() && (run_start_seen_ || (pid && !pids_.empty() && !pids_.count(*pid)));
      const int run = docs_.empty() ? 0 : docs_.back().run + (new_run ? 1 : 0);
      docs_.emplace_back();
      docs_.back().format = Format::normal;
      docs_.back().run = run;
      layouts_.push_back(0);
      pids_.clear();
      closed_ = false;
    }
    run_start_seen_ = false;
    docs_.back().fio_version = version_;
    if (pid) pids_.insert(*pid);

    JobResult j;
    j.name = std::string(trim(t.substr(0, g)));
    j.groupid = static_cast<int>(*groupid);
    if (jobs) j.jobs = static_cast<int>(*jobs);
    if (err) j.error = static_cast<int>(*err);
    j.is_aggregate = jobs && *jobs > 1;
    if (auto it = preamble_.find(j.name); it != preamble_.end()) j.options = it->second;
    docs_.back().jobs.push_back(std::move(j));
    section_ = Section::job;
    dir_ = nullptr;
  }

  void parse_job_line(std::string_view t, int line) {
    // Direction lines: "read: IOPS=…" (3.x) or "read : io=…" (2.x).
    static constexpr std::pair<std::string_view, int> kDirs[] = {{"read", 0}, {"write", 1}, {"trim", 2}, {"mixed", 3}};
    for (auto [word, index] : kDirs) {
      if (starts_with_word(t, word, ":")) {
        std::string_view rest = trim(t.substr(t.find(':') + 1));
        if (starts_with(rest, "IOPS=") || starts_with(rest, "io=")) {
          JobResult& j = job();
          if (index == 3) j.mixed.emplace();
          dir_ = index == 0 ? &j.read : index == 1 ? &j.write : index == 2 ? &j.trim : &*j.mixed;
          parse_direction(rest, line);
          return;
        }
      }
    }
    if (starts_with(t, "fsync/fdatasync")) {  // the sync section's lines are not a direction
      dir_ = nullptr;
      return;
    }
    if (starts_with_word(t, "slat", "(") || starts_with_word(t, "clat", "(") || starts_with_word(t, "lat", "(") ||
        starts_with_word(t, "sync", "(")) {
      parse_latency_line(t, line);
      return;
    }
    if (starts_with_word(t, "slat", "p") || starts_with_word(t, "clat", "p") || starts_with_word(t, "lat", "p") ||
        starts_with_word(t, "sync", "p")) {
      // "clat percentiles (usec):", or the per-priority "clat prio 1/0/0 (…) percentiles (usec):"
      // and "clat prio 1/0/0 (usec): min=…" lines, which result.h has no place for.
      if (t.find("percentiles") != std::string_view::npos) start_percentiles(t, line);
      return;
    }
    if (starts_with_word(t, "bw", "(")) {
      parse_bw(t, line);
      return;
    }
    if (starts_with_word(t, "iops", ":")) {
      parse_iops(t, line);
      return;
    }
    if (starts_with_word(t, "cpu", ":")) {
      parse_cpu(t, line);
      return;
    }
    if (starts_with(t, "IO depths")) {
      job().iodepth_level = parse_percent_map(after_colon(t, line), line, 1);
      dir_ = nullptr;
      return;
    }
    if (starts_with_word(t, "submit", ":")) {
      job().iodepth_submit = parse_percent_map(after_colon(t, line), line, 1);
      return;
    }
    if (starts_with_word(t, "complete", ":")) {
      job().iodepth_complete = parse_percent_map(after_colon(t, line), line, 1);
      return;
    }
    if (starts_with_word(t, "issued", ":r")) {
      parse_issued(t, line);
      return;
    }
    // Everything else inside a job block ("latency   : target=…", "Description  : […]",
    // "errors    : …", steady state, prose between runs in an e-mail) carries nothing result.h keeps.
  }

  std::string_view after_colon(std::string_view t, int line) const {
    std::size_t c = t.find(':');
    if (c == std::string_view::npos) fail(line, "expected ':' in \"" + std::string(t) + "\"");
    return trim(t.substr(c + 1));
  }

  double number_or_fail(std::optional<double> v, std::string_view what, int line) const {
    if (!v) fail(line, "unreadable number in " + std::string(what));
    return *v;
  }

  void parse_direction(std::string_view rest, int line) {
    DirectionStats& d = *dir_;
    if (std::size_t semi = rest.find(';'); semi != std::string_view::npos) rest = rest.substr(0, semi);
    if (starts_with(rest, "IOPS=")) {
      // 3.x: "IOPS=2565k, BW=9.78GiB/s (10.5GB/s)(9.79GiB/1001msec)"
      layouts_.back() |= 2;
      std::size_t comma = rest.find(',');
      std::string_view iops = rest.substr(5, comma == std::string_view::npos ? std::string_view::npos : comma - 5);
      d.iops = number_or_fail(to_si_number(iops), "IOPS=", line);
      std::size_t bw = rest.find("BW=");
      if (bw == std::string_view::npos) fail(line, "direction line without BW=");
      std::size_t bw_end = rest.find_first_of(" (", bw);
      d.bw_bytes_per_s = number_or_fail(to_bytes(rest.substr(bw + 3, bw_end - (bw + 3)), false), "BW=", line);
      std::size_t msec = rest.rfind("msec)");
      std::size_t open = msec == std::string_view::npos ? msec : rest.rfind('(', msec);
      if (open == std::string_view::npos) fail(line, "direction line without (io/runtime msec)");
      std::string_view io_rt = rest.substr(open + 1, msec - open - 1);
      std::size_t slash = io_rt.rfind('/');
      if (slash == std::string_view::npos) fail(line, "direction line without io/runtime");
      d.io_bytes =
          static_cast<std::uint64_t>(std::llround(number_or_fail(to_bytes(io_rt.substr(0, slash), false), "io size", line)));
      d.runtime_ms = number_or_fail(to_double(io_rt.substr(slash + 1)), "runtime", line);
      return;
    }
    // 2.x: "io=5117.4MB, bw=125830KB/s, iops=31457, runt= 41645msec"
    layouts_.back() |= 1;
    for (auto [key, value] : key_values(rest)) {
      if (key == "io") {
        d.io_bytes = static_cast<std::uint64_t>(std::llround(number_or_fail(to_bytes(value, true), "io=", line)));
      } else if (key == "bw") {
        d.bw_bytes_per_s = number_or_fail(to_bytes(value, true), "bw=", line);
      } else if (key == "iops") {
        d.iops = number_or_fail(to_si_number(value), "iops=", line);
      } else if (key == "runt") {
        if (value.size() >= 4 && value.substr(value.size() - 4) == "msec") value.remove_suffix(4);
        d.runtime_ms = number_or_fail(to_double(value), "runt=", line);
      }
    }
    if (!d.iops && !d.io_bytes) fail(line, "direction line without iops= or io=");
  }

  // "(usec)" at the start of s -> ns per unit; s is advanced past ')'.
  double paren_time_unit(std::string_view& s, int line) const {
    std::size_t open = s.find('('), close = s.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      fail(line, "expected a time unit in parentheses");
    auto ns = time_unit_ns(s.substr(open + 1, close - open - 1));
    if (!ns) fail(line, "unknown time unit \"" + std::string(s.substr(open + 1, close - open - 1)) + "\"");
    s = s.substr(close + 1);
    return *ns;
  }

  // "slat (nsec): min=10, max=133127, avg=22.77, stdev=210.31", same for clat, lat and the sync
  // section's "sync (nsec)"; or a latency bucket line "lat (usec)   : 250=0.04%, 500=64.11%".
  void parse_latency_line(std::string_view t, int line) {
    std::string_view word = t.substr(0, t.find_first_of(" ("));
    std::string_view rest = t;
    double unit_ns = paren_time_unit(rest, line);
    rest = trim(rest);
    if (rest.empty() || rest.front() != ':') fail(line, "expected ':' after the time unit");
    rest = trim(rest.substr(1));
    if (!starts_with(rest, "min=")) {
      if (word != "lat") fail(line, "unrecognized latency line");
      PercentMap buckets = parse_percent_map(rest, line, unit_ns);
      auto& all = job().latency_buckets_ns;
      all.insert(all.end(), buckets.begin(), buckets.end());
      dir_ = nullptr;
      return;
    }
    if (!dir_ || word == "sync") return;
    LatencyStats& s = word == "slat" ? dir_->slat : word == "clat" ? dir_->clat : dir_->lat;
    for (auto [key, value] : key_values(rest)) {
      double v = number_or_fail(to_si_number(value), key, line) * unit_ns;
      if (key == "min")
        s.min_ns = v;
      else if (key == "max")
        s.max_ns = v;
      else if (key == "avg")
        s.mean_ns = v;
      else if (key == "stdev")
        s.stddev_ns = v;
    }
    if (!s.mean_ns) fail(line, "latency line without avg=");
  }

  void start_percentiles(std::string_view t, int line) {
    std::size_t p = t.find("percentiles");
    std::string_view rest = t.substr(p);
    pct_scale_ = paren_time_unit(rest, line);
    LatencyStats* target = nullptr;
    if (dir_ && t.find(" prio ") == std::string_view::npos) {
      if (starts_with(t, "slat"))
        target = &dir_->slat;
      else if (starts_with(t, "clat"))
        target = &dir_->clat;
      else if (starts_with(t, "lat"))
        target = &dir_->lat;
    }
    pct_target_ = target;
    if (pct_target_) pct_target_->percentiles.clear();
    pct_active_ = true;
    pct_open_line_ = 0;
  }

  // "|  1.00th=[  131],  5.00th=[  141], 10.00th=[  141], 20.00th=[  141],"
  void parse_percentile_row(std::string_view t, int line) {
    std::size_t i = 1;  // past '|'
    bool trailing_comma = false;
    for (;;) {
      while (i < t.size() && t[i] == ' ') ++i;
      if (i >= t.size()) break;
      std::size_t th = t.find("th=[", i);
      if (th == std::string_view::npos) fail(line, "malformed percentile entry \"" + std::string(t.substr(i)) + "\"");
      auto pct = to_double(t.substr(i, th - i));
      std::size_t close = t.find(']', th);
      if (close == std::string_view::npos)
        fail(line, "percentile row cut off: \"" + std::string(t.substr(i)) + "\" has no closing ']'");
      auto value = to_si_number(t.substr(th + 4, close - th - 4));
      if (!pct || !value) fail(line, "malformed percentile entry \"" + std::string(t.substr(i, close + 1 - i)) + "\"");
      if (pct_target_) pct_target_->percentiles.emplace_back(*pct, *value * pct_scale_);
      i = close + 1;
      trailing_comma = false;
      while (i < t.size() && t[i] == ' ') ++i;
      if (i < t.size() && t[i] == ',') {
        trailing_comma = true;
        ++i;
      } else if (i < t.size()) {
        fail(line, "unexpected text after a percentile entry: \"" + std::string(t.substr(i)) + "\"");
      }
    }
    // A row ending in ',' promises another row; remember it so that a list cut there is caught.
    pct_open_line_ = trailing_comma ? line : 0;
  }

  void end_percentiles() {
    if (pct_active_ && pct_open_line_) fail(pct_open_line_, "percentile list cut off after a trailing ','");
    pct_active_ = false;
    pct_target_ = nullptr;
    pct_open_line_ = 0;
  }

  // "bw (  KiB/s): min=206147, max=206147, per=100.00%, avg=206147.00, stdev= 0.00, samples=1"
  // (2.x: "bw (KB  /s): min=…, max=…, per=…%, avg=…, stdev=…").
  void parse_bw(std::string_view t, int line) {
    if (!dir_) return;
    std::size_t open = t.find('('), close = t.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) fail(line, "bw line without a unit");
    std::string unit;
    for (char c : t.substr(open + 1, close - open - 1))
      if (c != ' ') unit.push_back(c);
    if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "/s") unit.resize(unit.size() - 2);
    auto per_unit = unit_bytes(unit, layouts_.back() == 1);
    if (!per_unit) fail(line, "unknown bandwidth unit \"" + unit + "\"");
    std::string_view rest = t.substr(close + 1);
    rest = after_colon(rest, line);
    DirectionStats& d = *dir_;
    for (auto [key, value] : key_values(rest)) {
      if (key == "per") {
        if (!value.empty() && value.back() == '%') value.remove_suffix(1);
        d.bw_agg_percent = number_or_fail(to_double(value), "per=", line);
        continue;
      }
      if (key == "samples") {
        auto n = to_uint(value);
        if (!n) fail(line, "unreadable samples=");
        d.bw_samples = *n;
        continue;
      }
      double v = number_or_fail(to_si_number(value), key, line) * *per_unit;
      if (key == "min")
        d.bw_min_bytes_per_s = v;
      else if (key == "max")
        d.bw_max_bytes_per_s = v;
      else if (key == "avg")
        d.bw_mean_bytes_per_s = v;
      else if (key == "stdev")
        d.bw_stddev_bytes_per_s = v;
    }
  }

  // "iops        : min=51536, max=51536, avg=51536.00, stdev= 0.00, samples=1"
  void parse_iops(std::string_view t, int line) {
    if (!dir_) return;
    DirectionStats& d = *dir_;
    for (auto [key, value] : key_values(after_colon(t, line))) {
      if (key == "samples") {
        auto n = to_uint(value);
        if (!n) fail(line, "unreadable samples=");
        d.iops_samples = *n;
        continue;
      }
      double v = number_or_fail(to_si_number(value), key, line);
      if (key == "min")
        d.iops_min = v;
      else if (key == "max")
        d.iops_max = v;
      else if (key == "avg")
        d.iops_mean = v;
      else if (key == "stdev")
        d.iops_stddev = v;
    }
  }

  // "cpu          : usr=98.40%, sys=0.00%, ctx=107, majf=0, minf=10"
  void parse_cpu(std::string_view t, int line) {
    JobResult& j = job();
    dir_ = nullptr;
    for (auto [key, value] : key_values(after_colon(t, line))) {
      if (key == "usr" || key == "sys") {
        if (!value.empty() && value.back() == '%') value.remove_suffix(1);
        double v = number_or_fail(to_double(value), key, line);
        (key == "usr" ? j.usr_cpu_percent : j.sys_cpu_percent) = v;
        continue;
      }
      auto n = to_uint(value);
      if (!n) fail(line, "unreadable " + std::string(key) + "=");
      if (key == "ctx")
        j.ctx = *n;
      else if (key == "majf")
        j.majf = *n;
      else if (key == "minf")
        j.minf = *n;
    }
  }

  // "1=0.1%, 2=0.1%, …, >=64=0.0%" (IO depths, key_scale 1) or latency buckets "250=0.04%"
  // (key_scale = ns per printed unit; ">=2000" msec becomes ">=2000000000").
  PercentMap parse_percent_map(std::string_view s, int line, double key_scale) const {
    PercentMap out;
    for (std::string_view item : split(s, ',')) {
      item = trim(item);
      if (item.empty()) continue;
      std::size_t eq = item.rfind('=');
      if (eq == std::string_view::npos || eq == 0) fail(line, "malformed entry \"" + std::string(item) + "\"");
      std::string_view key = trim(item.substr(0, eq));
      std::string_view value = trim(item.substr(eq + 1));
      if (!value.empty() && value.back() == '%') value.remove_suffix(1);
      double pct = number_or_fail(to_double(value), "a percentage", line);
      std::size_t digits = 0;
      while (digits < key.size() && !is_digit(key[digits])) ++digits;
      std::string_view prefix = key.substr(0, digits);
      auto number = to_uint(key.substr(digits));
      if (!number || prefix.find_first_not_of("<>=") != std::string_view::npos)
        fail(line, "malformed key \"" + std::string(key) + "\"");
      std::string k(prefix);
      k.append(std::to_string(static_cast<std::uint64_t>(std::llround(static_cast<double>(*number) * key_scale))));
      out.emplace_back(std::move(k), pct);
    }
    return out;
  }

  // 3.x "issued rwts: total=2567383,1100742,0,0 short=0,0,0,0 dropped=0,0,0,0"
  // 2.x "issued    : total=r=1310044/w=1309348/d=0, short=r=0/w=0/d=0[, drop=r=0/w=0/d=0]"
  void parse_issued(std::string_view t, int line) {
    JobResult& j = job();
    std::string_view rest = after_colon(t, line);
    // Under unified_rw_reporting=mixed fio counts every I/O in the first slot and prints only a
    // "mixed:" line; the counts belong to that entry, not to an unprinted read direction.
    const bool mixed_only = j.mixed && !j.read.iops && !j.write.iops;
    DirectionStats* dirs[] = {mixed_only ? &*j.mixed : &j.read, &j.write, &j.trim};
    static constexpr std::string_view kKeys[] = {"total=", "short=", "dropped=", "drop="};
    for (std::size_t k = 0; k < 4; ++k) {
      std::size_t p = rest.find(kKeys[k]);
      if (p == std::string_view::npos || (k == 3 && rest.find("dropped=") != std::string_view::npos)) continue;
      std::size_t start = p + kKeys[k].size();
      std::size_t end = rest.size();
      for (std::string_view other : kKeys) {
        std::size_t q = rest.find(other, start);
        if (q != std::string_view::npos) end = std::min(end, q);
      }
      std::string_view value = trim(rest.substr(start, end - start));
      while (!value.empty() && (value.back() == ',' || value.back() == ' ')) value.remove_suffix(1);
      std::size_t index = 0;
      std::size_t from = 0;
      // fio >= 3.3 prints a fourth count, syncs, in total= (its short= and dropped= print 0).
      while (from <= value.size() && index < (k == 0 ? 4u : 3u)) {
        std::size_t sep = value.find_first_of(",/", from);
        std::string_view item = trim(value.substr(from, sep == std::string_view::npos ? sep : sep - from));
        if (std::size_t eq = item.find('='); eq != std::string_view::npos) item = item.substr(eq + 1);  // "r="
        auto n = to_uint(item);
        if (!n) fail(line, "unreadable issued count \"" + std::string(item) + "\"");
        if (k == 0 && index == 3)
          j.sync_total_ios = *n;
        else if (k == 0)
          dirs[index]->total_ios = *n;
        else if (k == 1)
          dirs[index]->short_ios = *n;
        else
          dirs[index]->drop_ios = *n;
        ++index;
        if (sep == std::string_view::npos) break;
        from = sep + 1;
      }
    }
  }

  // "vda: ios=36871/0, [sectors=…/…,] merge=0/0, ticks=2120/0, in_queue=2120, util=65.30%[, aggr…]"
  void parse_disk(std::string_view t, int line) {
    std::size_t c = t.find(": ios=");
    DiskStats disk;
    disk.name = std::string(trim(t.substr(0, c)));
    auto pair = [&](std::string_view v, std::optional<std::uint64_t>& r, std::optional<std::uint64_t>& w) {
      std::size_t slash = v.find('/');
      auto a = to_uint(v.substr(0, slash));
      auto b = slash == std::string_view::npos ? std::nullopt : to_uint(v.substr(slash + 1));
      if (!a || !b) fail(line, "unreadable disk counter pair \"" + std::string(v) + "\"");
      r = *a;
      w = *b;
    };
    for (auto [key, value] : key_values(t.substr(c + 2))) {
      if (key == "ios")
        pair(value, disk.read_ios, disk.write_ios);
      else if (key == "sectors")
        pair(value, disk.read_sectors, disk.write_sectors);
      else if (key == "merge")
        pair(value, disk.read_merges, disk.write_merges);
      else if (key == "ticks")
        pair(value, disk.read_ticks_ms, disk.write_ticks_ms);
      else if (key == "in_queue") {
        auto n = to_uint(value);
        if (!n) fail(line, "unreadable in_queue=");
        disk.in_queue_ms = *n;
      } else if (key == "util") {
        if (!value.empty() && value.back() == '%') value.remove_suffix(1);
        disk.util_percent = number_or_fail(to_double(value), "util=", line);
      }
    }
    docs_.back().disks.push_back(std::move(disk));
  }

  const std::string& source_;
  std::vector<FioResult> docs_;
  std::vector<int> layouts_;     // per document: bit 0 = 2.x layout seen, bit 1 = 3.x layout seen
  bool closed_ = false;          // the current document's group summary or disk stats were seen
  std::set<long long> pids_;     // the current document's
  bool run_start_seen_ = false;  // a version or "(g=N):" line after the last job header: a new run
  std::string version_;
  std::map<std::string, std::map<std::string, std::string>> preamble_;
  Section section_ = Section::none;
  std::string group_label_;
  DirectionStats* dir_ = nullptr;
  int json_depth_ = 0;
  bool pct_active_ = false;
  LatencyStats* pct_target_ = nullptr;  // null: a block whose rows are checked but not kept
  double pct_scale_ = 1;
  int pct_open_line_ = 0;
};

}  // namespace

std::string unquote_email(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const SourceLine& l : prepare_lines(text, nullptr, nullptr, nullptr)) {
    out.append(l.text);
    out.push_back('\n');
  }
  return out;
}

std::vector<FioResult> parse_normal_text(std::string_view text, const std::string& source) {
  return NormalTextParser(source).parse(text);
}

}  // namespace vqsim::fio
