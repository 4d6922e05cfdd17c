// The unsteady solver: variable-step BDF coefficients, BDF2's temporal order on the
// Taylor-Green vortex, and a Newton residual history (StepReport) that PETSc options cannot
// empty: the same with -snes_monitor_cancel in the options database (on 1 and 2 ranks).
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/unsteady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace karman;

TEST_CASE("variable-step BDF2 differentiates quadratics exactly", "[unsteady]") {
  std::mt19937 gen(4);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const double dt = u(gen), dt_prev = u(gen), t = u(gen);
    const auto c = solver::bdf_coefficients(2, dt, dt_prev);
    auto q = [](double s) { return 3 * s * s - s + 2; };
    const double tn1 = t + dt, tn = t, tm1 = t - dt_prev;
    REQUIRE(c.a0 * q(tn1) + c.a1 * q(tn) + c.a2 * q(tm1) == Approx(6 * tn1 - 1).epsilon(1e-12));
    const auto e = solver::bdf_coefficients(1, dt, dt_prev);
    REQUIRE(e.a0 * (2 * tn1 + 1) + e.a1 * (2 * tn + 1) == Approx(2.0).epsilon(1e-12));
  }
}

TEST_CASE("the BDF2 truncation error estimate is exact for cubics (variable steps)", "[unsteady]") {
  // y' = f(t) with y a cubic: a BDF2 step from exact history gives w = (f(t+h) - a1 y(t) -
  // a2 y(t-h1)) / a0, with the error L = y(t+h) - w; the quadratic through y(t), y(t-h1),
  // y(t-h1-h2) at t+h is w_pred.  y'''' = 0, so L = c (w - w_pred) holds exactly.
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(0.05, 1.0);
  auto y = [](double t) { return 2 * t * t * t - t * t + 3 * t - 1; };
  auto f = [](double t) { return 6 * t * t - 2 * t + 3; };
  for (int trial = 0; trial < 6; ++trial) {
    const double h = u(gen), h1 = u(gen), h2 = u(gen), t = u(gen);
    const auto c = solver::bdf_coefficients(2, h, h1);
    const double w = (f(t + h) - c.a1 * y(t) - c.a2 * y(t - h1)) / c.a0;
    const double cn = (h + h1) * (h + h1 + h2) / (h1 * (h1 + h2)); // the solver's weights
    const double c1 = -h * (h + h1 + h2) / (h1 * h2), c2 = h * (h + h1) / ((h1 + h2) * h2);
    const double pred = cn * y(t) + c1 * y(t - h1) + c2 * y(t - h1 - h2);
    CAPTURE(h, h1, h2);
    REQUIRE(std::abs(y(t + h) - w) ==
            Approx(solver::truncation_error_factor(h, h1, h2) * std::abs(w - pred)).epsilon(1e-10));
  }
  REQUIRE(solver::truncation_error_factor(0.1, 0.1, 0.1) == Approx(2.0 / 11).epsilon(1e-14));
}

