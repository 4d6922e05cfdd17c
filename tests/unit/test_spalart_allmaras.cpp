// Spalart-Allmaras (SA-neg) kernels:
//  - every hand derivative against complex step (h = 1e-30), on every branch: nt > 0 and
//    nt < 0, the S~ modification off and on, r limited and not, Omega = 0, with and without
//    f_t2, 2D and 3D velocity gradients;
//  - values against an independent transcription of the TMR formulas (Python, numbers below),
//    the constants, f_v1(cv1) = 1/2, the log-layer balance of the model (exact for every y+:
//    with nt = kappa u_tau y and du/dy = u_tau^2/(nu + nu_t), S~ = u_tau/(kappa y), r = f_w = 1
//    and P - D + diffusion = 0 by the definitions of f_v2 and cw1), continuity at the branch
//    switches, |curl u| = sqrt(2 W:W), positivity of the SA-neg diffusion coefficient.
#include "karman/physics/spalart_allmaras.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

using namespace karman;
using namespace karman::physics;
using cplx = std::complex<double>;
using C = SAConstants;

namespace {

constexpr double h = 1e-30;
constexpr double kNu = 1e-3;

// A fixed velocity gradient whose antisymmetric part is scaled so that |curl u| = omega (in 2D
// the third row and column hold values that must be ignored).
struct Gradient {
  double g[3][3];
};

Gradient velocity_gradient(int dim, double omega) {
  const double B[3][3] = {{0.31, -0.87, 0.44}, {0.52, -0.12, -0.63}, {-0.25, 0.91, -0.19}};
  const double omega0 = vorticity_magnitude(dim, B);
  Gradient G;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      G.g[i][j] = 0.5 * (B[i][j] + B[j][i]) + 0.5 * (B[i][j] - B[j][i]) * omega / omega0;
  return G;
}

struct State {
  int dim = 2;
  double nut = 0, nu = kNu, dist = 0.1;
  Gradient G{};
  double gn[3] = {};
  SAOptions opt;
};

State make_state(int dim, bool ft2, double chi, double dist, double omega) {
  State s;
  s.dim = dim;
  s.opt.ft2 = ft2;
  s.nut = chi * kNu;
  s.dist = dist;
  s.G = velocity_gradient(dim, omega);
  const double scale = std::abs(s.nut) / dist;
  s.gn[0] = 0.3 * scale, s.gn[1] = -0.2 * scale, s.gn[2] = 0.1 * scale;
  return s;
}

SASourceTerms<double> terms(const State &s) {
  return sa_source_terms(s.dim, s.nut, s.nu, s.dist, s.G.g, s.gn, s.opt);
}

// Input k of the source: 0 nt, 1 nu, 2 d, 3 + 3 i + j grad_u[i][j], 12 + c grad_nut[c].
constexpr int kInputs = 15;

bool is_read(int dim, int k) {
  if (k < 3) return true;
  if (k < 12) return (k - 3) / 3 < dim && (k - 3) % 3 < dim;
  return k - 12 < dim;
}

double hand(const SASourceDerivative &D, int k) {
  if (k == 0) return D.d_nut;
  if (k == 1) return D.d_nu;
  if (k == 2) return D.d_dist;
  if (k < 12) return D.d_grad_u[(k - 3) / 3][(k - 3) % 3];
  return D.d_grad_nut[k - 12];
}

// Magnitude of input k (to compare derivatives as responses to relative perturbations).
double input_scale(const State &s, int k) {
  if (k == 0) return std::max(std::abs(s.nut), s.nu);
  if (k == 1) return s.nu;
  if (k == 2) return s.dist;
  double m = 0;
  if (k < 12)
    for (int i = 0; i < s.dim; ++i)
      for (int j = 0; j < s.dim; ++j) m = std::max(m, std::abs(s.G.g[i][j]));
  else
    for (int c = 0; c < s.dim; ++c) m = std::max(m, std::abs(s.gn[c]));
  return m;
}

double complex_step(const State &s, int k) {
  cplx nut = s.nut, nu = s.nu, dist = s.dist, G[3][3], gn[3];
  for (int i = 0; i < 3; ++i) {
    gn[i] = s.gn[i];
    for (int j = 0; j < 3; ++j) G[i][j] = s.G.g[i][j];
  }
  const cplx ih(0, h);
  if (k == 0)
    nut += ih;
  else if (k == 1)
    nu += ih;
  else if (k == 2)
    dist += ih;
  else if (k < 12)
    G[(k - 3) / 3][(k - 3) % 3] += ih;
  else
    gn[k - 12] += ih;
  return sa_source(s.dim, nut, nu, dist, G, gn, s.opt).imag() / h;
}

// Compares sa_source_dw with complex step on every input (all but grad u when Omega = 0):
// |cs - hand| x_k <= 1e-12 max_k |dQ/dx_k| x_k, with x_k the magnitude of input k; inputs that
// a 2D kernel does not read must have zero derivatives.
void check_source_derivatives(const State &s, bool skip_grad_u = false) {
  const SASourceDerivative D = sa_source_dw(s.dim, s.nut, s.nu, s.dist, s.G.g, s.gn, s.opt);
  REQUIRE(D.value == terms(s).source);
  double scale = 0;
  for (int k = 0; k < kInputs; ++k)
    scale = std::max(scale, std::abs(hand(D, k)) * input_scale(s, k));
  REQUIRE(scale > 0);
  for (int k = 0; k < kInputs; ++k) {
    if (!is_read(s.dim, k)) {
      CAPTURE(k);
      REQUIRE(hand(D, k) == 0);
      continue;
    }
    if (skip_grad_u && k >= 3 && k < 12) continue;
    const double cs = complex_step(s, k), hd = hand(D, k);
    CAPTURE(s.dim, s.opt.ft2, s.nut, s.dist, k, cs, hd, scale);
    REQUIRE(std::abs(cs - hd) * input_scale(s, k) <= 1e-12 * scale);
  }
}

} // namespace

