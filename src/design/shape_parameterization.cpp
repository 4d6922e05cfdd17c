// Shape parameterizations and their reverse modes (see
// include/karman/design/shape_parameterization.hpp; src/adjoint/README.md, section 10).
#include "karman/design/shape_parameterization.hpp"

#include "karman/geometry/geometry_kernels.hpp"

#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <array>
#include <map>
#include <tuple>

namespace karman::design {

/// One kind's map a -> d (its own variables only) and its reverse.  The reverse is split at
/// the sum over ranks: add_reverse_local() accumulates the owned vertices' part, then, on the
/// rank-summed vector (the same on every rank), finish_reverse() applies what comes after
/// the vertex sum (surface-normal: the filter's transpose).
class ShapeParameterization {
public:
  virtual ~ShapeParameterization() = default;
  /// d += d(a) on the local vertices.
  virtual PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const = 0;
  /// a_bar += the owned vertices' part of (dd/da)^T d_bar.
  virtual void add_reverse_local(const double *a, const std::vector<Vec3<double>> &d_bar,
                                 const std::vector<char> &owned, double *a_bar) const = 0;
  /// a_bar <- the rest of the reverse on the rank-summed vector.
  virtual PetscErrorCode finish_reverse(double *a_bar) const {
    (void)a_bar;
    return 0;
  }

  std::vector<std::string> names; ///< the variables' names
  std::vector<char> moved;        ///< per local vertex: 1 if this map can move it
};

namespace {

// The walls of one parameterization gathered on every rank, in an order independent of the
// partition (so that every rank, and every rank count, computes the same values).
struct WallSurface {
  std::vector<PetscInt> gid;   ///< serial indices of the wall vertices, increasing
  std::vector<Vec3<double>> x; ///< their reference coordinates
  std::vector<std::size_t> face_ptr;
  std::vector<int> face_vertex;     ///< faces (CSR, indices into gid), oriented as in the mesh
  std::vector<Vec3<double>> normal; ///< unit normal out of the body (into the fluid)
  std::vector<PetscInt> of_local;   ///< per local vertex: index into gid, or -1
};

// Gathers the owned boundary faces of `patches` (each face is owned by one rank) with their
// vertices' serial indices and coordinates on every rank.  A 3D face is rotated to start at
// its least serial index (orientation kept), and the faces are sorted, so the result does not
// depend on the partition.  Collective.
PetscErrorCode gather_wall_surface(const mesh::Mesh &m, const std::vector<Vec3<double>> &X0,
                                   const std::vector<int> &patches, WallSurface *s) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> ints; // per face: n, then n serial indices
  std::vector<double> reals;  // per face vertex: x, y, z
  for (int p : patches)
    for (PetscInt f : m.boundary_faces(p)) {
      const PetscInt b = m.face_vertex_ptr[f], n = m.face_vertex_ptr[f + 1] - b;
      PetscInt start = 0;
      if (m.dim == 3)
        for (PetscInt k = 1; k < n; ++k)
          if (m.vertex_gid[m.face_vertex[b + k]] < m.vertex_gid[m.face_vertex[b + start]])
            start = k;
      ints.push_back(n);
      for (PetscInt k = 0; k < n; ++k) {
        const PetscInt v = m.face_vertex[b + (start + k) % n];
        ints.push_back(m.vertex_gid[v]);
        for (int d = 0; d < 3; ++d) reals.push_back(X0[v][d]);
      }
    }
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(m.comm, &size));
  auto allgather = [&](auto &local, MPI_Datatype type, auto *all) -> PetscErrorCode {
    PetscFunctionBeginUser;
    const int n = static_cast<int>(local.size());
    std::vector<int> counts(size), displs(size, 0);
    PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, m.comm));
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all->resize(static_cast<std::size_t>(displs[size - 1] + counts[size - 1]));
    PetscCallMPI(MPI_Allgatherv(local.data(), n, type, all->data(), counts.data(), displs.data(),
                                type, m.comm));
    PetscFunctionReturn(0);
  };
  std::vector<PetscInt> all_ints;
  std::vector<double> all_reals;
  PetscCall(allgather(ints, MPIU_INT, &all_ints));
  PetscCall(allgather(reals, MPI_DOUBLE, &all_reals));

  std::vector<std::vector<PetscInt>> faces;
  std::map<PetscInt, Vec3<double>> coords;
  for (std::size_t i = 0, r = 0; i < all_ints.size();) {
    const PetscInt n = all_ints[i++];
    std::vector<PetscInt> face(all_ints.begin() + i, all_ints.begin() + i + n);
    for (PetscInt g : face) {
      coords[g] = Vec3<double>(all_reals[r], all_reals[r + 1], all_reals[r + 2]);
      r += 3;
    }
    faces.push_back(std::move(face));
    i += n;
  }
  std::sort(faces.begin(), faces.end());
  s->gid.clear();
  s->x.clear();
  for (const auto &[g, x] : coords) s->gid.push_back(g), s->x.push_back(x);
  auto index = [&](PetscInt g) {
    return static_cast<int>(std::lower_bound(s->gid.begin(), s->gid.end(), g) - s->gid.begin());
  };
  s->face_ptr.assign(1, 0);
  s->face_vertex.clear();
  s->normal.assign(s->gid.size(), Vec3<double>());
  for (const auto &face : faces) {
    const int n = static_cast<int>(face.size());
    const Vec3<double> *v[geometry::kMaxFaceVertices];
    for (int k = 0; k < n; ++k) {
      s->face_vertex.push_back(index(face[k]));
      v[k] = &s->x[s->face_vertex.back()];
    }
    s->face_ptr.push_back(s->face_vertex.size());
    geometry::Facet<double> facets[geometry::kMaxFaceVertices];
    const int nf = geometry::face_facets(m.dim, v, n, facets);
    Vec3<double> S, xf;
    geometry::face_from_facets(facets, nf, S, xf);
    // the mesh's boundary normal points out of the fluid: the body's outward normal is -S
    for (int k = 0; k < n; ++k) s->normal[index(face[k])] -= (1.0 / n) * S;
  }
  for (auto &n : s->normal) {
    const double a = norm(n);
    if (a > 0) n *= 1.0 / a;
  }
  s->of_local.assign(m.n_vertices, -1);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const auto it = std::lower_bound(s->gid.begin(), s->gid.end(), m.vertex_gid[v]);
    if (it != s->gid.end() && *it == m.vertex_gid[v]) s->of_local[v] = it - s->gid.begin();
  }
  PetscFunctionReturn(0);
}

