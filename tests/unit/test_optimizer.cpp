// The optimization driver (src/optimization/optimizer.cpp) on problems with known solutions:
//  - SLSQP reaches the KKT point of a quadratic with a linear equality constraint,
//    (x - 3)^2 + (y + 1)^2 with x + y = 1.5: (2.75, -1.25), and of one with an inequality,
//    x^2 + y^2 with x + y >= 1: (0.5, 0.5); CCSAQ the latter too;
//  - designs that cannot be evaluated (ok = false) are backed off from: the same optimum is
//    reached and no failed design is returned;
//  - a campaign stopped by an error at evaluation k and restarted replays the journal (the
//    evaluator is not called again for evaluations < k), then follows bitwise the same path
//    and ends at bitwise the same design as an uninterrupted run; a line cut by a kill at the
//    end of the journal is ignored;
//  - a journal of another problem, an equality constraint with CCSAQ and a start outside the
//    bounds are refused with messages that name them;
//  - on 2 ranks every rank ends with the same design even if the evaluator's values differ by
//    round-off between ranks ([mpi]);
//  - SLSQP's answer on a nonlinear equality passes the KKT check (check_kkt; its own tests:
//    test_kkt_check.cpp);
//  - an evaluation that resets (a remeshed shape campaign) restarts the optimizer from its
//    design, the answer comes from the evaluations after it, and a replay restarts alike;
//  - an optimizer that asks again and again for the same failed design (its iterate fails when
//    evaluated again) stops the campaign with that reason instead of hanging;
//  - with kkt_tolerance the run stops at the first nearly feasible KKT point, before NLopt's own
//    criteria, that design (projected onto the constraints) is the answer, and a replay stops
//    at the same evaluation with the same answer; L-BFGS (which reports the stop as a generic
//    failure and goes on calling) stops without evaluating another design.
#include "karman/core/error.hpp"
#include "karman/optimization/kkt_check.hpp"
#include "karman/optimization/optimizer.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>

using namespace karman;
using optimization::ConstraintSense;

namespace {

/// x + y and the constraint x^2 + y^2 with their gradients (the circle tests)
PetscErrorCode circle(const std::vector<double> &x, optimization::Evaluation *e) {
  e->f = x[0] + x[1];
  e->df = {1.0, 1.0};
  e->c = {x[0] * x[0] + x[1] * x[1]};
  e->dc = {{2 * x[0], 2 * x[1]}};
  return 0;
}

/// min x + y on the circle x^2 + y^2 = 2 (to 1e-12) from (0.5, -1.5) in [-5, 5]^2: optimum (-1, -1)
optimization::OptimizationProblem circle_problem() {
  optimization::OptimizationProblem p;
  p.names = {"x", "y"};
  p.lower = {-5, -5};
  p.upper = {5, 5};
  p.start = {0.5, -1.5};
  p.constraints = {{"r2", ConstraintSense::Equal, 2.0, 1e-12}};
  return p;
}

// (x - 3)^2 + (y + 1)^2, constraint c = x + y; designs with x > fail_above cannot be evaluated
optimization::Evaluator quadratic(double fail_above, long *calls, long error_at = -1) {
  return [=](const std::vector<double> &x, optimization::Evaluation *e) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCheck(*calls != error_at, PETSC_COMM_WORLD, PETSC_ERR_USER, "test: evaluation %ld killed",
               *calls);
    ++*calls;
    e->ok = x[0] <= fail_above;
    if (!e->ok) {
      e->failure = "x > fail_above";
      PetscFunctionReturn(0);
    }
    e->f = (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1);
    e->df = {2 * (x[0] - 3), 2 * (x[1] + 1)};
    e->c = {x[0] + x[1]};
    e->dc = {{1.0, 1.0}};
    PetscFunctionReturn(0);
  };
}

optimization::OptimizationProblem problem(ConstraintSense sense, double value) {
  optimization::OptimizationProblem p;
  p.names = {"x", "y"};
  p.lower = {-10, -10};
  p.upper = {10, 10};
  p.start = {0, 0};
  p.constraints = {{"x+y", sense, value, 1e-10}};
  return p;
}

} // namespace

