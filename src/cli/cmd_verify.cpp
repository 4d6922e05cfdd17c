// `karman verify`: trust, but verify.  For the case's objective, compares every adjoint
// parameter gradient with central finite differences over a sweep of step sizes, and
// runs a Taylor test for a smooth bump on the first objective wall:
//   r(eps) = |J(X + eps dX) - J(X) - eps dJ/dX . dX|  must fall as eps^2.
// A case with a design: list also gets its design gradients checked through the mesh deformation
// and the re-solves (optimization::ShapeOptimization::check_gradient): dF/da of the objective and
// of every constraint against fourth-order central differences for variables of every design entry,
// and a Taylor test per design entry (and one over all variables) for every function.
// Prints a table, writes OUTDIR/verify.json (parameters, taylor; design: variable -> function ->
// adjoint, fd, relative_difference; design_gradient: every variable's dF/da; design_taylor_entries:
// entry -> function -> steps, rates, linear, ok; design_taylor: the objective over all variables),
// and fails (non-zero exit) when the best finite difference of some parameter differs from the
// adjoint by more than 1e-6 (relative, above the round-off of the differences), a design
// gradient by more than 1e-6 of its scale, or a Taylor rate is below 1.9.
// A case with a points: list (a multipoint campaign) gets the design checks of its weighted
// objective and of every point's constraints, the points' own variables included
// (optimization::MultipointShapeOptimization::check_gradient).
// A design: list of control entries (parameter, time-function, per-step; steady or unsteady:
// driver/control_optimization.hpp) gets the same design checks, through forward runs (and the
// unsteady adjoint) instead of deformations and re-solves.
#include "karman/adjoint/verification.hpp"
#include "karman/cli/commands.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/core/logger.hpp"
#include "karman/optimization/control_optimization.hpp"
#include "karman/optimization/multipoint.hpp"
#include "karman/optimization/shape_optimization.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace karman::cli {
namespace fs = std::filesystem;
using discretization::FlowResidual;

namespace {

/// Logs a design gradient check (optimization::check_design_gradient) and adds it to the report:
/// design: variable -> function -> adjoint, fd, relative_difference; design_gradient; design_taylor
/// (the objective over all variables) and design_taylor_entries.  Collective (logging).
PetscErrorCode report_design_check(MPI_Comm comm, const optimization::OptimizationProblem &p,
                                   const optimization::DesignGradientCheck &check,
                                   nlohmann::json *report_out) {
  PetscFunctionBeginUser;
  nlohmann::json &report = *report_out;
  const std::vector<std::string> &functions = check.functions;
  PetscCall(log_info(comm,
                     "design: %zu of %zu variables checked (4th-order central differences at "
                     "the step h of the table: 1e-3 of the variable's range, or a tenth or a "
                     "hundredth of it where that failed and these agree better; relative to the "
                     "largest entry of the function in the design entry)",
                     check.variables.size(), p.names.size()));
  PetscCall(log_info(comm, "%-28s %-24s %16s %16s %10s  %9s", "variable", "function", "adjoint",
                     "FD", "rel. diff", "step"));
  for (const auto &v : check.variables)
    for (std::size_t j = 0; j < functions.size(); ++j) {
      PetscCall(log_info(comm, "%-28s %-24s %16.9e %16.9e %10.2e  %9.3e%s", v.name.c_str(),
                         functions[j].c_str(), v.adjoint[j], v.fd[j], v.relative_difference[j],
                         v.step, v.ok[j] ? "" : "  FAILED"));
      report["design"][v.name][functions[j]] = {{"adjoint", v.adjoint[j]},
                                                {"fd", v.fd[j]},
                                                {"step", v.step},
                                                {"relative_difference", v.relative_difference[j]},
                                                {"ok", static_cast<bool>(v.ok[j])}};
    }
  // every design gradient (to compare runs, e.g. on 1 and 2 ranks)
  for (std::size_t j = 0; j < functions.size(); ++j) {
    report["design_functions"][functions[j]] = check.values[j];
    for (std::size_t i = 0; i < p.names.size(); ++i)
      report["design_gradient"][p.names[i]][functions[j]] = check.gradient[j][i];
  }
  if (!check.taylor.empty() && check.taylor[0].eps.size() == 3)
    PetscCall(log_info(comm,
                       "design Taylor tests (random directions: per design entry, then all "
                       "variables): rates at eps = %g, %g",
                       check.taylor[0].eps[1], check.taylor[0].eps[2]));
  PetscCall(log_info(comm, "%-16s %-24s %16s %12s %8s %8s", "entry", "function", "dF/da . p",
                     "r(1e-3)", "rate", "rate"));
  for (const auto &t : check.taylor) {
    nlohmann::json entry;
    for (std::size_t j = 0; j < functions.size(); ++j) {
      std::string rates;
      for (double r : t.rate[j]) rates += "   " + std::to_string(r).substr(0, 6);
      PetscCall(log_info(comm, "%-16s %-24s %16.9e %12.4e %s%s", t.block.c_str(),
                         functions[j].c_str(), t.derivative[j], t.remainder[j].back(),
                         t.linear[j] ? "   linear (remainders at round-off)" : rates.c_str(),
                         t.ok[j] ? "" : "  FAILED"));
      nlohmann::json steps = nlohmann::json::array();
      for (std::size_t k = 0; k < t.eps.size(); ++k)
        steps.push_back({{"eps", t.eps[k]},
                         {"remainder", t.remainder[j][k]},
                         {"rate", k ? t.rate[j][k - 1] : 0.0}});
      entry[functions[j]] = {{"directional_derivative", t.derivative[j]},
                             {"steps", steps},
                             {"rates", t.rate[j]},
                             {"linear", static_cast<bool>(t.linear[j])},
                             {"ok", static_cast<bool>(t.ok[j])}};
    }
    if (t.block == "all")
      report["design_taylor"] = entry["objective"]["steps"]; // objective, all variables
    report["design_taylor_entries"][t.block] = entry;
  }
  PetscFunctionReturn(0);
}

/// Writes OUTDIR/verify.json (the report with its failures) and fails if any check failed.
/// Collective.
PetscErrorCode finish_verify(MPI_Comm comm, const std::string &output_dir, int failures,
                             nlohmann::json *report) {
  PetscFunctionBeginUser;
  (*report)["failures"] = failures;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    std::ofstream out(fs::path(output_dir) / "verify.json");
    out << report->dump(2) << "\n";
  }
  PetscCheck(failures == 0, comm, PETSC_ERR_NOT_CONVERGED,
             "verify: %d check(s) failed (see the table above and %s/verify.json)", failures,
             output_dir.c_str());
  PetscCall(log_info(comm, "verify: all checks passed"));
  PetscFunctionReturn(0);
}

