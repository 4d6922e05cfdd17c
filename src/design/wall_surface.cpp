// The walls of a parameterization gathered on every rank (see
// include/karman/design/wall_surface.hpp).
#include "karman/design/wall_surface.hpp"

#include "karman/geometry/geometry_kernels.hpp"

#include <algorithm>
#include <map>

namespace karman::design {

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

} // namespace karman::design
