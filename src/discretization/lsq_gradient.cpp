// Least-squares gradient coefficients (see include/karman/discretization/lsq_gradient.hpp).
#include "karman/discretization/lsq_gradient.hpp"

#include <cmath>

namespace karman::discretization {
namespace {

// Inverse of the symmetric dim x dim matrix m (stored 3x3); returns false if singular
// relative to its scale.
bool invert(int dim, const double m[3][3], double inv[3][3]) {
  if (dim == 2) {
    const double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    const double scale = m[0][0] * m[1][1];
    if (!(std::abs(det) > 1e-8 * std::abs(scale)) || scale == 0) return false;
    inv[0][0] = m[1][1] / det, inv[0][1] = -m[0][1] / det, inv[1][0] = -m[1][0] / det,
    inv[1][1] = m[0][0] / det;
    inv[0][2] = inv[1][2] = inv[2][0] = inv[2][1] = inv[2][2] = 0;
    return true;
  }
  const double c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1],
               c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2],
               c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
  const double det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
  const double scale = m[0][0] * m[1][1] * m[2][2];
  if (!(std::abs(det) > 1e-10 * std::abs(scale)) || scale == 0) return false;
  inv[0][0] = c00 / det;
  inv[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
  inv[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
  inv[1][0] = c01 / det;
  inv[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
  inv[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
  inv[2][0] = c02 / det;
  inv[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
  inv[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
  return true;
}

void add_outer(double m[3][3], const Vec3<double> &d, double w) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] += w * d[i] * d[j];
}

Vec3<double> times(const double m[3][3], const Vec3<double> &v) {
  return Vec3<double>(m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
                      m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
                      m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]);
}

} // namespace

PetscErrorCode LeastSquaresGradient::build(const mesh::Mesh &mesh,
                                           const geometry::Geometry<double> &g,
                                           const std::vector<char> prescribed[2]) {
  PetscFunctionBeginUser;
  const PetscInt nc = mesh.n_cells;
  nptr_.assign(nc + 1, 0);
  nbr_.clear();
  for (int s = 0; s < 2; ++s) {
    coef_[s].clear(), bcoef_[s].clear(), bface_[s].clear();
    self_[s].assign(nc, Vec3<double>());
    bptr_[s].assign(nc + 1, 0);
  }
  for (PetscInt c = 0; c < nc; ++c) {
    if (mesh.cell_layer[c] <= 1) {
      const Vec3<double> &xc = g.cell_centroid[c];
      std::vector<PetscInt> boundary;
      const std::size_t first = nbr_.size();
      for (PetscInt i = mesh.cell_face_ptr[c]; i < mesh.cell_face_ptr[c + 1]; ++i) {
        const PetscInt f = mesh.cell_face[i];
        const PetscInt o = mesh.face_left[f] == c ? mesh.face_right[f] : mesh.face_left[f];
        if (o >= 0)
          nbr_.push_back(o);
        else
          boundary.push_back(f);
      }
      for (int s = 0; s < 2; ++s) {
        // normal matrix from neighbours and prescribed faces; fall back to all faces
        for (int pass = 0; pass < 2; ++pass) {
          double m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, inv[3][3];
          for (std::size_t e = first; e < nbr_.size(); ++e) {
            const Vec3<double> d = g.cell_centroid[nbr_[e]] - xc;
            add_outer(m, d, 1.0 / dot(d, d));
          }
          for (PetscInt f : boundary)
            if (prescribed[s][f] || pass == 1) {
              const Vec3<double> d = g.face_centroid[f] - xc;
              add_outer(m, d, 1.0 / dot(d, d));
            }
          const bool ok = invert(mesh.dim, m, inv);
          if (!ok && pass == 0) continue;
          PetscCheck(
              ok, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
              "%s: cell %d at (%g, %g, %g) has too few neighbours for a least-squares gradient",
              mesh.source.c_str(), (int)mesh.cell_gid[c], xc[0], xc[1], xc[2]);
          Vec3<double> self;
          for (std::size_t e = first; e < nbr_.size(); ++e) {
            const Vec3<double> d = g.cell_centroid[nbr_[e]] - xc;
            coef_[s].push_back(times(inv, (1.0 / dot(d, d)) * d));
            self -= coef_[s].back();
          }
          for (PetscInt f : boundary)
            if (prescribed[s][f]) {
              const Vec3<double> d = g.face_centroid[f] - xc;
              bcoef_[s].push_back(times(inv, (1.0 / dot(d, d)) * d));
              bface_[s].push_back(f);
              self -= bcoef_[s].back();
            }
          self_[s][c] = self;
          break;
        }
      }
    }
    nptr_[c + 1] = static_cast<PetscInt>(nbr_.size());
    for (int s = 0; s < 2; ++s) bptr_[s][c + 1] = static_cast<PetscInt>(bface_[s].size());
  }
  PetscFunctionReturn(0);
}

} // namespace karman::discretization
