// `karman verify`: trust, but verify.  For the case's objective, compares every adjoint
// parameter gradient with central finite differences over a sweep of step sizes, and
// runs a Taylor test for a smooth bump on the first objective wall:
//   r(eps) = |J(X + eps dX) - J(X) - eps dJ/dX . dX|  must fall as eps^2.
// Prints a table, writes OUTDIR/verify.json, and fails (non-zero exit) when the best
// finite difference of some parameter differs from the adjoint by more than 1e-6
// (relative, above the round-off of the differences) or a Taylor rate is below 1.9.
#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/cli/commands.hpp"
#include "karman/core/logger.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace karman::cli {
namespace fs = std::filesystem;
using discretization::FlowResidual;

namespace {

// A typical size of a parameter, to scale the finite-difference steps when it is zero.
double parameter_scale(const std::string &name, double value, const config::CaseConfig &cfg) {
  if (value != 0) return std::abs(value);
  const double U = cfg.section("reference").real("velocity"),
               L = cfg.section("reference").real("length");
  const double rho = cfg.section("fluid").real("density");
  if (name.find(".omega") != std::string::npos) return U / L;
  if (name.find(".pressure") != std::string::npos) return rho * U * U;
  if (name == "fluid.viscosity") return U * L;
  return U;
}

} // namespace

