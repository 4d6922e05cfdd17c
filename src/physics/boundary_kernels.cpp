// Prescribed boundary velocity: names and reverse mode (see
// include/karman/physics/boundary_kernels.hpp).
#include "karman/physics/boundary_kernels.hpp"

namespace karman::physics {
namespace {

struct TypeName {
  BoundaryType type;
  const char *name;
};
constexpr TypeName kTypeNames[] = {{BoundaryType::Wall, "wall"},
                                   {BoundaryType::VelocityInlet, "velocity-inlet"},
                                   {BoundaryType::BlowingSuction, "blowing-suction"},
                                   {BoundaryType::PressureOutlet, "pressure-outlet"},
                                   {BoundaryType::Symmetry, "symmetry"},
                                   {BoundaryType::FarField, "far-field"}};

// nbar -> Sbar for n = S / |S|
void unit_normal_reverse(const Vec3<double> &S, const Vec3<double> &nbar, Vec3<double> &Sbar) {
  const double A = norm(S);
  const Vec3<double> n = (1.0 / A) * S;
  Sbar += (1.0 / A) * (nbar - dot(nbar, n) * n);
}

} // namespace

const char *boundary_type_name(BoundaryType type) {
  for (const TypeName &t : kTypeNames)
    if (t.type == type) return t.name;
  return "?";
}

bool parse_boundary_type(const std::string &name, BoundaryType *type) {
  for (const TypeName &t : kTypeNames)
    if (name == t.name) {
      *type = t.type;
      return true;
    }
  return false;
}

Vec3<double> profile_factor_gradient(const VelocityProfile &pr, const Vec3<double> &x) {
  Vec3<double> g;
  if (!pr.parabolic) return g;
  double f[2] = {1, 1}, df[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (pr.axis[i] < 0) continue;
    const double h = pr.hi[i] - pr.lo[i], s = (x[pr.axis[i]] - pr.lo[i]) / h;
    f[i] = 4 * s * (1 - s);
    df[i] = 4 * (1 - 2 * s) / h;
  }
  for (int i = 0; i < 2; ++i)
    if (pr.axis[i] >= 0) g[pr.axis[i]] += df[i] * f[1 - i];
  return g;
}

void boundary_velocity_reverse(const BoundaryShape &b, const BoundaryParameters<double> &a,
                               const Vec3<double> &xf, const Vec3<double> &S,
                               const Vec3<double> &ubar, BoundaryParameters<double> *abar,
                               Vec3<double> *xfbar, Vec3<double> *Sbar) {
  switch (b.type) {
  case BoundaryType::Wall: {
    const Vec3<double> r = xf - b.center;
    abar->velocity += ubar;
    abar->omega += -r[1] * ubar[0] + r[0] * ubar[1];
    *xfbar += Vec3<double>(a.omega * ubar[1], -a.omega * ubar[0], 0.0);
    break;
  }
  case BoundaryType::VelocityInlet: {
    const bool normal = !(norm(b.direction) > 0);
    const Vec3<double> e = normal ? -((1.0 / norm(S)) * S) : b.direction;
    const double phi = profile_factor(b.profile, xf);
    abar->speed += phi * dot(ubar, e);
    *xfbar += (a.speed * dot(ubar, e)) * profile_factor_gradient(b.profile, xf);
    if (normal) unit_normal_reverse(S, (-a.speed * phi) * ubar, *Sbar);
    break;
  }
  case BoundaryType::BlowingSuction: {
    const Vec3<double> n = (1.0 / norm(S)) * S;
    const double phi = profile_factor(b.profile, xf);
    abar->amplitude += -phi * dot(ubar, n);
    *xfbar += (-a.amplitude * dot(ubar, n)) * profile_factor_gradient(b.profile, xf);
    unit_normal_reverse(S, (-a.amplitude * phi) * ubar, *Sbar);
    break;
  }
  case BoundaryType::FarField:
    abar->velocity += ubar;
    break;
  case BoundaryType::PressureOutlet:
  case BoundaryType::Symmetry:
    break;
  }
}

} // namespace karman::physics
