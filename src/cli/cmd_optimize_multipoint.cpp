// `karman optimize` of a case with a `points:` list: a multipoint shape campaign
// (optimization/multipoint.hpp: the weighted sum of the objective at the operating points, one
// shape, each point's own design variable such as its angle of attack, constraints per point).
//   OUTDIR/optimization.csv   evaluation, replayed, ok, objective, constraints (NAME@POINT), then
//                             per point J, c_D, c_L, Newton iterations and time, failure reason
//   OUTDIR/designs.csv        the design (the case's units) of every evaluation
//   OUTDIR/optimization-journal.jsonl   every evaluation, for --restart
//                             (optimization/optimizer.hpp)
//   OUTDIR/optimization-state-POINT*.h5  each point's flow of the last good evaluations: the
//                             first new evaluation after a replay starts each point's solve from
//                             its flow at the last good journaled evaluation (a cold start from
//                             the case's initial state can fail far from it: the turbulent
//                             airfoil's angle of attack ends 2 degrees below where it started)
// and at the end, for the best design: OUTDIR/optimized.msh (the first point's mesh), shapes/
// optimized.csv (its walls), OUTDIR/flow_optimized_POINT.* (each point's flow) and summary.json
// (design, constraints, each point's values, the KKT check).  A progress line per evaluation.
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/driver/flow_output.hpp"
#include "karman/io/msh_writer.hpp"
#include "karman/io/wall_shape.hpp"
#include "karman/optimization/multipoint.hpp"
#include "karman/optimization/optimization_options.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace karman::cli {
namespace fs = std::filesystem;

namespace {

/// The points of the last evaluation as JSON (an evaluation's details: kept in the journal).
nlohmann::json points_json(const std::vector<optimization::PointRecord> &points) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto &p : points)
    j.push_back({{"name", p.name},
                 {"J", p.J},
                 {"cd", p.cd},
                 {"cl", p.cl},
                 {"newton_iterations", p.newton_iterations},
                 {"time", p.time}});
  return j;
}

/// The per-point columns of optimization.csv: a header, or the values of `points` (JSON).
std::string point_columns(const std::vector<optimization::PointRecord> &names,
                          const nlohmann::json *points) {
  std::string s;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string &n = names[k].name;
    if (!points) {
      s += ",J@" + n + ",cd@" + n + ",cl@" + n + ",newton@" + n + ",time@" + n;
      continue;
    }
    const nlohmann::json p = k < points->size() ? (*points)[k] : nlohmann::json::object();
    const double nan = std::nan(""); // (a double: value() returns the default's type)
    s += printf_string(",%.12e,%.12e,%.12e,%d,%.4f", p.value("J", nan), p.value("cd", nan),
                       p.value("cl", nan), p.value("newton_iterations", 0), p.value("time", 0.0));
  }
  return s;
}

/// The best design's files: each group writes its points' flows, the first point's group the
/// mesh and the walls.  Collective.
PetscErrorCode write_best(const optimization::MultipointShapeOptimization &mp,
                          const fs::path &dir) {
  PetscFunctionBeginUser;
  for (const auto &lp : mp.local_points()) {
    const driver::FlowCase &fc = *lp.fc;
    optimization::ShapeOptimization &sp = *lp.problem;
    const std::string name = mp.last()[lp.index].name;
    PetscCall(driver::write_flow_state(fc.residual(), fc.monitors(), fc.config(), dir.string(),
                                       "flow_optimized_" + name, sp.shape().state(),
                                       discretization::kSteady));
    if (lp.index != 0) continue;
    PetscCall(io::write_msh(fc.mesh(), sp.shape().coordinates(), (dir / "optimized.msh").string()));
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(mp.group_comm(), &rank));
    if (rank == 0) fs::create_directories(dir / "shapes");
    PetscCallMPI(MPI_Barrier(mp.group_comm()));
    PetscCall(io::write_wall_shape(fc.mesh(), sp.shape().coordinates(),
                                   fc.residual().boundary_conditions().wall_patches(),
                                   (dir / "shapes" / "optimized.csv").string()));
  }
  PetscFunctionReturn(0);
}

