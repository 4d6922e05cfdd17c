// Statistics of sampled signals (summary.json of unsteady runs): the parabola through
// three samples is exact for a quadratic at any spacing, the refined maximum of a sampled
// sine converges at third order in the sample spacing while the largest sample converges
// at second order, and extrema at the ends of the window are not extrapolated.
#include "karman/core/signal.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace karman;

TEST_CASE("parabola extremum is exact for a quadratic at uneven spacing", "[signal]") {
  auto q = [](double t) { return 2.5 - 3.0 * (t - 0.37) * (t - 0.37); }; // max 2.5 at 0.37
  REQUIRE(parabola_extremum(0.2, 0.33, 0.61, q(0.2), q(0.33), q(0.61)) ==
          Approx(2.5).epsilon(1e-14));
  auto m = [](double t) { return -1.0 + 4.0 * (t + 0.1) * (t + 0.1); }; // min -1 at -0.1
  REQUIRE(parabola_extremum(-0.3, -0.05, 0.02, m(-0.3), m(-0.05), m(0.02)) ==
          Approx(-1.0).epsilon(1e-14));
  // collinear points, and a vertex outside the three samples: the middle value
  REQUIRE(parabola_extremum(0, 1, 2, 1, 2, 3) == 2);
  REQUIRE(parabola_extremum(1, 2, 3, q(1), q(2), q(3)) == q(2));
}

TEST_CASE("refined extrema of a sampled sine converge faster than the extreme samples",
          "[signal]") {
  const double A = 1.3, w = 2 * M_PI * 3.0, phase = 0.4, c = -0.02;
  std::vector<double> err_refined, err_sample;
  for (double dt : {0.01, 0.005, 0.0025}) {
    std::vector<double> t, v;
    for (double s = 4.0; s <= 6.0 + 1e-12; s += dt)
      t.push_back(s), v.push_back(c + A * std::sin(w * s + phase));
    const SignalStatistics st = signal_statistics(t, v);
    const double e_max = std::abs(st.max - (c + A)), e_min = std::abs(st.min - (c - A));
    CAPTURE(dt, st.max, st.max_sample, st.min, st.min_sample);
    REQUIRE(st.max >= st.max_sample);
    REQUIRE(st.min <= st.min_sample);
    err_refined.push_back(std::max(e_max, e_min));
    err_sample.push_back(
        std::max(std::abs(st.max_sample - (c + A)), std::abs(st.min_sample - (c - A))));
    REQUIRE(st.time_average ==
            Approx(c + A * (std::cos(w * 4.0 + phase) - std::cos(w * t.back() + phase)) /
                           (w * (t.back() - 4.0)))
                .margin(A * (w * dt) * (w * dt) / 10));
  }
  for (std::size_t k = 0; k < err_refined.size(); ++k) {
    CAPTURE(k, err_refined[k], err_sample[k]);
    REQUIRE(err_refined[k] < 0.1 * err_sample[k]);
    REQUIRE(err_refined[k] <= A * std::pow(w * 0.01 / std::pow(2.0, k), 3));
  }
}

TEST_CASE("extrema at the ends of the window are the samples", "[signal]") {
  const std::vector<double> t = {0, 0.1, 0.25, 0.3}, v = {1.0, 1.5, 1.7, 1.8}; // rising
  const SignalStatistics st = signal_statistics(t, v);
  REQUIRE(st.max == 1.8);
  REQUIRE(st.min == 1.0);
  REQUIRE(st.mean == Approx(1.5));
  REQUIRE(st.time_average == Approx((0.1 * 1.25 + 0.15 * 1.6 + 0.05 * 1.75) / 0.3));
  REQUIRE(st.samples == 4);
}
