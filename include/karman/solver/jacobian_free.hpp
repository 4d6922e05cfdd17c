// The Newton operator of the iterative method without its matrix (Jacobian-free Newton-Krylov,
// Knoll & Keyes 2004): a PETSc MATSHELL whose product is the directional difference of the
// residual at the base state w,
//   J v = [R(w + h v) - R(w)] / h + diag(s) v,   h = sqrt(eps) sqrt(1 + |w|) / |v|
// (eps: machine epsilon; the step of Pernice & Walker 1998, PETSc's MatMFFD "wp"), s: an extra
// shift on the momentum rows (the steady solver's pseudo-time term, which R does not contain).
// The time term of an unsteady step is part of R and enters through the difference.
//
// Why it deviates from DESIGN.md's "assembled exact Jacobian" for the steady forward solve of
// solver.linear: iterative: the assembled Jacobian of the two-layer stencil is the largest single
// item of a large solve (2D, in blocks: 0.8 KiB per cell of ~4), and the iterative method only
// multiplies by it (its preconditioner is built from the compact matrix).  One product costs
// one residual evaluation (a BAIJ product of the assembled J: about a third of that) and no
// assembly is needed (at 312k cells the assembly of J is ~60 % of a residual-free Newton step's
// set-up).  The difference is accurate to ~1e-8 relative, so Newton still converges to the
// solver's tolerance, to the same state (R(w) = 0 does not depend on the operator), only the
// last Newton steps lose their quadratic rate.  The adjoint, whose answer does depend on the
// operator, keeps the assembled exact Jacobian; so does the direct method.
#pragma once

#include "karman/discretization/flow_residual.hpp"

#include <petscmat.h>

#include <vector>

namespace karman::solver {

class JacobianFreeOperator {
public:
  JacobianFreeOperator() = default;
  JacobianFreeOperator(const JacobianFreeOperator &) = delete;
  JacobianFreeOperator &operator=(const JacobianFreeOperator &) = delete;
  ~JacobianFreeOperator();

  /// Creates the operator of `residual` (a MATSHELL of the state's size and block size, owned by
  /// this object).  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &residual);
  Mat matrix() const { return J_; }

  /// The time level and state w at which J is taken, the time term of R (or null) and the extra
  /// momentum shift (one value per owned cell, or null; referenced, not copied).  Evaluates
  /// R(w).  Collective.
  PetscErrorCode set_base(const discretization::TimeLevel &level, Vec w,
                          const discretization::FlowResidual::TimeTerm *time_term,
                          const std::vector<double> *shift);

private:
  static PetscErrorCode mult(Mat J, Vec v, Vec y);

  const discretization::FlowResidual *res_ = nullptr;
  Mat J_ = nullptr;
  Vec w_ = nullptr, r_ = nullptr, wh_ = nullptr; ///< base state, R(base), w + h v
  double w_norm_ = 0;
  discretization::TimeLevel level_;
  const discretization::FlowResidual::TimeTerm *time_term_ = nullptr;
  const std::vector<double> *shift_ = nullptr;
};

} // namespace karman::solver
