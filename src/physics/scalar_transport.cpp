// Derivatives and reverse mode of the scalar transport kernels (see
// include/karman/physics/scalar_transport.hpp).
#include "karman/physics/scalar_transport.hpp"

#include <cmath>

namespace karman::physics {
namespace {

using V = Vec3<double>;

V gradient_of(const CellState<double> &c, int s) {
  return V(c.g[s][0], c.g[s][1], c.g[s][2]);
}

// The diffusive difference D = alpha delta + gk . k with alpha = S.S / d.S, k = S - alpha d.
double diffusion(const V &S, const V &d, double delta, const V &gk) {
  const double alpha = dot(S, S) / dot(d, S);
  return alpha * delta + dot(gk, S - alpha * d);
}

// Its reverse for D's adjoint Dbar: delta's and gk's adjoints (set), S's and d's (added).
void diffusion_reverse(const V &S, const V &d, double delta, const V &gk, double Dbar,
                       double *delta_bar, V *gk_bar, V *S_bar, V *d_bar) {
  const double ds = dot(d, S), alpha = dot(S, S) / ds;
  const V kv = S - alpha * d;
  *delta_bar = Dbar * alpha;
  *gk_bar = Dbar * kv;
  const V kv_bar = Dbar * gk;
  const double alpha_bar = Dbar * delta - dot(kv_bar, d);
  *S_bar += kv_bar + (alpha_bar / ds) * (2.0 * S - alpha * d);
  *d_bar += (-alpha) * kv_bar - (alpha_bar * alpha / ds) * S;
}

void add_gradient(CellState<double> &c, int s, const V &v) {
  for (int i = 0; i < 3; ++i) c.g[s][i] += v[i];
}

} // namespace

ScalarFluxDerivatives scalar_interior_flux_dw(int s, const CellState<double> &L,
                                              const CellState<double> &R,
                                              const FaceGeometry<double> &g,
                                              const FluxParameters<double> &fp, double kappa,
                                              double F, int order) {
  const double rc = order > 1 ? 1.0 : 0.0; // the reconstruction's weight
  const V rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  const double fl = L.w[s] + rc * dot(gradient_of(L, s), rL);
  const double fr = R.w[s] + rc * dot(gradient_of(R, s), rR);
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const V kv = g.S - alpha * d;
  const double e = fp.eps * fp.u_ref * norm(g.S);
  const double sq = std::sqrt(F * F + e * e), a = fp.upwind * sq;
  const double bl = 0.5 * (F + a), br = 0.5 * (F - a), rho = fp.rho;
  ScalarFluxDerivatives D;
  D.wL = rho * (bl + kappa * alpha);
  D.wR = rho * (br - kappa * alpha);
  for (int c = 0; c < 3; ++c) {
    D.gL[c] = rho * (bl * rc * rL[c] - 0.5 * kappa * kv[c]);
    D.gR[c] = rho * (br * rc * rR[c] - 0.5 * kappa * kv[c]);
  }
  const double da = fp.upwind * F / sq; // da/dF
  D.F = rho * (0.5 * (1 + da) * fl + 0.5 * (1 - da) * fr);
  D.kappa =
      -rho * diffusion(g.S, d, R.w[s] - L.w[s], 0.5 * (gradient_of(L, s) + gradient_of(R, s)));
  return D;
}

ScalarFluxDerivatives scalar_value_flux_dw(int s, const CellState<double> &L,
                                           const FaceGeometry<double> &g,
                                           const FluxParameters<double> &fp, double kappa, double F,
                                           double phi_b, int order) {
  const double rc = order > 1 ? 1.0 : 0.0;
  const V d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const V kv = g.S - alpha * d;
  const double fl = L.w[s] + rc * dot(gradient_of(L, s), d);
  const double e = fp.eps * fp.u_ref * norm(g.S), sq = std::sqrt(F * F + e * e);
  const double a = fp.upwind * (sq - e), da = fp.upwind * F / sq;
  ScalarFluxDerivatives D;
  D.wL = fp.rho * (0.5 * (F + a) + kappa * alpha);
  for (int c = 0; c < 3; ++c) D.gL[c] = fp.rho * (0.5 * (F + a) * rc * d[c] - kappa * kv[c]);
  D.F = fp.rho * (0.5 * (1 + da) * fl + 0.5 * (1 - da) * phi_b);
  D.boundary = fp.rho * (0.5 * (F - a) - kappa * alpha);
  D.kappa = -fp.rho * diffusion(g.S, d, phi_b - L.w[s], gradient_of(L, s));
  return D;
}

ScalarFluxDerivatives scalar_gradient_flux_dw(int s, const CellState<double> &L,
                                              const FaceGeometry<double> &g,
                                              const FluxParameters<double> &fp, double F,
                                              double flux, int order) {
  (void)flux;
  const double rc = order > 1 ? 1.0 : 0.0;
  const V d = g.xf - g.xL;
  ScalarFluxDerivatives D;
  D.wL = fp.rho * F;
  for (int c = 0; c < 3; ++c) D.gL[c] = fp.rho * F * rc * d[c];
  D.F = fp.rho * (L.w[s] + rc * dot(gradient_of(L, s), d));
  D.boundary = -fp.rho * norm(g.S);
  return D;
}

void scalar_interior_flux_reverse(int s, const CellState<double> &L, const CellState<double> &R,
                                  const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                  double kappa, double F, double lambda, FluxBar &bar,
                                  ScalarFluxBar &sbar, int order) {
  const double rc = order > 1 ? 1.0 : 0.0;
  const V rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  const V GL = gradient_of(L, s), GR = gradient_of(R, s);
  const double fl = L.w[s] + rc * dot(GL, rL), fr = R.w[s] + rc * dot(GR, rR);
  const double A = norm(g.S), e = fp.eps * fp.u_ref * A;
  const double sq = std::sqrt(F * F + e * e), a = fp.upwind * sq;
  const double rl = fp.rho * lambda;
  // the reconstructions phi_L^f, phi_R^f
  const double fl_bar = rl * 0.5 * (F + a), fr_bar = rl * 0.5 * (F - a);
  bar.L.w[s] += fl_bar;
  bar.R.w[s] += fr_bar;
  if (order > 1) {
    add_gradient(bar.L, s, fl_bar * rL);
    add_gradient(bar.R, s, fr_bar * rR);
    bar.xf += fl_bar * GL + fr_bar * GR;
    bar.xL -= fl_bar * GL;
    bar.xR -= fr_bar * GR;
  }
  // the upwinding: a = b sqrt(F^2 + e^2), e = eps U_ref |S|
  const double a_bar = rl * 0.5 * (fl - fr);
  sbar.F += rl * 0.5 * (fl + fr) + a_bar * fp.upwind * F / sq;
  const double e_bar = a_bar * fp.upwind * e / sq;
  bar.S += (e_bar * fp.eps * fp.u_ref / A) * g.S;
  // the diffusion
  const V gk = 0.5 * (GL + GR);
  const double D = diffusion(g.S, d, R.w[s] - L.w[s], gk);
  sbar.kappa -= rl * D;
  double delta_bar;
  V gk_bar, d_bar;
  diffusion_reverse(g.S, d, R.w[s] - L.w[s], gk, -rl * kappa, &delta_bar, &gk_bar, &bar.S, &d_bar);
  bar.R.w[s] += delta_bar;
  bar.L.w[s] -= delta_bar;
  add_gradient(bar.L, s, 0.5 * gk_bar);
  add_gradient(bar.R, s, 0.5 * gk_bar);
  bar.xR += d_bar;
  bar.xL -= d_bar;
}

void scalar_wall_gradient_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                                  double phi_b, double lambda, FluxBar &bar, ScalarFluxBar &sbar) {
  const V d = g.xf - g.xL;
  double delta_bar;
  V gk_bar, d_bar;
  diffusion_reverse(g.S, d, phi_b - L.w[s], gradient_of(L, s), lambda, &delta_bar, &gk_bar, &bar.S,
                    &d_bar);
  sbar.boundary += delta_bar;
  bar.L.w[s] -= delta_bar;
  add_gradient(bar.L, s, gk_bar);
  bar.xf += d_bar;
  bar.xL -= d_bar;
}

