// Passive-scalar kernels (physics/scalar_transport.hpp): the hand-derived derivatives (*_dw) and
// reverse mode (*_reverse) of every face flux, the wall gradient and the cell source against
// complex step, every input (the scalar's values and gradients, the flow's volume flux F, the
// boundary value or flux, kappa, the face geometry S, x_f, x_L, x_R), 2D and 3D, upwind and
// blended convection, first-order (cell values) and linear reconstruction, inflow and outflow
// faces.  Also: the interior flux is conservative in the
// sense that a uniform phi with F = 0 gives no flux, and a linear phi's diffusive flux is exact.
#include "karman/physics/scalar_transport.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <functional>
#include <random>

using namespace karman;
using namespace karman::physics;
using cplx = std::complex<double>;

namespace {

constexpr int kS = 3; // the scalar's unknown (2D: p, u, v, phi)
constexpr double h = 1e-30;

// Inputs in one flat list: phi_L, phi_R, G_L (3), G_R (3), F, boundary, kappa, S (3), x_f (3),
// x_L (3), x_R (3).
enum Index {
  PL = 0,
  PR = 1,
  GL = 2,
  GR = 5,
  F = 8,
  B = 9,
  K = 10,
  S = 11,
  XF = 14,
  XL = 17,
  XR = 20,
  N = 23
};

enum class Kind { Interior, Value, Gradient, WallGradient, Source };

template <typename T>
T evaluate(Kind kind, int dim, const T *x, const FluxParameters<T> &fp, int order) {
  CellState<T> L{}, R{};
  L.w[kS] = x[PL], R.w[kS] = x[PR];
  for (int c = 0; c < dim; ++c) L.g[kS][c] = x[GL + c], R.g[kS][c] = x[GR + c];
  FaceGeometry<T> g;
  for (int c = 0; c < dim; ++c)
    g.S[c] = x[S + c], g.xf[c] = x[XF + c], g.xL[c] = x[XL + c], g.xR[c] = x[XR + c];
  switch (kind) {
  case Kind::Interior:
    return scalar_interior_flux(kS, L, R, g, fp, x[K], x[F], order);
  case Kind::Value:
    return scalar_value_flux(kS, L, g, fp, x[K], x[F], x[B], order);
  case Kind::Gradient:
    return scalar_gradient_flux(kS, L, g, fp, x[F], x[B], order);
  case Kind::WallGradient:
    return scalar_wall_gradient(kS, L, g, x[B]);
  case Kind::Source: // volume x[K], decay x[F], source x[B]
    return scalar_source(kS, L, x[K], fp.rho, x[F], x[B]);
  }
  return T(0);
}

struct Sample {
  double x[N] = {};
  FluxParameters<double> fp;
  int order = 2; ///< 1: first-order upwind convection (cell values)
};

Sample random_sample(int dim, unsigned seed, double volume_flux, int order = 2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Sample s;
  for (double &v : s.x) v = u(gen);
  for (int c = dim; c < 3; ++c)
    for (int i : {GL, GR, S, XF, XL, XR}) s.x[i + c] = 0;
  s.x[F] = volume_flux;
  s.x[K] = 0.05 + 0.02 * u(gen);
  // a non-orthogonal face between x_L near 0 and x_R near (1, 0, 0)
  s.x[XL] = 0.1 * u(gen), s.x[XL + 1] = 0.1 * u(gen);
  s.x[XR] = 1 + 0.1 * u(gen), s.x[XR + 1] = 0.3 * u(gen);
  s.x[XF] = 0.5 + 0.05 * u(gen), s.x[XF + 1] = 0.1 * u(gen);
  s.x[S] = 0.8 + 0.1 * u(gen), s.x[S + 1] = 0.2 * u(gen);
  if (dim == 3) s.x[XR + 2] = 0.3 * u(gen), s.x[S + 2] = 0.2 * u(gen);
  s.fp.rho = 1.3, s.fp.u_ref = 0.7, s.fp.eps = 1e-3;
  s.fp.upwind = seed % 2 == 1 ? 1.0 : 0.35;
  s.order = order;
  return s;
}

// d(kernel)/d(x_i) by complex step
double complex_step(Kind kind, int dim, const Sample &s, int i) {
  cplx x[N];
  for (int j = 0; j < N; ++j) x[j] = s.x[j];
  x[i] += cplx(0, h);
  FluxParameters<cplx> fp;
  fp.rho = s.fp.rho, fp.u_ref = s.fp.u_ref, fp.eps = s.fp.eps, fp.upwind = s.fp.upwind;
  return evaluate(kind, dim, x, fp, s.order).imag() / h;
}

CellState<double> cell(int dim, const double *x, int w, int g) {
  CellState<double> c{};
  c.w[kS] = x[w];
  for (int k = 0; k < dim; ++k) c.g[kS][k] = x[g + k];
  return c;
}

FaceGeometry<double> geometry(int dim, const double *x) {
  FaceGeometry<double> g;
  for (int c = 0; c < dim; ++c)
    g.S[c] = x[S + c], g.xf[c] = x[XF + c], g.xL[c] = x[XL + c], g.xR[c] = x[XR + c];
  return g;
}

// The hand derivatives in the flat numbering (inputs they do not give: NaN, not compared).
std::vector<double> hand_dw(Kind kind, int dim, const Sample &s) {
  const CellState<double> L = cell(dim, s.x, PL, GL), R = cell(dim, s.x, PR, GR);
  const FaceGeometry<double> g = geometry(dim, s.x);
  ScalarFluxDerivatives D;
  if (kind == Kind::Interior)
    D = scalar_interior_flux_dw(kS, L, R, g, s.fp, s.x[K], s.x[F], s.order);
  else if (kind == Kind::Value)
    D = scalar_value_flux_dw(kS, L, g, s.fp, s.x[K], s.x[F], s.x[B], s.order);
  else
    D = scalar_gradient_flux_dw(kS, L, g, s.fp, s.x[F], s.x[B], s.order);
  std::vector<double> d(N, std::nan(""));
  d[PL] = D.wL, d[PR] = D.wR, d[F] = D.F, d[B] = D.boundary, d[K] = D.kappa;
  for (int c = 0; c < dim; ++c) d[GL + c] = D.gL[c], d[GR + c] = D.gR[c];
  return d;
}

std::vector<double> hand_reverse(Kind kind, int dim, const Sample &s, double lambda) {
  const CellState<double> L = cell(dim, s.x, PL, GL), R = cell(dim, s.x, PR, GR);
  const FaceGeometry<double> g = geometry(dim, s.x);
  FluxBar b;
  ScalarFluxBar sb;
  if (kind == Kind::Interior)
    scalar_interior_flux_reverse(kS, L, R, g, s.fp, s.x[K], s.x[F], lambda, b, sb, s.order);
  else if (kind == Kind::Value)
    scalar_value_flux_reverse(kS, L, g, s.fp, s.x[K], s.x[F], s.x[B], lambda, b, sb, s.order);
  else if (kind == Kind::Gradient)
    scalar_gradient_flux_reverse(kS, L, g, s.fp, s.x[F], s.x[B], lambda, b, sb, s.order);
  else
    scalar_wall_gradient_reverse(kS, L, g, s.x[B], lambda, b, sb);
  std::vector<double> d(N, 0.0);
  d[PL] = b.L.w[kS], d[PR] = b.R.w[kS], d[F] = sb.F, d[B] = sb.boundary, d[K] = sb.kappa;
  for (int c = 0; c < dim; ++c) {
    d[GL + c] = b.L.g[kS][c], d[GR + c] = b.R.g[kS][c];
    d[S + c] = b.S[c], d[XF + c] = b.xf[c], d[XL + c] = b.xL[c], d[XR + c] = b.xR[c];
  }
  return d;
}

void check(Kind kind, int dim, const Sample &s) {
  const double lambda = 0.7;
  const std::vector<double> reverse = hand_reverse(kind, dim, s, lambda);
  const std::vector<double> dw =
      kind == Kind::WallGradient ? std::vector<double>(N, std::nan("")) : hand_dw(kind, dim, s);
  std::vector<int> inputs = {PL, PR, F, B, K};
  for (int c = 0; c < dim; ++c)
    for (int i : {GL, GR, S, XF, XL, XR}) inputs.push_back(i + c);
  for (int i : inputs) {
    const double cs = complex_step(kind, dim, s, i);
    CAPTURE(static_cast<int>(kind), dim, i, cs, dw[i], reverse[i]);
    if (!std::isnan(dw[i])) CHECK(std::abs(dw[i] - cs) <= 1e-12 * (1 + std::abs(cs)));
    CHECK(std::abs(reverse[i] - lambda * cs) <= 1e-12 * (1 + std::abs(cs)));
  }
}

} // namespace

