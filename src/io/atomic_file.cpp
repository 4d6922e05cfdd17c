// Atomic file writes (see include/karman/io/atomic_file.hpp).
#include "karman/io/atomic_file.hpp"

#include <filesystem>

namespace karman::io {

std::string write_file_atomically(const std::string &path,
                                  const std::function<void(std::FILE *)> &write) {
  const std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f) return "cannot write " + tmp;
  write(f);
  const bool ok = std::ferror(f) == 0 && std::fflush(f) == 0;
  std::fclose(f);
  std::error_code ec;
  if (ok) std::filesystem::rename(tmp, path, ec);
  return ok && !ec ? std::string() : "cannot write " + path;
}

} // namespace karman::io
