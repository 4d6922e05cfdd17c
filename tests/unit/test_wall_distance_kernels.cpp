// Wall-distance kernels:
//  - the reverse mode against complex step (h = 1e-30) for every coordinate of the point and
//    the vertices, on every region: segment (interior, both vertices; in 2D and 3D), triangle
//    (interior on both sides, the three edges, the three vertices), quadrilateral faces
//    (planar and warped, the facet around the vertex average included);
//  - exact values on simple configurations, and the distance of random points against a
//    brute-force minimum over a fine sampling of the segment / triangle (agreement to the
//    sampling resolution, never below the exact minimum).
#include "karman/geometry/wall_distance_kernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

using namespace karman;
using namespace karman::geometry;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30;

Vec3<cplx> lift(const Vec3<double> &v) {
  return Vec3<cplx>(v[0], v[1], v[2]);
}

Vec3<double> unit(const Vec3<double> &v) {
  return (1.0 / norm(v)) * v;
}

// Complex-step gradient of the distance of x to the face with vertices v (points[0] = x,
// points[1..] = vertices), against the reverse mode; 2D perturbs x and y only.
void check_reverse(int dim, const std::vector<Vec3<double>> &points) {
  const int nv = static_cast<int>(points.size()) - 1;
  std::vector<const Vec3<double> *> v(nv);
  for (int i = 0; i < nv; ++i) v[i] = &points[i + 1];
  Vec3<double> xbar;
  std::vector<Vec3<double>> vbar(nv);
  std::vector<Vec3<double> *> vbarp(nv);
  for (int i = 0; i < nv; ++i) vbarp[i] = &vbar[i];
  point_face_distance_reverse(dim, points[0], v.data(), nv, 1.0, xbar, vbarp.data());
  for (int p = 0; p <= nv; ++p)
    for (int c = 0; c < dim; ++c) {
      std::vector<Vec3<cplx>> z(points.size());
      for (std::size_t i = 0; i < points.size(); ++i) z[i] = lift(points[i]);
      z[p][c] += cplx(0, h);
      std::vector<const Vec3<cplx> *> vc(nv);
      for (int i = 0; i < nv; ++i) vc[i] = &z[i + 1];
      const double cs = point_face_distance(dim, z[0], vc.data(), nv).imag() / h;
      const double hand = p == 0 ? xbar[c] : vbar[p - 1][c];
      CAPTURE(dim, nv, p, c, cs, hand);
      CHECK(std::abs(cs - hand) <= 1e-13);
    }
  // translation invariance: moving everything together does not change the distance
  Vec3<double> sum = xbar;
  for (const auto &b : vbar) sum += b;
  CHECK(norm(sum) <= 1e-13);
}

// A point in a given region of the triangle (a, b, c), away from the region boundaries.
Vec3<double> point_in_region(ClosestRegion region, const Vec3<double> &a, const Vec3<double> &b,
                             const Vec3<double> &c, double height) {
  const Vec3<double> n = unit(cross(b - a, c - a));
  const Vec3<double> g = (1.0 / 3.0) * (a + b + c);
  // outward in-plane normal of edge (p, q)
  auto outward = [&](const Vec3<double> &p, const Vec3<double> &q) {
    Vec3<double> m = unit(cross(q - p, n));
    if (dot(m, g - p) > 0) m = -m;
    return m;
  };
  switch (region) {
  case ClosestRegion::Interior:
    return 0.2 * a + 0.3 * b + 0.5 * c + height * n;
  case ClosestRegion::EdgeAB:
    return 0.6 * a + 0.4 * b + 0.3 * outward(a, b) + height * n;
  case ClosestRegion::EdgeBC:
    return 0.7 * b + 0.3 * c + 0.3 * outward(b, c) + height * n;
  case ClosestRegion::EdgeCA:
    return 0.45 * c + 0.55 * a + 0.3 * outward(c, a) + height * n;
  case ClosestRegion::VertexA:
    return a + 0.3 * unit(a - g) + height * n;
  case ClosestRegion::VertexB:
    return b + 0.3 * unit(b - g) + height * n;
  case ClosestRegion::VertexC:
    return c + 0.3 * unit(c - g) + height * n;
  }
  return g;
}

} // namespace

