// The dual-weighted residual on the nested refinement (see
// include/karman/driver/error_estimate.hpp).
#include "karman/driver/error_estimate.hpp"

#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/io/nested_transfer.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/solver/unsteady_solver.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace karman::driver {

namespace {

/// Per owned cell of `coarse`: the sums over its refined cells of |psi . R| and psi . R.
PetscErrorCode indicators(const io::NestedParents &parents, const std::vector<double> &local,
                          ErrorEstimate *e) {
  PetscFunctionBeginUser;
  std::vector<double> fine(2 * local.size()), sums;
  for (std::size_t c = 0; c < local.size(); ++c)
    fine[2 * c] = std::abs(local[c]), fine[2 * c + 1] = local[c];
  PetscCall(parents.sum_to_parents(2, fine, &sums));
  e->indicator.resize(sums.size() / 2);
  e->contribution.resize(sums.size() / 2);
  for (std::size_t c = 0; c < sums.size() / 2; ++c)
    e->indicator[c] = sums[2 * c], e->contribution[c] = sums[2 * c + 1];
  PetscFunctionReturn(0);
}

/// The correction (the sum of `local`, psi . R per owned refined cell), J_refined, the errors,
/// J_corrected, the indicators and their sum of e from its J and J_reconstructed.  Collective.
PetscErrorCode finish_estimate(MPI_Comm comm, const io::NestedParents &parents,
                               const std::vector<double> &local, ErrorEstimate *e) {
  PetscFunctionBeginUser;
  double correction = 0;
  for (double x : local) correction += x;
  PetscCallMPI(MPI_Allreduce(&correction, &e->correction, 1, MPI_DOUBLE, MPI_SUM, comm));
  e->J_refined = e->J_reconstructed + e->correction;
  e->error_refined = e->J_refined - e->J;
  const double richardson = std::pow(2.0, kSchemeOrder);
  e->error = e->error_refined * richardson / (richardson - 1);
  e->J_corrected = e->J + e->error;
  PetscCall(indicators(parents, local, e));
  double sum = 0;
  for (double v : e->indicator) sum += v;
  PetscCallMPI(MPI_Allreduce(&sum, &e->indicator_sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

/// The owned entries of w from v.
PetscErrorCode set_owned(Vec w, const std::vector<double> &v) {
  PetscFunctionBeginUser;
  PetscScalar *a;
  PetscCall(VecGetArray(w, &a));
  for (std::size_t i = 0; i < v.size(); ++i) a[i] = v[i];
  PetscCall(VecRestoreArray(w, &a));
  PetscFunctionReturn(0);
}

/// local[c] += sum_k psi_ck r_ck over the owned cells (nv values each): psi . R per cell.
void add_products(int nv, const PetscScalar *psi, const PetscScalar *r,
                  std::vector<double> *local) {
  for (std::size_t c = 0; c < local->size(); ++c)
    for (int k = 0; k < nv; ++k) (*local)[c] += psi[c * nv + k] * r[c * nv + k];
}

/// psi^n . R^n of the levels of an unsteady run on the refined mesh, per owned cell, from the
/// backward sweep's levels (UnsteadyAdjointOptions::on_level): R^n needs w^{n-2}, which the sweep
/// has at level n - 1, so level n + 1 is added at level n (and level 1 by finish()).
class LevelResiduals {
public:
  LevelResiduals(const discretization::FlowResidual &res, bool bdf1) : res_(res), bdf1_(bdf1) {}
  ~LevelResiduals() {
    for (Vec *v : {&w_, &w_prev_, &psi_, &r_})
      if (*v) VecDestroy(v);
  }
  std::vector<double> local; ///< sum over the levels of psi^n . R^n per owned cell

  PetscErrorCode on_level(const adjoint::TimeLevel &l, Vec w, Vec w_prev, Vec psi) {
    PetscFunctionBeginUser;
    if (!r_) {
      for (Vec *v : {&w_, &w_prev_, &psi_, &r_}) PetscCall(res_.create_state(v));
      local.assign(res_.mesh().n_owned_cells, 0.0);
    }
    if (have_) PetscCall(add(next_, w_, w, w_prev, psi_)); // level n + 1
    PetscCall(VecCopy(w, w_));
    PetscCall(VecCopy(w_prev, w_prev_));
    PetscCall(VecCopy(psi, psi_));
    next_ = l, have_ = true;
    PetscFunctionReturn(0);
  }
  /// Level 1 (BDF1: w^0 only).
  PetscErrorCode finish() {
    PetscFunctionBeginUser;
    if (have_) PetscCall(add(next_, w_, w_prev_, w_prev_, psi_));
    have_ = false;
    PetscFunctionReturn(0);
  }

private:
  /// local += psi^n . R^n(w^n; w^{n-1}, w^{n-2}) of level l.  Collective.
  PetscErrorCode add(const adjoint::TimeLevel &l, Vec w, Vec w1, Vec w2, Vec psi) {
    PetscFunctionBeginUser;
    const int nv = res_.nv();
    const solver::BdfCoefficients b =
        solver::bdf_coefficients((bdf1_ || l.step == 1) ? 1 : 2, l.dt, l.dt_prev);
    const PetscInt n = res_.mesh().n_owned_cells * nv;
    history_.assign(n, 0.0);
    const PetscScalar *a1, *a2, *rr, *pp;
    PetscCall(VecGetArrayRead(w1, &a1));
    PetscCall(VecGetArrayRead(w2, &a2));
    for (PetscInt i = 0; i < n; ++i) history_[i] = b.a1 * a1[i] + b.a2 * a2[i];
    PetscCall(VecRestoreArrayRead(w1, &a1));
    PetscCall(VecRestoreArrayRead(w2, &a2));
    const discretization::FlowResidual::TimeTerm time_term{b.a0, &history_};
    PetscCall(res_.residual(discretization::TimeLevel{l.time, l.step}, w, r_, &time_term));
    PetscCall(VecGetArrayRead(r_, &rr));
    PetscCall(VecGetArrayRead(psi, &pp));
    add_products(nv, pp, rr, &local);
    PetscCall(VecRestoreArrayRead(r_, &rr));
    PetscCall(VecRestoreArrayRead(psi, &pp));
    PetscFunctionReturn(0);
  }

  const discretization::FlowResidual &res_;
  const bool bdf1_;
  Vec w_ = nullptr, w_prev_ = nullptr, psi_ = nullptr, r_ = nullptr; ///< of level next_
  adjoint::TimeLevel next_;
  bool have_ = false;
  std::vector<double> history_;
};

} // namespace

PetscErrorCode check_estimable(MPI_Comm comm, const config::CaseConfig &cfg, const char *what) {
  PetscFunctionBeginUser;
  const mesh::MeshOptions m = mesh::mesh_options().get(cfg);
  PetscCheck(std::filesystem::path(m.file).extension() == ".geo", comm, PETSC_ERR_USER_INPUT,
             "%s: %s needs mesh.file to be a Gmsh .geo (the refined mesh is made from its "
             "geometry), got '%s'",
             cfg.file().c_str(), what, m.file.c_str());
  PetscCheck(m.refine < 3, comm, PETSC_ERR_USER_INPUT,
             "%s: %s refines the mesh once more: mesh.refine must be below 3 (the largest "
             "refinement), got %ld",
             cfg.file().c_str(), what, m.refine);
  PetscFunctionReturn(0);
}

namespace {

/// The node's available memory [bytes]: MemAvailable of /proc/meminfo (free pages if absent).
double available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGESIZE));
}

} // namespace