TEST_CASE("scalar face fluxes: derivatives and reverse mode equal complex step",
          "[scalar][kernels]") {
  for (int dim : {2, 3})
    for (unsigned seed = 1; seed <= 4; ++seed)
      for (double flux : {0.6, -0.45, 0.0}) // outflow, inflow, a wall
        for (int order : {2, 1}) {          // linear reconstruction, first-order upwind
          const Sample s = random_sample(dim, seed, flux, order);
          for (Kind kind : {Kind::Interior, Kind::Value, Kind::Gradient, Kind::WallGradient})
            check(kind, dim, s);
        }
}

TEST_CASE("scalar face fluxes: first order convects the cell values", "[scalar][kernels]") {
  // a uniform phi with arbitrary gradients, no diffusion: order 1 convects the cell values,
  // (F + a)/2 phi + (F - a)/2 phi = F phi exactly; order 2 the reconstructions, which differ
  Sample s = random_sample(2, 1, 0.6, 1);
  CellState<double> L{}, R{};
  L.w[kS] = R.w[kS] = 0.8;
  L.g[kS][0] = 3.0, R.g[kS][1] = -2.0;
  FaceGeometry<double> g;
  g.xL = Vec3<double>(0, 0, 0), g.xR = Vec3<double>(1, 0, 0), g.xf = Vec3<double>(0.5, 0, 0);
  g.S = Vec3<double>(0.7, 0, 0);
  CHECK(scalar_interior_flux(kS, L, R, g, s.fp, 0.0, 0.6, 1) == Approx(s.fp.rho * 0.6 * 0.8));
  CHECK(scalar_interior_flux(kS, L, R, g, s.fp, 0.0, 0.6, 2) != Approx(s.fp.rho * 0.6 * 0.8));
  CHECK(scalar_gradient_flux(kS, L, g, s.fp, 0.6, 0.0, 1) == Approx(s.fp.rho * 0.6 * 0.8));
}

