// Statistics of an unsteady force history over a window t >= t0: maximum, minimum (refined by
// the parabola through the samples around the extreme one: the sampled maximum of a signal of
// frequency f lies up to (2 pi f dt)^2 / 8 of its amplitude below the true one), mean, the
// trapezoidal time average (the discretization of the unsteady adjoint's time-averaged
// objectives), and the lift frequency from upward mean crossings over whole periods;
// Strouhal number St = f L_ref / U_ref.
#pragma once

#include "karman/core/signal.hpp"

#include <vector>

namespace karman::driver {

struct ForceSample {
  long step = 0;
  double time = 0, cd = 0, cl = 0, dp = 0;
};

/// Statistics of `field` over the samples with time >= t0 and step > 0 (the initial state is
/// data, not a result); false if there is none.
bool window_statistics(const std::vector<ForceSample> &history, double t0,
                       double ForceSample::*field, SignalStatistics *statistics);

/// Frequency of the lift from its upward mean crossings over whole periods in [t0, end];
/// 0 (and *periods = 0) with fewer than two crossings.
double lift_frequency(const std::vector<ForceSample> &history, double t0, int *periods);

} // namespace karman::driver