TEST_CASE("SA constants and the eddy viscosity", "[spalart_allmaras]") {
  // cw1 = cb1/kappa^2 + (1 + cb2)/sigma (TMR, with the 1994 paper's typo corrected)
  CHECK(C::cw1 == Approx(3.2390678167757287).epsilon(1e-15));
  // f_v1(cv1) = 1/2: nu_t = nt/2 at chi = cv1
  CHECK(sa_eddy_viscosity(C::cv1 * kNu, kNu) == Approx(0.5 * C::cv1 * kNu).epsilon(1e-15));
  // no eddy viscosity for nt < 0, nu_t -> nt for chi >> cv1
  CHECK(sa_eddy_viscosity(-3 * kNu, kNu) == 0);
  CHECK(sa_eddy_viscosity(1e4 * kNu, kNu) / (1e4 * kNu) == Approx(1).epsilon(1e-9));
  CHECK(sa_effective_viscosity(0.0, kNu) == kNu);
  // free stream nt = 3 nu: nu_t / nu = 27 / (27 + 7.1^3) = 0.210438 (TMR's 0.210438 nu)
  CHECK(sa_eddy_viscosity(C::farfield_ratio * kNu, kNu) / kNu ==
        Approx(81.0 / (27.0 + 357.911)).epsilon(1e-14));
  CHECK(sa_eddy_viscosity(C::farfield_ratio * kNu, kNu) / kNu == Approx(0.210438).margin(5e-7));
}

TEST_CASE("SA scalar kernels: derivatives equal complex step", "[spalart_allmaras]") {
  using Kernel = cplx (*)(const cplx &, const cplx &);
  using Derivative = SAScalarDerivative (*)(double, double);
  const struct {
    const char *name;
    Kernel f;
    Derivative df;
  } kernels[] = {
      {"eddy viscosity", sa_eddy_viscosity<cplx>, sa_eddy_viscosity_dw},
      {"effective viscosity", sa_effective_viscosity<cplx>, sa_effective_viscosity_dw},
      {"diffusion coefficient", sa_diffusion_coefficient<cplx>, sa_diffusion_coefficient_dw},
  };
  for (const auto &kernel : kernels)
    for (double chi : {-40.0, -3.0, -1.37, -0.2, 0.3, 1.0, 7.1, 25.0}) {
      const double nut = chi * kNu, nu = kNu;
      const SAScalarDerivative d = kernel.df(nut, nu);
      const double cs_nut = kernel.f(cplx(nut, h), nu).imag() / h;
      const double cs_nu = kernel.f(nut, cplx(nu, h)).imag() / h;
      const double scale = std::max(std::abs(d.d_nut) * std::abs(nut), std::abs(d.d_nu) * nu);
      CAPTURE(kernel.name, chi, cs_nut, d.d_nut, cs_nu, d.d_nu);
      CHECK(d.value == kernel.f(nut, nu).real());
      CHECK(std::abs(cs_nut - d.d_nut) * std::abs(nut) <= 1e-12 * scale);
      CHECK(std::abs(cs_nu - d.d_nu) * nu <= 1e-12 * scale);
      if (chi < 0 && kernel.df == sa_eddy_viscosity_dw) CHECK((d.d_nut == 0 && d.d_nu == 0));
    }
}

