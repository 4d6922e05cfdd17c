// The Navier-Stokes residual term (see include/karman/discretization/navier_stokes_term.hpp).
#include "karman/discretization/navier_stokes_term.hpp"

namespace karman::discretization {

void NavierStokesTerm::flux(const FaceView &face, double *M) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux(dim, L, *face.R, g, *fp_, M);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux(dim, L, g, *fp_, bcs_->velocity(face.f), M);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux(dim, L, g, *fp_, bcs_->pressure(face.f), M);
    break;
  case FaceKind::Slip:
    physics::slip_flux(dim, L, g, *fp_, M);
    break;
  }
}

void NavierStokesTerm::flux_dw(const FaceView &face, physics::FluxJacobian &J) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux_dw(dim, L, *face.R, g, *fp_, J);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_dw(dim, L, g, *fp_, bcs_->velocity(face.f), J);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_dw(dim, L, g, *fp_, bcs_->pressure(face.f), J);
    break;
  case FaceKind::Slip:
    physics::slip_flux_dw(dim, L, g, *fp_, J);
    break;
  }
}

void NavierStokesTerm::flux_reverse(const FaceView &face, const double *lambda,
                                    physics::FluxBar &bar, double *) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux_reverse(dim, L, *face.R, g, *fp_, lambda, bar);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_reverse(dim, L, g, *fp_, bcs_->velocity(face.f), lambda, bar);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_reverse(dim, L, g, *fp_, bcs_->pressure(face.f), lambda, bar);
    break;
  case FaceKind::Slip:
    physics::slip_flux_reverse(dim, L, g, *fp_, lambda, bar);
    break;
  }
  // the kernels' boundary pressure and velocity are unknowns 0 and 1..dim's boundary values
  bar.bv[0] += bar.pb;
  for (int d = 0; d < dim; ++d) bar.bv[1 + d] += bar.ub[d];
  bar.pb = 0;
  bar.ub = Vec3<double>();
}

std::vector<TermParameter> NavierStokesTerm::parameters() const {
  std::vector<TermParameter> out;
  for (std::size_t p = 0; p < bcs_->n_patches(); ++p) {
    PatchCondition &pc = bcs_->patch(static_cast<int>(p));
    if (pc.custom_velocity) continue;
    for (auto &t : pc.unit->parameters("boundaries." + pc.name + ".")) out.push_back(t);
  }
  return out;
}

int NavierStokesTerm::parameter_offset(int patch) const {
  int offset = 0;
  for (int p = 0; p < patch; ++p) {
    PatchCondition &pc = bcs_->patch(p);
    if (!pc.custom_velocity) offset += static_cast<int>(pc.unit->parameters("").size());
  }
  return offset;
}

void NavierStokesTerm::boundary_reverse(PetscInt f, const BoundaryDataBar &bar,
                                        double *parameter_bar, Vec3<double> *xf_bar,
                                        Vec3<double> *S_bar) const {
  const int p = mesh_->face_patch[f];
  if (p < 0) return;
  const PatchCondition &pc = bcs_->patch(p);
  if (pc.custom_velocity) return;
  double *own = parameter_bar + parameter_offset(p);
  const double *b = bar.value;
  if (bcs_->kind(f) == FaceKind::PressureOutlet) {
    pc.unit->pressure_reverse(b[0], own);
    return;
  }
  if (bcs_->kind(f) != FaceKind::VelocityDirichlet) return;
  pc.unit->velocity_reverse(geom_->face_centroid[f], geom_->face_area[f],
                            Vec3<double>(b[1], b[2], mesh_->dim == 3 ? b[3] : 0.0), bar.rotation,
                            own, xf_bar, S_bar);
}

} // namespace karman::discretization
