// The objectives of the unsteady adjoint in time: the window weights q_n (uniform: the trapezoidal
// rule over the levels in the window, Hann: 2/M sin^2, a single level: 1, none outside; over
// variable steps: window_weights), and the
// set-up's refusals (a run that is not a multiple of dt, an empty window, a control cost without a
// rotating wall) with messages naming the file and the key.
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;
using adjoint::window_weight;
using adjoint::WindowWeighting;

TEST_CASE("window_weight: trapezoidal and Hann weights of the levels in the window", "[adjoint]") {
  // levels 1..10 of dt = 0.1; the window [0.2, 0.5] holds levels 2..5 (M = 3)
  const double uniform[] = {0, 0, 1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6, 0, 0, 0, 0, 0};
  for (long n = 0; n <= 10; ++n) {
    CAPTURE(n);
    CHECK(window_weight(n, 10, 0.1, 0.2, 0.5, WindowWeighting::Uniform) ==
          Approx(uniform[n]).margin(1e-15));
  }
  // Hann: (2 / 3) sin^2(pi (n - 2) / 3): 0, 1/2, 1/2, 0
  const double hann[] = {0, 0, 0, 0.5, 0.5, 0, 0};
  for (long n = 0; n <= 6; ++n) {
    CAPTURE(n);
    CHECK(window_weight(n, 10, 0.1, 0.2, 0.5, WindowWeighting::Hann) ==
          Approx(hann[n]).margin(1e-15));
  }
  // Hann below M = 2 is uniform; one level in the window weighs 1; none: 0
  CHECK(window_weight(2, 10, 0.1, 0.2, 0.3, WindowWeighting::Hann) == 0.5);
  CHECK(window_weight(3, 10, 0.1, 0.3, 0.3, WindowWeighting::Uniform) == 1.0);
  for (long n = 1; n <= 10; ++n)
    CHECK(window_weight(n, 10, 0.1, 0.25, 0.29, WindowWeighting::Uniform) == 0.0);
  // a window past the run ends at the last level; level 0 (the initial state) never counts
  CHECK(window_weight(10, 10, 0.1, 0.8, 2.0, WindowWeighting::Uniform) == 0.25);
  CHECK(window_weight(0, 10, 0.1, 0.0, 0.5, WindowWeighting::Uniform) == 0.0);
}

TEST_CASE("window_weights (variable steps): equal steps give window_weight's, uneven ones the "
          "trapezoidal rule",
          "[adjoint][step-size]") {
  // equal steps: the same weights as window_weight, uniform and Hann
  std::vector<double> times;
  for (int n = 0; n <= 10; ++n) times.push_back(0.1 * n);
  for (const auto w : {WindowWeighting::Uniform, WindowWeighting::Hann}) {
    const std::vector<double> q = adjoint::window_weights(times, 0.2, 0.5, w);
    REQUIRE(q.size() == 11);
    for (long n = 0; n <= 10; ++n) {
      CAPTURE(n);
      CHECK(q[n] == Approx(window_weight(n, 10, 0.1, 0.2, 0.5, w)).margin(1e-15));
    }
  }
  // uneven steps: sum 1, none outside [t0, t1], and the uniform weights integrate a linear
  // function exactly (the trapezoidal rule: its mean over [t_first, t_last])
  times = {0.0, 0.05, 0.07, 0.2, 0.26, 0.4, 0.43, 0.6, 0.9};
  const std::vector<double> q = adjoint::window_weights(times, 0.06, 0.6, WindowWeighting::Uniform);
  double sum = 0, mean = 0;
  for (std::size_t n = 0; n < times.size(); ++n) {
    sum += q[n];
    mean += q[n] * (3 * times[n] - 1);
    if (times[n] < 0.06 || times[n] > 0.6) CHECK(q[n] == 0.0);
  }
  CHECK(sum == Approx(1.0).epsilon(1e-14));
  CHECK(mean == Approx(3 * 0.5 * (0.07 + 0.6) - 1).margin(1e-14));
  // Hann on uneven steps: sum 1, zero at both ends of the window, positive inside
  const std::vector<double> h = adjoint::window_weights(times, 0.06, 0.6, WindowWeighting::Hann);
  sum = 0;
  for (double v : h) sum += v;
  CHECK(sum == Approx(1.0).epsilon(1e-14));
  CHECK(h[2] == Approx(0.0).margin(1e-15));
  CHECK(h[7] == Approx(0.0).margin(1e-15));
  for (int n = 3; n <= 6; ++n) CHECK(h[n] > 0);
}

TEST_CASE("unsteady adjoint set-up: bad runs and objectives are refused naming the key",
          "[adjoint]") {
  const std::string mesh = test::mesh_file(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2);
  const std::string text = "mesh: {file: " + mesh + R"(}
time: {mode: unsteady, dt: 0.02, t_end: 0.1}
objective: {type: drag, walls: [cylinder]}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0, direction: [1, 0]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: sine, amplitude: 0.5, frequency: 2.0}}
fluid: {viscosity: 2.0e-3}
)";
  auto setup_error = [&](const std::vector<std::string> &overrides) {
    config::CaseConfig cfg;
    driver::FlowCase fc;
    adjoint::UnsteadyAdjoint ua;
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "goals.yaml", "/", overrides,
                                          optimization::case_schema(), cfg) == 0);
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    clear_error();
    return ua.setup(fc.residual(), cfg) ? last_error_message() : std::string();
  };
  CHECK(setup_error({}) == "");
  CHECK(setup_error({"objective.control_cost=0.1", "objective.control_wall=cylinder"}) == "");
  CHECK_THAT(setup_error({"time.t_end=0.05"}),
             Catch::Contains("goals.yaml: the unsteady adjoint needs time.t_end to be a multiple "
                             "(>= 2) of time.dt (got 0.05 and 0.02)"));
  CHECK_THAT(setup_error({"time.t_end=0.02"}),
             Catch::Contains("needs time.t_end to be a multiple (>= 2) of time.dt"));
  CHECK_THAT(setup_error({"objective.window=[0.06, 0.04]"}),
             Catch::Contains("goals.yaml: objective.window must be [t0, t1] with t1 > t0"));
  CHECK_THAT(setup_error({"objective.control_cost=0.1"}),
             Catch::Contains("goals.yaml: objective.control_cost needs objective.control_wall (a "
                             "rotating wall), got ''"));
  CHECK_THAT(setup_error({"objective.control_cost=0.1", "objective.control_wall=inlet"}),
             Catch::Contains("goals.yaml: objective.control_wall 'inlet' is not a wall with a "
                             "rotation rate (2D)"));
}
