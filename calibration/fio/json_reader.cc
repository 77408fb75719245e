// fio's JSON and json+ output (fio 2.x and 3.x) -> FioResult.
//
// Two passes per file. A non-recursive scanner first splits the text into top-level documents
// (--status-interval concatenates them; warnings or fio's normal output may surround them),
// rejecting what would make nlohmann's recursive parser slow or deep: nesting beyond
// kMaxDepth, numbers longer than kMaxNumberChars, strings broken by a newline, a document that
// never closes. Each document is then parsed by nlohmann::json and mapped onto the normalized
// result, converting units (fio 2.x: µs latencies, io_bytes in KiB; bw always KiB/s).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/fio/parse.h"

namespace vqsim::fio {
namespace {

using json = nlohmann::json;  // std::map objects: O(log n) inserts even for hostile key counts

constexpr int kMaxDepth = 64;                 // fio's deepest nesting is 5
constexpr std::size_t kMaxNumberChars = 256;  // fio prints at most ~30 characters per number
// A job entry costs ~3 KiB in memory but can be 2 bytes of input ("{}"); fio's real entries are
// ~6 KiB of text, so a file under parse_fio_file's 256 MiB cap never holds more than ~45000.
constexpr std::size_t kMaxJobEntries = 100000;

// One top-level document of the input: [begin, end) bytes, starting on input line first_line.
struct DocSpan {
  std::size_t begin = 0, end = 0;
  int first_line = 1;
  // Bare nan / inf tokens (fio prints "%f" of a NaN as "-nan") to be read as null.
  std::vector<std::pair<std::size_t, std::size_t>> non_finite;  // (offset in doc, length)
  bool unclosed = false;                                        // the braces never balance before the end of the input
};

struct Split {
  std::vector<DocSpan> docs;
  int lines_before = 0;   // non-blank lines before the first document
  int lines_between = 0;  // … between documents
  int lines_after = 0;    // … after the last one
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Scans one document that starts with '{' at text[begin]; `line` is that position's line.
// Returns the end offset (one past the closing brace) and advances `line` to the end's line.
DocSpan scan_document(std::string_view text, std::size_t begin, int& line, const std::string& source) {
  DocSpan doc;
  doc.begin = begin;
  doc.first_line = line;
  int depth = 0;
  bool in_string = false, escaped = false;
  int string_line = 0;
  std::size_t number_chars = 0;
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      } else if (c == '\n') {
        // JSON strings cannot hold a raw newline; without this check a lost quote would make
        // the rest of the file one string and the error would point at its end.
        throw ParseError(source, string_line, "invalid JSON: string not closed on its line");
      }
      continue;
    }
    const bool number_char = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    number_chars = number_char ? number_chars + 1 : 0;
    if (number_chars > kMaxNumberChars) throw ParseError(source, line, "invalid JSON: number longer than 256 characters");
    switch (c) {
      case '"':
        in_string = true;
        string_line = line;
        break;
      case '{':
      case '[':
        if (++depth > kMaxDepth) throw ParseError(source, line, "invalid JSON: nested deeper than 64 levels (fio nests 5)");
        break;
      case '}':
      case ']':
        if (--depth == 0) {
          doc.end = i + 1;
          return doc;
        }
        break;
      case 'n':  // "nan" (not "null")
      case 'i':  // "inf"
      case '-':  // "-nan", "-inf"
      {
        const std::string_view rest = text.substr(i);
        for (std::string_view token : {"-nan", "-inf", "nan", "inf"}) {
          if (rest.starts_with(token)) {
            doc.non_finite.emplace_back(i - begin, token.size());
            i += token.size() - 1;
            number_chars = 0;
            break;
          }
        }
        break;
      }
      default:
        break;
    }
  }
  if (in_string) throw ParseError(source, string_line, "invalid JSON: string not closed before the end of the input");
  // Not closed: truncated, or a bracket too many somewhere. The parser tells which and where.
  doc.end = text.size();
  doc.unclosed = true;
  return doc;
}

