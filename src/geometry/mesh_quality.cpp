// Cell quality measures (see include/karman/geometry/mesh_quality.hpp).
#include "karman/geometry/mesh_quality.hpp"

#include <algorithm>
#include <cmath>

namespace karman::geometry {

CellQuality compute_quality(const mesh::Mesh &mesh, const Geometry<double> &g) {
  CellQuality q;
  const PetscInt n = mesh.n_owned_cells;
  q.non_orthogonality.assign(n, 0.0);
  q.skewness.assign(n, 0.0);
  q.aspect_ratio.assign(n, 1.0);
  for (PetscInt c = 0; c < n; ++c) {
    double smin = 1e300, smax = 0;
    for (PetscInt i = mesh.cell_face_ptr[c]; i < mesh.cell_face_ptr[c + 1]; ++i) {
      const PetscInt f = mesh.cell_face[i];
      const PetscInt l = mesh.face_left[f], r = mesh.face_right[f];
      const Vec3<double> &S = g.face_area[f];
      const Vec3<double> d = r >= 0 ? g.cell_centroid[r] - g.cell_centroid[l]
                                    : g.face_centroid[f] - g.cell_centroid[l];
      const double cosine = std::clamp(dot(d, S) / (norm(d) * norm(S)), -1.0, 1.0);
      q.non_orthogonality[c] = std::max(q.non_orthogonality[c], std::acos(cosine) * 180.0 / M_PI);
      const double t = dot(g.face_centroid[f] - g.cell_centroid[l], S) / dot(d, S);
      const Vec3<double> xi = g.cell_centroid[l] + t * d;
      q.skewness[c] = std::max(q.skewness[c], norm(g.face_centroid[f] - xi) / norm(d));
      smin = std::min(smin, norm(S));
      smax = std::max(smax, norm(S));
    }
    q.aspect_ratio[c] = mesh.dim == 3 ? std::sqrt(smax / smin) : smax / smin;
  }
  return q;
}

PetscErrorCode summarize_quality(const mesh::Mesh &mesh, const Geometry<double> &g,
                                 const CellQuality &q, QualitySummary *s) {
  PetscFunctionBeginUser;
  double local_max[4] = {0, 0, 0, 0}, local_min = 1e300;
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    local_max[0] = std::max(local_max[0], q.non_orthogonality[c]);
    local_max[1] = std::max(local_max[1], q.skewness[c]);
    local_max[2] = std::max(local_max[2], q.aspect_ratio[c]);
    local_max[3] = std::max(local_max[3], g.cell_volume[c]);
    local_min = std::min(local_min, g.cell_volume[c]);
  }
  double global_max[4];
  PetscCallMPI(MPI_Allreduce(local_max, global_max, 4, MPI_DOUBLE, MPI_MAX, mesh.comm));
  PetscCallMPI(MPI_Allreduce(&local_min, &s->min_volume, 1, MPI_DOUBLE, MPI_MIN, mesh.comm));
  s->max_non_orthogonality = global_max[0];
  s->max_skewness = global_max[1];
  s->max_aspect_ratio = global_max[2];
  s->max_volume = global_max[3];
  PetscFunctionReturn(0);
}

} // namespace karman::geometry
