// Body kernels (geometry/body_kernels.hpp): cone volumes and moments of faces, and the
// height of a segment at a vertical line.
//  - exactness: the cones of a closed polygon / polyhedral surface give its area or volume
//    and centroid (unit square, a tetrahedron, a cube with non-planar perturbed faces whose
//    volume is compared with the cell kernel of geometry_kernels.hpp);
//  - reverse modes vs complex step to 1e-12 (2D segments, 3D triangles and quadrilaterals).
#include "karman/geometry/body_kernels.hpp"
#include "karman/geometry/geometry_kernels.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <random>
#include <vector>

using namespace karman;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30; // complex step

double random_fill(std::mt19937 &gen) {
  return std::uniform_real_distribution<double>(-1, 1)(gen);
}

Vec3<double> random_vec(std::mt19937 &gen, int dim) {
  Vec3<double> v;
  for (int d = 0; d < dim; ++d) v[d] = random_fill(gen);
  return v;
}

// Sum of the cones over faces given by vertex index lists.
template <typename T>
void closed_moments(int dim, const std::vector<Vec3<T>> &x,
                    const std::vector<std::vector<int>> &faces, T &V, Vec3<T> &M) {
  V = T(0);
  M = Vec3<T>();
  for (const auto &f : faces) {
    const Vec3<T> *v[4];
    for (std::size_t i = 0; i < f.size(); ++i) v[i] = &x[f[i]];
    T vf;
    Vec3<T> mf;
    geometry::face_cone_moments(dim, v, static_cast<int>(f.size()), vf, mf);
    V += vf;
    M += mf;
  }
}

// The cube [0,1]^3 (vertices 0..7, faces with outward normals, as in test_geometry.cpp).
const std::vector<std::vector<int>> kCubeFaces = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                                  {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
std::vector<Vec3<double>> cube() {
  return {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
}

} // namespace

TEST_CASE("cone moments of closed polygons and polyhedra are exact", "[geometry]") {
  SECTION("unit square, counter-clockwise, shifted") {
    const std::vector<Vec3<double>> x = {{2, 3, 0}, {3, 3, 0}, {3, 4, 0}, {2, 4, 0}};
    double V;
    Vec3<double> M;
    closed_moments(2, x, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, V, M);
    REQUIRE(V == Approx(1.0).epsilon(1e-15));
    REQUIRE(M[0] / V == Approx(2.5).epsilon(1e-15));
    REQUIRE(M[1] / V == Approx(3.5).epsilon(1e-15));
    REQUIRE(M[2] == 0.0);
  }
  SECTION("tetrahedron") {
    const std::vector<Vec3<double>> x = {{1, 1, 1}, {3, 1, 1}, {1, 4, 1}, {1, 1, 2}};
    double V;
    Vec3<double> M;
    closed_moments(3, x, {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}}, V, M);
    REQUIRE(V == Approx(1.0).epsilon(1e-14)); // 2 * 3 * 1 / 6
    for (int d = 0; d < 3; ++d)
      REQUIRE(M[d] / V == Approx(0.25 * (x[0][d] + x[1][d] + x[2][d] + x[3][d])).epsilon(1e-14));
  }
  SECTION("perturbed cube: the volume of the cell kernel, the unit cube's centroid") {
    std::vector<Vec3<double>> x = cube();
    double V;
    Vec3<double> M;
    closed_moments(3, x, kCubeFaces, V, M);
    REQUIRE(V == Approx(1.0).epsilon(1e-15));
    for (int d = 0; d < 3; ++d) REQUIRE(M[d] == Approx(0.5).epsilon(1e-15));
    std::mt19937 gen(9);
    for (auto &p : x) p += 0.15 * random_vec(gen, 3); // non-planar faces
    closed_moments(3, x, kCubeFaces, V, M);
    geometry::Facet<double> facets[6][4];
    geometry::CellFace<double> cf[6];
    Vec3<double> xbar;
    for (const auto &p : x) xbar += p;
    xbar *= 1.0 / 8;
    for (int f = 0; f < 6; ++f) {
      const Vec3<double> *v[4];
      for (int i = 0; i < 4; ++i) v[i] = &x[kCubeFaces[f][i]];
      cf[f] = {facets[f], geometry::face_facets(3, v, 4, facets[f]), 1.0};
    }
    double Vc;
    Vec3<double> xc;
    geometry::cell_from_facets(3, xbar, cf, 6, Vc, xc);
    REQUIRE(V == Approx(Vc).epsilon(1e-14));
    for (int d = 0; d < 3; ++d) REQUIRE(M[d] / V == Approx(xc[d]).epsilon(1e-14));
  }
}

