// Hand-derived derivatives of the face fluxes (formulas: include/karman/physics/flux_kernels.hpp).
// Notation: fl[k] = w_L[k] + G_L[k] . r_L (reconstructed value), dfl[k]/dw_L[k] = 1,
// dfl[k]/dG_L[k][c] = r_L[c]; the same on the right.  Every routine is checked against
// complex step in tests/unit/test_flux_kernels.cpp.
#include "karman/physics/flux_kernels.hpp"

#include <cmath>
#include <cstring>

namespace karman::physics {

namespace {

/// d/dF of unknown m's convected momentum over rho (a = sqrt(F^2 + e^2), b the upwind fraction,
/// cl and cr its convected face values): bl cl + br cr with bl, br = (F +- b a)/2, or, with the
/// dissipation along the centroids, F (cl + cr)/2 - b a/2 centroid_jump (the header).
double convection_dF(const FluxParameters<double> &fp, double F, double a, double cl, double cr,
                     const CellState<double> &L, const CellState<double> &R, int m,
                     const Vec3<double> &d) {
  const double b = fp.upwind;
  if (fp.centroid_dissipation) return 0.5 * (cl + cr) - 0.5 * b * F / a * centroid_jump(L, R, m, d);
  return 0.5 * (1 + b * F / a) * cl + 0.5 * (1 - b * F / a) * cr;
}

} // namespace

void FluxJacobian::clear(int nv) {
  for (int eq = 0; eq < nv; ++eq) {
    std::memset(dwL[eq], 0, nv * sizeof(double));
    std::memset(dwR[eq], 0, nv * sizeof(double));
    std::memset(dgL[eq], 0, 3 * nv * sizeof(double));
    std::memset(dgR[eq], 0, 3 * nv * sizeof(double));
  }
}

void interior_flux_dw(int dim, const CellState<double> &L, const CellState<double> &R,
                      const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                      FluxJacobian &J) {
  const int nv = dim + 1;
  J.clear(nv);
  const Vec3<double> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  double fl[kMaxVars], fr[kMaxVars];
  for (int k = 0; k < nv; ++k) {
    fl[k] = L.w[k] + L.g[k][0] * rL[0] + L.g[k][1] * rL[1] + L.g[k][2] * rL[2];
    fr[k] = R.w[k] + R.g[k][0] * rR[0] + R.g[k][1] * rR[1] + R.g[k][2] * rR[2];
  }
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<double> kv = g.S - alpha * d;
  const double D = stabilization_coefficient(norm(d), fp);
  double F = -D * alpha * centroid_jump(L, R, 0, d);
  for (int m = 1; m < nv; ++m) F += 0.5 * (fl[m] + fr[m]) * g.S[m - 1];
  const double e = fp.eps * fp.u_ref * norm(g.S);
  const double a = std::sqrt(F * F + e * e), b = fp.upwind;
  const double bl = 0.5 * (F + b * a), br = 0.5 * (F - b * a);
  const double mu = fp.rho * fp.nu;
  // the convected values cl = L.w + (1 - beta) G_L . rL + beta sL (R.w - L.w), cr likewise
  const double beta = fp.blend, sL = along(rL, d), sR = -along(rR, d);

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
    // convection: rho (bl cl + br cr), dbl/dF = (1 + b F/a)/2, dbr/dF = (1 - b F/a)/2
    const double cl = convected_value(fl[m], L.w[m], R.w[m], sL, beta);
    const double cr = convected_value(fr[m], R.w[m], L.w[m], sR, beta);
    // the weights of cl and cr, and d/dF of the convection term (with the dissipation along
    // the centroids: rho [F (cl + cr)/2 - b a/2 jump])
    const double wl = fp.centroid_dissipation ? 0.5 * F : bl;
    const double wr = fp.centroid_dissipation ? 0.5 * F : br;
    const double cF = fp.rho * convection_dF(fp, F, a, cl, cr, L, R, m, d);
    for (int j = 0; j < nv; ++j) {
      J.dwL[m][j] += cF * FwL[j];
      J.dwR[m][j] += cF * FwR[j];
      for (int c = 0; c < 3; ++c)
        J.dgL[m][j][c] += cF * FgL[j][c], J.dgR[m][j][c] += cF * FgR[j][c];
    }
    J.dwL[m][m] += fp.rho * (wl * (1 - beta * sL) + wr * beta * sR);
    J.dwR[m][m] += fp.rho * (wr * (1 - beta * sR) + wl * beta * sL);
    for (int c = 0; c < 3; ++c) {
      J.dgL[m][m][c] += fp.rho * wl * (1 - beta) * rL[c];
      J.dgR[m][m][c] += fp.rho * wr * (1 - beta) * rR[c];
    }
    if (fp.centroid_dissipation) { // - rho b a/2 jump
      const double kj = -0.5 * fp.rho * b * a;
      J.dwR[m][m] += kj;
      J.dwL[m][m] -= kj;
      for (int c = 0; c < 3; ++c) {
        J.dgL[m][m][c] -= 0.5 * kj * d[c];
        J.dgR[m][m][c] -= 0.5 * kj * d[c];
      }
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
  const int nv = dim + 1;
  J.clear(nv);
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
  const int nv = dim + 1;
  J.clear(nv);
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
  const int nv = dim + 1;
  J.clear(nv);
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

// ------------------------------------------------------------------------------ reverse mode
// Notation: xb = adjoint of x.  Each routine replays the forward formulas and then runs
// them backwards; the derivations are in src/adjoint/README.md (eq. 8).
namespace karman::physics {
namespace {

void add_grad(CellState<double> &s, int k, const Vec3<double> &v) {
  for (int c = 0; c < 3; ++c) s.g[k][c] += v[c];
}

// alpha = S.S / d.S  ->  Sbar, dbar
void alpha_reverse(const Vec3<double> &S, const Vec3<double> &d, double alpha_bar, Vec3<double> &Sb,
                   Vec3<double> &db) {
  const double A2 = dot(S, S), q = dot(d, S);
  Sb += alpha_bar * ((2.0 / q) * S - (A2 / (q * q)) * d);
  db += (-alpha_bar * A2 / (q * q)) * S;
}

// D = c / B, B = rho (U / h + nu / h^2), h = |d|  ->  nubar, dbar
void stabilization_reverse(const Vec3<double> &d, const FluxParameters<double> &fp, double D_bar,
                           FluxBar &bar, Vec3<double> &db) {
  const double h = norm(d);
  const double B = fp.rho * (fp.u_ref / h + fp.nu / (h * h));
  const double D = fp.c_stab / B;
  const double B_bar = -D_bar * D / B;
  bar.nu += B_bar * fp.rho / (h * h);
  const double h_bar = B_bar * fp.rho * (-fp.u_ref / (h * h) - 2 * fp.nu / (h * h * h));
  db += (h_bar / h) * d;
}

} // namespace

void interior_flux_reverse(int dim, const CellState<double> &L, const CellState<double> &R,
                           const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                           const double *lambda, FluxBar &bar) {
  const int nv = dim + 1;
  const Vec3<double> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  double fl[kMaxVars], fr[kMaxVars];
  for (int k = 0; k < nv; ++k)
    fl[k] = L.w[k] + dot(grad_vec(L, k), rL), fr[k] = R.w[k] + dot(grad_vec(R, k), rR);
  const double A2 = dot(g.S, g.S), q = dot(d, g.S), alpha = A2 / q;
  const Vec3<double> kv = g.S - alpha * d;
  const double D = stabilization_coefficient(norm(d), fp);
  const double delta = R.w[0] - L.w[0] - 0.5 * dot(grad_vec(L, 0) + grad_vec(R, 0), d);
  double F = -D * alpha * delta;
  for (int m = 1; m < nv; ++m) F += 0.5 * (fl[m] + fr[m]) * g.S[m - 1];
  const double e = fp.eps * fp.u_ref * std::sqrt(A2);
  const double a = std::sqrt(F * F + e * e), b = fp.upwind;
  const double bl = 0.5 * (F + b * a), br = 0.5 * (F - b * a);
  const double pf = 0.5 * (fl[0] + fr[0]);
  const double mu = fp.rho * fp.nu;
  const double beta = fp.blend, sL = along(rL, d), sR = -along(rR, d);

  double flb[kMaxVars] = {}, frb[kMaxVars] = {};
  double Fb = lambda[0], alphab = 0, pfb = 0, blb = 0, brb = 0, sLb = 0, sRb = 0;
  double ab_centroids = 0; // (the dissipation along the centroids: its a's adjoint)
  Vec3<double> kvb, db, rLb, rRb;
  for (int m = 1; m < nv; ++m) {
    const double lm = lambda[m];
    // pressure p_f S
    pfb += lm * g.S[m - 1];
    bar.S[m - 1] += lm * pf;
    // viscous - mu [alpha (u_R - u_L) + (G_L + G_R)/2 . k]
    const Vec3<double> gsum = grad_vec(L, m) + grad_vec(R, m);
    const double visc = alpha * (R.w[m] - L.w[m]) + 0.5 * dot(gsum, kv);
    bar.nu -= lm * fp.rho * visc;
    alphab -= lm * mu * (R.w[m] - L.w[m]);
    bar.R.w[m] -= lm * mu * alpha;
    bar.L.w[m] += lm * mu * alpha;
    add_grad(bar.L, m, (-0.5 * lm * mu) * kv);
    add_grad(bar.R, m, (-0.5 * lm * mu) * kv);
    kvb += (-0.5 * lm * mu) * gsum;
    // convection rho (bl cl + br cr), cl = (1 - beta) fl + beta (L.w + sL (R.w - L.w)), cr
    // likewise
    const double cl = convected_value(fl[m], L.w[m], R.w[m], sL, beta);
    const double cr = convected_value(fr[m], R.w[m], L.w[m], sR, beta);
    double clb, crb;
    if (fp.centroid_dissipation) { // rho [F (cl + cr)/2 - b a/2 jump]
      Fb += 0.5 * fp.rho * lm * (cl + cr);
      ab_centroids -= 0.5 * b * fp.rho * lm * centroid_jump(L, R, m, d);
      clb = crb = 0.5 * fp.rho * lm * F;
      const double jb = -0.5 * b * a * fp.rho * lm;
      bar.R.w[m] += jb;
      bar.L.w[m] -= jb;
      add_grad(bar.L, m, (-0.5 * jb) * d);
      add_grad(bar.R, m, (-0.5 * jb) * d);
      db += (-0.5 * jb) * (grad_vec(L, m) + grad_vec(R, m));
    } else {
      blb += fp.rho * lm * cl;
      brb += fp.rho * lm * cr;
      clb = fp.rho * lm * bl, crb = fp.rho * lm * br;
    }
    flb[m] += (1 - beta) * clb;
    frb[m] += (1 - beta) * crb;
    bar.L.w[m] += beta * ((1 - sL) * clb + sR * crb);
    bar.R.w[m] += beta * ((1 - sR) * crb + sL * clb);
    sLb += beta * (R.w[m] - L.w[m]) * clb;
    sRb += beta * (L.w[m] - R.w[m]) * crb;
  }
  // sL = rL . d / d.d, sR = -rR . d / d.d: dsL/dd = (rL - 2 sL d) / d.d, dsR/dd = (-rR - 2 sR d) /
  // d.d
  const double dd = dot(d, d);
  rLb += (sLb / dd) * d;
  rRb += (-sRb / dd) * d;
  db += (sLb / dd) * (rL - (2 * sL) * d) + (sRb / dd) * (-rR - (2 * sR) * d);
  // bl, br -> F, a -> F, e
  Fb += 0.5 * (blb + brb);
  const double ab = 0.5 * b * (blb - brb) + ab_centroids;
  Fb += ab * F / a;
  const double eb = ab * e / a;
  bar.S += (eb * fp.eps * fp.u_ref / std::sqrt(A2)) * g.S;
  // p_f
  flb[0] += 0.5 * pfb;
  frb[0] += 0.5 * pfb;
  // F = -D alpha delta + sum (fl + fr)/2 S
  const double Db = -Fb * alpha * delta;
  alphab += -Fb * D * delta;
  const double deltab = -Fb * D * alpha;
  for (int m = 1; m < nv; ++m) {
    flb[m] += 0.5 * Fb * g.S[m - 1];
    frb[m] += 0.5 * Fb * g.S[m - 1];
    bar.S[m - 1] += 0.5 * Fb * (fl[m] + fr[m]);
  }
  // delta = p_R - p_L - (G_L^p + G_R^p)/2 . d
  bar.R.w[0] += deltab;
  bar.L.w[0] -= deltab;
  add_grad(bar.L, 0, (-0.5 * deltab) * d);
  add_grad(bar.R, 0, (-0.5 * deltab) * d);
  db += (-0.5 * deltab) * (grad_vec(L, 0) + grad_vec(R, 0));
  stabilization_reverse(d, fp, Db, bar, db);
  // k = S - alpha d, alpha
  bar.S += kvb;
  alphab -= dot(kvb, d);
  db += (-alpha) * kvb;
  alpha_reverse(g.S, d, alphab, bar.S, db);
  // reconstruction
  for (int k = 0; k < nv; ++k) {
    bar.L.w[k] += flb[k];
    bar.R.w[k] += frb[k];
    add_grad(bar.L, k, flb[k] * rL);
    add_grad(bar.R, k, frb[k] * rR);
    rLb += flb[k] * grad_vec(L, k);
    rRb += frb[k] * grad_vec(R, k);
  }
  bar.xf += rLb + rRb;
  bar.xL -= rLb;
  bar.xR -= rRb;
  bar.xR += db;
  bar.xL -= db;
}

void dirichlet_face_stress_reverse(int dim, const CellState<double> &L,
                                   const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                   const Vec3<double> &ub, double pf_bar,
                                   const Vec3<double> &visc_bar, FluxBar &bar) {
  const Vec3<double> d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<double> kv = g.S - alpha * d;
  const double mu = fp.rho * fp.nu;
  Vec3<double> db, kvb;
  double alphab = 0;
  bar.L.w[0] += pf_bar;
  add_grad(bar.L, 0, pf_bar * d);
  db += pf_bar * grad_vec(L, 0);
  for (int m = 1; m <= dim; ++m) {
    const double s = alpha * (ub[m - 1] - L.w[m]) + dot(grad_vec(L, m), kv);
    bar.nu += fp.rho * visc_bar[m - 1] * s;
    const double sb = mu * visc_bar[m - 1];
    alphab += sb * (ub[m - 1] - L.w[m]);
    bar.ub[m - 1] += sb * alpha;
    bar.L.w[m] -= sb * alpha;
    add_grad(bar.L, m, sb * kv);
    kvb += sb * grad_vec(L, m);
  }
  bar.S += kvb;
  alphab -= dot(kvb, d);
  db += (-alpha) * kvb;
  alpha_reverse(g.S, d, alphab, bar.S, db);
  bar.xf += db;
  bar.xL -= db;
}

void velocity_dirichlet_flux_reverse(int dim, const CellState<double> &L,
                                     const FaceGeometry<double> &g,
                                     const FluxParameters<double> &fp, const Vec3<double> &ub,
                                     const double *lambda, FluxBar &bar) {
  double pf;
  Vec3<double> visc;
  dirichlet_face_stress(dim, L, g, fp, ub, pf, visc);
  const double F = dot(ub, g.S);
  double Fb = lambda[0], pfb = 0;
  Vec3<double> viscb;
  for (int m = 1; m <= dim; ++m) {
    Fb += lambda[m] * fp.rho * ub[m - 1];
    bar.ub[m - 1] += lambda[m] * fp.rho * F;
    viscb[m - 1] = -lambda[m];
    pfb += lambda[m] * g.S[m - 1];
    bar.S[m - 1] += lambda[m] * pf;
  }
  bar.ub += Fb * g.S;
  bar.S += Fb * ub;
  dirichlet_face_stress_reverse(dim, L, g, fp, ub, pfb, viscb, bar);
}

void pressure_outlet_flux_reverse(int dim, const CellState<double> &L,
                                  const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                  double pb, const double *lambda, FluxBar &bar) {
  const int nv = dim + 1;
  const Vec3<double> d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const double D = stabilization_coefficient(norm(d), fp);
  double uf[kMaxVars] = {};
  const double delta = pb - L.w[0] - dot(grad_vec(L, 0), d);
  double F = -D * alpha * delta;
  for (int m = 1; m < nv; ++m) {
    uf[m] = L.w[m] + dot(grad_vec(L, m), d);
    F += uf[m] * g.S[m - 1];
  }
  double Fb = lambda[0], ufb[kMaxVars] = {};
  for (int m = 1; m < nv; ++m) {
    Fb += fp.rho * lambda[m] * uf[m];
    ufb[m] += fp.rho * F * lambda[m];
    bar.pb += lambda[m] * g.S[m - 1];
    bar.S[m - 1] += lambda[m] * pb;
  }
  const double Db = -Fb * alpha * delta, alphab = -Fb * D * delta, deltab = -Fb * D * alpha;
  Vec3<double> db;
  for (int m = 1; m < nv; ++m) {
    ufb[m] += Fb * g.S[m - 1];
    bar.S[m - 1] += Fb * uf[m];
  }
  bar.pb += deltab;
  bar.L.w[0] -= deltab;
  add_grad(bar.L, 0, (-deltab) * d);
  db += (-deltab) * grad_vec(L, 0);
  for (int m = 1; m < nv; ++m) {
    bar.L.w[m] += ufb[m];
    add_grad(bar.L, m, ufb[m] * d);
    db += ufb[m] * grad_vec(L, m);
  }
  stabilization_reverse(d, fp, Db, bar, db);
  alpha_reverse(g.S, d, alphab, bar.S, db);
  bar.xf += db;
  bar.xL -= db;
}

void slip_flux_reverse(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                       const FluxParameters<double> &fp, const double *lambda, FluxBar &bar) {
  // M_m = (mu u_n / q + p_f) S_m with u_n = u_L . S, q = d . S (= slip_flux, since alpha / A^2 = 1
  // / q)
  const int nv = dim + 1;
  const Vec3<double> d = g.xf - g.xL;
  const double q = dot(d, g.S), mu = fp.rho * fp.nu;
  double un = 0;
  for (int m = 1; m < nv; ++m) un += L.w[m] * g.S[m - 1];
  const double pf = L.w[0] + dot(grad_vec(L, 0), d);
  const double beta = mu * un / q + pf;
  double betab = 0;
  for (int m = 1; m < nv; ++m) {
    betab += lambda[m] * g.S[m - 1];
    bar.S[m - 1] += lambda[m] * beta;
  }
  bar.nu += betab * fp.rho * un / q;
  const double unb = betab * mu / q, qb = -betab * mu * un / (q * q), pfb = betab;
  for (int m = 1; m < nv; ++m) {
    bar.L.w[m] += unb * g.S[m - 1];
    bar.S[m - 1] += unb * L.w[m];
  }
  Vec3<double> db = qb * g.S;
  bar.S += qb * d;
  bar.L.w[0] += pfb;
  add_grad(bar.L, 0, pfb * d);
  db += pfb * grad_vec(L, 0);
  bar.xf += db;
  bar.xL -= db;
}

// --------------------------------------------------------------- variable viscosity

namespace {

/// dD/dnu of the stabilization coefficient D = c / (rho (U/|d| + nu/|d|^2)).
double stabilization_dnu(double dist, const FluxParameters<double> &fp) {
  const double D = stabilization_coefficient(dist, fp);
  return -D * D * fp.rho / (fp.c_stab * dist * dist);
}

} // namespace

void interior_flux_dnu(int dim, const CellState<double> &L, const CellState<double> &R,
                       const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                       double *dM) {
  const int nv = dim + 1;
  double M[kMaxVars];
  interior_flux(dim, L, R, g, fp, M);
  const double F = M[0];
  const Vec3<double> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<double> kv = g.S - alpha * d;
  const double dF = -stabilization_dnu(norm(d), fp) * alpha * centroid_jump(L, R, 0, d);
  const double e = fp.eps * fp.u_ref * norm(g.S);
  const double a = std::sqrt(F * F + e * e);
  const double beta = fp.blend, sL = along(rL, d), sR = -along(rR, d);
  dM[0] = dF;
  for (int m = 1; m < nv; ++m) {
    // the convected values (header)
    const double fl = convected_value(L.w[m] + dot(grad_vec(L, m), rL), L.w[m], R.w[m], sL, beta);
    const double fr = convected_value(R.w[m] + dot(grad_vec(R, m), rR), R.w[m], L.w[m], sR, beta);
    double visc = alpha * (R.w[m] - L.w[m]);
    for (int c = 0; c < 3; ++c) visc += 0.5 * (L.g[m][c] + R.g[m][c]) * kv[c];
    dM[m] = fp.rho * convection_dF(fp, F, a, fl, fr, L, R, m, d) * dF - fp.rho * visc;
  }
}

void velocity_dirichlet_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                                 const FluxParameters<double> &fp, const Vec3<double> &ub,
                                 double *dM) {
  FluxParameters<double> unit = fp; // visc is linear in nu: its value at nu = 1 is d visc/dnu
  unit.nu = 1.0;
  double pf;
  Vec3<double> visc;
  dirichlet_face_stress(dim, L, g, unit, ub, pf, visc);
  dM[0] = 0;
  for (int m = 1; m <= dim; ++m) dM[m] = -visc[m - 1];
}

void pressure_outlet_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                              const FluxParameters<double> &fp, double pb, double *dM) {
  const Vec3<double> d = g.xf - g.xL;
  const double alpha = dot(g.S, g.S) / dot(d, g.S);
  double delta = pb - L.w[0];
  for (int c = 0; c < 3; ++c) delta -= L.g[0][c] * d[c];
  const double dF = -stabilization_dnu(norm(d), fp) * alpha * delta;
  dM[0] = dF;
  for (int m = 1; m <= dim; ++m) {
    double uf = L.w[m];
    for (int c = 0; c < 3; ++c) uf += L.g[m][c] * d[c];
    dM[m] = fp.rho * uf * dF;
  }
}

void slip_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                   const FluxParameters<double> &fp, double *dM) {
  const Vec3<double> d = g.xf - g.xL;
  const double A2 = dot(g.S, g.S), alpha = A2 / dot(d, g.S);
  double un = 0;
  for (int m = 1; m <= dim; ++m) un += L.w[m] * g.S[m - 1];
  dM[0] = 0;
  for (int m = 1; m <= dim; ++m) dM[m] = fp.rho * alpha * un * g.S[m - 1] / A2;
}

void stress_transpose_flux_dw(int dim, const FaceGeometry<double> &g, double mu, FluxJacobian &J) {
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) {
      J.dgL[1 + i][1 + j][i] -= 0.5 * mu * g.S[j];
      J.dgR[1 + i][1 + j][i] -= 0.5 * mu * g.S[j];
    }
}

void stress_transpose_flux_reverse(int dim, const CellState<double> &L, const CellState<double> &R,
                                   const FaceGeometry<double> &g, double mu, const double *lambda,
                                   FluxBar &bar, double *mu_bar) {
  for (int i = 0; i < dim; ++i) {
    const double l = lambda[1 + i];
    double t = 0;
    for (int j = 0; j < dim; ++j) {
      const double gm = 0.5 * (L.g[1 + j][i] + R.g[1 + j][i]);
      t += gm * g.S[j];
      bar.L.g[1 + j][i] -= l * mu * 0.5 * g.S[j];
      bar.R.g[1 + j][i] -= l * mu * 0.5 * g.S[j];
      bar.S[j] -= l * mu * gm;
    }
    *mu_bar -= l * t;
  }
}

} // namespace karman::physics
