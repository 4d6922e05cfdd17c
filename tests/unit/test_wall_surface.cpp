// The walls gathered into one surface (gather_wall_surface) on the DFG channel's cylinder: every
// rank holds the whole circle with its vertices by increasing serial index at their reference
// coordinates, one segment per vertex (a closed curve), unit normals out of the body (radial),
// and the map from local vertices to surface vertices.  Tagged [mpi]: the same on 2 ranks.
#include "karman/design/wall_surface.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

TEST_CASE("the cylinder's wall surface: whole on every rank, sorted, normals out of the body",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"}, &m);
  const Vec3<double> centre(0.2, 0.2, 0.0);
  design::WallSurface s;
  REQUIRE(design::gather_wall_surface(m, m.coordinates, {m.patch_index("cylinder")}, &s) == 0);
  const std::size_t n = s.gid.size();
  REQUIRE(n > 8);
  REQUIRE(s.x.size() == n);
  REQUIRE(s.normal.size() == n);
  // a closed curve: as many segments as vertices, each vertex in two of them
  REQUIRE(s.face_ptr.size() == n + 1);
  REQUIRE(s.face_vertex.size() == 2 * n);
  std::vector<int> uses(n, 0);
  for (int v : s.face_vertex) ++uses.at(v);
  CHECK(uses == std::vector<int>(n, 2));
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    if (i > 0) CHECK(s.gid[i] > s.gid[i - 1]);
    CHECK(std::abs(norm(s.x[i] - centre) - 0.05) < 1e-6);
    const Vec3<double> radial = (1.0 / norm(s.x[i] - centre)) * (s.x[i] - centre);
    CHECK(norm(s.normal[i]) == Approx(1.0).epsilon(1e-14));
    CHECK(dot(s.normal[i], radial) > 0.99);
  }
  // every rank gathered the same surface
  PetscInt count = static_cast<PetscInt>(n), min_count = 0, max_count = 0;
  MPI_Allreduce(&count, &min_count, 1, MPIU_INT, MPI_MIN, PETSC_COMM_WORLD);
  MPI_Allreduce(&count, &max_count, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD);
  CHECK(min_count == max_count);
  // local vertices on the cylinder map to the surface vertex of the same serial index
  REQUIRE(s.of_local.size() == static_cast<std::size_t>(m.n_vertices));
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const bool on_wall = std::abs(norm(m.coordinates[v] - centre) - 0.05) < 1e-6;
    CAPTURE(v);
    CHECK((s.of_local[v] >= 0) == on_wall);
    if (s.of_local[v] >= 0) {
      CHECK(s.gid[s.of_local[v]] == m.vertex_gid[v]);
      CHECK(norm(s.x[s.of_local[v]] - m.coordinates[v]) == 0.0);
    }
  }
}
