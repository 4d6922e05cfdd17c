// What the campaigns of `karman optimize` write alike (see include/karman/cli/campaign_output.hpp).
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/fault_injection.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/io/atomic_file.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"
#include "karman/optimization/optimization_options.hpp"

#include <cstdio>

namespace karman::cli {
namespace fs = std::filesystem;
using optimization::ConstraintSense;

/// The KKT report as JSON (summary.json).
nlohmann::json kkt_json(const optimization::OptimizationProblem &p,
                        const optimization::KktReport &kkt) {
  nlohmann::json jk = {{"residual", kkt.residual},
                       {"lagrangian_gradient_norm", kkt.lagrangian_gradient_norm},
                       {"objective_gradient_norm", kkt.objective_gradient_norm},
                       {"max_violation", kkt.max_violation},
                       {"max_relative_violation", kkt.max_relative_violation},
                       {"bound_violation", kkt.bound_violation},
                       {"active_lower_bounds", kkt.active_lower},
                       {"active_upper_bounds", kkt.active_upper},
                       {"wrong_signs", kkt.wrong_signs}};
  for (std::size_t i = 0; i < p.constraints.size(); ++i)
    jk["constraints"][p.constraints[i].name] = {{"multiplier", kkt.multipliers[i]},
                                                {"active", static_cast<bool>(kkt.active[i])},
                                                {"violation", kkt.violations[i]},
                                                {"relative_violation", kkt.relative_violations[i]}};
  return jk;
}

/// The campaign's first log lines: its size and algorithm (`what`), then each constraint.
PetscErrorCode log_campaign(MPI_Comm comm, const std::string &what,
                            const optimization::OptimizationProblem &p) {
  PetscFunctionBeginUser;
  PetscCall(log_info(comm, "%s", what.c_str()));
  for (const auto &c : p.constraints)
    PetscCall(log_info(comm, "  constraint %s %s %.10g", c.name.c_str(),
                       c.sense == ConstraintSense::Equal
                           ? "="
                           : (c.sense == ConstraintSense::LessEqual ? "<=" : ">="),
                       c.value));
  PetscFunctionReturn(0);
}

PetscErrorCode log_kkt(MPI_Comm comm, const optimization::KktReport &kkt) {
  return log_info(comm,
                  "KKT: residual %.3e (|projected Lagrangian gradient| / |dJ/da| = %.3e / %.3e), "
                  "largest constraint violation %.3e (relative %.3e), %ld active bounds, %ld "
                  "wrong-signed multipliers",
                  kkt.residual, kkt.lagrangian_gradient_norm, kkt.objective_gradient_norm,
                  kkt.max_violation, kkt.max_relative_violation,
                  kkt.active_lower + kkt.active_upper, kkt.wrong_signs);
}

/// "  name value" of every constraint of an evaluation (its progress line).
std::string constraint_text(const optimization::OptimizationProblem &p,
                            const optimization::Evaluation &e) {
  std::string cons;
  for (std::size_t i = 0; i < e.c.size(); ++i)
    cons += printf_string("  %s %.8g", p.constraints[i].name.c_str(), e.c[i]);
  return cons;
}

/// The summary.json entries every campaign has.
nlohmann::json campaign_summary(const config::CaseConfig &cfg, const std::string &algorithm,
                                const optimization::OptimizationResult &result, double objective) {
  nlohmann::json j;
  j["case"] = cfg.file();
  j["algorithm"] = algorithm;
  j["status"] = result.status;
  j["evaluations"] = result.evaluations;
  j["replayed"] = result.replayed;
  j["failed"] = result.failed;
  j["objective"] = objective;
  return j;
}

PetscErrorCode best_design_evaluation(MPI_Comm comm, const std::vector<double> &x,
                                      const optimization::Evaluation &again,
                                      const GoodEvaluations &good, optimization::Evaluation *best,
                                      bool *reevaluated, nlohmann::json *summary) {
  PetscFunctionBeginUser;
  *best = again;
  if (reevaluation_fault()) { // (the tests of this fallback)
    best->ok = false;
    best->failure = "KARMAN_TEST_FAIL_REEVALUATION is set";
  }
  *reevaluated = best->ok;
  *summary = nlohmann::json::object();
  if (best->ok) PetscFunctionReturn(0);
  const std::string why = best->failure;
  const auto *recorded = good.find(x);
  PetscCheck(recorded, comm, PETSC_ERR_NOT_CONVERGED,
             "the best design of the optimizer could not be evaluated again: %s", why.c_str());
  *best = recorded->e;
  (*summary)["reevaluated"] = false;
  (*summary)["reevaluation_failure"] = why;
  (*summary)["best_evaluation"] = recorded->index;
  PetscCall(log_warning(comm,
                        "the best design of the optimizer could not be evaluated again (%s); its "
                        "figures are those of evaluation %ld, which found it",
                        why.c_str(), recorded->index));
  PetscFunctionReturn(0);
}

PetscErrorCode fail_unevaluated_best(MPI_Comm comm, const nlohmann::json &summary,
                                     const std::string &dir) {
  PetscFunctionBeginUser;
  const std::string why = summary.at("reevaluation_failure").get<std::string>();
  SETERRQ(comm, PETSC_ERR_NOT_CONVERGED,
          "the best design of the optimizer could not be evaluated again: %s; %s/summary.json has "
          "the design with the objective, constraints and KKT check of evaluation %ld, which "
          "found it (the history files and the journal are complete); its mesh and flow "
          "(optimized.msh, flow_optimized) were not written (--restart evaluates it again)",
          why.c_str(), dir.c_str(), summary.at("best_evaluation").get<long>());
}

PetscErrorCode write_json(MPI_Comm comm, const std::string &path, const nlohmann::json &j) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  if (rank == 0) {
    const std::string text = j.dump(2) + "\n";
    error = io::write_file_atomically(path, [&](std::FILE *f) { std::fputs(text.c_str(), f); });
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode write_summary(MPI_Comm comm, const std::string &dir, const nlohmann::json &j) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::ofstream out(fs::path(dir) / "summary.json");
    out << j.dump(2) << "\n";
  }
  PetscFunctionReturn(0);
}

