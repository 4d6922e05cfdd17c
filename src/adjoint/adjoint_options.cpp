// The adjoint layer's case-file keys (see include/karman/adjoint/adjoint_options.hpp).
#include "karman/adjoint/adjoint_options.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"

namespace karman::adjoint {

using namespace config::key;
using config::KeyType;
using config::SectionOptions;

namespace {

const std::vector<std::pair<std::string, AdjointSchedule>> kSchedules = {
    {"store-all", AdjointSchedule::StoreAll}, {"revolve", AdjointSchedule::Revolve}};
const std::vector<std::pair<std::string, Statistic>> kStatistics = {{"average", Statistic::Average},
                                                                    {"final", Statistic::Final},
                                                                    {"rms", Statistic::Rms},
                                                                    {"std", Statistic::Std}};

template <typename E>
const char *name_of(const std::vector<std::pair<std::string, E>> &table, E value) {
  for (const auto &[text, v] : table)
    if (v == value) return text.c_str();
  return "?";
}

} // namespace

const char *schedule_name(AdjointSchedule s) {
  return name_of(kSchedules, s);
}

const char *statistic_name(Statistic s) {
  return name_of(kStatistics, s);
}

const SectionOptions<AdjointOptions> &adjoint_options() {
  static const auto options =
      SectionOptions<AdjointOptions>("adjoint", "the adjoint (karman adjoint, karman verify)")
          .key(typed("parameters", KeyType::NameList, "[]",
                     "parameters whose gradient is reported and verified, e.g. "
                     "[fluid.viscosity, boundaries.cylinder.omega]; empty: all the case has"),
               &AdjointOptions::parameters)
          .choice(choice("schedule", "store-all",
                         "unsteady: store-all (every state on disk: scratch files in the output's "
                         "trajectory folder, one per rank, removed at the end) or revolve (at "
                         "most `snapshots` states in memory, binomial schedule, the rest "
                         "recomputed)",
                         {}),
                  &AdjointOptions::schedule, kSchedules)
          .key(integer("snapshots", "20", "unsteady, revolve: the storage budget in states", 1),
               &AdjointOptions::snapshots)
          .choice(choice("preconditioner_matrix", "exact",
                         "unsteady, direct: the transposed GMRES solves (exact Jacobian, relative "
                         "tolerance adjoint.rtol) are preconditioned by the LU factors of the full "
                         "Jacobian (exact) or of its face-neighbour part (compact), reused across "
                         "levels as solver.refactor_iterations says; iterative always uses "
                         "multigrid on the compact matrix",
                         {}),
                  &AdjointOptions::preconditioner_matrix,
                  {{"exact", solver::PreconditionerMatrix::Exact},
                   {"compact", solver::PreconditionerMatrix::Compact}})
          .key(positive("rtol", "1e-10",
                        "relative tolerance of the transposed (adjoint) linear solves, as the "
                        "forward's solver.rtol: gradients to ~1e-9 relative (-adj_ksp_rtol "
                        "overrides it)"),
               &AdjointOptions::rtol)
          .key(positive("atol", "1e-30",
                        "absolute tolerance of the transposed (adjoint) linear solves "
                        "(-adj_ksp_atol overrides it)"),
               &AdjointOptions::atol)
          .key(integer("max_iterations", "1000",
                       "steady: maximum iterations of the transposed solve (with a Krylov "
                       "-adj_ksp_type; the default preonly LU takes one; -adj_ksp_max_it "
                       "overrides it)",
                       1),
               &AdjointOptions::max_iterations)
          .key(integer("initial_guess", "6",
                       "unsteady, Krylov solves: each level's transposed solve starts from the "
                       "combination of the adjoints of the last N levels with the least residual "
                       "(a smooth adjoint is extrapolated to ~(dt/T)^N: fewer iterations to the "
                       "same tolerance); 0: from zero",
                       0),
               &AdjointOptions::initial_guess)
          .key(integer("recycle", "4",
                       "unsteady, iterative: the transposed GMRES solves carry this many vectors "
                       "from level to level (GCRO-DR Krylov recycling: the slowest modes of one "
                       "level's solve are deflated from the next ones' from their first "
                       "iteration); each cycle adds the KSP's restart (20) Arnoldi steps; 0: plain "
                       "GMRES (KSPSolveTranspose; also with any other -adj_ksp_type)",
                       0),
               &AdjointOptions::recycle)
          .key(integer("level_max_iterations", "500",
                       "unsteady: maximum iterations of each level's transposed GMRES solve "
                       "(-adj_ksp_max_it overrides it)",
                       1),
               &AdjointOptions::level_max_iterations)
          .key(integer("save_every", "0",
                       "unsteady: save the adjoint state every N steps so that a killed adjoint "
                       "resumes (karman adjoint --restart); 0: never",
                       0),
               &AdjointOptions::save_every)
          .key(typed("error_estimate", KeyType::Bool, "false",
                     "estimate the objective's discretization error by the adjoint-weighted "
                     "residual on the nested refinement of the mesh (mesh.refine + 1, a .geo "
                     "mesh; unsteady: the spatial error, the time steps kept): corrected value "
                     "and estimated error in gradient.json, the per-cell indicator in "
                     "adjoint.pvd (steady) or error.pvd (unsteady)"),
               &AdjointOptions::error_estimate);
  return options;
}

config::SectionOptions<ObjectiveOptions>
objective_options(const std::vector<std::pair<std::string, std::string>> &types) {
  std::string list;
  std::vector<std::string> names;
  for (const auto &[name, help] : types) {
    list += (list.empty() ? "" : "; ") + name + ": " + help;
    names.push_back(name);
  }
  return SectionOptions<ObjectiveOptions>(
             "objective",
             "quantity of interest (forces are always reported; the objective drives the adjoint)")
      .key(choice("type", "drag", list, names), &ObjectiveOptions::type)
      .key(real("weight", "1.0", "weight of this objective (of this term in a sum)"),
           &ObjectiveOptions::weight)
      .choice(choice("time", "average",
                     "unsteady: the time average of the objective over `window`, its value at the "
                     "final time, its root mean square over `window` (rms: sqrt of the time "
                     "average of its square) or its standard deviation there (std: the r.m.s. of "
                     "its fluctuation about the window's mean, e.g. the r.m.s. lift)",
                     {}),
              &ObjectiveOptions::time, kStatistics)
      .key(typed("window", KeyType::RealList, "[]",
                 "unsteady: [t0, t1] of the time average; empty: the whole run"),
           &ObjectiveOptions::window)
      .choice(choice("weighting", "uniform",
                     "unsteady: the weights of the levels in the window (time average, rms, std): "
                     "uniform (trapezoidal rule) or hann (proportional to sin^2(pi (t - t0) / (t1 "
                     "- t0)), normalized; a periodic signal whose period does not divide the "
                     "window then averages with an error ~(period / window)^3 instead of "
                     "~(period / window), so that a mean drag does not ripple as a forcing "
                     "frequency changes)",
                     {}),
              &ObjectiveOptions::weighting,
              {{"uniform", WindowWeighting::Uniform}, {"hann", WindowWeighting::Hann}})
      .key(nonnegative("control_cost", "0.0",
                       "unsteady: adds control_cost * sum_n dt omega(t^n)^2 for the wall "
                       "`control_wall`"),
           &ObjectiveOptions::control_cost)
      .key(typed("control_wall", KeyType::String, "''",
                 "unsteady: the rotating wall of the control cost"),
           &ObjectiveOptions::control_wall)
      .declare_only(typed("terms", KeyType::TermList, "[]",
                          "sum: the terms, each a map with the keys of this section (type, "
                          "weight, ...)"));
}

UnsteadyAdjointOptions unsteady_adjoint_options(const AdjointOptions &a) {
  UnsteadyAdjointOptions o;
  o.schedule = a.schedule;
  o.snapshots = a.snapshots;
  o.save_every = a.save_every;
  return o;
}

PetscErrorCode select_parameters(const discretization::FlowResidual &res,
                                 const config::CaseConfig &cfg,
                                 std::vector<discretization::ParameterGradient> *parameters) {
  PetscFunctionBeginUser;
  const std::vector<std::string> wanted = adjoint_options().get(cfg).parameters;
  if (wanted.empty()) PetscFunctionReturn(0);
  std::vector<discretization::ParameterGradient> kept;
  std::string known;
  for (const auto &p : *parameters) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto &name : wanted) {
    bool found = false;
    for (const auto &p : *parameters)
      if (p.name == name) kept.push_back(p), found = true;
    PetscCheck(found, res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: adjoint.parameters: the case has no parameter '%s' (it has: %s)",
               cfg.file().c_str(), name.c_str(), known.c_str());
  }
  *parameters = kept;
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
