// `karman optimize`: shape optimization of a steady case (driver/shape_optimization.hpp,
// driver/optimizer.hpp); control optimization and identification: driver/control_optimization.hpp.
// The `design:` list gives the variables, the objective section the function to minimize,
// `constraints:` the constraints, `optimization:` the algorithm and the mesh deformation.  Per
// evaluation (one forward solve warm-started from the last good design, one adjoint per flow
// function, the deformation and its reverse):
//   OUTDIR/optimization.csv   evaluation, computed/replayed, ok, objective, constraints, |dJ/da|,
//                             Newton iterations, forward/adjoint/deformation times, min V/V0,
//                             failure reason
//   OUTDIR/designs.csv        the design vector of every evaluation
//   OUTDIR/shape_<wall>.pvd   the walls at every evaluation (time = evaluation index) with
//                             the objective's shape gradient and surface sensitivity
//   OUTDIR/shapes/shape_NNNN.csv   the same as CSV with dJ/dd_B (io/wall_shape.hpp), for
//                             postprocess/plot_shapes.py; shapes/optimized.csv the best design
//   OUTDIR/flow.pvd           the flow every optimization.vtk_every evaluations
//   OUTDIR/optimization-journal.jsonl   every evaluation, for --restart (driver/optimizer.hpp)
//   OUTDIR/optimization-state*.h5       the flow of the last good evaluations (warm start)
// and at the end OUTDIR/optimized.msh (the best design's mesh, to re-run), summary.json and the
// flow and surface sensitivity of the best design.  A progress line per evaluation with an ETA.
//
// A design: list of control entries (parameter, time-function, per-step: driver/
// control_optimization.hpp) optimizes physical and boundary parameters of a steady or unsteady
// case instead (forward + adjoint per function, no mesh deformation):
//   OUTDIR/optimization.csv   evaluation, replayed, ok, objective (with the smoothness penalty),
//                             J, penalty, constraints, |dJ/dx|, forward/adjoint times, states
//                             recomputed (revolve), peak memory after the forward run (MiB, sum
//                             over ranks), failure reason
//   OUTDIR/designs.csv        the physical design (a, not a / scale) of every evaluation
//   OUTDIR/controls.csv       unsteady: t and, per time-function or per-step entry, the
//                             boundary parameter at every level at the start and at the best design
//   OUTDIR/optimization-journal.jsonl   for --restart (evaluations start from the case's
//                             initial state, so a replay needs no saved flow)
//   OUTDIR/summary.json       status, algorithm, best objective, design, constraints, KKT check
#include "karman/adjoint/surface_sensitivity.hpp"
#include "karman/cli/commands.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/optimization/control_optimization.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/msh_writer.hpp"
#include "karman/io/state_fields.hpp"
#include "karman/io/wall_shape.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace karman::cli {
namespace fs = std::filesystem;
using optimization::ConstraintSense;

namespace {

/// The flow state of evaluation `index` to DIR/optimization-state.h5 (the previous one kept as
/// optimization-state.prev.h5): the warm start of a restarted campaign.  Collective.
PetscErrorCode save_state(const driver::FlowCase &fc, const std::string &dir, long index, Vec w) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = fc.mesh();
  const std::string path = (fs::path(dir) / "optimization-state.h5").string();
  const std::string prev = (fs::path(dir) / "optimization-state.prev.h5").string();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  if (rank == 0 && fs::exists(path)) fs::rename(path, prev);
  PetscCallMPI(MPI_Barrier(m.comm));
  const PetscScalar *a;
  PetscCall(VecGetArrayRead(w, &a));
  const std::vector<io::Field> fields = io::state_fields(m, fc.residual().equations(), a);
  PetscCall(VecRestoreArrayRead(w, &a));
  PetscCall(io::write_fields_h5(m, m.coordinates, path, fields,
                                {{"evaluation", static_cast<double>(index)}}));
  PetscFunctionReturn(0);
}