TEST_CASE("optimizer: SLSQP and CCSAQ reach known constrained optima", "[driver]") {
  long calls = 0;
  optimization::OptimizerOptions o;
  o.xtol_rel = 1e-12;
  o.ftol_rel = 1e-14;
  optimization::OptimizationResult r;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, problem(ConstraintSense::Equal, 1.5),
                                 quadratic(1e300, &calls), o, {}, &r) == 0);
  CAPTURE(r.status, r.evaluations);
  CHECK(r.x[0] == Approx(2.75).margin(1e-7));
  CHECK(r.x[1] == Approx(-1.25).margin(1e-7));
  CHECK(r.evaluations == calls);
  // (x - 3)^2 + (y + 1)^2 with x + y <= 1.5 is the same point; with x + y >= 3 it is (3.5, -0.5)
  for (const auto &alg : {std::string("slsqp"), std::string("ccsaq")}) {
    o.algorithm = alg;
    calls = 0;
    REQUIRE(optimization::optimize(PETSC_COMM_WORLD, problem(ConstraintSense::GreaterEqual, 3.0),
                                   quadratic(1e300, &calls), o, {}, &r) == 0);
    CAPTURE(alg, r.status, r.evaluations);
    CHECK(r.x[0] == Approx(3.5).margin(1e-6));
    CHECK(r.x[1] == Approx(-0.5).margin(1e-6));
  }
}

TEST_CASE("optimizer: failed designs are backed off from", "[driver]") {
  for (const auto &alg : {std::string("slsqp"), std::string("ccsaq")}) {
    long calls = 0;
    optimization::OptimizerOptions o;
    o.algorithm = alg;
    o.xtol_rel = 1e-12;
    o.max_evaluations = 200;
    optimization::OptimizationResult r;
    // without constraint the unconstrained optimum (3, -1) lies below the failure threshold 4,
    // but the first steps overshoot into it
    optimization::OptimizationProblem p = problem(ConstraintSense::LessEqual, 100.0);
    REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, quadratic(3.5, &calls), o, {}, &r) == 0);
    CAPTURE(alg, r.status, r.evaluations, r.failed);
    CHECK(r.failed > 0);
    CHECK(r.x[0] == Approx(3.0).margin(1e-6));
    CHECK(r.x[1] == Approx(-1.0).margin(1e-6));
    CHECK(std::isfinite(r.f));
  }
}

TEST_CASE("optimizer: an iterate that fails when evaluated again stops the campaign instead of "
          "a hang",
          "[driver]") {
  // after 3 evaluations every design fails, the optimizer's current iterate too (a remeshed
  // shape campaign: a design that was good on the old mesh fails on the new one).  SLSQP backs
  // off toward its iterate until it asks for it again and again; the campaign stops then, with
  // the best design evaluated.
  long calls = 0;
  const optimization::Evaluator base = quadratic(1e300, &calls);
  const optimization::Evaluator evaluator = [&](const std::vector<double> &x,
                                                optimization::Evaluation *e) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(base(x, e));
    if (calls > 3) *e = optimization::Evaluation(), e->ok = false, e->failure = "all fail now";
    PetscFunctionReturn(0);
  };
  optimization::OptimizerOptions o;
  o.xtol_rel = 1e-12;
  o.ftol_rel = 1e-14;
  o.max_evaluations = 10000;
  optimization::OptimizationResult r;
  clear_error();
  const PetscErrorCode ierr = optimization::optimize(
      PETSC_COMM_WORLD, problem(ConstraintSense::Equal, 1.5), evaluator, o, {}, &r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  CAPTURE(r.status, r.evaluations, r.failed);
  CHECK_THAT(r.status, Catch::Contains("asked again and again for the failed design"));
  CHECK(r.evaluations < 10000);
  CHECK(r.failed == r.evaluations - 3);
  CHECK(std::isfinite(r.f));
}

