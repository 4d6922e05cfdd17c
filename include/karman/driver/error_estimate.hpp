// Adjoint-based estimate of the discretization error of a steady objective (issue 46): the
// dual-weighted residual on an embedded finer space (Becker & Rannacher; Venditti & Darmofal).
//
// The finer space is the nested refinement of the case's mesh (mesh.refine + 1: every cell
// split into 4 in 2D, 8 in 3D, the new wall vertices on the true geometry, so that the polygonal
// wall's error is seen).  With w_H the converged state on the mesh, w = I w_H its linear
// reconstruction on the refined mesh (io/nested_transfer.hpp) and psi the adjoint of J on the
// refined mesh at w (J_h'(w)^T psi = -dJ_h/dw, karman's sign),
//   J_h(w_h) = J_h(w) + psi . R_h(w) + O(|w_h - w|^2),
// one linearized Newton step of J on the refined mesh; w_h - w = O(h^2) for smooth flows, so the
// remainder is of higher order than the error itself (DFG 2D-1 level 0: J_h(w) + psi . R_h(w) =
// 5.573759, the refined mesh's Newton solution 5.573715; the error against it 0.017956).  The
// error of J_H against the refined mesh is
//   e_h = J_h(w) + psi . R_h(w) - J_H,
// and against the exact value, for a scheme of order p, e = e_h 2^p / (2^p - 1) (the refined
// mesh's own error is e_h / (2^p - 1): Richardson); karman's finite volumes are of order
// p = kSchemeOrder = 2, and the estimate is e with the corrected value J_H + e.  (DFG 2D-1
// levels 0-2: e_h / (c_D,ref - c_D) = 0.76, 0.74, 0.73; e / (c_D,ref - c_D) = 1.01, 0.99,
// 0.98.)
//
// Per coarse cell K the indicator is eta_K = sum over the refined cells k of K of
// |sum_i psi_k,i R_k,i| (the local contributions' absolute values: what adaptation refines),
// and the contribution c_K the same sum without the absolute values (sum_K c_K = psi . R_h).
#pragma once

#include "karman/driver/flow_case.hpp"

#include <vector>

namespace karman::driver {

/// The order of the discretization error of the objectives (second-order finite volumes).
constexpr int kSchemeOrder = 2;

struct ErrorEstimate {
  double J = 0;               ///< the objective on the case's mesh, J_H(w_H)
  double J_reconstructed = 0; ///< J_h(w): the reconstruction on the refined mesh
  double correction = 0;      ///< psi . R_h(w)
  double J_refined = 0;       ///< J_h(w) + psi . R_h(w): the refined solution's value, estimated
  double error_refined = 0;   ///< J_refined - J: the error of J against the refined mesh
  double error = 0;           ///< error_refined 2^p / (2^p - 1): the error of J, estimated
  double J_corrected = 0;     ///< J + error
  double indicator_sum = 0;   ///< sum_K eta_K >= |correction|
  long refined_cells = 0;
  long parents_outside = 0; ///< refined cells whose centroid lay in no coarse cell (nearest taken)
  int adjoint_iterations = 0;
  double adjoint_relative_residual = 0;
  double wall_time = 0; ///< the whole estimate [s]: the refined case's mesh and set-up, the
                        ///< transfer, the refined adjoint (its Jacobian and solve)
  double setup_time = 0, transfer_time = 0, adjoint_time = 0;
  std::vector<double> indicator;    ///< eta_K per owned cell of the case's mesh
  std::vector<double> contribution; ///< c_K per owned cell
};

/// The error estimate of the case's objective at the converged steady state w of `flow`: meshes
/// the nested refinement (mesh.refine + 1 of the case, from its .geo), reconstructs w there and
/// solves the refined mesh's adjoint with the case's solver settings.  Collective.
PetscErrorCode estimate_error(FlowCase &flow, Vec w, ErrorEstimate *estimate);

} // namespace karman::driver
