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

void NavierStokesTerm::list_parameters(std::vector<TermParameter> *out,
                                       std::vector<PatchParameters> *places) const {
  static const char *axis[3] = {"x", "y", "z"};
  const int dim = mesh_->dim;
  if (out) out->clear();
  places->assign(bcs_->n_patches(), PatchParameters());
  int count = 0;
  std::string base;
  auto add = [&](const char *key, double *value, physics::TimeFunction *function) {
    if (out) out->push_back({base + key, value, function});
    return count++;
  };
  auto component = [&](int d) { return std::string("velocity.") + axis[d]; };
  for (std::size_t p = 0; p < bcs_->n_patches(); ++p) {
    PatchCondition &pc = bcs_->patch(static_cast<int>(p));
    PatchParameters &at = (*places)[p];
    if (out) base = "boundaries." + pc.name + ".";
    if (pc.custom_velocity) continue;
    switch (pc.type()) {
    case physics::BoundaryType::Wall:
      if (dim == 2) at.omega = add("omega", nullptr, &pc.omega);
      for (int d = 0; d < dim; ++d)
        at.velocity[d] = add(component(d).c_str(), &pc.velocity[d], nullptr);
      break;
    case physics::BoundaryType::VelocityInlet:
      at.speed = add("velocity", nullptr, &pc.speed);
      break;
    case physics::BoundaryType::BlowingSuction:
      at.amplitude = add("amplitude", nullptr, &pc.amplitude);
      break;
    case physics::BoundaryType::FarField:
      for (int d = 0; d < dim; ++d)
        at.velocity[d] = add(component(d).c_str(), &pc.velocity[d], nullptr);
      at.pressure = add("pressure", &pc.pressure, nullptr);
      break;
    case physics::BoundaryType::PressureOutlet:
      at.pressure = add("pressure", &pc.pressure, nullptr);
      break;
    case physics::BoundaryType::Symmetry:
      break;
    }
  }
}

std::vector<TermParameter> NavierStokesTerm::parameters() const {
  std::vector<TermParameter> out;
  std::vector<PatchParameters> places;
  list_parameters(&out, &places);
  return out;
}

void NavierStokesTerm::boundary_reverse(PetscInt f, const BoundaryDataBar &bar,
                                        double *parameter_bar, Vec3<double> *xf_bar,
                                        Vec3<double> *S_bar) const {
  const int p = mesh_->face_patch[f];
  if (p < 0) return;
  std::vector<PatchParameters> places;
  list_parameters(nullptr, &places);
  const PatchParameters &at = places[p];
  const double *b = bar.value;
  if (bcs_->kind(f) == FaceKind::PressureOutlet) {
    if (at.pressure >= 0) parameter_bar[at.pressure] += b[0];
    return;
  }
  if (bcs_->kind(f) != FaceKind::VelocityDirichlet || bcs_->patch(p).custom_velocity) return;
  physics::BoundaryParameters<double> abar;
  physics::boundary_velocity_reverse(
      bcs_->patch(p).shape, bcs_->parameters(p), geom_->face_centroid[f], geom_->face_area[f],
      Vec3<double>(b[1], b[2], mesh_->dim == 3 ? b[3] : 0.0), &abar, xf_bar, S_bar);
  abar.omega += bar.rotation; // the rotating-wall traction's dependence on omega (objectives)
  for (int d = 0; d < 3; ++d)
    if (at.velocity[d] >= 0) parameter_bar[at.velocity[d]] += abar.velocity[d];
  if (at.omega >= 0) parameter_bar[at.omega] += abar.omega;
  if (at.speed >= 0) parameter_bar[at.speed] += abar.speed;
  if (at.amplitude >= 0) parameter_bar[at.amplitude] += abar.amplitude;
}

} // namespace karman::discretization
