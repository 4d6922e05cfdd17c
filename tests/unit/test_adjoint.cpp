// The steady discrete adjoint:
//  - dot-product test <J v, u> = <v, J^T u>;
//  - the reverse sweep of psi^T R over faces and gradients equals J^T psi (assembled);
//  - adjoint gradients vs central finite differences for every parameter kind (DFG 2D-1
//    with a rotating/translating cylinder and blowing walls; far-field cylinder, Re 40),
//    for drag, lift, pressure difference, pressure drop, moment and probe matching;
//  - shape: Taylor test for a smooth bump on the cylinder.
// [mpi]: also on 2 ranks.
#include "karman/optimization/case_schema.hpp"
#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/core/error.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace karman;

namespace {

struct Problem {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
  Vec w = nullptr;
  ~Problem() {
    if (w) VecDestroy(&w);
  }
};

void make(const std::string &yaml, const std::string &geo, int level,
          const std::vector<std::string> &bcs, Problem *p, bool solve = true, int dim = 2) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "adj.yaml", "/", {},
                                        optimization::case_schema(), p->cfg) == 0);
  test::load(PETSC_COMM_WORLD, geo, level, dim, bcs, &p->mesh);
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
const std::string kDfg = R"(
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
std::string with_objective(const config::CaseConfig &cfg, const std::string &objective_yaml) {
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
void check_parameters(Problem &p, const std::vector<std::string> &objective_yamls, double tol) {
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
void check_shape_taylor(Problem &p, const std::string &objective_yaml,
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

TEST_CASE("adjoint parameter gradients equal finite differences (DFG 2D-1, coarse)",
          "[adjoint][verification]") {
  Problem p;
  make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  check_parameters(
      p,
      {"objective: {type: drag, walls: [cylinder]}\n",
       "objective: {type: sum, terms: [{type: lift, walls: [cylinder], weight: 2}, "
       "{type: pressure-difference, points: [[0.15, 0.2], [0.25, 0.2]]}, "
       "{type: pressure-drop, patches: [inlet, outlet]}, {type: moment, walls: [cylinder], weight: "
       "0.3}, "
       "{type: probe-match, probes: [[0.4, 0.25]], observed: [[0.01, 0.2, 0.01]], weight: 10}]}\n"},
      1e-6);
}

TEST_CASE("adjoint: with solver.linear auto a failed iterative solve is done again with the LU, "
          "which the later solves keep",
          "[adjoint][mpi]") {
  // -adj_ksp_max_it 1 stops the multigrid-preconditioned GMRES (prefix adj_) after one
  // iteration; the fallback (prefix adj_fallback_) does not see it.  Its gradient is that of
  // solver.linear: direct; iterative itself refuses the failed solve
  Problem p;
  make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  const std::string drag = "objective: {type: drag, walls: [cylinder]}\n";
  const auto load = [&](const std::string &linear, config::CaseConfig *cfg) {
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, with_objective(p.cfg, drag), "adj.yaml",
                                          "/", {"solver.linear=" + linear},
                                          optimization::case_schema(), *cfg) == 0);
  };
  config::CaseConfig auto_cfg, direct_cfg, iterative_cfg;
  load("auto", &auto_cfg);
  load("direct", &direct_cfg);
  load("iterative", &iterative_cfg);
  adjoint::Objective obj;
  REQUIRE(obj.setup(p.res, auto_cfg) == 0);
  adjoint::AdjointResult direct, forced, again;
  adjoint::AdjointSolver lu;
  REQUIRE(lu.setup(p.res, direct_cfg) == 0);
  REQUIRE(lu.solve(p.w, obj, &direct) == 0);
  CHECK_FALSE(direct.linear_fallback);
  test::ScopedOptions cap{{"-adj_ksp_max_it", "1"}};
  REQUIRE(cap.set);
  {
    adjoint::AdjointSolver fallback;
    REQUIRE(fallback.setup(p.res, auto_cfg) == 0);
    clear_error();
    const PetscErrorCode ierr = fallback.solve(p.w, obj, &forced);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    REQUIRE(fallback.solve(p.w, obj, &again, true) == 0);
  }
  CHECK(forced.linear_fallback);
  CHECK(again.linear_fallback);
  CHECK(forced.relative_residual < 1e-10);
  for (const adjoint::AdjointResult *r : {&forced, &again})
    for (std::size_t k = 0; k < direct.gradient.parameters.size(); ++k) {
      const double a = r->gradient.parameters[k].gradient,
                   b = direct.gradient.parameters[k].gradient;
      CAPTURE(direct.gradient.parameters[k].name, a, b);
      CHECK(std::abs(a - b) <= 1e-10 * std::abs(b) + 1e-14);
    }
  adjoint::AdjointSolver iterative;
  REQUIRE(iterative.setup(p.res, iterative_cfg) == 0);
  adjoint::AdjointResult refused;
  CHECK(iterative.solve(p.w, obj, &refused) != 0);
  CHECK(last_error_message().find("the adjoint linear solve did not converge") !=
        std::string::npos);
  clear_error();
}

TEST_CASE("adjoint parameter gradients equal finite differences (cylinder, far field, Re 40)",
          "[adjoint][verification]") {
  // (atol 1e-13: the round-off floor of |R| lies at 2-3e-14 here; with atol 1e-14 every re-solve
  // took 10-19 Newton iterations at the floor instead of 1-2, and the base solve 27 instead of 8)
  Problem p;
  make(R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.025}
initial: {velocity: [1, 0]}
solver: {rtol: 1e-14, atol: 1e-13, max_iterations: 60}
boundaries:
  cylinder: {type: wall}
  farfield: {type: far-field, velocity: [1, 0.05]}
)",
       std::string(KARMAN_SOURCE_DIR) + "/cases/cylinder-unbounded/cylinder.geo", 0,
       {"cylinder", "farfield"}, &p);
  check_parameters(p, {"objective: {type: drag, walls: [cylinder]}\n"}, 1e-6);
}

