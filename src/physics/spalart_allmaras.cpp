// Hand-derived derivatives of the Spalart-Allmaras kernels (formulas and branches:
// include/karman/physics/spalart_allmaras.hpp).  The source is differentiated in reverse
// order (adjoint of each intermediate, Qbar = 1), which gives every partial derivative in
// one sweep.  Derivatives of the building blocks, with chi = nt/nu:
//   f_v1'  = 3 chi^2 cv1^3 / (chi^3 + cv1^3)^2
//   f_v2'  = -(1 - chi^2 f_v1') / (1 + chi f_v1)^2
//   f_t2'  = -2 ct4 chi f_t2
//   f_n'   = 6 cn1 chi^2 / (cn1 - chi^3)^2
//   dS~    = dOmega + dSbar                              (Sbar >= -cv2 Omega), otherwise
//   dS~    = [1 + N/M + Omega (cv2^2 M - (cv3 - 2 cv2) N)/M^2] dOmega
//            + Omega (cv3 M + N)/M^2 dSbar,  N = cv2^2 Omega + cv3 Sbar,
//            M = (cv3 - 2 cv2) Omega - Sbar
//   g'(r)  = 1 + cw2 (6 r^5 - 1)
//   f_w'(g) = [(1 + cw3^6)/(g^6 + cw3^6)]^(1/6) cw3^6/(g^6 + cw3^6)
//   dOmega/d grad_u = (curl u / Omega) . d curl u / d grad_u   (0 at curl u = 0)
// Every routine is checked against complex step in tests/unit/test_spalart_allmaras.cpp.
#include "karman/physics/spalart_allmaras.hpp"

#include <cmath>