std::string list_text(const std::vector<std::string> &names) {
  std::string out;
  for (const auto &n : names) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
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
  // local coordinates; a point is inside when 0 <= s <= 1 up to round-off (then clamped)
  constexpr double tol = 1e-12;
  auto local = [&](const Vec3<double> &x, Vec3<double> *t) {
    bool inside = true;
    for (int d = 0; d < 3; ++d) {
      if (d >= m.dim) {
        (*t)[d] = 0;
        continue;
      }
      const double v = (x[d] - origin[d]) / size[d];
      inside = inside && v >= -tol && v <= 1 + tol;
      (*t)[d] = std::min(1.0, std::max(0.0, v));
    }
    return inside;
  };
  std::size_t inside = 0;
  Vec3<double> t;
  for (const auto &x : surf.x) inside += local(x, &t);
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
    if (surf.of_local[v] >= 0 && local(surf.x[surf.of_local[v]], &t)) {
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
};

PetscErrorCode create_hicks_henne(const mesh::Mesh &m, const config::DesignConfig &dc,
                                  const std::string &file, const WallSurface &surf,
                                  std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  const config::Section &p = dc.parameters;
  const char *label = dc.label.c_str();
  PetscCheck(m.dim == 2, m.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s.type': hicks-henne is a 2D parameterization and the mesh is %dD (use ffd "
             "or surface-normal)",
             file.c_str(), label, m.dim);
  auto hh = std::make_unique<HicksHenne>();
  const std::array<double, 3> cd = p.vector("chord_direction");
  Vec3<double> c(cd[0], cd[1], 0.0);
  c *= 1.0 / norm(c);
  hh->t = Vec3<double>(-c[1], c[0], 0.0);
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
  const double width = p.real("width");
  const std::string surfaces = p.text("surfaces");
  hh->m = h.size();
  hh->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const PetscInt i = surf.of_local[v];
    if (i < 0) continue;
    const double nt = dot(surf.normal[i], hh->t);
    const bool upper = nt > 0 || (nt == 0 && dot(surf.x[i] - surf.x[le], hh->t) >= 0);
    if ((upper && surfaces == "lower") || (!upper && surfaces == "upper")) continue;
    const double xi = std::min(1.0, std::max(0.0, (dot(surf.x[i], c) - lo) / (hi - lo)));
    hh->vertex.push_back(v);
    hh->first.push_back(upper || surfaces == "lower" ? 0 : hh->m);
    hh->sign.push_back(upper ? 1.0 : -1.0);
    for (double hk : h) {
      const double sine = std::sin(M_PI * std::pow(xi, std::log(0.5) / std::log(hk)));
      hh->bump.push_back(std::pow(std::max(sine, 0.0), width));
    }
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
// surface-normal (eq. 26)

class SurfaceNormal : public ShapeParameterization {
public:
  ~SurfaceNormal() override {
    KSPDestroy(&ksp);
    MatDestroy(&M);
    MatDestroy(&A);
  }
  Mat M = nullptr, A = nullptr; ///< mass matrix, M + L^2 K (sequential, the same on every rank)
  KSP ksp = nullptr;            ///< LU of A
  std::vector<PetscInt> vertex; ///< moving local vertices
  std::vector<PetscInt> index;  ///< their variable (wall-vertex) index
  std::vector<Vec3<double>> n;  ///< their unit normal out of the body

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    PetscFunctionBeginUser;
    PetscInt size;
    PetscCall(MatGetSize(A, &size, nullptr));
    Vec x, b;
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscScalar *arr;
    PetscCall(VecGetArray(x, &arr));
    std::copy(a, a + size, arr);
    PetscCall(VecRestoreArray(x, &arr));
    PetscCall(MatMult(M, x, b));    // b = M a
    PetscCall(KSPSolve(ksp, b, x)); // s = A^-1 M a
    const PetscScalar *sm;
    PetscCall(VecGetArrayRead(x, &sm));
    for (std::size_t q = 0; q < vertex.size(); ++q) d[vertex[q]] += sm[index[q]] * n[q];
    PetscCall(VecRestoreArrayRead(x, &sm));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscFunctionReturn(0);
  }

  void add_reverse_local(const double *, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q)
      if (owned[vertex[q]]) a_bar[index[q]] += dot(n[q], d_bar[vertex[q]]);
  }

  PetscErrorCode finish_reverse(double *a_bar) const override {
    PetscFunctionBeginUser;
    PetscInt size;
    PetscCall(MatGetSize(A, &size, nullptr));
    Vec g, y;
    PetscCall(MatCreateVecs(A, &g, &y));
    PetscScalar *arr;
    PetscCall(VecGetArray(g, &arr));
    std::copy(a_bar, a_bar + size, arr);
    PetscCall(VecRestoreArray(g, &arr));
    PetscCall(KSPSolveTranspose(ksp, g, y)); // y = A^-T (n . d_bar)
    PetscCall(MatMultTranspose(M, y, g));    // a_bar = M^T y
    PetscCall(VecGetArray(g, &arr));
    std::copy(arr, arr + size, a_bar);
    PetscCall(VecRestoreArray(g, &arr));
    PetscCall(VecDestroy(&g));
    PetscCall(VecDestroy(&y));
    PetscFunctionReturn(0);
  }
};

