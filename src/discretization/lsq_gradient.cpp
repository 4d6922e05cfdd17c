// Least-squares gradient coefficients (see include/karman/discretization/lsq_gradient.hpp).
#include "karman/discretization/lsq_gradient.hpp"

#include <algorithm>
#include <cmath>

namespace karman::discretization {

namespace {

/// The inverse-distance-weighted normal matrix M = sum_j w_j d_j d_j^T of the fit, d_j = p_j - xc.
void normal_matrix(int dim, const Vec3<double> &xc, const std::vector<Vec3<double>> &p,
                   double m[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = 0;
  for (const auto &pj : p) {
    const Vec3<double> d = pj - xc;
    const double w = 1.0 / dot(d, d);
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) m[i][j] += w * d[i] * d[j];
  }
}

} // namespace

double lsq_fit_conditioning(int dim, const Vec3<double> &xc, const std::vector<Vec3<double>> &p) {
  double m[3][3];
  normal_matrix(dim, xc, p, m);
  if (dim == 2) {
    const double mean = (m[0][0] + m[1][1]) / 2;
    return std::abs(m[0][0] * m[1][1] - m[0][1] * m[1][0]) / (mean * mean);
  }
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  const double mean = (m[0][0] + m[1][1] + m[2][2]) / 3;
  return std::abs(det) / (mean * mean * mean);
}

void lsq_coefficients_reverse(int dim, const Vec3<double> &xc, const std::vector<Vec3<double>> &p,
                              std::size_t n_data, const std::vector<Vec3<double>> &cbar,
                              Vec3<double> &xc_bar, std::vector<Vec3<double>> &p_bar) {
  // replay: M and its inverse
  std::vector<Vec3<double>> c;
  lsq_coefficients(dim, xc, p, n_data, c);
  double m[3][3];
  normal_matrix(dim, xc, p, m);
  // z_j = M^{-1} cbar_j = (c computed with the same inverse applied to cbar_j): solve with the
  // coefficients' machinery by treating cbar_j as a direction: M^{-1} v
  auto solve = [&](const Vec3<double> &v) {
    Vec3<double> z;
    if (dim == 2) {
      const double det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
      z[0] = (m[1][1] * v[0] - m[0][1] * v[1]) / det;
      z[1] = (-m[1][0] * v[0] + m[0][0] * v[1]) / det;
      return z;
    }
    const double c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1],
                 c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2],
                 c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    const double det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
    const double inv[3][3] = {{c00 / det, (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det,
                               (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det},
                              {c01 / det, (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det,
                               (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det},
                              {c02 / det, (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det,
                               (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det}};
    for (int i = 0; i < 3; ++i) z[i] = inv[i][0] * v[0] + inv[i][1] * v[1] + inv[i][2] * v[2];
    return z;
  };
  double Mbar[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  std::vector<Vec3<double>> dbar(p.size());
  std::vector<double> wbar(p.size(), 0.0);
  for (std::size_t j = 0; j < n_data; ++j) {
    const Vec3<double> z = solve(cbar[j]);
    const Vec3<double> d = p[j] - xc;
    const double w = 1.0 / dot(d, d);
    // c_j = M^{-1} beta_j, beta_j = w_j d_j:  betabar = z, Mbar -= z c_j^T
    for (int i = 0; i < dim; ++i)
      for (int k = 0; k < dim; ++k) Mbar[i][k] -= z[i] * c[j][k];
    wbar[j] += dot(z, d);
    dbar[j] += w * z;
  }
  for (std::size_t k = 0; k < p.size(); ++k) {
    const Vec3<double> d = p[k] - xc;
    const double w = 1.0 / dot(d, d);
    // M = sum w d d^T
    Vec3<double> Md;
    double dMd = 0;
    for (int i = 0; i < dim; ++i)
      for (int l = 0; l < dim; ++l) {
        Md[i] += (Mbar[i][l] + Mbar[l][i]) * d[l];
        dMd += d[i] * Mbar[i][l] * d[l];
      }
    dbar[k] += w * Md;
    wbar[k] += dMd;
    // w = 1 / d.d
    dbar[k] += (-2.0 * w * w * wbar[k]) * d;
    p_bar[k] += dbar[k];
    xc_bar -= dbar[k];
  }
}

void LeastSquaresGradient::chain_coefficients(const mesh::Mesh &mesh,
                                              const geometry::Geometry<double> &g, PetscInt c,
                                              int set, const std::vector<Vec3<double>> &cbar,
                                              geometry::GeometryBar *gbar) const {
  const PetscInt nb = nptr_[c + 1] - nptr_[c], nd = bptr_[set][c + 1] - bptr_[set][c];
  const PetscInt nf = fptr_[set][c + 1] - fptr_[set][c];
  std::vector<Vec3<double>> points;
  points.reserve(nb + nd + nf);
  for (PetscInt e = 0; e < nb; ++e) points.push_back(g.cell_centroid[nbr_[nptr_[c] + e]]);
  for (PetscInt e = 0; e < nd; ++e)
    points.push_back(g.face_centroid[bface_[set][bptr_[set][c] + e]]);
  for (PetscInt e = 0; e < nf; ++e)
    points.push_back(g.face_centroid[ffit_[set][fptr_[set][c] + e]]);
  std::vector<Vec3<double>> pbar(points.size(), Vec3<double>());
  Vec3<double> xcb;
  lsq_coefficients_reverse(mesh.dim, g.cell_centroid[c], points, nb + nd, cbar, xcb, pbar);
  gbar->cell_centroid[c] += xcb;
  for (PetscInt e = 0; e < nb; ++e) gbar->cell_centroid[nbr_[nptr_[c] + e]] += pbar[e];
  for (PetscInt e = 0; e < nd; ++e)
    gbar->face_centroid[bface_[set][bptr_[set][c] + e]] += pbar[nb + e];
  for (PetscInt e = 0; e < nf; ++e)
    gbar->face_centroid[ffit_[set][fptr_[set][c] + e]] += pbar[nb + nd + e];
}

void LeastSquaresGradient::zero_coefficient_bar(CoefficientBar *cb) const {
  const std::size_t n = coef_.size();
  cb->neighbour.resize(n), cb->boundary.resize(n), cb->touched.resize(n);
  for (std::size_t set = 0; set < n; ++set) {
    cb->neighbour[set].assign(coef_[set].size(), Vec3<double>());
    cb->boundary[set].assign(bcoef_[set].size(), Vec3<double>());
    cb->touched[set].assign(nptr_.empty() ? 0 : nptr_.size() - 1, 0);
  }
}

void LeastSquaresGradient::reverse_coefficients(const mesh::Mesh &mesh,
                                                const geometry::Geometry<double> &g,
                                                CoefficientBar &cb,
                                                geometry::GeometryBar *gbar) const {
  std::vector<Vec3<double>> cbar;
  for (int set = 0; set < static_cast<int>(cb.touched.size()); ++set)
    for (PetscInt c = 0; c < static_cast<PetscInt>(cb.touched[set].size()); ++c) {
      if (!cb.touched[set][c]) continue;
      const PetscInt nb = nptr_[c + 1] - nptr_[c], nd = bptr_[set][c + 1] - bptr_[set][c];
      cbar.assign(cb.neighbour[set].begin() + nptr_[c], cb.neighbour[set].begin() + nptr_[c + 1]);
      cbar.insert(cbar.end(), cb.boundary[set].begin() + bptr_[set][c],
                  cb.boundary[set].begin() + bptr_[set][c + 1]);
      chain_coefficients(mesh, g, c, set, cbar, gbar);
      std::fill_n(cb.neighbour[set].begin() + nptr_[c], nb, Vec3<double>());
      std::fill_n(cb.boundary[set].begin() + bptr_[set][c], nd, Vec3<double>());
      cb.touched[set][c] = 0;
    }
}

PetscErrorCode LeastSquaresGradient::build(const mesh::Mesh &mesh,
                                           const geometry::Geometry<double> &g,
                                           const std::vector<std::vector<char>> &prescribed,
                                           const std::vector<int> &set_of_var) {
  PetscFunctionBeginUser;
  const PetscInt nc = mesh.n_cells;
  const int n_sets = static_cast<int>(prescribed.size());
  set_of_ = set_of_var;
  nptr_.assign(nc + 1, 0);
  nbr_.clear();
  for (auto *v : {&coef_, &bcoef_, &self_}) v->resize(n_sets);
  for (auto *v : {&bface_, &ffit_, &bptr_, &fptr_}) v->resize(n_sets);
  for (int s = 0; s < n_sets; ++s) {
    coef_[s].clear(), bcoef_[s].clear(), bface_[s].clear(), ffit_[s].clear();
    self_[s].assign(nc, Vec3<double>());
    bptr_[s].assign(nc + 1, 0);
    fptr_[s].assign(nc + 1, 0);
  }
  std::vector<Vec3<double>> points, coef;
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
      for (int s = 0; s < n_sets; ++s) {
        // neighbours and prescribed faces; if they do not span all directions (singular), or
        // hardly (conditioning below kWellConditionedFit), the other boundary faces join the fit
        // with zero difference (the second pass only adds to M: it is better conditioned)
        std::vector<PetscInt> data_faces, fit_faces;
        for (PetscInt f : boundary) (prescribed[s][f] ? data_faces : fit_faces).push_back(f);
        bool ok = false;
        for (int pass = 0; pass < 2 && !ok; ++pass) {
          points.clear();
          for (std::size_t e = first; e < nbr_.size(); ++e)
            points.push_back(g.cell_centroid[nbr_[e]]);
          for (PetscInt f : data_faces) points.push_back(g.face_centroid[f]);
          const std::size_t n_data = points.size();
          if (pass == 1)
            for (PetscInt f : fit_faces) points.push_back(g.face_centroid[f]);
          ok = lsq_coefficients(mesh.dim, xc, points, n_data, coef);
          if (ok && pass == 0 && !fit_faces.empty() &&
              lsq_fit_conditioning(mesh.dim, xc, points) < kWellConditionedFit)
            ok = false;
          if (ok && pass == 1) ffit_[s].insert(ffit_[s].end(), fit_faces.begin(), fit_faces.end());
        }
        PetscCheck(
            ok, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
            "%s: cell %d at (%g, %g, %g) has too few neighbours for a least-squares gradient",
            mesh.source.c_str(), (int)mesh.cell_gid[c], xc[0], xc[1], xc[2]);
        Vec3<double> self;
        std::size_t j = 0;
        for (std::size_t e = first; e < nbr_.size(); ++e, ++j)
          coef_[s].push_back(coef[j]), self -= coef[j];
        for (PetscInt f : data_faces)
          bcoef_[s].push_back(coef[j]), bface_[s].push_back(f), self -= coef[j++];
        self_[s][c] = self;
      }
    }
    nptr_[c + 1] = static_cast<PetscInt>(nbr_.size());
    for (int s = 0; s < n_sets; ++s) {
      bptr_[s][c + 1] = static_cast<PetscInt>(bface_[s].size());
      fptr_[s][c + 1] = static_cast<PetscInt>(ffit_[s].size());
    }
  }
  PetscFunctionReturn(0);
}

} // namespace karman::discretization
