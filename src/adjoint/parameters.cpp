// The parameter registry (see include/karman/adjoint/parameters.hpp).
#include "karman/adjoint/parameters.hpp"

#include <cstdlib>

namespace karman::adjoint {

using discretization::FlowResidual;
using discretization::PatchCondition;
using physics::BoundaryType;

namespace {
const char *kAxis[3] = {"x", "y", "z"};
} // namespace

ParameterRegistry::ParameterRegistry(const FlowResidual &res) {
  specs_.push_back({"fluid.viscosity", ParameterKind::Viscosity, -1, 0, false});
  const auto &bcs = res.boundary_conditions();
  const int dim = res.mesh().dim;
  for (std::size_t p = 0; p < bcs.n_patches(); ++p) {
    const PatchCondition &pc = bcs.patch(static_cast<int>(p));
    const std::string base = "boundaries." + pc.name + ".";
    const int patch = static_cast<int>(p);
    if (pc.custom_velocity) continue;
    switch (pc.type()) {
    case BoundaryType::Wall:
      if (dim == 2)
        specs_.push_back({base + "omega", ParameterKind::Omega, patch, 0, !pc.omega.is_constant()});
      for (int d = 0; d < dim; ++d)
        specs_.push_back({base + "velocity." + kAxis[d], ParameterKind::WallVelocity, patch, d});
      break;
    case BoundaryType::VelocityInlet:
      specs_.push_back(
          {base + "velocity", ParameterKind::InletSpeed, patch, 0, !pc.speed.is_constant()});
      break;
    case BoundaryType::BlowingSuction:
      specs_.push_back(
          {base + "amplitude", ParameterKind::Amplitude, patch, 0, !pc.amplitude.is_constant()});
      break;
    case BoundaryType::FarField:
      for (int d = 0; d < dim; ++d)
        specs_.push_back(
            {base + "velocity." + kAxis[d], ParameterKind::FarFieldVelocity, patch, d});
      specs_.push_back({base + "pressure", ParameterKind::Pressure, patch, 0});
      break;
    case BoundaryType::PressureOutlet:
      specs_.push_back({base + "pressure", ParameterKind::Pressure, patch, 0});
      break;
    case BoundaryType::Symmetry:
      break;
    }
  }
  patch_specs_.resize(bcs.n_patches());
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].patch >= 0) patch_specs_[specs_[i].patch].push_back(static_cast<int>(i));
}

void ParameterRegistry::add_boundary_adjoint(int patch,
                                             const physics::BoundaryParameters<double> &abar,
                                             double pbar, std::vector<double> &sums) const {
  for (int i : patch_specs_[patch]) {
    const ParameterSpec &s = specs_[i];
    switch (s.kind) {
    case ParameterKind::WallVelocity:
    case ParameterKind::FarFieldVelocity:
      sums[i] += abar.velocity[s.component];
      break;
    case ParameterKind::Omega:
      sums[i] += abar.omega;
      break;
    case ParameterKind::InletSpeed:
      sums[i] += abar.speed;
      break;
    case ParameterKind::Amplitude:
      sums[i] += abar.amplitude;
      break;
    case ParameterKind::Pressure:
      sums[i] += pbar;
      break;
    case ParameterKind::Viscosity:
      break;
    }
  }
}

int ParameterRegistry::find(const std::string &name) const {
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return static_cast<int>(i);
  return -1;
}

int ParameterRegistry::index(int patch, ParameterKind kind, int component) const {
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].patch == patch && specs_[i].kind == kind && specs_[i].component == component)
      return static_cast<int>(i);
  return -1;
}

std::string ParameterRegistry::names(bool time_dependent) const {
  std::string out;
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (listed(i, time_dependent)) out += (out.empty() ? "" : ", ") + specs_[i].name;
  return out;
}

