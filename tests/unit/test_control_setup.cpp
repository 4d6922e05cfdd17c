// The set-up of a control problem from its case (ControlOptimization::setup, control_setup.cpp)
// on the steady DFG channel: parameter entries become variables scaled by their start (or the
// given scale) with scaled bounds, a flow constraint is taken with its sense and value; and every
// bad design or constraint is one error naming the file and the key.  No flow is solved.
#include "karman/core/error.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/optimization/control_optimization.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace karman;

namespace {

// The DFG case (level 0) with `extra` (design and constraints lists), its flow case and its
// control problem (destroyed in this order: the problem, the flow case, the case).
struct ControlSetup {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  optimization::ControlOptimization control;
  std::string error; ///< the message of a refused set-up ("": it worked)

  explicit ControlSetup(const std::string &extra) {
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, test::dfg_case_yaml(0, extra),
                                          "ctl.yaml", "/", {}, optimization::case_schema(),
                                          cfg) == 0);
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    clear_error();
    if (control.setup(fc, test::work_dir("control_setup"))) error = last_error_message();
  }
};

std::string setup_error(const std::string &extra) {
  return ControlSetup(extra).error;
}

} // namespace

TEST_CASE("control setup: parameter entries give scaled variables, bounds and start; "
          "constraints their sense and value",
          "[control]") {
  const ControlSetup s(R"(design:
  - {type: parameter, parameters: [fluid.viscosity], lower: [5.0e-4], upper: [4.0e-3]}
  - {type: parameter, parameters: [boundaries.inlet.velocity], scale: [0.1], initial: [0.25]}
constraints:
  - {type: lift, walls: [cylinder], sense: "=", value: 0, tolerance: 1.0e-6}
)");
  REQUIRE(s.error == "");
  const optimization::ControlOptimization &control = s.control;
  const optimization::OptimizationProblem &p = control.problem();
  REQUIRE(p.names == std::vector<std::string>{"fluid.viscosity", "boundaries.inlet.velocity"});
  // the viscosity scaled by its start 1e-3, the velocity by the given 0.1
  CHECK(p.start[0] == Approx(1.0).epsilon(1e-14));
  CHECK(p.lower[0] == Approx(0.5).epsilon(1e-14));
  CHECK(p.upper[0] == Approx(4.0).epsilon(1e-14));
  CHECK(p.start[1] == Approx(2.5).epsilon(1e-14));
  CHECK(p.lower[1] == -std::numeric_limits<double>::infinity());
  CHECK(p.upper[1] == std::numeric_limits<double>::infinity());
  const std::vector<double> a = control.physical({2.0, 3.0});
  CHECK(a[0] == Approx(2.0e-3).epsilon(1e-14));
  CHECK(a[1] == Approx(0.3).epsilon(1e-14));
  REQUIRE(control.entries().size() == 2);
  CHECK(control.entries()[0].kind == optimization::ControlKind::Parameter);
  CHECK(control.entries()[1].offset == 1);
  CHECK(control.entries()[1].count == 1);
  REQUIRE(p.constraints.size() == 1);
  CHECK(p.constraints[0].name == "lift");
  CHECK(p.constraints[0].sense == optimization::ConstraintSense::Equal);
  CHECK(p.constraints[0].value == 0.0);
  CHECK(p.constraints[0].tolerance == 1.0e-6);
}

TEST_CASE("control setup: a bad design or constraint is one error naming the file and the key",
          "[control]") {
  CHECK_THAT(setup_error(""),
             Catch::Contains("ctl.yaml: a control optimization needs a 'design:' list"));
  CHECK_THAT(setup_error("design:\n  - {type: parameter, parameters: [fluid.viscosty]}\n"),
             Catch::Contains("ctl.yaml: 'design[0].parameters': the case has no parameter "
                             "'fluid.viscosty' (it has: "));
  CHECK_THAT(setup_error("design:\n  - {type: parameter, parameters: [fluid.viscosity]}\n"
                         "  - {type: parameter, parameters: [fluid.viscosity]}\n"),
             Catch::Contains("ctl.yaml: 'design[1].parameters': 'fluid.viscosity' is already a "
                             "variable of design[0]"));
  CHECK_THAT(setup_error("design:\n  - {type: parameter, parameters: [fluid.viscosity], "
                         "lower: [2.0e-3], upper: [1.0e-3]}\n"),
             Catch::Contains("ctl.yaml: 'design[0].lower' (0.002) is greater than "
                             "'design[0].upper' (0.001) for fluid.viscosity"));
  CHECK_THAT(setup_error("design:\n  - {type: time-function, function: boundaries.inlet.velocity, "
                         "parameters: [amplitude]}\n"),
             Catch::Contains("ctl.yaml: 'design[0]': time-function variables need an unsteady "
                             "case (time.mode: unsteady)"));
  CHECK_THAT(setup_error("design:\n  - {type: parameter, parameters: [fluid.viscosity]}\n"
                         "constraints:\n  - {type: area, walls: [cylinder], sense: \">=\", "
                         "value: 0.007}\n"),
             Catch::Contains("is a geometric constraint; a control optimization has no shape "
                             "variables"));
}
