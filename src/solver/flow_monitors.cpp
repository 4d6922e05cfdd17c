// Flow monitors (see include/karman/solver/flow_monitors.hpp).
#include "karman/solver/flow_monitors.hpp"
#include "karman/physics/boundary_kernels.hpp"
#include "karman/solver/solver_options.hpp"

#include <cstdio>

namespace karman::solver {

using discretization::FlowResidual;

PetscErrorCode FlowMonitors::setup(const FlowResidual &res, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const ForceOptions obj = force_options().get(cfg);
  walls_.clear();
  for (const auto &name : obj.walls) {
    const int p = m.patch_index(name);
    PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: objective.walls: no boundary named '%s'",
               cfg.file().c_str(), name.c_str());
    walls_.push_back(p);
  }
  if (walls_.empty()) walls_ = res.boundary_conditions().wall_patches();
  auto unit = [&](const Vec3<double> &given, Vec3<double> *v) {
    *v = given;
    const double n = norm(*v);
    if (n > 0) *v = (1.0 / n) * *v;
    return n > 0;
  };
  PetscCheck(unit(obj.drag_direction, &drag_dir_) && unit(obj.lift_direction, &lift_dir_), m.comm,
             PETSC_ERR_USER_INPUT,
             "%s: objective.drag_direction and lift_direction must be non-zero",
             cfg.file().c_str());
  scaling_ = force_scaling(res);
  p_ref_ = res.reference().pressure;
  const std::vector<Vec3<double>> &points = obj.points;
  PetscCheck(points.empty() || points.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
             "%s: objective.points: give two points for the pressure difference (got %zu)",
             cfg.file().c_str(), points.size());
  PetscCall(dp_points_.setup(res, points, cfg.file() + ": objective.points"));
  PetscCall(
      output_probes_.setup(res, probe_options().get(cfg).probes, cfg.file() + ": output.probes"));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowMonitors::evaluate(const FlowResidual &res,
                                      const discretization::LocalState &state, Values *v) const {
  PetscFunctionBeginUser;
  PetscCall(wall_force(res, state, walls_, scaling_.moment_center, &v->force));
  const double scale = 1.0 / (scaling_.q * scaling_.area);
  // wind axes: the directions turned by the far field's angle of attack
  const double alpha = res.boundary_conditions().angle_of_attack();
  const Vec3<double> drag = physics::turned(drag_dir_, alpha);
  const Vec3<double> lift = physics::turned(lift_dir_, alpha);
  v->cd = dot(v->force.total(), drag) * scale;
  v->cl = dot(v->force.total(), lift) * scale;
  v->cd_pressure = dot(v->force.pressure, drag) * scale;
  v->cd_viscous = dot(v->force.viscous, drag) * scale;
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

std::string FlowMonitors::csv_header(const physics::EquationSet &eq) const {
  // the unknowns' column names: p, u, v, w for the flow, a scalar field's name
  std::vector<std::string> names;
  for (const auto &f : eq.fields())
    if (f.name == "pressure")
      names.push_back("p");
    else if (f.name == "velocity")
      for (int d = 0; d < f.components; ++d) names.push_back(std::string(1, "uvw"[d]));
    else
      for (int d = 0; d < f.components; ++d)
        names.push_back(f.name + (f.components > 1 ? std::to_string(d) : std::string()));
  std::string h = "cd,cl,cd_pressure,cd_viscous,cm,delta_p";
  for (std::size_t i = 0; i < output_probes_.size(); ++i)
    for (const auto &n : names) h += ",probe" + std::to_string(i) + "_" + n;
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
