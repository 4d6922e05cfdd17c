// A file written whole or not at all: the content goes to PATH.tmp, which is flushed and renamed
// over PATH, so that a kill at any moment leaves either the previous file or the new one.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace karman::io {

/// Writes `path` through write(FILE *) into PATH.tmp and renames it.  Returns "" or the error
/// ("cannot write PATH").  Not collective: called by the rank that writes.
std::string write_file_atomically(const std::string &path,
                                  const std::function<void(std::FILE *)> &write);

} // namespace karman::io
