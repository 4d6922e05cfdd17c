// `karman run`: the steady solve of a case, with a log line per Newton iteration,
// OUTDIR/forces.csv (one row per iteration), OUTDIR/summary.json, ParaView output
// (velocity, pressure, vorticity; wall surfaces with pressure coefficient and skin
// friction) and OUTDIR/fields.h5.  A diverging or unconverged solve writes the best
// state it reached (OUTDIR/last_good*) and stops with the reason and the residual
// history.
#include "karman/cli/commands.hpp"

#include "karman/core/logger.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/vtk_writer.hpp"
#include "karman/solver/forces.hpp"
#include "karman/solver/steady_solver.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace karman::cli {
namespace fs = std::filesystem;
using discretization::FlowResidual;

namespace {

/// What is measured on the flow: forces on the objective walls and the two pressure points.
struct Monitors {
  std::vector<int> walls;
  Vec3<double> drag_dir, lift_dir, moment_center;
  double q_ref = 1, s_ref = 1, l_ref = 1, p_ref = 0;
  solver::PointProbes probes, output_probes;

  struct Values {
    double cd = 0, cl = 0, cd_pressure = 0, cd_viscous = 0, cm = 0, dp = NAN;
    solver::ForceReport force;
    std::vector<double> probes; ///< nv values per output probe
  };

  PetscErrorCode setup(const FlowResidual &res, const config::CaseConfig &cfg) {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    const config::Section obj = cfg.section("objective"), ref = cfg.section("reference");
    for (const auto &name : obj.names("walls")) {
      const int p = m.patch_index(name);
      PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: objective.walls: no boundary named '%s'", cfg.file().c_str(), name.c_str());
      walls.push_back(p);
    }
    if (walls.empty()) walls = res.boundary_conditions().wall_patches();
    auto unit = [&](const char *key, Vec3<double> *v) {
      *v = Vec3<double>::from(obj.vector(key));
      const double n = norm(*v);
      if (n > 0) *v = (1.0 / n) * *v;
      return n > 0;
    };
    PetscCheck(unit("drag_direction", &drag_dir) && unit("lift_direction", &lift_dir), m.comm,
               PETSC_ERR_USER_INPUT,
               "%s: objective.drag_direction and lift_direction must be non-zero",
               cfg.file().c_str());
    moment_center = Vec3<double>::from(ref.vector("moment_center"));
    const double rho = cfg.section("fluid").real("density"), U = ref.real("velocity");
    q_ref = 0.5 * rho * U * U;
    l_ref = ref.real("length");
    s_ref = m.dim == 2 ? l_ref : (ref.real("area") > 0 ? ref.real("area") : l_ref * l_ref);
    p_ref = ref.real("pressure");
    std::vector<Vec3<double>> points;
    for (const auto &p : obj.points("points")) points.push_back(Vec3<double>::from(p));
    PetscCheck(points.empty() || points.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
               "%s: objective.points: give two points for the pressure difference (got %zu)",
               cfg.file().c_str(), points.size());
    PetscCheck(cfg.section("objective").text("type") != "pressure-difference" || points.size() == 2,
               m.comm, PETSC_ERR_USER_INPUT,
               "%s: objective.type pressure-difference needs objective.points (two points)",
               cfg.file().c_str());
    PetscCall(probes.setup(res, points, cfg.file() + ": objective.points"));
    points.clear();
    for (const auto &p : cfg.section("output").points("probes"))
      points.push_back(Vec3<double>::from(p));
    PetscCall(output_probes.setup(res, points, cfg.file() + ": output.probes"));
    PetscFunctionReturn(0);
  }

