// Implicit time integration: BDF1 for the first step, then BDF2 (or BDF1 throughout),
// one coupled Newton solve (PETSc SNES) per step:
//   R_steady(w^{n+1}; t^{n+1}) + rho V (a0 w^{n+1} + a1 w^n + a2 w^{n-1}) = 0   (momentum rows)
// BDF1: a0 = 1/dt, a1 = -1/dt, a2 = 0.  BDF2 with variable steps, omega = dt_n / dt_{n-1}:
//   a0 = (1 + 2 omega) / ((1 + omega) dt_n),  a1 = -(1 + omega) / dt_n,
//   a2 = omega^2 / ((1 + omega) dt_n)          (Hairer, Norsett & Wanner I, sec. III.5)
// so a restart with a different dt continues at second order.  The Jacobian is exact
// (steady Jacobian + rho V a0 on the momentum diagonal).  The linear solver defaults to
// GMRES with the exact Jacobian (tolerances solver.linear_rtol, linear_atol,
// linear_max_iterations), preconditioned by an LU factorization (MUMPS) of either the exact
// Jacobian or its compact (face-neighbour) part (solver.preconditioner_matrix).  The
// preconditioner is reused across Newton iterations and time steps and set up again when
// GMRES needs more than solver.refactor_iterations iterations or the step size changes
// (PreconditionerReuse); Newton stops on the residual, so these choices
// change the cost, not the answer.  The initial guess of a step extrapolates the last three
// levels (quadratic; the last two right after a restart or a checkpoint): with a tolerance
// looser than the default (forward-only runs, solver.rtol) one Newton iteration per step is then
// enough (DFG 2D-2, scripts/bench-dfg2d2.sh).  The Newton residual history (StepReport) is recorded
// in SNES's convergence test (solver/linear_solver.hpp), not in a monitor, so that PETSc options
// such as -snes_monitor_cancel cannot empty it.
//
// Tolerances by purpose (solver.tolerances): a run whose gradient follows (the unsteady adjoint,
// karman optimize/verify, Python) converges every step to solver.rtol/atol: the adjoint is the
// exact derivative of converged steps.  A forward-only run (karman run; tolerances auto) needs
// the steps only as accurate as the time discretization: a BDF2 step whose initial guess was the
// quadratic extrapolation w_pred stops as soon as the error left in its iterate, estimated as
// the last Newton correction times that iteration's contraction ||R_k|| / ||R_{k-1}||, is below
// kTruncationFraction of the estimate of its local truncation error, L ~ c (w - w_pred) (Milne's
// device, truncation_error_factor), with linear solves to kForwardLinearRtol.  Both norms are
// 2-norms over the unknowns with a time derivative (the pressure, an algebraic unknown, is not
// part of the BDF truncation error).  The first step
// (BDF1) and the first after set_state or a restart point (linear extrapolation) converge fully,
// so a restarted run repeats the uninterrupted run's operations.
//
// Dual time stepping.  With the adaptive continuation (solver.continuation adaptive, or auto
// with a turbulence model: URANS) a step whose Newton solve does not converge (and whose retry
// with a fresh preconditioner does not either) is solved again from its initial guess by the
// steady solver's pseudo-time continuation of the step's own equations (SteadySolver::
// set_time_step): each pseudo-time step solves
//   (J + rho V a0 + diag(rho V_c / dtau_c)) dw = -[R(w) + rho V (a0 w + h)],
// with the steady solver's CFL law, line search and limit on the sign changes of nu~, and its own
// LU fallback; the pseudo-time term vanishes at convergence, so the step's state is the same
// solution of the same equations (the adjoint is unchanged).  The near-wall cells' time scales
// lie far below any useful dt, so a URANS step is nearly the steady boundary-layer problem from a
// poor guess, where Newton alone fails: the TMR flat plate from free stream with dt 1e-2 (level 0)
// stopped with DIVERGED_LINEAR_SOLVE at step 1, dual time stepping converges it in 11 pseudo-time
// steps.  A step ends at solver.rtol of its initial residual, solver.atol, or its round-off floor
// eps |(rho V/dtau + rho V a0) w|_2 (SteadySolver::roundoff_floor: the time term of the NACA
// 0012's far-field cells, up to 1.5e4 in area, keeps |R| near 2e-10 at dt 0.05, 0.2 eps
// |rho V a0 w|_2).  After kStickyFallbacks steps
// that needed it the steps start with it (as the LU fallback does).  Laminar cases keep the LU
// fallback of solver.linear auto instead.
#pragma once

#include "karman/discretization/flow_residual.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/solver_options.hpp"
#include "karman/solver/steady_solver.hpp"
#include "karman/solver/step_size.hpp"

#include <petscsnes.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace karman::solver {

struct BdfCoefficients {
  double a0 = 0, a1 = 0, a2 = 0;
};

/// BDF coefficients for a step of size dt after a step of size dt_prev (order 1 or 2).
BdfCoefficients bdf_coefficients(int order, double dt, double dt_prev);

