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
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace karman::adjoint {

using discretization::FlowResidual;
using discretization::PatchCondition;

PetscErrorCode UnsteadyAdjoint::setup(FlowResidual &res, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  res_ = &res;
  cfg_ = &cfg;
  PetscCall(objective_.setup(res, cfg));
  const config::Section obj = cfg.section("objective"), time = cfg.section("time");
  t_end_ = time.real("t_end");
  dt_ = time.real("dt");
  steps_ = std::lround(t_end_ / dt_);
  PetscCheck(steps_ >= 2 && std::abs(steps_ * dt_ - t_end_) < 1e-9 * t_end_, res.mesh().comm,
             PETSC_ERR_USER_INPUT,
             "%s: the unsteady adjoint needs time.t_end to be a multiple (>= 2) of time.dt (got %g "
             "and %g)",
             cfg.file().c_str(), t_end_, dt_);
  final_time_ = obj.text("time") == "final";
  const std::vector<double> window = obj.reals("window");
  PetscCheck(window.empty() || (window.size() == 2 && window[1] > window[0]), res.mesh().comm,
             PETSC_ERR_USER_INPUT, "%s: objective.window must be [t0, t1] with t1 > t0",
             cfg.file().c_str());
  t0_ = window.empty() ? 0.0 : window[0];
  t1_ = window.empty() ? t_end_ : std::min(window[1], t_end_);
  beta_ = obj.real("control_cost");
  const std::string wall = obj.text("control_wall");
  control_patch_ = wall.empty() ? -1 : res.mesh().patch_index(wall);
  PetscCheck(beta_ == 0 || control_patch_ >= 0, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: objective.control_cost needs objective.control_wall (a rotating wall), got '%s'",
             cfg.file().c_str(), wall.c_str());
  PetscCheck(control_patch_ < 0 || res.boundary_conditions().patch(control_patch_).type() ==
                                       physics::BoundaryType::Wall,
             res.mesh().comm, PETSC_ERR_USER_INPUT, "%s: objective.control_wall '%s' is not a wall",
             cfg.file().c_str(), wall.c_str());
  PetscFunctionReturn(0);
}

// Trapezoidal weight of level n in the time average over the levels with t^n in [t0, t1]
// (uniform steps): q = dt / span inside, dt / (2 span) at both ends, span = t_last - t_first.
double UnsteadyAdjoint::weight(long n, double) const {
  if (final_time_) return n == steps_ ? 1.0 : 0.0;
  const long first = std::max(1L, static_cast<long>(std::ceil(t0_ / dt_ - 1e-9)));
  const long last = std::min(steps_, static_cast<long>(std::floor(t1_ / dt_ + 1e-9)));
  if (n < first || n > last || last < first) return 0.0;
  if (first == last) return 1.0;
  const double q = 1.0 / (last - first);
  return (n == first || n == last) ? 0.5 * q : q;
}

PetscErrorCode UnsteadyAdjoint::run(Vec w0, const UnsteadyAdjointOptions &o,
                                    UnsteadyAdjointResult *result) {
  PetscFunctionBeginUser;
  FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const double rho = res.parameters().rho;
  *result = UnsteadyAdjointResult();
  result->steps = steps_;
  result->X.assign(m.n_vertices, Vec3<double>());
  // psi^{n+1}, psi^{n+2} of the level being solved; a saved state is read before the forward run,
  // so that a state of another case is refused at once
  Vec psi1, psi2;
  PetscCall(res.create_state(&psi1));
  PetscCall(res.create_state(&psi2));
  PetscCall(VecSet(psi1, 0.0));
  PetscCall(VecSet(psi2, 0.0));
  long n = steps_;
  if (o.resume && !o.forward_only) {
    PetscCall(load_state(o, &n, psi1, psi2, result));
    result->resumed_from = n;
  }

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
    PetscCall(io::mesh_hash(m, res.coordinates(), &mesh_hash));
    traj = make_store_all(ts, m, o.trajectory_directory, mesh_hash, cfg_->problem_hash(), nv);
  }
  std::vector<TimeLevel> levels(steps_ + 1);
  double J = 0;
  const std::function<PetscErrorCode(const TimeLevel &)> on_step =
      [&](const TimeLevel &l) -> PetscErrorCode {
    PetscFunctionBeginUser;
    levels[l.step] = l;
    const double q = weight(l.step, l.time);
    objective_.set_time(l.time);
    if (q != 0) {
      double Js;
      discretization::LocalState state;
      PetscCall(res.local_state(ts.state(), &state));
      PetscCall(objective_.value(res, state, &Js));
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
  if (o.forward_only) {
    PetscCall(VecDestroy(&psi1));
    PetscCall(VecDestroy(&psi2));
    PetscFunctionReturn(0);
  }

  // BDF coefficients of every level
  const bool bdf1 = cfg_->section("time").text("scheme") == "bdf1";
  std::vector<solver::BdfCoefficients> bdf(steps_ + 3);
  for (long n = 1; n <= steps_; ++n)
    bdf[n] = solver::bdf_coefficients((bdf1 || n == 1) ? 1 : 2, levels[n].dt, levels[n].dt_prev);

  // ------------------------------------------------------------------ backward
  const double a_start = MPI_Wtime();
  Mat J_, P_ = nullptr;
  KSP ksp;
  Vec w, w_prev, g, psi, rs;
  PetscCall(res.create_jacobian(&J_));
  // GMRES with the exact Jacobian of each level, preconditioned by (default: an LU factorization
  // of) the full Jacobian (exact: one iteration right after a set-up, a few while the flow changes
  // little) or its compact face-neighbour part (smaller factors, more iterations), reused across
  // levels (policy below)
  const config::Section adj = cfg_->section("adjoint");
  const bool compact = adj.text("preconditioner_matrix") == "compact";
  if (compact) PetscCall(res.create_jacobian(&P_, true));
  for (Vec *v : {&w, &w_prev, &g, &psi, &rs}) PetscCall(res.create_state(v));
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
  result->times.assign(steps_, 0.0);
  for (long k = 1; k <= steps_; ++k) result->times[k - 1] = levels[k].time;
  if (o.resume) {
    for (const auto &p : result->parameters) sums[p.name] = p.gradient;
    PetscCall(log_info(m.comm, "adjoint: resuming at level %ld from %s", n, o.state_file.c_str()));
    --n;
  }
  std::vector<double> shift(m.n_owned_cells), psi_local;
  for (; n >= 1; --n) {
    TimeLevel level;
    PetscCall(traj->get(n, w, w_prev, &level));
    PetscCall(res.update_boundary_values(level.time, n));
    discretization::LocalState state; // at w^n, with the boundary values of t^n
    PetscCall(res.local_state(w, &state));
    for (PetscInt c = 0; c < m.n_owned_cells; ++c)
      shift[c] = rho * res.geometry().cell_volume[c] * bdf[n].a0;
    PetscCall(res.jacobian(w, J_, &shift));
    // explicit objective part at this level
    const double q = weight(n, level.time);
    objective_.set_time(level.time);
    Sensitivities so;
    so.reset(res);
    if (q != 0) PetscCall(objective_.reverse(res, state, so, q));
    Gradient gobj;
    PetscCall(finish(res, state, so, &gobj, true));
    PetscCall(VecSet(g, 0.0));
    for (PetscInt c = 0; c < m.n_cells; ++c)
      for (int k = 0; k < nv; ++k)
        if (so.wbar[c * nv + k] != 0)
          PetscCall(VecSetValue(g, m.cell_global[c] * nv + k, so.wbar[c * nv + k], ADD_VALUES));
    PetscCall(VecAssemblyBegin(g));
    PetscCall(VecAssemblyEnd(g));
    // coupling to the later levels: rho V (a1^{n+1} psi^{n+1} + a2^{n+2} psi^{n+2}) on momentum
    // rows
    {
      PetscScalar *ga;
      const PetscScalar *p1, *p2;
      PetscCall(VecGetArray(g, &ga));
      PetscCall(VecGetArrayRead(psi1, &p1));
      PetscCall(VecGetArrayRead(psi2, &p2));
      const double c1 = n + 1 <= steps_ ? bdf[n + 1].a1 : 0.0,
                   c2 = n + 2 <= steps_ ? bdf[n + 2].a2 : 0.0;
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        const double rv = rho * res.geometry().cell_volume[c];
        for (int k = 1; k < nv; ++k)
          ga[c * nv + k] += rv * (c1 * p1[c * nv + k] + c2 * p2[c * nv + k]);
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
               "adjoint level %ld: the transposed solve did not converge (%s)", n,
               KSPConvergedReasons[reason]);
    result->linear_iterations += its;
    pc_reuse.record_solve(its, solve_time);
    PetscCall(log_info(m.comm, "adjoint level %5ld  t %.6f  linear iterations %d", n, level.time,
                       (int)its));
    // psi^n . dR^n/d(X, a): fluxes, and the time term's dependence on the cell volumes
    PetscCall(ghosted_local_values(psi, &psi_local));
    Sensitivities sr;
    sr.reset(res);
    add_residual(res, state, psi_local, sr);
    PetscCall(res.residual(
        w, rs)); // R_s(w^n): rho V (a0 w^n + a1 w^{n-1} + a2 w^{n-2}) = -R_s at convergence
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
    Gradient gres;
    PetscCall(finish(res, state, sr, &gres, true));
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
    if (o.save_every > 0 && n > 1 && n % o.save_every == 0)
      PetscCall(save_state(o, n, psi1, psi2, *result));
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
        result->initial[c * nv + k] =
            rv * (bdf[1].a1 * p1[c * nv + k] + (steps_ >= 2 ? bdf[2].a2 : 0.0) * p2[c * nv + k]);
    }
    PetscCall(VecRestoreArrayRead(psi1, &p1));
    PetscCall(VecRestoreArrayRead(psi2, &p2));
  }

  // ------------------------------------------------------------------ parameters of the time
  // functions per-level values -> the parameters that define them
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
          if (t <= f->times.front())
            dk.front() += g[k];
          else if (t >= f->times.back())
            dk.back() += g[k];
          else {
            const std::size_t j =
                std::upper_bound(f->times.begin(), f->times.end(), t) - f->times.begin();
            const double s = (t - f->times[j - 1]) / (f->times[j] - f->times[j - 1]);
            dk[j - 1] += (1 - s) * g[k];
            dk[j] += s * g[k];
          }
        }
        for (std::size_t j = 0; j < dk.size(); ++j)
          out[name + ".knot[" + std::to_string(j) + "]"] = dk[j];
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

namespace {

constexpr const char *kStateFormat = "karman-adjoint-state";
constexpr int kStateVersion = 1;

// Fault injection for tests/cli/unsteady_adjoint.sh: KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE=N
// kills the process with SIGKILL (as a scheduler or the OOM killer would) while the state of
// level N is saved, after the complete temporary file is written and before the rename;
// N:partial kills it after the psi datasets and before the gradient data.  Unset: no effect.
void kill_if_requested(long level, bool partial) {
  const char *v = std::getenv("KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE");
  if (!v) return;
  char *end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end != v && n == level && partial == (std::strcmp(end, ":partial") == 0)) std::raise(SIGKILL);
}

// What an adjoint state depends on besides the mesh, the problem (CaseConfig::problem_keys())
// and the time levels: the time scheme, the initial condition and the objective
// (resolved, as one line of YAML each).
std::vector<std::pair<std::string, std::string>> case_identity(const config::CaseConfig &cfg) {
  const YAML::Node resolved = YAML::Load(cfg.resolved_yaml());
  std::vector<std::pair<std::string, std::string>> id{
      {"time.scheme", cfg.section("time").text("scheme")}};
  for (const char *name : {"initial", "objective"}) {
    YAML::Emitter e;
    e << YAML::Flow << resolved[name];
    id.emplace_back(name, e.c_str());
  }
  return id;
}

} // namespace

