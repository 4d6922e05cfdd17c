// Linear solvers (solver/linear_solver.hpp): the default and its override by options with the
// role's prefix, tolerances, the check that a transposed solve's preconditioner can be applied
// transposed, and the two preconditioner reuse rules.
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/solver/linear_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
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
  return solver::create_linear_solver(PETSC_COMM_WORLD, role, solver::LinearMethod::Direct,
                                      solver::LinearSystems::Steady, solver::MeshKind{2}, type, tol,
                                      ksp);
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

namespace {

// The cyclic shift x_i <- x_(i-1 mod n): GMRES from zero with b = e_0 makes no progress until its
// Krylov space holds all n directions, so GMRES(k) with k < n stagnates for ever and GMRES(k >= n)
// converges in n iterations.
Mat cyclic_shift(PetscInt n_global) {
  Mat A;
  MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n_global, n_global, 1, nullptr, 1,
               nullptr, &A);
  PetscInt lo, hi;
  MatGetOwnershipRange(A, &lo, &hi);
  for (PetscInt i = lo; i < hi; ++i)
    MatSetValue(A, i, (i + n_global - 1) % n_global, 1.0, INSERT_VALUES);
  MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY);
  return A;
}

// b = e_0 and a vector x for the cyclic shift A
void first_unit_vector(Mat A, Vec *x, Vec *b) {
  MatCreateVecs(A, x, b);
  PetscInt lo, hi;
  VecGetOwnershipRange(*b, &lo, &hi);
  if (lo == 0) VecSetValue(*b, 0, 1.0, INSERT_VALUES);
  VecAssemblyBegin(*b);
  VecAssemblyEnd(*b);
}

// GMRES(restart) without preconditioner on `A`, tolerances 1e-10 and max_iterations
KSP plain_gmres(Mat A, PetscInt restart, PetscInt max_iterations) {
  KSP ksp;
  KSPCreate(PETSC_COMM_WORLD, &ksp);
  KSPSetType(ksp, KSPGMRES);
  KSPGMRESSetRestart(ksp, restart);
  PC pc;
  KSPGetPC(ksp, &pc);
  PCSetType(pc, PCNONE);
  KSPSetTolerances(ksp, 1e-10, 1e-30, PETSC_DEFAULT, max_iterations);
  KSPSetFromOptions(ksp);
  KSPSetOperators(ksp, A, A);
  return ksp;
}

} // namespace