/// |L| / |w^{n+1} - w_pred| for a BDF2 step of size dt after steps dt_prev, dt_prev2: the local
/// truncation error L of the step relative to the distance of its solution from the quadratic
/// extrapolation w_pred of w^n, w^{n-1}, w^{n-2} to t^{n+1} (2/11 for equal steps).
double truncation_error_factor(double dt, double dt_prev, double dt_prev2);

/// What the time steps are solved for; with solver.tolerances auto it picks the tolerances.
enum class StepPurpose {
  ForwardOnly, ///< karman run: each step as accurate as the time discretization
  Gradient     ///< a gradient follows: every step converged to solver.rtol/atol
};

struct StepReport {
  long step = 0;   ///< index of the new time level
  double time = 0; ///< t^{n+1}
  double dt = 0;
  int order = 0; ///< BDF order used
  int newton_iterations = 0;
  int linear_iterations = 0;
  bool preconditioner_setup = false; ///< the preconditioner was set up (not reused) in this step
  double initial_residual = 0, final_residual = 0;
  std::vector<double> residual_history;
  double wall_time = 0;
  /// Time split of the Newton solve [s]: residual evaluations, Jacobian assembly (exact and
  /// compact), preconditioner set-up (LU factorization or multigrid hierarchy), and the linear
  /// solves with the rest of the Newton iteration (line search, updates).
  double residual_time = 0, jacobian_time = 0, pc_setup_time = 0, linear_solve_time = 0;
  bool converged = false;
  std::string reason;
  /// ||c (w^{n+1} - w_pred)||_2 over the transient unknowns (velocity, scalar; not the pressure),
  /// the estimate of the step's local truncation error (0 where the initial guess was not the
  /// quadratic extrapolation); truncation_stop: the Newton solve stopped on it (solver.tolerances
  /// forward)
  double truncation_error = 0;
  bool truncation_stop = false;
  /// the step-size control's measure: max |c (w^{n+1} - w_pred)| / max |w^{n+1}| over the same
  /// unknowns (negative: no estimate)
  double relative_error = -1;
  /// advance(): the step was rejected (relative_error above the limit; the state stays at t^n);
  /// advance_controlled(): the rejected tries before this accepted step
  bool rejected = false;
  int rejected_tries = 0;
  /// solved with auto's LU after the multigrid failed (iterative_reason: the multigrid's reason)
  bool linear_fallback = false;
  /// solved by dual time stepping (pseudo-time continuation of the step's equations, header)
  /// after its Newton solve did not converge (dual_reason: that solve's reason)
  bool dual_time_stepping = false;
  std::string dual_reason;
  std::string iterative_reason;
};

class UnsteadySolver {
public:
  UnsteadySolver() = default;
  UnsteadySolver(const UnsteadySolver &) = delete;
  UnsteadySolver &operator=(const UnsteadySolver &) = delete;
  ~UnsteadySolver();

  /// Creates the SNES and the state vectors (w^n = w^{n-1} = 0, t = 0); `purpose` resolves
  /// solver.tolerances auto.  Collective.
  PetscErrorCode setup(discretization::FlowResidual &residual, const config::CaseConfig &cfg,
                       StepPurpose purpose = StepPurpose::Gradient);
  /// solver.tolerances as resolved by setup: true for forward-only tolerances.
  bool forward_tolerances() const { return forward_; }
  /// An iterate whose estimated error is below this fraction of the truncation error estimate
  /// ends a step (forward tolerances); the linear solves of a run with forward tolerances stop
  /// at kForwardLinearRtol (or solver.linear_rtol if looser).
  static constexpr double kTruncationFraction = 0.1;
  static constexpr double kForwardLinearRtol = 1e-2;

  /// Current state w^n, previous state w^{n-1}.
  Vec state() const { return w_; }
  Vec previous_state() const { return w_prev_; }
  long step() const { return step_; }
  double time() const { return time_; }
  /// The time level (t^n, n) of the current state.
  discretization::TimeLevel level() const { return {time_, step_}; }
  double previous_dt() const { return dt_prev_; }

  /// Sets the integration state (initial condition or restart): w^n, w^{n-1} (may equal w^n
  /// when `step` = 0), the time level n, t^n and dt_{n-1} (the step that led to w^n).
  PetscErrorCode set_state(Vec w, Vec w_prev, long step, double time, double dt_prev);

  /// The next step starts as a run restarted here would (called after each checkpoint, so that a
  /// run restarted from it repeats exactly the same operations): it sets the preconditioner up
  /// afresh, and its initial guess extrapolates from w^n and w^{n-1} only (a checkpoint holds no
  /// older level).
  void mark_restart_point() {
    pc_reuse_.request_setup();
    dt_prev2_ = 0;
  }
  /// time.dt auto: the step-size controller (solver/step_size.hpp) that advance_controlled()
  /// uses and checkpoints save; null for fixed steps.
  StepSizeController *step_control() const { return control_.get(); }
  /// Preconditioner set-ups so far.
  long preconditioner_setups() const { return pc_reuse_.setups(); }

