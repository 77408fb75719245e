// libFuzzer target: check::measured_from_manifest (calibration/check/measured.cc), measurement
// manifests ([setup], [[run]] with `file` or inline `measured`, `set`) on the input written to a
// scratch file; then, for a manifest it reads, fit::load_dataset (calibration/fit/dataset.cc) on
// scenarios/default.toml: run names, `set` against the fio output, each run's setup as a
// scenario, measured directions. The scratch directory holds copies of the seeds' fio outputs,
// so `file = "..."` can name real files. Both throw models::ConfigError.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "calibration/check/check.h"
#include "calibration/fit/dataset.h"
#include "fuzz/fuzz_support.h"
#include "models/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = vqsim::fuzz::as_text(data, size);
  if (vqsim::fuzz::names_special_file(text)) return 0;
  static const std::string path = (vqsim::fuzz::scratch_dir({
                                       "calibration/data/seeds/000-virtio-blk.fio.txt",
                                       "calibration/data/seeds/000-virtio-scsi.fio.txt",
                                       "calibration/data/seeds/002-qemu2.2-writethrough.fio.txt",
                                       "calibration/data/seeds/002-qemu2.4-writeback-iothread.fio.txt",
                                       "tests/data/fio/mixed.json.out",
                                       "tests/data/check/real/writes.json",
                                   }) /
                                   "fuzz-manifest.toml")
                                      .string();
  vqsim::fuzz::write_file(path, text);
  std::vector<vqsim::fio::FioResult> keep;
  try {
    const auto ms = vqsim::check::measured_from_manifest(path, keep);
    (void)ms;
  } catch (const vqsim::models::ConfigError&) {
    return 0;  // load_dataset reads the manifest the same way and would throw the same
  }
  static const std::string base = std::string(VQSIM_SOURCE_DIR) + "/scenarios/default.toml";
  try {
    const vqsim::fit::Dataset d = vqsim::fit::load_dataset(path, base);
    (void)d;
  } catch (const vqsim::models::ConfigError&) {
  }
  return 0;
}
