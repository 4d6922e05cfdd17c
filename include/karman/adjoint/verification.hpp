// Tools to verify adjoint gradients against the forward solver (karman verify, tests):
// re-solving the steady problem after a parameter or the mesh changed, warm-started
// from the converged state, and a smooth shape perturbation.
#pragma once

#include "karman/adjoint/objective.hpp"
#include "karman/solver/steady_solver.hpp"

namespace karman::adjoint {

/// Newton (no pseudo-time) from w0 to ||R|| <= atol for the FlowResidual's current inputs;
/// returns the objective and leaves the solution in w.  Collective.
PetscErrorCode resolve_objective(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w0, Vec w, double *J,
                                 int *newton_iterations);

/// A smooth bump on wall `patch`: dX_v = n_0 exp(-|x_v - x_0|^2 / sigma^2) for every vertex,
/// where x_0 is the wall face centroid furthest along `towards` from the wall's centre,
/// n_0 its unit normal pointing into the fluid, and sigma a third of the wall's radius.
/// It moves the wall and decays smoothly into the volume.  Collective.
PetscErrorCode bump_displacement(const discretization::FlowResidual &res, int patch,
                                 const Vec3<double> &towards, std::vector<Vec3<double>> *dX);

/// Sum over owned vertices of a . b (vertex fields), over all ranks.  Collective.
PetscErrorCode vertex_dot(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &a,
                          const std::vector<Vec3<double>> &b, double *value);

} // namespace karman::adjoint
