// The steady Newton solver's pseudo-transient continuation (src/solver/steady_solver.cpp):
//  - PETSc options cannot switch it off: with -snes_monitor_cancel in the options database
//    the solve takes the same Newton iterations, the same CFL sequence, calls the monitor
//    callback as often and ends in the same state (to 1e-12) as without it;
//    on 1 and 2 ranks ([mpi]; serially the two solves are identical to the last bit);
//  - on Gmsh's unstructured tetrahedra (the coarse DFG 3D-1Z channel) exact Newton converges in
//    at most 12 steps with the blended reconstruction of the convected velocity (the default
//    there) and stalls above |R| 1e-5 with the gradient's;
//  - a continuation that stalls (tetrahedral DFG 3D-1Z from rest at CFL_0 1000, the gradient's
//    reconstruction) cuts its CFL and converges to the state of a cautious start  [mpi];
//  - a line search that fails again at the same iterate after a cut tries a larger CFL: DFG 2D-1
//    from rest with a small CFL_0 converges to the state of the default start  [mpi];
//  - solver.linear auto: a solve that fails with the iterative linear solver is done again with
//    the LU, to the state of solver.linear: direct; iterative itself does not fall back  [mpi];
//  - solver.linear auto: a solve stranded (5 Newton steps in a row with GMRES unconverged and no
//    reaction left, |R| down less than 10x) gives way to the LU, to the direct solver's state;
//    iterative runs on  [mpi];
//  - a Newton step whose GMRES stops at its iteration limit widens the restart of the later steps
//    (solver::widen_restart), and the solve converges to the direct solver's state  [mpi];
//  - exact Newton (the LU) converges quadratically on the coarse DFG 2D-1 mesh: the order of the
//    last iterates' residual reduction is > 1.7 [mpi];
//  - a residual at its round-off floor eps |rho V/dtau w| ends the solve as converged
//    (CONVERGED_ROUNDOFF) where tolerances below it would run to max_iterations [mpi];
//  - a residual that stalls above that estimate (full Newton steps at CFL_max that lower it less
//    than 2x) ends the solve after 2 such steps, in the state of the default tolerances [mpi].
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/solver/steady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace karman;

namespace {

const char *kDfgCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
)";

struct SolveResult {
  solver::SteadySummary summary;
  std::vector<double> monitored_cfl; ///< CFL numbers seen by the monitor callback
  Vec w = nullptr;
};

struct Problem {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

// The coarse DFG 2D-1 case (one mesh for both solves: their states are compared cell by cell).
void make_dfg(Problem *p, const std::vector<std::string> &overrides = {}) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kDfgCase, "test.yaml", "/", overrides,
                                        optimization::case_schema(), p->cfg) == 0);
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"},
             &p->mesh);
  REQUIRE(p->res.setup(p->mesh, p->cfg) == 0);
}

// Solves from rest with a new SteadySolver (it reads the PETSc options); the caller destroys
// result->w.
void solve_from_rest(Problem &p, SolveResult *result) {
  clear_error();
  solver::SteadySolver newton;
  REQUIRE(newton.setup(p.res, p.cfg) == 0);
  REQUIRE(p.res.create_state(&result->w) == 0);
  const std::function<PetscErrorCode(const solver::NewtonRecord &, Vec)> monitor =
      [&](const solver::NewtonRecord &r, Vec) -> PetscErrorCode {
    result->monitored_cfl.push_back(r.cfl);
    return 0;
  };
  const PetscErrorCode ierr = newton.solve(result->w, monitor, nullptr, &result->summary);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

// max |w - reference| / max |reference| (w is overwritten with the difference)
double relative_max_difference(Vec w, Vec reference) {
  double nd = 0, nw = 0;
  REQUIRE(VecAXPY(w, -1.0, reference) == 0);
  REQUIRE(VecNorm(w, NORM_INFINITY, &nd) == 0);
  REQUIRE(VecNorm(reference, NORM_INFINITY, &nw) == 0);
  REQUIRE(nw > 0);
  return nd / nw;
}

// Solves the DFG 3D-1Z channel on the Gmsh tetrahedra of tests/data/GEO from rest with exact
// Newton steps (the LU) and the case overrides; result->w is destroyed.
void solve_tet_channel(const std::string &geo, const std::vector<std::string> &overrides,
                       SolveResult *result) {
  Problem p;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD, test::kDfg3dChannel + "solver: {linear: direct}\n", "test.yaml",
              "/", overrides, optimization::case_schema(), p.cfg) == 0);
  test::load(PETSC_COMM_WORLD, geo, 0, 3, {"inlet", "outlet", "walls", "cylinder"}, &p.mesh);
  REQUIRE(p.res.setup(p.mesh, p.cfg) == 0);
  solve_from_rest(p, result);
  VecDestroy(&result->w);
}

} // namespace

