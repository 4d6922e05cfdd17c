// `karman run`: solves a case.
//
// Steady (time.mode: steady): Newton with pseudo-transient continuation; a log line
// and a row of OUTDIR/forces.csv per Newton iteration.
// Unsteady (time.mode: unsteady): BDF1 then BDF2 steps to time.t_end; a progress line
// and a row of OUTDIR/forces.csv per step, ParaView snapshots every output.vtk_every
// steps, crash-safe checkpoints every output.checkpoint_every steps; `--restart`
// continues from the last complete checkpoint (forces.csv and the .pvd series are
// continued, not duplicated); OUTDIR/summary.json holds the force statistics over
// [time.statistics_start, t_end] and the Strouhal number of the lift.
// Both write the final fields (OUTDIR/flow.pvd, flow_<wall>.pvd, flow.h5).  A solve that
// fails writes the last good state (OUTDIR/last_good*) and stops with the reason, the
// residual history and what to try.
#include "karman/cli/campaign_output.hpp"
#include "karman/cli/commands.hpp"
#include "karman/driver/output_options.hpp"
#include "karman/solver/forces.hpp"
#include "karman/solver/solver_options.hpp"
#include "karman/solver/step_size.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/core/signal.hpp"
#include "karman/io/atomic_file.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/driver/force_history.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace karman::cli {
namespace fs = std::filesystem;
using discretization::FlowResidual;
using driver::FlowCase;
using driver::ForceSample;
using solver::FlowMonitors;

namespace {

std::string history_text(const std::vector<double> &h) {
  std::ostringstream out;
  out.precision(3);
  for (std::size_t i = 0; i < h.size(); ++i) out << (i ? ", " : "") << h[i];
  return out.str();
}

nlohmann::json base_summary(const FlowResidual &res, const config::CaseConfig &cfg) {
  nlohmann::json j;
  int size;
  MPI_Comm_size(res.mesh().comm, &size);
  j["case"] = cfg.file();
  j["cells"] = res.mesh().n_global_cells;
  j["unknowns"] = res.mesh().n_global_cells * res.nv();
  j["ranks"] = size;
  return j;
}

void add_values(nlohmann::json &j, const FlowMonitors::Values &v, const config::CaseConfig &cfg,
                const physics::EquationSet &eq) {
  const int nv = eq.nv();
  j["cd"] = v.cd;
  j["cl"] = v.cl;
  j["cd_pressure"] = v.cd_pressure;
  j["cd_viscous"] = v.cd_viscous;
  j["cm"] = v.cm;
  j["force"] = {v.force.total()[0], v.force.total()[1], v.force.total()[2]};
  j["force_pressure"] = {v.force.pressure[0], v.force.pressure[1], v.force.pressure[2]};
  j["force_viscous"] = {v.force.viscous[0], v.force.viscous[1], v.force.viscous[2]};
  if (v.has_dp) j["delta_p"] = v.dp;
  const auto pts = solver::probe_options().get(cfg).probes;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    nlohmann::json pr;
    pr["point"] = {pts[i][0], pts[i][1], pts[i][2]};
    for (std::size_t f = 0; f < eq.n_fields(); ++f) { // pressure as "p", vectors as lists
      const physics::FieldSpec &fs = eq.field(f);
      const auto first = v.probes.begin() + i * nv + eq.offset(f);
      const std::string key = fs.name == "pressure" ? "p" : fs.name;
      if (fs.components == 1)
        pr[key] = *first;
      else
        pr[key] = std::vector<double>(first, first + fs.components);
    }
    j["probes"].push_back(pr);
  }
}

// ---------------------------------------------------------------------------------- unsteady

/// Statistics of a force coefficient over t >= t0 (driver/force_history.hpp) as JSON.
nlohmann::json statistics(const std::vector<ForceSample> &s, double t0,
                          double ForceSample::*field) {
  SignalStatistics st;
  if (!driver::window_statistics(s, t0, field, &st)) return nullptr;
  return {{"max", st.max},
          {"min", st.min},
          {"max_sample", st.max_sample},
          {"min_sample", st.min_sample},
          {"mean", st.mean},
          {"time_average", st.time_average},
          {"amplitude", 0.5 * (st.max - st.min)}};
}

