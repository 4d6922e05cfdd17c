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
#include "karman/cli/commands.hpp"

#include "karman/cli/flow_output.hpp"
#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/core/signal.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/steady_solver.hpp"
#include "karman/solver/unsteady_solver.hpp"

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

namespace {

std::string history_text(const std::vector<double> &h) {
  std::ostringstream out;
  out.precision(3);
  for (std::size_t i = 0; i < h.size(); ++i) out << (i ? ", " : "") << h[i];
  return out.str();
}

PetscErrorCode write_json(MPI_Comm comm, const std::string &path, const nlohmann::json &j) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::ofstream out(path + ".tmp");
    out << j.dump(2) << "\n";
    out.close();
    fs::rename(path + ".tmp", path);
  }
  PetscFunctionReturn(0);
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
                int nv) {
  j["cd"] = v.cd;
  j["cl"] = v.cl;
  j["cd_pressure"] = v.cd_pressure;
  j["cd_viscous"] = v.cd_viscous;
  j["cm"] = v.cm;
  j["force"] = {v.force.total()[0], v.force.total()[1], v.force.total()[2]};
  if (v.has_dp) j["delta_p"] = v.dp;
  const auto pts = cfg.section("output").points("probes");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    nlohmann::json pr;
    pr["point"] = pts[i];
    pr["p"] = v.probes[i * nv];
    pr["velocity"] =
        std::vector<double>(v.probes.begin() + i * nv + 1, v.probes.begin() + (i + 1) * nv);
    j["probes"].push_back(pr);
  }
}

// ---------------------------------------------------------------------------------- unsteady

struct SeriesPoint {
  long step;
  double time, cd, cl, dp;
};

/// Statistics of a signal over the points with time >= t0: max and min refined by the
/// parabola through the samples around the extreme one (the sampled maximum of a signal
/// of frequency f lies up to (2 pi f dt)^2 / 8 of its amplitude below the true one),
/// time_average by the trapezoidal rule (the discretization of the unsteady adjoint's
/// time-averaged objectives).
nlohmann::json statistics(const std::vector<SeriesPoint> &s, double t0,
                          double SeriesPoint::*field) {
  std::vector<double> t, v;
  for (const auto &p : s) {
    if (p.time < t0 || p.step == 0) continue; // the initial state is data, not a result
    t.push_back(p.time);
    v.push_back(p.*field);
  }
  if (v.empty()) return nullptr;
  const SignalStatistics st = signal_statistics(t, v);
  return {{"max", st.max},
          {"min", st.min},
          {"max_sample", st.max_sample},
          {"min_sample", st.min_sample},
          {"mean", st.mean},
          {"time_average", st.time_average},
          {"amplitude", 0.5 * (st.max - st.min)}};
}

/// Frequency of the lift from its upward mean crossings over whole periods in [t0, end].
double lift_frequency(const std::vector<SeriesPoint> &s, double t0, int *periods) {
  double sum = 0;
  int n = 0;
  for (const auto &p : s)
    if (p.time >= t0) sum += p.cl, ++n;
  *periods = 0;
  if (n < 3) return 0;
  const double mean = sum / n;
  std::vector<double> up;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i - 1].time < t0) continue;
    const double a = s[i - 1].cl - mean, b = s[i].cl - mean;
    if (a < 0 && b >= 0) up.push_back(s[i - 1].time + (s[i].time - s[i - 1].time) * (-a) / (b - a));
  }
  if (up.size() < 2) return 0;
  *periods = static_cast<int>(up.size() - 1);
  return (up.size() - 1) / (up.back() - up.front());
}