TEST_CASE("cone moments and segment height: reverse mode equals complex step", "[geometry]") {
  std::mt19937 gen(17);
  struct Case {
    int dim, n;
  };
  for (const Case c : {Case{2, 2}, Case{3, 3}, Case{3, 4}}) {
    CAPTURE(c.dim, c.n);
    std::vector<Vec3<double>> x(c.n);
    for (auto &p : x) p = random_vec(gen, c.dim);
    const double vbar = random_fill(gen);
    const Vec3<double> mbar = random_vec(gen, c.dim);
    std::vector<Vec3<double>> xb(c.n);
    {
      const Vec3<double> *v[4];
      Vec3<double> *vb[4];
      for (int i = 0; i < c.n; ++i) v[i] = &x[i], vb[i] = &xb[i];
      geometry::face_cone_moments_reverse(c.dim, v, c.n, vbar, mbar, vb);
    }
    for (int i = 0; i < c.n; ++i)
      for (int d = 0; d < 3; ++d) {
        std::vector<Vec3<cplx>> xc(c.n);
        for (int j = 0; j < c.n; ++j)
          for (int e = 0; e < 3; ++e) xc[j][e] = cplx(x[j][e], (i == j && d == e) ? h : 0.0);
        const Vec3<cplx> *v[4];
        for (int j = 0; j < c.n; ++j) v[j] = &xc[j];
        cplx V;
        Vec3<cplx> M;
        geometry::face_cone_moments(c.dim, v, c.n, V, M);
        const double cs = (vbar * V.imag() + mbar[0] * M[0].imag() + mbar[1] * M[1].imag() +
                           mbar[2] * M[2].imag()) /
                          h;
        CAPTURE(i, d, xb[i][d], cs);
        REQUIRE(std::abs(xb[i][d] - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
      }
  }
  // segment height
  const Vec3<double> a(0.1, 0.3, 0), b(0.7, -0.2, 0);
  const double xs = 0.45, ybar = 1.7;
  REQUIRE(geometry::segment_crosses(a, b, xs));
  REQUIRE(geometry::segment_crosses(b, a, xs));
  REQUIRE(geometry::segment_crosses(a, b, 0.1));  // the left end point belongs to the segment
  REQUIRE(!geometry::segment_crosses(a, b, 0.7)); // the right one to the next segment
  REQUIRE(geometry::segment_height(a, b, xs) == Approx(0.3 - 0.5 * 0.35 / 0.6).epsilon(1e-15));
  Vec3<double> ab, bb;
  geometry::segment_height_reverse(a, b, xs, ybar, ab, bb);
  for (int which = 0; which < 2; ++which)
    for (int d = 0; d < 3; ++d) {
      Vec3<cplx> ac(a[0], a[1], a[2]), bc(b[0], b[1], b[2]);
      (which == 0 ? ac : bc)[d] += cplx(0, h);
      const double cs = ybar * geometry::segment_height(ac, bc, xs).imag() / h;
      const double rev = (which == 0 ? ab : bb)[d];
      CAPTURE(which, d, rev, cs);
      REQUIRE(std::abs(rev - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
    }
}
