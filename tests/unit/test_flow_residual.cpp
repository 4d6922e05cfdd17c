// The residual and its exact Jacobian (src/discretization/flow_residual.cpp):
//  - dR/dw (assembled) times random directions equals central finite differences of the
//    residual to 1e-6 (2D DFG channel with inlet/outlet/walls, blended convection, a passive
//    scalar, far-field cylinder, a pinned-pressure all-Dirichlet box, a 3D hexahedral channel with
//    a slip wall, 3D tetrahedra (inflow, outflow, moving wall, symmetry, far field), prisms, a
//    tetrahedral box with an obstacle in a far field, and the DFG 3D-1Z channel in unstructured,
//    unoptimized tetrahedra with non-orthogonality near 70 degrees); the preallocation is exact;
//    the block (BAIJ) and point (AIJ) formats and the compact matrix agree; the adjoints' block
//    transpose equals PETSc's transposed product; on 1 and 2 ranks ([mpi]);
//  - time is an argument: residuals and Jacobians of two time levels in alternation equal those
//    computed fresh; a parameter or a time function changed is seen at the same level;
//  - the BDF time term: R with TimeTerm{a0, h} minus R is rho V (a0 w + h) on the transient rows
//    only (not on continuity), and J with a transient shift s is J + diag(s) on those rows;
//  - the pinned pressure level (no pressure boundary): row 0 of R is p_0 and row 0 of J is e_0;
//    with an outlet nothing is pinned;
//  - move_to: a rigid translation of the mesh leaves R unchanged and moves the centroids, a move
//    that inverts the cells is refused with the caller's context in the message, and moving back
//    gives the first residual again.
#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/geometry/mesh_quality.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/block_transpose.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace karman;

namespace {

struct Problem {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

void make_problem(const std::string &case_yaml, const std::string &geo, int level, int dim,
                  const std::vector<std::string> &boundaries, Problem *p) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, case_yaml, "test.yaml", "/", {},
                                        optimization::case_schema(), p->cfg) == 0);
  test::load(PETSC_COMM_WORLD, geo, level, dim, boundaries, &p->mesh);
  const PetscErrorCode ierr = p->res.setup(p->mesh, p->cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

// A smooth state with O(1) variation: the same on every rank (function of the centroid).
void smooth_state(Problem &p, Vec w, double scale) {
  PetscScalar *a;
  REQUIRE(VecGetArray(w, &a) == 0);
  const int nv = p.res.nv();
  for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) {
    const Vec3<double> &x = p.res.geometry().cell_centroid[c];
    a[c * nv] = scale * (0.3 * std::sin(2.1 * x[0]) + 0.2 * x[1]);
    a[c * nv + 1] = scale * (1.0 + 0.4 * std::cos(1.3 * x[1] + x[0]));
    a[c * nv + 2] = scale * (0.3 * std::sin(1.7 * x[0] - x[1]));
    if (nv > 3) a[c * nv + 3] = scale * 0.2 * std::cos(x[2] + x[0]);
    if (nv == 5) a[c * nv + 4] = scale * (0.5 + 0.3 * std::sin(x[1] - 2 * x[2]));
  }
  REQUIRE(VecRestoreArray(w, &a) == 0);
}

