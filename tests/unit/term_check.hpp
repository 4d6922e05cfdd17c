// Helpers of the residual terms' tests (test_navier_stokes_term.cpp, test_scalar_term.cpp): one
// term's face fluxes and cell sources at a fixed local state (the cells' values and gradients held,
// so that only the term's own inputs move), checked on every face and cell of the mesh:
//  - flux_dw (source_dw) against central differences of flux() (source()) in the values and
//    gradients of the face's cells (the earlier terms' fluxes computed first, as FlowResidual does:
//    a scalar's flux reads the flow's volume flux);
//  - flux_reverse (source_reverse) for random weights lambda on the term's rows: its cell adjoints
//    equal lambda^T dM/d(w, G) of flux_dw, its geometry adjoints (S, x_f, x_L, x_R; V and x_c of a
//    source, and a source's wall distance) and viscosity adjoint equal central differences;
//  - every parameter of the ParameterRegistry: the adjoint through flux_reverse's own parameter
//    entries, its boundary-value adjoints (FluxBar::bv) passed to every term's boundary_reverse,
//    and the viscosity equals central differences of sum_f lambda_f . M_f (+ sum_c lambda_c . Q_c,
//    + sum_f r_f omega_f for random weights r_f of the walls' rotation rates).
#pragma once

#include "karman/core/error.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace karman::test {

