// GMRES with a recycled subspace across a sequence of linear systems (GCRO-DR, Parks, de Sturler,
// Mackey, Johnson & Maiti, SIAM J. Sci. Comput. 28(5), 2006), right-preconditioned, for the
// unsteady adjoint: its levels solve J_n^T psi_n = g_n with Jacobians that change little from one
// level to the next.
//  * The recycled space is k vectors U with C = A M^-1 U orthonormal.  A solve first removes
//    the residual's part in range(C) (x += M^-1 U C^T r, r -= C C^T r), then runs Arnoldi cycles of
//    m - k steps on (I - C C^T) A M^-1: the iterate minimizes the residual over the recycled
//    and the Krylov space together, so the directions the recycled space holds (the harmonic Ritz
//    vectors of smallest magnitude: the slow modes that restarted GMRES finds again in every cycle
//    and every solve) are deflated from the start.
//  * The recycled space becomes the k harmonic Ritz vectors of smallest magnitude of A M^-1 in
//    the augmented space [U, V] of a cycle (a small generalized eigenproblem, G^T G p =
//    theta G^T W p, solved as an eigenproblem of (G^T G)^-1 G^T W with LAPACK): after the first
//    cycle ever and after the last cycle of every solve.  (Updating after every cycle, as in the
//    paper, saved no time: each update combines 3k vectors from k + m; the variant without U, the
//    flexible GCRO-DR's W = [I; 0], needed 20-30 % more iterations.)
//  * A new matrix (the next level) costs k products for C = A M^-1 U and a QR; a new
//    preconditioner k preconditioner applications more (M^-1 U is kept between set-ups).
//  * Tolerances, the preconditioner and the number of Arnoldi steps per cycle (the GMRES restart)
//    are the KSP's (KSPGetTolerances, KSPGetPC, KSPGMRESGetRestart); the test is |r| <=
//    max(rtol |b|, atol) on the true residual, recomputed after every cycle.  -ksp_monitor (with
//    the KSP's prefix) prints the least-squares residual of each iteration.
//  * Cost per iteration beyond GMRES: orthogonalization against the k vectors of C.
//  * Each basis (V, M^-1 V, U, M^-1 U, C) is one block, its vectors side by side in one array, so
//    that the multi-vector work reads every vector once: an Arnoldi vector is orthogonalized
//    against C and V with two matrix-vector products and one reduction; the refresh's QR is a
//    Cholesky QR (C^T C by a rank-k update, then a triangular solve; C is nearly orthonormal
//    already, Gram-Schmidt only if the factor is poorly conditioned); the update's combinations
//    are matrix products.  DFG 2D-2 level 1 (2 ranks, 40 levels): the update 0.40 -> 0.15 s, the
//    refresh 0.45 -> 0.35 s per sweep, against one VecMDot / VecMAXPY per vector.
//  * Transposed systems (the adjoint's J^T psi = g) are solved as they are: the KSP's operator's
//    products are J^T x (solver::create_block_transpose) and its preconditioner is built from the
//    transposed preconditioning matrix (solver::transposed_operators).
//  * Measured (DFG 2D-2 unsteady adjoint, 40 levels from rest, 2 ranks, k = 10, restart 20,
//    against PETSc's GMRES with the same multigrid and reuse rule, adjoint.recycle 0; two runs
//    each): level 0 1548 instead of 2132 iterations (1.76-1.77 instead of 2.00-2.06 s), level 1
//    1499 instead of 1842 (6.48-6.74 instead of 6.27-6.50 s: with the cheaper kaskade cycle of
//    the time steps the work against C costs what the iterations save on the larger mesh);
//    level 2 (earlier code and multigrid) 1584 instead of 2119 iterations, 53-58 instead of 62 s.
//  * How many vectors (adjoint.recycle, default 4): each costs a product per level (the refresh)
//    and orthogonalization in every iteration, and beyond a few they save few iterations.  The
//    same benchmark with the block-kernel J^T products (solver/block_transpose.hpp), sweep time
//    and iterations, 2 ranks, 2026-11-27: level 0, 3 runs each alternating, k = 10 / 8 / 6 / 4:
//    1.70-1.77 / 1.70-1.78 / 1.68-1.73 / 1.64-1.66 s, 1548 / 1580 / 1629 / 1645 iterations (in a
//    slower hour k = 2 / 3 / 4 / 5: 1.74-1.75 / 1.79-1.81 / 1.72-1.88 / 1.73-1.81 s); level 1,
//    2 runs each, k = 10 / 6 / 4: 7.02-7.05 / 6.70-6.88 / 6.50-6.57 s, 1504 / 1548 / 1559
//    iterations; level 2, one run each, k = 10 / 4: 40.0 / 38.7 s, 1400 / 1515 iterations.
#pragma once

#include <petscksp.h>
// after petscksp.h: petscblaslapack.h needs PETSc's error macros
#include <petscblaslapack.h>

