// Shape parameterizations and their reverse modes (see
// include/karman/design/shape_parameterization.hpp; src/adjoint/README.md, section 10).
#include "karman/design/shape_parameterization.hpp"

#include "karman/design/surface_normal.hpp"
#include "karman/design/wall_surface.hpp"
#include "karman/geometry/geometry_kernels.hpp"

#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <array>
#include <tuple>

namespace karman::design {
namespace {

std::string list_text(const std::vector<std::string> &names) {
  std::string out;
  for (const auto &n : names) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
}

// An error naming the entry if the mesh is not 2D (the 2D-only kinds).
PetscErrorCode require_2d(const mesh::Mesh &m, const std::string &file, const char *label,
                          const char *kind) {
  PetscFunctionBeginUser;
  PetscCheck(m.dim == 2, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.type': %s is a 2D parameterization and the mesh is %dD (use ffd or "
             "surface-normal)",
             file.c_str(), label, kind, m.dim);
  PetscFunctionReturn(0);
}

// ---------------------------------------------------------------------------------------------
// ffd (eq. 23)

// Bernstein polynomials B_i^n(s), i = 0..n.
void bernstein(int n, double s, double *B) {
  double binomial = 1;
  for (int i = 0; i <= n; ++i) {
    B[i] = binomial * std::pow(s, i) * std::pow(1 - s, n - i);
    binomial = binomial * (n - i) / (i + 1);
  }
}

class FfdBox : public ShapeParameterization {
public:
  int n[3] = {1, 1, 1};         ///< control points per direction (1 in unused directions)
  int fixed[3] = {0, 0, 0};     ///< fixed layers per direction
  std::vector<int> axes;        ///< displacement axes of the variables
  std::vector<PetscInt> vertex; ///< moving local vertices
  std::vector<Vec3<double>> s;  ///< their local coordinates in [0, 1]
  int dim = 2;
  std::array<double, 3> origin{}, size{1, 1, 1};

  /// The local coordinates t of x (clamped to [0, 1]); whether x is inside the box (up to
  /// round-off).
  bool local(const Vec3<double> &x, Vec3<double> *t) const {
    constexpr double tol = 1e-12;
    bool inside = true;
    for (int d = 0; d < 3; ++d) {
      if (d >= dim) {
        (*t)[d] = 0;
        continue;
      }
      const double v = (x[d] - origin[d]) / size[d];
      inside = inside && v >= -tol && v <= 1 + tol;
      (*t)[d] = std::min(1.0, std::max(0.0, v));
    }
    return inside;
  }

  // Calls f(variable index, weight, axis) for every variable acting on local coordinates t.
  template <typename F> void for_each_weight(const Vec3<double> &t, F &&f) const {
    double B[3][64];
    for (int d = 0; d < 3; ++d) bernstein(n[d] - 1, t[d], B[d]);
    std::size_t idx = 0;
    for (int k = fixed[2]; k < n[2] - fixed[2]; ++k)
      for (int j = fixed[1]; j < n[1] - fixed[1]; ++j)
        for (int i = fixed[0]; i < n[0] - fixed[0]; ++i) {
          const double w = B[0][i] * B[1][j] * B[2][k];
          for (int axis : axes) f(idx++, w, axis);
        }
  }

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      Vec3<double> &dv = d[vertex[q]];
      for_each_weight(s[q], [&](std::size_t i, double w, int axis) { dv[axis] += w * a[i]; });
    }
    return 0;
  }

  void add_reverse_local(const double *, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      if (!owned[vertex[q]]) continue;
      const Vec3<double> &db = d_bar[vertex[q]];
      for_each_weight(s[q], [&](std::size_t i, double w, int axis) { a_bar[i] += w * db[axis]; });
    }
  }

  bool displacement_at(const double *a, const Vec3<double> &x0, const Vec3<double> &,
                       Vec3<double> *d) const override {
    Vec3<double> t;
    *d = Vec3<double>();
    if (local(x0, &t))
      for_each_weight(t, [&](std::size_t i, double w, int axis) { (*d)[axis] += w * a[i]; });
    return true;
  }
};