TEST_CASE("SA-neg diffusion coefficient: values, positivity, smooth at nt = 0",
          "[spalart_allmaras]") {
  // f_n(-1) = (16 - 1)/(16 + 1)
  CHECK(sa_diffusion_coefficient(-kNu, kNu) ==
        Approx((kNu - kNu * 15.0 / 17.0) / C::sigma).epsilon(1e-14));
  CHECK(sa_diffusion_coefficient(2 * kNu, kNu) == Approx(3 * kNu / C::sigma).epsilon(1e-15));
  // cn1 = 16 keeps nu + nt f_n > 0 for every nt < 0: minimum 0.00936 nu near chi = -1.374
  double lowest = 1e300, at = 0;
  for (int i = 1; i <= 100000; ++i) {
    const double chi = -10.0 * i / 100000;
    const double v = sa_diffusion_coefficient(chi * kNu, kNu) * C::sigma / kNu;
    if (v < lowest) lowest = v, at = chi;
  }
  CHECK(lowest == Approx(0.0093587).epsilon(1e-4));
  CHECK(at == Approx(-1.3744).epsilon(1e-3));
  // value and slope continuous across nt = 0
  const double eps = 1e-9 * kNu;
  const SAScalarDerivative m = sa_diffusion_coefficient_dw(-eps, kNu),
                           p = sa_diffusion_coefficient_dw(eps, kNu);
  CHECK(std::abs(p.value - m.value - 2 * eps / C::sigma) <= 1e-15 * p.value);
  CHECK(std::abs(m.d_nut - p.d_nut) <= 1e-12 * p.d_nut);
  CHECK(std::abs(m.d_nu - p.d_nu) <= 1e-12 * p.d_nu);
}

TEST_CASE("vorticity magnitude: values and derivatives", "[spalart_allmaras]") {
  for (int dim = 2; dim <= 3; ++dim) {
    const Gradient G = velocity_gradient(dim, 1.7);
    // Omega = sqrt(2 W_ij W_ij) with W the antisymmetric part (TMR), over the dim x dim block
    double ww = 0;
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) ww += 0.25 * std::pow(G.g[i][j] - G.g[j][i], 2);
    CHECK(vorticity_magnitude(dim, G.g) == Approx(std::sqrt(2 * ww)).epsilon(1e-14));
    CHECK(vorticity_magnitude(dim, G.g) == Approx(1.7).epsilon(1e-14));
    // a symmetric part (strain) does not change it
    Gradient S = G;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) S.g[i][j] += 0.37 * (i + 1) * (j + 1);
    CHECK(vorticity_magnitude(dim, S.g) == Approx(1.7).epsilon(1e-14));
    double d[3][3];
    CHECK(vorticity_magnitude_dw(dim, G.g, d) == vorticity_magnitude(dim, G.g));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        cplx Gc[3][3];
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) Gc[a][b] = G.g[a][b];
        Gc[i][j] += cplx(0, h);
        const double cs = vorticity_magnitude(dim, Gc).imag() / h;
        CAPTURE(dim, i, j, cs, d[i][j]);
        CHECK(std::abs(cs - d[i][j]) <= 1e-15);
        if (i >= dim || j >= dim) CHECK(d[i][j] == 0);
      }
  }
  // 2D ignores the third row and column
  Gradient G2 = velocity_gradient(2, 0.8), G3 = G2;
  for (int k = 0; k < 3; ++k) G3.g[2][k] = G3.g[k][2] = 0;
  CHECK(vorticity_magnitude(2, G2.g) == vorticity_magnitude(2, G3.g));
  // the kink at curl u = 0: subgradient 0
  const double zero[3][3] = {{0.2, 0.1, 0}, {0.1, -0.2, 0}, {0, 0, 0}};
  double d[3][3];
  CHECK(vorticity_magnitude_dw(3, zero, d) == 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(d[i][j] == 0);
}

