// Integrated quantities of a flow state: forces and moments on walls, and point probes.
//
// Force of the fluid on a set of boundary patches, consistent with the discrete
// momentum flux (the same face kernels as the residual):
//   F = sum_f [ p_f S_f - mu (grad u)_f S_f + mu omega e_z x S_f ],   M = sum_f (x_f - x_0) x F_f
// (the last term only on rotating walls: the face traction of the symmetric stress
// mu (grad u + grad u^T), see physics::rotating_wall_traction)
// split into its pressure and viscous parts.  Coefficients: c = 2 F . e / (rho U^2 S_ref).
// Probes interpolate linearly from the cell that contains the point:
//   phi(x) = phi_c + G_c . (x - x_c).
#pragma once

#include "karman/discretization/flow_residual.hpp"

#include <string>
#include <vector>

namespace karman::solver {

struct ForceReport {
  Vec3<double> pressure, viscous; ///< force of the fluid on the walls
  Vec3<double> moment;            ///< total moment about the given centre
  Vec3<double> total() const { return pressure + viscous; }
};

/// Reference values of the force and moment coefficients (case sections fluid, reference):
///   c_F = F . e / (q S_ref),  c_M = M . a / (q S_ref L_ref),  q = rho U_ref^2 / 2,
///   S_ref = L_ref in 2D (per unit depth), reference.area (or L_ref^2) in 3D.
struct ForceScaling {
  double q = 1, area = 1, length = 1;
  Vec3<double> moment_center;
  double force_coefficient(const Vec3<double> &F, const Vec3<double> &e) const {
    return dot(F, e) / (q * area);
  }
  double moment_coefficient(const Vec3<double> &M, const Vec3<double> &a) const {
    return dot(M, a) / (q * area * length);
  }
};

/// The coefficient scaling of the residual's case: its density and reference values.
ForceScaling force_scaling(const discretization::FlowResidual &res);

/// Force and moment on `patches` at the local state `state`.  Collective.
PetscErrorCode wall_force(const discretization::FlowResidual &res,
                          const discretization::LocalState &state, const std::vector<int> &patches,
                          const Vec3<double> &moment_center, ForceReport *report);

/// Per boundary face of `patch` (owned faces, in VtkSeries::surface_faces order): the
/// pressure p_f and the wall shear stress tau = -mu (grad u)_f S_f / |S_f|.
PetscErrorCode wall_stress(const discretization::FlowResidual &res,
                           const discretization::LocalState &state, int patch,
                           std::vector<double> *pressure, std::vector<Vec3<double>> *shear);

/// The first cells' y+ on walls: y+ = d u_tau / nu with d the distance of a wall face's cell
/// centroid from the face's plane and u_tau = sqrt(|tau_w| / rho) (wall_stress).
struct YPlus {
  double max = 0;       ///< the largest over the faces
  double mean = 0;      ///< the area-weighted mean
  Vec3<double> where{}; ///< the face centroid of the largest
  int faces = 0;        ///< wall faces counted (all ranks)
};

/// y+ of the cells next to `patches`, the same on every rank.  Collective.
PetscErrorCode first_cell_y_plus(const discretization::FlowResidual &res,
                                 const discretization::LocalState &state,
                                 const std::vector<int> &patches, YPlus *out);

class PointProbes {
public:
  /// Locates each point in an owned cell of some rank; a point outside the mesh is an error
  /// naming `context` and the point.  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res,
                       const std::vector<Vec3<double>> &points, const std::string &context);
  /// nv values (p, u...) per point, the same on every rank.  Collective.
  PetscErrorCode evaluate(const discretization::FlowResidual &res,
                          const discretization::LocalState &state,
                          std::vector<double> *values) const;
  std::size_t size() const { return points_.size(); }
  const Vec3<double> &point(std::size_t i) const { return points_[i]; }
  /// The local owned cell holding point i, or -1 if another rank holds it.
  PetscInt cell(std::size_t i) const { return cell_[i]; }

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<Vec3<double>> points_;
  std::vector<PetscInt> cell_; ///< local owned cell, or -1 when another rank owns the point
};

} // namespace karman::solver
