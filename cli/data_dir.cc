#include "cli/data_dir.h"

#include <algorithm>
#include <system_error>
#include <vector>

#include "cli/common.h"

#ifndef VQSIM_DATA_FROM_BIN
#define VQSIM_DATA_FROM_BIN "../share/vqsim"
#endif

namespace vqsim::cli {
namespace fs = std::filesystem;

std::optional<fs::path> data_dir() {
  std::error_code ec;
  // The binary itself, not argv[0]: that may be a bare name found on PATH, or a symlink.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& dir : {exe.parent_path() / VQSIM_DATA_FROM_BIN, exe.parent_path() / "share" / "vqsim"}) {
    if (fs::is_directory(dir / "scenarios", ec)) return fs::weakly_canonical(dir, ec);
  }
  return std::nullopt;
}

namespace {

// Every scenario name under `root`: its .toml files relative to it, without the extension.
std::vector<std::string> scenario_names(const fs::path& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".toml")
      names.push_back(fs::relative(it->path(), root, ec).replace_extension().generic_string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string resolve_scenario(const std::string& arg) {
  std::error_code ec;
  const fs::path p(arg);
  if (arg.empty() || fs::exists(p, ec) || p.extension() == ".toml" || arg.front() == '/' || arg.front() == '.') return arg;
  const auto dir = data_dir();
  if (!dir)
    throw UsageError(arg +
                     ": no such file, and no installed scenarios to look the name up in (expected share/vqsim/scenarios "
                     "next to the vqsim binary); give the path of a scenario file");
  const fs::path root = *dir / "scenarios";
  const fs::path found = root / (arg + ".toml");
  if (fs::is_regular_file(found, ec)) return found.string();
  const std::vector<std::string> names = scenario_names(root);
  std::string list;
  for (const auto& n : names) list.append(list.empty() ? "" : ", ").append(n);
  throw UsageError(arg + ": no such file, nor an installed scenario" + did_you_mean(arg, names) + "; the installed ones (" +
                   root.string() + "): " + list);
}

}  // namespace vqsim::cli