TEST_CASE("wall distance to a segment: exact values and regions", "[wall_distance]") {
  const Vec3<double> a(1, 1, 0), b(4, 5, 0); // length 5, direction (0.6, 0.8)
  // interior: distance along the normal (0.8, -0.6)
  auto cp = closest_point_on_segment(
      Vec3<double>(1 + 0.6 * 2 + 0.8 * 1.5, 1 + 0.8 * 2 - 0.6 * 1.5, 0), a, b);
  CHECK(cp.region == ClosestRegion::Interior);
  CHECK(cp.distance == Approx(1.5).epsilon(1e-15));
  CHECK(cp.w[1] == Approx(0.4).epsilon(1e-15));
  // beyond a and beyond b: the vertex
  cp = closest_point_on_segment(Vec3<double>(-2, -3, 0), a, b);
  CHECK(cp.region == ClosestRegion::VertexA);
  CHECK(cp.distance == Approx(5).epsilon(1e-15));
  cp = closest_point_on_segment(Vec3<double>(4, 5, 2), a, b);
  CHECK(cp.region == ClosestRegion::VertexB);
  CHECK(cp.distance == Approx(2).epsilon(1e-15));
  // a point on the segment, and its (zero) reverse mode
  cp = closest_point_on_segment(Vec3<double>(2.5, 3, 0), a, b);
  CHECK(cp.distance <= 1e-15);
  Vec3<double> xbar, abar, bbar;
  point_segment_distance_reverse(Vec3<double>(2.5, 3, 0), a, b, 1.0, xbar, abar, bbar);
  CHECK((norm(xbar) == 0 && norm(abar) == 0 && norm(bbar) == 0));
}

TEST_CASE("wall distance to a segment: brute force over samples", "[wall_distance]") {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(-2, 2);
  const int samples = 100000;
  for (int trial = 0; trial < 200; ++trial) {
    const int dim = trial % 2 == 0 ? 2 : 3;
    auto rnd = [&] { return Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0); };
    const Vec3<double> a = rnd(), b = rnd(), x = rnd();
    double brute = 1e300;
    for (int i = 0; i <= samples; ++i)
      brute = std::min(brute, norm(x - (a + (double(i) / samples) * (b - a))));
    const double d = point_segment_distance(x, a, b);
    const double spacing = norm(b - a) / samples;
    CAPTURE(trial, d, brute);
    CHECK(d <= brute + 1e-14);
    CHECK(brute - d <= 0.5 * spacing + 1e-14);
  }
}

TEST_CASE("wall distance to a segment: reverse mode equals complex step", "[wall_distance]") {
  for (int dim = 2; dim <= 3; ++dim) {
    const Vec3<double> a(0.3, -0.2, dim == 3 ? 0.1 : 0.0), b(1.4, 0.5, dim == 3 ? -0.3 : 0.0);
    const Vec3<double> e = b - a;
    // a direction normal to the segment (in the plane for 2D)
    const Vec3<double> m =
        dim == 2 ? unit(Vec3<double>(-e[1], e[0], 0)) : unit(cross(e, Vec3<double>(0.2, 0.1, 1)));
    for (double t : {-0.4, 0.35, 1.6}) {
      const Vec3<double> x = a + t * e + 0.7 * m;
      const auto cp = closest_point_on_segment(x, a, b);
      CHECK(cp.region == (t < 0   ? ClosestRegion::VertexA
                          : t > 1 ? ClosestRegion::VertexB
                                  : ClosestRegion::Interior));
      check_reverse(dim, {x, a, b});
    }
  }
}

TEST_CASE("wall distance to a triangle: exact values", "[wall_distance]") {
  const Vec3<double> a(0, 0, 0), b(1, 0, 0), c(0, 1, 0);
  const struct {
    Vec3<double> x;
    ClosestRegion region;
    double d;
  } cases[] = {
      {{0.2, 0.3, 0.5}, ClosestRegion::Interior, 0.5},
      {{0.2, 0.3, -0.25}, ClosestRegion::Interior, 0.25},
      {{0.5, -2, 1}, ClosestRegion::EdgeAB, std::sqrt(5.0)},
      {{1, 1, 0}, ClosestRegion::EdgeBC, std::sqrt(0.5)},
      {{-3, 0.25, -4}, ClosestRegion::EdgeCA, 5},
      {{-1, -1, 0}, ClosestRegion::VertexA, std::sqrt(2.0)},
      {{3, -1, 2}, ClosestRegion::VertexB, 3},
      {{-0.5, 2.5, 0}, ClosestRegion::VertexC, std::sqrt(2.5)},
  };
  for (const auto &k : cases) {
    const auto cp = closest_point_on_triangle(k.x, a, b, c);
    CAPTURE(k.x[0], k.x[1], k.x[2]);
    CHECK(cp.region == k.region);
    CHECK(cp.distance == Approx(k.d).epsilon(1e-15));
    CHECK(cp.w[0] + cp.w[1] + cp.w[2] == Approx(1).epsilon(1e-15));
  }
}

