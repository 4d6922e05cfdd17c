// Helpers of the objective units' tests (test_force_objectives.cpp, test_pressure_objectives.cpp,
// test_probe_objective.cpp, test_objective.cpp): the DFG 2D-1 channel (level 0) with a given
// objective section, states set cell by cell, the objective's value, and its reverse mode
// (dJ/dw from Objective::reverse and adjoint::finish) against central differences of value() in a
// random direction (exact up to round-off: the objectives are at most quadratic in w).
#pragma once

#include "karman/adjoint/objective.hpp"
#include "karman/adjoint/sensitivities.hpp"
#include "karman/core/error.hpp"
#include "karman/core/parallel.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

namespace karman::test {

struct FlowFixture {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  Vec w = nullptr;
  FlowFixture() = default;
  FlowFixture(const FlowFixture &) = delete;
  ~FlowFixture() {
    if (w) VecDestroy(&w);
  }
  const discretization::FlowResidual &res() const { return fc.residual(); }
};

/// The DFG 2D-1 case (level 0, rho = 1, U = 0.2, L = 0.1) with `sections` (its objective section
/// and others) and `overrides` into *f, and a zero state f->w; returns "" or the error of the
/// loading.  Collective.
inline std::string try_load_dfg_with(const std::string &sections, FlowFixture *f,
                                     const std::vector<std::string> &overrides = {}) {
  const std::string yaml = "mesh: {file: " + mesh_file(PETSC_COMM_WORLD, dfg_geo(), 0, 2) + R"(}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
)" + sections;
  clear_error();
  if (config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", ".", overrides,
                                    optimization::case_schema(), f->cfg) ||
      f->fc.load(PETSC_COMM_WORLD, f->cfg)) {
    const std::string error = last_error_message();
    clear_error();
    return error.empty() ? "error" : error;
  }
  REQUIRE(f->fc.create_state(&f->w) == 0);
  return "";
}

/// The same; REQUIREs success.
inline void load_dfg_with(const std::string &sections, FlowFixture *f,
                          const std::vector<std::string> &overrides = {}) {
  REQUIRE(try_load_dfg_with(sections, f, overrides) == "");
}

/// The error of loading the case with `sections` and setting up its objective ("" if none).
inline std::string objective_error(const std::string &sections) {
  FlowFixture f;
  std::string error = try_load_dfg_with(sections, &f);
  if (!error.empty()) return error;
  const adjoint::Objective *objective = nullptr;
  clear_error();
  if (f.fc.objective(&objective)) error = last_error_message();
  clear_error();
  return error;
}

/// w on the owned cells from value(x_c, values (nv)).
inline void set_state(const discretization::FlowResidual &res, Vec w,
                      const std::function<void(const Vec3<double> &, double *)> &value) {
  PetscScalar *x;
  REQUIRE(VecGetArray(w, &x) == 0);
  for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c)
    value(res.geometry().cell_centroid[c], &x[c * res.nv()]);
  REQUIRE(VecRestoreArray(w, &x) == 0);
}

/// p = a + b x + c y, u = 0.
inline void set_linear_pressure(const discretization::FlowResidual &res, Vec w, double a, double b,
                                double c) {
  set_state(res, w, [&](const Vec3<double> &x, double *v) {
    v[0] = a + b * x[0] + c * x[1];
    v[1] = v[2] = 0;
  });
}

/// A smooth state with flow: every part of an objective (pressure, shear) depends on it.
inline void set_smooth_state(const discretization::FlowResidual &res, Vec w) {
  set_state(res, w, [](const Vec3<double> &x, double *v) {
    v[0] = 0.3 + x[0] - 2 * x[1] + 0.2 * std::sin(5 * x[0]);
    v[1] = 0.3 * std::sin(3 * x[1]) + 0.1 * x[0];
    v[2] = 0.1 * std::cos(4 * x[0]) * x[1];
  });
}

/// The objective at state w.  Collective.
inline double objective_value(FlowFixture &f, const adjoint::Objective &objective, Vec w) {
  discretization::LocalState state;
  solver::FlowMonitors::Values values;
  REQUIRE(f.fc.evaluate(discretization::kSteady, w, &state, &values) == 0);
  double J = 0;
  REQUIRE(objective.value(f.res(), state, &J) == 0);
  return J;
}

/// dJ/dw . dw from the reverse mode against (J(w + h dw) - J(w - h dw)) / 2h for a random dw.
/// Collective.
inline void check_reverse(FlowFixture &f, const adjoint::Objective &objective, double h = 1e-3) {
  const discretization::FlowResidual &res = f.res();
  discretization::LocalState state;
  solver::FlowMonitors::Values values;
  REQUIRE(f.fc.evaluate(discretization::kSteady, f.w, &state, &values) == 0);
  adjoint::Sensitivities s;
  s.reset(res);
  REQUIRE(objective.reverse(res, state, s) == 0);
  adjoint::Gradient gradient;
  REQUIRE(adjoint::finish(res, state, s, &gradient) == 0);
  Vec dw, wp;
  REQUIRE(VecDuplicate(f.w, &dw) == 0);
  REQUIRE(VecDuplicate(f.w, &wp) == 0);
  PetscRandom rnd;
  REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
  REQUIRE(PetscRandomSetInterval(rnd, -1.0, 1.0) == 0);
  REQUIRE(VecSetRandom(dw, rnd) == 0);
  std::vector<double> local;
  REQUIRE(ghosted_local_values(dw, &local) == 0);
  double mine = 0, reverse = 0;
  const std::size_t n = std::min(local.size(), s.wbar.size());
  for (std::size_t i = 0; i < n; ++i) mine += s.wbar[i] * local[i];
  MPI_Allreduce(&mine, &reverse, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  REQUIRE(VecWAXPY(wp, h, dw, f.w) == 0);
  const double Jp = objective_value(f, objective, wp);
  REQUIRE(VecWAXPY(wp, -h, dw, f.w) == 0);
  const double Jm = objective_value(f, objective, wp);
  const double fd = (Jp - Jm) / (2 * h);
  CAPTURE(reverse, fd);
  CHECK(std::abs(reverse) > 1e-8);
  CHECK(reverse == Approx(fd).epsilon(1e-7).margin(1e-10));
  PetscRandomDestroy(&rnd);
  VecDestroy(&dw);
  VecDestroy(&wp);
}

/// The case's objective of f.  Collective.
inline const adjoint::Objective &case_objective(FlowFixture &f) {
  const adjoint::Objective *objective = nullptr;
  REQUIRE(f.fc.objective(&objective) == 0);
  REQUIRE(objective);
  return *objective;
}

/// The area of the polygon inside the cylinder's faces: the channel's rectangle minus the cells.
/// Collective.
inline double cylinder_polygon_area(const discretization::FlowResidual &res) {
  double volume = 0, total = 0;
  for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c) volume += res.geometry().cell_volume[c];
  MPI_Allreduce(&volume, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return 2.2 * 0.41 - total;
}

} // namespace karman::test
