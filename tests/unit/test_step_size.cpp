// The step-size control of time.dt auto: the controller's rules (ending on t_end without a sliver,
// rejection and growth factors), and on the Taylor-Green vortex (an exact solution) that every
// accepted step meets the tolerance and the temporal error at T falls as tolerance^(2/3) (BDF2:
// dt ~ tol^(1/3), error ~ dt^2)  [mpi: also on 2 ranks, with the same steps].
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/solver/step_size.hpp"
#include "karman/solver/unsteady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

TEST_CASE("step-size controller: the steps end on t_end, errors above the tolerance are rejected",
          "[step-size]") {
  solver::StepSizeController c(1e-3, 0.1, 0.005);
  // far from the end: the proposal; less than two proposals left: two halves; then the rest
  CHECK(c.next(0.0, 1.0) == 0.1);
  CHECK(c.next(0.85, 1.0) == Approx(0.075).epsilon(1e-14));
  CHECK(c.next(0.925, 1.0) == Approx(0.075).epsilon(1e-14));
  CHECK(c.next(0.95, 1.0) == Approx(0.05).epsilon(1e-14));
  // no estimate: accepted, the proposal kept
  CHECK(c.judge(0.1, -1));
  CHECK(c.proposal() == 0.1);
  // error 8x the tolerance: rejected, the step halved (x 0.9 safety)
  CHECK_FALSE(c.judge(0.1, 8e-3));
  CHECK(c.proposal() == Approx(0.1 * 0.9 * 0.5).epsilon(1e-14));
  CHECK(c.rejected() == 1);
  // far too large (1e6 x): the shrink is limited to 0.2
  CHECK_FALSE(c.judge(0.1, 1e3));
  CHECK(c.proposal() == Approx(0.02).epsilon(1e-14));
  // just below the tolerance: accepted, dt kept (growth factor 0.9 r^(-1/3) below 1.2)
  CHECK(c.judge(0.02, 0.5e-3));
  CHECK(c.proposal() == 0.02);
  // far below: accepted, growth limited to 2
  CHECK(c.judge(0.02, 1e-9));
  CHECK(c.proposal() == Approx(0.04).epsilon(1e-14));
  // in between: the factor 0.9 (1/27)^(-1/3) = 2.7 -> 2; 0.9 (0.2)^(-1/3) = 1.539
  CHECK(c.judge(0.04, 0.2e-3));
  CHECK(c.proposal() == Approx(0.04 * 0.9 * std::pow(0.2, -1.0 / 3.0)).epsilon(1e-12));
  // not below the floor; a step at the floor is accepted whatever its error
  CHECK_FALSE(c.judge(0.01, 1.0));
  CHECK(c.proposal() == 0.005);
  CHECK(c.judge(0.005, 1.0));
  CHECK(c.proposal() == 0.005);
  CHECK(c.at_floor() == 1);
  CHECK(c.rejected() == 3);
}

namespace {

/// The Taylor-Green vortex (test::TaylorGreen) with the direct LU and `overrides`: its steps to
/// T by advance_controlled (or fixed steps dt > 0); the final state's velocities and the step
/// reports.
void taylor_green(const std::vector<std::string> &overrides, double T, double dt,
                  std::vector<double> *u, std::vector<solver::StepReport> *reports) {
  test::TaylorGreen tg;
  std::vector<std::string> settings{"solver.linear=direct", "solver.preconditioner_matrix=exact"};
  settings.insert(settings.end(), overrides.begin(), overrides.end());
  tg.setup(settings);
  discretization::FlowResidual &res = tg.res;
  const mesh::Mesh &m = tg.mesh;
  const config::CaseConfig &cfg = tg.cfg;
  solver::UnsteadySolver ts;
  REQUIRE(ts.setup(res, cfg) == 0);
  REQUIRE((ts.step_control() != nullptr) == (dt == 0));
  Vec w;
  REQUIRE(res.create_state(&w) == 0);
  tg.initial_state(w);
  REQUIRE(ts.set_state(w, w, 0, 0.0, 0.0) == 0);
  VecDestroy(&w);
  while (ts.time() < T - 1e-12) {
    solver::StepReport r;
    const PetscErrorCode ierr = dt > 0 ? ts.advance(std::min(dt, T - ts.time()), &r)
                                       : solver::advance_controlled(ts, T, &r);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    REQUIRE(r.converged);
    reports->push_back(r);
  }
  REQUIRE(ts.time() == Approx(T).epsilon(1e-12));
  const PetscScalar *b;
  REQUIRE(VecGetArrayRead(ts.state(), &b) == 0);
  u->clear();
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    u->push_back(b[3 * c + 1]), u->push_back(b[3 * c + 2]);
  REQUIRE(VecRestoreArrayRead(ts.state(), &b) == 0);
}

double distance(const std::vector<double> &a, const std::vector<double> &b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e += (a[i] - b[i]) * (a[i] - b[i]);
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return std::sqrt(e);
}

} // namespace

TEST_CASE("time.dt auto: every step meets the tolerance, the temporal error falls as tol^(2/3)",
          "[step-size][mpi]") {
  const double T = 0.8;
  std::vector<double> ref;
  std::vector<solver::StepReport> reports;
  // the semi-discrete solution at T (fixed steps of T / 640: a temporal error about 1 % of the
  // runs)
  taylor_green({}, T, T / 640, &ref, &reports);
  std::vector<double> err, steps;
  for (double tol : {8e-4, 1e-4}) {
    std::vector<double> u;
    reports.clear();
    taylor_green({"time.dt=auto", "time.tolerance=" + std::to_string(tol), "time.dt_initial=0.002"},
                 T, 0, &u, &reports);
    long estimated = 0, rejected = 0;
    double dt_min = 1, dt_max = 0;
    for (const auto &r : reports) {
      CAPTURE(r.step, r.dt, r.relative_error, tol);
      REQUIRE(r.relative_error <= tol); // an accepted step meets the tolerance (or has no estimate)
      estimated += r.relative_error >= 0;
      rejected += r.rejected_tries;
      dt_min = std::min(dt_min, r.dt), dt_max = std::max(dt_max, r.dt);
    }
    err.push_back(distance(u, ref));
    steps.push_back(static_cast<double>(reports.size()));
    CAPTURE(tol, reports.size(), estimated, rejected, dt_min, dt_max, err.back());
    REQUIRE(estimated == static_cast<long>(reports.size()) - 3); // all but the first three
    REQUIRE(dt_max > 4 * dt_min); // the steps grew as the start's transient decayed
  }
  // tolerance / 8: steps x 2 (dt ~ tol^(1/3)), error / 4 (~ dt^2), within 30 %
  const double error_ratio = err[0] / err[1], step_ratio = steps[1] / steps[0];
  CAPTURE(err[0], err[1], error_ratio, steps[0], steps[1], step_ratio);
  REQUIRE(error_ratio >= 4 / 1.3);
  REQUIRE(error_ratio <= 4 * 1.3);
  REQUIRE(step_ratio >= 2 / 1.3);
  REQUIRE(step_ratio <= 2 * 1.3);
}
