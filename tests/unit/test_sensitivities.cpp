// Reverse-mode accumulation of the discrete adjoint (src/adjoint/sensitivities.cpp):
//  - dot-product test <J v, u> = <v, J^T u>, and the reverse sweep of u^T R over faces and
//    gradients (add_residual, finish), summed into the owners, equals J^T u assembled (DFG 2D-1,
//    coarse, converged);
//  - psi^T dR/da (every ParameterRegistry parameter: the flow's boundary parameters and viscosity,
//    the scalar's diffusivity, source, decay, boundary values and fluxes) and psi^T dR/dX (a
//    smooth displacement of every vertex, walls included) from add_residual and finish equal
//    central differences of psi^T R at a smooth state, with a passive scalar (cell sources), with
//    the Spalart-Allmaras model (sources with the wall distance: its reverse to the centroids and
//    the wall vertices) and, for a closed box, the pinned pressure row;
//  - add_face_value: the reverse of a value reconstructed at boundary face centroids,
//    w_L + G_L . (x_f - x_L), equals differences in w and in X;
// on 1 and 2 ranks ([mpi]: the sums over ranks and over the copies of a vertex).
#include "adjoint_check.hpp"

#include "karman/core/parallel.hpp"

#include <functional>
#include <utility>

using namespace karman;
using test::kDfg;
using test::make;
using test::Problem;

namespace {

// a smooth state with O(1) variation in every unknown
void set_smooth(Problem &p) {
  PetscScalar *a;
  REQUIRE(VecGetArray(p.w, &a) == 0);
  const int nv = p.res.nv();
  for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) {
    const Vec3<double> &x = p.res.geometry().cell_centroid[c];
    for (int k = 0; k < nv; ++k)
      a[c * nv + k] =
          0.3 * std::sin(3.1 * (k + 1) * x[0] + 2.3 * x[1] + k) + (k == 1 ? 0.3 : 0.1 * k);
  }
  REQUIRE(VecRestoreArray(p.w, &a) == 0);
}

// a random vector in [-1, 1] (the same for a seed on every rank count), ghosts updated
void random_vector(Vec v, unsigned seed) {
  PetscRandom rnd;
  REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
  REQUIRE(PetscRandomSetInterval(rnd, -1.0, 1.0) == 0);
  REQUIRE(PetscRandomSetSeed(rnd, seed) == 0);
  REQUIRE(PetscRandomSeed(rnd) == 0);
  REQUIRE(VecSetRandom(v, rnd) == 0);
  REQUIRE(PetscRandomDestroy(&rnd) == 0);
  REQUIRE(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD) == 0);
  REQUIRE(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD) == 0);
}

// psi^T R(w) for the residual's current inputs
double weighted_residual(Problem &p, Vec psi) {
  Vec R;
  REQUIRE(VecDuplicate(p.w, &R) == 0);
  REQUIRE(p.res.residual(discretization::kSteady, p.w, R) == 0);
  double s;
  REQUIRE(VecDot(psi, R, &s) == 0);
  VecDestroy(&R);
  return s;
}

// a smooth displacement of every vertex (the walls' too)
std::vector<Vec3<double>> smooth_displacement(const Problem &p) {
  std::vector<Vec3<double>> dX(p.mesh.n_vertices);
  for (PetscInt v = 0; v < p.mesh.n_vertices; ++v) {
    const Vec3<double> &x = p.res.coordinates()[v];
    dX[v] = Vec3<double>(std::sin(3 * x[0] + x[1]), std::cos(2 * x[1] - x[0]), 0.0);
  }
  return dX;
}

// d/deps f(X0 + eps dX) by central differences (the mesh moved back afterwards)
double shape_difference(Problem &p, const std::vector<Vec3<double>> &dX, double eps,
                        const std::function<double()> &f) {
  const std::vector<Vec3<double>> X0 = p.res.coordinates();
  double F[2];
  for (int s = 0; s < 2; ++s) {
    std::vector<Vec3<double>> X = X0;
    for (std::size_t v = 0; v < X.size(); ++v) X[v] += (s == 0 ? eps : -eps) * dX[v];
    REQUIRE(p.res.move_to(X, "shape difference") == 0);
    F[s] = f();
  }
  REQUIRE(p.res.move_to(X0, "restore") == 0);
  return (F[0] - F[1]) / (2 * eps);
}