// forces.csv of an earlier run: keeps the header and the rows up to `step` (rank 0),
// returns the kept series on all ranks.
PetscErrorCode continue_forces_csv(MPI_Comm comm, const std::string &path, long step,
                                   std::vector<ForceSample> *series) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::vector<double> flat;
  std::string error;
  if (rank == 0) {
    std::ifstream in(path);
    std::string header, line, kept;
    if (!std::getline(in, header))
      error = path + ": missing or empty (cannot continue the force history)";
    std::vector<std::string> cols;
    {
      std::stringstream ss(header);
      for (std::string c; std::getline(ss, c, ',');) cols.push_back(c);
    }
    auto col = [&](const char *name) {
      return static_cast<int>(std::find(cols.begin(), cols.end(), name) - cols.begin());
    };
    const int is = col("step"), it = col("time"), icd = col("cd"), icl = col("cl"),
              idp = col("delta_p");
    if (error.empty() &&
        (is >= (int)cols.size() || it >= (int)cols.size() || icd >= (int)cols.size()))
      error = path + ": not an unsteady force history (no step/time/cd columns)";
    kept = header + "\n";
    while (error.empty() && std::getline(in, line)) {
      std::vector<double> v;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) v.push_back(std::atof(c.c_str()));
      if (v.size() != cols.size()) continue; // a row cut by the crash
      if (static_cast<long>(v[is]) > step) break;
      kept += line + "\n";
      flat.insert(flat.end(),
                  {v[is], v[it], v[icd], v[icl], idp < (int)cols.size() ? v[idp] : 0.0});
    }
    if (error.empty())
      error = io::write_file_atomically(path, [&](std::FILE *f) { std::fputs(kept.c_str(), f); });
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_READ, "%s", error.c_str());
  int m = static_cast<int>(flat.size());
  PetscCallMPI(MPI_Bcast(&m, 1, MPI_INT, 0, comm));
  flat.resize(m);
  if (m) PetscCallMPI(MPI_Bcast(flat.data(), m, MPI_DOUBLE, 0, comm));
  series->clear();
  for (int i = 0; i + 4 < m + 1; i += 5)
    series->push_back(
        {static_cast<long>(flat[i]), flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]});
  PetscFunctionReturn(0);
}

/// Restores the state of the last complete checkpoint into ts (--restart), continues
/// forces.csv and the ParaView series; the restart step.  Collective.
PetscErrorCode restart_unsteady(const CliArgs &args, const FlowCase &fc, const std::string &ck_dir,
                                const std::string &mesh_hash, solver::UnsteadySolver &ts,
                                driver::FlowWriter &writer, std::vector<ForceSample> *series,
                                long *step) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  const FlowResidual &res = fc.residual();
  const MPI_Comm comm = fc.mesh().comm;
  io::CheckpointRecord rec;
  bool found = false;
  PetscCall(io::find_latest_checkpoint(comm, ck_dir, mesh_hash, res.equations(),
                                       fc.mesh().n_global_cells, &rec, &found));
  PetscCheck(found, comm, PETSC_ERR_USER_INPUT,
             "--restart: no complete checkpoint in %s (output.checkpoint_every was %ld); start "
             "without --restart",
             ck_dir.c_str(), driver::output_options().get(cfg).checkpoint_every);
  if (rec.case_hash != cfg.problem_hash()) {
    // a deliberate switch (e.g. of the convection scheme) needs --accept-case-change
    const std::string changes = config::describe_problem_change(rec.case_keys, cfg.problem_keys());
    PetscCheck(args.accept_case_change, comm, PETSC_ERR_USER_INPUT,
               "%s: --restart: the checkpoints in %s were written with %s; restore the case, "
               "start without --restart, or add --accept-case-change to continue with this "
               "case",
               cfg.file().c_str(), ck_dir.c_str(), changes.c_str());
    PetscCall(log_warning(comm,
                          "%s: --restart --accept-case-change: the checkpoints in %s were "
                          "written with %s; continuing with this case",
                          cfg.file().c_str(), ck_dir.c_str(), changes.c_str()));
  }
  Vec w0, w1;
  PetscCall(res.create_state(&w0));
  PetscCall(res.create_state(&w1));
  PetscCall(io::read_checkpoint(fc.mesh(), rec, res.equations(), w0, w1));
  PetscCall(ts.set_state(w0, w1, rec.step, rec.time, rec.dt));
  // time.dt auto: the step the controller proposed when the checkpoint was written (older
  // checkpoints, or ones of a fixed-step run: the last step)
  if (ts.step_control()) ts.step_control()->set_proposal(rec.next_dt > 0 ? rec.next_dt : rec.dt);
  PetscCall(VecDestroy(&w0));
  PetscCall(VecDestroy(&w1));
  PetscCall(continue_forces_csv(comm, (fs::path(args.output_dir) / "forces.csv").string(), rec.step,
                                series));
  PetscCall(writer.resume(rec.time));
  *step = rec.step;
  PetscCall(log_info(comm, "restart from %s, record %lld: step %ld, t = %.10g", rec.file.c_str(),
                     rec.index, rec.step, rec.time));
  PetscFunctionReturn(0);
}

