// Tests of driver/adaptation.cpp, the sizes of an adapted mesh and their way to Gmsh, on DFG 2D-1
// meshed as unstructured triangles (cases/dfg-2d1/dfg-2d-tri.geo, level 0; 1 and 2 ranks):
//  - the sizes give the requested cell count (the bisection), stay within [h/4, 2h] of each cell
//    (adapt.max_coarsening 2; with 1 within [h/4, h]),
//    and are smaller where the indicator's error density is larger;
//  - the size field written as a Gmsh view and meshed through adapted_geo_text gives a mesh of
//    about the predicted cell count (within 25 %), finer where the sizes are smaller, and with
//    Gmsh's sizes x 0.8 1/0.8^2 x its cells;
//  - anisotropic metrics of u = 10 y^2 keep each cell's area and stretch the cells along x by
//    adapt.max_aspect_ratio, and BAMG meshes their tensor view with cells stretched along x;
//  - 3D (tests/data/dfg-3d-tet-coarse.geo): the tetrahedral view meshes finer at the cylinder,
//    refine-only sizes, and mesh::count_cells counts the file's cells as the loaded mesh has them.
#include "karman/core/error.hpp"
#include "karman/driver/adaptation.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

using namespace karman;

namespace {

/// DFG 2D-1's (or 3D-1Z's) boundaries on `geo` (meshed in `dim` dimensions into `dir`), loaded.
void load_case(const std::string &geo, const std::string &dir, config::CaseConfig *cfg,
               driver::FlowCase *fc, int dim = 2) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD,
              "mesh: {file: " + geo + ", dimension: " + std::to_string(dim) +
                  ", cache_dir: " + dir + "}\n" +
                  "boundaries: {inlet: {type: velocity-inlet, velocity: 0.3}, outlet: {type: "
                  "pressure-outlet}, walls: {type: wall}, cylinder: {type: wall}}\n",
              "a.yaml", "/", {}, optimization::case_schema(), *cfg) == 0);
  const PetscErrorCode ierr = fc->load(PETSC_COMM_WORLD, *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// The case's .geo `geo` meshed in `dim` dimensions with the view `pos` as its background field
/// and Gmsh's sizes x `size_factor` (adapted_geo_text; rank 0 runs gmsh in `dir`), loaded into *m.
void mesh_adapted(const std::string &geo, const std::string &pos, bool anisotropic,
                  const std::string &dir, mesh::Mesh *m, int dim = 2, double size_factor = 1) {
  const std::string adapted = dir + "/adapted.geo";
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string error;
  if (rank == 0) {
    std::ofstream(adapted) << driver::adapted_geo_text(geo, pos, "test", anisotropic, size_factor);
    error = mesh::run_gmsh(adapted, 0, dim, dir + "/adapted.msh");
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  INFO(error);
  REQUIRE(failed == 0);
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, dir + "/adapted.msh",
                          {"inlet", "outlet", "walls", "cylinder"}, "test", m) == 0);
}

/// The faces of the cylinder's wall of `mesh` (all ranks).
long cylinder_faces(const mesh::Mesh &mesh) {
  long n = static_cast<long>(mesh.boundary_faces(mesh.patch_index("cylinder")).size());
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  return n;
}

} // namespace

