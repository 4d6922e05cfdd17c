// The unsteady discrete adjoint (BDF1 + BDF2) on a short window of the DFG 2D-2 flow around the
// cylinder, in the coarse channel of the control tests (tests/data/control-cylinder.geo, 452
// cells: the discrete identities below hold on any mesh); the iterative linear solver's tests on
// the DFG channel's level 0 (5634 cells, where multigrid coarsens and GMRES iterates):
//  - sine parameters of the cylinder rotation (amplitude, frequency) and the viscosity
//    against central finite differences (relative 1e-5);
//  - Taylor tests (rate >= 1.9) for a random per-step rotation rate, a shape bump on the
//    cylinder and a perturbation of the initial condition  [mpi: also on 2 ranks];
//  - store-all and revolve (3 snapshots) give the same gradient to 1e-9, revolve keeps at
//    most 3 snapshots;
//  - the r.m.s. and the standard deviation of the lift over a window (objective.time rms, std):
//    central differences and a per-step Taylor test  [mpi];
//  - with the iterative linear solver (solver.linear: iterative, forward and transposed solves
//    with multigrid): the sine and viscosity gradients equal the direct method's to 1e-8, the
//    viscosity's central differences to 1e-6, and the per-step rotation gradient passes its
//    Taylor test [mpi].
#include "karman/optimization/case_schema.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/adjoint/verification.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace karman;

namespace {

const std::string kCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 1.0, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.3}}
initial: {velocity: [1, 0]}
time: {mode: unsteady, dt: 0.02, t_end: 0.1}
solver: {rtol: 1e-13, atol: 1e-15, max_iterations: 30, preconditioner_matrix: exact}
objective: {type: drag, walls: [cylinder], time: average, window: [0.04, 0.1], control_cost: 0.01, control_wall: cylinder}
)";

struct Setup {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
  Vec w0 = nullptr;
  ~Setup() {
    if (w0) VecDestroy(&w0);
  }
};

/// The coarse channel (452 cells); the iterative solver's tests pass test::dfg_geo().
const std::string kSmall = "control-cylinder.geo";

void make(Setup *s, const std::vector<std::string> &overrides = {},
          const std::string &geo = kSmall) {
  clear_error();
  // the levels solved by LU (exact to round-off, what most tests here compare against) unless
  // `overrides` choose another solver.linear (the later setting wins)
  std::vector<std::string> settings{"solver.linear=direct"};
  settings.insert(settings.end(), overrides.begin(), overrides.end());
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "ua.yaml", "/", settings,
                                        optimization::case_schema(), s->cfg) == 0);
  test::load(PETSC_COMM_WORLD, geo, 0, 2, {"inlet", "outlet", "walls", "cylinder"}, &s->mesh);
  REQUIRE(s->res.setup(s->mesh, s->cfg) == 0);
  REQUIRE(s->res.create_state(&s->w0) == 0);
  PetscScalar *a;
  REQUIRE(VecGetArray(s->w0, &a) == 0);
  for (PetscInt c = 0; c < s->mesh.n_owned_cells; ++c)
    a[3 * c] = 0, a[3 * c + 1] = 1, a[3 * c + 2] = 0;
  REQUIRE(VecRestoreArray(s->w0, &a) == 0);
}

/// J of a forward run from w0 (with `sizes`: those steps, UnsteadyAdjoint::set_step_sizes).
double forward(Setup &s, Vec w0, const std::vector<double> &sizes = {}) {
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(s.res, s.cfg) == 0);
  ua.set_step_sizes(sizes);
  adjoint::UnsteadyAdjointOptions o;
  o.forward_only = true;
  adjoint::UnsteadyAdjointResult r;
  const PetscErrorCode ierr = ua.run(w0, o, &r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return r.J;
}

