// Geometric constraint functions and their gradients (see
// include/karman/design/geometric_constraints.hpp; formulas: geometry/body_kernels.hpp).
#include "karman/design/geometric_constraints.hpp"

#include "karman/geometry/body_kernels.hpp"
#include "karman/geometry/geometry_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>

namespace karman::design {

namespace {

const char *const kAxisNames[3] = {"x", "y", "z"};

// The vertex pointers of face f into X.
int face_vertices(const mesh::Mesh &m, PetscInt f, const std::vector<Vec3<double>> &X,
                  const Vec3<double> **v) {
  const PetscInt b = m.face_vertex_ptr[f], n = m.face_vertex_ptr[f + 1] - b;
  for (PetscInt i = 0; i < n; ++i) v[i] = &X[m.face_vertex[b + i]];
  return static_cast<int>(n);
}

// A weight in [1, 2) from a serial vertex index (splitmix64), the same on every rank.
double vertex_weight(PetscInt gid) {
  std::uint64_t z = static_cast<std::uint64_t>(gid) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return 1.0 + static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Checks that the walls close: their faces, oriented out of the fluid, form a chain without
// boundary.  2D: every vertex ends as many faces as it starts (sum of +1 for a face's first
// vertex, -1 for its second is 0).  3D: every edge (v, u) is traversed as often from v to u as
// from u to v; at vertex v, sum over its faces of w(next) - w(prev) with random weights w
// vanishes exactly then (with probability 1).  The sum of the area vectors is not enough: two
// parallel channel walls sum to 0.
PetscErrorCode check_closed(const mesh::Mesh &m, const std::vector<PetscInt> &faces,
                            const char *what, const std::string &walls) {
  PetscFunctionBeginUser;
  std::vector<Vec3<double>> balance(m.n_vertices); // [0]: the sum above, [1]: faces at v
  for (PetscInt f : faces) {
    const PetscInt b = m.face_vertex_ptr[f], n = m.face_vertex_ptr[f + 1] - b;
    for (PetscInt i = 0; i < n; ++i) {
      const PetscInt v = m.face_vertex[b + i];
      if (m.dim == 2) {
        balance[v][0] += i == 0 ? 1.0 : -1.0;
      } else {
        const PetscInt next = m.face_vertex[b + (i + 1) % n],
                       prev = m.face_vertex[b + (i + n - 1) % n];
        balance[v][0] += vertex_weight(m.vertex_gid[next]) - vertex_weight(m.vertex_gid[prev]);
      }
      balance[v][1] += 1.0;
    }
  }
  PetscCall(mesh::sum_vertex_copies(m, balance));
  long open = 0;
  PetscInt first = std::numeric_limits<PetscInt>::max();
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v] && balance[v][1] > 0 && std::abs(balance[v][0]) > 1e-9) {
      ++open;
      first = std::min(first, m.vertex_gid[v]);
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &open, 1, MPI_LONG, MPI_SUM, m.comm));
  if (open == 0) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPIU_INT, MPI_MIN, m.comm));
  double x[3] = {0, 0, 0};
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v] && m.vertex_gid[v] == first)
      for (int d = 0; d < 3; ++d) x[d] = m.coordinates[v][d];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_SUM, m.comm));
  SETERRQ(m.comm, PETSC_ERR_USER_INPUT,
          "%s constraint: the walls %s do not enclose a body: %ld of their vertices lie on an "
          "open %s, e.g. (%g, %g, %g) (name all the walls of the body)",
          what, walls.c_str(), open, m.dim == 2 ? "end of the wall" : "edge of the wall surface",
          x[0], x[1], x[2]);
}

} // namespace

