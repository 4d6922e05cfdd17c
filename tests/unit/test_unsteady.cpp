// Unsteady pieces: time functions of boundary parameters, BDF coefficients, BDF2's
// temporal order on the Taylor-Green vortex, and HDF5 checkpoints (round trip on P and
// on 1 rank, checksums).
#include "karman/core/error.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/unsteady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace karman;

namespace {

std::string work_dir(const std::string &name)
{
  const std::string d = std::string(KARMAN_TEST_WORK_DIR) + "/" + name;
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  return d;
}

} // namespace

TEST_CASE("time functions of boundary parameters", "[unsteady][config]")
{
  using physics::TimeFunction;
  REQUIRE(TimeFunction::constant(2.5).value(7.0, 3) == 2.5);
  const TimeFunction s = TimeFunction::sine(1.5, 1.0 / 16, 0.0, 0.0); // DFG 2D-3 inflow 1.5 sin(pi t / 8)
  REQUIRE(s.value(4.0, 0) == Approx(1.5).epsilon(1e-15));
  REQUIRE(s.value(2.0, 0) == Approx(1.5 * std::sin(M_PI / 4)).epsilon(1e-15));
  const TimeFunction t = TimeFunction::table({0, 1, 3}, {0, 2, -2});
  REQUIRE(t.value(-1, 0) == 0.0);
  REQUIRE(t.value(0.5, 0) == 1.0);
  REQUIRE(t.value(2.0, 0) == Approx(0.0).margin(1e-15));
  REQUIRE(t.value(9.0, 0) == -2.0);
  const TimeFunction st = TimeFunction::steps({1, 2, 3});
  bool beyond = false;
  REQUIRE(st.value(0, 1, &beyond) == 2.0);
  REQUIRE(!beyond);
  REQUIRE(st.value(0, 5, &beyond) == 3.0);
  REQUIRE(beyond);

  // from a case file: numbers, maps and files
  const std::string dir = work_dir("time-functions");
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(dir + "/omega.csv") << "t, omega\n0, 0\n1, 3\n";
    std::ofstream(dir + "/steps.csv") << "0.5\n0.25\n0.125\n";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  auto load = [&](const std::string &omega, physics::TimeFunction *f) {
    config::CaseConfig cfg;
    clear_error();
    PetscErrorCode ierr = config::CaseConfig::load_text(
        PETSC_COMM_WORLD, "mesh: {file: a.geo}\nboundaries:\n  c: {type: wall, omega: " + omega + "}\n", "case.yaml",
        dir, {}, cfg);
    if (!ierr) ierr = cfg.boundary("c")->parameters.time_function(PETSC_COMM_WORLD, "omega", dir, f);
    return ierr ? last_error_message() : std::string();
  };
  physics::TimeFunction f;
  REQUIRE(load("{type: sine, amplitude: 2, frequency: 0.5, phase: 0.1, offset: 1}", &f).empty());
  REQUIRE(f.value(0.3, 0) == Approx(1 + 2 * std::sin(2 * M_PI * 0.5 * 0.3 + 0.1)).epsilon(1e-15));
  REQUIRE(load("{type: table, points: [[0, 1], [2, 5]]}", &f).empty());
  REQUIRE(f.value(1.0, 0) == 3.0);
  REQUIRE(load("{type: table, file: omega.csv}", &f).empty());
  REQUIRE(f.value(0.5, 0) == 1.5);
  REQUIRE(load("{type: steps, file: steps.csv}", &f).empty());
  REQUIRE(f.value(99.0, 2) == 0.125);
  REQUIRE_THAT(load("{type: cosine}", &f), Catch::Contains("unknown time-function type 'cosine'"));
  REQUIRE_THAT(load("{type: sine, amplitude: 1}", &f), Catch::Contains("needs amplitude and frequency"));
  REQUIRE_THAT(load("{type: table, points: [[1, 0], [0, 1]]}", &f), Catch::Contains("increasing times"));
  REQUIRE_THAT(load("{type: steps, file: missing.csv}", &f), Catch::Contains("missing.csv' not found"));
  REQUIRE_THAT(load("{type: sine, amplitude: 1, frequency: 2, period: 3}", &f), Catch::Contains("unknown key 'period'"));
}

TEST_CASE("variable-step BDF2 differentiates quadratics exactly", "[unsteady]")
{
  std::mt19937 gen(4);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const double dt = u(gen), dt_prev = u(gen), t = u(gen);
    const auto c = solver::bdf_coefficients(2, dt, dt_prev);
    auto q = [](double s) { return 3 * s * s - s + 2; };
    const double tn1 = t + dt, tn = t, tm1 = t - dt_prev;
    REQUIRE(c.a0 * q(tn1) + c.a1 * q(tn) + c.a2 * q(tm1) == Approx(6 * tn1 - 1).epsilon(1e-12));
    const auto e = solver::bdf_coefficients(1, dt, dt_prev);
    REQUIRE(e.a0 * (2 * tn1 + 1) + e.a1 * (2 * tn + 1) == Approx(2.0).epsilon(1e-12));
  }
}

