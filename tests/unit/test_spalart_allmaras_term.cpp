// The Spalart-Allmaras term (src/discretization/spalart_allmaras_term.cpp):
//  - the case file: the field nu_tilde_ratio after the flow's, its boundary values (0 on walls,
//    freestream_ratio on inlets, none prescribed on outlets and symmetry), the wall distance of the
//    cells (the distance to the wall patch of a unit square: 1 - y for a wall on top), and the
//    one-line refusals of a case without a wall, a negative freestream ratio and an unknown model;
//  - on every face and cell at a smooth state whose chi = nu~/nu takes both signs (the SA-neg
//    branch in some cells): flux_dw and source_dw against central differences (the chain rule
//    through the flow's volume flux and the face diffusion coefficient), flux_reverse and
//    source_reverse against them, the geometry, volume, wall-distance and viscosity adjoints
//    against differences, and every parameter's adjoint (term_check.hpp), with first- and
//    second-order convection; the same for the flow's rows, whose viscous flux and stabilization
//    take nu + nu_t,f (the columns of chi, the transposed stress);
//  - the assembled Jacobian dR/dw against central differences of the residual for random
//    directions (all unknowns, the flow's rows included), on 1 and 2 ranks ([mpi]);
//  - move_to recomputes the wall distance (a translated mesh keeps it, a stretched one scales it).
#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/optimization/case_schema.hpp"
#include "term_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace karman;

namespace {

const char *kPlate = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.01}
initial: {velocity: [1, 0]}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0, direction: [1, 0]}
  right: {type: pressure-outlet}
  bottom: {type: symmetry}
  top: {type: wall}
turbulence:
  freestream_ratio: 3
)";

const std::vector<std::string> kNames = {"left", "right", "bottom", "top"};

/// A smooth state: p, u, v of O(1) and chi in [-1, 7] (negative in some cells).
void sa_state(const discretization::FlowResidual &res, Vec w) {
  PetscScalar *a;
  REQUIRE(VecGetArray(w, &a) == 0);
  const int nv = res.nv();
  for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c) {
    const Vec3<double> &x = res.geometry().cell_centroid[c];
    a[c * nv] = 0.3 * std::sin(2.1 * x[0]) + 0.2 * x[1];
    a[c * nv + 1] = 1.0 + 0.4 * std::cos(1.3 * x[1] + x[0]);
    a[c * nv + 2] = 0.3 * std::sin(1.7 * x[0] - x[1]);
    a[c * nv + 3] = 3.0 + 4.0 * std::sin(3.1 * x[0] + 2.3 * x[1] + 0.5);
  }
  REQUIRE(VecRestoreArray(w, &a) == 0);
}

std::string load_error(const std::string &yaml) {
  config::CaseConfig cfg;
  clear_error();
  PetscErrorCode ierr = config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", "/", {},
                                                      optimization::case_schema(), cfg);
  if (ierr) return last_error_message();
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, kNames, &m);
  discretization::FlowResidual res;
  ierr = res.setup(m, cfg);
  return ierr ? last_error_message() : "";
}

// max over random directions of ||J v - FD(v)|| / ||J v|| at the state of sa_state
double jacobian_fd_error(discretization::FlowResidual &res) {
  Vec w, v, wp, wm, rp, rm, jv;
  Mat J;
  REQUIRE(res.create_state(&w) == 0);
  sa_state(res, w);
  REQUIRE(res.create_jacobian(&J) == 0);
  REQUIRE(res.jacobian(discretization::kSteady, w, J, nullptr) == 0);
  MatInfo info;
  REQUIRE(MatGetInfo(J, MAT_GLOBAL_SUM, &info) == 0);
  REQUIRE(info.mallocs == 0);
  for (Vec *x : {&v, &wp, &wm, &rp, &rm, &jv}) REQUIRE(VecDuplicate(w, x) == 0);
  double worst = 0;
  for (int trial = 0; trial < 3; ++trial) {
    PetscRandom rnd;
    REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
    REQUIRE(PetscRandomSetSeed(rnd, 23 + trial) == 0);
    REQUIRE(PetscRandomSeed(rnd) == 0);
    REQUIRE(VecSetRandom(v, rnd) == 0);
    REQUIRE(PetscRandomDestroy(&rnd) == 0);
    REQUIRE(VecShift(v, -0.5) == 0);
    const double eps = 1e-6;
    REQUIRE(VecWAXPY(wp, eps, v, w) == 0);
    REQUIRE(VecWAXPY(wm, -eps, v, w) == 0);
    REQUIRE(res.residual(discretization::kSteady, wp, rp) == 0);
    REQUIRE(res.residual(discretization::kSteady, wm, rm) == 0);
    REQUIRE(VecAXPY(rp, -1.0, rm) == 0);
    REQUIRE(VecScale(rp, 0.5 / eps) == 0);
    REQUIRE(MatMult(J, v, jv) == 0);
    double njv, diff;
    REQUIRE(VecNorm(jv, NORM_2, &njv) == 0);
    REQUIRE(VecAXPY(rp, -1.0, jv) == 0);
    REQUIRE(VecNorm(rp, NORM_2, &diff) == 0);
    worst = std::max(worst, diff / njv);
  }
  for (Vec *x : {&w, &v, &wp, &wm, &rp, &rm, &jv}) VecDestroy(x);
  MatDestroy(&J);
  return worst;
}

} // namespace