// psi^T dR/da for every parameter and psi^T dR/dX . dX against central differences
void check_weighted_residual(Problem &p) {
  set_smooth(p);
  Vec psi;
  REQUIRE(VecDuplicate(p.w, &psi) == 0);
  random_vector(psi, 11);
  std::vector<double> psi_local;
  REQUIRE(ghosted_local_values(psi, &psi_local) == 0);
  discretization::LocalState state;
  REQUIRE(p.res.local_state(discretization::kSteady, p.w, &state) == 0);
  adjoint::Sensitivities s;
  s.reset(p.res);
  REQUIRE(adjoint::add_residual(p.res, state, psi_local, s) == 0);
  adjoint::Gradient g;
  REQUIRE(adjoint::finish(p.res, state, s, &g, true) == 0);
  const discretization::ParameterRegistry registry(p.res);
  REQUIRE(g.parameters.size() == registry.size());
  double gmax = 0;
  for (const auto &par : g.parameters) gmax = std::max(gmax, std::abs(par.gradient));
  for (const auto &par : g.parameters) {
    const double h = 1e-6 * std::max(std::abs(par.value), 1e-2);
    REQUIRE(registry.set(p.res, par.name, par.value + h) == 0);
    const double Fp = weighted_residual(p, psi);
    REQUIRE(registry.set(p.res, par.name, par.value - h) == 0);
    const double Fm = weighted_residual(p, psi);
    REQUIRE(registry.set(p.res, par.name, par.value) == 0);
    const double fd = (Fp - Fm) / (2 * h);
    CAPTURE(par.name, par.value, par.gradient, fd, gmax);
    CHECK(std::abs(par.gradient - fd) <= 1e-6 * std::max(std::abs(fd), 1e-3 * gmax));
  }
  const std::vector<Vec3<double>> dX = smooth_displacement(p);
  double dF;
  REQUIRE(adjoint::vertex_dot(p.mesh, g.X, dX, &dF) == 0);
  const double fd = shape_difference(p, dX, 1e-6, [&] { return weighted_residual(p, psi); });
  CAPTURE(dF, fd);
  CHECK(std::abs(dF) > 0);
  CHECK(std::abs(dF - fd) <= 1e-6 * std::abs(fd));
  VecDestroy(&psi);
}

} // namespace