PetscErrorCode create_ffd(const mesh::Mesh &m, const config::DesignConfig &dc,
                          const std::string &file, const WallSurface &surf,
                          std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  const config::Section &p = dc.parameters;
  const char *label = dc.label.c_str();
  const std::vector<double> lattice = p.reals("lattice");
  PetscCheck(static_cast<int>(lattice.size()) == m.dim, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.lattice' has %zu directions but the mesh is %dD", file.c_str(), label,
             lattice.size(), m.dim);
  PetscCheck(*std::max_element(lattice.begin(), lattice.end()) <= 64, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.lattice': at most 64 control points per direction are supported",
             file.c_str(), label);
  auto box = std::make_unique<FfdBox>();
  const long fixed = p.integer("fixed_layers");
  for (int d = 0; d < m.dim; ++d) {
    box->n[d] = static_cast<int>(std::lround(lattice[d]));
    box->fixed[d] = static_cast<int>(fixed);
  }
  const std::vector<std::string> axes = p.names("axes");
  for (const auto &axis : axes) {
    const int a = axis[0] - 'x';
    PetscCheck(a < m.dim, m.comm, PETSC_ERR_USER_INPUT, "%s: '%s.axes': axis '%s' in a %dD mesh",
               file.c_str(), label, axis.c_str(), m.dim);
    box->axes.push_back(a);
  }
  const std::array<double, 3> origin = p.vector("origin"), size = p.vector("size");
  box->dim = m.dim, box->origin = origin, box->size = size;
  std::size_t inside = 0;
  Vec3<double> t;
  for (const auto &x : surf.x) inside += box->local(x, &t);
  auto fmt = [](const std::array<double, 3> &v, int dim) {
    std::string out;
    for (int d = 0; d < dim; ++d) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%s%g", d ? ", " : "", v[d]);
      out += buf;
    }
    return "[" + out + "]";
  };
  PetscCheck(inside > 0, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.origin'/'%s.size': the FFD box (origin %s, size %s) holds no vertex of "
             "'%s.walls' %s",
             file.c_str(), label, label, fmt(origin, m.dim).c_str(), fmt(size, m.dim).c_str(),
             label, list_text(p.names("walls")).c_str());
  box->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (surf.of_local[v] >= 0 && box->local(surf.x[surf.of_local[v]], &t)) {
      box->vertex.push_back(v);
      box->s.push_back(t);
      box->moved[v] = 1;
    }
  for (int k = box->fixed[2]; k < box->n[2] - box->fixed[2]; ++k)
    for (int j = box->fixed[1]; j < box->n[1] - box->fixed[1]; ++j)
      for (int i = box->fixed[0]; i < box->n[0] - box->fixed[0]; ++i)
        for (const auto &axis : axes) {
          std::string cp = std::to_string(i) + "," + std::to_string(j);
          if (m.dim == 3) cp += "," + std::to_string(k);
          box->names.push_back(dc.name + ".cp[" + cp + "]." + axis);
        }
  *out = std::move(box);
  PetscFunctionReturn(0);
}

// ---------------------------------------------------------------------------------------------
// hicks-henne (eq. 24)

class HicksHenne : public ShapeParameterization {
public:
  std::size_t m = 0;              ///< bumps per surface
  Vec3<double> t;                 ///< thickness direction (upper side)
  std::vector<PetscInt> vertex;   ///< moving local vertices
  std::vector<std::size_t> first; ///< index of the vertex's first variable (upper 0, lower m)
  std::vector<double> sign;       ///< +1 upper, -1 lower
  std::vector<double> bump;       ///< b_i(xi_v), m per vertex
  Vec3<double> c, x_le;           ///< chord direction, leading edge vertex
  double lo = 0, hi = 1;          ///< x.c at the leading and trailing edges
  std::vector<double> h;          ///< bump positions
  double width = 1;
  std::string surfaces;