PetscErrorCode run_verify_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg0;
  PetscCall(start_command(comm, args, &cfg0));
  PetscCheck(cfg0.section("time").text("mode") == "steady", comm, PETSC_ERR_SUP,
             "%s: karman verify checks the steady adjoint (time.mode: steady)",
             cfg0.file().c_str());
  // converge the forward problem to round-off: finite differences need it
  std::vector<std::string> overrides = args.overrides;
  overrides.push_back("solver.rtol=1e-14");
  config::CaseConfig cfg;
  PetscCall(config::CaseConfig::load(comm, args.case_file, overrides, cfg));
  mesh::Mesh mesh;
  PetscCall(load_case_mesh(comm, cfg, &mesh));
  FlowResidual res;
  PetscCall(res.setup(mesh, cfg));
  adjoint::Objective objective;
  PetscCall(objective.setup(res, cfg));
  {
    std::vector<adjoint::ParameterGradient> all =
        adjoint::ParameterRegistry(res).gradients(res, false); // check the names early
    PetscCall(adjoint::select_parameters(res, cfg, &all));
  }
  Vec w, w1;
  PetscCall(res.create_state(&w));
  PetscCall(res.create_state(&w1));
  {
    PetscCall(initial_state(res, cfg, w));
    solver::SteadySolver newton;
    PetscCall(newton.setup(res, cfg));
    solver::SteadySummary s;
    PetscCall(newton.solve(w, {}, nullptr, &s));
    PetscCheck(s.converged, comm, PETSC_ERR_NOT_CONVERGED,
               "%s: the forward problem did not converge (%s)", cfg.file().c_str(),
               s.reason.c_str());
    PetscCall(log_info(comm, "forward: %d Newton iterations, |R| %.2e -> %.2e", s.iterations,
                       s.initial_residual, s.final_residual));
  }
  adjoint::AdjointSolver adj;
  PetscCall(adj.setup(res, cfg));
  adjoint::AdjointResult r;
  PetscCall(adj.solve(w, objective, &r));
  PetscCall(adjoint::select_parameters(res, cfg, &r.gradient.parameters));
  PetscCall(log_info(comm, "objective %s = %.12g", objective.description().c_str(), r.J));

  nlohmann::json report;
  report["objective"] = {{"description", objective.description()}, {"value", r.J}};
  int failures = 0;
  const adjoint::ParameterRegistry registry(res);
  PetscCall(log_info(comm, "%-36s %16s %16s %10s  %s", "parameter", "adjoint", "best FD",
                     "rel. diff", "FD (step): rel. diff"));
  for (const auto &par : r.gradient.parameters) {
    const double scale = parameter_scale(par.name, par.value, cfg);
    double best_fd = 0, best_err = 1e300;
    std::string sweep;
    nlohmann::json steps = nlohmann::json::array();
    bool ok = false;
    for (double rel : {1e-3, 1e-4, 1e-5, 1e-6}) {
      const double h = rel * scale;
      double Jp, Jm;
      PetscCall(registry.set(res, par.name, par.value + h));
      PetscCall(adjoint::resolve_objective(res, cfg, objective, w, w1, &Jp, nullptr));
      PetscCall(registry.set(res, par.name, par.value - h));
      PetscCall(adjoint::resolve_objective(res, cfg, objective, w, w1, &Jm, nullptr));
      PetscCall(registry.set(res, par.name, par.value));
      const double fd = (Jp - Jm) / (2 * h);
      const double diff = std::abs(fd - par.gradient);
      const double floor = 1e-13 * std::abs(r.J) / h; // round-off of the difference quotient
      const double rel_diff = diff / std::max({std::abs(fd), std::abs(par.gradient), floor});
      // agreement: relative 1e-6, or within the round-off of the differences
      ok = ok || diff <= 1e-6 * std::abs(fd) + 1e-13 * std::abs(r.J) / h;
      if (rel_diff < best_err) best_err = rel_diff, best_fd = fd;
      char item[96];
      std::snprintf(item, sizeof(item), "  %.6g (%.0e): %.1e", fd, rel, rel_diff);
      sweep += item;
      steps.push_back({{"step", h}, {"fd", fd}, {"relative_difference", rel_diff}});
    }
    failures += ok ? 0 : 1;
    const double best_rel = best_err;
    PetscCall(log_info(comm, "%-36s %16.9e %16.9e %10.2e %s%s", par.name.c_str(), par.gradient,
                       best_fd, best_rel, ok ? "" : "FAILED ", sweep.c_str()));
    report["parameters"][par.name] = {
        {"adjoint", par.gradient}, {"best_fd", best_fd}, {"sweep", steps}, {"ok", ok}};
  }
  PetscCall(res.update_local(w));

  // shape: Taylor test for a bump on the first objective wall (or the first wall)
  std::vector<int> walls = res.boundary_conditions().wall_patches();
  const auto names = cfg.section("objective").names("walls");
  if (!names.empty()) walls.insert(walls.begin(), mesh.patch_index(names.front()));
  if (!walls.empty()) {
    const int patch = walls.front();
    std::vector<Vec3<double>> dX;
    PetscCall(adjoint::bump_displacement(res, patch, Vec3<double>(1, 1, 0), &dX));
    double dJ;
    PetscCall(adjoint::vertex_dot(mesh, r.gradient.X, dX, &dJ));
    // steps from the size of the wall cells, so that no cell inverts
    double h = 1e300;
    for (PetscInt f : mesh.boundary_faces(patch))
      h = std::min(h, norm(res.geometry().face_centroid[f] -
                           res.geometry().cell_centroid[mesh.face_left[f]]));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &h, 1, MPI_DOUBLE, MPI_MIN, comm));
    const std::vector<Vec3<double>> X0 = res.coordinates();
    std::vector<double> eps, rem;
    for (double f : {0.4, 0.2, 0.1, 0.05}) {
      std::vector<Vec3<double>> X = X0;
      for (PetscInt v = 0; v < mesh.n_vertices; ++v) X[v] += (f * h) * dX[v];
      PetscCall(res.set_coordinates(X, "verify: bump"));
      double J;
      PetscCall(adjoint::resolve_objective(res, cfg, objective, w, w1, &J, nullptr));
      eps.push_back(f * h);
      rem.push_back(std::abs(J - r.J - f * h * dJ));
    }
    PetscCall(res.set_coordinates(X0, "verify: restore"));
    PetscCall(log_info(comm, "shape: bump on %s, dJ/dX . dX = %.9e",
                       mesh.patch_names[patch].c_str(), dJ));
    PetscCall(log_info(comm, "%14s %16s %8s", "eps", "remainder", "rate"));
    nlohmann::json taylor = nlohmann::json::array();
    for (std::size_t k = 0; k < eps.size(); ++k) {
      const double rate = k ? std::log(rem[k - 1] / rem[k]) / std::log(eps[k - 1] / eps[k]) : 0.0;
      const bool ok = k == 0 || rate >= 1.9;
      failures += ok ? 0 : 1;
      PetscCall(log_info(comm, "%14.4e %16.6e %8s%s", eps[k], rem[k],
                         k ? std::to_string(rate).substr(0, 6).c_str() : "", ok ? "" : "  FAILED"));
      taylor.push_back({{"eps", eps[k]}, {"remainder", rem[k]}, {"rate", rate}});
    }
    report["taylor"] = {
        {"wall", mesh.patch_names[patch]}, {"directional_derivative", dJ}, {"steps", taylor}};
  }
  report["failures"] = failures;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "verify.json");
    out << report.dump(2) << "\n";
  }
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&w1));
  PetscCheck(failures == 0, comm, PETSC_ERR_NOT_CONVERGED,
             "verify: %d check(s) failed (see the table above and %s/verify.json)", failures,
             args.output_dir.c_str());
  PetscCall(log_info(comm, "verify: all checks passed"));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
