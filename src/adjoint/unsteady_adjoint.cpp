// Unsteady discrete adjoint: the backward sweep, its gradients and saved state (see
// include/karman/adjoint/unsteady_adjoint.hpp; the objectives in time are in unsteady_goals.cpp,
// the forward run in unsteady_forward.cpp).
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/adjoint/adjoint_state.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/natural_layout.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/recycling_gmres.hpp"
#include "karman/solver/steady_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace karman::adjoint {

using discretization::FlowResidual;
using discretization::PatchCondition;

// One objective's part of the backward sweep: the adjoints of the level being solved and of the
// two later levels, the right-hand side, and the parameter gradients summed over the levels
// solved so far.
struct UnsteadyAdjoint::Adjoint {
  Adjoint() = default;
  Adjoint(const Adjoint &) = delete;
  Adjoint &operator=(const Adjoint &) = delete;
  ~Adjoint() {
    for (Vec *v : {&g, &psi, &psi1, &psi2})
      if (*v) VecDestroy(v);
    for (Vec &v : older) VecDestroy(&v);
  }

  Vec psi1 = nullptr, psi2 = nullptr; ///< psi^{n+1}, psi^{n+2} while level n is solved
  std::vector<Vec> older;             ///< psi^{n+3}, psi^{n+4}, ... (the initial guess's history)
  /// psi^{n+1}, psi^{n+2}, psi^{n+3}, ...: the history that is saved and that the guess combines
  std::vector<Vec> history() const {
    std::vector<Vec> h{psi1, psi2};
    h.insert(h.end(), older.begin(), older.end());
    return h;
  }
  Vec g = nullptr, psi = nullptr;     ///< right-hand side, psi^n
  std::map<std::string, double> sums; ///< dJ/da summed over the levels so far (16), (17)
  std::vector<double> psi_local;      ///< psi^n, nv per local cell (ghosts updated)
  /// the levels' geometry adjoints not yet chained to dJ/dX, and those of the least-squares
  /// coefficients not yet chained to the centroids (chain_geometry)
  geometry::GeometryBar geom;
  discretization::LeastSquaresGradient::CoefficientBar coefficients;
  std::vector<double> wall_distance; ///< the levels' wall-distance adjoints (a turbulence model)
  /// the objective's and the residual's reverse sweeps of the level (kept: reset in place)
  Sensitivities objective_bars, residual_bars;
};

// The backward sweep's data: the BDF coefficients of every level, the Jacobian (and the compact
// matrix the preconditioner is built from), the transposed solver, the state of the level being
// solved and every objective's adjoints.
struct UnsteadyAdjoint::Sweep {
  Sweep() = default;
  Sweep(const Sweep &) = delete;
  Sweep &operator=(const Sweep &) = delete;
  ~Sweep() {
    for (KSP *k : {&ksp, &fallback})
      if (*k) KSPDestroy(k);
    for (Mat *a : {&J, &P, &JT, &PT})
      if (*a) MatDestroy(a);
    for (Vec *v : {&w, &w_prev})
      if (*v) VecDestroy(v);
    for (Vec &v : work) VecDestroy(&v);
    if (initial_residual) VecDestroy(&initial_residual);
  }

