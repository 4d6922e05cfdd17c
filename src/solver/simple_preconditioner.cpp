// SIMPLE-type block preconditioner (see include/karman/solver/simple_preconditioner.hpp).
#include "karman/solver/simple_preconditioner.hpp"

#include <petscconf.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace karman::solver {

namespace {

constexpr const char *kName = "karman SIMPLE";

// The blocks of P, the Schur approximation, the inner solvers and work vectors.
struct Simple {
  PetscInt nv = 0, dim = 0, n_cells = 0; ///< unknowns per cell, owned cells
  IS is_u = nullptr, is_p = nullptr;     ///< P's owned velocity and pressure rows
  Mat Auu = nullptr, Aup = nullptr, Apu = nullptr, App = nullptr, S = nullptr;
  Mat Muu = nullptr;                                ///< the M-matrix part of A_uu that AMG sees
  Mat AuuT = nullptr, MuuT = nullptr, ST = nullptr; ///< transposes (transposed apply only)
  Vec dinv = nullptr;                               ///< 1 / diag(A_uu)
  KSP ku = nullptr, kp = nullptr, kuT = nullptr, kpT = nullptr;
  PC smoother = nullptr;        ///< on the coupled P after the SIMPLE step (null: none)
  Vec r = nullptr, z = nullptr; ///< work vectors of the coupled correction
  Vec bu = nullptr, yu = nullptr, tu = nullptr, bp = nullptr, yp = nullptr, tp = nullptr;
  bool transposed_ready = false; ///< AuuT, ST and their solvers match the last set-up
};

// A preonly KSP with one AMG cycle on A: prefix PREFIXsimple_X_, PETSc options override.
PetscErrorCode create_inner(PC pc, const char *role, KSP *ksp) {
  PetscFunctionBeginUser;
  const char *outer = nullptr;
  PetscCall(PCGetOptionsPrefix(pc, &outer));
  const std::string prefix = std::string(outer ? outer : "") + "simple_" + role + "_";
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)pc), ksp));
  PetscCall(KSPSetOptionsPrefix(*ksp, prefix.c_str()));
  PetscCall(KSPSetType(*ksp, KSPPREONLY));
  PC inner;
  PetscCall(KSPGetPC(*ksp, &inner));
#if defined(PETSC_HAVE_HYPRE)
  PetscCall(PCSetType(inner, PCHYPRE));
  PetscCall(PCHYPRESetType(inner, "boomeramg"));
#else
  PetscCall(PCSetType(inner, PCGAMG));
#endif
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(0);
}