  /// b_i(xi) for the chord fraction of x, appended to *out.
  void bumps(const Vec3<double> &x, std::vector<double> *out) const {
    const double xi = std::min(1.0, std::max(0.0, (dot(x, c) - lo) / (hi - lo)));
    for (double hk : h) {
      const double sine = std::sin(M_PI * std::pow(xi, std::log(0.5) / std::log(hk)));
      out->push_back(std::pow(std::max(sine, 0.0), width));
    }
  }
  /// Whether a point x with normal n out of the body is on the upper surface.
  bool upper(const Vec3<double> &x, const Vec3<double> &n) const {
    const double nt = dot(n, t);
    return nt > 0 || (nt == 0 && dot(x - x_le, t) >= 0);
  }

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      double sum = 0;
      for (std::size_t i = 0; i < m; ++i) sum += a[first[q] + i] * bump[q * m + i];
      d[vertex[q]] += (sign[q] * sum) * t;
    }
    return 0;
  }

  void add_reverse_local(const double *, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      if (!owned[vertex[q]]) continue;
      const double g = sign[q] * dot(t, d_bar[vertex[q]]);
      for (std::size_t i = 0; i < m; ++i) a_bar[first[q] + i] += g * bump[q * m + i];
    }
  }

  bool displacement_at(const double *a, const Vec3<double> &x0, const Vec3<double> &n,
                       Vec3<double> *d) const override {
    *d = Vec3<double>();
    const bool up = upper(x0, n);
    if ((up && surfaces == "lower") || (!up && surfaces == "upper")) return true;
    std::vector<double> b;
    bumps(x0, &b);
    const std::size_t first_variable = up || surfaces == "lower" ? 0 : m;
    double sum = 0;
    for (std::size_t i = 0; i < m; ++i) sum += a[first_variable + i] * b[i];
    *d = ((up ? 1.0 : -1.0) * sum) * t;
    return true;
  }
};

PetscErrorCode create_hicks_henne(const mesh::Mesh &m, const config::DesignConfig &dc,
                                  const std::string &file, const WallSurface &surf,
                                  std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  const config::Section &p = dc.parameters;
  const char *label = dc.label.c_str();
  PetscCall(require_2d(m, file, label, "hicks-henne"));
  auto hh = std::make_unique<HicksHenne>();
  const std::array<double, 3> cd = p.vector("chord_direction");
  Vec3<double> c(cd[0], cd[1], 0.0);
  c *= 1.0 / norm(c);
  hh->t = Vec3<double>(-c[1], c[0], 0.0);
  hh->c = c;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::size_t le = 0;
  for (std::size_t i = 0; i < surf.x.size(); ++i) {
    const double xi = dot(surf.x[i], c);
    if (xi < lo) lo = xi, le = i;
    hi = std::max(hi, xi);
  }
  PetscCheck(hi > lo, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.walls' %s have no extent along the chord direction", file.c_str(), label,
             list_text(p.names("walls")).c_str());
  const std::vector<double> h = p.reals("positions");
  const std::string surfaces = p.text("surfaces");
  hh->lo = lo, hh->hi = hi, hh->x_le = surf.x[le], hh->h = h, hh->width = p.real("width");
  hh->surfaces = surfaces;
  hh->m = h.size();
  hh->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const PetscInt i = surf.of_local[v];
    if (i < 0) continue;
    const bool upper = hh->upper(surf.x[i], surf.normal[i]);
    if ((upper && surfaces == "lower") || (!upper && surfaces == "upper")) continue;
    hh->vertex.push_back(v);
    hh->first.push_back(upper || surfaces == "lower" ? 0 : hh->m);
    hh->sign.push_back(upper ? 1.0 : -1.0);
    hh->bumps(surf.x[i], &hh->bump);
    hh->moved[v] = 1;
  }
  for (const char *side : {"upper", "lower"})
    if (surfaces == "both" || surfaces == side)
      for (std::size_t k = 0; k < h.size(); ++k)
        hh->names.push_back(dc.name + "." + side + "[" + std::to_string(k) + "]");
  *out = std::move(hh);
  PetscFunctionReturn(0);
}

// ---------------------------------------------------------------------------------------------
// rigid (eq. 25)

