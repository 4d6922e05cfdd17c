// Geometry of a body bounded by mesh faces, and of a 2D wall polyline cut by a vertical
// line, with hand-derived reverse modes; templated on the scalar type so that tests can run
// the forward functions with std::complex<double> (complex step).  The shape constraints
// of adjoint/geometric_constraints.cpp sum these over the faces of a set of walls
// (src/adjoint/README.md, sec. 9).
//
// Cones (divergence theorem, exact for the piecewise-linear wall): a region bounded by
// faces is the signed union of the cones from the origin to the faces' facets (the facets
// of geometry_kernels.hpp: the face itself in 2D, the triangles (p, v_k, v_k+1) around the
// vertex average p in 3D), so that the volumes agree with the cell volumes of the mesh.
// With the facet normal pointing out of the region, the cone of a facet has
//   2D (segment a, b):        v = 1/2 (a x b)_z,     m = v (a + b)/3
//   3D (triangle p, a, b):    v = 1/6 p . (a x b),   m = v (p + a + b)/4
// where v is its signed volume (area in 2D) and m = integral of x over it (first moment):
// sum_f v = |region|, sum_f m = |region| x_centroid.
//
// Segment height: the segment (a, b) crosses the vertical line x = x_s when
// min(a_x, b_x) <= x_s < max(a_x, b_x) (half open, so a polyline vertex on the line is
// counted once), at height
//   y = a_y + t (b_y - a_y),   t = (x_s - a_x) / (b_x - a_x).
#pragma once

#include "karman/core/vec3.hpp"

#include <algorithm>

namespace karman::geometry {

/// Signed volume (2D: area) and first moment of the cones from the origin to the facets of
/// a face with `n` vertices `v` (2D: n = 2), oriented by the face's vertex order as in
/// face_facets.
template <typename T>
void face_cone_moments(int dim, const Vec3<T> *const *v, int n, T &volume, Vec3<T> &moment) {
  volume = T(0);
  moment = Vec3<T>();
  if (dim == 2) {
    const Vec3<T> &a = *v[0], &b = *v[1];
    volume = T(0.5) * (a[0] * b[1] - a[1] * b[0]);
    moment = (volume / T(3)) * (a + b);
    return;
  }
  Vec3<T> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= T(1.0 / n);
  for (int k = 0; k < n; ++k) {
    const Vec3<T> &a = *v[k], &b = *v[(k + 1) % n];
    const T vk = T(1.0 / 6.0) * dot(p, cross(a, b));
    volume += vk;
    moment += (vk / T(4)) * (p + a + b);
  }
}

/// Reverse of face_cone_moments: vbar[i] += d(volume_bar volume + moment_bar . moment)/d v_i.
inline void face_cone_moments_reverse(int dim, const Vec3<double> *const *v, int n,
                                      double volume_bar, const Vec3<double> &moment_bar,
                                      Vec3<double> *const *vbar) {
  if (dim == 2) {
    const Vec3<double> &a = *v[0], &b = *v[1];
    const double volume = 0.5 * (a[0] * b[1] - a[1] * b[0]);
    const double g = volume_bar + dot(moment_bar, a + b) / 3.0; // adjoint of the volume
    const Vec3<double> sb = (volume / 3.0) * moment_bar;        // adjoint of a + b
    *vbar[0] += (0.5 * g) * Vec3<double>(b[1], -b[0], 0.0) + sb;
    *vbar[1] += (0.5 * g) * Vec3<double>(-a[1], a[0], 0.0) + sb;
    return;
  }
  Vec3<double> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= 1.0 / n;
  Vec3<double> pbar;
  for (int k = 0; k < n; ++k) {
    const int k1 = (k + 1) % n;
    const Vec3<double> &a = *v[k], &b = *v[k1];
    const double vk = (1.0 / 6.0) * dot(p, cross(a, b));
    const double g = (volume_bar + 0.25 * dot(moment_bar, p + a + b)) / 6.0;
    const Vec3<double> sb = (0.25 * vk) * moment_bar; // adjoint of p + a + b
    pbar += g * cross(a, b) + sb;
    *vbar[k] += g * cross(b, p) + sb;
    *vbar[k1] += g * cross(p, a) + sb;
  }
  for (int i = 0; i < n; ++i) *vbar[i] += (1.0 / n) * pbar;
}

/// Whether the segment (a, b) crosses the vertical line x = xs (half-open in x, see above).
inline bool segment_crosses(const Vec3<double> &a, const Vec3<double> &b, double xs) {
  return std::min(a[0], b[0]) <= xs && xs < std::max(a[0], b[0]);
}

/// Height of the segment (a, b) at x = xs (for a crossing segment: a_x != b_x).
template <typename T> T segment_height(const Vec3<T> &a, const Vec3<T> &b, double xs) {
  const T t = (T(xs) - a[0]) / (b[0] - a[0]);
  return a[1] + t * (b[1] - a[1]);
}

/// Reverse of segment_height: abar, bbar += ybar dy/da, ybar dy/db.
inline void segment_height_reverse(const Vec3<double> &a, const Vec3<double> &b, double xs,
                                   double ybar, Vec3<double> &abar, Vec3<double> &bbar) {
  const double D = b[0] - a[0], t = (xs - a[0]) / D, dy = b[1] - a[1];
  abar[0] += ybar * dy * (t - 1.0) / D;
  bbar[0] -= ybar * dy * t / D;
  abar[1] += ybar * (1.0 - t);
  bbar[1] += ybar * t;
}

} // namespace karman::geometry
