// Surface sensitivity (see include/karman/adjoint/surface_sensitivity.hpp).
#include "karman/adjoint/surface_sensitivity.hpp"

namespace karman::adjoint {

PetscErrorCode surface_sensitivity(const discretization::FlowResidual &res, int patch,
                                   const std::vector<Vec3<double>> &Xbar, SurfaceSensitivity *s) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const std::vector<PetscInt> faces = m.boundary_faces(patch);
  std::vector<Vec3<double>> acc(m.n_vertices), dual(m.n_vertices);
  for (PetscInt f : faces) {
    const PetscInt n = m.face_vertex_ptr[f + 1] - m.face_vertex_ptr[f];
    const Vec3<double> &S = res.geometry().face_area[f];
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i) {
      acc[m.face_vertex[i]] -= (1.0 / n) * S; // into the fluid, weighted by the face's share
      dual[m.face_vertex[i]][0] += norm(S) / n;
    }
  }
  PetscCall(mesh::sum_vertex_copies(m, acc));
  PetscCall(mesh::sum_vertex_copies(m, dual));
  s->normal.assign(m.n_vertices, Vec3<double>());
  s->area.assign(m.n_vertices, 0.0);
  s->value.assign(m.n_vertices, 0.0);
  s->density.assign(m.n_vertices, 0.0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const double a = norm(acc[v]);
    if (a > 0) s->normal[v] = (1.0 / a) * acc[v];
    s->area[v] = dual[v][0];
    s->value[v] = dot(Xbar[v], s->normal[v]);
    s->density[v] = s->area[v] > 0 ? s->value[v] / s->area[v] : 0.0;
  }
  s->face_density.clear();
  for (PetscInt f : faces) {
    double sum = 0;
    const PetscInt n = m.face_vertex_ptr[f + 1] - m.face_vertex_ptr[f];
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
      sum += s->density[m.face_vertex[i]];
    s->face_density.push_back(sum / n);
  }
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
