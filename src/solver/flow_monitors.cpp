// Flow monitors (see include/karman/solver/flow_monitors.hpp).
#include "karman/solver/flow_monitors.hpp"

#include <cstdio>

namespace karman::solver {

using discretization::FlowResidual;

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
  scaling_ = force_scaling(cfg, m.dim);
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

PetscErrorCode FlowMonitors::evaluate(const FlowResidual &res,
                                      const discretization::LocalState &state, Values *v) const {
  PetscFunctionBeginUser;
  PetscCall(wall_force(res, state, walls_, scaling_.moment_center, &v->force));
  const double scale = 1.0 / (scaling_.q * scaling_.area);
  v->cd = dot(v->force.total(), drag_dir_) * scale;
  v->cl = dot(v->force.total(), lift_dir_) * scale;
  v->cd_pressure = dot(v->force.pressure, drag_dir_) * scale;
  v->cd_viscous = dot(v->force.viscous, drag_dir_) * scale;
  v->cm = v->force.moment[2] * scale / scaling_.length;
  v->has_dp = dp_points_.size() == 2;
  if (v->has_dp) {
    std::vector<double> values;
    PetscCall(dp_points_.evaluate(res, state, &values));
    v->dp = values[0] - values[res.nv()];
  }
  if (output_probes_.size() > 0) PetscCall(output_probes_.evaluate(res, state, &v->probes));
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

} // namespace karman::solver
