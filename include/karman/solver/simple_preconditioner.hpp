// SIMPLE-type block preconditioner of the coupled (p, u) Jacobian (Klaij & Vuik 2013; the idea of
// PETSc's snes/tutorials/ex70.c), applied forward and transposed.
//
// Built from the preconditioning matrix P of the KSP (karman's compact face-neighbour Jacobian,
// interlaced unknowns p, u_1..u_d per cell, block size nv), split into the blocks
//   P = [A_uu A_up; A_pu A_pp],  D = diag(A_uu),  S = A_pp - A_pu D^-1 A_up
// (S is compact: with the Rhie-Chow pressure block A_pp it is a Laplacian-like M-matrix).  The
// preconditioner is the SIMPLE factorization
//   M = [A_uu 0; A_pu S] [I D^-1 A_up; 0 I],
// with A_uu^-1 and S^-1 each replaced by one application of a preconditioner (default: one
// V-cycle of algebraic multigrid, hypre BoomerAMG when PETSc has it, else GAMG):
//   forward:     u* = A_uu^-1 b_u,  p = S^-1 (b_p - A_pu u*),  u = u* - D^-1 A_up p;
//   transposed:  q = b_p - A_up^T D^-1 b_u,  p = S^-T q,  u = A_uu^-T (b_u - A_pu^T p),
// where A_uu^-T and S^-T are the same kind of preconditioner set up on the explicitly transposed
// blocks (MatTranspose; built at the first transposed apply after a set-up), so that the adjoint
// needs neither a transposed field split nor hypre's transposed BoomerAMG (PETSc 3.18: DESIGN.md).
//
// Two measured facts shape it (DFG 2D-1, level 0, Newton Jacobian at Re 20):
//  * AMG diverges on A_uu itself: the Newton linearization of convection (u_f dm/du) gives
//    off-diagonal entries of both signs and couplings between the components, and most rows are
//    not diagonally dominant.  AMG is therefore set up on M_uu, A_uu with every positive or
//    cross-component off-diagonal entry moved (as |a_ij|) onto the diagonal (an M-matrix), and
//    applied as the preconditioner of A_uu.
//  * The SIMPLE step alone needs many iterations once the pseudo-time shift is small; a
//    multiplicative correction with block-Jacobi ILU(0) on the coupled compact P after it,
//    y += B^-1 (b - P y), roughly halves them (-simple_smooth false switches it off; prefix
//    PREFIXsimple_s_ for its options).  Transposed: z = B^-T b, y = z + M^-T (b - P^T z).
//
// The two inner solvers are KSPs (default preonly) with options prefixes
// PREFIXsimple_u_ and PREFIXsimple_p_ (PREFIX: the outer KSP's, e.g. adj_), so that
// -simple_u_pc_type gamg, -simple_p_ksp_type richardson ... change them; the transposed ones share
// these prefixes.  The preconditioner is a PCSHELL: -pc_type (any other) replaces it.
#pragma once

#include <petscksp.h>

namespace karman::solver {

/// Makes pc the SIMPLE preconditioner (a PCSHELL; its set-up reads pc's preconditioning matrix,
/// block size nv = 1 + dim, pressure first).  Call before KSPSetFromOptions so that PETSc options
/// can replace it.  Collective.
PetscErrorCode set_simple_preconditioner(PC pc);

/// True if pc is the SIMPLE preconditioner.
PetscErrorCode is_simple_preconditioner(PC pc, PetscBool *simple);

} // namespace karman::solver
