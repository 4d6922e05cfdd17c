// A flow-control / identification problem (see
// include/karman/optimization/control_optimization.hpp).
#include "karman/optimization/control_optimization.hpp"

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

/// The constraint's keys that are not objective keys.
const char *const kConstraintOnlyKeys[] = {"sense", "value", "relative", "tolerance",
                                           "name",  "axis",  "station"};

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

/// What the parsing of a control design reads: the case, its parameters, the run's length, and
/// which entry claimed each parameter or function (declared in the header for setup's parts).
struct DesignParse {
  const char *file;
  MPI_Comm comm;
  FlowCase &fc;
  const ParameterRegistry &reg;
  bool unsteady;
  long steps;
  double t_end;
  std::map<std::string, std::string> owner; ///< a parameter or function -> the entry using it

  /// A window inside the run.
  PetscErrorCode check_window(const std::vector<double> &w, const std::string &key) const {
    PetscFunctionBeginUser;
    PetscCheck(w.empty() || (w.size() == 2 && w[0] >= 0 && w[1] > w[0] &&
                             w[1] <= t_end * (1 + 1e-12) && w[0] < t_end),
               comm, PETSC_ERR_USER_INPUT,
               "%s: %s.window must be [t0, t1] with 0 <= t0 < t1 <= time.t_end = %g (inside the "
               "run), got %s",
               file, key.c_str(), t_end,
               w.size() == 2
                   ? ("[" + std::to_string(w[0]) + ", " + std::to_string(w[1]) + "]").c_str()
                   : (std::to_string(w.size()) + " numbers").c_str());
    PetscFunctionReturn(0);
  }
  /// `what` becomes a variable of entry `label` (a second claim is an error).
  PetscErrorCode claim(const std::string &what, const std::string &label, const char *key) {
    PetscFunctionBeginUser;
    PetscCheck(!owner.count(what), comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.%s': '%s' is already a variable of %s", file, label.c_str(), key,
               what.c_str(), owner[what].c_str());
    owner[what] = label;
    PetscFunctionReturn(0);
  }
};

