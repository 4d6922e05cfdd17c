// Catch2 main for karman's tests: starts PETSc/MPI, installs karman's error handler
// (tests provoke errors on purpose and read the message), runs the tests on every rank,
// and lets only rank 0 report.  The same binary runs serially (ctest label "unit") and
// under mpirun with the "[mpi]" tests (label "mpi").
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "karman/core/error.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petscsys.h>

#include <vector>

int main(int argc, char **argv) {
  if (PetscInitialize(&argc, &argv, nullptr, nullptr)) return 1;
  if (karman::install_error_handler()) return 1;
  if (karman::solver::set_process_defaults()) return 1;
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  Catch::Session session;
  std::vector<const char *> args(argv, argv + argc);
  if (rank != 0) {
    args.push_back("--out");
    args.push_back("/dev/null");
  }
  int failures =
      session.applyCommandLine(static_cast<int>(args.size()), const_cast<char **>(args.data()));
  if (failures == 0) failures = session.run();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  PetscFinalize();
  return total > 0 ? 1 : 0;
}
