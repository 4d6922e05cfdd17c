// The first-order optimality (KKT) check of a design with its evaluation (see
// include/karman/optimization/kkt_check.hpp).
#include "karman/optimization/kkt_check.hpp"

#include <algorithm>
#include <cmath>

namespace karman::optimization {
namespace {

// x = the least-squares solution of min |b + sum_k x_k a_k| over the columns a_k (modified
// Gram-Schmidt, twice for orthogonality); columns dependent on the earlier ones (their
// remainder below 1e-10 of their norm) get x_k = 0.  Returns the residual b + sum_k x_k a_k.
std::vector<double> least_squares(const std::vector<std::vector<double>> &a,
                                  const std::vector<double> &b, std::vector<double> *x) {
  const std::size_t m = a.size(), n = b.size();
  std::vector<std::vector<double>> q; // orthonormal columns
  std::vector<std::size_t> kept;      // the column of a of each q
  std::vector<std::vector<double>> r; // r[j][k]: coefficient of q_k in a_kept[j]
  auto dot = [n](const std::vector<double> &u, const std::vector<double> &v) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += u[i] * v[i];
    return s;
  };
  for (std::size_t j = 0; j < m; ++j) {
    std::vector<double> v = a[j], coef(q.size() + 1, 0.0);
    const double norm0 = std::sqrt(dot(v, v));
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t k = 0; k < q.size(); ++k) {
        const double h = dot(q[k], v);
        coef[k] += h;
        for (std::size_t i = 0; i < n; ++i) v[i] -= h * q[k][i];
      }
    const double norm = std::sqrt(dot(v, v));
    if (!(norm > 1e-10 * norm0) || norm0 == 0) continue;
    for (double &vi : v) vi /= norm;
    coef[q.size()] = norm;
    q.push_back(v);
    kept.push_back(j);
    r.push_back(coef);
  }
  // min |b + Q R y|: R y = -Q^T b (upper triangular: column j of R is r[j])
  const std::size_t k = q.size();
  std::vector<double> y(k, 0.0), rhs(k);
  for (std::size_t i = 0; i < k; ++i) rhs[i] = -dot(q[i], b);
  for (std::size_t i = k; i-- > 0;) {
    double s = rhs[i];
    for (std::size_t j = i + 1; j < k; ++j) s -= r[j][i] * y[j];
    y[i] = s / r[i][i];
  }
  x->assign(m, 0.0);
  for (std::size_t i = 0; i < k; ++i) (*x)[kept[i]] = y[i];
  std::vector<double> res = b;
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i < n; ++i) res[i] += (*x)[j] * a[j][i];
  return res;
}

// z = argmin |b + A z| over the columns a_k with z_k >= 0 where `nonnegative`[k] (the others
// free): Lawson and Hanson's active-set method (Solving Least Squares Problems, 1974, ch. 23),
// the free columns in the passive set from the start, the subproblems by least_squares().
// `w` returns -A^T (b + A z), the negative gradient of |b + A z|^2 / 2: at the solution w_k = 0
// on the passive set and w_k <= tol on the columns held at zero.
std::vector<double> sign_constrained_least_squares(const std::vector<std::vector<double>> &a,
                                                   const std::vector<double> &b,
                                                   const std::vector<bool> &nonnegative,
                                                   std::vector<double> *z, std::vector<double> *w,
                                                   double tol) {
  const std::size_t m = a.size();
  std::vector<bool> passive(m, false);
  z->assign(m, 0.0);
  // the least-squares solution over the passive columns
  auto solve_passive = [&](std::vector<double> *s) {
    std::vector<std::vector<double>> ap;
    std::vector<std::size_t> cols;
    for (std::size_t k = 0; k < m; ++k)
      if (passive[k]) ap.push_back(a[k]), cols.push_back(k);
    std::vector<double> y;
    least_squares(ap, b, &y);
    s->assign(m, 0.0);
    for (std::size_t i = 0; i < cols.size(); ++i) (*s)[cols[i]] = y[i];
  };
  auto residual_of = [&](const std::vector<double> &x) {
    std::vector<double> r = b;
    for (std::size_t k = 0; k < m; ++k)
      for (std::size_t i = 0; i < r.size(); ++i) r[i] += x[k] * a[k][i];
    return r;
  };
  auto gradient = [&](const std::vector<double> &r) {
    w->assign(m, 0.0);
    for (std::size_t k = 0; k < m; ++k)
      for (std::size_t i = 0; i < r.size(); ++i) (*w)[k] -= a[k][i] * r[i];
  };
  bool any_free = false;
  for (std::size_t k = 0; k < m; ++k)
    if (!nonnegative[k]) passive[k] = any_free = true;
  if (any_free) solve_passive(z);
  std::vector<double> r = residual_of(*z);
  gradient(r);
  for (std::size_t outer = 0; outer < 3 * m + 3; ++outer) {
    long enter = -1;
    for (std::size_t k = 0; k < m; ++k)
      if (!passive[k] && (*w)[k] > tol && (enter < 0 || (*w)[k] > (*w)[enter]))
        enter = static_cast<long>(k);
    if (enter < 0) break;
    passive[enter] = true;
    for (std::size_t inner = 0; inner < 3 * m + 3; ++inner) {
      std::vector<double> s;
      solve_passive(&s);
      double alpha = 1;
      bool feasible = true;
      for (std::size_t k = 0; k < m; ++k)
        if (passive[k] && nonnegative[k] && s[k] <= 0) {
          feasible = false;
          // (z_k = s_k = 0: a column dependent on the passive ones, dropped at once)
          const double step = (*z)[k] - s[k];
          alpha = std::min(alpha, step > 0 ? (*z)[k] / step : 0.0);
        }
      if (feasible) {
        *z = s;
        break;
      }
      for (std::size_t k = 0; k < m; ++k) (*z)[k] += alpha * (s[k] - (*z)[k]);
      for (std::size_t k = 0; k < m; ++k)
        if (passive[k] && nonnegative[k] && (*z)[k] <= 1e-15 * (1 + std::fabs(s[k])))
          passive[k] = false, (*z)[k] = 0;
    }
    r = residual_of(*z);
    gradient(r);
  }
  return r;
}

} // namespace