namespace karman::physics {

namespace {

using C = SAConstants;

double fv1_prime(double chi) {
  const double chi3 = chi * chi * chi, cv13 = C::cv1 * C::cv1 * C::cv1;
  return 3 * chi * chi * cv13 / ((chi3 + cv13) * (chi3 + cv13));
}

} // namespace

double vorticity_magnitude_dw(int dim, const double (*grad_u)[3], double (*d_grad_u)[3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d_grad_u[i][j] = 0;
  const Vec3<double> w = vorticity(dim, grad_u);
  const double omega = norm(w);
  if (!(omega > 0)) return omega; // the kink: subgradient 0
  const Vec3<double> n = (1.0 / omega) * w;
  d_grad_u[1][0] = n[2];
  d_grad_u[0][1] = -n[2];
  if (dim == 3) {
    d_grad_u[2][1] = n[0];
    d_grad_u[1][2] = -n[0];
    d_grad_u[0][2] = n[1];
    d_grad_u[2][0] = -n[1];
  }
  return omega;
}

SAModifiedVorticityDerivative sa_modified_vorticity_dw(double omega, double sbar) {
  SAModifiedVorticityDerivative out;
  out.value = sa_modified_vorticity(omega, sbar);
  if (!(sbar < -C::cv2 * omega)) {
    out.d_omega = 1;
    out.d_sbar = 1;
    return out;
  }
  const double N = C::cv2 * C::cv2 * omega + C::cv3 * sbar;
  const double M = (C::cv3 - 2 * C::cv2) * omega - sbar;
  out.d_omega = 1 + N / M + omega * (C::cv2 * C::cv2 * M - (C::cv3 - 2 * C::cv2) * N) / (M * M);
  out.d_sbar = omega * (C::cv3 * M + N) / (M * M);
  return out;
}

SAScalarDerivative sa_eddy_viscosity_dw(double nut, double nu) {
  SAScalarDerivative out;
  if (nut < 0) return out;
  const double chi = nut / nu, f = sa_detail::fv1(chi), fp = fv1_prime(chi);
  out.value = nut * f;
  out.d_nut = f + chi * fp;   // d(nt f_v1)/dnt, dchi/dnt = 1/nu
  out.d_nu = -chi * chi * fp; // nt f_v1' dchi/dnu, dchi/dnu = -chi/nu
  return out;
}

SAScalarDerivative sa_effective_viscosity_dw(double nut, double nu) {
  SAScalarDerivative out = sa_eddy_viscosity_dw(nut, nu);
  out.value += nu;
  out.d_nu += 1;
  return out;
}

SAScalarDerivative sa_diffusion_coefficient_dw(double nut, double nu) {
  SAScalarDerivative out;
  out.value = sa_diffusion_coefficient(nut, nu);
  if (!(nut < 0)) {
    out.d_nut = out.d_nu = 1 / C::sigma;
    return out;
  }
  const double chi = nut / nu, chi3 = chi * chi * chi;
  const double fn = (C::cn1 + chi3) / (C::cn1 - chi3);
  const double fnp = 6 * C::cn1 * chi * chi / ((C::cn1 - chi3) * (C::cn1 - chi3));
  out.d_nut = (fn + chi * fnp) / C::sigma;
  out.d_nu = (1 - chi * chi * fnp) / C::sigma;
  return out;
}

SASourceDerivative sa_source_dw(int dim, double nut, double nu, double dist,
                                const double (*grad_u)[3], const double *grad_nut,
                                const SAOptions &opt) {
  SASourceDerivative out;
  const SASourceTerms<double> s = sa_source_terms(dim, nut, nu, dist, grad_u, grad_nut, opt);
  out.value = s.source;
  double dOmega[3][3];
  vorticity_magnitude_dw(dim, grad_u, dOmega);
  for (int c = 0; c < dim; ++c) out.d_grad_nut[c] = 2 * C::cb2 / C::sigma * grad_nut[c];
  const double d2 = dist * dist, d3 = d2 * dist;
  double omega_bar = 0;
  if (s.negative) {
    // Q = cb1 (1 - ct3) Omega nt + cw1 nt^2/d^2 + cross
    out.d_nut = C::cb1 * (1 - C::ct3) * s.omega + 2 * C::cw1 * nut / d2;
    out.d_dist = -2 * C::cw1 * nut * nut / d3;
    omega_bar = C::cb1 * (1 - C::ct3) * nut;
  } else {
    const double k2 = C::kappa * C::kappa, k2d2 = k2 * d2;
    const double chi = nut / nu, f1 = sa_detail::fv1(chi), f1p = fv1_prime(chi);
    const double q = 1 + chi * f1;
    const double fv2 = 1 - chi / q, fv2p = -(1 - chi * chi * f1p) / (q * q);
    const double ft2p = -2 * C::ct4 * chi * s.ft2;
    const double sbar = nut * fv2 / k2d2;
    const double A = C::cw1 * s.fw - C::cb1 / k2 * s.ft2; // D = A nt^2/d^2
    // P = cb1 (1 - ft2) S~ nt,  -D
    double nut_bar = C::cb1 * (1 - s.ft2) * s.s_tilde - 2 * A * nut / d2;
    double st_bar = C::cb1 * (1 - s.ft2) * nut;
    double ft2_bar = -C::cb1 * s.s_tilde * nut + C::cb1 / k2 * nut * nut / d2;
    const double fw_bar = -C::cw1 * nut * nut / d2;
    double dist_bar = 2 * A * nut * nut / d3;
    // f_w(g(r))
    const double r = s.r, r5 = r * r * r * r * r;
    const double g = r + C::cw2 * (r5 * r - r), g6 = std::pow(g, 6), cw36 = std::pow(C::cw3, 6);
    const double fw_g = std::pow((1 + cw36) / (g6 + cw36), 1.0 / 6.0) * cw36 / (g6 + cw36);
    const double r_bar = fw_bar * fw_g * (1 + C::cw2 * (6 * r5 - 1));
    if (!s.r_limited) { // r = nt / (S~ kappa^2 d^2)
      nut_bar += r_bar / (s.s_tilde * k2d2);
      st_bar += -r_bar * r / s.s_tilde;
      dist_bar += -2 * r_bar * r / dist;
    }
    // S~(Omega, Sbar)
    const SAModifiedVorticityDerivative mv = sa_modified_vorticity_dw(s.omega, sbar);
    omega_bar = st_bar * mv.d_omega;
    const double sbar_bar = st_bar * mv.d_sbar;
    // Sbar = nt f_v2 / (kappa^2 d^2)
    nut_bar += sbar_bar * fv2 / k2d2;
    const double fv2_bar = sbar_bar * nut / k2d2;
    dist_bar += -2 * sbar_bar * sbar / dist;
    // chi = nt / nu
    const double chi_bar = fv2_bar * fv2p + ft2_bar * ft2p;
    nut_bar += chi_bar / nu;
    out.d_nu = -chi_bar * chi / nu;
    out.d_nut = nut_bar;
    out.d_dist = dist_bar;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out.d_grad_u[i][j] = omega_bar * dOmega[i][j];
  return out;
}

} // namespace karman::physics