TEST_CASE("steady solver: -snes_monitor_cancel does not switch pseudo-transient continuation off",
          "[solver][mpi]") {
  Problem p;
  make_dfg(&p);
  SolveResult plain, cancelled;
  solve_from_rest(p, &plain);
  {
    test::ScopedOptions cancel{{"-snes_monitor_cancel", nullptr}};
    REQUIRE(cancel.set);
    solve_from_rest(p, &cancelled);
  }
  REQUIRE(plain.summary.converged);
  REQUIRE(cancelled.summary.converged);
  // continuation was active in the reference solve: the CFL number grew from its start value
  REQUIRE(plain.summary.history.size() >= 3);
  REQUIRE(plain.summary.history.back().cfl > plain.summary.history.front().cfl);

  REQUIRE(cancelled.summary.iterations == plain.summary.iterations);
  REQUIRE(cancelled.summary.history.size() == plain.summary.history.size());
  REQUIRE(cancelled.monitored_cfl.size() == plain.monitored_cfl.size());
  REQUIRE(plain.monitored_cfl.size() == plain.summary.history.size());
  // CFL_k = CFL_0 |R_0| / |R_{k-1}|: the same to 1e-12 where |R_{k-1}| is well above round-off;
  // in the round-off tail the norms (and so the CFL) are the same to 1e-12 |R_0| (on 2 ranks
  // the parallel LU is not bitwise reproducible)
  const double cfl0 = plain.summary.history.front().cfl, r0 = plain.summary.initial_residual;
  for (std::size_t k = 0; k < plain.summary.history.size(); ++k) {
    const double a = plain.summary.history[k].cfl, b = cancelled.summary.history[k].cfl;
    const double ra = plain.summary.history[k].residual, rb = cancelled.summary.history[k].residual;
    CAPTURE(k, a, b, ra, rb, plain.monitored_cfl[k], cancelled.monitored_cfl[k]);
    REQUIRE(std::abs(a - b) <= 1e-12 * std::abs(a) * std::max(1.0, a / cfl0));
    REQUIRE(std::abs(ra - rb) <= 1e-12 * r0);
    REQUIRE(cancelled.monitored_cfl[k] == b);
    REQUIRE(plain.monitored_cfl[k] == a);
  }
  REQUIRE(cancelled.summary.best_iteration == plain.summary.best_iteration);

  double norm = 0, diff = 0;
  REQUIRE(VecNorm(plain.w, NORM_2, &norm) == 0);
  REQUIRE(VecAXPY(cancelled.w, -1.0, plain.w) == 0);
  REQUIRE(VecNorm(cancelled.w, NORM_2, &diff) == 0);
  CAPTURE(norm, diff);
  REQUIRE(norm > 0);
  REQUIRE(diff <= 1e-12 * norm);
  VecDestroy(&plain.w);
  VecDestroy(&cancelled.w);
}

TEST_CASE("steady solver: on Gmsh's unstructured tetrahedra Newton converges with the blended "
          "reconstruction (the default there) and stalls with the gradient's (exact Newton steps)",
          "[steady][3d]") {
  // tests/data/dfg-3d-tet-coarse.geo: the ordinary Gmsh mesh of the DFG 3D-1Z channel
  // (dfg-3d-tet.geo) at 0.4 of its level 0's sizes, 2 704 tetrahedra; exact Newton steps (LU).
  // With the gradient's extrapolation of the convected velocity the solve stalls at |R| ~ 5e-5
  // with an exact Jacobian (results/tet-diagnosis.md sections 6 and 8: the discrete equations
  // have no root near the path); solver.reconstruction auto blends it (flux_kernels.hpp) and the
  // solve converges quadratically.  With the face values' upwind dissipation, the one these were
  // measured with (with the dissipation along the centroids, the default on tetrahedra since, the
  // gradient's reconstruction reaches 8.5e-6 in 20 steps, still not converged)
  const auto solve = [](const std::string &reconstruction, SolveResult *result) {
    solve_tet_channel("dfg-3d-tet-coarse.geo",
                      {"solver.reconstruction=" + reconstruction, "solver.dissipation=face",
                       "solver.max_iterations=20"},
                      result);
  };
  SolveResult blended, gradient;
  solve("auto", &blended);
  CAPTURE(blended.summary.reason, blended.summary.iterations);
  CHECK(blended.summary.converged);
  CHECK(blended.summary.iterations <= 12);
  solve("gradient", &gradient);
  CAPTURE(gradient.summary.reason, gradient.summary.iterations);
  CHECK_FALSE(gradient.summary.converged);
  CHECK(gradient.summary.history.back().residual > 1e-5);
}