/// The best design evaluated again: its files (write_best), summary.json and log lines; if it
/// cannot be, summary.json from the campaign's evaluation that found it (`good`) and an error.
/// Collective.
PetscErrorCode finish(MPI_Comm comm, const CliArgs &args, const config::CaseConfig &cfg,
                      const std::string &algorithm, optimization::MultipointShapeOptimization &mp,
                      const optimization::OptimizationResult &result, const GoodEvaluations &good,
                      double start) {
  PetscFunctionBeginUser;
  const optimization::OptimizationProblem &p = mp.problem();
  // the best design again: its files and summary
  optimization::Evaluation again, best;
  mp.forget(); // (solved again: the flows and the mesh written are the best design's)
  PetscCall(mp.evaluate(result.x, &again));
  bool reevaluated;
  nlohmann::json fallback;
  PetscCall(best_design_evaluation(comm, result.x, again, good, &best, &reevaluated, &fallback));
  const fs::path dir(args.output_dir);
  if (reevaluated) PetscCall(write_best(mp, dir));
  nlohmann::json j = campaign_summary(cfg, algorithm, result, best.f);
  j.update(fallback);
  const std::vector<double> a = mp.design_of(result.x);
  j["design"] = nlohmann::json::object();
  for (std::size_t i = 0; i < p.names.size(); ++i) j["design"][p.names[i]] = a[i];
  for (std::size_t i = 0; i < p.constraints.size(); ++i)
    j["constraints"][p.constraints[i].name] = {{"value", best.c[i]},
                                               {"bound", p.constraints[i].value}};
  if (reevaluated) {
    j["points"] = points_json(mp.last());
    for (std::size_t k = 0; k < mp.last().size(); ++k)
      j["points"][k]["weight"] = mp.last()[k].weight;
  } else { // (the points' values of the evaluation that found it)
    j["points"] = details_of(best).value("points", nlohmann::json::array());
  }
  j["groups"] = mp.groups();
  const optimization::KktReport kkt = optimization::check_kkt(p, result.x, best);
  j["kkt"] = kkt_json(p, kkt);
  j["wall_time"] = MPI_Wtime() - start;
  PetscCall(write_summary(comm, args.output_dir, j));
  if (reevaluated)
    for (const auto &pt : mp.last())
      PetscCall(log_info(comm, "best design at %s: J %.10g, c_D %.8f, c_L %.8f", pt.name.c_str(),
                         pt.J, pt.cd, pt.cl));
  PetscCall(log_kkt(comm, kkt));
  if (!reevaluated) PetscCall(fail_unevaluated_best(comm, j, args.output_dir));
  PetscFunctionReturn(0);
}

/// The name of point `index`'s flow state files (save_campaign_state).
std::string state_stem(const optimization::MultipointShapeOptimization &mp, std::size_t index) {
  return "optimization-state-" + mp.last()[index].name;
}

/// Each point's flow to its state file, as evaluation `index` (a good one).  Collective.
PetscErrorCode save_states(optimization::MultipointShapeOptimization &mp, const std::string &dir,
                           long index) {
  PetscFunctionBeginUser;
  for (auto &lp : mp.local_points())
    PetscCall(save_campaign_state(*lp.fc, dir, state_stem(mp, lp.index), index,
                                  lp.problem->shape().state()));
  PetscFunctionReturn(0);
}

