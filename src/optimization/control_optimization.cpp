// A flow-control / identification problem: applying a design, the evaluations (forward runs and
// adjoints), control power, identification and the gradient check (see
// include/karman/optimization/control_optimization.hpp; the set-up from the case is in
// control_setup.cpp).
#include "karman/optimization/control_optimization.hpp"

#include "karman/core/logger.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace karman::optimization {

using discretization::ParameterRegistry;
using physics::TimeFunction;

namespace {

/// d f(t) / d(parameter `key` of f) (amplitude, frequency, phase, offset of a sine; knot[j] of
/// a table).
double function_derivative(const TimeFunction &f, const std::string &key, double t) {
  const std::vector<std::string> names = f.parameter_names();
  const std::size_t i = std::find(names.begin(), names.end(), key) - names.begin();
  return i < names.size() ? f.parameter_derivatives(t)[i] : 0.0;
}

/// The Taylor steps of the control check: eps = {1, 0.5, 0.25} 1e-3 of the bound ranges (the
/// shape check's 4e-3 reaches the third-order terms of a mean lift under a combined change of
/// viscosity, inflow and rotation: rates 1.74, 1.89 measured on the coarse test cylinder).
constexpr double kTaylorScale = 0.25;

} // namespace

ControlOptimization::~ControlOptimization() {
  if (w0_) VecDestroy(&w0_);
  if (w_) VecDestroy(&w_);
}

std::vector<double> ControlOptimization::physical(const std::vector<double> &x) const {
  std::vector<double> a(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) a[i] = x[i] * scale_[i];
  return a;
}

PetscErrorCode ControlOptimization::apply(const std::vector<double> &x) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc_->residual();
  const ParameterRegistry reg(res);
  const std::vector<double> a = physical(x);
  for (const auto &e : entries_) {
    if (e.kind == ControlKind::PerStep) {
      PetscCall(fc_->set_parameter_steps(
          e.function, std::vector<double>(a.begin() + e.offset, a.begin() + e.offset + e.count)));
      continue;
    }
    for (std::size_t k = 0; k < e.count; ++k) {
      if (e.kind == ControlKind::Parameter)
        PetscCall(reg.set(res, e.targets[k], a[e.offset + k]));
      else
        PetscCall(reg.set_time_function_parameter(res, e.targets[k], a[e.offset + k]));
    }
  }
  PetscFunctionReturn(0);
}

double ControlOptimization::penalty(const std::vector<double> &a, std::vector<double> *grad) const {
  grad->assign(a.size(), 0.0);
  double S = 0;
  for (const auto &e : entries_) {
    if (e.kind != ControlKind::PerStep || e.smoothing == 0) continue;
    for (std::size_t k = 0; k + 1 < e.count; ++k) {
      const double d = a[e.offset + k + 1] - a[e.offset + k];
      S += e.smoothing * d * d / dt_;
      (*grad)[e.offset + k + 1] += 2 * e.smoothing * d / dt_;
      (*grad)[e.offset + k] -= 2 * e.smoothing * d / dt_;
    }
  }
  return S;
}

PetscErrorCode ControlOptimization::series(const std::string &function,
                                           std::vector<double> *values) const {
  return fc_->parameter_steps(function, steps_, values);
}

