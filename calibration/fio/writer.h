// Writing a normalized FioResult back out: as fio 3.x JSON (so tools built for fio read vqsim's
// results), as vqsim's own normalized JSON (units in the key names), and as fio-like normal text
// for people.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "calibration/fio/parse.h"
#include "calibration/fio/result.h"

namespace vqsim::fio {

// fio 3.x --output-format=json, with fio 3.33's keys in fio's order ("fio version", timestamp,
// …, "jobs" or, when the entries carry a hostname, "client_stats", then "disk_util"). Values
// not in the result are written as 0, as fio writes idle fields; json+ "bins" are written when
// the result has them. Units are fio's: ns latencies, KiB/s "bw", bytes "bw_bytes".
nlohmann::ordered_json to_fio_json(const FioResult& result);

// to_fio_json() printed the way fio's json.c prints it ("key" : value, two-space indent, floats
// with "%f"), ending in a newline, so a diff against a real fio output shows only the numbers.
std::string to_fio_json_text(const FioResult& result);

// vqsim's schema of one run of a parsed file: source, detected format, the run's document
// count, its final document's jobs with every figure named with its unit ("bw_bytes_per_s",
// "mean_ns"), disks, notes; "run" (from 1) and "runs" when the file holds several runs (two fio
// outputs pasted into one e-mail). Figures the source did not report are omitted rather than
// written as 0. Without `run`: the last run (a caller that may meet several runs loops over
// ParsedFile::run_count()).
nlohmann::ordered_json to_normalized_json(const ParsedFile& file);
nlohmann::ordered_json to_normalized_json(const ParsedFile& file, std::size_t run);

// fio 3.x-style normal text (job header, read/write IOPS and BW lines, slat/clat/lat lines with
// fio's automatic nsec/usec/msec unit, the clat percentiles block, bw/iops lines, cpu, IO
// depths, latency buckets, the run status group summary, disk stats), using fio's number
// formatting (4 significant figures) so the normal-text parser reads it back. Only what the
// result states is printed: no pid (no result carries one), and the clone count, date, issued
// counts and latency-target line only when the source gave them (a terse line gives none of
// them); block sizes in bytes as fio read the bs option, with its kb_base.
std::string to_fio_text(const FioResult& result);

}  // namespace vqsim::fio