  /// Advances one step of size dt (boundary values evaluated at t^{n+1}).  On failure the
  /// state is left at t^n and report->converged is false.  A converged step whose relative
  /// error estimate exceeds max_relative_error is not committed either (report->rejected; the
  /// step-size control, solver/step_size.hpp).  Collective.
  PetscErrorCode advance(double dt, StepReport *report,
                         double max_relative_error = std::numeric_limits<double>::infinity());

private:
  static PetscErrorCode form_function(SNES, Vec w, Vec R, void *ctx);
  static PetscErrorCode form_jacobian(SNES, Vec w, Mat J, Mat P, void *ctx);
  PetscErrorCode solve_step(SNES snes, double dt, const BdfCoefficients &bdf, StepReport *report);
  /// auto: the step solved again with the LU after the multigrid failed
  PetscErrorCode fall_back(double dt, const BdfCoefficients &bdf, StepReport *report);
  /// The step's BDF history, time term, Jacobian shift and initial guess (in w_new_).
  PetscErrorCode prepare_step(double dt, const BdfCoefficients &bdf);
  /// The step's truncation and relative error estimates (StepReport) from its solution w_new_.
  PetscErrorCode estimate_errors(StepReport *report);
  /// The step solved by dual time stepping (header) from its initial guess.
  PetscErrorCode dual_step(double dt, const BdfCoefficients &bdf, StepReport *report);
  /// Installs the convergence test (residual history, truncation stop) on snes.
  PetscErrorCode set_convergence_test(SNES snes);
  /// Replaces the algebraic unknowns (pressure) of the quadratic initial guess in w_new_ by
  /// the line through w_ and w_prev_ at the new level (dt: the step).
  PetscErrorCode linear_algebraic_guess(double dt);
  /// The truncation stop of forward tolerances (NewtonStop).
  PetscErrorCode truncation_stop(SNES snes, bool *stop);
  /// ||a - b||_2 (largest: max |a - b|) over the transient unknowns (the rows with a time
  /// derivative; b null: of a).  Collective.
  PetscErrorCode transient_norm(Vec a, Vec b, bool largest, double *norm) const;

public:
  /// auto: after this many steps solved by the LU fallback, the run keeps the LU; after this
  /// many solved by dual time stepping, the steps start with it.
  static constexpr int kStickyFallbacks = 3;

private:
  discretization::FlowResidual *res_ = nullptr;
  std::unique_ptr<StepSizeController> control_;
  SNES snes_ = nullptr;
  SNES fallback_ = nullptr; ///< auto's LU (created at the first fallback)
  bool may_fall_back_ = false;
  int fallbacks_ = 0; ///< steps solved by the fallback
  /// dual time stepping (header): with the adaptive continuation (solver.continuation adaptive,
  /// or auto with a turbulence model); its solver is created at the first step that needs it
  bool dual_enabled_ = false;
  int dual_steps_ = 0; ///< steps solved by it
  std::unique_ptr<SteadySolver> dual_;
  std::unique_ptr<config::CaseConfig> cfg_; ///< the case (for dual_'s set-up)
  SolverOptions options_;
  Mat J_ = nullptr, P_ = nullptr; ///< exact Jacobian; matrix the preconditioner is built from
  Vec w_ = nullptr, w_prev_ = nullptr, w_new_ = nullptr, r_ = nullptr;
  Vec w_prev2_ = nullptr;                   ///< w^{n-2}, for the initial guess only
  Vec w_pred_ = nullptr, w_last_ = nullptr; ///< the step's quadratic extrapolation; last iterate
  bool forward_ = false;                    ///< forward-only tolerances
  double linear_rtol_ = 0;                  ///< the linear solves' rtol (options, -ksp_rtol)
  TimeScheme scheme_ = TimeScheme::Bdf2;
  long step_ = 0;
  /// dt_{n-1}, dt_{n-2}: 0 where the level before is unknown to the initial guess (at rest, after
  /// set_state or a restart point), so it extrapolates from fewer levels
  double time_ = 0, dt_prev_ = 0, dt_prev2_ = 0;
  // current step
  discretization::TimeLevel target_; ///< (t^{n+1}, n + 1): the level the step solves for
  BdfCoefficients bdf_;
  /// its initial guess is the quadratic extrapolation (truncation_factor_ its
  /// truncation_error_factor); the truncation stop applies
  bool quadratic_guess_ = false, truncation_active_ = false;
  double truncation_factor_ = 0;
  std::vector<double> history_, shift_;
  discretization::FlowResidual::TimeTerm term_;
  StepReport *report_ = nullptr;
  // preconditioner reuse (set by setup) and the time coefficient a0 of the last set-up
  PreconditionerReuse pc_reuse_{0};
  double pc_setup_a0_ = 0;
};

} // namespace karman::solver
