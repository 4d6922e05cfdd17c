// `karman adjoint`: the steady discrete adjoint of a case.
//
// Reuses the converged forward state in OUTDIR/flow.h5 when it belongs to this mesh and
// case (and checks that it is converged), or runs the forward solve; then solves the
// adjoint for the case's objective and writes
//   OUTDIR/gradient.json   objective, gradient of every parameter, adjoint iterations and
//                          residual, forward/adjoint wall times, peak memory
//   OUTDIR/adjoint.pvd     adjoint velocity and pressure (cells), dJ/dX (points); with
//                          adjoint.error_estimate the indicator and contribution of each cell
//                          (driver/error_estimate.hpp), whose values gradient.json has
//   OUTDIR/sensitivity_<wall>.pvd   surface sensitivity dJ/dn on every objective wall:
//                          per vertex X_bar . n with n the unit normal pointing into the
//                          fluid (positive: moving the wall into the fluid increases J),
//                          and its density per unit wall area.
#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/surface_sensitivity.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/cli/commands.hpp"
#include "karman/driver/output_options.hpp"
#include "karman/cli/fault_injection.hpp"
#include "karman/core/logger.hpp"
#include "karman/driver/error_estimate.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/solver/steady_solver.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace karman::cli {
namespace fs = std::filesystem;
using discretization::FlowResidual;

