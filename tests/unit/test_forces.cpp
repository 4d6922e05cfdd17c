// Forces, wall stresses and probes (src/solver/forces.cpp) at states whose answers are exact, on
// the DFG 2D-1 channel (level 0), fluid at rest (u = 0: no viscous force):
//  - a uniform pressure: no force and no moment on the closed cylinder (sum_f S_f = 0 and
//    sum_f x_f x S_f = 0 over a closed polygon);
//  - p = a + b x + c y: the face pressures are exact (least-squares gradients of a linear field),
//    so the force is the discrete divergence theorem's, F = -(b, c) A with A the area of the
//    polygon the cylinder's faces enclose (the channel's rectangle minus the cells' volumes);
//    each wall face's pressure is p(x_f); probes interpolate p exactly;
//  - a point outside the mesh is refused naming the context and the point;
//  - the coefficients' scaling: q = rho U^2 / 2, S_ref = L in 2D.
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/forces.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

using namespace karman;

namespace {

// p = a + b x + c y, u = 0 on the owned cells of w
void set_linear_pressure(const discretization::FlowResidual &res, Vec w, double a, double b,
                         double c) {
  PetscScalar *x;
  REQUIRE(VecGetArray(w, &x) == 0);
  const int nv = res.nv();
  for (PetscInt k = 0; k < res.mesh().n_owned_cells; ++k) {
    const Vec3<double> &xc = res.geometry().cell_centroid[k];
    x[k * nv] = a + b * xc[0] + c * xc[1];
    for (int i = 1; i < nv; ++i) x[k * nv + i] = 0;
  }
  REQUIRE(VecRestoreArray(w, &x) == 0);
}

} // namespace

TEST_CASE("forces: uniform and linear pressure on the cylinder; probes; wall pressures",
          "[solver][mpi]") {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, test::dfg_case_yaml(0), "case.yaml", ".",
                                        {}, optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  const discretization::FlowResidual &res = fc.residual();
  const mesh::Mesh &m = res.mesh();
  const int cylinder = m.patch_index("cylinder");
  // coefficients: q = rho U^2 / 2, S_ref = L per unit depth in 2D (rho 1, U 0.2, L 0.1)
  const solver::ForceScaling scaling = solver::force_scaling(res);
  CHECK(scaling.q == Approx(0.5 * 0.2 * 0.2).epsilon(1e-15));
  CHECK(scaling.area == 0.1);
  CHECK(scaling.length == 0.1);
  CHECK(scaling.force_coefficient(Vec3<double>(2, 3, 0), Vec3<double>(0, 1, 0)) ==
        Approx(3 / (0.02 * 0.1)).epsilon(1e-14));
  CHECK(scaling.moment_coefficient(Vec3<double>(0, 0, 5), Vec3<double>(0, 0, 1)) ==
        Approx(5 / (0.02 * 0.1 * 0.1)).epsilon(1e-14));
  Vec w;
  REQUIRE(fc.create_state(&w) == 0);
  discretization::LocalState state;
  solver::FlowMonitors::Values values;
  solver::ForceReport f;
  // uniform pressure: no force, no moment about any centre
  set_linear_pressure(res, w, 3.0, 0, 0);
  REQUIRE(fc.evaluate(discretization::kSteady, w, &state, &values) == 0);
  REQUIRE(solver::wall_force(res, state, {cylinder}, Vec3<double>(1.0, -2.0, 0), &f) == 0);
  for (int i = 0; i < 3; ++i) {
    CHECK(f.pressure[i] == Approx(0).margin(1e-13));
    CHECK(f.viscous[i] == 0);
    CHECK(f.moment[i] == Approx(0).margin(1e-13));
  }
  // linear pressure: F = -(b, c) A
  double volume = 0, total = 0;
  for (PetscInt k = 0; k < m.n_owned_cells; ++k) volume += res.geometry().cell_volume[k];
  MPI_Allreduce(&volume, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const double A = 2.2 * 0.41 - total; // the polygon inside the cylinder's faces
  CHECK(A == Approx(M_PI * 0.05 * 0.05).epsilon(0.02));
  const double a = 0.5, b = -2.0, c = 3.0;
  set_linear_pressure(res, w, a, b, c);
  REQUIRE(fc.evaluate(discretization::kSteady, w, &state, &values) == 0);
  REQUIRE(solver::wall_force(res, state, {cylinder}, Vec3<double>(0.2, 0.2, 0), &f) == 0);
  CHECK(f.pressure[0] == Approx(-b * A).epsilon(1e-10));
  CHECK(f.pressure[1] == Approx(-c * A).epsilon(1e-10));
  CHECK(f.viscous[0] == 0);
  CHECK(f.total()[0] == f.pressure[0]);
  // the pressure of each wall face
  std::vector<double> pressure;
  std::vector<Vec3<double>> shear;
  solver::wall_stress(res, state, cylinder, &pressure, &shear);
  const auto faces = m.boundary_faces(cylinder);
  REQUIRE(pressure.size() == faces.size());
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const Vec3<double> &xf = res.geometry().face_centroid[faces[i]];
    CHECK(pressure[i] == Approx(a + b * xf[0] + c * xf[1]).epsilon(1e-11));
    CHECK(norm(shear[i]) == 0);
  }
  // probes: every rank gets each point's values
  solver::PointProbes probes;
  const std::vector<Vec3<double>> points = {{0.1, 0.2, 0}, {0.31, 0.12, 0}, {1.0, 0.3, 0}};
  REQUIRE(probes.setup(res, points, "test probes") == 0);
  std::vector<double> p;
  REQUIRE(probes.evaluate(res, state, &p) == 0);
  REQUIRE(p.size() == points.size() * res.nv());
  for (std::size_t i = 0; i < points.size(); ++i) {
    CAPTURE(i);
    CHECK(p[i * res.nv()] == Approx(a + b * points[i][0] + c * points[i][1]).epsilon(1e-11));
    CHECK(p[i * res.nv() + 1] == 0);
  }
  solver::PointProbes outside;
  clear_error();
  CHECK(outside.setup(res, {{0.2, 0.2, 0}}, "output.probes") != 0);
  CHECK(last_error_message() == "output.probes: point (0.2, 0.2, 0.) is outside the mesh");
  clear_error();
  VecDestroy(&w);
}
