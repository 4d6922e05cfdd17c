// Exact distance from a point to a wall face, and its reverse mode, templated on the scalar
// type so that tests can run the forward functions with std::complex<double> (complex step).
// The wall distance d of the Spalart-Allmaras model is the minimum of these over the wall
// faces (TMR: the true minimum distance, not along grid lines and not to the nearest wall
// node; at a sharp trailing edge it is the distance to the edge).
//
// Segment (2D walls) [a, b], point x:
//   t = (x - a) . (b - a) / |b - a|^2,  closest point c = a (t <= 0), b (t >= 1),
//   a + t (b - a) otherwise;  d = |x - c|.
// Triangle (3D walls) (a, b, c): the closest point lies in one of seven regions (the interior,
// the three edges, the three vertices), found by the signs of the dot products of the edges
// with x - a, x - b, x - c (C. Ericson, "Real-Time Collision Detection", Morgan Kaufmann 2005,
// sec. 5.1.5): the closest point is the orthogonal projection onto the plane, onto an edge's
// line, or the vertex.
// Wall faces (point_face_distance): in 2D the segment (v0, v1); in 3D a triangle itself, and a
// quadrilateral (or any polygon) as the union of the triangles (p, v_k, v_k+1) around its
// vertex average p, the facets of geometry_kernels.hpp that define the face's area vector and
// centroid everywhere else in karman.  For a planar quadrilateral this is the same surface as
// two triangles (v0, v1, v2), (v0, v2, v3); for a warped one it is the symmetric choice that
// does not depend on the diagonal (the two-triangle split would, by O(warp)).
//
// Derivatives.  With the closest point c = sum_i w_i v_i (barycentric weights w of the closest
// point on the active region, constant on vertex regions) and n = (x - c)/d,
//   dd/dx = n,   dd/dv_i = -w_i n
// on every region: d is the minimum of |x - sum w_i v_i| over the weights of the region, whose
// derivative with respect to the weights vanishes at the minimum (envelope theorem), so only
// the explicit dependence remains.  For a polygon, the vertex average's share goes to every
// vertex: dd/dv_i += -w_p n / n_vertices.
//
// Non-smooth switches (one-sided derivatives are exact; finite-difference checks must stay
// away from them):
//  - region boundaries: segment t = 0, t = 1; triangle: the planes through an edge normal to
//    the triangle and the planes through a vertex normal to an edge.  The distance is C^1
//    across them (the closest point moves continuously) but not C^2; the vertex weights' share
//    of dd/dv changes continuously too.
//  - d = 0 (x on the wall): |x - c| has a cone kink; the reverse mode returns 0 there (cell
//    centroids never lie on a wall).
//  - equidistant facets or faces (the medial axis, e.g. the bisector of a trailing edge, or two
//    facets of a warped quadrilateral): the minimum switches faces and its gradient jumps; the
//    reverse mode follows the face that was taken (the first one with the least distance).
// Decisions compare real parts (real_value); no value passes through a real part.
// Faces must not be degenerate (zero length/area), which the mesh quality checks ensure.
// Tests: tests/unit/test_wall_distance_kernels.cpp.
#pragma once

#include "karman/core/vec3.hpp"