namespace {

/// A parameter entry's variables: the case parameters it names (not time-dependent ones).
PetscErrorCode parameter_variables(DesignParse &d, const ControlEntryOptions &options,
                                   ControlEntry *e, std::vector<std::string> *names,
                                   std::vector<double> *init) {
  PetscFunctionBeginUser;
  const char *label = e->label.c_str();
  e->kind = ControlKind::Parameter;
  for (const auto &p : options.parameters) {
    const int i = d.reg.find(p);
    PetscCheck(i >= 0, d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.parameters': the case has no parameter '%s' (it has: %s)", d.file, label,
               p.c_str(), d.reg.names(true).c_str());
    PetscCheck(!d.reg.spec(i).time_dependent, d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.parameters': '%s' depends on time in this case; its time function's "
               "parameters are variables of a time-function entry, its values per step of a "
               "per-step entry",
               d.file, label, p.c_str());
    PetscCall(d.claim(p, e->label, "parameters"));
    e->targets.push_back(p);
    names->push_back(p);
    init->push_back(d.reg.value(d.fc.residual(), i, discretization::kSteady));
  }
  PetscFunctionReturn(0);
}

/// A time-function entry's variables: parameters of the sine or the table knots of f.
PetscErrorCode time_function_variables(DesignParse &d, const ControlEntryOptions &options,
                                       const TimeFunction &f, ControlEntry *e,
                                       std::vector<std::string> *names, std::vector<double> *init) {
  PetscFunctionBeginUser;
  const char *label = e->label.c_str();
  e->kind = ControlKind::TimeFunction;
  PetscCheck(f.kind() == TimeFunction::Kind::Sine || f.kind() == TimeFunction::Kind::Table, d.comm,
             PETSC_ERR_USER_INPUT,
             "%s: '%s.function': '%s' is %s%s%s in the case: a time-function variable "
             "needs a sine or a table (e.g. omega: {type: sine, amplitude: 0.5, frequency: "
             "0.2}); values per step are a per-step entry",
             d.file, label, e->function.c_str(), f.is_constant() ? "constant (" : "",
             f.describe().c_str(), f.is_constant() ? ")" : "");
  std::vector<std::string> allowed;
  if (f.kind() == TimeFunction::Kind::Sine)
    allowed = {"amplitude", "frequency", "phase", "offset"};
  else
    for (std::size_t j = 0; j < f.values.size(); ++j)
      allowed.push_back("knot[" + std::to_string(j) + "]");
  std::vector<std::string> wanted;
  for (const auto &p : options.parameters) {
    if (p == "knots" && f.kind() == TimeFunction::Kind::Table) {
      wanted.insert(wanted.end(), allowed.begin(), allowed.end());
      continue;
    }
    std::string list;
    for (const auto &a : allowed) list += (list.empty() ? "" : ", ") + a;
    PetscCheck(std::find(allowed.begin(), allowed.end(), p) != allowed.end(), d.comm,
               PETSC_ERR_USER_INPUT,
               "%s: '%s.parameters': '%s' is not a parameter of %s = %s (it has: %s%s)", d.file,
               label, p.c_str(), e->function.c_str(), f.describe().c_str(), list.c_str(),
               f.kind() == TimeFunction::Kind::Table ? ", knots" : "");
    wanted.push_back(p);
  }
  for (const auto &p : wanted) {
    const std::string full = e->function + "." + p;
    PetscCall(d.claim(full, e->label, "parameters"));
    double v;
    PetscCall(d.reg.time_function_value(d.fc.residual(), full, &v));
    e->targets.push_back(full);
    names->push_back(full);
    init->push_back(v);
  }
  PetscFunctionReturn(0);
}

/// A time-function or per-step entry's variables (unsteady cases, a boundary parameter given
/// by a time function).
PetscErrorCode function_variables(DesignParse &d, const config::DesignConfig &dc,
                                  const ControlEntryOptions &options, ControlEntry *e,
                                  std::vector<std::string> *names, std::vector<double> *init) {
  PetscFunctionBeginUser;
  const char *label = e->label.c_str();
  PetscCheck(d.unsteady, d.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s': %s variables need an unsteady case (time.mode: unsteady)", d.file, label,
             dc.type.c_str());
  e->function = options.function;
  discretization::FlowResidual &res = d.fc.residual();
  const int i = d.reg.find(e->function);
  TimeFunction *f = i >= 0 ? d.reg.time_function(res, i) : nullptr;
  std::string known;
  for (std::size_t k = 0; k < d.reg.size(); ++k)
    if (d.reg.time_function(res, k)) known += (known.empty() ? "" : ", ") + d.reg.spec(k).name;
  PetscCheck(f, d.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.function': '%s' is not a boundary parameter given by a time function "
             "(the case has: %s)",
             d.file, label, e->function.c_str(), known.empty() ? "none" : known.c_str());
  PetscCall(d.claim(e->function, e->label, "function"));
  if (options.kind == ControlKind::TimeFunction)
    PetscCall(time_function_variables(d, options, *f, e, names, init));
  else {
    e->kind = ControlKind::PerStep;
    e->smoothing = options.smoothing;
    PetscCall(d.fc.parameter_steps(e->function, d.steps, init));
    for (long n = 1; n <= d.steps; ++n)
      names->push_back(e->function + "[" + std::to_string(n) + "]");
  }
  PetscFunctionReturn(0);
}

/// The scaled bounds and start of an entry's variables (lower, upper, initial and scale: one
/// value for all or one per variable; init the case's values) appended to the problem's.
PetscErrorCode entry_bounds(const DesignParse &d, const ControlEntryOptions &options,
                            const ControlEntry &e, const std::vector<std::string> &names,
                            const std::vector<double> &init, std::vector<double> *scale,
                            OptimizationProblem *problem) {
  PetscFunctionBeginUser;
  const char *label = e.label.c_str();
  auto list = [&](const char *key, const std::vector<double> &given,
                  std::vector<double> *out) -> PetscErrorCode {
    PetscFunctionBeginUser;
    *out = given;
    PetscCheck(out->size() <= 1 || out->size() == e.count, d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.%s' has %zu values; expected 1 (for all) or %zu (one per variable)", d.file,
               label, key, out->size(), e.count);
    PetscFunctionReturn(0);
  };
  std::vector<double> lo, up, a0, sc;
  PetscCall(list("lower", options.lower, &lo));
  PetscCall(list("upper", options.upper, &up));
  PetscCall(list("initial", options.initial, &a0));
  PetscCall(list("scale", options.scale, &sc));
  auto pick = [](const std::vector<double> &v, std::size_t k, double def) {
    return v.empty() ? def : v[v.size() == 1 ? 0 : k];
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < e.count; ++k) {
    const double l = pick(lo, k, -inf), u = pick(up, k, inf), v = pick(a0, k, init[k]);
    const double s =
        pick(sc, k, e.kind == ControlKind::Parameter && init[k] != 0 ? std::abs(init[k]) : 1.0);
    const std::string &vn = names[e.offset + k];
    PetscCheck(l <= u, d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.lower' (%g) is greater than '%s.upper' (%g) for %s", d.file, label, l,
               label, u, vn.c_str());
    PetscCheck(l <= v && v <= u, d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.initial': the start %g of %s is outside ['%s.lower', '%s.upper'] = "
               "[%g, %g]",
               d.file, label, v, vn.c_str(), label, label, l, u);
    PetscCheck(s > 0 && std::isfinite(s), d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.scale' must be > 0, got %g for %s", d.file, label, s, vn.c_str());
    scale->push_back(s);
    problem->lower.push_back(l / s);
    problem->upper.push_back(u / s);
    problem->start.push_back(v / s);
  }
  PetscFunctionReturn(0);
}

/// The case of an unsteady flow constraint: the resolved case with constraint k as its objective
/// (for its own unsteady adjoint).  Collective.
PetscErrorCode constraint_case(const config::CaseConfig &cfg, const YAML::Node &resolved,
                               std::size_t k, MPI_Comm comm,
                               std::unique_ptr<config::CaseConfig> *out) {
  PetscFunctionBeginUser;
  YAML::Node root = YAML::Clone(resolved);
  YAML::Node obj(YAML::NodeType::Map);
  for (const auto &item : resolved["constraints"][k]) {
    const std::string key = item.first.Scalar();
    if (std::find(std::begin(kConstraintOnlyKeys), std::end(kConstraintOnlyKeys), key) ==
        std::end(kConstraintOnlyKeys))
      obj[key] = item.second;
  }
  root["objective"] = obj;
  root.remove("constraints");
  YAML::Emitter emitter;
  emitter << root;
  *out = std::make_unique<config::CaseConfig>();
  PetscCall(config::CaseConfig::load_text(comm, emitter.c_str(), cfg.file(), cfg.directory(), {},
                                          cfg.schema(), **out));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode ControlOptimization::setup(FlowCase &fc, const std::string &work_directory,
                                          FaultHook fault) {
  PetscFunctionBeginUser;
  fault_ = std::move(fault);
  fc_ = &fc;
  work_ = work_directory;
  const config::CaseConfig &cfg = fc.config();
  const ParameterRegistry reg(fc.residual());
  unsteady_ = fc.unsteady();
  const solver::TimeOptions time = solver::time_options().get(cfg);
  double t_end = 0;
  if (unsteady_) {
    dt_ = time.dt;
    t_end = time.t_end;
    steps_ = std::lround(t_end / dt_);
  }
  DesignParse d{cfg.file().c_str(), fc.mesh().comm, fc, reg, unsteady_, steps_, t_end, {}};
  if (unsteady_)
    PetscCall(d.check_window(adjoint::objective_options().get(cfg).window, "objective"));
  PetscCall(parse_entries(d));
  PetscCall(parse_constraints(d));
  if (!w0_) PetscCall(fc.create_state(&w0_));
  if (!w_) PetscCall(fc.create_state(&w_));
  PetscCall(fc.initial_state(w0_));
  evaluations_ = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::parse_entries(DesignParse &d) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc_->config();
  entries_.clear();
  scale_.clear();
  problem_ = OptimizationProblem();
  for (const config::DesignConfig &dc : cfg.designs()) {
    PetscCheck(dc.family == "control", d.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s': the shape parameterization '%s' cannot be combined with the control "
               "entries (parameter, time-function, per-step) of this design: list",
               d.file, dc.label.c_str(), dc.type.c_str());
    const ControlEntryOptions options = control_entry_options(dc);
    ControlEntry e;
    e.name = dc.name;
    e.label = dc.label;
    e.offset = problem_.names.size();
    std::vector<double> init;
    if (options.kind == ControlKind::Parameter)
      PetscCall(parameter_variables(d, options, &e, &problem_.names, &init));
    else
      PetscCall(function_variables(d, dc, options, &e, &problem_.names, &init));
    e.count = init.size();
    PetscCall(entry_bounds(d, options, e, problem_.names, init, &scale_, &problem_));
    entries_.push_back(e);
  }
  PetscCheck(!entries_.empty(), d.comm, PETSC_ERR_USER_INPUT,
             "%s: a control optimization needs a 'design:' list of parameter, time-function or "
             "per-step entries",
             d.file);
  // a parameter entry on the function of another entry (omega constant and per step)
  for (const auto &e : entries_)
    if (e.kind == ControlKind::Parameter)
      for (const auto &t : e.targets)
        for (const auto &o : entries_)
          PetscCheck(o.function != t, d.comm, PETSC_ERR_USER_INPUT,
                     "%s: '%s.parameters': '%s' is also the function of %s", d.file,
                     e.label.c_str(), t.c_str(), o.label.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode ControlOptimization::parse_constraints(const DesignParse &d) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc_->config();
  const char *file = d.file;
  const MPI_Comm comm = d.comm;
  const std::string wall = adjoint::objective_options().get(cfg).control_wall;
  control_omega_ = wall.empty() ? "" : "boundaries." + wall + ".omega";
  constraints_.clear();
  const YAML::Node resolved = YAML::Load(cfg.resolved_yaml());
  for (std::size_t k = 0; k < cfg.constraints().size(); ++k) {
    const config::Section &sec = cfg.constraints()[k];
    const ConstraintOptions co = constraint_options().get(sec);
    const adjoint::ObjectiveOptions cobj = adjoint::objective_options().get(sec);
    const std::string &type = co.type;
    const char *label = sec.label().c_str();
    PetscCheck(!co.geometric(), comm, PETSC_ERR_USER_INPUT,
               "%s: %s.type: '%s' is a geometric constraint; a control optimization has no shape "
               "variables",
               file, label, type.c_str());
    PetscCheck(!co.relative, comm, PETSC_ERR_USER_INPUT,
               "%s: %s.relative: 'relative' applies to geometric constraints only", file, label);
    ControlConstraint c;
    c.spec.name = co.name.empty() ? type : co.name;
    c.spec.sense = co.sense;
    c.spec.value = co.value;
    c.spec.tolerance = co.tolerance;
    if (unsteady_) PetscCall(d.check_window(cobj.window, sec.label()));
    if (type == "control-power") {
      PetscCheck(unsteady_, comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.type: control-power is for unsteady cases", file, label);
      const std::string cw = cobj.control_wall.empty() ? wall : cobj.control_wall;
      const int p = fc_->mesh().patch_index(cw);
      PetscCheck(p >= 0 && d.reg.find("boundaries." + cw + ".omega") >= 0, comm,
                 PETSC_ERR_USER_INPUT,
                 "%s: %s.control_wall: control-power needs a rotating wall (control_wall here or "
                 "in objective), got '%s'",
                 file, label, cw.c_str());
      PetscCheck(control_omega_.empty() || control_omega_ == "boundaries." + cw + ".omega", comm,
                 PETSC_ERR_USER_INPUT,
                 "%s: %s.control_wall: '%s' differs from objective.control_wall '%s'", file, label,
                 cw.c_str(), wall.c_str());
      control_omega_ = "boundaries." + cw + ".omega";
      c.power = true;
      const std::vector<double> &w = cobj.window;
      c.t0 = w.empty() ? 0.0 : w[0];
      c.t1 = w.empty() ? d.t_end : w[1];
      c.weighting = cobj.weighting;
    } else if (unsteady_) {
      PetscCall(constraint_case(cfg, resolved, k, comm, &c.flow));
    } else {
      c.steady = std::make_unique<adjoint::Objective>();
      PetscCall(c.steady->setup(fc_->residual(), cfg, sec));
    }
    problem_.constraints.push_back(c.spec);
    constraints_.push_back(std::move(c));
  }
  PetscFunctionReturn(0);
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