void gradient(Setup &s, adjoint::AdjointSchedule schedule, long snapshots,
              adjoint::UnsteadyAdjointResult *r) {
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(s.res, s.cfg) == 0);
  adjoint::UnsteadyAdjointOptions o;
  o.schedule = schedule;
  o.snapshots = snapshots;
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  o.trajectory_directory =
      std::string(KARMAN_TEST_WORK_DIR) + "/ua-trajectory-np" + std::to_string(size);
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::remove_all(o.trajectory_directory);
  MPI_Barrier(PETSC_COMM_WORLD);
  clear_error();
  const PetscErrorCode ierr = ua.run(s.w0, o, r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

double gradient_of(const adjoint::UnsteadyAdjointResult &r, const std::string &name) {
  for (const auto &p : r.parameters)
    if (p.name == name) return p.gradient;
  FAIL("no gradient " << name);
  return 0;
}

/// cases/tmr-flat-plate (SA-neg, Re 5e6) level 0 from free stream: 2 BDF steps of dt with the LU
/// of `preconditioner_matrix` (solver.rtol `rtol`), the mean drag, loaded into cfg and fc.
void load_flat_plate_urans(double dt, double rtol, config::CaseConfig &cfg, driver::FlowCase &fc,
                           const char *preconditioner_matrix = "exact") {
  clear_error();
  std::ostringstream text;
  text << test::flat_plate_rans_yaml("objective: {type: drag, walls: [wall], time: average}\n")
       << "time: {mode: unsteady, dt: " << dt << ", t_end: " << 2 * dt << "}\n"
       << "solver: {rtol: " << rtol
       << ", atol: 1e-14, max_iterations: 60, linear: direct, preconditioner_matrix: "
       << preconditioner_matrix << "}\n";
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, text.str(), "urans.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  const PetscErrorCode ierr = fc.load(PETSC_COMM_WORLD, cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// The unsteady adjoint's run of fc's case from w0 (forward_only: J alone).
adjoint::UnsteadyAdjointResult run_urans(driver::FlowCase &fc, const config::CaseConfig &cfg,
                                         Vec w0, bool forward_only) {
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(fc.residual(), cfg) == 0);
  adjoint::UnsteadyAdjointOptions o;
  o.forward_only = forward_only;
  adjoint::UnsteadyAdjointResult r;
  clear_error();
  const PetscErrorCode ierr = ua.run(w0, o, &r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return r;
}

/// dJ/dnu of r against central differences of re-run forward runs (relative step 1e-4).
void check_viscosity_gradient(driver::FlowCase &fc, const config::CaseConfig &cfg, Vec w0,
                              const adjoint::UnsteadyAdjointResult &r) {
  auto &par = fc.residual().parameters();
  const double nu = par.nu, h = 1e-4 * nu;
  par.nu = nu + h;
  const double Jp = run_urans(fc, cfg, w0, true).J;
  par.nu = nu - h;
  const double Jm = run_urans(fc, cfg, w0, true).J;
  par.nu = nu;
  const double fd = (Jp - Jm) / (2 * h), adj = gradient_of(r, "fluid.viscosity");
  CAPTURE(adj, fd, r.J);
  CHECK(std::abs(adj - fd) <= 1e-6 * std::abs(fd));
}

/// Every parameter gradient of b equals a's to rel |a_i| + abs max_j |a_j| (abs: the round-off
/// of vanishing gradients).
void check_same_gradients(const adjoint::UnsteadyAdjointResult &a,
                          const adjoint::UnsteadyAdjointResult &b, double rel, double abs) {
  double scale = 0;
  for (const auto &p : a.parameters) scale = std::max(scale, std::abs(p.gradient));
  for (const auto &p : a.parameters) {
    const double x = p.gradient, y = gradient_of(b, p.name);
    CAPTURE(p.name, x, y);
    CHECK(std::abs(x - y) <= rel * std::abs(x) + abs * scale);
  }
}

/// The direct method's store-all gradient of the case on the DFG mesh: the reference of the
/// iterative solver's tests, computed once per process.
const adjoint::UnsteadyAdjointResult &dfg_direct_gradient() {
  static adjoint::UnsteadyAdjointResult r;
  static bool done = false;
  if (!done) {
    Setup s;
    make(&s, {}, test::dfg_geo());
    gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
    done = true;
  }
  return r;
}

/// A parameter of the FD checks: its name, value and a setter.
struct ParameterCase {
  const char *name;
  double value;
  std::function<void(double)> set;
};

/// The cylinder's rotation rate (the time function of parameter boundaries.cylinder.omega).
physics::TimeFunction &cylinder_omega(discretization::FlowResidual &res) {
  const discretization::ParameterRegistry reg(res);
  return *reg.time_function(res, reg.find("boundaries.cylinder.omega"));
}

/// The cylinder's sine amplitude (and frequency) and the viscosity as ParameterCases.
std::vector<ParameterCase> parameter_cases(Setup &s, bool frequency) {
  physics::TimeFunction &cyl_omega = cylinder_omega(s.res);
  const physics::TimeFunction base = cyl_omega;
  std::vector<ParameterCase> cases = {
      {"boundaries.cylinder.omega.amplitude", base.amplitude, [&cyl_omega, base](double v) {
         cyl_omega = physics::TimeFunction::sine(v, base.frequency, base.phase, base.offset);
       }}};
  if (frequency)
    cases.push_back(
        {"boundaries.cylinder.omega.frequency", base.frequency, [&cyl_omega, base](double v) {
           cyl_omega = physics::TimeFunction::sine(base.amplitude, v, base.phase, base.offset);
         }});
  cases.push_back(
      {"fluid.viscosity", s.res.parameters().nu, [&s](double v) { s.res.parameters().nu = v; }});
  return cases;
}

/// Central difference (J(value + h) - J(value - h)) / 2h of the forward objective, h = 1e-3 value
/// (with `sizes`: of runs with those steps); the parameter is restored.
double central_difference(Setup &s, const ParameterCase &c, const std::vector<double> &sizes = {}) {
  const double h = 1e-3 * c.value;
  c.set(c.value + h);
  const double Jp = forward(s, s.w0, sizes);
  c.set(c.value - h);
  const double Jm = forward(s, s.w0, sizes);
  c.set(c.value);
  return (Jp - Jm) / (2 * h);
}

/// Every parameter case's adjoint gradient in r against central differences (relative 1e-5).
void check_parameter_gradients(Setup &s, const adjoint::UnsteadyAdjointResult &r, bool frequency) {
  for (const auto &c : parameter_cases(s, frequency)) {
    const double fd = central_difference(s, c), adj = gradient_of(r, c.name);
    CAPTURE(c.name, adj, fd, r.J);
    REQUIRE(std::abs(adj - fd) <= 1e-5 * std::abs(fd));
  }
}

void check_rates(const std::vector<double> &rem) {
  for (std::size_t k = 0; k + 1 < rem.size(); ++k) {
    const double rate = std::log2(rem[k] / rem[k + 1]);
    CAPTURE(k, rem[k], rem[k + 1], rate);
    REQUIRE(rate >= 1.9);
  }
}

/// Taylor test of the per-step rotation-rate gradient along a random direction (seed): omega per
/// level is the sine's values plus eps * delta_n; the remainders fall at rate >= 1.9.
void check_per_step_omega_taylor(Setup &s, const adjoint::UnsteadyAdjointResult &r, unsigned seed) {
  const long N = r.steps;
  physics::TimeFunction &cyl_omega = cylinder_omega(s.res);
  const physics::TimeFunction base = cyl_omega;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> delta(N + 1, 0.0), values(N + 1);
  for (long n = 1; n <= N; ++n) delta[n] = u(gen);
  for (long n = 0; n <= N; ++n) values[n] = base.value(n * 0.02, n);
  const auto &g = r.control.at("boundaries.cylinder.omega");
  double dJ = 0;
  for (long n = 1; n <= N; ++n) dJ += g[n - 1] * delta[n];
  std::vector<double> rem;
  for (double eps : {0.4, 0.2, 0.1}) {
    std::vector<double> v = values;
    for (long n = 1; n <= N; ++n) v[n] += eps * delta[n];
    cyl_omega = physics::TimeFunction::steps(v);
    rem.push_back(std::abs(forward(s, s.w0) - r.J - eps * dJ));
  }
  cyl_omega = base;
  check_rates(rem);
}

} // namespace

TEST_CASE("unsteady adjoint with a passive scalar: the time-averaged Nusselt number's and outlet "
          "variance's gradients equal finite differences",
          "[unsteady-adjoint][scalar][mpi]") {
  // the heated cylinder in the coarse channel of the control tests (452 cells), 5 BDF steps:
  // every parameter of the scalar and the flow's that carry it, central differences of the whole
  // forward run (1e-7 relative)
  std::string yaml = kCase.substr(0, kCase.find("objective:"));
  yaml += R"(objective:
  type: sum
  terms: [{type: nusselt, walls: [cylinder]}, {type: scalar-variance, patches: [outlet], weight: 300}]
  time: average
  window: [0.04, 0.1]
scalar:
  diffusivity: 0.005
  source: 0.2
  decay: 0.1
  initial: 0.1
  boundaries:
    inlet: {type: value, value: 0.1}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.05}
    outlet: {type: outflow}
)";
  Setup s;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "ua.yaml", "/", {},
                                        optimization::case_schema(), s.cfg) == 0);
  test::load(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2,
             {"inlet", "outlet", "walls", "cylinder"}, &s.mesh);
  REQUIRE(s.res.setup(s.mesh, s.cfg) == 0);
  REQUIRE(s.res.nv() == 4);
  REQUIRE(s.res.create_state(&s.w0) == 0);
  PetscScalar *a;
  REQUIRE(VecGetArray(s.w0, &a) == 0);
  for (PetscInt c = 0; c < s.mesh.n_owned_cells; ++c)
    a[4 * c] = 0, a[4 * c + 1] = 1, a[4 * c + 2] = 0, a[4 * c + 3] = 0.1;
  REQUIRE(VecRestoreArray(s.w0, &a) == 0);
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  const discretization::ParameterRegistry registry(s.res);
  for (const char *name :
       {"scalar.diffusivity", "scalar.source", "scalar.decay", "scalar.boundaries.cylinder.value",
        "scalar.boundaries.inlet.value", "scalar.boundaries.walls.flux",
        "boundaries.inlet.velocity", "fluid.viscosity"}) {
    const int i = registry.find(name);
    REQUIRE(i >= 0);
    const double v = registry.value(s.res, i, discretization::kSteady),
                 h = 1e-5 * std::max(std::abs(v), 1e-2);
    REQUIRE(registry.set(s.res, name, v + h) == 0);
    const double Jp = forward(s, s.w0);
    REQUIRE(registry.set(s.res, name, v - h) == 0);
    const double Jm = forward(s, s.w0);
    REQUIRE(registry.set(s.res, name, v) == 0);
    const double fd = (Jp - Jm) / (2 * h), g = gradient_of(r, name);
    CAPTURE(name, v, r.J, g, fd);
    CHECK(std::abs(g - fd) <= 1e-7 * std::abs(fd) + 1e-13 * std::abs(r.J) / h);
  }
}

