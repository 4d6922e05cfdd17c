// `karman adapt`: goal-oriented mesh adaptation of a steady case to its objective (issue 46).
//
// Cycle k = 0, 1, ...: solve on the cycle's mesh (cycle 0: the case's; later ones warm-started
// from the previous cycle's flow.h5, interpolated), estimate the objective's error
// (driver/error_estimate.hpp), then mesh the next cycle from the indicator
// (driver/adaptation.hpp): growth x the cells (meshed again with scaled sizes when Gmsh's count
// misses them by more than 1.2x), the case's .geo with the size field as its background field
// (adapt.anisotropic, 2D: a metric field, meshed by BAMG).  A later cycle whose flow solve does
// not converge on its mesh (a fold of the discrete equations on that one mesh: results/
// tet-diagnosis.md section 13) is meshed again with Gmsh's sizes x kRetrySizeFactor (another mesh
// of nearly the same sizes) and solved there; its first solve takes the iterative solver alone
// when solver.linear is auto (the LU cannot cure a fold, and costs ~90 KiB per cell in 3D).  If
// the second mesh fails too, the adaptation stops with the last converged cycle; likewise when a
// later cycle's error estimate does not converge (its flow written).  Stops after
// adapt.cycles adaptations, when the estimated error is at most adapt.tolerance, before a mesh of
// more than adapt.max_cells cells or one whose error estimate would not fit in memory, or when Gmsh
// cannot mesh the size field (the last mesh stays, the log says why).  Writes
//   OUTDIR/adapt.csv           per cycle: cells, J, estimated error, corrected J, times
//   OUTDIR/cycle-K-unconverged/, meshes/cycle-K-unconverged.msh   a cycle's first mesh whose
//                              solve did not converge: its output (last_good.*) and mesh
//   OUTDIR/cycle-K/            the cycle's `karman run` output (flow.h5, ParaView, summary)
//                              and indicator.pvd (error_indicator, error_contribution, size,
//                              metric)
//   OUTDIR/meshes/cycle-K.geo, cycle-K-size.pos (or -metric.pos), cycle-K.msh   the adapted
//                              meshes and their size fields (cycle-K.geo meshes again with gmsh;
//                              the .msh is the mesh the cycle ran on)
#include "karman/cli/commands.hpp"
#include "karman/core/error.hpp"
#include "karman/core/logger.hpp"
#include "karman/driver/adaptation.hpp"
#include "karman/driver/error_estimate.hpp"
#include "karman/io/vtk_writer.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/solver/solver_options.hpp"
#include "karman/cli/fault_injection.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

