// Forward re-solves and shape perturbations for gradient verification
// (see include/karman/adjoint/verification.hpp).
#include "karman/adjoint/verification.hpp"

#include <cmath>

namespace karman::adjoint {

PetscErrorCode resolve_objective(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w0, Vec w, double *J,
                                 int *newton_iterations) {
  PetscFunctionBeginUser;
  // plain Newton: the perturbed state is close to w0
  config::CaseConfig newton_cfg;
  PetscCall(config::CaseConfig::load_text(
      res.mesh().comm, cfg.resolved_yaml(), cfg.file(), cfg.directory(),
      {"solver.cfl_initial=1e300", "solver.cfl_max=1e300"}, newton_cfg));
  solver::SteadySolver newton;
  PetscCall(newton.setup(res, newton_cfg));
  PetscCall(VecCopy(w0, w));
  solver::SteadySummary s;
  PetscCall(newton.solve(w, {}, nullptr, &s));
  PetscCheck(s.converged, res.mesh().comm, PETSC_ERR_NOT_CONVERGED,
             "verification: the perturbed forward problem did not converge (%s, |R| %.3e -> %.3e); "
             "use smaller steps",
             s.reason.c_str(), s.initial_residual, s.final_residual);
  PetscCall(res.update_local(w));
  PetscCall(objective.value(res, J));
  if (newton_iterations) *newton_iterations = s.iterations;
  PetscFunctionReturn(0);
}

PetscErrorCode bump_displacement(const discretization::FlowResidual &res, int patch,
                                 const Vec3<double> &towards, std::vector<Vec3<double>> *dX) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  const std::vector<PetscInt> faces = m.boundary_faces(patch);
  // centre of the wall (area-weighted face centroids)
  double loc[4] = {0, 0, 0, 0};
  for (PetscInt f : faces) {
    const double a = norm(g.face_area[f]);
    for (int d = 0; d < 3; ++d) loc[d] += a * g.face_centroid[f][d];
    loc[3] += a;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, loc, 4, MPI_DOUBLE, MPI_SUM, m.comm));
  PetscCheck(loc[3] > 0, m.comm, PETSC_ERR_USER_INPUT, "bump: boundary %s has no faces",
             m.patch_names[patch].c_str());
  const Vec3<double> centre(loc[0] / loc[3], loc[1] / loc[3], loc[2] / loc[3]);
  // the face furthest along `towards`, and the wall's radius
  struct {
    double value;
    int rank;
  } best{-1e300, 0}, global{};
  MPI_Comm_rank(m.comm, &best.rank);
  double radius = 0;
  PetscInt best_face = -1;
  for (PetscInt f : faces) {
    const double s = dot(g.face_centroid[f] - centre, towards);
    radius = std::max(radius, norm(g.face_centroid[f] - centre));
    if (s > best.value) best.value = s, best_face = f;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &radius, 1, MPI_DOUBLE, MPI_MAX, m.comm));
  PetscCallMPI(MPI_Allreduce(&best, &global, 1, MPI_DOUBLE_INT, MPI_MAXLOC, m.comm));
  double x0n0[6] = {0, 0, 0, 0, 0, 0};
  if (global.rank == best.rank && best_face >= 0) {
    const Vec3<double> n =
        (-1.0 / norm(g.face_area[best_face])) * g.face_area[best_face]; // into the fluid
    for (int d = 0; d < 3; ++d) x0n0[d] = g.face_centroid[best_face][d], x0n0[3 + d] = n[d];
  }
  PetscCallMPI(MPI_Bcast(x0n0, 6, MPI_DOUBLE, global.rank, m.comm));
  const Vec3<double> x0(x0n0[0], x0n0[1], x0n0[2]), n0(x0n0[3], x0n0[4], x0n0[5]);
  const double sigma = radius / 3;
  dX->assign(m.n_vertices, Vec3<double>());
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const Vec3<double> r = res.coordinates()[v] - x0;
    (*dX)[v] = std::exp(-dot(r, r) / (sigma * sigma)) * n0;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode vertex_dot(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &a,
                          const std::vector<Vec3<double>> &b, double *value) {
  PetscFunctionBeginUser;
  double s = 0;
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    if (mesh.vertex_owned[v]) s += dot(a[v], b[v]);
  PetscCallMPI(MPI_Allreduce(&s, value, 1, MPI_DOUBLE, MPI_SUM, mesh.comm));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
