// `karman optimize`: shape optimization of a steady case (driver/shape_optimization.hpp,
// driver/optimizer.hpp); control optimization and identification: driver/control_optimization.hpp.
// The `design:` list gives the variables, the objective section the function to minimize,
// `constraints:` the constraints, `optimization:` the algorithm and the mesh deformation.  Per
// evaluation (one forward solve warm-started from the last good design or the prediction of the
// last good ones, one adjoint per flow function, the deformation and its reverse):
//   OUTDIR/optimization.csv   evaluation, computed/replayed, ok, objective, constraints, |dJ/da|,
//                             Newton iterations, forward/adjoint/deformation times, min V/V0,
//                             |R| of the forward solve's start, whether predicted (1),
//                             failure reason
//   OUTDIR/designs.csv        the design vector of every evaluation (the design's a, not the
//                             optimizer's a / scale)
//   OUTDIR/shape_<wall>.pvd   the walls at every evaluation (time = evaluation index) with
//                             the objective's shape gradient and surface sensitivity
//   OUTDIR/shapes/shape_NNNN.csv   the same as CSV with dJ/dd_B (io/wall_shape.hpp), for
//                             postprocess/plot_shapes.py; shapes/optimized.csv the best design
//   OUTDIR/flow.pvd           the flow every optimization.vtk_every evaluations
//   OUTDIR/optimization-journal.jsonl   every evaluation, for --restart (driver/optimizer.hpp)
//   OUTDIR/optimization-state*.h5       the flows of the last 4 good evaluations (warm start and
//                                       its prediction after a restart)
// and at the end OUTDIR/optimized.msh (the best design's mesh, to re-run), summary.json and the
// flow and surface sensitivity of the best design.  A progress line per evaluation with an ETA.
//
// (cmd_optimize_multipoint.cpp) A points: list makes it a multipoint campaign.
// (cmd_optimize_control.cpp) A design: list of control entries (parameter, time-function, per-step:
// driver/ control_optimization.hpp) optimizes physical and boundary parameters of a steady or
// unsteady case instead (forward + adjoint per function, no mesh deformation):
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
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/commands.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/optimization/kkt_check.hpp"
#include "karman/optimization/optimization_options.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "karman/io/msh_writer.hpp"
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

constexpr const char *kStateStem = "optimization-state";

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

/// A shape campaign's evaluations and their output: the warm start of a restart, the flow state
/// saved per good evaluation, history rows, the walls with their shape gradients (ParaView and
/// CSV), the flow every optimization.vtk_every evaluations, a progress line.
class ShapeCampaign {
public:
  ShapeCampaign(MPI_Comm comm, const CliArgs &args, const config::CaseConfig &cfg,
                optimization::ShapeOptimization &problem, long max_evaluations)
      : comm_(comm), args_(args), cfg_(cfg), problem_(problem), max_evaluations_(max_evaluations),
        warm_loaded_(!args.restart) {}

