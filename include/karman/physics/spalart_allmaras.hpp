// Pointwise kernels of the Spalart-Allmaras turbulence model in its SA-neg form (incompressible,
// no trip term), and their hand-derived derivatives.
//
// Model (TMR "SA" / "SA-neg", written in the variable nt = nu~ >= 0 branch first):
//   d nt/dt + u . grad nt = P - D + 1/sigma [ div((nu + nt f_n) grad nt) + cb2 |grad nt|^2 ]
//   nu_t  = nt f_v1(chi),  chi = nt / nu,  f_v1 = chi^3 / (chi^3 + cv1^3)      (nu_t = 0 for nt <
//   0) nt >= 0:
//     P     = cb1 (1 - f_t2) S~ nt
//     D     = (cw1 f_w - cb1/kappa^2 f_t2) (nt/d)^2
//     f_t2  = ct3 exp(-ct4 chi^2)           (with ft2; SA-noft2: f_t2 = 0)
//     Omega = |curl u| = sqrt(2 W_ij W_ij),  W = (grad u - grad u^T)/2
//     Sbar  = nt f_v2 / (kappa^2 d^2),  f_v2 = 1 - chi / (1 + chi f_v1)
//     S~    = Omega + Sbar                                               if Sbar >= -cv2 Omega
//           = Omega + Omega (cv2^2 Omega + cv3 Sbar) / ((cv3 - 2 cv2) Omega - Sbar)   otherwise
//     r     = min(nt / (S~ kappa^2 d^2), 10)   (r = 10 when S~ <= 0, see below)
//     g     = r + cw2 (r^6 - r),  f_w = g [(1 + cw3^6) / (g^6 + cw3^6)]^(1/6)
//     f_n   = 1
//   nt < 0:
//     P = cb1 (1 - ct3) Omega nt,  D = -cw1 (nt/d)^2,  f_n = (cn1 + chi^3) / (cn1 - chi^3)
// Constants: cb1 0.1355, sigma 2/3, cb2 0.622, kappa 0.41, cw1 = cb1/kappa^2 + (1 + cb2)/sigma,
// cw2 0.3, cw3 2, cv1 7.1, ct3 1.2, ct4 0.5; SA-neg: cn1 16, cv2 0.7, cv3 0.9; r limited to 10.
// Boundary values: nt = 0 on walls, nt = 3 nu in the free stream (TMR).
//
// In a finite-volume cell loop the equation is split as
//   convection:  div(u nt)  (face fluxes; div u = 0)
//   diffusion:   div(sa_diffusion_coefficient grad nt)  (face fluxes)
//   source Q:    sa_source = P - D + cb2/sigma |grad nt|^2  (per unit volume, cell centre)
// and the momentum equations take the effective viscosity nu + nu_t (sa_effective_viscosity);
// on a wall face nt = 0, so the face value is nu there.
//
// Sources, checked against each other:
//  - NASA Turbulence Modeling Resource (TMR), "The Spalart-Allmaras Turbulence Model",
//    https://turbmodels.larc.nasa.gov/spalart.html, read in the public repository
//    TMBWG/turbmodels at commit c3966ddea2280b6e39b8ad1f90001f20b886f266 (spalart.html and its
//    equation images spalart_eqns/, spalart_eqns_addendum/, spalartneg_eqns/): sections SA,
//    SA-neg, SA-noft2, and Note 1 (c) on S~ and r.
//  - S. R. Allmaras, F. T. Johnson, P. R. Spalart, "Modifications and Clarifications for the
//    Implementation of the Spalart-Allmaras Turbulence Model", ICCFD7-1902 (2012): the negative
//    model (P_n, D_n, f_n, cn1 = 16), the S~ modification (cv2 = 0.7, cv3 = 0.9), r_lim = 10
//    (read through the TMR page and a text extract of the paper).
//  - P. R. Spalart, S. R. Allmaras, La Recherche Aerospatiale 1 (1994) 5-21 (via the TMR page,
//    which corrects the journal's typo in cw1).
//  - Cross-check of an implementation: SU2 v8.5, SU2_CFD/include/numerics/turbulent/
//    turb_sources.hpp (SA-neg keeps ct3 in the negative branch with or without f_t2; it also
//    clips S~ at 1e-10, which karman does not need, see S~ = 0 below).
//
// Variants (SAOptions::ft2):
//  - ft2 = true (default): TMR "SA-neg" = TMR "SA" (the standard model, with the laminar
//    suppression term f_t2, ct3 = 1.2) for nt >= 0, continued by the negative model for nt < 0,
//    with S~ by TMR Note 1 (c), which TMR calls standard for SA-neg.  The TMR flat-plate and
//    bump-in-channel verification results (CFL3D and FUN3D, finest grids) and the NACA 0012
//    validation results are labelled "version SA" on their TMR pages (flatplate_sa.html,
//    bump_sa.html, naca0012_val_sa.html), i.e. with f_t2.  CFL3D limits S~ by Note 1 (a)
//    (S~ > 0) instead of (c); FUN3D and TAU ran SA-neg with (c) in the NACA 0012 grid studies
//    (naca0012numerics_val_sa.html).  TMR: SA-neg "should yield essentially identical results"
//    to SA, and SA-noft2 gives essentially the same results for the plate and the bump.
//  - ft2 = false: TMR "SA-noft2" (f_t2 = 0, ct3 = 0) for nt >= 0.  TMR notes that SA-noft2 is
//    not compatible with SA-neg ("SA-neg-noft2 is currently not viable without additional
//    modifications"): the negative branch needs ct3 > 1 for nt = 0 to be a stable solution.
//    Here the negative branch keeps ct3 = 1.2 in both variants (as SU2's SA-neg does), so with
//    ft2 = false the source is continuous but its derivative dQ/dnt jumps by cb1 ct3 Omega at
//    nt = 0 (with ft2 it is continuous: P and D are C^1 there by construction).
//
// Non-smooth points (one-sided derivatives are exact; finite-difference checks must stay
// away from them):
//  - nt = 0: the branch switch (nt >= 0 is the positive branch).  Q is C^1 with ft2, C^0
//    without; nu_t and the diffusion coefficient are C^3.
//  - Sbar = -cv2 Omega: the S~ switch; S~ is C^1 there (value (1 - cv2) Omega, slope 1).
//  - r = 10: the limiter; r is continuous, dr jumps to 0 (r >= 10 counts as limited).
//  - Omega = 0: |curl u| has a cone-shaped kink at curl u = 0; neither TMR nor ICCFD7-1902
//    smooths it, so neither do we.  There the derivative with respect to grad u is taken as 0
//    (a subgradient).  In 2D Omega = |dv/dx - du/dy| is a plain absolute value.
//  - S~ = 0 happens only for Omega = 0 and Sbar <= 0 (with the S~ modification, S~ >= 0.1 Omega
//    > 0 otherwise); there r = 10 as TMR prescribes ("whenever S~ = 0, set r = 10").  The test
//    nt >= 10 S~ kappa^2 d^2 replaces the division, so a tiny S~ never overflows.
// Preconditions (checked by the caller, not here): nu > 0, d > 0.  Every other state, nt of
// either sign included, gives finite values.
//
// Complex step: branches are chosen on real parts (real_value), the values themselves never
// pass through a real part, so a complex-step derivative is that of the active branch.
//
// Velocity gradients are grad_u[i][j] = d u_i / d x_j (rows 1..dim of CellState::g, i.e.
// `state.g + 1`), the gradient of nt is grad_nut[j] = d nt / d x_j; in 2D only i, j < 2 are
// read.  Tests: tests/unit/test_spalart_allmaras.cpp.
#pragma once

