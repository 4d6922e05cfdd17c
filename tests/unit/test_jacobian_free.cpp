// The Jacobian-free Newton operator (solver/jacobian_free.hpp) on the coarse DFG 2D-1 case, 1 and
// 2 ranks ([mpi]): its product equals the assembled exact Jacobian's (with the steady solver's
// momentum shift, and with an unsteady step's time term inside R) to the accuracy of a one-sided
// difference, ~1e-7 relative, for random directions at a developed state.
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/solver/jacobian_free.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace karman;

TEST_CASE("Jacobian-free operator equals the assembled Jacobian", "[jacobian-free][mpi]") {
  clear_error();
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD, test::dfg_case_yaml(0, "output: {vtk: false}\n"), "test.yaml", "/",
              {}, optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  discretization::FlowResidual &res = fc.residual();
  // a developed state: the steady solution, perturbed so that no term is at a special point
  Vec w, v, Jv, Fv;
  REQUIRE(fc.create_state(&w) == 0);
  REQUIRE(fc.initial_state(w) == 0);
  driver::SteadySolution sol;
  REQUIRE(fc.solve_steady(w, nullptr, {}, &sol) == 0);
  for (Vec *x : {&v, &Jv, &Fv}) REQUIRE(VecDuplicate(w, x) == 0);
  PetscRandom rnd;
  REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
  REQUIRE(PetscRandomSetInterval(rnd, -0.01, 0.01) == 0);
  REQUIRE(VecSetRandom(v, rnd) == 0);
  REQUIRE(VecAXPY(w, 1.0, v) == 0);

  Mat J;
  REQUIRE(res.create_jacobian(&J) == 0);
  solver::JacobianFreeOperator jf;
  REQUIRE(jf.setup(res) == 0);
  std::vector<double> shift(res.mesh().n_owned_cells);
  for (std::size_t c = 0; c < shift.size(); ++c) shift[c] = 0.1 * res.geometry().cell_volume[c];
  std::vector<double> history(res.mesh().n_owned_cells * res.nv(), 0.3);
  discretization::FlowResidual::TimeTerm term{50.0, &history};

  // steady (pseudo-time shift outside R) and unsteady (time term inside R, its shift in J)
  for (const bool unsteady : {false, true}) {
    CAPTURE(unsteady);
    std::vector<double> time_shift(shift.size());
    for (std::size_t c = 0; c < shift.size(); ++c)
      time_shift[c] = res.parameters().rho * res.geometry().cell_volume[c] * term.a0;
    REQUIRE(res.jacobian(discretization::kSteady, w, J, unsteady ? &time_shift : &shift) == 0);
    REQUIRE(jf.set_base(discretization::kSteady, w, unsteady ? &term : nullptr,
                        unsteady ? nullptr : &shift) == 0);
    for (int trial = 0; trial < 3; ++trial) {
      REQUIRE(PetscRandomSetInterval(rnd, -1.0, 1.0) == 0);
      REQUIRE(VecSetRandom(v, rnd) == 0);
      REQUIRE(MatMult(J, v, Jv) == 0);
      REQUIRE(MatMult(jf.matrix(), v, Fv) == 0);
      double nJ, diff;
      REQUIRE(VecNorm(Jv, NORM_2, &nJ) == 0);
      REQUIRE(VecAXPY(Fv, -1.0, Jv) == 0);
      REQUIRE(VecNorm(Fv, NORM_2, &diff) == 0);
      CAPTURE(trial, diff, nJ);
      CHECK(diff <= 1e-6 * nJ);
      CHECK(diff > 0); // a difference, not the matrix
    }
  }
  PetscRandomDestroy(&rnd);
  MatDestroy(&J);
  for (Vec *x : {&w, &v, &Jv, &Fv}) VecDestroy(x);
}
