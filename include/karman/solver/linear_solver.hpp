// The linear solvers of karman: the forward Newton step J dw = -R and the adjoint's transposed
// solve J^T psi = -g, both PETSc KSP/PC chosen by PETSc options.
//  * Default: a KSP of the given type preconditioned by an LU factorization with MUMPS
//    (parallel, supports transposed solves), set before KSPSetFromOptions so that -ksp_type,
//    -pc_type, -pc_factor_mat_solver_type (with the role's options prefix) override it.
//  * Roles: the forward Newton solve has no prefix (-ksp_*, -pc_*), the adjoint the prefix adj_
//    (-adj_ksp_*, -adj_pc_*).  Tolerances come from the case (solver.linear_*, adjoint.*).
//  * A transposed solve needs a preconditioner that can be applied transposed
//    (PCApplyTransposeExists); check_transposed_solve says clearly when it cannot.
//  * PreconditionerReuse: when a time-dependent solve sets its preconditioner up again (new LU
//    factors by default) instead of reusing the last one, and how often it did.
//  * The Newton solver around the forward step (create_newton) records each iterate (residual
//    history, continuation) in its convergence test (set_recording_convergence_test), not in an
//    SNES monitor, so that PETSc options such as -snes_monitor_cancel cannot switch it off.
#pragma once

#include "karman/config/case_config.hpp"

#include <petscsnes.h>

#include <functional>

namespace karman::solver {

/// What a linear solver is for; the role gives its options prefix.
enum class LinearSolverRole {
  Newton, ///< the forward Newton step: no prefix (-ksp_type, -pc_type ...)
  Adjoint ///< the adjoint's transposed solve: prefix adj_ (-adj_ksp_type, -adj_pc_type ...)
};

/// Options prefix of a role: nullptr (none) or "adj_".
const char *options_prefix(LinearSolverRole role);

/// Stopping tests of a Krylov solve (KSPSetTolerances; the divergence tolerance keeps its default).
struct LinearTolerances {
  double rtol = 0, atol = 0;
  PetscInt max_iterations = 0;
};

/// Sets karman's default on ksp: KSP `type` preconditioned by MUMPS LU.  Called before
/// KSPSetFromOptions (or SNESSetFromOptions), so that PETSc options override it.
PetscErrorCode set_default_linear_solver(KSP ksp, KSPType type);

/// Creates the KSP of a role: its options prefix, the default (set_default_linear_solver) with
/// `type`, or with `iterative` right-preconditioned GMRES(100) with the SIMPLE preconditioner
/// (solver/simple_preconditioner.hpp; its preconditioning matrix should be the compact one), the
/// tolerances, then KSPSetFromOptions.  Collective.
PetscErrorCode create_linear_solver(MPI_Comm comm, LinearSolverRole role, KSPType type,
                                    const LinearTolerances &tolerances, KSP *ksp,
                                    bool iterative = false);

/// The Newton solver of the steady and unsteady flow solvers: SNES Newton with a
/// backtracking line search, tolerances from the `solver` section (atol, rtol,
/// max_iterations), residual r, Jacobian J (preconditioner matrix P), the default linear
/// solver (role Newton) with a KSP of type ksp_type and, when given, the linear tolerances.
/// SNESSetFromOptions is left to the caller.
PetscErrorCode create_newton(MPI_Comm comm, const config::Section &solver_section, Vec r, Mat J,
                             Mat P, PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             KSPType ksp_type, SNES *snes,
                             const LinearTolerances *linear = nullptr);

/// What a Newton solver records of iterate `it` with residual norm ||R|| = norm.
using NewtonRecorder = std::function<PetscErrorCode(SNES snes, PetscInt it, PetscReal norm)>;

/// Installs SNES's convergence test: record(snes, it, norm) for every iterate (where PETSc calls
/// its monitors), then PETSc's decision: SNESConvergedDefault, or SNESConvergedSkip with
/// -snes_convergence_test skip; any other test is refused, naming `solver` ("the steady solver").
/// Called after SNESSetFromOptions, so that, unlike a monitor, no PETSc option removes it.
/// Collective.
PetscErrorCode set_recording_convergence_test(SNES snes, NewtonRecorder record, const char *solver);

/// Sets up ksp (KSPSetUp, with its operators set) and checks that its preconditioner can be
/// applied transposed, as KSPSolveTranspose needs; if not, an error naming the -PREFIXpc_type
/// and the preconditioners that can.  Collective.
PetscErrorCode check_transposed_solve(KSP ksp);

/// When a sequence of linear solves (Newton steps in time, adjoint levels) sets its
/// preconditioner up again instead of reusing the last one; counts the set-ups.  Two rules:
///  * IterationLimit (unsteady forward): reuse while the last solve needed at most
///    `max_iterations` iterations;
///  * MeanCost (unsteady adjoint): reuse while the last solve took at most the mean time per
///    solve since the last set-up (set-up included: the mean cost per solve of a cycle is
///    smallest where the marginal cost reaches it) and at most `max_iterations` iterations.
/// Both set up the first time, after request_setup(), and always when reuse is off.  The times
/// must be the same on every rank (e.g. the maximum), so that every rank decides the same.
class PreconditionerReuse {
public:
  enum class Rule { IterationLimit, MeanCost };

  PreconditionerReuse(Rule rule, int max_iterations, bool reuse = true)
      : rule_(rule), max_iterations_(max_iterations), reuse_(reuse) {}

  /// The next decision sets the preconditioner up (new step size, checkpoint, retry).
  void request_setup() { requested_ = true; }
  /// Records a finished solve: its iterations and wall time [s].
  void record_solve(PetscInt iterations, double seconds);
  /// Whether the next solve sets the preconditioner up (counted when it does).
  bool decide_setup();
  /// Number of set-ups decided so far.
  long setups() const { return setups_; }
  bool reuse_enabled() const { return reuse_; }

private:
  Rule rule_;
  PetscInt max_iterations_;
  bool reuse_;
  bool have_setup_ = false, requested_ = false;
  PetscInt last_iterations_ = 0;
  double last_seconds_ = 0, cycle_seconds_ = 0;
  long cycle_solves_ = 0, setups_ = 0;
};

} // namespace karman::solver