TEST_CASE("linear solver: an unconverged GMRES solve widens its restart (x 3 up to 100 and the "
          "iteration limit), not a user's restart nor another Krylov method",
          "[linear-solver][mpi]") {
  constexpr PetscInt n = 50;
  Mat A = cyclic_shift(n);
  Vec b, x;
  first_unit_vector(A, &x, &b);
  KSPConvergedReason reason;
  PetscInt its, from, to;

  KSP ksp = plain_gmres(A, 20, 200);
  REQUIRE(KSPSolve(ksp, b, x) == 0);
  REQUIRE(KSPGetConvergedReason(ksp, &reason) == 0);
  CHECK(reason == KSP_DIVERGED_ITS); // GMRES(20) stagnates on the shift
  REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
  CHECK(from == 20);
  CHECK(to == 60);
  REQUIRE(KSPSolve(ksp, b, x) == 0); // the widened solver, set up anew by PETSc
  REQUIRE(KSPGetConvergedReason(ksp, &reason) == 0);
  REQUIRE(KSPGetIterationNumber(ksp, &its) == 0);
  CHECK(reason > 0);
  CHECK(its == n);
  REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
  CHECK((from == 60 && to == solver::kMaxWidenedRestart));
  REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
  CHECK((from == solver::kMaxWidenedRestart && to == from)); // at the cap
  REQUIRE(KSPDestroy(&ksp) == 0);

  // capped by the iteration limit: a restart beyond it would only cost memory
  ksp = plain_gmres(A, 20, 40);
  REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
  CHECK((from == 20 && to == 40));
  REQUIRE(KSPDestroy(&ksp) == 0);
  {
    // a restart the user chose stays
    ScopedOptions o{{"-ksp_gmres_restart", "20"}};
    ksp = plain_gmres(A, 20, 200);
    REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
    CHECK((from == 20 && to == 20));
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  // not GMRES: nothing to widen
  ksp = plain_gmres(A, 20, 200);
  REQUIRE(KSPSetType(ksp, KSPBCGS) == 0);
  REQUIRE(solver::widen_restart(ksp, &from, &to) == 0);
  CHECK((from == 0 && to == 0));
  REQUIRE(KSPDestroy(&ksp) == 0);
  REQUIRE(VecDestroy(&x) == 0);
  REQUIRE(VecDestroy(&b) == 0);
  REQUIRE(MatDestroy(&A) == 0);
}

TEST_CASE("linear solver: GMRES stops at the end of a cycle whose average rate cannot reach the "
          "tolerance within the iteration limit (stop_stalled_solves)",
          "[linear-solver][mpi]") {
  constexpr PetscInt n = 50;
  KSPConvergedReason reason;
  PetscInt its;
  // the cyclic shift: GMRES(20) gains nothing in its first cycle (needed: 10 decades in 200 / 20
  // cycles, 1 per cycle): stopped after 20 iterations instead of 200
  Mat S = cyclic_shift(n);
  Vec b, x;
  first_unit_vector(S, &x, &b);
  solver::StallReport report;
  KSP ksp = plain_gmres(S, 20, 200);
  REQUIRE(solver::stop_stalled_solves(ksp, &report) == 0);
  REQUIRE(KSPSolve(ksp, b, x) == 0);
  REQUIRE(KSPGetConvergedReason(ksp, &reason) == 0);
  REQUIRE(KSPGetIterationNumber(ksp, &its) == 0);
  CHECK(reason == KSP_DIVERGED_ITS);
  CHECK(its == 20);
  CHECK(report.stalled);
  CHECK((report.cycle == 20 && report.cycles == 1));
  CHECK(report.gained == Approx(0).margin(1e-12));
  CHECK(report.needed == Approx(1.0).epsilon(1e-12));
  // a restart as long as the shift: converged in n iterations, not stopped
  REQUIRE(KSPGMRESSetRestart(ksp, n) == 0);
  REQUIRE(KSPSolve(ksp, b, x) == 0);
  REQUIRE(KSPGetConvergedReason(ksp, &reason) == 0);
  REQUIRE(KSPGetIterationNumber(ksp, &its) == 0);
  CHECK(reason > 0);
  CHECK(its == n);
  CHECK_FALSE(report.stalled);
  REQUIRE(KSPDestroy(&ksp) == 0);
  REQUIRE(VecDestroy(&x) == 0);
  REQUIRE(VecDestroy(&b) == 0);
  REQUIRE(MatDestroy(&S) == 0);

  // the identity beside the shift, b = (10^2.5 on the identity's first row, e_0 on the shift's):
  // the first cycle removes the identity's part (2.49 decades), the later ones gain almost
  // nothing: the average 1.25 per cycle after two cycles, 0.83 after three -> stopped at 60
  Mat A;
  REQUIRE(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 2 * n, 2 * n, 1, nullptr, 1,
                       nullptr, &A) == 0);
  PetscInt lo, hi;
  REQUIRE(MatGetOwnershipRange(A, &lo, &hi) == 0);
  for (PetscInt i = lo; i < hi; ++i)
    REQUIRE(MatSetValue(A, i, i < n ? i : n + (i - n + n - 1) % n, 1.0, INSERT_VALUES) == 0);
  REQUIRE(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY) == 0);
  REQUIRE(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY) == 0);
  REQUIRE(MatCreateVecs(A, &x, &b) == 0);
  if (lo == 0) REQUIRE(VecSetValue(b, 0, std::pow(10.0, 2.5), INSERT_VALUES) == 0);
  if (lo <= n && n < hi) REQUIRE(VecSetValue(b, n, 1.0, INSERT_VALUES) == 0);
  REQUIRE(VecAssemblyBegin(b) == 0);
  REQUIRE(VecAssemblyEnd(b) == 0);
  ksp = plain_gmres(A, 20, 200);
  REQUIRE(solver::stop_stalled_solves(ksp, &report) == 0);
  REQUIRE(KSPSolve(ksp, b, x) == 0);
  REQUIRE(KSPGetConvergedReason(ksp, &reason) == 0);
  REQUIRE(KSPGetIterationNumber(ksp, &its) == 0);
  CAPTURE(report.gained, report.cycles);
  CHECK(reason == KSP_DIVERGED_ITS);
  CHECK(its == 60);
  CHECK((report.stalled && report.cycles == 3));
  CHECK(report.gained < 1.0);
  CHECK(report.gained > 0.8);
  REQUIRE(KSPDestroy(&ksp) == 0);
  // without the stop the same solve runs to its 200 iterations
  ksp = plain_gmres(A, 20, 200);
  REQUIRE(KSPSolve(ksp, b, x) == 0);
  REQUIRE(KSPGetIterationNumber(ksp, &its) == 0);
  CHECK(its == 200);
  REQUIRE(KSPDestroy(&ksp) == 0);
  REQUIRE(VecDestroy(&x) == 0);
  REQUIRE(VecDestroy(&b) == 0);
  REQUIRE(MatDestroy(&A) == 0);
}