TEST_CASE("optimizer: a killed campaign replays its journal and follows the same path",
          "[driver][mpi]") {
  const std::string dir = test::work_dir("optimizer_journal");
  const optimization::OptimizationProblem p = problem(ConstraintSense::Equal, 1.5);
  optimization::OptimizerOptions o;
  o.xtol_rel = 1e-12;
  o.journal = dir + "/full.jsonl";
  std::vector<std::vector<double>> path_full, path_restart;
  auto record = [](std::vector<std::vector<double>> *path) -> optimization::EvaluationObserver {
    return [=](long, const std::vector<double> &x, const optimization::Evaluation &, bool) {
      path->push_back(x);
      return PetscErrorCode(0);
    };
  };
  long calls = 0;
  optimization::OptimizationResult full, again;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, quadratic(3.4, &calls), o, record(&path_full),
                                 &full) == 0);
  REQUIRE(full.evaluations >= 4);
  // the same campaign, killed at evaluation k ...
  const long k = full.evaluations / 2;
  o.journal = dir + "/killed.jsonl";
  calls = 0;
  clear_error();
  CHECK(optimization::optimize(PETSC_COMM_WORLD, p, quadratic(3.4, &calls, k), o, {}, &again) != 0);
  clear_error();
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0)
    std::ofstream(o.journal, std::ios::app) << "{\"index\": " << k << ", \"x\": [1.0"; // a cut line
  MPI_Barrier(PETSC_COMM_WORLD);
  // ... and restarted
  o.restart = true;
  calls = 0;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, quadratic(3.4, &calls), o,
                                 record(&path_restart), &again) == 0);
  CHECK(again.replayed == k);
  CHECK(calls == full.evaluations - k); // finished work is not redone
  CHECK(path_restart == path_full);     // bitwise the same designs
  CHECK(again.x == full.x);
  CHECK(again.f == full.f);

  // a journal of another problem is refused, naming the key
  optimization::OptimizationProblem other = p;
  other.upper[1] = 5;
  const PetscErrorCode ierr =
      optimization::optimize(PETSC_COMM_WORLD, other, quadratic(3.4, &calls), o, {}, &again);
  CHECK(ierr != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("'upper'"));
  clear_error();
}

TEST_CASE("optimizer: bad problems are refused", "[driver]") {
  long calls = 0;
  optimization::OptimizerOptions o;
  o.algorithm = "ccsaq";
  optimization::OptimizationResult r;
  CHECK(optimization::optimize(PETSC_COMM_WORLD, problem(ConstraintSense::Equal, 1.5),
                               quadratic(1e300, &calls), o, {}, &r) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("x+y") && Catch::Contains("equality"));
  clear_error();
  o.algorithm = "slsqp";
  optimization::OptimizationProblem p = problem(ConstraintSense::Equal, 1.5);
  p.start[1] = 11;
  CHECK(optimization::optimize(PETSC_COMM_WORLD, p, quadratic(1e300, &calls), o, {}, &r) != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("design variable y") && Catch::Contains("bounds"));
  clear_error();
  CHECK(calls == 0);
}

