// Statistics of sampled time signals (force histories): maximum and minimum refined by
// the parabola through the three samples around the extreme sample (the extremum of the
// signal between the samples, not the largest sample), mean and trapezoidal time average.
#pragma once

#include <vector>

namespace karman {

/// Value at the vertex of the parabola through (t0, v0), (t1, v1), (t2, v2), t0 < t1 < t2
/// (any spacing); v1 when the three points are collinear or the vertex is outside [t0, t2].
double parabola_extremum(double t0, double t1, double t2, double v0, double v1, double v2);

struct SignalStatistics {
  double max = 0, min = 0; ///< refined (parabola) where the extreme sample is interior
  double max_sample = 0, min_sample = 0; ///< the largest and smallest samples
  double mean = 0;                       ///< of the samples
  double time_average = 0;               ///< trapezoidal rule over [t.front(), t.back()]
  int samples = 0;
};

/// Statistics of the samples v at increasing times t (same length, at least one).
SignalStatistics signal_statistics(const std::vector<double> &t, const std::vector<double> &v);

} // namespace karman
