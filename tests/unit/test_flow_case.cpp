// The library API of a case (src/driver/flow_case.cpp, force_history.cpp):
//  - FlowCase::solve_steady converges the coarse DFG 2D-1 case to |R| <= solver.atol,
//    calls the observer once per Newton iteration, returns the force coefficients of the
//    solution (equal to the monitors evaluated afresh at the returned state) and writes no
//    file; the steady gradient of the drag with respect to the viscosity equals central
//    finite differences of re-solves (adjoint::check_parameter); a second objective (lift)
//    with the drag adjoint's Jacobian and LU factors reused equals a fresh solve's gradient;
//  - after a forward solve that widened its GMRES restart the steady adjoint keeps its own
//    (solver::kSteadyAdjointRestart), and its gradient equals central differences;
//  - a warm start (reference residual > 0) begins with the multigrid smoothers shifting only
//    zero pivots, where the cold solve from rest kept the positive-definite shift, and converges
//    to the cold solve's state;
//  - a steady solve that cannot converge (one Newton iteration) is reported, not an error,
//    and hands back the state of least residual;
//  - FlowCase::advance_to lands exactly on t_end (the last step shortened), calls the
//    observer once per step; a step that does not converge stops the stepping with the
//    solver's state left at the last good level, again without an error;
//  - lift_frequency recovers the frequency of a sampled sine, window_statistics the mean
//    and time average of a known signal over its window.
#include "karman/optimization/case_schema.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/driver/force_history.hpp"
#include "karman/discretization/parameters.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

using namespace karman;

