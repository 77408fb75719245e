// libFuzzer target: models::load_io_scenario (models/scenario.cc) on the input written to a
// scratch file. The scratch directory holds copies of the repository's scenarios and a job file,
// so `base = "..."` and `workload.fio_job = "..."` can name real files. Throws models::ConfigError.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "models/config.h"
#include "models/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = vqsim::fuzz::as_text(data, size);
  if (vqsim::fuzz::names_special_file(text)) return 0;
  static const std::string path = (vqsim::fuzz::scratch_dir({
                                       "scenarios/default.toml",
                                       "scenarios/seed000-virtio-scsi.toml",
                                       "scenarios/seed001-bare-metal.toml",
                                       "scenarios/seed001-virtio-blk.toml",
                                       "scenarios/seed002-qemu2.2-writethrough.toml",
                                       "scenarios/seed003-request-path.toml",
                                       "scenarios/seed004-bare-metal.toml",
                                       "tests/data/jobfiles/seed000_readtest.fio",
                                   }) /
                                   "fuzz-input.toml")
                                      .string();
  vqsim::fuzz::write_file(path, text);
  try {
    const vqsim::models::IoScenario s = vqsim::models::load_io_scenario(path);
    (void)s;
  } catch (const vqsim::models::ConfigError&) {
  }
  return 0;
}
