// The solver layer's keys (src/solver/solver_options.cpp: time, solver, the force monitors' keys
// of objective, output.probes): the structs' defaults are the schema's, every key reaches its
// member (choices to their enum values), bad values are refused naming the file and the key.
#include "karman/solver/solver_options.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;
using namespace karman::solver;

TEST_CASE("solver options: defaults equal the structs'", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const TimeOptions t0, t = time_options().get(cfg);
  CHECK(t.mode == t0.mode);
  CHECK(t.scheme == t0.scheme);
  CHECK((t.dt.automatic == t0.dt.automatic && t.dt.value == t0.dt.value));
  CHECK(t.t_end == t0.t_end);
  CHECK(t.tolerance == t0.tolerance);
  CHECK((t.dt_initial.automatic == t0.dt_initial.automatic &&
         t.dt_initial.value == t0.dt_initial.value));
  CHECK(t.statistics_start == t0.statistics_start);
  const SolverOptions s0, s = solver_options().get(cfg);
  CHECK(s.max_iterations == s0.max_iterations);
  CHECK(s.rtol == s0.rtol);
  CHECK(s.atol == s0.atol);
  CHECK((s.cfl_initial.automatic && s0.cfl_initial.automatic));
  CHECK(s.cfl_max == s0.cfl_max);
  CHECK(s.linear == s0.linear);
  CHECK(s.preconditioner_matrix == s0.preconditioner_matrix);
  CHECK(s.refactor_iterations == s0.refactor_iterations);
  CHECK(s.linear_rtol == s0.linear_rtol);
  CHECK(s.linear_atol == s0.linear_atol);
  CHECK(s.linear_max_iterations == s0.linear_max_iterations);
  const ForceOptions f = force_options().get(cfg);
  CHECK(f.walls.empty());
  CHECK(f.points.empty());
  CHECK((f.drag_direction[0] == 1 && f.drag_direction[1] == 0 && f.drag_direction[2] == 0));
  CHECK((f.lift_direction[0] == 0 && f.lift_direction[1] == 1 && f.lift_direction[2] == 0));
  CHECK(probe_options().get(cfg).probes.empty());
}

TEST_CASE("solver options: members, choices, refusals", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(
              std::string(test::kMinimalCase) +
                  R"(time: {mode: unsteady, scheme: bdf1, dt: 0.5, t_end: 3, statistics_start: 1}
solver: {max_iterations: 4, rtol: 1e-3, atol: 1e-4, cfl_initial: 2, cfl_max: 100, linear: iterative, preconditioner_matrix: exact, refactor_iterations: 3, linear_rtol: 1e-2, linear_atol: 1e-9, linear_max_iterations: 9}
objective: {walls: [a], drag_direction: [0, 1], lift_direction: [-1, 0], points: [[0, 0], [1, 2]]}
output: {probes: [[0.5, 0.25]]}
)",
              &cfg) == "");
  const TimeOptions t = time_options().get(cfg);
  CHECK(t.unsteady());
  CHECK(t.scheme == TimeScheme::Bdf1);
  CHECK((!t.adaptive() && t.dt.value == 0.5 && t.t_end == 3 && t.statistics_start == 1));
  CHECK(t.first_dt() == 0.5);
  // dt auto: the tolerance and the first steps' size (auto: 1e-3 t_end)
  config::CaseConfig adaptive;
  REQUIRE(test::load_case(test::kMinimalCase, &adaptive,
                          {"time.dt=auto", "time.t_end=2", "time.tolerance=1e-4"}) == "");
  const TimeOptions a = time_options().get(adaptive);
  CHECK((a.adaptive() && a.tolerance == 1e-4 && a.first_dt() == 2e-3));
  REQUIRE(test::load_case(test::kMinimalCase, &adaptive,
                          {"time.dt=auto", "time.dt_initial=0.003"}) == "");
  CHECK(time_options().get(adaptive).first_dt() == 0.003);
  const SolverOptions s = solver_options().get(cfg);
  CHECK((s.max_iterations == 4 && s.rtol == 1e-3 && s.atol == 1e-4));
  CHECK((!s.cfl_initial.automatic && s.cfl_initial.value == 2 && s.cfl_max == 100));
  CHECK(s.linear == LinearSolverChoice::Iterative);
  CHECK(s.preconditioner_matrix == PreconditionerMatrix::Exact);
  CHECK((s.refactor_iterations == 3 && s.linear_rtol == 1e-2 && s.linear_atol == 1e-9 &&
         s.linear_max_iterations == 9));
  const ForceOptions f = force_options().get(cfg);
  CHECK(f.walls == std::vector<std::string>{"a"});
  CHECK((f.drag_direction[1] == 1 && f.lift_direction[0] == -1));
  REQUIRE(f.points.size() == 2);
  CHECK((f.points[1][0] == 1 && f.points[1][1] == 2));
  const ProbeOptions p = probe_options().get(cfg);
  REQUIRE(p.probes.size() == 1);
  CHECK((p.probes[0][0] == 0.5 && p.probes[0][1] == 0.25));
  for (const auto *spec : {&time_options().spec(), &solver_options().spec(),
                           &force_options().spec(), &probe_options().spec()})
    for (const auto &k : spec->keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"time.scheme=bdf3"}),
             Catch::Contains("'time.scheme'") && Catch::Contains("one of {bdf1, bdf2}"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"time.dt=0"}),
             Catch::Contains("'time.dt'") && Catch::Contains("auto or a number > 0"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"time.dt=automatic"}),
             Catch::Contains("'time.dt'") && Catch::Contains("auto or a number > 0"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"solver.max_iterations=0"}),
             Catch::Contains("'solver.max_iterations'") && Catch::Contains(">= 1"));
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) + "solver: {linear: lu}\n", &cfg),
             Catch::Contains("case.yaml:3") && Catch::Contains("'solver.linear'") &&
                 Catch::Contains("one of {auto, direct, iterative}"));
}