// Splits the interlaced x (p, u_1..u_d per cell) into xu, xp, or merges them back into x.
PetscErrorCode split(const Simple &s, Vec x, Vec xu, Vec xp) {
  PetscFunctionBeginUser;
  const PetscScalar *a;
  PetscScalar *u, *p;
  PetscCall(VecGetArrayRead(x, &a));
  PetscCall(VecGetArray(xu, &u));
  PetscCall(VecGetArray(xp, &p));
  for (PetscInt c = 0; c < s.n_cells; ++c) {
    p[c] = a[c * s.nv];
    for (PetscInt k = 0; k < s.dim; ++k) u[c * s.dim + k] = a[c * s.nv + 1 + k];
  }
  PetscCall(VecRestoreArray(xp, &p));
  PetscCall(VecRestoreArray(xu, &u));
  PetscCall(VecRestoreArrayRead(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode merge(const Simple &s, Vec xu, Vec xp, Vec x) {
  PetscFunctionBeginUser;
  PetscScalar *a;
  const PetscScalar *u, *p;
  PetscCall(VecGetArray(x, &a));
  PetscCall(VecGetArrayRead(xu, &u));
  PetscCall(VecGetArrayRead(xp, &p));
  for (PetscInt c = 0; c < s.n_cells; ++c) {
    a[c * s.nv] = p[c];
    for (PetscInt k = 0; k < s.dim; ++k) a[c * s.nv + 1 + k] = u[c * s.dim + k];
  }
  PetscCall(VecRestoreArrayRead(xp, &p));
  PetscCall(VecRestoreArrayRead(xu, &u));
  PetscCall(VecRestoreArray(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode destroy_blocks(Simple &s) {
  PetscFunctionBeginUser;
  for (Mat *m : {&s.Auu, &s.Aup, &s.Apu, &s.App, &s.S, &s.Muu, &s.AuuT, &s.MuuT, &s.ST})
    PetscCall(MatDestroy(m));
  for (Vec *v : {&s.r, &s.z, &s.dinv, &s.bu, &s.yu, &s.tu, &s.bp, &s.yp, &s.tp})
    PetscCall(VecDestroy(v));
  for (IS *is : {&s.is_u, &s.is_p}) PetscCall(ISDestroy(is));
  s.transposed_ready = false;
  PetscFunctionReturn(0);
}

// The matrix that multigrid sees for the velocity block A (interlaced components, dim of them):
// the Newton linearization of convection makes A far from an M-matrix (off-diagonal entries of
// both signs, couplings between the components; most rows not diagonally dominant), on which
// AMG diverges.  M keeps A's diagonal and its negative same-component couplings and moves every
// other off-diagonal entry onto the diagonal (|a_ij|): a diagonally dominant M-matrix with the
// convection-diffusion structure, whose V-cycle preconditions A well.
PetscErrorCode mmatrix_part(Mat A, PetscInt dim, MatReuse reuse, Mat *M) {
  PetscFunctionBeginUser;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, M));
  PetscCall(MatZeroEntries(*M));
  PetscInt r0, r1;
  PetscCall(MatGetOwnershipRange(A, &r0, &r1));
  std::vector<PetscScalar> row;
  for (PetscInt r = r0; r < r1; ++r) {
    PetscInt nc;
    const PetscInt *cols;
    const PetscScalar *v;
    PetscCall(MatGetRow(A, r, &nc, &cols, &v));
    row.assign(v, v + nc);
    PetscScalar diag = 0, lumped = 0;
    PetscInt d = -1;
    for (PetscInt j = 0; j < nc; ++j) {
      if (cols[j] == r) {
        d = j;
        diag = v[j];
      } else if ((cols[j] - r) % dim != 0 || PetscRealPart(v[j]) > 0) {
        lumped += std::abs(v[j]);
        row[j] = 0;
      }
    }
    const PetscInt n_set = nc;
    PetscCall(MatRestoreRow(A, r, &nc, &cols, &v));
    PetscCheck(d >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG,
               "the SIMPLE preconditioner: row %d of the velocity block has no diagonal entry",
               (int)r);
    row[d] = diag + lumped;
    PetscCall(MatGetRow(A, r, &nc, &cols, nullptr));
    PetscCall(MatSetValues(*M, 1, &r, n_set, cols, row.data(), INSERT_VALUES));
    PetscCall(MatRestoreRow(A, r, &nc, &cols, nullptr));
  }
  PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode setup(PC pc) {
  PetscFunctionBeginUser;
  Simple *s;
  PetscCall(PCShellGetContext(pc, &s));
  Mat A, P;
  PetscCall(PCGetOperators(pc, &A, &P));
  MPI_Comm comm = PetscObjectComm((PetscObject)pc);
  PetscInt bs, rstart, rend;
  PetscCall(MatGetBlockSize(P, &bs));
  PetscCall(MatGetOwnershipRange(P, &rstart, &rend));
  PetscCheck(bs >= 2 && (rend - rstart) % bs == 0, comm, PETSC_ERR_ARG_WRONG,
             "the SIMPLE preconditioner needs the coupled (p, u) matrix with block size 1 + dim "
             "(got block size %d)",
             (int)bs);
  const PetscInt n = (rend - rstart) / bs;
  const bool layout_changed = s->nv != bs || s->n_cells != n || !s->is_u;
  if (layout_changed) {
    PetscCall(destroy_blocks(*s));
    s->nv = bs;
    s->dim = bs - 1;
    s->n_cells = n;
    std::vector<PetscInt> iu(n * s->dim);
    for (PetscInt c = 0; c < n; ++c)
      for (PetscInt k = 0; k < s->dim; ++k) iu[c * s->dim + k] = rstart + c * bs + 1 + k;
    PetscCall(ISCreateGeneral(comm, n * s->dim, iu.data(), PETSC_COPY_VALUES, &s->is_u));
    PetscCall(ISSetBlockSize(s->is_u, s->dim));
    PetscCall(ISCreateStride(comm, n, rstart, bs, &s->is_p));
  }
  const MatReuse reuse = layout_changed ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX;
  PetscCall(MatCreateSubMatrix(P, s->is_u, s->is_u, reuse, &s->Auu));
  PetscCall(MatCreateSubMatrix(P, s->is_u, s->is_p, reuse, &s->Aup));
  PetscCall(MatCreateSubMatrix(P, s->is_p, s->is_u, reuse, &s->Apu));
  PetscCall(MatCreateSubMatrix(P, s->is_p, s->is_p, reuse, &s->App));
  if (layout_changed) {
    PetscCall(MatCreateVecs(s->Auu, &s->yu, &s->bu));
    PetscCall(VecDuplicate(s->bu, &s->tu));
    PetscCall(VecDuplicate(s->bu, &s->dinv));
    PetscCall(MatCreateVecs(s->App, &s->yp, &s->bp));
    PetscCall(VecDuplicate(s->bp, &s->tp));
  }
  // S = A_pp - A_pu D^-1 A_up: a new matrix every set-up (its pattern is the product's)
  PetscCall(MatGetDiagonal(s->Auu, s->dinv));
  PetscCall(VecReciprocal(s->dinv));
  Mat B;
  PetscCall(MatDuplicate(s->Aup, MAT_COPY_VALUES, &B));
  PetscCall(MatDiagonalScale(B, s->dinv, nullptr));
  PetscCall(MatDestroy(&s->S));
  PetscCall(MatMatMult(s->Apu, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &s->S));
  PetscCall(MatDestroy(&B));
  PetscCall(MatScale(s->S, -1.0));
  PetscCall(MatAXPY(s->S, 1.0, s->App, UNKNOWN_NONZERO_PATTERN));
  if (!s->ku) PetscCall(create_inner(pc, "u", &s->ku));
  if (!s->kp) PetscCall(create_inner(pc, "p", &s->kp));
  PetscCall(mmatrix_part(s->Auu, s->dim, s->Muu ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &s->Muu));
  PetscCall(KSPSetOperators(s->ku, s->Auu, s->Muu));
  PetscCall(KSPSetOperators(s->kp, s->S, s->S));
  PetscCall(KSPSetUp(s->ku));
  PetscCall(KSPSetUp(s->kp));
  PetscBool smooth = PETSC_TRUE;
  const char *outer = nullptr;
  PetscCall(PCGetOptionsPrefix(pc, &outer));
  PetscCall(PetscOptionsGetBool(nullptr, outer, "-simple_smooth", &smooth, nullptr));
  if (smooth) {
    if (!s->smoother) {
      const std::string prefix = std::string(outer ? outer : "") + "simple_s_";
      PetscCall(PCCreate(comm, &s->smoother));
      PetscCall(PCSetOptionsPrefix(s->smoother, prefix.c_str()));
      PetscCall(PCSetType(s->smoother, PCBJACOBI));
      PetscCall(PCSetFromOptions(s->smoother));
    }
    PetscCall(PCSetOperators(s->smoother, P, P));
    PetscCall(PCSetUp(s->smoother));
    if (!s->r) {
      PetscCall(MatCreateVecs(P, &s->r, &s->z));
    }
  }
  s->transposed_ready = false; // set up at the next transposed apply
  PetscFunctionReturn(0);
}

PetscErrorCode setup_transposed(PC pc, Simple &s) {
  PetscFunctionBeginUser;
  PetscCall(MatDestroy(&s.AuuT));
  PetscCall(MatDestroy(&s.MuuT));
  PetscCall(MatDestroy(&s.ST));
  PetscCall(MatTranspose(s.Auu, MAT_INITIAL_MATRIX, &s.AuuT));
  PetscCall(MatTranspose(s.Muu, MAT_INITIAL_MATRIX, &s.MuuT));
  PetscCall(MatTranspose(s.S, MAT_INITIAL_MATRIX, &s.ST));
  if (!s.kuT) PetscCall(create_inner(pc, "u", &s.kuT));
  if (!s.kpT) PetscCall(create_inner(pc, "p", &s.kpT));
  PetscCall(KSPSetOperators(s.kuT, s.AuuT, s.MuuT));
  PetscCall(KSPSetOperators(s.kpT, s.ST, s.ST));
  PetscCall(KSPSetUp(s.kuT));
  PetscCall(KSPSetUp(s.kpT));
  s.transposed_ready = true;
  PetscFunctionReturn(0);
}

// y = M^-1 x:  u* = A_uu^-1 x_u,  p = S^-1 (x_p - A_pu u*),  u = u* - D^-1 A_up p
PetscErrorCode apply(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  Simple *s;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(split(*s, x, s->bu, s->bp));
  PetscCall(KSPSolve(s->ku, s->bu, s->yu));
  PetscCall(MatMult(s->Apu, s->yu, s->tp));
  PetscCall(VecAYPX(s->tp, -1.0, s->bp));
  PetscCall(KSPSolve(s->kp, s->tp, s->yp));
  PetscCall(MatMult(s->Aup, s->yp, s->tu));
  PetscCall(VecPointwiseMult(s->tu, s->tu, s->dinv));
  PetscCall(VecAXPY(s->yu, -1.0, s->tu));
  PetscCall(merge(*s, s->yu, s->yp, y));
  if (s->smoother) { // y += B^-1 (x - P y)
    Mat A, P;
    PetscCall(PCGetOperators(pc, &A, &P));
    PetscCall(MatMult(P, y, s->r));
    PetscCall(VecAYPX(s->r, -1.0, x));
    PetscCall(PCApply(s->smoother, s->r, s->z));
    PetscCall(VecAXPY(y, 1.0, s->z));
  }
  PetscFunctionReturn(0);
}

// y = M^-T x:  p = S^-T (x_p - A_up^T D^-1 x_u),  u = A_uu^-T (x_u - A_pu^T p)
PetscErrorCode apply_transpose(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  Simple *s;
  PetscCall(PCShellGetContext(pc, &s));
  if (!s->transposed_ready) PetscCall(setup_transposed(pc, *s));
  Vec b = x;
  if (s->smoother) { // the transposed product: first z = B^-T x, then the SIMPLE step on x - P^T z
    Mat A, P;
    PetscCall(PCGetOperators(pc, &A, &P));
    PetscCall(PCApplyTranspose(s->smoother, x, s->z));
    PetscCall(MatMultTranspose(P, s->z, s->r));
    PetscCall(VecAYPX(s->r, -1.0, x));
    b = s->r;
  }
  PetscCall(split(*s, b, s->bu, s->bp));
  PetscCall(VecPointwiseMult(s->tu, s->bu, s->dinv));
  PetscCall(MatMultTranspose(s->Aup, s->tu, s->tp));
  PetscCall(VecAYPX(s->tp, -1.0, s->bp));
  PetscCall(KSPSolve(s->kpT, s->tp, s->yp));
  PetscCall(MatMultTranspose(s->Apu, s->yp, s->tu));
  PetscCall(VecAYPX(s->tu, -1.0, s->bu));
  PetscCall(KSPSolve(s->kuT, s->tu, s->yu));
  PetscCall(merge(*s, s->yu, s->yp, y));
  if (s->smoother) PetscCall(VecAXPY(y, 1.0, s->z));
  PetscFunctionReturn(0);
}

PetscErrorCode view(PC pc, PetscViewer viewer) {
  PetscFunctionBeginUser;
  Simple *s;
  PetscCall(PCShellGetContext(pc, &s));
  PetscBool ascii;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "%s: M = [A_uu 0; A_pu S][I D^-1 A_up; 0 I], S = A_pp - A_pu D^-1 A_up\n", kName));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  if (s->ku) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "velocity block A_uu:\n"));
    PetscCall(KSPView(s->ku, viewer));
  }
  if (s->kp) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "Schur approximation S:\n"));
    PetscCall(KSPView(s->kp, viewer));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

PetscErrorCode destroy(PC pc) {
  PetscFunctionBeginUser;
  Simple *s;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(destroy_blocks(*s));
  for (KSP *k : {&s->ku, &s->kp, &s->kuT, &s->kpT}) PetscCall(KSPDestroy(k));
  PetscCall(PCDestroy(&s->smoother));
  delete s;
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode set_simple_preconditioner(PC pc) {
  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, new Simple));
  PetscCall(PCShellSetName(pc, kName));
  PetscCall(PCShellSetSetUp(pc, setup));
  PetscCall(PCShellSetApply(pc, apply));
  PetscCall(PCShellSetApplyTranspose(pc, apply_transpose));
  PetscCall(PCShellSetView(pc, view));
  PetscCall(PCShellSetDestroy(pc, destroy));
  PetscFunctionReturn(0);
}

PetscErrorCode is_simple_preconditioner(PC pc, PetscBool *simple) {
  PetscFunctionBeginUser;
  *simple = PETSC_FALSE;
  PetscBool shell;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &shell));
  if (!shell) PetscFunctionReturn(0);
  const char *name = nullptr;
  PetscCall(PCShellGetName(pc, &name));
  *simple = name && std::strcmp(name, kName) == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

} // namespace karman::solver
