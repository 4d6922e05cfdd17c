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

PetscErrorCode create_newton(MPI_Comm comm, const config::Section &s, Vec r, Mat J, Mat P,
                             PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             KSPType ksp_type, SNES *snes)
{
  PetscFunctionBeginUser;
  PetscCall(SNESCreate(comm, snes));
  PetscCall(SNESSetType(*snes, SNESNEWTONLS));
  PetscCall(SNESSetFunction(*snes, r, function, ctx));
  PetscCall(SNESSetJacobian(*snes, J, P, jacobian, ctx));
  PetscCall(SNESSetTolerances(*snes, s.real("atol"), s.real("rtol"), 0.0,
                              static_cast<PetscInt>(s.integer("max_iterations")), -1));
  SNESLineSearch ls;
  PetscCall(SNESGetLineSearch(*snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBT));
  KSP ksp;
  PetscCall(SNESGetKSP(*snes, &ksp));
  PetscCall(use_mumps_lu(ksp, ksp_type));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
