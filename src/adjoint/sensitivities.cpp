// Reverse-mode accumulation (see include/karman/adjoint/sensitivities.hpp).
#include "karman/adjoint/sensitivities.hpp"

#include <cmath>

namespace karman::adjoint {

using discretization::FaceKind;
using discretization::FlowResidual;
using discretization::LocalState;

void Sensitivities::reset(const FlowResidual &res) {
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  wbar.assign(m.n_cells * nv, 0.0);
  Gbar.assign(m.n_cells * nv * 3, 0.0);
  geometry::zero_geometry(m, geom); // in place: reset at every level of a sweep
  bbar.assign(m.n_flux_faces * nv, 0.0);
  rotbar.assign(m.n_flux_faces, 0.0);
  const ParameterRegistry registry(res);
  parameters.assign(registry.size(), 0.0);
  term_offset.resize(res.terms().size());
  for (std::size_t t = 0; t < term_offset.size(); ++t) term_offset[t] = registry.term_offset(t);
  nu = 0;
  wall_distance.assign(res.wall_distance().size(), 0.0);
}

namespace {

void scatter(const FlowResidual &res, PetscInt f, const physics::FluxBar &b, Sensitivities &s) {
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const PetscInt L = m.face_left[f], R = m.face_right[f];
  for (int k = 0; k < nv; ++k) {
    s.wbar[L * nv + k] += b.L.w[k];
    for (int c = 0; c < 3; ++c) s.Gbar[(L * nv + k) * 3 + c] += b.L.g[k][c];
    if (R >= 0) {
      s.wbar[R * nv + k] += b.R.w[k];
      for (int c = 0; c < 3; ++c) s.Gbar[(R * nv + k) * 3 + c] += b.R.g[k][c];
    }
  }
  s.geom.face_area[f] += b.S;
  s.geom.face_centroid[f] += b.xf;
  s.geom.cell_centroid[L] += b.xL;
  if (R >= 0) s.geom.cell_centroid[R] += b.xR;
  for (int k = 0; k < nv; ++k) s.bbar[f * nv + k] += b.bv[k];
  s.nu += b.nu;
}

} // namespace

void Sensitivities::add_face(const FlowResidual &res, const LocalState &state, PetscInt f,
                             const double *lambda) {
  const mesh::Mesh &m = res.mesh();
  const physics::CellState<double> L = state.cell(m.face_left[f]);
  const physics::FaceGeometry<double> g = res.face_geometry(f);
  const PetscInt r = m.face_right[f];
  physics::CellState<double> R{};
  if (r >= 0) R = state.cell(r);
  const discretization::FaceView face{f, &L, r >= 0 ? &R : nullptr, &g};
  physics::FluxBar b;
  for (std::size_t t = 0; t < res.terms().size(); ++t)
    res.terms()[t]->flux_reverse(face, lambda, b, parameters.data() + term_offset[t]);
  scatter(res, f, b, *this);
}

void Sensitivities::add_face_bar(const FlowResidual &res, PetscInt f, const physics::FluxBar &b) {
  scatter(res, f, b, *this);
}

void Sensitivities::add_wall_stress(const FlowResidual &res, const LocalState &state, PetscInt f,
                                    double pf_bar, const Vec3<double> &visc_bar) {
  const mesh::Mesh &m = res.mesh();
  physics::FluxBar b;
  physics::dirichlet_face_stress_reverse(m.dim, state.cell(m.face_left[f]), res.face_geometry(f),
                                         res.parameters(), res.boundary_conditions().velocity(f),
                                         pf_bar, visc_bar, b);
  // the stress's boundary velocity: the velocity unknowns' boundary values
  const int u0 = res.equations().offset(res.equations().find("velocity"));
  for (int d = 0; d < m.dim; ++d) b.bv[u0 + d] += b.ub[d];
  scatter(res, f, b, *this);
}

void Sensitivities::add_wall_rotation(const FlowResidual &res, PetscInt f,
                                      const Vec3<double> &traction_bar) {
  // T = rho nu omega e_z x S = rho nu omega (-S_y, S_x, 0)
  const auto &fp = res.parameters();
  const Vec3<double> &S = res.geometry().face_area[f];
  const double omega = res.boundary_conditions().rotation(f);
  const double ez_cross =
      -traction_bar[0] * S[1] + traction_bar[1] * S[0]; // traction_bar . (e_z x S)
  geom.face_area[f] += Vec3<double>(fp.rho * fp.nu * omega * traction_bar[1],
                                    -fp.rho * fp.nu * omega * traction_bar[0], 0.0);
  nu += fp.rho * omega * ez_cross;
  rotbar[f] += fp.rho * fp.nu * ez_cross;
}

void Sensitivities::add_point_value(const FlowResidual &res, const LocalState &state, PetscInt c,
                                    int k, const Vec3<double> &x, double bar) {
  const int nv = res.nv();
  const Vec3<double> &xc = res.geometry().cell_centroid[c];
  const physics::CellState<double> s = state.cell(c);
  wbar[c * nv + k] += bar;
  for (int i = 0; i < 3; ++i) {
    Gbar[(c * nv + k) * 3 + i] += bar * (x[i] - xc[i]);
    geom.cell_centroid[c][i] -= bar * s.g[k][i];
  }
}

void Sensitivities::add_face_value(const FlowResidual &res, const LocalState &state, PetscInt f,
                                   int k, double bar) {
  const PetscInt L = res.mesh().face_left[f];
  add_point_value(res, state, L, k, res.geometry().face_centroid[f], bar);
  const physics::CellState<double> s = state.cell(L);
  geom.face_centroid[f] += bar * Vec3<double>(s.g[k][0], s.g[k][1], s.g[k][2]);
}

PetscErrorCode add_residual(const FlowResidual &res, const LocalState &state,
                            const std::vector<double> &psi, Sensitivities &s) {
  PetscFunctionBeginUser;
  PetscCall(res.boundary_data(state.level));
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  double lambda[physics::kMaxVars];
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    const PetscInt L = m.face_left[f], R = m.face_right[f];
    const bool own_l = m.owned(L), own_r = R >= 0 && m.owned(R);
    if (!own_l && !own_r) continue;
    for (int k = 0; k < nv; ++k)
      lambda[k] = (own_l ? psi[L * nv + k] : 0.0) - (own_r ? psi[R * nv + k] : 0.0);
    // the pinned continuity row (p = 0 in global cell 0) has no flux
    if (res.pressure_pinned() && m.global_cell_offset == 0) {
      if (own_l && L == 0) lambda[0] -= psi[0];
      if (own_r && R == 0) lambda[0] += psi[0];
    }
    s.add_face(res, state, f, lambda);
  }
  if (res.has_sources()) // the cell sources of owned rows
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      for (int k = 0; k < nv; ++k) lambda[k] = psi[c * nv + k];
      if (res.pressure_pinned() && m.global_cell_offset == 0 && c == 0) lambda[0] = 0;
      const physics::CellState<double> cs = state.cell(c);
      const discretization::CellView cell = res.cell_view(c, cs);
      discretization::SourceBar b;
      for (std::size_t t = 0; t < res.terms().size(); ++t)
        if (res.terms()[t]->has_source())
          res.terms()[t]->source_reverse(cell, lambda, b, s.parameters.data() + s.term_offset[t]);
      for (int k = 0; k < nv; ++k) {
        s.wbar[c * nv + k] += b.s.w[k];
        for (int i = 0; i < 3; ++i) s.Gbar[(c * nv + k) * 3 + i] += b.s.g[k][i];
      }
      s.geom.cell_volume[c] += b.volume;
      s.geom.cell_centroid[c] += b.centroid;
      s.nu += b.nu;
      if (!s.wall_distance.empty()) s.wall_distance[c] += b.wall_distance;
    }
  if (res.pressure_pinned() && m.global_cell_offset == 0 && m.n_owned_cells > 0)
    s.wbar[0] += psi[0]; // R_0 = p_0
  PetscFunctionReturn(0);
}

