// Shared helpers of the libFuzzer targets (fuzz/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace vqsim::fuzz {

// A fresh directory under $TMPDIR (or /tmp), made once per process and removed at normal exit.
// `files` names source-tree files (relative to VQSIM_SOURCE_DIR) copied into it, so that an
// input may refer to them by a relative name (a scenario's `base`, a manifest's `file`).
inline const std::filesystem::path& scratch_dir(std::initializer_list<const char*> files = {}) {
  static const std::filesystem::path dir = [&] {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "vqsim-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    const fs::path d = tmpl;
    for (const char* f : files) {
      const fs::path from = fs::path(VQSIM_SOURCE_DIR) / f;
      std::error_code ec;
      fs::copy_file(from, d / from.filename(), fs::copy_options::overwrite_existing, ec);
    }
    static const fs::path keep = d;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return d;
  }();
  return dir;
}

// Writes the input to `path` (replacing what was there).
inline void write_file(const std::filesystem::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// The file-reading targets follow paths the input names (include, base, fio_job, file). A path
// into /dev, /proc or /sys could block or never end (/dev/zero, /dev/stdin), which is no bug of
// the parser, so inputs naming one (also as "../../dev/zero") are skipped; so are TOML's \u
// escapes, which could spell one.
inline bool names_special_file(std::string_view data) {
  for (std::string_view bad : {"/dev", "/proc", "/sys", "\\u", "\\U"}) {
    if (data.find(bad) != std::string_view::npos) return true;
  }
  return false;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace vqsim::fuzz
