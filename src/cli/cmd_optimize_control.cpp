// `karman optimize` of control entries (parameter, time-function, per-step: optimization/
// control_optimization.hpp): flow control and identification of a steady or unsteady case
// (forward + adjoint per function, no mesh deformation).  Files: see cmd_optimize.cpp.
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/commands.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/logger.hpp"
#include "karman/solver/solver_options.hpp"
#include "karman/optimization/control_optimization.hpp"
#include "karman/optimization/kkt_check.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace karman::cli {
namespace fs = std::filesystem;

namespace {

/// OUTDIR/controls.csv: t and, per time-function or per-step entry, its boundary parameter at
/// every level at the start and at the best design (already applied).  Collective.
PetscErrorCode write_controls(MPI_Comm comm, const std::string &dir,
                              const optimization::ControlOptimization &problem,
                              const std::vector<std::string> &functions,
                              const std::vector<std::vector<double>> &series_start) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::vector<std::vector<double>> series_best(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i)
    PetscCall(problem.series(functions[i], &series_best[i]));
  if (functions.empty() || rank != 0) PetscFunctionReturn(0);
  std::ofstream out(fs::path(dir) / "controls.csv");
  out << "t";
  for (const auto &f : functions) out << "," << f << ".start," << f << ".best";
  out << "\n";
  for (long n = 1; n <= problem.steps(); ++n) {
    out << printf_string("%.12g", n * problem.dt());
    for (std::size_t i = 0; i < functions.size(); ++i)
      out << printf_string(",%.15e,%.15e", series_start[i][n - 1], series_best[i][n - 1]);
    out << "\n";
  }
  PetscFunctionReturn(0);
}

/// Identification (probe matching): the misfit at x and the parameters' uncertainty, logged and
/// as JSON (*j unchanged for other objectives or more than 20 variables).  Collective.
PetscErrorCode identification_summary(MPI_Comm comm, optimization::ControlOptimization &problem,
                                      const std::vector<double> &x, nlohmann::json *j) {
  PetscFunctionBeginUser;
  const optimization::OptimizationProblem &p = problem.problem();
  bool least_squares = false;
  PetscCall(problem.least_squares(&least_squares));
  if (!least_squares || p.names.size() > 20) PetscFunctionReturn(0);
  optimization::Identification id;
  PetscCall(problem.identify(x, 1e-4, &id));
  nlohmann::json ji = {{"misfit", id.misfit},
                       {"observations", id.observations},
                       {"estimate_ok", id.ok},
                       {"hessian", id.hessian},
                       {"covariance", id.covariance}};
  PetscCall(log_info(comm, "identification: misfit %.6e over %ld observations%s", id.misfit,
                     id.observations,
                     id.ok ? "" : " (no uncertainty estimate: Hessian not positive definite)"));
  for (std::size_t i = 0; i < p.names.size(); ++i) {
    ji["parameters"][p.names[i]] = {
        {"value", id.values[i]},
        {"standard_deviation", id.standard_deviation[i]},
        {"relative_standard_deviation",
         id.values[i] != 0 ? id.standard_deviation[i] / std::abs(id.values[i]) : 0.0}};
    PetscCall(log_info(comm, "  %s = %.12g +- %.3e (one standard deviation)", p.names[i].c_str(),
                       id.values[i], id.standard_deviation[i]));
  }
  (*j)["identification"] = ji;
  PetscFunctionReturn(0);
}

/// The per-evaluation output of a control campaign: a history row, a progress line.
struct ControlProgress {
  MPI_Comm comm = MPI_COMM_NULL;
  optimization::ControlOptimization *problem = nullptr;
  long max_evaluations = 0;
  HistoryFiles files;
  std::map<long, std::pair<std::vector<double>, optimization::Evaluation>> seen;
  long computed = 0;
  double start = 0;

