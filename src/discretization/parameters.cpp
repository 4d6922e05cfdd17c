// The parameter registry (see include/karman/discretization/parameters.hpp).
#include "karman/discretization/parameters.hpp"

#include <cstdlib>

namespace karman::discretization {

ParameterRegistry::ParameterRegistry(const FlowResidual &res) {
  specs_.push_back({"fluid.viscosity", false, -1, 0});
  for (std::size_t t = 0; t < res.terms().size(); ++t) {
    term_offset_.push_back(static_cast<int>(specs_.size()));
    const std::vector<TermParameter> list = res.terms()[t]->parameters();
    for (std::size_t i = 0; i < list.size(); ++i)
      specs_.push_back(
          {list[i].name, list[i].time_dependent(), static_cast<int>(t), static_cast<int>(i)});
  }
}

TermParameter ParameterRegistry::parameter(const FlowResidual &res, std::size_t i) const {
  const ParameterSpec &s = specs_[i];
  if (s.term < 0) // the viscosity: the residual's fluid parameter
    return {s.name, &const_cast<FlowResidual &>(res).parameters().nu, nullptr};
  return res.terms()[s.term]->parameters()[s.index];
}

int ParameterRegistry::find(const std::string &name) const {
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string ParameterRegistry::names(bool time_dependent) const {
  std::string out;
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (listed(i, time_dependent)) out += (out.empty() ? "" : ", ") + specs_[i].name;
  return out;
}

double ParameterRegistry::value(const FlowResidual &res, std::size_t i,
                                const TimeLevel &level) const {
  return parameter(res, i).at(level.t, level.n);
}

PetscErrorCode ParameterRegistry::set(FlowResidual &res, const std::string &name,
                                      double value) const {
  PetscFunctionBeginUser;
  const int i = find(name);
  PetscCheck(i >= 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "unknown parameter '%s' (the case has: %s)", name.c_str(), names(true).c_str());
  parameter(res, i).set(value);
  res.parameters_changed();
  PetscFunctionReturn(0);
}

physics::TimeFunction *ParameterRegistry::time_function(const FlowResidual &res,
                                                        std::size_t i) const {
  return parameter(res, i).function;
}

namespace {

/// The parameter names of time function f of boundary parameter `base`.
std::vector<std::string> function_parameters(const physics::TimeFunction &f,
                                             const std::string &base) {
  using Kind = physics::TimeFunction::Kind;
  std::vector<std::string> out;
  if (f.kind() == Kind::Sine)
    for (const char *k : {"amplitude", "frequency", "phase", "offset"})
      out.push_back(base + "." + k);
  else if (f.kind() == Kind::Table)
    for (std::size_t j = 0; j < f.values.size(); ++j)
      out.push_back(base + ".knot[" + std::to_string(j) + "]");
  return out;
}

} // namespace

std::string ParameterRegistry::time_function_parameter_names(const FlowResidual &res) const {
  std::string out;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const physics::TimeFunction *f = time_function(res, i);
    if (!f) continue;
    for (const auto &n : function_parameters(*f, specs_[i].name))
      out += (out.empty() ? "" : ", ") + n;
  }
  return out.empty() ? "none" : out;
}

namespace {

/// The member of the time function that time-function parameter `name` designates, or null with
/// the reason in *why.
double *function_member(const ParameterRegistry &reg, FlowResidual &res, const std::string &name,
                        std::string *why) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) {
    *why = "not of the form PARAMETER.amplitude|frequency|phase|offset|knot[j]";
    return nullptr;
  }
  const std::string base = name.substr(0, dot), key = name.substr(dot + 1);
  const int i = reg.find(base);
  physics::TimeFunction *f = i >= 0 ? reg.time_function(res, i) : nullptr;
  if (!f) {
    *why = "'" + base + "' is not a parameter given by a time function";
    return nullptr;
  }
  using Kind = physics::TimeFunction::Kind;
  if (f->kind() == Kind::Constant) {
    *why = "'" + base + "' is constant (" + f->describe() +
           "): it has no time-function parameters (give it a sine or a table)";
    return nullptr;
  }
  if (f->kind() == Kind::Sine) {
    if (key == "amplitude") return &f->amplitude;
    if (key == "frequency") return &f->frequency;
    if (key == "phase") return &f->phase;
    if (key == "offset") return &f->offset;
    *why = "'" + base + "' is a sine: its parameters are amplitude, frequency, phase, offset";
    return nullptr;
  }
  if (f->kind() == Kind::Table && key.rfind("knot[", 0) == 0 && key.back() == ']') {
    char *end = nullptr;
    const long j = std::strtol(key.c_str() + 5, &end, 10);
    if (end == key.c_str() + key.size() - 1 && j >= 0 && j < static_cast<long>(f->values.size()))
      return &f->values[j];
  }
  *why =
      "'" + base + "' is " + f->describe() + ": its parameters are " +
      (f->kind() == Kind::Table ? "knot[0] ... knot[" + std::to_string(f->values.size() - 1) + "]"
                                : std::string("its values per step (a per-step design entry)"));
  return nullptr;
}

} // namespace

PetscErrorCode ParameterRegistry::time_function_value(FlowResidual &res, const std::string &name,
                                                      double *value) const {
  PetscFunctionBeginUser;
  std::string why;
  const double *v = function_member(*this, res, name, &why);
  PetscCheck(v, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "time-function parameter '%s': %s (the case has: %s)", name.c_str(), why.c_str(),
             time_function_parameter_names(res).c_str());
  *value = *v;
  PetscFunctionReturn(0);
}

PetscErrorCode ParameterRegistry::set_time_function_parameter(FlowResidual &res,
                                                              const std::string &name,
                                                              double value) const {
  PetscFunctionBeginUser;
  std::string why;
  double *v = function_member(*this, res, name, &why);
  PetscCheck(v, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "time-function parameter '%s': %s (the case has: %s)", name.c_str(), why.c_str(),
             time_function_parameter_names(res).c_str());
  *v = value;
  res.parameters_changed();
  PetscFunctionReturn(0);
}

std::vector<ParameterGradient> ParameterRegistry::gradients(const FlowResidual &res,
                                                            bool time_dependent,
                                                            const TimeLevel &level) const {
  std::vector<ParameterGradient> out;
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (listed(i, time_dependent)) out.push_back({specs_[i].name, value(res, i, level), 0.0});
  return out;
}

} // namespace karman::discretization
