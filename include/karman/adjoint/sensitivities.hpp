// Reverse-mode accumulation for the discrete adjoint (src/adjoint/README.md, eqs. 5-13).
//
// A scalar built from the discretization -- the Lagrangian psi^T R(w; X, a), or an
// objective J(w; X, a) -- is differentiated backwards through its pieces:
//   face fluxes / wall stresses   -> adjoints of cell values w, gradients G, face geometry
//                                    (S_f, x_f, x_L, x_R), boundary data (u_b, p_b), nu
//   least-squares gradients G(w)  -> w, centroids (the coefficients depend on X),
//                                    boundary data
//   boundary data u_b(x_f, S_f; a)-> the named boundary parameters a and the geometry
//   geometry(X)                   -> the vertex coordinates X
// Each rank accumulates its share (faces weighted by the ownership of their cells);
// finish() sums the shares: parameters over ranks, X-adjoints over the copies of each
// vertex.
#pragma once

#include "karman/discretization/parameters.hpp"
#include "karman/discretization/flow_residual.hpp"

#include <string>
#include <utility>
#include <vector>

namespace karman::adjoint {

using discretization::ParameterGradient;
using discretization::ParameterRegistry;

struct Sensitivities {
  std::vector<double> wbar;       ///< nv per local cell
  std::vector<double> Gbar;       ///< nv x 3 per local cell
  geometry::GeometryBar geom;     ///< V, x_c, S_f, x_f
  std::vector<double> bbar;       ///< nv per flux face: the prescribed value of each unknown
  std::vector<double> rotbar;     ///< per flux face: rotation rate of its wall
  std::vector<double> parameters; ///< per ParameterRegistry parameter (the terms' own)
  std::vector<int> term_offset;   ///< the registry index of each residual term's first parameter
  double nu = 0;                  ///< viscosity
  /// per local cell: the adjoint of its wall distance (FlowResidual::wall_distance; empty if no
  /// term reads it)
  std::vector<double> wall_distance;

  void reset(const discretization::FlowResidual &res);
  /// Adds the adjoints of one face's flux (every term's) at `state` for the weights lambda (nv
  /// values).
  void add_face(const discretization::FlowResidual &res, const discretization::LocalState &state,
                PetscInt f, const double *lambda);
  /// Adds the adjoints `b` of one face's inputs (cell values and gradients, geometry, boundary
  /// values, viscosity) of face f, as computed by a kernel's reverse mode.
  void add_face_bar(const discretization::FlowResidual &res, PetscInt f, const physics::FluxBar &b);
  /// Adds the adjoints of the wall stress (p_f, visc) of velocity-Dirichlet face f.
  void add_wall_stress(const discretization::FlowResidual &res,
                       const discretization::LocalState &state, PetscInt f, double pf_bar,
                       const Vec3<double> &visc_bar);
  /// Adds the adjoints of the rotating-wall traction (physics::rotating_wall_traction) of
  /// face f for its weights traction_bar: face area, viscosity and the wall's rotation rate.
  void add_wall_rotation(const discretization::FlowResidual &res, PetscInt f,
                         const Vec3<double> &traction_bar);
  /// Adds pbar * (pressure of cell c reconstructed at point x): w_c + G_c . (x - x_c), for unknown
  /// k.
  void add_point_value(const discretization::FlowResidual &res,
                       const discretization::LocalState &state, PetscInt c, int k,
                       const Vec3<double> &x, double bar);
  /// Adds bar * (unknown k of face f's left cell reconstructed at the face centroid):
  /// w_L + G_L . (x_f - x_L), with the dependence on x_f.
  void add_face_value(const discretization::FlowResidual &res,
                      const discretization::LocalState &state, PetscInt f, int k, double bar);
};

/// Lagrangian part: sum over flux faces of lambda_f . M_f with lambda_f = psi_L [L owned] -
/// psi_R [R owned]; psi holds nv values per local cell (ghosts updated); R is linearized at
/// `state` (at its time level).  Collective.
PetscErrorCode add_residual(const discretization::FlowResidual &res,
                            const discretization::LocalState &state, const std::vector<double> &psi,
                            Sensitivities &s);

struct Gradient {
  std::vector<ParameterGradient> parameters;
  std::vector<Vec3<double>> X; ///< dJ/dX per local vertex (summed over all ranks' contributions)
};

/// Chains G -> (w, geometry, boundary data), boundary data -> (parameters, geometry),
/// geometry -> X (the parameters of the ParameterRegistry: the constant ones, with
/// `time_dependent` all), and sums over ranks; `state` is the local state the pieces were
/// linearized at.  After it, s.wbar holds dScalar/dw (local cells, this rank's share).
/// With `deferred`, the geometry adjoints are added to *deferred instead of being chained to X
/// (gradient->X stays empty): the chain is linear, so a sweep over many levels chains their sum
/// once (geometry_reverse, mesh::sum_vertex_copies); with `deferred_coefficients` as well, so are
/// the least-squares coefficients' adjoints (LeastSquaresGradient::reverse_coefficients into
/// *deferred first); a turbulence model's wall-distance adjoints (one per local cell) are then
/// added to *deferred_wall_distance, to be chained with the geometry's (FlowResidual::
/// wall_distance_reverse: the wall distance is a function of the fixed mesh, the same at every
/// level).  Collective.
PetscErrorCode
finish(const discretization::FlowResidual &res, const discretization::LocalState &state,
       Sensitivities &s, Gradient *gradient, bool time_dependent = false,
       geometry::GeometryBar *deferred = nullptr,
       discretization::LeastSquaresGradient::CoefficientBar *deferred_coefficients = nullptr,
       std::vector<double> *deferred_wall_distance = nullptr);

} // namespace karman::adjoint