TEST_CASE("steady solver: on a coarse Gmsh tetrahedral mesh where Newton stalls, the upwind "
          "dissipation along the centroids converges (exact Newton steps)",
          "[steady][3d]") {
  // tests/data/dfg-3d-tet-box-coarse.geo at its defaults (5 815 tetrahedra, a Box size field
  // around the cylinder's wake): with the face values' dissipation the solve stalls near |R| 4e-5
  // even with an exact Jacobian (results/tet-diagnosis.md section 9: a near-null velocity mode of
  // the convection operator in its coarse skewed cells); with the dissipation along the centroids
  // (flux_kernels.hpp; solver.dissipation auto, the default, takes it on tetrahedra) it converges
  // (section 10: 20 steps on 2 ranks with the multigrid)
  // (face: 12 steps, where |R| has stood near 4e-5 for several)
  // (dissipation "": the case's default, solver.dissipation auto)
  const auto solve = [](const std::string &dissipation, SolveResult *result) {
    const std::string steps = dissipation == "face" ? "12" : "20";
    std::vector<std::string> overrides = {"solver.max_iterations=" + steps};
    if (!dissipation.empty()) overrides.push_back("solver.dissipation=" + dissipation);
    solve_tet_channel("dfg-3d-tet-box-coarse.geo", overrides, result);
  };
  SolveResult centroids, face;
  solve("", &centroids); // the default: centroids on tetrahedra
  CAPTURE(centroids.summary.reason, centroids.summary.iterations);
  CHECK(centroids.summary.converged);
  CHECK(centroids.summary.iterations < 20);
  solve("face", &face);
  CAPTURE(face.summary.reason, face.summary.iterations);
  CHECK_FALSE(face.summary.converged);
  CHECK(face.summary.history.back().residual > 1e-6);
}

TEST_CASE("steady solver: a stalled continuation cuts its CFL and converges (DFG 3D-1Z, tets)",
          "[steady][3d][mpi]") {
  // tetrahedra (tests/data/dfg-3d-coarse-tet.geo), from rest with CFL_0 = 1000 and exact Newton
  // steps (LU; the default iterative solver's inexact steps do not stall here): the continuation
  // stalls near |R| = 1.5e-3 (two cuts) and the line search fails (a third); with the cuts the
  // solve converges to the state that a cautious start (CFL_0 = 0.5, no cut) reaches.  (With the
  // default CFL_0 = 10 it stalled too until the ill-conditioned pressure fits of wall cells took
  // their wall faces in, issue 42: now 16 iterations without a cut; with the upwind dissipation
  // along the centroids, the default on tetrahedra since, it converges from CFL_0 = 1000 in 11
  // without a cut: the face values' is kept here to exercise the cuts).  |R| to 1e-14 (default
  // 1e-12): the states are compared to 1e-9 of their size, which the default leaves to chance (the
  // iterative one was 1.2e-9 off on 2 ranks).  The gradient's reconstruction of the convected
  // velocity, the scheme this continuation was measured with (the blended one that tetrahedra
  // get by default goes back and forth between CFL 1 and 10 near |R| 1.05e-3 from CFL_0 = 1000
  // and does not converge in 60 iterations; from the default CFL_0 it converges)
  const std::string yaml =
      test::kDfg3dChannel +
      "solver: {max_iterations: 60, atol: 1e-14, linear: direct, reconstruction: gradient, "
      "dissipation: face}\n";
  // the tetrahedral channel with the case's settings changed by `overrides`
  const auto make_tet = [&yaml](const std::vector<std::string> &overrides, Problem *problem) {
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "test.yaml", "/", overrides,
                                          optimization::case_schema(), problem->cfg) == 0);
    test::load(PETSC_COMM_WORLD, "dfg-3d-coarse-tet.geo", 0, 3,
               {"inlet", "outlet", "walls", "cylinder"}, &problem->mesh);
    REQUIRE(problem->res.setup(problem->mesh, problem->cfg) == 0);
  };
  Problem p;
  make_tet({"solver.cfl_initial=1000"}, &p);
  SolveResult fast, cautious;
  solve_from_rest(p, &fast);
  CAPTURE(fast.summary.reason, fast.summary.iterations);
  REQUIRE(fast.summary.converged);
  // the CFL was cut: some CFL below the initial 1000 (and below 10)
  REQUIRE(*std::min_element(fast.monitored_cfl.begin(), fast.monitored_cfl.end()) < 10);
  // each iterate's linear iterations are counted within its own SNESSolve (the first iterate
  // after a cut was negative: the new solve's count minus the failed solve's)
  for (const auto &rec : fast.summary.history) {
    CAPTURE(rec.iteration);
    CHECK(rec.linear_iterations >= 0);
  }
  Problem q;
  make_tet({"solver.cfl_initial=0.5"}, &q);
  solve_from_rest(q, &cautious);
  REQUIRE(cautious.summary.converged);
  REQUIRE(*std::min_element(cautious.monitored_cfl.begin(), cautious.monitored_cfl.end()) >= 0.5);
  // the same discrete solution
  const double cautious_difference = relative_max_difference(cautious.w, fast.w);
  CAPTURE(cautious_difference, fast.summary.iterations, cautious.summary.iterations);
  REQUIRE(cautious_difference <= 1e-9);
  // the iterative linear solver (Jacobian-free GMRES, multigrid) from rest with the default CFL:
  // converged, to the same solution
  Problem r;
  make_tet({"solver.linear=iterative"}, &r);
  SolveResult iterative;
  solve_from_rest(r, &iterative);
  CAPTURE(iterative.summary.reason, iterative.summary.iterations);
  REQUIRE(iterative.summary.converged);
  const double iterative_difference = relative_max_difference(iterative.w, fast.w);
  CAPTURE(iterative_difference);
  REQUIRE(iterative_difference <= 1e-9);
  VecDestroy(&fast.w);
  VecDestroy(&cautious.w);
  VecDestroy(&iterative.w);
}