/// summary.json of an unsteady run and its closing log lines.  Collective.
PetscErrorCode
write_unsteady_summary(const CliArgs &args, const FlowCase &fc, const solver::UnsteadySolver &ts,
                       const driver::UnsteadySolution &sol, const std::vector<ForceSample> &series,
                       const FlowMonitors::Values &v, long restarted_from,
                       const io::CheckpointWriter &ck, const nlohmann::json &ck_json) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  const MPI_Comm comm = fc.mesh().comm;
  const solver::TimeOptions time = solver::time_options().get(cfg);
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));
  const double t0 = time.statistics_start;
  int periods = 0;
  const double freq = driver::lift_frequency(series, t0, &periods);
  const discretization::ReferenceOptions &ref = fc.residual().reference();
  const double strouhal = freq * ref.length / ref.velocity;
  const long n = sol.steps;
  nlohmann::json j = base_summary(fc.residual(), cfg);
  j["mode"] = "unsteady";
  j["scheme"] = time.scheme == solver::TimeScheme::Bdf1 ? "bdf1" : "bdf2";
  // solver.tolerances as resolved (auto: forward for karman run)
  j["step_tolerances"] = ts.forward_tolerances() ? "forward" : "converged";
  j["truncation_stops"] = sol.truncation_stops;
  if (time.adaptive()) {
    j["dt"] = "auto";
    j["time_tolerance"] = time.tolerance;
    j["rejected_steps"] = sol.rejected_steps;
    j["dt_range"] = {sol.min_dt, sol.max_dt};
  } else {
    j["dt"] = time.dt.value;
  }
  j["t_end"] = ts.time();
  j["steps"] = ts.step();
  j["steps_this_run"] = n;
  if (restarted_from >= 0) j["restarted_from_step"] = restarted_from;
  j["wall_time"] = sol.wall_time;
  j["wall_time_per_step"] = n ? sol.wall_time / n : 0.0;
  j["newton_iterations_per_step"] = n ? double(sol.newton_iterations) / n : 0.0;
  j["linear_iterations_per_step"] = n ? double(sol.linear_iterations) / n : 0.0;
  j["preconditioner_setups"] = sol.preconditioner_setups;
  j["linear_fallback_steps"] = sol.linear_fallbacks; // solved by solver.linear auto's LU
  j["dual_time_steps"] = sol.dual_time_steps;        // solved by dual time stepping (URANS)
  j["time_split"] = {{"residual", sol.residual_time},
                     {"jacobian_assembly", sol.jacobian_time},
                     {"preconditioner_setup", sol.pc_setup_time},
                     {"linear_solve_and_other", sol.linear_solve_time}};
  j["checkpoint"] = ck_json;
  j["checkpoint"]["file"] = ck.path();
  j["peak_memory_mib"] = mem_total;
  j["peak_memory_mib_max_rank"] = mem_max;
  j["statistics_window"] = {t0, ts.time()};
  j["cd_stats"] = statistics(series, t0, &ForceSample::cd);
  j["cl_stats"] = statistics(series, t0, &ForceSample::cl);
  if (v.has_dp) j["delta_p_stats"] = statistics(series, t0, &ForceSample::dp);
  j["lift_frequency"] = freq;
  j["lift_periods"] = periods;
  j["strouhal"] = strouhal;
  nlohmann::json final_values;
  add_values(final_values, v, cfg, fc.residual().equations());
  j["final"] = final_values;
  PetscCall(write_json(comm, (fs::path(args.output_dir) / "summary.json").string(), j));
  const auto cd = j["cd_stats"], cl = j["cl_stats"];
  PetscCall(log_info(
      comm,
      "done: %ld steps in %.1f s (%.3f s/step, %.2f Newton and %.1f linear iterations per step), "
      "peak memory %.0f MiB",
      n, sol.wall_time, n ? sol.wall_time / n : 0.0, n ? double(sol.newton_iterations) / n : 0.0,
      n ? double(sol.linear_iterations) / n : 0.0, mem_total));
  if (!cd.is_null())
    PetscCall(log_info(
        comm, "over t >= %g: c_D max %.6f mean %.6f, c_L max %.6f min %.6f, St %.6f (%d periods)",
        t0, cd["max"].get<double>(), cd["mean"].get<double>(), cl["max"].get<double>(),
        cl["min"].get<double>(), strouhal, periods));
  PetscFunctionReturn(0);
}

