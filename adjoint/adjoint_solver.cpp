// Steady discrete adjoint solve and gradients (see include/karman/adjoint/adjoint_solver.hpp).
#include "karman/adjoint/adjoint_solver.hpp"

#include "karman/core/parallel.hpp"
#include "karman/solver/linear_solver.hpp"

#include <string>

namespace karman::adjoint {

AdjointSolver::~AdjointSolver()
{
  if (ksp_) KSPDestroy(&ksp_);
  if (J_) MatDestroy(&J_);
  for (Vec *v : {&g_, &psi_, &check_})
    if (*v) VecDestroy(v);
}

PetscErrorCode AdjointSolver::setup(discretization::FlowResidual &res)
{
  PetscFunctionBeginUser;
  res_ = &res;
  PetscCall(res.create_jacobian(&J_));
  PetscCall(res.create_state(&g_));
  PetscCall(res.create_state(&psi_));
  PetscCall(res.create_state(&check_));
  PetscCall(KSPCreate(res.mesh().comm, &ksp_));
  PetscCall(KSPSetOptionsPrefix(ksp_, "adj_"));
  PetscCall(solver::use_mumps_lu(ksp_, KSPPREONLY));
  PetscCall(KSPSetTolerances(ksp_, 1e-12, 1e-30, PETSC_DEFAULT, 1000));
  PetscCall(KSPSetFromOptions(ksp_));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSolver::solve(Vec w, const Objective &objective, AdjointResult *result)
{
  PetscFunctionBeginUser;
  const double start = MPI_Wtime();
  discretization::FlowResidual &res = *res_;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  PetscCall(res.jacobian(w, J_, nullptr)); // also refreshes the local state
  PetscCall(objective.value(res, &result->J));

  // g = dJ/dw (explicit), assembled from every local cell's share into the owners' rows
  Sensitivities sj;
  sj.reset(res);
  PetscCall(objective.reverse(res, sj));
  Gradient explicit_part;
  PetscCall(finish(res, sj, &explicit_part));
  PetscCall(VecSet(g_, 0.0));
  for (PetscInt c = 0; c < m.n_cells; ++c)
    for (int k = 0; k < nv; ++k) {
      const double v = sj.wbar[c * nv + k];
      if (v == 0) continue;
      const PetscInt row = m.cell_global[c] * nv + k;
      PetscCall(VecSetValue(g_, row, v, ADD_VALUES));
    }
  PetscCall(VecAssemblyBegin(g_));
  PetscCall(VecAssemblyEnd(g_));

  // J^T psi = -g
  PetscCall(KSPSetOperators(ksp_, J_, J_));
  PetscCall(KSPSetUp(ksp_));
  PC pc;
  PCType pctype;
  KSPType ksptype;
  PetscBool transpose_ok;
  PetscCall(KSPGetPC(ksp_, &pc));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(KSPGetType(ksp_, &ksptype));
  PetscCall(PCApplyTransposeExists(pc, &transpose_ok));
  PetscCheck(transpose_ok, m.comm, PETSC_ERR_SUP,
             "the adjoint preconditioner -adj_pc_type %s cannot be applied transposed; use one that can: "
             "-adj_pc_type lu (with -adj_pc_factor_mat_solver_type mumps, the default), ilu, asm, bjacobi, jacobi or "
             "none",
             pctype);
  PetscCall(VecScale(g_, -1.0));
  PetscCall(KSPSolveTranspose(ksp_, g_, psi_));
  KSPConvergedReason reason;
  PetscInt its;
  PetscCall(KSPGetConvergedReason(ksp_, &reason));
  PetscCall(KSPGetIterationNumber(ksp_, &its));
  PetscCheck(reason > 0 || (reason == KSP_CONVERGED_ITS && std::string(ksptype) == KSPPREONLY), m.comm,
             PETSC_ERR_NOT_CONVERGED, "the adjoint linear solve did not converge (%s after %d iterations); try "
             "-adj_ksp_type gmres with a stronger -adj_pc_type, or the default LU",
             KSPConvergedReasons[reason], (int)its);
  result->linear_iterations = static_cast<int>(its);
  PetscCall(MatMultTranspose(J_, psi_, check_));
  double gnorm, rnorm;
  PetscCall(VecNorm(g_, NORM_2, &gnorm));
  PetscCall(VecAXPY(check_, -1.0, g_));
  PetscCall(VecNorm(check_, NORM_2, &rnorm));
  result->relative_residual = gnorm > 0 ? rnorm / gnorm : 0.0;

  // psi^T dR/d(X, a)
  PetscCall(ghosted_local_values(psi_, &result->psi));
  Sensitivities sr;
  sr.reset(res);
  add_residual(res, result->psi, sr);
  PetscCall(finish(res, sr, &result->gradient));
  for (std::size_t i = 0; i < result->gradient.parameters.size(); ++i)
    result->gradient.parameters[i].gradient += explicit_part.parameters[i].gradient;
  for (PetscInt v = 0; v < m.n_vertices; ++v) result->gradient.X[v] += explicit_part.X[v];
  result->wall_time = MPI_Wtime() - start;
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