class RigidMotion : public ShapeParameterization {
public:
  int angle = -1;              ///< index of the angle variable, -1 if none
  int shift[3] = {-1, -1, -1}; ///< indices of dx, dy, dz, -1 if none
  Vec3<double> center;
  std::vector<PetscInt> vertex; ///< moving local vertices
  std::vector<Vec3<double>> r;  ///< x_v - center

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    const double theta = angle >= 0 ? a[angle] : 0.0, co = std::cos(theta), si = std::sin(theta);
    Vec3<double> shift_vec;
    for (int k = 0; k < 3; ++k)
      if (shift[k] >= 0) shift_vec[k] = a[shift[k]];
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      const Vec3<double> &x = r[q];
      // (R - I) r + t, the same as R r + c + t - x without the cancellation of c and x
      const Vec3<double> rotated(co * x[0] - si * x[1] - x[0], si * x[0] + co * x[1] - x[1], 0.0);
      d[vertex[q]] += rotated + shift_vec;
    }
    return 0;
  }

  void add_reverse_local(const double *a, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    const double theta = angle >= 0 ? a[angle] : 0.0, co = std::cos(theta), si = std::sin(theta);
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      if (!owned[vertex[q]]) continue;
      const Vec3<double> &x = r[q], &db = d_bar[vertex[q]];
      if (angle >= 0)
        a_bar[angle] += (-si * x[0] - co * x[1]) * db[0] + (co * x[0] - si * x[1]) * db[1];
      for (int k = 0; k < 3; ++k)
        if (shift[k] >= 0) a_bar[shift[k]] += db[k];
    }
  }

  bool can_fold() const override { return false; }

  bool displacement_at(const double *a, const Vec3<double> &x0, const Vec3<double> &,
                       Vec3<double> *d) const override {
    const double theta = angle >= 0 ? a[angle] : 0.0, co = std::cos(theta), si = std::sin(theta);
    const Vec3<double> x = x0 - center;
    *d = Vec3<double>(co * x[0] - si * x[1] - x[0], si * x[0] + co * x[1] - x[1], 0.0);
    for (int k = 0; k < 3; ++k)
      if (shift[k] >= 0) (*d)[k] += a[shift[k]];
    return true;
  }
};

PetscErrorCode create_rigid(const mesh::Mesh &m, const config::DesignConfig &dc,
                            const std::string &file, const WallSurface &surf,
                            std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  const config::Section &p = dc.parameters;
  const char *label = dc.label.c_str();
  auto rigid = std::make_unique<RigidMotion>();
  const std::vector<std::string> variables = p.names("variables");
  for (std::size_t i = 0; i < variables.size(); ++i) {
    const std::string &v = variables[i];
    if (v == "angle") {
      PetscCheck(m.dim == 2, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: '%s.variables': a rigid rotation ('angle') is only implemented in 2D; the "
                 "mesh is 3D (translations dx, dy, dz work)",
                 file.c_str(), label);
      rigid->angle = static_cast<int>(i);
    } else {
      const int k = v[1] - 'x';
      PetscCheck(k < m.dim, m.comm, PETSC_ERR_USER_INPUT, "%s: '%s.variables': '%s' in a %dD mesh",
                 file.c_str(), label, v.c_str(), m.dim);
      rigid->shift[k] = static_cast<int>(i);
    }
    rigid->names.push_back(dc.name + "." + v);
  }
  const std::array<double, 3> c = p.vector("center");
  rigid->center = Vec3<double>(c[0], c[1], m.dim == 3 ? c[2] : 0.0);
  rigid->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (surf.of_local[v] >= 0) {
      rigid->vertex.push_back(v);
      rigid->r.push_back(surf.x[surf.of_local[v]] - rigid->center);
      rigid->moved[v] = 1;
    }
  *out = std::move(rigid);
  PetscFunctionReturn(0);
}

// ---------------------------------------------------------------------------------------------
// radial (eq. 27)

/// The cardinal B-spline of degree p (support [0, p + 1]) at t.
double cardinal_bspline(int p, double t) {
  if (t < 0 || t >= p + 1) return 0.0;
  if (p == 0) return 1.0;
  return (t * cardinal_bspline(p - 1, t) + (p + 1 - t) * cardinal_bspline(p - 1, t - 1)) / p;
}

class RadialSpline : public ShapeParameterization {
public:
  Vec3<double> center;
  int n = 0, degree = 3;
  double start = 0;              ///< angle of control point 0 [rad]
  std::vector<PetscInt> vertex;  ///< moving local vertices
  std::vector<Vec3<double>> e_r; ///< their unit radial directions
  std::vector<double> weight;    ///< B_i(theta_v), n per vertex

