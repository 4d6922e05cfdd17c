// The Jacobian-free Newton operator (see include/karman/solver/jacobian_free.hpp).
#include "karman/solver/jacobian_free.hpp"

#include <cfloat>
#include <cmath>

namespace karman::solver {

JacobianFreeOperator::~JacobianFreeOperator() {
  if (J_) MatDestroy(&J_);
  for (Vec *v : {&w_, &r_, &wh_})
    if (*v) VecDestroy(v);
}

PetscErrorCode JacobianFreeOperator::setup(const discretization::FlowResidual &residual) {
  PetscFunctionBeginUser;
  res_ = &residual;
  for (Vec *v : {&w_, &r_, &wh_}) PetscCall(residual.create_state(v));
  PetscInt n, N;
  PetscCall(VecGetLocalSize(w_, &n));
  PetscCall(VecGetSize(w_, &N));
  PetscCall(MatCreateShell(residual.mesh().comm, n, n, N, N, this, &J_));
  PetscCall(MatSetBlockSize(J_, residual.nv()));
  PetscCall(MatShellSetOperation(J_, MATOP_MULT, (void (*)(void))mult));
  PetscFunctionReturn(0);
}

PetscErrorCode JacobianFreeOperator::set_base(const discretization::TimeLevel &level, Vec w,
                                              const discretization::FlowResidual::TimeTerm *term,
                                              const std::vector<double> *shift) {
  PetscFunctionBeginUser;
  PetscCall(VecCopy(w, w_));
  PetscCall(VecNorm(w_, NORM_2, &w_norm_));
  level_ = level;
  time_term_ = term;
  shift_ = shift;
  PetscCall(res_->residual(level_, w_, r_, time_term_));
  // the operator changed: preconditioners and Krylov methods that look at its state see it
  PetscCall(MatAssemblyBegin(J_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(J_, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode JacobianFreeOperator::mult(Mat J, Vec v, Vec y) {
  PetscFunctionBeginUser;
  JacobianFreeOperator *self;
  PetscCall(MatShellGetContext(J, &self));
  PetscReal v_norm;
  PetscCall(VecNorm(v, NORM_2, &v_norm));
  if (v_norm == 0) {
    PetscCall(VecSet(y, 0.0));
    PetscFunctionReturn(0);
  }
  const double h = std::sqrt(DBL_EPSILON) * std::sqrt(1.0 + self->w_norm_) / v_norm;
  PetscCall(VecWAXPY(self->wh_, h, v, self->w_));
  PetscCall(self->res_->residual(self->level_, self->wh_, y, self->time_term_));
  PetscCall(VecAXPY(y, -1.0, self->r_));
  PetscCall(VecScale(y, 1.0 / h));
  if (self->shift_) PetscCall(self->res_->add_transient_shift(*self->shift_, 1.0, v, y));
  PetscFunctionReturn(0);
}

} // namespace karman::solver
