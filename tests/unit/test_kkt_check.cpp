// The first-order optimality check (check_kkt) on (x - 3)^2 + (y + 1)^2 with one constraint on
// x + y over [-10, 10]^2: the known multipliers and residual 0 at known optima (equality, active
// inequality, active bound with an inequality, a constraint given twice), the hand-computed
// residual at a feasible non-optimal point, the violations of an infeasible point, and counts and
// drops wrong-signed multipliers (an inequality or a bound that the objective pulls away from).
#include "karman/optimization/kkt_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;
using optimization::ConstraintSense;

namespace {

// f = (x - 3)^2 + (y + 1)^2 and c = x + y with their gradients at x
optimization::Evaluation at_point(const std::vector<double> &x) {
  optimization::Evaluation e;
  e.f = (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1);
  e.df = {2 * (x[0] - 3), 2 * (x[1] + 1)};
  e.c = {x[0] + x[1]};
  e.dc = {{1.0, 1.0}};
  return e;
}

// x, y in [-10, 10] with x + y (sense) value
optimization::OptimizationProblem problem(ConstraintSense sense, double value) {
  return {{"x", "y"}, {-10, -10}, {10, 10}, {0, 0}, {{"x+y", sense, value, 1e-10}}};
}

} // namespace

TEST_CASE("check_kkt: residual and multipliers at known points", "[driver]") {
  // (x - 3)^2 + (y + 1)^2 with x + y = 1.5: optimum (2.75, -1.25), df = (-0.5, -0.5), lambda 0.5
  optimization::OptimizationProblem p = problem(ConstraintSense::Equal, 1.5);
  optimization::KktReport k = optimization::check_kkt(p, {2.75, -1.25}, at_point({2.75, -1.25}));
  CHECK(k.residual == Approx(0).margin(1e-15));
  CHECK(k.multipliers[0] == Approx(0.5).epsilon(1e-14));
  CHECK(k.max_violation == Approx(0).margin(1e-15));
  CHECK(k.wrong_signs == 0);
  // a feasible point that is not optimal: (2, -0.5), df = (-2, 1); lambda = 0.5 leaves
  // r = (-1.5, 1.5): residual 1.5 sqrt(2) / sqrt(5)
  k = optimization::check_kkt(p, {2, -0.5}, at_point({2, -0.5}));
  CHECK(k.multipliers[0] == Approx(0.5).epsilon(1e-14));
  CHECK(k.residual == Approx(1.5 * std::sqrt(2.0) / std::sqrt(5.0)).epsilon(1e-14));
  // a violated equality: x + y = 1.5 + 3e-6
  k = optimization::check_kkt(p, {2.75 + 1e-6, -1.25 + 2e-6},
                              at_point({2.75 + 1e-6, -1.25 + 2e-6}));
  CHECK(k.max_violation == Approx(3e-6).epsilon(1e-8));
  CHECK(k.max_relative_violation == Approx(2e-6).epsilon(1e-8));
  // the same constraint twice: dependent gradients, one multiplier takes it all
  optimization::OptimizationProblem twice = p;
  twice.constraints.push_back(p.constraints[0]);
  optimization::Evaluation e2 = at_point({2.75, -1.25});
  e2.c.push_back(e2.c[0]);
  e2.dc.push_back(e2.dc[0]);
  k = optimization::check_kkt(twice, {2.75, -1.25}, e2);
  CHECK(k.residual == Approx(0).margin(1e-15));
  CHECK(k.multipliers[0] + k.multipliers[1] == Approx(0.5).epsilon(1e-14));

  // x + y >= 3: optimum (3.5, -0.5), df = (1, 1); NLopt's g = 3 - x - y, lambda = 1 >= 0
  p = problem(ConstraintSense::GreaterEqual, 3.0);
  k = optimization::check_kkt(p, {3.5, -0.5}, at_point({3.5, -0.5}));
  CHECK(k.active[0]);
  CHECK(k.multipliers[0] == Approx(1.0).epsilon(1e-14));
  CHECK(k.residual == Approx(0).margin(1e-15));
  // x + y >= 1.5 at (2.75, -1.25): on the boundary, but the objective pulls into the interior
  // (lambda would be -0.5): dropped, the whole gradient is the residual
  p = problem(ConstraintSense::GreaterEqual, 1.5);
  k = optimization::check_kkt(p, {2.75, -1.25}, at_point({2.75, -1.25}));
  CHECK(k.wrong_signs == 1);
  CHECK_FALSE(k.active[0]);
  CHECK(k.multipliers[0] == 0);
  CHECK(k.residual == Approx(1.0).epsilon(1e-14));
  // an inactive inequality at the unconstrained optimum: df = 0, residual 0
  p = problem(ConstraintSense::LessEqual, 5.0);
  k = optimization::check_kkt(p, {3, -1}, at_point({3, -1}));
  CHECK_FALSE(k.active[0]);
  CHECK(k.residual == 0);

  // x + y <= 1.5 with y >= 0: optimum (1.5, 0), df = (-3, 2), lambda = 3, the bound's
  // multiplier r_y = 2 + 3 = 5 >= 0
  p = problem(ConstraintSense::LessEqual, 1.5);
  p.lower[1] = 0;
  k = optimization::check_kkt(p, {1.5, 0}, at_point({1.5, 0}));
  CHECK(k.active_lower == 1);
  CHECK(k.multipliers[0] == Approx(3.0).epsilon(1e-14));
  CHECK(k.residual == Approx(0).margin(1e-15));
  CHECK(k.wrong_signs == 0);
  // x >= 2 at x = 2 (no constraint active): the objective pulls x up, off the bound
  p = problem(ConstraintSense::LessEqual, 100.0);
  p.lower[0] = 2;
  k = optimization::check_kkt(p, {2, -1}, at_point({2, -1}));
  CHECK(k.active_lower == 1);
  CHECK(k.wrong_signs == 1);
  CHECK(k.residual == Approx(1.0).epsilon(1e-14));
  // x <= 2: the same point is optimal
  p = problem(ConstraintSense::LessEqual, 100.0);
  p.upper[0] = 2;
  k = optimization::check_kkt(p, {2, -1}, at_point({2, -1}));
  CHECK(k.active_upper == 1);
  CHECK(k.residual == Approx(0).margin(1e-15));
}
