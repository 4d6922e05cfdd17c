// The scalar's objectives (src/adjoint/scalar_objectives.cpp) on the DFG 2D-1 channel (level 0)
// with a passive scalar (value on the inlet and the cylinder, a flux through the walls, outflow):
//  - a uniform scalar equal to its boundary values: no wall heat flux (Nu = 0) and no variance;
//  - Nu is proportional to L / dphi (reference.length, scalar_difference);
//  - the reverse mode (dJ/dw, scalar and flow unknowns) equals central differences of the value
//    (scalar-variance is quadratic, Nusselt linear in w);
//  - a case without a scalar, a Nusselt number on a wall without a prescribed scalar value, and
//    patches that are missing or unknown, are refused.
#include "objective_check.hpp"

using namespace karman;

namespace {

std::string scalar_section(double inlet, double cylinder, double flux) {
  return "scalar:\n  diffusivity: 0.004\n  boundaries:\n    inlet: {type: value, value: " +
         std::to_string(inlet) +
         "}\n    cylinder: {type: value, value: " + std::to_string(cylinder) +
         "}\n    walls: {type: flux, flux: " + std::to_string(flux) +
         "}\n    outlet: {type: outflow}\n";
}

// flow as in set_smooth_state, the scalar phi(x)
void set_flow_and_scalar(const discretization::FlowResidual &res, Vec w,
                         const std::function<double(const Vec3<double> &)> &phi) {
  const int k = res.equations().offset(res.equations().find("scalar"));
  test::set_state(res, w, [&](const Vec3<double> &x, double *v) {
    v[0] = 0.3 + x[0] - 2 * x[1];
    v[1] = 0.3 * std::sin(3 * x[1]) + 0.1 * x[0];
    v[2] = 0.1 * std::cos(4 * x[0]) * x[1];
    v[k] = phi(x);
  });
}

double value(const std::string &objective, const std::vector<std::string> &overrides,
             const std::function<double(const Vec3<double> &)> &phi) {
  test::FlowFixture f;
  test::load_dfg_with("objective: " + objective + "\n" + scalar_section(0.1, 1.0, 0.02), &f,
                      overrides);
  set_flow_and_scalar(f.res(), f.w, phi);
  return test::objective_value(f, test::case_objective(f), f.w);
}

} // namespace

TEST_CASE("scalar objectives: a uniform scalar has no heat flux and no variance", "[adjoint]") {
  for (const char *objective : {"{type: nusselt, walls: [cylinder]}",
                                "{type: scalar-variance, patches: [outlet, walls]}"}) {
    CAPTURE(objective);
    test::FlowFixture f;
    test::load_dfg_with(
        std::string("objective: ") + objective + "\n" + scalar_section(0.7, 0.7, 0.0), &f);
    set_flow_and_scalar(f.res(), f.w, [](const Vec3<double> &) { return 0.7; });
    CHECK(test::objective_value(f, test::case_objective(f), f.w) == Approx(0).margin(1e-12));
  }
}

TEST_CASE("scalar objectives: Nusselt number scales with L / dphi", "[adjoint]") {
  auto phi = [](const Vec3<double> &x) { return 0.5 + std::sin(3 * x[0]) * x[1]; };
  const double nu = value("{type: nusselt, walls: [cylinder]}", {}, phi);
  CHECK(std::abs(nu) > 1e-3);
  CHECK(value("{type: nusselt, walls: [cylinder], scalar_difference: 4}", {}, phi) ==
        Approx(nu / 4).epsilon(1e-12));
  CHECK(value("{type: nusselt, walls: [cylinder]}", {"reference.length=0.3"}, phi) ==
        Approx(3 * nu).epsilon(1e-12));
}

TEST_CASE("scalar objectives: reverse mode equals differences of the value", "[adjoint]") {
  for (const char *objective :
       {"{type: nusselt, walls: [cylinder]}", "{type: scalar-variance, patches: [outlet]}",
        "{type: scalar-variance, patches: [outlet, walls, cylinder]}"}) {
    CAPTURE(objective);
    test::FlowFixture f;
    test::load_dfg_with(
        std::string("objective: ") + objective + "\n" + scalar_section(0.1, 1.0, 0.02), &f);
    set_flow_and_scalar(f.res(), f.w,
                        [](const Vec3<double> &x) { return 0.5 + std::sin(3 * x[0]) * x[1]; });
    test::check_reverse(f, test::case_objective(f));
  }
}

TEST_CASE("scalar objectives: bad input is refused", "[adjoint]") {
  // the case has no scalar
  CHECK_THAT(test::objective_error("objective: {type: nusselt, walls: [cylinder]}\n"),
             Catch::Contains("type nusselt needs a scalar, and this case solves none"));
  CHECK_THAT(test::objective_error("objective: {type: scalar-variance, patches: [outlet]}\n"),
             Catch::Contains("type scalar-variance needs a scalar, and this case solves none"));
  // a Nusselt number on a wall whose scalar is a flux, not a value
  CHECK_THAT(test::objective_error("objective: {type: nusselt, walls: [walls]}\n" +
                                   scalar_section(0.1, 1.0, 0.02)),
             Catch::Contains("'walls' has no prescribed scalar value"));
  CHECK_THAT(test::objective_error("objective: {type: scalar-variance}\n" +
                                   scalar_section(0.1, 1.0, 0.02)),
             Catch::Contains("case.yaml: objective.patches: name the boundaries"));
  CHECK_THAT(test::objective_error("objective: {type: scalar-variance, patches: [outflow]}\n" +
                                   scalar_section(0.1, 1.0, 0.02)),
             Catch::Contains("objective.patches: no boundary named 'outflow'"));
}
