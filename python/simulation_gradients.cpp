// karman.Simulation: the values of objectives and their gradients (steady and unsteady adjoints),
// with the surface sensitivity on the walls (see simulation.hpp).
#include "simulation.hpp"

#include "karman/adjoint/surface_sensitivity.hpp"

namespace karman::bindings {

py::list Simulation::gradients(const std::vector<std::string> &objectives, bool own_forward) {
  (void)own_forward;
  alive();
  collect_garbage();
  if (objectives.empty()) throw py::value_error("gradients(): no objective given");
  const auto cfgs = objective_cases(objectives);
  const int dim = fc_->mesh().dim;
  auto xarray = [&](const std::vector<Vec3<double>> &X) {
    std::vector<double> x;
    for (const auto &v : X)
      for (int d = 0; d < dim; ++d) x.push_back(v[d]);
    return array2(x, dim);
  };
  py::list out;
  if (!case_->unsteady()) {
    if (!solved_)
      throw Failure("gradient(): no solution of the current parameters; call solve() first");
    for (std::size_t i = 0; i < cfgs.size(); ++i) {
      adjoint::Objective obj;
      check(obj.setup(fc_->residual(), *cfgs[i]));
      adjoint::AdjointResult r;
      check(fc_->gradient(w_, obj, &r, i > 0));
      py::dict d, grads;
      for (const auto &p : r.gradient.parameters) grads[py::str(p.name)] = p.gradient;
      add_design_gradient(r.gradient.X, &grads);
      d["J"] = r.J, d["gradient"] = grads, d["X"] = xarray(r.gradient.X);
      d["surface"] = surface(r.gradient.X);
      d["objective"] = obj.description();
      d["adjoint_linear_iterations"] = r.linear_iterations;
      d["adjoint_relative_residual"] = r.relative_residual;
      d["psi"] = array2(r.psi, fc_->residual().nv());
      out.append(d);
    }
    return out;
  }
  // unsteady: the forward run and the backward sweep of the unsteady adjoint
  std::vector<adjoint::UnsteadyAdjointResult> results;
  run_unsteady_adjoint(cfgs, false, &results);
  for (const auto &r : results) {
    py::dict d, grads, series;
    for (const auto &p : r.parameters) grads[py::str(p.name)] = p.gradient;
    add_design_gradient(r.X, &grads);
    // per-step series: as the gradient of the parameters that vary in time (the others have
    // their sum above); all of them under "series"
    for (const auto &[name, v] : r.control) {
      series[py::str(name)] = array1(v);
      if (!grads.contains(py::str(name))) grads[py::str(name)] = array1(v);
    }
    d["series"] = series;
    d["J"] = r.J, d["gradient"] = grads, d["X"] = xarray(r.X);
    d["surface"] = surface(r.X);
    d["times"] = array1(r.times);
    d["initial"] = array2(r.initial, fc_->residual().nv());
    d["steps"] = r.steps;
    d["adjoint_linear_iterations"] = r.linear_iterations;
    d["preconditioner_setups"] = r.preconditioner_setups;
    out.append(d);
  }
  return out;
}

std::vector<double> Simulation::objectives(const std::vector<std::string> &objectives,
                                           bool own_forward) {
  (void)own_forward;
  alive();
  collect_garbage();
  if (objectives.empty()) throw py::value_error("objectives(): no objective given");
  const auto cfgs = objective_cases(objectives);
  if (!solved_ && !case_->unsteady())
    throw Failure("objective(): no solution of the current parameters; call solve() first");
  std::vector<double> values;
  if (case_->unsteady()) {
    std::vector<adjoint::UnsteadyAdjointResult> results;
    run_unsteady_adjoint(cfgs, true, &results);
    for (const auto &r : results) values.push_back(r.J);
    return values;
  }
  discretization::LocalState s;
  check(fc_->residual().local_state(discretization::kSteady, w_, &s));
  for (const auto &cfg : cfgs) {
    adjoint::Objective obj;
    check(obj.setup(fc_->residual(), *cfg));
    double J = 0;
    check(obj.value(fc_->residual(), s, &J));
    values.push_back(J);
  }
  return values;
}

py::dict Simulation::surface(const std::vector<Vec3<double>> &Xbar) const {
  const discretization::FlowResidual &res = fc_->residual();
  const mesh::Mesh &m = fc_->mesh();
  py::dict out;
  for (int p = 0; p < static_cast<int>(m.patch_names.size()); ++p) {
    if (!res.boundary_conditions().patch(p).is_wall()) continue;
    adjoint::SurfaceSensitivity s;
    check(adjoint::surface_sensitivity(res, p, Xbar, &s));
    std::vector<long> ids;
    std::vector<double> x, n, area, value, density;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      if (!m.vertex_owned[v] || s.area[v] <= 0) continue;
      ids.push_back(m.vertex_gid[v]);
      for (int d = 0; d < m.dim; ++d)
        x.push_back(res.coordinates()[v][d]), n.push_back(s.normal[v][d]);
      area.push_back(s.area[v]), value.push_back(s.value[v]), density.push_back(s.density[v]);
    }
    py::dict w;
    w["vertex_ids"] = py::array_t<long>(ids.size(), ids.data());
    w["X"] = array2(x, m.dim), w["normal"] = array2(n, m.dim);
    w["area"] = array1(area), w["value"] = array1(value), w["density"] = array1(density);
    out[py::str(m.patch_names[p])] = w;
  }
  return out;
}

std::vector<std::shared_ptr<config::CaseConfig>>
Simulation::objective_cases(const std::vector<std::string> &objectives) const {
  std::vector<std::shared_ptr<config::CaseConfig>> cfgs;
  for (const auto &o : objectives)
    cfgs.push_back(o.empty() ? case_->cfg : case_->with_objective(o));
  return cfgs;
}

void Simulation::run_unsteady_adjoint(const std::vector<std::shared_ptr<config::CaseConfig>> &cfgs,
                                      bool forward_only,
                                      std::vector<adjoint::UnsteadyAdjointResult> *r) {
  adjoint::UnsteadyAdjoint ua;
  check(ua.setup(fc_->residual(), *cfgs.front()));
  for (std::size_t i = 1; i < cfgs.size(); ++i) check(ua.add_objective(*cfgs[i]));
  adjoint::UnsteadyAdjointOptions o = fc_->unsteady_gradient_options();
  o.save_every = 0; // (no adjoint state to resume from in Python)
  o.trajectory_directory = (fs::path(work_dir_) / "trajectory").string();
  o.forward_only = forward_only;
  check(fc_->unsteady_gradient(ua, o, r));
}

} // namespace karman::bindings
