// The registry of a case's differentiable parameters: one list, in one fixed order, that the
// adjoint accumulates into, verification perturbs, and the optimizer and the Python bindings
// read and set by name.
//
//   fluid.viscosity                                     nu
//   boundaries.<wall>.omega (2D), .velocity.{x,y,z}     rotation rate, translation
//   boundaries.<inlet>.velocity                         inflow speed (value or parabolic peak)
//   boundaries.<jet>.amplitude                          blowing/suction velocity
//   boundaries.<far-field>.velocity.{x,y,z}, .pressure  U_inf, p_inf
//   boundaries.<outlet>.pressure                        p_b
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

namespace karman::adjoint {

/// A named differentiable parameter of the case and its gradient.
struct ParameterGradient {
  std::string name; ///< e.g. fluid.viscosity, boundaries.cylinder.omega
  double value = 0; ///< the parameter's value
  double gradient = 0;
};

enum class ParameterKind {
  Viscosity,
  WallVelocity,
  Omega,
  InletSpeed,
  Amplitude,
  FarFieldVelocity,
  Pressure
};

struct ParameterSpec {
  std::string name;
  ParameterKind kind = ParameterKind::Viscosity;
  int patch = -1;              ///< boundary patch (-1 for fluid parameters)
  int component = 0;           ///< velocity component
  bool time_dependent = false; ///< given by a time function that is not constant
};

class ParameterRegistry {
public:
  /// Every differentiable parameter of the residual's case (its boundary conditions and
  /// fluid), in the order above.
  explicit ParameterRegistry(const discretization::FlowResidual &res);

  std::size_t size() const { return specs_.size(); }
  const ParameterSpec &spec(std::size_t i) const { return specs_[i]; }
  /// Index of the parameter called `name`, or -1.
  int find(const std::string &name) const;
  /// Index of the parameter of boundary `patch` of `kind` (velocity `component`), or -1.
  int index(int patch, ParameterKind kind, int component = 0) const;
  /// Index of fluid.viscosity.
  int viscosity() const { return 0; }
  /// The names, comma separated (time-dependent ones only with `time_dependent`).
  std::string names(bool time_dependent) const;

  /// Value of parameter i at the residual's current time and level.
  double value(const discretization::FlowResidual &res, std::size_t i) const;
  /// Sets parameter `name` to a constant `value` and re-evaluates the boundary values at the
  /// residual's time; an unknown name is an error listing the known ones.  Collective.
  PetscErrorCode set(discretization::FlowResidual &res, const std::string &name,
                     double value) const;

  /// The time function of boundary parameter i (rotation rate, inlet speed, jet amplitude: the
  /// parameters a time function gives), or null for the other parameters.
  static physics::TimeFunction *time_function(discretization::FlowResidual &res,
                                              const ParameterSpec &spec);
  /// The names of the time-function parameters of the case's non-constant time functions
  /// (boundaries.cylinder.omega.amplitude, ..., .knot[3]), comma separated ("none").
  std::string time_function_parameter_names(const discretization::FlowResidual &res) const;
  /// Value of time-function parameter `name` (PARAMETER.amplitude, ... .knot[j]) into *value;
  /// an unknown name, a constant function or a parameter its kind does not have (a knot of a
  /// sine, a knot index beyond the table) is an error naming the known ones.  Collective.
  PetscErrorCode time_function_value(discretization::FlowResidual &res, const std::string &name,
                                     double *value) const;
  /// Sets time-function parameter `name` (as above) and re-evaluates the boundary values at the
  /// residual's time.  Collective.
  PetscErrorCode set_time_function_parameter(discretization::FlowResidual &res,
                                             const std::string &name, double value) const;

  /// The parameters with their values and zero gradients: the constant ones, and with
  /// `time_dependent` also the time-dependent ones (value at the current time).
  std::vector<ParameterGradient> gradients(const discretization::FlowResidual &res,
                                           bool time_dependent) const;
  /// Adds the adjoints of boundary `patch`'s data to `sums` (one entry per parameter): abar of
  /// its prescribed velocity's parameters, pbar of its prescribed pressure.
  void add_boundary_adjoint(int patch, const physics::BoundaryParameters<double> &abar, double pbar,
                            std::vector<double> &sums) const;

  /// True if parameter i is listed by gradients(res, time_dependent).
  bool listed(std::size_t i, bool time_dependent) const {
    return time_dependent || !specs_[i].time_dependent;
  }

private:
  std::vector<ParameterSpec> specs_;
  std::vector<std::vector<int>> patch_specs_; ///< per patch: indices of its parameters
};

/// Keeps the gradients of the parameters named in the case's adjoint.parameters (all if
/// empty); a name the case does not have is an error listing the ones it has.
PetscErrorCode select_parameters(const discretization::FlowResidual &res,
                                 const config::CaseConfig &cfg,
                                 std::vector<ParameterGradient> *parameters);

} // namespace karman::adjoint