  /// At the FlowResidual's current local state.
  PetscErrorCode evaluate(const FlowResidual &res, Values *v) const {
    PetscFunctionBeginUser;
    PetscCall(solver::wall_force(res, walls, moment_center, &v->force));
    const double scale = 1.0 / (q_ref * s_ref);
    v->cd = dot(v->force.total(), drag_dir) * scale;
    v->cl = dot(v->force.total(), lift_dir) * scale;
    v->cd_pressure = dot(v->force.pressure, drag_dir) * scale;
    v->cd_viscous = dot(v->force.viscous, drag_dir) * scale;
    v->cm = v->force.moment[2] * scale / l_ref;
    if (probes.size() == 2) {
      std::vector<double> values;
      PetscCall(probes.evaluate(res, &values));
      v->dp = values[0] - values[res.nv()];
    }
    if (output_probes.size() > 0) PetscCall(output_probes.evaluate(res, &v->probes));
    PetscFunctionReturn(0);
  }
};

/// ParaView and HDF5 output of the current local state of `res`.
PetscErrorCode write_flow(const FlowResidual &res, const Monitors &mon,
                          const config::CaseConfig &cfg, const std::string &dir,
                          const std::string &name) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const auto &w = res.local_state();
  const auto &G = res.gradients();
  io::Field velocity{"velocity", 3, {}}, pressure{"pressure", 1, {}},
      vorticity{"vorticity", m.dim == 2 ? 1 : 3, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    pressure.values.push_back(w[c * nv]);
    for (int d = 0; d < 3; ++d) velocity.values.push_back(d < m.dim ? w[c * nv + 1 + d] : 0.0);
    auto grad = [&](int k, int i) { return G[(c * nv + k) * 3 + i]; }; // d u_{k-1} / d x_i
    if (m.dim == 2) {
      vorticity.values.push_back(grad(2, 0) - grad(1, 1));
    } else {
      vorticity.values.push_back(grad(3, 1) - grad(2, 2));
      vorticity.values.push_back(grad(1, 2) - grad(3, 0));
      vorticity.values.push_back(grad(2, 0) - grad(1, 1));
    }
  }
  const std::vector<io::Field> fields = {velocity, pressure, vorticity};
  if (cfg.section("output").flag("vtk")) {
    io::VtkSeries series(m.comm, dir, name);
    PetscCall(series.write_volume(m, m.coordinates, 0.0, fields));
    std::vector<std::string> surfaces = cfg.section("output").names("surfaces");
    std::vector<int> patches;
    for (const auto &s : surfaces) {
      const int p = m.patch_index(s);
      PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: output.surfaces: no boundary named '%s'", cfg.file().c_str(), s.c_str());
      patches.push_back(p);
    }
    if (patches.empty()) patches = res.boundary_conditions().wall_patches();
    for (int p : patches) {
      std::vector<double> pf;
      std::vector<Vec3<double>> tau;
      solver::wall_stress(res, p, &pf, &tau);
      io::Field cp{"pressure_coefficient", 1, {}}, cf{"skin_friction", 1, {}},
          shear{"wall_shear_stress", 3, {}};
      const std::vector<PetscInt> faces = io::VtkSeries::surface_faces(m, p);
      for (std::size_t i = 0; i < faces.size(); ++i) {
        const Vec3<double> &S = res.geometry().face_area[faces[i]];
        const Vec3<double> n = (1.0 / norm(S)) * S; // out of the fluid
        cp.values.push_back((pf[i] - mon.p_ref) / mon.q_ref);
        // 2D: shear along t = e_z x (-n) = (n_y, -n_x); 3D: magnitude
        cf.values.push_back((m.dim == 2 ? tau[i][0] * n[1] - tau[i][1] * n[0] : norm(tau[i])) /
                            mon.q_ref);
        for (int d = 0; d < 3; ++d) shear.values.push_back(tau[i][d]);
      }
      io::VtkSeries surface(m.comm, dir, name + "_" + m.patch_names[p]);
      PetscCall(surface.write_surface(m, m.coordinates, p, 0.0, {cp, cf, shear}));
    }
  }
  if (cfg.section("output").flag("hdf5"))
    PetscCall(io::write_fields_h5(m, m.coordinates, (fs::path(dir) / (name + ".h5")).string(),
                                  {velocity, pressure}, {}));
  PetscFunctionReturn(0);
}

std::string history_text(const solver::SteadySummary &s) {
  std::ostringstream out;
  out.precision(3);
  for (const auto &r : s.history) out << (r.iteration ? ", " : "") << r.residual;
  return out.str();
}

} // namespace

