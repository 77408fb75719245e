// libFuzzer target: fio::parse_normal_text (calibration/fio), which throws fio::ParseError on
// malformed input and nothing else.
#include <cstddef>
#include <cstdint>

#include "calibration/fio/parse.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto docs = vqsim::fio::parse_normal_text(vqsim::fuzz::as_text(data, size), "fuzz-input");
    (void)docs;
  } catch (const vqsim::fio::ParseError&) {
  }
  return 0;
}