TEST_CASE("linear solver: the steady adjoint's GMRES restarts after 150 directions with "
          "Gram-Schmidt refined where needed, the Newton steps' after 20; a user's restart stays",
          "[linear-solver][mpi]") {
  // the cyclic shift of 120 unknowns (above): GMRES(k) converges only with k >= 120.  The
  // solvers' own defaults, their preconditioner replaced by none
  constexpr PetscInt n = 120;
  Mat A = cyclic_shift(n);
  Vec b, x;
  first_unit_vector(A, &x, &b);
  const auto solve = [&](solver::LinearSolverRole role, solver::LinearSystems systems,
                         PetscInt *restart, KSPGMRESCGSRefinementType *refinement,
                         KSPConvergedReason *reason) {
    solver::MeshKind kind;
    kind.dim = 3;
    kind.tetrahedra = true;
    KSP ksp;
    REQUIRE(solver::create_linear_solver(PETSC_COMM_WORLD, role, solver::LinearMethod::Iterative,
                                         systems, kind, KSPPREONLY, {1e-10, 1e-30, 400},
                                         &ksp) == 0);
    PC pc;
    REQUIRE(KSPGetPC(ksp, &pc) == 0);
    REQUIRE(PCSetType(pc, PCNONE) == 0);
    REQUIRE(KSPSetOperators(ksp, A, A) == 0);
    REQUIRE(KSPSolve(ksp, b, x) == 0);
    REQUIRE(KSPGetConvergedReason(ksp, reason) == 0);
    REQUIRE(KSPGMRESGetRestart(ksp, restart) == 0);
    REQUIRE(KSPGMRESGetCGSRefinementType(ksp, refinement) == 0);
    REQUIRE(KSPDestroy(&ksp) == 0);
  };
  PetscInt restart;
  KSPGMRESCGSRefinementType refinement;
  KSPConvergedReason reason;
  solve(solver::LinearSolverRole::Adjoint, solver::LinearSystems::SteadyAdjoint, &restart,
        &refinement, &reason);
  CHECK(restart == solver::kSteadyAdjointRestart);
  CHECK(refinement == KSP_GMRES_CGS_REFINE_IFNEEDED);
  CHECK(reason > 0);
  solve(solver::LinearSolverRole::Newton, solver::LinearSystems::Steady, &restart, &refinement,
        &reason);
  CHECK(restart == 20);
  CHECK(refinement == KSP_GMRES_CGS_REFINE_NEVER);
  CHECK(reason == KSP_DIVERGED_ITS);
  {
    ScopedOptions o{{"-adj_ksp_gmres_restart", "30"}};
    REQUIRE(o.set);
    solve(solver::LinearSolverRole::Adjoint, solver::LinearSystems::SteadyAdjoint, &restart,
          &refinement, &reason);
    CHECK(restart == 30);
    CHECK(reason == KSP_DIVERGED_ITS);
  }
  REQUIRE(VecDestroy(&x) == 0);
  REQUIRE(VecDestroy(&b) == 0);
  REQUIRE(MatDestroy(&A) == 0);
}

namespace {

// The ILU shift type of the first level smoother of the multigrid of ksp (set up)
MatFactorShiftType smoother_shift(KSP ksp) {
  PC pc, spc, subpc;
  KSP smoother, *sub;
  PetscInt levels, n;
  MatFactorShiftType type = MAT_SHIFT_NONE;
  KSPGetPC(ksp, &pc);
  PCMGGetLevels(pc, &levels);
  REQUIRE(levels >= 2);
  PCMGGetSmoother(pc, levels - 1, &smoother);
  KSPGetPC(smoother, &spc);
  PCBJacobiGetSubKSP(spc, &n, nullptr, &sub);
  KSPGetPC(sub[0], &subpc);
  PCFactorGetShiftType(subpc, &type);
  return type;
}

// The multigrid solver of a role for steady systems, set up on A
KSP multigrid(solver::LinearSolverRole role, solver::LinearSystems systems, Mat A) {
  const solver::LinearTolerances tol{1e-8, 1e-30, 200};
  KSP ksp;
  REQUIRE(solver::create_linear_solver(PETSC_COMM_WORLD, role, solver::LinearMethod::Iterative,
                                       systems, solver::MeshKind{2}, KSPGMRES, tol, &ksp) == 0);
  REQUIRE(KSPSetOperators(ksp, A, A) == 0);
  REQUIRE(solver::set_up_preconditioner(ksp) == 0);
  return ksp;
}

} // namespace