TEST_CASE("unsteady adjoint: sine parameters and viscosity vs finite differences",
          "[unsteady-adjoint]") {
  Setup s;
  make(&s);
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  check_parameter_gradients(s, r, true);
}

TEST_CASE(
    "unsteady adjoint: Taylor tests for the rotation history, the shape and the initial condition",
    "[unsteady-adjoint][mpi]") {
  Setup s;
  make(&s);
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  const double J0 = r.J;
  // (three blocks on the one forward and backward run above, not SECTIONs, which would repeat it)
  {
    INFO("per-step rotation rate, random direction");
    check_per_step_omega_taylor(s, r, 2);
  }
  {
    INFO("shape: bump on the cylinder");
    std::vector<Vec3<double>> dX;
    REQUIRE(adjoint::bump_displacement(s.res, s.mesh.patch_index("cylinder"), Vec3<double>(1, 1, 0),
                                       &dX) == 0);
    double dJ;
    REQUIRE(adjoint::vertex_dot(s.mesh, r.X, dX, &dJ) == 0);
    const auto X0 = s.res.coordinates();
    std::vector<double> rem;
    for (double eps : {4e-4, 2e-4, 1e-4}) {
      auto X = X0;
      for (PetscInt v = 0; v < s.mesh.n_vertices; ++v) X[v] += eps * dX[v];
      REQUIRE(s.res.move_to(X, "bump") == 0);
      rem.push_back(std::abs(forward(s, s.w0) - J0 - eps * dJ));
    }
    REQUIRE(s.res.move_to(X0, "restore") == 0);
    check_rates(rem);
  }
  {
    INFO("initial condition");
    Vec dw, w;
    REQUIRE(VecDuplicate(s.w0, &dw) == 0);
    REQUIRE(VecDuplicate(s.w0, &w) == 0);
    PetscScalar *a;
    REQUIRE(VecGetArray(dw, &a) == 0);
    double dJ = 0;
    for (PetscInt c = 0; c < s.mesh.n_owned_cells; ++c) {
      const Vec3<double> &x = s.res.geometry().cell_centroid[c];
      a[3 * c] = 0;
      a[3 * c + 1] = std::sin(7 * x[0]) * x[1] * (0.41 - x[1]);
      a[3 * c + 2] = std::cos(5 * x[1]) * x[1] * (0.41 - x[1]);
      for (int k = 1; k < 3; ++k) dJ += r.initial[3 * c + k] * a[3 * c + k];
    }
    REQUIRE(VecRestoreArray(dw, &a) == 0);
    MPI_Allreduce(MPI_IN_PLACE, &dJ, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    std::vector<double> rem;
    for (double eps : {0.4, 0.2, 0.1}) {
      REQUIRE(VecWAXPY(w, eps, dw, s.w0) == 0);
      rem.push_back(std::abs(forward(s, w) - J0 - eps * dJ));
    }
    VecDestroy(&dw);
    VecDestroy(&w);
    check_rates(rem);
  }
}

TEST_CASE("URANS with dual time stepping: the steps Newton cannot converge, and their adjoint",
          "[unsteady-adjoint][mpi]") {
  // cases/tmr-flat-plate level 0 from free stream with dt 1e-2 (ten times the test below): the
  // impulsive start's first step is nearly the steady boundary-layer problem from a poor guess,
  // and its Newton solve stops unconverged (DIVERGED_LINEAR_SOLVE, measured); dual time stepping
  // (solver/unsteady_solver.hpp) solves the step's equations by the pseudo-time continuation of
  // the steady solver (11 pseudo-time steps, measured).  Asserted: step 1 needed it and converged,
  // its state solves the step's equations R(w) + rho V (w - w^0) / dt = 0 (the pseudo-time term
  // is gone), and the adjoint's dJ/dnu through those steps equals central differences (1e-6)
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_flat_plate_urans(1e-2, 1e-12, cfg, fc, "compact"); // (exact: 11 % slower here)
  discretization::FlowResidual &res = fc.residual();
  Vec w0;
  REQUIRE(fc.create_state(&w0) == 0);
  REQUIRE(fc.initial_state(w0) == 0);
  {
    INFO("step 1: dual time stepping, the step's equations solved");
    const double dt = 1e-2;
    solver::UnsteadySolver ts;
    REQUIRE(ts.setup(res, cfg) == 0);
    REQUIRE(ts.set_state(w0, w0, 0, 0.0, 0.0) == 0);
    solver::StepReport r;
    clear_error();
    REQUIRE(ts.advance(dt, &r) == 0);
    CAPTURE(r.reason, r.dual_reason, r.newton_iterations, r.initial_residual, r.final_residual);
    CHECK(r.dual_time_stepping);
    CHECK(r.dual_reason.rfind("DIVERGED", 0) == 0);
    REQUIRE(r.converged);
    // R(w^1) + rho V (w^1 - w^0) / dt on the transient rows (BDF1), against that of w^0
    const PetscInt n = fc.mesh().n_owned_cells * res.nv();
    std::vector<double> history(n);
    const PetscScalar *a;
    REQUIRE(VecGetArrayRead(w0, &a) == 0);
    for (PetscInt i = 0; i < n; ++i) history[i] = -PetscRealPart(a[i]) / dt;
    REQUIRE(VecRestoreArrayRead(w0, &a) == 0);
    const discretization::FlowResidual::TimeTerm term{1 / dt, &history};
    Vec R;
    REQUIRE(res.create_state(&R) == 0);
    double r1, r0;
    REQUIRE(res.residual(ts.level(), ts.state(), R, &term) == 0);
    REQUIRE(VecNorm(R, NORM_2, &r1) == 0);
    REQUIRE(res.residual(ts.level(), w0, R, &term) == 0);
    REQUIRE(VecNorm(R, NORM_2, &r0) == 0);
    VecDestroy(&R);
    CAPTURE(r0, r1);
    CHECK(r1 <= 1e-11 * r0);
  }
  const adjoint::UnsteadyAdjointResult r = run_urans(fc, cfg, w0, false);
  check_viscosity_gradient(fc, cfg, w0, r);
  REQUIRE(VecDestroy(&w0) == 0);
}

TEST_CASE("unsteady adjoint of URANS: through SA-neg and the wall distance",
          "[unsteady-adjoint][mpi]") {
  // the viscosity against central differences, the shape (a bump on the plate) against central
  // differences and its Taylor test.
  // cases/tmr-flat-plate (SA-neg, Re 5e6) level 0 from free stream: 2 BDF steps of dt 1e-3 (the
  // impulsive start of the wall's no-slip), the LU.  The levels' wall-distance adjoints are
  // chained once, with the geometry's (finish's deferred_wall_distance).  Measured: dJ/dnu equals
  // central differences to better than 1e-6, the bump's dJ the Richardson extrapolation of two
  // central differences to about 1e-8 (2 ranks: 0.0089807247 against 0.0089807248); without the
  // wall distance's part the bump's dJ is 4.4e-6 off (1 rank: -0.00649548 against -0.00649551),
  // which the Taylor rates (2.00 either way) cannot see, so the check is against the difference.
  // (From the steady state with dt 0.05 the bump's dJ is 9e-4 and central differences scatter by
  // 1e-5 between steps 1e-4 ... 1e-6: too noisy for this check.)
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_flat_plate_urans(1e-3, 1e-13, cfg, fc);
  discretization::FlowResidual &res = fc.residual();
  REQUIRE(!res.wall_distance().empty());
  Vec w0;
  REQUIRE(fc.create_state(&w0) == 0);
  REQUIRE(fc.initial_state(w0) == 0);
  const adjoint::UnsteadyAdjointResult r = run_urans(fc, cfg, w0, false);
  const auto J = [&]() { return run_urans(fc, cfg, w0, true).J; };
  {
    INFO("viscosity");
    check_viscosity_gradient(fc, cfg, w0, r);
  }
  {
    INFO("shape: bump on the plate (the wall distance moves with it)");
    std::vector<Vec3<double>> dX;
    REQUIRE(adjoint::bump_displacement(res, fc.mesh().patch_index("wall"), Vec3<double>(0, 1, 0),
                                       &dX) == 0);
    double dJ;
    REQUIRE(adjoint::vertex_dot(fc.mesh(), r.X, dX, &dJ) == 0);
    const auto X0 = res.coordinates();
    // central differences at +-eps, and the Taylor remainders of the + side
    std::vector<double> rem, fd;
    for (double eps : {2e-5, 1e-5}) {
      double Jpm[2];
      for (int k = 0; k < 2; ++k) {
        auto X = X0;
        for (PetscInt v = 0; v < fc.mesh().n_vertices; ++v) X[v] += (k ? -eps : eps) * dX[v];
        REQUIRE(res.move_to(X, "bump") == 0);
        Jpm[k] = J();
      }
      rem.push_back(std::abs(Jpm[0] - r.J - eps * dJ));
      fd.push_back((Jpm[0] - Jpm[1]) / (2 * eps));
    }
    REQUIRE(res.move_to(X0, "restore") == 0);
    CAPTURE(dJ, fd[0], fd[1], rem[0], rem[1]);
    // (Richardson of the two central differences: at 1e-5 their O(eps^2) error is ~1e-6 of dJ)
    const double richardson = (4 * fd[1] - fd[0]) / 3;
    CAPTURE(richardson);
    CHECK(std::abs(richardson - dJ) <= 1e-7 * std::abs(dJ));
    check_rates(rem);
  }
  REQUIRE(VecDestroy(&w0) == 0);
}

TEST_CASE("unsteady adjoint with time.dt auto: the controller's steps replayed by revolve and by "
          "the finite differences",
          "[unsteady-adjoint][step-size][mpi]") {
  // from the uniform initial state the steps grow as the start's transient decays; the gradient
  // is that of the recorded step sequence: revolve's recomputations repeat it, and the finite
  // differences (central, 1e-3 relative) run with it fixed
  Setup s;
  make(&s, {"time.dt=auto", "time.tolerance=1e-3", "time.dt_initial=0.002"});
  adjoint::UnsteadyAdjointResult all, rev;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &all);
  REQUIRE(all.step_sizes.size() == static_cast<std::size_t>(all.steps));
  double t = 0, dt_min = 1, dt_max = 0;
  for (double h : all.step_sizes)
    t += h, dt_min = std::min(dt_min, h), dt_max = std::max(dt_max, h);
  CAPTURE(all.steps, dt_min, dt_max, all.J);
  REQUIRE(t == Approx(0.1).epsilon(1e-12));
  REQUIRE(dt_max >= 3 * dt_min);
  REQUIRE(all.times.back() == Approx(0.1).epsilon(1e-12));
  gradient(s, adjoint::AdjointSchedule::Revolve, 2, &rev);
  REQUIRE(rev.recomputed > 0);
  // (the controller's second forward run decides as the first: its error estimates agree to the
  // Newton tolerance, so the steps agree to about that on 2 ranks, and exactly on 1)
  REQUIRE(rev.step_sizes.size() == all.step_sizes.size());
  for (std::size_t k = 0; k < all.step_sizes.size(); ++k)
    REQUIRE(rev.step_sizes[k] == Approx(all.step_sizes[k]).epsilon(1e-8));
  REQUIRE(rev.J == Approx(all.J).epsilon(1e-9));
  check_same_gradients(all, rev, 1e-7, 1e-10);
  // (the amplitude and the viscosity: the sine's frequency is checked with a fixed time.dt, and
  // the replay of the step sequence is the same for every parameter)
  for (const auto &c : parameter_cases(s, false)) {
    const double fd = central_difference(s, c, all.step_sizes), adj = gradient_of(all, c.name);
    CAPTURE(c.name, adj, fd);
    REQUIRE(std::abs(adj - fd) <= 1e-6 * std::abs(fd));
  }
  // the objective without the replay takes its own steps again: the same ones (deterministic)
  REQUIRE(forward(s, s.w0) == Approx(all.J).epsilon(1e-9));
}

