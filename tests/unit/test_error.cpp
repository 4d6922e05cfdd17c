// Error recording (src/core/error.cpp): the first message since clear_error() is kept (later
// errors up the stack do not overwrite it; PETSc's %g writes -1 as "-1."), an error without text
// gets PETSc's description, and a collective failure is reported once, by rank 0, as "karman:
// error: MESSAGE" with exit status 1.
#include "karman/core/error.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

using namespace karman;

namespace {

PetscErrorCode refuse(double nu) {
  PetscFunctionBeginUser;
  PetscCheck(nu > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
             "case.yaml: 'fluid.viscosity' expected a number > 0, got %g", nu);
  PetscFunctionReturn(0);
}

PetscErrorCode caller() {
  PetscFunctionBeginUser;
  PetscCall(refuse(-1));
  PetscFunctionReturn(0);
}

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

TEST_CASE("error: the first message is kept until cleared", "[core]") {
  clear_error();
  CHECK(last_error_message().empty());
  CHECK(caller() == PETSC_ERR_USER_INPUT);
  CHECK(last_error_message() == "case.yaml: 'fluid.viscosity' expected a number > 0, got -1.");
  // a second error does not replace the first (the one the user must read)
  CHECK(refuse(-2) != 0);
  CHECK(last_error_message() == "case.yaml: 'fluid.viscosity' expected a number > 0, got -1.");
  clear_error();
  CHECK(last_error_message().empty());
  // an error raised without a message: PETSc's text for the code
  const char *text = nullptr;
  PetscErrorMessage(PETSC_ERR_MEM, &text, nullptr);
  CHECK(PetscError(PETSC_COMM_SELF, __LINE__, "test", __FILE__, PETSC_ERR_MEM, PETSC_ERROR_INITIAL,
                   nullptr) == PETSC_ERR_MEM);
  CHECK(last_error_message() == text);
  clear_error();
}

TEST_CASE("error: a collective failure is reported once by rank 0", "[core][mpi]") {
  clear_error();
  REQUIRE(caller() != 0);
  int status = 0;
  const std::string out = capture(2, [&] { status = report_error_and_exit_code(1); });
  clear_error();
  CHECK(status == 1);
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  CHECK(out == (rank == 0 ? "karman: error: case.yaml: 'fluid.viscosity' expected a number > 0, "
                            "got -1.\n"
                          : ""));
}