// The adjoint state after level n: psi^n, psi^{n+1} (cell fields, /fields/psi1, psi2), dJ/dX
// summed so far (/vertex_fields/xbar, serial vertex order) and a JSON record /adjoint_state
// (level, steps, dt, J, the case's identity, parameter sums, per-step control series), all in
// one HDF5 file that is written under a temporary name and renamed when complete.  The level is
// stored twice (attribute "level" with the psi datasets, and in the record) and compared on load.
PetscErrorCode UnsteadyAdjoint::save_state(const UnsteadyAdjointOptions &o, long n, Vec psi1,
                                           Vec psi2, const UnsteadyAdjointResult &r) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  const std::string tmp = o.state_file + ".tmp";
  io::Field f1{"psi1", nv, {}}, f2{"psi2", nv, {}}, fx{"xbar", 3, {}};
  const PetscScalar *a, *b;
  PetscCall(VecGetArrayRead(psi1, &a));
  PetscCall(VecGetArrayRead(psi2, &b));
  f1.values.assign(a, a + m.n_owned_cells * nv);
  f2.values.assign(b, b + m.n_owned_cells * nv);
  PetscCall(VecRestoreArrayRead(psi1, &a));
  PetscCall(VecRestoreArrayRead(psi2, &b));
  PetscCall(io::create_fields_h5(m, res_->coordinates(), tmp, {f1, f2},
                                 {{"level", static_cast<double>(n)}},
                                 {{"adjoint_format", kStateFormat}}));
  kill_if_requested(n, true);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) fx.values.insert(fx.values.end(), {r.X[v][0], r.X[v][1], r.X[v][2]});
  nlohmann::json j;
  j["format"] = kStateFormat;
  j["version"] = kStateVersion;
  j["level"] = n;
  j["steps"] = steps_;
  j["dt"] = dt_;
  j["J"] = r.J;
  j["problem_hash"] = cfg_->problem_hash();
  j["problem_keys"] = cfg_->problem_keys();
  for (const auto &[key, value] : case_identity(*cfg_)) j["case"][key] = value;
  j["parameters"] = nlohmann::json::object();
  for (const auto &p : r.parameters) j["parameters"][p.name] = p.gradient;
  j["control"] = nlohmann::json::object();
  for (const auto &[name, series] : r.control) j["control"][name] = series;
  PetscCall(io::add_to_fields_h5(m, tmp, {fx}, {{"adjoint_state", j.dump()}}));
  kill_if_requested(n, false);
  PetscCall(io::replace_file(m.comm, tmp, o.state_file));
  PetscFunctionReturn(0);
}

