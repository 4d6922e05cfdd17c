// Tests of io/nested_transfer.cpp: values on the nested refinement of a mesh (mesh.refine).
//  - every cell of a mesh is the parent of exactly 4 (2D) or 8 (3D) cells of its refinement by
//    Gmsh's RefineMesh: triangles and quadrilaterals, a curved wall whose new vertices move onto
//    the circle, tetrahedra, prisms and hexahedra; 1 and 2 ranks;
//  - the reconstruction is exact for linear fields;
//  - NestedParents (the parents as a star forest) reconstructs the same values and sums the
//    children's values onto their parents.
#include "karman/core/error.hpp"
#include "karman/io/nested_transfer.hpp"
#include "karman/mesh/gmsh_mesher.hpp"

#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

using namespace karman;

namespace {

/// tests/data/<geo> meshed at level 0 and refined `refine` times, loaded on PETSC_COMM_WORLD.
void load_refined(const std::string &geo, int dim, int refine,
                  const std::vector<std::string> &boundaries, mesh::Mesh *m) {
  const std::string dir = test::work_dir("nested_transfer", false);
  const std::string msh = dir + "/" + std::filesystem::path(geo).stem().string() + "-r" +
                          std::to_string(refine) + ".msh";
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string error;
  if (rank == 0 && !std::filesystem::exists(msh)) {
    const std::string tmp = msh + ".tmp";
    error = mesh::run_gmsh(test::data_file(geo), 0, dim, tmp, refine);
    if (error.empty()) std::filesystem::rename(tmp, msh);
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  INFO(error);
  REQUIRE(failed == 0);
  clear_error();
  const PetscErrorCode ierr = mesh::load_mesh(PETSC_COMM_WORLD, msh, boundaries, "test", m);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// The average of a cell's vertices (inside the cell: convex cells).
std::vector<Vec3<double>> vertex_averages(const mesh::Mesh &m) {
  std::vector<Vec3<double>> x(m.n_cells);
  for (PetscInt c = 0; c < m.n_cells; ++c) {
    const PetscInt v0 = m.cell_vertex_ptr[c], n = m.cell_vertex_ptr[c + 1] - v0;
    for (PetscInt k = 0; k < n; ++k) x[c] += m.coordinates[m.cell_vertex[v0 + k]];
    x[c] *= 1.0 / static_cast<double>(n);
  }
  return x;
}

void check_nested(const std::string &geo, int dim, const std::vector<std::string> &boundaries) {
  INFO(geo);
  mesh::Mesh coarse, fine;
  load_refined(geo, dim, 0, boundaries, &coarse);
  load_refined(geo, dim, 1, boundaries, &fine);
  const int children = dim == 2 ? 4 : 8;
  REQUIRE(fine.n_global_cells == children * coarse.n_global_cells);
  // two fields, linear in x: f0 = 1 + 2x - 3y + 0.5z, f1 = -x + 4y + 2z
  const double a[2][4] = {{1, 2, -3, 0.5}, {0, -1, 4, 2}};
  const auto xc = vertex_averages(coarse), xf = vertex_averages(fine);
  std::vector<double> values, grads;
  for (PetscInt c = 0; c < coarse.n_cells; ++c)
    for (const auto &f : a) {
      values.push_back(f[0] + f[1] * xc[c][0] + f[2] * xc[c][1] + f[3] * xc[c][2]);
      for (int d = 0; d < 3; ++d) grads.push_back(d < dim ? f[1 + d] : 0.0);
    }
  io::NestedTransfer t;
  clear_error();
  REQUIRE(io::transfer_nested(coarse, coarse.coordinates, xc, 2, values, grads, fine, xf, &t) == 0);
  CHECK(t.outside == 0);
  double worst = 0;
  std::vector<long> count(coarse.n_global_cells, 0);
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c) {
    for (int k = 0; k < 2; ++k) {
      const auto &f = a[k];
      const double exact = f[0] + f[1] * xf[c][0] + f[2] * xf[c][1] + (dim == 3) * f[3] * xf[c][2];
      worst = std::max(worst, std::abs(t.values[2 * c + k] - exact));
    }
    REQUIRE(t.parent[c] >= 0);
    REQUIRE(t.parent[c] < coarse.n_global_cells);
    ++count[t.parent[c]];
  }
  MPI_Allreduce(MPI_IN_PLACE, count.data(), static_cast<int>(count.size()), MPI_LONG, MPI_SUM,
                PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  CHECK(worst <= 1e-12);
  std::map<long, long> histogram; // children per parent -> parents
  for (long n : count) ++histogram[n];
  CAPTURE(histogram.size(), histogram.begin()->first, histogram.rbegin()->first);
  REQUIRE(histogram.size() == 1);
  REQUIRE(histogram.begin()->first == children);
  // the parents as a star forest: the same reconstruction (with other values: the fields
  // doubled), and the children's sums per parent (each child 1 and its parent's global index)
  io::NestedParents parents;
  REQUIRE(parents.setup(coarse, fine, t.parent) == 0);
  for (double &v : values) v *= 2;
  for (double &g : grads) g *= 2;
  std::vector<double> again, ones(2 * fine.n_owned_cells), sums;
  REQUIRE(parents.reconstruct(xc, 2, values, grads, xf, &again) == 0);
  REQUIRE(again.size() == t.values.size());
  double differ = 0;
  for (std::size_t i = 0; i < again.size(); ++i)
    differ = std::max(differ, std::abs(again[i] - 2 * t.values[i]));
  CHECK(differ <= 1e-12);
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c)
    ones[2 * c] = 1, ones[2 * c + 1] = static_cast<double>(t.parent[c]);
  REQUIRE(parents.sum_to_parents(2, ones, &sums) == 0);
  REQUIRE(sums.size() == 2 * static_cast<std::size_t>(coarse.n_owned_cells));
  bool summed = true;
  for (PetscInt c = 0; c < coarse.n_owned_cells; ++c)
    summed = summed && sums[2 * c] == children &&
             sums[2 * c + 1] == static_cast<double>(children * coarse.cell_global[c]);
  CHECK(summed);
}

} // namespace

TEST_CASE("nested transfer: every cell is the parent of its 4 or 8 refined cells, and linear "
          "fields are reconstructed exactly",
          "[nested-transfer][mpi]") {
  check_nested("square-mixed.geo", 2, {"bottom", "right", "top", "left"});
  check_nested("annulus.geo", 2, {"inner", "outer"}); // new wall vertices on the circles
  check_nested("box-tet.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"});
  check_nested("box-prism.geo", 3, {"zmin", "zmax", "sides"});
  check_nested("box-hex.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"});
}

