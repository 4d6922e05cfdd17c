// Unsteady discrete adjoint of the BDF1-start + BDF2 scheme (src/adjoint/README.md, sec. 7).
//
// Forward, level n = 1..N:  R^n = R_s(w^n; t^n) + rho V (a0^n w^n + a1^n w^{n-1} + a2^n w^{n-2}) =
// 0 (momentum rows).  Objective J = sum_n q_n J_s(w^n) + beta sum_n dt_n omega(t^n)^2, with q_n the
// trapezoidal weights of the time average over [t0, t1] (or q_N = 1 for a final-time
// objective) and an optional control cost on a rotating wall.  Backward, n = N..1:
//   (dR^n/dw^n)^T psi^n = -q_n dJ_s/dw^n - rho V (a1^{n+1} psi^{n+1} + a2^{n+2} psi^{n+2})
// and the gradients
//   dJ/da   = sum_n [q_n dJ_s/da + psi^n . dR^n/da]          (parameters constant in time)
//   dJ/da_n = q_n dJ_s/da_n + psi^n . dR^n/da_n              (a parameter's value at t^n)
//   dJ/dX   = sum_n [q_n dJ_s/dX + psi^n . dR^n/dX]          (with dV/dX in the time term)
//   dJ/dw^0 = rho V (a1^1 psi^1 + a2^2 psi^2)                (initial condition, momentum)
// The per-level derivatives a_n chain to the parameters of the time functions: a sine's
// amplitude, frequency, phase and offset, a table's knot values, per-step values.
// The sweep can be interrupted: every `save_every` levels the adjoint state after level n is
// saved and `resume` continues from it (adjoint/adjoint_state.hpp: the file, and what a resume
// refuses).  It reads the state before the forward run.
// Several objectives (add_objective) share one forward run and one backward sweep: at every level
// the Jacobian is assembled and the preconditioner set up (or reused) once, and each objective's
// adjoint is one more transposed solve with its own right-hand side; the results are those of
// separate runs (to the linear solver's tolerance).  Saving and resuming the adjoint state is for
// one objective.
#pragma once

#include "karman/adjoint/adjoint_options.hpp"

#include "karman/core/fault_injection.hpp"

#include "karman/adjoint/objective.hpp"
#include "karman/adjoint/trajectory.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace karman::adjoint {

/// The loosest solver.rtol (each time step's Newton tolerance) that the unsteady adjoint accepts:
/// its gradient is exact for converged steps.
constexpr double kAdjointMaxStepRtol = 1e-8;

/// q_n: the weight of level n (t^n = n dt, levels 1..steps) in the time average over the levels
/// with t^n in [t0, t1] (t_first .. t_last, span = t_last - t_first); sum_n q_n = 1 and q_n = 0
/// outside.  Hann: q_n = (2 / M) sin^2(pi (n - first) / M) with M = last - first >= 2 (the sum of
/// sin^2 over the M + 1 levels is M / 2); uniform below that.  The Hann weights vanish smoothly at
/// both ends, so that the mean of a periodic signal whose period does not divide the window
/// converges as (period / span)^3 instead of (period / span): a time-averaged drag does not ripple
/// as a forcing frequency changes (each ripple of the uniform mean puts a local minimum into an
/// optimization over the frequency).
double window_weight(long n, long steps, double dt, double t0, double t1, WindowWeighting w);
/// Level time t, reached by a step dt, lies in the window [t0, t1] (to 1e-9 dt at its edges): the
/// membership that window_weights uses, and the forward run of time.dt auto before the weights
/// are known.
inline bool in_window(double t, double dt, double t0, double t1) {
  return t >= t0 - 1e-9 * dt && t <= t1 + 1e-9 * dt;
}
/// The same for levels at any times t^0 < t^1 < ... < t^N (`times`, variable steps): the levels
/// with t^n in [t0, t1] (in_window) weighted by their trapezoidal widths (t^{n+1} - t^{n-1}) / 2
/// (half a step at the window's ends), times sin^2(pi (t^n - t_first) / span) for Hann, normalized
/// to sum 1; for equal steps the values of window_weight (to round-off).  Index n = 0..N (q_0 = 0).
std::vector<double> window_weights(const std::vector<double> &times, double t0, double t1,
                                   WindowWeighting w);

