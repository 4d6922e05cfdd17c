// Boundary conditions (see include/karman/discretization/boundary_conditions.hpp).
#include "karman/discretization/boundary_conditions.hpp"

namespace karman::discretization {
namespace {

int axis_index(const std::string &a) {
  return a == "x" ? 0 : a == "y" ? 1 : a == "z" ? 2 : -1;
}

} // namespace

physics::BoundaryParameters<double> PatchCondition::parameters(double t, long n,
                                                               bool *beyond) const {
  physics::BoundaryParameters<double> a;
  bool b[3];
  a.velocity = velocity;
  a.omega = omega.value(t, n, &b[0]);
  a.speed = speed.value(t, n, &b[1]);
  a.amplitude = amplitude.value(t, n, &b[2]);
  *beyond = b[0] || b[1] || b[2];
  return a;
}

PetscErrorCode BoundaryConditions::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  patches_.clear();
  for (const std::string &name : mesh.patch_names) {
    const config::BoundaryConfig *bc = cfg.boundary(name);
    PetscCheck(bc, mesh.comm, PETSC_ERR_PLIB, "no boundary condition for %s", name.c_str());
    const config::Section &p = bc->parameters;
    PatchCondition pc;
    pc.name = name;
    using physics::BoundaryType;
    PetscCheck(physics::parse_boundary_type(bc->type, &pc.shape.type), mesh.comm, PETSC_ERR_PLIB,
               "%s: boundaries.%s: unknown type '%s'", cfg.file().c_str(), name.c_str(),
               bc->type.c_str());
    const BoundaryType type = pc.type();
    if (type == BoundaryType::Wall) {
      pc.velocity = Vec3<double>::from(p.vector("velocity"));
      PetscCall(p.time_function(mesh.comm, "omega", cfg.directory(), &pc.omega));
      pc.shape.center = Vec3<double>::from(p.vector("center"));
      PetscCheck(mesh.dim == 2 || (pc.omega.is_constant() && pc.omega.offset == 0), mesh.comm,
                 PETSC_ERR_SUP,
                 "%s: boundaries.%s.omega: rotating walls are supported in 2D (rotation about e_z)",
                 cfg.file().c_str(), name.c_str());
    } else if (type == BoundaryType::VelocityInlet || type == BoundaryType::BlowingSuction) {
      if (type == BoundaryType::VelocityInlet) {
        PetscCall(p.time_function(mesh.comm, "velocity", cfg.directory(), &pc.speed));
        pc.shape.direction = Vec3<double>::from(p.vector("direction"));
        const double n = norm(pc.shape.direction);
        if (n > 0) pc.shape.direction = (1.0 / n) * pc.shape.direction;
      } else {
        PetscCall(p.time_function(mesh.comm, "amplitude", cfg.directory(), &pc.amplitude));
      }
      physics::VelocityProfile &pr = pc.shape.profile;
      pr.parabolic = p.text("profile") == "parabolic";
      pr.axis[0] = axis_index(p.text("profile_axis"));
      pr.axis[1] = axis_index(p.text("profile_axis2"));
      const std::vector<double> r1 = p.reals("profile_range"), r2 = p.reals("profile_range2");
      PetscCheck(r1.size() == 2 && r1[1] > r1[0], mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s.profile_range must be [lo, hi] with hi > lo",
                 cfg.file().c_str(), name.c_str());
      PetscCheck(r2.size() == 2 && r2[1] > r2[0], mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s.profile_range2 must be [lo, hi] with hi > lo",
                 cfg.file().c_str(), name.c_str());
      pr.lo[0] = r1[0], pr.hi[0] = r1[1], pr.lo[1] = r2[0], pr.hi[1] = r2[1];
      PetscCheck(pr.axis[0] < mesh.dim && pr.axis[1] < mesh.dim, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s: profile axis beyond the mesh dimension %d", cfg.file().c_str(),
                 name.c_str(), mesh.dim);
    } else if (type == BoundaryType::PressureOutlet) {
      pc.pressure = p.real("pressure");
    } else if (type == BoundaryType::FarField) {
      pc.velocity = Vec3<double>::from(p.vector("velocity"));
      pc.pressure = p.real("pressure");
      PetscCheck(norm(pc.velocity) > 0, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s.velocity: the far-field velocity must not be zero",
                 cfg.file().c_str(), name.c_str());
    }
    patches_.push_back(pc);
  }
  PetscFunctionReturn(0);
}

