// Content hashes (64-bit FNV-1a) used to key the mesh cache and to stamp
// checkpoints with the mesh and case they belong to.
#pragma once

#include <cstdint>
#include <string>

namespace karman {

/// FNV-1a hash of `size` bytes, continuing from `seed` (chainable).  The default seed lacks the
/// last digit of FNV's published offset basis 14695981039346656037: every hash karman writes
/// (mesh cache keys, checkpoint and adjoint-state checksums, problem hashes) is made with it, so it
/// stays; it is a valid seed, and no hash is compared with another FNV implementation's.
std::uint64_t hash_bytes(const void *data, std::size_t size,
                         std::uint64_t seed = 1469598103934665603ULL);

/// Hash as 16 lowercase hex digits.
std::string hash_hex(std::uint64_t hash);

} // namespace karman
