// Boundary conditions (see include/karman/discretization/boundary_conditions.hpp).
#include "karman/discretization/boundary_conditions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace karman::discretization {

std::vector<config::VariantSpec> boundary_types() {
  std::vector<config::VariantSpec> out;
  for (const auto &t : flow_boundary_types()) out.push_back(t.variant);
  return out;
}

PetscErrorCode BoundaryConditions::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  file_ = cfg.file();
  patches_.clear();
  for (const std::string &name : mesh.patch_names) {
    const config::BoundaryConfig *bc = cfg.boundary(name);
    PetscCheck(bc, mesh.comm, PETSC_ERR_PLIB, "no boundary condition for %s", name.c_str());
    PatchCondition pc;
    pc.name = name;
    pc.type = find_flow_boundary_type(bc->type);
    PetscCheck(pc.type, mesh.comm, PETSC_ERR_PLIB, "%s: boundaries.%s: unknown type '%s'",
               cfg.file().c_str(), name.c_str(), bc->type.c_str());
    const BoundaryContext context{mesh.comm, cfg.file(), cfg.directory(), "boundaries." + name,
                                  mesh.dim};
    PetscCall(pc.type->create(bc->parameters, context, &pc.unit));
    patches_.push_back(std::move(pc));
  }
  // one stream: the force directions turn with the first far field's angle of attack
  for (const auto &pc : patches_) {
    const double *a = pc.unit->angle_of_attack();
    if (!a || *a == angle_of_attack()) continue;
    char angles[96];
    std::snprintf(angles, sizeof angles, "%g, boundaries.%s's %g", *a,
                  patches_[stream_patch()].name.c_str(), angle_of_attack());
    SETERRQ(mesh.comm, PETSC_ERR_USER_INPUT,
            "%s: boundaries.%s.angle_of_attack is %s: the far-field boundaries of a case share "
            "one angle of attack",
            cfg.file().c_str(), pc.name.c_str(), angles);
  }
  PetscFunctionReturn(0);
}

int BoundaryConditions::stream_patch() const {
  for (std::size_t p = 0; p < patches_.size(); ++p)
    if (patches_[p].unit->angle_of_attack()) return static_cast<int>(p);
  return -1;
}

double BoundaryConditions::angle_of_attack() const {
  const int p = stream_patch();
  return p < 0 ? 0.0 : *patches_[p].unit->angle_of_attack();
}

std::vector<int> BoundaryConditions::wall_patches() const {
  std::vector<int> w;
  for (std::size_t p = 0; p < patches_.size(); ++p)
    if (patches_[p].is_wall()) w.push_back(static_cast<int>(p));
  return w;
}

void BoundaryConditions::classify(const mesh::Mesh &mesh, const geometry::Geometry<double> &g) {
  kind_.assign(mesh.n_flux_faces, FaceKind::Interior);
  int local_fixed = 0;
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const int p = mesh.face_patch[f];
    if (p < 0) continue;
    const FaceKind k = patches_[p].unit->face_kind(g.face_area[f]);
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
    if (pc.custom_velocity || pc.unit->time_dependent()) return true;
  return false;
}

PetscErrorCode BoundaryConditions::evaluate(const mesh::Mesh &mesh,
                                            const geometry::Geometry<double> &g, double t, long n) {
  PetscFunctionBeginUser;
  velocity_.assign(mesh.n_flux_faces, Vec3<double>());
  pressure_.assign(mesh.n_flux_faces, 0.0);
  rotation_.assign(mesh.n_flux_faces, 0.0);
  // the patch parameters at this time (the same on every rank)
  for (auto &pc : patches_)
    PetscCheck(pc.unit->evaluate(t, n), mesh.comm, PETSC_ERR_USER_INPUT,
               "boundaries.%s: the per-step values end before time level %ld (t = %g)",
               pc.name.c_str(), n, t);
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const int p = mesh.face_patch[f];
    if (p < 0) continue;
    const PatchCondition &pc = patches_[p];
    pressure_[f] = pc.unit->pressure();
    if (kind_[f] != FaceKind::VelocityDirichlet) continue;
    const Vec3<double> &x = g.face_centroid[f];
    if (pc.custom_velocity) {
      velocity_[f] = pc.custom_velocity(x, t);
      continue;
    }
    velocity_[f] = pc.unit->velocity(x, g.face_area[f]);
    rotation_[f] = pc.unit->rotation();
  }
  if (!pressure_fixed_) PetscCall(check_mass_balance(mesh, g, t));
  PetscFunctionReturn(0);
}

PetscErrorCode BoundaryConditions::check_mass_balance(const mesh::Mesh &mesh,
                                                      const geometry::Geometry<double> &g,
                                                      double t) const {
  PetscFunctionBeginUser;
  // each patch's inflow and outflow through the boundary faces of owned cells (S points out)
  const std::size_t np = patches_.size();
  std::vector<double> flux(2 * np, 0.0);
  for (std::size_t p = 0; p < np; ++p)
    for (PetscInt f : mesh.boundary_faces(static_cast<int>(p))) {
      if (kind_[f] != FaceKind::VelocityDirichlet) continue;
      const double q = dot(velocity_[f], g.face_area[f]);
      flux[2 * p + (q < 0 ? 0 : 1)] += std::abs(q);
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, flux.data(), static_cast<int>(flux.size()), MPI_DOUBLE,
                             MPI_SUM, mesh.comm));
  double in = 0, out = 0;
  for (std::size_t p = 0; p < np; ++p) in += flux[2 * p], out += flux[2 * p + 1];
  if (std::abs(in - out) <= kMassImbalance * std::max(in, out)) PetscFunctionReturn(0);
  std::string through;
  for (std::size_t p = 0; p < np; ++p) {
    if (flux[2 * p] == 0 && flux[2 * p + 1] == 0) continue;
    char one[160];
    std::snprintf(one, sizeof one, "%s%s %.4g in, %.4g out", through.empty() ? "" : "; ",
                  patches_[p].name.c_str(), flux[2 * p], flux[2 * p + 1]);
    through += one;
  }
  char when[48] = "";
  if (time_dependent()) std::snprintf(when, sizeof when, " at t = %g", t);
  SETERRQ(mesh.comm, PETSC_ERR_USER_INPUT,
          "%s: boundaries: no boundary fixes the pressure (a pressure-outlet or far-field), and "
          "the prescribed velocities carry a net %s of %.4g%s (volume flux%s: %s), %.0f %% of "
          "their %s: an incompressible flow in a closed domain has no solution; make one "
          "boundary a pressure-outlet, or balance the prescribed flows",
          file_.c_str(), in > out ? "inflow" : "outflow", std::abs(in - out), when,
          mesh.dim == 2 ? " per unit span" : "", through.c_str(),
          100 * std::abs(in - out) / std::max(in, out), in > out ? "inflow" : "outflow");
}

} // namespace karman::discretization