TEST_CASE("BDF2 is second order in time (Taylor-Green vortex, Dirichlet box)",
          "[unsteady][verification]") {
  // u = -cos(pi x) sin(pi y) F, v = sin(pi x) cos(pi y) F, F = exp(-2 pi^2 nu t): an exact
  // Navier-Stokes solution; boundary values from it.  Self-convergence on one mesh: the
  // error at T against a run with dt / 8 isolates the time discretization.
  // Also a change of time step at T / 2, as a restart with a new time.dt does it: the second
  // half with dt / 2 in a new solver started from the checkpointed pair (w^n, w^{n-1}) and
  // the old step size.  It must equal the same change made inside one solver, and stay
  // second order (a constant-coefficient BDF2 across the change would be first order).
  const double T = 0.8;
  // level 0 (h = 1/8): the errors are those of the time discretization of the semi-discrete
  // system, whatever its mesh
  test::TaylorGreen tg;
  tg.setup();
  const config::CaseConfig &cfg = tg.cfg;
  const mesh::Mesh &m = tg.mesh;
  discretization::FlowResidual &res = tg.res;
  auto values = [&](Vec v, std::vector<double> *out) {
    const PetscScalar *b;
    REQUIRE(VecGetArrayRead(v, &b) == 0);
    out->assign(b, b + 3 * m.n_owned_cells);
    REQUIRE(VecRestoreArrayRead(v, &b) == 0);
  };
  // dt until T / 2, then dt2 (in the same solver, or in a new one when restart is set)
  // (`purpose` and `reports`: the solver of the second half and its steps, when restart is set)
  auto run = [&](double dt, double dt2, bool restart, std::vector<double> *out,
                 double *initial_residual = nullptr,
                 solver::StepPurpose purpose = solver::StepPurpose::Gradient,
                 std::vector<solver::StepReport> *reports = nullptr) {
    solver::UnsteadySolver ts;
    REQUIRE(ts.setup(res, cfg) == 0);
    Vec w;
    REQUIRE(res.create_state(&w) == 0);
    tg.initial_state(w);
    REQUIRE(ts.set_state(w, w, 0, 0.0, 0.0) == 0);
    solver::StepReport r;
    for (int k = 0, n = static_cast<int>(std::lround(T / 2 / dt)); k < n; ++k) {
      REQUIRE(ts.advance(dt, &r) == 0);
      REQUIRE(r.converged);
      // the time split: parts of the step, each measured (a residual and a Jacobian per step)
      CHECK(r.residual_time > 0);
      CHECK(r.jacobian_time > 0);
      CHECK(r.pc_setup_time >= 0);
      CHECK(r.linear_solve_time > 0);
      CHECK(r.residual_time + r.jacobian_time + r.pc_setup_time + r.linear_solve_time <=
            r.wall_time * (1 + 1e-9));
      if (k == 0) CHECK(r.pc_setup_time > 0); // the first step sets its preconditioner up
    }
    if (initial_residual) *initial_residual = r.initial_residual; // of the step to T / 2
    solver::UnsteadySolver fresh;
    solver::UnsteadySolver *second = &ts;
    if (restart) {
      REQUIRE(fresh.setup(res, cfg, purpose) == 0);
      REQUIRE(fresh.forward_tolerances() == (purpose == solver::StepPurpose::ForwardOnly));
      REQUIRE(fresh.set_state(ts.state(), ts.previous_state(), ts.step(), ts.time(),
                              ts.previous_dt()) == 0);
      second = &fresh;
    }
    for (int k = 0, n = static_cast<int>(std::lround(T / 2 / dt2)); k < n; ++k) {
      REQUIRE(second->advance(dt2, &r) == 0);
      REQUIRE(r.converged);
      if (reports && restart) reports->push_back(r);
    }
    REQUIRE(second->time() == Approx(T).epsilon(1e-12));
    values(second->state(), out);
    VecDestroy(&w);
  };
  auto error = [&](const std::vector<double> &u, const std::vector<double> &ref) {
    double e = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c)
      for (int k = 1; k < 3; ++k)
        e += (u[3 * c + k] - ref[3 * c + k]) * (u[3 * c + k] - ref[3 * c + k]);
    MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return std::sqrt(e);
  };
  std::vector<double> ref;
  run(0.04 / 32, 0.04 / 32, false, &ref);
  std::vector<double> err, err_switch, initial;
  for (double dt : {0.04, 0.02, 0.01}) {
    std::vector<double> u, v;
    initial.push_back(0);
    run(dt, dt, false, &u, &initial.back());
    err.push_back(error(u, ref));
    run(dt, dt / 2, true, &v);
    err_switch.push_back(error(v, ref));
    if (dt == 0.04) {
      std::vector<double> same;
      run(dt, dt / 2, false, &same);
      CAPTURE(error(v, same), error(same, ref));
      REQUIRE(error(v, same) <= 1e-10 * error(same, ref) + 1e-13);
    }
  }
  for (std::size_t k = 0; k + 1 < err.size(); ++k) {
    const double order = std::log2(err[k] / err[k + 1]),
                 order_switch = std::log2(err_switch[k] / err_switch[k + 1]);
    CAPTURE(k, err[k], err[k + 1], order, err_switch[k], err_switch[k + 1], order_switch);
    REQUIRE(order >= 1.9);
    REQUIRE(order_switch >= 1.9);
    // the initial guess extrapolates three levels (error O(dt^3)): the Newton residual it starts
    // from, rho V a0 times that error, falls as dt^2 (as dt with a linear extrapolation)
    const double order_guess = std::log2(initial[k] / initial[k + 1]);
    CAPTURE(initial[k], initial[k + 1], order_guess);
    REQUIRE(order_guess >= 1.8);
    REQUIRE(err_switch[k] < err[k]); // the second half with dt / 2 is more accurate
  }
  // forward tolerances (karman run) over the second half, restarted at T / 2 from converged
  // steps: each step stops once its Newton error is below 1/10 of its truncation error
  // estimate.  The error at T stays that of converged steps (within 3 %: 1.008 and 1.022
  // measured; the two runs differ by 15 % of it at most: 6.8 % and 12.3 %, as designed for
  // Newton errors of 1/10 of the truncation error per step; with dt 0.005 and 0.0025 11.9 % and
  // 11.8 %, so the share does not grow as dt falls) at 0.45 times the Newton iterations or fewer
  // (0.42, 0.38: linear solves to 1e-2).  (With the pressure's guess extrapolated quadratically,
  // as the velocity's, it was 1.4-2.6 %: see linear_algebraic_guess.)  The first step after the
  // restart (linear guess) converges fully.  (Started from the exact field at t = 0, which is not
  // discretely divergence-free, the first BDF2 steps' estimates are 1e3 times the later ones, in
  // modes that decay: the algebraic error they allow persists in the slow modes and is then not
  // small against the error at T (2x on dt 0.01, measured).)
  for (double dt : {0.02, 0.01}) {
    std::vector<double> u, v;
    std::vector<solver::StepReport> converged, forward;
    run(dt, dt, true, &u, nullptr, solver::StepPurpose::Gradient, &converged);
    run(dt, dt, true, &v, nullptr, solver::StepPurpose::ForwardOnly, &forward);
    long its_converged = 0, its_forward = 0, stops = 0;
    for (const auto &r : converged) its_converged += r.newton_iterations;
    for (std::size_t k = 0; k < forward.size(); ++k) {
      its_forward += forward[k].newton_iterations;
      stops += forward[k].truncation_stop;
      REQUIRE((forward[k].truncation_error > 0) == (k >= 1));
      if (k < 1) REQUIRE_FALSE(forward[k].truncation_stop);
      if (forward[k].truncation_stop) REQUIRE(forward[k].reason == solver::kConvergedTruncation);
    }
    const double e_converged = error(u, ref), e_forward = error(v, ref);
    CAPTURE(dt, its_converged, its_forward, stops, e_converged, e_forward, error(u, v));
    REQUIRE(stops == static_cast<long>(forward.size()) - 1);
    REQUIRE(its_forward <= 0.45 * its_converged);
    REQUIRE(e_forward <= 1.03 * e_converged);
    REQUIRE(error(u, v) <= 0.15 * e_converged);
  }
}