// forces.csv of an earlier run: keeps the header and the rows up to `step` (rank 0),
// returns the kept series on all ranks.
PetscErrorCode continue_forces_csv(MPI_Comm comm, const std::string &path, long step,
                                   std::vector<SeriesPoint> *series) {
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
    if (error.empty()) {
      std::ofstream out(path + ".tmp");
      out << kept;
      out.close();
      fs::rename(path + ".tmp", path);
    }
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

PetscErrorCode run_unsteady(MPI_Comm comm, const CliArgs &args, const config::CaseConfig &cfg,
                            mesh::Mesh &mesh, FlowResidual &res, const FlowMonitors &mon) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const config::Section time = cfg.section("time"), out = cfg.section("output");
  const double dt = time.real("dt"), t_end = time.real("t_end");
  const long vtk_every = out.integer("vtk_every"), ck_every = out.integer("checkpoint_every");
  const std::string csv_path = (fs::path(args.output_dir) / "forces.csv").string();
  const std::string ck_dir = (fs::path(args.output_dir) / "checkpoints").string();
  std::string mesh_hash;
  PetscCall(io::mesh_hash(mesh, res.coordinates(), &mesh_hash));
  const std::string case_hash = cfg.problem_hash(), case_keys = cfg.problem_keys();

  solver::UnsteadySolver ts;
  PetscCall(ts.setup(res, cfg));
  FlowWriter writer;
  PetscCall(writer.setup(res, mon, cfg, args.output_dir, "flow"));
  std::vector<SeriesPoint> series;
  long restarted_from = -1;
  std::ofstream csv;
  auto csv_row = [&](const solver::StepReport &r, const FlowMonitors::Values &v) {
    if (rank != 0) return;
    char line[256];
    std::snprintf(line, sizeof(line), "%ld,%.12e,%.6e,%d,%d,%.4f,%d,", r.step, r.time, r.dt,
                  r.newton_iterations, r.linear_iterations, r.wall_time,
                  r.preconditioner_setup ? 1 : 0);
    csv << line << mon.csv_values(v) << "\n" << std::flush;
  };
  {
    Vec w0, w1;
    PetscCall(res.create_state(&w0));
    PetscCall(res.create_state(&w1));
    if (args.restart) {
      io::CheckpointRecord rec;
      bool found = false;
      PetscCall(io::find_latest_checkpoint(comm, ck_dir, mesh_hash, res.nv(), mesh.n_global_cells,
                                           &rec, &found));
      PetscCheck(found, comm, PETSC_ERR_USER_INPUT,
                 "--restart: no complete checkpoint in %s (output.checkpoint_every was %ld); start "
                 "without --restart",
                 ck_dir.c_str(), ck_every);
      if (rec.case_hash != case_hash) {
        // a deliberate switch (e.g. of the convection scheme) needs --accept-case-change
        const std::string changes = config::describe_problem_change(rec.case_keys, case_keys);
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
      PetscCall(io::read_checkpoint(mesh, rec, res.nv(), w0, w1));
      PetscCall(ts.set_state(w0, w1, rec.step, rec.time, rec.dt));
      PetscCall(continue_forces_csv(comm, csv_path, rec.step, &series));
      PetscCall(writer.resume(rec.time));
      restarted_from = rec.step;
      PetscCall(log_info(comm, "restart from %s, record %lld: step %ld, t = %.10g",
                         rec.file.c_str(), rec.index, rec.step, rec.time));
      if (rank == 0) csv.open(csv_path, std::ios::app);
    } else {
      PetscCall(initial_state(res, cfg, w0));
      PetscCall(ts.set_state(w0, w0, 0, 0.0, 0.0));
      PetscCall(res.update_boundary_values(0.0, 0));
      PetscCall(res.update_local(w0));
      FlowMonitors::Values v;
      PetscCall(mon.evaluate(res, &v));
      if (rank == 0) {
        csv.open(csv_path);
        csv << "step,time,dt,newton_iterations,linear_iterations,wall_time,pc_setup,"
            << mon.csv_header(res.nv()) << "\n";
      }
      solver::StepReport r0;
      csv_row(r0, v);
      series.push_back({0, 0.0, v.cd, v.cl, v.dp});
      PetscCall(writer.write_vtk(res, 0.0));
    }
    PetscCall(VecDestroy(&w0));
    PetscCall(VecDestroy(&w1));
  }
  io::CheckpointWriter ck;
  if (ck_every > 0) PetscCall(ck.open(mesh, ck_dir, mesh_hash, case_hash, res.nv(), case_keys));
  // steps left from the time left: after a restart with a new time.dt the step index counts
  // steps of the old size
  auto steps_left = [&](double t) { return std::max(0.0, std::ceil((t_end - t) / dt - 1e-9)); };
  PetscCall(log_info(comm, "unsteady %s, dt %g, t = %g -> %g (%ld steps)%s",
                     time.text("scheme").c_str(), dt, ts.time(), t_end,
                     static_cast<long>(steps_left(ts.time())),
                     ck_every > 0 ? (", checkpoints in " + ck.path()).c_str() : ""));

  double wall = 0, ck_time = 0, ck_bytes = 0;
  long steps_done = 0, ck_records = 0, pc_setups = 0, newton_sum = 0, linear_sum = 0;
  long last_ck_step = -1, last_vtk_step = -1;
  while (ts.time() < t_end - 1e-9 * dt) {
    const double h = std::min(dt, t_end - ts.time());
    solver::StepReport r;
    PetscCall(ts.advance(h, &r));
    if (!r.converged) {
      PetscCall(res.update_local(ts.state()));
      FlowWriter last;
      PetscCall(last.setup(res, mon, cfg, args.output_dir, "last_good"));
      PetscCall(last.write_vtk(res, ts.time()));
      PetscCall(last.write_hdf5(res, ts.time()));
      if (ck_every > 0 && last_ck_step != ts.step())
        PetscCall(ck.write(ts.step(), ts.time(), ts.previous_dt(), 0.0, ts.state(),
                           ts.previous_state(), nullptr, nullptr));
      SETERRQ(comm, PETSC_ERR_NOT_CONVERGED,
              "%s: time step %ld (t = %g -> %g) did not converge (%s); Newton residual history: "
              "%s. The last good "
              "state (t = %g) is in %s/last_good.pvd%s. Try a smaller time.dt, more "
              "solver.max_iterations or a finer "
              "mesh",
              cfg.file().c_str(), r.step, ts.time(), r.time, r.reason.c_str(),
              history_text(r.residual_history).c_str(), ts.time(), args.output_dir.c_str(),
              ck_every > 0 ? " and in the last checkpoint (--restart)" : "");
    }
    ++steps_done;
    wall += r.wall_time;
    newton_sum += r.newton_iterations;
    linear_sum += r.linear_iterations;
    pc_setups += r.preconditioner_setup;
    PetscCall(res.update_local(ts.state()));
    FlowMonitors::Values v;
    PetscCall(mon.evaluate(res, &v));
    csv_row(r, v);
    series.push_back({r.step, r.time, v.cd, v.cl, v.dp});
    const double eta = wall / steps_done * steps_left(r.time);
    PetscCall(log_info(
        comm,
        "step %6ld  t %.6f  newton %d  lin %3d%s  %.3f s/step  ETA %.1f min  c_D %.6f  c_L %+.6f",
        r.step, r.time, r.newton_iterations, r.linear_iterations,
        r.preconditioner_setup ? " PC" : "   ", r.wall_time, eta / 60, v.cd, v.cl));
    const bool last_step = !(ts.time() < t_end - 1e-9 * dt);
    if (r.step % vtk_every == 0 || last_step) {
      PetscCall(writer.write_vtk(res, r.time));
      last_vtk_step = r.step;
    }
    if (ck_every > 0 && (r.step % ck_every == 0 || last_step)) {
      double s, b;
      PetscCall(ck.write(ts.step(), ts.time(), ts.previous_dt(), 0.0, ts.state(),
                         ts.previous_state(), &s, &b));
      ts.request_preconditioner_setup();
      ck_time += s, ck_bytes = b, ++ck_records;
      last_ck_step = r.step;
    }
  }
  (void)last_vtk_step;
  PetscCall(ck.close());
  PetscCall(res.update_local(ts.state()));
  PetscCall(writer.write_hdf5(res, ts.time()));
  FlowMonitors::Values v;
  PetscCall(mon.evaluate(res, &v));
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));

  const double t0 = time.real("statistics_start");
  int periods = 0;
  const double freq = lift_frequency(series, t0, &periods);
  const config::Section ref = cfg.section("reference");
  const double strouhal = freq * ref.real("length") / ref.real("velocity");
  nlohmann::json j = base_summary(res, cfg);
  j["mode"] = "unsteady";
  j["scheme"] = time.text("scheme");
  j["dt"] = dt;
  j["t_end"] = ts.time();
  j["steps"] = ts.step();
  j["steps_this_run"] = steps_done;
  if (restarted_from >= 0) j["restarted_from_step"] = restarted_from;
  j["wall_time"] = wall;
  j["wall_time_per_step"] = steps_done ? wall / steps_done : 0.0;
  j["newton_iterations_per_step"] = steps_done ? double(newton_sum) / steps_done : 0.0;
  j["linear_iterations_per_step"] = steps_done ? double(linear_sum) / steps_done : 0.0;
  j["preconditioner_setups"] = pc_setups;
  j["checkpoint"] = {{"file", ck.path()},
                     {"records", ck_records},
                     {"write_time_per_record", ck_records ? ck_time / ck_records : 0.0},
                     {"bytes_per_record", ck_bytes}};
  j["peak_memory_mib"] = mem_total;
  j["peak_memory_mib_max_rank"] = mem_max;
  j["statistics_window"] = {t0, ts.time()};
  j["cd_stats"] = statistics(series, t0, &SeriesPoint::cd);
  j["cl_stats"] = statistics(series, t0, &SeriesPoint::cl);
  if (v.has_dp) j["delta_p_stats"] = statistics(series, t0, &SeriesPoint::dp);
  j["lift_frequency"] = freq;
  j["lift_periods"] = periods;
  j["strouhal"] = strouhal;
  nlohmann::json final_values;
  add_values(final_values, v, cfg, res.nv());
  j["final"] = final_values;
  PetscCall(write_json(comm, (fs::path(args.output_dir) / "summary.json").string(), j));
  const auto cd = j["cd_stats"], cl = j["cl_stats"];
  PetscCall(log_info(
      comm,
      "done: %ld steps in %.1f s (%.3f s/step, %.2f Newton and %.1f linear iterations per step), "
      "peak memory %.0f MiB",
      steps_done, wall, steps_done ? wall / steps_done : 0.0,
      steps_done ? double(newton_sum) / steps_done : 0.0,
      steps_done ? double(linear_sum) / steps_done : 0.0, mem_total));
  if (!cd.is_null())
    PetscCall(log_info(
        comm, "over t >= %g: c_D max %.6f mean %.6f, c_L max %.6f min %.6f, St %.6f (%d periods)",
        t0, cd["max"].get<double>(), cd["mean"].get<double>(), cl["max"].get<double>(),
        cl["min"].get<double>(), strouhal, periods));
  PetscFunctionReturn(0);
}

