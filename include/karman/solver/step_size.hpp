// Error-controlled step sizes of `time.dt: auto` (variable-step BDF2).
//
// Each BDF2 step whose initial guess is the quadratic extrapolation w_pred of the last three
// levels estimates its local truncation error L = c (w^{n+1} - w_pred) (Milne's device,
// solver/unsteady_solver.hpp: truncation_error_factor).  The controller measures it relative to
// the state, e = max |L| / max |w^{n+1}| over the transient unknowns (velocity, scalar; the
// pressure is algebraic; the largest values, so that the cells where nothing happens do not
// dilute it and the same flow in a longer domain gets the same steps), and compares r = e / tol
// with 1:
//   r > 1: the step is rejected (not committed) and repeated with dt max(0.2, 0.9 r^(-1/3)), but
//          not below time.dt_min: a step of that size is accepted (and counted);
//   r <= 1: accepted; the next step is dt min(2, 0.9 r^(-1/3)), kept at dt where that factor is
//           at most 1.2, so that a nearly constant error does not change dt (a new dt means a
//           new preconditioner) every step.
// The exponent 1/3: L ~ dt^3 for BDF2.  Steps without an estimate (the first three from the
// initial level 0, whose extrapolation would reach back to the initial field; the first after a
// restart point) are accepted at the proposed size.  The last steps end
// exactly on t_end: a step that would pass it is shortened, and where less than two proposed
// steps remain the rest is split in two equal halves (no sliver of a step at the end).
//
// advance_controlled() repeats rejected steps until one is accepted.  The sequence of accepted
// steps is what the adjoint replays (adjoint/trajectory.hpp: StepSchedule), so that its gradient is
// the exact derivative of the run with that sequence.
#pragma once

#include <petscsys.h>

namespace karman::solver {

class UnsteadySolver;
struct StepReport;

class StepSizeController {
public:
  /// tolerance: time.tolerance; initial: the first steps' size; smallest: the floor of the
  /// steps (a step of that size is accepted).
  StepSizeController(double tolerance, double initial, double smallest);

  /// The size of the next step from time t toward t_end (the proposal, fitted to t_end).
  double next(double t, double t_end) const;
  /// The largest error a step of size dt may have: the tolerance, or none at the floor (the
  /// limit UnsteadySolver::advance commits below, and judge() accepts).
  double limit(double dt) const;
  /// A step of size dt ended with relative error estimate `error` (negative: none): whether it is
  /// accepted; updates the proposal either way.
  bool judge(double dt, double error);
  /// The relative error above which judge() rejects (time.tolerance).
  double tolerance() const { return tolerance_; }
  double proposal() const { return proposal_; }
  /// Continues with this proposal (a restart: the one saved with the checkpoint).
  void set_proposal(double dt) { proposal_ = dt; }
  long rejected() const { return rejected_; }
  /// Steps accepted at the floor with an error above the tolerance.
  long at_floor() const { return at_floor_; }

  static constexpr double kSafety = 0.9, kMaxGrowth = 2.0, kMaxShrink = 0.2;
  /// An accepted step's growth factor up to this keeps dt.
  static constexpr double kKeepHigh = 1.2;

private:
  double tolerance_, proposal_, smallest_;
  long rejected_ = 0, at_floor_ = 0;
};

/// One accepted step toward t_end of the size ts.step_control() proposes, from the solver's
/// current level (rejected tries repeated with smaller steps; their Newton and linear iterations
/// and wall time are added to the report, report->rejected_tries counts them).  An unconverged
/// step is returned as it is (report->converged false, the solver at t^n).  Collective.
PetscErrorCode advance_controlled(UnsteadySolver &ts, double t_end, StepReport *report);

/// Whether ts has reached t_end: its time within 1e-9 of a step below it, the step being the
/// controller's proposal (time.dt auto) or dt (fixed steps).  Every loop toward t_end asks this.
bool reached_end(const UnsteadySolver &ts, double t_end, double dt);

} // namespace karman::solver
