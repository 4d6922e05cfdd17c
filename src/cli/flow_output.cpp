// Flow monitors and output (see include/karman/cli/flow_output.hpp).
#include "karman/cli/flow_output.hpp"

#include "karman/core/logger.hpp"
#include "karman/io/field_transfer.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace karman::cli {

using discretization::FlowResidual;

PetscErrorCode initial_state(const FlowResidual &res, const config::CaseConfig &cfg, Vec w) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const config::Section init = cfg.section("initial");
  const int nv = res.nv();
  const std::string file = init.text("file");
  PetscScalar *a;
  if (!file.empty()) {
    const std::string path = cfg.resolve_path(file);
    PetscCheck(std::filesystem::exists(path), m.comm, PETSC_ERR_FILE_OPEN,
               "%s: initial.file '%s' not found", cfg.file().c_str(), path.c_str());
    // the same mesh: read the cell values; another mesh: interpolate them (field_transfer.hpp)
    std::string format, file_hash, mesh_hash;
    PetscCall(io::read_text_attribute_h5(m.comm, path, "format", &format));
    PetscCheck(format == "karman-fields", m.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: initial.file '%s' is not a karman fields file (format '%s'); expected the "
               "OUTDIR/flow.h5 of a run",
               cfg.file().c_str(), path.c_str(), format.c_str());
    PetscCall(io::read_text_attribute_h5(m.comm, path, "mesh_hash", &file_hash));
    PetscCall(io::mesh_hash(m, res.coordinates(), &mesh_hash));
    // a state of another problem is a legitimate start (a spin-up without rotation for the
    // rotary-control case): say which keys differ, do not refuse
    std::string file_case, file_keys;
    PetscCall(io::read_text_attribute_h5(m.comm, path, "case_hash", &file_case));
    PetscCall(io::read_text_attribute_h5(m.comm, path, "case_keys", &file_keys));
    if (file_case != cfg.problem_hash()) {
      const std::string changes = config::describe_problem_change(file_keys, cfg.problem_keys());
      PetscCall(log_warning(
          m.comm, "%s: initial.file '%s' was written with %s; it is used as the initial state",
          cfg.file().c_str(), path.c_str(), changes.c_str()));
    }
    io::Field u, p;
    if (file_hash == mesh_hash) {
      PetscCall(io::read_cell_field_h5(m, path, "velocity", &u));
      PetscCall(io::read_cell_field_h5(m, path, "pressure", &p));
    } else {
      const auto &g = res.geometry();
      std::vector<Vec3<double>> x(g.cell_centroid.begin(),
                                  g.cell_centroid.begin() + m.n_owned_cells);
      std::vector<double> h(m.n_owned_cells);
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) h[c] = std::pow(g.cell_volume[c], 1.0 / m.dim);
      std::vector<io::Field> f;
      PetscInt source_cells = 0;
      double gap = 0;
      PetscCall(io::transfer_cell_fields_h5(m.comm, m.dim, path, {"velocity", "pressure"}, x, h, &f,
                                            &source_cells, &gap));
      u = f[0], p = f[1];
      PetscCheck(u.ncomp == 3 && p.ncomp == 1, m.comm, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: initial.file '%s' has velocity with %d and pressure with %d components, "
                 "expected 3 and 1",
                 cfg.file().c_str(), path.c_str(), u.ncomp, p.ncomp);
      PetscCall(log_info(
          m.comm,
          "initial state interpolated from %s (another mesh, %d cells) onto %d cells; the farthest "
          "cell centre is %.2g cell sizes from a source cell centre",
          path.c_str(), (int)source_cells, (int)m.n_global_cells, gap));
      if (gap > 3)
        PetscCall(log_warning(
            m.comm,
            "%s: initial.file '%s': some cells lie %.2g cell sizes from the source mesh (another "
            "geometry?); their values are extrapolated",
            cfg.file().c_str(), path.c_str(), gap));
    }
    PetscCall(VecGetArray(w, &a));
    io::join_state(m, nv, p, u, a);
    PetscCall(VecRestoreArray(w, &a));
    PetscFunctionReturn(0);
  }
  const auto u0 = init.vector("velocity");
  PetscCall(VecGetArray(w, &a));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    a[c * nv] = init.real("pressure");
    for (int d = 0; d < m.dim; ++d) a[c * nv + 1 + d] = u0[d];
  }
  PetscCall(VecRestoreArray(w, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowMonitors::setup(const FlowResidual &res, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const config::Section obj = cfg.section("objective"), ref = cfg.section("reference");
  walls_.clear();
  for (const auto &name : obj.names("walls")) {
    const int p = m.patch_index(name);
    PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: objective.walls: no boundary named '%s'",
               cfg.file().c_str(), name.c_str());
    walls_.push_back(p);
  }
  if (walls_.empty()) walls_ = res.boundary_conditions().wall_patches();
  auto unit = [&](const char *key, Vec3<double> *v) {
    *v = Vec3<double>::from(obj.vector(key));
    const double n = norm(*v);
    if (n > 0) *v = (1.0 / n) * *v;
    return n > 0;
  };
  PetscCheck(unit("drag_direction", &drag_dir_) && unit("lift_direction", &lift_dir_), m.comm,
             PETSC_ERR_USER_INPUT,
             "%s: objective.drag_direction and lift_direction must be non-zero",
             cfg.file().c_str());
  scaling_ = solver::force_scaling(cfg, m.dim);
  p_ref_ = ref.real("pressure");
  std::vector<Vec3<double>> points;
  for (const auto &p : obj.points("points")) points.push_back(Vec3<double>::from(p));
  PetscCheck(points.empty() || points.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
             "%s: objective.points: give two points for the pressure difference (got %zu)",
             cfg.file().c_str(), points.size());
  PetscCheck(obj.text("type") != "pressure-difference" || points.size() == 2, m.comm,
             PETSC_ERR_USER_INPUT,
             "%s: objective.type pressure-difference needs objective.points (two points)",
             cfg.file().c_str());
  PetscCall(dp_points_.setup(res, points, cfg.file() + ": objective.points"));
  points.clear();
  for (const auto &p : cfg.section("output").points("probes"))
    points.push_back(Vec3<double>::from(p));
  PetscCall(output_probes_.setup(res, points, cfg.file() + ": output.probes"));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowMonitors::evaluate(const FlowResidual &res, Values *v) const {
  PetscFunctionBeginUser;
  PetscCall(solver::wall_force(res, walls_, scaling_.moment_center, &v->force));
  const double scale = 1.0 / (scaling_.q * scaling_.area);
  v->cd = dot(v->force.total(), drag_dir_) * scale;
  v->cl = dot(v->force.total(), lift_dir_) * scale;
  v->cd_pressure = dot(v->force.pressure, drag_dir_) * scale;
  v->cd_viscous = dot(v->force.viscous, drag_dir_) * scale;
  v->cm = v->force.moment[2] * scale / scaling_.length;
  v->has_dp = dp_points_.size() == 2;
  if (v->has_dp) {
    std::vector<double> values;
    PetscCall(dp_points_.evaluate(res, &values));
    v->dp = values[0] - values[res.nv()];
  }
  if (output_probes_.size() > 0) PetscCall(output_probes_.evaluate(res, &v->probes));
  PetscFunctionReturn(0);
}

std::string FlowMonitors::csv_header(int nv) const {
  std::string h = "cd,cl,cd_pressure,cd_viscous,cm,delta_p";
  const char *names[] = {"p", "u", "v", "w"};
  for (std::size_t i = 0; i < output_probes_.size(); ++i)
    for (int k = 0; k < nv; ++k) h += ",probe" + std::to_string(i) + "_" + names[k];
  return h;
}

std::string FlowMonitors::csv_values(const Values &v) const {
  char line[512];
  std::snprintf(line, sizeof(line), "%.12e,%.12e,%.12e,%.12e,%.12e,%.12e", v.cd, v.cl,
                v.cd_pressure, v.cd_viscous, v.cm, v.has_dp ? v.dp : 0.0);
  std::string row(line);
  for (double x : v.probes) {
    std::snprintf(line, sizeof(line), ",%.12e", x);
    row += line;
  }
  return row;
}

PetscErrorCode FlowWriter::setup(const FlowResidual &res, const FlowMonitors &mon,
                                 const config::CaseConfig &cfg, const std::string &directory,
                                 const std::string &name) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  mon_ = &mon;
  directory_ = directory;
  name_ = name;
  vtk_ = cfg.section("output").flag("vtk");
  problem_hash_ = cfg.problem_hash();
  problem_keys_ = cfg.problem_keys();
  hdf5_ = cfg.section("output").flag("hdf5");
  volume_ = std::make_unique<io::VtkSeries>(m.comm, directory, name);
  surface_patches_.clear();
  for (const auto &s : cfg.section("output").names("surfaces")) {
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

PetscErrorCode FlowWriter::write_vtk(const FlowResidual &res, double time) {
  PetscFunctionBeginUser;
  if (!vtk_) PetscFunctionReturn(0);
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const auto &w = res.local_state();
  const auto &G = res.gradients();
  io::Field velocity, pressure, vorticity{"vorticity", m.dim == 2 ? 1 : 3, {}};
  io::split_state(m, nv, w.data(), "pressure", "velocity", &pressure, &velocity);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    auto grad = [&](int k, int i) { return G[(c * nv + k) * 3 + i]; }; // d u_{k-1} / d x_i
    if (m.dim == 2) {
      vorticity.values.push_back(grad(2, 0) - grad(1, 1));
    } else {
      vorticity.values.push_back(grad(3, 1) - grad(2, 2));
      vorticity.values.push_back(grad(1, 2) - grad(3, 0));
      vorticity.values.push_back(grad(2, 0) - grad(1, 1));
    }
  }
  PetscCall(volume_->write_volume(m, res.coordinates(), time, {velocity, pressure, vorticity}));
  for (std::size_t i = 0; i < surface_patches_.size(); ++i) {
    const int p = surface_patches_[i];
    std::vector<double> pf;
    std::vector<Vec3<double>> tau;
    solver::wall_stress(res, p, &pf, &tau);
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

PetscErrorCode FlowWriter::write_hdf5(const FlowResidual &res, double time) {
  PetscFunctionBeginUser;
  if (!hdf5_) PetscFunctionReturn(0);
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const auto &w = res.local_state();
  io::Field velocity, pressure;
  io::split_state(m, nv, w.data(), "pressure", "velocity", &pressure, &velocity);
  PetscCall(io::write_fields_h5(m, res.coordinates(),
                                (std::filesystem::path(directory_) / (name_ + ".h5")).string(),
                                {velocity, pressure}, {{"time", time}},
                                {{"case_hash", problem_hash_}, {"case_keys", problem_keys_}}));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
