#include "karman/core/signal.hpp"

#include <algorithm>
#include <cstddef>

namespace karman {

double parabola_extremum(double t0, double t1, double t2, double v0, double v1, double v2) {
  // v = v1 + B x + A x^2 with x = t - t1
  const double x0 = t0 - t1, x2 = t2 - t1;
  const double s0 = (v0 - v1) / x0, s2 = (v2 - v1) / x2;
  const double A = (s2 - s0) / (x2 - x0), B = s2 - A * x2;
  if (A == 0) return v1;
  const double xv = -B / (2 * A);
  if (xv < x0 || xv > x2) return v1;
  return v1 - B * B / (4 * A);
}

SignalStatistics signal_statistics(const std::vector<double> &t, const std::vector<double> &v) {
  SignalStatistics s;
  const std::size_t n = v.size();
  s.samples = static_cast<int>(n);
  if (n == 0) return s;
  const std::size_t imax = std::max_element(v.begin(), v.end()) - v.begin();
  const std::size_t imin = std::min_element(v.begin(), v.end()) - v.begin();
  s.max_sample = s.max = v[imax];
  s.min_sample = s.min = v[imin];
  auto refine = [&](std::size_t i) {
    return parabola_extremum(t[i - 1], t[i], t[i + 1], v[i - 1], v[i], v[i + 1]);
  };
  if (imax > 0 && imax + 1 < n) s.max = std::max(s.max, refine(imax));
  if (imin > 0 && imin + 1 < n) s.min = std::min(s.min, refine(imin));
  double sum = 0, integral = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += v[i];
    if (i > 0) integral += 0.5 * (t[i] - t[i - 1]) * (v[i] + v[i - 1]);
  }
  s.mean = sum / n;
  s.time_average = t.back() > t.front() ? integral / (t.back() - t.front()) : s.mean;
  return s;
}

} // namespace karman