PetscErrorCode UnsteadyAdjoint::load_state(const UnsteadyAdjointOptions &o, long *n, Vec psi1,
                                           Vec psi2, UnsteadyAdjointResult *r) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res_->mesh();
  const int nv = res_->nv();
  const char *file = o.state_file.c_str();
  PetscCheck(std::filesystem::exists(o.state_file), m.comm, PETSC_ERR_FILE_OPEN,
             "--restart: no saved adjoint state %s (adjoint.save_every was 0?)", file);
  std::string text;
  PetscCall(io::read_text_h5(m.comm, o.state_file, "adjoint_state", &text));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  const auto has = [&](const char *key) { return j.is_object() && j.contains(key); };
  PetscCheck(has("format") && j["format"] == kStateFormat && has("version") &&
                 j["version"] == kStateVersion,
             m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: not a karman adjoint state (version %d), or corrupt or truncated: no readable "
             "/adjoint_state record",
             file, kStateVersion);
  bool complete = true;
  for (const char *key : {"level", "steps", "dt", "problem_hash", "case", "parameters", "control"})
    complete = complete && has(key);
  PetscCheck(complete && j["level"].is_number_integer() && j["steps"].is_number_integer() &&
                 j["dt"].is_number() && j["problem_hash"].is_string() && j["case"].is_object() &&
                 j["parameters"].is_object() && j["control"].is_object(),
             m.comm, PETSC_ERR_FILE_UNEXPECTED, "%s: corrupt adjoint state record /adjoint_state",
             file);
  // the identity of the case: mesh, problem (CaseConfig::problem_keys), time levels, scheme,
  // initial condition, objective
  std::string mesh_hash, file_mesh_hash;
  PetscCall(io::mesh_hash(m, res_->coordinates(), &mesh_hash));
  PetscCall(io::read_text_attribute_h5(m.comm, o.state_file, "mesh_hash", &file_mesh_hash));
  PetscCheck(file_mesh_hash == mesh_hash, m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of another mesh (mesh hash %s, this run's mesh %s)", file,
             file_mesh_hash.c_str(), mesh_hash.c_str());
  const std::string problem_hash = j["problem_hash"].get<std::string>();
  PetscCheck(
      problem_hash == cfg_->problem_hash(), m.comm, PETSC_ERR_FILE_UNEXPECTED,
      "%s: adjoint state of another problem (%s: %s)", file, cfg_->file().c_str(),
      config::describe_problem_change(j.value("problem_keys", std::string()), cfg_->problem_keys())
          .c_str());
  const long steps = j["steps"].get<long>();
  const double dt = j["dt"].get<double>();
  PetscCheck(steps == steps_ && std::abs(dt - dt_) <= 1e-12 * dt_, m.comm,
             PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of a run with %ld steps of dt %.17g, %s has %ld steps of dt %.17g "
             "(time.t_end, time.dt)",
             file, steps, dt, cfg_->file().c_str(), steps_, dt_);
  for (const auto &[key, now] : case_identity(*cfg_)) {
    const std::string saved = j["case"].value(key, std::string());
    PetscCheck(saved == now, m.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: adjoint state of another case: its '%s' was %s, %s has %s", file, key.c_str(),
               saved.c_str(), cfg_->file().c_str(), now.c_str());
  }
  // the level: the record's (gradient sums) and the psi datasets' must agree
  double psi_level;
  PetscCall(io::read_real_attribute_h5(m.comm, o.state_file, "level", &psi_level));
  *n = j["level"].get<long>();
  PetscCheck(psi_level == static_cast<double>(*n), m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: inconsistent adjoint state: psi of level %g, gradient sums of level %ld", file,
             psi_level, *n);
  PetscCheck(*n >= 2 && *n <= steps_, m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of level %ld, expected a level in [2, %ld]", file, *n, steps_);
  io::Field f1, f2, fx;
  PetscCall(io::read_cell_field_h5(m, o.state_file, "psi1", &f1));
  PetscCall(io::read_cell_field_h5(m, o.state_file, "psi2", &f2));
  PetscCall(io::read_vertex_field_h5(m, o.state_file, "xbar", &fx));
  PetscCheck(
      f1.ncomp == nv && f2.ncomp == nv && fx.ncomp == 3, m.comm, PETSC_ERR_FILE_UNEXPECTED,
      "%s: adjoint state with %d and %d unknowns per cell and %d per vertex, expected %d and 3",
      file, f1.ncomp, f2.ncomp, fx.ncomp, nv);
  PetscScalar *a;
  PetscCall(VecGetArray(psi1, &a));
  std::copy(f1.values.begin(), f1.values.end(), a);
  PetscCall(VecRestoreArray(psi1, &a));
  PetscCall(VecGetArray(psi2, &a));
  std::copy(f2.values.begin(), f2.values.end(), a);
  PetscCall(VecRestoreArray(psi2, &a));
  bool numbers = true;
  for (const auto &[name, value] : j["parameters"].items()) {
    numbers = numbers && value.is_number();
    if (value.is_number()) r->parameters.push_back({name, 0.0, value.get<double>()});
  }
  for (const auto &[name, series] : j["control"].items()) {
    numbers = numbers && series.is_array() && series.size() == static_cast<std::size_t>(steps_);
    if (numbers)
      for (const auto &x : series) numbers = numbers && x.is_number();
    if (numbers) r->control[name] = series.get<std::vector<double>>();
  }
  PetscCheck(numbers, m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: corrupt adjoint state record: parameter gradients must be numbers and control "
             "series have %ld values",
             file, steps_);
  // owned vertices from the file, then every copy gets its owner's value
  std::size_t i = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    r->X[v] = Vec3<double>();
    if (m.vertex_owned[v])
      r->X[v] = Vec3<double>(fx.values[i], fx.values[i + 1], fx.values[i + 2]), i += 3;
  }
  PetscCall(mesh::sum_vertex_copies(m, r->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