namespace {

/// Loads OUTDIR/flow.h5 into w if it belongs to this mesh and case; *loaded tells.
PetscErrorCode load_forward_state(const FlowResidual &res, const config::CaseConfig &cfg,
                                  const std::string &file, Vec w, bool *loaded) {
  PetscFunctionBeginUser;
  *loaded = false;
  const mesh::Mesh &m = res.mesh();
  std::string mesh_hash, file_mesh, file_case;
  PetscCall(io::mesh_hash(m, res.coordinates(), &mesh_hash));
  PetscCall(io::read_text_attribute_h5(m.comm, file, "mesh_hash", &file_mesh));
  PetscCall(io::read_text_attribute_h5(m.comm, file, "case_hash", &file_case));
  if (file_mesh != mesh_hash || file_case != cfg.problem_hash()) PetscFunctionReturn(0);
  PetscCall(io::read_state_h5(m, res.equations(), file, w));
  *loaded = true;
  PetscFunctionReturn(0);
}

io::Field shape_field(const std::vector<Vec3<double>> &X) {
  io::Field dX{"shape_sensitivity", 3, {}};
  for (const auto &x : X)
    for (int d = 0; d < 3; ++d) dX.values.push_back(x[d]);
  return dX;
}

/// OUTDIR/sensitivity_<wall>.pvd for every wall: dJ/dn per vertex and per unit area (eq. 13).
PetscErrorCode write_surface_sensitivity(const FlowResidual &res,
                                         const std::vector<Vec3<double>> &X,
                                         const std::string &dir) {
  PetscFunctionBeginUser;
  const mesh::Mesh &mesh = res.mesh();
  for (int p : res.boundary_conditions().wall_patches()) {
    adjoint::SurfaceSensitivity s;
    PetscCall(adjoint::surface_sensitivity(res, p, X, &s));
    io::Field sens{"surface_sensitivity", 1, s.value}, density{"sensitivity_density", 1, s.density};
    io::Field nf{"normal", 3, {}}, face_density{"sensitivity_density", 1, s.face_density};
    for (const auto &n : s.normal)
      for (int d = 0; d < 3; ++d) nf.values.push_back(n[d]);
    io::VtkSeries surface(mesh.comm, dir, "sensitivity_" + mesh.patch_names[p]);
    PetscCall(surface.write_surface(mesh, res.coordinates(), p, 0.0, {face_density},
                                    {sens, density, nf}));
  }
  PetscFunctionReturn(0);
}

/// Logs the error estimate of the objective `description` (steady or unsteady).  Collective.
PetscErrorCode log_estimate(MPI_Comm comm, const std::string &description,
                            const driver::ErrorEstimate &e) {
  PetscFunctionBeginUser;
  PetscCall(log_info(comm,
                     "error estimate: %s = %.10g, estimated error %+.3e (%.2e relative): "
                     "corrected %.10g",
                     description.c_str(), e.J, e.error, std::abs(e.error / e.J), e.J_corrected));
  PetscCall(log_info(comm,
                     "error estimate: on the refined mesh (%ld cells) %.10g %+.3e = %.10g, "
                     "%+.3e from J, times 2^p / (2^p - 1) with p = %d the error above; "
                     "indicators %.3e in all; adjoint %d iterations; %.1f s (refined case "
                     "%.1f s, transfer %.1f s, adjoint %.1f s)",
                     e.refined_cells, e.J_reconstructed, e.correction, e.J_refined, e.error_refined,
                     driver::kSchemeOrder, e.indicator_sum, e.adjoint_iterations, e.wall_time,
                     e.setup_time, e.transfer_time, e.adjoint_time));
  if (e.parents_outside > 0)
    PetscCall(log_info(comm,
                       "error estimate: %ld refined cell(s) lie in no cell of the mesh (a "
                       "curved wall): their nearest cell's reconstruction is used",
                       e.parents_outside));
  PetscFunctionReturn(0);
}

/// gradient.json's error_estimate block.
nlohmann::json estimate_json(const driver::ErrorEstimate &e) {
  return {{"method", "adjoint-weighted residual on the nested refinement"},
          {"value", e.J},
          {"estimated_error", e.error},
          {"corrected_value", e.J_corrected},
          {"scheme_order", driver::kSchemeOrder},
          {"refined_value", e.J_refined},
          {"error_against_refined", e.error_refined},
          {"reconstructed_value", e.J_reconstructed},
          {"correction", e.correction},
          {"indicator_sum", e.indicator_sum},
          {"refined_cells", e.refined_cells},
          {"parents_outside", e.parents_outside},
          {"adjoint_linear_iterations", e.adjoint_iterations},
          {"adjoint_relative_residual", e.adjoint_relative_residual},
          {"wall_time", e.wall_time},
          {"setup_time", e.setup_time},
          {"transfer_time", e.transfer_time},
          {"adjoint_time", e.adjoint_time}};
}

/// The spatial error estimate of an unsteady run's objective (driver::estimate_unsteady_error;
/// the refined trajectory in OUTDIR/trajectory-refined while it runs), logged, its indicator and
/// contribution in OUTDIR/error.pvd.  Collective.
PetscErrorCode unsteady_estimate(const CliArgs &args, driver::FlowCase &fc,
                                 const adjoint::UnsteadyAdjointResult &r,
                                 driver::ErrorEstimate *e) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = fc.mesh().comm;
  PetscCall(log_info(comm, "error estimate: the refined mesh's unsteady adjoint along the run "
                           "reconstructed there (mesh.refine + 1)"));
  PetscCall(driver::estimate_unsteady_error(
      fc, r, (fs::path(args.output_dir) / "trajectory-refined").string(), e));
  const adjoint::Objective *objective;
  PetscCall(fc.objective(&objective));
  const std::string statistic =
      adjoint::statistic_name(adjoint::objective_options().get(fc.config()).time);
  PetscCall(log_estimate(comm, objective->description() + " (" + statistic + ")", *e));
  if (driver::output_options().get(fc.config()).vtk) {
    io::VtkSeries volume(comm, args.output_dir, "error");
    PetscCall(volume.write_volume(
        fc.mesh(), fc.residual().coordinates(), r.times.back(),
        {{"error_indicator", 1, e->indicator}, {"error_contribution", 1, e->contribution}}));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode run_unsteady_adjoint(const CliArgs &args, driver::FlowCase &fc) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = fc.mesh().comm;
  const config::CaseConfig &cfg = fc.config();
  const mesh::Mesh &mesh = fc.mesh();
  FlowResidual &res = fc.residual();
  adjoint::UnsteadyAdjoint ua;
  PetscCall(ua.setup(res, cfg));
  adjoint::UnsteadyAdjointOptions o = fc.unsteady_gradient_options();
  o.state_file = (fs::path(args.output_dir) / "adjoint-state.h5").string();
  o.resume = args.restart;
  o.trajectory_directory = (fs::path(args.output_dir) / "trajectory").string();
  o.fault = adjoint_state_fault_hook();
  const int nv = res.nv();
  io::VtkSeries series(comm, args.output_dir, "adjoint");
  const driver::OutputOptions output = driver::output_options().get(cfg);
  if (output.vtk) {
    o.snapshot_every = output.vtk_every;
    o.snapshot = [&](long, double t, const std::vector<double> &psi) -> PetscErrorCode {
      PetscFunctionBeginUser;
      PetscCall(
          series.write_volume(mesh, res.coordinates(), t,
                              io::state_fields(mesh, res.equations(), psi.data(), "adjoint_")));
      PetscFunctionReturn(0);
    };
  }
  std::vector<adjoint::UnsteadyAdjointResult> results;
  PetscCall(fc.unsteady_gradient(ua, o, &results));
  const adjoint::UnsteadyAdjointResult &r = results.front();
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));
  PetscCall(log_info(
      comm, "objective = %.12g over %ld steps; forward %.1f s, adjoint %.1f s (ratio %.2f)", r.J,
      r.steps, r.forward_time, r.adjoint_time, r.adjoint_time / r.forward_time));
  PetscCall(log_info(
      comm, "schedule %s: %ld snapshots used, %ld recomputed steps, %.1f MiB written",
      adjoint::schedule_name(o.schedule), r.snapshots, r.recomputed, r.bytes_written / 1048576.0));
  for (const auto &p : r.parameters)
    PetscCall(log_info(comm, "  dJ/d(%s) = %.12g", p.name.c_str(), p.gradient));
  const bool estimating = adjoint::adjoint_options().get(cfg).error_estimate;
  driver::ErrorEstimate estimate;
  if (estimating) PetscCall(unsteady_estimate(args, fc, r, &estimate));

  // outputs: gradient.json, control_gradient.csv, initial-condition gradient, surface sensitivity
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  nlohmann::json j;
  j["case"] = cfg.file();
  j["cells"] = mesh.n_global_cells;
  int size;
  MPI_Comm_size(comm, &size);
  j["ranks"] = size;
  j["objective"] = {{"value", r.J},
                    {"time", adjoint::statistic_name(adjoint::objective_options().get(cfg).time)}};
  for (const auto &p : r.parameters) j["gradient"][p.name] = {{"gradient", p.gradient}};
  j["steps"] = r.steps;
  j["schedule"] = {{"type", adjoint::schedule_name(o.schedule)},
                   {"snapshots_used", r.snapshots},
                   {"snapshot_budget", o.snapshots},
                   {"recomputed_steps", r.recomputed},
                   {"bytes_written", r.bytes_written}};
  j["adjoint_linear_iterations"] = r.linear_iterations;
  j["adjoint_preconditioner_setups"] = r.preconditioner_setups;
  j["forward_wall_time"] = r.forward_time;
  j["adjoint_wall_time"] = r.adjoint_time;
  j["adjoint_over_forward_time"] = r.adjoint_time / r.forward_time;
  j["forward_peak_memory_mib"] = r.forward_memory; // the process peak at the end of the forward run
  j["peak_memory_mib"] = mem_total;                // ... and at the end of the adjoint
  if (r.resumed_from >= 0) j["resumed_from_level"] = r.resumed_from;
  if (estimating) j["error_estimate"] = estimate_json(estimate);
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "gradient.json");
    out << j.dump(2) << "\n";
    std::ofstream csv(fs::path(args.output_dir) / "control_gradient.csv");
    csv << "step,time";
    for (const auto &[name, series] : r.control) csv << ",dJ/d(" << name << ")";
    csv << "\n";
    csv.precision(17); // the full value (tests compare with the Python module to 1e-12)
    for (long k = 0; k < r.steps; ++k) {
      csv << (k + 1) << "," << r.times[k];
      for (const auto &[name, series] : r.control) csv << "," << series[k];
      csv << "\n";
    }
  }
  io::Field ic{"initial_condition_gradient", nv, r.initial};
  PetscCall(io::write_fields_h5(mesh, res.coordinates(),
                                (fs::path(args.output_dir) / "initial_gradient.h5").string(), {ic},
                                {}));
  if (output.vtk) {
    io::VtkSeries icv(comm, args.output_dir, "initial_gradient");
    // the fields with a time derivative (the others' initial values do not enter)
    std::vector<io::Field> icf;
    const auto all =
        io::state_fields(mesh, res.equations(), r.initial.data(), "initial_", "_gradient");
    for (std::size_t i = 0; i < all.size(); ++i)
      if (res.equations().field(i).transient) icf.push_back(all[i]);
    PetscCall(icv.write_volume(mesh, res.coordinates(), 0.0, icf, {shape_field(r.X)}));
    PetscCall(write_surface_sensitivity(res, r.X, args.output_dir));
  }
  PetscFunctionReturn(0);
}

