// Values on a nested refinement (see include/karman/io/nested_transfer.hpp).
#include "karman/io/nested_transfer.hpp"

#include "karman/io/field_transfer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace karman::io {

namespace {

constexpr int kCandidates = 12;
constexpr int kMaxCellVertices = 8;

/// The faces of a cell as vertex lists (VTK order; edges in 2D).
std::vector<std::vector<int>> cell_faces(mesh::CellShape shape) {
  using S = mesh::CellShape;
  switch (shape) {
  case S::Triangle:
    return {{0, 1}, {1, 2}, {2, 0}};
  case S::Quadrilateral:
    return {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  case S::Tetrahedron:
    return {{0, 1, 3}, {1, 2, 3}, {2, 0, 3}, {0, 2, 1}};
  case S::Hexahedron:
    return {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  case S::Prism:
    return {{0, 1, 2}, {3, 5, 4}, {0, 3, 4, 1}, {1, 4, 5, 2}, {2, 5, 3, 0}};
  case S::Pyramid:
    return {{0, 3, 2, 1}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
  }
  return {};
}

/// One gathered coarse cell: record layout
/// [global index, shape, vertex count, centroid (3), vertices (kMaxCellVertices x 3),
///  values (ncomp), gradients (ncomp x 3)].
struct Records {
  int ncomp = 0;
  std::vector<double> data;
  std::size_t size() const { return 6 + 3 * kMaxCellVertices + 4 * ncomp; }
  std::size_t count() const { return data.size() / size(); }
  const double *at(std::size_t i) const { return data.data() + i * size(); }
  static Vec3<double> point(const double *p) { return {p[0], p[1], p[2]}; }
  Vec3<double> centroid(std::size_t i) const { return point(at(i) + 3); }
  Vec3<double> vertex(std::size_t i, int k) const { return point(at(i) + 6 + 3 * k); }
  const double *values(std::size_t i) const { return at(i) + 6 + 3 * kMaxCellVertices; }
};

/// The linear reconstruction phi_P + grad phi_P . dx of ncomp values at `vg` (values, then
/// ncomp x 3 gradients) into out[0..ncomp).
void reconstruct_at(const double *vg, int ncomp, int dim, const Vec3<double> &dx, double *out) {
  for (int k = 0; k < ncomp; ++k) {
    double s = vg[k];
    for (int d = 0; d < dim; ++d) s += vg[ncomp + 3 * k + d] * dx[d];
    out[k] = s;
  }
}

/// How far x lies outside coarse cell i, relative to the cell's size: <= 0 inside.
double outside_by(const Records &r, std::size_t i, int dim, const Vec3<double> &x) {
  const double *p = r.at(i);
  const auto shape = static_cast<mesh::CellShape>(static_cast<int>(p[1]));
  const Vec3<double> xc = r.centroid(i);
  double worst = -std::numeric_limits<double>::infinity(), size = 0;
  for (int k = 0; k < static_cast<int>(p[2]); ++k) size = std::max(size, norm(r.vertex(i, k) - xc));
  for (const auto &face : cell_faces(shape)) {
    Vec3<double> fc(0, 0, 0), n(0, 0, 0);
    for (int k : face) fc += r.vertex(i, k);
    fc *= 1.0 / static_cast<double>(face.size());
    if (dim == 2) {
      const Vec3<double> e = r.vertex(i, face[1]) - r.vertex(i, face[0]);
      n = Vec3<double>(e[1], -e[0], 0);
    } else {
      for (std::size_t k = 0; k < face.size(); ++k) { // Newell
        const Vec3<double> a = r.vertex(i, face[k]), b = r.vertex(i, face[(k + 1) % face.size()]);
        n += Vec3<double>((a[1] - b[1]) * (a[2] + b[2]), (a[2] - b[2]) * (a[0] + b[0]),
                          (a[0] - b[0]) * (a[1] + b[1]));
      }
    }
    const double nn = norm(n);
    if (nn == 0) continue;
    n *= 1.0 / nn;
    if (dot(n, xc - fc) > 0) n *= -1.0; // outward
    worst = std::max(worst, dot(n, x - fc));
  }
  return worst / std::max(size, 1e-300);
}

/// Every rank's owned coarse cells on every rank.  Collective.
PetscErrorCode gather_cells(const mesh::Mesh &coarse, const std::vector<Vec3<double>> &X,
                            const std::vector<Vec3<double>> &centroid, int ncomp,
                            const std::vector<double> &values, const std::vector<double> &grads,
                            Records *r) {
  PetscFunctionBeginUser;
  r->ncomp = ncomp;
  const std::size_t rs = r->size();
  std::vector<double> mine(rs * coarse.n_owned_cells, 0.0);
  for (PetscInt c = 0; c < coarse.n_owned_cells; ++c) {
    double *p = mine.data() + c * rs;
    const PetscInt v0 = coarse.cell_vertex_ptr[c], nv = coarse.cell_vertex_ptr[c + 1] - v0;
    PetscCheck(nv <= kMaxCellVertices, coarse.comm, PETSC_ERR_SUP, "cell with %d vertices",
               static_cast<int>(nv));
    p[0] = static_cast<double>(coarse.cell_global[c]);
    p[1] = static_cast<double>(static_cast<int>(coarse.cell_shape[c]));
    p[2] = static_cast<double>(nv);
    for (int d = 0; d < 3; ++d) p[3 + d] = centroid[c][d];
    for (PetscInt k = 0; k < nv; ++k)
      for (int d = 0; d < 3; ++d) p[6 + 3 * k + d] = X[coarse.cell_vertex[v0 + k]][d];
    double *v = p + 6 + 3 * kMaxCellVertices;
    for (int k = 0; k < ncomp; ++k) {
      v[k] = values[c * ncomp + k];
      for (int d = 0; d < 3; ++d) v[ncomp + 3 * k + d] = grads[(c * ncomp + k) * 3 + d];
    }
  }
  int size;
  PetscCallMPI(MPI_Comm_size(coarse.comm, &size));
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), offsets(size, 0);
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, coarse.comm));
  for (int q = 1; q < size; ++q) offsets[q] = offsets[q - 1] + counts[q - 1];
  r->data.resize(static_cast<std::size_t>(offsets.back() + counts.back()));
  PetscCallMPI(MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, r->data.data(), counts.data(),
                              offsets.data(), MPI_DOUBLE, coarse.comm));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode transfer_nested(const mesh::Mesh &coarse, const std::vector<Vec3<double>> &coarse_X,
                               const std::vector<Vec3<double>> &coarse_centroid, int ncomp,
                               const std::vector<double> &values,
                               const std::vector<double> &gradients, const mesh::Mesh &fine,
                               const std::vector<Vec3<double>> &fine_centroid,
                               NestedTransfer *out) {
  PetscFunctionBeginUser;
  Records r;
  PetscCall(gather_cells(coarse, coarse_X, coarse_centroid, ncomp, values, gradients, &r));
  std::vector<Vec3<double>> points(r.count());
  for (std::size_t i = 0; i < r.count(); ++i) points[i] = r.centroid(i);
  PointCloudInterpolator cloud;
  cloud.build(coarse.dim, points);
  out->values.assign(static_cast<std::size_t>(fine.n_owned_cells) * ncomp, 0.0);
  out->parent.assign(fine.n_owned_cells, -1);
  long outside = 0;
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c) {
    const Vec3<double> &x = fine_centroid[c];
    std::size_t best = 0;
    double best_out = std::numeric_limits<double>::infinity();
    for (std::size_t i : cloud.nearest(x, kCandidates)) {
      const double o = outside_by(r, i, coarse.dim, x);
      if (o < best_out) best = i, best_out = o;
      if (o <= 1e-12) break; // nearest first: the first that contains x
    }
    outside += best_out > 1e-12;
    out->parent[c] = static_cast<PetscInt>(r.at(best)[0]);
    reconstruct_at(r.values(best), ncomp, coarse.dim, x - r.centroid(best),
                   out->values.data() + c * ncomp);
  }
  PetscCallMPI(MPI_Allreduce(&outside, &out->outside, 1, MPI_LONG, MPI_SUM, coarse.comm));
  PetscFunctionReturn(0);
}

