#include "cli/common.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

namespace vqsim::cli {
namespace po = boost::program_options;

bool parse_options(const std::vector<std::string>& args, const po::options_description& opts, po::variables_map& vm,
                   const po::positional_options_description* positional) {
  try {
    po::command_line_parser parser(args);
    parser.options(opts);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << opts << '\n';
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + " (see --help)");
  }
  return true;
}

namespace fs = std::filesystem;

// Writes `text` to `path` through a temporary file and a rename: a reader (or a crash) sees the
// old file or the whole new one, never half of it. `sync` also forces the data to disk first;
// the fio-plot files skip it (they are rebuilt from the journal, and a thousand syncs would be
// most of a short sweep's time).
void write_atomically(const fs::path& path, const std::string& text, bool sync) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  if (sync) {
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  fs::rename(tmp, path);
}

std::string event_hash_hex(std::uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace vqsim::cli
