// The optimization layer's keys (src/optimization/optimization_options.cpp): the `optimization`
// section's defaults are the struct's and its keys reach their members; the control entries of
// `design:` (parameter, time-function, per-step) read into ControlEntryOptions with their kind,
// an entry without parameters is refused naming the entry; a constraint's keys, its sense and
// whether it is geometric; the deformation keys as DeformationOptions; kkt_tolerance off by
// default, a negative one refused naming the key.
#include "karman/optimization/optimization_options.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;
using namespace karman::optimization;

TEST_CASE("optimization options: defaults and members", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const OptimizationOptions d, o = optimization_options().get(cfg);
  CHECK(o.algorithm == d.algorithm);
  CHECK(o.max_evaluations == d.max_evaluations);
  CHECK(o.xtol_rel == d.xtol_rel);
  CHECK(o.ftol_rel == d.ftol_rel);
  CHECK(o.projection_steps == d.projection_steps);
  CHECK(o.kkt_tolerance == 0); // NLopt's own criteria unless asked
  CHECK(o.vtk_every == d.vtk_every);
  CHECK(o.deformation_stiffness_exponent == d.deformation_stiffness_exponent);
  CHECK(o.deformation_poisson_ratio == d.deformation_poisson_ratio);
  CHECK(o.deformation_rtol == d.deformation_rtol);
  CHECK(o.deformation_solver == "auto");
  CHECK(deformation_options(cfg).solver == design::DeformationSolver::Auto);
  CHECK(o.remesh); // a design the mesh cannot follow is remeshed, not lost
  CHECK(o.warm_start == "predicted");
  CHECK(warm_start_history(cfg) == kWarmStartHistory);
  REQUIRE(test::load_case(
              test::kMinimalCase, &cfg,
              {"optimization.algorithm=ccsaq", "optimization.max_evaluations=7",
               "optimization.xtol_rel=1e-3", "optimization.ftol_rel=1e-4",
               "optimization.projection_steps=2", "optimization.vtk_every=5",
               "optimization.kkt_tolerance=1e-4", "optimization.deformation_stiffness_exponent=2",
               "optimization.deformation_poisson_ratio=0.1", "optimization.deformation_rtol=1e-9",
               "optimization.remesh=false", "optimization.deformation_solver=iterative"}) == "");
  const OptimizationOptions g = optimization_options().get(cfg);
  CHECK(g.algorithm == "ccsaq");
  CHECK(g.max_evaluations == 7);
  CHECK(g.xtol_rel == 1e-3);
  CHECK(g.ftol_rel == 1e-4);
  CHECK(g.projection_steps == 2);
  CHECK(g.kkt_tolerance == 1e-4);
  CHECK(g.vtk_every == 5);
  CHECK(g.deformation_stiffness_exponent == 2);
  CHECK(g.deformation_poisson_ratio == 0.1);
  CHECK(g.deformation_rtol == 1e-9);
  CHECK(deformation_options(cfg).rtol == 1e-9);
  CHECK(deformation_options(cfg).solver == design::DeformationSolver::Iterative);
  REQUIRE(test::load_case(test::kMinimalCase, &cfg, {"optimization.deformation_solver=direct"}) ==
          "");
  CHECK(deformation_options(cfg).solver == design::DeformationSolver::Direct);
  CHECK_FALSE(g.remesh);
  REQUIRE(test::load_case(test::kMinimalCase, &cfg, {"optimization.warm_start=last"}) == "");
  CHECK(warm_start_history(cfg) == 0);
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"optimization.warm_start=guess"}),
             Catch::Contains("'optimization.warm_start'") && Catch::Contains("predicted") &&
                 Catch::Contains("last"));
  for (const auto &k : optimization_options().spec().keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"optimization.algorithm=newton"}),
             Catch::Contains("'optimization.algorithm'") && Catch::Contains("slsqp"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"optimization.deformation_solver=lu"}),
             Catch::Contains("'optimization.deformation_solver'") && Catch::Contains("iterative"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"optimization.kkt_tolerance=-1e-4"}),
             Catch::Contains("'optimization.kkt_tolerance'"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"optimization.xtol_rel=0"}),
             Catch::Contains("'optimization.xtol_rel'") && Catch::Contains("> 0"));
}

