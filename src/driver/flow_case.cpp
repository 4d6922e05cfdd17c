// A case as a library object (see include/karman/driver/flow_case.hpp).
#include "karman/driver/flow_case.hpp"

#include "karman/discretization/parameters.hpp"
#include "karman/core/logger.hpp"
#include "karman/io/field_transfer.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/physics/boundary_kernels.hpp"
#include "karman/solver/step_size.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

namespace karman::driver {

using discretization::FlowResidual;
using discretization::LocalState;

PetscErrorCode load_case_mesh(MPI_Comm comm, const config::CaseConfig &cfg, mesh::Mesh *mesh) {
  PetscFunctionBeginUser;
  std::string msh;
  PetscCall(mesh::prepare_mesh_file(comm, cfg, &msh));
  std::vector<std::string> names;
  for (const auto &b : cfg.boundaries()) names.push_back(b.name);
  PetscCall(mesh::load_mesh(comm, msh, names, cfg.file(), mesh));
  const long dim = mesh::mesh_options().get(cfg).dimension;
  PetscCheck(dim == mesh->dim, comm, PETSC_ERR_USER_INPUT,
             "%s: mesh.dimension is %ld but %s is %dD", cfg.file().c_str(), dim, msh.c_str(),
             mesh->dim);
  PetscFunctionReturn(0);
}

namespace {

// The uniform initial value of every unknown: initial.pressure, initial.velocity -- turned by the
// far field's angle of attack, as the far field's velocity is (both given at zero angle), so
// that a campaign whose angle is a design variable starts a cold solve at its current angle from
// its own free stream (a restart of cases/naca0012-rans/optimize.yaml at 2.6 degrees from the
// stream at 4.5 did not converge)
std::vector<double> uniform_initial_values(const FlowResidual &res, const config::CaseConfig &cfg) {
  const physics::EquationSet &eq = res.equations();
  const discretization::InitialOptions init = discretization::initial_options().get(cfg);
  std::vector<double> w0(eq.nv(), 0.0);
  for (std::size_t i = 0; i < eq.n_fields(); ++i)
    for (int d = 0; d < eq.field(i).components; ++d) w0[eq.offset(i) + d] = eq.field(i).initial;
  w0[eq.offset(eq.find("pressure"))] = init.pressure;
  const Vec3<double> u0 =
      physics::turned(init.velocity, res.boundary_conditions().angle_of_attack());
  for (int d = 0; d < eq.dim(); ++d) w0[eq.offset(eq.find("velocity")) + d] = u0[d];
  return w0;
}

// Fields of the state that the initial file `path` does not hold start from their uniform initial
// values (a flow-only run as the start of a run with a scalar), said in the log.
PetscErrorCode fill_missing_fields(const FlowResidual &res, const config::CaseConfig &cfg,
                                   const std::string &path, const std::vector<std::string> &missing,
                                   Vec w) {
  PetscFunctionBeginUser;
  if (missing.empty()) PetscFunctionReturn(0);
  const physics::EquationSet &eq = res.equations();
  const std::vector<double> w0 = uniform_initial_values(res, cfg);
  const int nv = eq.nv();
  PetscScalar *a;
  PetscCall(VecGetArray(w, &a));
  std::string names;
  for (const auto &name : missing) {
    const int i = eq.find(name);
    for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c)
      for (int d = 0; d < eq.field(i).components; ++d)
        a[c * nv + eq.offset(i) + d] = w0[eq.offset(i) + d];
    names += (names.empty() ? "" : ", ") + name;
  }
  PetscCall(VecRestoreArray(w, &a));
  PetscCall(log_info(res.mesh().comm,
                     "%s: initial.file '%s' holds no %s: uniform initial values used for it",
                     cfg.file().c_str(), path.c_str(), names.c_str()));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode initial_state(const FlowResidual &res, const config::CaseConfig &cfg, Vec w) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const std::string file = discretization::initial_options().get(cfg).file;
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
    const physics::EquationSet &eq = res.equations();
    if (file_hash == mesh_hash) {
      std::vector<std::string> missing;
      PetscCall(io::read_state_h5(m, eq, path, w, &missing));
      PetscCall(fill_missing_fields(res, cfg, path, missing, w));
      PetscFunctionReturn(0);
    }
    const auto &g = res.geometry();
    std::vector<Vec3<double>> x(g.cell_centroid.begin(), g.cell_centroid.begin() + m.n_owned_cells);
    std::vector<double> h(m.n_owned_cells);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) h[c] = std::pow(g.cell_volume[c], 1.0 / m.dim);
    std::vector<std::string> names, missing;
    for (const auto &f : eq.fields()) {
      bool present;
      PetscCall(io::has_cell_field_h5(m.comm, path, f.name, &present));
      (present ? names : missing).push_back(f.name);
    }
    std::vector<io::Field> f;
    PetscInt source_cells = 0;
    double gap = 0;
    PetscCall(
        io::transfer_cell_fields_h5(m.comm, m.dim, path, names, x, h, &f, &source_cells, &gap));
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
    PetscCall(VecGetArray(w, &a));
    for (std::size_t i = 0, j = 0; i < eq.n_fields(); ++i) {
      if (j >= names.size() || names[j] != eq.field(i).name) continue;
      const io::Field &fi = f[j++];
      PetscCheck(fi.ncomp >= eq.field(i).components, m.comm, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: initial.file '%s' has %s with %d components, expected %d", cfg.file().c_str(),
                 path.c_str(), fi.name.c_str(), fi.ncomp, eq.field(i).components);
      for (PetscInt c = 0; c < m.n_owned_cells; ++c)
        for (int d = 0; d < eq.field(i).components; ++d)
          a[c * nv + eq.offset(i) + d] = fi.values[fi.ncomp * c + d];
    }
    PetscCall(VecRestoreArray(w, &a));
    PetscCall(fill_missing_fields(res, cfg, path, missing, w));
    PetscFunctionReturn(0);
  }
  const std::vector<double> w0 = uniform_initial_values(res, cfg);
  PetscCall(VecGetArray(w, &a));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (int k = 0; k < nv; ++k) a[c * nv + k] = w0[k];
  PetscCall(VecRestoreArray(w, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::load(MPI_Comm comm, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  mesh::Mesh mesh;
  PetscCall(load_case_mesh(comm, cfg, &mesh));
  PetscCall(load(cfg, std::move(mesh)));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::load(const config::CaseConfig &cfg, mesh::Mesh &&mesh) {
  PetscFunctionBeginUser;
  cfg_ = &cfg;
  mesh_ = std::move(mesh);
  PetscCall(res_.setup(mesh_, cfg));
  PetscCall(mon_.setup(res_, cfg));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::evaluate(const discretization::TimeLevel &level, Vec w, LocalState *state,
                                  solver::FlowMonitors::Values *values) const {
  PetscFunctionBeginUser;
  PetscCall(res_.local_state(level, w, state));
  PetscCall(mon_.evaluate(res_, *state, values));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::solve_steady(Vec w, Vec best, const SteadyObserver &observer,
                                      SteadySolution *solution, double reference_residual) {
  PetscFunctionBeginUser;
  solver::SteadySolver newton;
  PetscCall(newton.setup(res_, *cfg_, !std::exchange(solver_announced_, true)));
  newton.set_reference_residual(reference_residual);
  // a warm start (reference_residual > 0) is not the Stokes-like state at rest that the
  // smoothers' positive-definite shift is for (solver/linear_solver.cpp): it starts with only
  // zero pivots shifted, on trial, unless that failed in a solve of this case before
  if (smoothers_unshifted_ || (reference_residual > 0 && !unshifted_failed_))
    PetscCall(newton.start_unshifted());
  if (smoothers_overlapped_) PetscCall(newton.start_overlapped());
  LocalState state;
  const std::function<PetscErrorCode(const solver::NewtonRecord &, Vec)> monitor =
      [&](const solver::NewtonRecord &r, Vec x) -> PetscErrorCode {
    PetscFunctionBeginUser;
    if (!observer) PetscFunctionReturn(0);
    solver::FlowMonitors::Values v;
    PetscCall(evaluate(discretization::kSteady, x, &state, &v));
    PetscCall(observer(r, v));
    PetscFunctionReturn(0);
  };
  PetscCall(newton.solve(w, monitor, best, &solution->summary));
  smoothers_unshifted_ = solution->summary.smoothers_unshifted;
  smoothers_overlapped_ = solution->summary.smoothers_overlapped;
  smoothers_reshifted_ = solution->summary.smoothers_reshifted;
  unshifted_failed_ = unshifted_failed_ || smoothers_reshifted_;
  PetscCall(solver::peak_memory(mesh_.comm, &solution->peak_memory_mib,
                                &solution->peak_memory_mib_max_rank));
  const bool at_best = !solution->summary.converged && best;
  PetscCall(evaluate(discretization::kSteady, at_best ? best : w, &state, &solution->values));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::start_unsteady(solver::UnsteadySolver &ts, LocalState *state,
                                        solver::FlowMonitors::Values *values,
                                        solver::StepPurpose purpose) {
  PetscFunctionBeginUser;
  PetscCall(ts.setup(res_, *cfg_, purpose));
  Vec w0;
  PetscCall(create_state(&w0));
  PetscCall(initial_state(w0));
  PetscCall(ts.set_state(w0, w0, 0, 0.0, 0.0));
  PetscCall(VecDestroy(&w0));
  PetscCall(evaluate(ts.level(), ts.state(), state, values));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::advance_to(solver::UnsteadySolver &ts, double t_end,
                                    const StepObserver &observer, UnsteadySolution *solution) {
  PetscFunctionBeginUser;
  const double dt = solver::time_options().get(*cfg_).dt.value;
  const solver::StepSizeController *control = ts.step_control();
  *solution = UnsteadySolution();
  LocalState state;
  while (!solver::reached_end(ts, t_end, dt)) {
    solver::StepReport r;
    if (control)
      PetscCall(solver::advance_controlled(ts, t_end, &r));
    else
      PetscCall(ts.advance(std::min(dt, t_end - ts.time()), &r));
    if (!r.converged) {
      solution->converged = false;
      solution->failed = r;
      break;
    }
    ++solution->steps;
    solution->wall_time += r.wall_time;
    solution->newton_iterations += r.newton_iterations;
    solution->linear_iterations += r.linear_iterations;
    solution->preconditioner_setups += r.preconditioner_setup;
    solution->linear_fallbacks += r.linear_fallback;
    solution->dual_time_steps += r.dual_time_stepping;
    solution->truncation_stops += r.truncation_stop;
    solution->rejected_steps += r.rejected_tries;
    solution->min_dt = solution->steps == 1 ? r.dt : std::min(solution->min_dt, r.dt);
    solution->max_dt = std::max(solution->max_dt, r.dt);
    solution->residual_time += r.residual_time;
    solution->jacobian_time += r.jacobian_time;
    solution->pc_setup_time += r.pc_setup_time;
    solution->linear_solve_time += r.linear_solve_time;
    solver::FlowMonitors::Values v;
    PetscCall(evaluate(ts.level(), ts.state(), &state, &v));
    if (observer) PetscCall(observer(ts, r, state, v));
  }
  PetscFunctionReturn(0);
}

adjoint::UnsteadyAdjointOptions FlowCase::unsteady_gradient_options() const {
  return adjoint::unsteady_adjoint_options(adjoint::adjoint_options().get(*cfg_));
}

PetscErrorCode
FlowCase::unsteady_gradient(adjoint::UnsteadyAdjoint &adjoint,
                            const adjoint::UnsteadyAdjointOptions &o,
                            std::vector<adjoint::UnsteadyAdjointResult> *results) const {
  PetscFunctionBeginUser;
  Vec w0;
  PetscCall(create_state(&w0));
  PetscCall(initial_state(w0));
  const PetscErrorCode ierr = adjoint.run(w0, o, results);
  PetscCall(VecDestroy(&w0));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::objective(const adjoint::Objective **objective) {
  PetscFunctionBeginUser;
  if (!objective_) {
    auto o = std::make_unique<adjoint::Objective>();
    PetscCall(o->setup(res_, *cfg_));
    objective_ = std::move(o);
  }
  *objective = objective_.get();
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::gradient(Vec w, const adjoint::Objective &objective,
                                  adjoint::AdjointResult *result, bool same_state) {
  PetscFunctionBeginUser;
  if (!adjoint_) {
    auto a = std::make_unique<adjoint::AdjointSolver>();
    PetscCall(a->setup(res_, *cfg_));
    adjoint_ = std::move(a);
  }
  // once per forward solve: a later adjoint of the same state keeps what the adjoint solver
  // learnt (its retry may have gone back to zero pivots only)
  if (std::exchange(smoothers_reshifted_, false)) PetscCall(adjoint_->start_shifted());
  PetscCall(adjoint_->solve(w, objective, result, same_state));
  PetscFunctionReturn(0);
}

namespace {

/// The time function of boundary parameter `name` (rotation rate, inlet speed, jet amplitude),
/// or null.
physics::TimeFunction *time_function_of(FlowResidual &res, const std::string &name) {
  const discretization::ParameterRegistry reg(res);
  const int i = reg.find(name);
  return i < 0 ? nullptr : reg.time_function(res, i);
}

/// The names of the parameters that time_function_of() knows, comma separated.
std::string time_function_names(FlowResidual &res) {
  const discretization::ParameterRegistry reg(res);
  std::string out;
  for (std::size_t i = 0; i < reg.size(); ++i)
    if (time_function_of(res, reg.spec(i).name))
      out += (out.empty() ? "" : ", ") + reg.spec(i).name;
  return out.empty() ? "none" : out;
}

} // namespace

PetscErrorCode FlowCase::parameter_steps(const std::string &name, long levels,
                                         std::vector<double> *values) const {
  PetscFunctionBeginUser;
  FlowResidual &res = const_cast<FlowResidual &>(res_); // only read
  const physics::TimeFunction *f = time_function_of(res, name);
  PetscCheck(f, mesh_.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s' is not a parameter with a value per time step (the case has: %s)",
             cfg_->file().c_str(), name.c_str(), time_function_names(res).c_str());
  const solver::TimeOptions time = solver::time_options().get(*cfg_);
  PetscCheck(!time.adaptive(), mesh_.comm, PETSC_ERR_USER_INPUT,
             "%s: values per time step of '%s' need a fixed time.dt (with time.dt: auto the "
             "levels' times are known only after the run); set time.dt to a number",
             cfg_->file().c_str(), name.c_str());
  const double dt = time.dt.value;
  values->resize(levels);
  for (long n = 1; n <= levels; ++n) (*values)[n - 1] = f->value(n * dt, n);
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::set_parameter_steps(const std::string &name,
                                             const std::vector<double> &values) {
  PetscFunctionBeginUser;
  physics::TimeFunction *f = time_function_of(res_, name);
  PetscCheck(f, mesh_.comm, PETSC_ERR_USER_INPUT,
             "%s: '%s' is not a parameter with a value per time step (the case has: %s)",
             cfg_->file().c_str(), name.c_str(), time_function_names(res_).c_str());
  PetscCheck(!values.empty(), mesh_.comm, PETSC_ERR_USER_INPUT,
             "%s: no values per time step for '%s'", cfg_->file().c_str(), name.c_str());
  PetscCheck(!solver::time_options().get(*cfg_).adaptive(), mesh_.comm, PETSC_ERR_USER_INPUT,
             "%s: values per time step of '%s' need a fixed time.dt (with time.dt: auto the "
             "levels' times are known only after the run); set time.dt to a number",
             cfg_->file().c_str(), name.c_str());
  std::vector<double> v{f->value(0.0, 0)};
  v.insert(v.end(), values.begin(), values.end());
  *f = physics::TimeFunction::steps(std::move(v));
  res_.parameters_changed();
  PetscFunctionReturn(0);
}

PetscErrorCode FlowCase::steady_gradient(Vec w, adjoint::AdjointResult *result) {
  PetscFunctionBeginUser;
  const adjoint::Objective *obj;
  PetscCall(objective(&obj));
  PetscCall(gradient(w, *obj, result));
  PetscCall(adjoint::select_parameters(res_, *cfg_, &result->gradient.parameters));
  PetscFunctionReturn(0);
}

} // namespace karman::driver
