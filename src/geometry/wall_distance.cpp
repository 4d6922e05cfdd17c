// The wall distance field (see include/karman/geometry/wall_distance.hpp).
#include "karman/geometry/wall_distance.hpp"

#include "karman/geometry/wall_distance_kernels.hpp"

#include <vtkCellArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkStaticCellLocator.h>

#include <algorithm>

namespace karman::geometry {

namespace {

/// Gathers every rank's `local` values on every rank, in rank order.  Collective.
template <typename T>
PetscErrorCode all_gather(MPI_Comm comm, const std::vector<T> &local, MPI_Datatype type, int width,
                          std::vector<T> *all) {
  PetscFunctionBeginUser;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const int n = static_cast<int>(local.size()) / width;
  std::vector<int> counts(size), offsets(size + 1, 0);
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r) {
    counts[r] *= width;
    offsets[r + 1] = offsets[r] + counts[r];
  }
  all->resize(offsets[size]);
  PetscCallMPI(MPI_Allgatherv(local.data(), n * width, type, all->data(), counts.data(),
                              offsets.data(), type, comm));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode WallDistance::setup(const mesh::Mesh &mesh, const std::vector<int> &patches) {
  PetscFunctionBeginUser;
  mesh_ = &mesh;
  local_face_vertex_.clear();
  std::vector<int> counts;
  std::vector<PetscInt> gids;
  for (int p : patches)
    for (PetscInt f : mesh.boundary_faces(p)) {
      const PetscInt begin = mesh.face_vertex_ptr[f], end = mesh.face_vertex_ptr[f + 1];
      counts.push_back(static_cast<int>(end - begin));
      for (PetscInt k = begin; k < end; ++k) {
        local_face_vertex_.push_back(mesh.face_vertex[k]);
        gids.push_back(mesh.vertex_gid[mesh.face_vertex[k]]);
      }
    }
  std::vector<int> all_counts;
  PetscCall(all_gather(mesh.comm, counts, MPI_INT, 1, &all_counts));
  PetscCall(all_gather(mesh.comm, gids, MPIU_INT, 1, &slot_gid_));
  PetscCheck(!all_counts.empty(), mesh.comm, PETSC_ERR_USER_INPUT,
             "wall distance: the mesh has no face on the wall boundaries");
  face_ptr_.assign(1, 0);
  for (int c : all_counts) face_ptr_.push_back(face_ptr_.back() + c);
  wall_gid_ = slot_gid_;
  std::sort(wall_gid_.begin(), wall_gid_.end());
  wall_gid_.erase(std::unique(wall_gid_.begin(), wall_gid_.end()), wall_gid_.end());
  slot_vertex_.resize(slot_gid_.size());
  for (std::size_t s = 0; s < slot_gid_.size(); ++s)
    slot_vertex_[s] = static_cast<int>(
        std::lower_bound(wall_gid_.begin(), wall_gid_.end(), slot_gid_[s]) - wall_gid_.begin());
  PetscFunctionReturn(0);
}

PetscErrorCode WallDistance::compute(const std::vector<Vec3<double>> &X,
                                     const std::vector<Vec3<double>> &points,
                                     std::vector<double> *d) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  std::vector<double> local;
  for (PetscInt v : local_face_vertex_)
    for (int k = 0; k < 3; ++k) local.push_back(X[v][k]);
  std::vector<double> all;
  PetscCall(all_gather(m.comm, local, MPI_DOUBLE, 3, &all));
  slot_X_.resize(slot_gid_.size());
  for (std::size_t s = 0; s < slot_X_.size(); ++s)
    slot_X_[s] = Vec3<double>(all[3 * s], all[3 * s + 1], all[3 * s + 2]);
  // the facets as VTK cells: segments, triangles, or the triangles (p, v_k, v_k+1) of a polygon
  vtkNew<vtkPoints> pts;
  vtkNew<vtkCellArray> cells;
  std::vector<int> facet_face;
  for (std::size_t s = 0; s < slot_X_.size(); ++s)
    pts->InsertNextPoint(slot_X_[s][0], slot_X_[s][1], slot_X_[s][2]);
  const std::size_t nf = n_faces();
  for (std::size_t f = 0; f < nf; ++f) {
    const int b = face_ptr_[f], n = face_ptr_[f + 1] - b;
    if (m.dim == 2 || n <= 3) {
      std::vector<vtkIdType> ids(n);
      for (int k = 0; k < n; ++k) ids[k] = b + k;
      cells->InsertNextCell(n, ids.data());
      facet_face.push_back(static_cast<int>(f));
      continue;
    }
    Vec3<double> p;
    for (int k = 0; k < n; ++k) p += slot_X_[b + k];
    p *= 1.0 / n;
    const vtkIdType centre = pts->InsertNextPoint(p[0], p[1], p[2]);
    for (int k = 0; k < n; ++k) {
      const vtkIdType tri[3] = {centre, b + k, b + (k + 1) % n};
      cells->InsertNextCell(3, tri);
      facet_face.push_back(static_cast<int>(f));
    }
  }
  vtkNew<vtkPolyData> wall;
  wall->SetPoints(pts);
  if (m.dim == 2)
    wall->SetLines(cells);
  else
    wall->SetPolys(cells);
  vtkNew<vtkStaticCellLocator> locator;
  locator->SetDataSet(wall);
  locator->BuildLocator();
  points_ = points;
  nearest_.assign(points.size(), -1);
  d->assign(points.size(), 0.0);
  std::vector<const Vec3<double> *> v;
  for (std::size_t i = 0; i < points.size(); ++i) {
    double x[3] = {points[i][0], points[i][1], points[i][2]}, closest[3], dist2;
    vtkIdType cell;
    int sub;
    locator->FindClosestPoint(x, closest, cell, sub, dist2);
    const int f = facet_face[cell], b = face_ptr_[f], n = face_ptr_[f + 1] - b;
    v.resize(n);
    for (int k = 0; k < n; ++k) v[k] = &slot_X_[b + k];
    nearest_[i] = f;
    (*d)[i] = point_face_distance(m.dim, points[i], v.data(), n);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode WallDistance::reverse(const std::vector<double> &dbar,
                                     std::vector<Vec3<double>> *points_bar,
                                     std::vector<Vec3<double>> *Xbar) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  std::vector<double> wall_bar(3 * wall_gid_.size(), 0.0);
  std::vector<const Vec3<double> *> v;
  std::vector<Vec3<double>> slot_bar;
  std::vector<Vec3<double> *> vbar;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (dbar[i] == 0) continue;
    const int f = nearest_[i], b = face_ptr_[f], n = face_ptr_[f + 1] - b;
    v.resize(n), vbar.resize(n);
    slot_bar.assign(n, Vec3<double>());
    for (int k = 0; k < n; ++k) v[k] = &slot_X_[b + k], vbar[k] = &slot_bar[k];
    point_face_distance_reverse(m.dim, points_[i], v.data(), n, dbar[i], (*points_bar)[i],
                                vbar.data());
    for (int k = 0; k < n; ++k)
      for (int c = 0; c < 3; ++c) wall_bar[3 * slot_vertex_[b + k] + c] += slot_bar[k][c];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, wall_bar.data(), static_cast<int>(wall_bar.size()),
                             MPI_DOUBLE, MPI_SUM, m.comm));
  for (PetscInt lv = 0; lv < m.n_vertices; ++lv) {
    if (!m.vertex_owned[lv]) continue;
    const auto it = std::lower_bound(wall_gid_.begin(), wall_gid_.end(), m.vertex_gid[lv]);
    if (it == wall_gid_.end() || *it != m.vertex_gid[lv]) continue;
    const std::size_t w = it - wall_gid_.begin();
    for (int c = 0; c < 3; ++c) (*Xbar)[lv][c] += wall_bar[3 * w + c];
  }
  PetscFunctionReturn(0);
}

} // namespace karman::geometry