TEST_CASE("optimization options: control entries of the design list", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(std::string(test::kMinimalCase) + R"(design:
  - {type: parameter, name: physics, parameters: [fluid.viscosity, boundaries.a.omega], lower: [1e-4], upper: [1, 2], scale: [2]}
  - {type: time-function, function: boundaries.a.omega, parameters: [amplitude], initial: [0.5]}
  - {type: per-step, name: spin, function: boundaries.a.omega, smoothing: 0.01}
)",
                          &cfg) == "");
  REQUIRE(cfg.designs().size() == 3);
  const ControlEntryOptions p = control_entry_options(cfg.designs()[0]);
  CHECK(p.kind == ControlKind::Parameter);
  CHECK(p.name == "physics");
  CHECK(p.parameters == std::vector<std::string>{"fluid.viscosity", "boundaries.a.omega"});
  CHECK(p.lower == std::vector<double>{1e-4});
  CHECK(p.upper == std::vector<double>{1, 2});
  CHECK(p.scale == std::vector<double>{2});
  CHECK(p.initial.empty());
  const ControlEntryOptions t = control_entry_options(cfg.designs()[1]);
  CHECK(t.kind == ControlKind::TimeFunction);
  CHECK(t.function == "boundaries.a.omega");
  CHECK(t.parameters == std::vector<std::string>{"amplitude"});
  CHECK(t.initial == std::vector<double>{0.5});
  const ControlEntryOptions s = control_entry_options(cfg.designs()[2]);
  CHECK(s.kind == ControlKind::PerStep);
  CHECK(s.smoothing == 0.01);
  CHECK(s.parameters.empty());
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) +
                                 "design:\n  - {type: parameter, parameters: []}\n",
                             &cfg),
             Catch::Contains("case.yaml:4") && Catch::Contains("parameters' must not be empty"));
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) +
                                 "design:\n  - {type: per-step, function: f, smoothing: -1}\n",
                             &cfg),
             Catch::Contains("smoothing") && Catch::Contains(">= 0"));
}

TEST_CASE("optimization options: constraints", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(std::string(test::kMinimalCase) + R"(constraints:
  - {type: thickness, walls: [a], sense: ">=", value: 0.1, station: 0.5, name: t}
  - {type: drag, walls: [a], sense: "<=", value: 2}
)",
                          &cfg) == "");
  REQUIRE(cfg.constraints().size() == 2);
  const auto options = constraint_options();
  const ConstraintOptions thick = options.get(cfg.constraints()[0]);
  CHECK(thick.type == "thickness");
  CHECK(thick.sense == ConstraintSense::GreaterEqual);
  CHECK(thick.value == 0.1);
  CHECK(thick.station == 0.5);
  CHECK(thick.name == "t");
  CHECK(thick.geometric());
  CHECK(!thick.relative);
  CHECK(thick.tolerance == ConstraintOptions{}.tolerance);
  const ConstraintOptions drag = options.get(cfg.constraints()[1]);
  CHECK(drag.sense == ConstraintSense::LessEqual);
  CHECK(!drag.geometric());
  for (const char *t : {"area", "volume", "centroid", "thickness"}) {
    ConstraintOptions c;
    c.type = t;
    CHECK(c.geometric());
  }
  // the type's choices: the geometric ones, the given objective types, control-power
  const auto with_types = constraint_options({"drag", "lift"});
  const config::KeySpec *type = with_types.spec().find("type");
  REQUIRE(type);
  CHECK(type->choices == std::vector<std::string>{"area", "volume", "centroid", "thickness", "drag",
                                                  "lift", "control-power"});
}
