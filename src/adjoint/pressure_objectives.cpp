// Pressure objectives (objective_terms.hpp, adjoint/README.md eq. 2):
//   pressure-difference   J = p(x_1) - p(x_2)    (the cells' linear reconstructions at `points`)
//   pressure-drop         J = <p>_A - <p>_B      (area averages of the face pressures of the
//                                                 boundaries `patches`: p_b on pressure outlets,
//                                                 the reconstruction p_L + G_L . d elsewhere)
#include "karman/adjoint/objective_terms.hpp"
#include "karman/config/section_options.hpp"
#include "karman/core/parallel.hpp"
#include "karman/solver/forces.hpp"
#include "karman/solver/solver_options.hpp"

namespace karman::adjoint {
namespace {

using discretization::FaceKind;
using discretization::FlowResidual;
using discretization::LocalState;

int pressure_unknown(const FlowResidual &res) {
  const physics::EquationSet &eq = res.equations();
  return eq.offset(eq.find("pressure"));
}

class PressureDifference : public ObjectiveTerm {
public:
  explicit PressureDifference(std::vector<Vec3<double>> points) : points_(std::move(points)) {}
  PetscErrorCode setup(const FlowResidual &res, const std::string &what) {
    return probes_.setup(res, points_, what);
  }

  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    std::vector<double> v;
    PetscCall(probes_.evaluate(res, state, &v));
    const int p = pressure_unknown(res);
    *J += weight * (v[p] - v[res.nv() + p]);
    PetscFunctionReturn(0);
  }

  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    const int p = pressure_unknown(res);
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const PetscInt cell = probes_.cell(i);
      if (cell < 0) continue;
      const double bar = i == 0 ? weight : -weight;
      if (bar != 0) s.add_point_value(res, state, cell, p, points_[i], bar);
    }
    PetscFunctionReturn(0);
  }

private:
  std::vector<Vec3<double>> points_;
  solver::PointProbes probes_;
};

// Area-averaged face pressure of a patch: sum p_f A_f and sum A_f over owned faces.
void patch_pressure_sums(const FlowResidual &res, const LocalState &state, int patch, double *pA,
                         double *A) {
  const auto &bcs = res.boundary_conditions();
  const int p = pressure_unknown(res);
  for (PetscInt f : res.mesh().boundary_faces(patch)) {
    const physics::FaceGeometry<double> g = res.face_geometry(f);
    const physics::CellState<double> L = state.cell(res.mesh().face_left[f]);
    double pf = L.w[p] + L.g[p][0] * (g.xf[0] - g.xL[0]) + L.g[p][1] * (g.xf[1] - g.xL[1]) +
                L.g[p][2] * (g.xf[2] - g.xL[2]);
    if (bcs.kind(f) == FaceKind::PressureOutlet) pf = bcs.pressure(f);
    const double a = norm(g.S);
    *pA += pf * a;
    *A += a;
  }
}

class PressureDrop : public ObjectiveTerm {
public:
  PressureDrop(int a, int b) : patch_{a, b} {}

  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    double s[4] = {0, 0, 0, 0};
    patch_pressure_sums(res, state, patch_[0], &s[0], &s[1]);
    patch_pressure_sums(res, state, patch_[1], &s[2], &s[3]);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_DOUBLE, MPI_SUM, res.mesh().comm));
    *J += weight * (s[0] / s[1] - s[2] / s[3]);
    PetscFunctionReturn(0);
  }

  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    const auto &bcs = res.boundary_conditions();
    const int nv = res.nv(), p0 = pressure_unknown(res);
    double sums[4] = {0, 0, 0, 0};
    patch_pressure_sums(res, state, patch_[0], &sums[0], &sums[1]);
    patch_pressure_sums(res, state, patch_[1], &sums[2], &sums[3]);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, m.comm));
    for (int side = 0; side < 2; ++side) {
      const double sign = side == 0 ? weight : -weight;
      const double pA = sums[2 * side], A = sums[2 * side + 1], avg = pA / A;
      for (PetscInt f : m.boundary_faces(patch_[side])) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        const PetscInt L = m.face_left[f];
        const physics::CellState<double> st = state.cell(L);
        const Vec3<double> d = g.xf - g.xL;
        double pf = st.w[p0] + st.g[p0][0] * d[0] + st.g[p0][1] * d[1] + st.g[p0][2] * d[2];
        const double a = norm(g.S);
        const double pfb = sign * a / A; // d avg / d p_f
        if (bcs.kind(f) == FaceKind::PressureOutlet) {
          pf = bcs.pressure(f);
          s.bbar[f * nv + p0] += pfb; // the pressure prescribed there
        } else
          s.add_face_value(res, state, f, p0, pfb);
        // d avg / d A_f = (p_f - avg) / A
        s.geom.face_area[f] += (sign * (pf - avg) / A / a) * g.S;
      }
    }
    PetscFunctionReturn(0);
  }

private:
  int patch_[2];
};

struct DropOptions {
  std::vector<std::string> patches;
};

const config::SectionOptions<DropOptions> &drop_options() {
  static const auto options =
      config::SectionOptions<DropOptions>("objective", "")
          .key(config::key::typed("patches", config::KeyType::NameList, "[]",
                                  "the boundaries of pressure-drop (two) "
                                  "and scalar-variance"),
               &DropOptions::patches);
  return options;
}

} // namespace

std::vector<ObjectiveType> pressure_objective_types() {
  std::vector<ObjectiveType> t;
  t.push_back({"pressure-difference",
               "p(points[0]) - p(points[1])",
               {},
               false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 PetscFunctionBeginUser;
                 const std::vector<Vec3<double>> points = solver::force_options().get(sec).points;
                 PetscCheck(points.size() == 2, res.mesh().comm, PETSC_ERR_USER_INPUT,
                            "%s: %s.points: pressure-difference needs two points, got %zu",
                            cfg.file().c_str(), sec.label().c_str(), points.size());
                 auto pd = std::make_unique<PressureDifference>(points);
                 PetscCall(pd->setup(res, cfg.file() + ": " + sec.label() + ".points"));
                 *term = std::move(pd);
                 PetscFunctionReturn(0);
               }});
  t.push_back({"pressure-drop", "area-averaged pressure of patches[0] minus patches[1]",
               drop_options().spec().keys, false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 PetscFunctionBeginUser;
                 const mesh::Mesh &m = res.mesh();
                 const auto names = drop_options().get(sec).patches;
                 PetscCheck(names.size() == 2, m.comm, PETSC_ERR_USER_INPUT,
                            "%s: %s.patches: pressure-drop needs two boundaries",
                            cfg.file().c_str(), sec.label().c_str());
                 const int a = m.patch_index(names[0]), b = m.patch_index(names[1]);
                 PetscCheck(a >= 0 && b >= 0, m.comm, PETSC_ERR_USER_INPUT,
                            "%s: %s.patches: no boundary named '%s'", cfg.file().c_str(),
                            sec.label().c_str(), (a < 0 ? names[0] : names[1]).c_str());
                 *term = std::make_unique<PressureDrop>(a, b);
                 PetscFunctionReturn(0);
               }});
  return t;
}

} // namespace karman::adjoint