optimization::OptimizerOptions optimizer_options(const config::CaseConfig &cfg,
                                                 const CliArgs &args) {
  const optimization::OptimizationOptions opt = optimization::optimization_options().get(cfg);
  optimization::OptimizerOptions o;
  o.algorithm = opt.algorithm;
  o.max_evaluations = opt.max_evaluations;
  o.xtol_rel = opt.xtol_rel;
  o.ftol_rel = opt.ftol_rel;
  o.projection_steps = opt.projection_steps;
  o.kkt_tolerance = opt.kkt_tolerance;
  o.journal = (fs::path(args.output_dir) / "optimization-journal.jsonl").string();
  o.restart = args.restart;
  return o;
}

/// The number `key` of an evaluation's details (JSON), 0 if absent.
double detail(const nlohmann::json &d, const char *key) {
  return d.contains(key) ? d[key].get<double>() : 0.0;
}

nlohmann::json details_of(const optimization::Evaluation &e) {
  return e.details.empty() ? nlohmann::json::object() : nlohmann::json::parse(e.details);
}

namespace {

/// DIR/STEM.h5, then STEM.prev.h5, STEM.prev2.h5, ...: the i-th newest kept state's file.
std::string state_file(const std::string &dir, const std::string &stem, std::size_t i) {
  const std::string suffix = i == 0   ? ".h5"
                             : i == 1 ? ".prev.h5"
                                      : ".prev" + std::to_string(i) + ".h5";
  return (fs::path(dir) / (stem + suffix)).string();
}

} // namespace

PetscErrorCode save_campaign_state(const driver::FlowCase &fc, const std::string &dir,
                                   const std::string &stem, long index, Vec w) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = fc.mesh();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  if (rank == 0)
    for (std::size_t i = kKeptCampaignStates - 1; i-- > 0;)
      if (fs::exists(state_file(dir, stem, i)))
        fs::rename(state_file(dir, stem, i), state_file(dir, stem, i + 1));
  PetscCallMPI(MPI_Barrier(m.comm));
  PetscCall(io::write_state_h5(
      m, fc.residual().equations(), m.coordinates, state_file(dir, stem, 0), w,
      {{"evaluation", static_cast<double>(index)}}, fc.config().problem_attributes()));
  PetscFunctionReturn(0);
}

PetscErrorCode load_campaign_state(const driver::FlowCase &fc, const std::string &dir,
                                   const std::string &stem, long index, Vec w, bool *found) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = fc.mesh();
  *found = false;
  for (std::size_t i = 0; i < kKeptCampaignStates; ++i) {
    const std::string path = state_file(dir, stem, i);
    int exists = fs::exists(path);
    PetscCallMPI(MPI_Bcast(&exists, 1, MPI_INT, 0, m.comm));
    if (!exists) continue;
    double k = -1;
    PetscCall(io::read_real_attribute_h5(m.comm, path, "evaluation", &k));
    if (static_cast<long>(k) != index) continue;
    PetscCall(io::read_state_h5(m, fc.residual().equations(), path, w));
    *found = true;
    break;
  }
  PetscFunctionReturn(0);
}

} // namespace karman::cli