PetscErrorCode estimate_fits_in_memory(MPI_Comm comm, int dim, double cells, bool *fits,
                                       double *needed_gib, double *available_gib) {
  PetscFunctionBeginUser;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const double per_cell =
      dim == 3 ? kEstimateBytesPerRefinedCell3D : kEstimateBytesPerRefinedCell2D;
  // each rank's share of the refined cells against the node's available memory plus what this
  // job's ranks there hold now
  PetscLogDouble held;
  PetscCall(PetscMemoryGetCurrentUsage(&held));
  PetscCall(node_memory_fits(comm, per_cell * std::pow(2.0, dim) * cells / size,
                             static_cast<double>(held), available_bytes(), 1.0, "-estimate_memory",
                             fits, needed_gib, available_gib));
  PetscFunctionReturn(0);
}

PetscErrorCode load_refined(const FlowCase &flow, config::CaseConfig *cfg, FlowCase *fine) {
  PetscFunctionBeginUser;
  const config::CaseConfig &c = flow.config();
  const MPI_Comm comm = flow.mesh().comm;
  PetscCall(check_estimable(comm, c, "the error estimate"));
  const mesh::MeshOptions m = mesh::mesh_options().get(c);
  const std::string refine = "mesh.refine=" + std::to_string(m.refine + 1);
  PetscCall(config::CaseConfig::load_text(comm, c.resolved_yaml(), c.file(), c.directory(),
                                          {refine}, c.schema(), *cfg));
  // Gmsh's new wall vertices, projected onto a curved wall, can turn a flat wall cell's children
  // inside out (DFG 3D-1Z's adapted tetrahedra: cells overlapping at the cylinder); the refinement
  // is then made again with them on the straight edges, where it is valid, and the polygonal
  // wall's own error is left out of the estimate.  The case is set up on the mesh checked.
  mesh::Mesh refined;
  PetscCall(load_case_mesh(comm, *cfg, &refined));
  {
    geometry::Geometry<double> g;
    geometry::compute_geometry(refined, refined.coordinates, g);
    geometry::InvalidCells invalid;
    PetscCall(geometry::find_invalid_cells(refined, refined.coordinates, g, &invalid));
    if (invalid.count > 0) {
      PetscCall(log_info(comm,
                         "error estimate: the nested refinement with its new boundary vertices on "
                         "the geometry has %ld invalid cells (%s): refined again with them on the "
                         "straight edges (the polygonal wall's own error is not in the estimate)",
                         static_cast<long>(invalid.count), invalid.first.c_str()));
      PetscCall(config::CaseConfig::load_text(comm, c.resolved_yaml(), c.file(), c.directory(),
                                              {refine, "mesh.refine_on_geometry=false"}, c.schema(),
                                              *cfg));
      refined = mesh::Mesh();
      PetscCall(load_case_mesh(comm, *cfg, &refined));
    }
  }
  PetscCall(fine->load(*cfg, std::move(refined)));
  PetscCheck(fine->residual().nv() == flow.residual().nv(), comm, PETSC_ERR_PLIB,
             "refined case has other unknowns");
  PetscFunctionReturn(0);
}

