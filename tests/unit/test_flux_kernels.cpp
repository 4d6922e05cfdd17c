// Face-flux kernels: hand-derived derivatives against complex step, every input, 2D and
// 3D, with random states, gradients and (non-orthogonal) geometry.  Also consistency:
// the interior flux with identical linear fields on both sides has no stabilization
// term, and the flux is conservative (what leaves L enters R).
#include "karman/physics/flux_kernels.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <functional>
#include <random>

using namespace karman;
using namespace karman::physics;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30;

struct Sample {
  CellState<double> L, R;
  FaceGeometry<double> g;
  FluxParameters<double> p;
  Vec3<double> ub;
  double pb = 0.3;
};

Sample random_sample(int dim, unsigned seed, double flux_scale = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Sample s;
  for (int k = 0; k <= dim; ++k) {
    s.L.w[k] = flux_scale * u(gen), s.R.w[k] = flux_scale * u(gen);
    for (int c = 0; c < dim; ++c) s.L.g[k][c] = u(gen), s.R.g[k][c] = u(gen);
  }
  s.g.xL = Vec3<double>(0.1 * u(gen), 0.1 * u(gen), dim == 3 ? 0.1 * u(gen) : 0.0);
  s.g.xR = Vec3<double>(1.0 + 0.1 * u(gen), 0.3 * u(gen), dim == 3 ? 0.3 * u(gen) : 0.0);
  s.g.xf = Vec3<double>(0.5 + 0.05 * u(gen), 0.1 * u(gen), dim == 3 ? 0.1 * u(gen) : 0.0);
  s.g.S = Vec3<double>(0.8 + 0.1 * u(gen), 0.2 * u(gen), dim == 3 ? 0.2 * u(gen) : 0.0);
  s.p.rho = 1.3, s.p.nu = 0.02, s.p.u_ref = 0.7, s.p.c_stab = 1.1, s.p.eps = 1e-3;
  s.ub = Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
  return s;
}

template <typename T> CellState<T> lift(const CellState<double> &s) {
  CellState<T> o;
  for (int k = 0; k < kMaxVars; ++k) {
    o.w[k] = s.w[k];
    for (int c = 0; c < 3; ++c) o.g[k][c] = s.g[k][c];
  }
  return o;
}

FaceGeometry<cplx> lift(const FaceGeometry<double> &g) {
  FaceGeometry<cplx> o;
  for (int c = 0; c < 3; ++c)
    o.S[c] = g.S[c], o.xf[c] = g.xf[c], o.xL[c] = g.xL[c], o.xR[c] = g.xR[c];
  return o;
}

FluxParameters<cplx> lift(const FluxParameters<double> &p) {
  FluxParameters<cplx> o;
  o.rho = p.rho, o.nu = p.nu, o.u_ref = p.u_ref, o.c_stab = p.c_stab, o.eps = p.eps;
  return o;
}

using Kernel = std::function<void(const CellState<cplx> &, const CellState<cplx> &, cplx *)>;

// Compares J (from a *_dw routine) with complex-step derivatives of `kernel`.
void compare(int dim, const Sample &s, const Kernel &kernel, const FluxJacobian &J,
             bool has_right) {
  const int nv = dim + 1;
  double scale = 0;
  for (int e = 0; e < nv; ++e)
    for (int j = 0; j < nv; ++j) {
      scale = std::max({scale, std::abs(J.dwL[e][j]), std::abs(J.dwR[e][j])});
      for (int c = 0; c < 3; ++c)
        scale = std::max({scale, std::abs(J.dgL[e][j][c]), std::abs(J.dgR[e][j][c])});
    }
  for (int side = 0; side < (has_right ? 2 : 1); ++side)
    for (int j = 0; j < nv; ++j)
      for (int c = -1; c < dim; ++c) { // c = -1: the value, else gradient component c
        CellState<cplx> L = lift<cplx>(s.L), R = lift<cplx>(s.R);
        CellState<cplx> &X = side == 0 ? L : R;
        if (c < 0)
          X.w[j] += cplx(0, h);
        else
          X.g[j][c] += cplx(0, h);
        cplx M[kMaxVars];
        kernel(L, R, M);
        for (int e = 0; e < nv; ++e) {
          const double cs = M[e].imag() / h;
          const double hand = c < 0 ? (side == 0 ? J.dwL[e][j] : J.dwR[e][j])
                                    : (side == 0 ? J.dgL[e][j][c] : J.dgR[e][j][c]);
          CAPTURE(dim, side, j, c, e, cs, hand);
          REQUIRE(std::abs(cs - hand) <= 1e-12 * scale);
        }
      }
}

} // namespace

