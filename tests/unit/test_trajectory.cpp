// The binomial checkpoint schedule of the unsteady adjoint's trajectories
// (src/adjoint/trajectory.cpp): beta(s, t) = (s + t)! / (s! t!) against Pascal's triangle, its
// saturation, and binomial_split's schedule against Griewank & Walther's optimum: reversing l
// steps with s snapshots costs t l - beta(s + 1, t - 1) forward steps, t the least repetition
// number with beta(s, t) >= l (ACM TOMS 26 (2000), Prop. 1), and never more than s snapshots.
#include "karman/adjoint/trajectory.hpp"

#include <catch2/catch.hpp>

#include <climits>

using namespace karman;

namespace {

// forward steps to reverse l steps from a stored state with s free snapshots, placing each
// snapshot by binomial_split; *depth: the most snapshots held at once
long schedule_cost(long l, long s, long held, long *depth) {
  *depth = std::max(*depth, held);
  if (l <= 1) return 0;
  const long k = adjoint::binomial_split(l, s);
  REQUIRE(k >= 1);
  REQUIRE(k < l);
  // advance k steps and store, reverse the last l - k with one snapshot fewer, then the first k
  return k + schedule_cost(l - k, s - 1, held + 1, depth) + schedule_cost(k, s, held, depth);
}

} // namespace

TEST_CASE("trajectory: beta(s, t) is the binomial coefficient, saturating", "[adjoint]") {
  // Pascal's triangle: C(n, k)
  std::vector<std::vector<long>> C(41, std::vector<long>(41, 0));
  for (int n = 0; n <= 40; ++n) {
    C[n][0] = 1;
    for (int k = 1; k <= n; ++k) C[n][k] = C[n - 1][k - 1] + C[n - 1][k];
  }
  for (long s = 0; s <= 20; ++s)
    for (long t = 0; t <= 20; ++t) {
      CAPTURE(s, t);
      CHECK(adjoint::binomial_beta(s, t) == C[s + t][s]);
    }
  CHECK(adjoint::binomial_beta(200, 200) == LONG_MAX);
}

TEST_CASE("trajectory: the binomial split reaches Griewank-Walther's minimal recomputation",
          "[adjoint]") {
  for (long s = 1; s <= 6; ++s)
    for (long l = 2; l <= 200; ++l) {
      long t = 0;
      while (adjoint::binomial_beta(s, t) < l) ++t;
      const long optimum = t * l - adjoint::binomial_beta(s + 1, t - 1);
      long depth = 0;
      CAPTURE(s, l, t);
      CHECK(schedule_cost(l, s, 0, &depth) == optimum);
      CHECK(depth <= s);
    }
  // nothing to split: one step, or no free snapshot
  CHECK(adjoint::binomial_split(1, 3) == 1);
  CHECK(adjoint::binomial_split(5, 0) == 5);
}
