// Objectives of a passive scalar (objective_terms.hpp; discretization/scalar_term.hpp):
//   nusselt   Nu = L / (dphi A) sum_f D_f,   A = sum_f |S_f|   over the faces of `walls`
// the mean Nusselt number of walls at prescribed phi (a heated body at constant temperature):
// D_f = grad(phi) . S_f at the wall (physics::scalar_wall_gradient, the diffusive flux of the
// scalar's residual, so Nu is the wall's discrete heat flux), L = reference.length and
// dphi = scalar_difference (wall minus free-stream value) make it nondimensional:
// Nu = h L / k with h = q_w / dphi.  S_f points out of the fluid, so a wall hotter than the fluid
// (phi falling away from it) has Nu > 0 for dphi > 0.
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

PetscErrorCode create_nusselt(const FlowResidual &res, const config::CaseConfig &cfg,
                              const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const char *file = cfg.file().c_str();
  const std::string where = sec.label();
  const discretization::ScalarTerm *scalar = nullptr;
  for (const auto &t : res.terms())
    if (auto *st = dynamic_cast<const discretization::ScalarTerm *>(t.get())) scalar = st;
  PetscCheck(scalar, m.comm, PETSC_ERR_USER_INPUT,
             "%s: %s: type nusselt needs a scalar, and this case solves none (add a 'scalar:' "
             "section with its diffusivity and boundaries)",
             file, where.c_str());
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

} // namespace

std::vector<ObjectiveType> scalar_objective_types() {
  return {{"nusselt",
           "mean Nusselt number L / (dphi A) sum grad(phi) . S of `walls` (prescribed scalar)",
           nusselt_options().spec().keys, false, create_nusselt}};
}

} // namespace karman::adjoint