// The DFG channel with a heated cylinder: the scalar at value 0 on the inlet, 1 on the cylinder,
// a flux through the walls, out through the outlet, with a source and decay.
std::string scalar_case() {
  return kDfg + R"(scalar:
  diffusivity: 0.004
  source: 0.3
  decay: 0.2
  boundaries:
    inlet: {type: value, value: 0.1}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.02}
    outlet: {type: outflow}
)";
}

TEST_CASE("scalar: adjoint gradients of the Nusselt number, the outlet variance and the drag equal "
          "finite differences",
          "[adjoint][scalar][mpi]") {
  // every parameter: the flow's boundaries and viscosity (through the volume flux that carries
  // the scalar) and the scalar's diffusivity, source, decay, boundary values and flux
  // (the coarse cylinder channel of the control tests, 452 cells)
  Problem p;
  make(scalar_case(), "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  check_parameters(p,
                   {"objective: {type: sum, terms: [{type: nusselt, walls: [cylinder], "
                    "scalar_difference: 0.9}, {type: drag, walls: [cylinder], weight: 0.1}, "
                    "{type: scalar-variance, patches: [outlet], weight: 300}]}\n",
                    "objective: {type: nusselt, walls: [cylinder]}\n"},
                   1e-7);
  // the shape derivative of the Nusselt number: Taylor test
  check_shape_taylor(p,
                     "objective: {type: sum, terms: [{type: nusselt, walls: [cylinder]}, "
                     "{type: scalar-variance, patches: [outlet], weight: 300}]}\n",
                     {1e-3, 5e-4, 2.5e-4});
  // the outlet variance's dependence on the outlet's own faces (centroids and areas): a bump on
  // the outlet moving along it
  check_shape_taylor(p, "objective: {type: scalar-variance, patches: [outlet]}\n",
                     {1e-3, 5e-4, 2.5e-4}, "outlet", true);
}

TEST_CASE("shape gradient: Taylor test for a smooth bump on the cylinder", "[adjoint][mpi]") {
  // drag plus the moment on the rotating cylinder (its rotating-wall traction depends on the
  // face areas and centroids)
  Problem p;
  make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  check_shape_taylor(p,
                     "objective: {type: sum, terms: [{type: drag, walls: [cylinder]}, {type: "
                     "moment, walls: [cylinder], weight: 30}]}\n",
                     {4e-4, 2e-4, 1e-4});
}

namespace {
const std::string kDfg3d = R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1, area: 0.041}
solver: {rtol: 1e-14, atol: 1e-16, max_iterations: 60}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.45, direction: [1, 0, 0], profile: parabolic, profile_axis: y, profile_range: [0, 0.41], profile_axis2: z, profile_range2: [0, 0.41]}
  outlet: {type: pressure-outlet, pressure: 0.0}
  walls: {type: wall}
  cylinder: {type: wall}
)";
} // namespace

TEST_CASE("3D adjoint parameter gradients equal finite differences (DFG 3D-1Z, coarse)",
          "[adjoint][verification][3d]") {
  // hexahedra in the ring around the cylinder, prisms elsewhere (tests/data/dfg-3d-coarse.geo)
  Problem p;
  make(kDfg3d, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  check_parameters(p, {"objective: {type: drag, walls: [cylinder]}\n"}, 1e-6);
}

TEST_CASE("3D shape gradient: Taylor test for a bump on the cylinder (DFG 3D-1Z, coarse)",
          "[adjoint][3d][mpi]") {
  Problem p;
  make(kDfg3d, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  // (eps from 2e-3 down gives remainders 2.4e-6, 9.8e-7, 2.9e-7, 7.8e-8, 2.0e-8, 5.1e-9: rates
  // 1.31, 1.74, 1.91, 1.96, 1.98 -- the third-order term dominates the larger steps)
  check_shape_taylor(p, "objective: {type: drag, walls: [cylinder]}\n", {2.5e-4, 1.25e-4, 6.25e-5});
}

// The same 3D gradients with the iterative linear solver (Jacobian-free Newton-GMRES with coupled
// multigrid forward, GMRES with the multigrid applied transposed for the adjoint): the steady
// forward converges from rest, the parameter gradients equal central differences of iterative
// re-solves and the shape Taylor test keeps its rate.
TEST_CASE("3D gradients with the iterative linear solver: finite differences and Taylor test",
          "[adjoint][3d][iterative][mpi]") {
  std::string yaml = kDfg3d;
  const std::string solver_line = "solver: {rtol: 1e-14, atol: 1e-16, max_iterations: 60}";
  REQUIRE(yaml.find(solver_line) != std::string::npos);
  yaml.replace(yaml.find(solver_line), solver_line.size(),
               "solver: {rtol: 1e-14, atol: 1e-14, max_iterations: 60, linear: iterative}");
  Problem p;
  make(yaml, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  check_parameters(p, {"objective: {type: drag, walls: [cylinder]}\n"}, 1e-6);
  check_shape_taylor(p, "objective: {type: drag, walls: [cylinder]}\n", {2.5e-4, 1.25e-4, 6.25e-5});
}
