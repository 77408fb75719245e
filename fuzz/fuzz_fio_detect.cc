// libFuzzer target: fio::parse_fio_output (calibration/fio/parse.cc), the format and version
// detection (JSON, json+, normal text, terse, e-mail quoting) in front of every parser. Throws
// fio::ParseError and never returns an empty ParsedFile.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "calibration/fio/parse.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const vqsim::fio::ParsedFile f = vqsim::fio::parse_fio_output(vqsim::fuzz::as_text(data, size), "fuzz-input");
    if (f.documents.empty()) std::abort();  // the contract: never an empty ParsedFile
    (void)f.final_result();
  } catch (const vqsim::fio::ParseError&) {
  }
  return 0;
}
