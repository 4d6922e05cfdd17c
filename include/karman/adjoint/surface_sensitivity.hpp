// Surface sensitivity of an objective on a wall (src/adjoint/README.md, eq. 13): for every
// vertex v of the wall, with n_v the unit normal into the fluid (the face-share weighted
// sum of the wall faces' inward area vectors, normalized) and A_v the vertex's dual area
// (a 1/k share of each touching face of k vertices),
//   s_v = (dJ/dX)_v . n_v          (moving the wall into the fluid by delta increases J by s_v
//   delta) s_v / A_v                      (per unit wall area: the density that converges under
//   refinement)
// Values are summed over the ranks that hold copies of a vertex, so every copy is complete.
#pragma once

#include "karman/discretization/flow_residual.hpp"

#include <vector>

namespace karman::adjoint {

struct SurfaceSensitivity {
  std::vector<Vec3<double>>
      normal;                  ///< per local vertex: unit normal into the fluid (0 off the wall)
  std::vector<double> area;    ///< per local vertex: dual area A_v (0 off the wall)
  std::vector<double> value;   ///< per local vertex: s_v
  std::vector<double> density; ///< per local vertex: s_v / A_v
  std::vector<double> face_density; ///< per face of mesh.boundary_faces(patch): mean vertex density
};

/// The surface sensitivity on boundary `patch` of the shape gradient Xbar = dJ/dX (one
/// entry per local vertex, complete on every copy).  Collective.
PetscErrorCode surface_sensitivity(const discretization::FlowResidual &res, int patch,
                                   const std::vector<Vec3<double>> &Xbar, SurfaceSensitivity *s);

} // namespace karman::adjoint
