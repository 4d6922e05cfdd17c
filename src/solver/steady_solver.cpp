// Steady Newton solver with pseudo-transient continuation (see
// include/karman/solver/steady_solver.hpp).
#include "karman/solver/steady_solver.hpp"
#include "karman/solver/solver_options.hpp"

#include "karman/core/logger.hpp"
#include "karman/solver/linear_solver.hpp"

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace karman::solver {

SteadySolver::~SteadySolver() {
  for (SNES *s : {&snes_, &fallback_})
    if (*s) SNESDestroy(s);
  if (J_) MatDestroy(&J_);
  if (P_) MatDestroy(&P_);
  for (Vec *v : {&r_, &w0_, &merit_})
    if (*v) VecDestroy(v);
}

PetscErrorCode SteadySolver::setup(discretization::FlowResidual &residual,
                                   const config::CaseConfig &cfg, bool announce) {
  PetscFunctionBeginUser;
  res_ = &residual;
  const SolverOptions s = solver_options().get(cfg);
  cfl_max_ = s.cfl_max;
  options_ = s;
  PetscCall(residual.create_state(&r_));
  adaptive_ = s.continuation == Continuation::Adaptive ||
              (s.continuation == Continuation::Auto && residual.has_turbulence_model());
  cfl0_ = s.cfl_initial.automatic ? (adaptive_ ? kAdaptiveInitialCfl : kSerInitialCfl)
                                  : s.cfl_initial.value;
  if (adaptive_) PetscCall(residual.create_state(&merit_));
  turbulence_offset_ = adaptive_ ? residual.turbulence_unknown() : -1;
  const LinearChoice choice = linear_choice(cfg);
  may_fall_back_ = choice.fallback;
  fell_back_ = false;
  if (announce)
    PetscCall(log_info(residual.mesh().comm, "steady solver: linear solver %s",
                       describe(choice).c_str()));
  PetscCall(create_snes(choice.method, LinearSolverRole::Newton, &snes_));
  if (may_fall_back_) PetscCall(residual.create_state(&w0_));
  shift_.assign(residual.mesh().n_owned_cells, 0.0);
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::create_snes(LinearMethod method, LinearSolverRole role, SNES *snes) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &residual = *res_;
  const SolverOptions &s = options_;
  if (method == LinearMethod::Iterative) {
    // GMRES on J (Jacobian-free: solver/jacobian_free.hpp), multigrid on the compact P,
    // Eisenstat-Walker forcing terms (floored by the absolute tolerance) capped at 0.1: with
    // PETSc's cap (0.9) the first 3D steps gained almost nothing and DFG 3D-1Z needed 21
    // instead of 8 Newton steps; a linear solve that stops at its iteration limit still gives a
    // descent direction for the line search, so it does not end the Newton solve
    PetscCall(jacobian_free_.setup(residual));
    PetscCall(residual.create_jacobian(&P_, true));
    const LinearTolerances linear{0.1, s.linear_atol,
                                  static_cast<PetscInt>(s.linear_max_iterations)};
    PetscCall(create_newton(residual.mesh().comm, s, r_, jacobian_free_.matrix(), P_, form_function,
                            form_jacobian, this, LinearMethod::Iterative, LinearSystems::Steady,
                            system_kind(residual), KSPPREONLY, snes, &linear));
    PetscCall(SNESKSPSetUseEW(*snes, PETSC_TRUE));
    // the adaptive continuation caps them at kAdaptiveForcing: its line search accepts a step
    // when the pseudo-transient residual decreases, which a direction far from Newton's can
    // satisfy while the steady residual grows.  TMR bump level 0 (3040 cells) with the turbulent
    // systems' multigrid (linear_solver.cpp): cap 0.1 77 Newton steps, 4.1 s; 1e-2 47, 1.6 s;
    // 1e-3 37, 2.2 s.  Level 1: 37 / 35 / 37 steps, 4.4 / 4.6 / 5.9 s; the flat plate level 1:
    // 35 / 36 / 37 steps, 3.6 / 3.8 / 5.0 s
    const double cap = adaptive_ ? kAdaptiveForcing : kForcing;
    PetscCall(SNESKSPSetParametersEW(*snes, PETSC_DEFAULT, cap, cap, PETSC_DEFAULT, PETSC_DEFAULT,
                                     PETSC_DEFAULT, PETSC_DEFAULT));
    PetscCall(SNESSetMaxLinearSolveFailures(*snes, 1000000));
  } else {
    PetscCall(residual.create_jacobian(&J_));
    PetscCall(create_newton(residual.mesh().comm, s, r_, J_, J_, form_function, form_jacobian, this,
                            LinearMethod::Direct, LinearSystems::Steady, system_kind(residual),
                            KSPPREONLY, snes));
  }
  if (adaptive_) {
    SNESLineSearch ls;
    PetscCall(SNESGetLineSearch(*snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHSHELL));
    PetscCall(SNESLineSearchShellSetUserFunc(ls, pseudo_transient_line_search, this));
  }
  if (const char *prefix = options_prefix(role)) PetscCall(SNESSetOptionsPrefix(*snes, prefix));
  PetscCall(SNESSetFromOptions(*snes));
  // The continuation (CFL update), the history, the best state and the caller's monitor run
  // in the convergence test, set after SNESSetFromOptions: unlike a monitor, PETSc options
  // (-snes_monitor_cancel) cannot remove it.  The decision itself stays PETSc's.
  PetscCall(set_recording_convergence_test(
      *snes,
      [this](SNES snes, PetscInt it, PetscReal norm) { return record_iteration(snes, it, norm); },
      "steady solver",
      // |R| at its round-off floor (header): converged; stranded: continuation says so
      [this](SNES, PetscInt, PetscReal, bool *stop) {
        *stop = at_floor_ || stranded_;
        return PetscErrorCode(0);
      }));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::form_function(SNES, Vec w, Vec R, void *ctx) {
  PetscFunctionBeginUser;
  auto *self = static_cast<SteadySolver *>(ctx);
  PetscCall(self->res_->residual(self->level_, w, R, self->time_term_));
  PetscFunctionReturn(0);
}

double pseudo_time_rate(const double *u, const double *dS, int dim, double V, double nu_eff,
                        double u_ref) {
  double convective = 0, viscous = 0, area = 0;
  for (int d = 0; d < dim; ++d) {
    convective += std::abs(u[d]) * dS[d];
    viscous += dS[d] * dS[d];
    area += dS[d];
  }
  // the floor of the old law, 1e-12 U_ref / h_c, for a cell at rest without viscosity
  return convective + nu_eff * viscous / V + 1e-12 * u_ref * area / dim;
}

int limit_sign_changes(const PetscScalar *w, PetscScalar *dw, PetscInt n_cells, int nv,
                       int offset) {
  int limited = 0;
  for (PetscInt c = 0; c < n_cells; ++c) {
    const double chi = PetscRealPart(w[c * nv + offset]);
    const double step = PetscRealPart(dw[c * nv + offset]); // the new value is chi - step
    if (std::abs(chi) <= kSignChangeFloor || chi * (chi - step) >= 0) continue;
    const double f = (1 - kSignChangeKeep) * std::abs(chi) / std::abs(step);
    for (int k = 0; k < nv; ++k) dw[c * nv + k] *= f;
    ++limited;
  }
  return limited;
}

PetscErrorCode SteadySolver::update_rates(Vec w) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const auto &g = res_->geometry();
  const auto &p = res_->parameters();
  const PetscScalar *wl;
  PetscCall(VecGetArrayRead(w, &wl)); // owned cells first
  const int nv = res_->nv();
  const physics::EquationSet &eq = res_->equations();
  const int u0 = eq.offset(eq.find("velocity")); // the convection speed's unknowns
  const int t0 = turbulence_offset_; // the viscosity bound nu (1 + max(0, chi)) >= nu + nu_t
  rate_.resize(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double V = g.cell_volume[c];
    if (adaptive_) {
      double dS[3] = {0, 0, 0}, u[3] = {0, 0, 0};
      for (PetscInt i = m.cell_face_ptr[c]; i < m.cell_face_ptr[c + 1]; ++i) {
        const Vec3<double> &S = g.face_area[m.cell_face[i]];
        for (int d = 0; d < m.dim; ++d) dS[d] += 0.5 * std::abs(S[d]);
      }
      for (int d = 0; d < m.dim; ++d) u[d] = PetscRealPart(wl[c * nv + u0 + d]);
      const double chi = t0 >= 0 ? std::max(0.0, PetscRealPart(wl[c * nv + t0])) : 0.0;
      rate_[c] = p.rho * pseudo_time_rate(u, dS, m.dim, V, p.nu * (1 + chi), p.u_ref);
      continue;
    }
    const double hc = std::pow(V, 1.0 / m.dim);
    double u2 = 0;
    for (int k = u0; k < u0 + m.dim; ++k) u2 += wl[c * nv + k] * wl[c * nv + k];
    rate_[c] = p.rho * V * (std::sqrt(u2) + p.nu / hc + 1e-12 * p.u_ref) / hc;
  }
  PetscCall(VecRestoreArrayRead(w, &wl));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::update_shift(Vec w) {
  PetscFunctionBeginUser;
  PetscCall(update_rates(w));
  for (std::size_t c = 0; c < rate_.size(); ++c)
    shift_[c] = cfl_ >= cfl_max_ ? 0.0 : rate_[c] / cfl_;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::roundoff_floor(Vec w, double *floor) {
  PetscFunctionBeginUser;
  PetscCall(update_rates(w));
  const physics::EquationSet &eq = res_->equations();
  const int nv = res_->nv();
  const PetscScalar *wl;
  PetscCall(VecGetArrayRead(w, &wl));
  double sum = 0;
  for (std::size_t c = 0; c < rate_.size(); ++c)
    for (int k = 0; k < nv; ++k)
      if (eq.transient(k)) {
        const double d = rate_[c] + (time_diagonal_.empty() ? 0.0 : time_diagonal_[c]);
        const double t = d * PetscRealPart(wl[c * nv + k]);
        sum += t * t;
      }
  PetscCall(VecRestoreArrayRead(w, &wl));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, res_->mesh().comm));
  *floor = std::numeric_limits<double>::epsilon() * std::sqrt(sum);
  PetscFunctionReturn(0);
}

void SteadySolver::set_time_step(const discretization::TimeLevel &level,
                                 const discretization::FlowResidual::TimeTerm *term) {
  level_ = term ? level : discretization::kSteady;
  time_term_ = term;
  time_diagonal_.clear();
  if (!term) return;
  const double rho_a0 = res_->parameters().rho * term->a0;
  time_diagonal_.resize(res_->mesh().n_owned_cells);
  for (PetscInt c = 0; c < res_->mesh().n_owned_cells; ++c)
    time_diagonal_[c] = rho_a0 * res_->geometry().cell_volume[c];
}

PetscErrorCode SteadySolver::pseudo_transient_line_search(SNESLineSearch ls, void *ctx) {
  PetscFunctionBeginUser;
  auto *self = static_cast<SteadySolver *>(ctx);
  SNES snes;
  Vec X, F, Y, W, G;
  PetscReal xnorm, fnorm, ynorm;
  PetscCall(SNESLineSearchGetSNES(ls, &snes));
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESLineSearchGetNorms(ls, &xnorm, &fnorm, &ynorm));
  constexpr double kArmijo = 1e-4, kMinLambda = 1e-4;
  double lambda = 1;
  if (self->turbulence_offset_ >= 0) { // a nu~ update that changes sign stops short (header)
    const PetscScalar *xl;
    PetscScalar *yl;
    PetscCall(VecGetArrayRead(X, &xl));
    PetscCall(VecGetArray(Y, &yl));
    limit_sign_changes(xl, yl, self->res_->mesh().n_owned_cells, self->res_->nv(),
                       self->turbulence_offset_);
    PetscCall(VecRestoreArrayRead(X, &xl));
    PetscCall(VecRestoreArray(Y, &yl));
  }
  for (;;) {
    PetscCall(VecWAXPY(W, -lambda, Y, X));
    PetscCall(SNESComputeFunction(snes, W, G));
    PetscBool domain_error;
    PetscCall(SNESGetFunctionDomainError(snes, &domain_error));
    double tnorm = INFINITY;
    if (!domain_error) {
      // the pseudo-transient residual R(W) + D (W - X) = G - lambda D Y
      PetscCall(VecCopy(G, self->merit_));
      PetscCall(self->res_->add_transient_shift(self->shift_, -lambda, Y, self->merit_));
      PetscCall(VecNorm(self->merit_, NORM_2, &tnorm));
    }
    if (std::isfinite(tnorm) && tnorm <= (1 - kArmijo * lambda) * fnorm) break;
    lambda *= 0.5;
    if (lambda < kMinLambda) {
      PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_REDUCT));
      PetscFunctionReturn(0);
    }
  }
  self->last_lambda_ = lambda;
  PetscCall(VecCopy(W, X));
  PetscCall(VecCopy(G, F));
  PetscCall(VecNorm(F, NORM_2, &fnorm));
  PetscCall(VecNorm(X, NORM_2, &xnorm));
  PetscCall(VecNorm(Y, NORM_2, &ynorm));
  PetscCall(SNESLineSearchSetNorms(ls, xnorm, fnorm, lambda * ynorm));
  PetscCall(SNESLineSearchSetLambda(ls, lambda));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::form_jacobian(SNES snes, Vec w, Mat J, Mat P, void *ctx) {
  PetscFunctionBeginUser;
  auto *self = static_cast<SteadySolver *>(ctx);
  PetscCall(self->update_shift(w));
  // dual time stepping: the step's own diagonal rho V a0 under the pseudo-time one (the
  // Jacobian-free product takes it from the time term of R)
  const std::vector<double> *shift = &self->shift_;
  if (self->time_term_) {
    self->jacobian_shift_.resize(self->shift_.size());
    for (std::size_t c = 0; c < self->shift_.size(); ++c)
      self->jacobian_shift_[c] = self->shift_[c] + self->time_diagonal_[c];
    shift = &self->jacobian_shift_;
  }
  if (J == self->jacobian_free_.matrix())
    PetscCall(self->jacobian_free_.set_base(self->level_, w, self->time_term_, &self->shift_));
  else
    PetscCall(self->res_->jacobian(self->level_, w, J, shift));
  if (P != J) PetscCall(self->res_->jacobian(self->level_, w, P, shift, true));
  // the preconditioner for the new operators, here rather than inside the linear solve
  // (set_up_preconditioner: its memory-lean multigrid set-up)
  KSP ksp;
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetOperators(ksp, J, P));
  PetscCall(set_up_preconditioner(ksp));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::record_iteration(SNES snes, PetscInt snes_it, PetscReal norm) {
  PetscFunctionBeginUser;
  // iterations counted over the restarts of the continuation (solve)
  if (snes_it == 0 && it_offset_ > 0) PetscFunctionReturn(0); // a restart's first iterate: recorded
  const PetscInt it = snes_it + it_offset_;
  Vec r, w;
  PetscCall(SNESGetFunction(snes, &r, nullptr, nullptr));
  PetscCall(SNESGetSolution(snes, &w));
  NewtonRecord rec;
  rec.iteration = static_cast<int>(it);
  rec.residual = norm;
  const int nv = res_->nv();
  PetscReal comp[physics::kMaxVars];
  for (int k = 0; k < nv; ++k) PetscCall(VecStrideNorm(r, k, NORM_2, &comp[k]));
  // per field: |R| of its rows (continuity: the pressure's, momentum: the velocity's)
  const physics::EquationSet &eq = res_->equations();
  rec.residual_fields.assign(eq.n_fields(), 0.0);
  for (int k = 0; k < nv; ++k) rec.residual_fields[eq.field_of(k)] += comp[k] * comp[k];
  for (double &f : rec.residual_fields) f = std::sqrt(f);
  rec.residual_continuity = rec.residual_fields[eq.find("pressure")];
  rec.residual_momentum = rec.residual_fields[eq.find("velocity")];
  PetscInt lits;
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  rec.linear_iterations = static_cast<int>(lits - last_linear_its_);
  last_linear_its_ = lits;
  rec.wall_time = MPI_Wtime() - start_time_;
  if (it == 0) r0_ = r_ref_ > 0 ? std::max(r_ref_, norm) : norm;
  PetscCall(roundoff_floor(w, &rec.roundoff_floor));
  at_floor_ = norm <= rec.roundoff_floor;
  if (snes_it > 0) { // a stall below the estimate's reach (header)
    KSP ksp;
    KSPConvergedReason linear;
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetConvergedReason(ksp, &linear));
    const double previous = residual_at(static_cast<int>(it) - 1);
    const bool stalled = cfl_ >= cfl_max_ && linear > 0 && previous > 0 &&
                         norm > previous / kFloorStallReduction &&
                         norm <= kFloorStallRelative * r0_;
    floor_stalls_ = stalled ? floor_stalls_ + 1 : 0;
    if (floor_stalls_ >= kFloorStallSteps) at_floor_ = true;
  }
  rec.cfl = cfl_;
  if (snes_it > 0) PetscCall(widen_unconverged(snes, it));
  PetscCall(next_cfl(snes, it, norm));
  SteadySummary &s = *summary_;
  // stranded (header): |R| kStrandedSteps iterations ago, before the history takes this one
  if (may_abandon_ && exhausted_run_ >= kStrandedSteps) {
    const double earlier = residual_at(static_cast<int>(it) - kStrandedSteps);
    bool fits = false;
    if (earlier > 0 && norm > earlier / kStrandedReduction)
      PetscCall(direct_fits_in_memory(res_->mesh(), &fits));
    if (fits) {
      char why[200];
      std::snprintf(why, sizeof(why),
                    "the linear solves of %d Newton steps in a row stopped unconverged with no "
                    "reaction left (|R| %.3e at iteration %d, %.3e %d iterations before)",
                    exhausted_run_, norm, static_cast<int>(it), earlier, kStrandedSteps);
      stranded_ = true;
      stranded_reason_ = why;
    }
  }
  s.history.push_back(rec);
  if (it == 0) s.initial_residual = norm;
  s.final_residual = norm;
  s.iterations = static_cast<int>(it);
  if (std::isfinite(norm) && (it == 0 || norm < s.best_residual)) {
    s.best_residual = norm;
    s.best_iteration = static_cast<int>(it);
    if (best_) PetscCall(VecCopy(w, best_));
  }
  if (user_monitor_ && *user_monitor_) PetscCall((*user_monitor_)(rec, w));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::start_direct() {
  PetscFunctionBeginUser;
  if (!may_fall_back_ || fell_back_) PetscFunctionReturn(0);
  bool fits = true;
  double needed = 0, available = 0;
  PetscCall(direct_fits_in_memory(res_->mesh(), &fits, &needed, &available));
  if (!fits) PetscFunctionReturn(0);
  if (!fallback_)
    PetscCall(create_snes(LinearMethod::Direct, LinearSolverRole::NewtonFallback, &fallback_));
  fell_back_ = true;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::tighten_forcing(bool *tightened) {
  PetscFunctionBeginUser;
  *tightened = false;
  if (adaptive_) PetscFunctionReturn(0);
  PetscBool ew;
  PetscCall(SNESKSPGetUseEW(snes_, &ew));
  if (!ew) PetscFunctionReturn(0); // the user's fixed linear tolerance
  const char *prefix;
  PetscCall(SNESGetOptionsPrefix(snes_, &prefix));
  for (const char *name : {"-snes_ksp_ew", "-snes_ksp_ew_rtol0", "-snes_ksp_ew_rtolmax"}) {
    PetscBool set;
    PetscCall(PetscOptionsHasName(nullptr, prefix, name, &set));
    if (set) PetscFunctionReturn(0); // the user's forcing terms
  }
  PetscInt version;
  PetscReal rtol0, rtol_max, gamma, alpha, alpha2, threshold;
  PetscCall(SNESKSPGetParametersEW(snes_, &version, &rtol0, &rtol_max, &gamma, &alpha, &alpha2,
                                   &threshold));
  if (rtol_max != kForcing) PetscFunctionReturn(0); // tightened already
  PetscCall(SNESKSPSetParametersEW(snes_, version, kTightForcing, kTightForcing, gamma, alpha,
                                   alpha2, threshold));
  *tightened = true;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::start_unshifted() {
  PetscFunctionBeginUser;
  KSP ksp;
  PetscCall(SNESGetKSP(snes_, &ksp));
  bool unshifted;
  PetscCall(unshift_smoothers(ksp, &unshifted));
  if (unshifted) pivots_ = SmootherShift::Trial;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::start_overlapped() {
  PetscFunctionBeginUser;
  KSP ksp;
  PetscCall(SNESGetKSP(snes_, &ksp));
  bool overlapped;
  PetscCall(overlap_smoothers(ksp, &overlapped));
  overlap_tried_ = true;
  overlapped_ = overlapped;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::widen_unconverged(SNES snes, PetscInt it) {
  PetscFunctionBeginUser;
  // a linear solve that stopped unconverged: a stronger linear solver for the next steps (header)
  KSP ksp;
  KSPConvergedReason linear;
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetConvergedReason(ksp, &linear));
  if (linear >= 0) {
    if (pivots_ == SmootherShift::Trial) pivots_ = SmootherShift::Kept;
    exhausted_run_ = 0;
    PetscFunctionReturn(0);
  }
  // a reaction below starts the count of the unconverged solves with none left again
  const int run = exhausted_run_;
  exhausted_run_ = 0;
  PetscInt from, to, its;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  // the log line of a reaction ("what" was done); the stall cut of the switched evolution
  // relaxation waits for the stronger solves
  const auto reacted = [&](const std::string &what) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(log_info(res_->mesh().comm,
                       "continuation: the linear solve of Newton step %d stopped unconverged (%s "
                       "after %d iterations); %s",
                       static_cast<int>(it), KSPConvergedReasons[linear], static_cast<int>(its),
                       what.c_str()));
    last_cut_ = static_cast<int>(it);
    PetscFunctionReturn(0);
  };
  // first the smoothers' pivots (only zero ones shifted)
  if (pivots_ == SmootherShift::Default) {
    bool unshifted;
    PetscCall(unshift_smoothers(ksp, &unshifted));
    if (unshifted) {
      pivots_ = SmootherShift::Trial;
      PetscCall(reacted("multigrid smoothers: ILU pivots shifted only where zero "
                        "(mg_levels_sub_pc_factor_shift_type positive_definite -> nonzero)"));
      PetscFunctionReturn(0);
    }
  }
  // then, on several ranks, smoothers whose blocks overlap (once; not while the unshifted pivots
  // are on trial: their verdict comes first)
  if (pivots_ != SmootherShift::Trial && !overlap_tried_) {
    overlap_tried_ = true;
    PetscCall(overlap_smoothers(ksp, &overlapped_));
    if (overlapped_) {
      PetscCall(reacted("multigrid smoothers: the ranks' ILU blocks overlap by " +
                        std::to_string(kReactionOverlap) +
                        " layer of cells (mg_levels_pc_type bjacobi -> asm)"));
      PetscFunctionReturn(0);
    }
  }
  // then the restart, with the shift again if the unshifted smoothers did no better
  bool reshifted = false;
  if (pivots_ == SmootherShift::Trial) {
    PetscCall(reshift_smoothers(ksp, &reshifted));
    pivots_ = SmootherShift::Restored;
  }
  PetscCall(widen_restart(ksp, &from, &to));
  if (to == from && !reshifted) {
    exhausted_run_ = run + 1;
    PetscFunctionReturn(0);
  }
  if (to != from) {
    summary_->restart_widenings += 1;
    summary_->widened_restart = static_cast<int>(to);
  }
  PetscCall(reacted("GMRES restart " + std::to_string(from) + " -> " + std::to_string(to) +
                    (reshifted ? "; multigrid smoothers: the positive-definite shift of their "
                                 "ILU pivots again (the unshifted ones did not converge either)"
                               : "")));
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::next_cfl(SNES snes, PetscInt it, PetscReal norm) {
  PetscFunctionBeginUser;
  if (!std::isfinite(norm) || !(norm > 0)) PetscFunctionReturn(0);
  if (adaptive_) {
    // from the line search's step length (header); the base follows, so that the retries of a
    // failed line search start from the CFL where it failed
    KSP ksp;
    KSPConvergedReason linear;
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetConvergedReason(ksp, &linear));
    if (it == 0)
      cfl_ = ramped_cfl(norm);
    else if (linear < 0 || last_lambda_ < kShortStep) // not a Newton direction / far from linear
      cfl_ = std::max(kMinBaseCfl * cfl0_, cfl_ / kAdaptiveGrowth);
    else if (last_lambda_ >= 1)
      cfl_ = std::min(cfl_max_, kAdaptiveGrowth * cfl_);
    cfl_base_ = cfl_;
    last_lambda_ = 1;
    PetscFunctionReturn(0);
  }
  // switched evolution relaxation; a stalled continuation: a smaller base CFL (header)
  constexpr int kWindow = 5;
  const double earlier = residual_at(static_cast<int>(it) - kWindow);
  if (earlier > 0 && it - last_cut_ >= kWindow && cfl_base_ > kMinBaseCfl * cfl0_ &&
      cfl_ < cfl_max_ && norm > 0.95 * earlier) {
    cfl_base_ /= 10;
    last_cut_ = static_cast<int>(it);
    PetscCall(log_info(res_->mesh().comm,
                       "continuation: |R| %.3e after %.3e %d iterations ago; base CFL cut to %g",
                       norm, earlier, kWindow, cfl_base_));
  }
  cfl_ = ramped_cfl(norm);
  PetscFunctionReturn(0);
}

double SteadySolver::residual_at(int iteration) const {
  const auto &h = summary_->history;
  for (auto r = h.rbegin(); r != h.rend(); ++r)
    if (r->iteration == iteration) return r->residual;
  return -1;
}

double SteadySolver::ramped_cfl(double norm) const {
  return std::min(cfl_max_, std::max(cfl_base_, cfl_base_ * r0_ / norm));
}

double SteadySolver::next_base_cfl(double base, int *tries) const {
  // base x 0.1, x 10, x 0.01, x 100, x 0.001, x 1000, within [kMinBaseCfl CFL_0, CFL_max]
  while (*tries < kMaxRetries) {
    const int t = (*tries)++;
    const double factor = t % 2 == 0 ? std::pow(10.0, -(t / 2 + 1)) : std::pow(10.0, t / 2 + 1);
    const double next = base * factor;
    if (next >= (1 - 1e-9) * kMinBaseCfl * cfl0_ && next <= cfl_max_) return next;
  }
  return 0;
}

PetscErrorCode
SteadySolver::solve(Vec w, const std::function<PetscErrorCode(const NewtonRecord &, Vec)> &monitor,
                    Vec best, SteadySummary *summary) {
  PetscFunctionBeginUser;
  user_monitor_ = &monitor;
  best_ = best;
  summary_ = summary;
  start_time_ = MPI_Wtime();
  const bool first_try_iterative = may_fall_back_ && !fell_back_;
  if (first_try_iterative) PetscCall(VecCopy(w, w0_));
  PetscCall(continuation(fell_back_ ? fallback_ : snes_, w, summary, first_try_iterative));
  bool retried = false;
  if (first_try_iterative && !summary->converged && !summary->abandoned) {
    // auto: an iterative solve that ran out of Newton steps or line searches with its linear
    // solves converging is done again with tighter ones before the LU (header)
    PetscCall(tighten_forcing(&retried));
    if (retried) {
      const std::string reason = summary->reason;
      PetscCall(
          log_info(res_->mesh().comm,
                   "the steady Newton solve with the iterative linear solver did not converge "
                   "(%s): solving it again from its initial state with the linear solves to "
                   "%g of |R| instead of %g (Eisenstat-Walker's cap)",
                   reason.c_str(), kTightForcing, kForcing));
      PetscCall(VecCopy(w0_, w));
      PetscCall(continuation(snes_, w, summary, true));
      if (!summary->converged)
        summary->reason = reason + "; with the tighter linear solves: " + summary->reason;
    }
  }
  bool fits = true;
  double needed = 0, available = 0;
  if (first_try_iterative && !summary->converged && !summary->abandoned)
    PetscCall(direct_fits_in_memory(res_->mesh(), &fits, &needed, &available));
  if (!fits) {
    // no LU to fall back to: the iterative solve's result stands (not converged; the caller
    // writes its best state), and its reason says why auto stopped there
    summary->reason += "; " + no_fallback_reason(needed, available);
    PetscCall(log_info(res_->mesh().comm, "the steady Newton solve: %s", summary->reason.c_str()));
  } else if (first_try_iterative && !summary->converged) {
    // auto: the iterative solve failed; the direct LU from the same initial state, and for the
    // solves that follow (a design loop's next solve is much like this one)
    const std::string reason = summary->reason;
    PetscCall(announce_fallback(res_->mesh(), "the steady Newton solve", reason.c_str()));
    if (!fallback_)
      PetscCall(create_snes(LinearMethod::Direct, LinearSolverRole::NewtonFallback, &fallback_));
    fell_back_ = true;
    PetscCall(VecCopy(w0_, w));
    PetscCall(continuation(fallback_, w, summary, false));
    summary->iterative_reason = reason;
  }
  summary->linear_fallback = fell_back_;
  summary->tightened_forcing = retried;
  summary->smoothers_unshifted = pivots_ == SmootherShift::Trial || pivots_ == SmootherShift::Kept;
  summary->smoothers_overlapped = overlapped_;
  summary->smoothers_reshifted = pivots_ == SmootherShift::Restored;
  summary->wall_time = MPI_Wtime() - start_time_;
  user_monitor_ = nullptr;
  best_ = nullptr;
  summary_ = nullptr;
  PetscFunctionReturn(0);
}

PetscErrorCode SteadySolver::continuation(SNES snes, Vec w, SteadySummary *summary,
                                          bool may_abandon) {
  PetscFunctionBeginUser;
  *summary = SteadySummary();
  cfl_ = cfl_base_ = cfl0_;
  last_cut_ = 0;
  PetscReal atol, rtol, stol;
  PetscInt maxit, maxf;
  PetscCall(SNESGetTolerances(snes, &atol, &rtol, &stol, &maxit, &maxf));
  // a warm start (set_reference_residual) stops where a cold solve from the reference state
  // would, |R| <= rtol r_ref: its own initial residual made a target below the round-off floor
  // (cases/stokes-body-3d: 6 Newton steps to |R| 1.3e-11, then 14 more at 8e-12 to the failed
  // line search, where a cold solve stops at 1.1e-10)
  // (and at least the round-off floor of the initial state: a dual time step whose initial guess
  // solves it already, header)
  double floor0;
  PetscCall(roundoff_floor(w, &floor0));
  const PetscReal atol_solve = std::max(floor0, r_ref_ > 0 ? std::max(atol, rtol * r_ref_) : atol);
  PetscCall(SNESSetTolerances(snes, atol_solve, rtol, stol, maxit, maxf));
  it_offset_ = 0;
  SNESConvergedReason reason;
  // the iterate of the last failed line search, the base CFL there and the retries since
  int failed_at = -1, tries = 0;
  // iterates above the solve's initial residual at which a line search failed (header)
  int astray = 0;
  may_abandon_ = may_abandon;
  exhausted_run_ = 0;
  floor_stalls_ = 0;
  stranded_ = false;
  double base = cfl_base_;
  for (;;) {
    // SNESSolve starts its linear iteration count from zero (also after a continuation cut: the
    // count of the failed solve made the next iteration's record negative, e.g. -1279, and the
    // run's total too small)
    last_linear_its_ = 0;
    PetscCall(SNESSolve(snes, nullptr, w));
    PetscCall(SNESGetConvergedReason(snes, &reason));
    summary->converged = reason > 0;
    summary->reason = SNESConvergedReasons[reason];
    if (reason == SNES_CONVERGED_SNORM_RELATIVE && at_floor_)
      summary->reason = floor_stalls_ >= kFloorStallSteps ? kConvergedFloorStall : kConvergedFloor;
    // solver.linear auto: a stranded iterative solve gives way to the LU (header)
    if (stranded_ && !at_floor_) {
      summary->converged = false;
      summary->abandoned = true;
      summary->reason = stranded_reason_;
      break;
    }
    // PETSc names a failed line search DIVERGED_LOCAL_MIN when its test of a local minimum of
    // |F|^2 holds, with a Jacobian-free operator |(F, J F)| < 1e-4 |F|^2 (J^T F is not at hand):
    // for a pseudo-time step's direction (GMRES unconverged) that is no minimum of |R| (header)
    const bool search_failed =
        reason == SNES_DIVERGED_LINE_SEARCH || reason == SNES_DIVERGED_LOCAL_MIN;
    // a line search that cannot decrease a residual already at the round-off floor is success
    const bool floor = at_roundoff_floor(summary->initial_residual, summary->final_residual, atol);
    if (search_failed && floor) {
      summary->converged = true;
      summary->reason = kConvergedRoundoff;
    }
    // a failed line search above the floor: continue from the last iterate with another base CFL
    // (header), within the iteration budget
    if (!search_failed || floor || summary->iterations >= maxit ||
        !std::isfinite(summary->final_residual))
      break;
    if (summary->iterations != failed_at) { // the first failure at this iterate
      failed_at = summary->iterations;
      tries = 0;
      base = cfl_base_;
      if (summary->final_residual > summary->initial_residual) ++astray;
      // solver.linear auto: an iterative solve astray gives way to the LU at once (header)
      if (may_abandon && astray >= kAstrayFailures) {
        bool fits;
        PetscCall(direct_fits_in_memory(res_->mesh(), &fits));
        if (fits) {
          char why[160];
          std::snprintf(why, sizeof(why),
                        "DIVERGED_LINE_SEARCH at %d iterates above the initial |R| %.3e (the "
                        "last at %.3e, iteration %d)",
                        astray, summary->initial_residual, summary->final_residual,
                        summary->iterations);
          summary->abandoned = true;
          summary->reason = why;
          break;
        }
      }
    }
    const double next = next_base_cfl(base, &tries);
    if (!(next > 0)) break;
    if (reason == SNES_DIVERGED_LOCAL_MIN) {
      if (summary->local_min_retries++ == 0) summary->first_local_min = summary->iterations;
    }
    const bool raised = next > cfl_base_;
    cfl_base_ = next;
    last_cut_ = summary->iterations;
    cfl_ = adaptive_ ? cfl_base_ : ramped_cfl(summary->final_residual);
    it_offset_ = summary->iterations;
    PetscCall(log_info(res_->mesh().comm,
                       "continuation: the line search failed%s at |R| %.3e; base CFL %s to %g, "
                       "continuing from iteration %d",
                       reason == SNES_DIVERGED_LOCAL_MIN ? " (PETSc: DIVERGED_LOCAL_MIN)" : "",
                       summary->final_residual, raised ? "raised" : "cut", cfl_base_,
                       summary->iterations));
    // the relative tolerance stays relative to the solve's initial residual, not the restart's
    // (dual time stepping of a URANS step, cases/naca0012-rans: |R| 74.9 -> 3.2e-10 at iteration
    // 243, below rtol x 74.9, then 30 more iterations at the round-off floor after restarts at
    // 3.3e-2, whose target rtol x 3.3e-2 it could not reach)
    PetscCall(SNESSetTolerances(snes, std::max(atol_solve, rtol * summary->initial_residual), rtol,
                                stol, maxit - summary->iterations, maxf));
  }
  PetscCall(SNESSetTolerances(snes, atol, rtol, stol, maxit, maxf));
  may_abandon_ = stranded_ = false;
  PetscFunctionReturn(0);
}

PetscErrorCode peak_memory(MPI_Comm comm, double *total_mib, double *max_mib) {
  PetscFunctionBeginUser;
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const double mine = usage.ru_maxrss / 1024.0; // ru_maxrss is in KiB on Linux
  PetscCallMPI(MPI_Allreduce(&mine, total_mib, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(&mine, max_mib, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
