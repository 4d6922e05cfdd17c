// Steady discrete adjoint (src/adjoint/README.md, eqs. 3-7):
//   (dR/dw)^T psi = -(dJ/dw)^T            at the converged state w,
//   dJ/da = dJ/da|_explicit + psi^T dR/da for every named parameter a,
//   dJ/dX = dJ/dX|_explicit + psi^T dR/dX for the vertex coordinates X.
// The transposed solve uses the exact Jacobian (the Newton matrix) through
// KSPSolveTranspose with the options prefix adj_ (default: LU with MUMPS, tolerances
// adjoint.rtol, atol, max_iterations; solver/linear_solver.hpp); a preconditioner that cannot
// be applied transposed is reported with the options that can.  With solver.linear: auto
// (iterative: GMRES(150), solver::kSteadyAdjointRestart) a solve that stops unconverged is done
// again by KSPSolveTranspose with the LU of J (options prefix adj_fallback_, if the factors fit in
// memory), and the solver keeps the LU for its later solves (AdjointResult::linear_fallback).
// Before the LU: GMRES stops at the end of a cycle when at the average rate of its cycles it
// cannot reach its tolerance (solver::stop_stalled_solves), and a stalled or unconverged solve is
// done once more with the multigrid's smoothers shifting their ILU pivots positive definite
// (solver::reshift_smoothers; the steady adjoint's default shifts only zero pivots).  DFG 2D-1
// on anisotropic triangles (level 2, 89k cells, non-orthogonality 85 deg, 2 ranks): the default
// smoothers gain 0.7 decade in 150 iterations and stagnate (before: 1000 iterations, then the
// LU's 1.7 GiB); stopped there and shifted, GMRES converges in 291 more, 30.9 s in all.  Where
// the forward's own unshifted smoothers failed (its shift restored), the adjoint of its state
// starts with the shift (start_shifted; then the retry is with zero pivots only).
#pragma once

#include "karman/adjoint/objective.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petscksp.h>

namespace karman::adjoint {

struct AdjointResult {
  double J = 0;      ///< objective value
  Gradient gradient; ///< dJ/da and dJ/dX
  int linear_iterations = 0;
  double relative_residual = 0; ///< |J^T psi + g| / |g|
  double wall_time = 0;
  std::vector<double> psi;      ///< adjoint, nv per local cell (ghosts updated)
  bool linear_fallback = false; ///< solved by auto's LU after the iterative solve failed
  int gmres_restart = 0;        ///< the iterative solve's GMRES restart at its end (0: not GMRES)
};

class AdjointSolver {
public:
  AdjointSolver() = default;
  AdjointSolver(const AdjointSolver &) = delete;
  AdjointSolver &operator=(const AdjointSolver &) = delete;
  ~AdjointSolver();

  /// Creates the matrix and the transposed solver (-adj_ksp_type, -adj_pc_type ...; tolerances
  /// from the case's adjoint section).  Collective.
  PetscErrorCode setup(discretization::FlowResidual &res, const config::CaseConfig &cfg);
  /// Objective, adjoint and gradient at the converged state w.  With `same_operator` the
  /// Jacobian and the preconditioner (the LU factors) of the previous solve are reused: the
  /// caller promises that neither w nor the residual (coordinates, parameters) changed since
  /// then (several objectives at one state: one factorization, one triangular solve each).
  /// Collective.
  PetscErrorCode solve(Vec w, const Objective &objective, AdjointResult *result,
                       bool same_operator = false);
  Mat jacobian() const { return J_; }
  /// The next iterative solve starts with the multigrid's smoothers shifting their ILU pivots
  /// positive definite (solver::reshift_smoothers) instead of the steady adjoint's zero pivots
  /// only: for the state of a forward solve whose unshifted smoothers did not converge either
  /// (SteadySummary::smoothers_reshifted).  DFG 2D-1 on anisotropic triangles, level 2, 2 ranks:
  /// 293 GMRES iterations, 15.1 s, instead of 150 stalled unshifted + 293 shifted, 21.3 s.  A
  /// solve that fails so is retried with zero pivots only (retry_other_shift).  Nothing for the
  /// LU or a user's shift.  Collective.
  PetscErrorCode start_shifted();

private:
  discretization::FlowResidual *res_ = nullptr;
  Mat J_ = nullptr;
  /// iterative: the compact matrix P, its transpose PT and JT = J^T (MATTRANSPOSEVIRTUAL); the KSP
  /// solves JT psi = -g with the preconditioner built from PT (untransposed kernels)
  Mat P_ = nullptr, PT_ = nullptr, JT_ = nullptr;
  KSP ksp_ = nullptr;
  KSP fallback_ = nullptr;         ///< auto's LU of J (after an iterative solve failed)
  bool may_fall_back_ = false;     ///< solver.linear: auto
  bool fell_back_ = false;         ///< later solves use fallback_
  bool fallback_operator_ = false; ///< fallback_ holds the factors of the current J_
  solver::LinearTolerances tolerances_;
  /// The iterative transposed solve (ksp_): its reason, iterations and GMRES restart (0: not
  /// GMRES).
  PetscErrorCode solve_iterative(KSPConvergedReason *reason, PetscInt *its, int *restart);
  /// After an iterative solve that failed (reason, its): the smoothers' positive-definite shift
  /// (if karman's default left them unshifted; or, if they had it from start_shifted or an
  /// earlier retry, zero pivots only again), the preconditioner set up again and the solve
  /// repeated; *its accumulates.  Nothing if the shift cannot change.  Collective.
  PetscErrorCode retry_other_shift(KSPConvergedReason *reason, PetscInt *its, int *restart);
  /// Marks the preconditioning matrix changed (an assembly), so that the next solve sets the
  /// preconditioner up again, for the smoothers' new pivot shift on the same operators.
  PetscErrorCode mark_preconditioner_stale();
  solver::StallReport stall_; ///< what ksp_'s stall test measured in its last solve
  /// The transposed solve by the LU of J (fallback_, set up unless `same_operator`).
  PetscErrorCode solve_direct(bool same_operator, KSPConvergedReason *reason, PetscInt *its);
  Vec g_ = nullptr, psi_ = nullptr, check_ = nullptr;
  bool have_operator_ = false; ///< J_ and the preconditioner hold a previous solve's
};

} // namespace karman::adjoint
