// One shape evaluation of a steady case: the chain (the deformation's part in design_chain.hpp)
//   wall displacement d_B  ->  volume mesh X = X0 + D d_B      (design/mesh_deformation.hpp)
//                          ->  flow state w(X), R(w; X) = 0     (warm-started Newton)
//                          ->  J(w, X) and dJ/dX               (steady adjoint)
//                          ->  dJ/dd_B = D^T dJ/dX             (the deformation's reverse mode)
// A design parameterization d_B(a) chains on with its own reverse: dJ/da = (dd_B/da)^T dJ/dd_B.
// The mesh is always deformed from the reference coordinates X0 (the discretization's at set-up),
// so the map is linear and D^T exact.  A displacement that inverts cells (or whose deformation
// solve does not converge) and a forward solve that does not converge are reported as a failed
// evaluation (ok = false, with the reason), not as an error: an optimizer backs off.  The flow
// state of the last good evaluation is kept and starts the next solve, with the pseudo-time
// continuation referred to the residual of the cold initial state (a warm start begins near
// Newton); if that solve fails, once more with the case's own continuation.
//
// The warm start predicted (set_history(n), n >= 2): the states w_i of the last n good evaluations
// on this reference mesh are kept with their displacements d_i.  A new displacement d is fitted
// by the affine combination of those, d ~ d_m + sum_i c_i (d_i - d_m) (least squares over the
// owned vertices, m the last; directions that the earlier ones nearly repeat are left out), and
// the same combination of the states, w_m + sum_i c_i (w_i - w_m), starts the solve when its
// residual on the new mesh is below that of w_m.  w(d) is smooth, so along the optimizer's
// line searches and in the span of its recent steps the prediction is second-order accurate
// where the last state is first-order: DFG 2D-1 FFD campaign (level 1), the start's |R| 3.2e-5 ->
// 6.6e-7 (geometric means), 3.2 Newton steps instead of 4.0, the warm solve 0.45 of a cold one
// instead of 0.70 (results/bench-optimize.md).  A restarted campaign puts the journaled
// evaluations' states back (remember()), so that it follows the same path.
//
// Crash tests: a fault hook (core/fault_injection.hpp) given to setup() is called at the points
// "forward" (after the first Newton iteration), "adjoint" (after the first adjoint solve, when
// there are two or more) and "deformation" (after the mesh deformation solve, before the mesh is
// used) of each evaluation, counted from 1.
#pragma once

#include "karman/core/fault_injection.hpp"
#include "karman/design/mesh_deformation.hpp"
#include "karman/driver/design_chain.hpp"
#include "karman/driver/flow_case.hpp"

#include <string>
#include <vector>

namespace karman::driver {

struct ShapeEvaluation {
  bool ok = false;
  std::string failure;             ///< why not ok
  bool deformation_failed = false; ///< not ok because the deformed mesh was invalid
  double J = 0;                    ///< the case's objective
  std::vector<Vec3<double>> dJ_dB; ///< dJ/dd_B per local vertex (total on every copy)
  std::vector<discretization::ParameterGradient> parameters; ///< the case's parameter gradients
  std::vector<double> extra;                                 ///< the extra flow functions' values
  std::vector<std::vector<Vec3<double>>> extra_dB;           ///< and their d/dd_B
  std::vector<std::vector<discretization::ParameterGradient>> extra_parameters; ///< and d/dp
  solver::FlowMonitors::Values values; ///< c_D, c_L, ... of the new shape
  int newton_iterations = 0, deformation_iterations = 0, deformation_reverse_iterations = 0;
  /// |R| of the last good state on the new mesh, and of the state the solve started from (the
  /// prediction's when it was lower: predicted)
  double last_state_residual = 0, start_residual = 0;
  bool predicted = false;
  double forward_time = 0, adjoint_time = 0, deformation_time = 0, deformation_reverse_time = 0;
  double min_volume_ratio = 0; ///< min over cells of V(X) / V(X0)
};

class ShapeEvaluator {
public:
  ShapeEvaluator() = default;
  ShapeEvaluator(const ShapeEvaluator &) = delete;
  ShapeEvaluator &operator=(const ShapeEvaluator &) = delete;
  ~ShapeEvaluator();