  /// B_i(theta) for i = 0..n-1 (periodic, uniform knots, peak of B_i at start + i 2 pi / n).
  void basis(double theta, double *B) const {
    const double u = (theta - start) * n / (2 * M_PI);
    for (int i = 0; i < n; ++i) {
      double t = u - i; // in [-n/2, n/2)
      t -= n * std::floor((t + 0.5 * n) / n);
      B[i] = cardinal_bspline(degree, t + 0.5 * (degree + 1));
    }
  }
  /// The unit radial direction of x and its angle.
  bool radial(const Vec3<double> &x, Vec3<double> *e, double *theta) const {
    const Vec3<double> r(x[0] - center[0], x[1] - center[1], 0.0);
    const double len = norm(r);
    if (!(len > 0)) return false;
    *e = (1.0 / len) * r;
    *theta = std::atan2(r[1], r[0]);
    return true;
  }

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      double dr = 0;
      for (int i = 0; i < n; ++i) dr += a[i] * weight[q * n + i];
      d[vertex[q]] += dr * e_r[q];
    }
    return 0;
  }

  void add_reverse_local(const double *, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q) {
      if (!owned[vertex[q]]) continue;
      const double g = dot(e_r[q], d_bar[vertex[q]]);
      for (int i = 0; i < n; ++i) a_bar[i] += g * weight[q * n + i];
    }
  }

  bool can_fold() const override { return false; } // (r(theta) stays single-valued)

  bool kinks(Vec3<double> *c, std::vector<double> *angles) const override {
    if (degree != 1) return false; // (piecewise linear in theta: kinks at the control angles)
    *c = center;
    angles->clear();
    for (int i = 0; i < n; ++i) angles->push_back(start + 2 * M_PI * i / n);
    return true;
  }

  bool displacement_at(const double *a, const Vec3<double> &x0, const Vec3<double> &,
                       Vec3<double> *d) const override {
    Vec3<double> e;
    double theta = 0;
    *d = Vec3<double>();
    if (!radial(x0, &e, &theta)) return true;
    std::vector<double> B(n);
    basis(theta, B.data());
    double dr = 0;
    for (int i = 0; i < n; ++i) dr += a[i] * B[i];
    *d = dr * e;
    return true;
  }
};

PetscErrorCode create_radial(const mesh::Mesh &m, const config::DesignConfig &dc,
                             const std::string &file, const WallSurface &surf,
                             std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  const config::Section &p = dc.parameters;
  const char *label = dc.label.c_str();
  PetscCall(require_2d(m, file, label, "radial"));
  auto rs = std::make_unique<RadialSpline>();
  const std::array<double, 3> c = p.vector("center");
  rs->center = Vec3<double>(c[0], c[1], 0.0);
  rs->n = static_cast<int>(p.integer("control_points"));
  rs->degree = static_cast<int>(p.integer("degree"));
  rs->start = p.real("start_angle") * M_PI / 180.0;
  // the walls seen from the centre: every face turns the same way, once around in all
  double total = 0, first = 0;
  bool one_way = true;
  Vec3<double> where;
  for (std::size_t f = 0; f + 1 < surf.face_ptr.size(); ++f) {
    const Vec3<double> &x0 = surf.x[surf.face_vertex[surf.face_ptr[f]]],
                       &x1 = surf.x[surf.face_vertex[surf.face_ptr[f] + 1]];
    Vec3<double> e0, e1;
    double t0, t1;
    const bool off_center = rs->radial(x0, &e0, &t0) && rs->radial(x1, &e1, &t1);
    PetscCheck(off_center, m.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.center' (%g, %g) is on the wall '%s' (a vertex at the centre)",
               file.c_str(), label, c[0], c[1], list_text(p.names("walls")).c_str());
    const double turn = std::atan2(e0[0] * e1[1] - e0[1] * e1[0], dot(e0, e1));
    if (f == 0) first = turn;
    if (turn * first <= 0 && one_way) one_way = false, where = x0;
    total += turn;
  }
  PetscCheck(one_way && std::abs(std::abs(total) - 2 * M_PI) < 1e-6, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.center': the walls %s are not star-shaped about the centre (%g, %g): %s; a "
             "radial map moves each wall point along its ray from the centre, which must meet "
             "the wall once",
             file.c_str(), label, list_text(p.names("walls")).c_str(), c[0], c[1],
             one_way ? "they do not go once around it"
                     : ("the angle about it turns back at (" + std::to_string(where[0]) + ", " +
                        std::to_string(where[1]) + ")")
                           .c_str());
  rs->moved.assign(m.n_vertices, 0);
  std::vector<double> B(rs->n);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const PetscInt i = surf.of_local[v];
    if (i < 0) continue;
    Vec3<double> e;
    double theta = 0;
    rs->radial(surf.x[i], &e, &theta);
    rs->basis(theta, B.data());
    rs->vertex.push_back(v);
    rs->e_r.push_back(e);
    rs->weight.insert(rs->weight.end(), B.begin(), B.end());
    rs->moved[v] = 1;
  }
  for (int i = 0; i < rs->n; ++i) rs->names.push_back(dc.name + ".r[" + std::to_string(i) + "]");
  *out = std::move(rs);
  PetscFunctionReturn(0);
}

