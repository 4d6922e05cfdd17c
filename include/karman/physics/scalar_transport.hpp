// A passive scalar phi (a temperature in forced convection, a concentration) carried by the
// flow: the face fluxes and the cell source of
//   rho [ d(phi)/dt + div(u phi) - div(kappa grad phi) ] = rho (q - k phi)
// on the flow's finite volumes, with their exact derivatives and reverse mode.
//
// Face flux (leaving L), F the flow's volume flux through the face (the continuity row's flux,
// Rhie-Chow stabilized: flux_kernels.hpp), so that the scalar is carried by the same discretely
// divergence-free field:
//   interior   M = rho [ (F + a)/2 phi_L^f + (F - a)/2 phi_R^f - kappa D_f ],
//              a = b sqrt(F^2 + (eps U_ref A)^2)   (the flow's smooth upwinding),
//              D_f = alpha (phi_R - phi_L) + (G_L + G_R)/2 . k   (grad phi . S, over-relaxed)
//   value      M = rho [ (F + a_b)/2 phi_L^f + (F - a_b)/2 phi_b - kappa D_f ],
//              a_b = b (sqrt(F^2 + (eps U_ref A)^2) - eps U_ref A),
//              D_f = alpha (phi_b - phi_L) + G_L . k
//              (prescribed phi_b: an inlet temperature, a heated wall; upwinded, so that an
//              outflow face carries the cell's value out and phi_b acts through diffusion only
//              -- a value on the outflow part of a far field does not force a boundary layer --
//              and a_b = 0 at F = 0: a wall's flux is its diffusive flux alone)
//   gradient   M = rho [ F phi_L^f - g A ]       (prescribed diffusive flux g = kappa dphi/dn
//              into the fluid per unit area: a wall heat flux q_w / (rho c_p); g = 0 is an
//              adiabatic wall, or the outflow condition on a pressure outlet)
// with phi_X^f = phi_X + G_X . (x_f - x_X) (`order` 2, the default; `order` 1: phi_X^f = phi_X,
// first-order upwind convection, as the TMR reference runs of the Spalart-Allmaras variable; the
// diffusion keeps its non-orthogonal correction), d = x_R - x_L (x_f - x_L on the boundary),
// alpha = S.S / d.S, k = S - alpha d as in the momentum equations' viscous flux.
// Cell source (volume V):  Q = rho V (k phi - q)   (R_c = sum_f sigma M_f + Q_c).
//
// Each kernel is templated on the scalar type (complex step in tests/unit/test_scalar_transport);
// the *_dw functions give the exact partial derivatives, the *_reverse ones the adjoints of
// every input for a weight lambda (accumulated, +=).
#pragma once

#include "karman/physics/flux_kernels.hpp"

