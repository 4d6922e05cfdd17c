// io::write_msh (src/io/msh_writer.cpp): the DFG mesh written and read back (on 1 and 2 ranks,
// [mpi]) has the same numbers of cells and vertices, the same total area and the same length
// of every boundary patch (so every boundary face kept its patch), also with moved vertices:
// the re-read mesh of X = X0 + smooth displacement has the area and boundary lengths computed
// on the original mesh at X (to round-off).
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/io/msh_writer.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

namespace {

// total area and the length of each patch (all ranks)
std::vector<double> measures(const mesh::Mesh &m, const std::vector<Vec3<double>> &X) {
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, X, g);
  std::vector<double> s(1 + m.patch_names.size(), 0.0);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) s[0] += g.cell_volume[c];
  for (std::size_t p = 0; p < m.patch_names.size(); ++p)
    for (PetscInt f : m.boundary_faces(static_cast<int>(p))) s[p + 1] += norm(g.face_area[f]);
  MPI_Allreduce(MPI_IN_PLACE, s.data(), static_cast<int>(s.size()), MPI_DOUBLE, MPI_SUM, m.comm);
  return s;
}

} // namespace

TEST_CASE("write_msh: a written mesh reads back with its patches and geometry", "[io][mpi]") {
  const std::vector<std::string> names = {"inlet", "outlet", "walls", "cylinder"};
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, names, &m);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("msh_writer_np" + std::to_string(size));
  std::vector<Vec3<double>> X = m.coordinates;
  for (auto &x : X) x[0] += 0.01 * std::sin(3 * x[1]) * x[0]; // a smooth in-plane deformation
  int k = 0;
  for (const auto *coords : {&m.coordinates, &X}) {
    const std::string path = dir + "/mesh" + std::to_string(k++) + ".msh";
    clear_error();
    REQUIRE(io::write_msh(m, *coords, path) == 0);
    mesh::Mesh back;
    clear_error();
    const PetscErrorCode ierr = mesh::load_mesh(PETSC_COMM_WORLD, path, names, "test", &back);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    CHECK(back.n_global_cells == m.n_global_cells);
    CHECK(back.n_global_vertices == m.n_global_vertices);
    CHECK(back.patch_names.size() == m.patch_names.size());
    const std::vector<double> a = measures(m, *coords), b = measures(back, back.coordinates);
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(k, i, a[i], b[i]);
      CHECK(b[i] == Approx(a[i]).epsilon(1e-12));
    }
  }
}
