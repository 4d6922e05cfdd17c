// `karman verify`: trust, but verify.  For the case's objective, compares every adjoint
// parameter gradient with central finite differences over a sweep of step sizes, and
// runs a Taylor test for a smooth bump on the first objective wall:
//   r(eps) = |J(X + eps dX) - J(X) - eps dJ/dX . dX|  must fall as eps^2.
// Prints a table, writes OUTDIR/verify.json, and fails (non-zero exit) when the best
// finite difference of some parameter differs from the adjoint by more than 1e-6
// (relative, above the round-off of the differences) or a Taylor rate is below 1.9.
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
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  const mesh::Mesh &mesh = fc.mesh();
  FlowResidual &res = fc.residual();
  const adjoint::Objective *objective;
  PetscCall(fc.objective(&objective));
  {
    std::vector<adjoint::ParameterGradient> all =
        adjoint::ParameterRegistry(res).gradients(res, false); // check the names early
    PetscCall(adjoint::select_parameters(res, cfg, &all));
  }
  Vec w;
  PetscCall(fc.create_state(&w));
  {
    PetscCall(fc.initial_state(w));
    driver::SteadySolution s;
    PetscCall(fc.solve_steady(w, nullptr, {}, &s));
    PetscCheck(s.summary.converged, comm, PETSC_ERR_NOT_CONVERGED,
               "%s: the forward problem did not converge (%s)", cfg.file().c_str(),
               s.summary.reason.c_str());
    PetscCall(log_info(comm, "forward: %d Newton iterations, |R| %.2e -> %.2e",
                       s.summary.iterations, s.summary.initial_residual, s.summary.final_residual));
  }
  adjoint::AdjointResult r;
  PetscCall(fc.steady_gradient(w, &r));
  PetscCall(log_info(comm, "objective %s = %.12g", objective->description().c_str(), r.J));

  nlohmann::json report;
  report["objective"] = {{"description", objective->description()}, {"value", r.J}};
  int failures = 0;
  PetscCall(log_info(comm, "%-36s %16s %16s %10s  %s", "parameter", "adjoint", "best FD",
                     "rel. diff", "FD (step): rel. diff"));
  for (const auto &par : r.gradient.parameters) {
    adjoint::ParameterCheck check;
    PetscCall(adjoint::check_parameter(res, cfg, *objective, w, r.J, par, &check));
    std::string sweep;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto &s : check.steps) {
      char item[96];
      std::snprintf(item, sizeof(item), "  %.6g (%.0e): %.1e", s.fd,
                    s.step / adjoint::parameter_scale(par.name, par.value, cfg),
                    s.relative_difference);
      sweep += item;
      steps.push_back(
          {{"step", s.step}, {"fd", s.fd}, {"relative_difference", s.relative_difference}});
    }
    failures += check.ok ? 0 : 1;
    PetscCall(log_info(comm, "%-36s %16.9e %16.9e %10.2e %s%s", par.name.c_str(), par.gradient,
                       check.best_fd, check.best_relative_difference, check.ok ? "" : "FAILED ",
                       sweep.c_str()));
    report["parameters"][par.name] = {
        {"adjoint", par.gradient}, {"best_fd", check.best_fd}, {"sweep", steps}, {"ok", check.ok}};
  }

  // shape: Taylor test for a bump on the first objective wall (or the first wall)
  std::vector<int> walls = res.boundary_conditions().wall_patches();
  const auto names = cfg.section("objective").names("walls");
  if (!names.empty()) walls.insert(walls.begin(), mesh.patch_index(names.front()));
  if (!walls.empty()) {
    const int patch = walls.front();
    double dJ;
    std::vector<adjoint::TaylorStep> taylor_steps;
    PetscCall(adjoint::shape_taylor_test(res, cfg, *objective, w, r.J, r.gradient.X, patch, &dJ,
                                         &taylor_steps));
    PetscCall(log_info(comm, "shape: bump on %s, dJ/dX . dX = %.9e",
                       mesh.patch_names[patch].c_str(), dJ));
    PetscCall(log_info(comm, "%14s %16s %8s", "eps", "remainder", "rate"));
    nlohmann::json taylor = nlohmann::json::array();
    for (std::size_t k = 0; k < taylor_steps.size(); ++k) {
      const adjoint::TaylorStep &t = taylor_steps[k];
      const bool ok = k == 0 || t.rate >= 1.9;
      failures += ok ? 0 : 1;
      PetscCall(log_info(comm, "%14.4e %16.6e %8s%s", t.eps, t.remainder,
                         k ? std::to_string(t.rate).substr(0, 6).c_str() : "",
                         ok ? "" : "  FAILED"));
      taylor.push_back({{"eps", t.eps}, {"remainder", t.remainder}, {"rate", t.rate}});
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
  PetscCheck(failures == 0, comm, PETSC_ERR_NOT_CONVERGED,
             "verify: %d check(s) failed (see the table above and %s/verify.json)", failures,
             args.output_dir.c_str());
  PetscCall(log_info(comm, "verify: all checks passed"));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
