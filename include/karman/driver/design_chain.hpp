// The design chain of a shape study, forward and reverse, written once for its callers (the
// shape evaluation of an optimization campaign, the Python bindings):
//   forward   design vector a -> wall displacement d_B(a)     (design::DesignSpace: the case's
//                                                              design: list)
//                             -> volume mesh X = X0 + D d_B    (design::MeshDeformation: linear
//                                                              elasticity from the reference X0)
//                             -> FlowResidual::move_to(X)      (geometry, gradients, boundary
//                                                              values of the moved mesh)
//   reverse   dJ/dX -> dJ/dd_B = D^T dJ/dX -> dJ/da = (dd_B/da)^T dJ/dd_B
// The reference X0 is the residual's coordinates at setup(), so the map d_B -> X is linear and
// D^T exact.  A deformation that fails (an inverted cell, no convergence) leaves the mesh as it
// was and is reported in the DeformationResult (the caller words the failure).
#pragma once

#include "karman/design/mesh_deformation.hpp"
#include "karman/design/shape_parameterization.hpp"
#include "karman/driver/flow_case.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace karman::driver {

class DesignChain {
public:
  DesignChain() = default;
  DesignChain(const DesignChain &) = delete;
  DesignChain &operator=(const DesignChain &) = delete;

  /// The chain of `fc` from its current coordinates (the reference X0): the parameterization
  /// `design` (null: displacements only) and a mesh deformation with `options`.  Collective.
  PetscErrorCode setup(FlowCase &fc, std::unique_ptr<design::DesignSpace> design,
                       const design::DeformationOptions &options);

  bool has_design() const { return design_ != nullptr; }
  /// The parameterization (has_design() only).
  const design::DesignSpace &design() const { return *design_; }
  const design::MeshDeformation &deformation() const { return deformation_; }
  const std::vector<Vec3<double>> &reference_coordinates() const { return X0_; }

  /// d_B(a) (has_design() only).  Not collective.
  PetscErrorCode displacement(const std::vector<double> &a, std::vector<Vec3<double>> *d) const;
  /// Deforms the reference mesh by the wall displacement d_B (per local vertex; boundary vertices
  /// read) and, if the deformed mesh is valid, moves the residual's mesh there (move_to with
  /// `context` in its messages).  `deformed` (if given) is called between the deformation and the
  /// move (the crash tests' fault point).  *result tells whether it was valid (else the mesh is
  /// unchanged).  Collective.
  PetscErrorCode move_by(const std::vector<Vec3<double>> &displacement, const char *context,
                         design::DeformationResult *result,
                         const std::function<void()> &deformed = {});
  /// The same from the design vector a: move_by(d_B(a)).  Collective.
  PetscErrorCode move_to_design(const std::vector<double> &a, const char *context,
                                design::DeformationResult *result);

  /// dJ/dd_B = D^T dJ/dX (Xbar per local vertex, the total on every copy), and the CG
  /// iterations if asked.  Collective.
  PetscErrorCode displacement_reverse(const std::vector<Vec3<double>> &Xbar,
                                      std::vector<Vec3<double>> *d_bar,
                                      PetscInt *iterations = nullptr) const;
  /// dJ/da = (dd_B/da (a))^T dJ/dd_B (has_design() only).  Collective.
  PetscErrorCode design_reverse(const std::vector<double> &a,
                                const std::vector<Vec3<double>> &d_bar,
                                std::vector<double> *a_bar) const;
  /// Both: dJ/da from dJ/dX at design a.  Collective.
  PetscErrorCode reverse(const std::vector<double> &a, const std::vector<Vec3<double>> &Xbar,
                         std::vector<double> *a_bar) const;

private:
  FlowCase *fc_ = nullptr;
  std::vector<Vec3<double>> X0_;
  std::unique_ptr<design::DesignSpace> design_;
  design::MeshDeformation deformation_;
};

} // namespace karman::driver
