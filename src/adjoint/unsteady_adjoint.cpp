// Unsteady discrete adjoint (see include/karman/adjoint/unsteady_adjoint.hpp).
#include "karman/adjoint/unsteady_adjoint.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/natural_layout.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/recycling_gmres.hpp"
#include "karman/solver/steady_solver.hpp"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

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

PetscErrorCode UnsteadyAdjoint::setup(FlowResidual &res, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  res_ = &res;
  cfg_ = &cfg;
  const solver::TimeOptions time = solver::time_options().get(cfg);
  t_end_ = time.t_end;
  dt_ = time.dt;
  steps_ = std::lround(t_end_ / dt_);
  PetscCheck(steps_ >= 2 && std::abs(steps_ * dt_ - t_end_) < 1e-9 * t_end_, res.mesh().comm,
             PETSC_ERR_USER_INPUT,
             "%s: the unsteady adjoint needs time.t_end to be a multiple (>= 2) of time.dt (got %g "
             "and %g)",
             cfg.file().c_str(), t_end_, dt_);
  goals_.assign(1, Goal());
  PetscCall(parse_goal(cfg, &goals_[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::add_objective(const config::CaseConfig &objective) {
  PetscFunctionBeginUser;
  PetscCheck(res_, PETSC_COMM_SELF, PETSC_ERR_ORDER, "UnsteadyAdjoint::add_objective before setup");
  Goal g;
  PetscCall(parse_goal(objective, &g));
  goals_.push_back(std::move(g));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::parse_goal(const config::CaseConfig &cfg, Goal *g) const {
  PetscFunctionBeginUser;
  const FlowResidual &res = *res_;
  PetscCall(g->objective.setup(res, cfg));
  const ObjectiveOptions obj = objective_options().get(cfg);
  g->statistic = obj.time;
  const std::vector<double> &window = obj.window;
  PetscCheck(window.empty() || (window.size() == 2 && window[1] > window[0]), res.mesh().comm,
             PETSC_ERR_USER_INPUT, "%s: objective.window must be [t0, t1] with t1 > t0",
             cfg.file().c_str());
  g->t0 = window.empty() ? 0.0 : window[0];
  g->t1 = window.empty() ? t_end_ : std::min(window[1], t_end_);
  g->weighting = obj.weighting;
  g->beta = obj.control_cost;
  const std::string &wall = obj.control_wall;
  const int patch = wall.empty() ? -1 : res.mesh().patch_index(wall);
  PetscCheck(g->beta == 0 || patch >= 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: objective.control_cost needs objective.control_wall (a rotating wall), got '%s'",
             cfg.file().c_str(), wall.c_str());
  if (patch >= 0) { // its rotation rate: the parameter boundaries.WALL.omega
    g->control_name = "boundaries." + wall + ".omega";
    const ParameterRegistry reg(res);
    const int i = reg.find(g->control_name);
    g->control_omega = i >= 0 ? reg.time_function(res, i) : nullptr;
    PetscCheck(g->control_omega, res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: objective.control_wall '%s' is not a wall with a rotation rate (2D)",
               cfg.file().c_str(), wall.c_str());
  }
  PetscFunctionReturn(0);
}

double window_weight(long n, long steps, double dt, double t0, double t1, WindowWeighting w) {
  const long first = std::max(1L, static_cast<long>(std::ceil(t0 / dt - 1e-9)));
  const long last = std::min(steps, static_cast<long>(std::floor(t1 / dt + 1e-9)));
  if (n < first || n > last || last < first) return 0.0;
  if (first == last) return 1.0;
  const long M = last - first;
  if (w == WindowWeighting::Hann && M >= 2) {
    const double s = std::sin(M_PI * static_cast<double>(n - first) / static_cast<double>(M));
    return 2.0 * s * s / static_cast<double>(M);
  }
  const double q = 1.0 / static_cast<double>(M);
  return (n == first || n == last) ? 0.5 * q : q;
}

double UnsteadyAdjoint::weight(const Goal &g, long n) const {
  if (g.statistic == Statistic::Final) return n == steps_ ? 1.0 : 0.0;
  return window_weight(n, steps_, dt_, g.t0, g.t1, g.weighting);
}

// J = S + cost with S = sqrt(sum q_n (J_s^n - c)^2) (c = 0: rms, c = m: std; sum q_n = 1, so
// dS/dm = 0 for std): dS/dJ_s^n = q_n (J_s^n - c) / S.
double UnsteadyAdjoint::adjoint_weight(const Goal &g, long n) const {
  const double q = weight(g, n);
  if (q == 0 || g.statistic == Statistic::Average || g.statistic == Statistic::Final) return q;
  const double c = g.statistic == Statistic::Std ? g.mean : 0.0;
  return q * (g.values[n] - c) / g.spread;
}

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
  /// LU of this level's compact matrix (options prefix adj_fallback_; created at the first)
  bool may_fall_back = false;
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
  const double step_rtol = solver::solver_options().get(*cfg_).rtol;
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
  long n = steps_;
  UnsteadyAdjointResult &first = results->front();
  if (o.resume && !o.forward_only) {
    PetscCall(load_state(o, &n, s.adjoints[0]->history(), &first));
    first.resumed_from = n;
  }
  solver::UnsteadySolver ts;
  std::unique_ptr<Trajectory> traj;
  std::vector<TimeLevel> levels;
  PetscCall(run_forward(w0, o, ts, &traj, &levels, results));
  if (o.forward_only) PetscFunctionReturn(0);

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

PetscErrorCode UnsteadyAdjoint::run_forward(Vec w0, const UnsteadyAdjointOptions &o,
                                            solver::UnsteadySolver &ts,
                                            std::unique_ptr<Trajectory> *traj,
                                            std::vector<TimeLevel> *levels,
                                            std::vector<UnsteadyAdjointResult> *results) {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const double t_start = MPI_Wtime();
  PetscCall(ts.setup(res, *cfg_));
  PetscCall(ts.set_state(w0, w0, 0, 0.0, 0.0));
  if (o.schedule == AdjointSchedule::Revolve || o.forward_only) {
    *traj = make_revolve(ts, o.forward_only ? 0 : o.snapshots);
  } else {
    *traj = make_store_all(ts, m, o.trajectory_directory);
  }
  levels->assign(steps_ + 1, TimeLevel());
  std::vector<double> J(goals_.size(), 0.0), cost(goals_.size(), 0.0);
  for (Goal &g : goals_) g.values.assign(steps_ + 1, 0.0);
  const std::function<PetscErrorCode(const TimeLevel &)> on_step =
      [&](const TimeLevel &l) -> PetscErrorCode {
    PetscFunctionBeginUser;
    (*levels)[l.step] = l;
    discretization::LocalState state;
    bool have_state = false;
    for (std::size_t i = 0; i < goals_.size(); ++i) {
      Goal &g = goals_[i];
      const double q = weight(g, l.step);
      g.objective.set_time(l.time);
      if (q != 0) {
        if (!have_state)
          PetscCall(res.local_state(discretization::TimeLevel{l.time, l.step}, ts.state(), &state));
        have_state = true;
        double Js;
        PetscCall(g.objective.value(res, state, &Js));
        J[i] += q * Js;
        g.values[l.step] = Js;
      }
      if (g.beta > 0) {
        const double w = g.control_omega->value(l.time, l.step);
        cost[i] += g.beta * l.dt * w * w;
      }
    }
    PetscFunctionReturn(0);
  };
  PetscCall((*traj)->forward(steps_, dt_, on_step));
  const double forward_time = MPI_Wtime() - t_start;
  double forward_memory, forward_memory_max;
  PetscCall(solver::peak_memory(m.comm, &forward_memory, &forward_memory_max));
  for (std::size_t i = 0; i < goals_.size(); ++i) {
    Goal &g = goals_[i];
    if (g.statistic == Statistic::Rms || g.statistic == Statistic::Std) {
      g.mean = J[i];
      double s2 = 0;
      for (long n = 1; n <= steps_; ++n) {
        const double d = g.values[n] - (g.statistic == Statistic::Std ? g.mean : 0.0);
        s2 += weight(g, n) * d * d;
      }
      g.spread = std::sqrt(s2);
      // dS/dJ_s^n = q_n (J_s^n - c) / S: none where S = 0
      PetscCheck(o.forward_only || g.spread > 0, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: objective.time %s: the objective %s is %s over the window, where its "
                 "square root has no derivative",
                 cfg_->file().c_str(), g.statistic == Statistic::Rms ? "rms" : "std",
                 g.objective.description().c_str(),
                 g.statistic == Statistic::Rms ? "zero" : "constant");
      J[i] = g.spread;
    }
    (*results)[i].J = J[i] + cost[i];
    (*results)[i].forward_time = forward_time;
    (*results)[i].forward_memory = forward_memory;
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
                                         solver::LinearSystems::TimeStepping, res.mesh().dim,
                                         KSPGMRES, tol, &s->ksp));
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
  PetscCall(finish(res, s.state, so, gobj, true, &a.geom, &a.coefficients));
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
    KSPConvergedReason reason;
    PetscInt its;
    if (s.recycler) {
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
      PetscCall(solve_level_direct(n, s, a, reason, &reason, &lu_its));
      (*results)[i].linear_iterations += lu_its;
      ++(*results)[i].linear_fallbacks;
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
                                                   KSPConvergedReason failed,
                                                   KSPConvergedReason *reason,
                                                   PetscInt *its) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  char what[64];
  std::snprintf(what, sizeof(what), "the adjoint solve of level %ld", n);
  PetscCall(solver::announce_fallback(m, what, KSPConvergedReasons[failed]));
  if (!s.fallback)
    PetscCall(solver::create_linear_solver(
        m.comm, solver::LinearSolverRole::AdjointFallback, solver::LinearMethod::Direct,
        solver::LinearSystems::TimeStepping, m.dim, KSPGMRES, s.tolerances, &s.fallback));
  // GMRES on J^T around the LU of this level's compact matrix (the multigrid's P may be older)
  PetscCall(res_->jacobian(s.state, s.P, &s.shift, true));
  PetscCall(KSPSetOperators(s.fallback, s.J, s.P));
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
  PetscCall(finish(res, s.state, sr, gres, true, &a.geom, &a.coefficients));
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

namespace {

constexpr const char *kStateFormat = "karman-adjoint-state";
constexpr int kStateVersion = 1;

// What an adjoint state depends on besides the mesh, the problem (CaseConfig::problem_keys())
// and the time levels: the time scheme, the initial condition and the objective
// (resolved, as one line of YAML each).
std::vector<std::pair<std::string, std::string>> case_identity(const config::CaseConfig &cfg) {
  const YAML::Node resolved = YAML::Load(cfg.resolved_yaml());
  std::vector<std::pair<std::string, std::string>> id{
      {"time.scheme",
       solver::time_options().get(cfg).scheme == solver::TimeScheme::Bdf1 ? "bdf1" : "bdf2"}};
  for (const char *name : {"initial", "objective"}) {
    YAML::Emitter e;
    e << YAML::Flow << resolved[name];
    id.emplace_back(name, e.c_str());
  }
  return id;
}

} // namespace

// The adjoint state after level n: psi^n, psi^{n+1} (cell fields, /fields/psi1, psi2), dJ/dX
// summed so far (/vertex_fields/xbar, serial vertex order) and a JSON record /adjoint_state
// (level, steps, dt, J, the case's identity, parameter sums, per-step control series), all in
// one HDF5 file that is written under a temporary name and renamed when complete.  The level is
// stored twice (attribute "level" with the psi datasets, and in the record) and compared on load.
int UnsteadyAdjoint::history_length() const {
  return std::max(2, static_cast<int>(adjoint_options().get(*cfg_).initial_guess));
}

PetscErrorCode UnsteadyAdjoint::save_state(const UnsteadyAdjointOptions &o, long n,
                                           const std::vector<Vec> &history,
                                           const UnsteadyAdjointResult &r) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  const std::string tmp = o.state_file + ".tmp";
  std::vector<io::Field> psi;
  for (std::size_t k = 0; k < history.size(); ++k) {
    psi.push_back({"psi" + std::to_string(k + 1), nv, {}});
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(history[k], &a));
    psi.back().values.assign(a, a + m.n_owned_cells * nv);
    PetscCall(VecRestoreArrayRead(history[k], &a));
  }
  io::Field fx{"xbar", 3, {}};
  PetscCall(io::create_fields_h5(m, res_->coordinates(), tmp, psi,
                                 {{"level", static_cast<double>(n)}},
                                 {{"adjoint_format", kStateFormat}}));
  if (o.fault) o.fault({"adjoint-state-partial", n, 0.0}); // crash tests
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) fx.values.insert(fx.values.end(), {r.X[v][0], r.X[v][1], r.X[v][2]});
  nlohmann::json j;
  j["format"] = kStateFormat;
  j["version"] = kStateVersion;
  j["level"] = n;
  j["history"] = history.size();
  j["steps"] = steps_;
  j["dt"] = dt_;
  j["J"] = r.J;
  j["problem_hash"] = cfg_->problem_hash();
  j["problem_keys"] = cfg_->problem_keys();
  for (const auto &[key, value] : case_identity(*cfg_)) j["case"][key] = value;
  j["parameters"] = nlohmann::json::object();
  for (const auto &p : r.parameters) j["parameters"][p.name] = p.gradient;
  j["control"] = nlohmann::json::object();
  for (const auto &[name, series] : r.control) j["control"][name] = series;
  PetscCall(io::add_to_fields_h5(m, tmp, {fx}, {{"adjoint_state", j.dump()}}));
  if (o.fault) o.fault({"adjoint-state", n, 0.0});
  PetscCall(io::replace_file(m.comm, tmp, o.state_file));
  PetscFunctionReturn(0);
}

namespace {

// Reads the JSON record /adjoint_state of a saved adjoint state and checks its format and keys.
PetscErrorCode read_state_record(MPI_Comm comm, const std::string &path, nlohmann::json *record) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  PetscCheck(std::filesystem::exists(path), comm, PETSC_ERR_FILE_OPEN,
             "--restart: no saved adjoint state %s (adjoint.save_every was 0?)", file);
  std::string text;
  PetscCall(io::read_text_h5(comm, path, "adjoint_state", &text));
  *record = nlohmann::json::parse(text, nullptr, false);
  const nlohmann::json &j = *record;
  const auto has = [&](const char *key) { return j.is_object() && j.contains(key); };
  PetscCheck(has("format") && j["format"] == kStateFormat && has("version") &&
                 j["version"] == kStateVersion,
             comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: not a karman adjoint state (version %d), or corrupt or truncated: no readable "
             "/adjoint_state record",
             file, kStateVersion);
  bool complete = true;
  for (const char *key : {"level", "steps", "dt", "problem_hash", "case", "parameters", "control"})
    complete = complete && has(key);
  PetscCheck(complete && j["level"].is_number_integer() && j["steps"].is_number_integer() &&
                 j["dt"].is_number() && j["problem_hash"].is_string() && j["case"].is_object() &&
                 j["parameters"].is_object() && j["control"].is_object(),
             comm, PETSC_ERR_FILE_UNEXPECTED, "%s: corrupt adjoint state record /adjoint_state",
             file);
  PetscFunctionReturn(0);
}

// This run, which a saved adjoint state must match: the mesh (its hash), the case and the time
// levels (steps of dt)
struct RunIdentity {
  MPI_Comm comm;
  std::string mesh_hash;
  const config::CaseConfig &cfg;
  long steps;
  double dt;
};

// The identity of the case in the state at `path` (record j): mesh, problem
// (CaseConfig::problem_keys), time levels, scheme, initial condition, objective
PetscErrorCode check_state_identity(const RunIdentity &run, const std::string &path,
                                    const nlohmann::json &j) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  const config::CaseConfig &cfg = run.cfg;
  std::string file_mesh_hash;
  PetscCall(io::read_text_attribute_h5(run.comm, path, "mesh_hash", &file_mesh_hash));
  PetscCheck(file_mesh_hash == run.mesh_hash, run.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of another mesh (mesh hash %s, this run's mesh %s)", file,
             file_mesh_hash.c_str(), run.mesh_hash.c_str());
  const std::string problem_hash = j["problem_hash"].get<std::string>();
  PetscCheck(
      problem_hash == cfg.problem_hash(), run.comm, PETSC_ERR_FILE_UNEXPECTED,
      "%s: adjoint state of another problem (%s: %s)", file, cfg.file().c_str(),
      config::describe_problem_change(j.value("problem_keys", std::string()), cfg.problem_keys())
          .c_str());
  const long steps = j["steps"].get<long>();
  const double dt = j["dt"].get<double>();
  PetscCheck(steps == run.steps && std::abs(dt - run.dt) <= 1e-12 * run.dt, run.comm,
             PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of a run with %ld steps of dt %.17g, %s has %ld steps of dt %.17g "
             "(time.t_end, time.dt)",
             file, steps, dt, cfg.file().c_str(), run.steps, run.dt);
  for (const auto &[key, now] : case_identity(cfg)) {
    const std::string saved = j["case"].value(key, std::string());
    PetscCheck(saved == now, run.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: adjoint state of another case: its '%s' was %s, %s has %s", file, key.c_str(),
               saved.c_str(), cfg.file().c_str(), now.c_str());
  }
  PetscFunctionReturn(0);
}

// The level n of the state at `path` (record j): the record's (gradient sums) and the psi
// datasets' must agree, in [2, steps]
PetscErrorCode read_state_level(MPI_Comm comm, const std::string &path, const nlohmann::json &j,
                                long steps, long *n) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  double psi_level;
  PetscCall(io::read_real_attribute_h5(comm, path, "level", &psi_level));
  *n = j["level"].get<long>();
  PetscCheck(psi_level == static_cast<double>(*n), comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: inconsistent adjoint state: psi of level %g, gradient sums of level %ld", file,
             psi_level, *n);
  PetscCheck(*n >= 2 && *n <= steps, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of level %ld, expected a level in [2, %ld]", file, *n, steps);
  PetscFunctionReturn(0);
}

// psi^n, psi^{n+1} and the older history the file has (`saved` of them; a state saved with a
// shorter adjoint.initial_guess leaves the rest zero), nv unknowns per cell
PetscErrorCode read_state_history(const mesh::Mesh &m, const std::string &path, long saved, int nv,
                                  const std::vector<Vec> &history) {
  PetscFunctionBeginUser;
  for (std::size_t k = 0; k < history.size(); ++k) {
    PetscCall(VecSet(history[k], 0.0));
    if (static_cast<long>(k) >= saved) continue;
    io::Field f;
    PetscCall(io::read_cell_field_h5(m, path, "psi" + std::to_string(k + 1), &f));
    PetscCheck(f.ncomp == nv, m.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: adjoint state with %d unknowns per cell in psi%zu, expected %d", path.c_str(),
               f.ncomp, k + 1, nv);
    PetscScalar *a;
    PetscCall(VecGetArray(history[k], &a));
    std::copy(f.values.begin(), f.values.end(), a);
    PetscCall(VecRestoreArray(history[k], &a));
  }
  PetscFunctionReturn(0);
}

// The parameter gradient sums and the per-step control series (steps values each) of record j
PetscErrorCode read_state_sums(MPI_Comm comm, const std::string &path, const nlohmann::json &j,
                               long steps, UnsteadyAdjointResult *r) {
  PetscFunctionBeginUser;
  bool numbers = true;
  for (const auto &[name, value] : j["parameters"].items()) {
    numbers = numbers && value.is_number();
    if (value.is_number()) r->parameters.push_back({name, 0.0, value.get<double>()});
  }
  for (const auto &[name, series] : j["control"].items()) {
    numbers = numbers && series.is_array() && series.size() == static_cast<std::size_t>(steps);
    if (numbers)
      for (const auto &x : series) numbers = numbers && x.is_number();
    if (numbers) r->control[name] = series.get<std::vector<double>>();
  }
  PetscCheck(numbers, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: corrupt adjoint state record: parameter gradients must be numbers and control "
             "series have %ld values",
             path.c_str(), steps);
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode UnsteadyAdjoint::load_state(const UnsteadyAdjointOptions &o, long *n,
                                           const std::vector<Vec> &history,
                                           UnsteadyAdjointResult *r) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  nlohmann::json j;
  PetscCall(read_state_record(m.comm, o.state_file, &j));
  RunIdentity run{m.comm, "", *cfg_, steps_, dt_};
  PetscCall(io::mesh_hash(m, res_->coordinates(), &run.mesh_hash));
  PetscCall(check_state_identity(run, o.state_file, j));
  PetscCall(read_state_level(m.comm, o.state_file, j, steps_, n));
  io::Field fx;
  PetscCall(io::read_vertex_field_h5(m, o.state_file, "xbar", &fx));
  PetscCheck(fx.ncomp == 3, m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state with %d unknowns per vertex, expected 3", o.state_file.c_str(),
             fx.ncomp);
  PetscCall(read_state_history(m, o.state_file, j.value("history", 2L), res_->nv(), history));
  PetscCall(read_state_sums(m.comm, o.state_file, j, steps_, r));
  // owned vertices from the file, then every copy gets its owner's value
  std::size_t i = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    r->X[v] = Vec3<double>();
    if (m.vertex_owned[v])
      r->X[v] = Vec3<double>(fx.values[i], fx.values[i + 1], fx.values[i + 2]), i += 3;
  }
  PetscCall(mesh::sum_vertex_copies(m, r->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
