// A shape-optimization problem as an evaluator for driver::optimize:
//   design a  ->  wall displacement d_B(a)                   (adjoint/shape_parameterization)
//             ->  J, dJ/dd_B and the flow constraints'        (driver/shape_evaluation:
//                 values and gradients                         deform, re-solve, adjoints)
//             ->  geometric constraints C(X), dC/dX            (adjoint/geometric_constraints)
//                 mapped to dC/dd_B by the deformation's reverse mode
//             ->  dJ/da = (dd_B/da)^T dJ/dd_B, the same for every constraint.
// A constraint is  C sense value  (sense <=, >= or =); with `relative`, value is a factor of
// C at the reference shape (area = 1.0 x the initial area).  A failed evaluation (an inverted
// mesh, an unconverged solve, a geometric constraint undefined at the design) is reported to
// the optimizer as such (it backs off).
#pragma once

#include "karman/adjoint/geometric_constraints.hpp"
#include "karman/adjoint/shape_parameterization.hpp"
#include "karman/driver/optimizer.hpp"
#include "karman/driver/shape_evaluation.hpp"

#include <memory>
#include <string>
#include <vector>

namespace karman::driver {

struct ShapeConstraint {
  std::string name;
  ConstraintSense sense = ConstraintSense::Equal;
  double value = 0;
  bool relative = false;
  double tolerance = 1e-8;
  std::unique_ptr<adjoint::GeometricConstraint> geometric; ///< one of geometric ...
  std::unique_ptr<adjoint::Objective> flow;                ///< ... or flow
};

/// What the last evaluation measured besides f and c (for logs and history files).
struct ShapeRecord {
  ShapeEvaluation shape;
  double gradient_norm = 0; ///< |dJ/da|
  std::vector<double> constraints;
};

/// dJ/da and dc/da of a ShapeOptimization against finite differences of re-deformed, re-solved
/// designs (karman verify): per checked variable a_i, the fourth-order central difference
///   (8 (F(a + h e_i) - F(a - h e_i)) - (F(a + 2h e_i) - F(a - 2h e_i))) / 12h
/// of the objective and of every constraint, and a Taylor test along a random direction p:
///   r(eps) = |J(a + eps p) - J(a) - eps dJ/da . p|, eps = eps0 {1, 1/2, 1/4}  (rate ~ 2).
struct DesignGradientCheck {
  struct Variable {
    std::string name;
    double step = 0;
    std::vector<double> adjoint, fd; ///< objective first, then the constraints
  };
  std::vector<Variable> variables;
  std::vector<double> taylor_eps, taylor_remainder;
};

/// The constraints: list of the case as ShapeConstraints (walls checked against the mesh).
/// Collective.
PetscErrorCode build_shape_constraints(FlowCase &fc, std::vector<ShapeConstraint> *out);

class ShapeOptimization {
public:
  /// The design space and constraints are taken over; the case's current coordinates are the
  /// reference shape; `w0` (optional) a converged state on it.  Collective.
  PetscErrorCode setup(FlowCase &fc, std::unique_ptr<adjoint::DesignSpace> design,
                       std::vector<ShapeConstraint> constraints,
                       const adjoint::DeformationOptions &deformation, Vec w0);
  /// The same from the case: its design: list, constraints: list and optimization: section
  /// (deformation keys).  Collective.
  PetscErrorCode setup(FlowCase &fc, Vec w0);
  /// Bounds, start and constraints for driver::optimize (relative values resolved).
  const OptimizationProblem &problem() const { return problem_; }
  /// f and c at the design a.  Collective.
  PetscErrorCode evaluate(const std::vector<double> &a, Evaluation *e);
  Evaluator evaluator() {
    return [this](const std::vector<double> &a, Evaluation *e) { return evaluate(a, e); };
  }
  /// The check above at design a for at most `max_variables` variables (evenly spread over the
  /// design vector); steps h_i = rel (upper_i - lower_i) where the bounds are finite, else
  /// rel * reference.length.  Collective.
  PetscErrorCode check_gradient(const std::vector<double> &a, std::size_t max_variables, double rel,
                                DesignGradientCheck *check);
  const ShapeRecord &last() const { return last_; }
  ShapeEvaluator &shape() { return shape_; }
  const adjoint::DesignSpace &design() const { return *design_; }

private:
  FlowCase *fc_ = nullptr;
  std::unique_ptr<adjoint::DesignSpace> design_;
  std::vector<ShapeConstraint> constraints_;
  std::vector<const adjoint::Objective *> flow_;
  ShapeEvaluator shape_;
  OptimizationProblem problem_;
  ShapeRecord last_;
};

} // namespace karman::driver
