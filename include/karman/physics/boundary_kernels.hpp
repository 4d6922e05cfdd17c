// The velocity that a face of a velocity-Dirichlet boundary prescribes, one kernel per boundary
// type, each with its reverse mode beside it:
//   wall             u_b = U + omega e_z x (x_f - c)                      (translating, rotating)
//   velocity-inlet   u_b = s phi(x_f) e,   e = the given direction, or -S/|S| if none
//   blowing-suction  u_b = -a phi(x_f) S/|S|      (a > 0 blows into the fluid)
//   far-field        u_b = R(alpha) U_inf         (on faces where u_b . S < 0)
// with the profile phi(x) = 1 (uniform) or prod_i 4 s_i (1 - s_i),
// s_i = (x_{axis_i} - lo_i) / (hi_i - lo_i) (parabolic, peak 1 at the centre), and
// R(alpha) the turn by the angle of attack alpha [degrees] about the z axis (turned(); the force
// objectives and monitors turn their drag and lift directions with it).
// The differentiable inputs are the boundary parameters (U, omega, s, a at the current time) and
// the face geometry (x_f, S); the centre c, the direction e and the profile are fixed data.  The
// kernels are templated on the scalar type (complex step in tests/unit/test_boundary_kernels.cpp);
// each *_reverse maps an adjoint ubar to the adjoints of its parameters, of x_f and of S (+=).
// The boundary types themselves (keys, face kinds, parameters) are units of the discretization
// (discretization/flow_boundaries.hpp).
#pragma once

#include "karman/core/vec3.hpp"

namespace karman::physics {

/// Velocity profile across an inlet or a jet.
struct VelocityProfile {
  bool parabolic = false;
  int axis[2] = {-1, -1}; ///< profile axes (-1: unused)
  double lo[2] = {0, 0}, hi[2] = {1, 1};
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

/// nbar -> Sbar for n = S / |S| (added).
inline void unit_normal_reverse(const Vec3<double> &S, const Vec3<double> &nbar,
                                Vec3<double> &Sbar) {
  const double A = norm(S);
  const Vec3<double> n = (1.0 / A) * S;
  Sbar += (1.0 / A) * (nbar - dot(nbar, n) * n);
}

// ------------------------------------------------------------------------------------- wall

template <typename T>
Vec3<T> wall_velocity(const Vec3<T> &U, const T &omega, const Vec3<double> &center,
                      const Vec3<T> &xf) {
  const Vec3<T> r = xf - Vec3<T>(T(center[0]), T(center[1]), T(center[2]));
  return U + Vec3<T>(-omega * r[1], omega * r[0], T(0));
}

inline void wall_velocity_reverse(const double &omega, const Vec3<double> &center,
                                  const Vec3<double> &xf, const Vec3<double> &ubar,
                                  Vec3<double> *Ubar, double *omega_bar, Vec3<double> *xfbar) {
  const Vec3<double> r = xf - center;
  *Ubar += ubar;
  *omega_bar += -r[1] * ubar[0] + r[0] * ubar[1];
  *xfbar += Vec3<double>(omega * ubar[1], -omega * ubar[0], 0.0);
}

// --------------------------------------------------------------------------- velocity inlet

/// `direction` a unit vector, or zero for the inward normal -S/|S|.
template <typename T>
Vec3<T> inlet_velocity(const T &speed, const Vec3<double> &direction, const VelocityProfile &pr,
                       const Vec3<T> &xf, const Vec3<T> &S) {
  const Vec3<T> n_out = (T(1) / norm(S)) * S;
  const Vec3<T> e =
      norm(direction) > 0 ? Vec3<T>(T(direction[0]), T(direction[1]), T(direction[2])) : -n_out;
  return (speed * profile_factor(pr, xf)) * e;
}

inline void inlet_velocity_reverse(const double &speed, const Vec3<double> &direction,
                                   const VelocityProfile &pr, const Vec3<double> &xf,
                                   const Vec3<double> &S, const Vec3<double> &ubar,
                                   double *speed_bar, Vec3<double> *xfbar, Vec3<double> *Sbar) {
  const bool normal = !(norm(direction) > 0);
  const Vec3<double> e = normal ? -((1.0 / norm(S)) * S) : direction;
  const double phi = profile_factor(pr, xf);
  *speed_bar += phi * dot(ubar, e);
  *xfbar += (speed * dot(ubar, e)) * profile_factor_gradient(pr, xf);
  if (normal) unit_normal_reverse(S, (-speed * phi) * ubar, *Sbar);
}

// -------------------------------------------------------------------------- blowing/suction

template <typename T>
Vec3<T> jet_velocity(const T &amplitude, const VelocityProfile &pr, const Vec3<T> &xf,
                     const Vec3<T> &S) {
  const Vec3<T> n_out = (T(1) / norm(S)) * S;
  return (-amplitude * profile_factor(pr, xf)) * n_out;
}

inline void jet_velocity_reverse(const double &amplitude, const VelocityProfile &pr,
                                 const Vec3<double> &xf, const Vec3<double> &S,
                                 const Vec3<double> &ubar, double *amplitude_bar,
                                 Vec3<double> *xfbar, Vec3<double> *Sbar) {
  const Vec3<double> n = (1.0 / norm(S)) * S;
  const double phi = profile_factor(pr, xf);
  *amplitude_bar += -phi * dot(ubar, n);
  *xfbar += (-amplitude * dot(ubar, n)) * profile_factor_gradient(pr, xf);
  unit_normal_reverse(S, (-amplitude * phi) * ubar, *Sbar);
}

// ---------------------------------------------------------------------- angle of attack

/// R(alpha) v: v turned by alpha degrees about the z axis (x toward y).
template <typename T> Vec3<T> turned(const Vec3<T> &v, const T &alpha_degrees) {
  using std::cos, std::sin;
  const T a = alpha_degrees * T(0.017453292519943295); // pi / 180
  const T c = cos(a), s = sin(a);
  return Vec3<T>(c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]);
}

/// d(R(alpha) v)/d alpha [per degree] = (pi / 180) e_z x R(alpha) v.
inline Vec3<double> turned_dalpha(const Vec3<double> &v, double alpha_degrees) {
  const Vec3<double> r = turned(v, alpha_degrees);
  const double k = 0.017453292519943295;
  return Vec3<double>(-k * r[1], k * r[0], 0.0);
}

/// Adds the adjoints of v and alpha of turned(v, alpha) for the adjoint rbar.
inline void turned_reverse(const Vec3<double> &v, double alpha_degrees, const Vec3<double> &rbar,
                           Vec3<double> *vbar, double *alpha_bar) {
  *vbar += turned(rbar, -alpha_degrees); // R^T rbar
  *alpha_bar += dot(rbar, turned_dalpha(v, alpha_degrees));
}

} // namespace karman::physics
