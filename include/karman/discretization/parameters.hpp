// The registry of a case's differentiable parameters: one list, in one fixed order, that the
// adjoint accumulates into, verification perturbs, and the optimizer and the Python bindings
// read and set by name -- fluid.viscosity, then every residual term's own parameters in term
// order (residual_term.hpp: the flow's boundary parameters, navier_stokes_term.hpp; a scalar's
// diffusivity and boundary values, ...).
// A parameter given by a time function that is not constant (omega(t), U(t), A(t)) is
// "time dependent": it has a value per time level (the unsteady adjoint's per-step control
// gradients) and no single value; set() replaces it by a constant.
//
// The parameters of the time functions (the names of the unsteady adjoint's chained gradients):
//   <parameter>.amplitude, .frequency, .phase, .offset   of a sine  c + A sin(2 pi f t + phi)
//   <parameter>.knot[j]                                  value j of a table (piecewise linear)
// are read and set with time_function_value() / set_time_function_parameter(); a time function
// that is constant has none.
#pragma once

#include "karman/discretization/flow_residual.hpp"

#include <string>
#include <vector>

namespace karman::discretization {

/// A named differentiable parameter of the case and its gradient.
struct ParameterGradient {
  std::string name; ///< e.g. fluid.viscosity, boundaries.cylinder.omega
  double value = 0; ///< the parameter's value
  double gradient = 0;
};

struct ParameterSpec {
  std::string name;
  bool time_dependent = false; ///< given by a time function that is not constant
  int term = -1;               ///< the residual term it belongs to (-1: the fluid's viscosity)
  int index = 0;               ///< its place in the term's parameters()
};

class ParameterRegistry {
public:
  /// Every differentiable parameter of the residual's case, in the order above.
  explicit ParameterRegistry(const FlowResidual &res);

  std::size_t size() const { return specs_.size(); }
  const ParameterSpec &spec(std::size_t i) const { return specs_[i]; }
  /// Index of the parameter called `name`, or -1.
  int find(const std::string &name) const;
  /// Index of the first parameter of residual term t (its parameters follow in its order).
  int term_offset(std::size_t t) const { return term_offset_[t]; }
  /// Index of fluid.viscosity.
  int viscosity() const { return 0; }
  /// The names, comma separated (time-dependent ones only with `time_dependent`).
  std::string names(bool time_dependent) const;

  /// Value of parameter i at time level `level` (a time-dependent one's value there).
  double value(const FlowResidual &res, std::size_t i, const TimeLevel &level) const;
  /// Sets parameter `name` to a constant `value` (the residual's boundary data follow:
  /// FlowResidual::parameters_changed); an unknown name is an error listing the known ones.
  PetscErrorCode set(FlowResidual &res, const std::string &name, double value) const;

  /// The time function of parameter i (rotation rate, inlet speed, jet amplitude: the parameters a
  /// time function gives), or null for the other parameters.
  physics::TimeFunction *time_function(const FlowResidual &res, std::size_t i) const;
  /// The names of the time-function parameters of the case's non-constant time functions
  /// (boundaries.cylinder.omega.amplitude, ..., .knot[3]), comma separated ("none").
  std::string time_function_parameter_names(const FlowResidual &res) const;
  /// Value of time-function parameter `name` (PARAMETER.amplitude, ... .knot[j]) into *value;
  /// an unknown name, a constant function or a parameter its kind does not have (a knot of a
  /// sine, a knot index beyond the table) is an error naming the known ones.  Collective.
  PetscErrorCode time_function_value(FlowResidual &res, const std::string &name,
                                     double *value) const;
  /// Sets time-function parameter `name` (as above); the residual's boundary data follow.
  /// Collective.
  PetscErrorCode set_time_function_parameter(FlowResidual &res, const std::string &name,
                                             double value) const;

  /// The parameters with their values and zero gradients: the constant ones, and with
  /// `time_dependent` also the time-dependent ones (value at time level `level`).
  std::vector<ParameterGradient> gradients(const FlowResidual &res, bool time_dependent,
                                           const TimeLevel &level) const;
  /// True if parameter i is listed by gradients(res, time_dependent).
  bool listed(std::size_t i, bool time_dependent) const {
    return time_dependent || !specs_[i].time_dependent;
  }

private:
  /// Parameter i as its term gives it (value and setter).
  TermParameter parameter(const FlowResidual &res, std::size_t i) const;
  std::vector<ParameterSpec> specs_;
  std::vector<int> term_offset_;
};

} // namespace karman::discretization