struct TermProblem {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

/// Loads `yaml` on the mesh of `geo` (tests/data/<geo> or a path) at `level` and sets up the
/// residual; REQUIREs success.
inline void make_term_problem(const std::string &yaml, const std::string &geo, int dim,
                              const std::vector<std::string> &boundaries, TermProblem *p,
                              int level = 0) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "term.yaml", "/", {},
                                        optimization::case_schema(), p->cfg) == 0);
  load(PETSC_COMM_WORLD, geo, level, dim, boundaries, &p->mesh);
  const PetscErrorCode ierr = p->res.setup(p->mesh, p->cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// The first unknown and the number of unknowns of term t.
inline std::pair<int, int> term_rows(const discretization::FlowResidual &res, std::size_t t) {
  int n = 0;
  for (const auto &f : res.terms()[t]->fields(res.mesh().dim)) n += f.components;
  return {res.terms()[t]->first_unknown(), n};
}

namespace detail {

using discretization::CellView;
using discretization::FaceView;
using physics::CellState;
using physics::FaceGeometry;
using physics::kMaxVars;

/// lambda . M of face (the rows of term t; terms 0..t evaluated in order).
inline double weighted_flux(const discretization::FlowResidual &res, std::size_t t,
                            const FaceView &face, const double *lambda) {
  double M[kMaxVars] = {};
  for (std::size_t u = 0; u <= t; ++u) res.terms()[u]->flux(face, M);
  const auto [first, n] = term_rows(res, t);
  double s = 0;
  for (int k = first; k < first + n; ++k) s += lambda[k] * M[k];
  return s;
}

inline double weighted_source(const discretization::FlowResidual &res, std::size_t t,
                              const CellView &cell, const double *lambda) {
  double Q[kMaxVars] = {};
  res.terms()[t]->source(cell, Q);
  const auto [first, n] = term_rows(res, t);
  double s = 0;
  for (int k = first; k < first + n; ++k) s += lambda[k] * Q[k];
  return s;
}

/// Central difference of f(x) in the scalar x (restored afterwards), step h.
template <typename F> double central(double &x, double h, F f) {
  const double x0 = x;
  x = x0 + h;
  const double fp = f();
  x = x0 - h;
  const double fm = f();
  x = x0;
  return (fp - fm) / (2 * h);
}

inline double step_of(double x) {
  return 1e-6 * std::max(1.0, std::abs(x));
}

/// |a - b| within 1e-6 of the scale plus an absolute 1e-9 (central differences with steps 1e-6:
/// truncation ~1e-12, round-off ~1e-10 of the O(1) fluxes).
inline bool close(double a, double b, double scale) {
  return std::abs(a - b) <= 1e-6 * scale + 1e-9;
}

} // namespace detail

/// The checks above for term t of p at a state w (owned cells; 1 rank).  `rotation`: include the
/// walls' rotation rates (the flow term's boundary data).
inline void check_term(TermProblem &p, std::size_t t, Vec w, bool rotation) {
  using namespace detail;
  discretization::FlowResidual &res = p.res;
  const mesh::Mesh &m = p.mesh;
  const int nv = res.nv();
  const auto [first, n] = term_rows(res, t);
  const discretization::ResidualTerm &term = *res.terms()[t];
  discretization::LocalState state;
  REQUIRE(res.local_state(discretization::kSteady, w, &state) == 0);
  // (differences need O(1) fluxes: the least-squares gradients of the smooth state are O(1))
  double gmax = 0;
  for (double g : state.grad) gmax = std::max(gmax, std::abs(g));
  CAPTURE(gmax);
  REQUIRE(gmax < 1e3);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  // weights: lambda per face and per cell on the term's rows, r per face (rotation rate)
  std::vector<double> lambda(m.n_flux_faces * nv, 0.0), lambda_c(m.n_owned_cells * nv, 0.0);
  std::vector<double> rot(m.n_flux_faces, 0.0);
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    for (int k = first; k < first + n; ++k) lambda[f * nv + k] = uni(gen);
    if (rotation) rot[f] = uni(gen);
  }
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (int k = first; k < first + n; ++k) lambda_c[c * nv + k] = uni(gen);

  const discretization::ParameterRegistry registry(res);
  std::vector<double> parameter_bar(registry.size(), 0.0);
  int faces_checked = 0;
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    CellState<double> L = state.cell(m.face_left[f]), R{};
    FaceGeometry<double> g = res.face_geometry(f);
    const PetscInt r = m.face_right[f];
    if (r >= 0) R = state.cell(r);
    const FaceView face{f, &L, r >= 0 ? &R : nullptr, &g};
    const double *lf = &lambda[f * nv];
    auto phi = [&] { return weighted_flux(res, t, face, lf); };
    physics::FluxJacobian J;
    J.clear(nv);
    for (std::size_t u = 0; u <= t; ++u) res.terms()[u]->flux_dw(face, J);
    physics::FluxBar bar;
    term.flux_reverse(face, lf, bar, parameter_bar.data() + registry.term_offset(t));
    CAPTURE(f, m.face_patch[f]);
    // flux_dw against differences, flux_reverse against flux_dw, per side and unknown
    for (int side = 0; side < (r >= 0 ? 2 : 1); ++side) {
      CellState<double> &s = side == 0 ? L : R;
      const CellState<double> &sb = side == 0 ? bar.L : bar.R;
      const auto &dw = side == 0 ? J.dwL : J.dwR;
      const auto &dg = side == 0 ? J.dgL : J.dgR;
      double scale = 0;
      for (int eq = first; eq < first + n; ++eq)
        for (int var = 0; var < nv; ++var) {
          scale = std::max(scale, std::abs(dw[eq][var]));
          for (int c = 0; c < 3; ++c) scale = std::max(scale, std::abs(dg[eq][var][c]));
        }
      for (int var = 0; var < nv; ++var) {
        double contracted = 0;
        for (int eq = first; eq < first + n; ++eq) {
          auto row = [&] {
            double M[kMaxVars] = {};
            for (std::size_t u = 0; u <= t; ++u) res.terms()[u]->flux(face, M);
            return M[eq];
          };
          const double fd = central(s.w[var], step_of(s.w[var]), row);
          CAPTURE(side, eq, var, dw[eq][var], fd);
          CHECK(close(dw[eq][var], fd, scale));
          contracted += lf[eq] * dw[eq][var];
        }
        CAPTURE(side, var, sb.w[var], contracted);
        CHECK(close(sb.w[var], contracted, 1e-6 * scale));
        for (int c = 0; c < 3; ++c) {
          double cg = 0;
          for (int eq = first; eq < first + n; ++eq) {
            auto row = [&] {
              double M[kMaxVars] = {};
              for (std::size_t u = 0; u <= t; ++u) res.terms()[u]->flux(face, M);
              return M[eq];
            };
            const double fd = central(s.g[var][c], step_of(s.g[var][c]), row);
            CAPTURE(side, eq, var, c, dg[eq][var][c], fd);
            CHECK(close(dg[eq][var][c], fd, scale));
            cg += lf[eq] * dg[eq][var][c];
          }
          CHECK(close(sb.g[var][c], cg, 1e-6 * scale));
        }
      }
    }
    // geometry and viscosity adjoints against differences of lambda . M
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i, bar.S[i], bar.xf[i], bar.xL[i], bar.xR[i]);
      CHECK(close(bar.S[i], central(g.S[i], 1e-7, phi), std::abs(bar.S[i])));
      CHECK(close(bar.xf[i], central(g.xf[i], 1e-7, phi), std::abs(bar.xf[i])));
      CHECK(close(bar.xL[i], central(g.xL[i], 1e-7, phi), std::abs(bar.xL[i])));
      if (r >= 0) CHECK(close(bar.xR[i], central(g.xR[i], 1e-7, phi), std::abs(bar.xR[i])));
    }
    CHECK(close(bar.nu, central(res.parameters().nu, 1e-5 * res.parameters().nu, phi),
                std::abs(bar.nu)));
    // the boundary data's adjoints to the parameters (every term's boundary_reverse)
    parameter_bar[registry.viscosity()] += bar.nu;
    if (m.face_patch[f] >= 0) {
      const discretization::BoundaryDataBar bd{bar.bv, rot[f]};
      Vec3<double> xf_bar, S_bar;
      for (std::size_t u = 0; u < res.terms().size(); ++u)
        res.terms()[u]->boundary_reverse(f, bd, parameter_bar.data() + registry.term_offset(u),
                                         &xf_bar, &S_bar);
    }
    ++faces_checked;
  }
  CHECK(faces_checked == m.n_flux_faces);
  // the cell sources
  if (term.has_source())
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      CellState<double> s = state.cell(c);
      discretization::CellView cell = res.cell_view(c, s);
      const double *lc = &lambda_c[c * nv];
      discretization::SourceJacobian sj;
      sj.clear(nv);
      term.source_dw(cell, sj);
      discretization::SourceBar sbar;
      term.source_reverse(cell, lc, sbar, parameter_bar.data() + registry.term_offset(t));
      CAPTURE(c);
      for (int var = 0; var < nv; ++var) {
        double contracted = 0;
        for (int eq = first; eq < first + n; ++eq) {
          auto row = [&] {
            double Q[kMaxVars] = {};
            term.source(cell, Q);
            return Q[eq];
          };
          const double fd = central(s.w[var], step_of(s.w[var]), row);
          CAPTURE(eq, var, sj.dw[eq][var], fd);
          CHECK(close(sj.dw[eq][var], fd, std::abs(fd)));
          for (int i = 0; i < 3; ++i)
            CHECK(close(sj.dg[eq][var][i], central(s.g[var][i], 1e-6, row), 0.0));
          contracted += lc[eq] * sj.dw[eq][var];
        }
        CHECK(close(sbar.s.w[var], contracted, std::abs(contracted)));
      }
      auto q = [&] { return weighted_source(res, t, cell, lc); };
      CHECK(close(sbar.volume, central(cell.volume, 1e-9, q), std::abs(sbar.volume)));
      for (int i = 0; i < 3; ++i)
        CHECK(close(sbar.centroid[i], central(cell.centroid[i], 1e-7, q), 0.0));
      CAPTURE(cell.wall_distance, sbar.wall_distance);
      CHECK(close(sbar.wall_distance,
                  central(cell.wall_distance, 1e-7 * std::max(cell.wall_distance, 1e-3), q),
                  std::abs(sbar.wall_distance)));
      CHECK(close(sbar.nu, central(res.parameters().nu, 1e-5 * res.parameters().nu, q),
                  std::abs(sbar.nu)));
      parameter_bar[registry.viscosity()] += sbar.nu;
    }

  // the parameters: differences of Phi = sum lambda . M + sum lambda_c . Q + sum r omega at the
  // same cell states, the boundary data evaluated anew
  auto total = [&]() {
    REQUIRE(res.boundary_data(discretization::kSteady) == 0);
    double s = 0;
    for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
      const CellState<double> L = state.cell(m.face_left[f]);
      CellState<double> R{};
      const FaceGeometry<double> g = res.face_geometry(f);
      const PetscInt r = m.face_right[f];
      if (r >= 0) R = state.cell(r);
      const FaceView face{f, &L, r >= 0 ? &R : nullptr, &g};
      s += weighted_flux(res, t, face, &lambda[f * nv]);
      if (rotation && m.face_patch[f] >= 0) s += rot[f] * res.boundary_conditions().rotation(f);
    }
    if (term.has_source())
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        const CellState<double> cs = state.cell(c);
        s += weighted_source(res, t, res.cell_view(c, cs), &lambda_c[c * nv]);
      }
    return s;
  };
  REQUIRE(registry.size() > 1);
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const std::string &name = registry.spec(i).name;
    const double a = registry.value(res, i, discretization::kSteady);
    const double h = step_of(a);
    REQUIRE(registry.set(res, name, a + h) == 0);
    const double Jp = total();
    REQUIRE(registry.set(res, name, a - h) == 0);
    const double Jm = total();
    REQUIRE(registry.set(res, name, a) == 0);
    const double fd = (Jp - Jm) / (2 * h);
    CAPTURE(name, a, parameter_bar[i], fd);
    CHECK(close(parameter_bar[i], fd, std::abs(fd)));
  }
  REQUIRE(res.boundary_data(discretization::kSteady) == 0);
}

/// A smooth state with O(1) variation in every unknown (a function of the cell centroid).
inline void set_term_state(const discretization::FlowResidual &res, Vec w) {
  PetscScalar *a;
  REQUIRE(VecGetArray(w, &a) == 0);
  const int nv = res.nv();
  for (PetscInt c = 0; c < res.mesh().n_owned_cells; ++c) {
    const Vec3<double> &x = res.geometry().cell_centroid[c];
    for (int k = 0; k < nv; ++k)
      a[c * nv + k] =
          0.4 * std::sin(1.3 * (k + 1) * x[0] + 0.7 * x[1] - 0.5 * x[2] + k) + (k == 1 ? 1.0 : 0.2);
  }
  REQUIRE(VecRestoreArray(w, &a) == 0);
}

} // namespace karman::test
