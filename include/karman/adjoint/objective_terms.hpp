// Objective terms as registered units: each type of the objective section (drag, lift, force,
// moment: force_objectives.cpp; pressure-difference, pressure-drop: pressure_objectives.cpp;
// probe-match: probe_objective.cpp; nusselt, scalar-variance: scalar_objectives.cpp) is one unit
// that owns its keys of the section, its parsing (checks against the mesh), its value at a local
// state and the reverse mode of its explicit dependence on the state, the geometry and the
// parameters.  objective_types() is the one list: the section's `type` choices and keys, `karman
// --help` and Objective's dispatch come from it. A new objective type is its unit's file and one
// line in objective_types.cpp.
#pragma once

#include "karman/adjoint/sensitivities.hpp"
#include "karman/config/case_config.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace karman::adjoint {

class ObjectiveTerm {
public:
  virtual ~ObjectiveTerm() = default;
  /// Adds weight * J_term at the local state to *J.  Collective.
  virtual PetscErrorCode value(const discretization::FlowResidual &res,
                               const discretization::LocalState &state, double weight,
                               double *J) const = 0;
  /// Adds weight * dJ_term/d(inputs) (explicit dependence) at `state` to s.  Collective.
  virtual PetscErrorCode reverse(const discretization::FlowResidual &res,
                                 const discretization::LocalState &state, Sensitivities &s,
                                 double weight) const = 0;
  /// Unsteady: the time t of the values (probe-match's observations in time).
  virtual void set_time(double) {}
  /// A least-squares term: the number of data values it fits (per time level); 0 otherwise.
  virtual long data_count(const discretization::FlowResidual &) const { return 0; }
};

struct ObjectiveType {
  std::string name; ///< the objective section's `type`
  std::string help;
  std::vector<config::KeySpec> keys; ///< its own keys of the objective section
  /// A sum of squared misfits to data (identification: its Gauss-Newton uncertainty applies).
  bool least_squares = false;
  /// The term of `sec` (a validated objective section or term of a sum, `cfg` its case) on the
  /// residual's mesh; every problem of the input is one error line naming the file and the key.
  /// Collective.
  std::function<PetscErrorCode(const discretization::FlowResidual &res,
                               const config::CaseConfig &cfg, const config::Section &sec,
                               std::unique_ptr<ObjectiveTerm> *term)>
      create;
};

/// The boundaries named by the section's `walls` key as patch indices (in its order; empty if the
/// key is); a name the mesh lacks is an error naming the file and the key.  Collective.
PetscErrorCode objective_walls(const discretization::FlowResidual &res,
                               const config::CaseConfig &cfg, const config::Section &sec,
                               std::vector<int> *walls);

/// Every objective type, in the order of the section's `type` choices.
const std::vector<ObjectiveType> &objective_types();
/// The type called `name`, or null.
const ObjectiveType *find_objective_type(const std::string &name);

/// The units' factories (one per file).
std::vector<ObjectiveType> force_objective_types();
std::vector<ObjectiveType> pressure_objective_types();
std::vector<ObjectiveType> probe_objective_types();
std::vector<ObjectiveType> scalar_objective_types();

} // namespace karman::adjoint
