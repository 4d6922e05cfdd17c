// Atomic file writes (src/io/atomic_file.cpp): the new content replaces the old file whole, no
// PATH.tmp is left behind, and a write that fails leaves the previous file as it was.
#include "karman/io/atomic_file.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace karman;

namespace {

std::string contents(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("atomic file: replaced whole, no temporary left, a failure keeps the old file", "[io]") {
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) return; // not collective
  const std::string dir = std::string(KARMAN_TEST_WORK_DIR) + "/atomic_file";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/table.csv";
  REQUIRE(io::write_file_atomically(path, [](std::FILE *f) { std::fputs("a,b\n1,2\n", f); }) == "");
  CHECK(contents(path) == "a,b\n1,2\n");
  // while the writer runs the old file is still in place, the new content only in PATH.tmp
  REQUIRE(io::write_file_atomically(path, [&](std::FILE *f) {
            std::fputs("c\n", f);
            std::fflush(f);
            CHECK(contents(path) == "a,b\n1,2\n");
            CHECK(contents(path + ".tmp") == "c\n");
          }) == "");
  CHECK(contents(path) == "c\n");
  CHECK(!std::filesystem::exists(path + ".tmp"));
  // a stream error while writing: the error names the file, the old content stays
  const std::string error = io::write_file_atomically(path, [](std::FILE *f) {
    std::fputs("partial", f);
    std::fgetc(f); // reading a write-only stream sets its error flag
  });
  CHECK(error == "cannot write " + path);
  CHECK(contents(path) == "c\n");
  // a folder that does not exist: nothing written, the error names the temporary file
  const std::string missing = dir + "/no/such/file.csv";
  CHECK(io::write_file_atomically(missing, [](std::FILE *) {}) ==
        "cannot write " + missing + ".tmp");
  CHECK(!std::filesystem::exists(missing));
}
