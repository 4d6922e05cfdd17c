// The boundary kernels (physics/boundary_kernels.hpp): each type's reverse mode against complex
// step for every input (its parameters, the face centroid, the face area vector), uniform and
// parabolic profiles, a given direction or the inward normal, 2D and 3D; the forward values
// against closed forms.
#include "karman/physics/boundary_kernels.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <functional>
#include <random>

using namespace karman;
using namespace karman::physics;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30;

Vec3<cplx> lift(const Vec3<double> &v) {
  return Vec3<cplx>(v[0], v[1], v[2]);
}

// The inputs of a kernel as one list: its scalar parameters (np of them), x_f, S.
struct Inputs {
  std::vector<double> p;
  Vec3<double> xf, S;
};

// d (ubar . u_b) / d input j by complex step, u_b = kernel(parameters, x_f, S).
double complex_step(const std::function<Vec3<cplx>(const std::vector<cplx> &, const Vec3<cplx> &,
                                                   const Vec3<cplx> &)> &kernel,
                    const Inputs &in, const Vec3<double> &ubar, std::size_t j) {
  std::vector<cplx> p(in.p.begin(), in.p.end());
  Vec3<cplx> xc = lift(in.xf), Sc = lift(in.S);
  const cplx ih(0, h);
  if (j < p.size())
    p[j] += ih;
  else if (j < p.size() + 3)
    xc[j - p.size()] += ih;
  else
    Sc[j - p.size() - 3] += ih;
  return dot(lift(ubar), kernel(p, xc, Sc)).imag() / h;
}

void check_reverse(const std::function<Vec3<cplx>(const std::vector<cplx> &, const Vec3<cplx> &,
                                                  const Vec3<cplx> &)> &kernel,
                   const Inputs &in, const Vec3<double> &ubar, const std::vector<double> &pbar,
                   const Vec3<double> &xfbar, const Vec3<double> &Sbar) {
  for (std::size_t j = 0; j < in.p.size() + 6; ++j) {
    CAPTURE(j);
    const double reverse = j < in.p.size()       ? pbar[j]
                           : j < in.p.size() + 3 ? xfbar[j - in.p.size()]
                                                 : Sbar[j - in.p.size() - 3];
    CHECK(reverse == Approx(complex_step(kernel, in, ubar, j)).margin(1e-13).epsilon(1e-12));
  }
}

} // namespace