TEST_CASE("time.dt auto refuses values per time step (type: steps) naming the parameter",
          "[unsteady-adjoint][step-size]") {
  Setup s;
  make(&s, {"time.dt=auto"});
  cylinder_omega(s.res) = physics::TimeFunction::steps({0.0, 0.1, 0.2});
  solver::UnsteadySolver ts;
  clear_error();
  REQUIRE(ts.setup(s.res, s.cfg) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("ua.yaml: boundaries.cylinder.omega has values "
                                                   "per time step (type: steps)") &&
                                       Catch::Contains("fixed time.dt"));
}

TEST_CASE("unsteady adjoint: store-all and revolve give the same gradient",
          "[unsteady-adjoint][mpi]") {
  Setup s;
  make(&s);
  adjoint::UnsteadyAdjointResult all, rev;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &all);
  gradient(s, adjoint::AdjointSchedule::Revolve, 2, &rev);
  REQUIRE(rev.snapshots <= 2);
  REQUIRE(rev.recomputed > 0);
  REQUIRE(rev.J == Approx(all.J).epsilon(1e-12));
  check_same_gradients(all, rev, 1e-9, 1e-12);
  double na = 0, nd = 0;
  for (PetscInt v = 0; v < s.mesh.n_vertices; ++v)
    na += dot(all.X[v], all.X[v]), nd += dot(all.X[v] - rev.X[v], all.X[v] - rev.X[v]);
  REQUIRE(std::sqrt(nd) <= 1e-9 * std::sqrt(na));
}

