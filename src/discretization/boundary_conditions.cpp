// Boundary conditions (see include/karman/discretization/boundary_conditions.hpp).
#include "karman/discretization/boundary_conditions.hpp"

namespace karman::discretization {
namespace {

int axis_index(const std::string &a) {
  return a == "x" ? 0 : a == "y" ? 1 : a == "z" ? 2 : -1;
}

} // namespace

PetscErrorCode BoundaryConditions::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  patches_.clear();
  for (const std::string &name : mesh.patch_names) {
    const config::BoundaryConfig *bc = cfg.boundary(name);
    PetscCheck(bc, mesh.comm, PETSC_ERR_PLIB, "no boundary condition for %s", name.c_str());
    const config::Section &p = bc->parameters;
    PatchCondition pc;
    pc.name = name;
    pc.type = bc->type;
    if (bc->type == "wall") {
      pc.velocity = Vec3<double>::from(p.vector("velocity"));
      PetscCall(p.time_function(mesh.comm, "omega", cfg.directory(), &pc.omega));
      pc.center = Vec3<double>::from(p.vector("center"));
      PetscCheck(mesh.dim == 2 || (pc.omega.is_constant() && pc.omega.offset == 0), mesh.comm, PETSC_ERR_SUP,
                 "%s: boundaries.%s.omega: rotating walls are supported in 2D (rotation about e_z)",
                 cfg.file().c_str(), name.c_str());
    } else if (bc->type == "velocity-inlet" || bc->type == "blowing-suction") {
      if (bc->type == "velocity-inlet") {
        PetscCall(p.time_function(mesh.comm, "velocity", cfg.directory(), &pc.speed));
        pc.velocity = Vec3<double>::from(p.vector("direction"));
        const double n = norm(pc.velocity);
        if (n > 0) pc.velocity = (1.0 / n) * pc.velocity;
      } else {
        PetscCall(p.time_function(mesh.comm, "amplitude", cfg.directory(), &pc.amplitude));
      }
      pc.parabolic = p.text("profile") == "parabolic";
      pc.axis[0] = axis_index(p.text("profile_axis"));
      pc.axis[1] = axis_index(p.text("profile_axis2"));
      const std::vector<double> r1 = p.reals("profile_range"), r2 = p.reals("profile_range2");
      PetscCheck(r1.size() == 2 && r1[1] > r1[0], mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s.profile_range must be [lo, hi] with hi > lo",
                 cfg.file().c_str(), name.c_str());
      PetscCheck(r2.size() == 2 && r2[1] > r2[0], mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s.profile_range2 must be [lo, hi] with hi > lo",
                 cfg.file().c_str(), name.c_str());
      pc.lo[0] = r1[0], pc.hi[0] = r1[1], pc.lo[1] = r2[0], pc.hi[1] = r2[1];
      PetscCheck(pc.axis[0] < mesh.dim && pc.axis[1] < mesh.dim, mesh.comm, PETSC_ERR_USER_INPUT,
                 "%s: boundaries.%s: profile axis beyond the mesh dimension %d", cfg.file().c_str(),
                 name.c_str(), mesh.dim);
    } else if (bc->type == "pressure-outlet") {
      pc.pressure = p.real("pressure");
    } else if (bc->type == "far-field") {
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
    if (patches_[p].type == "wall" || patches_[p].type == "blowing-suction")
      w.push_back(static_cast<int>(p));
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
    if (pc.type == "pressure-outlet")
      k = FaceKind::PressureOutlet;
    else if (pc.type == "symmetry")
      k = FaceKind::Slip;
    else if (pc.type == "far-field" && dot(pc.velocity, g.face_area[f]) >= 0)
      k = FaceKind::PressureOutlet;
    kind_[f] = k;
    if (k == FaceKind::PressureOutlet) local_fixed = 1;
  }
  int global_fixed = 0;
  MPI_Allreduce(&local_fixed, &global_fixed, 1, MPI_INT, MPI_MAX, mesh.comm);
  pressure_fixed_ = global_fixed != 0;
  for (int s = 0; s < 2; ++s) prescribed_[s].assign(mesh.n_flux_faces, 0);
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    prescribed_[0][f] = kind_[f] == FaceKind::PressureOutlet;
    prescribed_[1][f] = kind_[f] == FaceKind::VelocityDirichlet;
  }
}

bool BoundaryConditions::time_dependent() const
{
  for (const auto &pc : patches_)
    if (pc.custom_velocity || !pc.omega.is_constant() || !pc.speed.is_constant() || !pc.amplitude.is_constant())
      return true;
  return false;
}

PetscErrorCode BoundaryConditions::evaluate(const mesh::Mesh &mesh, const geometry::Geometry<double> &g, double t,
                                            long n)
{
  PetscFunctionBeginUser;
  velocity_.assign(mesh.n_flux_faces, Vec3<double>());
  pressure_.assign(mesh.n_flux_faces, 0.0);
  rotation_.assign(mesh.n_flux_faces, 0.0);
  // the patch parameters at this time (the same on every rank)
  std::vector<double> omega(patches_.size()), speed(patches_.size()), amplitude(patches_.size());
  for (std::size_t p = 0; p < patches_.size(); ++p) {
    bool b1, b2, b3;
    omega[p] = patches_[p].omega.value(t, n, &b1);
    speed[p] = patches_[p].speed.value(t, n, &b2);
    amplitude[p] = patches_[p].amplitude.value(t, n, &b3);
    PetscCheck(!(b1 || b2 || b3), mesh.comm, PETSC_ERR_USER_INPUT,
               "boundaries.%s: the per-step values end before time level %ld (t = %g)", patches_[p].name.c_str(), n,
               t);
  }
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const int p = mesh.face_patch[f];
    if (p < 0) continue;
    const PatchCondition &pc = patches_[p];
    const Vec3<double> &x = g.face_centroid[f];
    const Vec3<double> n_out = (1.0 / norm(g.face_area[f])) * g.face_area[f];
    pressure_[f] = pc.pressure;
    if (kind_[f] != FaceKind::VelocityDirichlet) continue;
    if (pc.custom_velocity) {
      velocity_[f] = pc.custom_velocity(x, t);
    } else if (pc.type == "wall") {
      const Vec3<double> r = x - pc.center;
      velocity_[f] = pc.velocity + Vec3<double>(-omega[p] * r[1], omega[p] * r[0], 0.0);
      rotation_[f] = omega[p];
    } else if (pc.type == "velocity-inlet") {
      const Vec3<double> e = norm(pc.velocity) > 0 ? pc.velocity : -n_out;
      velocity_[f] = (speed[p] * profile_factor(pc, x)) * e;
    } else if (pc.type == "blowing-suction") {
      velocity_[f] = (-amplitude[p] * profile_factor(pc, x)) * n_out;
    } else if (pc.type == "far-field") {
      velocity_[f] = pc.velocity;
    }
  }
  PetscFunctionReturn(0);
}

} // namespace karman::discretization
