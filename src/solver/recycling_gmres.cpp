// GMRES with a recycled subspace (see include/karman/solver/recycling_gmres.hpp).
#include "karman/solver/recycling_gmres.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace karman::solver {

namespace {

// Removes from w its components along n orthonormal vectors (classical Gram-Schmidt):
// coef = basis^T w, neg = -coef, w += basis neg
PetscErrorCode remove_components(Vec w, PetscInt n, Vec *basis, double *coef, double *neg) {
  PetscFunctionBeginUser;
  if (n == 0) PetscFunctionReturn(0);
  PetscCall(VecMDot(w, n, basis, coef));
  for (PetscInt l = 0; l < n; ++l) neg[l] = -coef[l];
  PetscCall(VecMAXPY(w, n, neg, basis));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode RecyclingGmres::Block::create(Vec like, int n) {
  PetscFunctionBeginUser;
  PetscCall(destroy());
  PetscInt local, global, bs;
  PetscCall(VecGetLocalSize(like, &local));
  PetscCall(VecGetSize(like, &global));
  PetscCall(VecGetBlockSize(like, &bs));
  this->local = static_cast<PetscBLASInt>(local);
  values.assign(static_cast<std::size_t>(local) * n, 0.0);
  vecs.assign(n, nullptr);
  for (int i = 0; i < n; ++i)
    PetscCall(VecCreateMPIWithArray(PetscObjectComm((PetscObject)like), bs, local, global,
                                    column(i), &vecs[i]));
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::Block::destroy() {
  PetscFunctionBeginUser;
  for (Vec &x : vecs)
    if (x) PetscCall(VecDestroy(&x));
  vecs.clear();
  values.clear();
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::Block::changed(int first, int end) {
  PetscFunctionBeginUser;
  // values written through the array: PETSc's cached norms of these vectors are stale
  for (int i = first; i < end; ++i) {
    PetscScalar *a;
    PetscCall(VecGetArray(vecs[i], &a));
    PetscCall(VecRestoreArray(vecs[i], &a));
  }
  PetscFunctionReturn(0);
}

RecyclingGmres::~RecyclingGmres() {
  for (auto *b : {&V_, &Z_, &U_, &Uz_, &C_, &tmp_}) b->destroy();
  if (r_) VecDestroy(&r_);
}

void RecyclingGmres::operator_changed(bool pc_changed) {
  new_matrix_ = true;
  new_pc_ = new_pc_ || pc_changed;
}

PetscErrorCode RecyclingGmres::allocate(Vec like, int m) {
  PetscFunctionBeginUser;
  if (m == m_ && r_) PetscFunctionReturn(0);
  m_ = m;
  PetscCall(V_.create(like, m + 1));
  PetscCall(Z_.create(like, m));
  if (!r_) {
    PetscCall(VecDuplicate(like, &r_));
    for (auto *b : {&U_, &Uz_, &C_, &tmp_}) PetscCall(b->create(like, kmax_));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::refresh(Mat A, PC pc) {
  PetscFunctionBeginUser;
  // C = A M^-1 U for the new matrix (and preconditioner), orthonormalized with the same
  // combinations applied to U and M^-1 U: Cholesky QR, C = Q R with R the Cholesky factor of
  // C^T C (one rank-k update and one reduction, then one triangular solve per block); C was
  // orthonormal for the previous matrix, so C^T C is close to the identity and squaring its
  // condition number costs nothing.
  // Gram-Schmidt instead (twice, dropping dependent vectors) if some R_ii is below
  // kCholeskyMinimum of its column's norm.
  const int k = k_;
  for (int i = 0; i < k; ++i) {
    if (new_pc_) PetscCall(PCApply(pc, U_[i], Uz_[i]));
    PetscCall(MatMult(A, Uz_[i], C_[i]));
  }
  // R = upper triangle of C^T C (local products, one reduction), then its Cholesky factor
  std::vector<double> R(static_cast<std::size_t>(k) * k, 0.0), norms(k);
  PetscBLASInt bk = k, info = 0, ld = C_.ld();
  const double done = 1.0, dzero = 0.0;
  if (k > 0) {
    PetscCallBLAS("BLASsyrk", BLASsyrk_("U", "T", &bk, &C_.local, &done, C_.column(0), &ld, &dzero,
                                        R.data(), &bk));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, R.data(), k * k, MPI_DOUBLE, MPI_SUM,
                               PetscObjectComm((PetscObject)C_[0])));
  }
  for (int i = 0; i < k; ++i) norms[i] = std::sqrt(R[static_cast<std::size_t>(i) * k + i]);
  if (k > 0) PetscCallBLAS("LAPACKpotrf", LAPACKpotrf_("U", &bk, R.data(), &bk, &info));
  bool cholesky = info == 0;
  for (int i = 0; cholesky && i < k; ++i)
    cholesky = R[static_cast<std::size_t>(i) * k + i] > kCholeskyMinimum * norms[i];
  if (!cholesky) {
    ++gram_schmidt_refreshes_;
    PetscCall(gram_schmidt());
  } else if (k > 0) {
    // C R^-1, U R^-1, M^-1 U R^-1 in place
    for (auto *b : {&C_, &U_, &Uz_})
      PetscCallBLAS("BLAStrsm", BLAStrsm_("R", "U", "N", "N", &b->local, &bk, &done, R.data(), &bk,
                                          b->column(0), &ld));
    for (auto *b : {&C_, &U_, &Uz_}) PetscCall(b->changed(0, k));
  }
  new_matrix_ = new_pc_ = false;
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::gram_schmidt() {
  PetscFunctionBeginUser;
  // classical Gram-Schmidt twice on C, the same combinations applied to U and M^-1 U; a vector
  // dependent on the earlier ones is dropped
  int kept = 0;
  std::vector<double> h(kmax_), neg(kmax_);
  for (int i = 0; i < k_; ++i) {
    PetscReal norm0, norm;
    PetscCall(VecNorm(C_[i], NORM_2, &norm0));
    for (int pass = 0; pass < 2 && kept > 0; ++pass) {
      PetscCall(remove_components(C_[i], kept, C_.data(), h.data(), neg.data()));
      PetscCall(VecMAXPY(U_[i], kept, neg.data(), U_.data()));
      PetscCall(VecMAXPY(Uz_[i], kept, neg.data(), Uz_.data()));
    }
    PetscCall(VecNorm(C_[i], NORM_2, &norm));
    if (!(norm > 1e-10 * norm0)) continue; // dependent on the others: dropped
    for (Vec v : {C_[i], U_[i], Uz_[i]}) PetscCall(VecScale(v, 1.0 / norm));
    if (kept != i) // the blocks keep their order: copied down
      for (auto *b : {&C_, &U_, &Uz_}) PetscCall(VecCopy((*b)[i], (*b)[kept]));
    ++kept;
  }
  k_ = kept;
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::project(Vec r, Vec x) {
  PetscFunctionBeginUser;
  if (k_ == 0) PetscFunctionReturn(0);
  std::vector<double> a(k_), neg(k_);
  PetscCall(remove_components(r, k_, C_.data(), a.data(), neg.data()));
  PetscCall(VecMAXPY(x, k_, a.data(), Uz_.data()));
  PetscFunctionReturn(0);
}

namespace {

// entry (i, c) of a column-major matrix with `rows` rows
double &entry(std::vector<double> &a, int rows, int i, int c) {
  return a[static_cast<std::size_t>(c) * rows + i];
}

// The columns of P among the n eigenvectors of the update (eigenvalues wr + i wi, in `order`):
// a real eigenvector, or the real and imaginary parts of a complex pair; at most `want`
std::vector<int> ritz_columns(const std::vector<int> &order, const std::vector<double> &wi,
                              int want) {
  std::vector<int> columns;
  std::vector<bool> used(wi.size(), false);
  for (int i : order) {
    if (static_cast<int>(columns.size()) >= want) break;
    if (used[i]) continue;
    if (wi[i] == 0) {
      columns.push_back(i);
      used[i] = true;
      continue;
    }
    const int base = wi[i] > 0 ? i : i - 1;
    if (static_cast<int>(columns.size()) + 2 > want) continue;
    columns.push_back(base);
    columns.push_back(base + 1);
    used[base] = used[base + 1] = true;
  }
  return columns;
}

// Harmonic Ritz vectors of the cycle (G, W: rows x n): G^T G p = theta G^T W p, as eigenvectors
// of (G^T G)^-1 G^T W with the largest |mu| = 1 / |theta|.  vr: the n x n eigenvectors, columns:
// those kept (ritz_columns); found: false if LAPACK failed (singular), the old space then stays
PetscErrorCode harmonic_ritz_vectors(int n, int rows, std::vector<double> &G,
                                     std::vector<double> &W, int want, std::vector<double> *vr,
                                     std::vector<int> *columns, bool *found) {
  PetscFunctionBeginUser;
  *found = false;
  std::vector<double> M1(static_cast<std::size_t>(n) * n, 0.0), M2(M1.size(), 0.0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      double s1 = 0, s2 = 0;
      for (int i = 0; i < rows; ++i) {
        s1 += entry(G, rows, i, a) * entry(G, rows, i, b);
        s2 += entry(G, rows, i, a) * entry(W, rows, i, b);
      }
      M1[static_cast<std::size_t>(b) * n + a] = s1;
      M2[static_cast<std::size_t>(b) * n + a] = s2;
    }
  PetscBLASInt bn = n, info = 0;
  std::vector<PetscBLASInt> ipiv(n);
  PetscCallBLAS("LAPACKgesv",
                LAPACKgesv_(&bn, &bn, M1.data(), &bn, ipiv.data(), M2.data(), &bn, &info));
  if (info != 0) PetscFunctionReturn(0);
  std::vector<double> wr(n), wi(n), vl(1);
  vr->assign(static_cast<std::size_t>(n) * n, 0.0);
  PetscBLASInt lwork = 8 * n, one = 1;
  std::vector<double> work(lwork);
  PetscCallBLAS("LAPACKgeev",
                LAPACKgeev_("N", "V", &bn, M2.data(), &bn, wr.data(), wi.data(), vl.data(), &one,
                            vr->data(), &bn, work.data(), &lwork, &info));
  if (info != 0) PetscFunctionReturn(0);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::hypot(wr[a], wi[a]) > std::hypot(wr[b], wi[b]);
  });
  *columns = ritz_columns(order, wi, want);
  *found = true;
  PetscFunctionReturn(0);
}

// QR of G P (G: rows x n; P: the chosen columns of vr; modified Gram-Schmidt twice, dependent
// columns dropped): Q, and Y = P R^-1
void orthonormalize_ritz_vectors(int n, int rows, std::vector<double> &G,
                                 const std::vector<double> &vr, const std::vector<int> &columns,
                                 std::vector<std::vector<double>> *Q,
                                 std::vector<std::vector<double>> *Y) {
  for (int col : columns) {
    std::vector<double> p(vr.begin() + static_cast<std::ptrdiff_t>(col) * n,
                          vr.begin() + static_cast<std::ptrdiff_t>(col + 1) * n);
    std::vector<double> q(rows, 0.0);
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < n; ++c) q[i] += entry(G, rows, i, c) * p[c];
    const double norm0 = std::sqrt(std::inner_product(q.begin(), q.end(), q.begin(), 0.0));
    std::vector<double> rcol(Q->size() + 1, 0.0);
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t l = 0; l < Q->size(); ++l) {
        const double s = std::inner_product(q.begin(), q.end(), (*Q)[l].begin(), 0.0);
        rcol[l] += s;
        for (int i = 0; i < rows; ++i) q[i] -= s * (*Q)[l][i];
      }
    const double norm = std::sqrt(std::inner_product(q.begin(), q.end(), q.begin(), 0.0));
    if (!(norm > 1e-12 * norm0)) continue;
    for (double &v : q) v /= norm;
    rcol.back() = norm;
    // y = (p - sum_l y_l r_l) / r_ii
    std::vector<double> y = p;
    for (std::size_t l = 0; l < Y->size(); ++l)
      for (int c = 0; c < n; ++c) y[c] -= (*Y)[l][c] * rcol[l];
    for (double &v : y) v /= norm;
    Q->push_back(std::move(q));
    Y->push_back(std::move(y));
  }
}

} // namespace

PetscErrorCode RecyclingGmres::cycle_relation(int j, const std::vector<double> &H,
                                              const std::vector<double> &B, std::vector<double> *G,
                                              std::vector<double> *W, std::vector<double> *d) {
  PetscFunctionBeginUser;
  const int kc = k_, n = kc + j, rows = n + 1, ldh = m_ + 1;
  // the cycle's relation A M^-1 [U D, V_j] = [C, V_{j+1}] G, D scaling U to unit columns;
  // W = [C, V_{j+1}]^T [U D, V_j] (V is orthonormal and orthogonal to C): the local products
  // C^T U, V_{j+1}^T U and the squared norms of U's columns, in one reduction
  const PetscBLASInt bkc = kc, bj1 = j + 1, brows = rows, ld = V_.ld();
  const double done = 1.0, dzero = 0.0;
  std::vector<double> sums(static_cast<std::size_t>(rows) * kc + kc, 0.0);
  double *dots = sums.data(), *squares = sums.data() + static_cast<std::size_t>(rows) * kc;
  if (kc > 0) {
    PetscCallBLAS("BLASgemm", BLASgemm_("T", "N", &bkc, &bkc, &C_.local, &done, C_.column(0), &ld,
                                        U_.column(0), &ld, &dzero, dots, &brows));
    PetscCallBLAS("BLASgemm", BLASgemm_("T", "N", &bj1, &bkc, &V_.local, &done, V_.column(0), &ld,
                                        U_.column(0), &ld, &dzero, dots + kc, &brows));
    for (int c = 0; c < kc; ++c) {
      const PetscScalar *u = U_.column(c);
      double sq = 0;
      for (PetscBLASInt i = 0; i < U_.local; ++i) sq += u[i] * u[i];
      squares[c] = sq;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE,
                               MPI_SUM, PetscObjectComm((PetscObject)V_[0])));
  }
  d->assign(kc, 0.0);
  for (int c = 0; c < kc; ++c) (*d)[c] = 1.0 / std::sqrt(squares[c]);
  G->assign(static_cast<std::size_t>(rows) * n, 0.0);
  W->assign(G->size(), 0.0);
  for (int c = 0; c < kc; ++c) entry(*G, rows, c, c) = (*d)[c];
  for (int i = 0; i < j; ++i) {
    for (int c = 0; c < kc; ++c)
      entry(*G, rows, c, kc + i) = B[static_cast<std::size_t>(i) * kmax_ + c];
    for (int l = 0; l <= i + 1; ++l)
      entry(*G, rows, kc + l, kc + i) = H[static_cast<std::size_t>(i) * ldh + l];
  }
  for (int c = 0; c < kc; ++c)
    for (int l = 0; l < rows; ++l)
      entry(*W, rows, l, c) = dots[static_cast<std::size_t>(c) * rows + l] * (*d)[c];
  for (int i = 0; i < j; ++i) entry(*W, rows, kc + i, kc + i) = 1.0;
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::replace_space(int j, const std::vector<double> &d,
                                             std::vector<std::vector<double>> &Q,
                                             std::vector<std::vector<double>> &Y) {
  PetscFunctionBeginUser;
  const int kc = k_, rows = kc + j + 1, n = kc + j, knew = static_cast<int>(Q.size());
  // every rank takes rank 0's small matrices (the same sums, but LAPACK's bits need not agree)
  MPI_Comm comm = PetscObjectComm((PetscObject)V_[0]);
  for (int i = 0; i < knew; ++i) {
    PetscCallMPI(MPI_Bcast(Q[i].data(), rows, MPI_DOUBLE, 0, comm));
    PetscCallMPI(MPI_Bcast(Y[i].data(), n, MPI_DOUBLE, 0, comm));
  }
  // C_new = [C, V_{j+1}] Q, U_new = [U D, V_j] Y, (M^-1 U)_new = [M^-1 U D, Z_j] Y: one basis at
  // a time into the temporary block (two products), swapped in before the next
  std::vector<double> top(static_cast<std::size_t>(std::max(kc, 1)) * knew),
      bottom(static_cast<std::size_t>(rows) * knew);
  const PetscBLASInt bknew = knew, bkc = kc, ld = V_.ld();
  const double done = 1.0, dzero = 0.0;
  const auto replace = [&](Block &basis, Block &krylov, int nk,
                           const std::vector<std::vector<double>> &coef,
                           bool scaled) -> PetscErrorCode {
    PetscFunctionBeginUser;
    const PetscBLASInt bnk = nk;
    for (int i = 0; i < knew; ++i) {
      for (int l = 0; l < kc; ++l)
        top[static_cast<std::size_t>(i) * kc + l] = coef[i][l] * (scaled ? d[l] : 1.0);
      for (int l = 0; l < nk; ++l) bottom[static_cast<std::size_t>(i) * nk + l] = coef[i][kc + l];
    }
    PetscCallBLAS("BLASgemm",
                  BLASgemm_("N", "N", &tmp_.local, &bknew, &bnk, &done, krylov.column(0), &ld,
                            bottom.data(), &bnk, &dzero, tmp_.column(0), &ld));
    if (kc > 0)
      PetscCallBLAS("BLASgemm",
                    BLASgemm_("N", "N", &tmp_.local, &bknew, &bkc, &done, basis.column(0), &ld,
                              top.data(), &bkc, &done, tmp_.column(0), &ld));
    PetscCall(tmp_.changed(0, knew));
    std::swap(basis, tmp_);
    PetscFunctionReturn(0);
  };
  PetscCall(replace(C_, V_, j + 1, Q, false));
  PetscCall(replace(U_, V_, j, Y, true));
  PetscCall(replace(Uz_, Z_, j, Y, true));
  k_ = knew;
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::update_space(int j, const std::vector<double> &H,
                                            const std::vector<double> &B) {
  PetscFunctionBeginUser;
  if (j == 0) PetscFunctionReturn(0);
  const int n = k_ + j, rows = n + 1;
  std::vector<double> G, W, d, vr;
  PetscCall(cycle_relation(j, H, B, &G, &W, &d));
  std::vector<int> columns;
  bool found;
  PetscCall(harmonic_ritz_vectors(n, rows, G, W, std::min(kmax_, n), &vr, &columns, &found));
  if (!found) PetscFunctionReturn(0); // singular: the old space stays (still valid)
  std::vector<std::vector<double>> Q, Y;
  orthonormalize_ritz_vectors(n, rows, G, vr, columns, &Q, &Y);
  if (Q.empty()) PetscFunctionReturn(0);
  PetscCall(replace_space(j, d, Q, Y));
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::orthogonalize(int kc, int j, double *coef) {
  PetscFunctionBeginUser;
  // w = V_{j+1} minus its components along C and V_0..V_j (V is orthogonal to C), classical
  // Gram-Schmidt with one reduction: coef = [C, V_0..V_j]^T w, w -= [C, V_0..V_j] coef
  PetscScalar *w = V_.column(j + 1);
  const PetscBLASInt ld = V_.ld(), bkc = kc, bj1 = j + 1, inc = 1;
  const double done = 1.0, dzero = 0.0, dminus = -1.0;
  if (kc > 0)
    PetscCallBLAS("BLASgemv", BLASgemv_("T", &C_.local, &bkc, &done, C_.column(0), &ld, w, &inc,
                                        &dzero, coef, &inc));
  PetscCallBLAS("BLASgemv", BLASgemv_("T", &V_.local, &bj1, &done, V_.column(0), &ld, w, &inc,
                                      &dzero, coef + kc, &inc));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, coef, kc + j + 1, MPI_DOUBLE, MPI_SUM,
                             PetscObjectComm((PetscObject)V_[0])));
  if (kc > 0)
    PetscCallBLAS("BLASgemv", BLASgemv_("N", &C_.local, &bkc, &dminus, C_.column(0), &ld, coef,
                                        &inc, &done, w, &inc));
  PetscCallBLAS("BLASgemv", BLASgemv_("N", &V_.local, &bj1, &dminus, V_.column(0), &ld, coef + kc,
                                      &inc, &done, w, &inc));
  PetscCall(V_.changed(j + 1, j + 2));
  PetscFunctionReturn(0);
}

namespace {

// Givens rotations of the least-squares problem min |g0 e1 - H y|: the earlier rotations and a
// new one (cs[j], sn[j]) that zeroes the subdiagonal entry of column j (col), applied to col and g
void apply_givens(int j, double *col, std::vector<double> &cs, std::vector<double> &sn,
                  std::vector<double> &g) {
  for (int i = 0; i < j; ++i) {
    const double t = cs[i] * col[i] + sn[i] * col[i + 1];
    col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
    col[i] = t;
  }
  const double rr = std::hypot(col[j], col[j + 1]);
  cs[j] = rr > 0 ? col[j] / rr : 1.0;
  sn[j] = rr > 0 ? col[j + 1] / rr : 0.0;
  col[j] = rr;
  col[j + 1] = 0;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
}

// Why the iteration stops before a cycle with residual norm rnorm after its iterations, or
// KSP_CONVERGED_ITERATING
KSPConvergedReason stop_reason(PetscReal rnorm, double target, PetscReal atol, PetscInt its,
                               PetscInt maxit) {
  if (std::isnan(rnorm) || std::isinf(rnorm)) return KSP_DIVERGED_NANORINF;
  if (rnorm <= target) return rnorm <= atol ? KSP_CONVERGED_ATOL : KSP_CONVERGED_RTOL;
  if (its >= maxit) return KSP_DIVERGED_ITS;
  return KSP_CONVERGED_ITERATING;
}

} // namespace

RecyclingGmres::Cycle::Cycle(int m, int kmax)
    : ldh(m + 1), H(static_cast<std::size_t>(ldh) * m), Hg(H.size()),
      B(static_cast<std::size_t>(std::max(kmax, 1)) * m), g(m + 1), cs(m), sn(m), y(m),
      by(std::max(kmax, 1)), coef(kmax + m + 1) {}

PetscErrorCode RecyclingGmres::arnoldi(KSP ksp, Mat A, PC pc, PetscReal rnorm, double target,
                                       PetscInt maxit, Cycle &c, PetscInt *its, int *steps,
                                       bool *breakdown) {
  PetscFunctionBeginUser;
  // Arnoldi on (I - C C^T) A M^-1 from r / |r|
  const int kc = k_, mm = m_ - kc, ldh = c.ldh;
  std::fill(c.H.begin(), c.H.end(), 0.0);
  std::fill(c.g.begin(), c.g.end(), 0.0);
  PetscCall(VecCopy(r_, V_[0]));
  PetscCall(VecScale(V_[0], 1.0 / rnorm));
  c.g[0] = rnorm;
  int j = 0;
  *breakdown = false;
  while (j < mm) {
    Vec w = V_[j + 1];
    PetscCall(PCApply(pc, V_[j], Z_[j]));
    PetscCall(MatMult(A, Z_[j], w));
    PetscCall(orthogonalize(kc, j, c.coef.data()));
    std::copy_n(c.coef.begin(), kc, &c.B[static_cast<std::size_t>(j) * kmax_]);
    std::copy_n(c.coef.begin() + kc, j + 1, &c.H[static_cast<std::size_t>(j) * ldh]);
    PetscReal hn;
    PetscCall(VecNorm(w, NORM_2, &hn));
    c.H[static_cast<std::size_t>(j) * ldh + j + 1] = hn;
    *breakdown = !(hn > 0);
    if (!*breakdown) PetscCall(VecScale(w, 1.0 / hn));
    ++*its;
    double *col = &c.Hg[static_cast<std::size_t>(j) * ldh];
    std::copy_n(&c.H[static_cast<std::size_t>(j) * ldh], j + 2, col);
    apply_givens(j, col, c.cs, c.sn, c.g);
    ++j;
    PetscCall(KSPMonitor(ksp, *its, std::abs(c.g[j])));
    if (std::abs(c.g[j]) <= target || *its >= maxit || *breakdown) break;
  }
  *steps = j;
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::correct(int kc, int j, Cycle &c, Vec x) {
  PetscFunctionBeginUser;
  // x += Z y - M^-1 U (B y): C's part of the residual stays removed
  const int ldh = c.ldh;
  for (int i = j - 1; i >= 0; --i) {
    double s = c.g[i];
    for (int l = i + 1; l < j; ++l) s -= c.Hg[static_cast<std::size_t>(l) * ldh + i] * c.y[l];
    c.y[i] = s / c.Hg[static_cast<std::size_t>(i) * ldh + i];
  }
  PetscCall(VecMAXPY(x, j, c.y.data(), Z_.data()));
  if (kc > 0) {
    for (int l = 0; l < kc; ++l) {
      c.by[l] = 0;
      for (int i = 0; i < j; ++i) c.by[l] -= c.B[static_cast<std::size_t>(i) * kmax_ + l] * c.y[i];
    }
    PetscCall(VecMAXPY(x, kc, c.by.data(), Uz_.data()));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode RecyclingGmres::solve(KSP ksp, Vec b, Vec x, PetscInt *iterations,
                                     KSPConvergedReason *reason, Vec residual) {
  PetscFunctionBeginUser;
  Mat A;
  PC pc;
  PetscReal rtol, atol, dtol;
  PetscInt maxit, restart;
  PetscCall(KSPGetOperators(ksp, &A, nullptr));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetUp(pc));
  PetscCall(KSPGetTolerances(ksp, &rtol, &atol, &dtol, &maxit));
  PetscCall(KSPGMRESGetRestart(ksp, &restart));
  // each cycle: `restart` Arnoldi steps beside the k recycled vectors
  const int m = static_cast<int>(restart) + kmax_;
  PetscCall(allocate(b, m));
  if (new_matrix_) PetscCall(refresh(A, pc));
  PetscReal bnorm, rnorm;
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  const double target = std::max(rtol * bnorm, atol);
  if (residual) {
    PetscCall(VecCopy(residual, r_));
  } else {
    PetscCall(MatMult(A, x, r_));
    PetscCall(VecAYPX(r_, -1.0, b));
  }
  PetscCall(project(r_, x));
  PetscCall(VecNorm(r_, NORM_2, &rnorm));
  Cycle cycle(m, kmax_);
  PetscInt its = 0;
  PetscCall(KSPMonitor(ksp, its, rnorm));
  while ((*reason = stop_reason(rnorm, target, atol, its, maxit)) == KSP_CONVERGED_ITERATING) {
    const int kc = k_;
    int j;
    bool breakdown;
    PetscCall(arnoldi(ksp, A, pc, rnorm, target, maxit, cycle, &its, &j, &breakdown));
    PetscCall(correct(kc, j, cycle, x));
    // the recycled space for the next system: from this solve's last cycle (and from the first
    // cycle ever, so that a long first solve recycles at once)
    const bool last = std::abs(cycle.g[j]) <= target || its >= maxit;
    if ((last || kc == 0) && !breakdown) PetscCall(update_space(j, cycle.H, cycle.B));
    // the true residual (and its part in range(C), round-off, removed)
    PetscCall(MatMult(A, x, r_));
    PetscCall(VecAYPX(r_, -1.0, b));
    PetscCall(project(r_, x));
    PetscCall(VecNorm(r_, NORM_2, &rnorm));
  }
  *iterations = its;
  PetscFunctionReturn(0);
}

} // namespace karman::solver