namespace {

std::string dfg_case(const std::string &extra) {
  return test::dfg_case_yaml(0, "adjoint: {parameters: [fluid.viscosity]}\n" + extra);
}

void load_case(const std::string &text, const std::vector<std::string> &overrides,
               config::CaseConfig *cfg, driver::FlowCase *fc) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "test.yaml", "/", overrides,
                                        optimization::case_schema(), *cfg) == 0);
  const PetscErrorCode ierr = fc->load(PETSC_COMM_WORLD, *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

std::size_t files_in(const std::string &dir) {
  std::size_t n = 0;
  for (const auto &e : std::filesystem::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

} // namespace

TEST_CASE("FlowCase: steady solve and gradient as values, no files", "[driver][mpi]") {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(dfg_case(""), {"solver.rtol=1e-14"}, &cfg, &fc);
  const std::string dir = test::work_dir("flow_case_steady");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir); // anything written relative to the working directory
  Vec w, R;
  REQUIRE(fc.create_state(&w) == 0);
  REQUIRE(fc.create_state(&R) == 0);
  REQUIRE(fc.initial_state(w) == 0);
  int observed = 0;
  driver::SteadySolution sol;
  const PetscErrorCode ierr = fc.solve_steady(
      w, nullptr,
      [&](const solver::NewtonRecord &, const solver::FlowMonitors::Values &) -> PetscErrorCode {
        ++observed;
        return 0;
      },
      &sol);
  std::filesystem::current_path(cwd);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  REQUIRE(sol.summary.converged);
  CHECK(observed == static_cast<int>(sol.summary.history.size()));
  CHECK(files_in(dir) == 0);
  double rnorm;
  REQUIRE(fc.residual().residual(discretization::kSteady, w, R) == 0);
  REQUIRE(VecNorm(R, NORM_2, &rnorm) == 0);
  CHECK(rnorm <= cfg.section("solver").real("atol"));
  discretization::LocalState state;
  solver::FlowMonitors::Values v;
  REQUIRE(fc.evaluate(discretization::kSteady, w, &state, &v) == 0);
  CHECK(v.cd == sol.values.cd);
  CHECK(v.cl == sol.values.cl);
  CHECK(sol.values.cd > 5.0); // DFG 2D-1 drag is 5.58 on fine meshes; the coarse mesh is near
  CHECK(sol.values.cd < 6.5);

  adjoint::AdjointResult r;
  REQUIRE(fc.steady_gradient(w, &r) == 0);
  REQUIRE(r.gradient.parameters.size() == 1);
  CHECK(r.J == Approx(sol.values.cd).epsilon(1e-12));
  const adjoint::Objective *objective;
  REQUIRE(fc.objective(&objective) == 0);
  adjoint::ParameterCheck check;
  REQUIRE(adjoint::check_parameter(fc.residual(), cfg, *objective, w, r.J, r.gradient.parameters[0],
                                   &check) == 0);
  CAPTURE(r.gradient.parameters[0].gradient, check.best_fd, check.best_relative_difference);
  CHECK(check.ok);
  CHECK(check.best_relative_difference < 1e-6);
  // a second gradient call reuses the adjoint solver and gives the same answer
  adjoint::AdjointResult r2;
  REQUIRE(fc.steady_gradient(w, &r2) == 0);
  CHECK(r2.gradient.parameters[0].gradient ==
        Approx(r.gradient.parameters[0].gradient).epsilon(1e-10));
  // another objective at the same state with the drag's Jacobian and LU factors (same_state)
  // equals the gradient from a fresh assembly and factorization
  config::CaseConfig lift_cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, dfg_case(""), "test.yaml", "/",
                                        {"objective.type=lift"}, optimization::case_schema(),
                                        lift_cfg) == 0);
  adjoint::Objective lift;
  REQUIRE(lift.setup(fc.residual(), lift_cfg) == 0);
  adjoint::AdjointResult reused, fresh;
  REQUIRE(fc.gradient(w, lift, &reused, true) == 0);
  REQUIRE(fc.gradient(w, lift, &fresh, false) == 0);
  CHECK(reused.J == fresh.J);
  CHECK(reused.J != Approx(r.J).epsilon(1e-3)); // another function than the drag
  CHECK(reused.relative_residual < 1e-10);
  // (to 1e-12 of the largest: a nearly vanishing one, the outlet pressure's, is round-off)
  double gmax = 0;
  for (const auto &p : fresh.gradient.parameters) gmax = std::max(gmax, std::abs(p.gradient));
  for (std::size_t i = 0; i < fresh.gradient.parameters.size(); ++i) {
    CAPTURE(fresh.gradient.parameters[i].name, gmax);
    CHECK(
        std::abs(reused.gradient.parameters[i].gradient - fresh.gradient.parameters[i].gradient) <=
        1e-12 * std::abs(fresh.gradient.parameters[i].gradient) + 1e-14 * gmax);
  }
  double xmax = 0, dmax = 0;
  for (std::size_t v = 0; v < fresh.gradient.X.size(); ++v)
    for (int d = 0; d < 2; ++d) {
      xmax = std::max(xmax, std::abs(fresh.gradient.X[v][d]));
      dmax = std::max(dmax, std::abs(fresh.gradient.X[v][d] - reused.gradient.X[v][d]));
    }
  CAPTURE(dmax, xmax);
  CHECK(dmax <= 1e-12 * xmax);
  VecDestroy(&w);
  VecDestroy(&R);
}

TEST_CASE("FlowCase: the steady adjoint after a forward solve that widened its GMRES restart",
          "[driver][mpi]") {
  // with every Newton step's GMRES to 1e-8 and at most 25 iterations, GMRES(20) stops on a step
  // and the forward widens its restart to 25 (solver::widen_restart); the adjoint solves with its
  // own GMRES(150) and its gradient equals central differences.  Without the cap: no widening
  const auto run = [](const std::vector<std::string> &overrides, driver::SteadySolution *sol,
                      adjoint::AdjointResult *r, adjoint::ParameterCheck *check) {
    config::CaseConfig cfg;
    driver::FlowCase fc;
    load_case(dfg_case(""), overrides, &cfg, &fc);
    Vec w;
    REQUIRE(fc.create_state(&w) == 0);
    REQUIRE(fc.initial_state(w) == 0);
    {
      test::ScopedOptions fixed{{"-snes_ksp_ew", "false"}, {"-ksp_rtol", "1e-8"}};
      REQUIRE(fixed.set);
      REQUIRE(fc.solve_steady(w, nullptr, {}, sol) == 0);
    }
    REQUIRE(sol->summary.converged);
    REQUIRE(fc.steady_gradient(w, r) == 0);
    const adjoint::Objective *objective;
    REQUIRE(fc.objective(&objective) == 0);
    if (check)
      REQUIRE(adjoint::check_parameter(fc.residual(), cfg, *objective, w, r->J,
                                       r->gradient.parameters[0], check) == 0);
    VecDestroy(&w);
  };
  driver::SteadySolution capped_sol, plain_sol;
  adjoint::AdjointResult capped, plain;
  adjoint::ParameterCheck capped_check;
  run({"solver.linear=iterative", "solver.linear_max_iterations=25", "solver.rtol=1e-14"},
      &capped_sol, &capped, &capped_check);
  run({"solver.linear=iterative", "solver.rtol=1e-14"}, &plain_sol, &plain, nullptr);
  CAPTURE(capped.linear_iterations, plain.linear_iterations, capped_check.best_relative_difference);
  CHECK(capped_sol.summary.widened_restart == 25);
  CHECK(capped.gmres_restart == solver::kSteadyAdjointRestart);
  CHECK(capped_check.ok);
  CHECK(capped_check.best_relative_difference < 1e-6);
  CHECK(plain_sol.summary.widened_restart == 0);
  CHECK(plain.gmres_restart == solver::kSteadyAdjointRestart);
  CHECK(capped.gradient.parameters[0].gradient ==
        Approx(plain.gradient.parameters[0].gradient).epsilon(1e-8));
}