/// A row of forces.csv (rank 0 writes): the step report r and the monitors' values v.
void write_csv_row(std::ofstream &csv, PetscMPIInt rank, const FlowMonitors &mon,
                   const solver::StepReport &r, const FlowMonitors::Values &v) {
  if (rank != 0) return;
  char line[256];
  std::snprintf(line, sizeof(line), "%ld,%.12e,%.6e,%d,%d,%.4f,%d,", r.step, r.time, r.dt,
                r.newton_iterations, r.linear_iterations, r.wall_time,
                r.preconditioner_setup ? 1 : 0);
  csv << line << mon.csv_values(v) << "\n" << std::flush;
}

/// The start of an unsteady run: from the last checkpoint (--restart; forces.csv continued), or
/// from the initial state at level 0 (forces.csv started with its row, the first snapshot).
/// Opens forces.csv on rank 0.  Collective.
PetscErrorCode start_unsteady_run(const CliArgs &args, FlowCase &fc, const std::string &ck_dir,
                                  const std::string &mesh_hash, solver::UnsteadySolver &ts,
                                  driver::FlowWriter &writer, std::ofstream *csv,
                                  std::vector<ForceSample> *series, long *restarted_from) {
  PetscFunctionBeginUser;
  const FlowResidual &res = fc.residual();
  const FlowMonitors &mon = fc.monitors();
  const std::string csv_path = (fs::path(args.output_dir) / "forces.csv").string();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(fc.mesh().comm, &rank));
  if (args.restart) {
    PetscCall(ts.setup(fc.residual(), fc.config(), solver::StepPurpose::ForwardOnly));
    PetscCall(restart_unsteady(args, fc, ck_dir, mesh_hash, ts, writer, series, restarted_from));
    if (rank == 0) csv->open(csv_path, std::ios::app);
    PetscFunctionReturn(0);
  }
  discretization::LocalState state;
  FlowMonitors::Values v;
  PetscCall(fc.start_unsteady(ts, &state, &v, solver::StepPurpose::ForwardOnly));
  if (rank == 0) {
    csv->open(csv_path);
    *csv << "step,time,dt,newton_iterations,linear_iterations,wall_time,pc_setup,"
         << mon.csv_header(res.equations()) << "\n";
  }
  write_csv_row(*csv, rank, mon, solver::StepReport(), v);
  series->push_back({0, 0.0, v.cd, v.cl, v.dp});
  PetscCall(writer.write_vtk(res, state, 0.0));
  PetscFunctionReturn(0);
}

/// The progress line of a step (eta: the estimated time left, s).  Collective.
PetscErrorCode log_step(MPI_Comm comm, const solver::StepReport &r, const FlowMonitors::Values &v,
                        double eta) {
  PetscFunctionBeginUser;
  PetscCall(log_info(
      comm,
      "step %6ld  t %.6f  newton %d  lin %3d%s  %.3f s/step (R %.3f J %.3f PC %.3f solve %.3f)  "
      "ETA %.1f min  c_D %.6f  c_L %+.6f  dt %.4g%s",
      r.step, r.time, r.newton_iterations, r.linear_iterations,
      r.preconditioner_setup ? " PC" : "   ", r.wall_time, r.residual_time, r.jacobian_time,
      r.pc_setup_time, r.linear_solve_time, eta / 60, v.cd, v.cl, r.dt,
      r.rejected_tries ? printf_string(" (%d rejected)", r.rejected_tries).c_str() : ""));
  PetscFunctionReturn(0);
}