/// The wall `patch` of the current design at time `t` of `series`, with the objective's shape
/// gradient dJ/dd_B (per vertex, after the mesh deformation's reverse: the derivative with
/// respect to moving that wall vertex), its normal component (surface_sensitivity: positive
/// where moving the wall into the fluid increases J) and its density per unit area.
PetscErrorCode write_shape(const discretization::FlowResidual &res, int patch,
                           const std::vector<Vec3<double>> &dJ_dB, double t,
                           io::VtkSeries &series) {
  PetscFunctionBeginUser;
  adjoint::SurfaceSensitivity s;
  PetscCall(adjoint::surface_sensitivity(res, patch, dJ_dB, &s));
  io::Field g{"shape_gradient", 3, {}}, sens{"surface_sensitivity", 1, s.value},
      density{"sensitivity_density", 1, s.density},
      face_density{"sensitivity_density", 1, s.face_density};
  for (const auto &x : dJ_dB)
    for (int d = 0; d < 3; ++d) g.values.push_back(x[d]);
  PetscCall(series.write_surface(res.mesh(), res.coordinates(), patch, t, {face_density},
                                 {g, sens, density}));
  PetscFunctionReturn(0);
}

/// Loads the saved state of evaluation `index` into w if one of the two files holds it.
PetscErrorCode load_state(const driver::FlowCase &fc, const std::string &dir, long index, Vec w,
                          bool *found) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = fc.mesh();
  *found = false;
  for (const char *name : {"optimization-state.h5", "optimization-state.prev.h5"}) {
    const std::string path = (fs::path(dir) / name).string();
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

/// The optimization options of the case's optimization: section.
/// The end of an optimization.csv row (the failure, commas and newlines replaced) and the
/// designs.csv row of evaluation k, each flushed.
void write_rows(std::ostream &csv, const char *line, std::string failure, std::ostream &designs,
                long k, const std::vector<double> &x) {
  for (char &ch : failure)
    if (ch == ',' || ch == '\n') ch = ';';
  csv << line << failure << "\n" << std::flush;
  designs << k;
  char v[32];
  for (double value : x) {
    std::snprintf(v, sizeof(v), ",%.17g", value);
    designs << v;
  }
  designs << "\n" << std::flush;
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
  o.journal = (fs::path(args.output_dir) / "optimization-journal.jsonl").string();
  o.restart = args.restart;
  return o;
}

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
  optimization::ControlOptimization problem;
  PetscCall(problem.setup(fc, args.output_dir, fault));
  const optimization::OptimizationProblem &p = problem.problem();
  optimization::OptimizerOptions o = optimizer_options(cfg, args);
  const std::string algorithm = optimization::resolve_algorithm(o.algorithm, p);
  PetscCall(
      log_info(comm,
               "optimize %s: %zu control variables, %zu constraints, %s%s, at most %ld "
               "evaluations (%s)",
               cfg.file().c_str(), p.names.size(), p.constraints.size(), algorithm.c_str(),
               o.algorithm == "auto" ? " (auto)" : "", o.max_evaluations,
               fc.unsteady() ? "unsteady: forward + unsteady adjoint per function" : "steady"));
  for (const auto &c : p.constraints)
    PetscCall(log_info(comm, "  constraint %s %s %.10g", c.name.c_str(),
                       c.sense == ConstraintSense::Equal
                           ? "="
                           : (c.sense == ConstraintSense::LessEqual ? "<=" : ">="),
                       c.value));
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
  std::ofstream csv, designs;
  if (rank == 0) {
    csv.open(fs::path(args.output_dir) / "optimization.csv");
    csv << "evaluation,replayed,ok,objective,J,penalty";
    for (const auto &c : p.constraints) csv << "," << c.name;
    csv << ",gradient_norm,forward_time,adjoint_time,recomputed,forward_memory_mib,failure\n";
    designs.open(fs::path(args.output_dir) / "designs.csv");
    designs << "evaluation";
    for (const auto &n : p.names) designs << "," << n;
    designs << "\n";
  }
  std::map<long, std::pair<std::vector<double>, optimization::Evaluation>> seen;
  long computed = 0;
  const double start = MPI_Wtime();
  const optimization::Evaluator evaluator = [&](const std::vector<double> &x,
                                                optimization::Evaluation *e) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(problem.evaluate(x, e));
    const optimization::ControlRecord &r = problem.last();
    const nlohmann::json d = {{"J", r.J},
                              {"penalty", r.penalty},
                              {"gradient_norm", r.gradient_norm},
                              {"forward_time", r.forward_time},
                              {"adjoint_time", r.adjoint_time},
                              {"recomputed", r.recomputed},
                              {"forward_memory", r.forward_memory}};
    e->details = d.dump();
    PetscFunctionReturn(0);
  };
  const optimization::EvaluationObserver observer = [&](long k, const std::vector<double> &x,
                                                        const optimization::Evaluation &e,
                                                        bool replayed) -> PetscErrorCode {
    PetscFunctionBeginUser;
    seen[k] = {x, e};
    const nlohmann::json d =
        e.details.empty() ? nlohmann::json::object() : nlohmann::json::parse(e.details);
    auto num = [&](const char *key) { return d.contains(key) ? d[key].get<double>() : 0.0; };
    const std::vector<double> a = problem.physical(x);
    if (rank == 0) {
      char line[512];
      std::snprintf(line, sizeof(line), "%ld,%d,%d,%.15e,%.15e,%.15e", k, replayed ? 1 : 0,
                    e.ok ? 1 : 0, e.ok ? e.f : NAN, num("J"), num("penalty"));
      csv << line;
      for (std::size_t i = 0; i < p.constraints.size(); ++i) {
        std::snprintf(line, sizeof(line), ",%.15e", e.ok ? e.c[i] : NAN);
        csv << line;
      }
      std::snprintf(line, sizeof(line), ",%.6e,%.4f,%.4f,%ld,%.1f,", num("gradient_norm"),
                    num("forward_time"), num("adjoint_time"), static_cast<long>(num("recomputed")),
                    num("forward_memory"));
      write_rows(csv, line, e.failure, designs, k, a);
    }
    if (replayed) PetscFunctionReturn(0);
    ++computed;
    if (!e.ok) {
      PetscCall(log_info(comm, "evaluation %3ld  FAILED (%s): the optimizer backs off", k,
                         e.failure.c_str()));
      PetscFunctionReturn(0);
    }
    std::string cons, vars;
    for (std::size_t i = 0; i < e.c.size(); ++i) {
      char item[96];
      std::snprintf(item, sizeof(item), "  %s %.8g", p.constraints[i].name.c_str(), e.c[i]);
      cons += item;
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(a.size(), 4); ++i) {
      char item[96];
      std::snprintf(item, sizeof(item), "%s%s %.10g", i ? ", " : "  ", p.names[i].c_str(), a[i]);
      vars += item;
    }
    const double eta = (MPI_Wtime() - start) / computed * std::max(0L, o.max_evaluations - k - 1);
    PetscCall(
        log_info(comm, "evaluation %3ld  J %.12g%s  |dJ/dx| %.3e%s%s  %.1f s  ETA <= %.1f min", k,
                 e.f, cons.c_str(), num("gradient_norm"), vars.c_str(), a.size() > 4 ? ", ..." : "",
                 num("forward_time") + num("adjoint_time"), eta / 60));
    PetscFunctionReturn(0);
  };
  optimization::OptimizationResult result;
  PetscCall(optimization::optimize(comm, p, evaluator, o, observer, &result));
  csv.close();
  designs.close();
  PetscCall(log_info(comm,
                     "optimizer: %s after %ld evaluations (%ld replayed, %ld failed); best "
                     "objective %.12g",
                     result.status.c_str(), result.evaluations, result.replayed, result.failed,
                     result.f));
  // the best design's evaluation (from the history: nothing is recomputed)
  const optimization::Evaluation *best = nullptr;
  for (const auto &[k, xe] : seen)
    if (xe.first == result.x && xe.second.ok) best = &xe.second;
  PetscCheck(best, comm, PETSC_ERR_PLIB, "the optimizer's answer is not one of its evaluations");
  const std::vector<double> a = problem.physical(result.x);
  PetscCall(problem.apply(result.x));
  if (!functions.empty() && rank == 0) {
    std::vector<std::vector<double>> series_best(functions.size());
    for (std::size_t i = 0; i < functions.size(); ++i)
      PetscCall(problem.series(functions[i], &series_best[i]));
    std::ofstream out(fs::path(args.output_dir) / "controls.csv");
    out << "t";
    for (const auto &f : functions) out << "," << f << ".start," << f << ".best";
    out << "\n";
    char line[128];
    for (long n = 1; n <= problem.steps(); ++n) {
      std::snprintf(line, sizeof(line), "%.12g", n * problem.dt());
      out << line;
      for (std::size_t i = 0; i < functions.size(); ++i) {
        std::snprintf(line, sizeof(line), ",%.15e,%.15e", series_start[i][n - 1],
                      series_best[i][n - 1]);
        out << line;
      }
      out << "\n";
    }
  } else if (!functions.empty()) {
    std::vector<double> v; // collective
    for (const auto &f : functions) PetscCall(problem.series(f, &v));
  }
  nlohmann::json j;
  j["case"] = cfg.file();
  j["algorithm"] = algorithm;
  j["status"] = result.status;
  j["evaluations"] = result.evaluations;
  j["replayed"] = result.replayed;
  j["failed"] = result.failed;
  j["objective"] = best->f;
  const nlohmann::json bd = nlohmann::json::parse(best->details);
  j["J"] = bd["J"];
  j["penalty"] = bd["penalty"];
  const optimization::Evaluation &first = seen.begin()->second.second;
  if (first.ok) j["initial_objective"] = first.f;
  if (p.names.size() <= 100) { // per-step controls: controls.csv
    const std::vector<double> a0 = problem.physical(p.start);
    for (std::size_t i = 0; i < p.names.size(); ++i) {
      j["design"][p.names[i]] = a[i];
      j["initial_design"][p.names[i]] = a0[i];
    }
  }
  for (std::size_t i = 0; i < p.constraints.size(); ++i)
    j["constraints"][p.constraints[i].name] = {{"value", best->c[i]},
                                               {"bound", p.constraints[i].value}};
  const optimization::KktReport kkt = optimization::check_kkt(p, result.x, *best);
  j["kkt"] = kkt_json(p, kkt);
  // identification (probe matching): misfit and the parameters' uncertainty
  bool least_squares = false;
  PetscCall(problem.least_squares(&least_squares));
  if (least_squares && p.names.size() <= 20) {
    optimization::Identification id;
    PetscCall(problem.identify(result.x, 1e-4, &id));
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
    j["identification"] = ji;
  }
  j["wall_time"] = MPI_Wtime() - start;
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "summary.json");
    out << j.dump(2) << "\n";
  }
  PetscCall(log_info(comm, "best design: objective %.12g (J %.12g + penalty %.6g)", best->f,
                     bd["J"].get<double>(), bd["penalty"].get<double>()));
  PetscCall(log_info(comm,
                     "KKT: residual %.3e (|projected gradient| / |df| = %.3e / %.3e), largest "
                     "constraint violation %.3e, %ld active bounds, %ld wrong-signed multipliers",
                     kkt.residual, kkt.lagrangian_gradient_norm, kkt.objective_gradient_norm,
                     kkt.max_violation, kkt.active_lower + kkt.active_upper, kkt.wrong_signs));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_optimize_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  for (const auto &d : cfg.designs())
    if (d.family == "control") {
      PetscCall(run_control_optimize(comm, args, cfg));
      PetscFunctionReturn(0);
    }
  PetscCheck(!solver::time_options().get(cfg).unsteady(), comm, PETSC_ERR_SUP,
             "%s: karman optimize optimizes the shape of steady cases (time.mode: steady); "
             "unsteady cases take control entries in design: (parameter, time-function, "
             "per-step)",
             cfg.file().c_str());
  PetscCheck(!cfg.designs().empty(), comm, PETSC_ERR_USER_INPUT,
             "%s: karman optimize needs a 'design:' list (the shape parameterizations: ffd, "
             "hicks-henne, rigid, surface-normal)",
             cfg.file().c_str());
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  const mesh::Mesh &mesh = fc.mesh();
  const optimization::OptimizationOptions opt = optimization::optimization_options().get(cfg);
  FaultHook fault; // crash tests
  PetscCall(campaign_fault_hook(comm, {"forward", "adjoint", "deformation"}, 1,
                                "a shape evaluation", &fault));
  optimization::ShapeOptimization problem;
  PetscCall(problem.setup(fc, nullptr, fault));
  const optimization::OptimizationProblem &p = problem.problem();
  PetscCall(log_info(comm,
                     "optimize %s: %zu design variables, %zu constraints, %s, at most %ld "
                     "evaluations",
                     cfg.file().c_str(), p.names.size(), p.constraints.size(),
                     opt.algorithm.c_str(), opt.max_evaluations));
  for (const auto &c : p.constraints)
    PetscCall(log_info(comm, "  constraint %s %s %.10g", c.name.c_str(),
                       c.sense == ConstraintSense::Equal
                           ? "="
                           : (c.sense == ConstraintSense::LessEqual ? "<=" : ">="),
                       c.value));

  const optimization::OptimizerOptions o = optimizer_options(cfg, args);

  // history files: rewritten from the journal on a restart (replayed rows keep their details)
  std::ofstream csv, designs;
  if (rank == 0) {
    csv.open(fs::path(args.output_dir) / "optimization.csv");
    csv << "evaluation,replayed,ok,objective";
    // a constraint name may hold commas ("thickness(airfoil, x=0.1)"): quoted (RFC 4180)
    for (const auto &c : p.constraints) {
      if (c.name.find_first_of(",\"") == std::string::npos) {
        csv << "," << c.name;
        continue;
      }
      std::string quoted;
      for (char ch : c.name) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      csv << ",\"" << quoted << "\"";
    }
    csv << ",gradient_norm,newton_iterations,forward_time,adjoint_time,deformation_time,"
           "deformation_adjoint_time,min_volume_ratio,failure\n";
    designs.open(fs::path(args.output_dir) / "designs.csv");
    designs << "evaluation";
    for (const auto &n : p.names) designs << "," << n;
    designs << "\n";
  }
  std::vector<std::unique_ptr<io::VtkSeries>> shape_series;
  const std::vector<int> walls = fc.residual().boundary_conditions().wall_patches();
  for (int w : walls)
    shape_series.push_back(
        std::make_unique<io::VtkSeries>(comm, args.output_dir, "shape_" + mesh.patch_names[w]));
  const fs::path shapes_dir = fs::path(args.output_dir) / "shapes";
  if (rank == 0) fs::create_directories(shapes_dir);
  driver::FlowWriter flow_writer;
  PetscCall(flow_writer.setup(fc.residual(), fc.monitors(), cfg, args.output_dir, "flow"));
  const long vtk_every = opt.vtk_every;
  bool series_resumed = false; // the series are continued after the replayed evaluations
  long computed = 0;
  const double start = MPI_Wtime();

  // the evaluator: on a restart first the warm start of the last good journaled evaluation,
  // then the problem's evaluation, then its flow state saved before the journal gets the
  // evaluation (so a restart finds the state of every journaled good evaluation)
  long next_index = 0, last_ok_replayed = -1;
  bool warm_loaded = !args.restart;
  const optimization::Evaluator evaluator = [&](const std::vector<double> &x,
                                                optimization::Evaluation *e) -> PetscErrorCode {
    PetscFunctionBeginUser;
    if (!warm_loaded) {
      warm_loaded = true;
      if (last_ok_replayed >= 0) {
        Vec w;
        bool found = false;
        PetscCall(fc.create_state(&w));
        PetscCall(load_state(fc, args.output_dir, last_ok_replayed, w, &found));
        PetscCheck(found, comm, PETSC_ERR_FILE_OPEN,
                   "--restart: no saved flow state of evaluation %ld (optimization-state.h5) in "
                   "%s; the campaign cannot continue from where it stopped",
                   last_ok_replayed, args.output_dir.c_str());
        PetscCall(problem.shape().set_state(w));
        PetscCall(VecDestroy(&w));
        PetscCall(log_info(comm,
                           "restart: %ld evaluations replayed from the journal; the flow of "
                           "evaluation %ld starts the next solve",
                           next_index, last_ok_replayed));
      }
    }
    PetscCall(problem.evaluate(x, e));
    const optimization::ShapeRecord &r = problem.last();
    nlohmann::json d = {{"gradient_norm", r.gradient_norm},
                        {"newton_iterations", r.shape.newton_iterations},
                        {"forward_time", r.shape.forward_time},
                        {"adjoint_time", r.shape.adjoint_time},
                        {"deformation_time", r.shape.deformation_time},
                        {"deformation_adjoint_time", r.shape.deformation_reverse_time},
                        {"min_volume_ratio", r.shape.min_volume_ratio}};
    e->details = d.dump();
    if (e->ok) PetscCall(save_state(fc, args.output_dir, next_index, problem.shape().state()));
    PetscFunctionReturn(0);
  };
  const optimization::EvaluationObserver observer = [&](long k, const std::vector<double> &x,
                                                        const optimization::Evaluation &e,
                                                        bool replayed) -> PetscErrorCode {
    PetscFunctionBeginUser;
    next_index = k + 1;
    const nlohmann::json d =
        e.details.empty() ? nlohmann::json::object() : nlohmann::json::parse(e.details);
    auto num = [&](const char *key) { return d.contains(key) ? d[key].get<double>() : 0.0; };
    if (rank == 0) {
      char line[512];
      std::snprintf(line, sizeof(line), "%ld,%d,%d,%.12e", k, replayed ? 1 : 0, e.ok ? 1 : 0,
                    e.ok ? e.f : NAN);
      csv << line;
      for (std::size_t i = 0; i < p.constraints.size(); ++i) {
        std::snprintf(line, sizeof(line), ",%.12e", e.ok ? e.c[i] : NAN);
        csv << line;
      }
      std::snprintf(line, sizeof(line), ",%.6e,%d,%.4f,%.4f,%.4f,%.4f,%.6f,", num("gradient_norm"),
                    static_cast<int>(num("newton_iterations")), num("forward_time"),
                    num("adjoint_time"), num("deformation_time"), num("deformation_adjoint_time"),
                    num("min_volume_ratio"));
      write_rows(csv, line, e.failure, designs, k, x);
    }
    if (replayed) {
      if (e.ok) last_ok_replayed = k;
      PetscFunctionReturn(0);
    }
    if (!series_resumed && k > 0) { // the first new evaluation after a replay
      for (auto &s : shape_series) PetscCall(s->resume(k - 1 + 0.5));
      PetscCall(flow_writer.resume(k - 1 + 0.5));
    }
    series_resumed = true;
    ++computed;
    const double eta = (MPI_Wtime() - start) / computed * std::max(0L, o.max_evaluations - k - 1);
    if (!e.ok) {
      PetscCall(log_info(comm, "evaluation %3ld  FAILED (%s): the optimizer backs off", k,
                         e.failure.c_str()));
      PetscFunctionReturn(0);
    }
    const optimization::ShapeRecord &r = problem.last();
    std::string cons;
    for (std::size_t i = 0; i < e.c.size(); ++i) {
      char item[96];
      std::snprintf(item, sizeof(item), "  %s %.8g", p.constraints[i].name.c_str(), e.c[i]);
      cons += item;
    }
    PetscCall(log_info(comm,
                       "evaluation %3ld  J %.10g%s  |dJ/da| %.3e  newton %d  %.1f s  ETA <= %.1f "
                       "min",
                       k, e.f, cons.c_str(), r.gradient_norm, r.shape.newton_iterations,
                       r.shape.forward_time + r.shape.adjoint_time + r.shape.deformation_time +
                           r.shape.deformation_reverse_time,
                       eta / 60));
    const std::vector<Vec3<double>> &X = problem.shape().coordinates();
    for (std::size_t i = 0; i < walls.size(); ++i)
      PetscCall(write_shape(fc.residual(), walls[i], r.shape.dJ_dB, static_cast<double>(k),
                            *shape_series[i]));
    char name[32];
    std::snprintf(name, sizeof(name), "shape_%04ld.csv", k);
    PetscCall(io::write_wall_shape(mesh, X, walls, (shapes_dir / name).string(), &r.shape.dJ_dB));
    if (vtk_every > 0 && k % vtk_every == 0) {
      discretization::LocalState state;
      solver::FlowMonitors::Values v;
      PetscCall(fc.evaluate(discretization::kSteady, problem.shape().state(), &state, &v));
      PetscCall(flow_writer.write_vtk(fc.residual(), state, static_cast<double>(k)));
    }
    PetscFunctionReturn(0);
  };
  optimization::OptimizationResult result;
  PetscCall(optimization::optimize(comm, p, evaluator, o, observer, &result));
  csv.close();
  designs.close();

  // the best design: its mesh (to re-run), flow and summary
  PetscCall(log_info(comm,
                     "optimizer: %s after %ld evaluations (%ld replayed, %ld failed); best J "
                     "%.10g",
                     result.status.c_str(), result.evaluations, result.replayed, result.failed,
                     result.f));
  optimization::Evaluation best;
  PetscCall(problem.evaluate(result.x, &best));
  PetscCheck(best.ok, comm, PETSC_ERR_NOT_CONVERGED,
             "the best design of the optimizer could not be evaluated again: %s",
             best.failure.c_str());
  PetscCall(io::write_msh(mesh, problem.shape().coordinates(),
                          (fs::path(args.output_dir) / "optimized.msh").string()));
  PetscCall(io::write_wall_shape(mesh, problem.shape().coordinates(), walls,
                                 (shapes_dir / "optimized.csv").string(),
                                 &problem.last().shape.dJ_dB));
  PetscCall(driver::write_flow_state(fc.residual(), fc.monitors(), cfg, args.output_dir,
                                     "flow_optimized", problem.shape().state(),
                                     discretization::kSteady));
  nlohmann::json j;
  j["case"] = cfg.file();
  j["algorithm"] = o.algorithm;
  j["status"] = result.status;
  j["evaluations"] = result.evaluations;
  j["replayed"] = result.replayed;
  j["failed"] = result.failed;
  j["objective"] = best.f;
  j["design"] = nlohmann::json::object();
  for (std::size_t i = 0; i < p.names.size(); ++i) j["design"][p.names[i]] = result.x[i];
  for (std::size_t i = 0; i < p.constraints.size(); ++i)
    j["constraints"][p.constraints[i].name] = {{"value", best.c[i]},
                                               {"bound", p.constraints[i].value}};
  const solver::FlowMonitors::Values &bv = problem.last().shape.values;
  j["values"] = {
      {"cd", bv.cd}, {"cd_pressure", bv.cd_pressure}, {"cd_viscous", bv.cd_viscous}, {"cl", bv.cl}};
  // first-order optimality of the best design (optimization::check_kkt)
  const optimization::KktReport kkt = optimization::check_kkt(p, result.x, best);
  j["kkt"] = kkt_json(p, kkt);
  j["wall_time"] = MPI_Wtime() - start;
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "summary.json");
    out << j.dump(2) << "\n";
  }
  PetscCall(log_info(comm, "best design: J %.10g, c_D %.8f, c_L %.8f; mesh %s/optimized.msh",
                     best.f, bv.cd, bv.cl, args.output_dir.c_str()));
  PetscCall(log_info(comm,
                     "KKT: residual %.3e (|projected Lagrangian gradient| / |dJ/da| = %.3e / "
                     "%.3e), largest constraint violation %.3e (relative %.3e), %ld active "
                     "bounds, %ld wrong-signed multipliers",
                     kkt.residual, kkt.lagrangian_gradient_norm, kkt.objective_gradient_norm,
                     kkt.max_violation, kkt.max_relative_violation,
                     kkt.active_lower + kkt.active_upper, kkt.wrong_signs));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
