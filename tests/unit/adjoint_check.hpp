// Helpers of the steady adjoint's tests (test_adjoint_solver.cpp, test_sensitivities.cpp,
// test_adjoint.cpp): a case loaded on a test mesh and solved, the coarse DFG 2D-1 case with
// parameters of every kind, adjoint parameter gradients against central differences of re-solved
// objectives (check_parameters), and the Taylor test of dJ/dX for a bump on a wall
// (check_shape_taylor).
#pragma once

#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/core/error.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace karman::test {

struct Problem {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
  Vec w = nullptr;
  ~Problem() {
    if (w) VecDestroy(&w);
  }
};

/// Loads `yaml` on the test mesh `geo` (level, boundary names, dimension) into *p with a state
/// p->w: zero, or (`solve`) the steady solution from the case's initial velocity.  Collective.
inline void make(const std::string &yaml, const std::string &geo, int level,
                 const std::vector<std::string> &bcs, Problem *p, bool solve = true, int dim = 2) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "adj.yaml", "/", {},
                                        optimization::case_schema(), p->cfg) == 0);
  load(PETSC_COMM_WORLD, geo, level, dim, bcs, &p->mesh);
  REQUIRE(p->res.setup(p->mesh, p->cfg) == 0);
  REQUIRE(p->res.create_state(&p->w) == 0);
  if (!solve) return;
  const auto u0 = p->cfg.section("initial").vector("velocity");
  const int nv = p->res.nv();
  PetscScalar *a;
  REQUIRE(VecGetArray(p->w, &a) == 0);
  for (PetscInt c = 0; c < p->mesh.n_owned_cells; ++c)
    for (int k = 0; k < dim; ++k) a[nv * c + 1 + k] = u0[k];
  REQUIRE(VecRestoreArray(p->w, &a) == 0);
  solver::SteadySolver newton;
  REQUIRE(newton.setup(p->res, p->cfg) == 0);
  solver::SteadySummary s;
  REQUIRE(newton.solve(p->w, {}, nullptr, &s) == 0);
  INFO(s.reason);
  REQUIRE(s.converged);
}

// (atol 1e-15: just above the round-off floor of |R| on this mesh, ~1e-16; below it the re-solves
// of the finite differences took 3-6 Newton iterations at the floor, where the state no longer
// changes, instead of 1-2)
inline const std::string kDfg = R"(
mesh: {file: x.geo}
fluid: {viscosity: 2.0e-3}
reference: {velocity: 0.2, length: 0.1}
solver: {rtol: 1e-14, atol: 1e-15, max_iterations: 60}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet, pressure: 0.1}
  walls: {type: blowing-suction, amplitude: 0.002, profile: parabolic, profile_axis: x, profile_range: [0.5, 1.5]}
  cylinder: {type: wall, omega: 0.5, velocity: [0.01, 0.02], center: [0.2, 0.2]}
)";

// The resolved case with its objective section replaced (appending a second `objective:`
// would be a duplicate key).
inline std::string with_objective(const config::CaseConfig &cfg,
                                  const std::string &objective_yaml) {
  std::istringstream in(cfg.resolved_yaml());
  std::string out, line;
  bool skip = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') skip = line.rfind("objective:", 0) == 0;
    if (!skip) out += line + "\n";
  }
  return out + objective_yaml;
}

