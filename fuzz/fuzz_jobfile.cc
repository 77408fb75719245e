// libFuzzer target: fio::parse_job_text (models/fio_jobfile.cc), fio job files with
// [global] inheritance, ${VAR} substitution, reserved keywords and include directives. Throws
// fio::JobFileError. Includes resolve against an empty scratch directory, so they can only fail
// (or name absolute paths, which are skipped when they point into /dev, /proc or /sys).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz/fuzz_support.h"
#include "models/fio_jobfile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Every unknown option gets a did-you-mean over fio's ~400 option names: 0.3 s for 64 KiB of
  // unknown options in a Release build, but ~50 s under this build's instrumentation, which
  // libFuzzer would report as a hang. Real job files are far smaller than 8 KiB.
  if (size > 8192) return 0;
  const std::string_view text = vqsim::fuzz::as_text(data, size);
  if (vqsim::fuzz::names_special_file(text)) return 0;
  static const std::string base_dir = vqsim::fuzz::scratch_dir().string();
  static const std::map<std::string, std::string> env = {{"pagesize", "4096"}, {"mb_memory", "16384"}, {"ncpus", "8"},
                                                         {"BS", "4k"},         {"DEPTH", "32"},        {"SIZE", "1g"},
                                                         {"DEV", "vdb"}};
  try {
    const vqsim::fio::JobFile jf = vqsim::fio::parse_job_text(text, "fuzz.fio", base_dir, env);
    (void)jf;
  } catch (const vqsim::fio::JobFileError&) {
  }
  return 0;
}