DesignKind kind_of(const std::string &type) {
  if (type == "ffd") return DesignKind::Ffd;
  if (type == "hicks-henne") return DesignKind::HicksHenne;
  if (type == "rigid") return DesignKind::Rigid;
  if (type == "radial") return DesignKind::Radial;
  return DesignKind::SurfaceNormal;
}

// Values of a bounds key: one per variable (the case gives none, one for all, or one each).
std::vector<double> expand(const std::vector<double> &given, std::size_t count, double def) {
  if (given.empty()) return std::vector<double>(count, def);
  if (given.size() == 1) return std::vector<double>(count, given[0]);
  return given;
}

} // namespace

const char *kind_name(DesignKind kind) {
  switch (kind) {
  case DesignKind::Ffd:
    return "ffd";
  case DesignKind::HicksHenne:
    return "hicks-henne";
  case DesignKind::Rigid:
    return "rigid";
  case DesignKind::SurfaceNormal:
    return "surface-normal";
  case DesignKind::Radial:
    return "radial";
  }
  return "";
}

DesignSpace::DesignSpace() = default;
DesignSpace::~DesignSpace() = default;

PetscErrorCode DesignSpace::setup(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X0,
                                  const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  PetscCheck(X0.size() == static_cast<std::size_t>(mesh.n_vertices), PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ,
             "DesignSpace::setup: %zu coordinates for %" PetscInt_FMT " vertices", X0.size(),
             mesh.n_vertices);
  comm_ = mesh.comm;
  n_vertices_ = mesh.n_vertices;
  owned_ = mesh.vertex_owned;
  moved_.assign(mesh.n_vertices, 0);
  offset_.clear();
  parts_.clear();
  blocks_.clear();
  names_.clear();
  lower_.clear();
  upper_.clear();
  initial_.clear();
  scale_.clear();
  const std::string &file = cfg.file();
  for (const config::DesignConfig &dc : cfg.designs()) {
    std::vector<int> patches;
    for (const auto &wall : dc.parameters.names("walls")) {
      const int p = mesh.patch_index(wall);
      PetscCheck(p >= 0, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: '%s.walls': the mesh has no boundary '%s'", file.c_str(), dc.label.c_str(),
                 wall.c_str());
      patches.push_back(p);
    }
    WallSurface surf;
    PetscCall(gather_wall_surface(mesh, X0, patches, &surf));
    PetscCheck(!surf.gid.empty(), mesh.comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.walls' %s: the mesh has no face on these boundaries", file.c_str(),
               dc.label.c_str(), list_text(dc.parameters.names("walls")).c_str());
    std::unique_ptr<ShapeParameterization> part;
    const DesignKind kind = kind_of(dc.type);
    switch (kind) {
    case DesignKind::Ffd:
      PetscCall(create_ffd(mesh, dc, file, surf, &part));
      break;
    case DesignKind::HicksHenne:
      PetscCall(create_hicks_henne(mesh, dc, file, surf, &part));
      break;
    case DesignKind::Rigid:
      PetscCall(create_rigid(mesh, dc, file, surf, &part));
      break;
    case DesignKind::SurfaceNormal:
      PetscCall(create_surface_normal(mesh, dc, surf, &part));
      break;
    case DesignKind::Radial:
      PetscCall(create_radial(mesh, dc, file, surf, &part));
      break;
    }
    part->patches = patches;
    const std::size_t count = part->names.size();
    for (const char *key : {"lower", "upper", "initial", "scale"}) {
      const std::size_t given = dc.parameters.reals(key).size();
      PetscCheck(given <= 1 || given == count, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: '%s.%s' has %zu values for %zu variables (give 1 for all, or one each)",
                 file.c_str(), dc.label.c_str(), key, given, count);
    }
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (auto [out, key, def] :
         {std::tuple{&lower_, "lower", -inf}, std::tuple{&upper_, "upper", inf},
          std::tuple{&initial_, "initial", 0.0}, std::tuple{&scale_, "scale", 1.0}}) {
      const std::vector<double> values = expand(dc.parameters.reals(key), count, def);
      out->insert(out->end(), values.begin(), values.end());
    }
    blocks_.push_back({dc.name, kind, names_.size(), count});
    names_.insert(names_.end(), part->names.begin(), part->names.end());
    for (PetscInt v = 0; v < mesh.n_vertices; ++v) moved_[v] = moved_[v] || part->moved[v];
    parts_.push_back(std::move(part));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode DesignSpace::displacement(const std::vector<double> &a,
                                         std::vector<Vec3<double>> *d) const {
  PetscFunctionBeginUser;
  PetscCheck(a.size() == size(), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "DesignSpace::displacement: %zu values for %zu design variables", a.size(), size());
  d->assign(n_vertices_, Vec3<double>());
  for (std::size_t k = 0; k < parts_.size(); ++k)
    PetscCall(parts_[k]->add_displacement(a.data() + blocks_[k].offset, *d));
  if (!offset_.empty())
    for (PetscInt v = 0; v < n_vertices_; ++v) (*d)[v] = (*d)[v] - offset_[v];
  PetscFunctionReturn(0);
}

PetscErrorCode DesignSpace::set_reference_design(const std::vector<double> &a_r) {
  PetscFunctionBeginUser;
  offset_.clear();
  std::vector<Vec3<double>> d;
  PetscCall(displacement(a_r, &d));
  offset_ = std::move(d);
  PetscFunctionReturn(0);
}

bool DesignSpace::wall_position(const std::vector<double> &a, const Vec3<double> &x0, int patch,
                                const Vec3<double> &n, Vec3<double> *x) const {
  *x = x0;
  for (std::size_t k = 0; k < parts_.size(); ++k) {
    const auto &on = parts_[k]->patches;
    if (std::find(on.begin(), on.end(), patch) == on.end()) continue;
    Vec3<double> d;
    if (!parts_[k]->displacement_at(a.data() + blocks_[k].offset, x0, n, &d)) return false;
    *x += d;
  }
  return true;
}

bool DesignSpace::can_fold() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const auto &p) { return p->can_fold(); });
}