// max over random directions of ||J v - FD(v)|| / ||J v||
double jacobian_fd_error(Problem &p, double scale) {
  Vec w, v, wp, wm, rp, rm, jv;
  Mat J;
  REQUIRE(p.res.create_state(&w) == 0);
  smooth_state(p, w, scale);
  REQUIRE(p.res.create_jacobian(&J) == 0);
  REQUIRE(p.res.jacobian(discretization::kSteady, w, J, nullptr) == 0);
  // the preallocation was exact: no new nonzeros were needed (MAT_NEW_NONZERO_ALLOCATION_ERR is on)
  MatInfo info;
  REQUIRE(MatGetInfo(J, MAT_GLOBAL_SUM, &info) == 0);
  REQUIRE(info.mallocs == 0);
  for (Vec *x : {&v, &wp, &wm, &rp, &rm, &jv}) REQUIRE(VecDuplicate(w, x) == 0);
  // the same values in the block (BAIJ) format, and the compact matrix in both formats: J v
  // and P v agree to round-off (the values are written in place, format by format)
  {
    using Format = discretization::FlowResidual::MatrixFormat;
    Mat Jb, P, Pb;
    REQUIRE(p.res.create_jacobian(&Jb, false, Format::Block) == 0);
    REQUIRE(p.res.create_jacobian(&P, true) == 0);
    REQUIRE(p.res.create_jacobian(&Pb, true, Format::Block) == 0);
    std::vector<double> shift(p.mesh.n_owned_cells, 0.25 * scale);
    REQUIRE(p.res.jacobian(discretization::kSteady, w, Jb, nullptr) == 0);
    REQUIRE(p.res.jacobian(discretization::kSteady, w, P, &shift, true) == 0);
    REQUIRE(p.res.jacobian(discretization::kSteady, w, Pb, &shift, true) == 0);
    REQUIRE(VecSetRandom(v, nullptr) == 0);
    for (auto [A, B] : {std::pair<Mat, Mat>{J, Jb}, {P, Pb}}) {
      REQUIRE(MatMult(A, v, jv) == 0);
      REQUIRE(MatMult(B, v, rp) == 0);
      CHECK(test::relative_difference(rp, jv, NORM_2) <= 1e-14);
    }
    // the adjoints' products with J^T (solver::create_block_transpose, karman's kernels on the
    // block matrix; ghost block columns added to their owners on 2 ranks) equal PETSc's
    // transposed product of the point matrix, and the shell's transpose is J again
    Mat JbT;
    REQUIRE(solver::create_block_transpose(Jb, &JbT) == 0);
    for (const bool transpose : {false, true}) {
      CAPTURE(transpose);
      REQUIRE((transpose ? MatMult(J, v, jv) : MatMultTranspose(J, v, jv)) == 0);
      REQUIRE((transpose ? MatMultTranspose(JbT, v, rp) : MatMult(JbT, v, rp)) == 0);
      CHECK(test::relative_difference(rp, jv, NORM_2) <= 1e-14);
    }
    // (J is not symmetric: J v differs from J^T v)
    REQUIRE(MatMultTranspose(J, v, jv) == 0);
    REQUIRE(MatMult(J, v, rp) == 0);
    CHECK(test::relative_difference(rp, jv, NORM_2) > 1e-3);
    for (Mat *A : {&Jb, &P, &Pb, &JbT}) MatDestroy(A);
  }
  double worst = 0;
  for (int trial = 0; trial < 3; ++trial) {
    PetscRandom rnd;
    REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
    REQUIRE(PetscRandomSetSeed(rnd, 17 + trial) == 0);
    REQUIRE(PetscRandomSeed(rnd) == 0);
    REQUIRE(VecSetRandom(v, rnd) == 0);
    REQUIRE(PetscRandomDestroy(&rnd) == 0);
    REQUIRE(VecShift(v, -0.5) == 0);
    const double eps = 1e-6 * scale;
    REQUIRE(VecWAXPY(wp, eps, v, w) == 0);
    REQUIRE(VecWAXPY(wm, -eps, v, w) == 0);
    REQUIRE(p.res.residual(discretization::kSteady, wp, rp) == 0);
    REQUIRE(p.res.residual(discretization::kSteady, wm, rm) == 0);
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

const char *kDfgCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, omega: 0.7, center: [0.2, 0.2]}
)";

// The box of tetrahedra with every kind of flow boundary.
const char *kBoxTetCase = R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.05}
boundaries:
  xmin: {type: velocity-inlet, velocity: 1.0, direction: [1, 0, 0]}
  xmax: {type: pressure-outlet}
  ymin: {type: wall}
  ymax: {type: wall, velocity: [0.3, 0, 0.1]}
  zmin: {type: symmetry}
  zmax: {type: far-field, velocity: [1, 0.1, 0.2]}
)";