  /// The reference mesh is the case's current coordinates; `w0` (if given) a converged state on
  /// it that starts the first solve (otherwise the case's initial state); `fault` the crash
  /// tests' hook (none: no effect); `design` the parameterization that the design chain holds for
  /// the caller (chain(): d_B(a) and dJ/da; null: displacements only).  Collective.
  PetscErrorCode setup(FlowCase &fc, const design::DeformationOptions &options, Vec w0,
                       FaultHook fault = {}, std::unique_ptr<design::DesignSpace> design = {});
  /// Evaluates J and dJ/dd_B for the boundary displacement d_B (per local vertex; only boundary
  /// vertices read), and the same for each extra flow function (one adjoint solve each: flow
  /// constraints).  Collective.
  PetscErrorCode evaluate(const std::vector<Vec3<double>> &boundary_displacement,
                          ShapeEvaluation *e,
                          const std::vector<const adjoint::Objective *> &extra = {});
  /// Deforms the mesh to the design a (DesignChain::move_to_design): e.g. back to the last good
  /// design before a remeshing.  Collective.
  PetscErrorCode move_to_design(const std::vector<double> &a, design::DeformationResult *result) {
    return chain_.move_to_design(a, "shape evaluation", result);
  }
  /// Deforms the mesh back to its reference shape (no displacement): a remeshing around another
  /// design's walls then takes the reference cells' sizes, whatever design was evaluated last
  /// (a restarted campaign replays without moving the mesh).  Collective.
  PetscErrorCode move_to_reference(design::DeformationResult *result) {
    const std::vector<Vec3<double>> none(fc_->residual().coordinates().size());
    return chain_.move_by(none, "shape evaluation", result);
  }
  /// The number of good evaluations whose states predict the next start (class comment; 0 or
  /// 1: the last state only).
  void set_history(std::size_t n) { history_size_ = n; }
  std::size_t history_size() const { return history_size_; }
  /// Appends a good evaluation's displacement and state to the history (the oldest beyond
  /// history_size() dropped): evaluate() does it; a restarted campaign with the journaled ones,
  /// oldest first.
  PetscErrorCode remember(const std::vector<Vec3<double>> &boundary_displacement, Vec w);
  /// The states in the history (oldest first).
  std::size_t remembered() const { return history_.size(); }
  /// The current (last deformed) vertex coordinates.
  const std::vector<Vec3<double>> &coordinates() const { return fc_->residual().coordinates(); }
  /// The flow state of the last good evaluation (the start of the next solve), and setting it
  /// (a restarted campaign).
  Vec state() const { return w_good_; }
  PetscErrorCode set_state(Vec w) { return VecCopy(w, w_good_); }
  const std::vector<Vec3<double>> &reference_coordinates() const {
    return chain_.reference_coordinates();
  }
  const design::MeshDeformation &deformation() const { return chain_.deformation(); }
  /// The design chain (design vector -> displacement -> mesh, and its reverse).
  const DesignChain &chain() const { return chain_; }

private:
  FlowCase *fc_ = nullptr;
  std::vector<double> V0_; ///< reference cell volumes (owned cells)
  DesignChain chain_;
  Vec w_ = nullptr, w_good_ = nullptr;
  double r_ref_ = 0;     ///< |R| of the case's initial state on the reference mesh (continuation)
  long evaluations_ = 0; ///< evaluations computed so far
  FaultHook fault_;      ///< the crash tests' hook (empty: none)
  struct Remembered {
    std::vector<Vec3<double>> d; ///< the displacement (local vertices)
    Vec w = nullptr;             ///< its converged state
  };
  std::vector<Remembered> history_; ///< oldest first; the last is w_good_'s
  std::size_t history_size_ = 0;
  PetscErrorCode forget();
  /// w_ <- the prediction for displacement d when its residual is lower (class comment).
  PetscErrorCode predict_start(const std::vector<Vec3<double>> &d, ShapeEvaluation *e);
};

} // namespace karman::driver
