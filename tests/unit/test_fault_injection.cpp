// The command line's crash-test hooks (src/cli/fault_injection.cpp): KARMAN_TEST_KILL values of
// another form than PHASE:N (a phase of the campaign, N >= first) are one error naming the
// variable; unset, the hook is empty; a valid value arms a hook that leaves every other point
// alone (the kill itself is tested by tests/cli/optimize_kill.sh and control_optimize.sh);
// KARMAN_TEST_FAIL_REEVALUATION and the best design's fallback to its earlier evaluation
// (cli::best_design_evaluation; the campaigns: tests/cli/optimize.sh, optimize_multipoint.sh);
// KARMAN_TEST_UNCONVERGED_CYCLE names one cycle (the adaptation: tests/cli/adapt.sh).
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/error.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using namespace karman;

TEST_CASE("fault injection: KARMAN_TEST_KILL", "[cli]") {
  const std::vector<std::string> phases = {"forward", "adjoint", "deformation"};
  FaultHook hook;
  REQUIRE(unsetenv("KARMAN_TEST_KILL") == 0);
  REQUIRE(cli::campaign_fault_hook(PETSC_COMM_WORLD, phases, 1, "a shape evaluation", &hook) == 0);
  CHECK(!hook);
  for (const char *bad : {"solve:5", "forward", "forward:0", "adjoint:2x", "deformation:"}) {
    CAPTURE(bad);
    REQUIRE(setenv("KARMAN_TEST_KILL", bad, 1) == 0);
    clear_error();
    CHECK(cli::campaign_fault_hook(PETSC_COMM_WORLD, phases, 1, "a shape evaluation", &hook) != 0);
    CHECK_THAT(last_error_message(), Catch::Contains("environment variable KARMAN_TEST_KILL='" +
                                                     std::string(bad) + "'") &&
                                         Catch::Contains("a shape evaluation"));
  }
  REQUIRE(setenv("KARMAN_TEST_KILL", "forward:2", 1) == 0);
  REQUIRE(cli::campaign_fault_hook(PETSC_COMM_WORLD, phases, 1, "a shape evaluation", &hook) == 0);
  REQUIRE(hook);
  hook({"forward", 1, 0.0}); // other evaluation, other phase: no kill (the test goes on)
  hook({"adjoint", 2, 0.0});
  REQUIRE(unsetenv("KARMAN_TEST_KILL") == 0);
}

TEST_CASE("fault injection: KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE", "[cli]") {
  REQUIRE(unsetenv("KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE") == 0);
  CHECK(!cli::adjoint_state_fault_hook());
  REQUIRE(setenv("KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE", "4:partial", 1) == 0);
  const FaultHook hook = cli::adjoint_state_fault_hook();
  REQUIRE(hook);
  hook({"adjoint-state", 4, 0.0}); // complete state of level 4, partial of level 3: no kill
  hook({"adjoint-state-partial", 3, 0.0});
  REQUIRE(unsetenv("KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE") == 0);
}

TEST_CASE("fault injection: KARMAN_TEST_FAIL_REEVALUATION and the best design's earlier "
          "evaluation",
          "[cli]") {
  REQUIRE(unsetenv("KARMAN_TEST_FAIL_REEVALUATION") == 0);
  CHECK(!cli::reevaluation_fault());
  for (const char *off : {"", "0"}) {
    REQUIRE(setenv("KARMAN_TEST_FAIL_REEVALUATION", off, 1) == 0);
    CHECK(!cli::reevaluation_fault());
  }
  REQUIRE(setenv("KARMAN_TEST_FAIL_REEVALUATION", "1", 1) == 0);
  CHECK(cli::reevaluation_fault());
  // the fallback's records: good evaluations only, the last of exactly the design asked for
  cli::GoodEvaluations good;
  optimization::Evaluation e;
  e.f = 1.0;
  good.add(0, {0.0, 0.5}, e);
  e.f = 2.0;
  good.add(3, {0.0, 0.5}, e); // the same design again (a replay or a remeshing)
  e.ok = false;
  e.f = 3.0;
  good.add(4, {0.1, 0.5}, e); // a failed one is no answer
  const auto *found = good.find({0.0, 0.5});
  REQUIRE(found);
  CHECK(found->index == 3);
  CHECK(found->e.f == 2.0);
  CHECK(!good.find({0.1, 0.5}));
  CHECK(!good.find({0.0, 0.5 + 1e-16}));
  // with the fault set, a good evaluation again falls back to the record, named in the summary
  optimization::Evaluation again, best;
  again.f = 2.5;
  bool reevaluated = true;
  nlohmann::json summary;
  REQUIRE(cli::best_design_evaluation(PETSC_COMM_WORLD, {0.0, 0.5}, again, good, &best,
                                      &reevaluated, &summary) == 0);
  CHECK(!reevaluated);
  CHECK(best.f == 2.0);
  CHECK(summary["best_evaluation"] == 3);
  CHECK(summary["reevaluated"] == false);
  // a design never evaluated well: the error of the evaluation again
  clear_error();
  CHECK(cli::best_design_evaluation(PETSC_COMM_WORLD, {0.1, 0.5}, again, good, &best, &reevaluated,
                                    &summary) != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("the best design of the optimizer could not be evaluated again"));
  // without the fault: the evaluation again stands
  REQUIRE(unsetenv("KARMAN_TEST_FAIL_REEVALUATION") == 0);
  REQUIRE(cli::best_design_evaluation(PETSC_COMM_WORLD, {0.0, 0.5}, again, good, &best,
                                      &reevaluated, &summary) == 0);
  CHECK(reevaluated);
  CHECK(best.f == 2.5);
  CHECK(summary.empty());
}

TEST_CASE("fault injection: KARMAN_TEST_UNCONVERGED_CYCLE names one adaptation cycle (its solve "
          "or its estimate)",
          "[cli]") {
  REQUIRE(unsetenv("KARMAN_TEST_UNCONVERGED_CYCLE") == 0);
  CHECK(!cli::unconverged_cycle_fault(1));
  REQUIRE(setenv("KARMAN_TEST_UNCONVERGED_CYCLE", "2", 1) == 0);
  CHECK(cli::unconverged_cycle_fault(2));
  CHECK(!cli::unconverged_cycle_fault(1));
  CHECK(!cli::unconverged_cycle_fault(3));
  CHECK(!cli::unconverged_cycle_fault(2, true));
  REQUIRE(setenv("KARMAN_TEST_UNCONVERGED_CYCLE", "2:estimate", 1) == 0);
  CHECK(cli::unconverged_cycle_fault(2, true));
  CHECK(!cli::unconverged_cycle_fault(2));
  CHECK(!cli::unconverged_cycle_fault(1, true));
  for (const char *other : {"", "2x", "x", "2:estimat"}) {
    REQUIRE(setenv("KARMAN_TEST_UNCONVERGED_CYCLE", other, 1) == 0);
    CHECK(!cli::unconverged_cycle_fault(2));
    CHECK(!cli::unconverged_cycle_fault(2, true));
    CHECK(!cli::unconverged_cycle_fault(0));
  }
  REQUIRE(unsetenv("KARMAN_TEST_UNCONVERGED_CYCLE") == 0);
}
