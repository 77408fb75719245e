#include "calibration/fio/result.h"

#include <cctype>
#include <string_view>

namespace vqsim::fio {

const char* format_name(Format f) {
  // fio's own --output-format spellings, so messages and CLI options read the same as fio's.
  switch (f) {
    case Format::json:
      return "json";
    case Format::json_plus:
      return "json+";
    case Format::normal:
      return "normal";
    case Format::terse:
      return "terse";
  }
  return "unknown";
}

int fio_major_version(const std::string& fio_version) {
  // fio prints "fio-3.33" (also "fio-3.33-12-gabcdef" for git builds); accept a bare "3.33" too.
  std::string_view v = fio_version;
  if (v.starts_with("fio-")) v.remove_prefix(4);
  int major = 0;
  std::size_t digits = 0;
  while (digits < v.size() && digits < 4 && std::isdigit(static_cast<unsigned char>(v[digits]))) {
    major = major * 10 + (v[digits] - '0');
    ++digits;
  }
  // A major version must be followed by '.' (or end the string); "vqsim-0.1.0" is not fio's.
  if (digits == 0 || (digits < v.size() && v[digits] != '.')) return 0;
  return major;
}

}  // namespace vqsim::fio