TEST_CASE("unsteady adjoint: a direct solve (-adj_ksp_type preonly) gives the Krylov gradient",
          "[unsteady-adjoint][mpi]") {
  // a reused factorization applied with preonly would be an earlier level's inverse: the
  // adjoint must set the preconditioner up at every level then
  Setup s;
  make(&s);
  adjoint::UnsteadyAdjointResult krylov, direct;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &krylov);
  {
    test::ScopedOptions preonly({{"-adj_ksp_type", "preonly"}});
    REQUIRE(preonly.set);
    gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &direct);
  }
  CHECK(direct.preconditioner_setups == direct.steps);
  check_same_gradients(krylov, direct, 1e-8, 1e-11);
}

TEST_CASE("unsteady adjoint: with solver.linear auto a level whose iterative solve fails is solved "
          "by the LU",
          "[unsteady-adjoint][mpi]") {
  // -adj_ksp_max_it 1 stops every level's multigrid-preconditioned GMRES (prefix adj_); the
  // fallback (GMRES around the LU of the level's exact Jacobian, prefix adj_fallback_; after
  // kStickyLevelFallbacks levels without the multigrid's attempt) gives the gradient of the
  // levels solved normally
  Setup s;
  make(&s, {"solver.linear=auto"});
  adjoint::UnsteadyAdjointResult normal, forced;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &normal);
  {
    test::ScopedOptions cap({{"-adj_ksp_max_it", "1"}});
    REQUIRE(cap.set);
    gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &forced);
  }
  CHECK(normal.linear_fallbacks == 0);
  CHECK(forced.linear_fallbacks == forced.steps);
  check_same_gradients(normal, forced, 1e-8, 1e-11);
  // -adj_ksp_type preonly would apply one multigrid cycle as each level's inverse: refused
  test::ScopedOptions preonly({{"-adj_ksp_type", "preonly"}});
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(s.res, s.cfg) == 0);
  adjoint::UnsteadyAdjointOptions o;
  adjoint::UnsteadyAdjointResult r;
  clear_error();
  CHECK(ua.run(s.w0, o, &r) != 0);
  CHECK(last_error_message().find("-adj_ksp_type preonly would apply one multigrid cycle") !=
        std::string::npos);
  clear_error();
}

TEST_CASE("unsteady adjoint: the first level (BDF1) sets the preconditioner up again",
          "[unsteady-adjoint][mpi]") {
  // the iteration-count rule never asks for a set-up (refactor_iterations 1000): the sweep sets
  // up at its first level (N) and again at level 1, whose BDF1 time term differs from the BDF2
  // levels'; the gradient is the one of the default rule
  Setup s, reuse;
  make(&s);
  make(&reuse, {"solver.refactor_iterations=1000"});
  adjoint::UnsteadyAdjointResult r, rr;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  gradient(reuse, adjoint::AdjointSchedule::StoreAll, 0, &rr);
  CHECK(rr.preconditioner_setups == 2);
  check_same_gradients(r, rr, 1e-8, 1e-11);
}

