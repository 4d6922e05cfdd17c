// Prescribed boundary velocity: the reverse mode against complex step for every input
// (parameters, face centroid, face area vector) and every boundary type, uniform and
// parabolic profiles, 2D and 3D; the forward values against the closed forms; type names.
#include "karman/physics/boundary_kernels.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <random>

using namespace karman;
using namespace karman::physics;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30;

Vec3<cplx> lift(const Vec3<double> &v) {
  return Vec3<cplx>(v[0], v[1], v[2]);
}

// The scalar ubar . u_b as a function of the 3 + 3 + 3 + 3 real inputs
// (U, omega, speed, amplitude, x_f, S), perturbed by i h in input j.
double complex_step(const BoundaryShape &b, const BoundaryParameters<double> &a,
                    const Vec3<double> &xf, const Vec3<double> &S, const Vec3<double> &ubar,
                    int j) {
  BoundaryParameters<cplx> ac;
  ac.velocity = lift(a.velocity);
  ac.omega = a.omega, ac.speed = a.speed, ac.amplitude = a.amplitude;
  Vec3<cplx> xc = lift(xf), Sc = lift(S);
  const cplx ih(0, h);
  if (j < 3)
    ac.velocity[j] += ih;
  else if (j == 3)
    ac.omega += ih;
  else if (j == 4)
    ac.speed += ih;
  else if (j == 5)
    ac.amplitude += ih;
  else if (j < 9)
    xc[j - 6] += ih;
  else
    Sc[j - 9] += ih;
  const Vec3<cplx> u = boundary_velocity(b, ac, xc, Sc);
  return dot(lift(ubar), u).imag() / h;
}

} // namespace

TEST_CASE("boundary velocity reverse mode equals complex step", "[kernels][boundary]") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int dim : {2, 3})
    for (BoundaryType type : {BoundaryType::Wall, BoundaryType::VelocityInlet,
                              BoundaryType::BlowingSuction, BoundaryType::FarField})
      for (int parabolic = 0; parabolic < 2; ++parabolic)
        for (int given_direction = 0; given_direction < 2; ++given_direction) {
          BoundaryShape b;
          b.type = type;
          b.center = Vec3<double>(0.2 * u(gen), 0.3 * u(gen), 0.0);
          if (given_direction) {
            b.direction = Vec3<double>(0.8, 0.6 * u(gen), dim == 3 ? 0.3 * u(gen) : 0.0);
            b.direction = (1.0 / norm(b.direction)) * b.direction;
          }
          b.profile.parabolic = parabolic == 1;
          b.profile.axis[0] = 1, b.profile.lo[0] = -0.5, b.profile.hi[0] = 1.5;
          if (dim == 3) b.profile.axis[1] = 2, b.profile.lo[1] = -1, b.profile.hi[1] = 1.2;
          BoundaryParameters<double> a;
          a.velocity = Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
          a.omega = u(gen), a.speed = 1 + u(gen), a.amplitude = u(gen);
          const Vec3<double> xf(u(gen), 0.5 * u(gen), dim == 3 ? 0.5 * u(gen) : 0.0);
          const Vec3<double> S(0.3 + u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
          const Vec3<double> ubar(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
          BoundaryParameters<double> abar;
          Vec3<double> xfbar, Sbar;
          boundary_velocity_reverse(b, a, xf, S, ubar, &abar, &xfbar, &Sbar);
          const double reverse[12] = {abar.velocity[0], abar.velocity[1], abar.velocity[2],
                                      abar.omega,       abar.speed,       abar.amplitude,
                                      xfbar[0],         xfbar[1],         xfbar[2],
                                      Sbar[0],          Sbar[1],          Sbar[2]};
          for (int j = 0; j < 12; ++j) {
            CAPTURE(dim, boundary_type_name(type), parabolic, given_direction, j);
            const double cs = complex_step(b, a, xf, S, ubar, j);
            CHECK(reverse[j] == Approx(cs).margin(1e-13).epsilon(1e-12));
          }
        }
}

TEST_CASE("boundary velocity: closed forms and type names", "[kernels][boundary]") {
  BoundaryShape wall;
  wall.center = Vec3<double>(1, 2, 0);
  BoundaryParameters<double> a;
  a.velocity = Vec3<double>(0.5, 0, 0), a.omega = 2, a.speed = 3, a.amplitude = 0.25;
  const Vec3<double> x(2, 2, 0), S(0, -2, 0);
  const Vec3<double> uw = boundary_velocity(wall, a, x, S); // U + omega e_z x (1, 0, 0)
  CHECK(uw[0] == Approx(0.5));
  CHECK(uw[1] == Approx(2.0));
  BoundaryShape inlet;
  inlet.type = BoundaryType::VelocityInlet;
  inlet.profile.parabolic = true, inlet.profile.axis[0] = 0;
  inlet.profile.lo[0] = 1, inlet.profile.hi[0] = 3;          // s = 0.5 at x = 2: peak
  const Vec3<double> ui = boundary_velocity(inlet, a, x, S); // 3 * 1 * (-S/|S|)
  CHECK(ui[0] == Approx(0.0).margin(1e-15));
  CHECK(ui[1] == Approx(3.0));
  BoundaryShape jet;
  jet.type = BoundaryType::BlowingSuction;
  const Vec3<double> uj = boundary_velocity(jet, a, x, S); // -0.25 * S/|S|: into the fluid
  CHECK(uj[1] == Approx(0.25));
  BoundaryShape outlet;
  outlet.type = BoundaryType::PressureOutlet;
  CHECK(norm(boundary_velocity(outlet, a, x, S)) == 0.0);
  for (BoundaryType t :
       {BoundaryType::Wall, BoundaryType::VelocityInlet, BoundaryType::BlowingSuction,
        BoundaryType::PressureOutlet, BoundaryType::Symmetry, BoundaryType::FarField}) {
    BoundaryType back;
    REQUIRE(parse_boundary_type(boundary_type_name(t), &back));
    CHECK(back == t);
  }
  BoundaryType none;
  CHECK_FALSE(parse_boundary_type("inlet", &none));
  CHECK(is_wall(BoundaryType::BlowingSuction));
  CHECK_FALSE(is_wall(BoundaryType::FarField));
}