TEST_CASE("linear solver: the steady multigrid's smoothers shift only zero pivots after an "
          "unconverged solve (unshift_smoothers), the adjoint's from the start; a user's shift "
          "stays",
          "[linear-solver][mpi]") {
  Mat A = tridiagonal(6000); // several multigrid levels
  bool changed;
  KSP ksp = multigrid(solver::LinearSolverRole::Newton, solver::LinearSystems::Steady, A);
  CHECK(smoother_shift(ksp) == MAT_SHIFT_POSITIVE_DEFINITE);
  REQUIRE(solver::unshift_smoothers(ksp, &changed) == 0);
  CHECK(changed);
  CHECK(smoother_shift(ksp) == MAT_SHIFT_NONZERO);
  char value[64];
  PetscBool set;
  REQUIRE(PetscOptionsGetString(nullptr, nullptr, "-mg_levels_sub_pc_factor_shift_type", value,
                                sizeof(value), &set) == 0);
  CHECK((set && std::string(value) == "nonzero"));
  REQUIRE(solver::unshift_smoothers(ksp, &changed) == 0);
  CHECK(!changed); // once
  REQUIRE(KSPDestroy(&ksp) == 0);
  // the next steady solver starts with the shift again
  ksp = multigrid(solver::LinearSolverRole::Newton, solver::LinearSystems::Steady, A);
  CHECK(smoother_shift(ksp) == MAT_SHIFT_POSITIVE_DEFINITE);
  REQUIRE(KSPDestroy(&ksp) == 0);
  // the steady adjoint: zero pivots only from the start
  ksp = multigrid(solver::LinearSolverRole::Adjoint, solver::LinearSystems::SteadyAdjoint, A);
  CHECK(smoother_shift(ksp) == MAT_SHIFT_NONZERO);
  REQUIRE(solver::unshift_smoothers(ksp, &changed) == 0);
  CHECK(!changed);
  REQUIRE(KSPDestroy(&ksp) == 0);
  {
    // a shift the user chose stays (one other than the default: in this process the default's
    // value is already known as karman's own)
    ScopedOptions o{{"-mg_levels_sub_pc_factor_shift_type", "none"}};
    ksp = multigrid(solver::LinearSolverRole::Newton, solver::LinearSystems::Steady, A);
    REQUIRE(solver::unshift_smoothers(ksp, &changed) == 0);
    CHECK(!changed);
    CHECK(smoother_shift(ksp) == MAT_SHIFT_NONE);
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  // not the multigrid: nothing to do
  REQUIRE(create(solver::LinearSolverRole::Newton, KSPPREONLY, &ksp) == 0);
  REQUIRE(solver::unshift_smoothers(ksp, &changed) == 0);
  CHECK(!changed);
  REQUIRE(KSPDestroy(&ksp) == 0);
  REQUIRE(MatDestroy(&A) == 0);
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

TEST_CASE("linear solver: solver.linear auto is iterative with the LU fallback; iterative "
          "defaults, overridable",
          "[linear-solver][mpi]") {
  const char *text = "mesh: {file: x.geo}\nboundaries: {wall: {type: wall}}\n";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "c.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  REQUIRE(cfg.section("solver").text("linear") == "auto");
  CHECK(solver::linear_choice(cfg).method == solver::LinearMethod::Iterative);
  CHECK(solver::linear_choice(cfg).fallback);
  // the LU fallback only where its factors fit: a few cells do, 10^12 do not
  mesh::Mesh m;
  m.comm = PETSC_COMM_WORLD;
  m.dim = 2;
  m.n_owned_cells = 1000;
  bool fits = false;
  double needed = 0, available = 0;
  REQUIRE(solver::direct_fits_in_memory(m, &fits, &needed, &available) == 0);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  CHECK(fits);
  CHECK(needed == Approx(size * 1000 * solver::kDirectBytesPerCell2D / (1 << 30)));
  CHECK(available > 0);
  m.dim = 3;
  m.n_owned_cells = 2000000000; // 168 TiB of factors
  REQUIRE(solver::direct_fits_in_memory(m, &fits, &needed, &available) == 0);
  CHECK_FALSE(fits);
  clear_error();
  CHECK(solver::announce_fallback(m, "the test solve", "DIVERGED_ITS") != 0);
  const std::string message = last_error_message();
  CHECK(message.find("the test solve with the iterative linear solver did not converge "
                     "(DIVERGED_ITS)") != std::string::npos);
  CHECK(message.find("cannot fall back to the direct LU") != std::string::npos);
  clear_error();
  for (const char *choice : {"direct", "iterative"}) {
    config::CaseConfig chosen;
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text, "c.yaml", "/",
                                          {std::string("solver.linear=") + choice},
                                          optimization::case_schema(), chosen) == 0);
    CHECK(solver::linear_method(chosen) == (std::string(choice) == "direct"
                                                ? solver::LinearMethod::Direct
                                                : solver::LinearMethod::Iterative));
    CHECK_FALSE(solver::linear_choice(chosen).fallback);
  }

  // iterative: right-preconditioned GMRES with multigrid; the multigrid defaults that PETSc reads
  // from the options database are there, with the role's prefix, and differ between steady and
  // time-stepping systems; an option the user set is kept
  const solver::LinearTolerances tol{1e-8, 1e-30, 100};
  const auto option = [](const char *name) {
    char value[64] = "";
    PetscBool set;
    PetscOptionsGetString(nullptr, nullptr, name, value, sizeof(value), &set);
    return set ? std::string(value) : std::string("(unset)");
  };
  KSP ksp;
  REQUIRE(solver::create_linear_solver(
              PETSC_COMM_WORLD, solver::LinearSolverRole::Adjoint, solver::LinearMethod::Iterative,
              solver::LinearSystems::Steady, solver::MeshKind{2}, KSPPREONLY, tol, &ksp) == 0);
  CHECK(ksp_type(ksp) == KSPGMRES);
  CHECK(pc_type(ksp) == PCGAMG);
  PCSide side;
  REQUIRE(KSPGetPCSide(ksp, &side) == 0);
  CHECK(side == PC_RIGHT);
  CHECK(option("-adj_pc_mg_cycle_type") == "w");
  CHECK(option("-adj_mg_levels_sub_pc_type") == "ilu");
  CHECK(option("-adj_mg_levels_sub_pc_factor_shift_type") == "positive_definite");
  REQUIRE(KSPDestroy(&ksp) == 0);
  // time steps (forward and adjoint levels), after the steady solver above: coarse correction
  // first, one undamped sweep after it, ILU(1); a steady solver with the same prefix created after
  // them does not inherit that cycle or ILU(1); in 3D time steps keep ILU(0).  The steady adjoint
  // is the steady solver's multigrid with V-cycles in 3D (W in 2D), and a steady Newton solver
  // after it gets its W-cycles back
  using LS = solver::LinearSystems;
  // meshes with tetrahedra: ILU(1) in natural order with only zero pivots shifted, for steady
  // systems and time steps; steady systems with a turbulence model: ILU(1) (linear_solver.cpp)
  // meshes with stretched cells (laminar flow): ILU(1), zero pivots only and GMRES(100) too, not
  // the coarsening threshold
  struct Kind {
    LS systems;
    int dim;
    bool tetrahedra, turbulence, stretched;
  };
  for (const auto &[systems, dim, tets, rans, stretched] :
       std::vector<Kind>{{LS::TimeStepping, 2, false, false, false},
                         {LS::Steady, 2, false, false, false},
                         {LS::SteadyAdjoint, 2, false, false, false},
                         {LS::Steady, 2, false, true, true},
                         {LS::SteadyAdjoint, 2, false, true, true},
                         {LS::TimeStepping, 2, false, true, true},
                         {LS::Steady, 2, false, false, true},
                         {LS::SteadyAdjoint, 2, false, false, true},
                         {LS::TimeStepping, 2, false, false, true},
                         {LS::TimeStepping, 3, false, false, false},
                         {LS::Steady, 3, false, false, false},
                         {LS::SteadyAdjoint, 3, false, false, false},
                         {LS::Steady, 3, true, false, false},
                         {LS::SteadyAdjoint, 3, true, false, false},
                         {LS::TimeStepping, 3, true, false, false},
                         {LS::TimeStepping, 3, false, true, false},
                         {LS::Steady, 3, false, false, true},
                         {LS::Steady, 3, false, false, false}}) {
    const bool time_steps = systems == LS::TimeStepping;
    const bool v_cycle = time_steps || (systems == LS::SteadyAdjoint && dim == 3);
    const bool tet_smoothers = tets;
    CAPTURE(static_cast<int>(systems), dim, tets, rans, stretched);
    solver::MeshKind kind{dim, tets, rans};
    kind.stretched = stretched;
    REQUIRE(solver::create_linear_solver(PETSC_COMM_WORLD, solver::LinearSolverRole::Adjoint,
                                         solver::LinearMethod::Iterative, systems, kind, KSPPREONLY,
                                         tol, &ksp) == 0);
    // (GAMG reads the multigrid options when it sets up)
    Mat A = tridiagonal(200);
    REQUIRE(KSPSetOperators(ksp, A, A) == 0);
    REQUIRE(KSPSetUp(ksp) == 0);
    PC pc;
    PCMGType type;
    REQUIRE(KSPGetPC(ksp, &pc) == 0);
    REQUIRE(PCMGGetType(pc, &type) == 0);
    // the coarse LU in minimum degree order: the tridiagonal matrix factors without fill (in
    // PETSc's default nested dissection order it does: 205 instead of 133 nonzeros on 1 rank)
    KSP coarse, *blocks;
    PC coarse_pc;
    PetscInt n_blocks, first;
    REQUIRE(PCMGGetCoarseSolve(pc, &coarse) == 0);
    REQUIRE(KSPGetPC(coarse, &coarse_pc) == 0);
    REQUIRE(PCBJacobiGetSubKSP(coarse_pc, &n_blocks, &first, &blocks) == 0);
    for (PetscInt b = 0; b < n_blocks; ++b) {
      PC block_pc;
      Mat block, factor;
      MatInfo block_info, factor_info;
      REQUIRE(KSPSetUp(blocks[b]) == 0); // (PCMG factors its coarse blocks at the first solve)
      REQUIRE(KSPGetOperators(blocks[b], &block, nullptr) == 0);
      REQUIRE(KSPGetPC(blocks[b], &block_pc) == 0);
      REQUIRE(PCFactorGetMatrix(block_pc, &factor) == 0);
      REQUIRE(MatGetInfo(block, MAT_LOCAL, &block_info) == 0);
      REQUIRE(MatGetInfo(factor, MAT_LOCAL, &factor_info) == 0);
      PetscInt rows;
      REQUIRE(MatGetSize(block, &rows, nullptr) == 0);
      if (rows > 0) CHECK(factor_info.nz_used == block_info.nz_used); // (GAMG gathered on rank 0)
    }
    CHECK(option("-adj_mg_coarse_sub_pc_factor_mat_ordering_type") == "qmd");
    REQUIRE(MatDestroy(&A) == 0);
    CHECK(type == (time_steps ? PC_MG_KASKADE : PC_MG_MULTIPLICATIVE));
    CHECK(option("-adj_pc_mg_type") == (time_steps ? "kaskade" : "multiplicative"));
    CHECK(option("-adj_pc_mg_cycle_type") == (v_cycle ? "v" : "w"));
    CHECK(option("-adj_mg_levels_ksp_max_it") == (time_steps ? "1" : "2"));
    // steady sweeps damped (undamped they diverged at Re 40, test_iterative.cpp)
    CHECK(option("-adj_mg_levels_ksp_richardson_scale") == (time_steps ? "1"
                                                            : dim == 2 ? "0.6"
                                                                       : "0.8"));
    const bool boundary_layers = !time_steps && (rans || stretched);
    CHECK(option("-adj_mg_levels_sub_pc_factor_levels") ==
          ((time_steps && dim == 2) || tet_smoothers || boundary_layers ? "1" : "0"));
    CHECK(option("-adj_mg_levels_sub_pc_factor_mat_ordering_type") ==
          (tet_smoothers ? "natural" : "rcm"));
    // steady systems with a turbulence model or on stretched meshes: zero pivots only and
    // GMRES(100); with a turbulence model also weak couplings dropped from the aggregation (the
    // TMR bump and flat plate, linear_solver.cpp)
    // the steady adjoint: zero pivots only (the laminar NACA 0012's adjoint, linear_solver.cpp)
    const bool rans_steady = rans && !time_steps;
    const bool steady_adjoint = systems == solver::LinearSystems::SteadyAdjoint;
    CHECK(option("-adj_mg_levels_sub_pc_factor_shift_type") ==
          (tet_smoothers || boundary_layers || steady_adjoint ? "nonzero" : "positive_definite"));
    // (and removed again for the next kind: only this kind has it)
    CHECK(option("-adj_pc_gamg_threshold") == (rans_steady ? "0.05" : "(unset)"));
    // the steady adjoint with a turbulence model on several ranks: the ranks' ILU blocks overlap
    // (additive Schwarz, two layers; the NACA 0012 RANS adjoint on 2 ranks stagnated without)
    PetscMPIInt ranks;
    REQUIRE(MPI_Comm_size(PETSC_COMM_WORLD, &ranks) == 0);
    const bool overlapping = rans && systems == LS::SteadyAdjoint && ranks > 1;
    CHECK(option("-adj_mg_levels_pc_type") == (overlapping ? "asm" : "bjacobi"));
    CHECK(option("-adj_mg_levels_pc_asm_overlap") == (overlapping ? "2" : "(unset)"));
    PetscInt restart;
    REQUIRE(KSPGMRESGetRestart(ksp, &restart) == 0);
    CHECK(restart == (systems == LS::SteadyAdjoint ? solver::kSteadyAdjointRestart
                      : boundary_layers            ? 100
                                                   : 20));
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
  {
    // (a value karman never inserts: one equal to a default an earlier solver put there cannot be
    // told apart from it)
    ScopedOptions o{{"-mg_levels_ksp_max_it", "3"}, {"-pc_type", "asm"}};
    REQUIRE(solver::create_linear_solver(PETSC_COMM_WORLD, solver::LinearSolverRole::Newton,
                                         solver::LinearMethod::Iterative,
                                         solver::LinearSystems::TimeStepping, solver::MeshKind{2},
                                         KSPPREONLY, tol, &ksp) == 0);
    CHECK(option("-mg_levels_ksp_max_it") == "3");
    CHECK(pc_type(ksp) == PCASM);
    REQUIRE(KSPDestroy(&ksp) == 0);
  }
}

TEST_CASE("preconditioner reuse: iteration limit, growth after a fresh set-up or over the fewest",
          "[linear-solver]") {
  PreconditionerReuse reuse(20, 1.5);
  REQUIRE(reuse.decide_setup()); // the first solve sets up
  REQUIRE(reuse.setups() == 1);
  reuse.record_solve(1); // fresh LU factors: one iteration, the limit stays 20
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(20); // at the limit: reuse
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(21); // above it: set up
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(3);
  reuse.request_setup(); // a new step size, a checkpoint, a retry
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(3);
  REQUIRE(!reuse.decide_setup()); // the request was served once
  REQUIRE(reuse.setups() == 3);

  // a multigrid cycle: 30 iterations when fresh, set up again above 1.5 x 30 = 45
  reuse.request_setup();
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(30);
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(45);
  REQUIRE(!reuse.decide_setup());
  reuse.record_solve(46);
  REQUIRE(reuse.decide_setup());
  reuse.record_solve(10); // the new fresh count: the limit is max(20, 15) = 20 again
  reuse.record_solve(21);
  REQUIRE(reuse.decide_setup());
  REQUIRE(reuse.setups() == 6);

  // against the fewest iterations since the set-up (the unsteady adjoint's multigrid): a first
  // solve from zero (60) does not raise the limit; 1.2 x the fewest (40) = 48
  PreconditionerReuse fewest(20, 1.2, true, PreconditionerReuse::Reference::Fewest);
  REQUIRE(fewest.decide_setup());
  fewest.record_solve(60);
  REQUIRE(!fewest.decide_setup()); // 60 <= 1.2 x 60
  fewest.record_solve(40);
  REQUIRE(!fewest.decide_setup());
  fewest.record_solve(48);
  REQUIRE(!fewest.decide_setup()); // at 1.2 x 40
  fewest.record_solve(49);         // the first-solve rule would keep it (limit 72)
  REQUIRE(fewest.decide_setup());
  fewest.record_solve(30); // fresh again: the limit is max(20, 36)
  REQUIRE(!fewest.decide_setup());
  fewest.record_solve(37);
  REQUIRE(fewest.decide_setup());
  REQUIRE(fewest.setups() == 3);

  // reuse off (e.g. -ksp_type preonly): every solve sets up
  PreconditionerReuse never(20, 1.5, false);
  REQUIRE(!never.reuse_enabled());
  for (int k = 0; k < 3; ++k) {
    never.record_solve(1);
    REQUIRE(never.decide_setup());
  }
  REQUIRE(never.setups() == 3);
}

TEST_CASE("least-residual initial guess: exact in the span, never worse than zero",
          "[linear-solver][mpi]") {
  Mat A = tridiagonal(12);
  Vec b, x;
  std::vector<Vec> v(4), work(8);
  REQUIRE(MatCreateVecs(A, &x, &b) == 0);
  for (Vec *p : {&v[0], &v[1], &v[2], &v[3]}) REQUIRE(VecDuplicate(b, p) == 0);
  for (Vec &w : work) REQUIRE(VecDuplicate(b, &w) == 0);
  PetscInt lo, hi;
  REQUIRE(VecGetOwnershipRange(b, &lo, &hi) == 0);
  for (PetscInt i = lo; i < hi; ++i) { // three smooth "earlier solutions", the third dependent
    REQUIRE(VecSetValue(v[0], i, std::sin(0.3 * i), INSERT_VALUES) == 0);
    REQUIRE(VecSetValue(v[1], i, std::cos(0.2 * i) + 0.01 * i, INSERT_VALUES) == 0);
    REQUIRE(VecSetValue(v[2], i, 2 * std::sin(0.3 * i) - (std::cos(0.2 * i) + 0.01 * i),
                        INSERT_VALUES) == 0);
  }
  for (Vec p : v) {
    REQUIRE(VecAssemblyBegin(p) == 0);
    REQUIRE(VecAssemblyEnd(p) == 0);
  }
  REQUIRE(VecSet(v[3], 0.0) == 0); // a zero history entry (the sweep's start)
  const auto residual = [&](bool transpose) { return test::relative_residual(A, transpose, b, x); };
  for (const bool transpose : {true, false}) {
    CAPTURE(transpose);
    // b = op(A) (0.7 v0 - 1.3 v1): the guess is that combination, to round-off
    REQUIRE(VecSet(x, 0.0) == 0);
    REQUIRE(VecAXPY(x, 0.7, v[0]) == 0);
    REQUIRE(VecAXPY(x, -1.3, v[1]) == 0);
    if (transpose)
      REQUIRE(MatMultTranspose(A, x, b) == 0);
    else
      REQUIRE(MatMult(A, x, b) == 0);
    double reported = 1;
    REQUIRE(solver::least_residual_guess(A, transpose, b, v, work, x, &reported) == 0);
    CHECK(reported < 1e-12);
    CHECK(residual(transpose) < 1e-12);
    // b outside the span: the reported residual is the true one, below that of x0 = 0 (1)
    REQUIRE(VecSetRandom(b, nullptr) == 0);
    REQUIRE(solver::least_residual_guess(A, transpose, b, v, work, x, &reported) == 0);
    CHECK(reported <= 1.0);
    CHECK(reported == Approx(residual(transpose)).epsilon(1e-10));
    // ... and it is the least residual: moving along any earlier solution only raises it
    for (Vec p : {v[0], v[1]})
      for (const double h : {1e-3, -1e-3}) {
        REQUIRE(VecAXPY(x, h, p) == 0);
        CHECK(residual(transpose) > reported);
        REQUIRE(VecAXPY(x, -h, p) == 0);
      }
  }
  // no history and b = 0: x0 = 0
  double reported = -1;
  REQUIRE(solver::least_residual_guess(A, true, b, {}, work, x, &reported) == 0);
  CHECK(reported == 1.0);
  REQUIRE(VecSet(b, 0.0) == 0);
  REQUIRE(solver::least_residual_guess(A, true, b, v, work, x, &reported) == 0);
  PetscReal xn;
  REQUIRE(VecNorm(x, NORM_2, &xn) == 0);
  CHECK(xn == 0.0);
  CHECK(reported == 0.0);
  for (Vec *p : {&b, &x, &v[0], &v[1], &v[2], &v[3]}) VecDestroy(p);
  for (Vec &w : work) VecDestroy(&w);
  MatDestroy(&A);
}
