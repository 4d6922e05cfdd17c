// The set-up of a flow-control / identification problem from its case (see
// include/karman/optimization/control_optimization.hpp, ControlOptimization::setup): the
// control entries of the `design:` list as variables with their scaled bounds and start, and the
// `constraints:` list as flow constraints (with their own objectives) or control power.
#include "karman/optimization/control_optimization.hpp"

#include "karman/discretization/parameters.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string>

namespace karman::optimization {

using discretization::ParameterRegistry;
using physics::TimeFunction;

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

/// True for the constraint's own keys (constraint_options(): sense, value, ...; not its type),
/// which are no objective keys.
bool constraint_only_key(const std::string &key) {
  static const config::SectionSpec spec = constraint_options().spec();
  for (const auto &k : spec.keys)
    if (k.name == key) return key != "type";
  return false;
}

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
    if (!constraint_only_key(key)) obj[key] = item.second;
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
  adaptive_ = unsteady_ && time.adaptive();
  step_sizes_.clear();
  if (unsteady_) {
    dt_ = time.dt.value;
    t_end = time.t_end;
    steps_ = adaptive_ ? 0 : std::lround(t_end / dt_);
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

} // namespace karman::optimization