/// `karman verify` of a case whose design: list holds control entries (parameter, time-function,
/// per-step; steady or unsteady): the design gradients of the objective and of every constraint
/// against finite differences of re-run forwards, and Taylor tests
/// (optimization::ControlOptimization:: check_gradient).  Collective.
PetscErrorCode run_control_verify(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  std::vector<std::string> overrides = args.overrides;
  overrides.push_back("solver.rtol=1e-14");
  config::CaseConfig cfg;
  PetscCall(
      config::CaseConfig::load(comm, args.case_file, overrides, optimization::case_schema(), cfg));
  if (solver::solver_options().get(cfg).atol > 1e-13) {
    overrides.push_back("solver.atol=1e-13");
    PetscCall(config::CaseConfig::load(comm, args.case_file, overrides, optimization::case_schema(),
                                       cfg));
  }
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
  optimization::ControlOptimization control;
  PetscCall(control.setup(fc, args.output_dir));
  const optimization::OptimizationProblem &p = control.problem();
  optimization::DesignGradientCheck check;
  PetscCall(control.check_gradient(p.start, 12, 1e-3, &check));
  nlohmann::json report;
  PetscCall(report_design_check(comm, p, check, &report));
  for (const auto &e : control.entries())
    report["design_entries"][e.name] = {
        {"kind",
         e.kind == optimization::ControlKind::Parameter
             ? "parameter"
             : (e.kind == optimization::ControlKind::TimeFunction ? "time-function" : "per-step")},
        {"variables", e.count}};
  PetscCall(finish_verify(comm, args.output_dir, check.failures, &report));
  PetscFunctionReturn(0);
}

/// Solves the forward problem into w (created) from the initial state; it must converge.
/// Collective.
PetscErrorCode solve_forward(MPI_Comm comm, driver::FlowCase &fc, Vec *w) {
  PetscFunctionBeginUser;
  PetscCall(fc.create_state(w));
  PetscCall(fc.initial_state(*w));
  driver::SteadySolution s;
  PetscCall(fc.solve_steady(*w, nullptr, {}, &s));
  PetscCheck(s.summary.converged, comm, PETSC_ERR_NOT_CONVERGED,
             "%s: the forward problem did not converge (%s)", fc.config().file().c_str(),
             s.summary.reason.c_str());
  PetscCall(log_info(comm, "forward: %d Newton iterations, |R| %.2e -> %.2e", s.summary.iterations,
                     s.summary.initial_residual, s.summary.final_residual));
  PetscFunctionReturn(0);
}

