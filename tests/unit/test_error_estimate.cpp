// Tests of driver/error_estimate.cpp, the adjoint-weighted residual on the nested refinement, on
// DFG 2D-1 level 0 (1 and 2 ranks):
//  - the refined mesh's drag that the estimate predicts, J_h(w) + psi . R_h(w), equals the
//    refined mesh's own Newton solution to within 1 % of the error it estimates (the remainder of
//    the linearization is quadratic in the reconstruction's error);
//  - the cell contributions add up to psi . R_h(w), each indicator bounds its contribution, every
//    cell has its four refined cells, and the estimate is the error against the refined mesh
//    times 4/3 (second order);
//  - Kovasznay flow (Re 40, levels 0 and 1, the exact velocity on the boundaries): the estimated
//    error of the pressure drop between two boundaries against its exact error (the exact
//    pressure is known), and the corrected value's error;
//  - unsteady (DFG 2D-1 from rest, 3 steps): the refined mesh's time-averaged drag that the
//    estimate predicts against the refined mesh's own run;
//  - the nested refinement puts its new wall vertices on the geometry (DFG 2D-1's cylinder), and
//    where that inverts cells (tests/data/thin-ring.geo) on the straight edges instead.
#include "karman/core/error.hpp"
#include "karman/driver/error_estimate.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace karman;

namespace {

/// The DFG 2D-1 case on the channel's .geo (level 0, meshed into the test work directory).
std::string dfg_geo_case() {
  return "mesh: {file: " + test::dfg_geo() +
         ", level: 0, cache_dir: " + test::work_dir("error_estimate_mesh", false) + "}\n" +
         test::dfg_case_sections();
}

/// Loads the case with `overrides` and solves it; J the objective at the solution.
void solve(const std::vector<std::string> &overrides, config::CaseConfig *cfg, driver::FlowCase *fc,
           Vec *w, double *J) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, dfg_geo_case(), "ee.yaml", "/", overrides,
                                        optimization::case_schema(), *cfg) == 0);
  PetscErrorCode ierr = fc->load(PETSC_COMM_WORLD, *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  REQUIRE(fc->create_state(w) == 0);
  REQUIRE(fc->initial_state(*w) == 0);
  driver::SteadySolution sol;
  ierr = fc->solve_steady(*w, nullptr, nullptr, &sol);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  REQUIRE(sol.summary.converged);
  const adjoint::Objective *objective;
  REQUIRE(fc->objective(&objective) == 0);
  discretization::LocalState state;
  REQUIRE(fc->residual().local_state(discretization::kSteady, *w, &state) == 0);
  REQUIRE(objective->value(fc->residual(), state, J) == 0);
}

} // namespace

TEST_CASE("error estimate: the adjoint-weighted residual on the nested refinement predicts the "
          "refined mesh's drag (DFG 2D-1)",
          "[error-estimate][mpi]") {
  config::CaseConfig cfg, cfg_refined;
  driver::FlowCase fc, refined;
  Vec w, wr;
  double J, J_refined;
  solve({}, &cfg, &fc, &w, &J);
  driver::ErrorEstimate e;
  clear_error();
  const PetscErrorCode ierr = driver::estimate_error(fc, w, &e);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  solve({"mesh.refine=1"}, &cfg_refined, &refined, &wr, &J_refined);
  CAPTURE(J, e.J, e.J_reconstructed, e.correction, e.J_refined, J_refined, e.error);
  CHECK(e.J == Approx(J).epsilon(1e-12));
  REQUIRE(e.refined_cells == 4 * fc.mesh().n_global_cells);
  CHECK(e.refined_cells == refined.mesh().n_global_cells);
  CHECK(e.parents_outside == 0);
  // the prediction: within 1 % of the error against the refined mesh (measured: 0.24 %), while
  // the reconstruction alone is off by several times that error
  CHECK(std::abs(e.J_refined - J_refined) <= 0.01 * std::abs(J - J_refined));
  CHECK(std::abs(e.J_reconstructed - J_refined) >= std::abs(J - J_refined));
  CHECK(e.error_refined == Approx(e.J_refined - J).epsilon(1e-12));
  CHECK(e.error == Approx(e.error_refined * 4 / 3).epsilon(1e-12));
  CHECK(e.J_corrected == Approx(J + e.error).epsilon(1e-12));
  // the cells' contributions and indicators
  double sum = 0, indicators = 0;
  bool bounded = true;
  REQUIRE(e.indicator.size() == static_cast<std::size_t>(fc.mesh().n_owned_cells));
  for (PetscInt c = 0; c < fc.mesh().n_owned_cells; ++c) {
    sum += e.contribution[c], indicators += e.indicator[c];
    bounded = bounded && e.indicator[c] >= std::abs(e.contribution[c]) * (1 - 1e-12);
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &indicators, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(bounded);
  CHECK(sum == Approx(e.correction).epsilon(1e-10));
  CHECK(indicators == Approx(e.indicator_sum).epsilon(1e-12));
  CHECK(e.indicator_sum >= std::abs(e.correction));
  VecDestroy(&w);
  VecDestroy(&wr);
}

namespace {

/// Kovasznay flow (Re 40) on the unit-square-like domain of tests/data/kovasznay-tri.geo at
/// `level`: the exact velocity on every boundary of the case and of its refinement.
const char *kKovasznay = R"(
fluid: {viscosity: 0.025}
boundaries:
  west: {type: wall}
  east: {type: wall}
  south: {type: wall}
  north: {type: wall}
objective: {type: pressure-drop, patches: [west, east]}
solver: {rtol: 1e-12, atol: 1e-13}
)";

/// The exact velocity on every boundary of fc.
void set_exact_velocity(driver::FlowCase &fc) {
  auto exact_u = [](const Vec3<double> &x, double) { return test::kovasznay_velocity(x); };
  auto &bcs = fc.residual().boundary_conditions();
  for (std::size_t b = 0; b < bcs.n_patches(); ++b)
    bcs.patch(static_cast<int>(b)).custom_velocity = exact_u;
  fc.residual().parameters_changed();
}

} // namespace

