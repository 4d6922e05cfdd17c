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
#include "karman/driver/shape_optimization.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
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
  // and below an absolute 1e-13 (design checks difference re-solves with small steps)
  if (cfg0.section("solver").real("atol") > 1e-13) overrides.push_back("solver.atol=1e-13");
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
  // design variables (a case with a design: list): dJ/da and dc/da through the deformation
  // and re-solves, and a Taylor test
  if (!cfg.designs().empty()) {
    driver::ShapeOptimization shape;
    PetscCall(shape.setup(fc, w));
    const driver::OptimizationProblem &p = shape.problem();
    driver::DesignGradientCheck check;
    PetscCall(shape.check_gradient(p.start, 12, 1e-3, &check));
    std::vector<std::string> functions = {"objective"};
    for (const auto &c : p.constraints) functions.push_back(c.name);
    // a function's gradient entries are compared relative to its largest checked entry (the
    // re-solves converge to an absolute 1e-13, so a small entry's difference quotient carries
    // an absolute error of that size / h; an entry that vanishes analytically is round-off)
    std::vector<double> scale(functions.size(), 0.0);
    for (const auto &v : check.variables)
      for (std::size_t j = 0; j < functions.size(); ++j)
        scale[j] = std::max(scale[j], std::abs(v.adjoint[j]));
    PetscCall(log_info(comm, "design: %zu of %zu variables checked (4th-order central differences)",
                       check.variables.size(), p.names.size()));
    PetscCall(log_info(comm, "%-28s %-24s %16s %16s %10s", "variable", "function", "adjoint", "FD",
                       "rel. diff"));
    for (const auto &v : check.variables)
      for (std::size_t j = 0; j < functions.size(); ++j) {
        const double diff = std::abs(v.adjoint[j] - v.fd[j]);
        const double rel = diff / std::max(scale[j], 1e-300);
        const bool ok = rel <= 1e-6;
        failures += ok ? 0 : 1;
        PetscCall(log_info(comm, "%-28s %-24s %16.9e %16.9e %10.2e%s", v.name.c_str(),
                           functions[j].c_str(), v.adjoint[j], v.fd[j], rel, ok ? "" : "  FAILED"));
        report["design"][v.name][functions[j]] = {
            {"adjoint", v.adjoint[j]}, {"fd", v.fd[j]}, {"relative_difference", rel}, {"ok", ok}};
      }
    nlohmann::json taylor = nlohmann::json::array();
    PetscCall(log_info(comm, "design Taylor test (random direction): %14s %16s %8s", "eps",
                       "remainder", "rate"));
    for (std::size_t k = 0; k < check.taylor_eps.size(); ++k) {
      const double rate = k ? std::log(check.taylor_remainder[k - 1] / check.taylor_remainder[k]) /
                                  std::log(check.taylor_eps[k - 1] / check.taylor_eps[k])
                            : 0.0;
      const bool ok = k == 0 || rate >= 1.9;
      failures += ok ? 0 : 1;
      PetscCall(log_info(comm, "%53.4e %16.6e %8s%s", check.taylor_eps[k],
                         check.taylor_remainder[k],
                         k ? std::to_string(rate).substr(0, 6).c_str() : "", ok ? "" : "  FAILED"));
      taylor.push_back(
          {{"eps", check.taylor_eps[k]}, {"remainder", check.taylor_remainder[k]}, {"rate", rate}});
    }
    report["design_taylor"] = taylor;
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
