// The case-file keys the adjoint layer owns: the `adjoint` section and the objective section's
// common keys (type, weight, the unsteady statistic and window, the control cost, the terms of a
// sum); each objective type declares its own keys (objective_terms.hpp).
#pragma once

#include "karman/config/section_options.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/solver/solver_options.hpp"

#include <string>
#include <vector>

namespace karman::adjoint {

enum class AdjointSchedule { StoreAll, Revolve };
/// The unsteady objective's statistic over its window (objective.time).
enum class Statistic { Average, Final, Rms, Std };
/// How the levels of a window are weighted in a time average (objective.weighting).
enum class WindowWeighting {
  Uniform, ///< the trapezoidal rule: dt / span inside, dt / (2 span) at both ends
  Hann     ///< proportional to sin^2(pi (t^n - t_first) / span), normalized
};

struct AdjointOptions {
  std::vector<std::string> parameters; ///< reported and verified (empty: all the case has)
  AdjointSchedule schedule = AdjointSchedule::StoreAll;
  long snapshots = 20;
  solver::PreconditionerMatrix preconditioner_matrix = solver::PreconditionerMatrix::Exact;
  double rtol = 1e-10, atol = 1e-30;
  long max_iterations = 1000, initial_guess = 6, recycle = 4, level_max_iterations = 500;
  long save_every = 0;
  bool error_estimate = false; ///< steady: the objective's error estimate (driver/error_estimate)
};

/// The objective section's keys common to every objective type.
struct ObjectiveOptions {
  std::string type = "drag";
  double weight = 1;
  Statistic time = Statistic::Average;
  std::vector<double> window;
  WindowWeighting weighting = WindowWeighting::Uniform;
  double control_cost = 0;
  std::string control_wall;
};

const config::SectionOptions<AdjointOptions> &adjoint_options();
/// The case-file text of a schedule ("store-all", "revolve") and of a statistic ("average", ...).
const char *schedule_name(AdjointSchedule s);
const char *statistic_name(Statistic s);
/// The common keys; the `type` key's choices are `types` (the registered objective types: name
/// and help).
config::SectionOptions<ObjectiveOptions>
objective_options(const std::vector<std::pair<std::string, std::string>> &types = {});

/// Keeps the gradients of the parameters named in the case's adjoint.parameters (all if
/// empty); a name the case does not have is an error listing the ones it has.
PetscErrorCode select_parameters(const discretization::FlowResidual &res,
                                 const config::CaseConfig &cfg,
                                 std::vector<discretization::ParameterGradient> *parameters);

} // namespace karman::adjoint