TEST_CASE("steady solver: a line search failing at a small CFL is retried with a larger one",
          "[steady][mpi]") {
  // DFG 2D-1 (coarse) from rest with CFL_0 = 0.1: the pseudo-time step of the first iterate is not
  // a descent direction for |R| and the line search fails; cutting the CFL (to 1e-3 CFL_0) failed
  // at the same iterate every time and the solve stopped (DIVERGED_LINE_SEARCH, also with
  // CFL_0 0.2 and 0.3).  Retried with larger CFLs it converges to the default start's state.
  Problem p, q;
  make_dfg(&p);
  make_dfg(&q, {"solver.cfl_initial=0.1"});
  SolveResult normal, small;
  solve_from_rest(p, &normal);
  solve_from_rest(q, &small);
  REQUIRE(normal.summary.converged);
  CAPTURE(small.summary.reason, small.summary.iterations);
  REQUIRE(small.summary.converged);
  REQUIRE(small.monitored_cfl.front() == Approx(0.1));
  const double difference = relative_max_difference(small.w, normal.w);
  CAPTURE(difference);
  REQUIRE(difference <= 1e-9);
  VecDestroy(&normal.w);
  VecDestroy(&small.w);
}

TEST_CASE("steady solver: with solver.linear auto a failed iterative solve is done again with the "
          "LU",
          "[solver][mpi]") {
  // -snes_max_it 2 stops the iterative Newton solver (no prefix) before convergence; the
  // fallback (prefix fallback_) does not see it and converges from rest as the direct solver does
  Problem autop, directp, iterativep;
  make_dfg(&autop);
  make_dfg(&directp, {"solver.linear=direct"});
  make_dfg(&iterativep, {"solver.linear=iterative"});
  SolveResult forced, direct, failed;
  solve_from_rest(directp, &direct);
  {
    test::ScopedOptions cap{{"-snes_max_it", "2"}};
    REQUIRE(cap.set);
    solve_from_rest(autop, &forced);
    solve_from_rest(iterativep, &failed);
  }
  REQUIRE(direct.summary.converged);
  CHECK_FALSE(direct.summary.linear_fallback);
  REQUIRE(forced.summary.converged);
  CHECK(forced.summary.linear_fallback);
  // (the iterative solve was done twice, the second time with tighter linear solves)
  CHECK(forced.summary.tightened_forcing);
  CHECK(forced.summary.iterative_reason ==
        "DIVERGED_MAX_IT; with the tighter linear solves: DIVERGED_MAX_IT");
  // the fallback's history is the direct solve's (the same Newton iterates from rest)
  CHECK(forced.summary.iterations == direct.summary.iterations);
  CHECK(relative_max_difference(forced.w, direct.w) <= 1e-10);
  CHECK_FALSE(failed.summary.converged);
  CHECK_FALSE(failed.summary.linear_fallback);
  CHECK(failed.summary.reason == "DIVERGED_MAX_IT");
  for (Vec *v : {&forced.w, &direct.w, &failed.w}) VecDestroy(v);
}