#include "karman/core/vec3.hpp"

#include <cmath>

namespace karman::physics {

/// Constants of the SA / SA-neg model (TMR, ICCFD7-1902).
struct SAConstants {
  static constexpr double cb1 = 0.1355;
  static constexpr double sigma = 2.0 / 3.0;
  static constexpr double cb2 = 0.622;
  static constexpr double kappa = 0.41;
  static constexpr double cw1 = cb1 / (kappa * kappa) + (1.0 + cb2) / sigma;
  static constexpr double cw2 = 0.3;
  static constexpr double cw3 = 2.0;
  static constexpr double cv1 = 7.1;
  static constexpr double ct3 = 1.2;
  static constexpr double ct4 = 0.5;
  static constexpr double cn1 = 16.0; ///< SA-neg diffusion
  static constexpr double cv2 = 0.7;  ///< SA-neg S~ modification
  static constexpr double cv3 = 0.9;  ///< SA-neg S~ modification
  static constexpr double r_max = 10.0;
  static constexpr double farfield_ratio = 3.0; ///< free-stream / inflow nt = 3 nu (TMR)
};

/// Model variant: with the laminar suppression term f_t2 (TMR SA / SA-neg, the default) or
/// without (SA-noft2 for nt >= 0).
struct SAOptions {
  bool ft2 = true;
};

/// Value and derivatives of a scalar function f(nt, nu).
struct SAScalarDerivative {
  double value = 0, d_nut = 0, d_nu = 0;
};

/// Value and derivatives of S~(Omega, Sbar).
struct SAModifiedVorticityDerivative {
  double value = 0, d_omega = 0, d_sbar = 0;
};

/// The parts of the source term (values for output and tests) and which branches were taken.
template <typename T> struct SASourceTerms {
  T production = T(0), destruction = T(0), cross_diffusion = T(0);
  T source = T(0);                   ///< production - destruction + cross_diffusion
  T omega = T(0);                    ///< |curl u|
  T s_tilde = T(0);                  ///< S~ (positive branch; Omega for nt < 0)
  T r = T(0), fw = T(0), ft2 = T(0); ///< positive branch only (0 for nt < 0)
  bool negative = false;             ///< nt < 0: the SA-neg branch
  bool s_tilde_modified = false;     ///< Sbar < -cv2 Omega: the ICCFD7 form of S~
  bool r_limited = false;            ///< r = 10 (the limiter, or S~ <= 0)
};

/// Value and derivatives of the source Q(nt, nu, d, grad u, grad nt).
struct SASourceDerivative {
  double value = 0;
  double d_nut = 0, d_nu = 0, d_dist = 0;
  double d_grad_u[3][3] = {};
  double d_grad_nut[3] = {};
};

namespace sa_detail {
template <typename T> T fv1(const T &chi) {
  const T chi3 = chi * chi * chi;
  return chi3 / (chi3 + T(SAConstants::cv1 * SAConstants::cv1 * SAConstants::cv1));
}
} // namespace sa_detail

// ------------------------------------------------------------------------------ vorticity

/// curl u from the velocity gradient (2D: (0, 0, dv/dx - du/dy)).
template <typename T> Vec3<T> vorticity(int dim, const T (*grad_u)[3]) {
  if (dim == 2) return Vec3<T>(T(0), T(0), grad_u[1][0] - grad_u[0][1]);
  return Vec3<T>(grad_u[2][1] - grad_u[1][2], grad_u[0][2] - grad_u[2][0],
                 grad_u[1][0] - grad_u[0][1]);
}

/// Omega = |curl u| (not differentiable at curl u = 0, see above).
template <typename T> T vorticity_magnitude(int dim, const T (*grad_u)[3]) {
  return norm(vorticity(dim, grad_u));
}

/// Omega and dOmega/d grad_u[i][j] (0 at curl u = 0); entries beyond dim are 0.
double vorticity_magnitude_dw(int dim, const double (*grad_u)[3], double (*d_grad_u)[3]);

// -------------------------------------------------------------------- modified vorticity

/// S~(Omega, Sbar) of ICCFD7-1902 / TMR Note 1 (c).
template <typename T> T sa_modified_vorticity(const T &omega, const T &sbar) {
  using C = SAConstants;
  if (!(real_value(sbar) < -C::cv2 * real_value(omega))) return omega + sbar;
  return omega + omega * (T(C::cv2 * C::cv2) * omega + T(C::cv3) * sbar) /
                     (T(C::cv3 - 2 * C::cv2) * omega - sbar);
}

SAModifiedVorticityDerivative sa_modified_vorticity_dw(double omega, double sbar);

// ------------------------------------------------------------------------ eddy viscosity

/// nu_t = nt f_v1(nt/nu) for nt >= 0, 0 for nt < 0.
template <typename T> T sa_eddy_viscosity(const T &nut, const T &nu) {
  if (real_value(nut) < 0) return T(0);
  return nut * sa_detail::fv1(nut / nu);
}

SAScalarDerivative sa_eddy_viscosity_dw(double nut, double nu);

/// nu + nu_t: the viscosity of the momentum equations (nu on a wall face, where nt = 0).
template <typename T> T sa_effective_viscosity(const T &nut, const T &nu) {
  return nu + sa_eddy_viscosity(nut, nu);
}

SAScalarDerivative sa_effective_viscosity_dw(double nut, double nu);

/// (nu + nt f_n(chi)) / sigma: the diffusion coefficient of the nt equation (f_n = 1 for
/// nt >= 0, (cn1 + chi^3)/(cn1 - chi^3) for nt < 0; positive for every nt, since cn1 = 16).
template <typename T> T sa_diffusion_coefficient(const T &nut, const T &nu) {
  using C = SAConstants;
  if (!(real_value(nut) < 0)) return (nu + nut) / T(C::sigma);
  const T chi = nut / nu, chi3 = chi * chi * chi;
  return (nu + nut * (T(C::cn1) + chi3) / (T(C::cn1) - chi3)) / T(C::sigma);
}

SAScalarDerivative sa_diffusion_coefficient_dw(double nut, double nu);

// -------------------------------------------------------------------------------- source

/// The source per unit volume Q = P - D + cb2/sigma |grad nt|^2 and its parts, at wall
/// distance `dist`.
template <typename T>
SASourceTerms<T> sa_source_terms(int dim, const T &nut, const T &nu, const T &dist,
                                 const T (*grad_u)[3], const T *grad_nut, const SAOptions &opt) {
  using C = SAConstants;
  using std::exp;
  using std::pow;
  SASourceTerms<T> s;
  s.omega = vorticity_magnitude(dim, grad_u);
  T g2 = T(0);
  for (int c = 0; c < dim; ++c) g2 += grad_nut[c] * grad_nut[c];
  s.cross_diffusion = T(C::cb2 / C::sigma) * g2;
  const T d2 = dist * dist;
  if (real_value(nut) < 0) {
    s.negative = true;
    s.s_tilde = s.omega;
    s.production = T(C::cb1 * (1 - C::ct3)) * s.omega * nut;
    s.destruction = T(-C::cw1) * nut * nut / d2;
  } else {
    const T chi = nut / nu;
    const T fv1 = sa_detail::fv1(chi);
    const T fv2 = T(1) - chi / (T(1) + chi * fv1);
    s.ft2 = opt.ft2 ? T(C::ct3) * exp(T(-C::ct4) * chi * chi) : T(0);
    const T k2d2 = T(C::kappa * C::kappa) * d2;
    const T sbar = nut * fv2 / k2d2;
    s.s_tilde_modified = real_value(sbar) < -C::cv2 * real_value(s.omega);
    s.s_tilde = sa_modified_vorticity(s.omega, sbar);
    if (!(real_value(s.s_tilde) > 0) ||
        !(real_value(nut) < C::r_max * real_value(s.s_tilde * k2d2))) {
      s.r_limited = true;
      s.r = T(C::r_max);
    } else {
      s.r = nut / (s.s_tilde * k2d2);
    }
    const T r2 = s.r * s.r, r6 = r2 * r2 * r2;
    const T g = s.r + T(C::cw2) * (r6 - s.r);
    const T g3 = g * g * g;
    const double cw3_6 = std::pow(C::cw3, 6);
    s.fw = g * pow((T(1) + T(cw3_6)) / (g3 * g3 + T(cw3_6)), 1.0 / 6.0);
    s.production = T(C::cb1) * (T(1) - s.ft2) * s.s_tilde * nut;
    s.destruction = (T(C::cw1) * s.fw - T(C::cb1 / (C::kappa * C::kappa)) * s.ft2) * nut * nut / d2;
  }
  s.source = s.production - s.destruction + s.cross_diffusion;
  return s;
}

/// Q = P - D + cb2/sigma |grad nt|^2.
template <typename T>
T sa_source(int dim, const T &nut, const T &nu, const T &dist, const T (*grad_u)[3],
            const T *grad_nut, const SAOptions &opt) {
  return sa_source_terms(dim, nut, nu, dist, grad_u, grad_nut, opt).source;
}

/// Q and its exact derivatives with respect to nt, nu, d, grad u and grad nt (the active
/// branch's; see the non-smooth points above).
SASourceDerivative sa_source_dw(int dim, double nut, double nu, double dist,
                                const double (*grad_u)[3], const double *grad_nut,
                                const SAOptions &opt);

} // namespace karman::physics
