// Content hashes (64-bit FNV-1a) used to key the mesh cache and to stamp
// checkpoints with the mesh and case they belong to.
#pragma once

#include <cstdint>
#include <string>

namespace karman {

/// FNV-1a hash of `size` bytes, continuing from `seed` (chainable).
std::uint64_t hash_bytes(const void *data, std::size_t size,
                         std::uint64_t seed = 1469598103934665603ULL);

/// Hash as 16 lowercase hex digits.
std::string hash_hex(std::uint64_t hash);

} // namespace karman
