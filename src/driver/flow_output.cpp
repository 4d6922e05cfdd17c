// Flow output (see include/karman/driver/flow_output.hpp).
#include "karman/driver/flow_output.hpp"
#include "karman/driver/output_options.hpp"

#include "karman/core/parallel.hpp"

#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"

#include <cmath>
#include <filesystem>

namespace karman::driver {

using discretization::FlowResidual;
using discretization::LocalState;

PetscErrorCode FlowWriter::setup(const FlowResidual &res, const solver::FlowMonitors &mon,
                                 const config::CaseConfig &cfg, const std::string &directory,
                                 const std::string &name) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  mon_ = &mon;
  directory_ = directory;
  name_ = name;
  const OutputOptions output = output_options().get(cfg);
  vtk_ = output.vtk;
  problem_attributes_ = cfg.problem_attributes();
  hdf5_ = output.hdf5;
  volume_ = std::make_unique<io::VtkSeries>(m.comm, directory, name);
  surface_patches_.clear();
  for (const auto &s : output.surfaces) {
    const int p = m.patch_index(s);
    PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: output.surfaces: no boundary named '%s'",
               cfg.file().c_str(), s.c_str());
    surface_patches_.push_back(p);
  }
  if (surface_patches_.empty()) surface_patches_ = res.boundary_conditions().wall_patches();
  surfaces_.clear();
  for (int p : surface_patches_)
    surfaces_.push_back(
        std::make_unique<io::VtkSeries>(m.comm, directory, name + "_" + m.patch_names[p]));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowWriter::resume(double t) {
  PetscFunctionBeginUser;
  PetscCall(volume_->resume(t));
  for (auto &s : surfaces_) PetscCall(s->resume(t));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowWriter::write_vtk(const FlowResidual &res, const LocalState &state, double time,
                                     const std::vector<io::Field> &extra) {
  PetscFunctionBeginUser;
  if (!vtk_) PetscFunctionReturn(0);
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const auto &G = state.grad;
  std::vector<io::Field> fields = io::state_fields(m, res.equations(), state.w.data());
  io::Field vorticity{"vorticity", m.dim == 2 ? 1 : 3, {}};
  const int u0 = res.equations().offset(res.equations().find("velocity"));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    // d u_j / d x_i
    auto grad = [&](int j, int i) { return G[(c * nv + u0 + j) * 3 + i]; };
    if (m.dim == 2) {
      vorticity.values.push_back(grad(1, 0) - grad(0, 1));
    } else {
      vorticity.values.push_back(grad(2, 1) - grad(1, 2));
      vorticity.values.push_back(grad(0, 2) - grad(2, 0));
      vorticity.values.push_back(grad(1, 0) - grad(0, 1));
    }
  }
  fields.push_back(std::move(vorticity));
  fields.insert(fields.end(), extra.begin(), extra.end());
  PetscCall(volume_->write_volume(m, res.coordinates(), time, fields));
  for (std::size_t i = 0; i < surface_patches_.size(); ++i) {
    const int p = surface_patches_[i];
    std::vector<double> pf;
    std::vector<Vec3<double>> tau;
    PetscCall(solver::wall_stress(res, state, p, &pf, &tau));
    io::Field cp{"pressure_coefficient", 1, {}}, cf{"skin_friction", 1, {}},
        shear{"wall_shear_stress", 3, {}};
    const std::vector<PetscInt> faces = m.boundary_faces(p);
    for (std::size_t k = 0; k < faces.size(); ++k) {
      const Vec3<double> &S = res.geometry().face_area[faces[k]];
      const Vec3<double> n = (1.0 / norm(S)) * S; // out of the fluid
      cp.values.push_back((pf[k] - mon_->reference_pressure()) / mon_->dynamic_pressure());
      // 2D: shear along t = e_z x (-n) = (n_y, -n_x); 3D: its magnitude
      cf.values.push_back((m.dim == 2 ? tau[k][0] * n[1] - tau[k][1] * n[0] : norm(tau[k])) /
                          mon_->dynamic_pressure());
      for (int d = 0; d < 3; ++d) shear.values.push_back(tau[k][d]);
    }
    PetscCall(surfaces_[i]->write_surface(m, res.coordinates(), p, time, {cp, cf, shear}));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FlowWriter::write_hdf5(const FlowResidual &res, const LocalState &state,
                                      double time) {
  PetscFunctionBeginUser;
  if (!hdf5_) PetscFunctionReturn(0);
  const mesh::Mesh &m = res.mesh();
  PetscCall(io::write_fields_h5(
      m, res.coordinates(), (std::filesystem::path(directory_) / (name_ + ".h5")).string(),
      io::state_fields(m, res.equations(), state.w.data()), {{"time", time}}, problem_attributes_));
  PetscFunctionReturn(0);
}

PetscErrorCode write_flow_state(const FlowResidual &res, const solver::FlowMonitors &mon,
                                const config::CaseConfig &cfg, const std::string &directory,
                                const std::string &name, Vec w,
                                const discretization::TimeLevel &level,
                                const std::vector<io::Field> &extra) {
  PetscFunctionBeginUser;
  LocalState state;
  PetscCall(res.local_state(level, w, &state));
  FlowWriter writer;
  PetscCall(writer.setup(res, mon, cfg, directory, name));
  PetscCall(writer.write_vtk(res, state, level.t, extra));
  PetscCall(writer.write_hdf5(res, state, level.t));
  PetscFunctionReturn(0);
}

PetscErrorCode residual_fields(const FlowResidual &res, Vec w,
                               const discretization::TimeLevel &level,
                               std::vector<io::Field> *fields, ResidualLocation *where) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const physics::EquationSet &eq = res.equations();
  const int nv = res.nv();
  Vec R;
  PetscCall(res.create_state(&R));
  PetscCall(res.residual(level, w, R));
  PetscReal norm;
  PetscCall(VecNorm(R, NORM_2, &norm));
  const PetscScalar *r;
  PetscCall(VecGetArrayRead(R, &r)); // owned cells first, nv rows each
  fields->clear();
  // this rank's largest cell value, and its field and centroid
  double mine = -1, at[4] = {0, 0, 0, 0}; // field, centroid
  for (std::size_t f = 0; f < eq.n_fields(); ++f) {
    const physics::FieldSpec &spec = eq.field(f);
    io::Field out{"residual_" + spec.name, 1, std::vector<double>(m.n_owned_cells)};
    const int k0 = eq.offset(f);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      double s = 0;
      for (int k = k0; k < k0 + spec.components; ++k)
        s += PetscRealPart(r[c * nv + k]) * PetscRealPart(r[c * nv + k]);
      out.values[c] = std::sqrt(s);
      if (out.values[c] > mine) {
        mine = out.values[c];
        at[0] = static_cast<double>(f);
        for (int d = 0; d < 3; ++d) at[1 + d] = res.geometry().cell_centroid[c][d];
      }
    }
    fields->push_back(std::move(out));
  }
  PetscCall(VecRestoreArrayRead(R, &r));
  PetscCall(VecDestroy(&R));
  PetscCall(max_with_data(m.comm, mine, at, 4, &where->cell_norm, at));
  where->norm = norm;
  where->field = eq.field(static_cast<std::size_t>(at[0])).name;
  where->x = Vec3<double>(at[1], at[2], at[3]);
  PetscFunctionReturn(0);
}

} // namespace karman::driver
