// The shape chain d_B -> X (elastic deformation) -> w (Newton) -> J -> dJ/dd_B
// (src/driver/shape_evaluation.cpp) on the coarse steady DFG 2D-1 case, for a smooth bump b on
// the cylinder wall, d_B = a b:
//  - dJ/da = <dJ/dd_B, b> equals (fourth-order) central finite differences of re-deformed,
//    re-solved drags to 1e-7 relative, and the Taylor remainder |J(a) - J(0) - a dJ/da| falls as
//    a^2 (rate >= 1.9): the deformation's reverse mode, the adjoint and the warm-started re-solves
//    are exact together; on 1 and 2 ranks ([mpi]);
//  - a displacement that inverts cells is a failed evaluation (ok = false, the reason given),
//    not an error, and the next evaluation starts from the last good state (J(0) again);
//  - the crash tests' fault points are announced where tests/cli/optimize_kill.sh kills.
#include "karman/optimization/case_schema.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/shape_evaluation.hpp"
#include "karman/optimization/optimization_options.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace karman;

namespace {

// The coarse steady DFG 2D-1 case (exact Newton steps, LU) with its shape evaluator, and b: a
// bump on the cylinder wall only (the other boundaries stay); displaced(a) = a b.
struct BumpedCylinder {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  driver::ShapeEvaluator shape;
  std::vector<Vec3<double>> b;

  BumpedCylinder() {
    const std::string yaml =
        test::dfg_case_yaml(0, "solver: {rtol: 1e-14, atol: 1e-13, linear: direct}\n");
    clear_error();
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "shape.yaml", "/", {},
                                          optimization::case_schema(), cfg) == 0);
    REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
    REQUIRE(shape.setup(fc, {}, nullptr) == 0);
    const mesh::Mesh &m = fc.mesh();
    const int cylinder = m.patch_index("cylinder");
    REQUIRE(adjoint::bump_displacement(fc.residual(), cylinder, Vec3<double>(1, 1, 0), &b) == 0);
    std::vector<char> on_wall;
    REQUIRE(mesh::mark_boundary_vertices(m, shape.deformation().layout(), {cylinder}, &on_wall) ==
            0);
    for (PetscInt v = 0; v < m.n_vertices; ++v)
      if (!on_wall[v]) b[v] = Vec3<double>();
  }
  std::vector<Vec3<double>> displaced(double a) const {
    std::vector<Vec3<double>> d(b.size());
    for (std::size_t v = 0; v < b.size(); ++v) d[v] = a * b[v];
    return d;
  }
};

} // namespace

TEST_CASE("shape evaluation: dJ/d(wall displacement) through deformation and re-solve",
          "[driver][shape][mpi]") {
  // (exact Newton steps, LU: the re-solves of the differences end far below atol; the iterative
  // solver's inexact last steps leave J ~3e-12 relative apart on 2 ranks, 4e-7 of the difference)
  BumpedCylinder c;
  driver::ShapeEvaluator &shape = c.shape;
  const mesh::Mesh &m = c.fc.mesh();
  const std::vector<Vec3<double>> &b = c.b;
  const auto displaced = [&](double a) { return c.displaced(a); };
  auto J_at = [&](double a, driver::ShapeEvaluation *e) {
    clear_error();
    const PetscErrorCode ierr = shape.evaluate(displaced(a), e);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    INFO(e->failure);
    REQUIRE(e->ok);
    return e->J;
  };
  driver::ShapeEvaluation e0, e;
  const double J0 = J_at(0.0, &e0);
  double dJ;
  REQUIRE(adjoint::vertex_dot(m, e0.dJ_dB, b, &dJ) == 0);
  REQUIRE(std::abs(dJ) > 0);
  // fourth-order central differences (the bump's scale is the cylinder radius, 0.05: the
  // second-order quotient's truncation h^2 J'''/6 is ~1e-6 of dJ at h = 1e-5)
  const double h = 1e-5;
  const double d1 = J_at(h, &e) - J_at(-h, &e), d2 = J_at(2 * h, &e) - J_at(-2 * h, &e);
  const double fd = (8 * d1 - d2) / (12 * h);
  CAPTURE(J0, dJ, fd, (fd - dJ) / dJ);
  CHECK(std::abs(fd - dJ) <= 1e-7 * std::abs(dJ));
  std::vector<double> rem;
  for (double a : {4e-3, 2e-3, 1e-3}) rem.push_back(std::abs(J_at(a, &e) - J0 - a * dJ));
  for (std::size_t k = 0; k + 1 < rem.size(); ++k) {
    CAPTURE(k, rem[k], rem[k + 1]);
    CHECK(std::log2(rem[k] / rem[k + 1]) >= 1.9);
  }
  // an inverting displacement: refused, and the next evaluation is unharmed
  driver::ShapeEvaluation bad;
  REQUIRE(shape.evaluate(displaced(0.2), &bad) == 0);
  CHECK_FALSE(bad.ok);
  CHECK_THAT(bad.failure, Catch::Contains("mesh deformation"));
  CHECK(J_at(0.0, &e) == Approx(J0).epsilon(1e-10));
}

