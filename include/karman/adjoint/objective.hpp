// Objectives J(w; X, a) of the steady adjoint, from the case's `objective` section
// (src/adjoint/README.md, eq. 2):
//   drag / lift / force   c = weight * e . F / (q S_ref),  F = sum_f (p_f S_f - mu (grad u)_f S_f)
//   moment                c = weight * a . sum_f (x_f - x_0) x F_f / (q S_ref L_ref)  (a = e_z)
//   pressure-difference   weight * (p(x_1) - p(x_2))    (linear reconstruction in the cell)
//   pressure-drop         weight * (<p>_A - <p>_B)      (area averages of face pressures)
//   probe-match           weight * sum_i sum_k c_k (phi_k(x_i) - phi_k^obs)^2
//   sum                   sum of terms
// value() evaluates J at a local state (discretization::LocalState); reverse() adds the
// explicit partial derivatives (w, gradients, geometry) there to a Sensitivities object.
#pragma once

#include "karman/adjoint/sensitivities.hpp"
#include "karman/solver/forces.hpp"

#include <memory>
#include <string>
#include <vector>

namespace karman::adjoint {

class Objective {
public:
  /// Reads objective (and reference values) from the case; checks walls, patches and probe
  /// points against the mesh.  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const config::CaseConfig &cfg);
  /// The same from `objective`, a section with the keys of the case's objective section (a
  /// flow constraint of an optimization).  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const config::CaseConfig &cfg,
                       const config::Section &objective);
  /// J at the local state `state`.  Collective.
  PetscErrorCode value(const discretization::FlowResidual &res,
                       const discretization::LocalState &state, double *J) const;
  /// Adds scale * dJ/d(inputs) (explicit dependence) at `state` to s.  Collective.
  PetscErrorCode reverse(const discretization::FlowResidual &res,
                         const discretization::LocalState &state, Sensitivities &s,
                         double scale = 1.0) const;
  const std::string &description() const { return description_; }
  /// Unsteady: sets the time of the observations of probe-match terms (linear interpolation
  /// of observations_file).
  void set_time(double t);

private:
  struct Term {
    std::string type;
    double weight = 1;
    std::vector<int> walls;
    Vec3<double> direction;
    int patch_a = -1, patch_b = -1;
    std::vector<Vec3<double>> points;
    std::vector<double> observed, component_weights;
    std::vector<double> obs_times;             ///< observations in time: times and
    std::vector<std::vector<double>> obs_rows; ///< one row of observed values per time
    std::shared_ptr<solver::PointProbes> probes;
  };
  PetscErrorCode parse_term(const discretization::FlowResidual &res, const config::CaseConfig &cfg,
                            const config::Section &sec, Term *t);
  std::vector<Term> terms_;
  solver::ForceScaling scaling_;
  std::string description_;
};

} // namespace karman::adjoint