TEST_CASE("FlowCase: a warm start shifts only zero pivots in its smoothers, to the same state",
          "[driver][mpi]") {
  // the cold solve from rest keeps the positive-definite shift of the multigrid's ILU pivots (the
  // Stokes-like Jacobians at rest); a warm start (reference residual > 0, a design loop's) starts
  // with only zero pivots shifted and converges to the cold solve's state
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(dfg_case(""), {"solver.linear=iterative", "solver.rtol=1e-14"}, &cfg, &fc);
  Vec w, cold;
  REQUIRE(fc.create_state(&w) == 0);
  REQUIRE(fc.create_state(&cold) == 0);
  REQUIRE(fc.initial_state(w) == 0);
  driver::SteadySolution sol;
  REQUIRE(fc.solve_steady(w, nullptr, {}, &sol) == 0);
  REQUIRE(sol.summary.converged);
  REQUIRE_FALSE(sol.summary.smoothers_unshifted); // (else the warm start below proves nothing)
  REQUIRE(VecCopy(w, cold) == 0);
  const double r_cold = sol.summary.initial_residual;
  REQUIRE(VecScale(w, 0.98) == 0); // a start near the solution
  driver::SteadySolution warm;
  REQUIRE(fc.solve_steady(w, nullptr, {}, &warm, r_cold) == 0);
  CAPTURE(warm.summary.reason, warm.summary.iterations);
  REQUIRE(warm.summary.converged);
  CHECK(warm.summary.smoothers_unshifted);
  CHECK_FALSE(warm.summary.smoothers_reshifted);
  CHECK(test::relative_difference(w, cold) <= 1e-9);
  CHECK(warm.values.cd == Approx(sol.values.cd).epsilon(1e-10));
  VecDestroy(&w);
  VecDestroy(&cold);
}

TEST_CASE("FlowCase: a steady solve that does not converge is reported with its best state",
          "[driver][mpi]") {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(dfg_case(""), {"solver.max_iterations=2"}, &cfg, &fc);
  Vec w, best, R;
  REQUIRE(fc.create_state(&w) == 0);
  REQUIRE(fc.create_state(&best) == 0);
  REQUIRE(fc.create_state(&R) == 0);
  REQUIRE(fc.initial_state(w) == 0);
  driver::SteadySolution sol;
  REQUIRE(fc.solve_steady(w, best, {}, &sol) == 0);
  CHECK_FALSE(sol.summary.converged);
  double rnorm;
  REQUIRE(fc.residual().residual(discretization::kSteady, best, R) == 0);
  REQUIRE(VecNorm(R, NORM_2, &rnorm) == 0);
  CHECK(rnorm == Approx(sol.summary.best_residual).epsilon(1e-10));
  discretization::LocalState state;
  solver::FlowMonitors::Values v;
  REQUIRE(fc.evaluate(discretization::kSteady, best, &state, &v) == 0);
  CHECK(v.cd == sol.values.cd); // the values are those of the best state
  VecDestroy(&w);
  VecDestroy(&best);
  VecDestroy(&R);
}