  std::vector<solver::BdfCoefficients> bdf; ///< of level n, zero beyond N
  Mat J = nullptr, P = nullptr;             ///< P: compact preconditioner matrix, or none
  /// iterative: the operators of the untransposed solves (solver::transposed_operators)
  bool iterative = false;
  Mat JT = nullptr, PT = nullptr;
  KSP ksp = nullptr;
  /// solver.linear: auto: a level whose iterative solve fails is solved again by GMRES around the
  /// LU of this level's exact Jacobian (adjoint.preconditioner_matrix exact, the default) or its
  /// compact matrix (options prefix adj_fallback_; created at the first)
  bool may_fall_back = false, fallback_exact = true;
  int fallbacks = 0; ///< levels solved by the fallback (kStickyLevelFallbacks)
  KSP fallback = nullptr;
  solver::LinearTolerances tolerances;
  Vec w = nullptr, w_prev = nullptr; ///< w^n, w^{n-1}
  /// each Krylov solve starts from least_residual_guess over this many later levels' adjoints
  /// (adjoint.initial_guess; 0: from zero)
  int guess = 0;
  std::vector<Vec> work;          ///< the guess's 2 x guess work vectors
  Vec initial_residual = nullptr; ///< b - J^T psi of the guess, where the recycling solve starts
  // Reuse policy (set by setup_sweep): a preconditioner is kept while the last level's solve
  // needed at most solver.refactor_iterations iterations or kReuseGrowth x those of the first level
  // after its set-up (direct), kAdjointReuseGrowth x the fewest since the set-up (iterative);
  // iteration counts only: every rank and every run decides the same
  solver::PreconditionerReuse pc_reuse{0};
  /// iterative with GMRES and adjoint.recycle > 0: the transposed solves recycle a subspace
  std::unique_ptr<solver::RecyclingGmres> recycler;
  std::vector<double> shift;                      ///< rho V a0^n per owned cell
  discretization::LocalState state;               ///< of w^n with the boundary values of t^n
  std::vector<std::unique_ptr<Adjoint>> adjoints; ///< one per objective (goals_)
};

