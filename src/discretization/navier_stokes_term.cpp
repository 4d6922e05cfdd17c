// The Navier-Stokes residual term (see include/karman/discretization/navier_stokes_term.hpp).
#include "karman/discretization/navier_stokes_term.hpp"

namespace karman::discretization {

physics::FluxParameters<double> NavierStokesTerm::face_parameters(const FaceView &face,
                                                                  FaceEddyViscosity *t) const {
  physics::FluxParameters<double> fp = *fp_;
  *t = model_->face_eddy_viscosity(face);
  fp.nu += t->value;
  return fp;
}

void NavierStokesTerm::kernel_flux(const FaceView &face, const physics::FluxParameters<double> &fp,
                                   double *M) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux(dim, L, *face.R, g, fp, M);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux(dim, L, g, fp, bcs_->velocity(face.f), M);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux(dim, L, g, fp, bcs_->pressure(face.f), M);
    break;
  case FaceKind::Slip:
    physics::slip_flux(dim, L, g, fp, M);
    break;
  }
}

void NavierStokesTerm::flux(const FaceView &face, double *M) const {
  if (!model_) {
    kernel_flux(face, *fp_, M);
    return;
  }
  FaceEddyViscosity t;
  const physics::FluxParameters<double> fp = face_parameters(face, &t);
  kernel_flux(face, fp, M);
  if (!face.boundary())
    physics::stress_transpose_flux(mesh_->dim, *face.L, *face.R, *face.g, fp.rho * fp.nu, M);
}

namespace {

/// dM/dnu of the laminar-form kernel of a face of kind `kind`.
void kernel_flux_dnu(FaceKind kind, int dim, const FaceView &face,
                     const physics::FluxParameters<double> &fp, const BoundaryConditions &bcs,
                     double *dM) {
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  switch (kind) {
  case FaceKind::Interior:
    physics::interior_flux_dnu(dim, L, *face.R, g, fp, dM);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_dnu(dim, L, g, fp, bcs.velocity(face.f), dM);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_dnu(dim, L, g, fp, bcs.pressure(face.f), dM);
    break;
  case FaceKind::Slip:
    physics::slip_flux_dnu(dim, L, g, fp, dM);
    break;
  }
}

} // namespace

void NavierStokesTerm::flux_dw(const FaceView &face, physics::FluxJacobian &J) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  FaceEddyViscosity t;
  const physics::FluxParameters<double> fp = model_ ? face_parameters(face, &t) : *fp_;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux_dw(dim, L, *face.R, g, fp, J);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_dw(dim, L, g, fp, bcs_->velocity(face.f), J);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_dw(dim, L, g, fp, bcs_->pressure(face.f), J);
    break;
  case FaceKind::Slip:
    physics::slip_flux_dw(dim, L, g, fp, J);
    break;
  }
  if (!model_) return;
  // the transposed stress, and the columns of the model's unknown: dM/dnu_f dnu_t,f/dw
  double dM[physics::kMaxVars] = {};
  kernel_flux_dnu(bcs_->kind(face.f), dim, face, fp, *bcs_, dM);
  if (!face.boundary()) {
    physics::stress_transpose_flux_dw(dim, g, fp.rho * fp.nu, J);
    physics::stress_transpose_flux(dim, L, *face.R, g, fp.rho, dM); // its part of dM/dnu
  }
  for (int eq = 0; eq <= dim; ++eq) {
    J.dwL[eq][t.unknown] += dM[eq] * t.dL;
    if (!face.boundary()) J.dwR[eq][t.unknown] += dM[eq] * t.dR;
  }
}

void NavierStokesTerm::flux_reverse(const FaceView &face, const double *lambda,
                                    physics::FluxBar &bar, double *) const {
  const int dim = mesh_->dim;
  const physics::CellState<double> &L = *face.L;
  const physics::FaceGeometry<double> &g = *face.g;
  FaceEddyViscosity t;
  const physics::FluxParameters<double> fp = model_ ? face_parameters(face, &t) : *fp_;
  const double nu_bar0 = bar.nu;
  switch (bcs_->kind(face.f)) {
  case FaceKind::Interior:
    physics::interior_flux_reverse(dim, L, *face.R, g, fp, lambda, bar);
    break;
  case FaceKind::VelocityDirichlet:
    physics::velocity_dirichlet_flux_reverse(dim, L, g, fp, bcs_->velocity(face.f), lambda, bar);
    break;
  case FaceKind::PressureOutlet:
    physics::pressure_outlet_flux_reverse(dim, L, g, fp, bcs_->pressure(face.f), lambda, bar);
    break;
  case FaceKind::Slip:
    physics::slip_flux_reverse(dim, L, g, fp, lambda, bar);
    break;
  }
  if (model_) {
    if (!face.boundary()) {
      double mu_bar = 0;
      physics::stress_transpose_flux_reverse(dim, L, *face.R, g, fp.rho * fp.nu, lambda, bar,
                                             &mu_bar);
      bar.nu += fp.rho * mu_bar;
    }
    // the face viscosity nu + nu_t,f(w, nu): its adjoint to nu and to the model's unknown
    const double nu_f_bar = bar.nu - nu_bar0;
    bar.nu = nu_bar0 + nu_f_bar * (1 + t.dnu);
    bar.L.w[t.unknown] += nu_f_bar * t.dL;
    if (!face.boundary()) bar.R.w[t.unknown] += nu_f_bar * t.dR;
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