TEST_CASE("SA-neg modified vorticity: both forms, C1 switch, lower bound", "[spalart_allmaras]") {
  const double omega = 1.3;
  for (double ratio : {0.5, -0.3, -0.69, -0.71, -2.0, -40.0}) {
    const double sbar = ratio * omega;
    const SAModifiedVorticityDerivative d = sa_modified_vorticity_dw(omega, sbar);
    const double cs_o = sa_modified_vorticity(cplx(omega, h), cplx(sbar)).imag() / h;
    const double cs_s = sa_modified_vorticity(cplx(omega), cplx(sbar, h)).imag() / h;
    CAPTURE(ratio, d.d_omega, cs_o, d.d_sbar, cs_s);
    CHECK(std::abs(cs_o - d.d_omega) <= 1e-14);
    CHECK(std::abs(cs_s - d.d_sbar) <= 1e-14);
    CHECK(d.value > 0.1 * omega); // S~ > (1 - cv3) Omega
  }
  // the switch at Sbar = -cv2 Omega: value (1 - cv2) Omega, slopes 1 on both sides
  const double s0 = -C::cv2 * omega, e = 1e-9 * omega;
  const auto lo = sa_modified_vorticity_dw(omega, s0 - e), hi = sa_modified_vorticity_dw(omega, s0);
  CHECK(hi.value == Approx((1 - C::cv2) * omega).epsilon(1e-15));
  CHECK(std::abs(lo.value - hi.value) <= 2e-9 * omega);
  CHECK(lo.d_sbar == Approx(1).epsilon(1e-7)); // d2S~/dSbar2 = 10/Omega there
  CHECK(lo.d_omega == Approx(1).epsilon(1e-7));
  // Sbar -> -infinity: S~ -> (1 - cv3) Omega
  CHECK(sa_modified_vorticity(omega, -1e12 * omega) == Approx((1 - C::cv3) * omega).epsilon(1e-10));
}

TEST_CASE("SA source: derivatives equal complex step on every branch", "[spalart_allmaras]") {
  // {chi, d, Omega} for: S~ plain, r free | S~ plain, r limited | S~ modified, r free |
  // S~ modified, r limited | nt < 0 | nt < 0 near the diffusion minimum | small chi (f_t2 ~ ct3)
  // | the free-stream value nt = 3 nu far from walls
  const struct {
    const char *name;
    double chi, dist, omega;
    bool negative, modified, limited;
  } cases[] = {
      {"plain", 20, 0.2, 1.0, false, false, false},
      {"r limited", 20, 0.02, 1.0, false, false, true},
      {"S~ modified", 3.5, 0.1, 4.0, false, true, false},
      {"S~ modified, r limited", 3.5, 0.1, 1.0, false, true, true},
      {"negative", -2, 0.1, 1.0, true, false, false},
      {"negative, chi -1.37", -1.37, 0.05, 0.3, true, false, false},
      {"small chi", 0.1, 0.05, 2.0, false, false, false},
      {"free stream (chi 3, far from the wall)", 3.0, 3.0, 1e-5, false, true, true},
  };
  for (const auto &c : cases)
    for (int dim = 2; dim <= 3; ++dim)
      for (bool ft2 : {true, false}) {
        SECTION(std::string(c.name) + ", " + std::to_string(dim) + "D" + (ft2 ? "" : ", noft2")) {
          const State s = make_state(dim, ft2, c.chi, c.dist, c.omega);
          const SASourceTerms<double> t = terms(s);
          REQUIRE(t.negative == c.negative);
          REQUIRE(t.s_tilde_modified == c.modified);
          REQUIRE(t.r_limited == c.limited);
          check_source_derivatives(s);
        }
      }
  SECTION("Omega = 0 with Sbar < 0: S~ = 0, r = 10 (all but grad u)") {
    for (int dim = 2; dim <= 3; ++dim)
      for (bool ft2 : {true, false}) {
        State s = make_state(dim, ft2, 3.5, 0.1, 1.0);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) s.G.g[i][j] = 0.1 * (i + j); // symmetric: no vorticity
        const SASourceTerms<double> t = terms(s);
        REQUIRE(t.omega == 0);
        REQUIRE(t.s_tilde == 0);
        REQUIRE(t.r_limited);
        REQUIRE(t.r == 10);
        REQUIRE(std::isfinite(t.source));
        check_source_derivatives(s, true);
        const SASourceDerivative D = sa_source_dw(dim, s.nut, s.nu, s.dist, s.G.g, s.gn, s.opt);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) CHECK(D.d_grad_u[i][j] == 0);
      }
  }
  SECTION("Omega = 0 with Sbar > 0: S~ = Sbar") {
    State s = make_state(3, true, 30, 0.5, 1.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) s.G.g[i][j] = 0;
    const SASourceTerms<double> t = terms(s);
    REQUIRE(t.omega == 0);
    REQUIRE(t.s_tilde > 0);
    check_source_derivatives(s, true);
  }
}