// adjoint gradient of every parameter vs central differences, for each objective (the
// objectives share the re-solves: each is evaluated at the same perturbed states)
inline void check_parameters(Problem &p, const std::vector<std::string> &objective_yamls,
                             double tol) {
  const std::size_t n = objective_yamls.size();
  std::vector<config::CaseConfig> cfg(n);
  std::vector<adjoint::Objective> obj(n);
  std::vector<adjoint::AdjointResult> r(n);
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD,
                                          with_objective(p.cfg, objective_yamls[i]), "adj.yaml",
                                          "/", {}, optimization::case_schema(), cfg[i]) == 0);
    clear_error();
    const PetscErrorCode ierr = obj[i].setup(p.res, cfg[i]);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    adjoint::AdjointSolver adj;
    REQUIRE(adj.setup(p.res, cfg[i]) == 0);
    REQUIRE(adj.solve(p.w, obj[i], &r[i]) == 0);
    REQUIRE(r[i].relative_residual < 1e-10);
    REQUIRE(r[i].gradient.parameters.size() == r[0].gradient.parameters.size());
  }
  Vec w1;
  REQUIRE(VecDuplicate(p.w, &w1) == 0);
  const discretization::ParameterRegistry registry(p.res);
  // J_i at the state re-solved from p.w (the first objective's re-solve; the others read it)
  auto resolve = [&](std::vector<double> *J) {
    REQUIRE(adjoint::resolve_objective(p.res, cfg[0], obj[0], p.w, w1, &(*J)[0], nullptr) == 0);
    discretization::LocalState state;
    REQUIRE(p.res.local_state(discretization::kSteady, w1, &state) == 0);
    for (std::size_t i = 1; i < n; ++i) REQUIRE(obj[i].value(p.res, state, &(*J)[i]) == 0);
  };
  for (std::size_t k = 0; k < r[0].gradient.parameters.size(); ++k) {
    const auto &par = r[0].gradient.parameters[k];
    const double h = 1e-5 * std::max(std::abs(par.value), 1e-3);
    std::vector<double> Jp(n), Jm(n);
    REQUIRE(registry.set(p.res, par.name, par.value + h) == 0);
    resolve(&Jp);
    REQUIRE(registry.set(p.res, par.name, par.value - h) == 0);
    resolve(&Jm);
    REQUIRE(registry.set(p.res, par.name, par.value) == 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto &g = r[i].gradient.parameters[k];
      REQUIRE(g.name == par.name);
      const double fd = (Jp[i] - Jm[i]) / (2 * h);
      CAPTURE(objective_yamls[i], par.name, par.value, r[i].J, g.gradient, fd);
      // tolerance: relative, plus the round-off of the differences (1e-13 |J| / h)
      REQUIRE(std::abs(g.gradient - fd) <= tol * std::abs(fd) + 1e-13 * std::abs(r[i].J) / h);
    }
  }
  VecDestroy(&w1);
}

// Taylor test of dJ/dX for a smooth bump on the wall `patch` (bump_displacement towards (1, 1, 0);
// `tangential`: turned to move along the wall):
// |J(X + eps dX) - J - eps dJ/dX . dX| falls with rate >= 1.9 over the steps `eps`
inline void check_shape_taylor(Problem &p, const std::string &objective_yaml,
                               const std::vector<double> &eps_list, const char *patch = "cylinder",
                               bool tangential = false) {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, with_objective(p.cfg, objective_yaml),
                                        "adj.yaml", "/", {}, optimization::case_schema(),
                                        cfg) == 0);
  adjoint::Objective obj;
  REQUIRE(obj.setup(p.res, cfg) == 0);
  adjoint::AdjointSolver adj;
  REQUIRE(adj.setup(p.res, cfg) == 0);
  adjoint::AdjointResult r;
  REQUIRE(adj.solve(p.w, obj, &r) == 0);
  std::vector<Vec3<double>> dX;
  REQUIRE(adjoint::bump_displacement(p.res, p.mesh.patch_index(patch), Vec3<double>(1, 1, 0),
                                     &dX) == 0);
  if (tangential) // turned by 90 degrees in the x-y plane: moves along the wall, changes its areas
    for (auto &d : dX) d = Vec3<double>(-d[1], d[0], d[2]);
  double dJ;
  REQUIRE(adjoint::vertex_dot(p.mesh, r.gradient.X, dX, &dJ) == 0);
  const std::vector<Vec3<double>> X0 = p.res.coordinates();
  Vec w1;
  REQUIRE(VecDuplicate(p.w, &w1) == 0);
  std::vector<double> remainder;
  for (double eps : eps_list) {
    std::vector<Vec3<double>> X = X0;
    for (PetscInt v = 0; v < p.mesh.n_vertices; ++v) X[v] += eps * dX[v];
    REQUIRE(p.res.move_to(X, "bump") == 0);
    double J;
    REQUIRE(adjoint::resolve_objective(p.res, cfg, obj, p.w, w1, &J, nullptr) == 0);
    remainder.push_back(std::abs(J - r.J - eps * dJ));
    CAPTURE(eps, J, r.J, dJ, remainder.back());
  }
  REQUIRE(p.res.move_to(X0, "restore") == 0);
  VecDestroy(&w1);
  for (std::size_t k = 0; k + 1 < remainder.size(); ++k) {
    const double rate = std::log2(remainder[k] / remainder[k + 1]);
    CAPTURE(k, remainder[k], remainder[k + 1], rate, dJ);
    REQUIRE(rate >= 1.9);
  }
}

} // namespace karman::test
