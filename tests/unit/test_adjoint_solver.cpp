// The steady adjoint solve (src/adjoint/adjoint_solver.cpp): (dR/dw)^T psi = -dJ/dw at the
// converged state, and dJ/da = dJ/da|explicit + psi^T dR/da:
//  - adjoint gradients against central differences of re-solved objectives for every parameter
//    kind (DFG 2D-1 with a rotating/translating cylinder, blowing walls and an outlet pressure;
//    far-field cylinder, Re 40, at an angle of attack: its gradient through the stream and the
//    turned force directions), for drag, lift, force, pressure difference, pressure drop, moment
//    and probe matching;
//  - same_operator: a second objective at the same state with the first solve's Jacobian and LU
//    gives the gradient of a solver that assembles and factorizes anew; without a previous solve
//    it is refused with a message;
//  - the iterative linear solver (GMRES on J^T with the multigrid of the compact matrix
//    transposed) gives the direct solver's parameter and shape gradients (control-cylinder mesh,
//    452 cells), with GMRES(solver::kSteadyAdjointRestart);
//  - the reported relative residual |J^T psi + g| / |g| is the solve's: below adjoint.rtol;
//  - solver.linear auto: a solve whose iterative solve fails is done again with the LU of J (the
//    direct solver's gradient), and the solver keeps the LU; iterative itself refuses it  [mpi].
#include "adjoint_check.hpp"

using namespace karman;
using test::check_parameters;
using test::kDfg;
using test::make;
using test::Problem;
using test::with_objective;

namespace {

// the case's resolved text with `objective` and the overrides, parsed
void reload(const Problem &p, const std::string &objective,
            const std::vector<std::string> &overrides, config::CaseConfig *cfg) {
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, with_objective(p.cfg, objective),
                                        "adj.yaml", "/", overrides, optimization::case_schema(),
                                        *cfg) == 0);
}

// max over the parameters of |a - b| / max |b|, and the same of the dJ/dX along `dX`
double gradient_difference(const Problem &p, const adjoint::AdjointResult &a,
                           const adjoint::AdjointResult &b, const std::vector<Vec3<double>> &dX) {
  REQUIRE(a.gradient.parameters.size() == b.gradient.parameters.size());
  double scale = 0, diff = 0;
  for (std::size_t i = 0; i < a.gradient.parameters.size(); ++i) {
    REQUIRE(a.gradient.parameters[i].name == b.gradient.parameters[i].name);
    scale = std::max(scale, std::abs(b.gradient.parameters[i].gradient));
    diff = std::max(
        diff, std::abs(a.gradient.parameters[i].gradient - b.gradient.parameters[i].gradient));
  }
  double da, db;
  REQUIRE(adjoint::vertex_dot(p.mesh, a.gradient.X, dX, &da) == 0);
  REQUIRE(adjoint::vertex_dot(p.mesh, b.gradient.X, dX, &db) == 0);
  CAPTURE(diff, scale, da, db);
  REQUIRE(scale > 0);
  REQUIRE(db != 0);
  return std::max(diff / scale, std::abs(da - db) / std::abs(db));
}

} // namespace

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
  farfield: {type: far-field, velocity: [1, 0.05], angle_of_attack: 3}
)",
       std::string(KARMAN_SOURCE_DIR) + "/cases/cylinder-unbounded/cylinder.geo", 0,
       {"cylinder", "farfield"}, &p);
  // (the angle of attack turns the stream and the force directions: wind-axis drag and lift)
  check_parameters(
      p,
      {"objective: {type: drag, walls: [cylinder]}\n",
       "objective: {type: sum, terms: [{type: lift, walls: [cylinder], lift_direction: "
       "[0.1, 1]}, {type: force, direction: [1, 1], weight: 0.5}, {type: moment, "
       "walls: [cylinder], weight: 0.3}]}\n"},
      1e-6);
}

