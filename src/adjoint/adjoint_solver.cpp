// Steady discrete adjoint solve and gradients (see include/karman/adjoint/adjoint_solver.hpp).
#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/adjoint_options.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/solver/linear_solver.hpp"

#include <cstdio>
#include <string>

namespace karman::adjoint {

AdjointSolver::~AdjointSolver() {
  for (KSP *k : {&ksp_, &fallback_})
    if (*k) KSPDestroy(k);
  for (Mat *a : {&J_, &P_, &PT_, &JT_})
    if (*a) MatDestroy(a);
  for (Vec *v : {&g_, &psi_, &check_})
    if (*v) VecDestroy(v);
}

PetscErrorCode AdjointSolver::setup(discretization::FlowResidual &res,
                                    const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  res_ = &res;
  PetscCall(res.create_state(&g_));
  PetscCall(res.create_state(&psi_));
  PetscCall(res.create_state(&check_));
  const AdjointOptions a = adjoint_options().get(cfg);
  const solver::LinearTolerances tol{a.rtol, a.atol, static_cast<PetscInt>(a.max_iterations)};
  // solver.linear: iterative — GMRES on a virtual J^T with the multigrid of P^T
  // (solver::transposed_operators); direct: KSPSolveTranspose with the LU of J
  const solver::LinearChoice choice = solver::linear_choice(cfg);
  const solver::LinearMethod method = choice.method;
  may_fall_back_ = choice.fallback;
  fell_back_ = false;
  tolerances_ = tol;
  const bool iterative = method == solver::LinearMethod::Iterative;
  using Format = discretization::FlowResidual::MatrixFormat;
  PetscCall(res.create_jacobian(&J_, false, iterative ? Format::Block : Format::Point));
  PetscCall(solver::create_linear_solver(res.mesh().comm, solver::LinearSolverRole::Adjoint, method,
                                         solver::LinearSystems::SteadyAdjoint,
                                         solver::system_kind(res), KSPPREONLY, tol, &ksp_));
  if (iterative) {
    PetscCall(res.create_jacobian(&P_, true));
    PetscCall(solver::stop_stalled_solves(ksp_, &stall_));
  } else
    PetscCall(KSPSetOperators(ksp_, J_, J_));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::solve(Vec w, const Objective &objective, AdjointResult *result,
                                    bool same_operator) {
  PetscFunctionBeginUser;
  const double start = MPI_Wtime();
  discretization::FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  discretization::LocalState state;
  PetscCall(res.local_state(discretization::kSteady, w, &state));
  PetscCheck(!same_operator || have_operator_, m.comm, PETSC_ERR_ORDER,
             "AdjointSolver::solve: same_operator needs a previous solve");
  if (!same_operator) {
    PetscCall(res.jacobian(state, J_, nullptr));
    if (P_ && !fell_back_) {
      PetscCall(res.jacobian(state, P_, nullptr, true));
      PetscCall(solver::transposed_operators(J_, P_, true, &JT_, &PT_));
    }
  }
  PetscCall(objective.value(res, state, &result->J));

  // g = dJ/dw (explicit), assembled from every local cell's share into the owners' rows
  Sensitivities sj;
  sj.reset(res);
  PetscCall(objective.reverse(res, state, sj));
  Gradient explicit_part;
  PetscCall(finish(res, state, sj, &explicit_part));
  PetscCall(VecSet(g_, 0.0));
  for (PetscInt c = 0; c < m.n_cells; ++c)
    for (int k = 0; k < nv; ++k) {
      const double v = sj.wbar[c * nv + k];
      if (v == 0) continue;
      const PetscInt row = m.cell_global[c] * nv + k;
      PetscCall(VecSetValue(g_, row, v, ADD_VALUES));
    }
  PetscCall(VecAssemblyBegin(g_));
  PetscCall(VecAssemblyEnd(g_));

  // J^T psi = -g
  PetscCall(VecScale(g_, -1.0));
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscInt its = 0;
  if (!fell_back_) {
    if (!same_operator) { // new operator: the preconditioner (LU factors) is set up again
      if (JT_) {
        PetscCall(KSPSetOperators(ksp_, JT_, PT_));
        PetscCall(solver::set_up_preconditioner(ksp_));
      } else {
        PetscCall(KSPSetOperators(ksp_, J_, J_));
        PetscCall(solver::check_transposed_solve(ksp_));
      }
    }
    PetscCall(solve_iterative(&reason, &its, &result->gmres_restart));
    if (reason < 0) PetscCall(retry_other_shift(&reason, &its, &result->gmres_restart));
    if (reason < 0 && may_fall_back_) {
      // auto: the LU of J, for this solve and the later ones
      PetscCall(solver::announce_fallback(m, "the adjoint solve", KSPConvergedReasons[reason]));
      fell_back_ = true;
      fallback_operator_ = false;
    }
  }
  if (fell_back_) {
    PetscCall(solve_direct(same_operator && fallback_operator_, &reason, &its));
    result->linear_fallback = true;
  }
  have_operator_ = true;
  PetscCheck(reason > 0, m.comm, PETSC_ERR_NOT_CONVERGED,
             "the adjoint linear solve did not converge (%s after %d iterations); try "
             "-adj_ksp_type gmres with a stronger -adj_pc_type, or solver.linear: direct",
             KSPConvergedReasons[reason], (int)its);
  result->linear_iterations = static_cast<int>(its);
  PetscCall(MatMultTranspose(J_, psi_, check_));
  double gnorm, rnorm;
  PetscCall(VecNorm(g_, NORM_2, &gnorm));
  PetscCall(VecAXPY(check_, -1.0, g_));
  PetscCall(VecNorm(check_, NORM_2, &rnorm));
  result->relative_residual = gnorm > 0 ? rnorm / gnorm : 0.0;

  // psi^T dR/d(X, a)
  PetscCall(ghosted_local_values(psi_, &result->psi));
  Sensitivities sr;
  sr.reset(res);
  PetscCall(add_residual(res, state, result->psi, sr));
  PetscCall(finish(res, state, sr, &result->gradient));
  for (std::size_t i = 0; i < result->gradient.parameters.size(); ++i)
    result->gradient.parameters[i].gradient += explicit_part.parameters[i].gradient;
  for (PetscInt v = 0; v < m.n_vertices; ++v) result->gradient.X[v] += explicit_part.X[v];
  result->wall_time = MPI_Wtime() - start;
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::solve_iterative(KSPConvergedReason *reason, PetscInt *its,
                                              int *restart) {
  PetscFunctionBeginUser;
  if (JT_)
    PetscCall(KSPSolve(ksp_, g_, psi_));
  else
    PetscCall(KSPSolveTranspose(ksp_, g_, psi_));
  PetscCall(KSPGetConvergedReason(ksp_, reason));
  PetscCall(KSPGetIterationNumber(ksp_, its));
  PetscInt k;
  PetscCall(solver::gmres_restart(ksp_, &k));
  *restart = static_cast<int>(k);
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::start_shifted() {
  PetscFunctionBeginUser;
  if (fell_back_) PetscFunctionReturn(0);
  bool reshifted = false;
  PetscCall(solver::reshift_smoothers(ksp_, &reshifted));
  if (!reshifted) PetscFunctionReturn(0);
  PetscCall(log_info(res_->mesh().comm,
                     "the adjoint solve: the multigrid's smoothers shift their ILU pivots positive "
                     "definite from the start (the forward's unshifted smoothers did not converge "
                     "either)"));
  // a preconditioner already set up (an earlier solve of the same operator) is set up again
  if (have_operator_ && PT_) PetscCall(mark_preconditioner_stale());
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::mark_preconditioner_stale() {
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(PT_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(PT_, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::retry_other_shift(KSPConvergedReason *reason, PetscInt *its,
                                                int *restart) {
  PetscFunctionBeginUser;
  if (!JT_) PetscFunctionReturn(0);
  bool reshifted = false, unshifted = false;
  PetscCall(solver::reshift_smoothers(ksp_, &reshifted));
  if (!reshifted) PetscCall(solver::unshift_smoothers(ksp_, &unshifted));
  if (!reshifted && !unshifted) PetscFunctionReturn(0);
  char why[160];
  if (stall_.stalled)
    std::snprintf(why, sizeof(why),
                  "stalled: %.2f decades per %d iterations in its first %d, %.2f needed",
                  stall_.gained, static_cast<int>(stall_.cycle),
                  static_cast<int>(stall_.cycle * stall_.cycles), stall_.needed);
  else
    std::snprintf(why, sizeof(why), "%s after %d iterations", KSPConvergedReasons[*reason],
                  static_cast<int>(*its));
  PetscCall(log_info(res_->mesh().comm,
                     "the adjoint solve with the multigrid did not converge (%s): again with its "
                     "smoothers' ILU pivots shifted %s",
                     why, reshifted ? "positive definite" : "only where zero"));
  // the same operators: the preconditioner is set up again for the new shift
  PetscCall(mark_preconditioner_stale());
  PetscCall(solver::set_up_preconditioner(ksp_));
  const PetscInt before = *its;
  PetscCall(solve_iterative(reason, its, restart));
  *its += before;
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::solve_direct(bool same_operator, KSPConvergedReason *reason,
                                           PetscInt *its) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  if (!fallback_)
    PetscCall(solver::create_linear_solver(
        m.comm, solver::LinearSolverRole::AdjointFallback, solver::LinearMethod::Direct,
        solver::LinearSystems::SteadyAdjoint, solver::system_kind(*res_), KSPPREONLY, tolerances_,
        &fallback_));
  if (!same_operator) {
    PetscCall(KSPSetOperators(fallback_, J_, J_));
    PetscCall(solver::check_transposed_solve(fallback_));
    fallback_operator_ = true;
  }
  PetscCall(KSPSolveTranspose(fallback_, g_, psi_));
  PetscCall(KSPGetConvergedReason(fallback_, reason));
  PetscCall(KSPGetIterationNumber(fallback_, its));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