TEST_CASE("BDF2 is second order in time (Taylor-Green vortex, Dirichlet box)", "[unsteady][verification]")
{
  // u = -cos(pi x) sin(pi y) F, v = sin(pi x) cos(pi y) F, F = exp(-2 pi^2 nu t): an exact
  // Navier-Stokes solution; boundary values from it.  Self-convergence on one mesh: the
  // error at T against a run with dt / 8 isolates the time discretization.
  // Also a change of time step at T / 2, as a restart with a new time.dt does it: the second
  // half with dt / 2 in a new solver started from the checkpointed pair (w^n, w^{n-1}) and
  // the old step size.  It must equal the same change made inside one solver, and stay
  // second order (a constant-coefficient BDF2 across the change would be first order).
  const double nu = 0.05, T = 0.8;
  auto exact = [&](const Vec3<double> &x, double t) {
    const double F = std::exp(-2 * M_PI * M_PI * nu * t);
    return Vec3<double>(-std::cos(M_PI * x[0]) * std::sin(M_PI * x[1]) * F,
                        std::sin(M_PI * x[0]) * std::cos(M_PI * x[1]) * F, 0.0);
  };
  const std::string yaml = "mesh: {file: x.geo}\nfluid: {viscosity: 0.05}\ntime: {mode: unsteady, scheme: bdf2}\n"
                           "solver: {rtol: 1e-12, atol: 1e-14}\nboundaries:\n  left: {type: wall}\n  right: {type: "
                           "wall}\n  bottom: {type: wall}\n  top: {type: wall}\n";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "tg.yaml", "/", {}, cfg) == 0);
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  discretization::FlowResidual res;
  REQUIRE(res.setup(m, cfg) == 0);
  for (std::size_t p = 0; p < res.boundary_conditions().n_patches(); ++p)
    res.boundary_conditions().patch(static_cast<int>(p)).custom_velocity = exact;
  auto values = [&](Vec v, std::vector<double> *out) {
    const PetscScalar *b;
    REQUIRE(VecGetArrayRead(v, &b) == 0);
    out->assign(b, b + 3 * m.n_owned_cells);
    REQUIRE(VecRestoreArrayRead(v, &b) == 0);
  };
  // dt until T / 2, then dt2 (in the same solver, or in a new one when restart is set)
  auto run = [&](double dt, double dt2, bool restart, std::vector<double> *out) {
    solver::UnsteadySolver ts;
    REQUIRE(ts.setup(res, cfg) == 0);
    Vec w;
    REQUIRE(res.create_state(&w) == 0);
    PetscScalar *a;
    REQUIRE(VecGetArray(w, &a) == 0);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const Vec3<double> u = exact(res.geometry().cell_centroid[c], 0.0);
      a[3 * c] = 0, a[3 * c + 1] = u[0], a[3 * c + 2] = u[1];
    }
    REQUIRE(VecRestoreArray(w, &a) == 0);
    REQUIRE(ts.set_state(w, w, 0, 0.0, 0.0) == 0);
    solver::StepReport r;
    for (int k = 0, n = static_cast<int>(std::lround(T / 2 / dt)); k < n; ++k) {
      REQUIRE(ts.advance(dt, &r) == 0);
      REQUIRE(r.converged);
    }
    solver::UnsteadySolver fresh;
    solver::UnsteadySolver *second = &ts;
    if (restart) {
      REQUIRE(fresh.setup(res, cfg) == 0);
      REQUIRE(fresh.set_state(ts.state(), ts.previous_state(), ts.step(), ts.time(), ts.previous_dt()) == 0);
      second = &fresh;
    }
    for (int k = 0, n = static_cast<int>(std::lround(T / 2 / dt2)); k < n; ++k) {
      REQUIRE(second->advance(dt2, &r) == 0);
      REQUIRE(r.converged);
    }
    REQUIRE(second->time() == Approx(T).epsilon(1e-12));
    values(second->state(), out);
    VecDestroy(&w);
  };
  auto error = [&](const std::vector<double> &u, const std::vector<double> &ref) {
    double e = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c)
      for (int k = 1; k < 3; ++k) e += (u[3 * c + k] - ref[3 * c + k]) * (u[3 * c + k] - ref[3 * c + k]);
    MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return std::sqrt(e);
  };
  std::vector<double> ref;
  run(0.04 / 32, 0.04 / 32, false, &ref);
  std::vector<double> err, err_switch;
  for (double dt : {0.04, 0.02, 0.01}) {
    std::vector<double> u, v;
    run(dt, dt, false, &u);
    err.push_back(error(u, ref));
    run(dt, dt / 2, true, &v);
    err_switch.push_back(error(v, ref));
    if (dt == 0.04) {
      std::vector<double> same;
      run(dt, dt / 2, false, &same);
      CAPTURE(error(v, same), error(same, ref));
      REQUIRE(error(v, same) <= 1e-10 * error(same, ref) + 1e-13);
    }
  }
  for (std::size_t k = 0; k + 1 < err.size(); ++k) {
    const double order = std::log2(err[k] / err[k + 1]), order_switch = std::log2(err_switch[k] / err_switch[k + 1]);
    CAPTURE(k, err[k], err[k + 1], order, err_switch[k], err_switch[k + 1], order_switch);
    REQUIRE(order >= 1.9);
    REQUIRE(order_switch >= 1.9);
    REQUIRE(err_switch[k] < err[k]); // the second half with dt / 2 is more accurate
  }
}

