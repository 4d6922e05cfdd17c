// Linear solvers (solver/linear_solver.hpp): the default and its override by options with the
// role's prefix, tolerances, the check that a transposed solve's preconditioner can be applied
// transposed, and the two preconditioner reuse rules.
#include "karman/core/error.hpp"
#include "karman/solver/linear_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace karman;
using solver::PreconditionerReuse;
using test::ScopedOptions;

namespace {

// A small nonsymmetric tridiagonal system (convection-diffusion-like), n rows per rank.
Mat tridiagonal(PetscInt n) {
  Mat A;
  MatCreateAIJ(PETSC_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, 3, nullptr, 2, nullptr,
               &A);
  PetscInt lo, hi, N;
  MatGetOwnershipRange(A, &lo, &hi);
  MatGetSize(A, &N, nullptr);
  for (PetscInt i = lo; i < hi; ++i) {
    if (i > 0) MatSetValue(A, i, i - 1, -1.5, INSERT_VALUES);
    MatSetValue(A, i, i, 4.0, INSERT_VALUES);
    if (i + 1 < N) MatSetValue(A, i, i + 1, -0.5, INSERT_VALUES);
  }
  MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  return A;
}

PetscErrorCode create(solver::LinearSolverRole role, KSPType type, KSP *ksp) {
  const solver::LinearTolerances tol{1e-12, 1e-30, 500};
  return solver::create_linear_solver(PETSC_COMM_WORLD, role, type, tol, ksp);
}

std::string ksp_type(KSP ksp) {
  KSPType t;
  KSPGetType(ksp, &t);
  return t;
}

std::string pc_type(KSP ksp) {
  PC pc;
  PCType t;
  KSPGetPC(ksp, &pc);
  PCGetType(pc, &t);
  return t;
}

} // namespace

