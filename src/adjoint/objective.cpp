// Objectives and their explicit partial derivatives (see include/karman/adjoint/objective.hpp).
#include "karman/adjoint/objective.hpp"

#include "karman/core/numeric_table.hpp"
#include "karman/core/parallel.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <cmath>
#include <sstream>

namespace karman::adjoint {

using discretization::FaceKind;
using discretization::FlowResidual;
using discretization::LocalState;

namespace {

// Area-averaged face pressure of a patch: sum p_f A_f and sum A_f over owned faces.
void patch_pressure_sums(const FlowResidual &res, const LocalState &state, int patch, double *pA,
                         double *A) {
  const auto &bcs = res.boundary_conditions();
  for (PetscInt f : res.mesh().boundary_faces(patch)) {
    const physics::FaceGeometry<double> g = res.face_geometry(f);
    const physics::CellState<double> L = state.cell(res.mesh().face_left[f]);
    double pf = L.w[0] + L.g[0][0] * (g.xf[0] - g.xL[0]) + L.g[0][1] * (g.xf[1] - g.xL[1]) +
                L.g[0][2] * (g.xf[2] - g.xL[2]);
    if (bcs.kind(f) == FaceKind::PressureOutlet) pf = bcs.pressure(f);
    const double a = norm(g.S);
    *pA += pf * a;
    *A += a;
  }
}

} // namespace

PetscErrorCode Objective::parse_term(const FlowResidual &res, const config::CaseConfig &cfg,
                                     const config::Section &sec, Term *t) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const char *file = cfg.file().c_str();
  const std::string where = sec.label();
  t->type = sec.text("type");
  t->weight = sec.real("weight");
  if (t->type == "drag" || t->type == "lift" || t->type == "force" || t->type == "moment") {
    for (const auto &name : sec.names("walls")) {
      const int p = m.patch_index(name);
      PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.walls: no boundary named '%s'", file,
                 where.c_str(), name.c_str());
      t->walls.push_back(p);
    }
    if (t->walls.empty()) t->walls = res.boundary_conditions().wall_patches();
    PetscCheck(!t->walls.empty(), m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s: no walls to measure the force on", file, where.c_str());
    for (int p : t->walls) {
      const physics::BoundaryType type = res.boundary_conditions().patch(p).type();
      PetscCheck(physics::is_wall(type), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.walls: '%s' is a %s boundary; forces are measured on wall or "
                 "blowing-suction boundaries",
                 file, where.c_str(), m.patch_names[p].c_str(), physics::boundary_type_name(type));
    }
    const char *key = t->type == "drag"   ? "drag_direction"
                      : t->type == "lift" ? "lift_direction"
                                          : "direction";
    t->direction = Vec3<double>::from(sec.vector(key));
    if (t->type == "moment") t->direction = Vec3<double>(0, 0, 1);
    const double n = norm(t->direction);
    PetscCheck(n > 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.%s must not be zero", file,
               where.c_str(), key);
    t->direction = (1.0 / n) * t->direction;
  } else if (t->type == "pressure-difference" || t->type == "probe-match") {
    const bool diff = t->type == "pressure-difference";
    for (const auto &p : sec.points(diff ? "points" : "probes"))
      t->points.push_back(Vec3<double>::from(p));
    PetscCheck(!diff || t->points.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.points: pressure-difference needs two points, got %zu", file, where.c_str(),
               t->points.size());
    PetscCheck(diff || !t->points.empty(), m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.probes: probe-match needs probes", file, where.c_str());
    t->probes = std::make_shared<solver::PointProbes>();
    PetscCall(t->probes->setup(res, t->points,
                               cfg.file() + ": " + where + (diff ? ".points" : ".probes")));
    const std::string obs_file = diff ? std::string() : sec.text("observations_file");
    if (!obs_file.empty()) {
      // rows: t, then nv values per probe
      const std::string path = cfg.resolve_path(obs_file);
      std::string text;
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
      if (rank == 0) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        text = in.good() || !ss.str().empty() ? ss.str() : std::string();
      }
      PetscCall(broadcast_string(m.comm, &text));
      PetscCheck(!text.empty(), m.comm, PETSC_ERR_FILE_OPEN,
                 "%s: %s.observations_file '%s' not found or empty", file, where.c_str(),
                 path.c_str());
      const std::size_t width = 1 + t->points.size() * res.nv(); // t, then nv values per probe
      std::vector<std::vector<double>> rows;
      const std::string problem = parse_numeric_rows(text, width, &rows);
      PetscCheck(problem.empty(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observations_file %s: %s (t and %d values per probe)", file, where.c_str(),
                 path.c_str(), problem.c_str(), res.nv());
      for (const auto &row : rows) {
        PetscCheck(t->obs_times.empty() || row[0] > t->obs_times.back(), m.comm,
                   PETSC_ERR_USER_INPUT,
                   "%s: %s.observations_file %s: times must increase (%g after %g)", file,
                   where.c_str(), path.c_str(), row[0], t->obs_times.back());
        t->obs_times.push_back(row[0]);
        t->obs_rows.emplace_back(row.begin() + 1, row.end());
      }
      PetscCheck(!t->obs_times.empty(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observations_file %s holds no observations", file, where.c_str(),
                 path.c_str());
      t->observed = t->obs_rows.front();
    }
    if (!diff) {
      t->component_weights = sec.reals("component_weights");
      PetscCheck(static_cast<int>(t->component_weights.size()) >= res.nv(), m.comm,
                 PETSC_ERR_USER_INPUT, "%s: %s.component_weights needs %d values", file,
                 where.c_str(), res.nv());
    }
    if (!diff && obs_file.empty()) {
      const auto obs = sec.table("observed");
      PetscCheck(obs.size() == t->points.size(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observed: one row per probe expected (%zu probes, %zu rows)", file,
                 where.c_str(), t->points.size(), obs.size());
      for (const auto &row : obs) {
        PetscCheck(static_cast<int>(row.size()) == res.nv(), m.comm, PETSC_ERR_USER_INPUT,
                   "%s: %s.observed: each row needs %d values (p and the velocity components)",
                   file, where.c_str(), res.nv());
        t->observed.insert(t->observed.end(), row.begin(), row.end());
      }
    }
  } else if (t->type == "pressure-drop") {
    const auto names = sec.names("patches");
    PetscCheck(names.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.patches: pressure-drop needs two boundaries", file, where.c_str());
    t->patch_a = m.patch_index(names[0]);
    t->patch_b = m.patch_index(names[1]);
    PetscCheck(t->patch_a >= 0 && t->patch_b >= 0, m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.patches: no boundary named '%s'", file, where.c_str(),
               (t->patch_a < 0 ? names[0] : names[1]).c_str());
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Objective::setup(const FlowResidual &res, const config::CaseConfig &cfg) {
  return setup(res, cfg, cfg.section("objective"));
}

PetscErrorCode Objective::setup(const FlowResidual &res, const config::CaseConfig &cfg,
                                const config::Section &obj) {
  PetscFunctionBeginUser;
  scaling_ = solver::force_scaling(cfg, res.mesh().dim);
  terms_.clear();
  std::vector<config::Section> sections;
  if (obj.text("type") == "sum") {
    sections = obj.terms("terms");
    PetscCheck(!sections.empty(), res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: %s.type sum needs %s.terms", cfg.file().c_str(), obj.label().c_str(),
               obj.label().c_str());
  } else {
    sections.push_back(obj);
  }
  std::ostringstream d;
  for (const auto &sec : sections) {
    PetscCheck(sec.text("type") != "sum", res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: %s: terms cannot be sums", cfg.file().c_str(), sec.label().c_str());
    Term t;
    PetscCall(parse_term(res, cfg, sec, &t));
    d << (terms_.empty() ? "" : " + ") << t.weight << " * " << t.type;
    terms_.push_back(std::move(t));
  }
  const double w = obj.text("type") == "sum" ? obj.real("weight") : 1.0;
  for (auto &t : terms_) t.weight *= w;
  description_ = d.str();
  PetscFunctionReturn(0);
}

void Objective::set_time(double time) {
  for (Term &t : terms_) {
    if (t.obs_times.empty()) continue;
    const auto &ts = t.obs_times;
    if (time <= ts.front())
      t.observed = t.obs_rows.front();
    else if (time >= ts.back())
      t.observed = t.obs_rows.back();
    else {
      const std::size_t j = std::upper_bound(ts.begin(), ts.end(), time) - ts.begin();
      const double s = (time - ts[j - 1]) / (ts[j] - ts[j - 1]);
      for (std::size_t k = 0; k < t.observed.size(); ++k)
        t.observed[k] = (1 - s) * t.obs_rows[j - 1][k] + s * t.obs_rows[j][k];
    }
  }
}

PetscErrorCode Objective::value(const FlowResidual &res, const LocalState &state, double *J) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  *J = 0;
  for (const Term &t : terms_) {
    if (!t.walls.empty()) {
      solver::ForceReport fr;
      PetscCall(solver::wall_force(res, state, t.walls, scaling_.moment_center, &fr));
      if (t.type == "moment")
        *J +=
            t.weight * dot(fr.moment, t.direction) / (scaling_.q * scaling_.area * scaling_.length);
      else
        *J += t.weight * dot(fr.total(), t.direction) / (scaling_.q * scaling_.area);
    } else if (t.type == "pressure-difference" || t.type == "probe-match") {
      std::vector<double> v;
      PetscCall(t.probes->evaluate(res, state, &v));
      if (t.type == "pressure-difference")
        *J += t.weight * (v[0] - v[res.nv()]);
      else
        for (std::size_t i = 0; i < v.size(); ++i) {
          const double diff = v[i] - t.observed[i];
          *J += t.weight * t.component_weights[i % res.nv()] * diff * diff;
        }
    } else if (t.type == "pressure-drop") {
      double s[4] = {0, 0, 0, 0};
      patch_pressure_sums(res, state, t.patch_a, &s[0], &s[1]);
      patch_pressure_sums(res, state, t.patch_b, &s[2], &s[3]);
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_DOUBLE, MPI_SUM, m.comm));
      *J += t.weight * (s[0] / s[1] - s[2] / s[3]);
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Objective::reverse(const FlowResidual &res, const LocalState &state,
                                  Sensitivities &s, double scale) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &bcs = res.boundary_conditions();
  for (Term t : terms_) {
    t.weight *= scale;
    if (!t.walls.empty()) {
      // force on face f: F_f = p_f S_f - visc_f + T_f (T_f: rotating walls,
      // physics::rotating_wall_traction); J = c e . sum F_f  or  c a . sum (x_f - x_0) x F_f
      const bool moment = t.type == "moment";
      const double c = t.weight / (scaling_.q * scaling_.area * (moment ? scaling_.length : 1.0));
      for (int p : t.walls)
        for (PetscInt f : m.boundary_faces(p)) {
          const physics::FaceGeometry<double> g = res.face_geometry(f);
          const Vec3<double> r = g.xf - scaling_.moment_center;
          // dJ/dF_f
          const Vec3<double> Fb = moment ? c * cross(t.direction, r) : c * t.direction;
          double pf;
          Vec3<double> visc;
          physics::dirichlet_face_stress(m.dim, state.cell(m.face_left[f]), g, res.parameters(),
                                         bcs.velocity(f), pf, visc);
          const Vec3<double> T =
              physics::rotating_wall_traction(res.parameters(), bcs.rotation(f), g.S);
          s.geom.face_area[f] += pf * Fb;
          s.add_wall_stress(res, state, f, dot(Fb, g.S), -Fb);
          s.add_wall_rotation(res, f, Fb);
          if (moment) s.geom.face_centroid[f] += c * cross(pf * g.S - visc + T, t.direction);
        }
    } else if (t.type == "pressure-difference" || t.type == "probe-match") {
      std::vector<double> v;
      PetscCall(t.probes->evaluate(res, state, &v));
      const int nv = res.nv();
      for (std::size_t i = 0; i < t.points.size(); ++i) {
        const PetscInt cell = t.probes->cell(i);
        if (cell < 0) continue;
        for (int k = 0; k < nv; ++k) {
          double bar = 0;
          if (t.type == "pressure-difference")
            bar = k == 0 ? (i == 0 ? t.weight : -t.weight) : 0.0;
          else
            bar = 2 * t.weight * t.component_weights[k] * (v[i * nv + k] - t.observed[i * nv + k]);
          if (bar != 0) s.add_point_value(res, state, cell, k, t.points[i], bar);
        }
      }
    } else if (t.type == "pressure-drop") {
      double sums[4] = {0, 0, 0, 0};
      patch_pressure_sums(res, state, t.patch_a, &sums[0], &sums[1]);
      patch_pressure_sums(res, state, t.patch_b, &sums[2], &sums[3]);
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, m.comm));
      for (int side = 0; side < 2; ++side) {
        const int patch = side == 0 ? t.patch_a : t.patch_b;
        const double sign = side == 0 ? t.weight : -t.weight;
        const double pA = sums[2 * side], A = sums[2 * side + 1], avg = pA / A;
        for (PetscInt f : m.boundary_faces(patch)) {
          const physics::FaceGeometry<double> g = res.face_geometry(f);
          const PetscInt L = m.face_left[f];
          const physics::CellState<double> st = state.cell(L);
          const Vec3<double> d = g.xf - g.xL;
          double pf = st.w[0] + st.g[0][0] * d[0] + st.g[0][1] * d[1] + st.g[0][2] * d[2];
          const double a = norm(g.S);
          const double pfb = sign * a / A; // d avg / d p_f
          if (bcs.kind(f) == FaceKind::PressureOutlet) {
            pf = bcs.pressure(f);
            s.bbar[f * res.nv()] += pfb; // the pressure (unknown 0) prescribed there
          } else {
            s.wbar[L * res.nv()] += pfb;
            for (int i = 0; i < 3; ++i) s.Gbar[(L * res.nv()) * 3 + i] += pfb * d[i];
            const Vec3<double> db = pfb * Vec3<double>(st.g[0][0], st.g[0][1], st.g[0][2]);
            s.geom.face_centroid[f] += db;
            s.geom.cell_centroid[L] -= db;
          }
          // d avg / d A_f = (p_f - avg) / A
          s.geom.face_area[f] += (sign * (pf - avg) / A / a) * g.S;
        }
      }
    }
  }
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