TEST_CASE("wall distance to a triangle: brute force over samples", "[wall_distance]") {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  auto rnd = [&] { return Vec3<double>(u(gen), u(gen), u(gen)); };
  const int N = 400; // barycentric grid: spacing max edge / N
  int seen[7] = {};
  for (int trial = 0; trial < 60; ++trial) {
    const Vec3<double> a = rnd(), b = rnd(), c = rnd();
    const double edge = std::max({norm(b - a), norm(c - b), norm(a - c)});
    for (int q = 0; q < 5; ++q) {
      const Vec3<double> x = rnd();
      double brute = 1e300;
      for (int i = 0; i <= N; ++i)
        for (int j = 0; i + j <= N; ++j) {
          const double wb = double(i) / N, wc = double(j) / N;
          brute = std::min(brute, norm(x - ((1 - wb - wc) * a + wb * b + wc * c)));
        }
      const auto cp = closest_point_on_triangle(x, a, b, c);
      ++seen[static_cast<int>(cp.region)];
      CAPTURE(trial, q, cp.distance, brute);
      CHECK(cp.distance <= brute + 1e-14);
      CHECK(brute - cp.distance <= edge / N + 1e-14);
      CHECK(cp.distance == Approx(norm(x - cp.point)).epsilon(1e-15));
    }
  }
  for (int r = 0; r < 7; ++r) CHECK(seen[r] > 0); // every region met
}

TEST_CASE("wall distance to a triangle: reverse mode equals complex step on every region",
          "[wall_distance]") {
  const Vec3<double> a(0.1, -0.2, 0.05), b(1.2, 0.1, -0.3), c(0.4, 0.9, 0.35);
  for (int r = 0; r < 7; ++r)
    for (double height : {0.4, -0.25}) {
      const auto region = static_cast<ClosestRegion>(r);
      const Vec3<double> x = point_in_region(region, a, b, c, height);
      CAPTURE(r, height);
      REQUIRE(closest_point_on_triangle(x, a, b, c).region == region);
      check_reverse(3, {x, a, b, c});
    }
}

TEST_CASE("wall distance to a quadrilateral face", "[wall_distance]") {
  // planar quadrilateral: the four facets around the vertex average give the same distance as
  // the two triangles (v0, v1, v2), (v0, v2, v3)
  const std::vector<Vec3<double>> planar = {{0, 0, 0}, {2, 0.2, 0}, {2.3, 1.5, 0}, {-0.2, 1.1, 0}};
  const Vec3<double> *pv[4] = {&planar[0], &planar[1], &planar[2], &planar[3]};
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 3);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3<double> x(u(gen), u(gen), u(gen) - 1);
    const double two = std::min(point_triangle_distance(x, planar[0], planar[1], planar[2]),
                                point_triangle_distance(x, planar[0], planar[2], planar[3]));
    CHECK(point_face_distance(3, x, pv, 4) == Approx(two).epsilon(1e-14));
  }
  // reverse mode: planar and warped faces, points over the interior, over edges and corners
  std::vector<Vec3<double>> warped = planar;
  warped[2][2] = 0.3;
  warped[0][2] = -0.1;
  const std::vector<Vec3<double>> *quads[] = {&planar, &warped};
  for (const auto *quad : quads)
    for (const Vec3<double> &x :
         {Vec3<double>(0.9, 0.5, 0.6), Vec3<double>(1.6, 0.9, -0.4), Vec3<double>(1.0, -0.8, 0.3),
          Vec3<double>(3.0, 2.2, 0.5), Vec3<double>(-0.9, 0.4, -0.2)}) {
      std::vector<Vec3<double>> points = {x};
      points.insert(points.end(), quad->begin(), quad->end());
      check_reverse(3, points);
    }
  // a 2D face is its segment; a triangle face is the triangle
  const Vec3<double> s0(0, 0, 0), s1(1, 0, 0), x(0.5, 0.25, 0);
  const Vec3<double> *seg[2] = {&s0, &s1};
  CHECK(point_face_distance(2, x, seg, 2) == 0.25);
  check_reverse(2, {x, s0, s1});
  const Vec3<double> t2(0, 1, 0);
  const Vec3<double> *tri[3] = {&s0, &s1, &t2};
  CHECK(point_face_distance(3, Vec3<double>(0.2, 0.2, 0.7), tri, 3) == Approx(0.7).epsilon(1e-15));
}
