// A shape-optimization problem (see include/karman/driver/shape_optimization.hpp).
#include "karman/driver/shape_optimization.hpp"

#include <cmath>

namespace karman::driver {

PetscErrorCode ShapeOptimization::setup(FlowCase &fc, std::unique_ptr<adjoint::DesignSpace> design,
                                        std::vector<ShapeConstraint> constraints,
                                        const adjoint::DeformationOptions &deformation, Vec w0) {
  PetscFunctionBeginUser;
  fc_ = &fc;
  design_ = std::move(design);
  constraints_ = std::move(constraints);
  PetscCall(shape_.setup(fc, deformation, w0));
  problem_ = OptimizationProblem();
  problem_.names = design_->names();
  problem_.lower = design_->lower();
  problem_.upper = design_->upper();
  problem_.start = design_->initial();
  flow_.clear();
  for (auto &c : constraints_) {
    double value = c.value;
    if (c.relative) {
      PetscCheck(c.geometric, fc.mesh().comm, PETSC_ERR_USER_INPUT,
                 "constraint %s: 'relative' applies to geometric constraints only", c.name.c_str());
      adjoint::GeometricConstraintValue v0;
      PetscCall(c.geometric->evaluate(shape_.reference_coordinates(), false, &v0));
      PetscCheck(v0.ok, fc.mesh().comm, PETSC_ERR_USER_INPUT,
                 "constraint %s is undefined on the reference shape: %s", c.name.c_str(),
                 v0.failure.c_str());
      value *= v0.value;
    }
    if (c.flow) flow_.push_back(c.flow.get());
    problem_.constraints.push_back({c.name, c.sense, value, c.tolerance});
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::evaluate(const std::vector<double> &a, Evaluation *e) {
  PetscFunctionBeginUser;
  *e = Evaluation();
  last_ = ShapeRecord();
  std::vector<Vec3<double>> dB;
  PetscCall(design_->displacement(a, &dB));
  PetscCall(shape_.evaluate(dB, &last_.shape, flow_));
  const ShapeEvaluation &s = last_.shape;
  if (!s.ok) {
    e->ok = false;
    e->failure = s.failure;
    PetscFunctionReturn(0);
  }
  e->f = s.J;
  PetscCall(design_->reverse(a, s.dJ_dB, &e->df));
  double g2 = 0;
  for (double g : e->df) g2 += g * g;
  last_.gradient_norm = std::sqrt(g2);
  std::size_t k = 0;
  for (auto &c : constraints_) {
    std::vector<double> dc;
    if (c.flow) {
      e->c.push_back(s.extra[k]);
      PetscCall(design_->reverse(a, s.extra_dB[k], &dc));
      ++k;
    } else {
      adjoint::GeometricConstraintValue v;
      PetscCall(c.geometric->evaluate(shape_.coordinates(), true, &v));
      if (!v.ok) {
        e->ok = false;
        e->failure = c.name + ": " + v.failure;
        PetscFunctionReturn(0);
      }
      std::vector<Vec3<double>> dC_dB;
      PetscCall(shape_.deformation().reverse(v.dX, &dC_dB));
      PetscCall(design_->reverse(a, dC_dB, &dc));
      e->c.push_back(v.value);
    }
    e->dc.push_back(dc);
  }
  last_.constraints = e->c;
  PetscFunctionReturn(0);
}

} // namespace karman::driver
