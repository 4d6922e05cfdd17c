// Volume-mesh deformation by linear elasticity, and its exact reverse mode (src/adjoint/README.md,
// section 8, eqs. 19-21).
//
// The vertex displacement d = X - X0 from the reference mesh X0 solves the equilibrium of a
// linear elastic body whose boundary vertices are all Dirichlet vertices (the moving walls get
// a prescribed displacement, every other boundary vertex 0):
//   d = [d_B; d_I],  K_II d_I = -K_IB d_B                                           (19)
// K is the stiffness matrix of P1 (linear simplex) elasticity on X0, with Lame parameters
//   lambda = E nu / ((1 + nu)(1 - 2 nu)),  mu = E / (2 (1 + nu)),  E_c = V_c^(-exponent)
// per cell (V_c the reference cell volume, exponent 1 by default: small cells are stiff and
// move almost rigidly, as SU2 does), and for one simplex T of weight w_T, barycentric
// gradients g_a, volume |T|, the dim x dim block of vertices a, b:
//   K_ab,ij += w_T |T| (lambda g_a,i g_b,j + mu g_b,i g_a,j + mu delta_ij g_a . g_b)      (20)
// Cells are split into simplices with their own vertices only (simplex_split): quadrilaterals
// into the four triangles of both diagonals at weight 1/2, pyramids likewise, hexahedra into
// both five-tetrahedron splits at weight 1/2, prisms into all six three-tetrahedron splits at
// weight 1/6; no result depends on a choice of diagonals.  Since K is built on the fixed X0,
// d = D d_B is linear in d_B (X = X0 + D d_B), and the reverse mode is the transpose D^T:
//   y_I = K_II^-T Xbar_I,  dbar_B = Xbar_B - (K^T)_BI y_I                                (21)
// K is assembled as a MATAIJ of block size dim on the VertexLayout numbering, every cell by
// the rank that owns it.  The Dirichlet rows and columns are eliminated symmetrically
// (MatZeroRowsColumns with a scaled identity), so the operator A = [c I, 0; 0, K_II] is
// symmetric positive definite.  Its solves (DeformationSolver) are a MUMPS LU of A, factored once
// and reused by every later deformation and reverse solve (options prefix deform_direct_), or CG
// with smoothed-aggregation AMG (PCGAMG) and the rigid-body modes of X0 as its near null space
// (options prefix deform_: -deform_ksp_type, -deform_pc_type, -deform_ksp_monitor ...), with the
// LU if CG fails and the LU alone for the later solves; each with a zero right-hand side on the
// Dirichlet rows (CG's tolerance is relative to the interior's right-hand side) and the Dirichlet
// values set after it.  The default (auto) is the LU in 2D when its factors fit in memory: the
// DFG 2D-1 campaign's level 1 (13 643 vertices, 41 MB of factors) deforms in 0.013 s instead of
// 0.084 s with CG to 1e-14, its reverse 0.020 s instead of 0.193 s; level 3 (206 439 vertices)
// needs 868 MB.  In 3D the factors fill in far more (cases/stokes-body-3d level 0: a process's peak
// 473 -> 978 MB for 0.42 -> 0.06 s per deformation), so auto keeps CG there.  Since A is
// symmetric, the forward solve is also the transposed solve of (21); D^T is exact up to the
// solves' tolerance (the dot-product test gives about rtol, the LU about round-off).  A deformed
// mesh is checked (geometry::find_invalid_cells): a displacement that inverts or tangles cells, or
// a solve that does not converge, is refused with a result flag and a message, not an error, so
// that an optimizer can backtrack.
//
// Per-vertex arrays have one entry per local vertex (owned and copies).  Inputs must be the same
// on every copy of a vertex (the owner's copy is read); outputs are complete on every copy.  In
// particular the adjoint Xbar = dJ/dX is the TOTAL on every copy, as adjoint::finish() gives it
// (after mesh::sum_vertex_copies), not a share per copy, and boundary_bar is returned the same
// way.  The z components are ignored in 2D (z stays X0's, its adjoint is 0).
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/mesh/vertex_layout.hpp"

#include <petscksp.h>

#include <string>
#include <vector>