TEST_CASE("linear solver: default, prefix, tolerances", "[linear-solver][mpi]") {
  REQUIRE(solver::options_prefix(solver::LinearSolverRole::Newton) == nullptr);
  REQUIRE(std::string(solver::options_prefix(solver::LinearSolverRole::Adjoint)) == "adj_");
  KSP ksp;
  REQUIRE(create(solver::LinearSolverRole::Adjoint, KSPGMRES, &ksp) == 0);
  const char *prefix;
  REQUIRE(KSPGetOptionsPrefix(ksp, &prefix) == 0);
  REQUIRE(std::string(prefix) == "adj_");
  REQUIRE(ksp_type(ksp) == KSPGMRES);
  REQUIRE(pc_type(ksp) == PCLU);
  PC pc;
  MatSolverType package;
  REQUIRE(KSPGetPC(ksp, &pc) == 0);
  REQUIRE(PCFactorGetMatSolverType(pc, &package) == 0);
  REQUIRE(std::string(package) == MATSOLVERMUMPS);
  PetscReal rtol, atol, dtol;
  PetscInt maxit;
  REQUIRE(KSPGetTolerances(ksp, &rtol, &atol, &dtol, &maxit) == 0);
  CHECK(rtol == 1e-12);
  CHECK(atol == 1e-30);
  CHECK(maxit == 500);
  REQUIRE(KSPDestroy(&ksp) == 0);

  // options with the role's prefix override the default and the case's tolerances; options
  // without it (the Newton solver's) do not
  {
    ScopedOptions o{{"-adj_ksp_type", "bcgs"},
                    {"-adj_pc_type", "jacobi"},
                    {"-adj_ksp_rtol", "1e-6"},
                    {"-ksp_type", "cg"}};
    REQUIRE(create(solver::LinearSolverRole::Adjoint, KSPGMRES, &ksp) == 0);
    CHECK(ksp_type(ksp) == KSPBCGS);
    CHECK(pc_type(ksp) == PCJACOBI);
    REQUIRE(KSPGetTolerances(ksp, &rtol, &atol, &dtol, &maxit) == 0);
    CHECK(rtol == 1e-6);
    CHECK(maxit == 500);
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  {
    ScopedOptions o{{"-ksp_type", "bcgs"}, {"-adj_ksp_type", "cg"}};
    REQUIRE(create(solver::LinearSolverRole::Newton, KSPPREONLY, &ksp) == 0);
    REQUIRE(KSPGetOptionsPrefix(ksp, &prefix) == 0);
    CHECK(prefix == nullptr);
    CHECK(ksp_type(ksp) == KSPBCGS);
    CHECK(pc_type(ksp) == PCLU);
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
}

TEST_CASE("linear solver: a transposed solve needs a preconditioner that applies transposed",
          "[linear-solver][mpi]") {
  Mat A = tridiagonal(8);
  for (const char *type : {"jacobi", "bjacobi", "lu"}) {
    CAPTURE(type);
    ScopedOptions o{{"-adj_pc_type", type}};
    KSP ksp;
    REQUIRE(create(solver::LinearSolverRole::Adjoint, KSPGMRES, &ksp) == 0);
    REQUIRE(KSPSetOperators(ksp, A, A) == 0);
    clear_error();
    const PetscErrorCode ierr = solver::check_transposed_solve(ksp);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    // and the transposed solve works: A^T x = b to the tolerance
    Vec b, x, r;
    REQUIRE(MatCreateVecs(A, &x, &b) == 0);
    REQUIRE(VecDuplicate(b, &r) == 0);
    REQUIRE(VecSet(b, 1.0) == 0);
    REQUIRE(KSPSolveTranspose(ksp, b, x) == 0);
    REQUIRE(MatMultTranspose(A, x, r) == 0);
    REQUIRE(VecAXPY(r, -1.0, b) == 0);
    PetscReal rnorm, bnorm;
    REQUIRE(VecNorm(r, NORM_2, &rnorm) == 0);
    REQUIRE(VecNorm(b, NORM_2, &bnorm) == 0);
    CHECK(rnorm < 1e-10 * bnorm);
    for (Vec *v : {&b, &x, &r}) VecDestroy(v);
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  // PETSc 3.18's Kaczmarz preconditioner has no transposed apply
  {
    ScopedOptions o{{"-adj_pc_type", "kaczmarz"}};
    KSP ksp;
    REQUIRE(create(solver::LinearSolverRole::Adjoint, KSPGMRES, &ksp) == 0);
    REQUIRE(KSPSetOperators(ksp, A, A) == 0);
    clear_error();
    REQUIRE(solver::check_transposed_solve(ksp) != 0);
    const std::string message = last_error_message();
    CAPTURE(message);
    CHECK(message.find("the adjoint preconditioner -adj_pc_type kaczmarz cannot be applied "
                       "transposed") != std::string::npos);
    CHECK(message.find("-adj_pc_type lu") != std::string::npos);
    clear_error();
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  MatDestroy(&A);
}

TEST_CASE("preconditioner reuse: iteration limit (unsteady forward)", "[linear-solver]") {
  PreconditionerReuse reuse(PreconditionerReuse::Rule::IterationLimit, 20);
  REQUIRE(reuse.decide_setup()); // the first solve sets up
  REQUIRE(reuse.setups() == 1);
  reuse.record_solve(20, 5.0); // at the limit: reuse, whatever the time
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(21, 0.0); // above it: set up
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(3, 0.0);
  reuse.request_setup(); // a new step size, a checkpoint, a retry
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(3, 0.0);
  REQUIRE(!reuse.decide_setup()); // the request was served once
  REQUIRE(reuse.setups() == 3);

  // reuse off (e.g. -ksp_type preonly): every solve sets up
  PreconditionerReuse never(PreconditionerReuse::Rule::IterationLimit, 20, false);
  REQUIRE(!never.reuse_enabled());
  for (int k = 0; k < 3; ++k) {
    never.record_solve(1, 0.0);
    REQUIRE(never.decide_setup());
  }
  REQUIRE(never.setups() == 3);
}

TEST_CASE("preconditioner reuse: mean cost (unsteady adjoint)", "[linear-solver]") {
  PreconditionerReuse reuse(PreconditionerReuse::Rule::MeanCost, 100);
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(1, 10.0); // set-up and solve: the cycle's mean is 10
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(3, 1.0); // 1 <= mean 5.5: keep
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(5, 3.0); // 3 <= mean 14/3: keep
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(9, 4.0); // 4 > mean 18/4 = 4.5? no: keep
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(12, 5.0); // 5 > mean 23/5 = 4.6: set up again
  REQUIRE(reuse.decide_setup());
  REQUIRE(reuse.setups() == 2);
  reuse.record_solve(1, 10.0); // a new cycle: its mean is 10 again
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(101, 0.1); // cheap but above the iteration limit
  REQUIRE(reuse.decide_setup());
  REQUIRE(reuse.setups() == 3);
}