struct UnsteadyAdjointResult {
  double J = 0;
  std::vector<ParameterGradient> parameters; ///< constant parameters and time-function parameters
  std::vector<double> times;                 ///< t^n of level n (index n - 1)
  /// dt_n of level n (index n - 1): the forward's steps (time.dt auto: the controller's), which
  /// set_step_sizes() makes later runs repeat
  std::vector<double> step_sizes;
  /// Per level n (index n - 1): the derivative of J with respect to each time-dependent
  /// parameter's value at t^n.
  std::map<std::string, std::vector<double>> control;
  std::vector<Vec3<double>> X; ///< dJ/dX per local vertex
  std::vector<double> initial; ///< dJ/dw^0, nv per owned cell
  long steps = 0, recomputed = 0, snapshots = 0, linear_iterations = 0;
  /// levels solved by solver.linear auto's LU after their iterative solve failed
  long linear_fallbacks = 0;
  long preconditioner_setups = 0; ///< of the backward sweep (this run: a resumed sweep counts anew)
  double bytes_written = 0, forward_time = 0, adjoint_time = 0;
  double forward_memory = 0; ///< peak memory [MiB, sum over ranks] at the end of the forward run
  long resumed_from = -1;
};

struct UnsteadyAdjointOptions {
  AdjointSchedule schedule = AdjointSchedule::StoreAll;
  long snapshots = 20;
  long save_every = 0;    ///< 0: never save the adjoint state
  std::string state_file; ///< where the adjoint state is saved / resumed from
  bool resume = false;
  std::string trajectory_directory; ///< store-all: where the trajectory file goes
  bool forward_only = false;        ///< only the forward run and the objective (verification)
  /// Called for every `snapshot_every`-th level of the backward sweep (and level 1) with the
  /// adjoint (nv values per local cell) and the FlowResidual at that level's state (output).
  long snapshot_every = 0;
  std::function<PetscErrorCode(long n, double t, const std::vector<double> &psi)> snapshot;
  /// The states of the forward run are given, not solved (the reconstructed trajectory of an
  /// error estimate, driver/error_estimate.hpp): each step sets the level's state to what
  /// given(level, w) puts into w (w^0 is run's w0).  Store-all with the steps of time.dt or
  /// set_step_sizes only.
  GivenStates given;
  /// Called at every level n of the backward sweep, after its solves, with the level, w^n,
  /// w^{n-1} and the first objective's adjoint psi^n (an error estimate's weights).
  std::function<PetscErrorCode(const TimeLevel &level, Vec w, Vec w_prev, Vec psi)> on_level;
  /// The crash tests' hook (core/fault_injection.hpp): points "adjoint-state-partial" and
  /// "adjoint-state" while the state of level n is saved.
  FaultHook fault;
};

/// The case's options of an unsteady adjoint run: schedule, snapshots and save_every from the
/// `adjoint` section (the caller adds the files, resumption and output callbacks).
UnsteadyAdjointOptions unsteady_adjoint_options(const AdjointOptions &a);

