// Reading fio job files and fio command lines into typed job descriptions.
//
// The grammar and the units follow fio's HOWTO ("Job file format", "Parameter types") and, where
// the HOWTO and fio's code disagree, what fio 3.33 actually does (measured with the null engine;
// each such case is noted in fio_jobfile.cc). Every option ends up in one of three places: a typed
// JobSpec field, JobFile::unsupported (fio knows it, vqsim does not model it), or an error. An
// option is never dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace vqsim::fio {

// A bad job file or command line. what() reads "<file>:<line>: <option>: <reason>", e.g.
// "bad.fio:4: iodepth: expected a positive integer, got 'abc'"; the line is left out when the
// message is about the file as a whole, the option when the message is not about one option.
class JobFileError : public std::runtime_error {
 public:
  JobFileError(std::string source, int line, std::string option, const std::string& reason);
  const std::string& source() const { return source_; }
  int line() const { return line_; }
  const std::string& option() const { return option_; }

 private:
  std::string source_;
  int line_;
  std::string option_;
};

// Where something was written: a job file and its 1-based line, or "command line" and the
// 1-based position of the argument.
struct SourceLocation {
  std::string file;
  int line = 0;
  std::string str() const;  // "file:line"
};

// fio's data directions, in the order of its comma lists ("bs=read,write,trim").
enum class Direction { read = 0, write = 1, trim = 2 };
template <class T>
using PerDirection = std::array<T, 3>;  // indexed by Direction

// fio's rw= values; "rw" and "readwrite" are one pattern (sequential mixed reads and writes).
enum class RwMode { read, write, trim, randread, randwrite, randtrim, readwrite, randrw, trimwrite, randtrimwrite };
std::string_view to_string(RwMode mode);  // fio's spelling ("readwrite" for rw/readwrite)

// One entry of bssplit=4k/50:64k/50.
struct BlockSplit {
  std::uint64_t bytes = 0;
  unsigned percent = 0;  // as fio fills it in: blank percentages share what is left of 100
  bool operator==(const BlockSplit&) const = default;
};

// One fio job after [global] inheritance, in the project's units. numjobs is kept as a count
// (the clones are made by whoever runs the job), so one JobSpec can stand for several fio
// threads.
struct JobSpec {
  std::string name;        // section name, or name= when given
  SourceLocation section;  // where the [name] header (or --name=) was
  int group = 0;           // fio's reporting group id (groupid in fio's output)
  bool stonewall = false;  // wait for earlier jobs before starting (also a new group)
  bool new_group = false;

  RwMode rw = RwMode::read;        // fio default: read
  std::string rw_offset_modifier;  // the ":<nr>" of rw=randread:8 (not modelled; reported)
  bool random = false;             // random offsets (randread, randwrite, randrw, randtrim...)
  // Share of reads among the job's reads and writes: 1 for read/randread, 0 for write-only and
  // trim patterns, rwmixread/100 for rw/randrw.
  double read_fraction = 1.0;
  unsigned rwmixread = 50;  // percent; rwmixwrite=w sets it to 100 - w (last one wins)

  PerDirection<std::uint64_t> bs_bytes{4096, 4096, 4096};
  PerDirection<std::vector<BlockSplit>> bssplit;  // empty: every I/O is bs_bytes

  unsigned iodepth = 1;
  // After fio's fixup_options (init.c): iodepth_batch_submit 0 or above iodepth becomes
  // iodepth; iodepth_batch_complete_max below the min (it defaults to 0 = unset) becomes the
  // min, so its default is iodepth_batch_complete_min, as the HOWTO says.
  unsigned iodepth_batch_submit = 1;
  unsigned iodepth_batch_complete_min = 1;
  unsigned iodepth_batch_complete_max = 1;

  std::string ioengine = "psync";  // fio's default on Linux
  bool direct = false;             // buffered=0 is direct=1

  std::optional<std::uint64_t> size_bytes;  // per job (each numjobs clone does this much)
  std::optional<unsigned> size_percent;     // size=20%: a share of the file or device, 1..100

  std::optional<sim::time_ns> runtime_ns;  // absent: no time limit (fio's runtime=0)
  sim::time_ns ramp_time_ns = 0;
  bool time_based = false;
  sim::time_ns thinktime_ns = 0;
  unsigned thinktime_blocks = 1;

