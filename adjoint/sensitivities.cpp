// Reverse-mode accumulation (see include/karman/adjoint/sensitivities.hpp).
#include "karman/adjoint/sensitivities.hpp"

#include <petscsf.h>

#include <cmath>

namespace karman::adjoint {

using discretization::FaceKind;
using discretization::FlowResidual;
using discretization::PatchCondition;

void Sensitivities::reset(const FlowResidual &res)
{
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  wbar.assign(m.n_cells * nv, 0.0);
  Gbar.assign(m.n_cells * nv * 3, 0.0);
  geom = geometry::zero_geometry(m);
  ubar.assign(m.n_flux_faces, Vec3<double>());
  pbar.assign(m.n_flux_faces, 0.0);
  rotbar.assign(m.n_flux_faces, 0.0);
  nu = 0;
}

namespace {

void scatter(const FlowResidual &res, PetscInt f, const physics::FluxBar &b, Sensitivities &s)
{
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
  s.ubar[f] += b.ub;
  s.pbar[f] += b.pb;
  s.nu += b.nu;
}

// Gradient of the profile factor with respect to the point.
Vec3<double> profile_gradient(const PatchCondition &pc, const Vec3<double> &x)
{
  Vec3<double> g;
  if (!pc.parabolic) return g;
  double f[2] = {1, 1}, df[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (pc.axis[i] < 0) continue;
    const double h = pc.hi[i] - pc.lo[i], s = (x[pc.axis[i]] - pc.lo[i]) / h;
    f[i] = 4 * s * (1 - s);
    df[i] = 4 * (1 - 2 * s) / h;
  }
  for (int i = 0; i < 2; ++i)
    if (pc.axis[i] >= 0) g[pc.axis[i]] += df[i] * f[1 - i];
  return g;
}

// nbar -> Sbar for n = S / |S|
void unit_normal_reverse(const Vec3<double> &S, const Vec3<double> &nbar, Vec3<double> &Sbar)
{
  const double A = norm(S);
  const Vec3<double> n = (1.0 / A) * S;
  Sbar += (1.0 / A) * (nbar - dot(nbar, n) * n);
}

const char *kAxis[3] = {"x", "y", "z"};

} // namespace

void Sensitivities::add_face(const FlowResidual &res, PetscInt f, const double *lambda)
{
  const mesh::Mesh &m = res.mesh();
  const auto &bcs = res.boundary_conditions();
  const physics::CellState<double> L = res.cell_state(m.face_left[f]);
  const physics::FaceGeometry<double> g = res.face_geometry(f);
  physics::FluxBar b;
  switch (bcs.kind(f)) {
  case FaceKind::Interior:
    physics::interior_flux_reverse(m.dim, L, res.cell_state(m.face_right[f]), g, res.parameters(), lambda, b);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_reverse(m.dim, L, g, res.parameters(), bcs.velocity(f), lambda, b);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_reverse(m.dim, L, g, res.parameters(), bcs.pressure(f), lambda, b);
    break;
  case FaceKind::Slip: physics::slip_flux_reverse(m.dim, L, g, res.parameters(), lambda, b); break;
  }
  scatter(res, f, b, *this);
}

void Sensitivities::add_wall_stress(const FlowResidual &res, PetscInt f, double pf_bar, const Vec3<double> &visc_bar)
{
  const mesh::Mesh &m = res.mesh();
  physics::FluxBar b;
  physics::dirichlet_face_stress_reverse(m.dim, res.cell_state(m.face_left[f]), res.face_geometry(f), res.parameters(),
                                         res.boundary_conditions().velocity(f), pf_bar, visc_bar, b);
  scatter(res, f, b, *this);
}

void Sensitivities::add_wall_rotation(const FlowResidual &res, PetscInt f, const Vec3<double> &traction_bar)
{
  // T = rho nu omega e_z x S = rho nu omega (-S_y, S_x, 0)
  const auto &fp = res.parameters();
  const Vec3<double> &S = res.geometry().face_area[f];
  const double omega = res.boundary_conditions().rotation(f);
  const double ez_cross = -traction_bar[0] * S[1] + traction_bar[1] * S[0]; // traction_bar . (e_z x S)
  geom.face_area[f] += Vec3<double>(fp.rho * fp.nu * omega * traction_bar[1], -fp.rho * fp.nu * omega * traction_bar[0], 0.0);
  nu += fp.rho * omega * ez_cross;
  rotbar[f] += fp.rho * fp.nu * ez_cross;
}

void Sensitivities::add_point_value(const FlowResidual &res, PetscInt c, int k, const Vec3<double> &x, double bar)
{
  const int nv = res.nv();
  const Vec3<double> &xc = res.geometry().cell_centroid[c];
  const physics::CellState<double> s = res.cell_state(c);
  wbar[c * nv + k] += bar;
  for (int i = 0; i < 3; ++i) {
    Gbar[(c * nv + k) * 3 + i] += bar * (x[i] - xc[i]);
    geom.cell_centroid[c][i] -= bar * s.g[k][i];
  }
}

void add_residual(const FlowResidual &res, const std::vector<double> &psi, Sensitivities &s)
{
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
    s.add_face(res, f, lambda);
  }
  if (res.pressure_pinned() && m.global_cell_offset == 0 && m.n_owned_cells > 0) s.wbar[0] += psi[0]; // R_0 = p_0
}

