// Unsteady discrete adjoint (see include/karman/adjoint/unsteady_adjoint.hpp).
#include "karman/adjoint/unsteady_adjoint.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/natural_layout.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/steady_solver.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace karman::adjoint {

using discretization::FlowResidual;
using discretization::PatchCondition;

PetscErrorCode UnsteadyAdjoint::setup(FlowResidual &res, const config::CaseConfig &cfg)
{
  PetscFunctionBeginUser;
  res_ = &res;
  cfg_ = &cfg;
  PetscCall(objective_.setup(res, cfg));
  const config::Section obj = cfg.section("objective"), time = cfg.section("time");
  t_end_ = time.real("t_end");
  dt_ = time.real("dt");
  steps_ = std::lround(t_end_ / dt_);
  PetscCheck(steps_ >= 2 && std::abs(steps_ * dt_ - t_end_) < 1e-9 * t_end_, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: the unsteady adjoint needs time.t_end to be a multiple (>= 2) of time.dt (got %g and %g)",
             cfg.file().c_str(), t_end_, dt_);
  final_time_ = obj.text("time") == "final";
  const std::vector<double> window = obj.reals("window");
  PetscCheck(window.empty() || (window.size() == 2 && window[1] > window[0]), res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: objective.window must be [t0, t1] with t1 > t0", cfg.file().c_str());
  t0_ = window.empty() ? 0.0 : window[0];
  t1_ = window.empty() ? t_end_ : std::min(window[1], t_end_);
  beta_ = obj.real("control_cost");
  const std::string wall = obj.text("control_wall");
  control_patch_ = wall.empty() ? -1 : res.mesh().patch_index(wall);
  PetscCheck(beta_ == 0 || control_patch_ >= 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: objective.control_cost needs objective.control_wall (a rotating wall), got '%s'", cfg.file().c_str(),
             wall.c_str());
  PetscCheck(control_patch_ < 0 || res.boundary_conditions().patch(control_patch_).type == "wall", res.mesh().comm,
             PETSC_ERR_USER_INPUT, "%s: objective.control_wall '%s' is not a wall", cfg.file().c_str(), wall.c_str());
  PetscFunctionReturn(0);
}

// Trapezoidal weight of level n in the time average over the levels with t^n in [t0, t1]
// (uniform steps): q = dt / span inside, dt / (2 span) at both ends, span = t_last - t_first.
double UnsteadyAdjoint::weight(long n, double) const
{
  if (final_time_) return n == steps_ ? 1.0 : 0.0;
  const long first = std::max(1L, static_cast<long>(std::ceil(t0_ / dt_ - 1e-9)));
  const long last = std::min(steps_, static_cast<long>(std::floor(t1_ / dt_ + 1e-9)));
  if (n < first || n > last || last < first) return 0.0;
  if (first == last) return 1.0;
  const double q = 1.0 / (last - first);
  return (n == first || n == last) ? 0.5 * q : q;
}

PetscErrorCode UnsteadyAdjoint::run(Vec w0, const UnsteadyAdjointOptions &o, UnsteadyAdjointResult *result)
{
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const double rho = res.parameters().rho;
  *result = UnsteadyAdjointResult();
  result->steps = steps_;

  // ------------------------------------------------------------------ forward
  const double t_start = MPI_Wtime();
  solver::UnsteadySolver ts;
  PetscCall(ts.setup(res, *cfg_));
  PetscCall(ts.set_state(w0, w0, 0, 0.0, 0.0));
  std::unique_ptr<Trajectory> traj;
  if (o.schedule == "revolve" || o.forward_only) {
    traj = make_revolve(ts, o.forward_only ? 0 : o.snapshots);
  } else {
    std::string mesh_hash;
    PetscCall(io::mesh_hash(m, m.coordinates, &mesh_hash));
    traj = make_store_all(ts, m, o.trajectory_directory, mesh_hash, cfg_->problem_hash(), nv);
  }
  std::vector<TimeLevel> levels(steps_ + 1);
  double J = 0;
  const std::function<PetscErrorCode(const TimeLevel &)> on_step = [&](const TimeLevel &l) -> PetscErrorCode {
    PetscFunctionBeginUser;
    levels[l.step] = l;
    const double q = weight(l.step, l.time);
    objective_.set_time(l.time);
    if (q != 0) {
      double Js;
      PetscCall(res.update_local(ts.state()));
      PetscCall(objective_.value(res, &Js));
      J += q * Js;
    }
    if (beta_ > 0) {
      const double w = res.boundary_conditions().patch(control_patch_).omega.value(l.time, l.step);
      J += beta_ * l.dt * w * w;
    }
    PetscFunctionReturn(0);
  };
  PetscCall(traj->forward(steps_, dt_, on_step));
  result->J = J;
  result->forward_time = MPI_Wtime() - t_start;
  double forward_memory_max;
  PetscCall(solver::peak_memory(m.comm, &result->forward_memory, &forward_memory_max));
  if (o.forward_only) PetscFunctionReturn(0);

  // BDF coefficients of every level
  const bool bdf1 = cfg_->section("time").text("scheme") == "bdf1";
  std::vector<solver::BdfCoefficients> bdf(steps_ + 3);
  for (long n = 1; n <= steps_; ++n)
    bdf[n] = solver::bdf_coefficients((bdf1 || n == 1) ? 1 : 2, levels[n].dt, levels[n].dt_prev);

  // ------------------------------------------------------------------ backward
  const double a_start = MPI_Wtime();
  Mat J_, P_ = nullptr;
  KSP ksp;
  Vec w, w_prev, g, psi, psi1, psi2, rs;
  PetscCall(res.create_jacobian(&J_));
  // GMRES with the exact Jacobian of each level, preconditioned by (default: an LU factorization
  // of) the full Jacobian (exact: one iteration right after a set-up, a few while the flow changes
  // little) or its compact face-neighbour part (smaller factors, more iterations), reused across
  // levels (policy below)
  const config::Section adj = cfg_->section("adjoint");
  const bool compact = adj.text("preconditioner_matrix") == "compact";
  if (compact) PetscCall(res.create_jacobian(&P_, true));
  for (Vec *v : {&w, &w_prev, &g, &psi, &psi1, &psi2, &rs}) PetscCall(res.create_state(v));
  PetscCall(VecSet(psi1, 0.0));
  PetscCall(VecSet(psi2, 0.0));
  const solver::LinearTolerances tol{adj.real("rtol"), adj.real("atol"),
                                     static_cast<PetscInt>(adj.integer("level_max_iterations"))};
  PetscCall(
      solver::create_linear_solver(m.comm, solver::LinearSolverRole::Adjoint, KSPGMRES, tol, &ksp));
  // Reuse policy: a preconditioner is kept while the last level's solve costs less than the mean
  // cost per level since its set-up (set-up included) and takes at most 100 iterations.  Times are
  // the maximum over the ranks, so that every rank takes the same decision.
  solver::PreconditionerReuse pc_reuse(solver::PreconditionerReuse::Rule::MeanCost, 100);

  std::vector<std::string> names;
  std::map<std::string, double> sums;
  result->X.assign(m.n_vertices, Vec3<double>());
  result->times.assign(steps_, 0.0);
  for (long n = 1; n <= steps_; ++n) result->times[n - 1] = levels[n].time;
  long n = steps_;
  if (o.resume) {
    PetscCall(load_state(o, &n, psi1, psi2, result));
    result->resumed_from = n;
    for (const auto &p : result->parameters) sums[p.name] = p.gradient;
    PetscCall(log_info(m.comm, "adjoint: resuming at level %ld from %s", n, o.state_file.c_str()));
    --n;
  }
  std::vector<double> shift(m.n_owned_cells), psi_local;
  for (; n >= 1; --n) {
    TimeLevel level;
    PetscCall(traj->get(n, w, w_prev, &level));
    PetscCall(res.update_boundary_values(level.time, n));
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) shift[c] = rho * res.geometry().cell_volume[c] * bdf[n].a0;
    PetscCall(res.jacobian(w, J_, &shift));
    // explicit objective part at this level
    const double q = weight(n, level.time);
    objective_.set_time(level.time);
    Sensitivities so;
    so.reset(res);
    if (q != 0) PetscCall(objective_.reverse(res, so, q));
    Gradient gobj;
    PetscCall(finish(res, so, &gobj, true));
    PetscCall(VecSet(g, 0.0));
    for (PetscInt c = 0; c < m.n_cells; ++c)
      for (int k = 0; k < nv; ++k)
        if (so.wbar[c * nv + k] != 0)
          PetscCall(VecSetValue(g, m.cell_global[c] * nv + k, so.wbar[c * nv + k], ADD_VALUES));
    PetscCall(VecAssemblyBegin(g));
    PetscCall(VecAssemblyEnd(g));
    // coupling to the later levels: rho V (a1^{n+1} psi^{n+1} + a2^{n+2} psi^{n+2}) on momentum rows
    {
      PetscScalar *ga;
      const PetscScalar *p1, *p2;
      PetscCall(VecGetArray(g, &ga));
      PetscCall(VecGetArrayRead(psi1, &p1));
      PetscCall(VecGetArrayRead(psi2, &p2));
      const double c1 = n + 1 <= steps_ ? bdf[n + 1].a1 : 0.0, c2 = n + 2 <= steps_ ? bdf[n + 2].a2 : 0.0;
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        const double rv = rho * res.geometry().cell_volume[c];
        for (int k = 1; k < nv; ++k) ga[c * nv + k] += rv * (c1 * p1[c * nv + k] + c2 * p2[c * nv + k]);
      }
      PetscCall(VecRestoreArray(g, &ga));
      PetscCall(VecRestoreArrayRead(psi1, &p1));
      PetscCall(VecRestoreArrayRead(psi2, &p2));
    }
    PetscCall(VecScale(g, -1.0));
    const bool pc_setup = pc_reuse.decide_setup();
    if (compact && pc_setup) PetscCall(res.jacobian(w, P_, &shift, true));
    PetscCall(KSPSetOperators(ksp, J_, compact ? P_ : J_));
    PetscCall(KSPSetReusePreconditioner(ksp, pc_setup ? PETSC_FALSE : PETSC_TRUE));
    double solve_time = MPI_Wtime();
    PetscCall(solver::check_transposed_solve(ksp));
    PetscCall(KSPSolveTranspose(ksp, g, psi));
    solve_time = MPI_Wtime() - solve_time;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &solve_time, 1, MPI_DOUBLE, MPI_MAX, m.comm));
    KSPConvergedReason reason;
    PetscInt its;
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCheck(reason > 0 || reason == KSP_CONVERGED_ITS, m.comm, PETSC_ERR_NOT_CONVERGED,
               "adjoint level %ld: the transposed solve did not converge (%s)", n, KSPConvergedReasons[reason]);
    result->linear_iterations += its;
    pc_reuse.record_solve(its, solve_time);
    PetscCall(log_info(m.comm, "adjoint level %5ld  t %.6f  linear iterations %d", n, level.time, (int)its));
    // psi^n . dR^n/d(X, a): fluxes, and the time term's dependence on the cell volumes
    PetscCall(ghosted_local_values(psi, &psi_local));
    PetscCall(res.update_local(w));
    Sensitivities sr;
    sr.reset(res);
    add_residual(res, psi_local, sr);
    PetscCall(res.residual(w, rs)); // R_s(w^n): rho V (a0 w^n + a1 w^{n-1} + a2 w^{n-2}) = -R_s at convergence
    {
      const PetscScalar *r;
      PetscCall(VecGetArrayRead(rs, &r));
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        double s = 0;
        for (int k = 1; k < nv; ++k) s -= psi_local[c * nv + k] * r[c * nv + k];
        sr.geom.cell_volume[c] += s / res.geometry().cell_volume[c];
      }
      PetscCall(VecRestoreArrayRead(rs, &r));
    }
    PetscCall(res.update_local(w)); // residual() refreshed it already; keep the state at w^n explicit
    Gradient gres;
    PetscCall(finish(res, sr, &gres, true));
    for (std::size_t i = 0; i < gres.parameters.size(); ++i) {
      const std::string &name = gres.parameters[i].name;
      const double v = gres.parameters[i].gradient + gobj.parameters[i].gradient;
      sums[name] += v;
      auto &series = result->control[name];
      series.resize(steps_, 0.0);
      series[n - 1] += v;
    }
    if (beta_ > 0) {
      const std::string name = "boundaries." + m.patch_names[control_patch_] + ".omega";
      const double wv = res.boundary_conditions().patch(control_patch_).omega.value(level.time, n);
      auto &series = result->control[name];
      series.resize(steps_, 0.0);
      series[n - 1] += 2 * beta_ * level.dt * wv;
      sums[name] += 2 * beta_ * level.dt * wv;
    }
    for (PetscInt v = 0; v < m.n_vertices; ++v) result->X[v] += gres.X[v] + gobj.X[v];
    if (o.snapshot && o.snapshot_every > 0 && (n % o.snapshot_every == 0 || n == 1))
      PetscCall(o.snapshot(n, level.time, psi_local));
    // shift the adjoint history
    PetscCall(VecCopy(psi1, psi2));
    PetscCall(VecCopy(psi, psi1));
    result->parameters.clear();
    for (const auto &[name, value] : sums) result->parameters.push_back({name, 0.0, value});
    if (o.save_every > 0 && n > 1 && n % o.save_every == 0) PetscCall(save_state(o, n, psi1, psi2, *result, {}, {}));
  }
  // initial condition: dJ/dw^0 = psi . dR/dw^0 = rho V (a1^1 psi^1 + a2^2 psi^2), momentum entries
  {
    const PetscScalar *p1, *p2;
    PetscCall(VecGetArrayRead(psi1, &p1));
    PetscCall(VecGetArrayRead(psi2, &p2));
    result->initial.assign(m.n_owned_cells * nv, 0.0);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double rv = rho * res.geometry().cell_volume[c];
      for (int k = 1; k < nv; ++k)
        result->initial[c * nv + k] = rv * (bdf[1].a1 * p1[c * nv + k] + (steps_ >= 2 ? bdf[2].a2 : 0.0) * p2[c * nv + k]);
    }
    PetscCall(VecRestoreArrayRead(psi1, &p1));
    PetscCall(VecRestoreArrayRead(psi2, &p2));
  }

  // ------------------------------------------------------------------ parameters of the time functions
  // per-level values -> the parameters that define them
  std::map<std::string, double> out;
  for (const auto &[name, value] : sums) out[name] = value;
  const auto &bcs = res.boundary_conditions();
  for (std::size_t p = 0; p < bcs.n_patches(); ++p) {
    const PatchCondition &pc = bcs.patch(static_cast<int>(p));
    const std::pair<const char *, const physics::TimeFunction *> functions[] = {
        {"omega", &pc.omega}, {"velocity", &pc.speed}, {"amplitude", &pc.amplitude}};
    for (const auto &[key, f] : functions) {
      const std::string name = "boundaries." + pc.name + "." + key;
      if (!result->control.count(name) || f->is_constant()) continue;
      const auto &g = result->control[name];
      if (f->kind() == physics::TimeFunction::Kind::Sine) {
        double dA = 0, df = 0, dphi = 0, doff = 0;
        for (long k = 0; k < steps_; ++k) {
          const double t = result->times[k], arg = 2 * M_PI * f->frequency * t + f->phase;
          dA += g[k] * std::sin(arg);
          df += g[k] * f->amplitude * std::cos(arg) * 2 * M_PI * t;
          dphi += g[k] * f->amplitude * std::cos(arg);
          doff += g[k];
        }
        out[name + ".amplitude"] = dA, out[name + ".frequency"] = df, out[name + ".phase"] = dphi;
        out[name + ".offset"] = doff;
      } else if (f->kind() == physics::TimeFunction::Kind::Table) {
        std::vector<double> dk(f->times.size(), 0.0);
        for (long k = 0; k < steps_; ++k) {
          const double t = result->times[k];
          if (t <= f->times.front()) dk.front() += g[k];
          else if (t >= f->times.back()) dk.back() += g[k];
          else {
            const std::size_t j = std::upper_bound(f->times.begin(), f->times.end(), t) - f->times.begin();
            const double s = (t - f->times[j - 1]) / (f->times[j] - f->times[j - 1]);
            dk[j - 1] += (1 - s) * g[k];
            dk[j] += s * g[k];
          }
        }
        for (std::size_t j = 0; j < dk.size(); ++j) out[name + ".knot[" + std::to_string(j) + "]"] = dk[j];
      }
      out.erase(name); // a value that changes in time has no single derivative
    }
  }
  result->parameters.clear();
  for (const auto &[name, value] : out) result->parameters.push_back({name, 0.0, value});
  result->recomputed = traj->recomputed_steps();
  result->snapshots = traj->snapshots_used();
  result->bytes_written = traj->bytes_written();
  result->adjoint_time = MPI_Wtime() - a_start;
  result->preconditioner_setups = pc_reuse.setups();
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&J_));
  if (P_) PetscCall(MatDestroy(&P_));
  for (Vec *v : {&w, &w_prev, &g, &psi, &psi1, &psi2, &rs}) PetscCall(VecDestroy(v));
  PetscFunctionReturn(0);
}

