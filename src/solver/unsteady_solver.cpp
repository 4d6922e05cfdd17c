// Implicit BDF time stepping (see include/karman/solver/unsteady_solver.hpp).
#include "karman/solver/unsteady_solver.hpp"

#include "karman/core/logger.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/step_size.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>

namespace karman::solver {

BdfCoefficients bdf_coefficients(int order, double dt, double dt_prev) {
  BdfCoefficients c;
  if (order == 1 || dt_prev <= 0) {
    c.a0 = 1.0 / dt, c.a1 = -1.0 / dt, c.a2 = 0.0;
    return c;
  }
  const double w = dt / dt_prev;
  c.a0 = (1 + 2 * w) / ((1 + w) * dt);
  c.a1 = -(1 + w) / dt;
  c.a2 = w * w / ((1 + w) * dt);
  return c;
}

double truncation_error_factor(double dt, double dt_prev, double dt_prev2) {
  // With the BDF2 coefficients a0, a1, a2 of the step (a0 + a1 + a2 = 0, exact for linear y), the
  // exact solution leaves the residual a0 y(t+h) + a1 y(t) + a2 y(t-h1) - y'(t+h) =
  // y'''/6 (a1 (-h)^3 + a2 (-(h+h1))^3), so the step's error is L = y'''/6 E with
  // E = -(a1 h^3 + a2 (h+h1)^3) / a0.  The quadratic through t, t-h1, t-h1-h2 misses y(t+h) by
  // y'''/6 Q with Q = h (h+h1) (h+h1+h2).  Hence w - w_pred = y'''/6 (Q - E) and
  // L = E / (Q - E) (w - w_pred); for equal steps E = -4/3 h^3, Q = 6 h^3: |L| = 2/11 |w - w_pred|.
  const double h = dt, h1 = dt_prev, h2 = dt_prev2;
  const BdfCoefficients c = bdf_coefficients(2, h, h1);
  const double E = -(c.a1 * h * h * h + c.a2 * (h + h1) * (h + h1) * (h + h1)) / c.a0;
  const double Q = h * (h + h1) * (h + h1 + h2);
  return std::abs(E / (Q - E));
}

UnsteadySolver::~UnsteadySolver() {
  for (SNES *s : {&snes_, &fallback_})
    if (*s) SNESDestroy(s);
  if (J_) MatDestroy(&J_);
  if (P_) MatDestroy(&P_);
  for (Vec *v : {&w_, &w_prev_, &w_prev2_, &w_new_, &r_, &w_pred_, &w_last_})
    if (*v) VecDestroy(v);
}

namespace {
/// What a time step's preconditioner reuse compares with: forward tolerances, the fewest
/// iterations since the set-up; a set-up at a step converged to solver.rtol (the first ones, those
/// after a restart point) has a first solve far from the later one-iteration steps' (an impulsive
/// start: 100 and more iterations against 20-40), and a limit from it kept a worn multigrid for
/// the whole run (the rotary cylinder's spin-up: 41 iterations per step instead of 34).
PreconditionerReuse::Reference reuse_reference(bool forward) {
  return forward ? PreconditionerReuse::Reference::Fewest : PreconditionerReuse::Reference::First;
}
} // namespace

PetscErrorCode UnsteadySolver::setup(discretization::FlowResidual &residual,
                                     const config::CaseConfig &cfg, StepPurpose purpose) {
  PetscFunctionBeginUser;
  res_ = &residual;
  const SolverOptions s = solver_options().get(cfg);
  const TimeOptions time = time_options().get(cfg);
  scheme_ = time.scheme;
  PetscCheck(!time.adaptive() || scheme_ == TimeScheme::Bdf2, residual.mesh().comm,
             PETSC_ERR_USER_INPUT,
             "%s: time.dt: auto controls the error estimate of BDF2 steps; use time.scheme: bdf2 "
             "or a fixed time.dt",
             cfg.file().c_str());
  if (time.adaptive()) { // (values per time level: the levels' times are known after the run)
    const discretization::ParameterRegistry reg(residual);
    for (std::size_t i = 0; i < reg.size(); ++i) {
      const physics::TimeFunction *f = reg.time_function(residual, i);
      PetscCheck(!f || f->kind() != physics::TimeFunction::Kind::Steps, residual.mesh().comm,
                 PETSC_ERR_USER_INPUT,
                 "%s: %s has values per time step (type: steps), which need a fixed time.dt: "
                 "with time.dt: auto the steps' times are known only after the run",
                 cfg.file().c_str(), reg.spec(i).name.c_str());
    }
  }
  control_.reset(time.adaptive()
                     ? new StepSizeController(time.tolerance, time.first_dt(), time.smallest_dt())
                     : nullptr);
  forward_ = s.tolerances == StepTolerances::Forward ||
             (s.tolerances == StepTolerances::Auto && purpose == StepPurpose::ForwardOnly);
  // iterative: J in blocks, multigrid on the compact matrix; direct: LU of the exact or the
  // compact Jacobian
  const LinearChoice choice = linear_choice(cfg);
  const LinearMethod method = choice.method;
  may_fall_back_ = choice.fallback;
  fallbacks_ = 0;
  dual_enabled_ = s.continuation == Continuation::Adaptive ||
                  (s.continuation == Continuation::Auto && residual.has_turbulence_model());
  dual_steps_ = 0;
  dual_.reset();
  cfg_ = std::make_unique<config::CaseConfig>(cfg);
  PetscCall(
      log_info(residual.mesh().comm, "time steps: linear solver %s", describe(choice).c_str()));
  options_ = s;
  PetscCall(residual.create_jacobian(&J_, false,
                                     method == LinearMethod::Iterative
                                         ? discretization::FlowResidual::MatrixFormat::Block
                                         : discretization::FlowResidual::MatrixFormat::Point));
  if (method == LinearMethod::Iterative || s.preconditioner_matrix == PreconditionerMatrix::Compact)
    PetscCall(residual.create_jacobian(&P_, true));
  for (Vec *v : {&w_, &w_prev_, &w_prev2_, &w_new_, &r_, &w_pred_, &w_last_})
    PetscCall(residual.create_state(v));
  // inexact Newton: each linear solve gains a few digits (solver.linear_rtol), Newton iterates to
  // solver.rtol/atol
  const LinearTolerances linear{s.linear_rtol, s.linear_atol,
                                static_cast<PetscInt>(s.linear_max_iterations)};
  PetscCall(create_newton(residual.mesh().comm, s, r_, J_, P_ ? P_ : J_, form_function,
                          form_jacobian, this, method, LinearSystems::TimeStepping,
                          mesh_kind(residual.mesh()), KSPGMRES, &snes_, &linear));
  KSP ksp;
  PetscCall(SNESGetKSP(snes_, &ksp));
  PetscCall(SNESSetFromOptions(snes_));
  PetscCall(set_convergence_test(snes_));
  // forward tolerances: every linear solve to 1e-2 (the steps converged to solver.rtol, the
  // first and those after a restart point, take a few more Newton iterations)
  PetscReal atol, dtol;
  PetscInt maxit;
  PetscCall(KSPGetTolerances(ksp, &linear_rtol_, &atol, &dtol, &maxit));
  if (forward_)
    PetscCall(KSPSetTolerances(ksp, std::max(linear_rtol_, kForwardLinearRtol), atol, dtol, maxit));
  PetscCall(log_info(
      residual.mesh().comm, "time steps: %s (solver.tolerances %s)",
      forward_ ? "a Newton solve stops when its error is below 1/10 of the step's truncation "
                 "error estimate, or at solver.rtol; linear solves to 1e-2, the preconditioner "
                 "set up again after solver.refactor_iterations scaled to their digits"
               : "Newton to solver.rtol/atol",
      s.tolerances == StepTolerances::Auto
          ? (forward_ ? "auto: forward-only run" : "auto: converged steps for the gradient")
          : (forward_ ? "forward" : "converged")));
  // reuse only makes sense with a Krylov method around the preconditioner
  KSPType type;
  PetscCall(KSPGetType(ksp, &type));
  const bool reuse = std::string(type) != KSPPREONLY;
  // forward tolerances: the linear solves gain log(1e-2) / log(linear_rtol) as many digits (half
  // at the default 1e-4), so a preconditioner is as worn at that fraction of the iterations
  const double digits = forward_ && linear_rtol_ < kForwardLinearRtol
                            ? std::log(kForwardLinearRtol) / std::log(linear_rtol_)
                            : 1.0;
  const int threshold = std::max(
      1, static_cast<int>(std::lround(static_cast<double>(s.refactor_iterations) * digits)));
  pc_reuse_ = PreconditionerReuse(threshold, kReuseGrowth, reuse, reuse_reference(forward_));
  pc_setup_a0_ = 0;
  PetscCheck(reuse || method == LinearMethod::Direct, residual.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: -ksp_type preonly would apply one multigrid cycle as the inverse of each "
             "Newton step's Jacobian; with solver.linear %s use a Krylov method (the default "
             "GMRES), or solver.linear: direct",
             cfg.file().c_str(), choice.fallback ? "auto" : "iterative");
  PetscCheck(
      reuse || !P_, residual.mesh().comm, PETSC_ERR_USER_INPUT,
      "%s: solver.preconditioner_matrix 'compact' needs a Krylov method around the factorization "
      "(-ksp_type gmres, the default); with -ksp_type preonly use solver.preconditioner_matrix: "
      "exact",
      cfg.file().c_str());
  history_.assign(residual.mesh().n_owned_cells * residual.nv(), 0.0);
  shift_.assign(residual.mesh().n_owned_cells, 0.0);
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::set_convergence_test(SNES snes) {
  PetscFunctionBeginUser;
  // the residual history is recorded by the convergence test, set after SNESSetFromOptions:
  // unlike a monitor, PETSc options (-snes_monitor_cancel) cannot remove it
  PetscCall(set_recording_convergence_test(
      snes,
      [this](SNES, PetscInt, PetscReal norm) -> PetscErrorCode {
        if (report_) report_->residual_history.push_back(norm);
        return 0;
      },
      "unsteady solver",
      [this](SNES snes, PetscInt, PetscReal, bool *stop) { return truncation_stop(snes, stop); }));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::transient_norm(Vec a, Vec b, bool largest, double *norm) const {
  PetscFunctionBeginUser;
  // the rows with a time derivative only: the truncation error of BDF2 is that of the
  // differential unknowns; the pressure is an algebraic unknown (as IDA's suppressalg)
  const physics::EquationSet &eq = res_->equations();
  const int nv = res_->nv();
  const PetscScalar *x, *y = nullptr;
  PetscCall(VecGetArrayRead(a, &x));
  if (b) PetscCall(VecGetArrayRead(b, &y));
  double v = 0;
  for (PetscInt c = 0; c < res_->mesh().n_owned_cells; ++c)
    for (int k = 0; k < nv; ++k)
      if (eq.transient(k)) {
        const double d = x[c * nv + k] - (y ? y[c * nv + k] : 0.0);
        v = largest ? std::max(v, std::abs(d)) : v + d * d;
      }
  PetscCall(VecRestoreArrayRead(a, &x));
  if (b) PetscCall(VecRestoreArrayRead(b, &y));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, largest ? MPI_MAX : MPI_SUM,
                             res_->mesh().comm));
  *norm = largest ? v : std::sqrt(v);
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::linear_algebraic_guess(double dt) {
  PetscFunctionBeginUser;
  // the algebraic unknowns (the pressure) of the initial guess: the line through the last two
  // levels, w^n + r (w^n - w^{n-1}) with r = dt / dt_{n-1}.  The pressure has no time derivative:
  // the error a step stopped early (forward tolerances) leaves in it is not damped by the time
  // discretization but fed into the next guess.  If each step leaves a fraction k of its guess's
  // error, the errors e_{n+1} = k (3 e_n - 3 e_{n-1} + e_{n-2}) of the quadratic grow unless
  // -1/7 < k < 1/2; those of the line, k (2 e_n - e_{n-1}), for -1/3 < k < 1.  After an
  // impulsive start the quadratic made the forces swing from step to step (c_D -15 ... 11
  // against 1.59 converged).  The transient unknowns keep the quadratic (the truncation error
  // estimate needs it, and their errors are damped by the time derivative)
  const physics::EquationSet &eq = res_->equations();
  const int nv = res_->nv();
  const double r = dt / dt_prev_;
  PetscScalar *g;
  const PetscScalar *a, *b;
  PetscCall(VecGetArray(w_new_, &g));
  PetscCall(VecGetArrayRead(w_, &a));
  PetscCall(VecGetArrayRead(w_prev_, &b));
  for (PetscInt c = 0; c < res_->mesh().n_owned_cells; ++c)
    for (int k = 0; k < nv; ++k)
      if (!eq.transient(k)) {
        const PetscInt i = c * nv + k;
        g[i] = (1 + r) * a[i] - r * b[i];
      }
  PetscCall(VecRestoreArray(w_new_, &g));
  PetscCall(VecRestoreArrayRead(w_, &a));
  PetscCall(VecRestoreArrayRead(w_prev_, &b));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::truncation_stop(SNES snes, bool *stop) {
  PetscFunctionBeginUser;
  *stop = false;
  if (!truncation_active_ || !report_ || report_->residual_history.size() < 2)
    PetscFunctionReturn(0);
  // the error left in the iterate: its correction (w_last_: the iterate before) times the
  // contraction of this iteration, measured by the residual (||R_k|| / ||R_{k-1}||)
  const std::vector<double> &h = report_->residual_history;
  const double contraction = h[h.size() - 1] / h[h.size() - 2];
  Vec w;
  double correction, distance;
  PetscCall(SNESGetSolution(snes, &w));
  PetscCall(transient_norm(w, w_last_, false, &correction));
  PetscCall(transient_norm(w, w_pred_, false, &distance));
  PetscCall(VecCopy(w, w_last_));
  *stop = contraction < 1 &&
          contraction * correction <= kTruncationFraction * truncation_factor_ * distance;
  if (*stop && report_) report_->truncation_stop = true;
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::set_state(Vec w, Vec w_prev, long step, double time,
                                         double dt_prev) {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(w, w_));
  PetscCall(VecCopy(w_prev ? w_prev : w, w_prev_));
  step_ = step;
  time_ = time;
  dt_prev_ = dt_prev;
  dt_prev2_ = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::form_function(SNES, Vec w, Vec R, void *ctx) {
  PetscFunctionBeginUser;
  auto *self = static_cast<UnsteadySolver *>(ctx);
  const double start = MPI_Wtime();
  PetscCall(self->res_->residual(self->target_, w, R, &self->term_));
  if (self->report_) self->report_->residual_time += MPI_Wtime() - start;
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::form_jacobian(SNES snes, Vec w, Mat J, Mat P, void *ctx) {
  PetscFunctionBeginUser;
  auto *self = static_cast<UnsteadySolver *>(ctx);
  double start = MPI_Wtime();
  PetscCall(self->res_->jacobian(self->target_, w, J, &self->shift_));
  // decide whether the preconditioner built from an earlier Jacobian is still good enough, from
  // the iterations of the last linear solve
  KSP ksp;
  PetscInt its;
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  self->pc_reuse_.record_solve(its);
  const bool pc_setup = self->pc_reuse_.decide_setup();
  // SNES applies its preconditioner lag right after this callback: -2 rebuilds once, -1 reuses
  PetscCall(SNESSetLagPreconditioner(snes, pc_setup ? -2 : -1));
  if (pc_setup && P != J) PetscCall(self->res_->jacobian(self->target_, w, P, &self->shift_, true));
  if (self->report_) self->report_->jacobian_time += MPI_Wtime() - start;
  if (pc_setup) { // here rather than in the linear solve (set_up_preconditioner)
    start = MPI_Wtime();
    PetscCall(KSPSetOperators(ksp, J, P));
    PetscCall(set_up_preconditioner(ksp));
    if (self->report_) {
      self->report_->pc_setup_time += MPI_Wtime() - start;
      self->report_->preconditioner_setup = true;
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::prepare_step(double dt, const BdfCoefficients &bdf) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  bdf_ = bdf;
  // history h = a1 w^n + a2 w^{n-1} (momentum entries), shift rho V a0
  const PetscScalar *a, *b;
  PetscCall(VecGetArrayRead(w_, &a));
  PetscCall(VecGetArrayRead(w_prev_, &b));
  for (PetscInt i = 0; i < m.n_owned_cells * nv; ++i) history_[i] = bdf_.a1 * a[i] + bdf_.a2 * b[i];
  PetscCall(VecRestoreArrayRead(w_, &a));
  PetscCall(VecRestoreArrayRead(w_prev_, &b));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    shift_[c] = res_->parameters().rho * res_->geometry().cell_volume[c] * bdf_.a0;
  term_.a0 = bdf_.a0;
  term_.history = &history_;
  // initial guess: the polynomial through the last three levels (or two) at t^{n+1}; with
  // h = dt, h1 = dt_{n-1}, h2 = dt_{n-2} the Lagrange weights of w^n, w^{n-1}, w^{n-2} (3, -3, 1
  // for equal steps).  Its error is O(dt^3) instead of the linear guess's O(dt^2), so the first
  // Newton iteration lands closer.  The pressure then takes the line (linear_algebraic_guess).
  PetscCall(VecCopy(w_, w_new_));
  quadratic_guess_ = dt_prev2_ > 0 && bdf.a2 != 0;
  if (dt_prev2_ > 0) { // (then w^{n-1} and dt_prev_ are known too)
    const double h = dt, h1 = dt_prev_, h2 = dt_prev2_;
    const double cn = (h + h1) * (h + h1 + h2) / (h1 * (h1 + h2));
    const double c1 = -h * (h + h1 + h2) / (h1 * h2);
    const double c2 = h * (h + h1) / ((h1 + h2) * h2);
    PetscCall(VecAXPBYPCZ(w_new_, c1, c2, cn, w_prev_, w_prev2_));
    PetscCall(linear_algebraic_guess(dt));
  } else if (step_ > 0 && dt_prev_ > 0) {
    PetscCall(VecAXPY(w_new_, dt / dt_prev_, w_));
    PetscCall(VecAXPY(w_new_, -dt / dt_prev_, w_prev_));
  }
  if (quadratic_guess_) {
    truncation_factor_ = truncation_error_factor(dt, dt_prev_, dt_prev2_);
    PetscCall(VecCopy(w_new_, w_pred_));
    PetscCall(VecCopy(w_new_, w_last_));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::solve_step(SNES snes, double dt, const BdfCoefficients &bdf,
                                          StepReport *report) {
  PetscFunctionBeginUser;
  PetscCall(prepare_step(dt, bdf));
  // forward tolerances: the truncation stop, where the guess allows it
  truncation_active_ = forward_ && quadratic_guess_;
  report_ = report;
  report->truncation_stop = false;
  const double start = MPI_Wtime();
  const double before = report->residual_time + report->jacobian_time + report->pc_setup_time;
  PetscCall(SNESSolve(snes, nullptr, w_new_));
  report->linear_solve_time +=
      MPI_Wtime() - start -
      (report->residual_time + report->jacobian_time + report->pc_setup_time - before);
  report_ = nullptr;
  SNESConvergedReason reason;
  PetscInt its, lits;
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetIterationNumber(snes, &its));
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  report->converged = reason > 0;
  report->reason = report->truncation_stop ? kConvergedTruncation : SNESConvergedReasons[reason];
  PetscCall(estimate_errors(report));
  // a step whose line search or linear solve cannot lower a residual already at the round-off
  // floor has converged (a URANS run from its converged steady state: the first step's residual
  // 2.3e-11 against atol 1e-12, and GMRES cannot gain 1e-2 on it)
  if ((reason == SNES_DIVERGED_LINE_SEARCH || reason == SNES_DIVERGED_LINEAR_SOLVE) &&
      !report->residual_history.empty()) {
    PetscReal atol, rtol, stol;
    PetscInt maxit, maxf;
    PetscCall(SNESGetTolerances(snes, &atol, &rtol, &stol, &maxit, &maxf));
    if (at_roundoff_floor(report->residual_history.front(), report->residual_history.back(),
                          atol)) {
      report->converged = true;
      report->reason = kConvergedRoundoff;
    }
  }
  report->newton_iterations += static_cast<int>(its);
  report->linear_iterations += static_cast<int>(lits); // counted per SNESSolve
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::estimate_errors(StepReport *report) {
  PetscFunctionBeginUser;
  report->truncation_error = 0;
  report->relative_error = -1;
  if (quadratic_guess_) {
    double distance;
    PetscCall(transient_norm(w_new_, w_pred_, false, &distance));
    report->truncation_error = truncation_factor_ * distance;
  }
  // the step-size control's measure: the largest error of an unknown against the largest
  // unknown (a 2-norm would be diluted by the cells where nothing happens, so that the same
  // flow in a longer domain would get longer steps).  None while the extrapolation reaches back to
  // the initial level 0: the user's initial field (e.g. at rest against an inflow) solves
  // neither the boundary conditions nor continuity, and its jump to the first step's solution is
  // no truncation error (a step size chosen from it would be needlessly small)
  if (quadratic_guess_ && step_ >= 3) {
    double largest_error, largest;
    PetscCall(transient_norm(w_new_, w_pred_, true, &largest_error));
    PetscCall(transient_norm(w_new_, nullptr, true, &largest));
    report->relative_error = truncation_factor_ * largest_error / std::max(largest, 1e-300);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::fall_back(double dt, const BdfCoefficients &bdf,
                                         StepReport *report) {
  PetscFunctionBeginUser;
  const discretization::FlowResidual &residual = *res_;
  const std::string reason = report->reason;
  char what[96];
  std::snprintf(what, sizeof(what), "the Newton solve of time step %ld (t = %.6g)", report->step,
                report->time);
  PetscCall(announce_fallback(residual.mesh(), what, reason.c_str()));
  if (!fallback_) {
    // GMRES on the exact Jacobian, the LU of the compact matrix (solver.linear: direct's default)
    const LinearTolerances linear{options_.linear_rtol, options_.linear_atol,
                                  static_cast<PetscInt>(options_.linear_max_iterations)};
    PetscCall(create_newton(residual.mesh().comm, options_, r_, J_, P_, form_function,
                            form_jacobian, this, LinearMethod::Direct, LinearSystems::TimeStepping,
                            mesh_kind(residual.mesh()), KSPGMRES, &fallback_, &linear));
    PetscCall(SNESSetOptionsPrefix(fallback_, options_prefix(LinearSolverRole::NewtonFallback)));
    PetscCall(SNESSetFromOptions(fallback_));
    PetscCall(set_convergence_test(fallback_));
  }
  pc_reuse_.request_setup();
  report->residual_history.clear();
  PetscCall(solve_step(fallback_, dt, bdf, report));
  report->linear_fallback = true;
  report->iterative_reason = reason;
  ++fallbacks_;
  if (fallbacks_ >= kStickyFallbacks)
    PetscCall(log_info(residual.mesh().comm,
                       "solver.linear: auto: %d time steps needed the direct LU; the run keeps it",
                       fallbacks_));
  // the multigrid of the next step is set up afresh
  pc_reuse_.request_setup();
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::dual_step(double dt, const BdfCoefficients &bdf,
                                         StepReport *report) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = res_->mesh().comm;
  if (!dual_) {
    dual_ = std::make_unique<SteadySolver>();
    PetscCall(dual_->setup(*res_, *cfg_, false));
    // the step's multigrid-preconditioned GMRES did not converge: the continuation's would not
    // either (cases/naca0012-rans/urans-verify.yaml, step 1: its multigrid continuation ran ~100
    // s to DIVERGED_DTOL before the LU's converged in 15 pseudo-time steps)
    if (may_fall_back_ && report->reason == SNESConvergedReasons[SNES_DIVERGED_LINEAR_SOLVE])
      PetscCall(dual_->start_direct());
  }
  const std::string reason = report->reason;
  PetscCall(prepare_step(dt, bdf)); // the initial guess again (the failed iterates are lost)
  // the step's equations; their round-off floor includes the time term rho V a0 w, large in
  // large cells (cases/naca0012-rans, level 0: cells of up to 1.5e4 at dt 0.05 make |R| stall
  // near 2e-10 = 0.2 eps |rho V a0 w|_2, solver.atol 1e-12; SteadySolver::roundoff_floor)
  dual_->set_time_step(target_, &term_);
  SteadySummary summary;
  const std::function<PetscErrorCode(const NewtonRecord &, Vec)> none;
  const double start = MPI_Wtime();
  PetscCall(dual_->solve(w_new_, none, nullptr, &summary));
  dual_->set_time_step(discretization::kSteady, nullptr);
  report->dual_time_stepping = true;
  report->dual_reason = reason.empty() ? "skipped" : reason;
  report->converged = summary.converged;
  report->reason = summary.reason;
  report->truncation_stop = false;
  PetscCall(estimate_errors(report));
  report->residual_history.clear();
  for (const NewtonRecord &r : summary.history) {
    report->residual_history.push_back(r.residual);
    report->linear_iterations += r.linear_iterations;
  }
  report->newton_iterations += summary.iterations;
  report->linear_solve_time += MPI_Wtime() - start;
  pc_reuse_.request_setup(); // the step's own preconditioner is stale
  if (summary.converged) ++dual_steps_;
  PetscCall(log_info(comm,
                     "time step %ld: %s; dual time stepping (pseudo-time continuation of the "
                     "step's equations): %s in %d pseudo-time steps, |R| %.3e -> %.3e "
                     "(round-off floor %.1e)%s",
                     step_ + 1,
                     reason.empty()
                         ? "started with dual time stepping (the last steps needed it)"
                         : ("its Newton solve did not converge (" + reason + ")").c_str(),
                     summary.converged ? "converged" : "did not converge", summary.iterations,
                     summary.initial_residual, summary.final_residual,
                     summary.history.empty() ? 0.0 : summary.history.back().roundoff_floor,
                     summary.linear_fallback ? " (with the LU)" : ""));
  if (dual_steps_ == kStickyFallbacks && summary.converged)
    PetscCall(log_info(comm,
                       "time steps: %d steps needed dual time stepping; the next ones start "
                       "with it",
                       dual_steps_));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadySolver::advance(double dt, StepReport *report, double max_relative_error) {
  PetscFunctionBeginUser;
  const double start = MPI_Wtime();
  *report = StepReport();
  const int order = (scheme_ == TimeScheme::Bdf1 || step_ == 0) ? 1 : 2;
  report->step = step_ + 1;
  report->time = time_ + dt;
  report->dt = dt;
  report->order = order;
  target_ = discretization::TimeLevel{time_ + dt, step_ + 1};
  PetscCall(res_->boundary_data(target_)); // (a per-step value missing for n + 1: an error here)
  // a new time coefficient (a new step size, BDF1 -> BDF2): the old preconditioner's diagonal is
  // wrong
  const BdfCoefficients bdf = bdf_coefficients(order, dt, dt_prev_);
  if (bdf.a0 != pc_setup_a0_) pc_reuse_.request_setup();
  const bool lu = may_fall_back_ && fallbacks_ >= kStickyFallbacks;
  if (dual_enabled_ && dual_steps_ >= kStickyFallbacks) {
    // the last steps all needed dual time stepping: the failing Newton solve is skipped
    PetscCall(dual_step(dt, bdf, report));
  } else {
    PetscCall(solve_step(lu ? fallback_ : snes_, dt, bdf, report));
  }
  if (!report->converged && !report->dual_time_stepping && pc_reuse_.reuse_enabled() &&
      !report->preconditioner_setup) {
    // the reused preconditioner may have been too old: once more with a fresh one
    pc_reuse_.request_setup();
    report->residual_history.clear();
    PetscCall(solve_step(lu ? fallback_ : snes_, dt, bdf, report));
  }
  report->linear_fallback = lu && !report->dual_time_stepping;
  if (!report->converged && dual_enabled_ && !report->dual_time_stepping)
    PetscCall(dual_step(dt, bdf, report)); // (its solver falls back to the LU itself)
  else if (!report->converged && may_fall_back_ && !lu)
    PetscCall(fall_back(dt, bdf, report));
  if (!report->residual_history.empty()) {
    report->initial_residual = report->residual_history.front();
    report->final_residual = report->residual_history.back();
  }
  if (report->converged) pc_setup_a0_ = report->preconditioner_setup ? bdf.a0 : pc_setup_a0_;
  report->rejected = report->converged && report->relative_error > max_relative_error;
  if (report->converged && !report->rejected) {
    PetscCall(VecCopy(w_prev_, w_prev2_));
    dt_prev2_ = dt_prev_;
    PetscCall(VecCopy(w_, w_prev_));
    PetscCall(VecCopy(w_new_, w_));
    step_ += 1;
    time_ += dt;
    dt_prev_ = dt;
  }
  report->wall_time = MPI_Wtime() - start;
  PetscFunctionReturn(0);
}

} // namespace karman::solver