  PetscErrorCode observe(long k, const std::vector<double> &x, const optimization::Evaluation &e,
                         bool replayed) {
    PetscFunctionBeginUser;
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    const optimization::OptimizationProblem &p = problem->problem();
    seen[k] = {x, e};
    const nlohmann::json d = details_of(e);
    const std::vector<double> a = problem->physical(x);
    if (rank == 0)
      files.write(
          k, replayed, e, 15, printf_string(",%.15e,%.15e", detail(d, "J"), detail(d, "penalty")),
          printf_string(",%.6e,%.4f,%.4f,%ld,%.1f", detail(d, "gradient_norm"),
                        detail(d, "forward_time"), detail(d, "adjoint_time"),
                        static_cast<long>(detail(d, "recomputed")), detail(d, "forward_memory")),
          a);
    if (replayed) PetscFunctionReturn(0);
    ++computed;
    if (!e.ok) {
      PetscCall(log_info(comm, "evaluation %3ld  FAILED (%s): the optimizer backs off", k,
                         e.failure.c_str()));
      PetscFunctionReturn(0);
    }
    std::string vars;
    for (std::size_t i = 0; i < std::min<std::size_t>(a.size(), 4); ++i)
      vars += printf_string("%s%s %.10g", i ? ", " : "  ", p.names[i].c_str(), a[i]);
    const double eta = (MPI_Wtime() - start) / computed * std::max(0L, max_evaluations - k - 1);
    PetscCall(log_info(comm,
                       "evaluation %3ld  J %.12g%s  |dJ/dx| %.3e%s%s  %.1f s  ETA <= %.1f min", k,
                       e.f, constraint_text(p, e).c_str(), detail(d, "gradient_norm"), vars.c_str(),
                       a.size() > 4 ? ", ..." : "",
                       detail(d, "forward_time") + detail(d, "adjoint_time"), eta / 60));
    PetscFunctionReturn(0);
  }
};

/// summary.json of a control campaign; *kkt the optimality check of the best design.  Collective.
PetscErrorCode control_summary(MPI_Comm comm, const std::string &dir, const config::CaseConfig &cfg,
                               const std::string &algorithm,
                               optimization::ControlOptimization &problem,
                               const optimization::OptimizationResult &result,
                               const optimization::Evaluation &best,
                               const ControlProgress &progress, optimization::KktReport *kkt) {
  PetscFunctionBeginUser;
  const optimization::OptimizationProblem &p = problem.problem();
  nlohmann::json j = campaign_summary(cfg, algorithm, result, best.f);
  const nlohmann::json bd = nlohmann::json::parse(best.details);
  j["J"] = bd["J"];
  j["penalty"] = bd["penalty"];
  const optimization::Evaluation &first = progress.seen.begin()->second.second;
  if (first.ok) j["initial_objective"] = first.f;
  if (p.names.size() <= 100) { // per-step controls: controls.csv
    const std::vector<double> a = problem.physical(result.x), a0 = problem.physical(p.start);
    for (std::size_t i = 0; i < p.names.size(); ++i) {
      j["design"][p.names[i]] = a[i];
      j["initial_design"][p.names[i]] = a0[i];
    }
  }
  for (std::size_t i = 0; i < p.constraints.size(); ++i)
    j["constraints"][p.constraints[i].name] = {{"value", best.c[i]},
                                               {"bound", p.constraints[i].value}};
  *kkt = optimization::check_kkt(p, result.x, best);
  j["kkt"] = kkt_json(p, *kkt);
  PetscCall(identification_summary(comm, problem, result.x, &j));
  j["wall_time"] = MPI_Wtime() - progress.start;
  PetscCall(write_summary(comm, dir, j));
  PetscFunctionReturn(0);
}

} // namespace

