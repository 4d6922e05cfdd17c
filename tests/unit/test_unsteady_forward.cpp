// The forward run of the unsteady adjoint (UnsteadyAdjoint::run with forward_only): one run of
// three steps evaluates several objectives on the same levels, and each J is its statistic of the
// drag values J_s^n: the final value, single levels (a window around one level), the trapezoidal
// mean of a window, the Hann mean (the middle level of three), the r.m.s. and the standard
// deviation over two levels, and the control cost beta sum_n dt omega(t^n)^2.
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

using namespace karman;

TEST_CASE("forward run: every objective's statistic of the same drag values", "[adjoint]") {
  const std::string text =
      "mesh: {file: " + test::mesh_file(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2) + R"(}
fluid: {viscosity: 2.0e-3}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0, direction: [1, 0]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: sine, amplitude: 0.5, frequency: 4.0}}
time: {mode: unsteady, dt: 0.02, t_end: 0.06}
solver: {linear: direct}
objective: {type: drag, walls: [cylinder], time: final}
)";
  // the objectives, each a case with other objective keys (the first is the case's own)
  const std::vector<std::vector<std::string>> objectives = {
      {},                                                                // 0: J3
      {"objective.time=average", "objective.window=[0.01, 0.024]"},      // 1: J1
      {"objective.time=average", "objective.window=[0.03, 0.044]"},      // 2: J2
      {"objective.time=average"},                                        // 3: J1/4 + J2/2 + J3/4
      {"objective.time=average", "objective.window=[0.02, 0.04]"},       // 4: (J1 + J2) / 2
      {"objective.time=rms", "objective.window=[0.02, 0.04]"},           // 5
      {"objective.time=std", "objective.window=[0.02, 0.04]"},           // 6: |J1 - J2| / 2
      {"objective.time=average", "objective.weighting=hann"},            // 7: J2
      {"objective.control_cost=0.3", "objective.control_wall=cylinder"}, // 8: J3 + cost
  };
  std::vector<std::unique_ptr<config::CaseConfig>> cfgs;
  for (const auto &overrides : objectives) {
    cfgs.push_back(std::make_unique<config::CaseConfig>());
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "fwd.yaml", "/", overrides,
                                          optimization::case_schema(), *cfgs.back()) == 0);
  }
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, *cfgs[0]) == 0);
  Vec w0;
  REQUIRE(fc.create_state(&w0) == 0);
  REQUIRE(fc.initial_state(w0) == 0);
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(fc.residual(), *cfgs[0]) == 0);
  for (std::size_t i = 1; i < cfgs.size(); ++i) REQUIRE(ua.add_objective(*cfgs[i]) == 0);
  adjoint::UnsteadyAdjointOptions o;
  o.forward_only = true;
  std::vector<adjoint::UnsteadyAdjointResult> r;
  clear_error();
  const PetscErrorCode ierr = ua.run(w0, o, &r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  REQUIRE(VecDestroy(&w0) == 0);
  REQUIRE(r.size() == objectives.size());
  for (const auto &ri : r) {
    CHECK(ri.steps == 3);
    CHECK(ri.forward_time > 0);
  }
  const double J1 = r[1].J, J2 = r[2].J, J3 = r[0].J;
  CAPTURE(J1, J2, J3);
  REQUIRE(J1 != 0);
  REQUIRE(std::abs(J1 - J2) > 1e-6 * J1); // the flow develops: the statistics differ
  CHECK(r[3].J == Approx(0.25 * J1 + 0.5 * J2 + 0.25 * J3).epsilon(1e-13));
  CHECK(r[4].J == Approx(0.5 * (J1 + J2)).epsilon(1e-13));
  CHECK(r[5].J == Approx(std::sqrt(0.5 * (J1 * J1 + J2 * J2))).epsilon(1e-13));
  CHECK(r[6].J == Approx(0.5 * std::abs(J1 - J2)).epsilon(1e-9));
  CHECK(r[7].J == Approx(J2).epsilon(1e-13));
  // control cost: beta dt sum_{n=1..3} omega(t^n)^2, omega = 0.5 sin(2 pi 4 t)
  double cost = 0;
  for (int n = 1; n <= 3; ++n) cost += std::pow(0.5 * std::sin(2 * M_PI * 4.0 * 0.02 * n), 2);
  CHECK(r[8].J == Approx(J3 + 0.3 * 0.02 * cost).epsilon(1e-13));
}
