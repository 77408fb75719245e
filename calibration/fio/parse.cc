// Format detection and dispatch: which of fio's outputs a file holds, then the parser for it.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "calibration/fio/parse.h"
#include "models/config.h"

namespace vqsim::fio {
namespace {

std::string error_message(const std::string& source, int line, const std::string& reason) {
  std::string what = source;
  if (line > 0) what.append(":").append(std::to_string(line));
  what.append(": ").append(reason);
  return what;
}

// A fio result never comes near this; a larger file is a mistake (a disk image, a log).
constexpr std::uintmax_t kMaxFileBytes = 256ull << 20;

std::string_view strip_bom(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim_left(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

// Removes e-mail quote markers (">", "> >", ">>") from the start of a line.
std::string_view strip_quote(std::string_view line, bool& quoted) {
  std::string_view s = trim_left(line);
  while (!s.empty() && s.front() == '>') {
    quoted = true;
    s = trim_left(s.substr(1));
  }
  return s;
}

// Calls f(line, line_number) for each line (without '\n', '\r'); stops when f returns true.
template <class F>
bool any_line(std::string_view text, F&& f) {
  int number = 1;
  for (std::size_t p = 0; p <= text.size(); ++number) {
    std::size_t nl = text.find('\n', p);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(p, nl - p);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (f(line, number)) return true;
    if (nl == text.size()) break;
    p = nl + 1;
  }
  return false;
}

// Length of a valid UTF-8 sequence at s[i], 0 when invalid (or cut off by the sample's end).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (b >= 0xC2 && b <= 0xDF)
    n = 2;
  else if (b >= 0xE0 && b <= 0xEF)
    n = 3;
  else if (b >= 0xF0 && b <= 0xF4)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// Rejects binary input with a clear message before any parser sees it: a NUL byte anywhere, or
// more than 10% of the first 64 KiB neither printable ASCII, common whitespace nor valid UTF-8.
void reject_binary(std::string_view text, const std::string& source) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    throw ParseError(source, line, "binary data (a NUL byte), not a fio output");
  }
  const std::string_view sample = text.substr(0, 64 * 1024);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < sample.size();) {
    const auto c = static_cast<unsigned char>(sample[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_length(sample, i);
      if (n == 0) {
        ++bad;
        ++i;
      } else {
        i += n;
      }
      continue;
    }
    // fio's own output holds \r (ETA lines) and ANSI escapes; other control bytes are not text.
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1B) ++bad;
    if (c == 0x7F) ++bad;
    ++i;
  }
  if (bad * 10 > sample.size()) throw ParseError(source, 0, "binary data (mostly non-printable bytes), not a fio output");
}

// The kinds of content the detector looks for, first match wins in this order.
struct Detection {
  bool json = false;
  bool terse = false;
  bool normal = false;
  bool normal_2x = false;    // "  read : io=…, bw=…" (fio <= 2.16)
  bool quoted = false;       // the fio lines sit behind e-mail "> " markers
  bool json_quoted = false;  // a quoted line opens with '{'
  int terse_version = 0;
};

std::size_t count_fields(std::string_view line) {
  return static_cast<std::size_t>(std::count(line.begin(), line.end(), ';')) + 1;
}

bool is_terse_line(std::string_view s, int& version) {
  // v3+ lines start "<ver>;fio-<version>;"; v2 has no version field, so require many fields.
  if (s.size() < 2 || s[1] != ';' || s[0] < '2' || s[0] > '5') return false;
  if (s[0] != '2' && !s.substr(2).starts_with("fio-")) return false;
  if (count_fields(s) < 100) return false;
  version = s[0] - '0';
  return true;
}

// "read : io=" (2.x), "read: IOPS=" (3.x), also write/trim/mixed.
bool is_direction_line(std::string_view s, bool& layout_2x) {
  for (std::string_view dir : {"read", "write", "trim", "mixed"}) {
    if (!s.starts_with(dir)) continue;
    std::string_view rest = trim_left(s.substr(dir.size()));
    if (!rest.starts_with(':')) continue;
    rest = trim_left(rest.substr(1));
    if (rest.starts_with("IOPS=")) return true;
    if (rest.starts_with("io=")) {
      layout_2x = true;
      return true;
    }
  }
  return false;
}

Detection detect(std::string_view text) {
  Detection d;
  any_line(text, [&](std::string_view raw, int) {
    std::string_view plain = trim_left(raw);
    // A '{' opening an unquoted line is fio's JSON (fio prints '{' alone on its first line).
    if (plain.starts_with('{')) {
      d.json = true;
      return true;
    }
    bool quoted = false;
    const std::string_view s = strip_quote(raw, quoted);
    if (quoted && s.starts_with('{')) d.json_quoted = true;
    int version = 0;
    if (!d.terse && is_terse_line(s, version)) {
      d.terse = true;
      d.terse_version = version;
      d.quoted = d.quoted || quoted;
    }
    bool layout_2x = false;
    if (s.find("(groupid=") != std::string_view::npos || is_direction_line(s, layout_2x) || s.starts_with("Run status group ")) {
      if (!d.normal) d.quoted = d.quoted || quoted;
      d.normal = true;
      d.normal_2x = d.normal_2x || layout_2x;
    }
    return false;
  });
  // JSON pasted into an e-mail and quoted there ("> {", ">   \"fio version\" : …").
  if (!d.json && d.json_quoted) {
    d.json = true;
    d.quoted = true;
    return d;
  }
  // JSON whose '{' does not open a line (a warning printed without its newline before it).
  if (!d.json && !d.terse && !d.normal &&
      (text.find("\"fio version\"") != std::string_view::npos || text.find("\"jobs\"") != std::string_view::npos ||
       text.find("\"client_stats\"") != std::string_view::npos))
    d.json = true;
  if (d.json) d.quoted = false;
  return d;
}

// The text with the quote markers removed from every quoted line; line numbers are unchanged.
std::string unquote_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  any_line(text, [&](std::string_view raw, int number) {
    if (number > 1) out.push_back('\n');
    bool quoted = false;
    const std::string_view s = strip_quote(raw, quoted);
    out.append(quoted ? s : raw);
    return false;
  });
  return out;
}

