// Objectives of a passive scalar (objective_terms.hpp; discretization/scalar_term.hpp):
//   nusselt   Nu = L / (dphi A) sum_f D_f,   A = sum_f |S_f|   over the faces of `walls`
// the mean Nusselt number of walls at prescribed phi (a heated body at constant temperature):
// D_f = grad(phi) . S_f at the wall (physics::scalar_wall_gradient, the diffusive flux of the
// scalar's residual, so Nu is the wall's discrete heat flux), L = reference.length and
// dphi = scalar_difference (wall minus free-stream value) make it nondimensional:
// Nu = h L / k with h = q_w / dphi.  S_f points out of the fluid, so a wall hotter than the fluid
// (phi falling away from it) has Nu > 0 for dphi > 0.
//   scalar-variance   J = (1/A) sum_f A_f (phi_f - <phi>)^2 = S2/A - (S1/A)^2 over the faces of
//                     `patches`, S1 = sum A_f phi_f, S2 = sum A_f phi_f^2, A = sum A_f
// the outlet's (un)mixedness: the area-weighted variance of the scalar's face values
// phi_f = phi_L + G_L . (x_f - x_L) (the value the outflow carries out), 0 when fully mixed.
#include "karman/adjoint/objective_terms.hpp"
#include "karman/config/section_options.hpp"
#include "karman/discretization/scalar_term.hpp"
#include "karman/physics/scalar_transport.hpp"

namespace karman::adjoint {
namespace {

using discretization::FlowResidual;
using discretization::LocalState;

struct NusseltOptions {
  double difference = 1;
};

const config::SectionOptions<NusseltOptions> &nusselt_options() {
  static const auto options =
      config::SectionOptions<NusseltOptions>("objective", "")
          .key(config::key::real("scalar_difference", "1.0",
                                 "nusselt: the wall's value minus the free stream's (dphi)"),
               &NusseltOptions::difference);
  return options;
}

class Nusselt : public ObjectiveTerm {
public:
  Nusselt(std::vector<int> walls, int unknown, double scale)
      : walls_(std::move(walls)), s_(unknown), scale_(scale) {}

  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    double sums[2];
    PetscCall(totals(res, state, sums));
    *J += weight * scale_ * sums[0] / sums[1];
    PetscFunctionReturn(0);
  }

  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    double sums[2];
    PetscCall(totals(res, state, sums));
    const double D_bar = weight * scale_ / sums[1];
    const double A_bar = -weight * scale_ * sums[0] / (sums[1] * sums[1]);
    const mesh::Mesh &m = res.mesh();
    const int nv = res.nv();
    for (int p : walls_)
      for (PetscInt f : m.boundary_faces(p)) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        physics::FluxBar b;
        physics::ScalarFluxBar sb;
        physics::scalar_wall_gradient_reverse(s_, state.cell(m.face_left[f]), g,
                                              res.boundary_value(f, s_), D_bar, b, sb);
        b.S += (A_bar / norm(g.S)) * g.S;
        s.add_face_bar(res, f, b);
        s.bbar[f * nv + s_] += sb.boundary;
      }
    PetscFunctionReturn(0);
  }

private:
  // sum_f D_f and sum_f |S_f| over the walls (all ranks)
  PetscErrorCode totals(const FlowResidual &res, const LocalState &state, double *sums) const {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    sums[0] = sums[1] = 0;
    for (int p : walls_)
      for (PetscInt f : m.boundary_faces(p)) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        sums[0] += physics::scalar_wall_gradient(s_, state.cell(m.face_left[f]), g,
                                                 res.boundary_value(f, s_));
        sums[1] += norm(g.S);
      }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m.comm));
    PetscFunctionReturn(0);
  }

  std::vector<int> walls_;
  int s_;
  double scale_;
};

