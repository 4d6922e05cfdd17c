// The adjoint layer's keys (src/adjoint/adjoint_options.cpp): the `adjoint` section's defaults
// are the struct's and its keys reach their members; the objective's common keys, with the
// registered types as the choices of `type`; the names of schedules and statistics are the
// case-file texts that parse back to them.
#include "karman/adjoint/adjoint_options.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;
using namespace karman::adjoint;

TEST_CASE("adjoint options: defaults and members", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const AdjointOptions d, o = adjoint_options().get(cfg);
  CHECK(o.parameters == d.parameters);
  CHECK(o.schedule == d.schedule);
  CHECK(o.snapshots == d.snapshots);
  CHECK(o.preconditioner_matrix == d.preconditioner_matrix);
  CHECK(o.rtol == d.rtol);
  CHECK(o.atol == d.atol);
  CHECK(o.max_iterations == d.max_iterations);
  CHECK(o.initial_guess == d.initial_guess);
  CHECK(o.recycle == d.recycle);
  CHECK(o.level_max_iterations == d.level_max_iterations);
  CHECK(o.save_every == d.save_every);
  CHECK(!o.error_estimate);
  REQUIRE(test::load_case(std::string(test::kMinimalCase) +
                              "adjoint: {parameters: [fluid.viscosity], schedule: revolve, "
                              "snapshots: 3, preconditioner_matrix: compact, rtol: 1e-6, atol: "
                              "1e-8, max_iterations: 11, initial_guess: 2, recycle: 1, "
                              "level_max_iterations: 13, save_every: 5, error_estimate: true}\n",
                          &cfg) == "");
  const AdjointOptions g = adjoint_options().get(cfg);
  CHECK(g.parameters == std::vector<std::string>{"fluid.viscosity"});
  CHECK(g.schedule == AdjointSchedule::Revolve);
  CHECK(g.snapshots == 3);
  CHECK(g.preconditioner_matrix == solver::PreconditionerMatrix::Compact);
  CHECK((g.rtol == 1e-6 && g.atol == 1e-8 && g.max_iterations == 11 && g.initial_guess == 2 &&
         g.recycle == 1 && g.level_max_iterations == 13 && g.save_every == 5));
  CHECK(g.error_estimate);
  for (const auto &k : adjoint_options().spec().keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"adjoint.snapshots=0"}),
             Catch::Contains("'adjoint.snapshots'") && Catch::Contains(">= 1"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"adjoint.schedule=checkpoint"}),
             Catch::Contains("'adjoint.schedule'") && Catch::Contains("store-all") &&
                 Catch::Contains("revolve"));
}

TEST_CASE("adjoint options: schedule and statistic names parse back", "[config]") {
  for (AdjointSchedule s : {AdjointSchedule::StoreAll, AdjointSchedule::Revolve}) {
    config::CaseConfig cfg;
    REQUIRE(test::load_case(test::kMinimalCase, &cfg,
                            {std::string("adjoint.schedule=") + schedule_name(s)}) == "");
    CHECK(adjoint_options().get(cfg).schedule == s);
  }
  for (Statistic s : {Statistic::Average, Statistic::Final, Statistic::Rms, Statistic::Std}) {
    config::CaseConfig cfg;
    REQUIRE(test::load_case(test::kMinimalCase, &cfg,
                            {std::string("objective.time=") + statistic_name(s)}) == "");
    CHECK(objective_options().get(cfg).time == s);
  }
}

TEST_CASE("adjoint options: the objective's common keys", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const ObjectiveOptions d, o = objective_options().get(cfg);
  CHECK(o.type == d.type);
  CHECK(o.weight == d.weight);
  CHECK(o.time == d.time);
  CHECK(o.window == d.window);
  CHECK(o.weighting == d.weighting);
  CHECK(o.control_cost == d.control_cost);
  CHECK(o.control_wall == d.control_wall);
  REQUIRE(test::load_case(std::string(test::kMinimalCase) +
                              "objective: {type: lift, weight: -2, time: std, window: [1, 2], "
                              "weighting: hann, control_cost: 0.5, control_wall: a}\n",
                          &cfg) == "");
  const ObjectiveOptions g = objective_options().get(cfg);
  CHECK((g.type == "lift" && g.weight == -2 && g.time == Statistic::Std));
  CHECK(g.window == std::vector<double>{1, 2});
  CHECK(g.weighting == WindowWeighting::Hann);
  CHECK((g.control_cost == 0.5 && g.control_wall == "a"));
  // the registered types are the choices of `type`, their help in the key's
  const auto spec = objective_options({{"drag", "the drag"}, {"lift", "the lift"}}).spec();
  const config::KeySpec *type = spec.find("type");
  REQUIRE(type);
  CHECK(type->choices == std::vector<std::string>{"drag", "lift"});
  CHECK(type->help == "drag: the drag; lift: the lift");
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) + "objective: {type: dragg}\n", &cfg),
             Catch::Contains("case.yaml:3") && Catch::Contains("'objective.type'") &&
                 Catch::Contains("drag"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"objective.control_cost=-1"}),
             Catch::Contains("'objective.control_cost'") && Catch::Contains(">= 0"));
}
