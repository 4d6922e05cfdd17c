// Products with J^T for a block Jacobian (see include/karman/solver/block_transpose.hpp).
#include "karman/solver/block_transpose.hpp"

#include <cstddef>

namespace karman::solver {

namespace {

struct BlockTranspose {
  Mat J = nullptr;                ///< referenced
  Mat Ad = nullptr, Ao = nullptr; ///< J's local blocks (Ao: none on one rank)
  PetscInt bs = 1;
  Vec lvec = nullptr;          ///< A_o^T x: bs values per ghost block column
  VecScatter ghosts = nullptr; ///< J's column vector -> lvec (ghost block columns in Ao's order)
};

// y += A^T x for a SeqBAIJ block structure (ia, ja: block rows; a: column-major BS x BS blocks):
// (B^T x)_r = sum_c B(c, r) x_c = sum_c a[r BS + c] x_c
template <int BS>
void add_transposed(PetscInt mbs, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a,
                    const PetscScalar *x, PetscScalar *y) {
  for (PetscInt i = 0; i < mbs; ++i) {
    PetscScalar xi[BS];
    for (int c = 0; c < BS; ++c) xi[c] = x[BS * i + c];
    const PetscScalar *v = a + static_cast<std::size_t>(BS * BS) * ia[i];
    for (PetscInt k = ia[i]; k < ia[i + 1]; ++k, v += BS * BS) {
      PetscScalar *yb = y + BS * ja[k];
      for (int r = 0; r < BS; ++r) {
        PetscScalar s = 0;
        for (int c = 0; c < BS; ++c) s += v[r * BS + c] * xi[c];
        yb[r] += s;
      }
    }
  }
}

// y += A^T x for a SeqBAIJ matrix A of block size bs (3 or 4)
PetscErrorCode add_transposed_product(Mat A, PetscInt bs, const PetscScalar *x, PetscScalar *y) {
  PetscFunctionBeginUser;
  PetscInt mbs;
  const PetscInt *ia, *ja;
  PetscBool done;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_TRUE, &mbs, &ia, &ja, &done));
  PetscCheck(done, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
             "block transpose: no block row structure");
  PetscScalar *a;
  PetscCall(MatSeqBAIJGetArray(A, &a));
  if (bs == 3)
    add_transposed<3>(mbs, ia, ja, a, x, y);
  else
    add_transposed<4>(mbs, ia, ja, a, x, y);
  PetscCall(MatSeqBAIJRestoreArray(A, &a));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_TRUE, &mbs, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

PetscErrorCode mult(Mat JT, Vec x, Vec y) {
  PetscFunctionBeginUser;
  BlockTranspose *t;
  PetscCall(MatShellGetContext(JT, &t));
  PetscCall(VecSet(y, 0.0));
  const PetscScalar *xa;
  PetscScalar *ya;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  PetscCall(add_transposed_product(t->Ad, t->bs, xa, ya));
  if (t->Ao) {
    PetscCall(VecSet(t->lvec, 0.0));
    PetscScalar *la;
    PetscCall(VecGetArray(t->lvec, &la));
    PetscCall(add_transposed_product(t->Ao, t->bs, xa, la));
    PetscCall(VecRestoreArray(t->lvec, &la));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArray(y, &ya));
  if (t->Ao) {
    PetscCall(VecScatterBegin(t->ghosts, t->lvec, y, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(t->ghosts, t->lvec, y, ADD_VALUES, SCATTER_REVERSE));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode mult_transpose(Mat JT, Vec x, Vec y) {
  PetscFunctionBeginUser;
  BlockTranspose *t;
  PetscCall(MatShellGetContext(JT, &t));
  PetscCall(MatMult(t->J, x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode get_diagonal(Mat JT, Vec d) {
  PetscFunctionBeginUser;
  BlockTranspose *t;
  PetscCall(MatShellGetContext(JT, &t));
  PetscCall(MatGetDiagonal(t->J, d));
  PetscFunctionReturn(0);
}

PetscErrorCode destroy(Mat JT) {
  PetscFunctionBeginUser;
  BlockTranspose *t;
  PetscCall(MatShellGetContext(JT, &t));
  if (t->lvec) PetscCall(VecDestroy(&t->lvec));
  if (t->ghosts) PetscCall(VecScatterDestroy(&t->ghosts));
  PetscCall(MatDestroy(&t->J));
  delete t;
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode create_block_transpose(Mat J, Mat *JT) {
  PetscFunctionBeginUser;
  PetscBool seq, mpi;
  PetscInt bs;
  PetscCall(PetscObjectTypeCompare((PetscObject)J, MATSEQBAIJ, &seq));
  PetscCall(PetscObjectTypeCompare((PetscObject)J, MATMPIBAIJ, &mpi));
  PetscCall(MatGetBlockSize(J, &bs));
  if ((!seq && !mpi) || (bs != 3 && bs != 4)) {
    PetscCall(MatCreateTranspose(J, JT));
    PetscFunctionReturn(0);
  }
  auto *t = new BlockTranspose;
  PetscCall(PetscObjectReference((PetscObject)J));
  t->J = J;
  t->bs = bs;
  if (seq) {
    t->Ad = J;
  } else {
    const PetscInt *garray;
    PetscCall(MatMPIBAIJGetSeqBAIJ(J, &t->Ad, &t->Ao, &garray));
    PetscInt ghost_columns;
    PetscCall(MatGetSize(t->Ao, nullptr, &ghost_columns));
    IS from; // the ghost block columns' entries, in Ao's column order
    PetscCall(ISCreateBlock(PETSC_COMM_SELF, t->bs, ghost_columns / t->bs, garray,
                            PETSC_COPY_VALUES, &from));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, ghost_columns, &t->lvec));
    Vec column;
    PetscCall(MatCreateVecs(J, &column, nullptr));
    PetscCall(VecScatterCreate(column, from, t->lvec, nullptr, &t->ghosts));
    PetscCall(VecDestroy(&column));
    PetscCall(ISDestroy(&from));
  }
  PetscInt m, n, M, N;
  PetscCall(MatGetLocalSize(J, &m, &n));
  PetscCall(MatGetSize(J, &M, &N));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)J), JT));
  PetscCall(MatSetSizes(*JT, n, m, N, M));
  PetscCall(MatSetBlockSizes(*JT, t->bs, t->bs));
  PetscCall(MatSetType(*JT, MATSHELL));
  PetscCall(MatShellSetContext(*JT, t));
  PetscCall(MatShellSetOperation(*JT, MATOP_MULT, (void (*)(void))mult));
  PetscCall(MatShellSetOperation(*JT, MATOP_MULT_TRANSPOSE, (void (*)(void))mult_transpose));
  PetscCall(MatShellSetOperation(*JT, MATOP_GET_DIAGONAL, (void (*)(void))get_diagonal));
  PetscCall(MatShellSetOperation(*JT, MATOP_DESTROY, (void (*)(void))destroy));
  PetscCall(MatSetUp(*JT));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
