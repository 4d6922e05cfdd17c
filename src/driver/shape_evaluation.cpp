// One shape evaluation (see include/karman/driver/shape_evaluation.hpp).
#include "karman/driver/shape_evaluation.hpp"

#include <algorithm>
#include <string>

namespace karman::driver {

ShapeEvaluator::~ShapeEvaluator() {
  if (w_) VecDestroy(&w_);
  if (w_good_) VecDestroy(&w_good_);
}

PetscErrorCode ShapeEvaluator::setup(FlowCase &fc, const design::DeformationOptions &options,
                                     Vec w0, FaultHook fault,
                                     std::unique_ptr<design::DesignSpace> design) {
  PetscFunctionBeginUser;
  fc_ = &fc;
  fault_ = std::move(fault);
  const discretization::FlowResidual &res = fc.residual();
  V0_.assign(res.geometry().cell_volume.begin(),
             res.geometry().cell_volume.begin() + fc.mesh().n_owned_cells);
  PetscCall(chain_.setup(fc, std::move(design), options));
  PetscCall(VecDestroy(&w_)); // (set up again: a remeshed case)
  PetscCall(VecDestroy(&w_good_));
  PetscCall(fc.create_state(&w_));
  PetscCall(fc.create_state(&w_good_));
  // the continuation's reference: the residual of the case's initial state
  PetscCall(fc.initial_state(w_));
  Vec R;
  PetscCall(fc.create_state(&R));
  PetscCall(fc.residual().residual(discretization::kSteady, w_, R));
  PetscCall(VecNorm(R, NORM_2, &r_ref_));
  PetscCall(VecDestroy(&R));
  if (w0)
    PetscCall(VecCopy(w0, w_good_));
  else
    PetscCall(VecCopy(w_, w_good_));
  // (evaluations_ counts on over a re-setup: the crash tests number every computed evaluation)
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeEvaluator::evaluate(const std::vector<Vec3<double>> &boundary_displacement,
                                        ShapeEvaluation *e,
                                        const std::vector<const adjoint::Objective *> &extra) {
  PetscFunctionBeginUser;
  *e = ShapeEvaluation();
  discretization::FlowResidual &res = fc_->residual();
  const MPI_Comm comm = fc_->mesh().comm;
  ++evaluations_;
  const auto fault_point = [&](const char *phase) {
    if (fault_) fault_({phase, evaluations_, 0.0});
  };
  // deformation and the move of the mesh
  double t = MPI_Wtime();
  design::DeformationResult dr;
  PetscCall(chain_.move_by(boundary_displacement, "shape evaluation", &dr, [&] {
    e->deformation_time = MPI_Wtime() - t;
    fault_point("deformation");
  }));
  e->deformation_iterations = static_cast<int>(dr.iterations);
  if (!dr.valid) {
    e->failure = "mesh deformation: " + dr.message;
    e->deformation_failed = true;
    PetscFunctionReturn(0);
  }
  double ratio = 1e300;
  for (std::size_t c = 0; c < V0_.size(); ++c)
    ratio = std::min(ratio, res.geometry().cell_volume[c] / V0_[c]);
  PetscCallMPI(MPI_Allreduce(&ratio, &e->min_volume_ratio, 1, MPI_DOUBLE, MPI_MIN, comm));
  // forward, from the last good state
  PetscCall(VecCopy(w_good_, w_));
  SteadySolution sol;
  SteadyObserver observer;
  if (fault_)
    observer = [&](const solver::NewtonRecord &r, const solver::FlowMonitors::Values &) {
      if (r.iteration == 1) fault_point("forward");
      return PetscErrorCode(0);
    };
  PetscCall(fc_->solve_steady(w_, nullptr, observer, &sol, r_ref_));
  e->forward_time = sol.summary.wall_time;
  e->newton_iterations = sol.summary.iterations;
  if (!sol.summary.converged) { // too far for the warm continuation: the case's own
    PetscCall(VecCopy(w_good_, w_));
    PetscCall(fc_->solve_steady(w_, nullptr, {}, &sol));
    e->forward_time += sol.summary.wall_time;
    e->newton_iterations += sol.summary.iterations;
  }
  if (!sol.summary.converged) {
    e->failure = "the forward solve did not converge (" + sol.summary.reason + ")";
    PetscFunctionReturn(0);
  }
  e->values = sol.values;
  // adjoint and the deformation's reverse mode
  adjoint::AdjointResult r;
  PetscCall(fc_->steady_gradient(w_, &r));
  e->adjoint_time = r.wall_time;
  e->J = r.J;
  e->parameters = r.gradient.parameters;
  t = MPI_Wtime();
  PetscInt its;
  PetscCall(chain_.displacement_reverse(r.gradient.X, &e->dJ_dB, &its));
  e->deformation_reverse_time = MPI_Wtime() - t;
  e->deformation_reverse_iterations = static_cast<int>(its);
  if (!extra.empty()) fault_point("adjoint");
  for (const adjoint::Objective *o : extra) {
    adjoint::AdjointResult rc;
    PetscCall(fc_->gradient(w_, *o, &rc, true)); // the objective's Jacobian and LU factors
    e->adjoint_time += rc.wall_time;
    e->extra.push_back(rc.J);
    e->extra_parameters.push_back(rc.gradient.parameters);
    e->extra_dB.emplace_back();
    t = MPI_Wtime();
    PetscCall(chain_.displacement_reverse(rc.gradient.X, &e->extra_dB.back(), &its));
    e->deformation_reverse_time += MPI_Wtime() - t;
    e->deformation_reverse_iterations += static_cast<int>(its);
  }
  PetscCall(VecCopy(w_, w_good_));
  e->ok = true;
  PetscFunctionReturn(0);
}

} // namespace karman::driver
