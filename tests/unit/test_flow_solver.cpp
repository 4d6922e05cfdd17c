// The assembled residual Jacobian and the steady Newton solver.
//  - dR/dw (assembled) times random directions equals central finite differences of
//    the residual to 1e-6 (2D DFG channel with inlet/outlet/walls, far-field cylinder,
//    a pinned-pressure all-Dirichlet box, a 3D hexahedral channel with a slip wall, 3D
//    tetrahedra (inflow, outflow, moving wall, symmetry, far field), prisms, and a
//    tetrahedral box with an obstacle in a far field);
//    on 1 and 2 ranks ([mpi]);
//  - Newton converges quadratically on the coarse DFG 2D-1 mesh;
//  - Kovasznay flow (Re = 40): second-order convergence of velocity and pressure on
//    triangles and on quadrilaterals, with upwind and with blended convection.
#include "karman/optimization/case_schema.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/solver/block_transpose.hpp"
#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/solver/steady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
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

} // namespace

TEST_CASE("assembled Jacobian equals finite differences of the residual",
          "[solver][jacobian][mpi]") {
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
    make_problem(R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.05}
boundaries:
  sides: {type: wall}
  zmin: {type: velocity-inlet, velocity: 1.0, direction: [0, 0, 1]}
  zmax: {type: pressure-outlet}
)",
                 "box-prism.geo", 0, 3, {"sides", "zmin", "zmax"}, &p);
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
}

TEST_CASE("Newton converges quadratically on DFG 2D-1 (coarse mesh)", "[solver][mpi]") {
  // exact Newton steps (the LU of the exact Jacobian; the default iterative solver's inexact
  // steps converge superlinearly, not quadratically): the Jacobian is the residual's derivative
  Problem p;
  make_problem(std::string(kDfgCase) + "solver: {linear: direct}\n", test::dfg_geo(), 0, 2,
               {"inlet", "outlet", "walls", "cylinder"}, &p);
  REQUIRE(discretization::ParameterRegistry(p.res).set(p.res, "boundaries.cylinder.omega", 0.0) ==
          0);
  solver::SteadySolver newton;
  REQUIRE(newton.setup(p.res, p.cfg) == 0);
  Vec w;
  REQUIRE(p.res.create_state(&w) == 0);
  solver::SteadySummary s;
  REQUIRE(newton.solve(w, {}, nullptr, &s) == 0);
  VecDestroy(&w);
  REQUIRE(s.converged);
  REQUIRE(s.iterations <= 30);
  REQUIRE(s.final_residual <= 1e-10 * s.initial_residual);
  // convergence order p_k = log(e_{k+1} / e_k) / log(e_k / e_{k-1}) of the normalized
  // residual e = |R| / |R_0| over the last iterates above the round-off floor: ~2 for Newton
  std::vector<double> e;
  for (const auto &r : s.history)
    if (r.residual > 1e-15 * s.initial_residual) e.push_back(r.residual / s.initial_residual);
  REQUIRE(e.size() >= 4);
  const std::size_t n = e.size();
  for (std::size_t k = n - 3; k + 1 < n; ++k) {
    const double order = std::log(e[k + 1] / e[k]) / std::log(e[k] / e[k - 1]);
    CAPTURE(k, e[k - 1], e[k], e[k + 1], order);
    REQUIRE(order > 1.7);
  }
}

TEST_CASE("Kovasznay flow (Re = 40): second-order velocity and pressure",
          "[solver][verification]") {
  const double Re = 40, lambda = Re / 2 - std::sqrt(Re * Re / 4 + 4 * M_PI * M_PI);
  auto exact_u = [&](const Vec3<double> &x) {
    return Vec3<double>(1 - std::exp(lambda * x[0]) * std::cos(2 * M_PI * x[1]),
                        lambda / (2 * M_PI) * std::exp(lambda * x[0]) * std::sin(2 * M_PI * x[1]),
                        0.0);
  };
  auto exact_p = [&](const Vec3<double> &x) { return 0.5 * (1 - std::exp(2 * lambda * x[0])); };
  const std::string yaml = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.025}
boundaries:
  west: {type: wall}
  east: {type: wall}
  south: {type: wall}
  north: {type: wall}
solver: {rtol: 1e-12, atol: 1e-13, upwind: UPWIND}
)";
  // full second-order upwind on both meshes; on triangles also blended with the centred
  // mean of the reconstructions (solver.upwind 0.25, less numerical dissipation)
  for (const auto &[geo, upwind] :
       {std::pair<const char *, const char *>{"kovasznay-quad.geo", "1"},
        {"kovasznay-tri.geo", "1"},
        {"kovasznay-tri.geo", "0.25"}}) {
    SECTION(std::string(geo) + " upwind " + upwind) {
      std::string yaml_b = yaml;
      yaml_b.replace(yaml_b.find("UPWIND"), 6, upwind);
      std::vector<double> h, eu, ep;
      for (int level = 0; level <= 2; ++level) {
        Problem p;
        make_problem(yaml_b, geo, level, 2, {"west", "east", "south", "north"}, &p);
        for (std::size_t b = 0; b < p.res.boundary_conditions().n_patches(); ++b)
          p.res.boundary_conditions().patch(static_cast<int>(b)).custom_velocity =
              [&](const Vec3<double> &x, double) { return exact_u(x); };
        p.res.parameters_changed();
        solver::SteadySolver newton;
        REQUIRE(newton.setup(p.res, p.cfg) == 0);
        Vec w;
        REQUIRE(p.res.create_state(&w) == 0);
        solver::SteadySummary s;
        REQUIRE(newton.solve(w, {}, nullptr, &s) == 0);
        REQUIRE(s.converged);
        discretization::LocalState state;
        REQUIRE(p.res.local_state(discretization::kSteady, w, &state) == 0);
        VecDestroy(&w);
        // errors: velocity L2; pressure L2 after removing the mean difference
        double sums[5] = {0, 0, 0, 0, 0}; // V, V|du|^2, V dp, V dp^2, n
        const auto &wl = state.w;
        for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) {
          const Vec3<double> &x = p.res.geometry().cell_centroid[c];
          const double V = p.res.geometry().cell_volume[c];
          const Vec3<double> du = Vec3<double>(wl[c * 3 + 1], wl[c * 3 + 2], 0) - exact_u(x);
          const double dp = wl[c * 3] - exact_p(x);
          sums[0] += V, sums[1] += V * dot(du, du), sums[2] += V * dp, sums[3] += V * dp * dp,
              sums[4] += 1;
        }
        MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        h.push_back(std::sqrt(sums[0] / sums[4]));
        eu.push_back(std::sqrt(sums[1] / sums[0]));
        ep.push_back(std::sqrt(
            std::max(0.0, sums[3] / sums[0] - (sums[2] / sums[0]) * (sums[2] / sums[0]))));
      }
      for (std::size_t k = 0; k + 1 < h.size(); ++k) {
        const double ou = std::log(eu[k] / eu[k + 1]) / std::log(h[k] / h[k + 1]);
        const double op = std::log(ep[k] / ep[k + 1]) / std::log(h[k] / h[k + 1]);
        CAPTURE(geo, upwind, k, h[k], eu[k], eu[k + 1], ep[k], ep[k + 1], ou, op);
        if (k + 2 == h.size()) { // the finest pair
          REQUIRE(ou >= 1.8);
          REQUIRE(op >= 1.5);
        }
      }
    }
  }
}