double ParameterRegistry::value(const FlowResidual &res, std::size_t i) const {
  const ParameterSpec &s = specs_[i];
  if (s.kind == ParameterKind::Viscosity) return res.parameters().nu;
  const PatchCondition &pc = res.boundary_conditions().patch(s.patch);
  const double t = res.time();
  const long n = res.level();
  switch (s.kind) {
  case ParameterKind::WallVelocity:
  case ParameterKind::FarFieldVelocity:
    return pc.velocity[s.component];
  case ParameterKind::Omega:
    return pc.omega.value(t, n);
  case ParameterKind::InletSpeed:
    return pc.speed.value(t, n);
  case ParameterKind::Amplitude:
    return pc.amplitude.value(t, n);
  case ParameterKind::Pressure:
    return pc.pressure;
  case ParameterKind::Viscosity:
    break;
  }
  return 0;
}

PetscErrorCode ParameterRegistry::set(FlowResidual &res, const std::string &name,
                                      double value) const {
  PetscFunctionBeginUser;
  const int i = find(name);
  PetscCheck(i >= 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "unknown parameter '%s' (the case has: %s)", name.c_str(), names(true).c_str());
  const ParameterSpec &s = specs_[i];
  if (s.kind == ParameterKind::Viscosity) {
    res.parameters().nu = value;
    PetscFunctionReturn(0);
  }
  PatchCondition &pc = res.boundary_conditions().patch(s.patch);
  switch (s.kind) {
  case ParameterKind::WallVelocity:
  case ParameterKind::FarFieldVelocity:
    pc.velocity[s.component] = value;
    break;
  case ParameterKind::Omega:
    pc.omega = physics::TimeFunction::constant(value);
    break;
  case ParameterKind::InletSpeed:
    pc.speed = physics::TimeFunction::constant(value);
    break;
  case ParameterKind::Amplitude:
    pc.amplitude = physics::TimeFunction::constant(value);
    break;
  case ParameterKind::Pressure:
    pc.pressure = value;
    break;
  case ParameterKind::Viscosity:
    break;
  }
  PetscCall(res.update_boundary_values(res.time(), res.level()));
  PetscFunctionReturn(0);
}

physics::TimeFunction *ParameterRegistry::time_function(FlowResidual &res,
                                                        const ParameterSpec &spec) {
  if (spec.patch < 0) return nullptr;
  PatchCondition &pc = res.boundary_conditions().patch(spec.patch);
  switch (spec.kind) {
  case ParameterKind::Omega:
    return &pc.omega;
  case ParameterKind::InletSpeed:
    return &pc.speed;
  case ParameterKind::Amplitude:
    return &pc.amplitude;
  default:
    return nullptr;
  }
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
  for (const auto &s : specs_) {
    const physics::TimeFunction *f = time_function(const_cast<FlowResidual &>(res), s); // only read
    if (!f) continue;
    for (const auto &n : function_parameters(*f, s.name)) out += (out.empty() ? "" : ", ") + n;
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
  physics::TimeFunction *f = i >= 0 ? ParameterRegistry::time_function(res, reg.spec(i)) : nullptr;
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
  PetscCall(res.update_boundary_values(res.time(), res.level()));
  PetscFunctionReturn(0);
}

std::vector<ParameterGradient> ParameterRegistry::gradients(const FlowResidual &res,
                                                            bool time_dependent) const {
  std::vector<ParameterGradient> out;
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (listed(i, time_dependent)) out.push_back({specs_[i].name, value(res, i), 0.0});
  return out;
}

PetscErrorCode select_parameters(const FlowResidual &res, const config::CaseConfig &cfg,
                                 std::vector<ParameterGradient> *parameters) {
  PetscFunctionBeginUser;
  const std::vector<std::string> wanted = cfg.section("adjoint").names("parameters");
  if (wanted.empty()) PetscFunctionReturn(0);
  std::vector<ParameterGradient> kept;
  std::string known;
  for (const auto &p : *parameters) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto &name : wanted) {
    bool found = false;
    for (const auto &p : *parameters)
      if (p.name == name) kept.push_back(p), found = true;
    PetscCheck(found, res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: adjoint.parameters: the case has no parameter '%s' (it has: %s)",
               cfg.file().c_str(), name.c_str(), known.c_str());
  }
  *parameters = kept;
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
