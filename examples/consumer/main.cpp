// A program that uses the installed karman library (examples/consumer/CMakeLists.txt:
// find_package(karman), karman::karman): loads a case file with overrides, solves its steady flow
// with driver::FlowCase (Newton with pseudo-transient continuation, the case's solver settings) and
// prints the drag and lift coefficients and the pressure difference of the case's monitors.
// usage: mpirun -n P karman_consumer CASE.yaml [section.key=value ...] [PETSc options]
#include "karman/config/case_config.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace {

/// Loads argv[1] with the overrides among the other arguments (those with '=' and no leading
/// '-'), solves it steady and prints c_D, c_L and delta p on rank 0.  Collective.
PetscErrorCode solve_case(int argc, char **argv) {
  PetscFunctionBeginUser;
  PetscCheck(argc >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT,
             "usage: karman_consumer CASE.yaml [section.key=value ...]");
  std::vector<std::string> overrides;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a[0] != '-' && a.find('=') != std::string::npos) overrides.push_back(a);
  }
  karman::config::CaseConfig cfg;
  PetscCall(karman::config::CaseConfig::load(PETSC_COMM_WORLD, argv[1], overrides,
                                             karman::optimization::case_schema(), cfg));
  PetscCall(cfg.apply_petsc_options()); // the case's petsc: block, as karman run
  karman::driver::FlowCase fc;
  PetscCall(fc.load(PETSC_COMM_WORLD, cfg)); // mesh, discretization, monitors
  Vec w;
  PetscCall(fc.create_state(&w));
  PetscCall(fc.initial_state(w));
  karman::driver::SteadySolution s;
  PetscCall(fc.solve_steady(w, nullptr, {}, &s));
  PetscCall(VecDestroy(&w));
  PetscCheck(s.summary.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
             "%s: the steady solve did not converge (%s)", argv[1], s.summary.reason.c_str());
  PetscCall(
      PetscPrintf(PETSC_COMM_WORLD, "newton_iterations %d\ncd %.17g\ncl %.17g\ndelta_p %.17g\n",
                  static_cast<int>(s.summary.iterations), s.values.cd, s.values.cl, s.values.dp));
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  if (PetscInitialize(&argc, &argv, nullptr, nullptr)) return 1;
  PetscErrorCode ierr = karman::install_error_handler();    // errors as one line, as karman prints
  if (!ierr) ierr = karman::solver::set_process_defaults(); // karman's solver defaults
  if (!ierr) ierr = solve_case(argc, argv);
  int status = 0;
  if (ierr) status = karman::report_error_and_exit_code(ierr);
  PetscFinalize();
  return status;
}