// The square channel of prisms (box-prism.geo): walls, inflow, outflow.
const char *kBoxPrismCase = R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.05}
boundaries:
  sides: {type: wall}
  zmin: {type: velocity-inlet, velocity: 1.0, direction: [0, 0, 1]}
  zmax: {type: pressure-outlet}
)";

} // namespace

TEST_CASE("assembled Jacobian equals finite differences of the residual",
          "[discretization][jacobian][mpi]") {
  SECTION("DFG channel: inlet, outlet, walls, rotating cylinder") {
    Problem p;
    make_problem(kDfgCase, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"}, &p);
    REQUIRE(jacobian_fd_error(p, 0.3) < 1e-6);
  }
  SECTION("DFG channel, convection blended with the centred mean (solver.upwind 0.25)") {
    Problem p;
    make_problem(std::string(kDfgCase) + "solver: {upwind: 0.25}\n", test::dfg_geo(), 0, 2,
                 {"inlet", "outlet", "walls", "cylinder"}, &p);
    REQUIRE(jacobian_fd_error(p, 0.3) < 1e-6);
  }
  SECTION("DFG channel with a passive scalar: value, flux and outflow boundaries, source, decay") {
    Problem p;
    make_problem(std::string(kDfgCase) + R"(scalar:
  diffusivity: 0.01
  source: 0.5
  decay: 0.3
  boundaries:
    inlet: {type: value, value: 0.2}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.1}
    outlet: {type: outflow}
)",
                 test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"}, &p);
    REQUIRE(p.res.nv() == 4);
    REQUIRE(jacobian_fd_error(p, 0.3) < 1e-6);
  }
  SECTION("unbounded cylinder: far field") {
    Problem p;
    make_problem(R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.025}
boundaries:
  cylinder: {type: wall}
  farfield: {type: far-field, velocity: [1, 0.1]}
)",
                 std::string(KARMAN_SOURCE_DIR) + "/cases/cylinder-unbounded/cylinder.geo", 0, 2,
                 {"cylinder", "farfield"}, &p);
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
  }
  SECTION("all-Dirichlet square (pinned pressure), blowing patch") {
    Problem p;
    make_problem(R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0}
  right: {type: blowing-suction, amplitude: -1.0}
  bottom: {type: wall, velocity: [0.5, 0]}
  top: {type: wall}
)",
                 "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &p);
    REQUIRE(p.res.pressure_pinned());
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
  }
  SECTION("3D hexahedral channel with a slip wall") {
    Problem p;
    make_problem(R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.05}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0, direction: [1, 0, 0], profile: parabolic, profile_axis: y, profile_range: [0, 1]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  top: {type: symmetry}
)",
                 "channel-3d.geo", 0, 3, {"inlet", "outlet", "walls", "top"}, &p);
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
  }
  SECTION("3D tetrahedra: inflow, outflow, walls, a translating wall, symmetry") {
    Problem p;
    make_problem(kBoxTetCase, "box-tet.geo", 0, 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"},
                 &p);
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
  }
  SECTION("3D prisms and a tetrahedral obstacle channel") {
    Problem p;
    make_problem(kBoxPrismCase, "box-prism.geo", 0, 3, {"sides", "zmin", "zmax"}, &p);
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
    Problem q;
    make_problem(R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.02}
boundaries:
  outer: {type: far-field, velocity: [1, 0.2, 0]}
  obstacle: {type: wall}
)",
                 "box-obstacle.geo", 0, 3, {"outer", "obstacle"}, &q);
    REQUIRE(jacobian_fd_error(q, 1.0) < 1e-6);
  }
  SECTION("3D tetrahedra with a passive scalar") {
    Problem p;
    make_problem(std::string(kBoxTetCase) + R"(scalar:
  diffusivity: 0.02
  decay: 0.1
  boundaries:
    xmin: {type: value, value: 0}
    xmax: {type: outflow}
    ymin: {type: value, value: 1}
    ymax: {type: flux, flux: -0.2}
    zmin: {type: flux}
    zmax: {type: value, value: 0.5}
)",
                 "box-tet.geo", 0, 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}, &p);
    REQUIRE(p.res.nv() == 5);
    REQUIRE(jacobian_fd_error(p, 1.0) < 1e-6);
  }
  SECTION("3D unstructured tetrahedra without optimization: the DFG 3D-1Z channel (issue 42)") {
    Problem p;
    make_problem(test::kDfg3dChannel, "dfg-3d-tet-coarse.geo", 0, 3,
                 {"inlet", "outlet", "walls", "cylinder"}, &p);
    // the mesh has the cells this section is about: faces near 70 degrees from their cells' line
    const geometry::CellQuality q = geometry::compute_quality(p.mesh, p.res.geometry());
    geometry::QualitySummary qs;
    REQUIRE(geometry::summarize_quality(p.mesh, p.res.geometry(), q, &qs) == 0);
    CAPTURE(qs.max_non_orthogonality);
    REQUIRE(qs.max_non_orthogonality > 65);
    REQUIRE(jacobian_fd_error(p, 0.3) < 1e-6);
  }
}

