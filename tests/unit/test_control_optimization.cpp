// The pieces of driver/control_optimization that need no flow solve: the time-function parameters
// of the parameter registry (read and set by name: a sine's amplitude, frequency, phase and
// offset, a table's knots; the boundary values follow; a constant function, a parameter its kind
// does not have and an unknown name are refused naming the known ones), and the optimizer's
// automatic choice of algorithm by size and constraints.  The gradients of every control kind are
// checked against finite differences and Taylor tests by tests/cli/control_verify.sh.
#include "karman/optimization/case_schema.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/core/error.hpp"
#include "karman/optimization/optimizer.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace karman;

namespace {

const std::string kCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 2.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: {type: table, points: [[0, 0.2], [1, 0.4], [2, 0.3]]}, direction: [1, 0]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, omega: {type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.5, offset: 0.1}, center: [0.2, 0.2]}
)";

} // namespace

TEST_CASE("control: time-function parameters of the registry", "[control][mpi]") {
  clear_error();
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "ctl.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  mesh::Mesh mesh;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"},
             &mesh);
  discretization::FlowResidual res;
  REQUIRE(res.setup(mesh, cfg) == 0);
  const discretization::ParameterRegistry reg(res);
  const int omega = reg.find("boundaries.cylinder.omega"),
            inlet = reg.find("boundaries.inlet.velocity");
  REQUIRE(omega >= 0);
  REQUIRE(inlet >= 0);
  const std::string names = reg.time_function_parameter_names(res);
  CHECK(names == "boundaries.inlet.velocity.knot[0], boundaries.inlet.velocity.knot[1], "
                 "boundaries.inlet.velocity.knot[2], boundaries.cylinder.omega.amplitude, "
                 "boundaries.cylinder.omega.frequency, boundaries.cylinder.omega.phase, "
                 "boundaries.cylinder.omega.offset");
  double v = 0;
  REQUIRE(reg.time_function_value(res, "boundaries.cylinder.omega.frequency", &v) == 0);
  CHECK(v == 2.0);
  // at t = 0: omega = offset + A sin(phase)
  CHECK(reg.value(res, omega, discretization::kSteady) ==
        Approx(0.1 + 0.5 * std::sin(0.5)).epsilon(1e-14));
  REQUIRE(reg.set_time_function_parameter(res, "boundaries.cylinder.omega.amplitude", 2.0) == 0);
  REQUIRE(reg.set_time_function_parameter(res, "boundaries.cylinder.omega.phase", 1.0) == 0);
  REQUIRE(reg.set_time_function_parameter(res, "boundaries.cylinder.omega.offset", -0.3) == 0);
  CHECK(reg.value(res, omega, discretization::kSteady) ==
        Approx(-0.3 + 2.0 * std::sin(1.0)).epsilon(1e-14));
  // a table's first knot is its value at t = 0 (the residual's time)
  CHECK(reg.value(res, inlet, discretization::kSteady) == Approx(0.2));
  REQUIRE(reg.set_time_function_parameter(res, "boundaries.inlet.velocity.knot[0]", 0.7) == 0);
  CHECK(reg.value(res, inlet, discretization::kSteady) == Approx(0.7));
  REQUIRE(reg.time_function_value(res, "boundaries.inlet.velocity.knot[2]", &v) == 0);
  CHECK(v == 0.3);

  // refused, naming what the case has
  auto refused = [&](const std::string &name, const std::string &text) {
    clear_error();
    CHECK(reg.set_time_function_parameter(res, name, 1.0) != 0);
    CHECK_THAT(last_error_message(), Catch::Contains(text) && Catch::Contains("the case has:"));
  };
  refused("boundaries.walls.omega.amplitude", "'boundaries.walls.omega' is constant");
  refused("boundaries.cylinder.omega.knot[0]", "is a sine: its parameters are amplitude");
  refused("boundaries.inlet.velocity.knot[3]", "knot[0] ... knot[2]");
  refused("boundaries.inlet.velocity.amplitude", "knot[0] ... knot[2]");
  refused("fluid.viscosity.amplitude",
          "'fluid.viscosity' is not a parameter given by a time function");
  clear_error();
}

TEST_CASE("control: automatic choice of the optimizer", "[control]") {
  optimization::OptimizationProblem p;
  auto sized = [&](std::size_t n) {
    p.names.assign(n, "a");
    return p;
  };
  CHECK(optimization::resolve_algorithm("auto", sized(2)) == "slsqp");
  CHECK(optimization::resolve_algorithm("auto", sized(optimization::kAutoSmallProblem)) == "slsqp");
  CHECK(optimization::resolve_algorithm("auto", sized(500)) == "lbfgs");
  p.constraints.push_back({"power", optimization::ConstraintSense::LessEqual, 1.0});
  CHECK(optimization::resolve_algorithm("auto", sized(500)) == "ccsaq");
  p.constraints.push_back({"lift", optimization::ConstraintSense::Equal, 0.0});
  CHECK(optimization::resolve_algorithm("auto", sized(500)) == "slsqp");
  CHECK(optimization::resolve_algorithm("mma", sized(500)) == "mma");
  CHECK(optimization::known_algorithm("lbfgs"));
  CHECK(!optimization::known_algorithm("bfgs"));
}