#include <algorithm>
#include <vector>

namespace karman::solver {

class RecyclingGmres {
public:
  /// recycle: the number k of recycled vectors.
  explicit RecyclingGmres(int recycle) : kmax_(recycle) {}
  ~RecyclingGmres();
  RecyclingGmres(const RecyclingGmres &) = delete;
  RecyclingGmres &operator=(const RecyclingGmres &) = delete;

  /// The next solve has a new matrix (values; same layout); pc_changed: and a preconditioner set
  /// up again.
  void operator_changed(bool pc_changed);
  /// Solves A x = b (A: the KSP's operator) from the initial guess in x.  iterations: Arnoldi
  /// steps (preconditioner applications) of this solve; reason: KSP_CONVERGED_RTOL / _ATOL, or
  /// KSP_DIVERGED_ITS after the KSP's maximum number of iterations.  residual: b - A x of the
  /// initial guess if the caller has it (least_residual_guess), which saves a product.
  PetscErrorCode solve(KSP ksp, Vec b, Vec x, PetscInt *iterations, KSPConvergedReason *reason,
                       Vec residual = nullptr);
  /// The number of recycled vectors held now.
  int recycled() const { return k_; }
  /// How many refreshes orthonormalized C by Gram-Schmidt (its Cholesky QR was refused).
  int gram_schmidt_refreshes() const { return gram_schmidt_refreshes_; }

private:
  /// n vectors side by side in one array (column-major, leading dimension the local length), as
  /// PETSc vectors and for BLAS: the update and the refresh combine whole blocks in one pass
  struct Block {
    std::vector<PetscScalar> values;
    std::vector<Vec> vecs;
    PetscBLASInt local = 0; ///< local length
    Vec operator[](std::size_t i) const { return vecs[i]; }
    Vec *data() { return vecs.data(); }
    PetscScalar *column(int i) { return values.data() + static_cast<std::size_t>(i) * local; }
    PetscBLASInt ld() const { return std::max<PetscBLASInt>(local, 1); }
    PetscErrorCode create(Vec like, int n);
    PetscErrorCode destroy();
    /// columns first..end-1 were written through values (PETSc's cached norms are stale)
    PetscErrorCode changed(int first, int end);
  };
  PetscErrorCode allocate(Vec like, int m);
  PetscErrorCode refresh(Mat A, PC pc);
  PetscErrorCode gram_schmidt();
  PetscErrorCode project(Vec r, Vec x);
  PetscErrorCode orthogonalize(int kc, int j, double *coef);
  /// the small matrices of one Arnoldi cycle of length m: Hessenberg H (and Hg, rotated), the
  /// components B along C, the rotated right-hand side g and the rotations, the solution y
  struct Cycle {
    Cycle(int m, int kmax);
    int ldh;
    std::vector<double> H, Hg, B, g, cs, sn, y, by, coef;
  };
  /// one cycle from r_ (norm rnorm): steps Arnoldi steps (until target, maxit or a breakdown)
  PetscErrorCode arnoldi(KSP ksp, Mat A, PC pc, PetscReal rnorm, double target, PetscInt maxit,
                         Cycle &c, PetscInt *its, int *steps, bool *breakdown);
  /// x += the cycle's correction (j steps, kc recycled vectors)
  PetscErrorCode correct(int kc, int j, Cycle &c, Vec x);
  PetscErrorCode update_space(int j, const std::vector<double> &H, const std::vector<double> &B);
  /// the cycle's relation A M^-1 [U D, V_j] = [C, V_{j+1}] G and W = [C, V_{j+1}]^T [U D, V_j]
  PetscErrorCode cycle_relation(int j, const std::vector<double> &H, const std::vector<double> &B,
                                std::vector<double> *G, std::vector<double> *W,
                                std::vector<double> *d);
  /// C, U, M^-1 U from the new space's coefficients Q and Y (of [C, V_{j+1}] and [U D, V_j])
  PetscErrorCode replace_space(int j, const std::vector<double> &d,
                               std::vector<std::vector<double>> &Q,
                               std::vector<std::vector<double>> &Y);

  /// Cholesky QR of the refreshed C is used when every R_ii exceeds this fraction of its
  /// column's norm (the orthogonality then holds to ~1e-16 / kCholeskyMinimum^2)
  static constexpr double kCholeskyMinimum = 1e-2;
  int kmax_;
  int m_ = 0; ///< Arnoldi basis length: the KSP's restart + kmax
  int k_ = 0; ///< recycled vectors held
  int gram_schmidt_refreshes_ = 0;
  bool new_matrix_ = false, new_pc_ = false;
  Block V_, Z_;      ///< Arnoldi basis (m + 1), preconditioned directions (m)
  Block U_, Uz_, C_; ///< recycled: residual space, M^-1 U, A M^-1 U
  Block tmp_;        ///< kmax vectors for the update
  Vec r_ = nullptr;
};

} // namespace karman::solver
