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
  dt_ = time.dt.value;
  adaptive_ = time.adaptive();
  steps_ = adaptive_ ? 0 : std::lround(t_end_ / dt_);
  PetscCheck(adaptive_ || (steps_ >= 2 && std::abs(steps_ * dt_ - t_end_) < 1e-9 * t_end_),
             res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: the unsteady adjoint needs time.t_end to be a multiple (>= 2) of time.dt (got %g "
             "and %g)",
             cfg.file().c_str(), t_end_, dt_);
  PetscCheck(t_end_ > 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: the unsteady adjoint needs time.t_end > 0", cfg.file().c_str());
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

std::vector<double> window_weights(const std::vector<double> &times, double t0, double t1,
                                   WindowWeighting w) {
  const std::size_t N = times.size() - 1;
  std::vector<double> q(times.size(), 0.0);
  std::size_t first = 0, last = 0;
  for (std::size_t n = 1; n <= N; ++n)
    if (in_window(times[n], times[n] - times[n - 1], t0, t1)) {
      if (first == 0) first = n;
      last = n;
    }
  if (first == 0) return q;
  if (first == last) {
    q[first] = 1.0;
    return q;
  }
  const double span = times[last] - times[first];
  const bool hann = w == WindowWeighting::Hann && last - first >= 2;
  double sum = 0;
  for (std::size_t n = first; n <= last; ++n) {
    const double width = 0.5 * (times[std::min(n + 1, last)] - times[n == first ? first : n - 1]);
    const double s = hann ? std::sin(M_PI * (times[n] - times[first]) / span) : 1.0;
    q[n] = width * s * s;
    sum += q[n];
  }
  for (double &v : q) v /= sum;
  return q;
}

void UnsteadyAdjoint::set_weights(const std::vector<double> &times) {
  const bool equal = !adaptive_ && replay_.empty();
  for (Goal &g : goals_) {
    g.q.assign(static_cast<std::size_t>(steps_) + 1, 0.0);
    if (g.statistic == Statistic::Final) {
      g.q[steps_] = 1.0;
    } else if (equal) {
      for (long n = 1; n <= steps_; ++n)
        g.q[n] = window_weight(n, steps_, dt_, g.t0, g.t1, g.weighting);
    } else {
      g.q = window_weights(times, g.t0, g.t1, g.weighting);
    }
  }
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