TEST_CASE("adjoint building blocks: dot-product test and reverse sweep equal J^T psi",
          "[adjoint][mpi]") {
  Problem p;
  make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  Mat J;
  REQUIRE(p.res.create_jacobian(&J) == 0);
  REQUIRE(p.res.jacobian(discretization::kSteady, p.w, J, nullptr) == 0);
  Vec v, u, Jv, JTu;
  for (Vec *x : {&v, &u, &Jv, &JTu}) REQUIRE(VecDuplicate(p.w, x) == 0);
  PetscRandom rnd;
  REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
  REQUIRE(VecSetRandom(v, rnd) == 0);
  REQUIRE(VecSetRandom(u, rnd) == 0);
  REQUIRE(PetscRandomDestroy(&rnd) == 0);
  REQUIRE(MatMult(J, v, Jv) == 0);
  REQUIRE(MatMultTranspose(J, u, JTu) == 0);
  double a, b;
  REQUIRE(VecDot(Jv, u, &a) == 0);
  REQUIRE(VecDot(v, JTu, &b) == 0);
  CAPTURE(a, b);
  REQUIRE(std::abs(a - b) <= 1e-12 * std::abs(a));

  // psi = u: the reverse sweep's w-adjoints, summed into the owners, equal J^T u
  REQUIRE(VecGhostUpdateBegin(u, INSERT_VALUES, SCATTER_FORWARD) == 0);
  REQUIRE(VecGhostUpdateEnd(u, INSERT_VALUES, SCATTER_FORWARD) == 0);
  Vec local;
  const PetscScalar *ua;
  REQUIRE(VecGhostGetLocalForm(u, &local) == 0);
  REQUIRE(VecGetArrayRead(local, &ua) == 0);
  std::vector<double> psi(ua, ua + p.mesh.n_cells * 3);
  REQUIRE(VecRestoreArrayRead(local, &ua) == 0);
  REQUIRE(VecGhostRestoreLocalForm(u, &local) == 0);
  discretization::LocalState state;
  REQUIRE(p.res.local_state(discretization::kSteady, p.w, &state) == 0);
  adjoint::Sensitivities s;
  s.reset(p.res);
  REQUIRE(adjoint::add_residual(p.res, state, psi, s) == 0);
  adjoint::Gradient grad;
  REQUIRE(adjoint::finish(p.res, state, s, &grad) == 0);
  Vec sweep;
  REQUIRE(VecDuplicate(p.w, &sweep) == 0);
  REQUIRE(VecSet(sweep, 0.0) == 0);
  for (PetscInt c = 0; c < p.mesh.n_cells; ++c)
    for (int k = 0; k < 3; ++k)
      if (s.wbar[c * 3 + k] != 0)
        REQUIRE(VecSetValue(sweep, p.mesh.cell_global[c] * 3 + k, s.wbar[c * 3 + k], ADD_VALUES) ==
                0);
  REQUIRE(VecAssemblyBegin(sweep) == 0);
  REQUIRE(VecAssemblyEnd(sweep) == 0);
  double nref, ndiff;
  REQUIRE(VecNorm(JTu, NORM_2, &nref) == 0);
  REQUIRE(VecAXPY(sweep, -1.0, JTu) == 0);
  REQUIRE(VecNorm(sweep, NORM_2, &ndiff) == 0);
  CAPTURE(nref, ndiff);
  REQUIRE(ndiff <= 1e-12 * nref);
  for (Vec *x : {&v, &u, &Jv, &JTu, &sweep}) VecDestroy(x);
  MatDestroy(&J);
}

TEST_CASE("sensitivities: psi^T dR/da and psi^T dR/dX equal differences of psi^T R",
          "[adjoint][mpi]") {
  SECTION("cylinder channel with a passive scalar: every flow and scalar boundary kind, sources") {
    Problem p;
    make(kDfg + R"(scalar:
  diffusivity: 0.004
  source: 0.3
  decay: 0.2
  boundaries:
    inlet: {type: value, value: 0.1}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.02}
    outlet: {type: outflow}
)",
         "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, false);
    REQUIRE(p.res.nv() == 4);
    check_weighted_residual(p);
  }
  SECTION("cylinder channel with the Spalart-Allmaras model: sources with the wall distance") {
    // the wall distance's reverse (cell centroids and wall vertices) is part of psi^T dR/dX, the
    // model's dependence on nu part of the viscosity's gradient.  The channel walls are symmetry
    // planes here: with them as walls, the mesh's cells on the centre line y = 0.205 lie on the
    // medial axis (equidistant from both walls), where d has a kink that central differences
    // average away (the reverse mode follows the wall it took, as documented).
    std::string yaml = kDfg + "turbulence: {convection_order: 2}\n";
    const std::string walls = "walls: {type: blowing-suction";
    yaml.replace(yaml.find(walls), yaml.find('}', yaml.find(walls)) + 1 - yaml.find(walls),
                 "walls: {type: symmetry}");
    Problem p;
    make(yaml, "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, false);
    REQUIRE(p.res.nv() == 4);
    REQUIRE(!p.res.wall_distance().empty());
    check_weighted_residual(p);
  }
  SECTION("closed box: the pinned pressure row") {
    Problem p;
    make(R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0, profile: parabolic, profile_range: [0, 1]}
  right: {type: blowing-suction, amplitude: -0.7}
  bottom: {type: wall, velocity: [0.5, 0]}
  top: {type: wall, omega: 0.3, center: [0.5, 0.5]}
)",
         "square-mixed.geo", 0, {"left", "right", "bottom", "top"}, &p, false);
    REQUIRE(p.res.pressure_pinned());
    check_weighted_residual(p);
  }
}

