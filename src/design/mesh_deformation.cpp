// Mesh deformation by linear elasticity and its reverse mode (see
// include/karman/design/mesh_deformation.hpp; src/adjoint/README.md, section 8).
#include "karman/design/mesh_deformation.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/geometry/mesh_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace karman::design {
namespace {

// How a solve went, for the log: "the LU", "N CG iterations", "N CG iterations, then the LU".
std::string solve_text(PetscInt iterations, bool direct) {
  const std::string cg = std::to_string(iterations) + " CG iterations";
  if (!direct) return cg;
  return iterations > 0 ? cg + ", then the LU" : "the LU";
}

using V3 = Vec3<double>;

// The 3-tetrahedron split of a prism (VTK order: base 0 1 2, top 3 4 5 above them) that
// starts at the base vertex order (a, b, c): (a b c A), (b c A B), (c A B C).
void add_prism_split(int a, int b, int c, double w, std::vector<WeightedSimplex> *s) {
  s->push_back({{a, b, c, a + 3}, w});
  s->push_back({{b, c, a + 3, b + 3}, w});
  s->push_back({{c, a + 3, b + 3, c + 3}, w});
}

std::vector<WeightedSimplex> make_split(mesh::CellShape shape) {
  using mesh::CellShape;
  switch (shape) {
  case CellShape::Triangle:
    return {{{0, 1, 2, -1}, 1.0}};
  case CellShape::Quadrilateral: // both diagonals
    return {{{0, 1, 2, -1}, 0.5}, {{0, 2, 3, -1}, 0.5}, {{1, 2, 3, -1}, 0.5}, {{1, 3, 0, -1}, 0.5}};
  case CellShape::Tetrahedron:
    return {{{0, 1, 2, 3}, 1.0}};
  case CellShape::Pyramid: // both diagonals of the base (0 1 2 3), apex 4
    return {{{0, 1, 2, 4}, 0.5}, {{0, 2, 3, 4}, 0.5}, {{1, 2, 3, 4}, 0.5}, {{1, 3, 0, 4}, 0.5}};
  case CellShape::Hexahedron:
    // VTK order: base 0 1 2 3, top 4 5 6 7 above them.  The two five-tetrahedron splits: the
    // central tetrahedron on one set of alternate corners, a corner tetrahedron at each other
    // corner (the corner and its three edge neighbours).
    return {{{0, 2, 5, 7}, 0.5}, {{1, 0, 2, 5}, 0.5}, {{3, 2, 0, 7}, 0.5}, {{4, 7, 5, 0}, 0.5},
            {{6, 5, 7, 2}, 0.5}, {{1, 3, 4, 6}, 0.5}, {{0, 1, 3, 4}, 0.5}, {{2, 3, 1, 6}, 0.5},
            {{5, 4, 6, 1}, 0.5}, {{7, 6, 4, 3}, 0.5}};
  case CellShape::Prism: {
    // the six three-tetrahedron splits (one per order of the base vertices; they differ in the
    // diagonals of the three quadrilateral faces), weight 1/6 each
    std::vector<WeightedSimplex> s;
    const int orders[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    for (const auto &o : orders) add_prism_split(o[0], o[1], o[2], 1.0 / 6.0, &s);
    return s;
  }
  }
  return {};
}

// Barycentric gradients g[0..dim] and volume of the simplex with vertex coordinates p[0..dim];
// false if it is degenerate.
bool simplex_gradients(int dim, const V3 *const *p, V3 *g, double *volume) {
  const V3 e1 = *p[1] - *p[0], e2 = *p[2] - *p[0];
  double det;
  if (dim == 2) {
    det = e1[0] * e2[1] - e1[1] * e2[0];
    if (!(std::abs(det) > 0)) return false;
    g[1] = V3(e2[1] / det, -e2[0] / det, 0.0);
    g[2] = V3(-e1[1] / det, e1[0] / det, 0.0);
    *volume = std::abs(det) / 2;
  } else {
    const V3 e3 = *p[3] - *p[0];
    const V3 c23 = cross(e2, e3), c31 = cross(e3, e1), c12 = cross(e1, e2);
    det = dot(e1, c23);
    if (!(std::abs(det) > 0)) return false;
    g[1] = (1.0 / det) * c23;
    g[2] = (1.0 / det) * c31;
    g[3] = (1.0 / det) * c12;
    *volume = std::abs(det) / 6;
  }
  g[0] = V3();
  for (int k = 1; k <= dim; ++k) g[0] -= g[k];
  return true;
}

} // namespace

const std::vector<WeightedSimplex> &simplex_split(mesh::CellShape shape) {
  static const std::vector<WeightedSimplex> splits[6] = {
      make_split(mesh::CellShape::Triangle),    make_split(mesh::CellShape::Quadrilateral),
      make_split(mesh::CellShape::Tetrahedron), make_split(mesh::CellShape::Hexahedron),
      make_split(mesh::CellShape::Prism),       make_split(mesh::CellShape::Pyramid)};
  return splits[static_cast<int>(shape)];
}

bool cell_stiffness(int dim, mesh::CellShape shape, const std::vector<V3> &x, double young_modulus,
                    double poisson_ratio, std::vector<double> *ke) {
  const double nu = poisson_ratio, E = young_modulus;
  const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const int n = static_cast<int>(x.size()), m = n * dim;
  ke->assign(static_cast<std::size_t>(m) * m, 0.0);
  for (const WeightedSimplex &s : simplex_split(shape)) {
    const V3 *p[4];
    for (int k = 0; k <= dim; ++k) p[k] = &x[s.vertex[k]];
    V3 g[4];
    double volume;
    if (!simplex_gradients(dim, p, g, &volume)) return false;
    const double w = s.weight * volume;
    for (int a = 0; a <= dim; ++a)
      for (int b = 0; b <= dim; ++b) {
        const double gab = dot(g[a], g[b]);
        for (int i = 0; i < dim; ++i)
          for (int j = 0; j < dim; ++j) {
            // (20); each term is symmetric under (a, i) <-> (b, j) operation by operation
            const double v =
                lambda * (g[a][i] * g[b][j]) + mu * (g[b][i] * g[a][j]) + (i == j ? mu * gab : 0.0);
            (*ke)[(s.vertex[a] * dim + i) * m + s.vertex[b] * dim + j] += w * v;
          }
      }
  }
  return true;
}

MeshDeformation::~MeshDeformation() {
  if (ksp_) KSPDestroy(&ksp_);
  if (direct_) KSPDestroy(&direct_);
  if (A_) MatDestroy(&A_);
  if (K_) MatDestroy(&K_);
}

PetscErrorCode MeshDeformation::setup(const mesh::Mesh &mesh, const std::vector<V3> &X0,
                                      const DeformationOptions &options) {
  PetscFunctionBeginUser;
  const int dim = mesh.dim;
  PetscCheck(static_cast<PetscInt>(X0.size()) == mesh.n_vertices, PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ, "mesh deformation: %d reference coordinates for %d vertices",
             (int)X0.size(), (int)mesh.n_vertices);
  PetscCheck(options.poisson_ratio > -1 && options.poisson_ratio < 0.5, mesh.comm,
             PETSC_ERR_ARG_OUTOFRANGE, "mesh deformation: Poisson ratio %g not in (-1, 0.5)",
             options.poisson_ratio);
  if (ksp_) PetscCall(KSPDestroy(&ksp_));
  if (direct_) PetscCall(KSPDestroy(&direct_));
  if (A_) PetscCall(MatDestroy(&A_));
  if (K_) PetscCall(MatDestroy(&K_));
  mesh_ = &mesh;
  X0_ = X0;
  PetscCall(layout_.create(mesh));
  const PetscInt n_owned = layout_.n_owned();

  // boundary (Dirichlet) vertices: the vertices of every boundary face
  PetscCall(mesh::mark_boundary_vertices(mesh, layout_, {}, &boundary_));
  dirichlet_.clear();
  for (PetscInt i = 0; i < n_owned; ++i)
    if (boundary_[layout_.owned_vertices()[i]])
      for (int k = 0; k < dim; ++k) dirichlet_.push_back((layout_.owned_offset() + i) * dim + k);

  PetscCall(assemble_stiffness(X0, options));
  PetscCall(dirichlet_operator(X0));
  PetscCall(create_solver(options));
  PetscFunctionReturn(0);
}

// The stiffness K of the reference mesh X0: every owned cell, by its rank (20).  Collective.
PetscErrorCode MeshDeformation::assemble_stiffness(const std::vector<V3> &X0,
                                                   const DeformationOptions &options) {
  PetscFunctionBeginUser;
  const mesh::Mesh &mesh = *mesh_;
  const int dim = mesh.dim;
  const std::vector<PetscInt> &gidx = layout_.global_index();
  const PetscInt n_owned = layout_.n_owned(), n_global = layout_.n_global();
  // reference volumes
  geometry::Geometry<double> g;
  geometry::compute_geometry(mesh, X0, g);
  V0_.assign(g.cell_volume.begin(), g.cell_volume.begin() + mesh.n_owned_cells);
  Mat pre;
  PetscCall(MatCreate(mesh.comm, &pre));
  PetscCall(MatSetType(pre, MATPREALLOCATOR));
  PetscCall(MatSetSizes(pre, dim * n_owned, dim * n_owned, dim * n_global, dim * n_global));
  PetscCall(MatSetBlockSize(pre, dim));
  PetscCall(MatSetUp(pre));
  PetscCall(MatCreate(mesh.comm, &K_));
  PetscCall(MatSetType(K_, MATAIJ));
  PetscCall(MatSetSizes(K_, dim * n_owned, dim * n_owned, dim * n_global, dim * n_global));
  PetscCall(MatSetBlockSize(K_, dim));
  std::vector<PetscInt> idx;
  std::vector<double> ke;
  PetscInt bad_cell = -1;                // a reference cell with V <= 0 or a degenerate simplex
  for (int pass = 0; pass < 2; ++pass) { // pass 0: the pattern; pass 1: the values
    Mat M = pass == 0 ? pre : K_;
    for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
      const PetscInt b = mesh.cell_vertex_ptr[c], e = mesh.cell_vertex_ptr[c + 1];
      const PetscInt n = e - b;
      idx.resize(n);
      std::vector<V3> x(n);
      for (PetscInt k = 0; k < n; ++k) {
        idx[k] = gidx[mesh.cell_vertex[b + k]];
        x[k] = X0[mesh.cell_vertex[b + k]];
      }
      if (pass == 0) {
        ke.assign(static_cast<std::size_t>(n * dim) * (n * dim), 0.0);
      } else if (!(V0_[c] > 0 && cell_stiffness(dim, mesh.cell_shape[c], x,
                                                std::pow(V0_[c], -options.stiffness_exponent),
                                                options.poisson_ratio, &ke))) {
        bad_cell = std::max(bad_cell, mesh.cell_gid[c]); // reported by all ranks below
        continue;
      }
      PetscCall(MatSetValuesBlocked(M, n, idx.data(), n, idx.data(), ke.data(), ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    if (pass == 0) {
      PetscCall(MatPreallocatorPreallocate(pre, PETSC_TRUE, K_));
      PetscCall(MatDestroy(&pre));
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad_cell, 1, MPIU_INT, MPI_MAX, mesh.comm));
  PetscCheck(bad_cell < 0, mesh.comm, PETSC_ERR_ARG_WRONG,
             "mesh deformation: reference cell %d is inverted or degenerate", (int)bad_cell);
  PetscCall(MatSetOption(K_, MAT_SYMMETRIC, PETSC_TRUE));

  PetscFunctionReturn(0);
}

// A: K with the Dirichlet rows and columns replaced by c I, c the mean diagonal of K (for
// conditioning), symmetric positive definite, with the rigid-body modes as its near null space.
// Collective.
PetscErrorCode MeshDeformation::dirichlet_operator(const std::vector<V3> &X0) {
  PetscFunctionBeginUser;
  const int dim = mesh_->dim;
  const PetscInt n_owned = layout_.n_owned(), n_global = layout_.n_global();
  {
    Vec diag;
    PetscCall(MatCreateVecs(K_, &diag, nullptr));
    PetscCall(MatGetDiagonal(K_, diag));
    PetscScalar sum;
    PetscCall(VecSum(diag, &sum));
    diagonal_ = n_global > 0 ? sum / (dim * n_global) : 1.0;
    PetscCall(VecDestroy(&diag));
  }
  PetscCall(MatDuplicate(K_, MAT_COPY_VALUES, &A_));
  PetscCall(MatZeroRowsColumns(A_, static_cast<PetscInt>(dirichlet_.size()), dirichlet_.data(),
                               diagonal_, nullptr, nullptr));
  PetscCall(MatSetOption(A_, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(A_, MAT_SPD, PETSC_TRUE));
  {
    Vec coords;
    PetscCall(layout_.create_global_vector(dim, &coords));
    PetscScalar *a;
    PetscCall(VecGetArray(coords, &a));
    for (PetscInt i = 0; i < n_owned; ++i)
      for (int k = 0; k < dim; ++k) a[i * dim + k] = X0[layout_.owned_vertices()[i]][k];
    PetscCall(VecRestoreArray(coords, &a));
    MatNullSpace rigid;
    PetscCall(MatNullSpaceCreateRigidBody(coords, &rigid));
    PetscCall(MatSetNearNullSpace(A_, rigid));
    PetscCall(MatNullSpaceDestroy(&rigid));
    PetscCall(VecDestroy(&coords));
  }

  PetscFunctionReturn(0);
}

// The LU (header: DeformationSolver), or CG + GAMG, overridable with -deform_ksp_* /
// -deform_pc_*.  Collective.
PetscErrorCode MeshDeformation::create_solver(const DeformationOptions &options) {
  PetscFunctionBeginUser;
  const mesh::Mesh &mesh = *mesh_;
  bool direct = options.solver == DeformationSolver::Direct;
  if (options.solver == DeformationSolver::Auto && mesh.dim == 2)
    PetscCall(lu_factors_fit(
        mesh.comm, kDirectBytesPerVertex2D * static_cast<double>(layout_.n_owned()), &direct));
  if (direct) {
    PetscCall(create_direct());
    PetscFunctionReturn(0);
  }
  //  GAMG's Chebyshev smoothers rest
  // on an eigenvalue estimate; where it comes out low (it depends on the partition, which varies
  // between 2-rank runs) the V-cycle is not positive definite and CG can stop with
  // DIVERGED_INDEFINITE_PC: solve() then falls back to a direct solve.
  PetscCall(KSPCreate(mesh.comm, &ksp_));
  PetscCall(KSPSetOptionsPrefix(ksp_, "deform_"));
  PetscCall(KSPSetType(ksp_, KSPCG));
  PetscCall(KSPSetNormType(ksp_, KSP_NORM_UNPRECONDITIONED));
  PC pc;
  PetscCall(KSPGetPC(ksp_, &pc));
  PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(KSPSetTolerances(ksp_, options.rtol, 0.0, PETSC_DEFAULT, options.max_iterations));
  PetscCall(KSPSetOperators(ksp_, A_, A_));
  PetscCall(KSPSetFromOptions(ksp_));
  PetscCall(KSPSetUp(ksp_));
  PetscFunctionReturn(0);
}

// Global Vec (bs dim) of the owners' copies of per-vertex values; optionally only the boundary
// vertices (others 0).
PetscErrorCode MeshDeformation::owned_values(const std::vector<V3> &local, bool boundary_only,
                                             Vec global) const {
  PetscFunctionBeginUser;
  const int dim = mesh_->dim;
  PetscCheck(static_cast<PetscInt>(local.size()) == mesh_->n_vertices, PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ, "mesh deformation: %d vertex values for %d vertices",
             (int)local.size(), (int)mesh_->n_vertices);
  PetscScalar *a;
  PetscCall(VecGetArray(global, &a));
  for (PetscInt i = 0; i < layout_.n_owned(); ++i) {
    const PetscInt v = layout_.owned_vertices()[i];
    for (int k = 0; k < dim; ++k) a[i * dim + k] = !boundary_only || boundary_[v] ? local[v][k] : 0;
  }
  PetscCall(VecRestoreArray(global, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode MeshDeformation::create_direct() const {
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(mesh_->comm, &direct_));
  PetscCall(KSPSetOptionsPrefix(direct_, "deform_direct_"));
  PetscCall(KSPSetType(direct_, KSPPREONLY));
  PC pc;
  PetscCall(KSPGetPC(direct_, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscCall(KSPSetOperators(direct_, A_, A_));
  PetscCall(KSPSetFromOptions(direct_));
  PetscFunctionReturn(0);
}

PetscErrorCode MeshDeformation::solve(Vec rhs, Vec x, PetscInt *iterations,
                                      KSPConvergedReason *reason, bool *direct) const {
  PetscFunctionBeginUser;
  if (direct) *direct = false;
  if (direct_) {
    // the LU chosen, or once CG + AMG has failed on this operator the LU it set up: it solves
    // the later systems at once, they share A and the iterations would be lost again (the RANS
    // NACA 0012's mesh, cells of volume 1e-12 to 1e4: 10 000 CG iterations before every
    // deformation and every reverse solve of a campaign, cases/naca0012-rans/optimize.yaml)
    *iterations = 0;
  } else {
    PetscCall(KSPSolve(ksp_, rhs, x));
    PetscCall(KSPGetIterationNumber(ksp_, iterations));
    PetscCall(KSPGetConvergedReason(ksp_, reason));
    if (*reason > 0) PetscFunctionReturn(0);
    // the fallback: a direct solve (MUMPS LU of A, set up once), so that a preconditioner that
    // fails on some right-hand side costs time, not the design
    PetscCall(log_info(mesh_->comm,
                       "mesh deformation: CG + AMG stopped (%s after %d iterations); solving with "
                       "a direct LU factorization instead",
                       KSPConvergedReasons[*reason], (int)*iterations));
    PetscCall(create_direct());
  }
  PetscCall(KSPSolve(direct_, rhs, x));
  PetscCall(KSPGetConvergedReason(direct_, reason));
  if (direct) *direct = true;
  PetscFunctionReturn(0);
}

PetscErrorCode MeshDeformation::deform(const std::vector<V3> &boundary_displacement,
                                       std::vector<V3> *X, DeformationResult *result) const {
  PetscFunctionBeginUser;
  PetscCheck(mesh_, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MeshDeformation: no setup");
  const mesh::Mesh &m = *mesh_;
  const int dim = m.dim;
  *result = DeformationResult();
  Vec dB, rhs, d;
  PetscCall(layout_.create_global_vector(dim, &dB));
  PetscCall(VecDuplicate(dB, &rhs));
  PetscCall(VecDuplicate(dB, &d));
  PetscCall(owned_values(boundary_displacement, true, dB));
  // (19): A d = [0; -K_IB d_B], then d_B set: the tolerance is relative to the interior's
  // right-hand side alone
  PetscCall(MatMult(K_, dB, rhs));
  PetscCall(VecScale(rhs, -1.0));
  PetscInt lo;
  PetscCall(VecGetOwnershipRange(rhs, &lo, nullptr));
  {
    PetscScalar *r;
    PetscCall(VecGetArray(rhs, &r));
    for (PetscInt row : dirichlet_) r[row - lo] = 0;
    PetscCall(VecRestoreArray(rhs, &r));
  }
  KSPConvergedReason reason;
  PetscCall(solve(rhs, d, &result->iterations, &reason, &result->direct));
  {
    const PetscScalar *b;
    PetscScalar *x;
    PetscCall(VecGetArrayRead(dB, &b));
    PetscCall(VecGetArray(d, &x));
    for (PetscInt row : dirichlet_) x[row - lo] = b[row - lo];
    PetscCall(VecRestoreArray(d, &x));
    PetscCall(VecRestoreArrayRead(dB, &b));
  }
  std::vector<double> local;
  PetscCall(layout_.global_to_local(d, &local));
  PetscCall(VecDestroy(&dB));
  PetscCall(VecDestroy(&rhs));
  PetscCall(VecDestroy(&d));
  X->assign(X0_.begin(), X0_.end());
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    for (int k = 0; k < dim; ++k) (*X)[v][k] += local[v * dim + k];
  if (reason < 0) {
    result->message = std::string("mesh deformation: the linear solve did not converge (") +
                      KSPConvergedReasons[reason] + " after " + std::to_string(result->iterations) +
                      " iterations; see -deform_ksp_monitor, -deform_ksp_type, -deform_pc_type)";
    PetscCall(log_info(m.comm, "%s", result->message.c_str()));
    PetscFunctionReturn(0);
  }

  // the deformed mesh: valid cells; the cell of smallest volume ratio V / V0
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, *X, g);
  geometry::InvalidCells invalid;
  PetscCall(geometry::find_invalid_cells(m, *X, g, &invalid));
  result->n_invalid_cells = invalid.count;
  result->valid = invalid.count == 0;
  double worst = 1e300;
  PetscInt worst_cell = -1;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    if (g.cell_volume[c] / V0_[c] < worst) {
      worst = g.cell_volume[c] / V0_[c];
      worst_cell = c;
    }
  double info[5] = {0, 0, 0, 0, 0}; // serial index, centroid, volume
  if (worst_cell >= 0) {
    info[0] = static_cast<double>(m.cell_gid[worst_cell]);
    for (int k = 0; k < 3; ++k) info[1 + k] = g.cell_centroid[worst_cell][k];
    info[4] = g.cell_volume[worst_cell];
  }
  double minus_smallest; // the smallest ratio, as the largest of the negatives
  PetscCall(max_with_data(m.comm, -worst, info, 5, &minus_smallest, info));
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "smallest volume ratio V/V0 = %.3g at cell %d (%g, %g, %g), volume %.3g",
                -minus_smallest, (int)info[0], info[1], info[2], info[3], info[4]);
  if (!result->valid)
    result->message = "mesh deformation: the deformed mesh has " + std::to_string(invalid.count) +
                      " invalid (inverted or tangled) cells; first: " + invalid.first +
                      "; worst: " + buf;
  PetscCall(log_info(m.comm, "mesh deformation: %s, %s%s",
                     solve_text(result->iterations, result->direct).c_str(), buf,
                     result->valid ? "" : " -- refused (invalid cells)"));
  PetscFunctionReturn(0);
}

PetscErrorCode MeshDeformation::reverse(const std::vector<V3> &Xbar, std::vector<V3> *boundary_bar,
                                        PetscInt *iterations) const {
  PetscFunctionBeginUser;
  PetscCheck(mesh_, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MeshDeformation: no setup");
  const mesh::Mesh &m = *mesh_;
  const int dim = m.dim;
  Vec xb, rhs, y, t;
  PetscCall(layout_.create_global_vector(dim, &xb));
  PetscCall(VecDuplicate(xb, &rhs));
  PetscCall(VecDuplicate(xb, &y));
  PetscCall(VecDuplicate(xb, &t));
  PetscCall(owned_values(Xbar, false, xb)); // the total, read once (on the owner)
  // (21): y = A^-1 [0; Xbar_I] (A symmetric: the transposed solve), y_B = 0 exactly
  PetscCall(VecCopy(xb, rhs));
  PetscInt lo;
  PetscCall(VecGetOwnershipRange(rhs, &lo, nullptr));
  {
    PetscScalar *r;
    PetscCall(VecGetArray(rhs, &r));
    for (PetscInt row : dirichlet_) r[row - lo] = 0;
    PetscCall(VecRestoreArray(rhs, &r));
  }
  PetscInt its;
  KSPConvergedReason reason;
  bool direct;
  PetscCall(solve(rhs, y, &its, &reason, &direct));
  PetscCheck(reason > 0, m.comm, PETSC_ERR_NOT_CONVERGED,
             "mesh deformation (reverse): the linear solve did not converge (%s after %d "
             "iterations; see -deform_ksp_monitor, -deform_ksp_type, -deform_pc_type)",
             KSPConvergedReasons[reason], (int)its);
  {
    PetscScalar *a;
    PetscCall(VecGetArray(y, &a));
    for (PetscInt row : dirichlet_) a[row - lo] = 0;
    PetscCall(VecRestoreArray(y, &a));
  }
  // dbar_B = Xbar_B - (K^T y)_B; 0 on interior vertices
  PetscCall(MatMultTranspose(K_, y, t));
  PetscCall(VecZeroEntries(rhs));
  {
    const PetscScalar *x, *kt;
    PetscScalar *r;
    PetscCall(VecGetArrayRead(xb, &x));
    PetscCall(VecGetArrayRead(t, &kt));
    PetscCall(VecGetArray(rhs, &r));
    for (PetscInt row : dirichlet_) r[row - lo] = x[row - lo] - kt[row - lo];
    PetscCall(VecRestoreArray(rhs, &r));
    PetscCall(VecRestoreArrayRead(t, &kt));
    PetscCall(VecRestoreArrayRead(xb, &x));
  }
  std::vector<double> local;
  PetscCall(layout_.global_to_local(rhs, &local));
  boundary_bar->assign(m.n_vertices, V3());
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    for (int k = 0; k < dim; ++k) (*boundary_bar)[v][k] = local[v * dim + k];
  PetscCall(VecDestroy(&xb));
  PetscCall(VecDestroy(&rhs));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&t));
  PetscCall(log_info(m.comm, "mesh deformation (reverse): %s", solve_text(its, direct).c_str()));
  if (iterations) *iterations = its;
  PetscFunctionReturn(0);
}

} // namespace karman::design