namespace karman::geometry {

/// Region of a segment or triangle that holds the closest point.
enum class ClosestRegion { Interior, EdgeAB, EdgeBC, EdgeCA, VertexA, VertexB, VertexC };

/// The closest point of a segment or triangle to x, its barycentric weights (w[2] = 0 for a
/// segment) and region, and the distance |x - point|.
template <typename T> struct ClosestPoint {
  T distance = T(0);
  Vec3<T> point;
  T w[3] = {T(0), T(0), T(0)};
  ClosestRegion region = ClosestRegion::Interior;
};

/// Closest point of the segment [a, b] to x.
template <typename T>
ClosestPoint<T> closest_point_on_segment(const Vec3<T> &x, const Vec3<T> &a, const Vec3<T> &b) {
  ClosestPoint<T> cp;
  const Vec3<T> e = b - a;
  const T t = dot(x - a, e) / dot(e, e);
  if (!(real_value(t) > 0)) {
    cp.region = ClosestRegion::VertexA;
    cp.w[0] = T(1);
  } else if (!(real_value(t) < 1)) {
    cp.region = ClosestRegion::VertexB;
    cp.w[1] = T(1);
  } else {
    cp.region = ClosestRegion::Interior;
    cp.w[0] = T(1) - t;
    cp.w[1] = t;
  }
  cp.point = cp.w[0] * a + cp.w[1] * b;
  cp.distance = norm(x - cp.point);
  return cp;
}

/// Closest point of the triangle (a, b, c) to x (Ericson 2005, sec. 5.1.5).
template <typename T>
ClosestPoint<T> closest_point_on_triangle(const Vec3<T> &x, const Vec3<T> &a, const Vec3<T> &b,
                                          const Vec3<T> &c) {
  auto re = [](const T &v) { return real_value(v); };
  ClosestPoint<T> cp;
  auto finish = [&](ClosestRegion region, const T &wa, const T &wb, const T &wc) {
    cp.region = region;
    cp.w[0] = wa, cp.w[1] = wb, cp.w[2] = wc;
    cp.point = wa * a + wb * b + wc * c;
    cp.distance = norm(x - cp.point);
    return cp;
  };
  const Vec3<T> ab = b - a, ac = c - a, ap = x - a;
  const T d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (re(d1) <= 0 && re(d2) <= 0) return finish(ClosestRegion::VertexA, T(1), T(0), T(0));
  const Vec3<T> bp = x - b;
  const T d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (re(d3) >= 0 && re(d4) <= re(d3)) return finish(ClosestRegion::VertexB, T(0), T(1), T(0));
  const T vc = d1 * d4 - d3 * d2;
  if (re(vc) <= 0 && re(d1) >= 0 && re(d3) <= 0) {
    const T v = d1 / (d1 - d3);
    return finish(ClosestRegion::EdgeAB, T(1) - v, v, T(0));
  }
  const Vec3<T> pc = x - c;
  const T d5 = dot(ab, pc), d6 = dot(ac, pc);
  if (re(d6) >= 0 && re(d5) <= re(d6)) return finish(ClosestRegion::VertexC, T(0), T(0), T(1));
  const T vb = d5 * d2 - d1 * d6;
  if (re(vb) <= 0 && re(d2) >= 0 && re(d6) <= 0) {
    const T w = d2 / (d2 - d6);
    return finish(ClosestRegion::EdgeCA, T(1) - w, T(0), w);
  }
  const T va = d3 * d6 - d5 * d4;
  if (re(va) <= 0 && re(d4 - d3) >= 0 && re(d5 - d6) >= 0) {
    const T w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return finish(ClosestRegion::EdgeBC, T(0), T(1) - w, w);
  }
  const T denom = va + vb + vc;
  const T v = vb / denom, w = vc / denom;
  return finish(ClosestRegion::Interior, T(1) - v - w, v, w);
}

/// Distance from x to the segment [a, b].
template <typename T>
T point_segment_distance(const Vec3<T> &x, const Vec3<T> &a, const Vec3<T> &b) {
  return closest_point_on_segment(x, a, b).distance;
}

/// Distance from x to the triangle (a, b, c).
template <typename T>
T point_triangle_distance(const Vec3<T> &x, const Vec3<T> &a, const Vec3<T> &b, const Vec3<T> &c) {
  return closest_point_on_triangle(x, a, b, c).distance;
}

/// Reverse of the distance to the closest point cp found for x and the vertices v[0..nv):
/// xbar += dbar n, vbar[i] += -dbar w_i n (0 when d = 0).
inline void closest_point_distance_reverse(const Vec3<double> &x, const ClosestPoint<double> &cp,
                                           int nv, double dbar, Vec3<double> &xbar,
                                           Vec3<double> *const *vbar) {
  if (!(cp.distance > 0)) return;
  const Vec3<double> n = (dbar / cp.distance) * (x - cp.point);
  xbar += n;
  for (int i = 0; i < nv; ++i) *vbar[i] += (-cp.w[i]) * n;
}

/// Reverse of point_segment_distance: xbar, abar, bbar += dbar dd/d(x, a, b).
inline void point_segment_distance_reverse(const Vec3<double> &x, const Vec3<double> &a,
                                           const Vec3<double> &b, double dbar, Vec3<double> &xbar,
                                           Vec3<double> &abar, Vec3<double> &bbar) {
  Vec3<double> *const vbar[2] = {&abar, &bbar};
  closest_point_distance_reverse(x, closest_point_on_segment(x, a, b), 2, dbar, xbar, vbar);
}

/// Reverse of point_triangle_distance: xbar, abar, bbar, cbar += dbar dd/d(x, a, b, c).
inline void point_triangle_distance_reverse(const Vec3<double> &x, const Vec3<double> &a,
                                            const Vec3<double> &b, const Vec3<double> &c,
                                            double dbar, Vec3<double> &xbar, Vec3<double> &abar,
                                            Vec3<double> &bbar, Vec3<double> &cbar) {
  Vec3<double> *const vbar[3] = {&abar, &bbar, &cbar};
  closest_point_distance_reverse(x, closest_point_on_triangle(x, a, b, c), 3, dbar, xbar, vbar);
}

/// Distance from x to a wall face with `n` vertices `v` (n = 2: the segment, as in 2D; n = 3: the
/// triangle; n > 3: the facets (p, v_k, v_k+1) of the polygon).  *facet (if not null) receives the
/// facet that holds the closest point (-1 for a segment or triangle).
template <typename T>
T point_face_distance(int dim, const Vec3<T> &x, const Vec3<T> *const *v, int n,
                      int *facet = nullptr) {
  if (facet) *facet = -1;
  if (dim == 2 || n == 2) return point_segment_distance(x, *v[0], *v[1]);
  if (n == 3) return point_triangle_distance(x, *v[0], *v[1], *v[2]);
  Vec3<T> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= T(1.0 / n);
  T best = T(0);
  for (int k = 0; k < n; ++k) {
    const T d = point_triangle_distance(x, p, *v[k], *v[(k + 1) % n]);
    if (k == 0 || real_value(d) < real_value(best)) {
      best = d;
      if (facet) *facet = k;
    }
  }
  return best;
}

/// Reverse of point_face_distance: xbar += dbar dd/dx, *vbar[i] += dbar dd/dv_i.
inline void point_face_distance_reverse(int dim, const Vec3<double> &x,
                                        const Vec3<double> *const *v, int n, double dbar,
                                        Vec3<double> &xbar, Vec3<double> *const *vbar) {
  if (dim == 2 || n == 2)
    return point_segment_distance_reverse(x, *v[0], *v[1], dbar, xbar, *vbar[0], *vbar[1]);
  if (n == 3)
    return point_triangle_distance_reverse(x, *v[0], *v[1], *v[2], dbar, xbar, *vbar[0], *vbar[1],
                                           *vbar[2]);
  int k = 0;
  point_face_distance(dim, x, v, n, &k);
  Vec3<double> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= 1.0 / n;
  Vec3<double> pbar;
  const int k1 = (k + 1) % n;
  point_triangle_distance_reverse(x, p, *v[k], *v[k1], dbar, xbar, pbar, *vbar[k], *vbar[k1]);
  for (int i = 0; i < n; ++i) *vbar[i] += (1.0 / n) * pbar;
}

} // namespace karman::geometry