TEST_CASE("boundary kernels: reverse mode equals complex step", "[kernels][boundary]") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int dim : {2, 3})
    for (int parabolic = 0; parabolic < 2; ++parabolic)
      for (int given_direction = 0; given_direction < 2; ++given_direction) {
        CAPTURE(dim, parabolic, given_direction);
        VelocityProfile pr;
        pr.parabolic = parabolic == 1;
        pr.axis[0] = 1, pr.lo[0] = -0.5, pr.hi[0] = 1.5;
        if (dim == 3) pr.axis[1] = 2, pr.lo[1] = -1, pr.hi[1] = 1.2;
        Vec3<double> direction;
        if (given_direction) {
          direction = Vec3<double>(0.8, 0.6 * u(gen), dim == 3 ? 0.3 * u(gen) : 0.0);
          direction = (1.0 / norm(direction)) * direction;
        }
        const Vec3<double> center(0.2 * u(gen), 0.3 * u(gen), 0.0);
        const Vec3<double> xf(u(gen), 0.5 * u(gen), dim == 3 ? 0.5 * u(gen) : 0.0);
        const Vec3<double> S(0.3 + u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
        const Vec3<double> ubar(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
        SECTION("wall") {
          const Inputs in{{u(gen), u(gen), dim == 3 ? u(gen) : 0.0, u(gen)}, xf, S};
          Vec3<double> Ubar, xfbar, Sbar;
          double omega_bar = 0;
          wall_velocity_reverse(in.p[3], center, xf, ubar, &Ubar, &omega_bar, &xfbar);
          check_reverse(
              [&](const std::vector<cplx> &p, const Vec3<cplx> &x, const Vec3<cplx> &) {
                return wall_velocity(Vec3<cplx>(p[0], p[1], p[2]), p[3], center, x);
              },
              in, ubar, {Ubar[0], Ubar[1], Ubar[2], omega_bar}, xfbar, Sbar);
        }
        SECTION("velocity inlet") {
          const Inputs in{{1 + u(gen)}, xf, S};
          double speed_bar = 0;
          Vec3<double> xfbar, Sbar;
          inlet_velocity_reverse(in.p[0], direction, pr, xf, S, ubar, &speed_bar, &xfbar, &Sbar);
          check_reverse(
              [&](const std::vector<cplx> &p, const Vec3<cplx> &x, const Vec3<cplx> &s) {
                return inlet_velocity(p[0], direction, pr, x, s);
              },
              in, ubar, {speed_bar}, xfbar, Sbar);
        }
        SECTION("blowing-suction") {
          const Inputs in{{u(gen)}, xf, S};
          double amplitude_bar = 0;
          Vec3<double> xfbar, Sbar;
          jet_velocity_reverse(in.p[0], pr, xf, S, ubar, &amplitude_bar, &xfbar, &Sbar);
          check_reverse([&](const std::vector<cplx> &p, const Vec3<cplx> &x,
                            const Vec3<cplx> &s) { return jet_velocity(p[0], pr, x, s); },
                        in, ubar, {amplitude_bar}, xfbar, Sbar);
        }
        SECTION("far field turned by the angle of attack") {
          const Inputs in{{u(gen), u(gen), dim == 3 ? u(gen) : 0.0, 30 * u(gen)}, xf, S};
          Vec3<double> Ubar, xfbar, Sbar;
          double alpha_bar = 0;
          const Vec3<double> U(in.p[0], in.p[1], in.p[2]);
          turned_reverse(U, in.p[3], ubar, &Ubar, &alpha_bar);
          check_reverse(
              [&](const std::vector<cplx> &p, const Vec3<cplx> &, const Vec3<cplx> &) {
                return turned(Vec3<cplx>(p[0], p[1], p[2]), p[3]);
              },
              in, ubar, {Ubar[0], Ubar[1], Ubar[2], alpha_bar}, xfbar, Sbar);
        }
      }
}

TEST_CASE("boundary kernels: closed forms", "[kernels][boundary]") {
  const Vec3<double> x(2, 2, 0), S(0, -2, 0);
  // U + omega e_z x (x - c) = (0.5, 0) + 2 e_z x (1, 0)
  const Vec3<double> uw = wall_velocity(Vec3<double>(0.5, 0, 0), 2.0, Vec3<double>(1, 2, 0), x);
  CHECK(uw[0] == Approx(0.5));
  CHECK(uw[1] == Approx(2.0));
  VelocityProfile pr;
  pr.parabolic = true, pr.axis[0] = 0, pr.lo[0] = 1, pr.hi[0] = 3;       // s = 0.5 at x = 2: peak
  const Vec3<double> ui = inlet_velocity(3.0, Vec3<double>(), pr, x, S); // 3 * 1 * (-S/|S|)
  CHECK(ui[0] == Approx(0.0).margin(1e-15));
  CHECK(ui[1] == Approx(3.0));
  const Vec3<double> ue = inlet_velocity(3.0, Vec3<double>(1, 0, 0), VelocityProfile(), x, S);
  CHECK(ue[0] == Approx(3.0));                                         // a given direction
  const Vec3<double> uj = jet_velocity(0.25, VelocityProfile(), x, S); // -0.25 S/|S|: into fluid
  CHECK(uj[1] == Approx(0.25));
  CHECK(profile_factor(pr, Vec3<double>(1.5, 0, 0)) == Approx(0.75));
  // (1, 0) turned by 30 degrees: (cos 30, sin 30); z unchanged
  const Vec3<double> t = turned(Vec3<double>(1, 0, 2), 30.0);
  CHECK(t[0] == Approx(std::sqrt(3.0) / 2));
  CHECK(t[1] == Approx(0.5));
  CHECK(t[2] == Approx(2.0));
}
