// Forward re-solves and shape perturbations for gradient verification
// (see include/karman/adjoint/verification.hpp).
#include "karman/adjoint/verification.hpp"
#include "karman/core/parallel.hpp"

#include "karman/discretization/parameters.hpp"
#include "karman/solver/solver_options.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace karman::adjoint {

namespace {
/// Newton steps of a verification re-solve before the continuation takes over
constexpr int kResolveNewtonSteps = 20;
} // namespace

PetscErrorCode resolve_objective(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w0, Vec w, double *J,
                                 int *newton_iterations) {
  PetscFunctionBeginUser;
  // plain Newton: the perturbed state is close to w0, and Newton converges in a few steps or
  // not at all (no LU fallback for `auto`: the continuation below is the fallback)
  const solver::SolverOptions options = solver::solver_options().get(cfg);
  const int newton_steps = std::min<int>(kResolveNewtonSteps, options.max_iterations);
  std::vector<std::string> newton_sets = {"solver.cfl_initial=1e300", "solver.cfl_max=1e300",
                                          "solver.max_iterations=" + std::to_string(newton_steps)};
  if (options.linear == solver::LinearSolverChoice::Auto)
    newton_sets.push_back("solver.linear=iterative");
  config::CaseConfig newton_cfg;
  PetscCall(config::CaseConfig::load_text(res.mesh().comm, cfg.resolved_yaml(), cfg.file(),
                                          cfg.directory(), newton_sets, cfg.schema(), newton_cfg));
  solver::SteadySummary s;
  {
    solver::SteadySolver newton;
    PetscCall(newton.setup(res, newton_cfg));
    PetscCall(VecCopy(w0, w));
    PetscCall(newton.solve(w, {}, nullptr, &s));
  }
  int iterations = s.iterations;
  if (!s.converged) {
    // the case's own continuation from w0: a change that moves the state beyond Newton's
    // basin (a wall transpiration of 1e-3 U in a turbulent boundary layer) still converges
    const solver::SteadySummary newton_summary = s;
    solver::SteadySolver continuation;
    PetscCall(continuation.setup(res, cfg));
    PetscCall(VecCopy(w0, w));
    PetscCall(continuation.solve(w, {}, nullptr, &s));
    iterations += s.iterations;
    PetscCheck(s.converged, res.mesh().comm, PETSC_ERR_NOT_CONVERGED,
               "verification: the perturbed forward problem did not converge (Newton: %s, |R| "
               "%.3e -> %.3e; continuation: %s, |R| %.3e -> %.3e); use smaller steps",
               newton_summary.reason.c_str(), newton_summary.initial_residual,
               newton_summary.final_residual, s.reason.c_str(), s.initial_residual,
               s.final_residual);
  }
  discretization::LocalState state;
  PetscCall(res.local_state(discretization::kSteady, w, &state));
  PetscCall(objective.value(res, state, J));
  if (newton_iterations) *newton_iterations = iterations;
  PetscFunctionReturn(0);
}

PetscErrorCode bump_displacement(const discretization::FlowResidual &res, int patch,
                                 const Vec3<double> &towards, std::vector<Vec3<double>> *dX) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  const std::vector<PetscInt> faces = m.boundary_faces(patch);
  // centre of the wall (area-weighted face centroids)
  double loc[4] = {0, 0, 0, 0};
  for (PetscInt f : faces) {
    const double a = norm(g.face_area[f]);
    for (int d = 0; d < 3; ++d) loc[d] += a * g.face_centroid[f][d];
    loc[3] += a;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, loc, 4, MPI_DOUBLE, MPI_SUM, m.comm));
  PetscCheck(loc[3] > 0, m.comm, PETSC_ERR_USER_INPUT, "bump: boundary %s has no faces",
             m.patch_names[patch].c_str());
  const Vec3<double> centre(loc[0] / loc[3], loc[1] / loc[3], loc[2] / loc[3]);
  // the face furthest along `towards`, and the wall's radius
  double best = -1e300, radius = 0;
  PetscInt best_face = -1;
  for (PetscInt f : faces) {
    const double s = dot(g.face_centroid[f] - centre, towards);
    radius = std::max(radius, norm(g.face_centroid[f] - centre));
    if (s > best) best = s, best_face = f;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &radius, 1, MPI_DOUBLE, MPI_MAX, m.comm));
  double x0n0[6] = {0, 0, 0, 0, 0, 0};
  if (best_face >= 0) {
    const Vec3<double> n =
        (-1.0 / norm(g.face_area[best_face])) * g.face_area[best_face]; // into the fluid
    for (int d = 0; d < 3; ++d) x0n0[d] = g.face_centroid[best_face][d], x0n0[3 + d] = n[d];
  }
  PetscCall(max_with_data(m.comm, best, x0n0, 6, &best, x0n0));
  const Vec3<double> x0(x0n0[0], x0n0[1], x0n0[2]), n0(x0n0[3], x0n0[4], x0n0[5]);
  const double sigma = radius / 3;
  dX->assign(m.n_vertices, Vec3<double>());
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const Vec3<double> r = res.coordinates()[v] - x0;
    (*dX)[v] = std::exp(-dot(r, r) / (sigma * sigma)) * n0;
  }
  PetscFunctionReturn(0);
}