std::vector<ParameterGradient> case_parameters(const FlowResidual &res, bool time_dependent)
{
  const double t = res.time();
  const long n = res.level();
  std::vector<ParameterGradient> out;
  out.push_back({"fluid.viscosity", res.parameters().nu, 0.0});
  const auto &bcs = res.boundary_conditions();
  const int dim = res.mesh().dim;
  for (std::size_t p = 0; p < bcs.n_patches(); ++p) {
    const PatchCondition &pc = bcs.patch(static_cast<int>(p));
    const std::string base = "boundaries." + pc.name + ".";
    if (pc.custom_velocity) continue;
    if (pc.type == "wall") {
      if (dim == 2 && (pc.omega.is_constant() || time_dependent)) out.push_back({base + "omega", pc.omega.value(t, n), 0.0});
      for (int d = 0; d < dim; ++d) out.push_back({base + "velocity." + kAxis[d], pc.velocity[d], 0.0});
    } else if (pc.type == "velocity-inlet" && (pc.speed.is_constant() || time_dependent)) {
      out.push_back({base + "velocity", pc.speed.value(t, n), 0.0});
    } else if (pc.type == "blowing-suction" && (pc.amplitude.is_constant() || time_dependent)) {
      out.push_back({base + "amplitude", pc.amplitude.value(t, n), 0.0});
    } else if (pc.type == "far-field") {
      for (int d = 0; d < dim; ++d) out.push_back({base + "velocity." + kAxis[d], pc.velocity[d], 0.0});
      out.push_back({base + "pressure", pc.pressure, 0.0});
    } else if (pc.type == "pressure-outlet") {
      out.push_back({base + "pressure", pc.pressure, 0.0});
    }
  }
  return out;
}

PetscErrorCode select_parameters(const FlowResidual &res, const config::CaseConfig &cfg,
                                 std::vector<ParameterGradient> *parameters)
{
  PetscFunctionBeginUser;
  const std::vector<std::string> wanted = cfg.section("adjoint").names("parameters");
  if (wanted.empty()) PetscFunctionReturn(0);
  std::vector<ParameterGradient> kept;
  std::string known;
  for (const auto &p : *parameters) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto &name : wanted) {
    bool found = false;
    for (const auto &p : *parameters)
      if (p.name == name) kept.push_back(p), found = true;
    PetscCheck(found, res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: adjoint.parameters: the case has no parameter '%s' (it has: %s)", cfg.file().c_str(), name.c_str(),
               known.c_str());
  }
  *parameters = kept;
  PetscFunctionReturn(0);
}

