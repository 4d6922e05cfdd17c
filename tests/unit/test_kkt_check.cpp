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

TEST_CASE("check_kkt: degenerate active sets (more active constraints than the gradient needs)",
          "[driver]") {
  // max x (f = -x) subject to y <= 0, x + y <= 1, x - y <= 1: at the optimum (1, 0) all three are
  // active and their gradients (0, 1), (1, 1), (1, -1) are dependent.  Least squares over them in
  // this order gives lambda = (-1, 1, 0), whose negative entry is no wrong sign: lambda =
  // (0, 1/2, 1/2) balances df too.  The sign-constrained least squares finds it.
  optimization::OptimizationProblem p{{"x", "y"},
                                      {-10, -10},
                                      {10, 10},
                                      {0, 0},
                                      {{"y", ConstraintSense::LessEqual, 0.0, 1e-10},
                                       {"x+y", ConstraintSense::LessEqual, 1.0, 1e-10},
                                       {"x-y", ConstraintSense::LessEqual, 1.0, 1e-10}}};
  optimization::Evaluation e;
  e.f = -1;
  e.df = {-1.0, 0.0};
  e.c = {0.0, 1.0, 1.0};
  e.dc = {{0.0, 1.0}, {1.0, 1.0}, {1.0, -1.0}};
  optimization::KktReport k = optimization::check_kkt(p, {1, 0}, e);
  CHECK(k.residual == Approx(0).margin(1e-14));
  CHECK(k.wrong_signs == 0);
  for (double l : k.multipliers) CHECK(l >= 0);
  CHECK(k.multipliers[1] - k.multipliers[0] == Approx(k.multipliers[2]).margin(1e-14));
  CHECK(k.multipliers[1] + k.multipliers[2] == Approx(1.0).epsilon(1e-14));
  // the same point with the first constraint as a bound (y <= 0) and a pure-camber-like
  // redundancy: x - y <= 1 given three times.  Still optimal, no wrong sign
  optimization::OptimizationProblem q = p;
  q.upper[1] = 0;
  q.constraints = {p.constraints[2], p.constraints[2], p.constraints[2]};
  optimization::Evaluation e3 = e;
  e3.c = {1.0, 1.0, 1.0};
  e3.dc = {{1.0, -1.0}, {1.0, -1.0}, {1.0, -1.0}};
  k = optimization::check_kkt(q, {1, 0}, e3);
  CHECK(k.active_upper == 1);
  CHECK(k.residual == Approx(0).margin(1e-14));
  CHECK(k.wrong_signs == 0);
  CHECK(k.multipliers[0] + k.multipliers[1] + k.multipliers[2] == Approx(1.0).epsilon(1e-14));
  // min x instead (f = x) at (1, 0): the objective pulls into the interior of all three
  // constraints: the whole gradient is the residual and each is wrong-signed
  e.df = {1.0, 0.0};
  k = optimization::check_kkt(p, {1, 0}, e);
  CHECK(k.residual == Approx(1.0).epsilon(1e-14));
  CHECK(k.wrong_signs == 2); // (y <= 0 is orthogonal to df: no pull either way)
  for (double l : k.multipliers) CHECK(l == 0);
  // partly: f = -x + 2 y (df = (-1, 2)) at (1, 0).  min |(-1, 2) + a (0, 1) + b (1, 1) +
  // c (1, -1)| over a, b, c >= 0 (x and y components -1 + b + c, 2 + a + b - c): a = b = 0,
  // c = 3/2, r = (1/2, 1/2).  The residual pulls against y <= 0 and x + y <= 1 (-A^T r < 0 on
  // their columns): two wrong signs
  e.df = {-1.0, 2.0};
  k = optimization::check_kkt(p, {1, 0}, e);
  CHECK(k.lagrangian_gradient_norm == Approx(1 / std::sqrt(2.0)).epsilon(1e-14));
  CHECK(k.multipliers[2] == Approx(1.5).epsilon(1e-14));
  CHECK(k.multipliers[0] == 0);
  CHECK(k.multipliers[1] == 0);
  CHECK(k.wrong_signs == 2);
}