PetscErrorCode UnsteadyAdjoint::run(Vec w0, const UnsteadyAdjointOptions &o,
                                    UnsteadyAdjointResult *result) {
  PetscFunctionBeginUser;
  std::vector<UnsteadyAdjointResult> results;
  PetscCall(run(w0, o, &results));
  *result = std::move(results.front());
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::run(Vec w0, const UnsteadyAdjointOptions &o,
                                    std::vector<UnsteadyAdjointResult> *results) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = res_->mesh().comm;
  PetscCheck(goals_.size() == 1 || (o.save_every == 0 && !o.resume), comm, PETSC_ERR_SUP,
             "the adjoint state is saved and resumed for one objective, not for %zu",
             goals_.size());
  // the adjoint is the exact derivative of converged time steps: a forward converged only to the
  // time-discretization error (a forward-only setting) would give gradients off by about as much
  const solver::SolverOptions solver_opts = solver::solver_options().get(*cfg_);
  const double step_rtol = solver_opts.rtol;
  PetscCheck(o.forward_only || solver_opts.tolerances != solver::StepTolerances::Forward, comm,
             PETSC_ERR_USER_INPUT,
             "%s: solver.tolerances is forward: the unsteady adjoint needs converged time steps "
             "(solver.tolerances converged, or auto); forward tolerances are for karman run",
             cfg_->file().c_str());
  PetscCheck(o.forward_only || step_rtol <= kAdjointMaxStepRtol, comm, PETSC_ERR_USER_INPUT,
             "%s: solver.rtol is %g: the unsteady adjoint needs time steps converged to %g or "
             "below (the default 1e-10 gives gradients to ~1e-9); looser values are for forward "
             "runs (karman run)",
             cfg_->file().c_str(), step_rtol, kAdjointMaxStepRtol);
  results->assign(goals_.size(), UnsteadyAdjointResult());
  for (auto &r : *results) {
    r.steps = steps_;
    r.X.assign(res_->mesh().n_vertices, Vec3<double>());
  }
  // psi^{n+1}, psi^{n+2} of the level being solved; a saved state is read before the forward run,
  // so that a state of another case is refused at once
  Sweep s;
  for (std::size_t i = 0; i < goals_.size(); ++i) {
    s.adjoints.push_back(std::make_unique<Adjoint>());
    Adjoint &a = *s.adjoints.back();
    for (Vec *v : {&a.psi1, &a.psi2, &a.g, &a.psi}) PetscCall(res_->create_state(v));
    a.geom = geometry::zero_geometry(res_->mesh());
    res_->gradient_operator().zero_coefficient_bar(&a.coefficients);
    a.older.assign(std::max(history_length() - 2, 0), nullptr);
    for (Vec &v : a.older) PetscCall(res_->create_state(&v));
    for (Vec v : a.history()) PetscCall(VecSet(v, 0.0));
  }
  long n = -1;
  UnsteadyAdjointResult &first = results->front();
  // (time.dt auto: the number of steps, part of what a saved state must match, is known after
  // the forward run)
  if (o.resume && !o.forward_only && !adaptive_) {
    PetscCall(load_state(o, &n, s.adjoints[0]->history(), &first));
    first.resumed_from = n;
  }
  solver::UnsteadySolver ts;
  std::unique_ptr<Trajectory> traj;
  std::vector<TimeLevel> levels;
  PetscCall(run_forward(w0, o, ts, &traj, &levels, results));
  if (o.forward_only) PetscFunctionReturn(0);
  if (o.resume && adaptive_) {
    PetscCall(load_state(o, &n, s.adjoints[0]->history(), &first));
    first.resumed_from = n;
  }
  if (n < 0) n = steps_;

  // -log_view gives the sweep its own table (stage "Unsteady adjoint"), left also when an error
  // ends the sweep (a long-lived Python process goes on logging in the stage it was in)
  static PetscLogStage stage = -1;
  if (stage < 0) PetscCall(PetscLogStageRegister("Unsteady adjoint", &stage));
  PetscCall(PetscLogStagePush(stage));
  struct StagePop {
    ~StagePop() { PetscLogStagePop(); }
  } pop_stage;
  const double a_start = MPI_Wtime();
  PetscCall(setup_sweep(levels, &s));
  std::vector<double> times(steps_, 0.0);
  for (long k = 1; k <= steps_; ++k) times[k - 1] = levels[k].time;
  for (auto &r : *results) r.times = times;
  if (o.resume) {
    for (const auto &p : first.parameters) s.adjoints[0]->sums[p.name] = p.gradient;
    PetscCall(log_info(comm, "adjoint: resuming at level %ld from %s", n, o.state_file.c_str()));
    --n;
  }
  for (; n >= 1; --n) PetscCall(solve_level(o, *traj, n, s, results));
  for (std::size_t i = 0; i < goals_.size(); ++i) {
    UnsteadyAdjointResult &r = (*results)[i];
    PetscCall(chain_geometry(*s.adjoints[i], &r));
    // initial condition (18): dJ/dw^0 = psi . dR/dw^0 = rho V (a1^1 psi^1 + a2^2 psi^2), the
    // coupling of level 0 to the two later levels
    r.initial.assign(res_->mesh().n_owned_cells * res_->nv(), 0.0);
    PetscCall(add_time_coupling(0, s, *s.adjoints[i], r.initial.data()));
    PetscCall(chain_time_functions(s.adjoints[i]->sums, &r));
    r.recomputed = traj->recomputed_steps();
    r.snapshots = traj->snapshots_used();
    r.bytes_written = traj->bytes_written();
    r.adjoint_time = MPI_Wtime() - a_start;
    r.preconditioner_setups = s.pc_reuse.setups();
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::setup_sweep(const std::vector<TimeLevel> &levels, Sweep *s) const {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const bool bdf1 = solver::time_options().get(*cfg_).scheme == solver::TimeScheme::Bdf1;
  s->bdf.assign(steps_ + 3, solver::BdfCoefficients());
  for (long n = 1; n <= steps_; ++n)
    s->bdf[n] = solver::bdf_coefficients((bdf1 || n == 1) ? 1 : 2, levels[n].dt, levels[n].dt_prev);
  // GMRES with the exact Jacobian of each level, preconditioned by (default: an LU factorization
  // of) the full Jacobian (exact: one iteration right after a set-up, a few while the flow changes
  // little) or its compact face-neighbour part (smaller factors, more iterations), reused across
  // levels (Sweep::pc_reuse)
  const AdjointOptions adj = adjoint_options().get(*cfg_);
  const solver::LinearChoice choice = solver::linear_choice(*cfg_);
  const solver::LinearMethod method = choice.method;
  const bool iterative = method == solver::LinearMethod::Iterative;
  s->may_fall_back = choice.fallback;
  s->fallback_exact = adj.preconditioner_matrix == solver::PreconditionerMatrix::Exact;
  using Format = discretization::FlowResidual::MatrixFormat;
  PetscCall(res.create_jacobian(&s->J, false, iterative ? Format::Block : Format::Point));
  s->iterative = iterative;
  if (iterative || adj.preconditioner_matrix == solver::PreconditionerMatrix::Compact)
    PetscCall(res.create_jacobian(&s->P, true));
  for (Vec *v : {&s->w, &s->w_prev}) PetscCall(res.create_state(v));
  const solver::LinearTolerances tol{adj.rtol, adj.atol,
                                     static_cast<PetscInt>(adj.level_max_iterations)};
  s->tolerances = tol;
  PetscCall(solver::create_linear_solver(res.mesh().comm, solver::LinearSolverRole::Adjoint, method,
                                         solver::LinearSystems::TimeStepping,
                                         solver::mesh_kind(res.mesh()), KSPGMRES, tol, &s->ksp));
  // reuse only makes sense with a Krylov method around the preconditioner: with -adj_ksp_type
  // preonly an earlier level's factors would be applied as if they were this level's inverse
  KSPType type;
  PetscCall(KSPGetType(s->ksp, &type));
  const bool reuse = std::string(type) != KSPPREONLY;
  PetscCheck(reuse || !iterative, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: -adj_ksp_type preonly would apply one multigrid cycle as the inverse of each "
             "level's Jacobian; with solver.linear %s use a Krylov method (the default GMRES), or "
             "solver.linear: direct for an LU per level",
             cfg_->file().c_str(), choice.fallback ? "auto" : "iterative");
  PetscCheck(reuse || !s->P, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: adjoint.preconditioner_matrix 'compact' needs a Krylov method around the "
             "factorization (-adj_ksp_type gmres, the default); with -adj_ksp_type preonly use "
             "adjoint.preconditioner_matrix: exact",
             cfg_->file().c_str());
  // multigrid: against the fewest iterations since the set-up (the first level starts from zero)
  using Reuse = solver::PreconditionerReuse;
  s->pc_reuse = Reuse(static_cast<int>(solver::solver_options().get(*cfg_).refactor_iterations),
                      iterative ? solver::kAdjointReuseGrowth : solver::kReuseGrowth, reuse,
                      iterative ? Reuse::Reference::Fewest : Reuse::Reference::First);
  // GMRES (the default Krylov method) recycles a subspace from level to level
  const int recycle = static_cast<int>(adj.recycle);
  if (iterative && recycle > 0 && std::string(type) == KSPGMRES)
    s->recycler = std::make_unique<solver::RecyclingGmres>(recycle);
  // a Krylov solve starts from the best combination of the later levels' adjoints (the adjoint
  // varies smoothly in time): fewer iterations to the same tolerance, relative to ||b||
  s->guess = reuse ? static_cast<int>(adj.initial_guess) : 0;
  s->work.assign(2 * s->guess, nullptr);
  for (Vec &v : s->work) PetscCall(res.create_state(&v));
  if (s->guess > 0 && s->recycler) PetscCall(res.create_state(&s->initial_residual));
  if (s->guess > 0) PetscCall(KSPSetInitialGuessNonzero(s->ksp, PETSC_TRUE));
  s->shift.assign(res.mesh().n_owned_cells, 0.0);
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::solve_level(const UnsteadyAdjointOptions &o, Trajectory &traj,
                                            long n, Sweep &s,
                                            std::vector<UnsteadyAdjointResult> *results) {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  TimeLevel level;
  PetscCall(traj.get(n, s.w, s.w_prev, &level));
  PetscCall(res.local_state(discretization::TimeLevel{level.time, n}, s.w, &s.state));
  for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c)
    s.shift[c] = res.parameters().rho * res.geometry().cell_volume[c] * s.bdf[n].a0;
  PetscCall(res.jacobian(s.state, s.J, &s.shift));
  // a new time coefficient (the first level's BDF1, a change of step size): a preconditioner of
  // the later levels has the wrong diagonal (level 1 of DFG 2D-2 level 0: 36 instead of 70
  // iterations)
  if (n < steps_ && s.bdf[n].a0 != s.bdf[n + 1].a0) s.pc_reuse.request_setup();
  const std::size_t k = goals_.size();
  std::vector<Gradient> gobj(k), gres(k);
  for (std::size_t i = 0; i < k; ++i)
    PetscCall(assemble_adjoint_rhs(goals_[i], n, level.time, s, *s.adjoints[i], &gobj[i]));
  PetscCall(solve_transposed(n, level.time, s, results));
  for (std::size_t i = 0; i < k; ++i) {
    Adjoint &a = *s.adjoints[i];
    UnsteadyAdjointResult &r = (*results)[i];
    PetscCall(assemble_residual_gradient(n, s, a, &gres[i]));
    PetscCall(accumulate_gradients(goals_[i], n, level, gobj[i], gres[i], a, &r));
    if (i == 0 && o.snapshot && o.snapshot_every > 0 && (n % o.snapshot_every == 0 || n == 1))
      PetscCall(o.snapshot(n, level.time, a.psi_local));
    // shift the adjoint history: psi^{n+k+1} <- psi^{n+k} (the oldest vector is reused)
    if (!a.older.empty()) {
      std::rotate(a.older.rbegin(), a.older.rbegin() + 1, a.older.rend());
      PetscCall(VecCopy(a.psi2, a.older.front()));
    }
    PetscCall(VecCopy(a.psi1, a.psi2));
    PetscCall(VecCopy(a.psi, a.psi1));
    r.parameters.clear();
    for (const auto &[name, value] : a.sums) r.parameters.push_back({name, 0.0, value});
  }
  if (o.on_level) PetscCall(o.on_level(level, s.w, s.w_prev, s.adjoints[0]->psi));
  if (o.save_every > 0 && n > 1 && n % o.save_every == 0) {
    PetscCall(chain_geometry(*s.adjoints[0], &results->front()));
    PetscCall(save_state(o, n, s.adjoints[0]->history(), results->front()));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::assemble_adjoint_rhs(Goal &goal, long n, double t, Sweep &s,
                                                     Adjoint &a, Gradient *gobj) {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  // explicit objective part at this level
  const double q = adjoint_weight(goal, n);
  goal.objective.set_time(t);
  Sensitivities &so = a.objective_bars;
  so.reset(res);
  if (q != 0) PetscCall(goal.objective.reverse(res, s.state, so, q));
  PetscCall(finish(res, s.state, so, gobj, true, &a.geom, &a.coefficients, &a.wall_distance));
  PetscCall(VecSet(a.g, 0.0));
  for (PetscInt c = 0; c < m.n_cells; ++c)
    for (int k = 0; k < nv; ++k)
      if (so.wbar[c * nv + k] != 0)
        PetscCall(VecSetValue(a.g, m.cell_global[c] * nv + k, so.wbar[c * nv + k], ADD_VALUES));
  PetscCall(VecAssemblyBegin(a.g));
  PetscCall(VecAssemblyEnd(a.g));
  // coupling to the later levels
  PetscScalar *ga;
  PetscCall(VecGetArray(a.g, &ga));
  PetscCall(add_time_coupling(n, s, a, ga));
  PetscCall(VecRestoreArray(a.g, &ga));
  PetscCall(VecScale(a.g, -1.0));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::add_time_coupling(long n, const Sweep &s, const Adjoint &a,
                                                  PetscScalar *out) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  const physics::EquationSet &eq = res_->equations();
  const double rho = res_->parameters().rho;
  const double c1 = n + 1 <= steps_ ? s.bdf[n + 1].a1 : 0.0,
               c2 = n + 2 <= steps_ ? s.bdf[n + 2].a2 : 0.0;
  const PetscScalar *p1, *p2;
  PetscCall(VecGetArrayRead(a.psi1, &p1));
  PetscCall(VecGetArrayRead(a.psi2, &p2));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double rv = rho * res_->geometry().cell_volume[c];
    for (int k = 0; k < nv; ++k)
      if (eq.transient(k)) out[c * nv + k] += rv * (c1 * p1[c * nv + k] + c2 * p2[c * nv + k]);
  }
  PetscCall(VecRestoreArrayRead(a.psi1, &p1));
  PetscCall(VecRestoreArrayRead(a.psi2, &p2));
  PetscFunctionReturn(0);
}

PetscErrorCode
UnsteadyAdjoint::solve_transposed(long n, double t, Sweep &s,
                                  std::vector<UnsteadyAdjointResult> *results) const {
  PetscFunctionBeginUser;
  const MPI_Comm comm = res_->mesh().comm;
  const bool pc_setup = s.pc_reuse.decide_setup();
  if (s.P && pc_setup) PetscCall(res_->jacobian(s.state, s.P, &s.shift, true));
  // iterative: untransposed solves with a virtual J^T and the multigrid of P^T; direct:
  // KSPSolveTranspose with the LU of J (or of P inside GMRES)
  PetscCall(KSPSetReusePreconditioner(s.ksp, pc_setup ? PETSC_FALSE : PETSC_TRUE));
  if (s.iterative) {
    PetscCall(solver::transposed_operators(s.J, s.P, pc_setup, &s.JT, &s.PT));
    PetscCall(KSPSetOperators(s.ksp, s.JT, s.PT));
    PetscCall(solver::set_up_preconditioner(s.ksp));
  } else {
    PetscCall(KSPSetOperators(s.ksp, s.J, s.P ? s.P : s.J));
    PetscCall(solver::check_transposed_solve(s.ksp));
  }
  if (s.recycler) s.recycler->operator_changed(pc_setup);
  // every objective's solve with the same preconditioner; the reuse rule sees the level's largest
  // iteration count
  PetscInt max_its = 0;
  double guess_residual = 1; // of the first objective's solve
  for (std::size_t i = 0; i < s.adjoints.size(); ++i) {
    Adjoint &a = *s.adjoints[i];
    if (i > 0) PetscCall(KSPSetReusePreconditioner(s.ksp, PETSC_TRUE));
    double relative = 1;
    if (s.guess > 0) {
      std::vector<Vec> previous = a.history();
      previous.resize(s.guess);
      PetscCall(solver::least_residual_guess(s.iterative ? s.JT : s.J, !s.iterative, a.g, previous,
                                             s.work, a.psi, &relative, s.initial_residual));
    }
    if (i == 0) guess_residual = relative;
    KSPConvergedReason reason = KSP_DIVERGED_ITS;
    PetscInt its = 0;
    const bool skip = s.may_fall_back && s.fallbacks >= kStickyLevelFallbacks;
    if (skip) {
      // the last levels all needed the fallback: straight to it
    } else if (s.recycler) {
      if (s.guess == 0) PetscCall(VecSet(a.psi, 0.0));
      PetscCall(s.recycler->solve(s.ksp, a.g, a.psi, &its, &reason, s.initial_residual));
    } else {
      if (s.iterative)
        PetscCall(KSPSolve(s.ksp, a.g, a.psi));
      else
        PetscCall(KSPSolveTranspose(s.ksp, a.g, a.psi));
      PetscCall(KSPGetConvergedReason(s.ksp, &reason));
      PetscCall(KSPGetIterationNumber(s.ksp, &its));
    }
    if (reason < 0 && s.may_fall_back) {
      PetscInt lu_its;
      PetscCall(solve_level_direct(n, s, a, reason, skip, &reason, &lu_its));
      (*results)[i].linear_iterations += lu_its;
      ++(*results)[i].linear_fallbacks;
      if (i == 0 && ++s.fallbacks == kStickyLevelFallbacks)
        PetscCall(log_info(comm,
                           "solver.linear: auto: %d adjoint levels needed the direct LU; the "
                           "levels below go to it directly",
                           s.fallbacks));
      max_its = std::max(max_its, lu_its);
    }
    PetscCheck(reason > 0, comm, PETSC_ERR_NOT_CONVERGED,
               "adjoint level %ld: the transposed solve did not converge (%s)", n,
               KSPConvergedReasons[reason]);
    (*results)[i].linear_iterations += its;
    max_its = std::max(max_its, its);
  }
  s.pc_reuse.record_solve(max_its);
  PetscCall(log_info(comm, "adjoint level %5ld  t %.6f  linear iterations %d  initial guess %.1e",
                     n, t, (int)max_its, guess_residual));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::solve_level_direct(long n, Sweep &s, Adjoint &a,
                                                   KSPConvergedReason failed, bool skipped,
                                                   KSPConvergedReason *reason,
                                                   PetscInt *its) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  char what[64];
  std::snprintf(what, sizeof(what), "the adjoint solve of level %ld", n);
  if (!skipped) PetscCall(solver::announce_fallback(m, what, KSPConvergedReasons[failed]));
  if (!s.fallback)
    PetscCall(solver::create_linear_solver(
        m.comm, solver::LinearSolverRole::AdjointFallback, solver::LinearMethod::Direct,
        solver::LinearSystems::TimeStepping, solver::mesh_kind(m), KSPGMRES, s.tolerances,
        &s.fallback));
  // GMRES on J^T around the LU of this level's exact Jacobian (one iteration), or of its compact
  // matrix (the multigrid's P may be older).  The compact LU did not converge a URANS level in
  // 500 iterations (cases/naca0012-rans/urans-verify.yaml, level 20 on 2 ranks: thin cells of
  // aspect ratio up to 1e7, whose couplings through the gradients the compact matrix drops)
  if (s.fallback_exact) {
    PetscCall(KSPSetOperators(s.fallback, s.J, s.J));
  } else {
    PetscCall(res_->jacobian(s.state, s.P, &s.shift, true));
    PetscCall(KSPSetOperators(s.fallback, s.J, s.P));
  }
  PetscCall(solver::check_transposed_solve(s.fallback));
  PetscCall(VecSet(a.psi, 0.0));
  PetscCall(KSPSolveTranspose(s.fallback, a.g, a.psi));
  PetscCall(KSPGetConvergedReason(s.fallback, reason));
  PetscCall(KSPGetIterationNumber(s.fallback, its));
  // the multigrid of the next level is set up from this level's P
  s.pc_reuse.request_setup();
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::assemble_residual_gradient(long n, Sweep &s, Adjoint &a,
                                                           Gradient *gres) const {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  // fluxes
  PetscCall(ghosted_local_values(a.psi, &a.psi_local));
  Sensitivities &sr = a.residual_bars;
  sr.reset(res);
  PetscCall(add_residual(res, s.state, a.psi_local, sr));
  // the time terms' dependence on the cell volumes, rho V (a0 w^n + a1 w^{n-1} + a2 w^{n-2}) of
  // level n: psi^n's terms with w^n and w^{n-1}, and the one of level n + 1 with w^{n-1}, whose
  // psi^{n+1} is kept here (level n + 1 had w^{n+1} and w^n only); level 1 has no a2 (BDF1)
  const double rho = res.parameters().rho;
  const solver::BdfCoefficients &b = s.bdf[n], &b1 = s.bdf[n + 1];
  const PetscScalar *w, *wp, *p1;
  PetscCall(VecGetArrayRead(s.w, &w));
  PetscCall(VecGetArrayRead(s.w_prev, &wp));
  PetscCall(VecGetArrayRead(a.psi1, &p1));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    double sum = 0;
    for (int k = 0; k < nv; ++k) {
      if (!res.equations().transient(k)) continue;
      const PetscInt i = c * nv + k;
      sum += a.psi_local[i] * (b.a0 * w[i] + b.a1 * wp[i]) + b1.a2 * p1[i] * wp[i];
    }
    sr.geom.cell_volume[c] += rho * sum;
  }
  PetscCall(VecRestoreArrayRead(s.w, &w));
  PetscCall(VecRestoreArrayRead(s.w_prev, &wp));
  PetscCall(VecRestoreArrayRead(a.psi1, &p1));
  PetscCall(finish(res, s.state, sr, gres, true, &a.geom, &a.coefficients, &a.wall_distance));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::accumulate_gradients(const Goal &g, long n, const TimeLevel &level,
                                                     const Gradient &gobj, const Gradient &gres,
                                                     Adjoint &a,
                                                     UnsteadyAdjointResult *result) const {
  PetscFunctionBeginUser;
  // a parameter's derivative at this level: into its sum (16) and its per-level series (17)
  const auto add = [&](const std::string &name, double v) {
    a.sums[name] += v;
    auto &series = result->control[name];
    series.resize(steps_, 0.0);
    series[n - 1] += v;
  };
  for (std::size_t i = 0; i < gres.parameters.size(); ++i)
    add(gres.parameters[i].name, gres.parameters[i].gradient + gobj.parameters[i].gradient);
  if (g.beta > 0) {
    const double wv = g.control_omega->value(level.time, n);
    add(g.control_name, 2 * g.beta * level.dt * wv);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::chain_geometry(Adjoint &a, UnsteadyAdjointResult *result) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  res_->gradient_operator().reverse_coefficients(m, res_->geometry(), a.coefficients, &a.geom);
  std::vector<Vec3<double>> X(m.n_vertices, Vec3<double>());
  // the wall distance (a turbulence model) -> the centroids and the wall vertices
  if (!res_->wall_distance().empty()) {
    a.wall_distance.resize(res_->wall_distance().size(), 0.0);
    PetscCall(res_->wall_distance_reverse(a.wall_distance, &a.geom.cell_centroid, &X));
    std::fill(a.wall_distance.begin(), a.wall_distance.end(), 0.0);
  }
  geometry::geometry_reverse(m, res_->coordinates(), a.geom, X);
  PetscCall(mesh::sum_vertex_copies(m, X));
  for (PetscInt v = 0; v < m.n_vertices; ++v) result->X[v] += X[v];
  geometry::zero_geometry(m, a.geom);
  PetscFunctionReturn(0);
}

namespace {

// The per-level derivatives g (index n - 1 for t^n = times[n - 1]) of a boundary parameter given
// by the time function f chained to f's parameters, into out[name.PARAMETER]: a sine's amplitude,
// frequency, phase and offset, a table's knot values (src/adjoint/README.md, after eq. 18).
void chain_time_function(const physics::TimeFunction &f, const std::string &name,
                         const std::vector<double> &g, const std::vector<double> &times,
                         std::map<std::string, double> *out) {
  const std::vector<std::string> names = f.parameter_names();
  std::vector<double> sums(names.size(), 0.0);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const std::vector<double> d = f.parameter_derivatives(times[k]);
    for (std::size_t i = 0; i < d.size(); ++i) sums[i] += g[k] * d[i];
  }
  for (std::size_t i = 0; i < names.size(); ++i) (*out)[name + "." + names[i]] = sums[i];
}

} // namespace

PetscErrorCode UnsteadyAdjoint::chain_time_functions(const std::map<std::string, double> &sums,
                                                     UnsteadyAdjointResult *result) const {
  PetscFunctionBeginUser;
  std::map<std::string, double> out = sums;
  const ParameterRegistry reg(*res_);
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const physics::TimeFunction *f = reg.time_function(*res_, i);
    const std::string &name = reg.spec(i).name;
    if (!f || !result->control.count(name) || f->is_constant()) continue;
    chain_time_function(*f, name, result->control[name], result->times, &out);
    out.erase(name); // a value that changes in time has no single derivative
  }
  result->parameters.clear();
  for (const auto &[name, value] : out) result->parameters.push_back({name, 0.0, value});
  PetscFunctionReturn(0);
}

int UnsteadyAdjoint::history_length() const {
  return std::max(2, static_cast<int>(adjoint_options().get(*cfg_).initial_guess));
}

PetscErrorCode UnsteadyAdjoint::save_state(const UnsteadyAdjointOptions &o, long n,
                                           const std::vector<Vec> &history,
                                           const UnsteadyAdjointResult &r) const {
  PetscFunctionBeginUser;
  PetscCall(save_adjoint_state({*res_, *cfg_, steps_, dt_}, o.state_file, n, history, r, o.fault));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::load_state(const UnsteadyAdjointOptions &o, long *n,
                                           const std::vector<Vec> &history,
                                           UnsteadyAdjointResult *r) const {
  PetscFunctionBeginUser;
  PetscCall(load_adjoint_state({*res_, *cfg_, steps_, dt_}, o.state_file, n, history, r));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