bool DesignSpace::kinks(int patch, Vec3<double> *center, std::vector<double> *angles) const {
  for (const auto &p : parts_)
    if (std::find(p->patches.begin(), p->patches.end(), patch) != p->patches.end() &&
        p->kinks(center, angles))
      return true;
  return false;
}

PetscErrorCode DesignSpace::reverse(const std::vector<double> &a,
                                    const std::vector<Vec3<double>> &d_bar,
                                    std::vector<double> *a_bar) const {
  PetscFunctionBeginUser;
  PetscCheck(
      a.size() == size() && d_bar.size() == static_cast<std::size_t>(n_vertices_), PETSC_COMM_SELF,
      PETSC_ERR_ARG_SIZ,
      "DesignSpace::reverse: %zu design values (of %zu) and %zu vertex values (of %" PetscInt_FMT
      ")",
      a.size(), size(), d_bar.size(), n_vertices_);
  std::vector<double> local(size(), 0.0);
  for (std::size_t k = 0; k < parts_.size(); ++k)
    parts_[k]->add_reverse_local(a.data() + blocks_[k].offset, d_bar, owned_,
                                 local.data() + blocks_[k].offset);
  // reduce to rank 0 and broadcast: every rank gets the same bits
  a_bar->assign(size(), 0.0);
  if (comm_ != MPI_COMM_NULL && size() > 0) {
    const int n = static_cast<int>(size());
    PetscCallMPI(MPI_Reduce(local.data(), a_bar->data(), n, MPI_DOUBLE, MPI_SUM, 0, comm_));
    PetscCallMPI(MPI_Bcast(a_bar->data(), n, MPI_DOUBLE, 0, comm_));
  }
  for (std::size_t k = 0; k < parts_.size(); ++k)
    PetscCall(parts_[k]->finish_reverse(a_bar->data() + blocks_[k].offset));
  PetscFunctionReturn(0);
}

} // namespace karman::design
