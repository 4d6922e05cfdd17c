// The default linear solver of karman's Newton and adjoint solves: a KSP of the given type
// preconditioned by an LU factorization with MUMPS (parallel, supports transposed
// solves).  Set before KSPSetFromOptions, so -ksp_type, -pc_type,
// -pc_factor_mat_solver_type (with the solver's prefix) override it.
#pragma once

#include "karman/config/case_config.hpp"

#include <petscsnes.h>

namespace karman::solver {

PetscErrorCode use_mumps_lu(KSP ksp, KSPType type);

/// The Newton solver of the steady and unsteady flow solvers: SNES Newton with a
/// backtracking line search, tolerances from the `solver` section (atol, rtol,
/// max_iterations), residual r, Jacobian J (preconditioner matrix P), MUMPS LU under a
/// KSP of type ksp_type.  SNESSetFromOptions is left to the caller.
PetscErrorCode create_newton(MPI_Comm comm, const config::Section &solver_section, Vec r, Mat J, Mat P,
                             PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             KSPType ksp_type, SNES *snes);

} // namespace karman::solver