void scalar_value_flux_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                               const FluxParameters<double> &fp, double kappa, double F,
                               double phi_b, double lambda, FluxBar &bar, ScalarFluxBar &sbar,
                               int order) {
  const double rl = fp.rho * lambda, rc = order > 1 ? 1.0 : 0.0;
  const V d = g.xf - g.xL, G = gradient_of(L, s);
  const double fl = L.w[s] + rc * dot(G, d);
  const double A = norm(g.S), e = fp.eps * fp.u_ref * A, sq = std::sqrt(F * F + e * e);
  const double a = fp.upwind * (sq - e);
  // the upwinded convection (F + a)/2 phi_L^f + (F - a)/2 phi_b
  const double fl_bar = rl * 0.5 * (F + a);
  bar.L.w[s] += fl_bar;
  if (order > 1) {
    add_gradient(bar.L, s, fl_bar * d);
    bar.xf += fl_bar * G;
    bar.xL -= fl_bar * G;
  }
  sbar.boundary += rl * 0.5 * (F - a);
  const double a_bar = rl * 0.5 * (fl - phi_b);
  sbar.F += rl * 0.5 * (fl + phi_b) + a_bar * fp.upwind * F / sq;
  const double e_bar = a_bar * fp.upwind * (e / sq - 1);
  bar.S += (e_bar * fp.eps * fp.u_ref / A) * g.S;
  // the diffusion
  sbar.kappa -= rl * scalar_wall_gradient(s, L, g, phi_b);
  scalar_wall_gradient_reverse(s, L, g, phi_b, -rl * kappa, bar, sbar);
}

void scalar_gradient_flux_reverse(int s, const CellState<double> &L, const FaceGeometry<double> &g,
                                  const FluxParameters<double> &fp, double F, double flux,
                                  double lambda, FluxBar &bar, ScalarFluxBar &sbar, int order) {
  const V d = g.xf - g.xL, G = gradient_of(L, s);
  const double rl = fp.rho * lambda, A = norm(g.S), rc = order > 1 ? 1.0 : 0.0;
  const double fl_bar = rl * F;
  sbar.F += rl * (L.w[s] + rc * dot(G, d));
  bar.L.w[s] += fl_bar;
  if (order > 1) {
    add_gradient(bar.L, s, fl_bar * d);
    bar.xf += fl_bar * G;
    bar.xL -= fl_bar * G;
  }
  sbar.boundary -= rl * A;
  bar.S -= (rl * flux / A) * g.S;
}

} // namespace karman::physics
