// Error-controlled step sizes (see include/karman/solver/step_size.hpp).
#include "karman/solver/step_size.hpp"

#include "karman/solver/unsteady_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace karman::solver {

StepSizeController::StepSizeController(double tolerance, double initial, double smallest)
    : tolerance_(tolerance), proposal_(std::max(initial, smallest)), smallest_(smallest) {}

double StepSizeController::next(double t, double t_end) const {
  const double left = t_end - t;
  if (left <= proposal_ * (1 + 1e-9)) return left;
  // less than two proposed steps left: two equal halves instead of a full step and a sliver
  if (left < 2 * proposal_) return 0.5 * left;
  return proposal_;
}

double StepSizeController::limit(double dt) const {
  return dt <= smallest_ * (1 + 1e-12) ? std::numeric_limits<double>::infinity() : tolerance_;
}

bool StepSizeController::judge(double dt, double error) {
  if (error < 0) return true; // no estimate: the proposal stays
  const double r = error / tolerance_;
  // L ~ dt^3: the step that would meet the tolerance, with a safety factor
  const double factor = r > 0 ? kSafety * std::pow(r, -1.0 / 3.0) : kMaxGrowth;
  if (error > limit(dt)) {
    ++rejected_;
    proposal_ = std::max(smallest_, dt * std::clamp(factor, kMaxShrink, kSafety));
    return false;
  }
  if (r > 1) { // at the floor: accepted as it is
    ++at_floor_;
    proposal_ = dt;
    return true;
  }
  // accepted (factor >= kSafety): grow where the error leaves room, else keep dt
  const double f = std::min(kMaxGrowth, factor);
  proposal_ = f <= kKeepHigh ? dt : dt * f;
  return true;
}

PetscErrorCode advance_controlled(UnsteadySolver &ts, double t_end, StepReport *report) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(ts.state()));
  PetscCheck(ts.step_control(), comm, PETSC_ERR_ORDER,
             "advance_controlled: the case has a fixed time.dt");
  StepSizeController &control = *ts.step_control();
  int tries = 0, newton = 0, linear = 0;
  double wall = 0;
  while (true) {
    const double dt = control.next(ts.time(), t_end);
    PetscCall(ts.advance(dt, report, control.limit(dt)));
    newton += report->newton_iterations, linear += report->linear_iterations;
    wall += report->wall_time;
    if (!report->converged) break;
    const bool accepted = control.judge(dt, report->relative_error);
    if (accepted) break;
    ++tries;
  }
  report->rejected_tries = tries;
  report->newton_iterations = newton, report->linear_iterations = linear;
  report->wall_time = wall;
  PetscFunctionReturn(0);
}

bool reached_end(const UnsteadySolver &ts, double t_end, double dt) {
  const StepSizeController *control = ts.step_control();
  return !(ts.time() < t_end - 1e-9 * (control ? control->proposal() : dt));
}

} // namespace karman::solver
