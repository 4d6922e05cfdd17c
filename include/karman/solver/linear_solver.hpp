// The default linear solver of karman's Newton and adjoint solves: a KSP of the given type
// preconditioned by an LU factorization with MUMPS (parallel, supports transposed
// solves).  Set before KSPSetFromOptions, so -ksp_type, -pc_type,
// -pc_factor_mat_solver_type (with the solver's prefix) override it.
#pragma once

#include <petscksp.h>

namespace karman::solver {

PetscErrorCode use_mumps_lu(KSP ksp, KSPType type);

} // namespace karman::solver
