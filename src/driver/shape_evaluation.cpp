// One shape evaluation (see include/karman/driver/shape_evaluation.hpp).
#include "karman/driver/shape_evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace karman::driver {

ShapeEvaluator::~ShapeEvaluator() {
  if (w_) VecDestroy(&w_);
  if (w_good_) VecDestroy(&w_good_);
  for (Remembered &r : history_) VecDestroy(&r.w);
}

PetscErrorCode ShapeEvaluator::forget() {
  PetscFunctionBeginUser;
  for (Remembered &r : history_) PetscCall(VecDestroy(&r.w));
  history_.clear();
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeEvaluator::remember(const std::vector<Vec3<double>> &boundary_displacement,
                                        Vec w) {
  PetscFunctionBeginUser;
  if (history_size_ < 2) PetscFunctionReturn(0);
  Remembered r;
  r.d = boundary_displacement;
  PetscCall(VecDuplicate(w, &r.w));
  PetscCall(VecCopy(w, r.w));
  history_.push_back(std::move(r));
  while (history_.size() > history_size_) {
    PetscCall(VecDestroy(&history_.front().w));
    history_.erase(history_.begin());
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeEvaluator::predict_start(const std::vector<Vec3<double>> &d,
                                             ShapeEvaluation *e) {
  PetscFunctionBeginUser;
  // (no prediction: the solve's own initial residual is the start's, evaluate())
  if (history_size_ < 2 || history_.size() < 2) PetscFunctionReturn(0);
  discretization::FlowResidual &res = fc_->residual();
  const mesh::Mesh &m = fc_->mesh();
  // least squares: d - d_m ~ sum_i c_i D_i, D_i = d_i - d_m (m the last), by the normal
  // equations G c = b over the owned vertices (one reduction), G = D^T D factored by Cholesky;
  // a direction whose part independent of the earlier ones is below 1e-5 of its length (pivot
  // 1e-10 of G_ii) is left out (c_i = 0)
  const Remembered &last = history_.back();
  const std::size_t k = history_.size() - 1;
  std::vector<double> G(k * k + k, 0.0); // G row-major, then b
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    if (!m.vertex_owned[v]) continue;
    const Vec3<double> t = d[v] - last.d[v];
    for (std::size_t i = 0; i < k; ++i) {
      const Vec3<double> Di = history_[i].d[v] - last.d[v];
      for (std::size_t j = 0; j <= i; ++j) G[i * k + j] += dot(Di, history_[j].d[v] - last.d[v]);
      G[k * k + i] += dot(Di, t);
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, G.data(), static_cast<int>(G.size()), MPI_DOUBLE,
                             MPI_SUM, m.comm));
  std::vector<double> L(k * k, 0.0), c(k, 0.0);
  std::vector<char> kept(k, 0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      if (j < i && !kept[j]) continue;
      double sum = G[i * k + j];
      for (std::size_t l = 0; l < j; ++l)
        if (kept[l]) sum -= L[i * k + l] * L[j * k + l];
      if (j < i) {
        L[i * k + j] = sum / L[j * k + j];
      } else if (sum > 1e-10 * G[i * k + i] && G[i * k + i] > 0) {
        L[i * k + i] = std::sqrt(sum);
        kept[i] = 1;
      }
    }
  }
  std::vector<double> y(k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    if (!kept[i]) continue;
    double sum = G[k * k + i];
    for (std::size_t l = 0; l < i; ++l)
      if (kept[l]) sum -= L[i * k + l] * y[l];
    y[i] = sum / L[i * k + i];
  }
  for (std::size_t i = k; i-- > 0;) {
    if (!kept[i]) continue;
    double sum = y[i];
    for (std::size_t l = i + 1; l < k; ++l)
      if (kept[l]) sum -= L[l * k + i] * c[l];
    c[i] = sum / L[i * k + i];
  }
  if (std::all_of(c.begin(), c.end(), [](double x) { return x == 0; })) // (the last state)
    PetscFunctionReturn(0);
  // the prediction competes with the last state by their residuals
  Vec R, guess;
  PetscCall(fc_->create_state(&R));
  PetscCall(res.residual(discretization::kSteady, w_, R));
  PetscCall(VecNorm(R, NORM_2, &e->last_state_residual));
  e->start_residual = e->last_state_residual;
  PetscCall(fc_->create_state(&guess));
  PetscCall(VecCopy(last.w, guess));
  for (std::size_t i = 0; i < k; ++i)
    if (c[i] != 0) {
      PetscCall(VecAXPY(guess, c[i], history_[i].w));
      PetscCall(VecAXPY(guess, -c[i], last.w));
    }
  PetscReal r_guess;
  PetscCall(res.residual(discretization::kSteady, guess, R));
  PetscCall(VecNorm(R, NORM_2, &r_guess));
  if (r_guess < e->last_state_residual) {
    PetscCall(VecCopy(guess, w_));
    e->start_residual = r_guess;
    e->predicted = true;
  }
  PetscCall(VecDestroy(&guess));
  PetscCall(VecDestroy(&R));
  PetscFunctionReturn(0);
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
  PetscCall(forget()); // (states of another mesh)
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
  // forward, from the last good state or the prediction of the last ones (header)
  PetscCall(VecCopy(w_good_, w_));
  t = MPI_Wtime();
  PetscCall(predict_start(boundary_displacement, e));
  const double predict_time = MPI_Wtime() - t;
  SteadySolution sol;
  SteadyObserver observer;
  if (fault_)
    observer = [&](const solver::NewtonRecord &r, const solver::FlowMonitors::Values &) {
      if (r.iteration == 1) fault_point("forward");
      return PetscErrorCode(0);
    };
  PetscCall(fc_->solve_steady(w_, nullptr, observer, &sol, r_ref_));
  if (!e->predicted && e->start_residual == 0) // (no prediction competed: the solve's start)
    e->last_state_residual = e->start_residual = sol.summary.initial_residual;
  e->forward_time = predict_time + sol.summary.wall_time;
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
  PetscCall(remember(boundary_displacement, w_));
  e->ok = true;
  PetscFunctionReturn(0);
}

} // namespace karman::driver