namespace {

// the DFG channel with blowing walls of amplitude 0.002 sin(2 pi t): R depends on t
const std::string kTimeCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 2.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet, pressure: 0.1}
  walls: {type: blowing-suction, amplitude: {type: sine, amplitude: 0.002, frequency: 1}}
  cylinder: {type: wall, omega: 0.5, velocity: [0.01, 0.02], center: [0.2, 0.2]}
)";

struct Setup {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

void make(Setup *s) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kTimeCase, "par.yaml", "/", {},
                                        optimization::case_schema(), s->cfg) == 0);
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"},
             &s->mesh);
  REQUIRE(s->res.setup(s->mesh, s->cfg) == 0);
}

} // namespace

namespace {

/// R(w) of s.res at `level` into a new vector.
Vec residual_at(Setup &s, Vec w, const discretization::TimeLevel &level) {
  Vec R;
  REQUIRE(s.res.create_state(&R) == 0);
  REQUIRE(s.res.residual(level, w, R) == 0);
  return R;
}

/// max |a - b|.
double max_difference(Vec a, Vec b) {
  Vec d;
  VecDuplicate(a, &d);
  VecWAXPY(d, -1.0, b, a);
  PetscReal n;
  VecNorm(d, NORM_INFINITY, &n);
  VecDestroy(&d);
  return n;
}

} // namespace

TEST_CASE("FlowResidual: time is an argument -- residuals and Jacobians of two time levels in "
          "alternation equal those computed fresh",
          "[discretization][mpi]") {
  // the blowing walls' amplitude 0.002 sin(2 pi t) makes R depend on t
  const discretization::TimeLevel a{0.1, 1}, b{0.35, 2};
  Setup fa, fb, s;
  make(&fa), make(&fb), make(&s);
  Vec w;
  REQUIRE(s.res.create_state(&w) == 0);
  REQUIRE(VecSet(w, 0.1) == 0);
  Vec Ra = residual_at(fa, w, a), Rb = residual_at(fb, w, b);
  CHECK(max_difference(Ra, Rb) > 1e-6); // the two levels differ
  for (int round = 0; round < 2; ++round) {
    Vec R1 = residual_at(s, w, a), R2 = residual_at(s, w, b);
    CHECK(max_difference(R1, Ra) == 0.0);
    CHECK(max_difference(R2, Rb) == 0.0);
    VecDestroy(&R1), VecDestroy(&R2);
  }
  // a local state keeps its level: its Jacobian after a residual of the other level
  Mat Ja, J;
  REQUIRE(fa.res.create_jacobian(&Ja) == 0);
  REQUIRE(s.res.create_jacobian(&J) == 0);
  REQUIRE(fa.res.jacobian(a, w, Ja, nullptr) == 0);
  discretization::LocalState state;
  REQUIRE(s.res.local_state(a, w, &state) == 0);
  CHECK(state.level.t == a.t);
  CHECK(state.level.n == a.n);
  Vec R = residual_at(s, w, b);
  REQUIRE(s.res.jacobian(state, J, nullptr) == 0);
  REQUIRE(MatAXPY(J, -1.0, Ja, SAME_NONZERO_PATTERN) == 0);
  PetscReal jn;
  REQUIRE(MatNorm(J, NORM_FROBENIUS, &jn) == 0);
  CHECK(jn == 0.0);
  // a parameter set at the same level: the boundary values follow
  const discretization::ParameterRegistry reg(s.res);
  REQUIRE(reg.set(s.res, "boundaries.inlet.velocity", 0.6) == 0);
  REQUIRE(reg.set(fa.res, "boundaries.inlet.velocity", 0.6) == 0);
  Vec R1 = residual_at(s, w, a), R2 = residual_at(fa, w, a);
  CHECK(max_difference(R1, Ra) > 1e-6);
  CHECK(max_difference(R1, R2) == 0.0);
  VecDestroy(&R1), VecDestroy(&R2);
  // a time function changed through its pointer (no setter): seen at the same level too
  *reg.time_function(s.res, reg.find("boundaries.walls.amplitude")) =
      physics::TimeFunction::sine(0.004, 1.0, 0.0, 0.0);
  *reg.time_function(fa.res, reg.find("boundaries.walls.amplitude")) =
      physics::TimeFunction::sine(0.004, 1.0, 0.0, 0.0);
  R1 = residual_at(s, w, a), R2 = residual_at(fa, w, a);
  Vec R3 = residual_at(s, w, b);
  CHECK(max_difference(R1, R2) == 0.0);
  CHECK(max_difference(R3, Rb) > 1e-6);
  VecDestroy(&R1), VecDestroy(&R2), VecDestroy(&R3), VecDestroy(&R);
  MatDestroy(&Ja), MatDestroy(&J);
  VecDestroy(&Ra), VecDestroy(&Rb), VecDestroy(&w);
}