TEST_CASE("steady solver: with solver.linear auto an iterative solve that runs out of Newton steps "
          "is done again with tighter linear solves before the LU",
          "[solver][3d][mpi]") {
  // DFG 3D-1Z on Gmsh's coarse tetrahedra (tests/data/dfg-3d-tet-coarse.geo, 2 704 cells): with
  // Eisenstat-Walker's forcing terms capped at 1e-3 (the second try's) Newton takes fewer steps
  // than with the default cap 0.1; with solver.max_iterations between the two, auto's first
  // iterative try runs out of steps and its second converges, without the LU, to the direct
  // solver's state
  const auto make_tet = [](const std::vector<std::string> &overrides, Problem *problem) {
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, test::kDfg3dChannel, "test.yaml", "/",
                                          overrides, optimization::case_schema(),
                                          problem->cfg) == 0);
    test::load(PETSC_COMM_WORLD, "dfg-3d-tet-coarse.geo", 0, 3,
               {"inlet", "outlet", "walls", "cylinder"}, &problem->mesh);
    REQUIRE(problem->res.setup(problem->mesh, problem->cfg) == 0);
  };
  Problem loosep, tightp, directp;
  make_tet({"solver.linear=iterative"}, &loosep);
  make_tet({"solver.linear=iterative"}, &tightp);
  make_tet({"solver.linear=direct"}, &directp);
  SolveResult loose, tight, direct;
  solve_from_rest(loosep, &loose);
  solve_from_rest(directp, &direct);
  {
    test::ScopedOptions cap{{"-snes_ksp_ew_rtolmax", "1e-3"}, {"-snes_ksp_ew_rtol0", "1e-3"}};
    REQUIRE(cap.set);
    solve_from_rest(tightp, &tight);
  }
  REQUIRE(loose.summary.converged);
  REQUIRE(tight.summary.converged);
  CAPTURE(loose.summary.iterations, tight.summary.iterations);
  REQUIRE(tight.summary.iterations < loose.summary.iterations); // (else nothing to test)
  Problem autop;
  make_tet({"solver.max_iterations=" + std::to_string(tight.summary.iterations)}, &autop);
  SolveResult retried;
  solve_from_rest(autop, &retried);
  CAPTURE(retried.summary.reason);
  REQUIRE(retried.summary.converged);
  CHECK(retried.summary.tightened_forcing);
  CHECK_FALSE(retried.summary.linear_fallback);
  CHECK(retried.summary.iterations == tight.summary.iterations);
  CHECK(relative_max_difference(retried.w, direct.w) <= 1e-9);
  // the user's cap: no second try of its own (the LU after the first)
  Problem userp;
  make_tet({"solver.max_iterations=" + std::to_string(tight.summary.iterations)}, &userp);
  SolveResult user;
  {
    test::ScopedOptions cap{{"-snes_ksp_ew_rtolmax", "0.1"}};
    REQUIRE(cap.set);
    solve_from_rest(userp, &user);
  }
  CHECK_FALSE(user.summary.tightened_forcing);
  CHECK(user.summary.linear_fallback);
  for (Vec *v : {&loose.w, &tight.w, &direct.w, &retried.w, &user.w}) VecDestroy(v);
}

TEST_CASE("steady solver: with solver.linear auto a stranded iterative solve gives way to the LU",
          "[solver][mpi]") {
  // GMRES without a preconditioner and at most 5 iterations (below the restart: nothing to widen,
  // no multigrid smoothers to change) stops unconverged at every Newton step; after 5 such steps
  // with |R| down less than 10x the solve gives way to the LU (prefix fallback_: it does not see
  // -pc_type), which converges to the direct solver's state.  solver.linear iterative goes on.
  Problem autop, directp, iterativep;
  make_dfg(&autop, {"solver.linear_max_iterations=5"});
  make_dfg(&directp, {"solver.linear=direct"});
  make_dfg(&iterativep, {"solver.linear=iterative", "solver.linear_max_iterations=5",
                         "solver.max_iterations=12"});
  SolveResult stranded, direct, plain;
  solve_from_rest(directp, &direct);
  {
    test::ScopedOptions none{{"-pc_type", "none"}};
    REQUIRE(none.set);
    solve_from_rest(autop, &stranded);
    solve_from_rest(iterativep, &plain);
  }
  REQUIRE(direct.summary.converged);
  CAPTURE(stranded.summary.iterative_reason, stranded.summary.reason);
  REQUIRE(stranded.summary.converged);
  CHECK(stranded.summary.linear_fallback);
  CHECK_THAT(stranded.summary.iterative_reason,
             Catch::StartsWith("the linear solves of 5 Newton steps in a row stopped unconverged "
                               "with no reaction left"));
  CHECK(relative_max_difference(stranded.w, direct.w) <= 1e-10);
  // without auto: no LU, the iterative solve runs on (to its iteration limit here)
  CAPTURE(plain.summary.reason);
  CHECK_FALSE(plain.summary.linear_fallback);
  CHECK(plain.summary.iterations > 5);
  for (Vec *v : {&stranded.w, &direct.w, &plain.w}) VecDestroy(v);
}

