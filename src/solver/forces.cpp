// Forces, wall stresses and probes (see include/karman/solver/forces.hpp).
#include "karman/solver/forces.hpp"

#include "karman/core/parallel.hpp"

#include <algorithm>
#include <cmath>

namespace karman::solver {

using discretization::FaceKind;

namespace {

// Pressure and viscous force of the fluid on boundary face f (on a rotating wall the viscous
// part is that of the symmetric stress: physics::rotating_wall_traction).
void face_force(const discretization::FlowResidual &res, const discretization::LocalState &state,
                PetscInt f, Vec3<double> *fp, Vec3<double> *fv) {
  const auto &bcs = res.boundary_conditions();
  const physics::CellState<double> L = state.cell(res.mesh().face_left[f]);
  const physics::FaceGeometry<double> g = res.face_geometry(f);
  *fv = Vec3<double>();
  if (bcs.kind(f) == FaceKind::VelocityDirichlet) {
    double pf;
    Vec3<double> visc;
    physics::dirichlet_face_stress(res.mesh().dim, L, g, res.parameters(), bcs.velocity(f), pf,
                                   visc);
    *fp = pf * g.S;
    *fv = physics::rotating_wall_traction(res.parameters(), bcs.rotation(f), g.S) - visc;
    return;
  }
  double pf = bcs.kind(f) == FaceKind::PressureOutlet ? bcs.pressure(f) : L.w[0];
  if (bcs.kind(f) != FaceKind::PressureOutlet)
    for (int c = 0; c < 3; ++c) pf += L.g[0][c] * (g.xf[c] - g.xL[c]);
  *fp = pf * g.S;
}

} // namespace

ForceScaling force_scaling(const discretization::FlowResidual &res) {
  const discretization::ReferenceOptions &ref = res.reference();
  const double rho = res.parameters().rho, U = ref.velocity;
  ForceScaling s;
  s.q = 0.5 * rho * U * U;
  s.length = ref.length;
  s.area = res.mesh().dim == 2 ? s.length : (ref.area > 0 ? ref.area : s.length * s.length);
  s.moment_center = ref.moment_center;
  return s;
}

PetscErrorCode wall_force(const discretization::FlowResidual &res,
                          const discretization::LocalState &state, const std::vector<int> &patches,
                          const Vec3<double> &center, ForceReport *report) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  PetscCall(res.boundary_data(state.level));
  double local[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int p : patches)
    for (PetscInt f : m.boundary_faces(p)) {
      Vec3<double> fp, fv;
      face_force(res, state, f, &fp, &fv);
      const Vec3<double> mom = cross(res.geometry().face_centroid[f] - center, fp + fv);
      for (int c = 0; c < 3; ++c) local[c] += fp[c], local[3 + c] += fv[c], local[6 + c] += mom[c];
    }
  double global[9];
  PetscCallMPI(MPI_Allreduce(local, global, 9, MPI_DOUBLE, MPI_SUM, m.comm));
  for (int c = 0; c < 3; ++c) {
    report->pressure[c] = global[c];
    report->viscous[c] = global[3 + c];
    report->moment[c] = global[6 + c];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode wall_stress(const discretization::FlowResidual &res,
                           const discretization::LocalState &state, int patch,
                           std::vector<double> *pressure, std::vector<Vec3<double>> *shear) {
  PetscFunctionBeginUser;
  PetscCall(res.boundary_data(state.level));
  pressure->clear();
  shear->clear();
  for (PetscInt f : res.mesh().boundary_faces(patch)) {
    Vec3<double> fp, fv;
    face_force(res, state, f, &fp, &fv);
    const Vec3<double> &S = res.geometry().face_area[f];
    const double A2 = dot(S, S);
    pressure->push_back(dot(fp, S) / A2);
    shear->push_back((1.0 / std::sqrt(A2)) * fv);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode first_cell_y_plus(const discretization::FlowResidual &res,
                                 const discretization::LocalState &state,
                                 const std::vector<int> &patches, YPlus *out) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  const auto &fp = res.parameters();
  double largest = -1;
  double sums[3] = {0, 0, 0}; // y+ A, A, faces
  Vec3<double> where{};
  for (int p : patches) {
    std::vector<double> pressure;
    std::vector<Vec3<double>> tau;
    PetscCall(wall_stress(res, state, p, &pressure, &tau));
    const std::vector<PetscInt> faces = m.boundary_faces(p);
    for (std::size_t k = 0; k < faces.size(); ++k) {
      const PetscInt f = faces[k];
      const Vec3<double> &S = g.face_area[f];
      const double A = norm(S);
      const double d =
          std::abs(dot(g.cell_centroid[m.face_left[f]] - g.face_centroid[f], (1.0 / A) * S));
      const double y_plus = d * std::sqrt(norm(tau[k]) / fp.rho) / fp.nu;
      sums[0] += y_plus * A, sums[1] += A, sums[2] += 1;
      if (y_plus > largest) largest = y_plus, where = g.face_centroid[f];
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, m.comm));
  double xyz[3] = {where[0], where[1], where[2]};
  PetscCall(max_with_data(m.comm, largest, xyz, 3, &largest, xyz));
  out->max = std::max(largest, 0.0);
  out->mean = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  out->where = {xyz[0], xyz[1], xyz[2]};
  out->faces = static_cast<int>(sums[2]);
  PetscFunctionReturn(0);
}

PetscErrorCode PointProbes::setup(const discretization::FlowResidual &res,
                                  const std::vector<Vec3<double>> &points,
                                  const std::string &context) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  comm_ = m.comm;
  points_ = points;
  cell_.assign(points.size(), -1);
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  for (std::size_t i = 0; i < points.size(); ++i) {
    // the owned cell whose faces the point violates least (0 when inside), relative to its size
    struct {
      double violation;
      int rank;
    } local{1e300, rank}, best{};
    PetscInt best_cell = -1;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double h = std::pow(g.cell_volume[c], 1.0 / m.dim);
      double worst = 0;
      for (PetscInt k = m.cell_face_ptr[c]; k < m.cell_face_ptr[c + 1]; ++k) {
        const PetscInt f = m.cell_face[k];
        const double sigma = m.face_left[f] == c ? 1.0 : -1.0;
        const double s =
            sigma * dot(points[i] - g.face_centroid[f], g.face_area[f]) / norm(g.face_area[f]);
        worst = std::max(worst, s / h);
      }
      if (worst < local.violation) local.violation = worst, best_cell = c;
    }
    PetscCallMPI(MPI_Allreduce(&local, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, m.comm));
    PetscCheck(best.violation < 0.1, m.comm, PETSC_ERR_USER_INPUT,
               "%s: point (%g, %g, %g) is outside the mesh", context.c_str(), points[i][0],
               points[i][1], points[i][2]);
    if (best.rank == rank) cell_[i] = best_cell;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode PointProbes::evaluate(const discretization::FlowResidual &res,
                                     const discretization::LocalState &state,
                                     std::vector<double> *values) const {
  PetscFunctionBeginUser;
  const int nv = res.nv();
  std::vector<double> local(points_.size() * nv, 0.0);
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (cell_[i] < 0) continue;
    const physics::CellState<double> s = state.cell(cell_[i]);
    const Vec3<double> r = points_[i] - res.geometry().cell_centroid[cell_[i]];
    for (int k = 0; k < nv; ++k)
      local[i * nv + k] = s.w[k] + s.g[k][0] * r[0] + s.g[k][1] * r[1] + s.g[k][2] * r[2];
  }
  values->assign(local.size(), 0.0);
  PetscCallMPI(MPI_Allreduce(local.data(), values->data(), static_cast<int>(local.size()),
                             MPI_DOUBLE, MPI_SUM, comm_));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