/// The checkpoints written in a run: their number, write time and size of the last.
struct CheckpointStats {
  double time = 0, bytes = 0;
  long records = 0, last_step = -1;
};

/// A step that did not converge (report r): writes the last good state (last_good.pvd) and, with
/// checkpoints on, a checkpoint of it, then fails with the reason.  Collective.
PetscErrorCode fail_unsteady_step(const CliArgs &args, const FlowCase &fc,
                                  const solver::UnsteadySolver &ts, io::CheckpointWriter &ck,
                                  long ck_every, const CheckpointStats &stats,
                                  const solver::StepReport &r) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  PetscCall(driver::write_flow_state(fc.residual(), fc.monitors(), cfg, args.output_dir,
                                     "last_good", ts.state(), ts.level()));
  if (ck_every > 0 && stats.last_step != ts.step())
    PetscCall(ck.write(ts.step(), ts.time(), ts.previous_dt(), 0.0, ts.state(), ts.previous_state(),
                       nullptr, nullptr));
  SETERRQ(fc.mesh().comm, PETSC_ERR_NOT_CONVERGED,
          "%s: time step %ld (t = %g -> %g) did not converge (%s); Newton residual history: "
          "%s. The last good "
          "state (t = %g) is in %s/last_good.pvd%s. Try a smaller time.dt, more "
          "solver.max_iterations or a finer "
          "mesh",
          cfg.file().c_str(), r.step, ts.time(), r.time, r.reason.c_str(),
          history_text(r.residual_history).c_str(), ts.time(), args.output_dir.c_str(),
          ck_every > 0 ? " and in the last checkpoint (--restart)" : "");
}

/// The end of an unsteady run: the final fields (flow.h5) and summary.json.  Collective.
PetscErrorCode finish_unsteady_run(const CliArgs &args, FlowCase &fc,
                                   const solver::UnsteadySolver &ts, driver::FlowWriter &writer,
                                   const driver::UnsteadySolution &sol,
                                   const std::vector<ForceSample> &series, long restarted_from,
                                   const io::CheckpointWriter &ck, const CheckpointStats &stats) {
  PetscFunctionBeginUser;
  discretization::LocalState state;
  FlowMonitors::Values v;
  PetscCall(fc.evaluate(ts.level(), ts.state(), &state, &v));
  PetscCall(writer.write_hdf5(fc.residual(), state, ts.time()));
  const nlohmann::json ck_json = {
      {"records", stats.records},
      {"write_time_per_record", stats.records ? stats.time / stats.records : 0.0},
      {"bytes_per_record", stats.bytes}};
  PetscCall(write_unsteady_summary(args, fc, ts, sol, series, v, restarted_from, ck, ck_json));
  PetscFunctionReturn(0);
}