PetscErrorCode run_run_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  PetscCheck(cfg.section("time").text("mode") == "steady", comm, PETSC_ERR_SUP,
             "%s: time.mode is 'unsteady': this version of karman solves steady problems only "
             "(time.mode: steady)",
             cfg.file().c_str());
  mesh::Mesh mesh;
  PetscCall(load_case_mesh(comm, cfg, &mesh));
  FlowResidual res;
  PetscCall(res.setup(mesh, cfg));
  Monitors mon;
  PetscCall(mon.setup(res, cfg));
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(log_info(
      comm, "%d cells, %d unknowns on %d rank%s; pressure level %s", (int)mesh.n_global_cells,
      (int)(mesh.n_global_cells * res.nv()), size, size > 1 ? "s" : "",
      res.pressure_pinned() ? "pinned (p = 0 in the first cell)" : "set by the boundaries"));

  Vec w, best;
  PetscCall(res.create_state(&w));
  {
    const config::Section init = cfg.section("initial");
    const auto u0 = init.vector("velocity");
    PetscScalar *a;
    PetscCall(VecGetArray(w, &a));
    for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
      a[c * res.nv()] = init.real("pressure");
      for (int d = 0; d < mesh.dim; ++d) a[c * res.nv() + 1 + d] = u0[d];
    }
    PetscCall(VecRestoreArray(w, &a));
  }
  PetscCall(VecDuplicate(w, &best));

  std::ofstream csv;
  if (rank == 0) {
    csv.open(fs::path(args.output_dir) / "forces.csv");
    csv << "iteration,residual,residual_continuity,residual_momentum,cfl,linear_iterations,wall_"
           "time,cd,cl,"
           "cd_pressure,cd_viscous,cm,delta_p";
    const char *names[] = {"p", "u", "v", "w"};
    for (std::size_t i = 0; i < mon.output_probes.size(); ++i)
      for (int k = 0; k < res.nv(); ++k) csv << ",probe" << i << "_" << names[k];
    csv << "\n";
  }
  solver::SteadySolver newton;
  PetscCall(newton.setup(res, cfg));
  const std::function<PetscErrorCode(const solver::NewtonRecord &, Vec)> monitor =
      [&](const solver::NewtonRecord &r, Vec x) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(res.update_local(x));
    Monitors::Values v;
    PetscCall(mon.evaluate(res, &v));
    PetscCall(log_info(comm,
                       "newton %3d  |R| %.3e (continuity %.2e, momentum %.2e)  CFL %.1e  lin %d  "
                       "%.2f s  c_D %.6f  "
                       "c_L %.6f%s",
                       r.iteration, r.residual, r.residual_continuity, r.residual_momentum, r.cfl,
                       r.linear_iterations, r.wall_time, v.cd, v.cl,
                       std::isnan(v.dp) ? "" : ("  dp " + std::to_string(v.dp)).c_str()));
    if (rank == 0) {
      char line[512];
      std::snprintf(line, sizeof(line),
                    "%d,%.10e,%.10e,%.10e,%.4e,%d,%.4f,%.12e,%.12e,%.12e,%.12e,%.12e,%.12e\n",
                    r.iteration, r.residual, r.residual_continuity, r.residual_momentum, r.cfl,
                    r.linear_iterations, r.wall_time, v.cd, v.cl, v.cd_pressure, v.cd_viscous, v.cm,
                    v.dp);
      std::string row(line);
      row.pop_back(); // newline
      for (double x : v.probes) {
        std::snprintf(line, sizeof(line), ",%.12e", x);
        row += line;
      }
      csv << row << "\n" << std::flush;
    }
    PetscFunctionReturn(0);
  };
  solver::SteadySummary summary;
  PetscCall(newton.solve(w, monitor, best, &summary));
  double mem_total, mem_max;
  PetscCall(solver::peak_memory(comm, &mem_total, &mem_max));

  if (!summary.converged) {
    PetscCall(res.update_local(best));
    PetscCall(write_flow(res, mon, cfg, args.output_dir, "last_good"));
    SETERRQ(comm, PETSC_ERR_NOT_CONVERGED,
            "%s: the steady solve did not converge (%s) after %d Newton iterations; residual "
            "history: %s. The best "
            "state (iteration %d, |R| %.3e) is in %s/last_good.pvd. Try a smaller "
            "solver.cfl_initial, a better "
            "initial state (initial.velocity), a coarser mesh or more solver.max_iterations",
            cfg.file().c_str(), summary.reason.c_str(), summary.iterations,
            history_text(summary).c_str(), summary.best_iteration, summary.best_residual,
            args.output_dir.c_str());
  }

  PetscCall(res.update_local(w));
  Monitors::Values v;
  PetscCall(mon.evaluate(res, &v));
  PetscCall(write_flow(res, mon, cfg, args.output_dir, "flow"));
  PetscCall(log_info(
      comm,
      "converged (%s) in %d Newton iterations, |R| %.3e -> %.3e, %.2f s, peak memory %.0f MiB",
      summary.reason.c_str(), summary.iterations, summary.initial_residual, summary.final_residual,
      summary.wall_time, mem_total));
  PetscCall(log_info(comm, "c_D %.10f  (pressure %.10f, viscous %.10f)  c_L %.10f  c_M %.10f", v.cd,
                     v.cd_pressure, v.cd_viscous, v.cl, v.cm));
  if (!std::isnan(v.dp)) PetscCall(log_info(comm, "delta_p %.10f", v.dp));

  nlohmann::json j;
  j["case"] = cfg.file();
  j["cells"] = mesh.n_global_cells;
  j["unknowns"] = mesh.n_global_cells * res.nv();
  j["ranks"] = size;
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
  j["cd"] = v.cd;
  j["cl"] = v.cl;
  j["cd_pressure"] = v.cd_pressure;
  j["cd_viscous"] = v.cd_viscous;
  j["cm"] = v.cm;
  j["force"] = {v.force.total()[0], v.force.total()[1], v.force.total()[2]};
  if (!std::isnan(v.dp)) j["delta_p"] = v.dp;
  if (mon.output_probes.size() > 0) {
    const auto pts = cfg.section("output").points("probes");
    for (std::size_t i = 0; i < pts.size(); ++i) {
      nlohmann::json pr;
      pr["point"] = pts[i];
      pr["p"] = v.probes[i * res.nv()];
      std::vector<double> u(v.probes.begin() + i * res.nv() + 1,
                            v.probes.begin() + (i + 1) * res.nv());
      pr["velocity"] = u;
      j["probes"].push_back(pr);
    }
  }
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "summary.json");
    out << j.dump(2) << "\n";
  }
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&best));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