TEST_CASE("FlowCase: the unsteady start is the initial state at level 0 and its monitors",
          "[driver][mpi]") {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(dfg_case("time: {mode: unsteady, dt: 0.01, t_end: 0.02}\n"), {}, &cfg, &fc);
  solver::UnsteadySolver ts;
  discretization::LocalState state;
  solver::FlowMonitors::Values v;
  REQUIRE(fc.start_unsteady(ts, &state, &v) == 0);
  CHECK(ts.step() == 0);
  CHECK(ts.time() == 0.0);
  CHECK(state.level.t == 0.0);
  CHECK(state.level.n == 0);
  // the same as the sequence written out: initial state, w^0 = w^{-1}, monitors at level 0
  Vec w0;
  REQUIRE(fc.create_state(&w0) == 0);
  REQUIRE(fc.initial_state(w0) == 0);
  PetscBool same = PETSC_FALSE;
  REQUIRE(VecEqual(w0, ts.state(), &same) == 0);
  CHECK(same);
  REQUIRE(VecEqual(w0, ts.previous_state(), &same) == 0);
  CHECK(same);
  discretization::LocalState s0;
  solver::FlowMonitors::Values v0;
  REQUIRE(fc.evaluate(discretization::kSteady, w0, &s0, &v0) == 0);
  CHECK(v.cd == v0.cd);
  CHECK(v.cl == v0.cl);
  CHECK(v.dp == v0.dp);
  CHECK(state.w == s0.w);
  CHECK(state.grad == s0.grad);
  // and it steps on
  driver::UnsteadySolution sol;
  REQUIRE(fc.advance_to(ts, 0.02, {}, &sol) == 0);
  CHECK(sol.converged);
  CHECK(ts.step() == 2);
  VecDestroy(&w0);
}

TEST_CASE("FlowCase: unsteady stepping to t_end, and a failed step stops it", "[driver][mpi]") {
  const std::string unsteady = "time: {mode: unsteady, dt: 0.01, t_end: 0.025}\n";
  {
    config::CaseConfig cfg;
    driver::FlowCase fc;
    load_case(dfg_case(unsteady), {}, &cfg, &fc);
    solver::UnsteadySolver ts;
    REQUIRE(ts.setup(fc.residual(), cfg) == 0);
    Vec w0;
    REQUIRE(fc.create_state(&w0) == 0);
    REQUIRE(fc.initial_state(w0) == 0);
    REQUIRE(ts.set_state(w0, w0, 0, 0.0, 0.0) == 0);
    std::vector<double> times, dts;
    driver::UnsteadySolution sol;
    REQUIRE(fc.advance_to(
                ts, 0.025,
                [&](solver::UnsteadySolver &, const solver::StepReport &r,
                    const discretization::LocalState &, const solver::FlowMonitors::Values &) {
                  times.push_back(r.time);
                  dts.push_back(r.dt);
                  return PetscErrorCode(0);
                },
                &sol) == 0);
    REQUIRE(sol.converged);
    CHECK(sol.steps == 3);
    REQUIRE(times.size() == 3);
    CHECK(ts.time() == Approx(0.025).epsilon(1e-14));
    CHECK(dts[2] == Approx(0.005).epsilon(1e-10));
    VecDestroy(&w0);
  }
  {
    // one Newton iteration with a tight tolerance and a huge step: the first step fails
    config::CaseConfig cfg;
    driver::FlowCase fc;
    load_case(dfg_case("time: {mode: unsteady, dt: 10, t_end: 20}\n"),
              {"solver.max_iterations=1", "solver.rtol=1e-14"}, &cfg, &fc);
    solver::UnsteadySolver ts;
    REQUIRE(ts.setup(fc.residual(), cfg) == 0);
    Vec w0;
    REQUIRE(fc.create_state(&w0) == 0);
    REQUIRE(fc.initial_state(w0) == 0);
    REQUIRE(ts.set_state(w0, w0, 0, 0.0, 0.0) == 0);
    int observed = 0;
    driver::UnsteadySolution sol;
    REQUIRE(fc.advance_to(
                ts, 20.0,
                [&](solver::UnsteadySolver &, const solver::StepReport &,
                    const discretization::LocalState &, const solver::FlowMonitors::Values &) {
                  ++observed;
                  return PetscErrorCode(0);
                },
                &sol) == 0);
    CHECK_FALSE(sol.converged);
    CHECK(observed == 0);
    CHECK(sol.failed.step == 1);
    CHECK(ts.step() == 0);
    CHECK(ts.time() == 0.0);
    VecDestroy(&w0);
  }
}