/// The steady adjoint being verified: the case, its objective, the converged state w and the
/// adjoint's gradients r.
struct SteadyAdjoint {
  driver::FlowCase &fc;
  const adjoint::Objective &objective;
  Vec w;
  const adjoint::AdjointResult &r;
};

/// Every adjoint parameter gradient against a sweep of finite differences: logged, added to the
/// report (parameters), failed ones counted.  Collective.
PetscErrorCode verify_parameters(MPI_Comm comm, const SteadyAdjoint &a, nlohmann::json *report,
                                 int *failures) {
  PetscFunctionBeginUser;
  FlowResidual &res = a.fc.residual();
  const adjoint::AdjointResult &r = a.r;
  PetscCall(log_info(comm, "%-36s %16s %16s %10s  %s", "parameter", "adjoint", "best FD",
                     "rel. diff", "FD (step): rel. diff"));
  for (const auto &par : r.gradient.parameters) {
    adjoint::ParameterCheck check;
    PetscCall(adjoint::check_parameter(res, a.fc.config(), a.objective, a.w, r.J, par, &check));
    std::string sweep;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto &s : check.steps) {
      char item[96];
      std::snprintf(item, sizeof(item), "  %.6g (%.0e): %.1e", s.fd,
                    s.step / adjoint::parameter_scale(par.name, par.value, res),
                    s.relative_difference);
      sweep += item;
      steps.push_back(
          {{"step", s.step}, {"fd", s.fd}, {"relative_difference", s.relative_difference}});
    }
    *failures += check.ok ? 0 : 1;
    PetscCall(log_info(comm, "%-36s %16.9e %16.9e %10.2e %s%s", par.name.c_str(), par.gradient,
                       check.best_fd, check.best_relative_difference, check.ok ? "" : "FAILED ",
                       sweep.c_str()));
    (*report)["parameters"][par.name] = {
        {"adjoint", par.gradient}, {"best_fd", check.best_fd}, {"sweep", steps}, {"ok", check.ok}};
  }
  PetscFunctionReturn(0);
}

/// shape: Taylor test for a bump on the first objective wall (or the first wall), if any: logged,
/// added to the report (taylor), counted if it failed.  Collective.
PetscErrorCode verify_shape(MPI_Comm comm, const SteadyAdjoint &a, nlohmann::json *report,
                            int *failures) {
  PetscFunctionBeginUser;
  const mesh::Mesh &mesh = a.fc.mesh();
  FlowResidual &res = a.fc.residual();
  std::vector<int> walls = res.boundary_conditions().wall_patches();
  const auto names = solver::force_options().get(a.fc.config()).walls;
  if (!names.empty()) walls.insert(walls.begin(), mesh.patch_index(names.front()));
  if (walls.empty()) PetscFunctionReturn(0);
  const int patch = walls.front();
  double dJ;
  std::vector<adjoint::TaylorStep> taylor_steps;
  PetscCall(adjoint::shape_taylor_test(res, a.fc.config(), a.objective, a.w, a.r.J, a.r.gradient.X,
                                       patch, &dJ, &taylor_steps));
  PetscCall(
      log_info(comm, "shape: bump on %s, dJ/dX . dX = %.9e", mesh.patch_names[patch].c_str(), dJ));
  PetscCall(log_info(comm, "%14s %16s %8s", "eps", "remainder", "rate"));
  // the verdict: the last two rates (the steps are halved until they reach the second-order
  // range; earlier ones are pre-asymptotic)
  const bool converged = adjoint::taylor_converged(taylor_steps);
  *failures += converged ? 0 : 1;
  nlohmann::json taylor = nlohmann::json::array();
  for (std::size_t k = 0; k < taylor_steps.size(); ++k) {
    const adjoint::TaylorStep &t = taylor_steps[k];
    const bool judged = k + 2 >= taylor_steps.size();
    const char *note =
        k == 0 ? "" : (!judged ? "  (pre-asymptotic)" : (converged ? "" : "  FAILED"));
    PetscCall(log_info(comm, "%14.4e %16.6e %8s%s", t.eps, t.remainder,
                       k ? std::to_string(t.rate).substr(0, 6).c_str() : "", note));
    taylor.push_back({{"eps", t.eps}, {"remainder", t.remainder}, {"rate", t.rate}});
  }
  (*report)["taylor"] = {{"wall", mesh.patch_names[patch]},
                         {"directional_derivative", dJ},
                         {"steps", taylor},
                         {"ok", converged}};
  PetscFunctionReturn(0);
}