PetscErrorCode set_parameter(FlowResidual &res, const std::string &name, double value)
{
  PetscFunctionBeginUser;
  if (name == "fluid.viscosity") {
    res.parameters().nu = value;
    PetscFunctionReturn(0);
  }
  auto &bcs = res.boundary_conditions();
  bool done = false;
  for (std::size_t p = 0; p < bcs.n_patches() && !done; ++p) {
    PatchCondition &pc = bcs.patch(static_cast<int>(p));
    const std::string base = "boundaries." + pc.name + ".";
    if (name.rfind(base, 0) != 0) continue;
    const std::string key = name.substr(base.size());
    done = true;
    if (key == "omega") pc.omega = physics::TimeFunction::constant(value);
    else if (key == "velocity" && pc.type == "velocity-inlet") pc.speed = physics::TimeFunction::constant(value);
    else if (key == "amplitude") pc.amplitude = physics::TimeFunction::constant(value);
    else if (key == "pressure") pc.pressure = value;
    else if (key.rfind("velocity.", 0) == 0 && key.size() == 10 && key[9] >= 'x' && key[9] <= 'z')
      pc.velocity[key[9] - 'x'] = value;
    else done = false;
  }
  PetscCheck(done, res.mesh().comm, PETSC_ERR_USER_INPUT, "unknown parameter '%s'", name.c_str());
  PetscCall(res.update_boundary_values(0.0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode sum_vertex_copies(const mesh::Mesh &mesh, std::vector<Vec3<double>> &values)
{
  PetscFunctionBeginUser;
  PetscMPIInt size, rank;
  PetscCallMPI(MPI_Comm_size(mesh.comm, &size));
  PetscCallMPI(MPI_Comm_rank(mesh.comm, &rank));
  if (size == 1) PetscFunctionReturn(0);
  const PetscInt N = mesh.n_global_vertices;
  auto begin = [&](PetscMPIInt r) { return static_cast<PetscInt>((static_cast<long long>(N) * r) / size); };
  const PetscInt nroots = begin(rank + 1) - begin(rank);
  PetscSFNode *remote;
  PetscCall(PetscMalloc1(mesh.n_vertices, &remote));
  for (PetscInt v = 0; v < mesh.n_vertices; ++v) {
    const PetscInt g = mesh.vertex_gid[v];
    PetscMPIInt r = static_cast<PetscMPIInt>((static_cast<long long>(g) * size) / N);
    while (r + 1 < size && begin(r + 1) <= g) ++r;
    while (r > 0 && begin(r) > g) --r;
    remote[v].rank = r;
    remote[v].index = g - begin(r);
  }
  PetscSF sf;
  PetscCall(PetscSFCreate(mesh.comm, &sf));
  PetscCall(PetscSFSetGraph(sf, nroots, mesh.n_vertices, nullptr, PETSC_COPY_VALUES, remote, PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(sf));
  MPI_Datatype unit;
  PetscCallMPI(MPI_Type_contiguous(3, MPI_DOUBLE, &unit));
  PetscCallMPI(MPI_Type_commit(&unit));
  std::vector<double> roots(3 * nroots, 0.0), leaves(3 * mesh.n_vertices);
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    for (int d = 0; d < 3; ++d) leaves[3 * v + d] = values[v][d];
  PetscCall(PetscSFReduceBegin(sf, unit, leaves.data(), roots.data(), MPI_SUM));
  PetscCall(PetscSFReduceEnd(sf, unit, leaves.data(), roots.data(), MPI_SUM));
  PetscCall(PetscSFBcastBegin(sf, unit, roots.data(), leaves.data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, unit, roots.data(), leaves.data(), MPI_REPLACE));
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    for (int d = 0; d < 3; ++d) values[v][d] = leaves[3 * v + d];
  PetscCallMPI(MPI_Type_free(&unit));
  PetscCall(PetscSFDestroy(&sf));
  PetscFunctionReturn(0);
}

PetscErrorCode finish(const FlowResidual &res, Sensitivities &s, Gradient *gradient, bool time_dependent)
{
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const auto &bcs = res.boundary_conditions();
  // least-squares gradients -> w, centroids, boundary data
  res.gradient_operator().reverse(
      m, res.geometry(), nv, res.local_state().data(),
      [&](int k, PetscInt f) { return k == 0 ? bcs.pressure(f) : bcs.velocity(f)[k - 1]; }, s.Gbar.data(),
      s.wbar.data(), &s.geom, [&](int k, PetscInt f, double a) {
        if (k == 0) s.pbar[f] += a;
        else s.ubar[f][k - 1] += a;
      });
  std::fill(s.Gbar.begin(), s.Gbar.end(), 0.0);
  // boundary data -> parameters and geometry
  gradient->parameters = case_parameters(res, time_dependent);
  auto add = [&](const std::string &name, double v) {
    for (auto &p : gradient->parameters)
      if (p.name == name) p.gradient += v;
  };
  double nu_local = s.nu;
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    const int p = m.face_patch[f];
    if (p < 0) continue;
    const PatchCondition &pc = bcs.patch(p);
    const std::string base = "boundaries." + pc.name + ".";
    if (bcs.kind(f) == FaceKind::PressureOutlet) {
      add(base + "pressure", s.pbar[f]);
      continue;
    }
    if (bcs.kind(f) != FaceKind::VelocityDirichlet || pc.custom_velocity) continue;
    const Vec3<double> &ub = s.ubar[f];
    const Vec3<double> &x = res.geometry().face_centroid[f];
    const Vec3<double> &S = res.geometry().face_area[f];
    const Vec3<double> n = (1.0 / norm(S)) * S;
    if (pc.type == "wall") {
      for (int d = 0; d < m.dim; ++d) add(base + "velocity." + kAxis[d], ub[d]);
      const double w = pc.omega.value(res.time(), res.level());
      const Vec3<double> r = x - pc.center;
      add(base + "omega", -r[1] * ub[0] + r[0] * ub[1] + s.rotbar[f]);
      s.geom.face_centroid[f] += Vec3<double>(w * ub[1], -w * ub[0], 0.0);
    } else if (pc.type == "velocity-inlet") {
      const bool normal = !(norm(pc.velocity) > 0);
      const Vec3<double> e = normal ? -n : pc.velocity;
      const double phi = discretization::profile_factor(pc, x), speed = pc.speed.value(res.time(), res.level());
      add(base + "velocity", phi * dot(ub, e));
      s.geom.face_centroid[f] += (speed * dot(ub, e)) * profile_gradient(pc, x);
      if (normal) unit_normal_reverse(S, (-speed * phi) * ub, s.geom.face_area[f]);
    } else if (pc.type == "blowing-suction") {
      const double phi = discretization::profile_factor(pc, x), a = pc.amplitude.value(res.time(), res.level());
      add(base + "amplitude", -phi * dot(ub, n));
      s.geom.face_centroid[f] += (-a * dot(ub, n)) * profile_gradient(pc, x);
      unit_normal_reverse(S, (-a * phi) * ub, s.geom.face_area[f]);
    } else if (pc.type == "far-field") {
      for (int d = 0; d < m.dim; ++d) add(base + "velocity." + kAxis[d], ub[d]);
    }
  }
  // sums over ranks
  std::vector<double> local(gradient->parameters.size() + 1), global(local.size());
  for (std::size_t i = 0; i < gradient->parameters.size(); ++i) local[i] = gradient->parameters[i].gradient;
  local.back() = nu_local;
  PetscCallMPI(MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, m.comm));
  for (std::size_t i = 0; i < gradient->parameters.size(); ++i) gradient->parameters[i].gradient = global[i];
  gradient->parameters[0].gradient += global.back(); // fluid.viscosity
  // geometry -> X
  gradient->X.assign(m.n_vertices, Vec3<double>());
  geometry::geometry_reverse(m, res.coordinates(), s.geom, gradient->X);
  PetscCall(sum_vertex_copies(m, gradient->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