TEST_CASE("SA term: field, boundary values, wall distance and one-line refusals",
          "[turbulence][discretization]") {
  SECTION("the equation set, the boundary values and the wall distance") {
    test::TermProblem p;
    test::make_term_problem(kPlate, "square-mixed.geo", 2, kNames, &p);
    const discretization::FlowResidual &res = p.res;
    CHECK(res.equations().signature() == "pressure:1,velocity:2,nu_tilde_ratio:1");
    REQUIRE(res.terms().size() == 2);
    CHECK(res.equations().field(2).convection_order == 1);
    CHECK(res.equations().field(2).initial == 3.0);
    CHECK(res.equations().transient(3));
    int walls = 0, inlets = 0;
    for (PetscInt f = 0; f < p.mesh.n_flux_faces; ++f) {
      const int patch = p.mesh.face_patch[f];
      if (patch < 0) continue;
      const std::string &name = p.mesh.patch_names[patch];
      CAPTURE(name);
      if (name == "top") {
        CHECK(res.boundary_value(f, 3) == 0.0);
        ++walls;
      }
      if (name == "left") {
        CHECK(res.boundary_value(f, 3) == 3.0);
        ++inlets;
      }
    }
    CHECK(walls > 0);
    CHECK(inlets > 0);
    // the distance to the wall y = 1 of the unit square's cell centroids (exact: the wall is one
    // straight segment)
    REQUIRE(res.wall_distance().size() == static_cast<std::size_t>(p.mesh.n_cells));
    double worst = 0;
    for (PetscInt c = 0; c < p.mesh.n_cells; ++c)
      worst = std::max(
          worst, std::abs(res.wall_distance()[c] - (1.0 - res.geometry().cell_centroid[c][1])));
    CHECK(worst < 1e-14);
    // move_to: a stretch of y by 2 doubles the distances
    std::vector<Vec3<double>> X = res.coordinates();
    for (auto &x : X) x[1] *= 2.0;
    REQUIRE(p.res.move_to(X, "test") == 0);
    worst = 0;
    for (PetscInt c = 0; c < p.mesh.n_cells; ++c)
      worst = std::max(
          worst, std::abs(res.wall_distance()[c] - (2.0 - res.geometry().cell_centroid[c][1])));
    CHECK(worst < 1e-14);
  }
  SECTION("a case without a wall") {
    std::string yaml = kPlate;
    yaml.replace(yaml.find("top: {type: wall}"), 17, "top: {type: symmetry}");
    const std::string msg = load_error(yaml);
    CAPTURE(msg);
    CHECK(msg.find("case.yaml: turbulence: the case has no wall") != std::string::npos);
  }
  SECTION("a negative far-field ratio") {
    std::string yaml = kPlate;
    yaml.replace(yaml.find("freestream_ratio: 3"), 19, "freestream_ratio: -1");
    const std::string msg = load_error(yaml);
    CAPTURE(msg);
    CHECK(msg.find("case.yaml") != std::string::npos);
    CHECK(msg.find("turbulence.freestream_ratio") != std::string::npos);
    CHECK(msg.find(">= 0") != std::string::npos);
  }
  SECTION("an unknown model") {
    std::string yaml = kPlate;
    yaml += "  model: k-omega\n";
    const std::string msg = load_error(yaml);
    CAPTURE(msg);
    CHECK(msg.find("turbulence.model") != std::string::npos);
    CHECK(msg.find("sa-neg") != std::string::npos);
  }
}

TEST_CASE("SA term: derivatives and reverse mode on every face and cell equal differences",
          "[turbulence][discretization][jacobian]") {
  for (const char *order : {"1", "2"}) {
    CAPTURE(order);
    std::string yaml = std::string(kPlate) + "  convection_order: " + order + "\n";
    test::TermProblem p;
    test::make_term_problem(yaml, "square-mixed.geo", 2, kNames, &p);
    REQUIRE(test::term_rows(p.res, 1) == std::pair<int, int>(3, 1));
    Vec w;
    REQUIRE(p.res.create_state(&w) == 0);
    sa_state(p.res, w);
    // both branches of SA-neg occur
    const PetscScalar *a;
    REQUIRE(VecGetArrayRead(w, &a) == 0);
    int negative = 0, positive = 0;
    for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) (a[c * 4 + 3] < 0 ? negative : positive)++;
    REQUIRE(VecRestoreArrayRead(w, &a) == 0);
    CHECK(negative > 0);
    CHECK(positive > negative);
    test::check_term(p, 1, w, false);
    // the flow's rows with the eddy viscosity: their columns of chi (through nu_t,f in the viscous
    // flux and the stabilization coefficient) and chi's adjoint in their reverse mode
    test::check_term(p, 0, w, false);
    VecDestroy(&w);
  }
}

TEST_CASE("SA term: the assembled Jacobian equals differences of the residual",
          "[turbulence][discretization][jacobian][mpi]") {
  for (const char *order : {"1", "2"}) {
    CAPTURE(order);
    std::string yaml = std::string(kPlate) + "  convection_order: " + order + "\n";
    test::TermProblem p;
    test::make_term_problem(yaml, "square-mixed.geo", 2, kNames, &p, 1);
    CHECK(jacobian_fd_error(p.res) < 1e-6);
  }
}
