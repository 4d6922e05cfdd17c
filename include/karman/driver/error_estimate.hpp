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

#include <string>

#include <vector>

namespace karman::driver {

/// The order of the discretization error of the objectives (second-order finite volumes).
constexpr int kSchemeOrder = 2;

/// Memory of a steady error estimate per cell of its refined mesh (the refined case, its
/// Jacobian, the adjoint's multigrid and GMRES directions, the coarse case beside them), measured
/// as the peak of both ranks' resident memory: DFG 3D-1Z tetrahedra (the adapted mesh of 61 646
/// cells, 493 168 refined: 7 739 MiB) 16 KiB, DFG 2D-1 triangles (dfg-2d-tri.geo level 2, 197 632
/// refined: 1 589 MiB) 8.5 KiB.
constexpr double kEstimateBytesPerRefinedCell2D = 8.5 * 1024;
constexpr double kEstimateBytesPerRefinedCell3D = 16.0 * 1024;

/// Whether the steady error estimate of a mesh of `cells` cells in `dim` dimensions fits in the
/// memory of the job's nodes: each node's share of 2^dim cells x the figure above against the
/// node's available memory plus what the job's ranks there hold now (the next cycle reuses it),
/// or the PETSc option -estimate_memory GIB where a job may use less (a batch system's limit).
/// needed_gib, available_gib: those of the tightest node.  Collective.
PetscErrorCode estimate_fits_in_memory(MPI_Comm comm, int dim, double cells, bool *fits,
                                       double *needed_gib, double *available_gib);

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

/// Refuses, early, a case whose error cannot be estimated: a mesh.file that is not a Gmsh .geo
/// (the refined mesh is made from its geometry), mesh.refine 3 (the largest; the estimate
/// refines once more).  `what` names the feature in the message.  Collective.
PetscErrorCode check_estimable(MPI_Comm comm, const config::CaseConfig &cfg, const char *what);

/// The case of `flow` on the nested refinement of its mesh (mesh.refine + 1, from its .geo; made
/// again with the new boundary vertices on the straight edges, mesh.refine_on_geometry false, when
/// on the geometry they invert cells): its configuration into *cfg (which must outlive *fine) and
/// the case loaded into *fine.  Collective.
PetscErrorCode load_refined(const FlowCase &flow, config::CaseConfig *cfg, FlowCase *fine);

/// The error estimate of the case's objective at the converged steady state w of `flow`: meshes
/// the nested refinement (load_refined), reconstructs w there and solves the refined mesh's
/// adjoint with the case's solver settings.  Collective.
PetscErrorCode estimate_error(FlowCase &flow, Vec w, ErrorEstimate *estimate);
/// The same with the refined case given (load_refined; its boundary data changed as the case's
/// were, e.g. an exact solution's velocity).  Collective.
PetscErrorCode estimate_error(FlowCase &flow, Vec w, FlowCase &fine, ErrorEstimate *estimate);

/// Unsteady (the spatial error of the objective of an unsteady run, the time steps kept): with
/// w_H^n the case's levels (its run again, with the step sizes of `run`, the case's unsteady
/// gradient result, whose J is J_H) and I w_H^n their reconstructions on the refined mesh, psi^n
/// the refined mesh's unsteady adjoint along I w_H (the weights of every level; its store-all
/// trajectory in the folder `scratch`) and R_h^n the refined residual of level n with its BDF
/// time term,
///   J_h(w_h) = J_h(I w_H) + sum_n psi^n . R_h^n(I w_H^n, I w_H^{n-1}, I w_H^{n-2})
///              + dJ_h/dw^0 . (w_h^0 - I w_H^0) + O(|w_h - I w_H|^2),
/// the last term for a refined initial state other than the reconstruction (an initial.file is
/// fitted to each mesh anew); the error, corrected value and indicators follow as for a steady
/// case (the indicator of a cell sums its refined cells' |sum_n psi^n . R^n|).  transfer_time is
/// the case's run again with the reconstructions.  Collective.
PetscErrorCode estimate_unsteady_error(FlowCase &flow, const adjoint::UnsteadyAdjointResult &run,
                                       const std::string &scratch, ErrorEstimate *estimate);

} // namespace karman::driver