// Finds the documents: a '{' that is the first non-blank character of a line starts one (so a
// brace inside a preceding warning is not mistaken for JSON); after a document, another may
// follow on the same line ("}{"). Without any such line, the first '{' anywhere is tried.
Split split_documents(std::string_view text, const std::string& source) {
  Split split;
  int line = 1;
  std::size_t pos = 0;
  bool line_start = true;
  int junk_lines = 0;         // non-blank lines skipped since the last document
  bool junk_on_line = false;  // the current line has skipped text
  auto end_line = [&] {
    if (junk_on_line) ++junk_lines;
    junk_on_line = false;
  };
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '\n') {
      end_line();
      ++line;
      ++pos;
      line_start = true;
      continue;
    }
    if (is_blank(c)) {
      ++pos;
      continue;
    }
    if (c == '{' && line_start) {
      end_line();
      if (split.docs.empty())
        split.lines_before = junk_lines;
      else
        split.lines_between += junk_lines;
      junk_lines = 0;
      split.docs.push_back(scan_document(text, pos, line, source));
      pos = split.docs.back().end;
      continue;  // line_start stays true: "}{" on one line starts the next document
    }
    // Text that is not JSON: skip the rest of the line.
    junk_on_line = true;
    line_start = false;
    const std::size_t nl = text.find('\n', pos);
    pos = nl == std::string_view::npos ? text.size() : nl;
  }
  end_line();
  split.lines_after = junk_lines;
  if (split.docs.empty()) {
    const std::size_t brace = text.find('{');
    if (brace == std::string_view::npos) throw ParseError(source, 1, "not a fio JSON output: no '{' in the input");
    const std::string_view before = text.substr(0, brace);
    int brace_line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    split.lines_before = 0;
    for (std::size_t p = 0; p < before.size();) {
      std::size_t nl = before.find('\n', p);
      if (nl == std::string_view::npos) nl = before.size();
      const std::string_view l = before.substr(p, nl - p);
      if (!std::all_of(l.begin(), l.end(), is_blank)) ++split.lines_before;
      p = nl + 1;
    }
    split.docs.push_back(scan_document(text, brace, brace_line, source));
    split.lines_after = 0;  // only this one document is read
  }
  return split;
}

// ---- Locating a value by its path, for error messages -----------------------------------------
// nlohmann's DOM keeps no positions, so on a type error the path of the offending value is
// walked again through the (already validated) document text. Iterative; linear in the text.

struct PathElement {
  std::string key;  // object member, or
  long index = -1;  // array element when >= 0
};

std::size_t skip_ws(std::string_view s, std::size_t p) {
  while (p < s.size() && is_blank(s[p])) ++p;
  return p;
}

std::size_t skip_string(std::string_view s, std::size_t p) {  // s[p] == '"'
  for (++p; p < s.size(); ++p) {
    if (s[p] == '\\')
      ++p;
    else if (s[p] == '"')
      return p + 1;
  }
  return s.size();
}