TEST_CASE("error estimate: Kovasznay flow's pressure drop, whose exact value is known",
          "[error-estimate][mpi]") {
  // J = <p>_west - <p>_east; p = (1 - exp(2 lambda x)) / 2 is constant on both (x = -0.5, 1)
  const double exact = test::kovasznay_pressure(Vec3<double>(-0.5, 0, 0)) -
                       test::kovasznay_pressure(Vec3<double>(1, 0, 0));
  for (int level : {0, 1}) {
    CAPTURE(level);
    const std::string yaml = "mesh: {file: " + test::data_file("kovasznay-tri.geo") +
                             ", level: " + std::to_string(level) +
                             ", cache_dir: " + test::work_dir("error_estimate_mesh", false) +
                             "}\n" + kKovasznay;
    config::CaseConfig cfg, cfg_fine;
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "kovasznay.yaml", "/", {},
                                          optimization::case_schema(), cfg) == 0);
    driver::FlowCase fc, fine;
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    set_exact_velocity(fc);
    Vec w;
    REQUIRE(fc.create_state(&w) == 0);
    REQUIRE(fc.initial_state(w) == 0);
    driver::SteadySolution sol;
    PetscErrorCode ierr = fc.solve_steady(w, nullptr, nullptr, &sol);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    REQUIRE(sol.summary.converged);
    ierr = driver::load_refined(fc, &cfg_fine, &fine);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    set_exact_velocity(fine);
    driver::ErrorEstimate e;
    ierr = driver::estimate_error(fc, w, fine, &e);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    const double error = exact - e.J;
    CAPTURE(exact, e.J, e.error, error, e.J_corrected, e.error / error);
    CHECK(e.refined_cells == 4 * fc.mesh().n_global_cells);
    // the effectivity index (measured 0.966, 0.972), and the corrected value against the
    // uncorrected one (29x, 36x closer)
    CHECK(e.error / error >= 0.9);
    CHECK(e.error / error <= 1.1);
    CHECK(std::abs(exact - e.J_corrected) <= 0.1 * std::abs(error));
    VecDestroy(&w);
  }
}