namespace {

/// A lid-driven cavity (mixed mesh of the unit square, nu 0.01) started from rest: `steps` BDF
/// steps of dt 0.05 with a new solver (it reads the PETSc options), the case file with
/// `overrides`; every step must converge.  The step reports and the final state (nv per owned
/// cell).
void run_cavity(const mesh::Mesh &m, const std::vector<std::string> &overrides,
                std::vector<solver::StepReport> *reports, std::vector<double> *state = nullptr,
                int steps = 3) {
  const std::string yaml =
      "mesh: {file: x.geo}\nfluid: {viscosity: 0.01}\ntime: {mode: unsteady, dt: 0.05}\n"
      "boundaries:\n  left: {type: wall}\n  right: {type: wall}\n  bottom: {type: wall}\n"
      "  top: {type: wall, velocity: [1, 0]}\n";
  clear_error();
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "cavity.yaml", "/", overrides,
                                        optimization::case_schema(), cfg) == 0);
  discretization::FlowResidual res;
  REQUIRE(res.setup(m, cfg) == 0);
  solver::UnsteadySolver ts;
  REQUIRE(ts.setup(res, cfg) == 0);
  Vec w;
  REQUIRE(res.create_state(&w) == 0);
  REQUIRE(VecSet(w, 0.0) == 0);
  REQUIRE(ts.set_state(w, w, 0, 0.0, 0.0) == 0);
  VecDestroy(&w);
  for (int k = 0; k < steps; ++k) {
    solver::StepReport r;
    const PetscErrorCode ierr = ts.advance(0.05, &r);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    CAPTURE(k, r.reason, r.residual_history);
    REQUIRE(r.converged);
    reports->push_back(r);
  }
  if (!state) return;
  const PetscScalar *a;
  REQUIRE(VecGetArrayRead(ts.state(), &a) == 0);
  state->assign(a, a + 3 * m.n_owned_cells);
  REQUIRE(VecRestoreArrayRead(ts.state(), &a) == 0);
}

} // namespace