/// design variables (a case with a design: list): dJ/da and dc/da through the deformation and
/// re-solves against finite differences, and Taylor tests per design entry.  Collective.
PetscErrorCode verify_shape_design(MPI_Comm comm, driver::FlowCase &fc, Vec w,
                                   nlohmann::json *report, int *failures) {
  PetscFunctionBeginUser;
  optimization::ShapeOptimization shape;
  PetscCall(shape.setup(fc, w));
  const optimization::OptimizationProblem &p = shape.problem();
  optimization::DesignGradientCheck check;
  PetscCall(shape.check_gradient(p.start, 12, 1e-3, &check));
  *failures += check.failures;
  PetscCall(report_design_check(comm, p, check, report));
  for (const auto &b : shape.design().blocks())
    (*report)["design_entries"][b.name] = {{"kind", design::kind_name(b.kind)},
                                           {"variables", b.count}};
  PetscFunctionReturn(0);
}

/// `karman verify` of a multipoint case (points:): the design gradients of the weighted
/// objective and of every point's constraints, the points' own variables included, against
/// finite differences of re-solved designs, and Taylor tests
/// (optimization::MultipointShapeOptimization::check_gradient).  Collective.
PetscErrorCode run_multipoint_verify(MPI_Comm comm, const CliArgs &args,
                                     const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  optimization::MultipointShapeOptimization mp;
  PetscCall(mp.setup(comm, cfg));
  const optimization::OptimizationProblem &p = mp.problem();
  optimization::DesignGradientCheck check;
  PetscCall(mp.check_gradient(p.start, 12, 1e-3, &check));
  nlohmann::json report;
  PetscCall(report_design_check(comm, p, check, &report));
  PetscCall(finish_verify(comm, args.output_dir, check.failures, &report));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_verify_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg0;
  PetscCall(start_command(comm, args, &cfg0));
  for (const auto &d : cfg0.designs())
    if (d.family == "control") {
      PetscCall(run_control_verify(comm, args));
      PetscFunctionReturn(0);
    }
  PetscCheck(!solver::time_options().get(cfg0).unsteady(), comm, PETSC_ERR_SUP,
             "%s: karman verify checks the steady adjoint (time.mode: steady), or the design "
             "gradients of control entries in design: (parameter, time-function, per-step)",
             cfg0.file().c_str());
  // converge the forward problem to round-off: finite differences need it
  std::vector<std::string> overrides = args.overrides;
  overrides.push_back("solver.rtol=1e-14");
  // and below an absolute 1e-13 (design checks difference re-solves with small steps)
  if (solver::solver_options().get(cfg0).atol > 1e-13) overrides.push_back("solver.atol=1e-13");
  config::CaseConfig cfg;
  PetscCall(
      config::CaseConfig::load(comm, args.case_file, overrides, optimization::case_schema(), cfg));
  if (!cfg.points().empty()) {
    PetscCall(run_multipoint_verify(comm, args, cfg));
    PetscFunctionReturn(0);
  }
  driver::FlowCase fc;
  PetscCall(fc.load(comm, cfg));
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
  PetscCall(solve_forward(comm, fc, &w));
  adjoint::AdjointResult r;
  PetscCall(fc.steady_gradient(w, &r));
  PetscCall(log_info(comm, "objective %s = %.12g", objective->description().c_str(), r.J));

  nlohmann::json report;
  report["objective"] = {{"description", objective->description()}, {"value", r.J}};
  int failures = 0;
  const SteadyAdjoint steady{fc, *objective, w, r};
  PetscCall(verify_parameters(comm, steady, &report, &failures));
  PetscCall(verify_shape(comm, steady, &report, &failures));
  if (!cfg.designs().empty()) PetscCall(verify_shape_design(comm, fc, w, &report, &failures));
  PetscCall(VecDestroy(&w));
  PetscCall(finish_verify(comm, args.output_dir, failures, &report));
  PetscFunctionReturn(0);
}

} // namespace karman::cli