PetscErrorCode estimate_error(FlowCase &flow, Vec w, ErrorEstimate *e) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
  config::CaseConfig cfg;
  FlowCase fine;
  PetscCall(load_refined(flow, &cfg, &fine));
  e->setup_time = MPI_Wtime() - t0;
  PetscCall(estimate_error(flow, w, fine, e));
  e->wall_time += e->setup_time;
  PetscFunctionReturn(0);
}

PetscErrorCode estimate_error(FlowCase &flow, Vec w, FlowCase &fine, ErrorEstimate *e) {
  PetscFunctionBeginUser;
  const double t1 = MPI_Wtime();
  const discretization::FlowResidual &res = flow.residual();
  const mesh::Mesh &coarse = flow.mesh();
  const MPI_Comm comm = coarse.comm;
  const int nv = res.nv();

  // the objective and the reconstruction data on the case's mesh
  const adjoint::Objective *objective;
  PetscCall(flow.objective(&objective));
  discretization::LocalState state;
  PetscCall(res.local_state(discretization::kSteady, w, &state));
  PetscCall(objective->value(res, state, &e->J));

  // the reconstruction on the nested refinement, and its objective, residual and adjoint
  const discretization::FlowResidual &fres = fine.residual();
  const mesh::Mesh &fm = fine.mesh();
  e->refined_cells = fm.n_global_cells;
  io::NestedTransfer transfer;
  PetscCall(io::transfer_nested(coarse, res.coordinates(), res.geometry().cell_centroid, nv,
                                state.w, state.grad, fm, fres.geometry().cell_centroid, &transfer));
  e->parents_outside = transfer.outside;
  Vec wf, r;
  PetscCall(fine.create_state(&wf));
  PetscCall(fine.create_state(&r));
  PetscCall(set_owned(wf, transfer.values));
  const adjoint::Objective *fine_objective;
  PetscCall(fine.objective(&fine_objective));
  const double t2 = MPI_Wtime();
  e->transfer_time = t2 - t1;
  adjoint::AdjointResult adj;
  PetscCall(fine.gradient(wf, *fine_objective, &adj));
  e->adjoint_time = MPI_Wtime() - t2;
  e->J_reconstructed = adj.J;
  e->adjoint_iterations = adj.linear_iterations;
  e->adjoint_relative_residual = adj.relative_residual;
  PetscCall(fres.residual(discretization::kSteady, wf, r));

  // psi . R, per refined cell and in all
  std::vector<double> local(fm.n_owned_cells, 0.0);
  const PetscScalar *rr;
  PetscCall(VecGetArrayRead(r, &rr));
  add_products(nv, adj.psi.data(), rr, &local);
  PetscCall(VecRestoreArrayRead(r, &rr));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&wf));
  io::NestedParents parents;
  PetscCall(parents.setup(coarse, fm, transfer.parent));
  PetscCall(finish_estimate(comm, parents, local, e));
  e->wall_time = MPI_Wtime() - t1;
  PetscFunctionReturn(0);
}

