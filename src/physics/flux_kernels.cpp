// Hand-derived derivatives of the face fluxes (formulas: include/karman/physics/flux_kernels.hpp).
// Notation: fl[k] = w_L[k] + G_L[k] . r_L (reconstructed value), dfl[k]/dw_L[k] = 1,
// dfl[k]/dG_L[k][c] = r_L[c]; the same on the right.  Every routine is checked against
// complex step in tests/unit/test_flux_kernels.cpp.
#include "karman/physics/flux_kernels.hpp"

#include <cmath>
#include <cstring>

namespace karman::physics {

void FluxJacobian::clear() {
  std::memset(this, 0, sizeof(*this));
}

void interior_flux_dw(int dim, const CellState<double> &L, const CellState<double> &R,
                      const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                      FluxJacobian &J) {
  J.clear();
  const int nv = dim + 1;
  const Vec3<double> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  double fl[kMaxVars], fr[kMaxVars];
  for (int k = 0; k < nv; ++k) {
    fl[k] = L.w[k] + L.g[k][0] * rL[0] + L.g[k][1] * rL[1] + L.g[k][2] * rL[2];
    fr[k] = R.w[k] + R.g[k][0] * rR[0] + R.g[k][1] * rR[1] + R.g[k][2] * rR[2];
  }
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<double> kv = g.S - alpha * d;
  const double D = stabilization_coefficient(norm(d), fp);
  double delta = R.w[0] - L.w[0];
  for (int c = 0; c < 3; ++c) delta -= 0.5 * (L.g[0][c] + R.g[0][c]) * d[c];
  double F = -D * alpha * delta;
  for (int m = 1; m < nv; ++m) F += 0.5 * (fl[m] + fr[m]) * g.S[m - 1];
  const double e = fp.eps * fp.u_ref * norm(g.S);
  const double a = std::sqrt(F * F + e * e);
  const double bl = 0.5 * (F + a), br = 0.5 * (F - a);
  const double mu = fp.rho * fp.nu;

  // dF/d(inputs)
  double FwL[kMaxVars] = {}, FwR[kMaxVars] = {}, FgL[kMaxVars][3] = {}, FgR[kMaxVars][3] = {};
  FwL[0] = D * alpha;
  FwR[0] = -D * alpha;
  for (int c = 0; c < 3; ++c) FgL[0][c] = FgR[0][c] = 0.5 * D * alpha * d[c];
  for (int m = 1; m < nv; ++m) {
    FwL[m] = FwR[m] = 0.5 * g.S[m - 1];
    for (int c = 0; c < 3; ++c) {
      FgL[m][c] = 0.5 * g.S[m - 1] * rL[c];
      FgR[m][c] = 0.5 * g.S[m - 1] * rR[c];
    }
  }
  for (int j = 0; j < nv; ++j) {
    J.dwL[0][j] = FwL[j];
    J.dwR[0][j] = FwR[j];
    for (int c = 0; c < 3; ++c) J.dgL[0][j][c] = FgL[j][c], J.dgR[0][j][c] = FgR[j][c];
  }
  for (int m = 1; m < nv; ++m) {
    // convection: rho (bl fl[m] + br fr[m]), dbl/dF = (1 + F/a)/2, dbr/dF = (1 - F/a)/2
    const double cF = fp.rho * (0.5 * (1 + F / a) * fl[m] + 0.5 * (1 - F / a) * fr[m]);
    for (int j = 0; j < nv; ++j) {
      J.dwL[m][j] += cF * FwL[j];
      J.dwR[m][j] += cF * FwR[j];
      for (int c = 0; c < 3; ++c)
        J.dgL[m][j][c] += cF * FgL[j][c], J.dgR[m][j][c] += cF * FgR[j][c];
    }
    J.dwL[m][m] += fp.rho * bl;
    J.dwR[m][m] += fp.rho * br;
    for (int c = 0; c < 3; ++c) {
      J.dgL[m][m][c] += fp.rho * bl * rL[c];
      J.dgR[m][m][c] += fp.rho * br * rR[c];
    }
    // viscous: - mu [alpha (u_R - u_L) + (G_L + G_R)/2 . k]
    J.dwL[m][m] += mu * alpha;
    J.dwR[m][m] -= mu * alpha;
    for (int c = 0; c < 3; ++c) {
      J.dgL[m][m][c] -= 0.5 * mu * kv[c];
      J.dgR[m][m][c] -= 0.5 * mu * kv[c];
    }
    // pressure: p_f S, p_f = (fl[0] + fr[0]) / 2
    J.dwL[m][0] += 0.5 * g.S[m - 1];
    J.dwR[m][0] += 0.5 * g.S[m - 1];
    for (int c = 0; c < 3; ++c) {
      J.dgL[m][0][c] += 0.5 * g.S[m - 1] * rL[c];
      J.dgR[m][0][c] += 0.5 * g.S[m - 1] * rR[c];
    }
  }
}

void velocity_dirichlet_flux_dw(int dim, const CellState<double> &, const FaceGeometry<double> &g,
                                const FluxParameters<double> &fp, const Vec3<double> &,
                                FluxJacobian &J) {
  J.clear();
  const int nv = dim + 1;
  const Vec3<double> d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<double> kv = g.S - alpha * d;
  const double mu = fp.rho * fp.nu;
  for (int m = 1; m < nv; ++m) {
    J.dwL[m][m] = mu * alpha;
    J.dwL[m][0] = g.S[m - 1];
    for (int c = 0; c < 3; ++c) {
      J.dgL[m][m][c] = -mu * kv[c];
      J.dgL[m][0][c] = d[c] * g.S[m - 1];
    }
  }
}

void pressure_outlet_flux_dw(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                             const FluxParameters<double> &fp, double pb, FluxJacobian &J) {
  J.clear();
  const int nv = dim + 1;
  const Vec3<double> d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const double D = stabilization_coefficient(norm(d), fp);
  double uf[kMaxVars] = {};
  double delta = pb - L.w[0];
  for (int c = 0; c < 3; ++c) delta -= L.g[0][c] * d[c];
  double F = -D * alpha * delta;
  for (int m = 1; m < nv; ++m) {
    uf[m] = L.w[m] + L.g[m][0] * d[0] + L.g[m][1] * d[1] + L.g[m][2] * d[2];
    F += uf[m] * g.S[m - 1];
  }
  double Fw[kMaxVars] = {}, Fg[kMaxVars][3] = {};
  Fw[0] = D * alpha;
  for (int c = 0; c < 3; ++c) Fg[0][c] = D * alpha * d[c];
  for (int m = 1; m < nv; ++m) {
    Fw[m] = g.S[m - 1];
    for (int c = 0; c < 3; ++c) Fg[m][c] = g.S[m - 1] * d[c];
  }
  for (int j = 0; j < nv; ++j) {
    J.dwL[0][j] = Fw[j];
    for (int c = 0; c < 3; ++c) J.dgL[0][j][c] = Fg[j][c];
  }
  for (int m = 1; m < nv; ++m) {
    for (int j = 0; j < nv; ++j) {
      J.dwL[m][j] = fp.rho * uf[m] * Fw[j];
      for (int c = 0; c < 3; ++c) J.dgL[m][j][c] = fp.rho * uf[m] * Fg[j][c];
    }
    J.dwL[m][m] += fp.rho * F;
    for (int c = 0; c < 3; ++c) J.dgL[m][m][c] += fp.rho * F * d[c];
  }
}

void slip_flux_dw(int dim, const CellState<double> &, const FaceGeometry<double> &g,
                  const FluxParameters<double> &fp, FluxJacobian &J) {
  J.clear();
  const int nv = dim + 1;
  const Vec3<double> d = g.xf - g.xL;
  const double A2 = dot(g.S, g.S);
  const double alpha = A2 / dot(d, g.S);
  const double mu = fp.rho * fp.nu;
  for (int m = 1; m < nv; ++m) {
    for (int j = 1; j < nv; ++j) J.dwL[m][j] = mu * alpha * g.S[j - 1] * g.S[m - 1] / A2;
    J.dwL[m][0] = g.S[m - 1];
    for (int c = 0; c < 3; ++c) J.dgL[m][0][c] = d[c] * g.S[m - 1];
  }
}

} // namespace karman::physics
