// Linear solvers of the forward and adjoint solves (see include/karman/solver/linear_solver.hpp).
#include "karman/solver/linear_solver.hpp"

namespace karman::solver {

const char *options_prefix(LinearSolverRole role) {
  return role == LinearSolverRole::Adjoint ? "adj_" : nullptr;
}

PetscErrorCode set_default_linear_solver(KSP ksp, KSPType type) {
  PetscFunctionBeginUser;
  PC pc;
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscFunctionReturn(0);
}

PetscErrorCode create_linear_solver(MPI_Comm comm, LinearSolverRole role, KSPType type,
                                    const LinearTolerances &tol, KSP *ksp) {
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(comm, ksp));
  if (const char *prefix = options_prefix(role)) PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(set_default_linear_solver(*ksp, type));
  PetscCall(KSPSetTolerances(*ksp, tol.rtol, tol.atol, PETSC_DEFAULT, tol.max_iterations));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(0);
}

PetscErrorCode create_newton(MPI_Comm comm, const config::Section &s, Vec r, Mat J, Mat P,
                             PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             KSPType ksp_type, SNES *snes, const LinearTolerances *linear) {
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
  PetscCall(set_default_linear_solver(ksp, ksp_type));
  if (linear)
    PetscCall(
        KSPSetTolerances(ksp, linear->rtol, linear->atol, PETSC_DEFAULT, linear->max_iterations));
  PetscFunctionReturn(0);
}

PetscErrorCode check_transposed_solve(KSP ksp) {
  PetscFunctionBeginUser;
  PetscCall(KSPSetUp(ksp));
  PC pc;
  PCType type;
  const char *prefix;
  PetscBool exists;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &type));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscCall(PCApplyTransposeExists(pc, &exists));
  if (!prefix) prefix = "";
  PetscCheck(exists, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "the adjoint preconditioner -%spc_type %s cannot be applied transposed; use one that "
             "can: -%spc_type lu (with -%spc_factor_mat_solver_type mumps, the default), ilu, asm, "
             "bjacobi, jacobi or none",
             prefix, type, prefix, prefix);
  PetscFunctionReturn(0);
}

void PreconditionerReuse::record_solve(PetscInt iterations, double seconds) {
  last_iterations_ = iterations;
  last_seconds_ = seconds;
  cycle_seconds_ += seconds;
  ++cycle_solves_;
}

bool PreconditionerReuse::decide_setup() {
  bool setup = !reuse_ || requested_ || !have_setup_;
  if (!setup && rule_ == Rule::MeanCost && cycle_solves_ > 0)
    setup = last_seconds_ > cycle_seconds_ / static_cast<double>(cycle_solves_);
  if (!setup) setup = last_iterations_ > max_iterations_;
  if (setup) {
    have_setup_ = true;
    requested_ = false;
    cycle_seconds_ = 0;
    cycle_solves_ = 0;
    ++setups_;
  }
  return setup;
}

} // namespace karman::solver