double parameter_scale(const std::string &name, double value,
                       const discretization::FlowResidual &res) {
  if (value != 0) return std::abs(value);
  const double U = res.reference().velocity, L = res.reference().length;
  const double rho = res.parameters().rho;
  if (name.find(".omega") != std::string::npos) return U / L;
  if (name.find(".pressure") != std::string::npos) return rho * U * U;
  if (name == "fluid.viscosity") return U * L;
  return U;
}

PetscErrorCode check_parameter(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                               const Objective &objective, Vec w, double J,
                               const ParameterGradient &par, ParameterCheck *check) {
  PetscFunctionBeginUser;
  const ParameterRegistry registry(res);
  const double scale = parameter_scale(par.name, par.value, res);
  Vec w1;
  PetscCall(VecDuplicate(w, &w1));
  *check = ParameterCheck();
  for (double rel : {1e-3, 1e-4, 1e-5, 1e-6}) {
    const double h = rel * scale;
    double Jp, Jm;
    PetscCall(registry.set(res, par.name, par.value + h));
    PetscCall(resolve_objective(res, cfg, objective, w, w1, &Jp, nullptr));
    PetscCall(registry.set(res, par.name, par.value - h));
    PetscCall(resolve_objective(res, cfg, objective, w, w1, &Jm, nullptr));
    PetscCall(registry.set(res, par.name, par.value));
    const double fd = (Jp - Jm) / (2 * h);
    const double diff = std::abs(fd - par.gradient);
    const double floor = 1e-13 * std::abs(J) / h; // round-off of the difference quotient
    const double rel_diff = diff / std::max({std::abs(fd), std::abs(par.gradient), floor});
    check->ok = check->ok || diff <= 1e-6 * std::abs(fd) + floor;
    if (rel_diff < check->best_relative_difference)
      check->best_relative_difference = rel_diff, check->best_fd = fd;
    check->steps.push_back({h, fd, rel_diff});
  }
  PetscCall(VecDestroy(&w1));
  PetscFunctionReturn(0);
}

PetscErrorCode shape_taylor_test(discretization::FlowResidual &res, const config::CaseConfig &cfg,
                                 const Objective &objective, Vec w, double J,
                                 const std::vector<Vec3<double>> &dJdX, int patch,
                                 double *directional_derivative, std::vector<TaylorStep> *steps) {
  PetscFunctionBeginUser;
  const mesh::Mesh &mesh = res.mesh();
  std::vector<Vec3<double>> dX;
  PetscCall(bump_displacement(res, patch, Vec3<double>(1, 1, 0), &dX));
  double dJ;
  PetscCall(vertex_dot(mesh, dJdX, dX, &dJ));
  // steps from the size of the wall cells, so that no cell inverts
  double h = 1e300;
  for (PetscInt f : mesh.boundary_faces(patch))
    h = std::min(
        h, norm(res.geometry().face_centroid[f] - res.geometry().cell_centroid[mesh.face_left[f]]));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &h, 1, MPI_DOUBLE, MPI_MIN, mesh.comm));
  const std::vector<Vec3<double>> X0 = res.coordinates();
  Vec w1;
  PetscCall(VecDuplicate(w, &w1));
  steps->clear();
  for (double f = 0.4; steps->size() < 10; f *= 0.5) {
    if (steps->size() >= 4 && taylor_converged(*steps)) break;
    if (!steps->empty() && steps->back().remainder <= 1e-11 * std::abs(J)) break;
    std::vector<Vec3<double>> X = X0;
    for (PetscInt v = 0; v < mesh.n_vertices; ++v) X[v] += (f * h) * dX[v];
    PetscCall(res.move_to(X, "verify: bump"));
    double Jx;
    PetscCall(resolve_objective(res, cfg, objective, w, w1, &Jx, nullptr));
    TaylorStep s{f * h, std::abs(Jx - J - f * h * dJ), 0.0};
    if (!steps->empty())
      s.rate =
          std::log(steps->back().remainder / s.remainder) / std::log(steps->back().eps / s.eps);
    steps->push_back(s);
  }
  PetscCall(res.move_to(X0, "verify: restore"));
  PetscCall(VecDestroy(&w1));
  *directional_derivative = dJ;
  PetscFunctionReturn(0);
}

bool taylor_converged(const std::vector<TaylorStep> &steps) {
  const std::size_t n = steps.size();
  return n >= 3 && steps[n - 1].rate >= 1.9 && steps[n - 2].rate >= 1.9;
}

PetscErrorCode vertex_dot(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &a,
                          const std::vector<Vec3<double>> &b, double *value) {
  PetscFunctionBeginUser;
  double s = 0;
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    if (mesh.vertex_owned[v]) s += dot(a[v], b[v]);
  PetscCallMPI(MPI_Allreduce(&s, value, 1, MPI_DOUBLE, MPI_SUM, mesh.comm));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