/// `karman optimize` of a design: list of control entries (see the file comment).
PetscErrorCode run_control_optimize(MPI_Comm comm, const CliArgs &args,
                                    const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  FaultHook fault; // crash tests (forward: N >= 2, the kill is timed at half the previous
                   // evaluation's forward run)
  PetscCall(campaign_fault_hook(comm, {"forward", "adjoint"}, 1, "a control optimization", &fault));
  const char *kill = std::getenv("KARMAN_TEST_KILL");
  PetscCheck(!kill || std::strncmp(kill, "forward:", 8) != 0 || std::atol(kill + 8) >= 2, comm,
             PETSC_ERR_USER_INPUT,
             "environment variable KARMAN_TEST_KILL: forward:N needs N >= 2 for a control "
             "optimization (the kill time is half of the previous evaluation's forward run)");
  // the journal replays evaluations, each of which would choose its own steps
  PetscCheck(!fc.unsteady() || !solver::time_options().get(cfg).adaptive(), comm,
             PETSC_ERR_USER_INPUT,
             "%s: time.dt: auto in an optimization campaign: each design would take its own "
             "steps, so J would jump between designs by the time-discretization error and a "
             "restarted campaign could not replay its journal; set time.dt to a number (karman "
             "run shows the steps dt auto takes: summary.json dt_range); karman adjoint and "
             "verify accept dt auto",
             cfg.file().c_str());
  optimization::ControlOptimization problem;
  PetscCall(problem.setup(fc, args.output_dir, fault));
  const optimization::OptimizationProblem &p = problem.problem();
  optimization::OptimizerOptions o = optimizer_options(cfg, args);
  const std::string algorithm = optimization::resolve_algorithm(o.algorithm, p);
  PetscCall(log_campaign(
      comm,
      printf_string(
          "optimize %s: %zu control variables, %zu constraints, %s%s, at most %ld evaluations "
          "(%s)",
          cfg.file().c_str(), p.names.size(), p.constraints.size(), algorithm.c_str(),
          o.algorithm == "auto" ? " (auto)" : "", o.max_evaluations,
          fc.unsteady() ? "unsteady: forward + unsteady adjoint per function" : "steady"),
      p));
  // the boundary parameters given per level by the design (time-function, per-step entries)
  std::vector<std::string> functions;
  for (const auto &e : problem.entries())
    if (!e.function.empty()) functions.push_back(e.function);
  std::vector<std::vector<double>> series_start;
  for (const auto &f : functions) {
    PetscCall(problem.apply(p.start));
    series_start.emplace_back();
    PetscCall(problem.series(f, &series_start.back()));
  }
  ControlProgress progress;
  progress.comm = comm, progress.problem = &problem, progress.max_evaluations = o.max_evaluations;
  if (rank == 0)
    progress.files.open(args.output_dir, p, ",J,penalty",
                        ",gradient_norm,forward_time,adjoint_time,recomputed,forward_memory_mib");
  progress.start = MPI_Wtime();
  const optimization::Evaluator evaluator = [&](const std::vector<double> &x,
                                                optimization::Evaluation *e) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(problem.evaluate(x, e));
    const optimization::ControlRecord &r = problem.last();
    e->details = nlohmann::json({{"J", r.J},
                                 {"penalty", r.penalty},
                                 {"gradient_norm", r.gradient_norm},
                                 {"forward_time", r.forward_time},
                                 {"adjoint_time", r.adjoint_time},
                                 {"recomputed", r.recomputed},
                                 {"forward_memory", r.forward_memory}})
                     .dump();
    PetscFunctionReturn(0);
  };
  optimization::OptimizationResult result;
  PetscCall(optimization::optimize(
      comm, p, evaluator, o,
      [&](long k, const std::vector<double> &x, const optimization::Evaluation &e, bool replayed) {
        return progress.observe(k, x, e, replayed);
      },
      &result));
  progress.files.close();
  PetscCall(log_info(comm,
                     "optimizer: %s after %ld evaluations (%ld replayed, %ld failed); best "
                     "objective %.12g",
                     result.status.c_str(), result.evaluations, result.replayed, result.failed,
                     result.f));
  // the best design's evaluation (from the history: nothing is recomputed)
  const optimization::Evaluation *best = nullptr;
  for (const auto &[k, xe] : progress.seen)
    if (xe.first == result.x && xe.second.ok) best = &xe.second;
  PetscCheck(best, comm, PETSC_ERR_PLIB, "the optimizer's answer is not one of its evaluations");
  PetscCall(problem.apply(result.x));
  PetscCall(write_controls(comm, args.output_dir, problem, functions, series_start));
  optimization::KktReport kkt;
  PetscCall(control_summary(comm, args.output_dir, cfg, algorithm, problem, result, *best, progress,
                            &kkt));
  const nlohmann::json bd = nlohmann::json::parse(best->details);
  PetscCall(log_info(comm, "best design: objective %.12g (J %.12g + penalty %.6g)", best->f,
                     bd["J"].get<double>(), bd["penalty"].get<double>()));
  PetscCall(log_info(comm,
                     "KKT: residual %.3e (|projected gradient| / |df| = %.3e / %.3e), largest "
                     "constraint violation %.3e, %ld active bounds, %ld wrong-signed multipliers",
                     kkt.residual, kkt.lagrangian_gradient_norm, kkt.objective_gradient_norm,
                     kkt.max_violation, kkt.active_lower + kkt.active_upper, kkt.wrong_signs));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
