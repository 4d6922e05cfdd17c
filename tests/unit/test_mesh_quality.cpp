// Cell quality (src/geometry/mesh_quality.cpp) of meshes whose values are known: the structured
// square mesh (h = 0.1) is orthogonal, not skewed, of aspect ratio 1; sheared by x' = x + s y its
// cells are parallelograms with non-orthogonality atan(s), no skewness, aspect ratio
// sqrt(1 + s^2), area h^2; stretched by x' = a x, aspect ratio a (to 1e-9: gmsh's transfinite
// vertices are exact to about 1e-13).  A displaced vertex makes the
// line between two centroids miss the face centre: skewness > 0.
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/geometry/mesh_quality.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

namespace {

geometry::QualitySummary summary(const mesh::Mesh &m, const std::vector<Vec3<double>> &X) {
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, X, g);
  const geometry::CellQuality q = geometry::compute_quality(m, g);
  REQUIRE(q.skewness.size() == static_cast<std::size_t>(m.n_owned_cells));
  geometry::QualitySummary s;
  REQUIRE(geometry::summarize_quality(m, g, q, &s) == 0);
  return s;
}

} // namespace

TEST_CASE("mesh quality: squares, sheared and stretched squares", "[geometry][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "kovasznay-quad.geo", 0, 2, {"west", "east", "south", "north"}, &m);
  const double h = 0.1;
  auto s = summary(m, m.coordinates);
  CHECK(s.max_non_orthogonality == Approx(0).margin(1e-6));
  CHECK(s.max_skewness == Approx(0).margin(1e-12));
  CHECK(s.max_aspect_ratio == Approx(1).epsilon(1e-9));
  CHECK(s.min_volume == Approx(h * h).epsilon(1e-9));
  CHECK(s.max_volume == Approx(h * h).epsilon(1e-9));
  const double shear = 0.5;
  std::vector<Vec3<double>> X = m.coordinates;
  for (auto &x : X) x[0] += shear * x[1];
  s = summary(m, X);
  CHECK(s.max_non_orthogonality == Approx(std::atan(shear) * 180 / M_PI).epsilon(1e-9));
  CHECK(s.max_skewness == Approx(0).margin(1e-12));
  CHECK(s.max_aspect_ratio == Approx(std::sqrt(1 + shear * shear)).epsilon(1e-9));
  CHECK(s.min_volume == Approx(h * h).epsilon(1e-9));
  X = m.coordinates;
  for (auto &x : X) x[0] *= 3;
  s = summary(m, X);
  CHECK(s.max_non_orthogonality == Approx(0).margin(1e-6));
  CHECK(s.max_aspect_ratio == Approx(3).epsilon(1e-9));
  CHECK(s.max_volume == Approx(3 * h * h).epsilon(1e-9));
}

TEST_CASE("mesh quality: a displaced vertex skews its cells", "[geometry]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "kovasznay-quad.geo", 0, 2, {"west", "east", "south", "north"}, &m);
  // the interior vertex at (0.2, 0.5) moved by 0.03 in x: the face between the cells left and
  // right of it above and below turns; the centroids' line no longer meets the face at its centre
  std::vector<Vec3<double>> X = m.coordinates;
  int moved = 0;
  for (auto &x : X)
    if (std::abs(x[0] - 0.2) < 1e-9 && std::abs(x[1] - 0.5) < 1e-9) x[0] += 0.03, ++moved;
  REQUIRE(moved == 1);
  const auto s = summary(m, X);
  CHECK(s.max_skewness > 0.01);
  CHECK(s.max_skewness < 0.2);
  CHECK(s.max_non_orthogonality > 1);
}
