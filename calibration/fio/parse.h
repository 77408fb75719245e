// Reading fio's result files: format and version detection, then one parser per format. Every
// parser fills the normalized FioResult of result.h.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/fio/result.h"

namespace vqsim::fio {

// Malformed input. what() reads "<source>:<line>: <reason>" (line 0 = the file as a whole), so
// the CLI can print it as is and exit 2.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string source, int line, const std::string& reason);
  const std::string& source() const { return source_; }
  int line() const { return line_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string source_;
  int line_;
  std::string reason_;
};

// What one file held. A --status-interval run writes several documents into one file (JSON,
// normal or terse); they are kept in order and the last one is the final result.
struct ParsedFile {
  std::string source;  // file name as given, for messages
  Format format = Format::json;
  std::string detected;  // e.g. "fio-3.33 JSON, 3 documents (status-interval)"
  std::vector<FioResult> documents;
  // The last document of the last run. A file may hold several runs (FioResult::run): use
  // final_results() for each run's final document.
  const FioResult& final_result() const { return documents.back(); }
  std::size_t run_count() const { return static_cast<std::size_t>(documents.back().run) + 1; }
  // The final document of each run, in order (one pointer for a file of one run).
  std::vector<const FioResult*> final_results() const;
  // Every document of one run, in order.
  std::vector<const FioResult*> run_documents(std::size_t run) const;
};

// Detects the format (JSON / json+ / normal text 2.x or 3.x / terse v2-v5, possibly inside an
// e-mail with "> " quoting) and parses it. Throws ParseError on anything it cannot read; never
// returns an empty ParsedFile.
ParsedFile parse_fio_output(std::string_view text, const std::string& source);
// Reads a file and calls parse_fio_output; ParseError (line 0) when it cannot be read.
ParsedFile parse_fio_file(const std::string& path);

// The per-format parsers (parse_fio_output dispatches to these). `text` is the whole input.
std::vector<FioResult> parse_json_documents(std::string_view text, const std::string& source);
std::vector<FioResult> parse_normal_text(std::string_view text, const std::string& source);
std::vector<FioResult> parse_terse(std::string_view text, const std::string& source);

// Removes e-mail quoting ("> ", ">> ", ">" at line starts) and rejoins lines that a mail client
// wrapped (a continuation line that cannot start a fio line of its own). Line numbers of the
// result map 1:1 to the input only when nothing was rejoined; parsers report the input's line.
std::string unquote_email(std::string_view text);

// The text readers' numbers: a whole (trimmed) string as a finite decimal number (from_chars
// alone would accept "inf"), or as an unsigned integer; nullopt for anything else.
std::optional<double> to_double(std::string_view s);
std::optional<std::uint64_t> to_uint(std::string_view s);

}  // namespace vqsim::fio
