// How `vqsim run` presents an I/O-path run: text for people, vqsim's JSON schema, and the
// normalized fio result that the fio JSON writer turns into fio 3.x JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibration/fio/result.h"
#include "models/io_path_mva.h"
#include "models/io_results.h"

namespace vqsim::cli {

using models::IoRunReport;
using models::simulate_io;

std::string io_report_text(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva);
nlohmann::ordered_json io_report_json(const models::IoScenario& s, const IoRunReport& r, const models::IoMvaResult* mva);
fio::FioResult to_fio_result(const models::IoScenario& s, const IoRunReport& r);
// One line: "virtio-blk, main loop, aio=threads, cache=none, nvme; randread 4k iodepth 32 x 1 job".
std::string setup_line(const models::IoScenario& s);

}  // namespace vqsim::cli