class UnsteadyAdjoint {
public:
  /// Reads the unsteady objective (time average or final time, control cost).  Collective.
  PetscErrorCode setup(discretization::FlowResidual &res, const config::CaseConfig &cfg);
  /// One more objective: the objective section of `objective`, a case of the same problem (its
  /// other sections are not read).  Collective.
  PetscErrorCode add_objective(const config::CaseConfig &objective);
  std::size_t objectives() const { return goals_.size(); }
  /// Later runs take these steps (a result's step_sizes) instead of time.dt or the step-size
  /// controller: with time.dt auto, finite differences of J and the gradient then belong to the
  /// same step sequence.  Empty: time.dt again.
  void set_step_sizes(std::vector<double> sizes) { replay_ = std::move(sizes); }
  /// Forward from w0 (t = 0) for time.t_end / time.dt steps (time.dt auto: the step-size
  /// controller's steps to time.t_end; set_step_sizes: those) (run_forward), then the backward
  /// sweep n = N..1 (solve_level), dJ/dw^0 and the chaining to the time functions'
  /// parameters.  The result of the first objective.  Collective.
  PetscErrorCode run(Vec w0, const UnsteadyAdjointOptions &options, UnsteadyAdjointResult *result);
  /// The same for every objective (setup's, then add_objective's in order): one forward run and
  /// one backward sweep.  Collective.
  PetscErrorCode run(Vec w0, const UnsteadyAdjointOptions &options,
                     std::vector<UnsteadyAdjointResult> *results);

private:
  struct Sweep;   ///< the backward sweep's matrices, solver, adjoints and gradient sums
  struct Adjoint; ///< one objective's adjoints and gradient sums in the sweep
  /// How an objective's values J_s(w^n) over the window make J (objective.time).
  /// An objective of the sweep: its functional, time window or final time, control cost.
  struct Goal {
    Objective objective;
    Statistic statistic = Statistic::Average;
    WindowWeighting weighting = WindowWeighting::Uniform;
    double t0 = 0, t1 = 0, beta = 0;
    const physics::TimeFunction *control_omega = nullptr; ///< the control cost's omega(t)
    std::string control_name;                             ///< its parameter's name
    // rms, std: J_s(w^n) of the forward run (levels with q_n != 0), the window's mean
    // m = sum q_n J_s^n and the statistic S (sqrt(sum q_n (J_s^n)^2), or sqrt(sum q_n
    // (J_s^n - m)^2))
    std::vector<double> values;
    double mean = 0, spread = 0;
    std::vector<double> q; ///< q_n, n = 0..N (set_weights)
  };

