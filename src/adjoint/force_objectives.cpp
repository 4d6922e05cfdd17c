// Force objectives (objective_terms.hpp, adjoint/README.md eq. 2): on the walls `walls` (every
// wall-type boundary if empty),
//   drag / lift / force   J = e . F / (q S_ref),  F = sum_f (p_f S_f - visc_f + T_f)
//   moment                J = e_z . sum_f (x_f - x_0) x F_f / (q S_ref L_ref)
// with e the unit drag_direction, lift_direction or direction turned by the far field's angle of
// attack alpha (e = R(alpha) e_0, physics::turned: wind axes; dJ/dalpha = e' . F / (q S_ref) goes
// to the parameter boundaries.NAME.angle_of_attack), T_f the rotating-wall traction
// (physics::rotating_wall_traction), x_0 = reference.moment_center.
#include "karman/adjoint/objective_terms.hpp"
#include "karman/config/section_options.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/physics/boundary_kernels.hpp"
#include "karman/solver/forces.hpp"
#include "karman/solver/solver_options.hpp"

namespace karman::adjoint {
namespace {

using discretization::FlowResidual;
using discretization::LocalState;

class ForceTerm : public ObjectiveTerm {
public:
  /// alpha_parameter: the registry index of the angle of attack that turns `direction` (-1: the
  /// direction is fixed: a moment, or no far field).
  ForceTerm(std::vector<int> walls, Vec3<double> direction, bool moment,
            solver::ForceScaling scaling, int alpha_parameter)
      : walls_(std::move(walls)), direction_(direction), moment_(moment), scaling_(scaling),
        alpha_parameter_(alpha_parameter) {}

  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    solver::ForceReport fr;
    PetscCall(solver::wall_force(res, state, walls_, scaling_.moment_center, &fr));
    if (moment_)
      *J += weight * dot(fr.moment, direction_) / (scaling_.q * scaling_.area * scaling_.length);
    else
      *J += weight * dot(fr.total(), direction(res)) / (scaling_.q * scaling_.area);
    PetscFunctionReturn(0);
  }

  // force on face f: F_f = p_f S_f - visc_f + T_f; J = c e . sum F_f or c a . sum (x_f - x_0) x F_f
  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    const auto &bcs = res.boundary_conditions();
    const double c = weight / (scaling_.q * scaling_.area * (moment_ ? scaling_.length : 1.0));
    const Vec3<double> e = moment_ ? direction_ : direction(res);
    Vec3<double> F; // this rank's share of the force (the angle's adjoint, summed over ranks)
    for (int p : walls_)
      for (PetscInt f : m.boundary_faces(p)) {
        const physics::FaceGeometry<double> g = res.face_geometry(f);
        const Vec3<double> r = g.xf - scaling_.moment_center;
        // dJ/dF_f
        const Vec3<double> Fb = moment_ ? c * cross(e, r) : c * e;
        double pf;
        Vec3<double> visc;
        physics::dirichlet_face_stress(m.dim, state.cell(m.face_left[f]), g, res.parameters(),
                                       bcs.velocity(f), pf, visc);
        const Vec3<double> T =
            physics::rotating_wall_traction(res.parameters(), bcs.rotation(f), g.S);
        s.geom.face_area[f] += pf * Fb;
        s.add_wall_stress(res, state, f, dot(Fb, g.S), -Fb);
        s.add_wall_rotation(res, f, Fb);
        if (moment_) s.geom.face_centroid[f] += c * cross(pf * g.S - visc + T, e);
        F += pf * g.S - visc + T;
      }
    if (alpha_parameter_ >= 0)
      s.parameters[alpha_parameter_] +=
          c *
          dot(F, physics::turned_dalpha(direction_, res.boundary_conditions().angle_of_attack()));
    PetscFunctionReturn(0);
  }

private:
  Vec3<double> direction(const FlowResidual &res) const {
    return physics::turned(direction_, res.boundary_conditions().angle_of_attack());
  }
  std::vector<int> walls_;
  Vec3<double> direction_; ///< at zero angle of attack
  bool moment_;
  solver::ForceScaling scaling_;
  int alpha_parameter_;
};

// The walls of `sec` (checked: boundaries of wall type) and the unit direction `given` (named
// `key` in messages) of a force term.
PetscErrorCode create_force(const FlowResidual &res, const config::CaseConfig &cfg,
                            const config::Section &sec, const Vec3<double> &given, const char *key,
                            bool moment, std::unique_ptr<ObjectiveTerm> *term) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const char *file = cfg.file().c_str();
  const std::string where = sec.label();
  std::vector<int> walls;
  PetscCall(objective_walls(res, cfg, sec, &walls));
  if (walls.empty()) walls = res.boundary_conditions().wall_patches();
  PetscCheck(!walls.empty(), m.comm, PETSC_ERR_USER_INPUT,
             "%s: %s: no walls to measure the force on", file, where.c_str());
  for (int p : walls) {
    const discretization::PatchCondition &pc = res.boundary_conditions().patch(p);
    PetscCheck(pc.is_wall(), m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.walls: '%s' is a %s boundary; forces are measured on wall or "
               "blowing-suction boundaries",
               file, where.c_str(), m.patch_names[p].c_str(), pc.type_name().c_str());
  }
  Vec3<double> e = moment ? Vec3<double>(0, 0, 1) : given;
  const double n = norm(e);
  PetscCheck(n > 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.%s must not be zero", file, where.c_str(),
             key);
  const int stream = res.boundary_conditions().stream_patch();
  const int alpha = moment || stream < 0
                        ? -1
                        : discretization::ParameterRegistry(res).find(
                              "boundaries." + m.patch_names[stream] + ".angle_of_attack");
  *term =
      std::make_unique<ForceTerm>(walls, (1.0 / n) * e, moment, solver::force_scaling(res), alpha);
  PetscFunctionReturn(0);
}

struct ForceDirection {
  Vec3<double> direction;
};

const config::SectionOptions<ForceDirection> &force_direction() {
  static const auto options =
      config::SectionOptions<ForceDirection>("objective", "")
          .key(config::key::typed("direction", config::KeyType::RealVector, "[1, 0, 0]",
                                  "direction of a `force` objective"),
               &ForceDirection::direction);
  return options;
}

} // namespace

std::vector<ObjectiveType> force_objective_types() {
  std::vector<ObjectiveType> t;
  t.push_back({"drag",
               "force coefficient along drag_direction on `walls`",
               {},
               false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 return create_force(res, cfg, sec, solver::force_options().get(sec).drag_direction,
                                     "drag_direction", false, term);
               }});
  t.push_back({"lift",
               "force coefficient along lift_direction on `walls`",
               {},
               false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 return create_force(res, cfg, sec, solver::force_options().get(sec).lift_direction,
                                     "lift_direction", false, term);
               }});
  t.push_back({"force", "force coefficient along `direction` on `walls`",
               force_direction().spec().keys, false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 return create_force(res, cfg, sec, force_direction().get(sec).direction,
                                     "direction", false, term);
               }});
  t.push_back({"moment",
               "moment coefficient about reference.moment_center (axis e_z) on `walls`",
               {},
               false,
               [](const FlowResidual &res, const config::CaseConfig &cfg,
                  const config::Section &sec, std::unique_ptr<ObjectiveTerm> *term) {
                 return create_force(res, cfg, sec, Vec3<double>(0, 0, 1), "direction", true, term);
               }});
  return t;
}

} // namespace karman::adjoint
