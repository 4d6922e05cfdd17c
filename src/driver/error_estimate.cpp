// The dual-weighted residual on the nested refinement (see
// include/karman/driver/error_estimate.hpp).
#include "karman/driver/error_estimate.hpp"

#include "karman/core/logger.hpp"
#include "karman/io/nested_transfer.hpp"
#include "karman/mesh/mesh_options.hpp"

#include <cmath>
#include <string>

namespace karman::driver {

namespace {

/// The case with one more uniform refinement of its mesh (the same keys otherwise).  Collective.
PetscErrorCode refined_config(MPI_Comm comm, const config::CaseConfig &cfg,
                              config::CaseConfig *refined) {
  PetscFunctionBeginUser;
  const mesh::MeshOptions m = mesh::mesh_options().get(cfg);
  PetscCheck(m.refine < 3, comm, PETSC_ERR_USER_INPUT,
             "%s: the error estimate refines the mesh once more, mesh.refine %ld is the largest",
             cfg.file().c_str(), m.refine);
  PetscCall(config::CaseConfig::load_text(comm, cfg.resolved_yaml(), cfg.file(), cfg.directory(),
                                          {"mesh.refine=" + std::to_string(m.refine + 1)},
                                          cfg.schema(), *refined));
  PetscFunctionReturn(0);
}

/// Per owned cell of `coarse`: the sums over its refined cells of |psi . R| and psi . R.
PetscErrorCode indicators(const mesh::Mesh &coarse, const mesh::Mesh &fine,
                          const std::vector<PetscInt> &parent, const std::vector<double> &local,
                          ErrorEstimate *e) {
  PetscFunctionBeginUser;
  std::vector<double> sums(2 * static_cast<std::size_t>(coarse.n_global_cells), 0.0);
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c) {
    sums[2 * parent[c]] += std::abs(local[c]);
    sums[2 * parent[c] + 1] += local[c];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE,
                             MPI_SUM, coarse.comm));
  e->indicator.resize(coarse.n_owned_cells);
  e->contribution.resize(coarse.n_owned_cells);
  for (PetscInt c = 0; c < coarse.n_owned_cells; ++c) {
    e->indicator[c] = sums[2 * coarse.cell_global[c]];
    e->contribution[c] = sums[2 * coarse.cell_global[c] + 1];
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode estimate_error(FlowCase &flow, Vec w, ErrorEstimate *e) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
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

  // the nested refinement, the reconstruction there, and its objective, residual and adjoint
  config::CaseConfig cfg;
  PetscCall(refined_config(comm, flow.config(), &cfg));
  FlowCase fine;
  PetscCall(fine.load(comm, cfg));
  const discretization::FlowResidual &fres = fine.residual();
  const mesh::Mesh &fm = fine.mesh();
  PetscCheck(fres.nv() == nv, comm, PETSC_ERR_PLIB, "refined case has other unknowns");
  e->refined_cells = fm.n_global_cells;
  const double t1 = MPI_Wtime();
  e->setup_time = t1 - t0;
  io::NestedTransfer transfer;
  PetscCall(io::transfer_nested(coarse, res.coordinates(), res.geometry().cell_centroid, nv,
                                state.w, state.grad, fm, fres.geometry().cell_centroid, &transfer));
  e->parents_outside = transfer.outside;
  Vec wf, r;
  PetscCall(fine.create_state(&wf));
  PetscCall(fine.create_state(&r));
  {
    PetscScalar *a;
    PetscCall(VecGetArray(wf, &a));
    for (std::size_t i = 0; i < transfer.values.size(); ++i) a[i] = transfer.values[i];
    PetscCall(VecRestoreArray(wf, &a));
  }
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
  double correction = 0;
  for (PetscInt c = 0; c < fm.n_owned_cells; ++c) {
    for (int k = 0; k < nv; ++k) local[c] += adj.psi[c * nv + k] * rr[c * nv + k];
    correction += local[c];
  }
  PetscCall(VecRestoreArrayRead(r, &rr));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&wf));
  PetscCallMPI(MPI_Allreduce(&correction, &e->correction, 1, MPI_DOUBLE, MPI_SUM, comm));
  e->J_refined = e->J_reconstructed + e->correction;
  e->error_refined = e->J_refined - e->J;
  const double richardson = std::pow(2.0, kSchemeOrder);
  e->error = e->error_refined * richardson / (richardson - 1);
  e->J_corrected = e->J + e->error;
  PetscCall(indicators(coarse, fm, transfer.parent, local, e));
  double sum = 0;
  for (double v : e->indicator) sum += v;
  PetscCallMPI(MPI_Allreduce(&sum, &e->indicator_sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  e->wall_time = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

} // namespace karman::driver