std::size_t skip_value(std::string_view s, std::size_t p) {
  if (p >= s.size()) return p;
  if (s[p] == '"') return skip_string(s, p);
  if (s[p] == '{' || s[p] == '[') {
    int depth = 0;
    while (p < s.size()) {
      const char c = s[p];
      if (c == '"') {
        p = skip_string(s, p);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return p;
  }
  while (p < s.size() && s[p] != ',' && s[p] != '}' && s[p] != ']' && !is_blank(s[p])) ++p;
  return p;
}

// Offset in `doc` of the value at `path`; as far as the path could be followed.
std::size_t locate(std::string_view doc, const std::vector<PathElement>& path) {
  std::size_t p = skip_ws(doc, 0);
  for (const PathElement& element : path) {
    if (p >= doc.size()) return p;
    if (element.index >= 0) {
      if (doc[p] != '[') return p;
      std::size_t q = skip_ws(doc, p + 1);
      for (long i = 0; i < element.index && q < doc.size() && doc[q] != ']'; ++i) {
        q = skip_ws(doc, skip_value(doc, q));
        if (q < doc.size() && doc[q] == ',') q = skip_ws(doc, q + 1);
      }
      p = q;
    } else {
      if (doc[p] != '{') return p;
      std::size_t q = skip_ws(doc, p + 1);
      std::optional<std::size_t> found;  // the last duplicate wins, as in the parsed DOM
      while (q < doc.size() && doc[q] == '"') {
        const std::size_t key_end = skip_string(doc, q);
        const std::string_view key = doc.substr(q + 1, key_end - q - 2);
        q = skip_ws(doc, key_end);
        if (q < doc.size() && doc[q] == ':') q = skip_ws(doc, q + 1);
        if (key == element.key) found = q;
        q = skip_ws(doc, skip_value(doc, q));
        if (q < doc.size() && doc[q] == ',') q = skip_ws(doc, q + 1);
      }
      if (!found) return p;
      p = *found;
    }
  }
  return p;
}

// ---- Mapping one document onto FioResult -------------------------------------------------------

const char* type_name(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  return "a number";
}

// Sort key of fio's distribution keys "1", "2", …, ">=64": numeric, ">=N" after "N".
std::pair<double, int> bucket_order(const std::string& key) {
  std::string_view k = key;
  int ge = 0;
  if (k.starts_with(">=")) {
    k.remove_prefix(2);
    ge = 1;
  }
  double v = 0;
  const auto res = std::from_chars(k.data(), k.data() + k.size(), v);
  if (res.ec != std::errc() || res.ptr != k.data() + k.size()) return {std::numeric_limits<double>::infinity(), 2};
  return {v, ge};
}

class DocumentReader {
 public:
  // `entries` counts job and disk entries over all documents of the file, against kMaxJobEntries.
  DocumentReader(std::string_view doc_text, int first_line, const std::string& source, std::size_t& entries)
      : doc_(doc_text), first_line_(first_line), source_(source), entries_(entries) {}

  FioResult read(const json& root) {
    FioResult r;
    r.format = Format::json;
    if (const json* v = member(root, "fio version")) r.fio_version = string_value(*v, "fio version");
    if (auto ts = number(root, "timestamp")) r.timestamp = std::llround(*ts);
    major_ = fio_major_version(r.fio_version);
    if (const json* g = object(root, "global options")) r.global_options = options(*g, "global options");

    const char* jobs_key = "jobs";
    const json* jobs = member(root, "jobs");
    if (!jobs) {
      jobs_key = "client_stats";
      jobs = member(root, "client_stats");
    }
    if (!jobs) fail("not a fio result: the JSON has neither a \"jobs\" nor a \"client_stats\" array");
    {
      Scope s(*this, jobs_key);
      if (!jobs->is_array()) fail(std::string("expected an array, found ") + type_name(*jobs));
      check_entry_count(jobs->size(), "job entries");
      for (std::size_t i = 0; i < jobs->size(); ++i) {
        Scope e(*this, static_cast<long>(i));
        const json& j = (*jobs)[i];
        if (!j.is_object()) fail(std::string("expected a job object, found ") + type_name(j));
        r.jobs.push_back(read_job(j));
      }
    }
    if (const json* disks = member(root, "disk_util")) {
      Scope s(*this, "disk_util");
      if (!disks->is_array()) fail(std::string("expected an array, found ") + type_name(*disks));
      check_entry_count(disks->size(), "job and disk entries");
      for (std::size_t i = 0; i < disks->size(); ++i) {
        Scope e(*this, static_cast<long>(i));
        if (!(*disks)[i].is_object()) fail(std::string("expected an object, found ") + type_name((*disks)[i]));
        r.disks.push_back(read_disk((*disks)[i]));
      }
    }
    infer_job_counts(r);
    if (saw_bins_) r.format = Format::json_plus;
    if (saw_usec_) r.notes.push_back("fio 2.x JSON: latencies (slat/clat/lat, percentiles, bins) converted from usec to ns");
    if (kib_io_bytes_) r.notes.push_back("fio 2.x JSON: io_bytes is in KiB there, converted to bytes");
    return r;
  }

 private:
  // RAII: the path of the value being read, for error messages.
  class Scope {
   public:
    Scope(DocumentReader& r, std::string key) : r_(r) { r_.path_.push_back({std::move(key), -1}); }
    Scope(DocumentReader& r, long index) : r_(r) { r_.path_.push_back({std::string(), index}); }
    ~Scope() { r_.path_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    DocumentReader& r_;
  };

  [[noreturn]] void fail(const std::string& reason) const {
    const std::size_t offset = locate(doc_, path_);
    const int line =
        first_line_ + static_cast<int>(std::count(
                          doc_.begin(), doc_.begin() + static_cast<std::ptrdiff_t>(std::min(offset, doc_.size())), '\n'));
    std::string where;
    for (const PathElement& e : path_) {
      if (e.index >= 0) {
        where.append("[").append(std::to_string(e.index)).append("]");
      } else {
        if (!where.empty()) where.append(".");
        where.append(e.key);
      }
    }
    std::string message = "invalid fio JSON";
    if (!where.empty()) message.append(" at ").append(where);
    message.append(": ").append(reason);
    throw ParseError(source_, line, message);
  }

  // Checked before the entries are built, so a hostile array costs no memory. The error points
  // at the first entry past the limit.
  void check_entry_count(std::size_t n, const char* what) {
    if (entries_ + n > kMaxJobEntries) {
      Scope e(*this, static_cast<long>(kMaxJobEntries - entries_));
      fail(std::string("more than 100000 ") + what + " in the file; not a fio output");
    }
    entries_ += n;
  }

  static const json* member(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  const json* object(const json& obj, const char* key) {
    const json* v = member(obj, key);
    if (!v || v->is_null()) return nullptr;
    if (!v->is_object()) {
      Scope s(*this, key);
      fail(std::string("expected an object, found ") + type_name(*v));
    }
    return v;
  }

  std::optional<double> number(const json& obj, const char* key) {
    const json* v = member(obj, key);
    if (!v || v->is_null()) return std::nullopt;  // null: a nan/inf fio printed, or not reported
    if (!v->is_number()) {
      Scope s(*this, key);
      fail(std::string("expected a number, found ") + type_name(*v));
    }
    return v->get<double>();
  }

  std::optional<std::uint64_t> count(const json& obj, const char* key) {
    const json* v = member(obj, key);
    if (!v || v->is_null()) return std::nullopt;
    if (v->is_number_unsigned()) return v->get<std::uint64_t>();
    const auto d = number(obj, key);
    if (*d < 0 || *d >= 18446744073709551616.0 || *d != std::floor(*d)) {
      Scope s(*this, key);
      fail("expected a non-negative integer, found " + v->dump());
    }
    return static_cast<std::uint64_t>(*d);
  }

  std::optional<int> small_int(const json& obj, const char* key) {
    const auto d = number(obj, key);
    if (!d) return std::nullopt;
    if (*d < -2147483648.0 || *d > 2147483647.0 || *d != std::floor(*d)) {
      Scope s(*this, key);
      fail("expected an integer, found " + member(obj, key)->dump());
    }
    return static_cast<int>(*d);
  }

  std::string string_value(const json& v, const char* key) {
    if (v.is_string()) return v.get<std::string>();
    Scope s(*this, key);
    fail(std::string("expected a string, found ") + type_name(v));
  }

  // "job options" / "global options": fio prints every value as a string; numbers are accepted.
  std::map<std::string, std::string> options(const json& obj, const char* key) {
    std::map<std::string, std::string> out;
    Scope s(*this, key);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (it->is_string())
        out[it.key()] = it->get<std::string>();
      else if (it->is_number() || it->is_boolean())
        out[it.key()] = it->dump();
      else {
        Scope m(*this, it.key());
        fail(std::string("expected an option value string, found ") + type_name(*it));
      }
    }
    return out;
  }

  static std::optional<double> scaled(std::optional<double> v, double factor) {
    if (v) *v *= factor;
    return v;
  }

  LatencyStats read_latency(const json& obj, const char* key, double to_ns) {
    LatencyStats l;
    Scope s(*this, key);
    l.min_ns = scaled(number(obj, "min"), to_ns);
    l.max_ns = scaled(number(obj, "max"), to_ns);
    l.mean_ns = scaled(number(obj, "mean"), to_ns);
    l.stddev_ns = scaled(number(obj, "stddev"), to_ns);
    l.samples = count(obj, "N");
    if (const json* p = object(obj, "percentile")) {
      Scope ps(*this, "percentile");
      for (auto it = p->begin(); it != p->end(); ++it) {
        const std::string& k = it.key();
        if (k == "0.00") continue;  // fio <= 3.3 padding, not a percentile
        double percent = 0;
        const auto res = std::from_chars(k.data(), k.data() + k.size(), percent);
        if (res.ec != std::errc() || res.ptr != k.data() + k.size() || !(percent >= 0 && percent <= 100))
          fail("percentile key \"" + k + "\" is not a percentage");
        const auto v = number(*p, k.c_str());
        if (v) l.percentiles.emplace_back(percent, *v * to_ns);
      }
      // std::map ordered the keys as strings ("10.000000" < "5.000000"); fio prints its sorted
      // percentile_list in ascending order.
      std::stable_sort(l.percentiles.begin(), l.percentiles.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    if (const json* b = object(obj, "bins")) {
      Scope bs(*this, "bins");
      saw_bins_ = true;
      for (auto it = b->begin(); it != b->end(); ++it) {
        const std::string& k = it.key();
        std::uint64_t value = 0;
        const auto res = std::from_chars(k.data(), k.data() + k.size(), value);
        if (res.ec != std::errc() || res.ptr != k.data() + k.size()) fail("bin key \"" + k + "\" is not a latency");
        const auto n = count(*b, k.c_str());
        if (n) l.bins[static_cast<std::uint64_t>(std::llround(static_cast<double>(value) * to_ns))] += *n;
      }
    }
    return l;
  }

  DirectionStats read_direction(const json& d, const char* key) {
    DirectionStats s;
    Scope scope(*this, key);
    s.iops = number(d, "iops");
    if (auto b = number(d, "bw_bytes"))
      s.bw_bytes_per_s = b;
    else
      s.bw_bytes_per_s = scaled(number(d, "bw"), 1024.0);  // KiB/s
    const auto kib = count(d, "io_kbytes");
    const auto io = count(d, "io_bytes");
    if (kib) {
      s.io_bytes = io ? *io : *kib * 1024;
    } else if (io) {
      // Before io_kbytes existed, fio's "io_bytes" held KiB (stat.c: io_bytes >> 10).
      const bool legacy = major_ == 2 || (major_ == 0 && !member(d, "clat_ns") && member(d, "clat"));
      s.io_bytes = legacy ? *io * 1024 : *io;
      if (legacy && *io > 0) kib_io_bytes_ = true;
    }
    s.runtime_ms = number(d, "runtime");
    s.total_ios = count(d, "total_ios");
    s.short_ios = count(d, "short_ios");
    s.drop_ios = count(d, "drop_ios");
    // fio 3.x: *_ns in ns; fio 2.x: slat/clat/lat in µs.
    const std::pair<const char*, const char*> names[] = {{"slat_ns", "slat"}, {"clat_ns", "clat"}, {"lat_ns", "lat"}};
    LatencyStats* targets[] = {&s.slat, &s.clat, &s.lat};
    for (int i = 0; i < 3; ++i) {
      if (const json* ns = object(d, names[i].first)) {
        *targets[i] = read_latency(*ns, names[i].first, 1.0);
      } else if (const json* us = object(d, names[i].second)) {
        *targets[i] = read_latency(*us, names[i].second, 1000.0);
        saw_usec_ = true;
      }
    }
    s.bw_min_bytes_per_s = scaled(number(d, "bw_min"), 1024.0);
    s.bw_max_bytes_per_s = scaled(number(d, "bw_max"), 1024.0);
    s.bw_agg_percent = number(d, "bw_agg");
    s.bw_mean_bytes_per_s = scaled(number(d, "bw_mean"), 1024.0);
    s.bw_stddev_bytes_per_s = scaled(number(d, "bw_dev"), 1024.0);
    s.bw_samples = count(d, "bw_samples");
    s.iops_min = number(d, "iops_min");
    s.iops_max = number(d, "iops_max");
    s.iops_mean = number(d, "iops_mean");
    s.iops_stddev = number(d, "iops_stddev");
    s.iops_samples = count(d, "iops_samples");
    return s;
  }

  // A "key" : percent map. For latency buckets (key_to_ns set) the keys become ns: "250" usec ->
  // "250000", ">=2000" msec -> ">=2000000000"; IO depth keys are kept as fio spells them.
  PercentMap percent_map(const json& obj, const char* key, std::optional<double> key_to_ns) {
    PercentMap out;
    Scope s(*this, key);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const auto v = number(obj, it.key().c_str());
      if (!v) continue;
      std::string k = it.key();
      const auto [value, ge] = bucket_order(k);
      if (ge > 1) {
        Scope m(*this, k);
        fail("bucket key \"" + k + "\" is not a number");
      }
      if (key_to_ns) {
        k = ge ? ">=" : "";
        k.append(std::to_string(static_cast<std::uint64_t>(std::llround(value * *key_to_ns))));
      }
      out.emplace_back(std::move(k), *v);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return bucket_order(a.first) < bucket_order(b.first); });
    return out;
  }

  JobResult read_job(const json& j) {
    JobResult job;
    if (const json* n = member(j, "jobname")) job.name = string_value(*n, "jobname");
    job.groupid = small_int(j, "groupid");
    job.error = small_int(j, "error");
    if (const json* h = member(j, "hostname")) job.hostname = string_value(*h, "hostname");
    job.is_aggregate = job.name == "All clients";  // client.c's sum over all servers
    if (const json* o = object(j, "job options")) job.options = options(*o, "job options");
    if (const json* d = object(j, "read")) job.read = read_direction(*d, "read");
    if (const json* d = object(j, "write")) job.write = read_direction(*d, "write");
    if (const json* d = object(j, "trim")) job.trim = read_direction(*d, "trim");
    if (const json* d = object(j, "mixed")) job.mixed = read_direction(*d, "mixed");
    job.job_runtime_ms = number(j, "job_runtime");
    job.usr_cpu_percent = number(j, "usr_cpu");
    job.sys_cpu_percent = number(j, "sys_cpu");
    job.ctx = count(j, "ctx");
    job.majf = count(j, "majf");
    job.minf = count(j, "minf");
    if (const json* s = object(j, "sync")) job.sync_total_ios = count(*s, "total_ios");
    if (const json* m = object(j, "iodepth_level")) job.iodepth_level = percent_map(*m, "iodepth_level", std::nullopt);
    if (const json* m = object(j, "iodepth_submit")) job.iodepth_submit = percent_map(*m, "iodepth_submit", std::nullopt);
    if (const json* m = object(j, "iodepth_complete")) job.iodepth_complete = percent_map(*m, "iodepth_complete", std::nullopt);
    const std::pair<const char*, double> buckets[] = {{"latency_ns", 1.0}, {"latency_us", 1e3}, {"latency_ms", 1e6}};
    for (const auto& [key, factor] : buckets) {
      if (const json* m = object(j, key)) {
        PercentMap part = percent_map(*m, key, factor);
        job.latency_buckets_ns.insert(job.latency_buckets_ns.end(), part.begin(), part.end());
      }
    }
    std::stable_sort(job.latency_buckets_ns.begin(), job.latency_buckets_ns.end(),
                     [](const auto& a, const auto& b) { return bucket_order(a.first) < bucket_order(b.first); });
    return job;
  }

  DiskStats read_disk(const json& d) {
    DiskStats s;
    if (const json* n = member(d, "name")) s.name = string_value(*n, "name");
    s.read_ios = count(d, "read_ios");
    s.write_ios = count(d, "write_ios");
    s.read_sectors = count(d, "read_sectors");
    s.write_sectors = count(d, "write_sectors");
    s.read_merges = count(d, "read_merges");
    s.write_merges = count(d, "write_merges");
    s.read_ticks_ms = count(d, "read_ticks");
    s.write_ticks_ms = count(d, "write_ticks");
    s.in_queue_ms = count(d, "in_queue");
    s.util_percent = number(d, "util");
    return s;
  }

  // fio's JSON does not say how many clones an entry covers. numjobs (job or global option)
  // tells: N entries of that job -> clones reported one by one; a single entry -> the
  // group_reporting aggregate of N jobs.
  static void infer_job_counts(FioResult& r) {
    // Entries per (name, groupid, hostname); a map keeps hostile inputs with many jobs linear-ish.
    using Key = std::tuple<std::string, int, std::string>;
    std::map<Key, long> entries;
    auto key_of = [](const JobResult& j) { return Key{j.name, j.groupid.value_or(-1), j.hostname}; };
    for (const JobResult& job : r.jobs) ++entries[key_of(job)];
    for (JobResult& job : r.jobs) {
      if (job.is_aggregate) continue;
      auto it = job.options.find("numjobs");
      const std::string* numjobs = it != job.options.end() ? &it->second : nullptr;
      if (!numjobs) {
        auto g = r.global_options.find("numjobs");
        if (g != r.global_options.end()) numjobs = &g->second;
      }
      if (!numjobs) continue;
      int n = 0;
      const auto res = std::from_chars(numjobs->data(), numjobs->data() + numjobs->size(), n);
      if (res.ec != std::errc() || n <= 1) continue;
      const long same = entries[key_of(job)];
      if (same == 1) {
        job.jobs = n;
        job.is_aggregate = true;
      } else if (same == n) {
        job.jobs = 1;
      }
    }
  }

  std::string_view doc_;
  int first_line_;
  const std::string& source_;
  std::size_t& entries_;
  std::vector<PathElement> path_;
  int major_ = 0;
  bool saw_bins_ = false, saw_usec_ = false, kib_io_bytes_ = false;
};

// Line of a byte offset into the document (nlohmann's parse_error::byte is 1-based, one past the
// offending character).
int line_at(std::string_view doc, std::size_t offset, int first_line) {
  offset = std::min(offset, doc.size());
  return first_line + static_cast<int>(std::count(doc.begin(), doc.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2: <why>";
// keep <why>, since our line (in the whole input) replaces its own.
std::string nlohmann_reason(const std::string& what) {
  const std::size_t column = what.find("column ");
  if (column != std::string::npos) {
    const std::size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const std::size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

std::string plural(int n, const char* word) {
  std::string s = std::to_string(n);
  s.append(" ").append(word);
  if (n != 1) s.append("s");
  return s;
}

}  // namespace

std::vector<FioResult> parse_json_documents(std::string_view text, const std::string& source) {
  const Split split = split_documents(text, source);
  std::vector<FioResult> results;
  results.reserve(split.docs.size());
  std::size_t entries = 0;
  for (const DocSpan& span : split.docs) {
    std::string_view doc = text.substr(span.begin, span.end - span.begin);
    std::string patched;
    if (!span.non_finite.empty()) {
      // fio prints a NaN or infinite double with "%f" ("-nan", "inf"), which is not JSON. Read
      // them as null = not reported. Lengths change, lines do not (no newline is touched).
      patched.reserve(doc.size() + span.non_finite.size());
      std::size_t from = 0;
      for (const auto& [offset, length] : span.non_finite) {
        patched.append(doc.substr(from, offset - from)).append("null");
        from = offset + length;
      }
      patched.append(doc.substr(from));
      doc = patched;
    }
    json root;
    try {
      // No parser callback: nlohmann's callback parser rescans the parent container at every
      // closing brace, quadratic in the length of an array of objects.
      root = json::parse(doc.begin(), doc.end(), nullptr, /*allow_exceptions=*/true);
    } catch (const json::parse_error& e) {
      const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
      if (span.unclosed && offset + 1 >= doc.size())
        throw ParseError(source, line_at(doc, doc.find_last_not_of(" \t\r\n"), span.first_line),
                         "invalid JSON: truncated, the document that starts on line " + std::to_string(span.first_line) +
                             " is not closed before the end of the input");
      throw ParseError(source, line_at(doc, offset, span.first_line), "invalid JSON: " + nlohmann_reason(e.what()));
    } catch (const json::exception& e) {
      // e.g. out_of_range.406 "number overflow parsing '1e999'": no position, so find the token.
      const std::string what = e.what();
      int line = span.first_line;
      const std::size_t open = what.find('\'');
      const std::size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
      if (close != std::string::npos && close > open + 1) {
        const std::size_t at = doc.find(std::string_view(what).substr(open + 1, close - open - 1));
        if (at != std::string_view::npos) line = line_at(doc, at, span.first_line);
      }
      throw ParseError(source, line, "invalid JSON: " + nlohmann_reason(what));
    }
    if (!root.is_object()) throw ParseError(source, span.first_line, "invalid fio JSON: the document is not an object");
    DocumentReader reader(doc, span.first_line, source, entries);
    FioResult r = reader.read(root);
    // fio <= 3.3 pads each percentile object with duplicate "0.00": 0 keys (the DOM kept one,
    // which read_latency() skips); count them in the text for the note.
    int padding = 0;
    for (std::size_t at = doc.find("\"0.00\""); at != std::string_view::npos; at = doc.find("\"0.00\"", at + 6)) {
      const std::size_t colon = doc.find_first_not_of(" \t\r\n", at + 6);
      if (colon != std::string_view::npos && doc[colon] == ':') ++padding;
    }
    if (padding > 0) r.notes.push_back("dropped " + plural(padding, "padding percentile key") + " (\"0.00\": 0, fio <= 3.3)");
    if (!span.non_finite.empty())
      r.notes.push_back("read " + plural(static_cast<int>(span.non_finite.size()), "nan/inf value") +
                        " (not JSON) as not reported");
    results.push_back(std::move(r));
  }
  if (split.lines_before > 0)
    results.front().notes.push_back("skipped " + plural(split.lines_before, "line") + " of text before the JSON");
  if (split.lines_between > 0)
    results.back().notes.push_back("skipped " + plural(split.lines_between, "line") + " of text between JSON documents");
  if (split.lines_after > 0)
    results.back().notes.push_back("ignored " + plural(split.lines_after, "line") + " of text after the JSON");
  return results;
}

}  // namespace vqsim::fio
