// The probe-match objective (src/adjoint/probe_objective.cpp) on the DFG 2D-1 channel (level 0):
//  - at p = a + b x + c y, u = 0 the reconstructions at the probes are exact, so
//    J = sum_i sum_k c_k (phi_k(x_i) - phi_k^obs)^2 is known;
//  - the reverse mode (dJ/dw) equals central differences of the value (J is quadratic);
//  - observations of the wrong width and probes outside the mesh are refused.
#include "objective_check.hpp"

using namespace karman;

TEST_CASE("probe-match: exact value at a linear pressure", "[adjoint][mpi]") {
  const double a = 0.5, b = -2.0, c = 3.0;
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: probe-match, probes: [[0.1, 0.2], [0.5, 0.3]], observed: "
                      "[[1, 0.5, 0], [0, 0, -1]], component_weights: [2, 1, 3]}\n",
                      &f);
  test::set_linear_pressure(f.res(), f.w, a, b, c);
  const double p1 = a + b * 0.1 + c * 0.2, p2 = a + b * 0.5 + c * 0.3;
  const double expected = 2 * (p1 - 1) * (p1 - 1) + 1 * 0.25 + 2 * p2 * p2 + 3 * 1;
  const adjoint::Objective &objective = test::case_objective(f);
  CHECK(objective.least_squares());
  CHECK(objective.data_count(f.res()) == 6);
  CHECK(test::objective_value(f, objective, f.w) == Approx(expected).epsilon(1e-11));
}

TEST_CASE("probe-match: reverse mode equals differences of the value", "[adjoint]") {
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: probe-match, probes: [[0.1, 0.2], [0.5, 0.3], [0.26, "
                      "0.21]], observed: [[1, 0.5, 0], [0, 0, -1], [0.2, 0.1, 0.1]]}\n",
                      &f);
  test::set_smooth_state(f.res(), f.w);
  test::check_reverse(f, test::case_objective(f));
}

TEST_CASE("probe-match: bad observations are refused", "[adjoint]") {
  for (const auto &[objective, expected] : std::vector<std::pair<const char *, const char *>>{
           {"{type: probe-match, probes: [[0.1, 0.2]], observed: [[1, 0.5]]}", "observed"},
           {"{type: probe-match, probes: [[0.1, 0.2], [0.5, 0.3]], observed: [[1, 0.5, 0]]}",
            "observed"},
           {"{type: probe-match, probes: [[0.2, 0.2]], observed: [[1, 0.5, 0]]}",
            "outside the mesh"}}) {
    CAPTURE(objective);
    CHECK_THAT(test::objective_error(std::string("objective: ") + objective + "\n"),
               Catch::Contains(expected));
  }
}
