// Force-history statistics (src/driver/force_history.cpp) on synthetic histories whose answers
// are known: c_L = A sin(2 pi f t) + m gives the frequency f, max m + A and min m - A (the
// parabola refinement between samples), and the initial state and t < t0 are left out.
#include "karman/driver/force_history.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

namespace {

// steps 0..n of dt, c_L = mean + amp sin(2 pi f t + phase), c_D = 1 + t
std::vector<driver::ForceSample> sine(double f, double mean, double amp, double dt, long n,
                                      double phase = 0.3) {
  std::vector<driver::ForceSample> h;
  for (long s = 0; s <= n; ++s) {
    const double t = s * dt;
    h.push_back({s, t, 1 + t, mean + amp * std::sin(2 * M_PI * f * t + phase), 0});
  }
  return h;
}

} // namespace

TEST_CASE("force history: frequency, maximum and minimum of a sampled sine", "[driver]") {
  const double f = 0.3, dt = 0.05;
  const auto h = sine(f, 0.2, 1.5, dt, 400); // 6 periods
  int periods = 0;
  const double frequency = driver::lift_frequency(h, 2.0, &periods);
  CHECK(periods == 5);
  CHECK(frequency == Approx(f).epsilon(1e-4));
  SignalStatistics s;
  REQUIRE(driver::window_statistics(h, 2.0, &driver::ForceSample::cl, &s));
  // between-sample error of the parabola: O((2 pi f dt)^4) of the amplitude
  CHECK(s.max == Approx(1.7).margin(1e-4));
  CHECK(s.min == Approx(-1.3).margin(1e-4));
  CHECK(s.max_sample <= 1.7);
  CHECK(s.samples == 361); // t = 2.0 .. 20.0
  // the time average of c_D = 1 + t over [2, 20] (trapezoidal rule exact for linear data)
  REQUIRE(driver::window_statistics(h, 2.0, &driver::ForceSample::cd, &s));
  CHECK(s.time_average == Approx(12.0).epsilon(1e-13));
}

TEST_CASE("force history: the initial state is not a result, empty windows", "[driver]") {
  auto h = sine(1.0, 0, 1, 0.1, 3);
  h[0].cd = 100; // step 0 is data: left out even though t = 0 >= t0
  SignalStatistics s;
  REQUIRE(driver::window_statistics(h, 0.0, &driver::ForceSample::cd, &s));
  CHECK(s.samples == 3);
  CHECK(s.max_sample == Approx(1.3));
  CHECK(!driver::window_statistics(h, 10.0, &driver::ForceSample::cd, &s));
  // fewer than two upward crossings: no frequency
  int periods = 7;
  CHECK(driver::lift_frequency(sine(0.1, 0, 1, 0.1, 20), 0.0, &periods) == 0);
  CHECK(periods == 0);
}