namespace {

/// Moves `unit` records of `n` doubles between the roots and leaves of sf: root to leaf
/// (Bcast) or leaf summed into root (Reduce).  Collective.
PetscErrorCode move(PetscSF sf, int n, const double *from, double *to, bool to_leaves) {
  PetscFunctionBeginUser;
  MPI_Datatype unit;
  PetscCallMPI(MPI_Type_contiguous(n, MPI_DOUBLE, &unit));
  PetscCallMPI(MPI_Type_commit(&unit));
  if (to_leaves) {
    PetscCall(PetscSFBcastBegin(sf, unit, from, to, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf, unit, from, to, MPI_REPLACE));
  } else {
    PetscCall(PetscSFReduceBegin(sf, unit, from, to, MPI_SUM));
    PetscCall(PetscSFReduceEnd(sf, unit, from, to, MPI_SUM));
  }
  PetscCallMPI(MPI_Type_free(&unit));
  PetscFunctionReturn(0);
}

} // namespace

NestedParents::~NestedParents() {
  if (sf_) PetscSFDestroy(&sf_);
}

PetscErrorCode NestedParents::setup(const mesh::Mesh &coarse, const mesh::Mesh &fine,
                                    const std::vector<PetscInt> &parent) {
  PetscFunctionBeginUser;
  if (sf_) PetscCall(PetscSFDestroy(&sf_));
  n_coarse_ = coarse.n_owned_cells;
  n_fine_ = fine.n_owned_cells;
  dim_ = coarse.dim;
  PetscCheck(static_cast<PetscInt>(parent.size()) == n_fine_, coarse.comm, PETSC_ERR_ARG_SIZ,
             "%zu parents for %d fine cells", parent.size(), static_cast<int>(n_fine_));
  // the roots: the owned coarse cells, numbered contiguously per rank in local order
  bool contiguous = true;
  for (PetscInt c = 0; c < n_coarse_; ++c)
    contiguous = contiguous && coarse.cell_global[c] == coarse.cell_global[0] + c;
  PetscCheck(contiguous, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "owned cells are not numbered contiguously");
  PetscLayout layout;
  PetscCall(PetscLayoutCreate(coarse.comm, &layout));
  PetscCall(PetscLayoutSetLocalSize(layout, n_coarse_));
  PetscCall(PetscLayoutSetSize(layout, coarse.n_global_cells));
  PetscCall(PetscLayoutSetUp(layout));
  PetscCall(PetscSFCreate(coarse.comm, &sf_));
  PetscCall(PetscSFSetGraphLayout(sf_, layout, n_fine_, nullptr, PETSC_COPY_VALUES, parent.data()));
  PetscCall(PetscSFSetUp(sf_));
  PetscCall(PetscLayoutDestroy(&layout));
  PetscFunctionReturn(0);
}

