// Linear solvers of the forward and adjoint solves (see include/karman/solver/linear_solver.hpp).
#include "karman/solver/linear_solver.hpp"

#include "karman/solver/simple_preconditioner.hpp"

#include <cstring>
#include <utility>

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
                                    const LinearTolerances &tol, KSP *ksp, bool iterative) {
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(comm, ksp));
  if (const char *prefix = options_prefix(role)) PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  if (iterative) {
    // GMRES, right-preconditioned (the tolerance applies to the true residual) by SIMPLE, which
    // applies transposed as well
    PetscCall(KSPSetType(*ksp, KSPGMRES));
    PetscCall(KSPGMRESSetRestart(*ksp, 100));
    PetscCall(KSPSetPCSide(*ksp, PC_RIGHT));
    PC pc;
    PetscCall(KSPGetPC(*ksp, &pc));
    PetscCall(set_simple_preconditioner(pc));
  } else
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

namespace {

// The context of the recording convergence test: the recorder and the test that decides.
struct RecordingTest {
  NewtonRecorder record;
  bool skip = false; ///< -snes_convergence_test skip
};

PetscErrorCode recording_test(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm,
                              PetscReal norm, SNESConvergedReason *reason, void *ctx) {
  PetscFunctionBeginUser;
  const auto *test = static_cast<const RecordingTest *>(ctx);
  PetscCall(test->record(snes, it, norm));
  if (test->skip)
    PetscCall(SNESConvergedSkip(snes, it, xnorm, snorm, norm, reason, nullptr));
  else
    PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, norm, reason, nullptr));
  PetscFunctionReturn(0);
}

PetscErrorCode destroy_recording_test(void *ctx) {
  PetscFunctionBeginUser;
  delete static_cast<RecordingTest *>(ctx);
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode set_recording_convergence_test(SNES snes, NewtonRecorder record,
                                              const char *solver) {
  PetscFunctionBeginUser;
  // the decision stays PETSc's: the default test, or none with -snes_convergence_test skip
  const char *prefix = nullptr;
  PetscCall(SNESGetOptionsPrefix(snes, &prefix));
  char test[64] = "default";
  PetscCall(PetscOptionsGetString(nullptr, prefix, "-snes_convergence_test", test, sizeof(test),
                                  nullptr));
  PetscCheck(std::strcmp(test, "default") == 0 || std::strcmp(test, "skip") == 0,
             PetscObjectComm((PetscObject)snes), PETSC_ERR_USER_INPUT,
             "PETSc option -snes_convergence_test %s: the %s supports default and skip", test,
             solver);
  auto *context = new RecordingTest{std::move(record), std::strcmp(test, "skip") == 0};
  PetscCall(SNESSetConvergenceTest(snes, recording_test, context, destroy_recording_test));
  PetscFunctionReturn(0);
}

PetscErrorCode check_transposed_solve(KSP ksp) {
  PetscFunctionBeginUser;
  PC pc;
  PCType type;
  const char *prefix;
  PetscBool exists;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  if (!prefix) prefix = "";
  // PETSc 3.18's Schur field split claims a transposed apply that it does not have
  PetscBool fieldsplit;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCFIELDSPLIT, &fieldsplit));
  if (fieldsplit) {
    PCCompositeType split;
    PetscCall(PCFieldSplitGetType(pc, &split));
    PetscCheck(split != PC_COMPOSITE_SCHUR, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
               "the adjoint preconditioner -%spc_type fieldsplit -%spc_fieldsplit_type schur "
               "cannot be applied transposed in PETSc 3.18; use the case key solver.linear: "
               "iterative (a SIMPLE preconditioner that applies transposed) or -%spc_type lu",
               prefix, prefix, prefix);
  }
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCGetType(pc, &type));
  PetscCall(PCApplyTransposeExists(pc, &exists));
  PetscCheck(exists, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "the adjoint preconditioner -%spc_type %s cannot be applied transposed; use one that "
             "can: -%spc_type lu (with -%spc_factor_mat_solver_type mumps, the default), ilu, asm, "
             "bjacobi, jacobi or none, or the case key solver.linear: iterative",
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