KktReport check_kkt(const OptimizationProblem &p, const std::vector<double> &x, const Evaluation &e,
                    const KktOptions &o) {
  KktReport k;
  const std::size_t n = x.size(), m = p.constraints.size();
  // NLopt's form: g = c - v (<=, =) or v - c (>=), g <= 0
  std::vector<double> g(m), sign(m);
  k.multipliers.assign(m, 0.0);
  k.active.assign(m, false);
  k.violations.assign(m, 0.0);
  k.relative_violations.assign(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const ConstraintSpec &c = p.constraints[i];
    sign[i] = c.sense == ConstraintSense::GreaterEqual ? -1.0 : 1.0;
    g[i] = sign[i] * (e.c[i] - c.value);
    k.violations[i] = c.sense == ConstraintSense::Equal ? std::fabs(g[i]) : std::max(0.0, g[i]);
    k.relative_violations[i] =
        c.value != 0 ? k.violations[i] / std::fabs(c.value) : k.violations[i];
    k.max_violation = std::max(k.max_violation, k.violations[i]);
    k.max_relative_violation = std::max(k.max_relative_violation, k.relative_violations[i]);
    k.active[i] =
        c.sense == ConstraintSense::Equal || g[i] >= -o.active_tolerance * (1 + std::fabs(c.value));
  }
  // bounds: -1 at an active lower, +1 at an active upper bound, 0 free
  std::vector<int> at(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    const double l = p.lower[j], u = p.upper[j];
    const double range = std::isfinite(u - l) ? u - l : std::max(1.0, std::fabs(x[j]));
    k.bound_violation = std::max({k.bound_violation, l - x[j], x[j] - u});
    if (std::isfinite(l) && x[j] - l <= o.active_tolerance * range)
      at[j] = -1;
    else if (std::isfinite(u) && u - x[j] <= o.active_tolerance * range)
      at[j] = 1;
    k.active_lower += at[j] == -1;
    k.active_upper += at[j] == 1;
  }
  double df2 = 0;
  for (double v : e.df) df2 += v * v;
  k.objective_gradient_norm = std::sqrt(df2);
  // the multipliers of the active constraints and bounds together: the sign-constrained least
  // squares  min | df + sum_{i in A} lambda_i dg_i - sum_{lower} mu_j e_j + sum_{upper} mu_j e_j |
  // with lambda_i >= 0 for the inequalities (free for the equalities) and mu_j >= 0; its residual
  // is the projected Lagrangian gradient of the header (the bound multipliers take the part of
  // r_j of the right sign)
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < m; ++i)
    if (k.active[i]) idx.push_back(i);
  std::vector<std::vector<double>> a;
  std::vector<bool> nonnegative;
  for (std::size_t i : idx) {
    std::vector<double> col(n);
    for (std::size_t j = 0; j < n; ++j) col[j] = sign[i] * e.dc[i][j];
    a.push_back(col);
    nonnegative.push_back(p.constraints[i].sense != ConstraintSense::Equal);
  }
  for (std::size_t j = 0; j < n; ++j)
    if (at[j] != 0) {
      std::vector<double> col(n, 0.0);
      col[j] = at[j] == -1 ? -1.0 : 1.0;
      a.push_back(col);
      nonnegative.push_back(true);
    }
  double scale = k.objective_gradient_norm;
  for (const auto &col : a) {
    double c2 = 0;
    for (double v : col) c2 += v * v;
    scale = std::max(scale, std::sqrt(c2) * k.objective_gradient_norm);
  }
  std::vector<double> z, w;
  const std::vector<double> r =
      sign_constrained_least_squares(a, e.df, nonnegative, &z, &w, 1e-12 * scale);
  for (std::size_t s = 0; s < idx.size(); ++s) k.multipliers[idx[s]] = z[s];
  // an active inequality or bound (the columns after idx's) at zero that a negative multiplier
  // would serve (w_k < 0: the unbalanced gradient pulls the design into the feasible interior)
  // has the wrong sign; such an inequality is reported inactive
  for (std::size_t col = 0; col < a.size(); ++col)
    if (nonnegative[col] && z[col] == 0 && w[col] < -1e-8 * scale) {
      ++k.wrong_signs;
      if (col < idx.size()) k.active[idx[col]] = false;
    }
  double r2 = 0;
  for (double v : r) r2 += v * v;
  k.lagrangian_gradient_norm = std::sqrt(r2);
  k.residual = k.objective_gradient_norm > 0
                   ? k.lagrangian_gradient_norm / k.objective_gradient_norm
                   : k.lagrangian_gradient_norm;
  return k;
}

} // namespace karman::optimization