namespace karman::design {

/// How the deformation's systems are solved (header).
enum class DeformationSolver {
  Auto,   ///< Direct in 2D when the factors fit in memory (kDirectBytesPerVertex2D), else Iterative
  Direct, ///< MUMPS LU, factored once
  Iterative ///< CG + GAMG to rtol, the LU if CG fails
};

/// Bytes of MUMPS LU factors per vertex of a 2D deformation (measured 3.1 and 4.3 KB on DFG 2D-1
/// levels 1 and 3, INFOG(17); growing like log n), with a margin.
constexpr double kDirectBytesPerVertex2D = 6.0 * 1024;

/// Parameters of the deformation (case-file keys optimization.deformation_*).
struct DeformationOptions {
  DeformationSolver solver = DeformationSolver::Auto;
  double poisson_ratio = 0.3;
  double stiffness_exponent = 1.0; ///< E_c = V_c^(-stiffness_exponent), V_c the reference volume
  double rtol = 1e-12;             ///< CG relative tolerance (unpreconditioned residual)
  PetscInt max_iterations = 10000;
};

/// One simplex of a cell's split: its vertices (positions in the cell's VTK vertex list; the
/// last unused in 2D) and its weight.
struct WeightedSimplex {
  int vertex[4];
  double weight;
};

/// The simplices a cell of `shape` is split into (weights add up to 1 per split).
const std::vector<WeightedSimplex> &simplex_split(mesh::CellShape shape);

/// The element stiffness (20) of one cell: `ke` gets (n dim)^2 entries, row-major, row a dim + i,
/// column b dim + j for cell vertices a, b (VTK order) and components i, j; `x` holds the cell's
/// n vertex coordinates.  Returns false if a simplex of the split is degenerate.
bool cell_stiffness(int dim, mesh::CellShape shape, const std::vector<Vec3<double>> &x,
                    double young_modulus, double poisson_ratio, std::vector<double> *ke);

/// What deform() did.
struct DeformationResult {
  bool valid = false;  ///< the solve converged and every cell of the deformed mesh is valid
  std::string message; ///< why not ("" if valid)
  PetscInt n_invalid_cells = 0; ///< invalid cells of the deformed mesh (all ranks)
  PetscInt iterations = 0;      ///< CG iterations (0 with the LU alone)
  bool direct = false;          ///< the LU solved (the solver chosen, or the fallback after CG)
};

class MeshDeformation {
public:
  MeshDeformation() = default;
  MeshDeformation(const MeshDeformation &) = delete;
  MeshDeformation &operator=(const MeshDeformation &) = delete;
  ~MeshDeformation();

  /// Assembles the stiffness on the reference coordinates X0 (per local vertex, consistent
  /// over copies; usually mesh.coordinates) and sets up the solver.  `mesh` must outlive this
  /// object.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X0,
                       const DeformationOptions &options = {});

  /// X = X0 + d (19) for the boundary displacement d_B (per local vertex; only the entries of
  /// boundary vertices are read), and the check of the deformed mesh.  When result->valid is
  /// false, *X still holds the deformed coordinates (to write the failed mesh).  Collective.
  PetscErrorCode deform(const std::vector<Vec3<double>> &boundary_displacement,
                        std::vector<Vec3<double>> *X, DeformationResult *result) const;

  /// Reverse mode (21): *boundary_bar = (dX/dd_B)^T Xbar, with Xbar = dJ/dX per local vertex
  /// (the total on every copy).  *boundary_bar is dJ/dd_B per local vertex: the total on every
  /// copy, 0 at interior vertices.  Optionally the CG iterations.  Collective.
  PetscErrorCode reverse(const std::vector<Vec3<double>> &Xbar,
                         std::vector<Vec3<double>> *boundary_bar,
                         PetscInt *iterations = nullptr) const;

  /// Per local vertex: 1 on the boundary (a Dirichlet vertex), else 0.
  const std::vector<char> &boundary_vertex() const { return boundary_; }
  const mesh::VertexLayout &layout() const { return layout_; }

private:
  /// setup's parts: the stiffness K, the operator A with the Dirichlet rows, the CG solver.
  PetscErrorCode assemble_stiffness(const std::vector<Vec3<double>> &X0,
                                    const DeformationOptions &options);
  PetscErrorCode dirichlet_operator(const std::vector<Vec3<double>> &X0);
  PetscErrorCode create_solver(const DeformationOptions &options);
  /// The MUMPS LU of A (direct_), factored at its first solve.  Collective.
  PetscErrorCode create_direct() const;
  /// With the LU (chosen, or after CG failed once) the LU alone (0 iterations); else CG + AMG,
  /// and the LU if that fails (*direct tells).  Collective.
  PetscErrorCode solve(Vec rhs, Vec x, PetscInt *iterations, KSPConvergedReason *reason,
                       bool *direct = nullptr) const;
  PetscErrorCode owned_values(const std::vector<Vec3<double>> &local, bool boundary_only,
                              Vec global) const;

  const mesh::Mesh *mesh_ = nullptr;
  mesh::VertexLayout layout_;
  std::vector<Vec3<double>> X0_;
  std::vector<double> V0_;          ///< reference volume per owned cell
  std::vector<char> boundary_;      ///< per local vertex
  std::vector<PetscInt> dirichlet_; ///< global rows of the owned boundary vertices
  double diagonal_ = 1;             ///< the scaled identity c of the Dirichlet rows
  Mat K_ = nullptr, A_ = nullptr;   ///< stiffness; with the Dirichlet rows/columns eliminated
  KSP ksp_ = nullptr;
  mutable KSP direct_ = nullptr; ///< the LU: chosen (setup), or after CG + AMG failed
};

} // namespace karman::design
