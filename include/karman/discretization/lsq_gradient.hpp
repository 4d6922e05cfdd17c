// Least-squares cell gradients (weighted by 1/|d|^2), linear in the cell values:
//   G_c = sum_j c_cj (phi_j - phi_c) + sum_b c_cb (phi_b - phi_c),
//   c_cj = M_c^{-1} w_cj d_cj,   M_c = sum_j w_cj d_cj d_cj^T + sum_b w_cb d_cb d_cb^T,
// over the face neighbours j (d_cj = x_j - x_c) and the boundary faces b of the cell
// where the variable is prescribed (d_cb = x_b - x_c, phi_b the boundary value).  The
// fit is exact for linear fields.  One coefficient set per field of the equation set, each with
// the boundary faces where that field is prescribed (the pressure: pressure outlets; the
// velocity: walls, inlets, jets; a scalar: its Dirichlet faces); set_of(k) is unknown k's set.
// Where the neighbours and prescribed faces do not span all directions (a corner cell
// with two walls and one neighbour, for the pressure), the other boundary faces enter
// M_c with zero difference (zero normal gradient there), which keeps M_c invertible.
//
// Gradients are computed for owned and layer-1 ghost cells (all their neighbours are
// local); the Jacobian uses the coefficients directly: dG_c/dphi_j = c_cj and
// dG_c/dphi_c = -(sum_j c_cj + sum_b c_cb).
#pragma once

#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <vector>