TEST_CASE("SA source: values of an independent transcription of the TMR formulas",
          "[spalart_allmaras]") {
  // /usr/bin/python3, float64, written from the TMR page (Omega from W_ij, min() for r, the
  // two S~ forms by their conditions); the same states as make_state builds
  const struct {
    int dim;
    bool ft2;
    double chi, dist, omega, Q, P, D;
  } refs[] = {
      {3, true, 20, 0.2, 1.0, -0.06087533076303758, 0.002767439077227295, 0.06494896984026488},
      {2, true, 3.5, 0.1, 4.0, -0.0073677439621898785, 0.00043733257327640716,
       0.007953656785466286},
      {3, false, 3.5, 0.1, 1.0, -0.007741840082187169, 5.439922324738596e-05, 0.007956248805434555},
      {2, true, -2, 0.1, 1.0, 0.0013983431267102914, 5.419999999999999e-05, -0.0012956271267102915},
      {3, true, 0.1, 0.05, 2.0, -2.4257059339682016e-06, -5.820807059266742e-06,
       -2.8726211252985407e-06},
  };
  for (const auto &r : refs) {
    const SASourceTerms<double> t = terms(make_state(r.dim, r.ft2, r.chi, r.dist, r.omega));
    CAPTURE(r.dim, r.ft2, r.chi, t.source, t.production, t.destruction);
    const double scale = std::max({std::abs(r.P), std::abs(r.D), t.cross_diffusion});
    CHECK(std::abs(t.source - r.Q) <= 1e-13 * scale);
    CHECK(std::abs(t.production - r.P) <= 1e-13 * std::abs(r.P));
    CHECK(std::abs(t.destruction - r.D) <= 1e-13 * std::abs(r.D));
  }
}

TEST_CASE("SA source: the log-layer balance holds to round-off for every y+",
          "[spalart_allmaras]") {
  // nt = kappa u_tau y with the constant-stress velocity gradient du/dy = u_tau^2/(nu + nu_t):
  // S~ = u_tau/(kappa y) exactly (by the definition of f_v2), r = 1, g = f_w = 1, and with
  // grad nt = kappa u_tau (d^2 nt/dy^2 = 0) the transport equation balances:
  //   P - D + cb2/sigma |grad nt|^2 + 1/sigma |grad nt|^2 = (cb1 - cw1 kappa^2 + (1 + cb2)
  //   kappa^2/sigma) u_tau^2 = 0.  The f_t2 terms cancel too (r = 1), so both variants hold.
  const double u_tau = 0.04, nu = 2e-7;
  for (bool ft2 : {true, false})
    for (double yplus : {0.05, 0.5, 1.0, 3.0, 8.0, 20.0, 100.0, 1e3, 1e4}) {
      const double y = yplus * nu / u_tau, nut = C::kappa * u_tau * y;
      const double nu_t = sa_eddy_viscosity(nut, nu);
      double G[3][3] = {};
      G[0][1] = u_tau * u_tau / (nu + nu_t);
      const double gn[3] = {0, C::kappa * u_tau, 0};
      SAOptions opt;
      opt.ft2 = ft2;
      const SASourceTerms<double> t = sa_source_terms(2, nut, nu, y, G, gn, opt);
      const double diffusion = sa_diffusion_coefficient_dw(nut, nu).d_nut * gn[1] * gn[1];
      CAPTURE(ft2, yplus, t.s_tilde, t.r, t.fw, t.source);
      REQUIRE(!t.s_tilde_modified);
      CHECK(t.s_tilde == Approx(u_tau / (C::kappa * y)).epsilon(1e-14));
      CHECK(t.r == Approx(1).epsilon(1e-14));
      CHECK(t.fw == Approx(1).epsilon(1e-14));
      CHECK(std::abs(t.source + diffusion) <= 1e-14 * u_tau * u_tau);
      // the balance is not trivial: each term is of order u_tau^2
      CHECK(std::abs(t.destruction) > 0.1 * u_tau * u_tau);
    }
}