/// `karman run` of an unsteady case: the stepping of FlowCase::advance_to with a progress line,
/// a forces.csv row, ParaView snapshots and checkpoints per step.  Collective.
PetscErrorCode run_unsteady(const CliArgs &args, FlowCase &fc) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  const FlowResidual &res = fc.residual();
  const FlowMonitors &mon = fc.monitors();
  const MPI_Comm comm = fc.mesh().comm;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const solver::TimeOptions time = solver::time_options().get(cfg);
  const driver::OutputOptions out = driver::output_options().get(cfg);
  const double t_end = time.t_end;
  const long vtk_every = out.vtk_every, ck_every = out.checkpoint_every;
  const std::string ck_dir = (fs::path(args.output_dir) / "checkpoints").string();
  std::string mesh_hash;
  PetscCall(io::mesh_hash(fc.mesh(), res.coordinates(), &mesh_hash));

  solver::UnsteadySolver ts;
  driver::FlowWriter writer;
  PetscCall(writer.setup(res, mon, cfg, args.output_dir, "flow"));
  std::vector<ForceSample> series;
  long restarted_from = -1;
  std::ofstream csv;
  PetscCall(
      start_unsteady_run(args, fc, ck_dir, mesh_hash, ts, writer, &csv, &series, &restarted_from));
  io::CheckpointWriter ck;
  if (ck_every > 0)
    PetscCall(ck.open(fc.mesh(), ck_dir, mesh_hash, cfg.problem_hash(), res.equations(),
                      cfg.problem_keys()));
  const double t_first = ts.time();
  const std::string steps =
      time.adaptive()
          ? printf_string("dt auto (time.tolerance %g, next step %g)", time.tolerance,
                          ts.step_control()->proposal())
          : printf_string(
                "dt %g (%ld steps)", time.dt.value,
                std::lround(std::max(0.0, std::ceil((t_end - t_first) / time.dt.value - 1e-9))));
  PetscCall(log_info(comm, "unsteady %s, t = %g -> %g, %s%s",
                     time.scheme == solver::TimeScheme::Bdf1 ? "bdf1" : "bdf2", t_first, t_end,
                     steps.c_str(), ck_every > 0 ? (", checkpoints in " + ck.path()).c_str() : ""));

  CheckpointStats stats;
  double wall = 0;
  long steps_done = 0;
  const driver::StepObserver observer = [&](solver::UnsteadySolver &ts, const solver::StepReport &r,
                                            const discretization::LocalState &state,
                                            const FlowMonitors::Values &v) -> PetscErrorCode {
    PetscFunctionBeginUser;
    ++steps_done;
    wall += r.wall_time;
    write_csv_row(csv, rank, mon, r, v);
    series.push_back({r.step, r.time, v.cd, v.cl, v.dp});
    // the time left at the rate so far (a restart with a new time.dt: its steps count anew)
    PetscCall(log_step(comm, r, v, wall / std::max(r.time - t_first, 1e-300) * (t_end - r.time)));
    const bool last_step = solver::reached_end(ts, t_end, r.dt);
    if (r.step % vtk_every == 0 || last_step) PetscCall(writer.write_vtk(res, state, r.time));
    if (ck_every > 0 && (r.step % ck_every == 0 || last_step)) {
      double s, b;
      const double next_dt = ts.step_control() ? ts.step_control()->proposal() : 0.0;
      PetscCall(ck.write(ts.step(), ts.time(), ts.previous_dt(), next_dt, ts.state(),
                         ts.previous_state(), &s, &b));
      ts.mark_restart_point();
      stats.time += s, stats.bytes = b, ++stats.records;
      stats.last_step = r.step;
    }
    PetscFunctionReturn(0);
  };
  driver::UnsteadySolution sol;
  PetscCall(fc.advance_to(ts, t_end, observer, &sol));
  if (!sol.converged) PetscCall(fail_unsteady_step(args, fc, ts, ck, ck_every, stats, sol.failed));
  PetscCall(ck.close());
  PetscCall(finish_unsteady_run(args, fc, ts, writer, sol, series, restarted_from, ck, stats));
  PetscFunctionReturn(0);
}

// ------------------------------------------------------------------------------------ steady

// The turbulence model's walls: the first cells' y+ on them, reported, with a warning above
// kYPlusWarning.  The SA model integrates to the wall through the viscous sublayer: its
// references (TMR) use y+ of about 1 or less at the first cells; at the centroid y+ of 5 the
// first cell already reaches into the buffer layer (the flat plate's level 0 has at most 2.4).
constexpr double kYPlusWarning = 5;

