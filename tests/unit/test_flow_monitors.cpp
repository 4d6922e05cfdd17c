// The monitors of a state (src/solver/flow_monitors.cpp) on the DFG 2D-1 channel (level 0) at
// rest with the pressure p = a + b x + c y, where the force on the cylinder is exact (see
// test_forces.cpp): c_D and c_L are its components along the case's drag and lift directions
// over q S_ref (q = rho U^2 / 2, S_ref = L in 2D), delta p is p(x_1) - p(x_2) of the objective's
// points, the output probes report p at their points; the CSV row has one column per header name;
// with far fields at an angle of attack alpha the directions are turned by alpha (wind axes).
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/flow_monitors.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace karman;

namespace {

// The case `yaml` loaded with the state at rest and p = a + b x + c y (set in *w), its monitors'
// values in *v, and the exact force on the cylinder, -(b, c) times its area (the channel's
// 2.2 x 0.41 less the cells').
void linear_pressure(driver::FlowCase &fc, double a, double b, double c, Vec *w,
                     solver::FlowMonitors::Values *v, Vec3<double> *force) {
  const discretization::FlowResidual &res = fc.residual();
  const mesh::Mesh &m = res.mesh();
  REQUIRE(fc.create_state(w) == 0);
  PetscScalar *x;
  REQUIRE(VecGetArray(*w, &x) == 0);
  for (PetscInt k = 0; k < m.n_owned_cells; ++k) {
    const Vec3<double> &xc = res.geometry().cell_centroid[k];
    x[k * res.nv()] = a + b * xc[0] + c * xc[1];
  }
  REQUIRE(VecRestoreArray(*w, &x) == 0);
  discretization::LocalState state;
  REQUIRE(fc.evaluate(discretization::kSteady, *w, &state, v) == 0);
  double volume = 0, total = 0;
  for (PetscInt k = 0; k < m.n_owned_cells; ++k) volume += res.geometry().cell_volume[k];
  MPI_Allreduce(&volume, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const double A = 2.2 * 0.41 - total;
  *force = Vec3<double>(-b * A, -c * A, 0.0);
}

} // namespace

TEST_CASE("flow monitors: coefficients, pressure difference and probes of a known state",
          "[solver][mpi]") {
  const std::string yaml =
      "mesh: {file: " + test::mesh_file(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2) + R"(}
fluid: {density: 2.0, viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
objective: {type: drag, walls: [cylinder], drag_direction: [0.6, 0.8], lift_direction: [-0.8, 0.6], points: [[0.1, 0.2], [0.3, 0.25]]}
output: {probes: [[0.5, 0.1], [0.05, 0.3]]}
)";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", ".", {},
                                        optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  const discretization::FlowResidual &res = fc.residual();
  const mesh::Mesh &m = res.mesh();
  const solver::FlowMonitors &mon = fc.monitors();
  CHECK(mon.dynamic_pressure() == Approx(0.5 * 2.0 * 0.2 * 0.2));
  CHECK(mon.walls() == std::vector<int>{m.patch_index("cylinder")});
  CHECK(mon.n_probes() == 2);
  Vec w;
  const double a = 0.5, b = -2.0, c = 3.0;
  solver::FlowMonitors::Values v;
  Vec3<double> F;
  linear_pressure(fc, a, b, c, &w, &v, &F);
  const double Fx = F[0], Fy = F[1];
  const double qS = 0.5 * 2.0 * 0.2 * 0.2 * 0.1;
  CHECK(v.cd == Approx((0.6 * Fx + 0.8 * Fy) / qS).epsilon(1e-10));
  CHECK(v.cl == Approx((-0.8 * Fx + 0.6 * Fy) / qS).epsilon(1e-10));
  CHECK(v.cd_pressure == Approx(v.cd).epsilon(1e-12));
  CHECK(v.cd_viscous == 0);
  REQUIRE(v.has_dp);
  CHECK(v.dp == Approx(b * (0.1 - 0.3) + c * (0.2 - 0.25)).epsilon(1e-11));
  REQUIRE(v.probes.size() == 2u * res.nv());
  CHECK(v.probes[0] == Approx(a + b * 0.5 + c * 0.1).epsilon(1e-11));
  CHECK(v.probes[res.nv()] == Approx(a + b * 0.05 + c * 0.3).epsilon(1e-11));
  // one CSV value per header column
  const std::string header = mon.csv_header(res.equations()), row = mon.csv_values(v);
  CAPTURE(header, row);
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
  VecDestroy(&w);
}

TEST_CASE("flow monitors: drag and lift directions turned by the far field's angle of attack",
          "[solver]") {
  const std::string yaml =
      "mesh: {file: " + test::mesh_file(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2) + R"(}
fluid: {density: 2.0, viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: far-field, velocity: [0.3, 0], angle_of_attack: 30}
  outlet: {type: far-field, velocity: [0.3, 0], angle_of_attack: 30}
  walls: {type: wall}
  cylinder: {type: wall}
objective: {type: drag, walls: [cylinder], drag_direction: [1, 0], lift_direction: [0, 1]}
)";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", ".", {},
                                        optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  Vec w;
  solver::FlowMonitors::Values v;
  Vec3<double> F;
  linear_pressure(fc, 0.0, -2.0, 3.0, &w, &v, &F); // p = b x + c y at rest
  const double Fx = F[0], Fy = F[1];
  const double qS = 0.5 * 2.0 * 0.2 * 0.2 * 0.1, ca = std::sqrt(3.0) / 2, sa = 0.5;
  CHECK(v.cd == Approx((ca * Fx + sa * Fy) / qS).epsilon(1e-10));
  CHECK(v.cl == Approx((-sa * Fx + ca * Fy) / qS).epsilon(1e-10));
  VecDestroy(&w);
}