// The case's scalar term; a case without one is an error naming the objective's type.
PetscErrorCode require_scalar(const FlowResidual &res, const config::CaseConfig &cfg,
                              const config::Section &sec, const char *type,
                              const discretization::ScalarTerm **scalar = nullptr) {
  PetscFunctionBeginUser;
  const discretization::ScalarTerm *found = nullptr;
  for (const auto &t : res.terms())
    if (auto *st = dynamic_cast<const discretization::ScalarTerm *>(t.get())) found = st;
  PetscCheck(found, res.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: %s: type %s needs a scalar, and this case solves none (add a 'scalar:' "
             "section with its diffusivity and boundaries)",
             cfg.file().c_str(), sec.label().c_str(), type);
  if (scalar) *scalar = found;
  PetscFunctionReturn(0);
}

PetscErrorCode create_nusselt(const FlowResidual &res, const config::CaseConfig &cfg,
                              const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const char *file = cfg.file().c_str();
  const std::string where = sec.label();
  const discretization::ScalarTerm *scalar = nullptr;
  PetscCall(require_scalar(res, cfg, sec, "nusselt", &scalar));
  std::vector<int> walls;
  PetscCall(objective_walls(res, cfg, sec, &walls));
  for (int p : walls) {
    const char *name = m.patch_names[p].c_str();
    PetscCheck(scalar->kind(p) == discretization::ScalarBoundary::Value, m.comm,
               PETSC_ERR_USER_INPUT,
               "%s: %s.walls: '%s' has no prescribed scalar value (scalar.boundaries.%s must be "
               "of type value for a Nusselt number)",
               file, where.c_str(), name, name);
  }
  PetscCheck(!walls.empty(), m.comm, PETSC_ERR_USER_INPUT,
             "%s: %s.walls: name the heated walls of the Nusselt number", file, where.c_str());
  const double dphi = nusselt_options().get(sec).difference;
  PetscCheck(dphi != 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.scalar_difference must not be zero",
             file, where.c_str());
  const int unknown = res.equations().offset(res.equations().find("scalar"));
  *term = std::make_unique<Nusselt>(walls, unknown, res.reference().length / dphi);
  PetscFunctionReturn(0);
}

class ScalarVariance : public ObjectiveTerm {
public:
  ScalarVariance(std::vector<int> patches, int unknown)
      : patches_(std::move(patches)), s_(unknown) {}

  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    double sums[3];
    PetscCall(totals(res, state, sums));
    const double mean = sums[0] / sums[2];
    *J += weight * (sums[1] / sums[2] - mean * mean);
    PetscFunctionReturn(0);
  }

  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    double sums[3];
    PetscCall(totals(res, state, sums));
    const double A = sums[2], mean = sums[0] / A, J = sums[1] / A - mean * mean;
    const mesh::Mesh &m = res.mesh();
    for (int p : patches_)
      for (PetscInt f : m.boundary_faces(p)) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        const double phi = face_value(res, state, f, g), a = norm(g.S);
        // dJ/dphi_f = 2 A_f (phi_f - <phi>) / A,  dJ/dA_f = ((phi_f - <phi>)^2 - J) / A
        const double phi_bar = weight * 2 * a * (phi - mean) / A;
        const double a_bar = weight * ((phi - mean) * (phi - mean) - J) / A;
        s.add_face_value(res, state, f, s_, phi_bar);
        s.geom.face_area[f] += (a_bar / a) * g.S;
      }
    PetscFunctionReturn(0);
  }

private:
  // phi_f = phi_L + G_L . (x_f - x_L) on boundary face f of geometry g
  double face_value(const FlowResidual &res, const LocalState &state, PetscInt f,
                    const physics::FaceGeometry<double> &g) const {
    const physics::CellState<double> c = state.cell(res.mesh().face_left[f]);
    const Vec3<double> d = g.xf - g.xL;
    return c.w[s_] + c.g[s_][0] * d[0] + c.g[s_][1] * d[1] + c.g[s_][2] * d[2];
  }
  // S1, S2 and A over the patches (all ranks)
  PetscErrorCode totals(const FlowResidual &res, const LocalState &state, double *sums) const {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    sums[0] = sums[1] = sums[2] = 0;
    for (int p : patches_)
      for (PetscInt f : m.boundary_faces(p)) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        const double phi = face_value(res, state, f, g), a = norm(g.S);
        sums[0] += a * phi, sums[1] += a * phi * phi, sums[2] += a;
      }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, m.comm));
    PetscFunctionReturn(0);
  }

  std::vector<int> patches_;
  int s_;
};

struct VarianceOptions {
  std::vector<std::string> patches;
};

const config::SectionOptions<VarianceOptions> &variance_options() {
  static const auto options =
      config::SectionOptions<VarianceOptions>("objective", "")
          .key(config::key::typed("patches", config::KeyType::NameList, "[]",
                                  "the boundaries of pressure-drop (two) and scalar-variance"),
               &VarianceOptions::patches);
  return options;
}

PetscErrorCode create_scalar_variance(const FlowResidual &res, const config::CaseConfig &cfg,
                                      const config::Section &sec,
                                      std::unique_ptr<ObjectiveTerm> *term) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const char *file = cfg.file().c_str();
  const std::string where = sec.label();
  PetscCall(require_scalar(res, cfg, sec, "scalar-variance"));
  std::vector<int> patches;
  for (const auto &name : variance_options().get(sec).patches) {
    const int p = m.patch_index(name);
    PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.patches: no boundary named '%s'", file,
               where.c_str(), name.c_str());
    patches.push_back(p);
  }
  PetscCheck(!patches.empty(), m.comm, PETSC_ERR_USER_INPUT,
             "%s: %s.patches: name the boundaries (e.g. the outlet) of the scalar's variance", file,
             where.c_str());
  const int unknown = res.equations().offset(res.equations().find("scalar"));
  *term = std::make_unique<ScalarVariance>(patches, unknown);
  PetscFunctionReturn(0);
}

} // namespace

std::vector<ObjectiveType> scalar_objective_types() {
  return {{"nusselt",
           "mean Nusselt number L / (dphi A) sum grad(phi) . S of `walls` (prescribed scalar)",
           nusselt_options().spec().keys, false, create_nusselt},
          {"scalar-variance",
           "outlet mixedness: area-weighted variance of the scalar over `patches` (0: mixed)",
           variance_options().spec().keys, false, create_scalar_variance}};
}

} // namespace karman::adjoint
