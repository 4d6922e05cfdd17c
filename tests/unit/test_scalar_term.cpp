// The passive scalar as a residual term (src/discretization/scalar_term.cpp):
//  - an exact solution: plug flow u = (U, 0) through the unit square (velocity inlet, pressure
//    outlet, symmetry walls) carrying phi with U phi' = kappa phi'' - k phi + q, phi(0) = phi_0,
//    phi(1) = phi_1; the cell values converge with order >= 1.8 on the mixed triangle/quad mesh
//    (levels 0..2), on 1 and 2 ranks ([mpi]);
//  - the case file: the scalar's fields and parameters, and the one-line refusals of a boundary
//    without a scalar condition, a negative diffusivity and a boundary the mesh lacks (the scalar
//    objectives' refusals are in test_scalar_objectives.cpp);
//  - on every face and cell (value, flux and outflow boundaries, source and decay) at a smooth
//    state: flux_dw and source_dw against central differences (the chain rule through the flow's
//    volume flux F included), flux_reverse and source_reverse against them, the geometry, volume
//    and viscosity adjoints against differences, and every parameter's adjoint (the scalar's
//    diffusivity, source, decay, boundary values and fluxes; the flow's boundary parameters and
//    viscosity through F) against differences (term_check.hpp).
#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/steady_solver.hpp"
#include "term_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

namespace {

const char *kPlug = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
initial: {velocity: [1, 0]}
solver: {rtol: 1e-13, atol: 1e-15, max_iterations: 30}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0, direction: [1, 0]}
  right: {type: pressure-outlet}
  bottom: {type: symmetry}
  top: {type: symmetry}
scalar:
  diffusivity: 0.25
  decay: 0.5
  source: 1.0
  boundaries:
    left: {type: value, value: 0.2}
    right: {type: value, value: 1.5}
    bottom: {type: flux, flux: 0}
    top: {type: outflow}
)";

// phi(x) = q/k + A e^{r1 x} + B e^{r2 x}, r = (U -+ sqrt(U^2 + 4 kappa k)) / (2 kappa)
double exact(double x) {
  const double U = 1, kappa = 0.25, k = 0.5, q = 1, p0 = 0.2, p1 = 1.5;
  const double d = std::sqrt(U * U + 4 * kappa * k);
  const double r1 = (U + d) / (2 * kappa), r2 = (U - d) / (2 * kappa);
  // A + B = p0 - q/k,  A e^r1 + B e^r2 = p1 - q/k
  const double a = p0 - q / k, b = p1 - q / k;
  const double A = (b - a * std::exp(r2)) / (std::exp(r1) - std::exp(r2));
  return q / k + A * std::exp(r1 * x) + (a - A) * std::exp(r2 * x);
}

struct Solved {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

// L2 error of the scalar's cell values (volume weighted) on the square of `level`
double plug_error(int level) {
  Solved p;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kPlug, "plug.yaml", "/", {},
                                        optimization::case_schema(), p.cfg) == 0);
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", level, 2, {"left", "right", "bottom", "top"},
             &p.mesh);
  REQUIRE(p.res.setup(p.mesh, p.cfg) == 0);
  const physics::EquationSet &eq = p.res.equations();
  REQUIRE(eq.nv() == 4);
  const int s = eq.offset(eq.find("scalar"));
  REQUIRE(s == 3);
  Vec w;
  REQUIRE(p.res.create_state(&w) == 0);
  PetscScalar *a;
  REQUIRE(VecGetArray(w, &a) == 0);
  for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) a[c * 4 + 1] = 1.0;
  REQUIRE(VecRestoreArray(w, &a) == 0);
  solver::SteadySolver newton;
  REQUIRE(newton.setup(p.res, p.cfg) == 0);
  solver::SteadySummary sum;
  REQUIRE(newton.solve(w, {}, nullptr, &sum) == 0);
  INFO(sum.reason);
  REQUIRE(sum.converged);
  const PetscScalar *v;
  REQUIRE(VecGetArrayRead(w, &v) == 0);
  double e2 = 0, vol = 0, umax = 0;
  for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) {
    const double V = p.res.geometry().cell_volume[c];
    const double e = v[c * 4 + s] - exact(p.res.geometry().cell_centroid[c][0]);
    e2 += V * e * e;
    vol += V;
    umax = std::max({umax, std::abs(v[c * 4 + 1] - 1.0), std::abs(v[c * 4 + 2])});
  }
  REQUIRE(VecRestoreArrayRead(w, &v) == 0);
  VecDestroy(&w);
  // the flow is the exact plug flow (the scalar does not act on it)
  CHECK(umax < 1e-10);
  double sums[2] = {e2, vol};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return std::sqrt(sums[0] / sums[1]);
}