TEST_CASE("checkpoints: written on P ranks, read on P and on 1 rank, checksummed", "[unsteady][io][mpi]")
{
  mesh::Mesh m, serial;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &serial);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = work_dir("checkpoints-np" + std::to_string(size));
  std::string hash;
  REQUIRE(io::mesh_hash(m, m.coordinates, &hash) == 0);
  const int nv = 3;
  auto value = [](PetscInt gid, int k, long step) { return 0.5 * gid + k + 100.0 * step; };
  auto make = [&](const mesh::Mesh &mm, long step, Vec *v) {
    REQUIRE(VecCreateMPI(mm.comm, mm.n_owned_cells * nv, PETSC_DETERMINE, v) == 0);
    PetscScalar *a;
    REQUIRE(VecGetArray(*v, &a) == 0);
    for (PetscInt c = 0; c < mm.n_owned_cells; ++c)
      for (int k = 0; k < nv; ++k) a[c * nv + k] = value(mm.cell_gid[c], k, step);
    REQUIRE(VecRestoreArray(*v, &a) == 0);
  };
  {
    io::CheckpointWriter ck;
    REQUIRE(ck.open(m, dir, hash, "case-1", nv, "solver.upwind: 1\n") == 0);
    for (long step = 1; step <= 3; ++step) {
      Vec w, wp;
      make(m, step, &w);
      make(m, step - 1, &wp);
      REQUIRE(ck.write(step, 0.1 * step, 0.1, 0.1, w, wp, nullptr, nullptr) == 0);
      VecDestroy(&w);
      VecDestroy(&wp);
    }
  }
  for (const mesh::Mesh *mm : {&m, &serial}) {
    io::CheckpointRecord rec;
    bool found = false;
    REQUIRE(io::find_latest_checkpoint(mm->comm, dir, hash, nv, mm->n_global_cells, &rec, &found) == 0);
    REQUIRE(found);
    REQUIRE(rec.case_hash == "case-1"); // the caller compares the case
    REQUIRE(rec.case_keys == "solver.upwind: 1\n");
    REQUIRE(rec.step == 3);
    REQUIRE(rec.time == Approx(0.3));
    Vec w, wp;
    REQUIRE(VecCreateMPI(mm->comm, mm->n_owned_cells * nv, PETSC_DETERMINE, &w) == 0);
    REQUIRE(VecDuplicate(w, &wp) == 0);
    REQUIRE(io::read_checkpoint(*mm, rec, nv, w, wp) == 0);
    const PetscScalar *a, *b;
    REQUIRE(VecGetArrayRead(w, &a) == 0);
    REQUIRE(VecGetArrayRead(wp, &b) == 0);
    for (PetscInt c = 0; c < mm->n_owned_cells; ++c)
      for (int k = 0; k < nv; ++k) {
        REQUIRE(a[c * nv + k] == value(mm->cell_gid[c], k, 3));
        REQUIRE(b[c * nv + k] == value(mm->cell_gid[c], k, 2));
      }
    VecRestoreArrayRead(w, &a);
    VecRestoreArrayRead(wp, &b);
    VecDestroy(&w);
    VecDestroy(&wp);
  }
  // another mesh: a clear error
  io::CheckpointRecord rec;
  bool found;
  clear_error();
  REQUIRE(io::find_latest_checkpoint(PETSC_COMM_WORLD, dir, "0123", nv, m.n_global_cells, &rec, &found) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("checkpoint of another mesh"));
}
