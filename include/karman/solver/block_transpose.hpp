// Products with J^T for a block (BAIJ) Jacobian, with karman's own kernels, for the iterative
// adjoints: their GMRES multiplies by J^T once per iteration (and for the recycled space's
// refresh and the initial guess: DFG 2D-2 level 0, 40 levels, about 2500 products, a fifth of the
// sweep's time on 2 ranks).
//  * PETSc 3.18's MatMultTranspose for BAIJ works block by block through its generic kernel;
//    the loop here is specialized for the block sizes of karman's Jacobians (3 in 2D, 4 in 3D):
//    each block row i adds B_ij^T x_i to y_j, reading the block once, with the block's columns
//    contiguous in PETSc's column-major block storage.
//  * Parallel: y = A_d^T x on the rank's own block columns, then the off-diagonal part's
//    A_o^T x (ghost block columns) added to their owners' entries by one reverse scatter, as
//    PETSc does.
//  * The shell reads J's values at every product (J is written in place level by level); J's
//    nonzero structure must not change (karman's Jacobians never do).
//  * Anything else than SeqBAIJ or MPIBAIJ of block size 3 or 4 gets PETSc's virtual transpose
//    (MatCreateTranspose).
//  * Measured (DFG 2D-2 level 0, the 40-level store-all adjoint of the benchmark, 2 ranks, 3 runs
//    each alternating): 0.19-0.22 instead of 0.21-0.22 ms per product in the GMRES iterations
//    (mean of the ranks, waits included), sweep 1.81-1.94 instead of 1.93-1.98 s, the same 1645
//    iterations and gradients; on one core alone (2817 block rows, 12 blocks per row) the
//    kernel takes 0.100 ms where PETSc's MatMultTranspose takes 0.116-0.118.  The steady
//    adjoints (30-40 iterations) are unchanged.
#pragma once

#include <petscmat.h>

namespace karman::solver {

/// JT: a matrix whose product is J^T x (and whose transposed product is J x).  J is referenced,
/// not copied.  Collective.
PetscErrorCode create_block_transpose(Mat J, Mat *JT);

} // namespace karman::solver
