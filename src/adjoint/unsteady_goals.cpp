// The objectives of the unsteady adjoint in time (see include/karman/adjoint/unsteady_adjoint.hpp):
// the run's length, each objective's window, statistic (average, final, rms, std), weighting and
// control cost, the weights q_n of the levels (window_weight) and dJ/dJ_s(w^n) for the sweep.
#include "karman/adjoint/unsteady_adjoint.hpp"

#include "karman/discretization/parameters.hpp"

#include <algorithm>
#include <cmath>

namespace karman::adjoint {

using discretization::FlowResidual;

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

} // namespace karman::adjoint