// ------------------------------------------------------------------------------------ steady

} // namespace

PetscErrorCode solve_steady_case(MPI_Comm comm, const CliArgs &args, const config::CaseConfig &cfg,
                                 FlowResidual &res, const FlowMonitors &mon, Vec w,
                                 SteadyRunInfo *info) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  Vec best;
  PetscCall(initial_state(res, cfg, w));
  PetscCall(VecDuplicate(w, &best));
  std::ofstream csv;
  if (rank == 0) {
    csv.open(fs::path(args.output_dir) / "forces.csv");
    csv << "iteration,residual,residual_continuity,residual_momentum,cfl,linear_iterations,wall_"
           "time,"
        << mon.csv_header(res.nv()) << "\n";
  }
  solver::SteadySolver newton;
  PetscCall(newton.setup(res, cfg));
  const std::function<PetscErrorCode(const solver::NewtonRecord &, Vec)> monitor =
      [&](const solver::NewtonRecord &r, Vec x) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(res.update_local(x));
    FlowMonitors::Values v;
    PetscCall(mon.evaluate(res, &v));
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
  solver::SteadySummary summary;
  PetscCall(newton.solve(w, monitor, best, &summary));
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));

  if (!summary.converged) {
    PetscCall(res.update_local(best));
    FlowWriter last;
    PetscCall(last.setup(res, mon, cfg, args.output_dir, "last_good"));
    PetscCall(last.write_vtk(res, 0.0));
    PetscCall(last.write_hdf5(res, 0.0));
    std::vector<double> h;
    for (const auto &r : summary.history) h.push_back(r.residual);
    SETERRQ(comm, PETSC_ERR_NOT_CONVERGED,
            "%s: the steady solve did not converge (%s) after %d Newton iterations; residual "
            "history: %s. The best "
            "state (iteration %d, |R| %.3e) is in %s/last_good.pvd. Try a smaller "
            "solver.cfl_initial, a better "
            "initial state (initial.velocity), a coarser mesh or more solver.max_iterations",
            cfg.file().c_str(), summary.reason.c_str(), summary.iterations, history_text(h).c_str(),
            summary.best_iteration, summary.best_residual, args.output_dir.c_str());
  }

  PetscCall(res.update_local(w));
  FlowMonitors::Values v;
  PetscCall(mon.evaluate(res, &v));
  FlowWriter writer;
  PetscCall(writer.setup(res, mon, cfg, args.output_dir, "flow"));
  PetscCall(writer.write_vtk(res, 0.0));
  PetscCall(writer.write_hdf5(res, 0.0));
  PetscCall(log_info(
      comm,
      "converged (%s) in %d Newton iterations, |R| %.3e -> %.3e, %.2f s, peak memory %.0f MiB",
      summary.reason.c_str(), summary.iterations, summary.initial_residual, summary.final_residual,
      summary.wall_time, mem_total));
  PetscCall(log_info(comm, "c_D %.10f  (pressure %.10f, viscous %.10f)  c_L %.10f  c_M %.10f", v.cd,
                     v.cd_pressure, v.cd_viscous, v.cl, v.cm));
  if (v.has_dp) PetscCall(log_info(comm, "delta_p %.10f", v.dp));

  nlohmann::json j = base_summary(res, cfg);
  j["mode"] = "steady";
  j["converged"] = summary.converged;
  j["reason"] = summary.reason;
  j["newton_iterations"] = summary.iterations;
  j["initial_residual"] = summary.initial_residual;
  j["final_residual"] = summary.final_residual;
  std::vector<double> hist;
  int lin = 0;
  for (const auto &r : summary.history) hist.push_back(r.residual), lin += r.linear_iterations;
  j["residual_history"] = hist;
  j["linear_iterations"] = lin;
  j["wall_time"] = summary.wall_time;
  j["peak_memory_mib"] = mem_total;
  j["peak_memory_mib_max_rank"] = mem_max;
  add_values(j, v, cfg, res.nv());
  PetscCall(write_json(comm, (fs::path(args.output_dir) / "summary.json").string(), j));
  PetscCall(VecDestroy(&best));
  if (info) info->wall_time = summary.wall_time, info->peak_memory_mib = mem_total;
  PetscFunctionReturn(0);
}

PetscErrorCode run_run_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  const bool unsteady = cfg.section("time").text("mode") == "unsteady";
  PetscCheck(!args.restart || unsteady, comm, PETSC_ERR_USER_INPUT,
             "--restart applies to unsteady runs (time.mode: unsteady) only");
  mesh::Mesh mesh;
  PetscCall(load_case_mesh(comm, cfg, &mesh));
  FlowResidual res;
  PetscCall(res.setup(mesh, cfg));
  FlowMonitors mon;
  PetscCall(mon.setup(res, cfg));
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(log_info(
      comm, "%d cells, %d unknowns on %d rank%s; pressure level %s", (int)mesh.n_global_cells,
      (int)(mesh.n_global_cells * res.nv()), size, size > 1 ? "s" : "",
      res.pressure_pinned() ? "pinned (p = 0 in the first cell)" : "set by the boundaries"));
  if (unsteady) {
    PetscCall(run_unsteady(comm, args, cfg, mesh, res, mon));
  } else {
    Vec w;
    PetscCall(res.create_state(&w));
    PetscCall(solve_steady_case(comm, args, cfg, res, mon, w, nullptr));
    PetscCall(VecDestroy(&w));
  }
  PetscFunctionReturn(0);
}

} // namespace karman::cli