/// The forward state of a steady adjoint: reused from OUTDIR/flow.h5 or solved, with the forward
/// run's wall time and peak memory (from OUTDIR/summary.json when reused; 0 if not known).
struct ForwardState {
  std::string flow; ///< OUTDIR/flow.h5
  bool reused = false;
  double time = 0, memory = 0;
};

/// Checks that the reused forward state w (from f.flow) is converged: |R(w)| against the
/// tolerance of the solver and the residual of the initial state; reads the forward run's time and
/// memory from OUTDIR/summary.json.  Collective.
PetscErrorCode check_reused_state(const CliArgs &args, const FlowResidual &res,
                                  const config::CaseConfig &cfg, Vec w, ForwardState *f) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = res.mesh().comm;
  Vec w0, r;
  double rnorm, r0;
  PetscCall(res.create_state(&r));
  PetscCall(res.create_state(&w0));
  PetscCall(res.residual(discretization::kSteady, w, r));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecSet(w0, 0.0));
  PetscCall(res.residual(discretization::kSteady, w0, r));
  PetscCall(VecNorm(r, NORM_2, &r0));
  PetscCall(VecDestroy(&w0));
  PetscCall(VecDestroy(&r));
  const double tol = std::max(100 * solver::solver_options().get(cfg).atol, 1e-8 * r0);
  PetscCheck(rnorm <= tol, comm, PETSC_ERR_NOT_CONVERGED,
             "%s holds an unconverged forward state (|R| = %.3e, needed <= %.3e): the adjoint is "
             "only meaningful at "
             "a converged state; run `karman run` to convergence or remove the file",
             f->flow.c_str(), rnorm, tol);
  std::ifstream in(fs::path(args.output_dir) / "summary.json");
  if (in.good()) {
    const nlohmann::json s = nlohmann::json::parse(in, nullptr, false);
    if (!s.is_discarded() && s.contains("wall_time")) f->time = s["wall_time"].get<double>();
    if (!s.is_discarded() && s.contains("peak_memory_mib"))
      f->memory = s["peak_memory_mib"].get<double>();
  }
  PetscCall(log_info(comm, "reusing the converged forward state in %s (|R| = %.3e)",
                     f->flow.c_str(), rnorm));
  PetscFunctionReturn(0);
}