PetscErrorCode estimate_unsteady_error(FlowCase &flow, const adjoint::UnsteadyAdjointResult &run,
                                       const std::string &scratch, ErrorEstimate *e) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
  config::CaseConfig cfg;
  FlowCase fine;
  PetscCall(load_refined(flow, &cfg, &fine));
  const discretization::FlowResidual &res = flow.residual(), &fres = fine.residual();
  const mesh::Mesh &cm = flow.mesh(), &fm = fine.mesh();
  const MPI_Comm comm = cm.comm;
  const int nv = res.nv();
  e->J = run.J;
  e->refined_cells = fm.n_global_cells;

  // the case's run again; its initial state and each level's reconstructed on the refined mesh
  solver::UnsteadySolver ts;
  discretization::LocalState state;
  solver::FlowMonitors::Values values;
  PetscCall(flow.start_unsteady(ts, &state, &values));
  io::NestedTransfer transfer;
  PetscCall(io::transfer_nested(cm, res.coordinates(), res.geometry().cell_centroid, nv, state.w,
                                state.grad, fm, fres.geometry().cell_centroid, &transfer));
  e->parents_outside = transfer.outside;
  io::NestedParents parents;
  PetscCall(parents.setup(cm, fm, transfer.parent));
  Vec w0, wh0;
  PetscCall(fine.create_state(&w0));
  PetscCall(fine.create_state(&wh0));
  PetscCall(set_owned(w0, transfer.values));
  e->setup_time = MPI_Wtime() - t0;
  adjoint::UnsteadyAdjointOptions o = fine.unsteady_gradient_options();
  o.schedule = adjoint::AdjointSchedule::StoreAll;
  o.trajectory_directory = scratch;
  o.save_every = 0;
  std::vector<double> v;
  o.given = [&](const adjoint::TimeLevel &l, Vec w) -> PetscErrorCode {
    PetscFunctionBeginUser;
    solver::StepReport r;
    PetscCall(ts.advance(l.dt, &r));
    PetscCheck(r.converged, comm, PETSC_ERR_NOT_CONVERGED,
               "error estimate: step %ld of the case did not converge when run again (%s)", l.step,
               r.reason.c_str());
    PetscCheck(ts.step() == l.step && std::abs(ts.time() - l.time) <= 1e-9 * l.dt, comm,
               PETSC_ERR_PLIB, "error estimate: the case's run is at level %ld, not %ld", ts.step(),
               l.step);
    PetscCall(res.local_state(ts.level(), ts.state(), &state));
    PetscCall(parents.reconstruct(res.geometry().cell_centroid, nv, state.w, state.grad,
                                  fres.geometry().cell_centroid, &v));
    PetscCall(set_owned(w, v));
    PetscFunctionReturn(0);
  };
  LevelResiduals levels(fres, solver::time_options().get(cfg).scheme == solver::TimeScheme::Bdf1);
  o.on_level = [&](const adjoint::TimeLevel &l, Vec w, Vec w_prev, Vec psi) {
    return levels.on_level(l, w, w_prev, psi);
  };

  // the refined mesh's adjoint along the reconstructed levels (the case's step sizes)
  adjoint::UnsteadyAdjoint adjoint;
  PetscCall(adjoint.setup(fine.residual(), cfg));
  adjoint.set_step_sizes(run.step_sizes);
  std::vector<adjoint::UnsteadyAdjointResult> results;
  PetscCall(adjoint.run(w0, o, &results));
  PetscCall(levels.finish());
  const adjoint::UnsteadyAdjointResult &r = results.front();
  e->J_reconstructed = r.J;
  e->adjoint_iterations = static_cast<int>(r.linear_iterations);
  e->transfer_time = r.forward_time;
  e->adjoint_time = r.adjoint_time;

  // the initial condition: dJ/dw^0 . (w_h^0 - I w^0), the refined case's own initial state
  // against the reconstructed one (zero for a uniform start; an initial.file is fitted anew)
  PetscCall(fine.initial_state(wh0));
  const PetscScalar *a, *b;
  PetscCall(VecGetArrayRead(wh0, &a));
  PetscCall(VecGetArrayRead(w0, &b));
  for (PetscInt c = 0; c < fm.n_owned_cells; ++c)
    for (int k = 0; k < nv; ++k)
      levels.local[c] += r.initial[c * nv + k] * (a[c * nv + k] - b[c * nv + k]);
  PetscCall(VecRestoreArrayRead(wh0, &a));
  PetscCall(VecRestoreArrayRead(w0, &b));
  PetscCall(VecDestroy(&w0));
  PetscCall(VecDestroy(&wh0));
  PetscCall(finish_estimate(comm, parents, levels.local, e));
  e->wall_time = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

} // namespace karman::driver