/// A restarted campaign: each point's flow of the last good journaled evaluation (the last of
/// `good`, oldest first) starts its next solve, and the earlier ones' flows on the
/// point's history predict it (ShapeEvaluator::remember; an x evaluated before once: a point
/// does not evaluate it again); a missing last file is an error on every rank.  Collective on
/// comm.
PetscErrorCode warm_start(MPI_Comm comm, optimization::MultipointShapeOptimization &mp,
                          const std::string &dir,
                          const std::vector<const GoodEvaluations::Record *> &good) {
  PetscFunctionBeginUser;
  const long index = good.back()->index;
  std::string missing;
  for (auto &lp : mp.local_points()) {
    Vec w;
    bool found = false;
    const std::string stem = state_stem(mp, lp.index);
    PetscCall(lp.fc->create_state(&w));
    std::vector<std::vector<double>> seen;
    const auto first_time = [&](const GoodEvaluations::Record *r, std::vector<double> *xp) {
      *xp = mp.point_x(lp.index, r->x);
      if (std::find(seen.begin(), seen.end(), *xp) != seen.end()) return false;
      seen.push_back(*xp);
      return true;
    };
    std::vector<double> xp;
    for (std::size_t i = 0; i + 1 < good.size(); ++i)
      if (first_time(good[i], &xp)) {
        PetscCall(load_campaign_state(*lp.fc, dir, stem, good[i]->index, w, &found));
        if (found) PetscCall(lp.problem->remember(xp, w));
      }
    PetscCall(load_campaign_state(*lp.fc, dir, stem, index, w, &found));
    if (found) {
      if (first_time(good.back(), &xp)) PetscCall(lp.problem->remember(xp, w));
      PetscCall(lp.problem->shape().set_state(w));
    } else if (missing.empty())
      missing = stem + ".h5";
    PetscCall(VecDestroy(&w));
  }
  // the first rank that misses a file names it
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  int mine = missing.empty() ? size : rank, first = size;
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  const bool all = first == size;
  if (!all) PetscCall(broadcast_string(comm, &missing, first));
  PetscCheck(all, comm, PETSC_ERR_FILE_OPEN,
             "--restart: no saved flow state of evaluation %ld for every point in %s (missing: "
             "%s); the campaign cannot continue from where it stopped",
             index, dir.c_str(), missing.c_str());
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_multipoint_optimize(MPI_Comm comm, const CliArgs &args,
                                       const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  const optimization::OptimizerOptions o = optimizer_options(cfg, args);
  FaultHook fault; // crash tests
  PetscCall(campaign_fault_hook(comm, {"forward", "adjoint", "deformation"}, 1,
                                "a point's shape evaluation", &fault));
  optimization::MultipointShapeOptimization mp;
  PetscCall(mp.setup(comm, cfg, fault));
  const optimization::OptimizationProblem &p = mp.problem();
  const std::vector<optimization::PointRecord> names = mp.last();
  PetscCall(log_campaign(
      comm,
      printf_string("optimize %s: %zu points (%s), %zu design variables, %zu constraints, %s, at "
                    "most %ld evaluations",
                    cfg.file().c_str(), names.size(),
                    mp.groups() > 1
                        ? printf_string("concurrent on %d groups of ranks", mp.groups()).c_str()
                        : "one after the other",
                    p.names.size(), p.constraints.size(), o.algorithm.c_str(), o.max_evaluations),
      p));
  if (optimization::optimization_options().get(cfg).remesh)
    PetscCall(log_info(comm, "multipoint campaigns do not remesh: a design that a point's mesh "
                             "cannot follow is a failed evaluation"));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  HistoryFiles files;
  if (rank == 0) files.open(args.output_dir, p, "", point_columns(names, nullptr).c_str());
  GoodEvaluations good; // (the best design's evaluation if it cannot be evaluated again)
  const double start = MPI_Wtime();
  long computed = 0, replays = 0, next_index = 0, last_ok_replayed = -1;
  bool warm_loaded = !args.restart;
  // a restart: each point's flow of the last good journaled evaluation before the next solve (a
  // new evaluation's or, when the journal held them all, the best design's again)
  const auto warm_once = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    if (warm_loaded) PetscFunctionReturn(0);
    warm_loaded = true;
    // (good holds the replayed evaluations)
    if (last_ok_replayed >= 0)
      PetscCall(warm_start(comm, mp, args.output_dir, good.last(optimization::kWarmStartHistory)));
    PetscFunctionReturn(0);
  };
  optimization::OptimizationResult result;
  PetscCall(optimization::optimize(
      comm, p,
      [&](const std::vector<double> &x, optimization::Evaluation *e) -> PetscErrorCode {
        PetscFunctionBeginUser;
        PetscCall(warm_once());
        PetscCall(mp.evaluate(x, e));
        e->details = nlohmann::json({{"points", points_json(mp.last())}}).dump();
        // (before the journal has the evaluation: a restart finds the flows of every journaled
        // good evaluation)
        if (e->ok) PetscCall(save_states(mp, args.output_dir, next_index));
        PetscFunctionReturn(0);
      },
      o,
      [&](long k, const std::vector<double> &x, const optimization::Evaluation &e,
          bool replayed) -> PetscErrorCode {
        PetscFunctionBeginUser;
        next_index = k + 1;
        good.add(k, x, e);
        const nlohmann::json d = details_of(e);
        const nlohmann::json points = d.value("points", nlohmann::json::array());
        if (rank == 0)
          files.write(k, replayed, e, 12, "", point_columns(names, &points), mp.design_of(x));
        if (replayed) {
          ++replays;
          if (e.ok) last_ok_replayed = k;
          PetscFunctionReturn(0);
        }
        if (computed++ == 0 && replays > 0) {
          if (last_ok_replayed >= 0)
            PetscCall(log_info(comm,
                               "restart: %ld evaluations replayed from the journal; each point's "
                               "flow of evaluation %ld started its next solve",
                               replays, last_ok_replayed));
          else
            PetscCall(log_info(comm,
                               "restart: %ld evaluations replayed from the journal, none good; "
                               "each point's flow started from the case's initial state",
                               replays));
        }
        const double eta =
            (MPI_Wtime() - start) / computed * std::max(0L, o.max_evaluations - k - 1);
        if (!e.ok) {
          PetscCall(log_info(comm, "evaluation %3ld  FAILED (%s): the optimizer backs off", k,
                             e.failure.c_str()));
          PetscFunctionReturn(0);
        }
        std::string per_point;
        for (const auto &pt : mp.last())
          per_point += printf_string("  [%s c_D %.6f c_L %.5f]", pt.name.c_str(), pt.cd, pt.cl);
        PetscCall(log_info(comm, "evaluation %3ld  J %.10g%s%s  ETA <= %.1f min", k, e.f,
                           constraint_text(p, e).c_str(), per_point.c_str(), eta / 60));
        PetscFunctionReturn(0);
      },
      &result));
  if (rank == 0) files.close();
  PetscCall(log_info(comm,
                     "optimizer: %s after %ld evaluations (%ld replayed, %ld failed); best J "
                     "%.10g",
                     result.status.c_str(), result.evaluations, result.replayed, result.failed,
                     result.f));
  PetscCall(warm_once());
  PetscCall(finish(comm, args, cfg, o.algorithm, mp, result, good, start));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