namespace {

// the unit square with a passive scalar: a flow and a scalar row per cell, both transient
const char *kSquareScalar = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05, density: 1.3}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0}
  right: {type: pressure-outlet}
  bottom: {type: wall}
  top: {type: symmetry}
scalar:
  diffusivity: 0.1
  boundaries:
    left: {type: value, value: 1}
    right: {type: outflow}
    bottom: {type: flux, flux: 0.2}
    top: {type: outflow}
)";

/// Owned entries of a vector.
std::vector<double> owned_values(Vec v) {
  const PetscScalar *a;
  PetscInt n;
  REQUIRE(VecGetLocalSize(v, &n) == 0);
  REQUIRE(VecGetArrayRead(v, &a) == 0);
  std::vector<double> out(a, a + n);
  REQUIRE(VecRestoreArrayRead(v, &a) == 0);
  return out;
}

} // namespace

TEST_CASE("FlowResidual: the BDF time term and the transient shift act on the transient rows only",
          "[discretization][mpi]") {
  Problem p;
  make_problem(kSquareScalar, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &p);
  const int nv = p.res.nv();
  REQUIRE(nv == 4);
  const PetscInt nc = p.mesh.n_owned_cells;
  Vec w, R0, R1, v, Jv, Sv;
  REQUIRE(p.res.create_state(&w) == 0);
  smooth_state(p, w, 1.0);
  for (Vec *x : {&R0, &R1, &v, &Jv, &Sv}) REQUIRE(VecDuplicate(w, x) == 0);
  // R with the time term rho V (a0 w + h): a0 = 40, h a function of the cell and row
  std::vector<double> history(nc * nv);
  for (PetscInt c = 0; c < nc; ++c)
    for (int k = 0; k < nv; ++k) history[c * nv + k] = 0.1 * (k + 1) + 0.01 * (c % 7);
  const discretization::FlowResidual::TimeTerm tt{40.0, &history};
  REQUIRE(p.res.residual(discretization::kSteady, w, R0) == 0);
  REQUIRE(p.res.residual(discretization::kSteady, w, R1, &tt) == 0);
  const std::vector<double> r0 = owned_values(R0), r1 = owned_values(R1), wv = owned_values(w);
  const double rho = 1.3;
  double worst = 0;
  for (PetscInt c = 0; c < nc; ++c) {
    const double V = p.res.geometry().cell_volume[c];
    for (int k = 0; k < nv; ++k) {
      const double expected =
          k == 0 ? 0.0 : rho * V * (40.0 * wv[c * nv + k] + history[c * nv + k]);
      worst = std::max(worst, std::abs(r1[c * nv + k] - r0[c * nv + k] - expected));
    }
  }
  CHECK(worst <= 1e-13);
  // J with the shift s_c: (J_s - J) v = s_c v on the velocity and scalar rows, 0 on continuity
  Mat J, Js;
  REQUIRE(p.res.create_jacobian(&J) == 0);
  REQUIRE(p.res.create_jacobian(&Js) == 0);
  std::vector<double> shift(nc);
  for (PetscInt c = 0; c < nc; ++c) shift[c] = rho * 40.0 * p.res.geometry().cell_volume[c];
  REQUIRE(p.res.jacobian(discretization::kSteady, w, J, nullptr) == 0);
  REQUIRE(p.res.jacobian(discretization::kSteady, w, Js, &shift) == 0);
  REQUIRE(VecSetRandom(v, nullptr) == 0);
  REQUIRE(MatMult(J, v, Jv) == 0);
  REQUIRE(MatMult(Js, v, Sv) == 0);
  const std::vector<double> jv = owned_values(Jv), sv = owned_values(Sv), vv = owned_values(v);
  worst = 0;
  for (PetscInt c = 0; c < nc; ++c)
    for (int k = 0; k < nv; ++k)
      worst = std::max(worst, std::abs(sv[c * nv + k] - jv[c * nv + k] -
                                       (k == 0 ? 0.0 : shift[c] * vv[c * nv + k])));
  CHECK(worst <= 1e-12);
  MatDestroy(&J), MatDestroy(&Js);
  for (Vec *x : {&w, &R0, &R1, &v, &Jv, &Sv}) VecDestroy(x);
}