std::string format_label(Format f) {
  switch (f) {
    case Format::json:
      return "JSON";
    case Format::json_plus:
      return "JSON+";
    case Format::normal:
      return "normal text";
    case Format::terse:
      return "terse";
  }
  return "unknown";
}

std::string describe(const std::vector<FioResult>& docs, const Detection& d) {
  const FioResult& last = docs.back();
  std::string s = last.fio_version.empty() ? std::string("fio (version not given)") : last.fio_version;
  Format format = last.format;
  for (const FioResult& r : docs)
    if (r.format == Format::json_plus) format = Format::json_plus;
  s.append(" ").append(format_label(format));
  if (format == Format::terse) {
    const int v = last.terse_version ? last.terse_version : d.terse_version;
    if (v) s.append(" v").append(std::to_string(v));
  }
  if (format == Format::normal) {
    const int major = fio_major_version(last.fio_version);
    if (d.normal_2x || major == 2)
      s.append(" (fio 2.x layout)");
    else if (major >= 3)
      s.append(" (fio 3.x layout)");
  }
  s.append(", ").append(std::to_string(docs.size())).append(docs.size() == 1 ? " document" : " documents");
  // Reports of one run are --status-interval reports; a second run is a second fio output in
  // the same file (the normal-text reader tells them apart, see FioResult::run).
  const int runs = last.run + 1;
  if (runs > 1) {
    s.append(" (").append(std::to_string(runs)).append(" runs, one after the other");
    if (static_cast<std::size_t>(runs) < docs.size()) s.append(", with status-interval reports");
    s.append(")");
  } else if (docs.size() > 1) {
    s.append(" (status-interval)");
  }
  if (d.quoted) s.append(", quoted e-mail");
  return s;
}

}  // namespace

ParseError::ParseError(std::string source, int line, const std::string& reason)
    : std::runtime_error(error_message(source, line, reason)), source_(std::move(source)), line_(line), reason_(reason) {}

std::vector<const FioResult*> ParsedFile::final_results() const {
  std::vector<const FioResult*> out;
  for (std::size_t i = 0; i < documents.size(); ++i)
    if (i + 1 == documents.size() || documents[i + 1].run != documents[i].run) out.push_back(&documents[i]);
  return out;
}

std::vector<const FioResult*> ParsedFile::run_documents(std::size_t run) const {
  std::vector<const FioResult*> out;
  for (const FioResult& d : documents)
    if (static_cast<std::size_t>(d.run) == run) out.push_back(&d);
  return out;
}

ParsedFile parse_fio_output(std::string_view text, const std::string& source) {
  text = strip_bom(text);
  if (std::all_of(text.begin(), text.end(), [](char c) { return c == '\n' || is_space(c); }))
    throw ParseError(source, 0, "empty file");
  reject_binary(text, source);

  const Detection d = detect(text);
  ParsedFile file;
  file.source = source;
  if (d.json) {
    file.documents = d.quoted ? parse_json_documents(unquote_lines(text), source) : parse_json_documents(text, source);
    file.format = Format::json;
    for (const FioResult& r : file.documents)
      if (r.format == Format::json_plus) file.format = Format::json_plus;
  } else if (d.terse) {
    file.documents = parse_terse(text, source);
    file.format = Format::terse;
  } else if (d.normal) {
    file.documents = parse_normal_text(text, source);
    file.format = Format::normal;
  } else {
    throw ParseError(source, 1, "not a fio output: expected JSON, normal text or terse lines");
  }
  if (file.documents.empty()) throw ParseError(source, 1, "no fio results found");
  file.detected = describe(file.documents, d);
  return file;
}

ParsedFile parse_fio_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw ParseError(path, 0, "cannot read: no such file");
  if (std::filesystem::is_directory(status)) throw ParseError(path, 0, "cannot read: is a directory");
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxFileBytes) throw ParseError(path, 0, "file is larger than 256 MiB; not a fio output");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, std::string("cannot read: ") + std::strerror(errno));
  std::string text;
  // Read in chunks with the size cap, so a FIFO or device cannot make us read without end.
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) throw ParseError(path, 0, "file is larger than 256 MiB; not a fio output");
  }
  if (in.bad()) throw ParseError(path, 0, "cannot read: I/O error");
  return parse_fio_output(text, path);
}

std::optional<double> to_double(std::string_view s) {
  s = models::trim(s);
  if (s.empty() || !((s.front() >= '0' && s.front() <= '9') || s.front() == '.' || s.front() == '-')) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> to_uint(std::string_view s) {
  s = models::trim(s);
  if (s.empty() || !(s.front() >= '0' && s.front() <= '9')) return std::nullopt;
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace vqsim::fio