// The adjoint state: psi^n, psi^{n+1} (cell fields) and the gradients accumulated so far,
// in HDF5 (serial cell order, any rank count) with a JSON sidecar; both replaced atomically.
PetscErrorCode UnsteadyAdjoint::save_state(const UnsteadyAdjointOptions &o, long n, Vec psi1, Vec psi2,
                                           const UnsteadyAdjointResult &r, const std::vector<double> &,
                                           const std::vector<double> &) const
{
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  io::Field f1{"psi1", nv, {}}, f2{"psi2", nv, {}}, fx{"xbar_owned_vertices", 1, {}};
  const PetscScalar *a, *b;
  PetscCall(VecGetArrayRead(psi1, &a));
  PetscCall(VecGetArrayRead(psi2, &b));
  f1.values.assign(a, a + m.n_owned_cells * nv);
  f2.values.assign(b, b + m.n_owned_cells * nv);
  PetscCall(VecRestoreArrayRead(psi1, &a));
  PetscCall(VecRestoreArrayRead(psi2, &b));
  PetscCall(io::write_fields_h5(m, res_->coordinates(), o.state_file, {f1, f2}, {{"level", static_cast<double>(n)}}));
  // X adjoint of owned vertices, parameters and control series: JSON keyed by serial vertex index
  nlohmann::json j;
  j["level"] = n;
  j["J"] = r.J;
  for (const auto &p : r.parameters) j["parameters"][p.name] = p.gradient;
  for (const auto &[name, series] : r.control) j["control"][name] = series;
  std::vector<double> xs;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) xs.insert(xs.end(), {double(m.vertex_gid[v]), r.X[v][0], r.X[v][1], r.X[v][2]});
  // gather the owned-vertex adjoints on rank 0
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  PetscCallMPI(MPI_Comm_size(m.comm, &size));
  int mine = static_cast<int>(xs.size());
  std::vector<int> counts(size), displs(size, 0);
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, m.comm));
  std::vector<double> all;
  if (rank == 0) {
    for (int q = 1; q < size; ++q) displs[q] = displs[q - 1] + counts[q - 1];
    all.resize(displs[size - 1] + counts[size - 1]);
  }
  PetscCallMPI(MPI_Gatherv(xs.data(), mine, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, m.comm));
  if (rank == 0) {
    j["xbar"] = all;
    const std::string path = o.state_file + ".json";
    std::ofstream out(path + ".tmp");
    out << j.dump() << "\n";
    out.close();
    std::filesystem::rename(path + ".tmp", path);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::load_state(const UnsteadyAdjointOptions &o, long *n, Vec psi1, Vec psi2,
                                           UnsteadyAdjointResult *r) const
{
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  PetscCheck(std::filesystem::exists(o.state_file) && std::filesystem::exists(o.state_file + ".json"), m.comm,
             PETSC_ERR_FILE_OPEN, "--restart: no saved adjoint state %s (adjoint.save_every was 0?)",
             o.state_file.c_str());
  std::string text;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  if (rank == 0) {
    std::ifstream in(o.state_file + ".json");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  PetscCall(broadcast_string(m.comm, &text));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  PetscCheck(!j.is_discarded() && j.contains("level"), m.comm, PETSC_ERR_FILE_READ, "%s.json: corrupt adjoint state",
             o.state_file.c_str());
  *n = j["level"].get<long>();
  io::Field f1, f2;
  PetscCall(io::read_cell_field_h5(m, o.state_file, "psi1", &f1));
  PetscCall(io::read_cell_field_h5(m, o.state_file, "psi2", &f2));
  PetscCheck(f1.ncomp == nv, m.comm, PETSC_ERR_FILE_READ, "%s: adjoint state of another problem", o.state_file.c_str());
  PetscScalar *a;
  PetscCall(VecGetArray(psi1, &a));
  std::copy(f1.values.begin(), f1.values.end(), a);
  PetscCall(VecRestoreArray(psi1, &a));
  PetscCall(VecGetArray(psi2, &a));
  std::copy(f2.values.begin(), f2.values.end(), a);
  PetscCall(VecRestoreArray(psi2, &a));
  if (j.contains("parameters"))
    for (const auto &[name, value] : j["parameters"].items()) r->parameters.push_back({name, 0.0, value.get<double>()});
  if (j.contains("control"))
    for (const auto &[name, series] : j["control"].items()) r->control[name] = series.get<std::vector<double>>();
  // owned vertices from the file, then every copy gets its owner's value
  std::map<PetscInt, Vec3<double>> by_gid;
  const std::vector<double> xs = j["xbar"].get<std::vector<double>>();
  for (std::size_t i = 0; i + 3 < xs.size(); i += 4)
    by_gid[static_cast<PetscInt>(xs[i])] = Vec3<double>(xs[i + 1], xs[i + 2], xs[i + 3]);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    r->X[v] = m.vertex_owned[v] && by_gid.count(m.vertex_gid[v]) ? by_gid[m.vertex_gid[v]] : Vec3<double>();
  PetscCall(sum_vertex_copies(m, r->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
