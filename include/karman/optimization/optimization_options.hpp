// The case-file keys the optimization layer owns: the `optimization` section (the optimizer and
// the mesh deformation of shape campaigns), the keys of a `constraints:` entry and of a `points:`
// entry (multipoint shape campaigns), and the control
// and identification entries of the `design:` list (parameter, time-function, per-step).
#pragma once

#include "karman/config/section_options.hpp"
#include "karman/design/mesh_deformation.hpp"
#include "karman/optimization/optimizer.hpp"

#include <string>
#include <vector>

namespace karman::optimization {

struct OptimizationOptions {
  std::string algorithm = "slsqp"; ///< an NLopt algorithm (optimizer.hpp: resolve_algorithm)
  long max_evaluations = 30;
  double xtol_rel = 1e-6, ftol_rel = 1e-8;
  long projection_steps = 0, vtk_every = 1;
  double kkt_tolerance = 0; ///< stop at a nearly feasible KKT point (OptimizerOptions)
  double deformation_stiffness_exponent = 1, deformation_poisson_ratio = 0.3,
         deformation_rtol = 1e-14;
  std::string deformation_solver = "auto"; ///< auto, direct or iterative (DeformationSolver)
  bool remesh = true;                   ///< 2D shape campaigns: remesh when the deformation fails
  std::string points_mode = "auto";     ///< multipoint: auto, concurrent or sequential
  std::string warm_start = "predicted"; ///< shape campaigns: predicted or last (ShapeEvaluator)
};

/// The good evaluations whose states predict a shape evaluation's start (driver::ShapeEvaluator::
/// set_history): kWarmStartHistory with `warm_start: predicted`, 0 with `last`.
constexpr std::size_t kWarmStartHistory = 4;
std::size_t warm_start_history(const config::CaseConfig &cfg);

const config::SectionOptions<OptimizationOptions> &optimization_options();

/// The kinds of control entry: a parameter's constant value, a time function's parameters, a
/// parameter's value per time step.
enum class ControlKind { Parameter, TimeFunction, PerStep };

/// The keys of a control entry of the `design:` list (each kind has its subset).
struct ControlEntryOptions {
  ControlKind kind = ControlKind::Parameter;
  std::string name;
  std::vector<double> lower, upper, initial, scale;
  std::vector<std::string> parameters; ///< parameter, time-function
  std::string function;                ///< time-function, per-step
  double smoothing = 0;                ///< per-step
};

/// The control and identification design types, family "control".
std::vector<config::VariantSpec> control_design_types();
/// The options of a control entry (`dc` of a control type).
ControlEntryOptions control_entry_options(const config::DesignConfig &dc);

/// The constraint's own keys of a `constraints:` entry (it has the objective section's keys too:
/// a flow constraint is an objective).
struct ConstraintOptions {
  std::string type;
  ConstraintSense sense = ConstraintSense::Equal;
  double value = 0;
  bool relative = false;
  double tolerance = 1e-8;
  std::string name;
  std::string axis = "x";
  double station = 0;
  std::string point; ///< multipoint: the point of a flow constraint ("": every point)
  /// A constraint on the body's geometry (area, volume, centroid, thickness).
  bool geometric() const;
};

/// Its keys, `objective_types` the registered objective types (the `type` choices with the
/// geometric ones and control-power).
config::SectionOptions<ConstraintOptions>
constraint_options(const std::vector<std::string> &objective_types = {});

/// The keys of a `points:` entry (an operating point of a multipoint shape campaign).
struct PointOptions {
  std::string name;
  double weight = 1;
  std::vector<std::string> set; ///< overrides of the case ("key=value", as --set)
  std::string variable;         ///< a case parameter that is this point's design variable
  double lower = 0, upper = 0, scale = 1;
};
config::SectionOptions<PointOptions> point_options();

} // namespace karman::optimization