  /// The objective section of cfg as a Goal.  Collective.
  PetscErrorCode parse_goal(const config::CaseConfig &cfg, Goal *g) const;
  /// q_n: the weight of level n in objective g (set_weights).
  double weight(const Goal &g, long n) const { return g.q[static_cast<std::size_t>(n)]; }
  /// Every goal's q_n for the levels' times t^0..t^N (steps_ = N): window_weight for time.dt's
  /// equal steps, window_weights for others; 1 at level N for a final-time objective.
  void set_weights(const std::vector<double> &times);
  /// The forward's steps are chosen by the step-size controller (time.dt auto, no replay).
  bool controlled() const { return adaptive_ && replay_.empty(); }
  /// dJ/dJ_s(w^n): q_n (average, final), q_n J_s^n / S (rms), q_n (J_s^n - m) / S (std).
  double adjoint_weight(const Goal &g, long n) const;
  /// The forward run from w0 with the solver ts, storing the trajectory (o.schedule) into *traj:
  /// the objective J, the time levels 0..N, the forward time and memory.  Collective.
  PetscErrorCode run_forward(Vec w0, const UnsteadyAdjointOptions &o, solver::UnsteadySolver &ts,
                             std::unique_ptr<Trajectory> *traj, std::vector<TimeLevel> *levels,
                             std::vector<UnsteadyAdjointResult> *results);
  /// The BDF coefficients of the levels, the matrices, work vectors and transposed solver of the
  /// backward sweep (s->psi1, psi2 exist already).  Collective.
  PetscErrorCode setup_sweep(const std::vector<TimeLevel> &levels, Sweep *s) const;
  /// Level n of the backward sweep: for every objective psi^n from (15), its contributions to
  /// (16)-(17) and dJ/dX, psi^n and psi^{n+1} as the later levels of n - 1; the snapshot and the
  /// saved state (first objective).  Collective.
  PetscErrorCode solve_level(const UnsteadyAdjointOptions &o, Trajectory &traj, long n, Sweep &s,
                             std::vector<UnsteadyAdjointResult> *results);
  /// The right-hand side of (15) of objective g at level n (time t) into a.g; the explicit
  /// objective part of the gradient into gobj.  Collective.
  PetscErrorCode assemble_adjoint_rhs(Goal &g, long n, double t, Sweep &s, Adjoint &a,
                                      Gradient *gobj);
  /// out (nv per owned cell) += rho V (a1^{n+1} psi^{n+1} + a2^{n+2} psi^{n+2}) on the momentum
  /// entries, psi^{n+1}, psi^{n+2} = a.psi1, a.psi2: level n's coupling to the two later levels
  /// (15); n = 0 gives dJ/dw^0 (18).
  PetscErrorCode add_time_coupling(long n, const Sweep &s, const Adjoint &a,
                                   PetscScalar *out) const;
  /// (dR^n/dw^n)^T psi^n = g (a.psi, a.g) for every objective's adjoint a, with the preconditioner
  /// set up or reused (once for all) as s.pc_reuse decides; adds the iterations and logs the
  /// level.  Collective.
  PetscErrorCode solve_transposed(long n, double t, Sweep &s,
                                  std::vector<UnsteadyAdjointResult> *results) const;
  /// solver.linear: auto, after level n's iterative solve of a failed (`failed`; announced unless
  /// `skipped`: the last levels all fell back, kStickyLevelFallbacks): a.psi again by GMRES around
  /// the LU of the level's exact Jacobian or compact matrix (s.fallback), or an error when the LU
  /// does not fit in memory (solver::announce_fallback).  Collective.
  PetscErrorCode solve_level_direct(long n, Sweep &s, Adjoint &a, KSPConvergedReason failed,
                                    bool skipped, KSPConvergedReason *reason, PetscInt *its) const;
  /// solver.linear: auto: after this many levels solved by the fallback, the levels below skip
  /// the iterative solve
  static constexpr int kStickyLevelFallbacks = 3;
  /// psi^n . dR^n/d(X, a) into gres: the fluxes, and the time terms through the cell volumes
  /// (level n's with w^n and w^{n-1}, level n + 1's with w^{n-1}); psi^n into a.psi_local.
  /// Collective.
  PetscErrorCode assemble_residual_gradient(long n, Sweep &s, Adjoint &a, Gradient *gres) const;
  /// Adds level n's parameter derivatives of objective g (objective and residual parts, control
  /// cost) to the sums (16) and the per-level series (17).
  PetscErrorCode accumulate_gradients(const Goal &g, long n, const TimeLevel &level,
                                      const Gradient &gobj, const Gradient &gres, Adjoint &a,
                                      UnsteadyAdjointResult *result) const;
  /// dJ/dX of the levels' geometry adjoints summed in a.geom, added to result->X (one chain
  /// through the geometry for all of them; a.geom is zero again).  Collective.
  PetscErrorCode chain_geometry(Adjoint &a, UnsteadyAdjointResult *result) const;
  /// The gradients of the result: the sums, with the per-level series of each time-dependent
  /// boundary parameter chained to the parameters of its time function.
  PetscErrorCode chain_time_functions(const std::map<std::string, double> &sums,
                                      UnsteadyAdjointResult *result) const;
  /// How many later levels' adjoints a sweep keeps (and saves): 2 for the time coupling, more
  /// for the initial guesses (adjoint.initial_guess).
  int history_length() const;
  /// Saves the adjoint state after level n (psi^n, psi^{n+1}, ... = history, the sums in r) to
  /// o.state_file.  Collective.
  PetscErrorCode save_state(const UnsteadyAdjointOptions &o, long n,
                            const std::vector<Vec> &history, const UnsteadyAdjointResult &r) const;
  /// Reads the adjoint state o.state_file: its level into n, psi^n, psi^{n+1}, ... into history
  /// (those the file has; the others zero), the sums into r; refuses a state of another case.
  /// Collective.
  PetscErrorCode load_state(const UnsteadyAdjointOptions &o, long *n,
                            const std::vector<Vec> &history, UnsteadyAdjointResult *r) const;

  discretization::FlowResidual *res_ = nullptr;
  const config::CaseConfig *cfg_ = nullptr;
  std::vector<Goal> goals_; ///< the case's objective first
  double t_end_ = 0, dt_ = 0;
  long steps_ = 0; ///< time.dt auto: known after the forward run
  bool adaptive_ = false;
  std::vector<double> replay_; ///< set_step_sizes
};

} // namespace karman::adjoint
