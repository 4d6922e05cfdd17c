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
  // multipliers over the free variables; drop the most negative inequality multiplier until
  // none is left
  std::vector<double> r;
  for (;;) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < m; ++i)
      if (k.active[i]) idx.push_back(i);
    std::vector<std::vector<double>> a(idx.size());
    std::vector<double> b;
    for (std::size_t j = 0; j < n; ++j)
      if (at[j] == 0) b.push_back(e.df[j]);
    for (std::size_t s = 0; s < idx.size(); ++s)
      for (std::size_t j = 0; j < n; ++j)
        if (at[j] == 0) a[s].push_back(sign[idx[s]] * e.dc[idx[s]][j]);
    std::vector<double> lambda;
    least_squares(a, b, &lambda);
    std::fill(k.multipliers.begin(), k.multipliers.end(), 0.0);
    for (std::size_t s = 0; s < idx.size(); ++s) k.multipliers[idx[s]] = lambda[s];
    long worst = -1;
    for (std::size_t i = 0; i < m; ++i)
      if (k.active[i] && p.constraints[i].sense != ConstraintSense::Equal && k.multipliers[i] < 0 &&
          (worst < 0 || k.multipliers[i] < k.multipliers[worst]))
        worst = static_cast<long>(i);
    if (worst < 0) break;
    k.active[worst] = false;
    ++k.wrong_signs;
  }
  // the Lagrangian gradient over all variables, projected at the active bounds
  double r2 = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double rj = e.df[j];
    for (std::size_t i = 0; i < m; ++i) rj += k.multipliers[i] * sign[i] * e.dc[i][j];
    if (at[j] == -1 && rj >= 0) continue; // pushes against the lower bound: fine
    if (at[j] == 1 && rj <= 0) continue;
    if (at[j] != 0) ++k.wrong_signs;
    r2 += rj * rj;
  }
  k.lagrangian_gradient_norm = std::sqrt(r2);
  k.residual = k.objective_gradient_norm > 0
                   ? k.lagrangian_gradient_norm / k.objective_gradient_norm
                   : k.lagrangian_gradient_norm;
  return k;
}

} // namespace karman::optimization