TEST_CASE("optimizer: all ranks take the same path", "[driver][mpi]") {
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  long calls = 0;
  const optimization::Evaluator base = quadratic(1e300, &calls);
  // round-off differences between the ranks' values must not split their paths
  const optimization::Evaluator noisy = [&](const std::vector<double> &x,
                                            optimization::Evaluation *e) {
    const PetscErrorCode ierr = base(x, e);
    e->f += rank * 1e-15;
    e->df[0] += rank * 1e-13;
    return ierr;
  };
  optimization::OptimizerOptions o;
  optimization::OptimizationResult r;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, problem(ConstraintSense::Equal, 1.5), noisy, o,
                                 {}, &r) == 0);
  double x[2] = {r.x[0], r.x[1]}, xmax[2], xmin[2];
  MPI_Allreduce(x, xmax, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(x, xmin, 2, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
  CHECK(xmax[0] == xmin[0]);
  CHECK(xmax[1] == xmin[1]);
}

TEST_CASE("optimizer: SLSQP's answer passes the KKT check (nonlinear equality)", "[driver]") {
  // x + y on the circle x^2 + y^2 = 2: optimum (-1, -1), df = (1, 1) = -lambda (2x, 2y),
  // lambda = 1/2
  const optimization::OptimizationProblem p = circle_problem();
  optimization::OptimizerOptions o;
  o.xtol_rel = 1e-12;
  o.ftol_rel = 1e-15;
  o.max_evaluations = 200;
  optimization::OptimizationResult r;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, {}, &r) == 0);
  optimization::Evaluation e;
  REQUIRE(circle(r.x, &e) == 0);
  const optimization::KktReport k = optimization::check_kkt(p, r.x, e);
  CAPTURE(r.status, r.evaluations, r.x[0], r.x[1], k.residual);
  CHECK(k.residual < 1e-6);
  CHECK(k.multipliers[0] == Approx(0.5).epsilon(1e-6));
  CHECK(k.max_violation < 1e-10);
  // a point on the circle away from the optimum is far from stationary
  const double t = 1.0;
  optimization::Evaluation e1;
  REQUIRE(circle({std::sqrt(2.0) * std::cos(t), std::sqrt(2.0) * std::sin(t)}, &e1) == 0);
  CHECK(optimization::check_kkt(p, {std::sqrt(2.0) * std::cos(t), std::sqrt(2.0) * std::sin(t)}, e1)
            .residual > 0.1);
}

TEST_CASE("optimizer: a run stopped before feasibility ends with a projected feasible design",
          "[driver]") {
  // x + y on the circle x^2 + y^2 = 2 from (0.5, -1.5), stopped after 5 evaluations: the
  // iterates are not yet on the circle within 1e-12, the answer is (projected onto it)
  const optimization::OptimizationProblem p = circle_problem();
  optimization::OptimizerOptions o;
  o.max_evaluations = 5;
  optimization::OptimizationResult r;
  o.projection_steps = 0;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, {}, &r) == 0);
  optimization::Evaluation e;
  REQUIRE(circle(r.x, &e) == 0);
  CAPTURE(r.status, r.x[0], r.x[1], e.c[0]);
  CHECK(std::fabs(e.c[0] - 2) > 1e-12); // without the projection: NLopt's answer, off the circle
  o.projection_steps = 5;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, {}, &r) == 0);
  REQUIRE(circle(r.x, &e) == 0);
  CAPTURE(r.status, r.x[0], r.x[1], e.c[0]);
  CHECK(std::fabs(e.c[0] - 2) <= 1e-12);
  CHECK(r.f == e.f);
  CHECK(r.f < -1.9); // near the optimum -2
  CHECK_THAT(r.status, Catch::Contains("projected"));
}

TEST_CASE("optimizer: the projection onto the constraints keeps the variables at their bounds "
          "out of its steps",
          "[driver]") {
  // x + y on the circle x^2 + y^2 = 2 with y >= -0.9: the optimum (-sqrt(1.19), -0.9) has y on
  // its bound.  Stopped after its first evaluation at (-1.09, -0.9), inside the circle, the run
  // projects that design: Gauss-Newton steps with every variable, clamped to the bounds
  // afterwards, lost y's share at each step (the violation fell by y^2 / (x^2 + y^2) = 0.4 per
  // step, to 2e-5 after 5; the 3D case cases/stokes-body-3d kept its volume 3.9e-6 off with 42
  // of 135 variables on their bounds); with the variables that would leave their bounds held
  // there, x alone closes the gap at Newton's rate
  optimization::OptimizationProblem p;
  p.names = {"x", "y"};
  p.lower = {-5, -0.9};
  p.upper = {5, 5};
  p.start = {-1.09, -0.9}; // (inside the circle by 1.9e-3: nearly feasible)
  p.constraints = {{"r2", ConstraintSense::Equal, 2.0, 1e-12}};
  optimization::OptimizerOptions o;
  o.max_evaluations = 1;
  o.projection_steps = 5;
  optimization::OptimizationResult r;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, {}, &r) == 0);
  optimization::Evaluation e;
  REQUIRE(circle(r.x, &e) == 0);
  CAPTURE(r.status, r.x[0], r.x[1], e.c[0]);
  CHECK_THAT(r.status, Catch::Contains("projected"));
  CHECK(std::fabs(e.c[0] - 2) <= 1e-12);
  CHECK(r.x[1] >= -0.9); // (held on its bound, then back inside by the next step's 1.7e-7)
  CHECK(r.x[1] <= -0.9 + 1e-6);
  CHECK(r.f == Approx(-std::sqrt(1.19) - 0.9).epsilon(1e-6));
}