std::vector<int> BoundaryConditions::wall_patches() const {
  std::vector<int> w;
  for (std::size_t p = 0; p < patches_.size(); ++p)
    if (physics::is_wall(patches_[p].type())) w.push_back(static_cast<int>(p));
  return w;
}

void BoundaryConditions::classify(const mesh::Mesh &mesh, const geometry::Geometry<double> &g) {
  kind_.assign(mesh.n_flux_faces, FaceKind::Interior);
  int local_fixed = 0;
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const int p = mesh.face_patch[f];
    if (p < 0) continue;
    const PatchCondition &pc = patches_[p];
    FaceKind k = FaceKind::VelocityDirichlet;
    if (pc.type() == physics::BoundaryType::PressureOutlet)
      k = FaceKind::PressureOutlet;
    else if (pc.type() == physics::BoundaryType::Symmetry)
      k = FaceKind::Slip;
    else if (pc.type() == physics::BoundaryType::FarField && dot(pc.velocity, g.face_area[f]) >= 0)
      k = FaceKind::PressureOutlet;
    kind_[f] = k;
    if (k == FaceKind::PressureOutlet) local_fixed = 1;
  }
  int global_fixed = 0;
  MPI_Allreduce(&local_fixed, &global_fixed, 1, MPI_INT, MPI_MAX, mesh.comm);
  pressure_fixed_ = global_fixed != 0;
  prescribed_.assign(2, std::vector<char>(mesh.n_flux_faces, 0));
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    prescribed_[0][f] = kind_[f] == FaceKind::PressureOutlet;
    prescribed_[1][f] = kind_[f] == FaceKind::VelocityDirichlet;
  }
}

bool BoundaryConditions::time_dependent() const {
  for (const auto &pc : patches_)
    if (pc.custom_velocity || !pc.omega.is_constant() || !pc.speed.is_constant() ||
        !pc.amplitude.is_constant())
      return true;
  return false;
}

PetscErrorCode BoundaryConditions::evaluate(const mesh::Mesh &mesh,
                                            const geometry::Geometry<double> &g, double t, long n) {
  PetscFunctionBeginUser;
  velocity_.assign(mesh.n_flux_faces, Vec3<double>());
  pressure_.assign(mesh.n_flux_faces, 0.0);
  rotation_.assign(mesh.n_flux_faces, 0.0);
  // the patch parameters at this time (the same on every rank)
  parameters_.resize(patches_.size());
  for (std::size_t p = 0; p < patches_.size(); ++p) {
    bool beyond;
    parameters_[p] = patches_[p].parameters(t, n, &beyond);
    PetscCheck(!beyond, mesh.comm, PETSC_ERR_USER_INPUT,
               "boundaries.%s: the per-step values end before time level %ld (t = %g)",
               patches_[p].name.c_str(), n, t);
  }
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const int p = mesh.face_patch[f];
    if (p < 0) continue;
    const PatchCondition &pc = patches_[p];
    pressure_[f] = pc.pressure;
    if (kind_[f] != FaceKind::VelocityDirichlet) continue;
    const Vec3<double> &x = g.face_centroid[f];
    if (pc.custom_velocity) {
      velocity_[f] = pc.custom_velocity(x, t);
      continue;
    }
    velocity_[f] = physics::boundary_velocity(pc.shape, parameters_[p], x, g.face_area[f]);
    if (pc.type() == physics::BoundaryType::Wall) rotation_[f] = parameters_[p].omega;
  }
  PetscFunctionReturn(0);
}

} // namespace karman::discretization