TEST_CASE("unsteady adjoint: probe matching against observations in time (system identification)",
          "[unsteady-adjoint]") {
  const std::string dir = std::string(KARMAN_TEST_WORK_DIR) + "/ua-observations";
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/obs.csv")
        << "t, p0, u0, v0, p1, u1, v1\n0, 0.1, 1.2, 0.0, 0.0, 1.0, 0.1\n"
           "0.1, 0.2, 1.1, 0.05, 0.1, 0.9, -0.1\n";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  Setup s;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD, kCase, "ua.yaml", dir,
              {"objective.type=probe-match", "objective.probes=[[0.3, 0.22], [0.5, 0.15]]",
               "objective.observations_file=obs.csv", "objective.window=[0.02, 0.1]"},
              optimization::case_schema(), s.cfg) == 0);
  test::load(PETSC_COMM_WORLD, kSmall, 0, 2, {"inlet", "outlet", "walls", "cylinder"}, &s.mesh);
  REQUIRE(s.res.setup(s.mesh, s.cfg) == 0);
  REQUIRE(s.res.create_state(&s.w0) == 0);
  PetscScalar *a;
  REQUIRE(VecGetArray(s.w0, &a) == 0);
  for (PetscInt c = 0; c < s.mesh.n_owned_cells; ++c)
    a[3 * c] = 0, a[3 * c + 1] = 1, a[3 * c + 2] = 0;
  REQUIRE(VecRestoreArray(s.w0, &a) == 0);
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  const double nu = s.res.parameters().nu, h = 1e-3 * nu;
  s.res.parameters().nu = nu + h;
  const double Jp = forward(s, s.w0);
  s.res.parameters().nu = nu - h;
  const double Jm = forward(s, s.w0);
  s.res.parameters().nu = nu;
  const double fd = (Jp - Jm) / (2 * h), adj = gradient_of(r, "fluid.viscosity");
  CAPTURE(r.J, adj, fd);
  REQUIRE(std::abs(adj - fd) <= 1e-5 * std::abs(fd));
}

TEST_CASE("unsteady adjoint: several objectives in one sweep equal separate runs",
          "[unsteady-adjoint][mpi]") {
  // one forward run and one backward sweep for three objectives (the case's time-averaged drag
  // with control cost, the lift at the final time, the time-averaged lift over another window):
  // each objective's J, parameter gradients, per-step series, dJ/dX and dJ/dw^0 equal those of
  // its own run to the linear solver's tolerance
  Setup s;
  make(&s);
  const std::vector<std::vector<std::string>> others = {
      {"solver.linear=direct", "objective.type=lift", "objective.time=final"},
      {"solver.linear=direct", "objective.type=lift", "objective.window=[0.02, 0.08]",
       "objective.control_cost=0"}};
  std::vector<config::CaseConfig> cfgs(others.size());
  for (std::size_t i = 0; i < others.size(); ++i)
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "ua.yaml", "/", others[i],
                                          optimization::case_schema(), cfgs[i]) == 0);
  std::vector<adjoint::UnsteadyAdjointResult> batched;
  {
    adjoint::UnsteadyAdjoint ua;
    REQUIRE(ua.setup(s.res, s.cfg) == 0);
    for (const auto &c : cfgs) REQUIRE(ua.add_objective(c) == 0);
    REQUIRE(ua.objectives() == 3);
    adjoint::UnsteadyAdjointOptions o;
    o.schedule = adjoint::AdjointSchedule::Revolve;
    o.snapshots = 2;
    clear_error();
    const PetscErrorCode ierr = ua.run(s.w0, o, &batched);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    REQUIRE(batched.size() == 3);
    // the adjoint state is for one objective
    o.save_every = 2;
    o.state_file = std::string(KARMAN_TEST_WORK_DIR) + "/ua-batched-state.h5";
    std::vector<adjoint::UnsteadyAdjointResult> refused;
    REQUIRE(ua.run(s.w0, o, &refused) != 0);
    REQUIRE(last_error_message().find("one objective") != std::string::npos);
    clear_error();
  }
  for (std::size_t i = 0; i < 3; ++i) {
    adjoint::UnsteadyAdjoint ua;
    REQUIRE(ua.setup(s.res, i == 0 ? s.cfg : cfgs[i - 1]) == 0);
    adjoint::UnsteadyAdjointOptions o;
    o.schedule = adjoint::AdjointSchedule::Revolve;
    o.snapshots = 2;
    adjoint::UnsteadyAdjointResult single;
    REQUIRE(ua.run(s.w0, o, &single) == 0);
    const adjoint::UnsteadyAdjointResult &b = batched[i];
    CAPTURE(i, single.J, b.J);
    REQUIRE(b.J == Approx(single.J).epsilon(1e-12)); // (2 ranks: MUMPS, reuse by timing)
    REQUIRE(b.parameters.size() == single.parameters.size());
    double scale = 0;
    for (const auto &p : single.parameters) scale = std::max(scale, std::abs(p.gradient));
    REQUIRE(scale > 0);
    for (const auto &p : single.parameters) {
      const double a = p.gradient, c = gradient_of(b, p.name);
      CAPTURE(p.name, a, c);
      REQUIRE(std::abs(a - c) <= 1e-9 * scale);
    }
    REQUIRE(b.control.size() == single.control.size());
    for (const auto &[name, series] : single.control) {
      REQUIRE(b.control.count(name));
      const auto &other = b.control.at(name);
      REQUIRE(other.size() == series.size());
      double big = 0, diff = 0;
      for (std::size_t k = 0; k < series.size(); ++k)
        big = std::max(big, std::abs(series[k])),
        diff = std::max(diff, std::abs(series[k] - other[k]));
      CAPTURE(name, big, diff);
      REQUIRE(diff <= 1e-9 * big + 1e-12 * scale); // (round-off of vanishing series)
    }
    double na = 0, nd = 0;
    for (PetscInt v = 0; v < s.mesh.n_vertices; ++v)
      na += dot(single.X[v], single.X[v]), nd += dot(single.X[v] - b.X[v], single.X[v] - b.X[v]);
    REQUIRE(na > 0);
    REQUIRE(std::sqrt(nd) <= 1e-9 * std::sqrt(na));
    double ni = 0, ndi = 0;
    for (std::size_t k = 0; k < single.initial.size(); ++k)
      ni += single.initial[k] * single.initial[k],
          ndi += (single.initial[k] - b.initial[k]) * (single.initial[k] - b.initial[k]);
    MPI_Allreduce(MPI_IN_PLACE, &ni, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &ndi, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    REQUIRE(std::sqrt(ndi) <= 1e-9 * std::sqrt(ni));
  }
}