std::string load_error(const std::string &yaml, const std::string &geo,
                       const std::vector<std::string> &names) {
  config::CaseConfig cfg;
  clear_error();
  PetscErrorCode ierr = config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", "/", {},
                                                      optimization::case_schema(), cfg);
  if (ierr) return last_error_message();
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, geo, 0, 2, names, &m);
  discretization::FlowResidual res;
  ierr = res.setup(m, cfg);
  return ierr ? last_error_message() : "";
}

} // namespace

TEST_CASE("scalar: convection-diffusion-reaction in plug flow converges with second order",
          "[scalar][mpi]") {
  std::vector<double> e;
  for (int level : {0, 1, 2}) e.push_back(plug_error(level));
  for (std::size_t i = 0; i + 1 < e.size(); ++i) {
    const double order = std::log2(e[i] / e[i + 1]);
    CAPTURE(i, e[i], e[i + 1], order);
    CHECK(order >= 1.8);
  }
  CHECK(e.back() < 2e-3); // and small: the exact solution spans 0.2 .. 2.2
}

TEST_CASE("scalar: fields, parameters and one-line refusals of bad input",
          "[scalar][discretization]") {
  const std::vector<std::string> names = {"left", "right", "bottom", "top"};
  SECTION("the equation set and the parameters") {
    Solved p;
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kPlug, "plug.yaml", "/", {},
                                          optimization::case_schema(), p.cfg) == 0);
    test::load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, names, &p.mesh);
    REQUIRE(p.res.setup(p.mesh, p.cfg) == 0);
    CHECK(p.res.equations().signature() == "pressure:1,velocity:2,scalar:1");
    const discretization::ParameterRegistry registry(p.res);
    std::vector<std::string> listed;
    for (std::size_t i = 0; i < registry.size(); ++i) listed.push_back(registry.spec(i).name);
    for (const char *name :
         {"scalar.diffusivity", "scalar.source", "scalar.decay", "scalar.boundaries.left.value",
          "scalar.boundaries.right.value", "scalar.boundaries.bottom.flux"})
      CHECK(std::find(listed.begin(), listed.end(), name) != listed.end());
    // the problem keys (checkpoint hash) carry the scalar's keys and boundaries
    CHECK(p.cfg.problem_keys().find("scalar.diffusivity: 0.25") != std::string::npos);
    CHECK(p.cfg.problem_keys().find("scalar.boundaries.right.value: 1.5") != std::string::npos);
  }
  SECTION("a boundary without a scalar condition") {
    std::string yaml = kPlug;
    yaml.replace(yaml.find("    top: {type: outflow}\n"), 25, "");
    const std::string msg = load_error(yaml, "square-mixed.geo", names);
    CAPTURE(msg);
    CHECK(msg.find("case.yaml: scalar.boundaries: boundary 'top' has no scalar condition") !=
          std::string::npos);
  }
  SECTION("a negative diffusivity") {
    std::string yaml = kPlug;
    yaml.replace(yaml.find("diffusivity: 0.25"), 17, "diffusivity: -0.1");
    const std::string msg = load_error(yaml, "square-mixed.geo", names);
    CAPTURE(msg);
    CHECK(msg.find("case.yaml") != std::string::npos);
    CHECK(msg.find("scalar.diffusivity") != std::string::npos);
    CHECK(msg.find("> 0") != std::string::npos);
  }
  SECTION("a scalar boundary the mesh does not have") {
    std::string yaml = kPlug;
    yaml.replace(yaml.find("    top: {type: outflow}\n"), 25,
                 "    top: {type: outflow}\n    lid: {type: value, value: 1}\n");
    const std::string msg = load_error(yaml, "square-mixed.geo", names);
    CAPTURE(msg);
    CHECK(msg.find("scalar.boundaries.lid: the mesh has no boundary 'lid'") != std::string::npos);
  }
}

TEST_CASE("scalar term: derivatives and reverse mode on every face and cell equal differences",
          "[scalar][discretization][jacobian]") {
  // the plug-flow case with a prescribed flux on the bottom and a rotating, translating wall on
  // top (the flow's boundary parameters reach the scalar through F)
  std::string yaml = kPlug;
  yaml.replace(yaml.find("bottom: {type: flux, flux: 0}"), 29, "bottom: {type: flux, flux: 0.3}");
  yaml.replace(yaml.find("top: {type: symmetry}"), 21,
               "top: {type: wall, velocity: [0.2, 0], omega: 0.4, center: [0.5, 2]}");
  test::TermProblem p;
  test::make_term_problem(yaml, "square-mixed.geo", 2, {"left", "right", "bottom", "top"}, &p);
  REQUIRE(p.res.terms().size() == 2);
  REQUIRE(test::term_rows(p.res, 1) == std::pair<int, int>(3, 1));
  Vec w;
  REQUIRE(p.res.create_state(&w) == 0);
  test::set_term_state(p.res, w);
  test::check_term(p, 1, w, false);
  VecDestroy(&w);
}
