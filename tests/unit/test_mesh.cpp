// Mesh loading and distribution: boundary labels by physical name, boundary sizes, errors for
// names the mesh lacks and for inverted cells, the same partition at every load.  Tagged [mpi]:
// also run on 2 ranks.  (The flattened arrays, ghost layers and numbering: test_mesh_flattening.)
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace karman;

namespace {

const std::vector<std::string> kDfg = {"inlet", "outlet", "walls", "cylinder"};

double global_sum(double x) {
  double s;
  MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return s;
}

} // namespace

TEST_CASE("DFG channel: labels, area and boundary lengths", "[mesh][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 1, 2, kDfg, &m);
  REQUIRE(m.dim == 2);
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, m.coordinates, g);
  REQUIRE(geometry::check_geometry(m, m.coordinates, g, "test") == 0);
  double area = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) area += g.cell_volume[c];
  area = global_sum(area);
  const double exact_area = 2.2 * 0.41 - M_PI * 0.05 * 0.05;
  REQUIRE(std::abs(area - exact_area) / exact_area < 1e-3);
  std::map<std::string, double> length;
  for (std::size_t b = 0; b < m.patch_names.size(); ++b) {
    double s = 0;
    for (PetscInt f : m.patch_faces[b])
      if (m.owned(m.face_left[f])) s += norm(g.face_area[f]);
    length[m.patch_names[b]] = global_sum(s);
  }
  REQUIRE(length["inlet"] == Approx(0.41).epsilon(1e-12));
  REQUIRE(length["outlet"] == Approx(0.41).epsilon(1e-12));
  REQUIRE(length["walls"] == Approx(4.4).epsilon(1e-12));
  REQUIRE(std::abs(length["cylinder"] - 0.1 * M_PI) / (0.1 * M_PI) < 1e-3);
  // boundary faces lie where their names say
  for (PetscInt f : m.patch_faces[m.patch_index("inlet")])
    REQUIRE(std::abs(g.face_centroid[f][0]) < 1e-12);
  for (PetscInt f : m.patch_faces[m.patch_index("cylinder")])
    REQUIRE(norm(g.face_centroid[f] - Vec3<double>(0.2, 0.2, 0)) == Approx(0.05).epsilon(3e-3));
}

TEST_CASE("boundary names are checked against the mesh", "[mesh][mpi]") {
  const std::string msh = test::mesh_file(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2);
  auto error_of = [&](const std::vector<std::string> &names) {
    mesh::Mesh m;
    clear_error();
    const PetscErrorCode ierr = mesh::load_mesh(PETSC_COMM_WORLD, msh, names, "case.yaml", &m);
    return ierr ? last_error_message() : std::string();
  };
  REQUIRE(error_of({"left", "right", "bottom", "top"}).empty());
  REQUIRE_THAT(error_of({"left", "right", "bottom", "top", "inlet"}),
               Catch::Contains("case.yaml: boundaries.inlet") &&
                   Catch::Contains("no boundary named 'inlet'") &&
                   Catch::Contains("bottom, left, right, top"));
  REQUIRE_THAT(error_of({"left", "right", "bottom"}),
               Catch::Contains("mesh boundary top") &&
                   Catch::Contains("has no entry in 'boundaries'"));
  REQUIRE_THAT(error_of({"left", "right", "bottom", "top", "fluid"}),
               Catch::Contains("holds no boundary faces"));
  mesh::Mesh m;
  clear_error();
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, "/nonexistent.msh", {"a"}, "case.yaml", &m) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("/nonexistent.msh: mesh file not found"));
  clear_error();
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, test::data_file("square-mixed.geo"), {"a"}, "case.yaml",
                          &m) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("not a Gmsh .msh file"));
}

TEST_CASE("inverted cells are detected", "[mesh][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &m);
  geometry::Geometry<double> g;
  // (a) the mirrored mesh: every cell inverted
  std::vector<Vec3<double>> X = m.coordinates;
  for (auto &x : X) x[0] = -x[0];
  geometry::compute_geometry(m, X, g);
  clear_error();
  REQUIRE(geometry::check_geometry(m, X, g, "mirrored mesh") != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("mirrored mesh: cell") && Catch::Contains("inverted"));
  clear_error();
  geometry::InvalidCells invalid; // the same test without an error: every cell counted
  REQUIRE(geometry::find_invalid_cells(m, X, g, &invalid) == 0);
  REQUIRE(invalid.count == m.n_global_cells);
  REQUIRE_THAT(invalid.first, Catch::StartsWith("cell ") && Catch::Contains("inverted"));
  geometry::compute_geometry(m, m.coordinates, g);
  REQUIRE(geometry::find_invalid_cells(m, m.coordinates, g, &invalid) == 0);
  REQUIRE(invalid.count == 0);
  REQUIRE(invalid.first.empty());
  // (b) one interior vertex of the quadrilateral block pushed through two rows of cells
  X = m.coordinates;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (norm(X[v] - Vec3<double>(0.75, 0.5, 0)) < 1e-9) X[v][1] += 0.3;
  geometry::compute_geometry(m, X, g);
  clear_error();
  REQUIRE(geometry::check_geometry(m, X, g, "deformed mesh") != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("deformed mesh: cell") &&
                   (Catch::Contains("tangled") || Catch::Contains("inverted")));
}

TEST_CASE("the partition of a mesh is the same at every load", "[mesh][mpi]") {
  // (PT-Scotch's threads and clock-seeded random generator gave another partition at every
  // load: parallel runs, restarts and the Python module's comparisons were not reproducible)
  std::vector<std::vector<PetscInt>> cells, vertices;
  for (int k = 0; k < 3; ++k) {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"},
               &m);
    cells.emplace_back(m.cell_gid.begin(), m.cell_gid.end());
    vertices.emplace_back(m.vertex_gid.begin(), m.vertex_gid.end());
  }
  for (int k = 1; k < 3; ++k) {
    CHECK(cells[k] == cells[0]);
    CHECK(vertices[k] == vertices[0]);
  }
}
