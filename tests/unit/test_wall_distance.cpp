// The wall distance field (src/geometry/wall_distance.cpp) against exact distances, on 1 and 2
// ranks (every check holds on each rank's own cells, whatever the partition):
//  - flat walls: the DFG channels' walls (2D: y = 0, 0.41; 3D: y, z = 0, 0.41, with triangles
//    and with quadrilaterals) give d = the distance to the nearest wall plane, to round-off;
//  - a polygonal cylinder (vertices on the circle of radius r, N faces) lies inside the circle:
//    |x - c| - r <= d <= |x - c| - r + r (1 - cos(pi / N));
//  - reverse: sum_c dbar_c d_c as a function of every vertex coordinate (cell centroids and
//    wall vertices move), against central differences along a direction, in 2D (segments) and
//    3D (the facets of quadrilaterals and triangles).
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/geometry/wall_distance.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace karman;

namespace {

/// The owned cells' centroids.
std::vector<Vec3<double>> owned_centroids(const mesh::Mesh &m, const std::vector<Vec3<double>> &X) {
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, X, g);
  return std::vector<Vec3<double>>(g.cell_centroid.begin(),
                                   g.cell_centroid.begin() + m.n_owned_cells);
}

std::vector<double> distances(geometry::WallDistance &wd, const mesh::Mesh &m,
                              const std::vector<Vec3<double>> &X) {
  std::vector<double> d;
  REQUIRE(wd.compute(X, owned_centroids(m, X), &d) == 0);
  return d;
}

/// The reverse of sum_c dbar_c d_c against central differences along dX (the same on every copy
/// of a vertex: a function of its serial id).
void check_reverse(const mesh::Mesh &m, const std::vector<std::string> &walls) {
  std::vector<int> patches;
  for (const auto &w : walls) patches.push_back(m.patch_index(w));
  geometry::WallDistance wd;
  REQUIRE(wd.setup(m, patches) == 0);
  const std::vector<Vec3<double>> &X = m.coordinates;
  std::vector<Vec3<double>> dX(X.size());
  for (std::size_t v = 0; v < X.size(); ++v) {
    const double g = static_cast<double>(m.vertex_gid[v]);
    dX[v] = Vec3<double>(std::sin(1.3 * g + 0.1), std::cos(2.1 * g),
                         m.dim == 3 ? std::sin(0.7 * g + 1) : 0.0);
  }
  std::vector<double> dbar(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) dbar[c] = 1.0 + 0.5 * std::cos(0.37 * c);
  auto J = [&](double eps) {
    std::vector<Vec3<double>> Y = X;
    for (std::size_t v = 0; v < Y.size(); ++v) Y[v] += eps * dX[v];
    const std::vector<double> d = distances(wd, m, Y);
    double s = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) s += dbar[c] * d[c];
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, m.comm);
    return s;
  };
  const double eps = 1e-7;
  const double fd = (J(eps) - J(-eps)) / (2 * eps);
  // the reverse at X: the centroids' share through the geometry's reverse, the wall's directly
  distances(wd, m, X);
  std::vector<Vec3<double>> points_bar(m.n_owned_cells), Xbar(X.size());
  REQUIRE(wd.reverse(dbar, &points_bar, &Xbar) == 0);
  geometry::GeometryBar gbar = geometry::zero_geometry(m);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) gbar.cell_centroid[c] = points_bar[c];
  geometry::geometry_reverse(m, X, gbar, Xbar);
  double ad = 0, wall_only = 0;
  std::vector<Vec3<double>> wall_bar(X.size());
  REQUIRE(wd.reverse(dbar, &points_bar, &wall_bar) == 0);
  for (std::size_t v = 0; v < X.size(); ++v) {
    ad += dot(Xbar[v], dX[v]);
    wall_only += dot(wall_bar[v], dX[v]);
  }
  MPI_Allreduce(MPI_IN_PLACE, &ad, 1, MPI_DOUBLE, MPI_SUM, m.comm);
  MPI_Allreduce(MPI_IN_PLACE, &wall_only, 1, MPI_DOUBLE, MPI_SUM, m.comm);
  CAPTURE(m.dim, fd, ad, wall_only);
  REQUIRE(std::abs(wall_only) > 1e-3 * std::abs(ad)); // the wall's own motion counts
  REQUIRE(ad == Approx(fd).epsilon(1e-7)); // (eps 1e-6: 2e-7 in 3D, the difference's error)
}

} // namespace

TEST_CASE("wall distance: flat walls exactly, a polygonal cylinder within its chord error (2D)",
          "[geometry][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2,
             {"inlet", "outlet", "walls", "cylinder"}, &m);
  const double H = 0.41, r = 0.05;
  const Vec3<double> centre(0.2, 0.2, 0);
  geometry::WallDistance walls, cylinder;
  REQUIRE(walls.setup(m, {m.patch_index("walls")}) == 0);
  REQUIRE(cylinder.setup(m, {m.patch_index("cylinder")}) == 0);
  const std::vector<Vec3<double>> x = owned_centroids(m, m.coordinates);
  const std::vector<double> dw = distances(walls, m, m.coordinates);
  const std::vector<double> dc = distances(cylinder, m, m.coordinates);
  const double N = static_cast<double>(cylinder.n_faces());
  REQUIRE(N >= 12);
  const double chord = r * (1 - std::cos(M_PI / N));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    CAPTURE(c, x[c][0], x[c][1]);
    REQUIRE(dw[c] == Approx(std::min(x[c][1], H - x[c][1])).margin(1e-14));
    const double radial = norm(x[c] - centre) - r;
    REQUIRE(dc[c] >= radial - 1e-14);
    REQUIRE(dc[c] <= radial + chord + 1e-14);
  }
}

TEST_CASE("wall distance: flat 3D walls of triangles and of quadrilaterals exactly",
          "[geometry][mpi]") {
  const double H = 0.41;
  for (const char *geo : {"dfg-3d-coarse-tet.geo", "dfg-3d-coarse.geo"}) {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, geo, 0, 3, {"inlet", "outlet", "walls", "cylinder"}, &m);
    geometry::WallDistance walls;
    REQUIRE(walls.setup(m, {m.patch_index("walls")}) == 0);
    const std::vector<Vec3<double>> x = owned_centroids(m, m.coordinates);
    const std::vector<double> d = distances(walls, m, m.coordinates);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      CAPTURE(geo, c, x[c][1], x[c][2]);
      REQUIRE(d[c] == Approx(std::min({x[c][1], H - x[c][1], x[c][2], H - x[c][2]})).margin(1e-14));
    }
  }
}

TEST_CASE("wall distance: reverse mode against central differences (2D and 3D)",
          "[geometry][mpi]") {
  mesh::Mesh m2, m3;
  test::load(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2,
             {"inlet", "outlet", "walls", "cylinder"}, &m2);
  check_reverse(m2, {"cylinder"});
  test::load(PETSC_COMM_WORLD, "dfg-3d-coarse.geo", 0, 3, {"inlet", "outlet", "walls", "cylinder"},
             &m3);
  check_reverse(m3, {"cylinder"});
}