TEST_CASE("optimizer: kkt_tolerance stops at the first nearly feasible KKT point, also on replay",
          "[driver]") {
  // x + y on the circle x^2 + y^2 = 2 from (0.5, -1.5) (optimum (-1, -1)): with NLopt's criteria
  // alone (tight) SLSQP takes N evaluations; with kkt_tolerance 1e-4 it stops at the first
  // evaluation within 1e-4 (1 + 2) of the circle whose KKT residual is <= 1e-4, earlier, and
  // that design, projected onto the circle's 1e-12, is the answer
  const std::string dir = test::work_dir("optimizer_kkt_stop");
  const optimization::OptimizationProblem p = circle_problem();
  optimization::OptimizerOptions o;
  o.max_evaluations = 200;
  o.xtol_rel = o.ftol_rel = 1e-15;
  o.projection_steps = 5;
  std::vector<std::pair<std::vector<double>, optimization::Evaluation>> path;
  auto record = [&](long, const std::vector<double> &x, const optimization::Evaluation &e, bool) {
    path.emplace_back(x, e);
    return PetscErrorCode(0);
  };
  optimization::OptimizationResult full, r, again;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, {}, &full) == 0);
  o.kkt_tolerance = 1e-4;
  o.journal = dir + "/kkt.jsonl";
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, circle, o, record, &r) == 0);
  CAPTURE(full.status, full.evaluations, r.status, r.evaluations);
  CHECK_THAT(r.status, Catch::Contains("kkt_tolerance reached"));
  CHECK(r.evaluations < full.evaluations);
  // the stop: the first evaluation that is a KKT point within the tolerances, none before it
  long stop = -1;
  for (std::size_t k = 0; k < path.size() && stop < 0; ++k) {
    const auto &[x, e] = path[k];
    if (std::fabs(e.c[0] - 2) <= 1e-4 * 3 && optimization::check_kkt(p, x, e).residual <= 1e-4)
      stop = static_cast<long>(k);
  }
  REQUIRE(stop >= 0);
  CHECK_THAT(r.status, Catch::Contains("evaluation " + std::to_string(stop) + ":"));
  // the answer: that design projected onto the circle (to 1e-12), still a KKT point
  optimization::Evaluation e;
  REQUIRE(circle(r.x, &e) == 0);
  CAPTURE(r.x[0], r.x[1], e.c[0]);
  CHECK(std::fabs(e.c[0] - 2) <= 1e-12);
  CHECK(optimization::check_kkt(p, r.x, e).residual <= 2e-4);
  CHECK(r.x[0] == Approx(-1).margin(1e-3));
  CHECK(r.x[1] == Approx(-1).margin(1e-3));
  // replayed from the journal: the same stop, the same answer
  o.restart = true;
  long calls = 0;
  auto counted = [&](const std::vector<double> &x, optimization::Evaluation *ev) {
    ++calls;
    return circle(x, ev);
  };
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, counted, o, {}, &again) == 0);
  CHECK(again.status == r.status);
  CHECK(again.x == r.x);
  CHECK(again.replayed == r.evaluations); // (the projection's steps are journaled too)
  CHECK(calls == 0);
  // L-BFGS (bounds only; it reports a forced stop as a generic failure): min (x - 3)^2 +
  // (y + 1)^2 over [-5, 2] x [-5, 5], optimum (2, -1) with x on its bound, where the KKT residual
  // is the free component's share |2 (y + 1)| / |df| (without an active bound or constraint it
  // would be 1 by its definition, and the test could not stop a run)
  optimization::OptimizationProblem q = circle_problem();
  q.constraints.clear();
  q.upper = {2, 5};
  auto bowl = [](const std::vector<double> &x, optimization::Evaluation *e) {
    e->f = (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1);
    e->df = {2 * (x[0] - 3), 2 * (x[1] + 1)};
    return PetscErrorCode(0);
  };
  optimization::OptimizerOptions ol;
  ol.algorithm = "lbfgs";
  ol.max_evaluations = 200;
  ol.xtol_rel = ol.ftol_rel = 1e-15;
  ol.kkt_tolerance = 1e-6;
  optimization::OptimizationResult rl;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, q, bowl, ol, {}, &rl) == 0);
  CAPTURE(rl.status, rl.evaluations, rl.x[0], rl.x[1]);
  CHECK_THAT(rl.status, Catch::Contains("kkt_tolerance reached"));
  CHECK(rl.evaluations == std::stol(rl.status.substr(rl.status.find("evaluation ") + 11)) + 1);
  CHECK(rl.x[0] == Approx(2).margin(7e-6));
  CHECK(std::fabs(rl.x[1] + 1) <= 1.1e-6);
}