PetscErrorCode ControlOptimization::control_power(const ControlConstraint &c, double *value,
                                                  std::vector<double> *grad) const {
  PetscFunctionBeginUser;
  PetscCheck(!adaptive_, fc_->mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: a control-power constraint needs a fixed time.dt (its levels' weights come from "
             "the step); set time.dt to a number",
             fc_->config().file().c_str());
  std::vector<double> omega;
  PetscCall(series(control_omega_, &omega));
  discretization::FlowResidual &res = fc_->residual();
  const ParameterRegistry reg(res);
  const TimeFunction *f = reg.time_function(res, reg.find(control_omega_));
  *value = 0;
  grad->assign(problem_.names.size(), 0.0);
  for (long n = 1; n <= steps_; ++n) {
    const double q = adjoint::window_weight(n, steps_, dt_, c.t0, c.t1, c.weighting);
    if (q == 0) continue;
    const double w = omega[n - 1];
    *value += q * w * w;
    // d omega_n / da_j of the entries that set this rotation rate
    const double t = n * dt_, s = 2 * q * w;
    for (const auto &e : entries_) {
      if (e.kind == ControlKind::Parameter) {
        for (std::size_t k = 0; k < e.count; ++k)
          if (e.targets[k] == control_omega_) (*grad)[e.offset + k] += s;
      } else if (e.function == control_omega_) {
        if (e.kind == ControlKind::PerStep) {
          (*grad)[e.offset + n - 1] += s;
        } else {
          for (std::size_t k = 0; k < e.count; ++k)
            (*grad)[e.offset + k] +=
                s * function_derivative(*f, e.targets[k].substr(e.function.size() + 1), t);
        }
      }
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::run_unsteady(bool gradients, std::vector<double> *F,
                                                 std::vector<std::vector<double>> *dF) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc_->config();
  discretization::FlowResidual &res = fc_->residual();

  // the objective and the flow constraints: one forward run, one backward sweep
  adjoint::UnsteadyAdjoint adj;
  PetscCall(adj.setup(res, cfg));
  for (const auto &c : constraints_)
    if (c.flow) PetscCall(adj.add_objective(*c.flow));
  adj.set_step_sizes(step_sizes_);
  adjoint::UnsteadyAdjointOptions o = fc_->unsteady_gradient_options();
  o.save_every = 0; // a campaign resumes from its journal, not from an adjoint state
  // store-all: the trajectory's scratch folder (emptied by each run, its files removed after it)
  o.trajectory_directory = (std::filesystem::path(work_) / "trajectory").string();
  o.forward_only = !gradients;
  if (fault_ && gradients) { // the crash tests' point in the backward sweep: a snapshot read
    o.snapshot_every = 1;    // in its first half
    const long level = std::max(1L, steps_ / 2), evaluation = evaluations_;
    o.snapshot = [this, level, evaluation](long n, double,
                                           const std::vector<double> &) -> PetscErrorCode {
      if (n <= level) fault_({"adjoint", evaluation, 0.0});
      return 0;
    };
  }
  if (fault_ && previous_forward_time_ > 0) // a kill timed at half the previous forward run
    fault_({"forward", evaluations_, 0.5 * previous_forward_time_});
  std::vector<adjoint::UnsteadyAdjointResult> results;
  // a design whose forward run (or a recomputation) does not converge is a failed evaluation
  // (the optimizer backs off); any other error stops with its message
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  const PetscErrorCode ierr = fc_->unsteady_gradient(adj, o, &results);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    const char *text = nullptr;
    char *specific = nullptr;
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    const std::string message = specific && *specific ? specific : (text ? text : "");
    if (ierr == PETSC_ERR_NOT_CONVERGED) {
      F->clear();
      last_.failure = message;
      PetscFunctionReturn(0);
    }
    SETERRQ(fc_->mesh().comm, ierr, "%s", message.c_str());
  }
  const adjoint::UnsteadyAdjointResult &first = results.front();
  if (adaptive_ && step_sizes_.empty()) {
    step_sizes_ = first.step_sizes;
    PetscCall(log_info(fc_->mesh().comm,
                       "time.dt auto: %zu steps chosen by the first evaluation; the later ones "
                       "repeat them",
                       step_sizes_.size()));
  }
  last_.forward_time = first.forward_time;
  last_.adjoint_time = first.adjoint_time;
  previous_forward_time_ = first.forward_time;
  last_.recomputed = first.recomputed;
  last_.snapshots = first.snapshots;
  last_.forward_memory = first.forward_memory;
  for (const auto &r : results) {
    F->push_back(r.J);
    if (!gradients) continue;
    std::map<std::string, double> g;
    for (const auto &p : r.parameters) g[p.name] = p.gradient;
    std::vector<double> d(problem_.names.size(), 0.0);
    for (const auto &e : entries_) {
      if (e.kind == ControlKind::PerStep) {
        const auto it = r.control.find(e.function);
        PetscCheck(it != r.control.end() && it->second.size() == e.count, PETSC_COMM_SELF,
                   PETSC_ERR_PLIB, "the unsteady adjoint has no per-step series of %s",
                   e.function.c_str());
        std::copy(it->second.begin(), it->second.end(), d.begin() + e.offset);
        continue;
      }
      for (std::size_t j = 0; j < e.count; ++j) {
        const auto it = g.find(e.targets[j]);
        PetscCheck(it != g.end(), PETSC_COMM_SELF, PETSC_ERR_PLIB,
                   "the unsteady adjoint has no gradient of %s", e.targets[j].c_str());
        d[e.offset + j] = it->second;
      }
    }
    dF->push_back(d);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::run_steady(bool gradients, std::vector<double> *F,
                                               std::vector<std::vector<double>> *dF) {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(w0_, w_));
  SteadySolution s;
  PetscCall(fc_->solve_steady(w_, nullptr, {}, &s));
  last_.newton_iterations = s.summary.iterations;
  last_.forward_time = s.summary.wall_time;
  if (!s.summary.converged) {
    F->clear(); // a failed design
    last_.failure = "the steady solve did not converge (" + s.summary.reason + ")";
    PetscFunctionReturn(0);
  }
  const adjoint::Objective *obj;
  PetscCall(fc_->objective(&obj));
  std::vector<const adjoint::Objective *> functions{obj};
  for (const auto &c : constraints_)
    if (c.steady) functions.push_back(c.steady.get());
  discretization::LocalState state;
  solver::FlowMonitors::Values v;
  if (!gradients) PetscCall(fc_->evaluate(discretization::kSteady, w_, &state, &v));
  for (std::size_t k = 0; k < functions.size(); ++k) {
    if (!gradients) {
      double J;
      PetscCall(functions[k]->value(fc_->residual(), state, &J));
      F->push_back(J);
      continue;
    }
    adjoint::AdjointResult ar;
    PetscCall(fc_->gradient(w_, *functions[k], &ar, k > 0));
    last_.adjoint_time += ar.wall_time;
    F->push_back(ar.J);
    std::map<std::string, double> g;
    for (const auto &p : ar.gradient.parameters) g[p.name] = p.gradient;
    std::vector<double> d(problem_.names.size(), 0.0);
    for (const auto &e : entries_)
      for (std::size_t j = 0; j < e.count; ++j) d[e.offset + j] = g.at(e.targets[j]);
    dF->push_back(d);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::values(const std::vector<double> &x, std::vector<double> *F) {
  PetscFunctionBeginUser;
  Evaluation e;
  std::vector<double> Fr;
  std::vector<std::vector<double>> dF;
  PetscCall(apply(x));
  last_ = ControlRecord();
  if (unsteady_)
    PetscCall(run_unsteady(false, &Fr, &dF));
  else
    PetscCall(run_steady(false, &Fr, &dF));
  PetscCheck(!Fr.empty(), fc_->mesh().comm, PETSC_ERR_NOT_CONVERGED,
             "the forward problem did not converge at a perturbed design (%s); use smaller steps",
             last_.failure.c_str());
  std::vector<double> gp, c;
  PetscCall(constraint_values(Fr, nullptr, &c, nullptr));
  F->assign(1, Fr[0] + penalty(physical(x), &gp));
  F->insert(F->end(), c.begin(), c.end());
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::constraint_values(const std::vector<double> &F,
                                                      const std::vector<std::vector<double>> *dF,
                                                      std::vector<double> *c,
                                                      std::vector<std::vector<double>> *dc) const {
  PetscFunctionBeginUser;
  c->clear();
  if (dc) dc->clear();
  std::size_t k = 1;
  for (const auto &con : constraints_) {
    if (con.power) {
      double v;
      std::vector<double> g;
      PetscCall(control_power(con, &v, &g));
      c->push_back(v);
      if (dc) dc->push_back(g);
    } else {
      c->push_back(F[k]);
      if (dc) dc->push_back((*dF)[k]);
      ++k;
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::evaluate(const std::vector<double> &x, Evaluation *e) {
  PetscFunctionBeginUser;
  *e = Evaluation();
  last_ = ControlRecord();
  ++evaluations_;
  PetscCall(apply(x));
  std::vector<double> F;
  std::vector<std::vector<double>> dF;
  if (unsteady_)
    PetscCall(run_unsteady(true, &F, &dF));
  else
    PetscCall(run_steady(true, &F, &dF));
  if (F.empty()) {
    e->ok = false;
    e->failure = last_.failure.empty() ? "the forward solve did not converge" : last_.failure;
    PetscFunctionReturn(0);
  }
  const std::vector<double> a = physical(x);
  std::vector<double> gp;
  last_.J = F[0];
  last_.penalty = penalty(a, &gp);
  e->f = F[0] + last_.penalty;
  auto to_x = [&](const std::vector<double> &ga) {
    std::vector<double> gx(ga.size());
    for (std::size_t i = 0; i < ga.size(); ++i) gx[i] = ga[i] * scale_[i];
    return gx;
  };
  std::vector<double> df = dF[0];
  for (std::size_t i = 0; i < df.size(); ++i) df[i] += gp[i];
  e->df = to_x(df);
  double g2 = 0;
  for (double g : e->df) g2 += g * g;
  last_.gradient_norm = std::sqrt(g2);
  std::vector<std::vector<double>> dc;
  PetscCall(constraint_values(F, &dF, &e->c, &dc));
  for (const auto &g : dc) e->dc.push_back(to_x(g));
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::least_squares(bool *yes) const {
  PetscFunctionBeginUser;
  const adjoint::Objective *objective = nullptr;
  PetscCall(fc_->objective(&objective));
  *yes = objective->least_squares();
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::identify(const std::vector<double> &x, double rel,
                                             Identification *out) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = fc_->mesh().comm;
  const config::CaseConfig &cfg = fc_->config();
  const adjoint::Objective *objective = nullptr;
  PetscCall(fc_->objective(&objective));
  PetscCheck(objective->least_squares(), comm, PETSC_ERR_USER_INPUT,
             "%s: the uncertainty of identified parameters needs a least-squares (probe-match) "
             "objective",
             cfg.file().c_str());
  const adjoint::ObjectiveOptions obj = adjoint::objective_options().get(cfg);
  *out = Identification();
  const std::size_t n = x.size();
  PetscCheck(!adaptive_, comm, PETSC_ERR_USER_INPUT,
             "%s: identification needs a fixed time.dt (the observations are counted per "
             "step); set time.dt to a number",
             fc_->config().file().c_str());
  Evaluation e0;
  PetscCall(evaluate(x, &e0));
  PetscCheck(e0.ok, comm, PETSC_ERR_NOT_CONVERGED,
             "identification: the design cannot be "
             "evaluated: %s",
             e0.failure.c_str());
  out->misfit = last_.J;
  out->values = physical(x);
  // M: levels in the window x probes x components with a nonzero weight
  long levels = 1;
  if (unsteady_) {
    const std::vector<double> &w = obj.window;
    const double t0 = w.empty() ? 0.0 : w[0], t1 = w.empty() ? steps_ * dt_ : w[1];
    levels = 0;
    for (long k = 1; k <= steps_; ++k)
      levels += adjoint::window_weight(k, steps_, dt_, t0, t1, obj.weighting) > 0;
  }
  out->observations = levels * objective->data_count(fc_->residual());
  // H in x, then in physical units: H_a = D^-1 H_x D^-1
  std::vector<std::vector<double>> H(n, std::vector<double>(n, 0.0));
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> g[2];
    for (int side = 0; side < 2; ++side) {
      std::vector<double> y = x;
      y[j] += side ? -rel : rel;
      Evaluation e;
      PetscCall(evaluate(y, &e));
      PetscCheck(e.ok, comm, PETSC_ERR_NOT_CONVERGED,
                 "identification: a perturbed design cannot be evaluated: %s", e.failure.c_str());
      g[side] = e.df;
    }
    for (std::size_t i = 0; i < n; ++i) H[i][j] = (g[0][i] - g[1][i]) / (2 * rel);
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) H[i][j] = H[j][i] = 0.5 * (H[i][j] + H[j][i]);
  out->hessian = H;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) out->hessian[i][j] /= scale_[i] * scale_[j];
  // C_x = 2 J / (M - n) H_x^-1 (Gauss-Jordan with pivoting; n is small), C_a = D C_x D
  const long dof = out->observations - static_cast<long>(n);
  std::vector<std::vector<double>> A = H, I(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) I[i][i] = 1;
  bool regular = dof > 0;
  for (std::size_t c = 0; c < n && regular; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    if (!(std::abs(A[piv][c]) > 0)) {
      regular = false;
      break;
    }
    std::swap(A[c], A[piv]);
    std::swap(I[c], I[piv]);
    const double d = A[c][c];
    for (std::size_t k = 0; k < n; ++k) A[c][k] /= d, I[c][k] /= d;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = A[r][c];
      for (std::size_t k = 0; k < n; ++k) A[r][k] -= f * A[c][k], I[r][k] -= f * I[c][k];
    }
  }
  out->covariance.assign(n, std::vector<double>(n, 0.0));
  out->standard_deviation.assign(n, 0.0);
  out->ok = regular;
  for (std::size_t i = 0; i < n && regular; ++i)
    for (std::size_t j = 0; j < n; ++j)
      out->covariance[i][j] = 2 * out->misfit / dof * I[i][j] * scale_[i] * scale_[j];
  for (std::size_t i = 0; i < n && regular; ++i) {
    out->ok = out->ok && out->covariance[i][i] >= 0;
    out->standard_deviation[i] = std::sqrt(std::max(0.0, out->covariance[i][i]));
  }
  PetscCall(apply(x));
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::check_gradient(const std::vector<double> &x,
                                                   std::size_t max_variables, double rel,
                                                   DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  Evaluation e0;
  PetscCall(evaluate(x, &e0));
  PetscCheck(e0.ok, fc_->mesh().comm, PETSC_ERR_NOT_CONVERGED,
             "verify: the design cannot be evaluated: %s", e0.failure.c_str());
  const DesignValues values = [this](const std::vector<double> &y, std::vector<double> *F) {
    return this->values(y, F);
  };
  std::vector<VariableBlock> blocks;
  for (const auto &e : entries_) blocks.push_back({e.name, e.offset, e.count});
  PetscCall(check_design_gradient(problem_, blocks, x, e0, values, 1.0, max_variables, rel, check,
                                  kTaylorScale));
  PetscCall(apply(x));
  PetscFunctionReturn(0);
}

} // namespace karman::optimization
