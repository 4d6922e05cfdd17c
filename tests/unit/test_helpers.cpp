// Test helpers (see test_helpers.hpp).
#include "test_helpers.hpp"

#include "karman/core/error.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace karman::test {

std::string data_file(const std::string &name) {
  return std::string(KARMAN_TEST_DATA_DIR) + "/" + name;
}

std::string dfg_case_yaml(int level, const std::string &extra) {
  return "mesh: {file: " + mesh_file(PETSC_COMM_WORLD, dfg_geo(), level, 2) + "}\n" +
         dfg_case_sections(extra);
}

std::string dfg_case_sections(const std::string &extra) {
  return R"(fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
objective: {type: drag, walls: [cylinder]}
)" + extra;
}

std::string flat_plate_rans_yaml(const std::string &extra) {
  return std::string("mesh: {file: ") + KARMAN_SOURCE_DIR +
         "/cases/tmr-flat-plate/flat-plate.geo, level: 0}\n" + R"(fluid: {viscosity: 2.0e-7}
reference: {velocity: 1.0, length: 2.0}
initial: {velocity: [1, 0]}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0, direction: [1, 0]}
  outlet: {type: pressure-outlet}
  top: {type: far-field, velocity: [1, 0]}
  symmetry: {type: symmetry}
  wall: {type: wall}
turbulence: {model: sa-neg, freestream_ratio: 3, convection_order: 1}
)" + extra;
}

std::string mesh_file(MPI_Comm comm, const std::string &geo, int level, int dim) {
  const std::string out = std::string(KARMAN_TEST_WORK_DIR) + "/" +
                          std::filesystem::path(geo).stem().string() + "-L" +
                          std::to_string(level) + ".msh";
  int rank;
  MPI_Comm_rank(comm, &rank);
  std::string error;
  if (rank == 0 && !std::filesystem::exists(out)) {
    std::filesystem::create_directories(KARMAN_TEST_WORK_DIR);
    const std::string tmp = out + ".tmp" + std::to_string(::getpid());
    error = mesh::run_gmsh(geo[0] == '/' ? geo : data_file(geo), level, dim, tmp);
    if (error.empty()) std::filesystem::rename(tmp, out);
  }
  int failed = !error.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  INFO(error);
  REQUIRE(failed == 0);
  return out;
}

void load(MPI_Comm comm, const std::string &geo, int level, int dim,
          const std::vector<std::string> &boundaries, mesh::Mesh *mesh) {
  const std::string msh = mesh_file(comm, geo, level, dim);
  clear_error();
  const PetscErrorCode ierr = mesh::load_mesh(comm, msh, boundaries, "test", mesh);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

std::string load_case(const std::string &text, config::CaseConfig *cfg,
                      const std::vector<std::string> &overrides) {
  clear_error();
  const PetscErrorCode ierr =
      config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "case.yaml", "/cases/x", overrides,
                                    optimization::case_schema(), *cfg);
  const std::string message = ierr ? last_error_message() : std::string();
  clear_error();
  return ierr && message.empty() ? "error " + std::to_string(ierr) : message;
}

std::string work_dir(const std::string &name, bool clean) {
  const std::string d = std::string(KARMAN_TEST_WORK_DIR) + "/" + name;
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    if (clean) std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  return d;
}

double relative_residual(Mat A, bool transpose, Vec b, Vec x) {
  Vec r;
  VecDuplicate(b, &r);
  if (transpose)
    MatMultTranspose(A, x, r);
  else
    MatMult(A, x, r);
  VecAYPX(r, -1.0, b);
  PetscReal rn, bn;
  VecNorm(r, NORM_2, &rn);
  VecNorm(b, NORM_2, &bn);
  VecDestroy(&r);
  return rn / bn;
}

double relative_difference(Vec a, Vec b, NormType type) {
  Vec d;
  VecDuplicate(a, &d);
  VecWAXPY(d, -1.0, b, a);
  PetscReal nd, nb;
  VecNorm(d, type, &nd);
  VecNorm(b, type, &nb);
  VecDestroy(&d);
  return nd / nb;
}

Vec3<double> TaylorGreen::velocity(const Vec3<double> &x, double t) {
  const double F = std::exp(-2 * M_PI * M_PI * nu * t);
  return Vec3<double>(-std::cos(M_PI * x[0]) * std::sin(M_PI * x[1]) * F,
                      std::sin(M_PI * x[0]) * std::cos(M_PI * x[1]) * F, 0.0);
}

void TaylorGreen::setup(const std::vector<std::string> &overrides) {
  const std::string yaml =
      "mesh: {file: x.geo}\nfluid: {viscosity: 0.05}\ntime: {mode: unsteady, scheme: bdf2}\n"
      "solver: {rtol: 1e-12, atol: 1e-14}\nboundaries:\n  left: {type: wall}\n  right: {type: "
      "wall}\n  bottom: {type: wall}\n  top: {type: wall}\n";
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "tg.yaml", "/", overrides,
                                        optimization::case_schema(), cfg) == 0);
  load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &mesh);
  REQUIRE(res.setup(mesh, cfg) == 0);
  for (std::size_t p = 0; p < res.boundary_conditions().n_patches(); ++p)
    res.boundary_conditions().patch(static_cast<int>(p)).custom_velocity = velocity;
}

void TaylorGreen::initial_state(Vec w) const {
  PetscScalar *a;
  REQUIRE(VecGetArray(w, &a) == 0);
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    const Vec3<double> u = velocity(res.geometry().cell_centroid[c], 0.0);
    a[3 * c] = 0, a[3 * c + 1] = u[0], a[3 * c + 2] = u[1];
  }
  REQUIRE(VecRestoreArray(w, &a) == 0);
}

} // namespace karman::test