TEST_CASE("optimizer: an evaluation that resets starts the optimizer again, also on replay",
          "[driver]") {
  // the quadratic, whose values move by +0.25 from evaluation 1 on (as a remeshing moves them),
  // which says so (reset): the optimizer restarts from that design, only the evaluations from
  // there on compete for the answer, and a replay of the journal takes the same path
  const std::string dir = test::work_dir("optimizer_reset");
  const optimization::OptimizationProblem p = problem(ConstraintSense::Equal, 1.5);
  auto shifted = [](long *calls, long error_at) -> optimization::Evaluator {
    return [=](const std::vector<double> &x, optimization::Evaluation *e) -> PetscErrorCode {
      PetscFunctionBeginUser;
      PetscCheck(*calls != error_at, PETSC_COMM_WORLD, PETSC_ERR_USER, "test: killed");
      const long k = (*calls)++;
      PetscCall(quadratic(10, calls)(x, e));
      --*calls;
      if (k >= 1) e->f += 0.25;
      e->reset = k == 1;
      PetscFunctionReturn(0);
    };
  };
  optimization::OptimizerOptions o;
  o.xtol_rel = 1e-12;
  o.journal = dir + "/reset.jsonl";
  std::vector<std::vector<double>> path, replay;
  auto record = [](std::vector<std::vector<double>> *out) -> optimization::EvaluationObserver {
    return [=](long, const std::vector<double> &x, const optimization::Evaluation &, bool) {
      out->push_back(x);
      return PetscErrorCode(0);
    };
  };
  long calls = 0;
  optimization::OptimizationResult r;
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, shifted(&calls, -1), o, record(&path), &r) ==
          0);
  CHECK(r.resets == 1);
  CHECK(r.x[0] == Approx(2.75).margin(1e-6));
  CHECK(r.x[1] == Approx(-1.25).margin(1e-6));
  CHECK(r.f == Approx(0.125 + 0.25).margin(1e-9)); // a value after the reset
  REQUIRE(path.size() > 3);
  CHECK(path[2] != path[1]); // (the restart's first design, x_1, was not evaluated again)
  CHECK_THAT(r.status, Catch::Contains("1 restart of the optimizer"));
  // killed after the reset, and replayed: the same path
  o.journal = dir + "/killed.jsonl";
  calls = 0;
  optimization::OptimizationResult killed, again;
  clear_error();
  CHECK(optimization::optimize(PETSC_COMM_WORLD, p, shifted(&calls, 3), o, {}, &killed) != 0);
  clear_error();
  o.restart = true;
  calls = 3; // (the evaluator's own count goes on where the kill left it)
  REQUIRE(optimization::optimize(PETSC_COMM_WORLD, p, shifted(&calls, -1), o, record(&replay),
                                 &again) == 0);
  CHECK(again.replayed == 3);
  CHECK(again.resets == 1);
  CHECK(replay == path);
  CHECK(again.x == r.x);
}
