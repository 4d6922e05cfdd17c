// FNV-1a 64-bit (src/core/hash.cpp): the published test vectors, chaining (hashing a buffer in two
// pieces equals hashing it whole), sensitivity to every byte and to their order, and the hex form.
#include "karman/core/hash.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace karman;

TEST_CASE("hash: FNV-1a 64 test vectors", "[core]") {
  // the vectors of the FNV reference (isthe.com/chongo/tech/comp/fnv) from its offset basis
  // 14695981039346656037.  karman's default seed is 1469598103934665603, the basis without its
  // last digit (kept: the mesh cache, checkpoints and problem hashes already stored depend on it)
  const std::uint64_t basis = 14695981039346656037ULL;
  CHECK(hash_bytes("", 0, basis) == 0xcbf29ce484222325ULL);
  CHECK(hash_bytes("a", 1, basis) == 0xaf63dc4c8601ec8cULL);
  CHECK(hash_bytes("foobar", 6, basis) == 0x85944171f73967e8ULL);
  CHECK(hash_bytes("", 0) == 1469598103934665603ULL);
}

TEST_CASE("hash: chaining, byte and order sensitivity, hex digits", "[core]") {
  const std::string text = "mesh: {file: channel.geo, level: 2}";
  const std::uint64_t whole = hash_bytes(text.data(), text.size());
  for (std::size_t cut = 0; cut <= text.size(); ++cut)
    CHECK(hash_bytes(text.data() + cut, text.size() - cut, hash_bytes(text.data(), cut)) == whole);
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] ^= 1;
    CAPTURE(i);
    CHECK(hash_bytes(changed.data(), changed.size()) != whole);
  }
  CHECK(hash_bytes("ab", 2) != hash_bytes("ba", 2));
  CHECK(hash_hex(0) == "0000000000000000");
  CHECK(hash_hex(0xcbf29ce484222325ULL) == "cbf29ce484222325");
  CHECK(std::stoull(hash_hex(whole), nullptr, 16) == whole);
}
