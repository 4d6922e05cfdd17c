// The objective J(w; X, a) of the adjoint, from the case's `objective` section (adjoint/README.md,
// eq. 2): one registered objective term (objective_terms.hpp) or a weighted sum of terms,
//   J = weight * sum_i weight_i J_i.
// value() evaluates J at a local state (discretization::LocalState); reverse() adds the explicit
// partial derivatives (w, gradients, geometry, parameters) there to a Sensitivities object.
#pragma once

#include "karman/adjoint/objective_terms.hpp"

#include <memory>
#include <string>
#include <vector>

namespace karman::adjoint {

class Objective {
public:
  /// Reads the objective from the case; checks walls, patches and probe points against the
  /// mesh.  Collective.
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
  /// True if every term is a sum of squared misfits to data (identification).
  bool least_squares() const;
  /// The number of data values the terms fit per time level (ObjectiveTerm::data_count).
  long data_count(const discretization::FlowResidual &res) const;
  /// Unsteady: sets the time of the terms' values (probe-match's observations in time).
  void set_time(double t);

private:
  struct Term {
    const ObjectiveType *type = nullptr;
    double weight = 1;
    std::shared_ptr<ObjectiveTerm> term; // (copies of an Objective share their terms)
  };
  std::vector<Term> terms_;
  std::string description_;
};

} // namespace karman::adjoint