TEST_CASE("flux kernel derivatives equal complex step", "[kernels]") {
  for (int dim = 2; dim <= 3; ++dim)
    for (unsigned seed = 1; seed <= 4; ++seed) {
      // flux_scale small: exercise the smoothed |F| near F = 0 too
      const Sample s = random_sample(dim, seed, seed == 4 ? 1e-4 : 1.0);
      const auto g = lift(s.g);
      const auto p = lift(s.p);
      FluxJacobian J;
      SECTION("interior " + std::to_string(dim) + "D seed " + std::to_string(seed)) {
        interior_flux_dw(dim, s.L, s.R, s.g, s.p, J);
        compare(
            dim, s,
            [&](const auto &L, const auto &R, cplx *M) { interior_flux(dim, L, R, g, p, M); }, J,
            true);
      }
      SECTION("velocity Dirichlet " + std::to_string(dim) + "D seed " + std::to_string(seed)) {
        velocity_dirichlet_flux_dw(dim, s.L, s.g, s.p, s.ub, J);
        const Vec3<cplx> ub(s.ub[0], s.ub[1], s.ub[2]);
        compare(
            dim, s,
            [&](const auto &L, const auto &, cplx *M) {
              velocity_dirichlet_flux(dim, L, g, p, ub, M);
            },
            J, false);
      }
      SECTION("pressure outlet " + std::to_string(dim) + "D seed " + std::to_string(seed)) {
        pressure_outlet_flux_dw(dim, s.L, s.g, s.p, s.pb, J);
        compare(
            dim, s,
            [&](const auto &L, const auto &, cplx *M) {
              pressure_outlet_flux(dim, L, g, p, cplx(s.pb), M);
            },
            J, false);
      }
      SECTION("slip " + std::to_string(dim) + "D seed " + std::to_string(seed)) {
        slip_flux_dw(dim, s.L, s.g, s.p, J);
        compare(
            dim, s, [&](const auto &L, const auto &, cplx *M) { slip_flux(dim, L, g, p, M); }, J,
            false);
      }
    }
}

TEST_CASE("interior flux is exact for a uniform flow with linear pressure", "[kernels]") {
  // u = U (constant), p = a + b . x: the stabilization vanishes, F = U . S, the momentum
  // flux is rho (U . S) U + p(x_f) S up to the smoothing of |F|
  for (int dim = 2; dim <= 3; ++dim) {
    Sample s = random_sample(dim, 9);
    const Vec3<double> U(0.7, -0.2, dim == 3 ? 0.1 : 0.0), b(0.3, 0.5, dim == 3 ? -0.4 : 0.0);
    const double a = 0.9;
    for (auto *cell : {&s.L, &s.R}) {
      const Vec3<double> &x = cell == &s.L ? s.g.xL : s.g.xR;
      cell->w[0] = a + dot(b, x);
      for (int c = 0; c < 3; ++c) cell->g[0][c] = b[c];
      for (int m = 1; m <= dim; ++m) {
        cell->w[m] = U[m - 1];
        for (int c = 0; c < 3; ++c) cell->g[m][c] = 0;
      }
    }
    s.p.eps = 0;
    double M[kMaxVars];
    interior_flux(dim, s.L, s.R, s.g, s.p, M);
    const double F = dot(U, s.g.S);
    REQUIRE(M[0] == Approx(F).epsilon(1e-14));
    const double pf = a + dot(b, s.g.xf);
    for (int m = 1; m <= dim; ++m)
      REQUIRE(M[m] ==
              Approx(s.p.rho * F * U[m - 1] + pf * s.g.S[m - 1]).epsilon(1e-13).margin(1e-14));
  }
}