  PetscErrorCode open() {
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_rank(comm_, &rank_));
    const mesh::Mesh &mesh = fc().mesh();
    const optimization::OptimizationProblem &p = problem_.problem();
    if (rank_ == 0)
      files_.open(args_.output_dir, p, "",
                  ",gradient_norm,newton_iterations,forward_time,adjoint_time,deformation_time,"
                  "deformation_adjoint_time,min_volume_ratio,start_residual,predicted");
    walls_ = fc().residual().boundary_conditions().wall_patches();
    for (int w : walls_)
      shape_series_.push_back(
          std::make_unique<io::VtkSeries>(comm_, args_.output_dir, "shape_" + mesh.patch_names[w]));
    shapes_dir_ = fs::path(args_.output_dir) / "shapes";
    if (rank_ == 0) fs::create_directories(shapes_dir_);
    PetscCall(flow_writer_.setup(fc().residual(), fc().monitors(), cfg_, args_.output_dir, "flow"));
    vtk_every_ = optimization::optimization_options().get(cfg_).vtk_every;
    start_ = MPI_Wtime();
    PetscFunctionReturn(0);
  }

  /// On a restart first the warm start of the last good journaled evaluation, then the
  /// problem's evaluation, then its flow state saved before the journal gets the evaluation (so
  /// a restart finds the state of every journaled good evaluation).
  PetscErrorCode evaluate(const std::vector<double> &x, optimization::Evaluation *e) {
    PetscFunctionBeginUser;
    if (!warm_loaded_) {
      warm_loaded_ = true;
      PetscCall(warm_start());
    }
    PetscCall(problem_.evaluate(x, e));
    const optimization::ShapeRecord &r = problem_.last();
    for (const optimization::RemeshRecord &m : r.remeshes) {
      PetscCall(record_remesh(next_index_, r, m));
      pending_reset_ = true;
    }
    if (e->ok && pending_reset_) { // the optimizer restarts (Evaluation::reset)
      e->reset = true;
      pending_reset_ = false;
    }
    e->details = nlohmann::json({{"remesh", r.remeshed ? r.remeshes.back().index : 0},
                                 {"gradient_norm", r.gradient_norm},
                                 {"newton_iterations", r.shape.newton_iterations},
                                 {"forward_time", r.shape.forward_time},
                                 {"adjoint_time", r.shape.adjoint_time},
                                 {"deformation_time", r.shape.deformation_time},
                                 {"deformation_adjoint_time", r.shape.deformation_reverse_time},
                                 {"min_volume_ratio", r.shape.min_volume_ratio},
                                 {"start_residual", r.shape.start_residual},
                                 {"last_state_residual", r.shape.last_state_residual},
                                 {"predicted", r.shape.predicted ? 1 : 0}})
                     .dump();
    if (e->ok)
      PetscCall(save_campaign_state(fc(), args_.output_dir, kStateStem, next_index_,
                                    problem_.shape().state()));
    PetscFunctionReturn(0);
  }

  PetscErrorCode observe(long k, const std::vector<double> &x, const optimization::Evaluation &e,
                         bool replayed) {
    PetscFunctionBeginUser;
    next_index_ = k + 1;
    good_.add(k, x, e);
    const nlohmann::json d = details_of(e);
    if (rank_ == 0)
      files_.write(
          k, replayed, e, 12, "",
          printf_string(",%.6e,%d,%.4f,%.4f,%.4f,%.4f,%.6f,%.3e,%d", detail(d, "gradient_norm"),
                        static_cast<int>(detail(d, "newton_iterations")), detail(d, "forward_time"),
                        detail(d, "adjoint_time"), detail(d, "deformation_time"),
                        detail(d, "deformation_adjoint_time"), detail(d, "min_volume_ratio"),
                        detail(d, "start_residual"), static_cast<int>(detail(d, "predicted"))),
          problem_.design_of(x));
    if (replayed) {
      if (e.ok) last_ok_replayed_ = k, last_ok_design_ = x;
      PetscFunctionReturn(0);
    }
    if (!series_resumed_ && k > 0) { // the first new evaluation after a replay
      for (auto &s : shape_series_) PetscCall(s->resume(k - 1 + 0.5));
      PetscCall(flow_writer_.resume(k - 1 + 0.5));
    }
    series_resumed_ = true;
    ++computed_;
    const double eta = (MPI_Wtime() - start_) / computed_ * std::max(0L, max_evaluations_ - k - 1);
    if (!e.ok) {
      PetscCall(log_info(comm_, "evaluation %3ld  FAILED (%s): the optimizer backs off", k,
                         e.failure.c_str()));
      PetscFunctionReturn(0);
    }
    const optimization::ShapeRecord &r = problem_.last();
    PetscCall(log_info(comm_,
                       "evaluation %3ld  J %.10g%s  |dJ/da| %.3e  newton %d  %.1f s  ETA <= %.1f "
                       "min",
                       k, e.f, constraint_text(problem_.problem(), e).c_str(), r.gradient_norm,
                       r.shape.newton_iterations,
                       r.shape.forward_time + r.shape.adjoint_time + r.shape.deformation_time +
                           r.shape.deformation_reverse_time,
                       eta / 60));
    PetscCall(write_design(static_cast<double>(k), printf_string("shape_%04ld.csv", k)));
    if (vtk_every_ > 0 && k % vtk_every_ == 0) {
      discretization::LocalState state;
      solver::FlowMonitors::Values v;
      PetscCall(fc().evaluate(discretization::kSteady, problem_.shape().state(), &state, &v));
      PetscCall(flow_writer_.write_vtk(fc().residual(), state, static_cast<double>(k)));
    }
    PetscFunctionReturn(0);
  }

  /// The best design x evaluated again: its mesh (to re-run), walls, flow and summary.
  PetscErrorCode finish(const std::vector<double> &x,
                        const optimization::OptimizationResult &result,
                        const std::string &algorithm) {
    PetscFunctionBeginUser;
    const optimization::OptimizationProblem &p = problem_.problem();
    files_.close();
    optimization::Evaluation again, best;
    PetscCall(problem_.evaluate(x, &again));
    bool reevaluated;
    nlohmann::json fallback;
    PetscCall(best_design_evaluation(comm_, x, again, good_, &best, &reevaluated, &fallback));
    if (reevaluated) {
      const mesh::Mesh &mesh = fc().mesh(); // (after the evaluation: it may have remeshed)
      PetscCall(io::write_msh(mesh, problem_.shape().coordinates(),
                              (fs::path(args_.output_dir) / "optimized.msh").string()));
      PetscCall(io::write_wall_shape(mesh, problem_.shape().coordinates(), walls_,
                                     (shapes_dir_ / "optimized.csv").string(),
                                     &problem_.last().shape.dJ_dB));
      PetscCall(driver::write_flow_state(fc().residual(), fc().monitors(), cfg_, args_.output_dir,
                                         "flow_optimized", problem_.shape().state(),
                                         discretization::kSteady));
    }
    nlohmann::json j = campaign_summary(cfg_, algorithm, result, best.f);
    j.update(fallback);
    j["design"] = nlohmann::json::object();
    const std::vector<double> a = problem_.design_of(x); // (the case's units, not a / scale)
    for (std::size_t i = 0; i < p.names.size(); ++i) j["design"][p.names[i]] = a[i];
    for (std::size_t i = 0; i < p.constraints.size(); ++i)
      j["constraints"][p.constraints[i].name] = {{"value", best.c[i]},
                                                 {"bound", p.constraints[i].value}};
    const solver::FlowMonitors::Values &bv = problem_.last().shape.values;
    if (reevaluated)
      j["values"] = {{"cd", bv.cd},
                     {"cd_pressure", bv.cd_pressure},
                     {"cd_viscous", bv.cd_viscous},
                     {"cl", bv.cl}};
    // first-order optimality of the best design (optimization::check_kkt)
    const optimization::KktReport kkt = optimization::check_kkt(p, x, best);
    j["kkt"] = kkt_json(p, kkt);
    j["remeshes"] = remeshes_;
    j["wall_time"] = MPI_Wtime() - start_;
    PetscCall(write_summary(comm_, args_.output_dir, j));
    if (reevaluated)
      PetscCall(log_info(comm_, "best design: J %.10g, c_D %.8f, c_L %.8f; mesh %s/optimized.msh",
                         best.f, bv.cd, bv.cl, args_.output_dir.c_str()));
    PetscCall(log_kkt(comm_, kkt));
    if (!reevaluated) PetscCall(fail_unevaluated_best(comm_, j, args_.output_dir));
    PetscFunctionReturn(0);
  }