namespace karman::cli {
namespace fs = std::filesystem;

namespace {

/// A next mesh within this factor of adapt.growth x the cells is kept; otherwise it is made again
/// with scaled sizes, at most kCountAttempts times.
constexpr double kCountTolerance = 1.2;
constexpr int kCountAttempts = 2;
/// A cycle whose solve did not converge is meshed again with Gmsh's sizes times this.
constexpr double kRetrySizeFactor = 0.97;

struct CycleResult {
  /// With run_cycle's may_fail: what did not converge (its message in `failure`).
  enum class Failed { Nothing, Solve, Estimate } failed = Failed::Nothing;
  std::string failure;
  long cells = 0;
  driver::ErrorEstimate estimate;
  double forward_time = 0, wall_time = 0;
};

/// The size (or metric) view of the cycle `stem` (cycle-K) in `meshes`.
std::string view_file(const fs::path &meshes, const std::string &stem, bool anisotropic) {
  return (meshes / (stem + (anisotropic ? "-metric.pos" : "-size.pos"))).string();
}

/// The case of cycle k: the base case on `geo` (the adapted .geo, or empty: the case's mesh),
/// the meshes cached in `cache`, warm-started from `initial` (or the case's initial state).
/// `iterative_only`: solver.linear auto becomes iterative (no LU fallback).
PetscErrorCode cycle_config(MPI_Comm comm, const config::CaseConfig &base, const std::string &geo,
                            const std::string &cache, const std::string &initial,
                            config::CaseConfig *cfg, bool iterative_only = false) {
  PetscFunctionBeginUser;
  std::vector<std::string> overrides = {"mesh.cache_dir=" + cache};
  if (!geo.empty()) overrides.push_back("mesh.file=" + geo);
  if (!initial.empty()) overrides.push_back("initial.file=" + initial);
  if (iterative_only &&
      solver::solver_options().get(base).linear == solver::LinearSolverChoice::Auto)
    overrides.push_back("solver.linear=iterative");
  PetscCall(config::CaseConfig::load_text(comm, base.resolved_yaml(), base.file(), base.directory(),
                                          overrides, base.schema(), *cfg));
  PetscFunctionReturn(0);
}

/// Solve, estimate and write one cycle; `sizes` the next cycle's sizes for adapt.growth x the
/// cells (not when `last`), and with adapt.anisotropic its metrics in `metric`.  With `may_fail`
/// a solve or an error estimate that does not converge is reported in out->failed and
/// out->failure instead of raised (after a failed estimate the flow's output is written);
/// `solve_fault` / `estimate_fault`: counted as such (the test hook).  Collective.
PetscErrorCode run_cycle(const CliArgs &args, const config::CaseConfig &cfg, const std::string &dir,
                         const driver::AdaptOptions &ao, bool last, bool may_fail, bool solve_fault,
                         bool estimate_fault, CycleResult *out, std::vector<double> *sizes,
                         std::vector<double> *metric, driver::FlowCase *fc) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
  const MPI_Comm comm = PETSC_COMM_WORLD;
  PetscCall(fc->load(comm, cfg));
  CliArgs a = args;
  a.output_dir = dir;
  Vec w;
  PetscCall(fc->create_state(&w));
  driver::SteadySolution solution;
  out->failed = CycleResult::Failed::Nothing;
  // a step's error: reported (true) when it did not converge (or the hook says so) and may_fail
  auto reported = [&](PetscErrorCode ierr, bool fault, CycleResult::Failed step) {
    if (!may_fail || !(ierr == PETSC_ERR_NOT_CONVERGED || (!ierr && fault))) return false;
    out->failed = step;
    out->failure =
        ierr ? last_error_message() : "KARMAN_TEST_UNCONVERGED_CYCLE: counted as not converged";
    clear_error();
    return true;
  };
  clear_error();
  const PetscErrorCode solved = solve_steady_case(a, *fc, w, &solution);
  if (!reported(solved, solve_fault, CycleResult::Failed::Solve)) PetscCall(solved);
  if (out->failed == CycleResult::Failed::Nothing) {
    out->cells = fc->mesh().n_global_cells;
    out->forward_time = solution.summary.wall_time;
    clear_error();
    const PetscErrorCode estimated = driver::estimate_error(*fc, w, &out->estimate);
    if (!reported(estimated, estimate_fault, CycleResult::Failed::Estimate)) PetscCall(estimated);
  }
  if (out->failed != CycleResult::Failed::Nothing) {
    PetscCall(VecDestroy(&w));
    PetscFunctionReturn(0);
  }
  std::vector<io::Field> fields = {{"error_indicator", 1, out->estimate.indicator},
                                   {"error_contribution", 1, out->estimate.contribution}};
  if (!last) {
    double predicted;
    PetscCall(driver::adapted_sizes(fc->residual(), out->estimate.indicator,
                                    ao.growth * static_cast<double>(out->cells), ao.max_coarsening,
                                    sizes, &predicted));
    fields.push_back({"size", 1, *sizes});
  }
  if (!last && ao.anisotropic) {
    discretization::LocalState state;
    PetscCall(fc->residual().local_state(discretization::kSteady, w, &state));
    PetscCall(
        driver::anisotropic_metrics(fc->residual(), state, *sizes, ao.max_aspect_ratio, metric));
    fields.push_back({"metric", 3, *metric});
  }
  PetscCall(VecDestroy(&w));
  io::VtkSeries series(comm, dir, "indicator");
  PetscCall(series.write_volume(fc->mesh(), fc->residual().coordinates(), 0.0, fields, {}));
  out->wall_time = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

/// Meshes the next cycle's .geo (rank 0 runs gmsh); "" or gmsh's message.  Collective.
PetscErrorCode mesh_next(MPI_Comm comm, const config::CaseConfig &cfg, const std::string &copy,
                         std::string *failure) {
  PetscFunctionBeginUser;
  std::string msh;
  // (a failure is reported, not raised: the adaptation keeps the last mesh; prepare_mesh_file's
  // errors are collective)
  clear_error();
  const PetscErrorCode ierr = mesh::prepare_mesh_file(comm, cfg, &msh);
  *failure = ierr ? last_error_message() : "";
  clear_error();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!ierr && rank == 0) {
    std::error_code ec;
    fs::copy_file(msh, copy, fs::copy_options::overwrite_existing, ec);
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_adapt_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig base;
  PetscCall(start_command(comm, args, &base));
  const mesh::MeshOptions m = mesh::mesh_options().get(base);
  PetscCheck(!solver::time_options().get(base).unsteady(), comm, PETSC_ERR_USER_INPUT,
             "%s: karman adapt adapts steady cases (time.mode steady)", base.file().c_str());
  PetscCall(driver::check_estimable(comm, base, "karman adapt"));
  const driver::AdaptOptions ao = driver::adapt_options().get(base);
  PetscCheck(!ao.anisotropic || m.dimension == 2, comm, PETSC_ERR_USER_INPUT,
             "%s: adapt.anisotropic is for 2D meshes (Gmsh's BAMG meshes surfaces; 3D adapts "
             "isotropically)",
             base.file().c_str());
  const fs::path out = fs::absolute(args.output_dir), meshes = out / "meshes";
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::ofstream csv;
  if (rank == 0) {
    fs::create_directories(meshes);
    csv.open(out / "adapt.csv");
    csv << "cycle,cells,value,estimated_error,corrected_value,refined_value,forward_time,"
           "estimate_time,cycle_time\n";
    csv.precision(12);
  }
  std::string geo, initial, stop = "adapt.cycles reached";
  std::string view_tag;  // the tag of the next cycle's .geo (adapted_geo_text)
  double size_scale = 1; // the adapted sizes' factor that gives growth x the cells with Gmsh
  for (long k = 0; k <= ao.cycles; ++k) {
    config::CaseConfig cfg;
    // a later cycle: its first solve without the LU; one that does not converge, once more on
    // another mesh (header)
    PetscCall(cycle_config(comm, base, geo, meshes.string(), initial, &cfg, k > 0));
    const std::string dir = (out / ("cycle-" + std::to_string(k))).string();
    PetscCall(
        log_info(comm, "adapt: cycle %ld on %s", k, geo.empty() ? "the case's mesh" : geo.c_str()));
    if (rank == 0) fs::create_directories(dir);
    PetscCallMPI(MPI_Barrier(comm));
    CycleResult r;
    std::vector<double> sizes, metric;
    auto fc = std::make_unique<driver::FlowCase>();
    PetscCall(run_cycle(args, cfg, dir, ao, k == ao.cycles, k > 0, unconverged_cycle_fault(k),
                        unconverged_cycle_fault(k, true), &r, &sizes, &metric, fc.get()));
    if (r.failed == CycleResult::Failed::Solve) {
      const std::string stem = "cycle-" + std::to_string(k);
      PetscCall(
          log_info(comm,
                   "adapt: cycle %ld's flow did not converge on its mesh (its output and mesh "
                   "now in %s-unconverged and meshes/%s-unconverged.msh): %s",
                   k, dir.c_str(), stem.c_str(), r.failure.c_str()));
      if (rank == 0) {
        // the first mesh's output and mesh kept beside, for a look at what failed
        std::error_code ec;
        fs::remove_all(dir + "-unconverged", ec);
        fs::rename(dir, dir + "-unconverged", ec);
        fs::rename(meshes / (stem + ".msh"), meshes / (stem + "-unconverged.msh"), ec);
        fs::create_directories(dir);
        std::ofstream(geo) << driver::adapted_geo_text(
            base.resolve_path(m.file), view_file(meshes, stem, ao.anisotropic),
            view_tag + ", meshed again", ao.anisotropic, kRetrySizeFactor);
      }
      PetscCallMPI(MPI_Barrier(comm));
      std::string failure;
      fc = std::make_unique<driver::FlowCase>(); // (before its case changes)
      PetscCall(cycle_config(comm, base, geo, meshes.string(), initial, &cfg));
      PetscCall(mesh_next(comm, cfg, (meshes / (stem + ".msh")).string(), &failure));
      if (!failure.empty()) {
        stop = failure + "; the last mesh is cycle " + std::to_string(k - 1);
        break;
      }
      PetscCall(log_info(comm,
                         "adapt: cycle %ld meshed again with Gmsh's sizes x %g (another mesh) and "
                         "solved there",
                         k, kRetrySizeFactor));
      PetscCall(run_cycle(args, cfg, dir, ao, k == ao.cycles, true, false,
                          unconverged_cycle_fault(k, true), &r, &sizes, &metric, fc.get()));
      if (r.failed == CycleResult::Failed::Solve) {
        PetscCall(log_info(comm, "adapt: cycle %ld's flow did not converge on its second mesh: %s",
                           k, r.failure.c_str()));
        stop = "cycle " + std::to_string(k) +
               "'s flow did not converge on two meshes; the last converged cycle is " +
               std::to_string(k - 1);
        break;
      }
    }
    if (r.failed == CycleResult::Failed::Estimate) {
      // (the refinement's adjoint: e.g. GMRES stalled on 8x the cells and no room for the LU)
      PetscCall(log_info(comm,
                         "adapt: cycle %ld: %ld cells, its flow in %s; its error estimate: %s", k,
                         r.cells, dir.c_str(), r.failure.c_str()));
      stop = "cycle " + std::to_string(k) +
             "'s error estimate did not converge; the last estimated cycle is " +
             std::to_string(k - 1);
      break;
    }
    const driver::ErrorEstimate &e = r.estimate;
    PetscCall(log_info(comm,
                       "adapt: cycle %ld: %ld cells, J = %.10g, estimated error %+.3e, corrected "
                       "%.10g; %.1f s",
                       k, r.cells, e.J, e.error, e.J_corrected, r.wall_time));
    if (rank == 0)
      csv << k << "," << r.cells << "," << e.J << "," << e.error << "," << e.J_corrected << ","
          << e.J_refined << "," << r.forward_time << "," << e.wall_time << "," << r.wall_time
          << "\n"
          << std::flush;
    if (k == ao.cycles) break;
    if (ao.tolerance > 0 && std::abs(e.error) <= ao.tolerance) {
      stop = "the estimated error is within adapt.tolerance";
      break;
    }
    const double target = ao.growth * static_cast<double>(r.cells); // the next mesh's cells
    if (target > static_cast<double>(ao.max_cells)) {
      stop = "the next mesh would exceed adapt.max_cells (" + std::to_string(ao.max_cells) +
             " cells); the last mesh is cycle " + std::to_string(k);
      break;
    }
    {
      // every cycle estimates its error on 2^d x its cells: a mesh whose estimate would not fit in
      // memory is not made (the run would end in the out-of-memory killer)
      bool fits;
      double needed, available;
      PetscCall(driver::estimate_fits_in_memory(comm, static_cast<int>(m.dimension), target, &fits,
                                                &needed, &available));
      if (!fits) {
        char text[256];
        std::snprintf(text, sizeof(text),
                      "the error estimate of the next mesh (%.0f cells) would need about %.2f GiB, "
                      "%.2f GiB are available; the last mesh is cycle %ld",
                      target, needed, available, k);
        stop = text;
        break;
      }
    }
    // the next cycle's mesh: the case's .geo with the size (or metric) field as background field,
    // the sizes times size_scale: Gmsh's cells for a size s are not the regular cells of edge s
    // that adapted_sizes counts (its tetrahedra are larger: 1.16x instead of 2x the cells measured
    // on DFG 3D-1Z), so a mesh whose count misses growth x the cells by more than kCountTolerance
    // is made again with the sizes scaled by (cells / target)^(1/d), and the scale kept for the
    // next cycles
    const std::string stem = "cycle-" + std::to_string(k + 1);
    const std::string pos = view_file(meshes, stem, ao.anisotropic);
    const std::string next = (meshes / (stem + ".geo")).string();
    const std::string next_msh = (meshes / (stem + ".msh")).string();
    std::string failure;
    long next_cells = 0;
    for (int attempt = 0;; ++attempt) {
      std::string view_hash;
      if (ao.anisotropic) {
        // (a metric M = R diag(1 / h^2) R^T: the sizes times s is M / s^2)
        std::vector<double> scaled(metric);
        for (double &x : scaled) x /= size_scale * size_scale;
        PetscCall(driver::write_metric_field(fc->residual(), scaled, pos, &view_hash));
      } else {
        std::vector<double> scaled(sizes);
        for (double &x : scaled) x *= size_scale;
        PetscCall(driver::write_size_field(fc->residual(), scaled, pos, &view_hash));
      }
      view_tag = "view " + view_hash;
      if (rank == 0)
        std::ofstream(next) << driver::adapted_geo_text(base.resolve_path(m.file), pos, view_tag,
                                                        ao.anisotropic);
      PetscCallMPI(MPI_Barrier(comm));
      config::CaseConfig next_cfg;
      PetscCall(cycle_config(comm, base, next, meshes.string(), "", &next_cfg));
      PetscCall(mesh_next(comm, next_cfg, next_msh, &failure));
      if (!failure.empty()) break;
      PetscCall(mesh::count_cells(comm, next_msh, &next_cells));
      const double ratio = static_cast<double>(next_cells) / target;
      if (std::abs(std::log(ratio)) <= std::log(kCountTolerance) || attempt == kCountAttempts)
        break;
      size_scale *= std::pow(ratio, 1.0 / static_cast<double>(m.dimension));
      PetscCall(log_info(comm,
                         "adapt: cycle %ld's mesh has %ld cells where %.0f were asked: meshed "
                         "again with the sizes x %.3f",
                         k + 1, next_cells, target, size_scale));
    }
    if (!failure.empty()) {
      stop = failure + "; the last mesh is cycle " + std::to_string(k);
      break;
    }
    geo = next;
    initial = dir + "/flow.h5";
  }
  PetscCall(log_info(comm, "adapt: stopped: %s; per cycle: %s", stop.c_str(),
                     (out / "adapt.csv").string().c_str()));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