TEST_CASE("steady solver: a Newton step whose GMRES stops unconverged widens the restart of the "
          "later steps",
          "[solver][mpi]") {
  // with every step's GMRES to 1e-8 (up to 31 iterations), solver.linear_max_iterations 25 stops
  // GMRES(20) on the steps that need more: the restart is widened to 25 (the limit caps it), and
  // the solve converges to the direct solver's state without the LU; the default limit (200)
  // needs no widening
  Problem capped, plain, directp;
  make_dfg(&capped, {"solver.linear=iterative", "solver.linear_max_iterations=25"});
  make_dfg(&plain, {"solver.linear=iterative"});
  make_dfg(&directp, {"solver.linear=direct"});
  SolveResult widened, unwidened, direct;
  solve_from_rest(directp, &direct);
  {
    // every step's GMRES to 1e-8 instead of Eisenstat-Walker's forcing
    test::ScopedOptions fixed{{"-snes_ksp_ew", "false"}, {"-ksp_rtol", "1e-8"}};
    REQUIRE(fixed.set);
    solve_from_rest(capped, &widened);
    solve_from_rest(plain, &unwidened);
  }
  int most = 0;
  for (const auto &h : unwidened.summary.history) most = std::max(most, h.linear_iterations);
  CAPTURE(most, widened.summary.restart_widenings, widened.summary.iterations);
  REQUIRE(most > 25); // some step needs more than the cap
  REQUIRE(unwidened.summary.converged);
  CHECK(unwidened.summary.restart_widenings == 0);
  REQUIRE(widened.summary.converged);
  CHECK_FALSE(widened.summary.linear_fallback);
  CHECK(widened.summary.restart_widenings == 1); // 20 -> 25, then at the cap
  CHECK(relative_max_difference(widened.w, direct.w) <= 1e-8);
  for (Vec *v : {&widened.w, &unwidened.w, &direct.w}) VecDestroy(v);
}

TEST_CASE("Newton converges quadratically on DFG 2D-1 (coarse mesh)", "[solver][mpi]") {
  // exact Newton steps (the LU of the exact Jacobian; the default iterative solver's inexact
  // steps converge superlinearly, not quadratically): the Jacobian is the residual's derivative
  Problem p;
  make_dfg(&p, {"solver.linear=direct"});
  SolveResult r;
  solve_from_rest(p, &r);
  VecDestroy(&r.w);
  const solver::SteadySummary &s = r.summary;
  REQUIRE(s.converged);
  REQUIRE(s.iterations <= 30);
  REQUIRE(s.final_residual <= 1e-10 * s.initial_residual);
  // convergence order p_k = log(e_{k+1} / e_k) / log(e_k / e_{k-1}) of the normalized
  // residual e = |R| / |R_0| over the last iterates above the round-off floor: ~2 for Newton
  std::vector<double> e;
  for (const auto &h : s.history)
    if (h.residual > 1e-15 * s.initial_residual) e.push_back(h.residual / s.initial_residual);
  REQUIRE(e.size() >= 4);
  const std::size_t n = e.size();
  for (std::size_t k = n - 3; k + 1 < n; ++k) {
    const double order = std::log(e[k + 1] / e[k]) / std::log(e[k] / e[k - 1]);
    CAPTURE(k, e[k - 1], e[k], e[k + 1], order);
    REQUIRE(order > 1.7);
  }
}

