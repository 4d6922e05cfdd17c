// The gradient of the velocity profile (see include/karman/physics/boundary_kernels.hpp).
#include "karman/physics/boundary_kernels.hpp"

namespace karman::physics {

Vec3<double> profile_factor_gradient(const VelocityProfile &pr, const Vec3<double> &x) {
  Vec3<double> g;
  if (!pr.parabolic) return g;
  double f[2] = {1, 1}, df[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (pr.axis[i] < 0) continue;
    const double h = pr.hi[i] - pr.lo[i], s = (x[pr.axis[i]] - pr.lo[i]) / h;
    f[i] = 4 * s * (1 - s);
    df[i] = 4 * (1 - 2 * s) / h;
  }
  for (int i = 0; i < 2; ++i)
    if (pr.axis[i] >= 0) g[pr.axis[i]] += df[i] * f[1 - i];
  return g;
}

} // namespace karman::physics
