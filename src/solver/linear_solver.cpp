// Default linear solver (see include/karman/solver/linear_solver.hpp).
#include "karman/solver/linear_solver.hpp"

namespace karman::solver {

PetscErrorCode use_mumps_lu(KSP ksp, KSPType type)
{
  PetscFunctionBeginUser;
  PC pc;
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