TEST_CASE("adaptation: sizes for a cell count, and the Gmsh mesh of their size field",
          "[adaptation][mpi]") {
  const std::string dir = test::work_dir("adaptation");
  const std::string geo = std::string(KARMAN_SOURCE_DIR) + "/cases/dfg-2d1/dfg-2d-tri.geo";
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(geo, dir, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  const auto &V = fc.residual().geometry().cell_volume;
  const auto &xc = fc.residual().geometry().cell_centroid;
  // an error density 1000x larger within 0.1 of the cylinder (x = (0.2, 0.2)) than elsewhere
  auto near = [&](PetscInt c) { return std::hypot(xc[c][0] - 0.2, xc[c][1] - 0.2) < 0.1; };
  std::vector<double> indicator(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    indicator[c] = (near(c) ? 1000.0 : 1.0) * V[c] * V[c];
  const double target = 2.0 * m.n_global_cells;
  std::vector<double> sizes;
  double predicted;
  {
    INFO("adapt.max_coarsening 1: no cell grows, the count still met");
    REQUIRE(driver::adapted_sizes(fc.residual(), indicator, target, 1.0, &sizes, &predicted) == 0);
    CHECK(predicted == Approx(target).epsilon(1e-3));
    const std::vector<double> h = driver::cell_sizes(fc.residual());
    bool refined = true;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c)
      refined = refined && sizes[c] <= h[c] * (1 + 1e-12);
    CHECK(refined);
  }
  REQUIRE(driver::adapted_sizes(fc.residual(), indicator, target, 2.0, &sizes, &predicted) == 0);
  CHECK(predicted == Approx(target).epsilon(1e-3));
  double near_ratio = 0, far_ratio = 1e300;
  bool within = true;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double h = std::sqrt(V[c] / (std::sqrt(3.0) / 4)); // triangles
    within = within && sizes[c] >= h / 4 * (1 - 1e-12) && sizes[c] <= 2 * h * (1 + 1e-12);
    if (near(c))
      near_ratio = std::max(near_ratio, sizes[c] / h);
    else
      far_ratio = std::min(far_ratio, sizes[c] / h);
  }
  MPI_Allreduce(MPI_IN_PLACE, &near_ratio, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &far_ratio, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
  CHECK(within);
  CAPTURE(near_ratio, far_ratio);
  CHECK(near_ratio < far_ratio); // refined near the cylinder, relative to the cells there

  // the view, the .geo that meshes with it, and the mesh
  const std::string pos = dir + "/size.pos";
  REQUIRE(driver::write_size_field(fc.residual(), sizes, pos) == 0);
  mesh::Mesh a;
  mesh_adapted(geo, pos, false, dir, &a);
  CAPTURE(m.n_global_cells, a.n_global_cells, predicted);
  CHECK(a.n_global_cells >= 0.75 * predicted);
  CHECK(a.n_global_cells <= 1.25 * predicted);
  // the cylinder's wall has more faces (the sizes there shrank)
  CHECK(cylinder_faces(a) > cylinder_faces(m));
  // Gmsh's sizes x 0.8 (a cycle meshed again, cli::run_adapt_command): 1 / 0.8^2 = 1.56x the
  // triangles of the same view, within 10 %
  mesh::Mesh b;
  mesh_adapted(geo, pos, false, dir, &b, 2, 0.8);
  const double ratio = static_cast<double>(b.n_global_cells) / a.n_global_cells;
  CAPTURE(a.n_global_cells, b.n_global_cells);
  CHECK(ratio > 1.56 / 1.1);
  CHECK(ratio < 1.56 * 1.1);
  CHECK(driver::adapted_geo_text(geo, pos, "test", false, 0.8)
            .find("Mesh.MeshSizeFactor = Mesh.MeshSizeFactor * 0.8;\n") != std::string::npos);
  CHECK(driver::adapted_geo_text(geo, pos, "test").find("MeshSizeFactor") == std::string::npos);
}

TEST_CASE("adaptation: anisotropic metrics along the velocity's Hessian, meshed by BAMG",
          "[adaptation][mpi]") {
  const std::string dir = test::work_dir("adaptation_aniso");
  const std::string geo = std::string(KARMAN_SOURCE_DIR) + "/cases/dfg-2d1/dfg-2d-tri.geo";
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(geo, dir, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  const auto &V = fc.residual().geometry().cell_volume;
  const auto &xc = fc.residual().geometry().cell_centroid;
  // u = 10 y^2, v = 0: the Hessian of u is diag(0, 20), v's zero: cells thin across y
  Vec w;
  REQUIRE(fc.create_state(&w) == 0);
  PetscScalar *a;
  VecGetArray(w, &a);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) a[3 * c + 1] = 10 * xc[c][1] * xc[c][1];
  VecRestoreArray(w, &a);
  discretization::LocalState state;
  REQUIRE(fc.residual().local_state(discretization::kSteady, w, &state) == 0);
  VecDestroy(&w);
  std::vector<double> sizes(m.n_owned_cells), metric;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) sizes[c] = std::sqrt(V[c] / (std::sqrt(3.0) / 4));
  const double max_aspect = 10;
  REQUIRE(driver::anisotropic_metrics(fc.residual(), state, sizes, max_aspect, &metric) == 0);
  // every metric keeps the cell's area (det M = 1 / h^4); away from the boundaries (whose
  // cells' fits have fewer neighbours) the larger eigenvalue's direction is y and the sizes'
  // ratio at least 3 (up to max_aspect: the fitted Hessian of the quadratic is not exact on
  // irregular triangles; measured: 92 % of the cells)
  long area_kept = 0, aligned = 0, interior = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double xx = metric[3 * c], xy = metric[3 * c + 1], yy = metric[3 * c + 2];
    const double h = sizes[c];
    area_kept += std::abs((xx * yy - xy * xy) * h * h * h * h - 1) < 1e-9;
    const double x = xc[c][0], y = xc[c][1];
    const bool inside =
        y > 0.03 && y < 0.38 && x > 0.03 && x < 2.17 && std::hypot(x - 0.2, y - 0.2) > 0.08;
    if (!inside) continue;
    ++interior;
    // M = m1 e1 e1^T + m2 e2 e2^T with m1 / m2 = r^2: yy / xx = r^2 for e1 = y
    aligned += yy / xx > 9 && std::abs(xy) < 0.2 * yy;
  }
  long counts[3] = {area_kept, aligned, interior};
  MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  CAPTURE(counts[0], counts[1], counts[2], m.n_global_cells);
  CHECK(counts[0] == m.n_global_cells);
  CHECK(counts[1] >= 0.9 * counts[2]);

  // the tensor view meshed by BAMG: about as many cells, stretched along x
  const std::string pos = dir + "/metric.pos";
  REQUIRE(driver::write_metric_field(fc.residual(), metric, pos) == 0);
  mesh::Mesh b;
  mesh_adapted(geo, pos, true, dir, &b);
  // the extents of the interior cells along x and y: their median ratio
  std::vector<double> ratio;
  for (PetscInt c = 0; c < b.n_owned_cells; ++c) {
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (PetscInt k = b.cell_vertex_ptr[c]; k < b.cell_vertex_ptr[c + 1]; ++k)
      for (int d = 0; d < 2; ++d) {
        lo[d] = std::min(lo[d], b.coordinates[b.cell_vertex[k]][d]);
        hi[d] = std::max(hi[d], b.coordinates[b.cell_vertex[k]][d]);
      }
    const double y = 0.5 * (lo[1] + hi[1]), x = 0.5 * (lo[0] + hi[0]);
    if (y > 0.03 && y < 0.38 && std::hypot(x - 0.2, y - 0.2) > 0.08)
      ratio.push_back((hi[0] - lo[0]) / (hi[1] - lo[1]));
  }
  std::sort(ratio.begin(), ratio.end());
  double median = ratio.empty() ? 0 : ratio[ratio.size() / 2];
  MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
  CAPTURE(m.n_global_cells, b.n_global_cells, median);
  CHECK(b.n_global_cells >= 0.75 * m.n_global_cells);
  CHECK(b.n_global_cells <= 1.5 * m.n_global_cells);
  CHECK(median >= 4); // measured 6.7; isotropic triangles: about 1
}

