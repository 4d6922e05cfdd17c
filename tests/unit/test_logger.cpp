// The logger (src/core/logger.cpp): only rank 0 prints, info lines to stdout with "karman: ",
// warnings to stderr with "karman: warning: ", formatted printf-style, one line each.
#include "karman/core/logger.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

using namespace karman;

namespace {

// what `run` writes to the file descriptor fd (1 or 2)
std::string capture(int fd, const std::function<void()> &run) {
  std::fflush(nullptr);
  char name[] = "/tmp/karman-capture-XXXXXX";
  const int file = mkstemp(name);
  const int saved = dup(fd);
  dup2(file, fd);
  run();
  std::fflush(nullptr);
  dup2(saved, fd);
  close(saved);
  close(file);
  std::ifstream in(name);
  std::stringstream s;
  s << in.rdbuf();
  std::remove(name);
  return s.str();
}

} // namespace

TEST_CASE("logger: rank 0 prints info to stdout and warnings to stderr", "[core][mpi]") {
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  PetscErrorCode ierr = 1;
  std::string err;
  const std::string out = capture(1, [&] {
    err = capture(2,
                  [&] { ierr = log_info(PETSC_COMM_WORLD, "step %d of %s: %.3f", 3, "run", 0.5); });
  });
  CHECK(ierr == 0);
  CHECK(out == (rank == 0 ? "karman: step 3 of run: 0.500\n" : ""));
  CHECK(err.empty());
  const std::string out2 = capture(
      1, [&] { err = capture(2, [&] { ierr = log_warning(PETSC_COMM_WORLD, "cfl %g", 2.5); }); });
  CHECK(ierr == 0);
  CHECK(out2.empty());
  CHECK(err == (rank == 0 ? "karman: warning: cfl 2.5\n" : ""));
  // a communicator of one rank: every rank is its rank 0
  const std::string self = capture(1, [&] { ierr = log_info(PETSC_COMM_SELF, "mine"); });
  CHECK(self == "karman: mine\n");
}