TEST_CASE("unsteady adjoint: r.m.s. and standard deviation of the lift vs finite differences",
          "[unsteady-adjoint][mpi]") {
  // three objectives in one sweep: the lift's time average m, its r.m.s. (with the control cost)
  // and its standard deviation over the window.  S_std^2 = S_rms^2 - m^2; the amplitude and the
  // viscosity against central differences of all three; a per-step rotation rate Taylor test
  Setup s;
  make(&s);
  const std::string lift = "objective.type=lift";
  std::vector<config::CaseConfig> cfgs(3);
  const std::vector<std::vector<std::string>> sets = {
      {lift, "objective.control_cost=0"},
      {lift, "objective.time=rms"},
      {lift, "objective.time=std", "objective.control_cost=0"}};
  for (std::size_t i = 0; i < 3; ++i)
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "ua.yaml", "/", sets[i],
                                          optimization::case_schema(), cfgs[i]) == 0);
  auto run = [&](bool forward_only, Vec w0, std::vector<adjoint::UnsteadyAdjointResult> *r) {
    adjoint::UnsteadyAdjoint ua;
    REQUIRE(ua.setup(s.res, cfgs[0]) == 0);
    REQUIRE(ua.add_objective(cfgs[1]) == 0);
    REQUIRE(ua.add_objective(cfgs[2]) == 0);
    adjoint::UnsteadyAdjointOptions o;
    o.schedule = adjoint::AdjointSchedule::Revolve;
    o.snapshots = 2;
    o.forward_only = forward_only;
    clear_error();
    const PetscErrorCode ierr = ua.run(w0, o, r);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
  };
  std::vector<adjoint::UnsteadyAdjointResult> r;
  run(false, s.w0, &r);
  // the control cost of the rms objective: 0.01 sum_n dt omega_n^2 (levels 1..N)
  physics::TimeFunction &cyl_omega = cylinder_omega(s.res);
  const physics::TimeFunction base = cyl_omega;
  const long N = r[0].steps;
  double cost = 0;
  for (long n = 1; n <= N; ++n) cost += 0.01 * 0.02 * std::pow(base.value(n * 0.02, n), 2);
  const double m = r[0].J, rms = r[1].J - cost, sd = r[2].J;
  CAPTURE(m, rms, sd);
  REQUIRE(sd > 1e-3 * std::abs(m)); // the lift varies over the window
  REQUIRE(sd * sd == Approx(rms * rms - m * m).epsilon(1e-10));

  for (const auto &c : parameter_cases(s, false)) {
    const double h = 1e-3 * c.value;
    std::vector<adjoint::UnsteadyAdjointResult> rp, rm;
    c.set(c.value + h);
    run(true, s.w0, &rp);
    c.set(c.value - h);
    run(true, s.w0, &rm);
    c.set(c.value);
    for (std::size_t i = 0; i < 3; ++i) {
      const double fd = (rp[i].J - rm[i].J) / (2 * h), adj = gradient_of(r[i], c.name);
      CAPTURE(c.name, i, adj, fd);
      REQUIRE(std::abs(adj - fd) <= 1e-5 * std::abs(fd));
    }
  }
  // per-step rotation rate, random direction: rates of the rms and std objectives
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> delta(N + 1, 0.0), values(N + 1);
  for (long n = 1; n <= N; ++n) delta[n] = u(gen);
  for (long n = 0; n <= N; ++n) values[n] = base.value(n * 0.02, n);
  std::vector<double> rem[2];
  for (double eps : {0.4, 0.2, 0.1}) {
    std::vector<double> v = values;
    for (long n = 1; n <= N; ++n) v[n] += eps * delta[n];
    cyl_omega = physics::TimeFunction::steps(v);
    std::vector<adjoint::UnsteadyAdjointResult> rs;
    run(true, s.w0, &rs);
    for (int i = 0; i < 2; ++i) {
      const auto &g = r[i + 1].control.at("boundaries.cylinder.omega");
      double dJ = 0;
      for (long n = 1; n <= N; ++n) dJ += g[n - 1] * delta[n];
      rem[i].push_back(std::abs(rs[i + 1].J - r[i + 1].J - eps * dJ));
    }
  }
  cyl_omega = base;
  check_rates(rem[0]);
  check_rates(rem[1]);
}

TEST_CASE("unsteady adjoint with the iterative linear solver: equal to direct, finite differences, "
          "Taylor",
          "[unsteady-adjoint][iterative][mpi]") {
  Setup s;
  make(&s, {"solver.linear=iterative", "adjoint.rtol=1e-11"}, test::dfg_geo());
  const adjoint::UnsteadyAdjointResult &rd = dfg_direct_gradient();
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  // the levels were Krylov solves, not one LU each
  CHECK(r.linear_iterations > 2 * r.steps);
  CHECK(r.J == Approx(rd.J).epsilon(1e-10));
  // plain GMRES (adjoint.recycle 0) instead of the recycling one: the same gradient, more
  // iterations
  Setup plain;
  make(&plain, {"solver.linear=iterative", "adjoint.rtol=1e-11", "adjoint.recycle=0"},
       test::dfg_geo());
  adjoint::UnsteadyAdjointResult rp;
  gradient(plain, adjoint::AdjointSchedule::StoreAll, 0, &rp);
  CAPTURE(r.linear_iterations, rp.linear_iterations);
  CHECK(r.linear_iterations < rp.linear_iterations);
  // (equal to the direct method's for every parameter; central differences for the viscosity,
  // which enters every level's Jacobian: the direct method's sine gradients are differenced on
  // the small channel above)
  for (const auto &c : parameter_cases(s, true)) {
    const double adj = gradient_of(r, c.name);
    CAPTURE(c.name, adj, gradient_of(rd, c.name));
    CHECK(std::abs(adj - gradient_of(rd, c.name)) <= 1e-8 * std::abs(gradient_of(rd, c.name)));
    CHECK(std::abs(gradient_of(rp, c.name) - gradient_of(rd, c.name)) <=
          1e-8 * std::abs(gradient_of(rd, c.name)));
    if (std::string(c.name) != "fluid.viscosity") continue;
    const double fd = central_difference(s, c);
    CAPTURE(fd);
    CHECK(std::abs(adj - fd) <= 1e-6 * std::abs(fd));
  }
  // per-step rotation rate: Taylor test along a random direction
  check_per_step_omega_taylor(s, r, 5);
}

