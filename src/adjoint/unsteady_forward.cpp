// The forward run of the unsteady adjoint (see include/karman/adjoint/unsteady_adjoint.hpp,
// UnsteadyAdjoint::run_forward): from w0 over the run, the trajectory stored for the backward
// sweep (store-all or revolve), every objective's values J_s(w^n) on the levels of its window, and
// J = sum_n q_n J_s^n (average, final), its r.m.s. or standard deviation, plus the control cost
// beta sum_n dt omega(t^n)^2.
#include "karman/adjoint/unsteady_adjoint.hpp"

#include "karman/solver/steady_solver.hpp"

#include <cmath>
#include <functional>

namespace karman::adjoint {

using discretization::FlowResidual;

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
  const bool revolve = o.schedule == AdjointSchedule::Revolve || o.forward_only;
  PetscCheck(!revolve || !o.given, m.comm, PETSC_ERR_SUP, "given states need store-all");
  *traj = revolve ? make_revolve(ts, o.forward_only ? 0 : o.snapshots)
                  : make_store_all(ts, m, o.trajectory_directory);
  if (o.given) (*traj)->set_given(o.given);
  // the steps: time.dt's, a replayed sequence, or the controller's (the levels' times, and with
  // them the weights q_n, known only at the end)
  StepSchedule schedule;
  if (controlled()) {
    schedule.t_end = t_end_;
  } else {
    schedule.sizes = replay_.empty() ? std::vector<double>(steps_, dt_) : replay_;
    steps_ = static_cast<long>(schedule.sizes.size());
    std::vector<double> times(1, 0.0);
    for (double h : schedule.sizes) times.push_back(times.back() + h);
    set_weights(times);
  }
  levels->assign(steps_ + 1, TimeLevel());
  std::vector<double> J(goals_.size(), 0.0), cost(goals_.size(), 0.0);
  for (Goal &g : goals_) g.values.assign(steps_ + 1, 0.0);
  // a level whose objective value J needs: q_n != 0, or (controlled) in the window
  const auto needed = [&](const Goal &g, const TimeLevel &l) {
    if (!controlled()) return weight(g, l.step) != 0;
    if (g.statistic == Statistic::Final) return l.time >= t_end_ - 1e-9 * l.dt;
    return in_window(l.time, l.dt, g.t0, g.t1);
  };
  const std::function<PetscErrorCode(const TimeLevel &)> on_step =
      [&](const TimeLevel &l) -> PetscErrorCode {
    PetscFunctionBeginUser;
    if (static_cast<long>(levels->size()) <= l.step) levels->resize(l.step + 1);
    (*levels)[l.step] = l;
    discretization::LocalState state;
    bool have_state = false;
    for (std::size_t i = 0; i < goals_.size(); ++i) {
      Goal &g = goals_[i];
      g.objective.set_time(l.time);
      if (static_cast<long>(g.values.size()) <= l.step) g.values.resize(l.step + 1, 0.0);
      if (needed(g, l)) {
        if (!have_state)
          PetscCall(res.local_state(discretization::TimeLevel{l.time, l.step}, ts.state(), &state));
        have_state = true;
        PetscCall(g.objective.value(res, state, &g.values[l.step]));
      }
      if (g.beta > 0) {
        const double w = g.control_omega->value(l.time, l.step);
        cost[i] += g.beta * l.dt * w * w;
      }
    }
    PetscFunctionReturn(0);
  };
  PetscCall((*traj)->forward(schedule, on_step));
  if (controlled()) {
    steps_ = static_cast<long>(levels->size()) - 1;
    PetscCheck(steps_ >= 2, m.comm, PETSC_ERR_USER_INPUT,
               "%s: time.dt auto took %ld step(s) to time.t_end; the unsteady adjoint needs at "
               "least 2 (a smaller time.dt_initial or time.tolerance)",
               cfg_->file().c_str(), steps_);
    std::vector<double> times(1, 0.0);
    for (long n = 1; n <= steps_; ++n) times.push_back((*levels)[n].time);
    set_weights(times);
  }
  for (std::size_t i = 0; i < goals_.size(); ++i)
    for (long n = 1; n <= steps_; ++n)
      if (weight(goals_[i], n) != 0) J[i] += weight(goals_[i], n) * goals_[i].values[n];
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
    (*results)[i].steps = steps_;
    (*results)[i].step_sizes = (*traj)->step_sizes();
    (*results)[i].forward_time = forward_time;
    (*results)[i].forward_memory = forward_memory;
  }
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
