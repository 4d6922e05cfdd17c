// The optimization layer's case-file keys (see
// include/karman/optimization/optimization_options.hpp).
#include "karman/optimization/optimization_options.hpp"

#include <stdexcept>

namespace karman::optimization {

using namespace config::key;
using config::KeySpec;
using config::KeyType;
using config::SectionSpec;

const config::SectionOptions<OptimizationOptions> &optimization_options() {
  static const auto options =
      config::SectionOptions<OptimizationOptions>(
          "optimization",
          "karman optimize: the optimizer over the `design` variables (minimizing the objective "
          "subject to the `constraints`) and the mesh deformation")
          .key(choice("algorithm", "slsqp",
                      "NLopt algorithm: slsqp (sequential quadratic programming; equality and "
                      "inequality constraints), ccsaq or mma (conservative approximations; "
                      "inequalities only), lbfgs (limited-memory quasi-Newton with bounds; no "
                      "constraints), auto (lbfgs for more than 100 variables without constraints, "
                      "ccsaq for more than 100 with inequalities only, slsqp otherwise)",
                      {"slsqp", "ccsaq", "mma", "lbfgs", "auto"}),
               &OptimizationOptions::algorithm)
          .key(integer("max_evaluations", "30",
                       "maximum number of evaluations (forward + adjoints) of the objective", 1),
               &OptimizationOptions::max_evaluations)
          .key(positive("xtol_rel", "1e-6",
                        "stop when the design changes by less than this (relative)"),
               &OptimizationOptions::xtol_rel)
          .key(positive("ftol_rel", "1e-8",
                        "stop when the objective changes by less than this (relative)"),
               &OptimizationOptions::ftol_rel)
          .key(integer("projection_steps", "0",
                       "at the end, project the best nearly feasible design (if better than the "
                       "best feasible one) onto the constraints with at most this many "
                       "Gauss-Newton steps, one evaluation each (0: none)",
                       0),
               &OptimizationOptions::projection_steps)
          .key(nonnegative("kkt_tolerance", "0",
                           "stop when an evaluation within kkt_tolerance (1 + |value|) of every "
                           "constraint has a KKT residual (the projected Lagrangian gradient "
                           "relative to the objective's) of at most this; that design is the "
                           "answer, projected onto the constraints as projection_steps says "
                           "(0: NLopt's own criteria only)"),
               &OptimizationOptions::kkt_tolerance)
          .key(integer("vtk_every", "1",
                       "ParaView snapshot of the flow every this many evaluations (0: none; the "
                       "shape is written at every evaluation)",
                       0),
               &OptimizationOptions::vtk_every)
          .key(positive("deformation_stiffness_exponent", "1.0",
                        "mesh deformation: Young's modulus E = V^-exponent per cell (stiff small "
                        "cells)"),
               &OptimizationOptions::deformation_stiffness_exponent)
          .key(real("deformation_poisson_ratio", "0.3", "mesh deformation: Poisson's ratio"),
               &OptimizationOptions::deformation_poisson_ratio)
          .key(positive("deformation_rtol", "1e-14",
                        "mesh deformation: relative tolerance of the CG solves (also of its "
                        "reverse)"),
               &OptimizationOptions::deformation_rtol)
          .key(choice("deformation_solver", "auto",
                      "mesh deformation: direct (a MUMPS LU factored once per reference mesh, "
                      "for every deformation and reverse solve), iterative (CG with algebraic "
                      "multigrid to deformation_rtol, the LU if CG fails), auto (direct in 2D "
                      "when its factors fit in memory, about 6 KiB per vertex; iterative in 3D, "
                      "where the factors fill in far more)",
                      {"auto", "direct", "iterative"}),
               &OptimizationOptions::deformation_solver)
          .key(typed("remesh", KeyType::Bool, "true",
                     "2D shape campaigns: a design whose mesh deformation fails (inverted "
                     "or tangled cells) is evaluated on a new Gmsh mesh made around the "
                     "walls of the last good design (wall vertices re-spaced, the "
                     "case's sizes and wall layers), which the campaign then continues "
                     "on (driver/remeshing.hpp); false: such a design is a failed "
                     "evaluation"),
               &OptimizationOptions::remesh)
          .key(choice("points_mode", "auto",
                      "multipoint campaigns (`points:`): concurrent (the ranks split into "
                      "min(points, ranks) groups, point k on group k mod groups), sequential (one "
                      "point after the other on all ranks), auto (concurrent when there are at "
                      "least as many ranks as points); the same designs either way",
                      {"auto", "concurrent", "sequential"}),
               &OptimizationOptions::points_mode)
          .key(choice("warm_start", "predicted",
                      "shape campaigns: the state a forward solve starts from: predicted (the "
                      "affine combination of the last 4 good evaluations' states on the mesh "
                      "whose wall displacements best fit the new one, when its residual is below "
                      "the last state's; driver/shape_evaluation.hpp) or last (the last good "
                      "evaluation's state)",
                      {"predicted", "last"}),
               &OptimizationOptions::warm_start);
  return options;
}

std::size_t warm_start_history(const config::CaseConfig &cfg) {
  return optimization_options().get(cfg).warm_start == "predicted" ? kWarmStartHistory : 0;
}

config::SectionOptions<PointOptions> point_options() {
  return config::SectionOptions<PointOptions>(
             "points",
             "the operating points of a multipoint shape campaign: the objective is the weighted "
             "sum of the case's objective at each point, each point its own flow solve and "
             "adjoints on the same shape")
      .key(typed("name", KeyType::String, "", "the point's name (constraints' `point`, logs)"),
           &PointOptions::name)
      .key(positive("weight", "1.0", "its weight in the objective"), &PointOptions::weight)
      .key(typed("set", KeyType::NameList, "[]",
                 "overrides of the case at this point, as karman's --set: "
                 "['boundaries.farfield.angle_of_attack=2', 'fluid.viscosity=1e-3']"),
           &PointOptions::set)
      .key(typed("variable", KeyType::String, "''",
                 "a parameter of the case (karman adjoint lists them, e.g. "
                 "boundaries.farfield.angle_of_attack) that is a design variable of this point "
                 "alone, started from its value here, within [lower, upper]"),
           &PointOptions::variable)
      .key(real("lower", "0.0", "the variable's lower bound"), &PointOptions::lower)
      .key(real("upper", "0.0", "the variable's upper bound"), &PointOptions::upper)
      .key(positive("scale", "1.0", "the variable's scale (the optimizer sees value / scale)"),
           &PointOptions::scale);
}

namespace {

using config::SectionOptions;

// The keys of every control entry, then the kind's own.
SectionOptions<ControlEntryOptions> control_entry(const std::string &type,
                                                  const std::string &help) {
  return SectionOptions<ControlEntryOptions>(type, help)
      .key(typed("name", KeyType::String, "''", "name of the entry in messages and verify.json"),
           &ControlEntryOptions::name)
      .key(typed("lower", KeyType::RealList, "[]",
                 "lower bounds: one value for all variables of the entry, or one per variable; "
                 "empty: unbounded"),
           &ControlEntryOptions::lower)
      .key(typed("upper", KeyType::RealList, "[]",
                 "upper bounds: one value for all, or one per variable; empty: unbounded"),
           &ControlEntryOptions::upper)
      .key(typed("initial", KeyType::RealList, "[]",
                 "initial values: one value for all, or one per variable; empty: the case's "
                 "values"),
           &ControlEntryOptions::initial)
      .key(typed("scale", KeyType::RealList, "[]",
                 "the optimizer sees a / scale (one value for all, or one per variable; each > "
                 "0); empty: |initial value| (1 where it is 0) for parameter entries, 1 otherwise"),
           &ControlEntryOptions::scale);
}

struct ControlType {
  ControlKind kind;
  SectionOptions<ControlEntryOptions> options;
};

const std::vector<ControlType> &control_types() {
  static const std::vector<ControlType> types = {
      {ControlKind::Parameter,
       control_entry("parameter",
                     "physical and boundary parameters by their registry name, constant in time: "
                     "fluid.viscosity, boundaries.INLET.velocity, boundaries.WALL.omega (2D), "
                     "boundaries.WALL.velocity.x, boundaries.JET.amplitude, ... (karman adjoint "
                     "lists them); steady and unsteady cases")
           .key(typed("parameters", KeyType::NameList, "", "the parameters, one variable each"),
                &ControlEntryOptions::parameters)},
      {ControlKind::TimeFunction,
       control_entry("time-function",
                     "parameters of a boundary parameter's time function (unsteady): a sine's "
                     "amplitude, frequency, phase, offset; a table's knot values knot[j] (or "
                     "`knots`: all of them)")
           .key(typed("function", KeyType::String, "",
                      "the boundary parameter given by the time function, e.g. "
                      "boundaries.cylinder.omega"),
                &ControlEntryOptions::function)
           .key(typed("parameters", KeyType::NameList, "",
                      "the function's parameters: amplitude, frequency, phase, offset (sine); "
                      "knot[j] or knots (table)"),
                &ControlEntryOptions::parameters)},
      {ControlKind::PerStep,
       control_entry("per-step",
                     "one value per time level n = 1..N of a boundary parameter (unsteady), with "
                     "the smoothness penalty smoothing * sum_n (a_(n+1) - a_n)^2 / dt added to "
                     "the objective")
           .key(typed("function", KeyType::String, "",
                      "the boundary parameter (rotation rate, inlet speed, jet amplitude), e.g. "
                      "boundaries.cylinder.omega"),
                &ControlEntryOptions::function)
           .key(nonnegative("smoothing", "0.0",
                            "weight of the smoothness penalty (a discrete integral of (da/dt)^2)"),
                &ControlEntryOptions::smoothing)},
  };
  return types;
}

} // namespace

std::vector<config::VariantSpec> control_design_types() {
  std::vector<config::VariantSpec> out;
  for (const auto &t : control_types()) {
    const bool needs_parameters = t.kind != ControlKind::PerStep;
    out.push_back(
        {t.options.spec(), "control", "",
         [needs_parameters](const YAML::Node &given, const YAML::Node &params,
                            const std::string &label, const config::VariantContext &context) {
           // names, counts and bounds need the case's parameters: ControlOptimization
           if (needs_parameters && params["parameters"].size() == 0)
             return config::where(context.file, given["parameters"] ? given["parameters"] : given) +
                    ": '" + label + ".parameters' must not be empty";
           return std::string();
         }});
  }
  return out;
}

ControlEntryOptions control_entry_options(const config::DesignConfig &dc) {
  for (const auto &t : control_types())
    if (t.options.spec().name == dc.type) {
      ControlEntryOptions o = t.options.get(dc.parameters);
      o.kind = t.kind;
      return o;
    }
  throw std::logic_error("karman: internal error: '" + dc.type + "' is not a control type");
}

bool ConstraintOptions::geometric() const {
  return type == "area" || type == "volume" || type == "centroid" || type == "thickness";
}

config::SectionOptions<ConstraintOptions>
constraint_options(const std::vector<std::string> &objective_types) {
  std::vector<std::string> types = {"area", "volume", "centroid", "thickness"};
  std::string flow;
  for (const auto &t : objective_types) {
    types.push_back(t);
    flow += (flow.empty() ? "" : ", ") + t;
  }
  types.push_back("control-power");
  return config::SectionOptions<ConstraintOptions>(
             "constraints", "constraints of karman optimize, each C sense value")
      .key(choice("type", "",
                  "area (2D) or volume (3D) of the body enclosed by `walls`, centroid (component "
                  "`axis`) of that body, thickness of a 2D body at chord station `station`, or a "
                  "flow quantity with the keys of the objective section (" +
                      flow +
                      "; unsteady: its time average over `window`), or control-power: the time "
                      "average over `window` of omega(t)^2 of `control_wall` (unsteady)",
                  types),
           &ConstraintOptions::type)
      .choice(choice("sense", "", "C = value, C <= value or C >= value", {}),
              &ConstraintOptions::sense,
              {{"=", ConstraintSense::Equal},
               {"<=", ConstraintSense::LessEqual},
               {">=", ConstraintSense::GreaterEqual}})
      .key(real("value", "", "the bound"), &ConstraintOptions::value)
      .key(typed("relative", KeyType::Bool, "false",
                 "value is a factor of C on the initial shape (geometric constraints)"),
           &ConstraintOptions::relative)
      .key(positive("tolerance", "1e-8", "feasibility tolerance of the optimizer"),
           &ConstraintOptions::tolerance)
      .key(typed("name", KeyType::String, "''", "name in logs and history columns"),
           &ConstraintOptions::name)
      .key(choice("axis", "x", "centroid: the component", {"x", "y", "z"}),
           &ConstraintOptions::axis)
      .key(real("station", "0.0", "thickness: the chord station x"), &ConstraintOptions::station)
      .key(typed("point", KeyType::String, "''",
                 "multipoint campaigns: the point (points[].name) a flow constraint is measured "
                 "at; empty: at every point (named NAME@POINT)"),
           &ConstraintOptions::point);
}

} // namespace karman::optimization