TEST_CASE("steady solver: the adaptive law's pseudo-time step resolves thin cells",
          "[solver][unit]") {
  // a dx x dy rectangle (projected areas dS = (dy, dx)) and a box in 3D: the step is the
  // spectral-radius one, V / (sum |u_d| dS_d + nu sum dS_d^2 / V), within a factor dim of the
  // tightest single-direction limit (convective dx_d / |u_d|, viscous dx_d^2 / nu)
  const double dx = 0.02, dy = 2e-6, dz = 0.5, nu = 1e-6;
  for (int dim : {2, 3}) {
    const double h[3] = {dx, dy, dz};
    double V = 1, dS[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) V *= h[d];
    for (int d = 0; d < dim; ++d) dS[d] = V / h[d];
    const double u[3] = {0.9, -0.05, 0.3};
    const double rate = solver::pseudo_time_rate(u, dS, dim, V, nu, 1.0);
    double limit = INFINITY, expected = 0;
    for (int d = 0; d < dim; ++d) {
      limit = std::min({limit, h[d] / std::abs(u[d]), h[d] * h[d] / nu});
      expected += std::abs(u[d]) / h[d] + nu / (h[d] * h[d]);
    }
    CAPTURE(dim, rate, expected);
    REQUIRE(rate / V == Approx(expected).epsilon(1e-12));
    const double dtau = V / rate; // at CFL 1
    REQUIRE(dtau <= limit);
    REQUIRE(dtau >= limit / (2 * dim));
    // the isotropic law V^(1/d) / (|u| + nu / h) overstated it by more than an order of magnitude
    const double hc = std::pow(V, 1.0 / dim);
    REQUIRE(hc / (std::hypot(u[0], u[1], dim == 3 ? u[2] : 0.0) + nu / hc) > 10 * dtau);
  }
  // a cell at rest without viscosity keeps a finite step
  const double zero[3] = {0, 0, 0}, dS[3] = {1e-2, 1e-2, 0};
  REQUIRE(solver::pseudo_time_rate(zero, dS, 2, 1e-4, 0.0, 1.0) > 0);
}

TEST_CASE("steady solver: an update of the turbulence variable that changes its sign stops short",
          "[solver][unit]") {
  // three unknowns per cell, the turbulence variable last; the new state is w - dw
  const int nv = 3, t = 2;
  const std::vector<PetscScalar> w = {0.1, 0.5, 45.0,  // chi 45 -> -38: limited
                                      0.2, 0.4, -38.0, // chi -38 -> 59: limited
                                      0.3, 0.3, 0.5,   // chi 0.5 -> -0.2: |chi| <= 1, free
                                      0.4, 0.2, 20.0,  // chi 20 -> 200: no sign change
                                      0.5, 0.1, -3.0}; // chi -3 -> -0.5: no sign change
  std::vector<PetscScalar> dw = {0.02, -0.1, 83.0, 0.01,   0.2,  -97.0, 0.05, 0.05,
                                 0.7,  0.03, 0.3,  -180.0, 0.04, 0.4,   -2.5};
  const std::vector<PetscScalar> before = dw;
  REQUIRE(solver::limit_sign_changes(w.data(), dw.data(), 5, nv, t) == 2);
  for (int c = 0; c < 5; ++c) {
    const double chi = PetscRealPart(w[c * nv + t]);
    const double next = chi - PetscRealPart(dw[c * nv + t]);
    CAPTURE(c, chi, next);
    if (c < 2) {
      // the new value keeps the sign and a tenth of the old one; the cell's whole update is
      // scaled by the same factor (its direction kept)
      REQUIRE(next == Approx(solver::kSignChangeKeep * chi).epsilon(1e-14));
      const double f = PetscRealPart(dw[c * nv + t] / before[c * nv + t]);
      for (int k = 0; k < nv; ++k)
        REQUIRE(PetscRealPart(dw[c * nv + k]) ==
                Approx(f * PetscRealPart(before[c * nv + k])).epsilon(1e-14));
    } else {
      for (int k = 0; k < nv; ++k) REQUIRE(dw[c * nv + k] == before[c * nv + k]);
    }
  }
}