TEST_CASE("scalar source: derivative and reverse mode", "[scalar][kernels]") {
  // Q = rho V (k phi - q): dQ/dphi = rho V k, and the adjoints of V, k and q
  CellState<double> c{};
  c.w[kS] = 0.37;
  const double rho = 1.3, V = 0.02, k = 0.4, q = 1.7;
  const double Q = scalar_source(kS, c, V, rho, k, q);
  CHECK(Q == Approx(rho * V * (k * 0.37 - q)).epsilon(1e-15));
  CellState<cplx> z{};
  z.w[kS] = cplx(0.37, h);
  CHECK(scalar_source(kS, z, cplx(V), cplx(rho), cplx(k), cplx(q)).imag() / h ==
        Approx(rho * V * k).epsilon(1e-14));
}

TEST_CASE("scalar fluxes: consistency", "[scalar][kernels]") {
  for (int dim : {2, 3}) {
    Sample s = random_sample(dim, 3, 0.0);
    // phi linear, phi = a . x: both reconstructions give a . x_f and D_f = a . S exactly
    const Vec3<double> a(0.3, -0.7, dim == 3 ? 0.2 : 0.0);
    const FaceGeometry<double> g = geometry(dim, s.x);
    CellState<double> L{}, R{};
    L.w[kS] = dot(a, g.xL), R.w[kS] = dot(a, g.xR);
    for (int c = 0; c < 3; ++c) L.g[kS][c] = R.g[kS][c] = a[c];
    const double kappa = 0.05, flux = 0.4;
    const double M = scalar_interior_flux(kS, L, R, g, s.fp, kappa, flux);
    CHECK(M == Approx(s.fp.rho * (flux * dot(a, g.xf) - kappa * dot(a, g.S))).epsilon(1e-13));
    // the wall gradient of a linear field whose wall value is a . x_f
    CHECK(scalar_wall_gradient(kS, L, g, dot(a, g.xf)) == Approx(dot(a, g.S)).epsilon(1e-13));
  }
}