namespace karman::discretization {

/// Least-squares coefficients of one cell with centroid xc from the points p_j (neighbour
/// centroids or boundary-face centroids): d_j = p_j - xc, w_j = 1 / |d_j|^2,
/// M = sum_j w_j d_j d_j^T over all points, c_j = M^{-1} w_j d_j for the first n_data
/// points (the others enter M only).  Templated for complex-step tests.  Returns false
/// if M is singular: det M below 1e-8 (2D) / 1e-10 (3D) of (tr M / dim)^dim, the product of its
/// eigenvalues against that of their mean (the weights make every point's term a unit-direction
/// outer product, so this is scale-free and independent of the cells' aspect ratio).  A test
/// relative to the diagonal's product missed points that all lie in one plane: that direction's
/// diagonal entry is round-off too (tetrahedral boxes: coefficients of 1e14-1e15 at corner cells).
/// The conditioning of a least-squares fit through the points p from xc: det M / (tr M / dim)^dim
/// with M as in lsq_coefficients, the product of M's eigenvalues against that of their mean, in
/// [0, 1] (1: the directions d_j / |d_j| spread evenly; 0: they lie in one plane).  Geometry only.
double lsq_fit_conditioning(int dim, const Vec3<double> &xc, const std::vector<Vec3<double>> &p);

/// A fit of a cell with boundary faces whose conditioning is below this takes those faces into M
/// as well (zero difference), even when it is not singular (LeastSquaresGradient::build).  Issue
/// 42: on Gmsh's unstructured tetrahedra a wall cell's three neighbour centroids can lie almost
/// in a plane through its own; the pressure, which has no wall values, then had coefficients of
/// up to 876 / h (DFG 3D-1Z, 31 840 tetrahedra; typical 5 / h), and the Newton iteration stalled
/// at |R| 5e-4 with the multigrid.  1e-3 widened only the worst fit there and the stall was
/// slower but remained; 1e-2 cured that mesh but left coefficients of 72 / h on a wall cell of
/// another ordinary Gmsh mesh (a Box size field, 28 849 tetrahedra), where the Jacobian had a
/// near-null mode (smallest singular value 4.5e-10) and even the LU's Newton stalled at 8e-7; at
/// 1e-1 it converges in 14 steps (results/tet-diagnosis.md section 9).  A wall cell of regular
/// tetrahedra has 16/27; no cell of the shipped cases' meshes is below 1e-1 (their fits are
/// unchanged).
inline constexpr double kWellConditionedFit = 1e-1;

template <typename T>
bool lsq_coefficients(int dim, const Vec3<T> &xc, const std::vector<Vec3<T>> &p, std::size_t n_data,
                      std::vector<Vec3<T>> &c) {
  T m[3][3] = {{T(0), T(0), T(0)}, {T(0), T(0), T(0)}, {T(0), T(0), T(0)}};
  for (const auto &pj : p) {
    const Vec3<T> d = pj - xc;
    const T w = T(1) / dot(d, d);
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) m[i][j] += w * d[i] * d[j];
  }
  T inv[3][3] = {{T(0), T(0), T(0)}, {T(0), T(0), T(0)}, {T(0), T(0), T(0)}};
  if (dim == 2) {
    const T det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    const double mean = real_value(m[0][0] + m[1][1]) / 2;
    if (!(std::abs(real_value(det)) > 1e-8 * mean * mean)) return false;
    inv[0][0] = m[1][1] / det, inv[0][1] = -m[0][1] / det, inv[1][0] = -m[1][0] / det,
    inv[1][1] = m[0][0] / det;
  } else {
    const T c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1],
            c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2],
            c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    const T det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
    const double mean = real_value(m[0][0] + m[1][1] + m[2][2]) / 3;
    if (!(std::abs(real_value(det)) > 1e-10 * mean * mean * mean)) return false;
    inv[0][0] = c00 / det, inv[1][0] = c01 / det, inv[2][0] = c02 / det;
    inv[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
    inv[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
    inv[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
    inv[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
    inv[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
    inv[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
  }
  c.assign(n_data, Vec3<T>());
  for (std::size_t j = 0; j < n_data; ++j) {
    const Vec3<T> d = p[j] - xc;
    const T w = T(1) / dot(d, d);
    for (int i = 0; i < 3; ++i)
      c[j][i] = w * (inv[i][0] * d[0] + inv[i][1] * d[1] + inv[i][2] * d[2]);
  }
  return true;
}

/// Reverse of lsq_coefficients: given cbar (n_data vectors) accumulates xc_bar and p_bar (all
/// points).
void lsq_coefficients_reverse(int dim, const Vec3<double> &xc, const std::vector<Vec3<double>> &p,
                              std::size_t n_data, const std::vector<Vec3<double>> &cbar,
                              Vec3<double> &xc_bar, std::vector<Vec3<double>> &p_bar);

class LeastSquaresGradient {
public:
  /// `prescribed[set][f]` tells whether boundary face f carries data for that set; unknown k uses
  /// set `set_of_var[k]`.
  PetscErrorCode build(const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                       const std::vector<std::vector<char>> &prescribed,
                       const std::vector<int> &set_of_var);

  /// The coefficient set of unknown k.
  int set_of(int k) const { return set_of_[k]; }
  std::size_t n_sets() const { return coef_.size(); }

  /// Neighbour cells of cell c (owned or layer 1): entries [ptr[c], ptr[c+1]).
  const std::vector<PetscInt> &neighbour_ptr() const { return nptr_; }
  const std::vector<PetscInt> &neighbours() const { return nbr_; }
  /// Coefficient of neighbour entry e for a set; of the cell itself: self(set, c).
  const Vec3<double> &coefficient(int set, PetscInt entry) const { return coef_[set][entry]; }
  const Vec3<double> &self(int set, PetscInt c) const { return self_[set][c]; }
  /// Prescribed boundary faces of cell c for a set: entries [bptr[c], bptr[c+1]).
  const std::vector<PetscInt> &boundary_ptr(int set) const { return bptr_[set]; }
  const std::vector<PetscInt> &boundary_faces(int set) const { return bface_[set]; }
  const Vec3<double> &boundary_coefficient(int set, PetscInt entry) const {
    return bcoef_[set][entry];
  }

  /// G[c][k][:] for every owned and layer-1 cell c and unknown k = 0..nv-1 (unknown k in its set
  /// set_of(k)).  w: nv values per local cell;
  /// boundary_value(k, f): the prescribed value of unknown k on boundary face f.
  template <typename BoundaryValue>
  void apply(const mesh::Mesh &mesh, int nv, const double *w, BoundaryValue &&boundary_value,
             double *G) const {
    for (PetscInt c = 0; c < mesh.n_cells; ++c) {
      if (mesh.cell_layer[c] > 1) continue;
      for (int k = 0; k < nv; ++k) {
        const int set = set_of_[k];
        double g[3] = {0, 0, 0};
        const double wc = w[c * nv + k];
        for (PetscInt e = nptr_[c]; e < nptr_[c + 1]; ++e) {
          const double diff = w[nbr_[e] * nv + k] - wc;
          for (int i = 0; i < 3; ++i) g[i] += coef_[set][e][i] * diff;
        }
        for (PetscInt e = bptr_[set][c]; e < bptr_[set][c + 1]; ++e) {
          const double diff = boundary_value(k, bface_[set][e]) - wc;
          for (int i = 0; i < 3; ++i) g[i] += bcoef_[set][e][i] * diff;
        }
        for (int i = 0; i < 3; ++i) G[(c * nv + k) * 3 + i] = g[i];
      }
    }
  }

  /// Adjoints of the coefficients (the entries of coefficient() and boundary_coefficient(), per
  /// set), which reverse() can accumulate over many calls instead of chaining them to the
  /// centroids each time: that chain is linear and depends on the geometry only, so a sweep over
  /// many time levels chains the sum once (reverse_coefficients).
  struct CoefficientBar {
    std::vector<std::vector<Vec3<double>>> neighbour, boundary; ///< per set
    std::vector<std::vector<char>> touched; ///< per set and local cell: some entry is not zero
  };
  /// cb sized for this operator, zero.
  void zero_coefficient_bar(CoefficientBar *cb) const;
  /// gbar (cell and face centroids) += the chain of cb's coefficient adjoints; cb is zeroed.
  void reverse_coefficients(const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                            CoefficientBar &cb, geometry::GeometryBar *gbar) const;

  /// Reverse of apply(): given Gbar (nv x 3 per local cell, owned and layer 1) adds
  ///   wbar (nv per local cell): the dependence of G on the cell values,
  ///   gbar (cell and face centroids): the dependence of the coefficients on the geometry, or
  ///     with `deferred` the coefficients' adjoints to *deferred (reverse_coefficients chains
  ///     them to gbar later),
  ///   boundary_bar(k, f, value): the dependence on prescribed boundary values.
  template <typename BoundaryValue, typename BoundaryBar>
  void reverse(const mesh::Mesh &mesh, const geometry::Geometry<double> &g, int nv, const double *w,
               BoundaryValue &&boundary_value, const double *Gbar, double *wbar,
               geometry::GeometryBar *gbar, BoundaryBar &&boundary_bar,
               CoefficientBar *deferred = nullptr) const {
    std::vector<Vec3<double>> cbar;
    for (PetscInt c = 0; c < mesh.n_cells; ++c) {
      if (mesh.cell_layer[c] > 1) continue;
      for (int set = 0; set < static_cast<int>(coef_.size()); ++set) {
        const PetscInt nb = nptr_[c + 1] - nptr_[c], nd = bptr_[set][c + 1] - bptr_[set][c];
        cbar.assign(nb + nd, Vec3<double>());
        bool any = false;
        for (int k = 0; k < nv; ++k) {
          if (set_of_[k] != set) continue;
          const double *gb = &Gbar[(c * nv + k) * 3];
          if (gb[0] == 0 && gb[1] == 0 && gb[2] == 0) continue;
          any = true;
          const Vec3<double> gv(gb[0], gb[1], gb[2]);
          const double wc = w[c * nv + k];
          double self_sum = 0;
          for (PetscInt e = 0; e < nb; ++e) {
            const PetscInt j = nbr_[nptr_[c] + e];
            cbar[e] += (w[j * nv + k] - wc) * gv;
            const double a = dot(gv, coef_[set][nptr_[c] + e]);
            if (wbar) wbar[j * nv + k] += a;
            self_sum += a;
          }
          for (PetscInt e = 0; e < nd; ++e) {
            const PetscInt idx = bptr_[set][c] + e, f = bface_[set][idx];
            cbar[nb + e] += (boundary_value(k, f) - wc) * gv;
            const double a = dot(gv, bcoef_[set][idx]);
            boundary_bar(k, f, a);
            self_sum += a;
          }
          if (wbar) wbar[c * nv + k] -= self_sum;
        }
        if (!any) continue;
        if (deferred) {
          for (PetscInt e = 0; e < nb; ++e) deferred->neighbour[set][nptr_[c] + e] += cbar[e];
          for (PetscInt e = 0; e < nd; ++e)
            deferred->boundary[set][bptr_[set][c] + e] += cbar[nb + e];
          deferred->touched[set][c] = 1;
        } else if (gbar) {
          chain_coefficients(mesh, g, c, set, cbar, gbar);
        }
      }
    }
  }

private:
  /// gbar += the chain of cell c's coefficient adjoints cbar (neighbours, then prescribed
  /// boundary faces) of one set to the centroids (lsq_coefficients_reverse)
  void chain_coefficients(const mesh::Mesh &mesh, const geometry::Geometry<double> &g, PetscInt c,
                          int set, const std::vector<Vec3<double>> &cbar,
                          geometry::GeometryBar *gbar) const;

  // per set:
  std::vector<std::vector<PetscInt>> fptr_,
      ffit_; ///< boundary faces in the fit only (zero-gradient fallback)
  std::vector<std::vector<Vec3<double>>> coef_, self_, bcoef_;
  std::vector<std::vector<PetscInt>> bptr_, bface_;
  std::vector<PetscInt> nptr_, nbr_;
  std::vector<int> set_of_; ///< per unknown
};

} // namespace karman::discretization
