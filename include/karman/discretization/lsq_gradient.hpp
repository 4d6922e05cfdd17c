// Least-squares cell gradients (weighted by 1/|d|^2), linear in the cell values:
//   G_c = sum_j c_cj (phi_j - phi_c) + sum_b c_cb (phi_b - phi_c),
//   c_cj = M_c^{-1} w_cj d_cj,   M_c = sum_j w_cj d_cj d_cj^T + sum_b w_cb d_cb d_cb^T,
// over the face neighbours j (d_cj = x_j - x_c) and the boundary faces b of the cell
// where the variable is prescribed (d_cb = x_b - x_c, phi_b the boundary value).  The
// fit is exact for linear fields.  Two coefficient sets: one for the pressure (data on
// pressure outlets) and one for the velocity components (data on walls, inlets, jets).
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

enum GradientSet { kPressureSet = 0, kVelocitySet = 1 };

class LeastSquaresGradient {
public:
  /// `prescribed[set][f]` tells whether boundary face f carries data for that set.
  PetscErrorCode build(const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                       const std::vector<char> prescribed[2]);

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

  /// G[c][k][:] for every owned and layer-1 cell c and unknown k = 0..nv-1 (k = 0 uses the
  /// pressure set, the others the velocity set).  w: nv values per local cell;
  /// boundary_value(k, f): the prescribed value of unknown k on boundary face f.
  template <typename BoundaryValue>
  void apply(const mesh::Mesh &mesh, int nv, const double *w, BoundaryValue &&boundary_value,
             double *G) const {
    for (PetscInt c = 0; c < mesh.n_cells; ++c) {
      if (mesh.cell_layer[c] > 1) continue;
      for (int k = 0; k < nv; ++k) {
        const int set = k == 0 ? kPressureSet : kVelocitySet;
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

private:
  std::vector<PetscInt> nptr_, nbr_;
  std::vector<Vec3<double>> coef_[2], self_[2], bcoef_[2];
  std::vector<PetscInt> bptr_[2], bface_[2];
};

} // namespace karman::discretization