TEST_CASE("nested transfer: the refined annulus's new wall vertices lie on the circles",
          "[nested-transfer]") {
  mesh::Mesh coarse, fine;
  load_refined("annulus.geo", 2, 0, {"inner", "outer"}, &coarse);
  load_refined("annulus.geo", 2, 1, {"inner", "outer"}, &fine);
  // the radii of the walls' vertices: the same two on both meshes (the midpoints of the chords
  // would lie inside the circles)
  auto radii = [](const mesh::Mesh &m, const std::string &patch, double *lo, double *hi) {
    *lo = 1e300, *hi = 0;
    const int p = m.patch_index(patch);
    for (PetscInt f : m.patch_faces[p])
      for (PetscInt k = m.face_vertex_ptr[f]; k < m.face_vertex_ptr[f + 1]; ++k) {
        const auto &x = m.coordinates[m.face_vertex[k]];
        const double r = std::hypot(x[0], x[1]);
        *lo = std::min(*lo, r), *hi = std::max(*hi, r);
      }
    MPI_Allreduce(MPI_IN_PLACE, lo, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  };
  for (const char *patch : {"inner", "outer"}) {
    double clo, chi, flo, fhi;
    radii(coarse, patch, &clo, &chi);
    radii(fine, patch, &flo, &fhi);
    CAPTURE(patch, clo, chi, flo, fhi);
    CHECK(chi - clo <= 1e-12 * chi);
    CHECK(flo == Approx(clo).epsilon(1e-12));
    CHECK(fhi == Approx(chi).epsilon(1e-12));
  }
}