TEST_CASE("adjoint solver: a reused operator gives the gradient of a fresh solve; reuse without a "
          "solve is refused",
          "[adjoint][mpi]") {
  Problem p;
  make(kDfg, "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  // (the direct solver: reuse keeps the LU factors)
  config::CaseConfig drag, lift;
  reload(p, "objective: {type: drag, walls: [cylinder]}\n", {"solver.linear=direct"}, &drag);
  reload(p,
         "objective: {type: sum, terms: [{type: lift, walls: [cylinder]}, {type: pressure-drop, "
         "patches: [inlet, outlet], weight: 0.5}]}\n",
         {"solver.linear=direct"}, &lift);
  adjoint::Objective j_drag, j_lift;
  REQUIRE(j_drag.setup(p.res, drag) == 0);
  REQUIRE(j_lift.setup(p.res, lift) == 0);
  std::vector<Vec3<double>> dX;
  REQUIRE(adjoint::bump_displacement(p.res, p.mesh.patch_index("cylinder"), Vec3<double>(1, 1, 0),
                                     &dX) == 0);
  adjoint::AdjointSolver reused, fresh;
  REQUIRE(reused.setup(p.res, drag) == 0);
  REQUIRE(fresh.setup(p.res, lift) == 0);
  adjoint::AdjointResult r_drag, r_reused, r_fresh;
  REQUIRE(reused.solve(p.w, j_drag, &r_drag) == 0);
  REQUIRE(reused.solve(p.w, j_lift, &r_reused, true) == 0);
  REQUIRE(fresh.solve(p.w, j_lift, &r_fresh) == 0);
  CHECK(r_reused.J == r_fresh.J);
  CHECK(r_reused.relative_residual <= 1e-10);
  CHECK(gradient_difference(p, r_reused, r_fresh, dX) <= 1e-10);
  // (and the two objectives' gradients differ: the reused solve did solve for the second)
  CHECK(gradient_difference(p, r_reused, r_drag, dX) > 1e-3);
  // same_operator on a solver that has not solved yet
  adjoint::AdjointSolver unused;
  REQUIRE(unused.setup(p.res, drag) == 0);
  adjoint::AdjointResult r;
  clear_error();
  CHECK(unused.solve(p.w, j_drag, &r, true) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("same_operator needs a previous solve"));
  clear_error();
}

TEST_CASE("adjoint solver: the iterative solve gives the direct solve's gradients",
          "[adjoint][iterative][mpi]") {
  Problem p;
  make(kDfg, "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  const std::string objective = "objective: {type: sum, terms: [{type: drag, walls: [cylinder]}, "
                                "{type: moment, walls: [cylinder], weight: 0.3}]}\n";
  config::CaseConfig direct, iterative;
  reload(p, objective, {"solver.linear=direct"}, &direct);
  reload(p, objective, {"solver.linear=iterative", "adjoint.rtol=1e-12"}, &iterative);
  adjoint::Objective j;
  REQUIRE(j.setup(p.res, direct) == 0);
  std::vector<Vec3<double>> dX;
  REQUIRE(adjoint::bump_displacement(p.res, p.mesh.patch_index("cylinder"), Vec3<double>(1, 1, 0),
                                     &dX) == 0);
  adjoint::AdjointResult rd, ri;
  {
    adjoint::AdjointSolver s;
    REQUIRE(s.setup(p.res, direct) == 0);
    REQUIRE(s.solve(p.w, j, &rd) == 0);
  }
  {
    adjoint::AdjointSolver s;
    clear_error();
    const PetscErrorCode ierr = s.setup(p.res, iterative) || s.solve(p.w, j, &ri);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
  }
  CAPTURE(ri.linear_iterations, ri.relative_residual);
  CHECK(ri.linear_iterations > 1); // a Krylov solve, not the LU
  CHECK(ri.relative_residual <= 1e-12);
  CHECK(ri.J == rd.J);
  CHECK(gradient_difference(p, ri, rd, dX) <= 1e-8);

  CHECK(ri.gmres_restart == solver::kSteadyAdjointRestart);
}

namespace {
// the steady adjoint multigrid's ILU shift (option -adj_mg_levels_sub_pc_factor_shift_type)
std::string shift_option() {
  char value[64] = "";
  PetscBool set = PETSC_FALSE;
  PetscOptionsGetString(nullptr, "adj_", "-mg_levels_sub_pc_factor_shift_type", value,
                        sizeof(value), &set);
  return set ? value : "";
}

// DFG 2D-1 level 0 at its steady state with the drag as objective, the case loaded with
// solver.linear auto, direct and iterative, and the LU's adjoint as the reference
struct DragCases {
  Problem p;
  config::CaseConfig auto_cfg, direct_cfg, iterative_cfg;
  adjoint::Objective obj;
  adjoint::AdjointResult direct;
  DragCases() {
    make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
    const std::string drag = "objective: {type: drag, walls: [cylinder]}\n";
    for (auto [linear, cfg] : {std::pair{"auto", &auto_cfg}, std::pair{"direct", &direct_cfg},
                               std::pair{"iterative", &iterative_cfg}})
      REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, with_objective(p.cfg, drag),
                                            "adj.yaml", "/",
                                            {std::string("solver.linear=") + linear},
                                            optimization::case_schema(), *cfg) == 0);
    REQUIRE(obj.setup(p.res, auto_cfg) == 0);
    adjoint::AdjointSolver lu;
    REQUIRE(lu.setup(p.res, direct_cfg) == 0);
    REQUIRE(lu.solve(p.w, obj, &direct) == 0);
    CHECK_FALSE(direct.linear_fallback);
  }
};
} // namespace

TEST_CASE("adjoint: start_shifted begins with the smoothers' positive-definite shift, and a solve "
          "that fails so is retried with zero pivots only before the LU",
          "[adjoint][mpi]") {
  // For the state of a forward solve whose unshifted smoothers failed too (FlowCase:
  // SteadySummary::smoothers_reshifted), the adjoint starts shifted; its gradient is the LU's
  DragCases c;
  Problem &p = c.p;
  const adjoint::AdjointResult &direct = c.direct;
  adjoint::AdjointResult shifted, retried;
  // (a gradient that vanishes, the outlet's pressure level: to 1e-8 of the largest)
  double largest = 0;
  for (const auto &g : direct.gradient.parameters)
    largest = std::max(largest, std::abs(g.gradient));
  const auto same_gradient = [&](const adjoint::AdjointResult &r) {
    for (std::size_t k = 0; k < direct.gradient.parameters.size(); ++k) {
      const double a = r.gradient.parameters[k].gradient,
                   b = direct.gradient.parameters[k].gradient;
      CAPTURE(direct.gradient.parameters[k].name, a, b);
      CHECK(std::abs(a - b) <= 1e-8 * std::abs(b) + 1e-8 * largest);
    }
  };
  {
    adjoint::AdjointSolver s;
    REQUIRE(s.setup(p.res, c.auto_cfg) == 0);
    CHECK(shift_option() == "nonzero"); // the steady adjoint's default
    REQUIRE(s.start_shifted() == 0);
    CHECK(shift_option() == "positive_definite");
    REQUIRE(s.solve(p.w, c.obj, &shifted) == 0);
    CHECK_FALSE(shifted.linear_fallback);
    CHECK(shifted.relative_residual < 1e-9);
    same_gradient(shifted);
  }
  {
    // one GMRES iteration (-adj_ksp_max_it 1): the shifted solve fails, the retry with zero
    // pivots only fails too, then the LU
    test::ScopedOptions cap{{"-adj_ksp_max_it", "1"}};
    REQUIRE(cap.set);
    adjoint::AdjointSolver s;
    REQUIRE(s.setup(p.res, c.auto_cfg) == 0);
    REQUIRE(s.start_shifted() == 0);
    clear_error();
    const PetscErrorCode ierr = s.solve(p.w, c.obj, &retried);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    CHECK(shift_option() == "nonzero"); // the retry's
    CHECK(retried.linear_fallback);
    same_gradient(retried);
  }
}

TEST_CASE("adjoint: with solver.linear auto a failed iterative solve is done again with the LU, "
          "which the later solves keep",
          "[adjoint][mpi]") {
  // -adj_ksp_max_it 1 stops the multigrid-preconditioned GMRES (prefix adj_) after one
  // iteration; the fallback (prefix adj_fallback_) does not see it.  Its gradient is that of
  // solver.linear: direct; iterative itself refuses the failed solve
  DragCases c;
  Problem &p = c.p;
  const adjoint::Objective &obj = c.obj;
  const config::CaseConfig &auto_cfg = c.auto_cfg, &iterative_cfg = c.iterative_cfg;
  const adjoint::AdjointResult &direct = c.direct;
  adjoint::AdjointResult forced, again;
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
  // before the LU the multigrid tried once more with its smoothers' pivots shifted positive
  // definite (the steady adjoint's default shifts only zero pivots): 1 + 1 iterations
  CHECK(shift_option() == "positive_definite");
  CHECK(forced.linear_iterations == 1); // (the LU's; the two failed GMRES solves are logged)
  for (const adjoint::AdjointResult *r : {&forced, &again})
    for (std::size_t k = 0; k < direct.gradient.parameters.size(); ++k) {
      const double a = r->gradient.parameters[k].gradient,
                   b = direct.gradient.parameters[k].gradient;
      CAPTURE(direct.gradient.parameters[k].name, a, b);
      CHECK(std::abs(a - b) <= 1e-10 * std::abs(b) + 1e-14);
    }
  adjoint::AdjointSolver iterative;
  REQUIRE(iterative.setup(p.res, iterative_cfg) == 0);
  CHECK(shift_option() == "nonzero"); // a new solver: karman's default again
  adjoint::AdjointResult refused;
  CHECK(iterative.solve(p.w, obj, &refused) != 0);
  CHECK(last_error_message().find("the adjoint linear solve did not converge") !=
        std::string::npos);
  clear_error();
}