TEST_CASE("unsteady adjoint, iterative: a preconditioner without a transposed apply works (direct "
          "refuses it); a failed sweep leaves its log stage",
          "[unsteady-adjoint][iterative][mpi]") {
  // the iterative levels are untransposed solves on a virtual J^T with the preconditioner built
  // from P^T (solver::transposed_operators), so PCTELESCOPE, which cannot be applied transposed,
  // works there: here an exact LU of P^T on one rank inside GMRES, recycling and not
  PetscStageLog log;
  int before = -2, after = -2;
  REQUIRE(PetscLogGetStageLog(&log) == 0);
  REQUIRE(PetscStageLogGetCurrent(log, &before) == 0);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string factor = std::to_string(size);
  adjoint::UnsteadyAdjointOptions o;
  o.trajectory_directory = std::string(KARMAN_TEST_WORK_DIR) + "/ua-failing-np" + factor;
  const adjoint::UnsteadyAdjointResult &rd = dfg_direct_gradient();
  {
    test::ScopedOptions telescope{{"-adj_pc_type", "telescope"},
                                  {"-adj_pc_telescope_reduction_factor", factor.c_str()},
                                  {"-adj_telescope_pc_type", "lu"}};
    REQUIRE(telescope.set);
    for (const char *recycle : {"adjoint.recycle=10", "adjoint.recycle=0"}) {
      CAPTURE(recycle);
      Setup s;
      make(&s, {"solver.linear=iterative", "adjoint.rtol=1e-11", recycle}, test::dfg_geo());
      adjoint::UnsteadyAdjointResult r;
      gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
      check_same_gradients(rd, r, 1e-8, 1e-11);
    }
    // direct: KSPSolveTranspose, refused before the first level with the list of those that can
    Setup d;
    make(&d);
    adjoint::UnsteadyAdjoint ua;
    REQUIRE(ua.setup(d.res, d.cfg) == 0);
    adjoint::UnsteadyAdjointResult r;
    clear_error();
    REQUIRE(ua.run(d.w0, o, &r) != 0);
    CHECK(last_error_message().find("-adj_pc_type telescope cannot be applied transposed") !=
          std::string::npos);
    clear_error();
  }
  // a sweep that fails (one GMRES iteration per level) pops its "Unsteady adjoint" stage, as
  // the refused one did
  Setup f;
  make(&f, {"solver.linear=iterative", "adjoint.level_max_iterations=1"}, test::dfg_geo());
  adjoint::UnsteadyAdjoint ua;
  REQUIRE(ua.setup(f.res, f.cfg) == 0);
  adjoint::UnsteadyAdjointResult r;
  clear_error();
  REQUIRE(ua.run(f.w0, o, &r) != 0);
  CHECK(last_error_message().find("did not converge") != std::string::npos);
  clear_error();
  REQUIRE(PetscStageLogGetCurrent(log, &after) == 0);
  CAPTURE(before, after);
  CHECK(after == before);
}

TEST_CASE("window weights: uniform and Hann sum to one; Hann averages periodic signals to "
          "(period / window)^3",
          "[unsteady-adjoint]") {
  using adjoint::WindowWeighting;
  const double dt = 0.01, t0 = 3, t1 = 23;
  const long steps = 2500;
  for (const WindowWeighting w : {WindowWeighting::Uniform, WindowWeighting::Hann}) {
    double sum = 0;
    for (long n = 1; n <= steps; ++n) {
      const double q = adjoint::window_weight(n, steps, dt, t0, t1, w);
      CAPTURE(n, q);
      REQUIRE(q >= 0);
      if (n * dt < t0 - 1e-9 || n * dt > t1 + 1e-9) REQUIRE(q == 0);
      sum += q;
    }
    CHECK(sum == Approx(1.0).epsilon(1e-13));
  }
  CHECK(adjoint::window_weight(300, steps, dt, t0, t1, WindowWeighting::Hann) == 0.0);
  CHECK(adjoint::window_weight(1300, steps, dt, t0, t1, WindowWeighting::Hann) ==
        Approx(2.0 / 2000).epsilon(1e-12)); // the middle: (2 / M) sin^2(pi / 2)
  // the mean of sin(2 pi t / P + phase) (exactly 0) over windows that hold a non-integer number
  // of periods: the uniform error falls as P / T, Hann's as (P / T)^3
  double worst_uniform = 0, worst_hann = 0;
  for (const double P : {0.77, 1.37, 2.9, 4.3})
    for (const double phase : {0.0, 1.0, 2.0}) {
      double e[2] = {0, 0};
      for (long n = 1; n <= steps; ++n) {
        const double s = std::sin(2 * M_PI * n * dt / P + phase);
        e[0] += adjoint::window_weight(n, steps, dt, t0, t1, WindowWeighting::Uniform) * s;
        e[1] += adjoint::window_weight(n, steps, dt, t0, t1, WindowWeighting::Hann) * s;
      }
      const double bound = P / (t1 - t0); // the uniform mean's scale
      CAPTURE(P, phase, e[0], e[1], bound);
      CHECK(std::abs(e[0]) <= bound);
      CHECK(std::abs(e[1]) <= 2 * std::pow(bound, 3));
      worst_uniform = std::max(worst_uniform, std::abs(e[0]));
      worst_hann = std::max(worst_hann, std::abs(e[1]));
    }
  CHECK(worst_hann < 0.05 * worst_uniform);
}

TEST_CASE("unsteady adjoint: a Hann-weighted window vs finite differences, per-step Taylor test",
          "[unsteady-adjoint][mpi]") {
  Setup s;
  make(&s, {"objective.weighting=hann", "objective.window=[0.02, 0.1]"});
  adjoint::UnsteadyAdjointResult r;
  gradient(s, adjoint::AdjointSchedule::StoreAll, 0, &r);
  check_parameter_gradients(s, r, true);
  check_per_step_omega_taylor(s, r, 11);
  // the weights differ from the uniform ones: so does J
  Setup u;
  make(&u, {"objective.window=[0.02, 0.1]"});
  adjoint::UnsteadyAdjointResult ru;
  gradient(u, adjoint::AdjointSchedule::StoreAll, 0, &ru);
  CAPTURE(r.J, ru.J);
  REQUIRE(std::abs(r.J - ru.J) > 1e-6 * std::abs(ru.J));
}