TEST_CASE("unsteady solver: -snes_monitor_cancel does not empty the Newton residual history",
          "[unsteady][solver][mpi]") {
  // the cavity's steps with and without -snes_monitor_cancel
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  std::vector<solver::StepReport> plain, cancelled;
  run_cavity(m, {}, &plain);
  {
    test::ScopedOptions cancel{{"-snes_monitor_cancel", nullptr}};
    REQUIRE(cancel.set);
    run_cavity(m, {}, &cancelled);
  }
  REQUIRE(cancelled.size() == plain.size());
  for (std::size_t k = 0; k < plain.size(); ++k) {
    const solver::StepReport &a = plain[k], &b = cancelled[k];
    CAPTURE(k, a.newton_iterations, b.newton_iterations, a.residual_history.size(),
            b.residual_history.size());
    // one norm per Newton iterate, the initial one included
    REQUIRE(a.newton_iterations >= 1);
    REQUIRE(a.residual_history.size() == static_cast<std::size_t>(a.newton_iterations) + 1);
    REQUIRE(b.newton_iterations == a.newton_iterations);
    REQUIRE(b.residual_history.size() == a.residual_history.size());
    REQUIRE(a.initial_residual > 0);
    REQUIRE(b.initial_residual == b.residual_history.front());
    REQUIRE(b.final_residual == b.residual_history.back());
    // the same norms (to 1e-12 of the initial one: on 2 ranks the parallel LU is not bitwise
    // reproducible)
    for (std::size_t i = 0; i < a.residual_history.size(); ++i) {
      CAPTURE(i, a.residual_history[i], b.residual_history[i]);
      REQUIRE(std::abs(a.residual_history[i] - b.residual_history[i]) <=
              1e-12 * a.residual_history.front());
    }
  }
}

TEST_CASE("unsteady solver: a Newton solve stalled at the round-off floor has converged",
          "[unsteady][solver][mpi]") {
  // tolerances below the round-off of the residual: Newton reaches the floor, where the line
  // search cannot lower the norm any more; the step must converge (CONVERGED_ROUNDOFF) with the
  // state of a normally converged step, not fail (on a far field of 100 D the floor lies above
  // the default atol)
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  std::vector<double> normal, floor;
  std::vector<solver::StepReport> normal_reports, floor_reports;
  run_cavity(m, {}, &normal_reports, &normal);
  run_cavity(m, {"solver.rtol=1e-30", "solver.atol=1e-30"}, &floor_reports, &floor);
  int at_floor = 0;
  for (const auto &r : floor_reports) at_floor += r.reason.rfind("CONVERGED_ROUNDOFF", 0) == 0;
  CHECK(at_floor >= 1);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < normal.size(); ++i) {
    diff = std::max(diff, std::abs(normal[i] - floor[i]));
    scale = std::max(scale, std::abs(normal[i]));
  }
  CHECK(diff <= 1e-9 * scale);
}