namespace karman::physics {

/// The derivatives of a scalar face flux M: to the cells' values and gradients of phi (R unused
/// on the boundary), to the flow's volume flux F, to the boundary value phi_b or flux g, and to
/// kappa.
struct ScalarFluxDerivatives {
  double wL = 0, wR = 0, gL[3] = {0, 0, 0}, gR[3] = {0, 0, 0};
  double F = 0, boundary = 0, kappa = 0;
};

/// Adjoints of a scalar face flux's inputs (accumulated): phi's values and gradients go to the
/// cell states of `bar` (unknown s), the geometry to bar.S, xf, xL, xR; the scalars here.
struct ScalarFluxBar {
  double F = 0, boundary = 0, kappa = 0;
};

template <typename T>
T scalar_interior_flux(int s, const CellState<T> &L, const CellState<T> &R,
                       const FaceGeometry<T> &g, const FluxParameters<T> &fp, const T &kappa,
                       const T &F, int order = 2) {
  const Vec3<T> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  T fl = L.w[s], fr = R.w[s];
  if (order > 1) {
    fl += dot(Vec3<T>(L.g[s][0], L.g[s][1], L.g[s][2]), rL);
    fr += dot(Vec3<T>(R.g[s][0], R.g[s][1], R.g[s][2]), rR);
  }
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<T> kv = g.S - alpha * d;
  T diff = alpha * (R.w[s] - L.w[s]);
  for (int c = 0; c < 3; ++c) diff += T(0.5) * (L.g[s][c] + R.g[s][c]) * kv[c];
  const T e = fp.eps * fp.u_ref * norm(g.S);
  const T a = fp.upwind * sqrt_of(F * F + e * e);
  return fp.rho * (T(0.5) * (F + a) * fl + T(0.5) * (F - a) * fr - kappa * diff);
}

template <typename T>
T scalar_value_flux(int s, const CellState<T> &L, const FaceGeometry<T> &g,
                    const FluxParameters<T> &fp, const T &kappa, const T &F, const T &phi_b,
                    int order = 2) {
  const Vec3<T> d = g.xf - g.xL;
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<T> kv = g.S - alpha * d;
  T diff = alpha * (phi_b - L.w[s]);
  for (int c = 0; c < 3; ++c) diff += L.g[s][c] * kv[c];
  T fl = L.w[s];
  if (order > 1) fl += dot(Vec3<T>(L.g[s][0], L.g[s][1], L.g[s][2]), d);
  const T e = fp.eps * fp.u_ref * norm(g.S);
  const T a = fp.upwind * (sqrt_of(F * F + e * e) - e);
  return fp.rho * (T(0.5) * (F + a) * fl + T(0.5) * (F - a) * phi_b - kappa * diff);
}

/// grad(phi) . S on a face with prescribed phi_b (the D_f of scalar_value_flux): the wall heat
/// flux of a Nusselt number.
template <typename T>
T scalar_wall_gradient(int s, const CellState<T> &L, const FaceGeometry<T> &g, const T &phi_b) {
  const Vec3<T> d = g.xf - g.xL;
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<T> kv = g.S - alpha * d;
  T diff = alpha * (phi_b - L.w[s]);
  for (int c = 0; c < 3; ++c) diff += L.g[s][c] * kv[c];
  return diff;
}

template <typename T>
T scalar_gradient_flux(int s, const CellState<T> &L, const FaceGeometry<T> &g,
                       const FluxParameters<T> &fp, const T &F, const T &flux, int order = 2) {
  const Vec3<T> d = g.xf - g.xL;
  T fl = L.w[s];
  if (order > 1) fl += dot(Vec3<T>(L.g[s][0], L.g[s][1], L.g[s][2]), d);
  return fp.rho * (F * fl - flux * norm(g.S));
}

template <typename T>
T scalar_source(int s, const CellState<T> &c, const T &volume, const T &rho, const T &decay,
                const T &q) {
  return rho * volume * (decay * c.w[s] - q);
}

ScalarFluxDerivatives scalar_interior_flux_dw(int s, const CellState<double> &L,
                                              const CellState<double> &R,
                                              const FaceGeometry<double> &g,
                                              const FluxParameters<double> &fp, double kappa,
                                              double F, int order = 2);
ScalarFluxDerivatives scalar_value_flux_dw(int s, const CellState<double> &L,
                                           const FaceGeometry<double> &g,
                                           const FluxParameters<double> &fp, double kappa, double F,
                                           double phi_b, int order = 2);
ScalarFluxDerivatives scalar_gradient_flux_dw(int s, const CellState<double> &L,
                                              const FaceGeometry<double> &g,
                                              const FluxParameters<double> &fp, double F,
                                              double flux, int order = 2);

void scalar_interior_flux_reverse(int s, const CellState<double> &L, const CellState<double> &R,
                                  const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                  double kappa, double F, double lambda, FluxBar &bar,
                                  ScalarFluxBar &sbar, int order = 2);
void scalar_value_flux_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                               const FluxParameters<double> &fp, double kappa, double F,
                               double phi_b, double lambda, FluxBar &bar, ScalarFluxBar &sbar,
                               int order = 2);
/// Reverse of scalar_wall_gradient (sbar.boundary: phi_b's adjoint).
void scalar_wall_gradient_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                                  double phi_b, double lambda, FluxBar &bar, ScalarFluxBar &sbar);
void scalar_gradient_flux_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                                  const FluxParameters<double> &fp, double F, double flux,
                                  double lambda, FluxBar &bar, ScalarFluxBar &sbar, int order = 2);

} // namespace karman::physics
