// The parameters calibration can fit: per-request CPU costs (mostly through the two CPU scales),
// notification latencies and device service figures, each read back from a scenario in its key's
// unit, and the default choice of which of them a dataset can inform.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calibration/fit/dataset.h"

namespace vqsim::fit {

// Every key --fit accepts, in a stable order.
const std::vector<std::string>& fittable_keys();

// The value a scenario uses for `key`, in the key's unit (µs for *_us, ms for *_ms, bytes/s for
// backend.bandwidth), before guest.cpu_scale / host.cpu_scale multiply it: what writing
// `key = value` into that scenario would keep unchanged. Throws std::invalid_argument for a key
// that is not fittable.
double parameter_value(const models::IoScenario& s, const std::string& key);

// The candidates for a dataset: the CPU scales, the wake-up latency for virtual runs, the
// aio=threads hand-off where a run uses it, an emulation thread's wake-up cost where runs
// measure that thread's CPU time at iodepth 1 and at depth, and the service figures of the device kind the runs
// use (fio's reads inform read times, writes write times, large blocks the bandwidth, cache
// flushes the flush time). Keys whose default differs between runs (for example a device figure
// over two device kinds) are left out: one fitted value would erase that difference.
std::vector<std::string> candidate_keys(const Dataset& d, const std::vector<std::size_t>& runs);

// Where the fit of `key` starts: its value in `s`, or, for a cost that is off there (0) and has
// a documented value to start from, that value (host.loop_wake_us: 4 us, docs/sources.md §1);
// 0 where neither exists (a log-space fit cannot start from 0).
double fit_start_value(const models::IoScenario& s, const std::string& key);

// The range a fitted value must stay in (in the key's unit): dispersion parameters up to 3,
// everything else only > 0, and never beyond the range the key itself accepts. The fit also
// stays within a factor 100 of the start.
std::pair<double, double> parameter_bounds(const std::string& key);

// Whether `key`'s value is the same in every run (what fitting one shared value needs).
bool same_default_everywhere(const Dataset& d, const std::vector<std::size_t>& runs, const std::string& key);

}  // namespace vqsim::fit