PetscErrorCode finish(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                      Gradient *gradient, bool time_dependent, geometry::GeometryBar *deferred,
                      discretization::LeastSquaresGradient::CoefficientBar *deferred_coefficients,
                      std::vector<double> *deferred_wall_distance) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  PetscCall(res.boundary_data(state.level));
  // least-squares gradients -> w, centroids, boundary data
  res.gradient_operator().reverse(
      m, res.geometry(), nv, state.w.data(),
      [&](int k, PetscInt f) { return res.boundary_value(f, k); }, s.Gbar.data(), s.wbar.data(),
      &s.geom, [&](int k, PetscInt f, double a) { s.bbar[f * nv + k] += a; },
      deferred ? deferred_coefficients : nullptr);
  std::fill(s.Gbar.begin(), s.Gbar.end(), 0.0);
  // boundary data -> the terms' parameters (registry order) and geometry
  const ParameterRegistry registry(res);
  std::vector<double> local(registry.size(), 0.0), global(registry.size());
  local[registry.viscosity()] += s.nu;
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    if (m.face_patch[f] < 0) continue;
    const discretization::BoundaryDataBar bar{&s.bbar[f * nv], s.rotbar[f]};
    for (std::size_t t = 0; t < res.terms().size(); ++t)
      res.terms()[t]->boundary_reverse(f, bar, local.data() + registry.term_offset(t),
                                       &s.geom.face_centroid[f], &s.geom.face_area[f]);
  }
  for (std::size_t i = 0; i < local.size(); ++i) local[i] += s.parameters[i];
  // sums over ranks
  PetscCallMPI(MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()),
                             MPI_DOUBLE, MPI_SUM, m.comm));
  gradient->parameters.clear();
  for (std::size_t i = 0; i < registry.size(); ++i)
    if (registry.listed(i, time_dependent))
      gradient->parameters.push_back(
          {registry.spec(i).name, registry.value(res, i, state.level), global[i]});
  // deferred: the geometry's (and the wall distance's) adjoints summed for one chain to X later
  if (deferred) {
    if (!res.wall_distance().empty()) {
      PetscCheck(deferred_wall_distance, m.comm, PETSC_ERR_PLIB,
                 "adjoint: deferred geometry without the wall distance's adjoints");
      deferred_wall_distance->resize(s.wall_distance.size(), 0.0);
      for (std::size_t c = 0; c < s.wall_distance.size(); ++c)
        (*deferred_wall_distance)[c] += s.wall_distance[c];
    }
    gradient->X.clear();
    geometry::add_geometry(s.geom, *deferred);
    PetscFunctionReturn(0);
  }
  // the wall distance -> the centroids and the wall vertices
  std::vector<Vec3<double>> X_wall;
  if (!res.wall_distance().empty()) {
    X_wall.assign(m.n_vertices, Vec3<double>());
    PetscCall(res.wall_distance_reverse(s.wall_distance, &s.geom.cell_centroid, &X_wall));
  }
  // geometry -> X
  gradient->X.assign(m.n_vertices, Vec3<double>());
  geometry::geometry_reverse(m, res.coordinates(), s.geom, gradient->X);
  for (std::size_t v = 0; v < X_wall.size(); ++v) gradient->X[v] += X_wall[v];
  PetscCall(mesh::sum_vertex_copies(m, gradient->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
