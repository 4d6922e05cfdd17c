// The design chain (see include/karman/driver/design_chain.hpp).
#include "karman/driver/design_chain.hpp"

namespace karman::driver {

PetscErrorCode DesignChain::setup(FlowCase &fc, std::unique_ptr<design::DesignSpace> design,
                                  const design::DeformationOptions &options) {
  PetscFunctionBeginUser;
  fc_ = &fc;
  X0_ = fc.residual().coordinates();
  design_ = std::move(design);
  PetscCall(deformation_.setup(fc.mesh(), X0_, options));
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::displacement(const std::vector<double> &a,
                                         std::vector<Vec3<double>> *d) const {
  PetscFunctionBeginUser;
  PetscCall(design_->displacement(a, d));
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::move_by(const std::vector<Vec3<double>> &displacement,
                                    const char *context, design::DeformationResult *result,
                                    const std::function<void()> &deformed) {
  PetscFunctionBeginUser;
  std::vector<Vec3<double>> X;
  PetscCall(deformation_.deform(displacement, &X, result));
  if (deformed) deformed();
  if (result->valid) PetscCall(fc_->residual().move_to(X, context));
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::move_to_design(const std::vector<double> &a, const char *context,
                                           design::DeformationResult *result) {
  PetscFunctionBeginUser;
  std::vector<Vec3<double>> d;
  PetscCall(displacement(a, &d));
  PetscCall(move_by(d, context, result));
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::displacement_reverse(const std::vector<Vec3<double>> &Xbar,
                                                 std::vector<Vec3<double>> *d_bar,
                                                 PetscInt *iterations) const {
  PetscFunctionBeginUser;
  PetscInt its = 0;
  PetscCall(deformation_.reverse(Xbar, d_bar, &its));
  if (iterations) *iterations = its;
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::design_reverse(const std::vector<double> &a,
                                           const std::vector<Vec3<double>> &d_bar,
                                           std::vector<double> *a_bar) const {
  PetscFunctionBeginUser;
  PetscCall(design_->reverse(a, d_bar, a_bar));
  PetscFunctionReturn(0);
}

PetscErrorCode DesignChain::reverse(const std::vector<double> &a,
                                    const std::vector<Vec3<double>> &Xbar,
                                    std::vector<double> *a_bar) const {
  PetscFunctionBeginUser;
  std::vector<Vec3<double>> d_bar;
  PetscCall(displacement_reverse(Xbar, &d_bar));
  PetscCall(design_reverse(a, d_bar, a_bar));
  PetscFunctionReturn(0);
}

} // namespace karman::driver
