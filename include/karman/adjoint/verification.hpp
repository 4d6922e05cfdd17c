// Tools to verify adjoint gradients against the forward solver (karman verify, tests):
// re-solving the steady problem after a parameter or the mesh changed, warm-started
// from the converged state, and a smooth shape perturbation.
#pragma once

#include "karman/adjoint/objective.hpp"
#include "karman/solver/steady_solver.hpp"

namespace karman::adjoint {

/// Newton (no pseudo-time, at most 20 steps and solver.max_iterations, `auto` without its LU
/// fallback) from w0 to ||R|| <= atol for the FlowResidual's current inputs, and if that fails
/// the case's own continuation from w0; returns the objective (and the Newton steps of both) and
/// leaves the solution in w.  Collective.
PetscErrorCode resolve_objective(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w0, Vec w, double *J,
                                 int *newton_iterations);

/// A smooth bump on wall `patch`: dX_v = n_0 exp(-|x_v - x_0|^2 / sigma^2) for every vertex,
/// where x_0 is the wall face centroid furthest along `towards` from the wall's centre,
/// n_0 its unit normal pointing into the fluid, and sigma a third of the wall's radius.
/// It moves the wall and decays smoothly into the volume.  Collective.
PetscErrorCode bump_displacement(const discretization::FlowResidual &res, int patch,
                                 const Vec3<double> &towards, std::vector<Vec3<double>> *dX);

/// A typical size of parameter `name` of value `value` (its value, or the case's reference
/// scale of its kind when it is zero): the scale of the finite-difference steps.
double parameter_scale(const std::string &name, double value,
                       const discretization::FlowResidual &res);

struct FiniteDifferenceStep {
  double step = 0, fd = 0, relative_difference = 0;
};

/// A parameter's adjoint gradient against central differences (J(a + h) - J(a - h)) / 2h
/// for h = {1e-3, 1e-4, 1e-5, 1e-6} x its scale, each J a re-solve from w.
struct ParameterCheck {
  double best_fd = 0, best_relative_difference = 1e300;
  /// agreement to 1e-6 relative, or within the round-off 1e-13 |J| / h of the quotient, at
  /// some step
  bool ok = false;
  std::vector<FiniteDifferenceStep> steps;
};

/// Checks parameter `p` (value and adjoint gradient) of the objective J at the converged state
/// w; the parameter is restored afterwards.  Collective.
PetscErrorCode check_parameter(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                               const Objective &objective, Vec w, double J,
                               const ParameterGradient &p, ParameterCheck *check);

struct TaylorStep {
  double eps = 0, remainder = 0, rate = 0; ///< rate: against the previous step (0 for the first)
};

/// Taylor test of dJ/dX for the bump on `patch` (bump_displacement towards (1, 1, 0)):
///   r(eps) = |J(X + eps dX) - J(X) - eps dJ/dX . dX|,  eps = {0.4, 0.2, 0.1, 0.05, ...} h
/// with h the smallest wall-face-to-cell-centre distance of the patch (no cell inverts),
/// halved further (at most 10 steps) until the last two rates are >= 1.9, the asymptotic range
/// (on the coarse DFG 3D-1Z mesh the third-order term dominates down to eps ~ 5e-4: rates 1.31,
/// 1.74, 1.91, 1.96, 1.98 from eps = 2e-3), or r falls to 1e-11 |J| (solver noise); the mesh is
/// moved back afterwards.  taylor_converged: the test's verdict.  Collective.
PetscErrorCode shape_taylor_test(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w, double J,
                                 const std::vector<Vec3<double>> &dJdX, int patch,
                                 double *directional_derivative, std::vector<TaylorStep> *steps);

/// The verdict of a Taylor test: its last two rates are >= 1.9 (the second-order range).
bool taylor_converged(const std::vector<TaylorStep> &steps);

/// Sum over owned vertices of a . b (vertex fields), over all ranks.  Collective.
PetscErrorCode vertex_dot(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &a,
                          const std::vector<Vec3<double>> &b, double *value);

} // namespace karman::adjoint