PetscErrorCode report_y_plus(const FlowResidual &res, const config::CaseConfig &cfg, Vec w,
                             solver::YPlus *y_plus) {
  PetscFunctionBeginUser;
  discretization::LocalState state;
  PetscCall(res.local_state(discretization::kSteady, w, &state));
  PetscCall(
      solver::first_cell_y_plus(res, state, res.boundary_conditions().wall_patches(), y_plus));
  const MPI_Comm comm = res.mesh().comm;
  const Vec3<double> &x = y_plus->where;
  PetscCall(log_info(comm,
                     "first-cell y+ on the walls (%d faces): max %.3g at (%g, %g, %g), mean %.3g",
                     y_plus->faces, y_plus->max, x[0], x[1], x[2], y_plus->mean));
  if (y_plus->max > kYPlusWarning)
    PetscCall(log_warning(
        comm,
        "%s: the first cells on the walls reach y+ %.1f (at (%g, %g, %g); mean %.1f), above %g: "
        "the Spalart-Allmaras model resolves the viscous sublayer and wants y+ of about 1 at "
        "the first cell centres.  Refine the wall-normal spacing (about %.0fx thinner first "
        "cells); until then expect large errors in c_f and the viscous drag",
        cfg.file().c_str(), y_plus->max, x[0], x[1], x[2], y_plus->mean, kYPlusWarning,
        std::ceil(y_plus->max)));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode solve_steady_case(const CliArgs &args, FlowCase &fc, Vec w,
                                 driver::SteadySolution *solution) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  const FlowResidual &res = fc.residual();
  const FlowMonitors &mon = fc.monitors();
  const MPI_Comm comm = fc.mesh().comm;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  Vec best;
  PetscCall(fc.initial_state(w));
  PetscCall(VecDuplicate(w, &best));
  std::ofstream csv;
  if (rank == 0) {
    csv.open(fs::path(args.output_dir) / "forces.csv");
    csv << "iteration,residual,residual_continuity,residual_momentum,cfl,linear_iterations,wall_"
           "time,"
        << mon.csv_header(res.equations()) << "\n";
  }
  const driver::SteadyObserver observer = [&](const solver::NewtonRecord &r,
                                              const FlowMonitors::Values &v) -> PetscErrorCode {
    PetscFunctionBeginUser;
    char dp[64] = "";
    if (v.has_dp) std::snprintf(dp, sizeof(dp), "  dp %.6f", v.dp);
    PetscCall(log_info(comm,
                       "newton %3d  |R| %.3e (continuity %.2e, momentum %.2e)  CFL %.1e  lin %d  "
                       "%.2f s  c_D %.6f  "
                       "c_L %.6f%s",
                       r.iteration, r.residual, r.residual_continuity, r.residual_momentum, r.cfl,
                       r.linear_iterations, r.wall_time, v.cd, v.cl, dp));
    if (rank == 0) {
      char line[256];
      std::snprintf(line, sizeof(line), "%d,%.10e,%.10e,%.10e,%.4e,%d,%.4f,", r.iteration,
                    r.residual, r.residual_continuity, r.residual_momentum, r.cfl,
                    r.linear_iterations, r.wall_time);
      csv << line << mon.csv_values(v) << "\n" << std::flush;
    }
    PetscFunctionReturn(0);
  };
  PetscCall(fc.solve_steady(w, best, observer, solution));
  const solver::SteadySummary &summary = solution->summary;
  if (!summary.converged) {
    // the best state with its residual per equation and cell, and where that is largest
    std::vector<io::Field> residual;
    driver::ResidualLocation where;
    PetscCall(driver::residual_fields(res, best, discretization::kSteady, &residual, &where));
    PetscCall(driver::write_flow_state(res, mon, cfg, args.output_dir, "last_good", best,
                                       discretization::kSteady, residual));
    std::vector<double> h;
    for (const auto &r : summary.history) h.push_back(r.residual);
    const std::string equation = where.field == "pressure"   ? "continuity"
                                 : where.field == "velocity" ? "momentum"
                                                             : where.field;
    char cell[160];
    std::snprintf(cell, sizeof(cell), res.mesh().dim == 2 ? "(%.6g, %.6g)" : "(%.6g, %.6g, %.6g)",
                  where.x[0], where.x[1], where.x[2]);
    SETERRQ(comm, PETSC_ERR_NOT_CONVERGED,
            "%s: the steady solve did not converge (%s) after %d Newton iterations; residual "
            "history: %s. The best "
            "state (iteration %d, |R| %.3e) is in %s/last_good.pvd, with its residual per cell "
            "(residual_<field>); the largest is the %s equation's in the cell at %s (%.3e, %.0f "
            "%% of |R|^2). Try a smaller "
            "solver.cfl_initial, a better "
            "initial state (initial.velocity), a coarser mesh or more solver.max_iterations",
            cfg.file().c_str(), summary.reason.c_str(), summary.iterations, history_text(h).c_str(),
            summary.best_iteration, summary.best_residual, args.output_dir.c_str(),
            equation.c_str(), cell, where.cell_norm,
            where.norm > 0 ? 100 * where.cell_norm * where.cell_norm / (where.norm * where.norm)
                           : 0.0);
  }
  PetscCall(VecDestroy(&best));
  const FlowMonitors::Values &v = solution->values;
  PetscCall(
      driver::write_flow_state(res, mon, cfg, args.output_dir, "flow", w, discretization::kSteady));
  PetscCall(log_info(
      comm,
      "converged (%s) in %d Newton iterations, |R| %.3e -> %.3e, %.2f s, peak memory %.0f MiB",
      summary.reason.c_str(), summary.iterations, summary.initial_residual, summary.final_residual,
      summary.wall_time, solution->peak_memory_mib));
  PetscCall(log_info(comm, "c_D %.10f  (pressure %.10f, viscous %.10f)  c_L %.10f  c_M %.10f", v.cd,
                     v.cd_pressure, v.cd_viscous, v.cl, v.cm));
  if (v.has_dp) PetscCall(log_info(comm, "delta_p %.10f", v.dp));
  solver::YPlus y_plus;
  if (res.has_turbulence_model()) PetscCall(report_y_plus(res, cfg, w, &y_plus));

  nlohmann::json j = base_summary(res, cfg);
  j["mode"] = "steady";
  if (y_plus.faces > 0) {
    j["first_cell_y_plus_max"] = y_plus.max;
    j["first_cell_y_plus_mean"] = y_plus.mean;
  }
  j["converged"] = summary.converged;
  j["reason"] = summary.reason;
  // solver.linear auto: the iterative solve failed (its reason) and this is the LU's
  j["linear_fallback"] = summary.linear_fallback;
  if (summary.linear_fallback) j["iterative_reason"] = summary.iterative_reason;
  // solver.linear auto: the iterative solve failed and was done again with tighter linear solves
  j["tightened_forcing"] = summary.tightened_forcing;
  // Newton steps whose GMRES stopped unconverged and widened the restart (solver::widen_restart)
  j["restart_widenings"] = summary.restart_widenings;
  // the GMRES restart those widenings reached (0: none)
  j["widened_restart"] = summary.widened_restart;
  // a linear solve stopped unconverged and the smoothers shift only zero pivots since
  j["smoothers_unshifted"] = summary.smoothers_unshifted;
  // a linear solve stopped unconverged on several ranks and the smoothers' blocks overlap since
  j["smoothers_overlapped"] = summary.smoothers_overlapped;
  // ... and the pivots' shift restored after the unshifted smoothers failed too
  j["smoothers_reshifted"] = summary.smoothers_reshifted;
  // failed line searches PETSc named DIVERGED_LOCAL_MIN that the continuation went on from
  j["local_min_retries"] = summary.local_min_retries;
  j["newton_iterations"] = summary.iterations;
  j["initial_residual"] = summary.initial_residual;
  j["final_residual"] = summary.final_residual;
  std::vector<double> hist;
  int lin = 0;
  for (const auto &r : summary.history) hist.push_back(r.residual), lin += r.linear_iterations;
  j["residual_history"] = hist;
  j["linear_iterations"] = lin;
  j["wall_time"] = summary.wall_time;
  j["peak_memory_mib"] = solution->peak_memory_mib;
  j["peak_memory_mib_max_rank"] = solution->peak_memory_mib_max_rank;
  add_values(j, v, cfg, res.equations());
  PetscCall(write_json(comm, (fs::path(args.output_dir) / "summary.json").string(), j));
  PetscFunctionReturn(0);
}

PetscErrorCode run_run_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  PetscCheck(!args.restart || fc.unsteady(), comm, PETSC_ERR_USER_INPUT,
             "--restart applies to unsteady runs (time.mode: unsteady) only");
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const mesh::Mesh &mesh = fc.mesh();
  PetscCall(log_info(comm, "%d cells, %d unknowns on %d rank%s; pressure level %s",
                     (int)mesh.n_global_cells, (int)(mesh.n_global_cells * fc.residual().nv()),
                     size, size > 1 ? "s" : "",
                     fc.residual().pressure_pinned() ? "pinned (p = 0 in the first cell)"
                                                     : "set by the boundaries"));
  if (fc.unsteady()) {
    PetscCall(run_unsteady(args, fc));
  } else {
    Vec w;
    PetscCall(fc.create_state(&w));
    driver::SteadySolution solution;
    PetscCall(solve_steady_case(args, fc, w, &solution));
    PetscCall(VecDestroy(&w));
  }
  PetscFunctionReturn(0);
}

} // namespace karman::cli