PetscErrorCode NestedParents::reconstruct(const std::vector<Vec3<double>> &coarse_centroid,
                                          int ncomp, const std::vector<double> &values,
                                          const std::vector<double> &gradients,
                                          const std::vector<Vec3<double>> &fine_centroid,
                                          std::vector<double> *out) const {
  PetscFunctionBeginUser;
  // per coarse cell: centroid (3), values (ncomp), gradients (ncomp x 3)
  const int rs = 3 + 4 * ncomp;
  std::vector<double> roots(static_cast<std::size_t>(n_coarse_) * rs), leaves(n_fine_ * rs);
  for (PetscInt c = 0; c < n_coarse_; ++c) {
    double *p = roots.data() + c * rs;
    for (int d = 0; d < 3; ++d) p[d] = coarse_centroid[c][d];
    for (int k = 0; k < ncomp; ++k) {
      p[3 + k] = values[c * ncomp + k];
      for (int d = 0; d < 3; ++d) p[3 + ncomp + 3 * k + d] = gradients[(c * ncomp + k) * 3 + d];
    }
  }
  PetscCall(move(sf_, rs, roots.data(), leaves.data(), true));
  out->assign(static_cast<std::size_t>(n_fine_) * ncomp, 0.0);
  for (PetscInt c = 0; c < n_fine_; ++c) {
    const double *p = leaves.data() + c * rs;
    reconstruct_at(p + 3, ncomp, dim_, fine_centroid[c] - Vec3<double>(p[0], p[1], p[2]),
                   out->data() + c * ncomp);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NestedParents::sum_to_parents(int ncomp, const std::vector<double> &fine,
                                             std::vector<double> *coarse) const {
  PetscFunctionBeginUser;
  coarse->assign(static_cast<std::size_t>(n_coarse_) * ncomp, 0.0);
  PetscCall(move(sf_, ncomp, fine.data(), coarse->data(), false));
  PetscFunctionReturn(0);
}

} // namespace karman::io
