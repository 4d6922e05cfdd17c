// The first-order optimality (Karush-Kuhn-Tucker) check of an optimization's answer: the
// multipliers of the active constraints, the projected Lagrangian gradient relative to the
// objective's gradient, the violations, the active bounds and the multipliers of the wrong sign.
#pragma once

#include "karman/optimization/optimizer.hpp"

#include <vector>

namespace karman::optimization {

/// First-order optimality (Karush-Kuhn-Tucker) check of a design x with its evaluation e.
/// In NLopt's form g_i(x) <= 0 or = 0 (g = c - v for <= and =, v - c for >=) the KKT conditions
/// of  min f  s.t.  g_i <= 0 / = 0,  l <= x <= u  are
///   r = df + sum_i lambda_i dg_i,   r_j = 0 where l_j < x_j < u_j,
///   r_j >= 0 at an active lower bound,  r_j <= 0 at an active upper bound,
///   lambda_i >= 0 for the inequalities, lambda_i = 0 unless g_i = 0,  g_i(x) <= 0 / = 0.
/// The active set A holds every equality and each inequality with g_i >= -active_tolerance
/// (1 + |v_i|); a bound is active when x is within active_tolerance (u - l) of it.  The
/// multipliers of the active constraints and bounds are the sign-constrained least-squares
/// solution (Lawson-Hanson active-set method)
///   min | df + sum_{i in A} lambda_i dg_i - sum_{lower j} mu_j e_j + sum_{upper j} mu_j e_j |
///   over lambda_i >= 0 (inequalities; free for equalities) and mu_j >= 0,
/// whose residual is the projected Lagrangian gradient: r_j on the free variables, the part of
/// r_j of the wrong sign at an active bound.  With the objective gradient's norm as the scale,
///   residual = |projected r| / |df|   (0 when both vanish).
/// Degenerate active sets -- more active constraints than the gradient needs, dependent
/// gradients (a constraint that a symmetry makes redundant; ten thickness stations on six
/// bump pairs) -- have many multiplier vectors; unconstrained least squares may pick one with
/// negative entries although a nonnegative one balances df as well, the sign-constrained one
/// finds the best nonnegative one.  An active inequality or bound held at multiplier 0 that a
/// negative multiplier would serve (the unbalanced gradient pulls the design into the feasible
/// interior: -a_k . r < 0 for its column a_k) is wrong-signed: counted in `wrong_signs`, and
/// such an inequality is reported inactive.
struct KktOptions {
  double active_tolerance = 1e-6;
};

struct KktReport {
  double residual = 0;                 ///< |projected Lagrangian gradient| / |df|
  double lagrangian_gradient_norm = 0; ///< |projected Lagrangian gradient| (absolute)
  double objective_gradient_norm = 0;  ///< |df|
  std::vector<double> multipliers;     ///< lambda_i per constraint (0 if inactive), NLopt's form
  std::vector<bool> active;            ///< per constraint
  std::vector<double> violations;      ///< per constraint: |c - v| (=), max(0, c - v) (<=), ...
  std::vector<double> relative_violations; ///< violations / |v| (the violation if v = 0)
  double max_violation = 0, max_relative_violation = 0; ///< the largest of the above
  long active_lower = 0, active_upper = 0;              ///< variables at an active bound
  double bound_violation = 0;                           ///< the largest distance outside [l, u]
  long wrong_signs = 0; ///< active inequalities and bounds with a multiplier of the wrong sign
};

/// The check above.  Pure (no MPI): every rank gets the same report from the same data.
KktReport check_kkt(const OptimizationProblem &problem, const std::vector<double> &x,
                    const Evaluation &e, const KktOptions &options = {});

} // namespace karman::optimization
