// The karman executable: parses karman's own arguments, starts PETSc/MPI with the
// rest, runs the command and turns any failure into one "karman: error: ..." line and
// a non-zero exit status.
#include "karman/cli/commands.hpp"
#include "karman/core/error.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petscsys.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Rank from the launcher's environment, to print help/usage errors once before MPI starts.
bool is_first_rank() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char *r = std::getenv(v);
    if (r) return std::atoi(r) == 0;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  karman::cli::CliArgs args;
  const std::string error = karman::cli::parse_args(argc, argv, &args);
  if (args.help) {
    if (is_first_rank())
      std::fputs((args.command.empty() ? karman::cli::general_help()
                                       : karman::cli::command_help(args.command))
                     .c_str(),
                 stdout);
    return 0;
  }
  if (!error.empty()) {
    // every rank waits until the first has printed: a rank that exited at once made mpirun abort
    // the job, on a loaded machine before the first rank had written the line
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "karman: error: %s\n", error.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 2;
  }
  std::vector<char *> petsc_argv;
  for (auto &a : args.petsc_args) petsc_argv.push_back(a.data());
  petsc_argv.push_back(nullptr);
  int petsc_argc = static_cast<int>(args.petsc_args.size());
  char **pargv = petsc_argv.data();
  PetscErrorCode ierr = PetscInitialize(&petsc_argc, &pargv, nullptr, nullptr);
  if (ierr) {
    std::fprintf(stderr, "karman: error: PETSc initialization failed\n");
    return 1;
  }
  ierr = karman::install_error_handler();
  if (!ierr) ierr = karman::solver::set_process_defaults();
  if (!ierr) ierr = karman::cli::run_command(PETSC_COMM_WORLD, args);
  int status = 0;
  if (ierr) status = karman::report_error_and_exit_code(ierr);
  PetscFinalize();
  return status;
}