PetscErrorCode GeometricConstraint::setup(const mesh::Mesh &mesh, GeometricConstraintKind kind,
                                          const std::vector<int> &walls, const char *what,
                                          GeometricConstraint *c) {
  PetscFunctionBeginUser;
  PetscCheck(!walls.empty(), mesh.comm, PETSC_ERR_USER_INPUT,
             "%s constraint: no walls given (name the walls that bound the body)", what);
  *c = GeometricConstraint();
  c->mesh_ = &mesh;
  c->kind_ = kind;
  c->walls_ = walls;
  std::set<int> seen;
  std::string list;
  for (int p : walls) {
    PetscCheck(p >= 0 && p < static_cast<int>(mesh.patch_names.size()), mesh.comm,
               PETSC_ERR_ARG_OUTOFRANGE,
               "%s constraint: boundary patch index %d out of range [0, %d)", what, p,
               static_cast<int>(mesh.patch_names.size()));
    PetscCheck(seen.insert(p).second, mesh.comm, PETSC_ERR_USER_INPUT,
               "%s constraint: wall '%s' is listed twice", what, mesh.patch_names[p].c_str());
    list += (list.empty() ? "" : ", ") + mesh.patch_names[p];
    for (PetscInt f : mesh.boundary_faces(p)) c->faces_.push_back(f);
  }
  c->wall_names_ = "[" + list + "]";
  // the centre of the walls' bounding box (partition-independent: min and max are exact)
  double box[6];
  for (int d = 0; d < 3; ++d) box[d] = box[3 + d] = std::numeric_limits<double>::max();
  long nfaces = static_cast<long>(c->faces_.size());
  for (PetscInt f : c->faces_)
    for (PetscInt i = mesh.face_vertex_ptr[f]; i < mesh.face_vertex_ptr[f + 1]; ++i)
      for (int d = 0; d < 3; ++d) {
        const double x = mesh.coordinates[mesh.face_vertex[i]][d];
        box[d] = std::min(box[d], x);
        box[3 + d] = std::min(box[3 + d], -x);
      }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, box, 6, MPI_DOUBLE, MPI_MIN, mesh.comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nfaces, 1, MPI_LONG, MPI_SUM, mesh.comm));
  PetscCheck(nfaces > 0, mesh.comm, PETSC_ERR_USER_INPUT,
             "%s constraint: the walls %s have no faces", what, c->wall_names_.c_str());
  for (int d = 0; d < 3; ++d) c->origin_[d] = 0.5 * (box[d] - box[3 + d]);
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::volume(const mesh::Mesh &mesh, const std::vector<int> &walls,
                                           GeometricConstraint *c) {
  PetscFunctionBeginUser;
  const char *what = mesh.dim == 2 ? "area" : "volume";
  PetscCall(setup(mesh, GeometricConstraintKind::Volume, walls, what, c));
  PetscCall(check_closed(mesh, c->faces_, what, c->wall_names_));
  c->name_ = std::string(what) + "(" + c->wall_names_.substr(1, c->wall_names_.size() - 2) + ")";
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::centroid(const mesh::Mesh &mesh, const std::vector<int> &walls,
                                             int axis, GeometricConstraint *c) {
  PetscFunctionBeginUser;
  PetscCheck(axis >= 0 && axis < mesh.dim, mesh.comm, PETSC_ERR_USER_INPUT,
             "centroid constraint: axis %d is not a coordinate axis of this %dD mesh (0 = x, 1 = "
             "y%s)",
             axis, mesh.dim, mesh.dim == 3 ? ", 2 = z" : "");
  PetscCall(setup(mesh, GeometricConstraintKind::Centroid, walls, "centroid", c));
  PetscCall(check_closed(mesh, c->faces_, "centroid", c->wall_names_));
  c->axis_ = axis;
  c->name_ = std::string("centroid-") + kAxisNames[axis] + "(" +
             c->wall_names_.substr(1, c->wall_names_.size() - 2) + ")";
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::thickness(const mesh::Mesh &mesh, const std::vector<int> &walls,
                                              double station, GeometricConstraint *c) {
  PetscFunctionBeginUser;
  PetscCheck(mesh.dim == 2, mesh.comm, PETSC_ERR_USER_INPUT,
             "thickness constraint: thickness at chord stations is defined for 2D (airfoil) "
             "meshes; this mesh is %dD (use a volume constraint in 3D)",
             mesh.dim);
  PetscCall(setup(mesh, GeometricConstraintKind::Thickness, walls, "thickness", c));
  c->station_ = station;
  char buf[64];
  std::snprintf(buf, sizeof buf, ", x=%g)", station);
  c->name_ = "thickness(" + c->wall_names_.substr(1, c->wall_names_.size() - 2) + buf;
  // the x-range of the walls
  double range[2] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  for (PetscInt f : c->faces_)
    for (PetscInt i = mesh.face_vertex_ptr[f]; i < mesh.face_vertex_ptr[f + 1]; ++i) {
      const double x = mesh.coordinates[mesh.face_vertex[i]][0];
      range[0] = std::min(range[0], x);
      range[1] = std::min(range[1], -x);
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MIN, mesh.comm));
  PetscCheck(range[0] < station && station < -range[1], mesh.comm, PETSC_ERR_USER_INPUT,
             "thickness constraint: station x = %g is outside the body: the walls %s span x in "
             "(%g, %g)",
             station, c->wall_names_.c_str(), range[0], -range[1]);
  GeometricConstraintValue value;
  PetscCall(c->evaluate(mesh.coordinates, false, &value));
  PetscCheck(value.ok, mesh.comm, PETSC_ERR_USER_INPUT, "thickness constraint: %s",
             value.failure.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::evaluate(const std::vector<Vec3<double>> &X, bool gradient,
                                             GeometricConstraintValue *out) const {
  PetscFunctionBeginUser;
  PetscCheck(mesh_, PETSC_COMM_SELF, PETSC_ERR_ORDER,
             "GeometricConstraint::evaluate: the constraint was not set up");
  PetscCheck(static_cast<PetscInt>(X.size()) == mesh_->n_vertices, PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ, "%s: %zu coordinates for %d local vertices", name_.c_str(),
             X.size(), static_cast<int>(mesh_->n_vertices));
  *out = GeometricConstraintValue();
  if (kind_ == GeometricConstraintKind::Thickness)
    PetscCall(evaluate_thickness(X, gradient, out));
  else
    PetscCall(evaluate_body(X, gradient, out));
  if (gradient && out->ok) PetscCall(mesh::sum_vertex_copies(*mesh_, out->dX));
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::evaluate_body(const std::vector<Vec3<double>> &X, bool gradient,
                                                  GeometricConstraintValue *out) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  // vertices relative to x_0, face by face
  auto relative = [&](PetscInt f, Vec3<double> *r, const Vec3<double> **v) {
    const PetscInt b = m.face_vertex_ptr[f], n = m.face_vertex_ptr[f + 1] - b;
    for (PetscInt i = 0; i < n; ++i) r[i] = X[m.face_vertex[b + i]] - origin_, v[i] = &r[i];
    return static_cast<int>(n);
  };
  double sums[4] = {0, 0, 0, 0}; // sum v_f, sum m_f
  for (PetscInt f : faces_) {
    Vec3<double> r[geometry::kMaxFaceVertices];
    const Vec3<double> *v[geometry::kMaxFaceVertices];
    const int n = relative(f, r, v);
    double vf;
    Vec3<double> mf;
    geometry::face_cone_moments(m.dim, v, n, vf, mf);
    sums[0] += vf;
    for (int d = 0; d < 3; ++d) sums[1 + d] += mf[d];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, m.comm));
  const double V = -sums[0];
  double volume_bar = -1.0; // adjoints of sum v_f and sum m_f
  Vec3<double> moment_bar;
  if (kind_ == GeometricConstraintKind::Volume) {
    out->value = V;
  } else {
    if (V == 0) {
      out->ok = false;
      out->failure = name_ + ": the walls " + wall_names_ + " enclose zero volume";
      PetscFunctionReturn(0);
    }
    const double M = -sums[1 + axis_];
    out->value = origin_[axis_] + M / V;
    volume_bar = M / (V * V);
    moment_bar[axis_] = -1.0 / V;
  }
  if (!gradient) PetscFunctionReturn(0);
  out->dX.assign(m.n_vertices, Vec3<double>());
  for (PetscInt f : faces_) {
    Vec3<double> r[geometry::kMaxFaceVertices];
    const Vec3<double> *v[geometry::kMaxFaceVertices];
    const int n = relative(f, r, v);
    Vec3<double> *vbar[geometry::kMaxFaceVertices];
    for (int i = 0; i < n; ++i) vbar[i] = &out->dX[m.face_vertex[m.face_vertex_ptr[f] + i]];
    geometry::face_cone_moments_reverse(m.dim, v, n, volume_bar, moment_bar, vbar);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode GeometricConstraint::evaluate_thickness(const std::vector<Vec3<double>> &X,
                                                       bool gradient,
                                                       GeometricConstraintValue *out) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  std::vector<double> heights;
  std::vector<PetscInt> crossing; // the local faces that cross x = x_s
  for (PetscInt f : faces_) {
    const Vec3<double> *v[geometry::kMaxFaceVertices];
    face_vertices(m, f, X, v);
    if (!geometry::segment_crosses(*v[0], *v[1], station_)) continue;
    heights.push_back(geometry::segment_height(*v[0], *v[1], station_));
    crossing.push_back(f);
  }
  // all crossings on every rank, in rank order
  PetscMPIInt size, rank;
  PetscCallMPI(MPI_Comm_size(m.comm, &size));
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  int n = static_cast<int>(heights.size());
  std::vector<int> counts(size), displs(size, 0);
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, m.comm));
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const int total = displs[size - 1] + counts[size - 1];
  if (total != 2) {
    out->ok = false;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "station x = %g: the vertical line crosses the walls %s %d times (expected 2: "
                  "the upper and the lower surface)",
                  station_, wall_names_.c_str(), total);
    out->failure = buf;
    PetscFunctionReturn(0);
  }
  std::vector<double> all(total);
  PetscCallMPI(MPI_Allgatherv(heights.data(), n, MPI_DOUBLE, all.data(), counts.data(),
                              displs.data(), MPI_DOUBLE, m.comm));
  const int upper = all[1] > all[0] ? 1 : 0;
  out->value = all[upper] - all[1 - upper];
  if (!gradient) PetscFunctionReturn(0);
  out->dX.assign(m.n_vertices, Vec3<double>());
  for (int i = 0; i < n; ++i) {
    const PetscInt f = crossing[i], b = m.face_vertex_ptr[f];
    const PetscInt a0 = m.face_vertex[b], a1 = m.face_vertex[b + 1];
    const double sign = displs[rank] + i == upper ? 1.0 : -1.0;
    geometry::segment_height_reverse(X[a0], X[a1], station_, sign, out->dX[a0], out->dX[a1]);
  }
  PetscFunctionReturn(0);
}

} // namespace karman::design
