// Tests of driver/adaptation.cpp, the sizes of an adapted mesh and their way to Gmsh, on DFG 2D-1
// meshed as unstructured triangles (cases/dfg-2d1/dfg-2d-tri.geo, level 0; 1 and 2 ranks):
//  - the sizes give the requested cell count (the bisection), stay within [h/4, 2h] of each cell,
//    and are smaller where the indicator's error density is larger;
//  - the size field written as a Gmsh view and meshed through adapted_geo_text gives a mesh of
//    about the predicted cell count (within 25 %), finer where the sizes are smaller.
#include "karman/core/error.hpp"
#include "karman/driver/adaptation.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace karman;

TEST_CASE("adaptation: sizes for a cell count, and the Gmsh mesh of their size field",
          "[adaptation][mpi]") {
  const std::string dir = test::work_dir("adaptation");
  const std::string geo = std::string(KARMAN_SOURCE_DIR) + "/cases/dfg-2d1/dfg-2d-tri.geo";
  config::CaseConfig cfg;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD,
              "mesh: {file: " + geo + ", cache_dir: " + dir + "}\n" +
                  "boundaries: {inlet: {type: velocity-inlet, velocity: 0.3}, outlet: {type: "
                  "pressure-outlet}, walls: {type: wall}, cylinder: {type: wall}}\n",
              "a.yaml", "/", {}, optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  PetscErrorCode ierr = fc.load(PETSC_COMM_WORLD, cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
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
  REQUIRE(driver::adapted_sizes(fc.residual(), indicator, target, &sizes, &predicted) == 0);
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
  const std::string pos = dir + "/size.pos", adapted = dir + "/adapted.geo";
  REQUIRE(driver::write_size_field(fc.residual(), sizes, pos) == 0);
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string error;
  if (rank == 0) {
    std::ofstream(adapted) << driver::adapted_geo_text(geo, pos, "test");
    error = mesh::run_gmsh(adapted, 0, 2, dir + "/adapted.msh");
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, PETSC_COMM_WORLD);
  INFO(error);
  REQUIRE(failed == 0);
  mesh::Mesh a;
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, dir + "/adapted.msh",
                          {"inlet", "outlet", "walls", "cylinder"}, "test", &a) == 0);
  CAPTURE(m.n_global_cells, a.n_global_cells, predicted);
  CHECK(a.n_global_cells >= 0.75 * predicted);
  CHECK(a.n_global_cells <= 1.25 * predicted);
  // the cylinder's wall has more faces (the sizes there shrank)
  auto wall_faces = [](const mesh::Mesh &mesh) {
    long n = static_cast<long>(mesh.boundary_faces(mesh.patch_index("cylinder")).size());
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
    return n;
  };
  CHECK(wall_faces(a) > wall_faces(m));
}