TEST_CASE("steady solver: a residual at its round-off floor ends the solve as converged",
          "[solver][mpi]") {
  // The RANS flat plate (cases/tmr-flat-plate, level 0: cells of aspect ratio 5e3 at the wall,
  // nu~/nu up to ~1e2) with tolerances no double-precision residual reaches: without the floor
  // the solve ran to solver.max_iterations and failed; with it Newton stops, as converged
  // (CONVERGED_ROUNDOFF), at the first iterate whose |R| is at most eps |rho V/dtau w|_2, in the
  // state of the default tolerances.  With those the floor lies below 1 % of the final |R|, so
  // it does not end an ordinary solve (the reason stays PETSc's).
  auto solve = [](const std::string &tolerances, SolveResult *r, driver::FlowCase &fc) {
    clear_error();
    std::ostringstream text;
    text << test::flat_plate_rans_yaml("objective: {type: drag, walls: [wall]}\n")
         << "solver: {linear: direct, max_iterations: 80" << tolerances << "}\n";
    config::CaseConfig cfg;
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text.str(), "plate.yaml", "/", {},
                                          optimization::case_schema(), cfg) == 0);
    PetscErrorCode ierr = fc.load(PETSC_COMM_WORLD, cfg);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    solver::SteadySolver newton;
    REQUIRE(newton.setup(fc.residual(), cfg) == 0);
    REQUIRE(fc.create_state(&r->w) == 0);
    REQUIRE(fc.initial_state(r->w) == 0);
    const std::function<PetscErrorCode(const solver::NewtonRecord &, Vec)> none;
    ierr = newton.solve(r->w, none, nullptr, &r->summary);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
  };
  driver::FlowCase fc_normal, fc_tight;
  SolveResult normal, tight;
  solve("", &normal, fc_normal);
  const solver::SteadySummary &n = normal.summary;
  CAPTURE(n.reason, n.iterations);
  REQUIRE(n.converged);
  REQUIRE(n.reason.rfind("CONVERGED_FNORM", 0) == 0);
  const double floor_ratio = n.history.back().roundoff_floor / n.final_residual;
  CAPTURE(floor_ratio);
  REQUIRE(floor_ratio > 0);
  REQUIRE(floor_ratio < 1e-2);

  solve(", rtol: 1e-30, atol: 1e-30", &tight, fc_tight);
  const solver::SteadySummary &t = tight.summary;
  CAPTURE(t.reason, t.iterations, t.final_residual, t.history.back().roundoff_floor);
  REQUIRE(t.converged);
  REQUIRE(t.reason == solver::kConvergedFloor);
  REQUIRE(t.iterations < 80);
  REQUIRE(t.final_residual <= t.history.back().roundoff_floor);
  // every earlier iterate was above its floor
  for (std::size_t k = 0; k + 1 < t.history.size(); ++k)
    REQUIRE(t.history[k].residual > t.history[k].roundoff_floor);
  const double difference = relative_max_difference(tight.w, normal.w);
  CAPTURE(difference);
  REQUIRE(difference < 1e-7);
  VecDestroy(&normal.w);
  VecDestroy(&tight.w);
}

TEST_CASE("steady solver: a residual that stalls at its round-off floor ends the solve after two "
          "steps",
          "[solver][mpi]") {
  // The coarse DFG 2D-1 case with karman verify's kind of tolerances (here 1e-30: none is
  // reachable): Newton converges quadratically to |R| ~1e-16 and then full steps at CFL_max lower
  // |R| by a few percent each (round-off), above the estimate eps |rho V/dtau w|.  Without the
  // stall rule the solve crawled there until its line search failed; with it, it stops after
  // kFloorStallSteps = 2 such steps, as converged, in the state of the default tolerances.
  Problem normal_problem, tight_problem;
  make_dfg(&normal_problem);
  make_dfg(&tight_problem, {"solver.rtol=1e-30", "solver.atol=1e-30"});
  SolveResult normal, tight;
  solve_from_rest(normal_problem, &normal);
  solve_from_rest(tight_problem, &tight);
  REQUIRE(normal.summary.converged);
  const solver::SteadySummary &t = tight.summary;
  CAPTURE(t.reason, t.iterations, t.final_residual);
  REQUIRE(t.converged);
  REQUIRE(t.reason == solver::kConvergedFloorStall);
  const auto &h = t.history;
  REQUIRE(h.size() >= 4);
  const std::size_t n = h.size();
  // the last two steps stalled: each lowered |R| less than 2x, far below |R_0| ...
  for (std::size_t k = n - 2; k < n; ++k) {
    CAPTURE(k, h[k - 1].residual, h[k].residual, h[k].roundoff_floor);
    REQUIRE(h[k].residual > h[k - 1].residual / 2);
    REQUIRE(h[k].residual <= 1e-10 * t.initial_residual);
    REQUIRE(h[k].residual > h[k].roundoff_floor); // (above the estimate: not its rule)
  }
  // ... and no step before them did: the solve stopped at the second stalled step
  REQUIRE(!(h[n - 3].residual > h[n - 4].residual / 2 &&
            h[n - 3].residual <= 1e-10 * t.initial_residual));
  const double difference = relative_max_difference(tight.w, normal.w);
  CAPTURE(difference);
  REQUIRE(difference < 1e-9);
  VecDestroy(&normal.w);
  VecDestroy(&tight.w);
}
