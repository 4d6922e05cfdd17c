// FNV-1a 64-bit: h = (h xor byte) * 1099511628211 for each byte.
#include "karman/core/hash.hpp"

#include <cstdio>

namespace karman {

std::uint64_t hash_bytes(const void *data, std::size_t size, std::uint64_t seed) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hash_hex(std::uint64_t hash) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

} // namespace karman
