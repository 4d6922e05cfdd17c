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
  CellState<double> L{}, R{};
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
  s.p.upwind = seed % 2 == 1 ? 1.0 : 0.35; // full upwind and a centred/upwind blend
  // the convected values' reconstruction: the gradient's (blend 0) and the blended one
  s.p.blend = seed == 2 || seed == 4 || seed == 5 ? 0.5 : 0.0;
  // the upwind dissipation along the centroids (solver.dissipation centroids)
  s.p.centroid_dissipation = seed == 2 || seed == 3;
  s.ub = Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
  return s;
}

template <typename T> CellState<T> lift(const CellState<double> &s) {
  CellState<T> o{};
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
  o.upwind = p.upwind, o.blend = p.blend, o.centroid_dissipation = p.centroid_dissipation;
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
    for (unsigned seed = 1; seed <= 5; ++seed) {
      // flux_scale small: exercise the smoothed |F| near F = 0 too (seeds 4, 5)
      const Sample s = random_sample(dim, seed, seed >= 4 ? 1e-4 : 1.0);
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

TEST_CASE("flux kernels: dM/dnu and the transposed stress equal complex step", "[kernels]") {
  // the viscosity of a face varies with an eddy viscosity: dM/dnu of every kind of face, and the
  // transposed stress -mu ((grad u)^T)_f S of interior faces (its _dw and _reverse)
  for (int dim = 2; dim <= 3; ++dim)
    for (unsigned seed = 1; seed <= 5; ++seed) {
      CAPTURE(dim, seed);
      const Sample s = random_sample(dim, seed, seed >= 4 ? 1e-4 : 1.0);
      const auto g = lift(s.g);
      auto p = lift(s.p);
      p.nu += cplx(0, h);
      const CellState<cplx> L = lift<cplx>(s.L), R = lift<cplx>(s.R);
      const Vec3<cplx> ub(s.ub[0], s.ub[1], s.ub[2]);
      const int nv = dim + 1;
      for (int kind = 0; kind < 4; ++kind) {
        cplx M[kMaxVars];
        double dM[kMaxVars];
        if (kind == 0) {
          interior_flux(dim, L, R, g, p, M);
          interior_flux_dnu(dim, s.L, s.R, s.g, s.p, dM);
        } else if (kind == 1) {
          velocity_dirichlet_flux(dim, L, g, p, ub, M);
          velocity_dirichlet_flux_dnu(dim, s.L, s.g, s.p, s.ub, dM);
        } else if (kind == 2) {
          pressure_outlet_flux(dim, L, g, p, cplx(s.pb), M);
          pressure_outlet_flux_dnu(dim, s.L, s.g, s.p, s.pb, dM);
        } else {
          slip_flux(dim, L, g, p, M);
          slip_flux_dnu(dim, s.L, s.g, s.p, dM);
        }
        for (int e = 0; e < nv; ++e) {
          CAPTURE(kind, e, M[e].imag() / h, dM[e]);
          CHECK(std::abs(M[e].imag() / h - dM[e]) <= 1e-12 * (1 + std::abs(dM[e])));
        }
      }
      // the transposed stress: derivatives (gradient columns)
      const double mu = 0.037;
      FluxJacobian J;
      J.clear(nv);
      stress_transpose_flux_dw(dim, s.g, mu, J);
      compare(
          dim, s,
          [&](const auto &Lc, const auto &Rc, cplx *M) {
            for (int e = 0; e < kMaxVars; ++e) M[e] = 0;
            stress_transpose_flux(dim, Lc, Rc, g, cplx(mu), M);
          },
          J, true);
      // its reverse for weights lambda: every gradient entry, S and mu against complex step
      const double lambda[kMaxVars] = {0, 0.7, -0.4, 0.9, 0, 0};
      FluxBar bar;
      double mu_bar = 0;
      stress_transpose_flux_reverse(dim, s.L, s.R, s.g, mu, lambda, bar, &mu_bar);
      auto weighted = [&](const CellState<cplx> &Lc, const CellState<cplx> &Rc,
                          const FaceGeometry<cplx> &gc, cplx m) {
        cplx M[kMaxVars] = {};
        stress_transpose_flux(dim, Lc, Rc, gc, m, M);
        cplx w = 0;
        for (int e = 1; e < nv; ++e) w += lambda[e] * M[e];
        return w.imag() / h;
      };
      CHECK(std::abs(weighted(lift<cplx>(s.L), lift<cplx>(s.R), lift(s.g), cplx(mu, h)) - mu_bar) <=
            1e-12 * (1 + std::abs(mu_bar)));
      for (int k = 1; k < nv; ++k)
        for (int c = 0; c < dim; ++c) {
          CellState<cplx> Lc = lift<cplx>(s.L), Rc = lift<cplx>(s.R);
          Lc.g[k][c] += cplx(0, h);
          CHECK(std::abs(weighted(Lc, lift<cplx>(s.R), lift(s.g), cplx(mu)) - bar.L.g[k][c]) <=
                1e-12);
          Rc.g[k][c] += cplx(0, h);
          CHECK(std::abs(weighted(lift<cplx>(s.L), Rc, lift(s.g), cplx(mu)) - bar.R.g[k][c]) <=
                1e-12);
        }
      for (int c = 0; c < dim; ++c) {
        FaceGeometry<cplx> gc = lift(s.g);
        gc.S[c] += cplx(0, h);
        CHECK(std::abs(weighted(lift<cplx>(s.L), lift<cplx>(s.R), gc, cplx(mu)) - bar.S[c]) <=
              1e-12);
      }
    }
}

TEST_CASE("the transposed stress of a linear velocity field is mu A^T S", "[kernels]") {
  // u = A x: grad u = A in both cells, so -mu ((grad u)^T)_f S = -mu A^T S exactly; with the
  // Laplacian part mu A S of the viscous flux that makes the full stress mu (A + A^T) S
  const double A[3][3] = {{0.3, -1.2, 0.5}, {0.7, -0.3, 0.2}, {-0.4, 0.9, 0.0}};
  for (int dim = 2; dim <= 3; ++dim) {
    const Sample s = random_sample(dim, 3);
    CellState<double> L = s.L, R = s.R;
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) L.g[1 + i][j] = R.g[1 + i][j] = A[i][j];
    double M[kMaxVars] = {};
    const double mu = 0.05;
    stress_transpose_flux(dim, L, R, s.g, mu, M);
    for (int i = 0; i < dim; ++i) {
      double expected = 0;
      for (int j = 0; j < dim; ++j) expected -= mu * A[j][i] * s.g.S[j];
      CHECK(M[1 + i] == Approx(expected).epsilon(1e-14));
    }
    CHECK(M[0] == 0.0);
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

TEST_CASE("the blended reconstruction of the convected velocity: exact for fields linear along "
          "the centroids, half the gradient's extrapolation across them",
          "[kernels]") {
  // u linear with its exact gradients, convected from the left (F >> 0, b = 1, eps = 0):
  // the blend changes the momentum flux by rho F beta G_L . (s_L d - r_L), zero where x_f lies
  // on the line of the centroids (the face moved there) and for fields constant across d
  for (int dim = 2; dim <= 3; ++dim) {
    Sample s = random_sample(dim, 13);
    const Vec3<double> A[3] = {Vec3<double>(0.3, -0.2, 0.1), Vec3<double>(0.5, 0.4, -0.3),
                               Vec3<double>(-0.1, 0.2, 0.6)};
    const Vec3<double> U(2.0, 0.3, dim == 3 ? 0.2 : 0.0);
    for (auto *cell : {&s.L, &s.R}) {
      const Vec3<double> &x = cell == &s.L ? s.g.xL : s.g.xR;
      for (int m = 1; m <= dim; ++m) {
        cell->w[m] = U[m - 1] + dot(A[m - 1], x);
        for (int c = 0; c < 3; ++c) cell->g[m][c] = c < dim ? A[m - 1][c] : 0.0;
      }
    }
    s.p.eps = 0, s.p.upwind = 1;
    const auto change = [&](double *dM) {
      double Mg[kMaxVars], Mb[kMaxVars];
      s.p.blend = 0;
      interior_flux(dim, s.L, s.R, s.g, s.p, Mg);
      s.p.blend = 0.5;
      interior_flux(dim, s.L, s.R, s.g, s.p, Mb);
      REQUIRE(Mg[0] > 0.1);
      REQUIRE(Mb[0] == Mg[0]); // F, like p_f, keeps the gradient's reconstruction
      for (int m = 1; m <= dim; ++m) dM[m] = Mb[m] - Mg[m];
      return Mg[0];
    };
    double dM[kMaxVars];
    const double F = change(dM);
    const Vec3<double> d = s.g.xR - s.g.xL, rL = s.g.xf - s.g.xL;
    const Vec3<double> across = (dot(rL, d) / dot(d, d)) * d - rL;
    REQUIRE(norm(across) > 0.01);
    for (int m = 1; m <= dim; ++m) {
      CAPTURE(dim, m);
      CHECK(dM[m] == Approx(s.p.rho * F * 0.5 * dot(A[m - 1], across)).epsilon(1e-10));
      CHECK(std::abs(dM[m]) > 1e-4);
    }
    s.g.xf = s.g.xL + (dot(rL, d) / dot(d, d)) * d; // the face centroid on the centroids' line
    change(dM);
    for (int m = 1; m <= dim; ++m) CHECK(std::abs(dM[m]) <= 1e-14);
  }
}

TEST_CASE("the upwind fraction blends the centred and the upwind convected velocity", "[kernels]") {
  // M(b) = M(0) + b (M(1) - M(0)); with b = 0 the convected velocity is the centred mean
  // (u_L^f + u_R^f)/2 whatever the smoothing of |F|, and b = 1 takes u_L^f for F >> 0
  for (int dim = 2; dim <= 3; ++dim) {
    Sample s = random_sample(dim, 11);
    double M0[kMaxVars], M1[kMaxVars], Mb[kMaxVars], M0e[kMaxVars], Mc[kMaxVars];
    s.p.upwind = 0;
    interior_flux(dim, s.L, s.R, s.g, s.p, M0);
    s.p.eps = 0.5;
    interior_flux(dim, s.L, s.R, s.g, s.p, M0e);
    s.p.eps = 0;
    s.p.upwind = 1;
    interior_flux(dim, s.L, s.R, s.g, s.p, M1);
    s.p.upwind = 0.3;
    interior_flux(dim, s.L, s.R, s.g, s.p, Mb);
    // the same face with the convected velocity replaced by the upwind reconstruction:
    // rho F (u_up - u_mean) is the difference M(1) - M(0)
    const double F = M0[0];
    REQUIRE(std::abs(F) > 0.1);
    for (int m = 1; m <= dim; ++m) {
      const Vec3<double> rL = s.g.xf - s.g.xL, rR = s.g.xf - s.g.xR;
      const double fl = s.L.w[m] + dot(Vec3<double>(s.L.g[m][0], s.L.g[m][1], s.L.g[m][2]), rL);
      const double fr = s.R.w[m] + dot(Vec3<double>(s.R.g[m][0], s.R.g[m][1], s.R.g[m][2]), rR);
      const double up = F > 0 ? fl : fr;
      REQUIRE(M0e[m] == Approx(M0[m]).epsilon(1e-14));
      REQUIRE(M1[m] - M0[m] == Approx(s.p.rho * F * (up - 0.5 * (fl + fr))).epsilon(1e-12));
      Mc[m] = M0[m] + 0.3 * (M1[m] - M0[m]);
      REQUIRE(Mb[m] == Approx(Mc[m]).epsilon(1e-13));
    }
    REQUIRE(Mb[0] == M0[0]);
  }
}

TEST_CASE("the upwind dissipation along the centroids: the face's where the face centroid lies "
          "midway between the cell centroids, zero for linear fields",
          "[kernels]") {
  // rho [F (u_L^f + u_R^f)/2 - b a/2 ((u_R - u_L) - (G_L + G_R)/2 . d)] against
  // rho [F (u_L^f + u_R^f)/2 + b a/2 (u_L^f - u_R^f)] (the gradient's reconstruction, blend 0)
  for (int dim = 2; dim <= 3; ++dim) {
    Sample s = random_sample(dim, 17);
    s.p.blend = 0, s.p.upwind = 1;
    const auto flux = [&](bool centroids, double *M) {
      s.p.centroid_dissipation = centroids;
      interior_flux(dim, s.L, s.R, s.g, s.p, M);
    };
    double Mf[kMaxVars], Mc[kMaxVars];
    flux(false, Mf), flux(true, Mc);
    REQUIRE(Mc[0] == Mf[0]); // (the mass flux keeps its form)
    double differs = 0;
    for (int m = 1; m <= dim; ++m) differs = std::max(differs, std::abs(Mc[m] - Mf[m]));
    CHECK(differs > 1e-3); // a face centroid off the line of the centroids
    s.g.xf = 0.5 * (s.g.xL + s.g.xR);
    flux(false, Mf), flux(true, Mc);
    for (int m = 1; m <= dim; ++m) CHECK(Mc[m] == Approx(Mf[m]).epsilon(1e-13));
    // a linear field with its exact gradients: no dissipation, M(b = 1) = M(b = 0), while the
    // face's form dissipates across the skewed face
    s = random_sample(dim, 17);
    s.p.blend = 0.5;
    const Vec3<double> A(0.4, -0.3, dim == 3 ? 0.2 : 0.0);
    for (auto *cell : {&s.L, &s.R}) {
      const Vec3<double> &x = cell == &s.L ? s.g.xL : s.g.xR;
      for (int m = 1; m <= dim; ++m) {
        cell->w[m] = 0.1 * m + dot(A, x);
        for (int c = 0; c < 3; ++c) cell->g[m][c] = A[c];
      }
    }
    double M0[kMaxVars], M1[kMaxVars];
    s.p.upwind = 0;
    flux(true, M0);
    s.p.upwind = 1;
    flux(true, M1);
    for (int m = 1; m <= dim; ++m) CHECK(M1[m] == Approx(M0[m]).epsilon(1e-13));
  }
}

namespace {

// All kernel inputs, lifted to complex with the perturbation i h delta.
struct Lifted {
  CellState<cplx> L{}, R{};
  FaceGeometry<cplx> g;
  FluxParameters<cplx> p;
  Vec3<cplx> ub;
  cplx pb;
};

struct Direction {
  CellState<double> L{}, R{};
  Vec3<double> S, xf, xL, xR, ub;
  double pb = 0, nu = 0;
};

Direction random_direction(int dim, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Direction d;
  for (int k = 0; k <= dim; ++k) {
    d.L.w[k] = u(gen), d.R.w[k] = u(gen);
    for (int c = 0; c < dim; ++c) d.L.g[k][c] = u(gen), d.R.g[k][c] = u(gen);
  }
  for (auto *v : {&d.S, &d.xf, &d.xL, &d.xR, &d.ub})
    for (int c = 0; c < dim; ++c) (*v)[c] = 0.1 * u(gen);
  d.pb = u(gen);
  d.nu = 0.01 * u(gen);
  return d;
}

Lifted lift_all(const Sample &s, const Direction &d) {
  Lifted o;
  for (int k = 0; k < kMaxVars; ++k) {
    o.L.w[k] = cplx(s.L.w[k], h * d.L.w[k]);
    o.R.w[k] = cplx(s.R.w[k], h * d.R.w[k]);
    for (int c = 0; c < 3; ++c) {
      o.L.g[k][c] = cplx(s.L.g[k][c], h * d.L.g[k][c]);
      o.R.g[k][c] = cplx(s.R.g[k][c], h * d.R.g[k][c]);
    }
  }
  for (int c = 0; c < 3; ++c) {
    o.g.S[c] = cplx(s.g.S[c], h * d.S[c]);
    o.g.xf[c] = cplx(s.g.xf[c], h * d.xf[c]);
    o.g.xL[c] = cplx(s.g.xL[c], h * d.xL[c]);
    o.g.xR[c] = cplx(s.g.xR[c], h * d.xR[c]);
    o.ub[c] = cplx(s.ub[c], h * d.ub[c]);
  }
  o.p = lift(s.p);
  o.p.nu = cplx(s.p.nu, h * d.nu);
  o.pb = cplx(s.pb, h * d.pb);
  return o;
}

double pairing(int dim, const FluxBar &b, const Direction &d) {
  double s = b.pb * d.pb + b.nu * d.nu;
  for (int k = 0; k <= dim; ++k) {
    s += b.L.w[k] * d.L.w[k] + b.R.w[k] * d.R.w[k];
    for (int c = 0; c < 3; ++c) s += b.L.g[k][c] * d.L.g[k][c] + b.R.g[k][c] * d.R.g[k][c];
  }
  s += dot(b.S, d.S) + dot(b.xf, d.xf) + dot(b.xL, d.xL) + dot(b.xR, d.xR) + dot(b.ub, d.ub);
  return s;
}

} // namespace

TEST_CASE("flux kernel reverse mode (all inputs: states, gradients, geometry, boundary data, "
          "viscosity) equals "
          "complex step",
          "[kernels][adjoint]") {
  for (int dim = 2; dim <= 3; ++dim)
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const Sample s = random_sample(dim, seed, seed >= 4 ? 1e-4 : 1.0);
      std::mt19937 gen(seed + 100);
      std::uniform_real_distribution<double> u(-1, 1);
      double lambda[kMaxVars] = {u(gen), u(gen), u(gen), u(gen)};
      for (unsigned trial = 0; trial < 3; ++trial) {
        const Direction d = random_direction(dim, 10 * seed + trial);
        const Lifted x = lift_all(s, d);
        auto check = [&](const char *name, const FluxBar &bar, const cplx *M) {
          double cs = 0;
          for (int k = 0; k <= dim; ++k) cs += lambda[k] * M[k].imag() / h;
          const double rev = pairing(dim, bar, d);
          CAPTURE(name, dim, seed, trial, rev, cs);
          REQUIRE(std::abs(rev - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
        };
        cplx M[kMaxVars];
        FluxBar bar;
        interior_flux(dim, x.L, x.R, x.g, x.p, M);
        interior_flux_reverse(dim, s.L, s.R, s.g, s.p, lambda, bar);
        check("interior", bar, M);
        bar = FluxBar();
        velocity_dirichlet_flux(dim, x.L, x.g, x.p, x.ub, M);
        velocity_dirichlet_flux_reverse(dim, s.L, s.g, s.p, s.ub, lambda, bar);
        check("velocity Dirichlet", bar, M);
        bar = FluxBar();
        pressure_outlet_flux(dim, x.L, x.g, x.p, x.pb, M);
        pressure_outlet_flux_reverse(dim, s.L, s.g, s.p, s.pb, lambda, bar);
        check("pressure outlet", bar, M);
        bar = FluxBar();
        slip_flux(dim, x.L, x.g, x.p, M);
        slip_flux_reverse(dim, s.L, s.g, s.p, lambda, bar);
        check("slip", bar, M);
        // the wall stress alone (forces): pf_bar pf + visc_bar . visc
        bar = FluxBar();
        cplx pf;
        Vec3<cplx> visc;
        dirichlet_face_stress(dim, x.L, x.g, x.p, x.ub, pf, visc);
        const Vec3<double> vb(lambda[1], lambda[2], dim == 3 ? lambda[3] : 0.0);
        dirichlet_face_stress_reverse(dim, s.L, s.g, s.p, s.ub, lambda[0], vb, bar);
        cplx stress[kMaxVars] = {pf, visc[0], visc[1], visc[2]};
        double lam_save[kMaxVars];
        std::copy(lambda, lambda + kMaxVars, lam_save);
        if (dim == 2) lambda[3] = 0; // visc has dim components
        check("wall stress", bar, stress);
        std::copy(lam_save, lam_save + kMaxVars, lambda);
      }
    }
}