TEST_CASE("unsteady solver: a new time coefficient (BDF1 -> BDF2) sets the preconditioner up again",
          "[unsteady][solver][mpi]") {
  // the iteration-count rule never asks for a set-up here (refactor_iterations 1000): the first
  // step sets up, the second (BDF2: rho V 1.5 / dt on the diagonal instead of rho V / dt) must set
  // up again, the third reuses
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  std::vector<solver::StepReport> reports;
  run_cavity(m, {"solver.refactor_iterations=1000"}, &reports);
  REQUIRE(reports.size() == 3);
  CHECK(reports[0].preconditioner_setup);
  CHECK(reports[1].preconditioner_setup);
  CHECK_FALSE(reports[2].preconditioner_setup);
}

TEST_CASE("unsteady solver: with solver.linear auto a step whose multigrid fails is solved by the "
          "LU, and after kStickyFallbacks steps the run keeps it",
          "[unsteady][solver][mpi]") {
  // -ksp_max_it 1 (the Newton solver's prefix, not the fallback's: fallback_) makes every
  // multigrid-preconditioned step fail its linear solve; the fallback's steps end in the state of
  // solver.linear: direct (to the Newton tolerance), and with solver.linear: iterative the same
  // failure stands
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  const int steps = solver::UnsteadySolver::kStickyFallbacks + 2;
  std::vector<solver::StepReport> direct_reports, forced_reports;
  std::vector<double> direct, forced;
  run_cavity(m, {"solver.linear=direct"}, &direct_reports, &direct, steps);
  {
    test::ScopedOptions cap{{"-ksp_max_it", "1"}};
    REQUIRE(cap.set);
    run_cavity(m, {}, &forced_reports, &forced, steps);
  }
  for (int k = 0; k < steps; ++k) {
    const solver::StepReport &r = forced_reports[k];
    CAPTURE(k, r.reason, r.iterative_reason);
    CHECK_FALSE(direct_reports[k].linear_fallback);
    CHECK(r.linear_fallback);
    // the multigrid was tried (and failed) on the first kStickyFallbacks steps only
    if (k < solver::UnsteadySolver::kStickyFallbacks)
      CHECK(r.iterative_reason == "DIVERGED_LINEAR_SOLVE");
    else
      CHECK(r.iterative_reason.empty());
  }
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < direct.size(); ++i) {
    diff = std::max(diff, std::abs(direct[i] - forced[i]));
    scale = std::max(scale, std::abs(direct[i]));
  }
  CHECK(diff <= 1e-9 * scale);
  // solver.linear: iterative does not fall back: the first step fails
  const std::string yaml =
      "mesh: {file: x.geo}\nfluid: {viscosity: 0.01}\ntime: {mode: unsteady, dt: 0.05}\n"
      "solver: {linear: iterative}\nboundaries:\n  left: {type: wall}\n  right: {type: wall}\n"
      "  bottom: {type: wall}\n  top: {type: wall, velocity: [1, 0]}\n";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "cavity.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  discretization::FlowResidual res;
  REQUIRE(res.setup(m, cfg) == 0);
  test::ScopedOptions cap{{"-ksp_max_it", "1"}};
  solver::UnsteadySolver ts;
  REQUIRE(ts.setup(res, cfg) == 0);
  Vec w;
  REQUIRE(res.create_state(&w) == 0);
  REQUIRE(VecSet(w, 0.0) == 0);
  REQUIRE(ts.set_state(w, w, 0, 0.0, 0.0) == 0);
  VecDestroy(&w);
  solver::StepReport r;
  REQUIRE(ts.advance(0.05, &r) == 0);
  CHECK_FALSE(r.converged);
  CHECK_FALSE(r.linear_fallback);
  // -ksp_type preonly would apply one multigrid cycle as the inverse: refused, naming the fix
  test::ScopedOptions preonly{{"-ksp_type", "preonly"}};
  solver::UnsteadySolver refused;
  clear_error();
  CHECK(refused.setup(res, cfg) != 0);
  CHECK(last_error_message().find(
            "cavity.yaml: -ksp_type preonly would apply one multigrid cycle") != std::string::npos);
  clear_error();
}