  PerDirection<std::optional<std::uint64_t>> rate_iops;  // absent: no cap in that direction
  std::string rate_process = "linear";                   // "linear" or "poisson"

  unsigned numjobs = 1;
  bool group_reporting = false;
  std::string filename;     // as written (colon-separated list in fio)
  unsigned kb_base = 1024;  // 1024 (fio default) or 1000

  // Where each option in effect came from, by fio's main name (aliases such as readwrite,
  // blocksize and iodepth_batch are stored under rw, bs, iodepth_batch_submit); global options
  // point at their [global] line. Options vqsim does not model are here too, as written.
  std::map<std::string, SourceLocation> origin;
  // Every option in effect, by the name written, with the value written after ${VAR}
  // substitution ("" for a bare flag such as time_based). Includes the unsupported ones.
  std::map<std::string, std::string> raw;
};

struct JobFile {
  std::vector<JobSpec> jobs;
  // One line per option occurrence vqsim does not model, naming it with file:line, e.g.
  // "t.fio:7: option 'verify' is not modelled and is ignored"; also options fio does not know
  // (fio would refuse them), the ":<nr>" suffix of rw=, and fio's own command-line options.
  // A misspelt *modelled* option (within edit distance 2, "iodeth") is an error instead.
  std::vector<std::string> unsupported;
  // Legal but suspicious input: options that have no effect as combined, spellings fio itself
  // would reject but whose intent is plain, bssplit percentages that do not add up to 100.
  std::vector<std::string> warnings;
};

// Reads a job file. `include other.fio` is resolved relative to the including file (an include
// cycle is an error). ${VAR} is looked up in `env`, then in the process environment; an
// undefined variable is an error (fio would substitute ""). fio's reserved keywords $pagesize,
// $mb_memory and $ncpus describe the machine fio ran on, not this one, so they are taken from
// `env` only (keys "pagesize", "mb_memory", "ncpus") and are an error otherwise.
JobFile parse_job_file(const std::string& path, const std::map<std::string, std::string>& env = {});

// The same for text already in memory: `source` names it in messages, `base_dir` resolves
// includes.
JobFile parse_job_text(std::string_view text, const std::string& source, const std::string& base_dir,
                       const std::map<std::string, std::string>& env = {});

// fio's command-line form: "--name=a --rw=randread --bs=4k --name=b ...". Options before the
// first --name (or after --name=global) are global defaults, also for job files named among
// the arguments. As in fio, the command line's jobs come first, then each job file's jobs; every
// job file after the first starts a new group (fio's implied stonewall). fio's own command-line
// options (--output-format, --section, ...) are reported in `unsupported`.
JobFile parse_job_command_line(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

// fio's synchronous engines (FIO_SYNCIO: sync, psync, vsync, pvsync, pvsync2, mmap, ...): the
// submission returns when the I/O is done, so iodepth has no effect with them. The one list.
bool is_synchronous_engine(std::string_view engine);

// The fio engines a scenario's workload.ioengine takes by name: the synchronous ones modelled
// as psync, libaio, io_uring, and "aio" (the scenario's spelling of POSIX aio).
const std::vector<std::string>& modelled_ioengines();

// The value parsers, exposed for tests and for tools that read single values the fio way.
// Throw std::invalid_argument with a reason ("expected ...").
// Sizes: plain bytes, 0x hex, or a number with k/m/g/t/p (+ optional b, i) -- see fio_jobfile.cc.
std::uint64_t parse_fio_size_bytes(std::string_view text, unsigned kb_base = 1024);
// A bs value ("4k", "4KiB,64k", ",8k") as fio reads it: bytes for reads, writes and trims,
// fio's default 4096 where an element is left empty. Ranges ("4k-8k") are refused.
PerDirection<std::uint64_t> parse_fio_block_sizes(std::string_view text, unsigned kb_base = 1024);
// Times: us/usec, ms/msec, s, m, h, d (any case); a plain number is in `plain_unit_ns`.
sim::time_ns parse_fio_time_ns(std::string_view text, sim::time_ns plain_unit_ns);

}  // namespace vqsim::fio