/// The forward state w: reuse a converged one from OUTDIR, or solve.  Collective.
PetscErrorCode forward_state(const CliArgs &args, driver::FlowCase &fc, Vec w, ForwardState *f) {
  PetscFunctionBeginUser;
  f->flow = (fs::path(args.output_dir) / "flow.h5").string();
  if (fs::exists(f->flow))
    PetscCall(load_forward_state(fc.residual(), fc.config(), f->flow, w, &f->reused));
  if (f->reused) {
    PetscCall(check_reused_state(args, fc.residual(), fc.config(), w, f));
  } else {
    driver::SteadySolution solution;
    PetscCall(solve_steady_case(args, fc, w, &solution));
    f->time = solution.summary.wall_time;
    f->memory = solution.peak_memory_mib;
  }
  PetscFunctionReturn(0);
}

/// OUTDIR/gradient.json of a steady adjoint.  Collective.
PetscErrorCode write_steady_gradient(const CliArgs &args, const driver::FlowCase &fc,
                                     const adjoint::Objective &objective,
                                     const adjoint::AdjointResult &result, const ForwardState &f,
                                     const driver::ErrorEstimate *estimate, double mem_total,
                                     double mem_max) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = fc.mesh().comm;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  nlohmann::json j;
  j["case"] = fc.config().file();
  j["cells"] = fc.mesh().n_global_cells;
  j["ranks"] = size;
  j["objective"] = {{"description", objective.description()}, {"value", result.J}};
  for (const auto &p : result.gradient.parameters)
    j["gradient"][p.name] = {{"value", p.value}, {"gradient", p.gradient}};
  j["adjoint_linear_iterations"] = result.linear_iterations;
  // the iterative solve's GMRES restart (20, or wider: solver::widen_restart; 0 for the LU)
  j["adjoint_gmres_restart"] = result.gmres_restart;
  j["adjoint_relative_residual"] = result.relative_residual;
  j["forward_state"] = f.reused ? "reused from " + f.flow : "solved";
  j["forward_wall_time"] = f.time;
  j["adjoint_wall_time"] = result.wall_time;
  j["adjoint_over_forward_time"] = f.time > 0 ? result.wall_time / f.time : 0.0;
  j["forward_peak_memory_mib"] = f.memory;
  j["peak_memory_mib"] = mem_total;
  j["peak_memory_mib_max_rank"] = mem_max;
  if (estimate) j["error_estimate"] = estimate_json(*estimate);
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "gradient.json");
    out << j.dump(2) << "\n";
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_adjoint_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  const bool estimate_error = adjoint::adjoint_options().get(cfg).error_estimate;
  if (estimate_error) PetscCall(driver::check_estimable(comm, cfg, "adjoint.error_estimate"));
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  if (fc.unsteady()) {
    PetscCall(run_unsteady_adjoint(args, fc));
    PetscFunctionReturn(0);
  }
  PetscCheck(!args.restart, comm, PETSC_ERR_USER_INPUT,
             "--restart applies to unsteady adjoints only");
  const mesh::Mesh &mesh = fc.mesh();
  FlowResidual &res = fc.residual();
  const adjoint::Objective *objective;
  PetscCall(fc.objective(&objective));
  {
    // check the names early
    std::vector<discretization::ParameterGradient> all =
        discretization::ParameterRegistry(res).gradients(res, false, discretization::kSteady);
    PetscCall(adjoint::select_parameters(res, cfg, &all));
  }
  Vec w;
  PetscCall(res.create_state(&w));
  ForwardState forward;
  PetscCall(forward_state(args, fc, w, &forward));

  adjoint::AdjointResult result;
  PetscCall(fc.steady_gradient(w, &result));
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));
  PetscCall(log_info(comm, "objective %s = %.12g", objective->description().c_str(), result.J));
  PetscCall(log_info(
      comm, "adjoint: %d linear iteration(s), relative residual %.2e, %.2f s (forward %.2f s)",
      result.linear_iterations, result.relative_residual, result.wall_time, forward.time));
  for (const auto &p : result.gradient.parameters)
    PetscCall(
        log_info(comm, "  dJ/d(%s) = %.12g   (value %g)", p.name.c_str(), p.gradient, p.value));

  driver::ErrorEstimate estimate;
  if (estimate_error) {
    PetscCall(log_info(comm, "error estimate: the adjoint-weighted residual on the nested "
                             "refinement (mesh.refine + 1)"));
    PetscCall(driver::estimate_error(fc, w, &estimate));
    PetscCall(log_estimate(comm, objective->description(), estimate));
  }
  if (driver::output_options().get(cfg).vtk) {
    io::VtkSeries volume(comm, args.output_dir, "adjoint");
    auto fields = io::state_fields(mesh, res.equations(), result.psi.data(), "adjoint_");
    if (estimate_error) {
      fields.push_back({"error_indicator", 1, estimate.indicator});
      fields.push_back({"error_contribution", 1, estimate.contribution});
    }
    PetscCall(volume.write_volume(mesh, res.coordinates(), 0.0, fields,
                                  {shape_field(result.gradient.X)}));
    PetscCall(write_surface_sensitivity(res, result.gradient.X, args.output_dir));
  }
  PetscCall(write_steady_gradient(args, fc, *objective, result, forward,
                                  estimate_error ? &estimate : nullptr, mem_total, mem_max));
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
