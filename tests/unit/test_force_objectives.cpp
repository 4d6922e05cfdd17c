// The force objectives (src/adjoint/force_objectives.cpp) on the DFG 2D-1 channel (level 0):
//  - at rest with p = a + b x + c y the force on the cylinder is F = -(b, c) A (A: the area of
//    the polygon its faces enclose, see test_forces.cpp), so drag, lift and force along a given
//    direction are e . F / (q S_ref), q S_ref = rho U^2 L / 2; a uniform pressure gives no moment;
//  - the reverse mode (dJ/dw) equals central differences of the value at a state with flow, for
//    each type (unknown walls: test_objective_types.cpp).
#include "objective_check.hpp"

using namespace karman;

TEST_CASE("force objectives: exact values at a linear pressure", "[adjoint]") {
  const double qS = 0.5 * 1.0 * 0.2 * 0.2 * 0.1, a = 0.5, b = -2.0, c = 3.0;
  struct Expect {
    const char *objective;
    double Fx, Fy; // J = (Fx F_x + Fy F_y) / (q S)
  };
  for (const Expect &e :
       {Expect{"{type: drag, walls: [cylinder]}", 1, 0},
        Expect{"{type: lift, walls: [cylinder], lift_direction: [0, -1]}", 0, -1},
        Expect{"{type: force, walls: [cylinder], direction: [0.6, 0.8]}", 0.6, 0.8},
        Expect{"{type: drag, walls: [cylinder], weight: 3}", 3, 0}}) {
    CAPTURE(e.objective);
    test::FlowFixture f;
    test::load_dfg_with(std::string("objective: ") + e.objective + "\n", &f);
    test::set_linear_pressure(f.res(), f.w, a, b, c);
    const double A = test::cylinder_polygon_area(f.res());
    const double J = test::objective_value(f, test::case_objective(f), f.w);
    CHECK(J == Approx((e.Fx * -b * A + e.Fy * -c * A) / qS).epsilon(1e-10));
  }
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: moment, walls: [cylinder]}\n", &f,
                      {"reference.moment_center=[0.5, -1]"});
  test::set_linear_pressure(f.res(), f.w, 7.0, 0, 0);
  CHECK(test::objective_value(f, test::case_objective(f), f.w) == Approx(0).margin(1e-10));
}

TEST_CASE("force objectives: reverse mode equals differences of the value", "[adjoint]") {
  for (const char *objective : {"{type: drag, walls: [cylinder]}", "{type: lift}",
                                "{type: force, walls: [cylinder, walls], direction: [0.6, 0.8]}",
                                "{type: moment, walls: [cylinder]}"}) {
    CAPTURE(objective);
    test::FlowFixture f;
    test::load_dfg_with(std::string("objective: ") + objective + "\n", &f);
    test::set_smooth_state(f.res(), f.w);
    test::check_reverse(f, test::case_objective(f));
  }
}