TEST_CASE("SA-neg source across nt = 0: C1 with f_t2, a slope jump cb1 ct3 Omega without",
          "[spalart_allmaras]") {
  for (int dim = 2; dim <= 3; ++dim) {
    const double eps = 1e-10 * kNu;
    State p = make_state(dim, true, 0, 0.1, 1.3), m = p;
    p.nut = eps, m.nut = -eps;
    for (State *s : {&p, &m})
      for (double &g : s->gn) g = 0.01;
    const double omega = terms(p).omega;
    auto dp = sa_source_dw(dim, p.nut, p.nu, p.dist, p.G.g, p.gn, p.opt);
    auto dm = sa_source_dw(dim, m.nut, m.nu, m.dist, m.G.g, m.gn, m.opt);
    const double slope = C::cb1 * C::ct3 * omega;
    // continuous: |Q(eps) - Q(-eps)| <= 2 eps max |dQ/dnt| (plus round-off of the cross term)
    const double jump = 2 * eps * std::max(std::abs(dp.d_nut), std::abs(dm.d_nut));
    CHECK(std::abs(dp.value - dm.value) <= jump + 1e-15 * std::abs(dp.value));
    CHECK(std::abs(dp.d_nut - dm.d_nut) <= 1e-6 * slope);
    CHECK(dm.d_nut == Approx(C::cb1 * (1 - C::ct3) * omega).epsilon(1e-6));
    p.opt.ft2 = m.opt.ft2 = false;
    dp = sa_source_dw(dim, p.nut, p.nu, p.dist, p.G.g, p.gn, p.opt);
    dm = sa_source_dw(dim, m.nut, m.nu, m.dist, m.G.g, m.gn, m.opt);
    CHECK(dp.d_nut - dm.d_nut == Approx(slope).epsilon(1e-6));
    CHECK(std::abs(dp.value - dm.value) <=
          2 * eps * std::max(std::abs(dp.d_nut), std::abs(dm.d_nut)) + 1e-15 * std::abs(dp.value));
  }
}

TEST_CASE("SA source: r is continuous at the limiter", "[spalart_allmaras]") {
  // Omega chosen so that nt / (S~ kappa^2 d^2) = 10 (S~ = Omega + Sbar, Sbar > 0 at chi = 20)
  const double chi = 20, dist = 0.05, nut = chi * kNu;
  const State base = make_state(3, true, chi, dist, 1.0);
  const double k2d2 = C::kappa * C::kappa * dist * dist;
  const double sbar = terms(base).s_tilde - terms(base).omega;
  const double omega_switch = nut / (10 * k2d2) - sbar;
  const State below = make_state(3, true, chi, dist, omega_switch * (1 - 1e-9));
  const State above = make_state(3, true, chi, dist, omega_switch * (1 + 1e-9));
  REQUIRE(terms(below).r_limited);
  REQUIRE(!terms(above).r_limited);
  CHECK(terms(above).r == Approx(10).epsilon(1e-8));
  CHECK(std::abs(terms(below).source - terms(above).source) <=
        1e-7 * std::abs(terms(above).destruction));
}