TEST_CASE("adaptation in 3D: the tetrahedral size view meshed by Gmsh, its cells counted",
          "[adaptation][mpi]") {
  // the coarse tetrahedral DFG 3D-1Z channel (tests/data/dfg-3d-tet-coarse.geo, 2 704 cells), the
  // indicator 1000x denser within 0.1 of the cylinder's axis (x = 0.5, y = 0.2): the view of
  // sizes for 2x the cells (refine-only, adapt.max_coarsening 1) meshes with finer cells at the
  // cylinder; mesh::count_cells reads the file's cell count as the loaded mesh has it.  Gmsh makes
  // fewer tetrahedra than the regular ones of the sizes (karman adapt meshes again with scaled
  // sizes: tests/cli/adapt.sh); here the count is only bounded from below by the old mesh's.
  const std::string dir = test::work_dir("adaptation_3d");
  const std::string geo = test::data_file("dfg-3d-tet-coarse.geo");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(geo, dir, &cfg, &fc, 3);
  const mesh::Mesh &m = fc.mesh();
  REQUIRE(m.dim == 3);
  const auto &V = fc.residual().geometry().cell_volume;
  const auto &xc = fc.residual().geometry().cell_centroid;
  auto near = [&](PetscInt c) { return std::hypot(xc[c][0] - 0.5, xc[c][1] - 0.2) < 0.1; };
  std::vector<double> indicator(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    indicator[c] = (near(c) ? 1000.0 : 1.0) * std::pow(V[c], 5.0 / 3.0);
  const double target = 2.0 * m.n_global_cells;
  std::vector<double> sizes;
  double predicted;
  REQUIRE(driver::adapted_sizes(fc.residual(), indicator, target, 1.0, &sizes, &predicted) == 0);
  CHECK(predicted == Approx(target).epsilon(1e-3));
  const std::vector<double> h = driver::cell_sizes(fc.residual());
  // (the mean refinement s / h near the cylinder and away from it: the cells there are finer
  // already, so some keep their size, h' = min(C eps^(-1/5), h))
  double sums[4] = {0, 0, 0, 0}; // near: sum s / h, count; far: sum, count
  bool refined = true;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    refined = refined && sizes[c] <= h[c] * (1 + 1e-12);
    const int k = near(c) ? 0 : 2;
    sums[k] += sizes[c] / h[c], sums[k + 1] += 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(refined);
  const double near_mean = sums[0] / sums[1], far_mean = sums[2] / sums[3];
  CAPTURE(near_mean, far_mean);
  CHECK(near_mean < far_mean);
  const std::string pos = dir + "/size.pos";
  REQUIRE(driver::write_size_field(fc.residual(), sizes, pos) == 0);
  mesh::Mesh a;
  mesh_adapted(geo, pos, false, dir, &a, 3);
  long counted = 0;
  REQUIRE(mesh::count_cells(PETSC_COMM_WORLD, dir + "/adapted.msh", &counted) == 0);
  CAPTURE(m.n_global_cells, a.n_global_cells, predicted);
  CHECK(counted == a.n_global_cells);
  CHECK(a.n_global_cells > m.n_global_cells);
  CHECK(a.n_global_cells <= 1.25 * predicted);
  CHECK(cylinder_faces(a) > cylinder_faces(m));
}
