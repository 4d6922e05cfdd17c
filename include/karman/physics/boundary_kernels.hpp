// Prescribed boundary data of one boundary face: the boundary types of the case file and
// the velocity that a velocity-Dirichlet face imposes, with its reverse mode.
//
//   wall             u_b = U + omega e_z x (x_f - c)                      (translating, rotating)
//   velocity-inlet   u_b = s phi(x_f) e,   e = the given direction, or -S/|S| if none
//   blowing-suction  u_b = -a phi(x_f) S/|S|      (a > 0 blows into the fluid)
//   far-field        u_b = U_inf                  (on faces where U_inf . S < 0)
// with the profile phi(x) = 1 (uniform) or prod_i 4 s_i (1 - s_i),
// s_i = (x_{axis_i} - lo_i) / (hi_i - lo_i) (parabolic, peak 1 at the centre).
// pressure-outlet and symmetry faces prescribe no velocity.
//
// The differentiable inputs are the boundary parameters (U, omega, s, a at the current
// time) and the face geometry (x_f, S); the centre c, the direction e and the profile are
// fixed data.  boundary_velocity is templated on the scalar type (complex step in
// tests/unit/test_boundary_kernels.cpp); boundary_velocity_reverse maps an adjoint u_b_bar
// to the adjoints of the parameters, of x_f and of S.
#pragma once

#include "karman/core/vec3.hpp"

#include <string>

namespace karman::physics {

enum class BoundaryType { Wall, VelocityInlet, BlowingSuction, PressureOutlet, Symmetry, FarField };

/// The case-file name of a boundary type ("wall", "velocity-inlet", ...).
const char *boundary_type_name(BoundaryType type);
/// Parses a case-file boundary type; false if `name` is not one.
bool parse_boundary_type(const std::string &name, BoundaryType *type);
/// Walls in the sense of forces and surface output: no-slip walls and blowing/suction patches.
inline bool is_wall(BoundaryType type) {
  return type == BoundaryType::Wall || type == BoundaryType::BlowingSuction;
}

/// Velocity profile across an inlet or a jet.
struct VelocityProfile {
  bool parabolic = false;
  int axis[2] = {-1, -1}; ///< profile axes (-1: unused)
  double lo[2] = {0, 0}, hi[2] = {1, 1};
};

/// Fixed data of a boundary's prescribed velocity.
struct BoundaryShape {
  BoundaryType type = BoundaryType::Wall;
  Vec3<double> center;    ///< wall: centre of rotation
  Vec3<double> direction; ///< inlet: unit direction, or zero for the inward normal
  VelocityProfile profile;
};

/// Differentiable parameters of a boundary's prescribed velocity at one time.
template <typename T> struct BoundaryParameters {
  Vec3<T> velocity;   ///< wall translation U, or far-field U_inf
  T omega = T(0);     ///< wall rotation rate about e_z
  T speed = T(0);     ///< inlet speed (uniform value or parabolic peak)
  T amplitude = T(0); ///< blowing/suction normal velocity
};

/// Profile factor phi(x).
template <typename T> T profile_factor(const VelocityProfile &pr, const Vec3<T> &x) {
  T f = T(1);
  if (!pr.parabolic) return f;
  for (int i = 0; i < 2; ++i) {
    if (pr.axis[i] < 0) continue;
    const T s = (x[pr.axis[i]] - T(pr.lo[i])) / T(pr.hi[i] - pr.lo[i]);
    f *= T(4) * s * (T(1) - s);
  }
  return f;
}

/// d phi / dx.
Vec3<double> profile_factor_gradient(const VelocityProfile &pr, const Vec3<double> &x);

/// The velocity u_b that a face of a velocity-Dirichlet boundary imposes (zero for boundary
/// types that impose none).
template <typename T>
Vec3<T> boundary_velocity(const BoundaryShape &b, const BoundaryParameters<T> &a, const Vec3<T> &xf,
                          const Vec3<T> &S) {
  switch (b.type) {
  case BoundaryType::Wall: {
    const Vec3<T> r = xf - Vec3<T>(T(b.center[0]), T(b.center[1]), T(b.center[2]));
    return a.velocity + Vec3<T>(-a.omega * r[1], a.omega * r[0], T(0));
  }
  case BoundaryType::VelocityInlet: {
    const Vec3<T> n_out = (T(1) / norm(S)) * S;
    const Vec3<T> e = norm(b.direction) > 0
                          ? Vec3<T>(T(b.direction[0]), T(b.direction[1]), T(b.direction[2]))
                          : -n_out;
    return (a.speed * profile_factor(b.profile, xf)) * e;
  }
  case BoundaryType::BlowingSuction: {
    const Vec3<T> n_out = (T(1) / norm(S)) * S;
    return (-a.amplitude * profile_factor(b.profile, xf)) * n_out;
  }
  case BoundaryType::FarField:
    return a.velocity;
  case BoundaryType::PressureOutlet:
  case BoundaryType::Symmetry:
    break;
  }
  return Vec3<T>();
}

/// Reverse mode of boundary_velocity: adds (d u_b / d inputs)^T ubar to abar, xfbar and Sbar.
void boundary_velocity_reverse(const BoundaryShape &b, const BoundaryParameters<double> &a,
                               const Vec3<double> &xf, const Vec3<double> &S,
                               const Vec3<double> &ubar, BoundaryParameters<double> *abar,
                               Vec3<double> *xfbar, Vec3<double> *Sbar);

} // namespace karman::physics