private:
  /// Appends remeshing r of evaluation k to OUTDIR/remesh.json (rank 0, atomically), before the
  /// journal gets the evaluation, and says so.
  PetscErrorCode record_remesh(long k, const optimization::ShapeRecord &r,
                               const optimization::RemeshRecord &m) {
    PetscFunctionBeginUser;
    remeshes_.push_back({{"evaluation", k},
                         {"index", m.index},
                         {"design", m.design},
                         {"cells_before", m.cells_before},
                         {"cells_after", m.cells_after},
                         {"size_scale", m.size_scale},
                         {"meshings", m.meshings},
                         {"time", m.time},
                         {"reason", r.first_failure},
                         {"layer_dropped", m.layer_dropped},
                         {"own_walls", m.own_walls},
                         {"own_walls_failure", m.own_walls_failure}});
    PetscCall(write_remeshes());
    char calibrated[96] = "";
    if (m.meshings > 1)
      std::snprintf(calibrated, sizeof(calibrated), "; sizes x%.3f for the cell count, %d meshings",
                    m.size_scale, m.meshings);
    const std::string layers =
        m.layer_dropped.empty()
            ? std::string()
            : "; without wall layers, which Gmsh could not make: " + m.layer_dropped.substr(0, 120);
    const std::string last_good =
        "the last good design" +
        (m.own_walls_failure.empty()
             ? std::string()
             : " (not its own: " + m.own_walls_failure.substr(0, 160) + ")");
    PetscCall(log_info(comm_,
                       "evaluation %3ld  the mesh could not follow (%s): remeshed around the walls "
                       "of %s in %.2f s (%s.msh, %ld -> %ld cells%s%s)",
                       k, r.first_failure.c_str(), m.own_walls ? "the design" : last_good.c_str(),
                       m.time, fs::path(m.stem).filename().c_str(), m.cells_before, m.cells_after,
                       calibrated, layers.c_str()));
    PetscFunctionReturn(0);
  }

  PetscErrorCode write_remeshes() {
    return write_json(comm_, (fs::path(args_.output_dir) / "remesh.json").string(), remeshes_);
  }

  /// A restarted campaign: the mesh of its last journaled remeshing (OUTDIR/remesh.json; later
  /// ones, of evaluations the journal lost, are dropped and made again), then the flow of the
  /// last good journaled evaluation, or the one transferred by that remeshing if none followed
  /// it.
  PetscErrorCode warm_start() {
    PetscFunctionBeginUser;
    const std::string path = (fs::path(args_.output_dir) / "remesh.json").string();
    std::string text;
    if (rank_ == 0 && fs::exists(path)) {
      std::ifstream in(path);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    PetscCall(broadcast_string(comm_, &text));
    nlohmann::json kept = nlohmann::json::array(), all = nlohmann::json::array();
    if (!text.empty()) {
      all = nlohmann::json::parse(text, nullptr, false);
      PetscCheck(all.is_array(), comm_, PETSC_ERR_FILE_UNEXPECTED,
                 "--restart: %s is not a list of remeshings (JSON); the campaign cannot "
                 "continue on its last mesh",
                 path.c_str());
    }
    for (const auto &r : all)
      if (r.value("evaluation", -1L) < next_index_) kept.push_back(r);
    remeshes_ = kept;
    if (kept.size() != all.size()) PetscCall(write_remeshes());
    long remeshed_at = -1;
    if (!kept.empty()) {
      const nlohmann::json &r = kept.back();
      optimization::RemeshRecord m;
      m.index = r.at("index").get<long>();
      m.stem = (fs::path(args_.output_dir) / ("remesh-" + std::to_string(m.index))).string();
      m.design = r.at("design").get<std::vector<double>>();
      m.size_scale = r.value("size_scale", 1.0); // (absent in files of the first version)
      remeshed_at = r.at("evaluation").get<long>();
      PetscCall(problem_.restore_remeshing(m, last_ok_replayed_ < remeshed_at));
      pending_reset_ = last_ok_replayed_ < remeshed_at; // (no good evaluation on it yet)
      PetscCall(log_info(comm_, "restart: on the mesh of remeshing %ld (evaluation %ld)", m.index,
                         remeshed_at));
    }
    if (last_ok_replayed_ < 0 || last_ok_replayed_ < remeshed_at) PetscFunctionReturn(0);
    problem_.set_last_good(last_ok_design_);
    Vec w;
    bool found = false;
    PetscCall(fc().create_state(&w));
    // the warm start's prediction: the good evaluations' states on this mesh, oldest first, as
    // the uninterrupted campaign had them (ShapeEvaluator::remember; good_ holds the replayed
    // ones)
    for (const GoodEvaluations::Record *r : good_.last(optimization::kWarmStartHistory)) {
      const long k = r->index;
      if (k < remeshed_at || k == last_ok_replayed_) continue;
      PetscCall(load_campaign_state(fc(), args_.output_dir, kStateStem, k, w, &found));
      if (found)
        PetscCall(problem_.remember(r->x, w));
      else
        PetscCall(log_info(comm_,
                           "restart: the flow of evaluation %ld is no longer kept; the warm "
                           "start's prediction starts without it",
                           k));
    }
    PetscCall(
        load_campaign_state(fc(), args_.output_dir, kStateStem, last_ok_replayed_, w, &found));
    PetscCheck(found, comm_, PETSC_ERR_FILE_OPEN,
               "--restart: no saved flow state of evaluation %ld (optimization-state.h5) in "
               "%s; the campaign cannot continue from where it stopped",
               last_ok_replayed_, args_.output_dir.c_str());
    PetscCall(problem_.remember(last_ok_design_, w));
    PetscCall(problem_.shape().set_state(w));
    PetscCall(VecDestroy(&w));
    PetscCall(log_info(comm_,
                       "restart: %ld evaluations replayed from the journal; the flow of "
                       "evaluation %ld starts the next solve",
                       next_index_, last_ok_replayed_));
    PetscFunctionReturn(0);
  }

  /// The walls of the current design with the shape gradient: series time t, shapes/name.
  PetscErrorCode write_design(double t, const std::string &name) {
    PetscFunctionBeginUser;
    const optimization::ShapeRecord &r = problem_.last();
    for (std::size_t i = 0; i < walls_.size(); ++i)
      PetscCall(write_shape(fc().residual(), walls_[i], r.shape.dJ_dB, t, *shape_series_[i]));
    PetscCall(io::write_wall_shape(fc().mesh(), problem_.shape().coordinates(), walls_,
                                   (shapes_dir_ / name).string(), &r.shape.dJ_dB));
    PetscFunctionReturn(0);
  }

  MPI_Comm comm_;
  const CliArgs &args_;
  const config::CaseConfig &cfg_;
  /// the flow case in use (a remeshing replaces it)
  driver::FlowCase &fc() { return problem_.flow_case(); }
  optimization::ShapeOptimization &problem_;
  long max_evaluations_;
  PetscMPIInt rank_ = 0;
  HistoryFiles files_;
  std::vector<int> walls_;
  std::vector<std::unique_ptr<io::VtkSeries>> shape_series_;
  fs::path shapes_dir_;
  driver::FlowWriter flow_writer_;
  long vtk_every_ = 0;
  bool series_resumed_ = false; // the series are continued after the replayed evaluations
  long computed_ = 0, next_index_ = 0, last_ok_replayed_ = -1;
  std::vector<double> last_ok_design_; ///< the design of last_ok_replayed_
  GoodEvaluations good_; ///< for the best design if it cannot be evaluated again (finish)
  nlohmann::json remeshes_ = nlohmann::json::array(); ///< OUTDIR/remesh.json
  bool warm_loaded_;
  bool pending_reset_ = false; ///< remeshed, and no good evaluation since: the next one resets
  double start_ = 0;
};

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
             "hicks-henne, rigid, surface-normal, radial)",
             cfg.file().c_str());
  if (!cfg.points().empty()) {
    PetscCall(run_multipoint_optimize(comm, args, cfg));
    PetscFunctionReturn(0);
  }
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  const optimization::OptimizerOptions o = optimizer_options(cfg, args);
  FaultHook fault; // crash tests
  PetscCall(campaign_fault_hook(comm, {"forward", "adjoint", "deformation", "remesh"}, 1,
                                "a shape evaluation", &fault));
  optimization::ShapeOptimization problem;
  PetscCall(problem.setup(fc, nullptr, fault));
  if (optimization::optimization_options().get(cfg).remesh)
    problem.enable_remeshing(args.output_dir);
  const optimization::OptimizationProblem &p = problem.problem();
  PetscCall(
      log_campaign(comm,
                   printf_string("optimize %s: %zu design variables, %zu constraints, %s, at most "
                                 "%ld evaluations",
                                 cfg.file().c_str(), p.names.size(), p.constraints.size(),
                                 o.algorithm.c_str(), o.max_evaluations),
                   p));
  ShapeCampaign campaign(comm, args, cfg, problem, o.max_evaluations);
  PetscCall(campaign.open());
  optimization::OptimizationResult result;
  PetscCall(optimization::optimize(
      comm, p,
      [&](const std::vector<double> &x, optimization::Evaluation *e) {
        return campaign.evaluate(x, e);
      },
      o,
      [&](long k, const std::vector<double> &x, const optimization::Evaluation &e, bool replayed) {
        return campaign.observe(k, x, e, replayed);
      },
      &result));
  PetscCall(log_info(comm,
                     "optimizer: %s after %ld evaluations (%ld replayed, %ld failed); best J "
                     "%.10g",
                     result.status.c_str(), result.evaluations, result.replayed, result.failed,
                     result.f));
  PetscCall(campaign.finish(result.x, result, o.algorithm));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