// The warm start predicted from the states of earlier evaluations (ShapeEvaluator::set_history):
//  - a displacement that one of them had is fitted exactly, and its state starts the solve
//    (its residual on that mesh ~ the solver's tolerance, far below the last state's);
//  - extrapolating along a line (displacements 0, h, then 2h), the last state's residual on the
//    new mesh falls as h (first order), the prediction's as h^2 (second order), and it is the
//    lower one; without a history the last state starts it.  On 1 and 2 ranks ([mpi]: the fit
//    sums over the owned vertices).
TEST_CASE("shape evaluation: the warm start predicted from earlier states",
          "[driver][shape][mpi]") {
  BumpedCylinder c;
  driver::ShapeEvaluator &shape = c.shape;
  driver::FlowCase &fc = c.fc;
  auto evaluate = [&](double a) {
    driver::ShapeEvaluation e;
    clear_error();
    const PetscErrorCode ierr = shape.evaluate(c.displaced(a), &e);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    INFO(e.failure);
    REQUIRE(e.ok);
    return e;
  };
  // without a history: the last state
  driver::ShapeEvaluation e = evaluate(0.0);
  e = evaluate(4e-3);
  CHECK_FALSE(e.predicted);
  CHECK(e.start_residual == e.last_state_residual);
  CHECK(shape.remembered() == 0);
  // a fresh evaluator on the reference mesh (set_up takes the current coordinates)
  const auto restart = [&] {
    design::DeformationResult back;
    REQUIRE(shape.move_to_reference(&back) == 0);
    REQUIRE(shape.setup(fc, {}, nullptr) == 0);
  };
  // a displacement seen before: that state, exactly
  shape.set_history(optimization::kWarmStartHistory);
  restart();
  evaluate(0.0);
  evaluate(4e-3);
  CHECK(shape.remembered() == 2);
  e = evaluate(0.0);
  CAPTURE(e.start_residual, e.last_state_residual);
  CHECK(e.predicted);
  CHECK(e.start_residual <= 1e-6 * e.last_state_residual);
  CHECK(e.start_residual <= 1e-11);
  // extrapolation along a line: first order against second
  std::vector<double> last, predicted;
  for (double h : {4e-3, 2e-3}) {
    restart();
    evaluate(0.0);
    evaluate(h);
    e = evaluate(2 * h);
    CHECK(e.predicted);
    last.push_back(e.last_state_residual);
    predicted.push_back(e.start_residual);
  }
  CAPTURE(last, predicted);
  CHECK(std::log2(last[0] / last[1]) == Approx(1.0).margin(0.2));
  CHECK(std::log2(predicted[0] / predicted[1]) >= 1.8);
  CHECK(predicted[1] <= 0.2 * last[1]);
}

// The crash tests' fault points (core/fault_injection.hpp, tests/cli/optimize_kill.sh): a hook
// given at set-up sees "deformation" and "forward" in every evaluation, counted from 1, and
// "adjoint" only when the evaluation has two or more adjoint solves (an extra flow function).
TEST_CASE("shape evaluation: fault points", "[driver][shape]") {
  // (exact Newton steps, LU: the first solve ends far below the tolerance, so that the second
  // starts converged)
  const std::string yaml = test::dfg_case_yaml(0, "solver: {linear: direct}\n");
  config::CaseConfig cfg;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "shape.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  std::vector<std::pair<std::string, long>> seen;
  driver::ShapeEvaluator shape;
  REQUIRE(shape.setup(fc, {}, nullptr,
                      [&](const FaultPoint &p) { seen.emplace_back(p.phase, p.count); }) == 0);
  const std::vector<Vec3<double>> zero(fc.mesh().n_vertices);
  driver::ShapeEvaluation e;
  REQUIRE(shape.evaluate(zero, &e) == 0);
  CHECK(e.ok);
  using Seen = std::vector<std::pair<std::string, long>>;
  CHECK(seen == Seen{{"deformation", 1}, {"forward", 1}});
  const adjoint::Objective *extra = nullptr; // a second adjoint solve
  REQUIRE(fc.objective(&extra) == 0);
  seen.clear();
  REQUIRE(shape.evaluate(zero, &e, {extra}) == 0);
  CHECK(e.ok);
  // (the second solve starts at the first's solution: no Newton iteration, no "forward" point)
  CHECK(seen == Seen{{"deformation", 2}, {"adjoint", 2}});
}