TEST_CASE("error estimate, unsteady: the refined mesh's time-averaged drag along the reconstructed "
          "run (DFG 2D-1 from rest)",
          "[error-estimate][mpi]") {
  const std::vector<std::string> unsteady = {"time.mode=unsteady", "time.dt=0.02",
                                             "time.t_end=0.06", "objective.window=[0.04,0.06]"};
  config::CaseConfig cfg, cfg_fine;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, dfg_geo_case(), "ee.yaml", "/", unsteady,
                                        optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc, fine;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  const std::string dir = test::work_dir("error_estimate_unsteady");
  // the case's run and its gradient, then the estimate
  std::vector<adjoint::UnsteadyAdjointResult> coarse, refined;
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(fc.residual(), cfg) == 0);
  adjoint::UnsteadyAdjointOptions o = fc.unsteady_gradient_options();
  o.trajectory_directory = dir + "/trajectory";
  PetscErrorCode ierr = fc.unsteady_gradient(ua, o, &coarse);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  driver::ErrorEstimate e;
  ierr = driver::estimate_unsteady_error(fc, coarse.front(), dir + "/refined", &e);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  // the refined mesh's own run
  REQUIRE(driver::load_refined(fc, &cfg_fine, &fine) == 0);
  adjoint::UnsteadyAdjoint uf;
  REQUIRE(uf.setup(fine.residual(), cfg_fine) == 0);
  adjoint::UnsteadyAdjointOptions of = fine.unsteady_gradient_options();
  of.forward_only = true;
  ierr = fine.unsteady_gradient(uf, of, &refined);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  const double J = coarse.front().J, J_refined = refined.front().J;
  CAPTURE(J, e.J_reconstructed, e.correction, e.J_refined, J_refined, e.error);
  CHECK(e.J == J);
  CHECK(e.refined_cells == 4 * fc.mesh().n_global_cells);
  // the prediction within 10 % of the error against the refined mesh (measured: 0.4 %), while
  // the reconstruction alone is off by about that error (0.93 of it)
  CHECK(std::abs(e.J_refined - J_refined) <= 0.1 * std::abs(J - J_refined));
  CHECK(std::abs(e.J_reconstructed - J_refined) >= 0.5 * std::abs(J - J_refined));
  CHECK(e.error == Approx(e.error_refined * 4 / 3).epsilon(1e-12));
  double sum = 0;
  for (double c : e.contribution) sum += c;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(sum == Approx(e.correction).epsilon(1e-10));
}

TEST_CASE("error estimate: the nested refinement's new wall vertices on the geometry, or on the "
          "chords where the projection would invert cells",
          "[error-estimate][mpi]") {
  // the largest and smallest distance of the refined cylinder wall's vertices from its centre c
  const auto wall_radii = [](const driver::FlowCase &fc, const Vec3<double> &c, double *lo,
                             double *hi) {
    const mesh::Mesh &m = fc.mesh();
    const auto &X = fc.residual().coordinates();
    *lo = 1e300, *hi = 0;
    for (PetscInt f : m.boundary_faces(m.patch_index("cylinder")))
      for (PetscInt k = m.face_vertex_ptr[f]; k < m.face_vertex_ptr[f + 1]; ++k) {
        const Vec3<double> d = X[m.face_vertex[k]] - c;
        *lo = std::min(*lo, std::sqrt(dot(d, d))), *hi = std::max(*hi, std::sqrt(dot(d, d)));
      }
    MPI_Allreduce(MPI_IN_PLACE, lo, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  };
  {
    INFO("DFG 2D-1: every refined wall vertex on the circle of radius 0.05");
    config::CaseConfig cfg, fine_cfg;
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, dfg_geo_case(), "ee.yaml", "/", {},
                                          optimization::case_schema(), cfg) == 0);
    driver::FlowCase fc, fine;
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    REQUIRE(driver::load_refined(fc, &fine_cfg, &fine) == 0);
    CHECK(fine.mesh().n_global_cells == 4 * fc.mesh().n_global_cells);
    double lo, hi;
    wall_radii(fine, Vec3<double>(0.2, 0.2, 0), &lo, &hi);
    CHECK(lo == Approx(0.05).margin(1e-9));
    CHECK(hi == Approx(0.05).margin(1e-9));
  }
  {
    INFO("thin-ring.geo: projected, the wall's children invert; on the chords they are valid");
    config::CaseConfig cfg, fine_cfg;
    clear_error();
    REQUIRE(config::CaseConfig::load_text(
                PETSC_COMM_WORLD,
                "mesh: {file: " + test::data_file("thin-ring.geo") +
                    ", cache_dir: " + test::work_dir("error_estimate_ring", false) +
                    "}\nboundaries: {farfield: {type: far-field, velocity: [1, 0]}, cylinder: "
                    "{type: wall}}\n",
                "ring.yaml", "/", {}, optimization::case_schema(), cfg) == 0);
    driver::FlowCase fc, fine;
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    const PetscErrorCode ierr = driver::load_refined(fc, &fine_cfg, &fine);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    CHECK_FALSE(mesh::mesh_options().get(fine_cfg).refine_on_geometry);
    CHECK(fine.mesh().n_global_cells == 4 * fc.mesh().n_global_cells);
    geometry::InvalidCells invalid;
    REQUIRE(geometry::find_invalid_cells(fine.mesh(), fine.residual().coordinates(),
                                         fine.residual().geometry(), &invalid) == 0);
    CHECK(invalid.count == 0);
    // the six arcs' midpoints on their chords: 0.05 cos(30 degrees) from the centre
    double lo, hi;
    wall_radii(fine, Vec3<double>(0, 0, 0), &lo, &hi);
    CHECK(lo == Approx(0.05 * std::cos(M_PI / 6)).margin(1e-9));
    CHECK(hi == Approx(0.05).margin(1e-9));
  }
}