TEST_CASE("force history: lift frequency and window statistics", "[driver]") {
  const double f = 3.2, dt = 1e-3;
  std::vector<driver::ForceSample> s;
  for (long n = 0; n <= 4000; ++n) {
    const double t = n * dt;
    s.push_back({n, t, 1.5 + 0.1 * std::cos(4 * M_PI * f * t), std::sin(2 * M_PI * f * t), 0.0});
  }
  int periods = 0;
  CHECK(driver::lift_frequency(s, 1.0, &periods) == Approx(f).epsilon(1e-4));
  CHECK(periods == 8); // upward crossings at t = k / f: 9 of them in [1, 4]
  SignalStatistics st;
  REQUIRE(driver::window_statistics(s, 1.0, &driver::ForceSample::cd, &st));
  CHECK(st.max == Approx(1.6).epsilon(1e-6));
  CHECK(st.min == Approx(1.4).epsilon(1e-6));
  CHECK(st.time_average == Approx(1.5).epsilon(2e-3)); // 3 s window, not whole periods of cos
  CHECK_FALSE(driver::window_statistics(s, 10.0, &driver::ForceSample::cd, &st));
  // the initial state (step 0) is data, not a result
  std::vector<driver::ForceSample> only_initial = {{0, 0.0, 7.0, 0.0, 0.0}};
  CHECK_FALSE(driver::window_statistics(only_initial, 0.0, &driver::ForceSample::cd, &st));
}

TEST_CASE("FlowCase: the uniform initial velocity turns with the far field's angle of attack",
          "[driver][mpi]") {
  // initial.velocity, like the far field's velocity, is given at zero angle: a cold start at
  // angle alpha begins in its own free stream, also after the angle changed as a parameter (a
  // campaign's design variable)
  const std::string text =
      "mesh: {file: " +
      test::mesh_file(PETSC_COMM_WORLD,
                      std::string(KARMAN_SOURCE_DIR) + "/cases/naca0012-laminar/naca0012.geo", -1,
                      2) +
      R"(}
fluid: {viscosity: 1.0e-2}
initial: {velocity: [2, 0], pressure: 0.5}
boundaries:
  airfoil: {type: wall}
  farfield: {type: far-field, velocity: [1, 0], angle_of_attack: 30}
objective: {type: drag, walls: [airfoil]}
)";
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(text, {}, &cfg, &fc);
  Vec w;
  REQUIRE(fc.create_state(&w) == 0);
  const auto check = [&](double alpha_degrees) {
    REQUIRE(fc.initial_state(w) == 0);
    const double a = alpha_degrees * M_PI / 180;
    const PetscScalar *x;
    PetscInt n;
    REQUIRE(VecGetLocalSize(w, &n) == 0);
    REQUIRE(VecGetArrayRead(w, &x) == 0);
    double worst = 0;
    for (PetscInt c = 0; c < n / 3; ++c)
      worst = std::max({worst, std::abs(x[3 * c] - 0.5), std::abs(x[3 * c + 1] - 2 * std::cos(a)),
                        std::abs(x[3 * c + 2] - 2 * std::sin(a))});
    REQUIRE(VecRestoreArrayRead(w, &x) == 0);
    CAPTURE(alpha_degrees);
    CHECK(n > 0);
    CHECK(worst < 1e-15);
  };
  check(30);
  const discretization::ParameterRegistry registry(fc.residual());
  REQUIRE(registry.set(fc.residual(), "boundaries.farfield.angle_of_attack", -12) == 0);
  check(-12);
  VecDestroy(&w);
}