PetscErrorCode create_surface_normal(const mesh::Mesh &m, const config::DesignConfig &dc,
                                     const WallSurface &surf,
                                     std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  auto sn = std::make_unique<SurfaceNormal>();
  const double L = dc.parameters.real("filter_length"), L2 = L * L;
  const PetscInt size = static_cast<PetscInt>(surf.gid.size());
  // P1 elements: segments (2D), or each face split into triangles from its first vertex (3D)
  std::vector<std::array<int, 3>> elements;
  for (std::size_t f = 0; f + 1 < surf.face_ptr.size(); ++f) {
    const int *v = &surf.face_vertex[surf.face_ptr[f]];
    const int nv = static_cast<int>(surf.face_ptr[f + 1] - surf.face_ptr[f]);
    if (m.dim == 2)
      elements.push_back({v[0], v[1], -1});
    else
      for (int k = 1; k + 1 < nv; ++k) elements.push_back({v[0], v[k], v[k + 1]});
  }
  std::vector<std::vector<PetscInt>> adjacency(size);
  for (const auto &e : elements)
    for (int i : e)
      for (int j : e)
        if (i >= 0 && j >= 0) adjacency[i].push_back(j);
  std::vector<PetscInt> nnz(size);
  for (PetscInt i = 0; i < size; ++i) {
    auto &row = adjacency[i];
    std::sort(row.begin(), row.end());
    nnz[i] = std::unique(row.begin(), row.end()) - row.begin();
  }
  for (Mat *mat : {&sn->M, &sn->A})
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, size, size, 0, nnz.data(), mat));
  for (const auto &e : elements) {
    const int nv = e[2] < 0 ? 2 : 3;
    PetscScalar Me[9], Ae[9];
    if (nv == 2) {
      // segment of length h: M = h/6 [2 1; 1 2], K = 1/h [1 -1; -1 1]
      const double h = norm(surf.x[e[1]] - surf.x[e[0]]);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          Me[2 * i + j] = h / 6.0 * (i == j ? 2.0 : 1.0);
          Ae[2 * i + j] = Me[2 * i + j] + L2 / h * (i == j ? 1.0 : -1.0);
        }
    } else {
      // triangle of area T with edges e_i opposite vertex i: M = T/12 (1 + delta_ij),
      // K_ij = e_i . e_j / (4 T)
      const Vec3<double> &p0 = surf.x[e[0]], &p1 = surf.x[e[1]], &p2 = surf.x[e[2]];
      const Vec3<double> edge[3] = {p2 - p1, p0 - p2, p1 - p0};
      const double T = 0.5 * norm(cross(p1 - p0, p2 - p0));
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          Me[3 * i + j] = T / 12.0 * (i == j ? 2.0 : 1.0);
          Ae[3 * i + j] = Me[3 * i + j] + L2 * dot(edge[i], edge[j]) / (4.0 * T);
        }
    }
    const PetscInt rows[3] = {e[0], e[1], e[2]};
    PetscCall(MatSetValues(sn->M, nv, rows, nv, rows, Me, ADD_VALUES));
    PetscCall(MatSetValues(sn->A, nv, rows, nv, rows, Ae, ADD_VALUES));
  }
  for (Mat mat : {sn->M, sn->A}) {
    PetscCall(MatAssemblyBegin(mat, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(mat, MAT_FINAL_ASSEMBLY));
  }
  // a fixed direct solve (no options prefix): the transposed solve reuses the same factors
  PetscCall(KSPCreate(PETSC_COMM_SELF, &sn->ksp));
  PetscCall(KSPSetType(sn->ksp, KSPPREONLY));
  PC pc;
  PetscCall(KSPGetPC(sn->ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(KSPSetOperators(sn->ksp, sn->A, sn->A));
  PetscCall(KSPSetUp(sn->ksp));
  sn->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (surf.of_local[v] >= 0) {
      sn->vertex.push_back(v);
      sn->index.push_back(surf.of_local[v]);
      sn->n.push_back(surf.normal[surf.of_local[v]]);
      sn->moved[v] = 1;
    }
  for (PetscInt g : surf.gid) sn->names.push_back(dc.name + ".v[" + std::to_string(g) + "]");
  *out = std::move(sn);
  PetscFunctionReturn(0);
}

DesignKind kind_of(const std::string &type) {
  if (type == "ffd") return DesignKind::Ffd;
  if (type == "hicks-henne") return DesignKind::HicksHenne;
  if (type == "rigid") return DesignKind::Rigid;
  return DesignKind::SurfaceNormal;
}

// Values of a bounds key: one per variable (the case gives none, one for all, or one each).
std::vector<double> expand(const std::vector<double> &given, std::size_t count, double def) {
  if (given.empty()) return std::vector<double>(count, def);
  if (given.size() == 1) return std::vector<double>(count, given[0]);
  return given;
}

} // namespace

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
  parts_.clear();
  blocks_.clear();
  names_.clear();
  lower_.clear();
  upper_.clear();
  initial_.clear();
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
    }
    const std::size_t count = part->names.size();
    for (const char *key : {"lower", "upper", "initial"}) {
      const std::size_t given = dc.parameters.reals(key).size();
      PetscCheck(given <= 1 || given == count, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: '%s.%s' has %zu values for %zu variables (give 1 for all, or one each)",
                 file.c_str(), dc.label.c_str(), key, given, count);
    }
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (auto [out, key, def] :
         {std::tuple{&lower_, "lower", -inf}, std::tuple{&upper_, "upper", inf},
          std::tuple{&initial_, "initial", 0.0}}) {
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
  PetscFunctionReturn(0);
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