TEST_CASE("FlowResidual: solver.dissipation auto is the dissipation along the centroids on meshes "
          "with tetrahedra and the face values' on the others",
          "[discretization][mpi]") {
  // the same smooth state's residual with the default and with either choice: bitwise the one
  // the mesh's cells select, measurably not the other (on skewed faces they differ)
  struct Case {
    std::string yaml, geo;
    std::vector<std::string> boundaries;
    std::string selected, other;
  };
  for (const Case &m :
       {Case{kBoxTetCase,
             "box-tet.geo",
             {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"},
             "centroids",
             "face"},
        Case{kBoxPrismCase, "box-prism.geo", {"sides", "zmin", "zmax"}, "face", "centroids"}}) {
    CAPTURE(m.geo);
    const auto residual = [&m](const std::string &dissipation, std::vector<double> *r) {
      Problem p;
      make_problem(m.yaml +
                       (dissipation.empty() ? "" : "solver: {dissipation: " + dissipation + "}\n"),
                   m.geo, 0, 3, m.boundaries, &p);
      Vec w, R;
      REQUIRE(p.res.create_state(&w) == 0);
      REQUIRE(p.res.create_state(&R) == 0);
      smooth_state(p, w, 1.0);
      REQUIRE(p.res.residual(discretization::kSteady, w, R) == 0);
      *r = owned_values(R);
      VecDestroy(&w), VecDestroy(&R);
    };
    std::vector<double> by_default, selected, other;
    residual("", &by_default);
    residual(m.selected, &selected);
    residual(m.other, &other);
    REQUIRE(by_default.size() == selected.size());
    double same = 0, apart = 0, size = 0;
    for (std::size_t i = 0; i < by_default.size(); ++i) {
      same = std::max(same, std::abs(by_default[i] - selected[i]));
      apart = std::max(apart, std::abs(by_default[i] - other[i]));
      size = std::max(size, std::abs(by_default[i]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &apart, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &size, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    CAPTURE(same, apart, size);
    CHECK(same == 0.0);
    CHECK(apart > 1e-6 * size);
  }
}

TEST_CASE("FlowResidual: without a pressure boundary, row 0 pins p_0", "[discretization][mpi]") {
  const char *kClosed = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0}
  right: {type: blowing-suction, amplitude: -1.0}
  bottom: {type: wall, velocity: [0.5, 0]}
  top: {type: wall}
)";
  for (const bool closed : {true, false}) {
    CAPTURE(closed);
    Problem p;
    std::string yaml = kClosed;
    if (!closed)
      yaml.replace(yaml.find("{type: blowing-suction, amplitude: -1.0}"), 40,
                   "{type: pressure-outlet}");
    make_problem(yaml, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &p);
    CHECK(p.res.pressure_pinned() == closed);
    Vec w, R;
    REQUIRE(p.res.create_state(&w) == 0);
    REQUIRE(p.res.create_state(&R) == 0);
    smooth_state(p, w, 1.0);
    REQUIRE(p.res.residual(discretization::kSteady, w, R) == 0);
    Mat J;
    REQUIRE(p.res.create_jacobian(&J) == 0);
    REQUIRE(p.res.jacobian(discretization::kSteady, w, J, nullptr) == 0);
    if (p.mesh.global_cell_offset == 0) { // the rank that owns global cell 0
      const std::vector<double> r = owned_values(R), wv = owned_values(w);
      CHECK((r[0] == wv[0]) == closed); // R_0 = p_0 (otherwise the continuity sum)
      PetscInt ncols;
      const PetscInt *cols;
      const PetscScalar *vals;
      REQUIRE(MatGetRow(J, 0, &ncols, &cols, &vals) == 0);
      double off = 0, diag = 0;
      for (PetscInt i = 0; i < ncols; ++i) (cols[i] == 0 ? diag : off) += std::abs(vals[i]);
      REQUIRE(MatRestoreRow(J, 0, &ncols, &cols, &vals) == 0);
      CHECK((diag == 1.0 && off == 0.0) == closed);
    }
    MatDestroy(&J);
    VecDestroy(&w), VecDestroy(&R);
  }
}

TEST_CASE("FlowResidual::move_to: a translated mesh has the same residual; an inverted one is "
          "refused",
          "[discretization][mpi]") {
  Problem p;
  make_problem(kSquareScalar, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &p);
  Vec w, R0, R1;
  REQUIRE(p.res.create_state(&w) == 0);
  smooth_state(p, w, 1.0);
  REQUIRE(VecDuplicate(w, &R0) == 0);
  REQUIRE(VecDuplicate(w, &R1) == 0);
  REQUIRE(p.res.residual(discretization::kSteady, w, R0) == 0);
  const std::vector<Vec3<double>> X0 = p.res.coordinates();
  const Vec3<double> c0 = p.res.geometry().cell_centroid[0];
  const Vec3<double> shift(0.3, -0.2, 0.0);
  std::vector<Vec3<double>> X = X0;
  for (auto &x : X) x += shift;
  REQUIRE(p.res.move_to(X, "translate") == 0);
  CHECK(norm(p.res.coordinates()[0] - X0[0] - shift) <= 1e-15);
  CHECK(norm(p.res.geometry().cell_centroid[0] - c0 - shift) <= 1e-15);
  REQUIRE(p.res.residual(discretization::kSteady, w, R1) == 0);
  // (uniform inlet, walls at rest: no boundary value depends on the position)
  CHECK(test::relative_difference(R1, R0, NORM_INFINITY) <= 1e-12);
  // the mesh mirrored (x -> 1 - x) turns every cell inside out: refused, named with the caller's
  // context
  X = X0;
  for (auto &x : X) x = Vec3<double>(1.0 - x[0], x[1], x[2]);
  clear_error();
  CHECK(p.res.move_to(X, "unit test: the mirrored mesh") != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("unit test: the mirrored mesh") && Catch::Contains("is inverted"));
  clear_error();
  REQUIRE(p.res.move_to(X0, "restore") == 0);
  REQUIRE(p.res.residual(discretization::kSteady, w, R1) == 0);
  CHECK(test::relative_difference(R1, R0, NORM_INFINITY) <= 1e-12);
  VecDestroy(&w), VecDestroy(&R0), VecDestroy(&R1);
}