TEST_CASE("sensitivities: the reverse of values reconstructed at face centroids equals differences",
          "[adjoint][mpi]") {
  Problem p;
  make(kDfg + R"(scalar:
  diffusivity: 0.004
  boundaries:
    inlet: {type: value, value: 0.1}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.02}
    outlet: {type: outflow}
)",
       "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, false);
  set_smooth(p);
  const int nv = p.res.nv();
  const int outlet = p.mesh.patch_index("outlet"), cylinder = p.mesh.patch_index("cylinder");
  // S = sum over the outlet's and the cylinder's faces of c_f (p_f + 2 phi_f), c_f = 1 + x_f . x_f
  // at the reference mesh (a fixed weight per face)
  std::vector<double> weight(p.mesh.n_flux_faces, 0.0);
  for (int patch : {outlet, cylinder})
    for (PetscInt f : p.mesh.boundary_faces(patch)) { // (owned faces: each counted once)
      const Vec3<double> &x = p.res.geometry().face_centroid[f];
      weight[f] = 1 + dot(x, x);
    }
  auto value = [&](Vec w) {
    discretization::LocalState state;
    REQUIRE(p.res.local_state(discretization::kSteady, w, &state) == 0);
    double s = 0;
    for (PetscInt f = 0; f < p.mesh.n_flux_faces; ++f) {
      if (weight[f] == 0) continue;
      const PetscInt L = p.mesh.face_left[f];
      const Vec3<double> d = p.res.geometry().face_centroid[f] - p.res.geometry().cell_centroid[L];
      const physics::CellState<double> c = state.cell(L);
      for (const auto &[k, factor] : {std::pair<int, double>{0, 1.0}, {3, 2.0}})
        s += weight[f] * factor * (c.w[k] + c.g[k][0] * d[0] + c.g[k][1] * d[1] + c.g[k][2] * d[2]);
    }
    double total;
    MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return total;
  };
  discretization::LocalState state;
  REQUIRE(p.res.local_state(discretization::kSteady, p.w, &state) == 0);
  adjoint::Sensitivities s;
  s.reset(p.res);
  for (PetscInt f = 0; f < p.mesh.n_flux_faces; ++f)
    if (weight[f] != 0) {
      s.add_face_value(p.res, state, f, 0, weight[f]);
      s.add_face_value(p.res, state, f, 3, 2 * weight[f]);
    }
  adjoint::Gradient g;
  REQUIRE(adjoint::finish(p.res, state, s, &g) == 0);
  // in w: S is linear in w (exact differences)
  Vec dw, wp;
  REQUIRE(VecDuplicate(p.w, &dw) == 0);
  REQUIRE(VecDuplicate(p.w, &wp) == 0);
  random_vector(dw, 5);
  std::vector<double> dw_local;
  REQUIRE(ghosted_local_values(dw, &dw_local) == 0);
  double mine = 0, reverse = 0;
  for (PetscInt i = 0; i < p.mesh.n_cells * nv; ++i) mine += s.wbar[i] * dw_local[i];
  MPI_Allreduce(&mine, &reverse, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  REQUIRE(VecWAXPY(wp, 1.0, dw, p.w) == 0);
  const double Sp = value(wp);
  REQUIRE(VecWAXPY(wp, -1.0, dw, p.w) == 0);
  const double fd_w = (Sp - value(wp)) / 2;
  CAPTURE(reverse, fd_w);
  CHECK(std::abs(reverse - fd_w) <= 1e-10 * std::abs(fd_w));
  // in X (the weights held)
  const std::vector<Vec3<double>> dX = smooth_displacement(p);
  double dS;
  REQUIRE(adjoint::vertex_dot(p.mesh, g.X, dX, &dS) == 0);
  const double fd_x = shape_difference(p, dX, 1e-6, [&] { return value(p.w); });
  CAPTURE(dS, fd_x);
  CHECK(std::abs(dS) > 0);
  CHECK(std::abs(dS - fd_x) <= 1e-6 * std::abs(fd_x));
  VecDestroy(&dw), VecDestroy(&wp);
}
