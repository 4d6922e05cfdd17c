// The Spalart-Allmaras term (see include/karman/discretization/spalart_allmaras_term.hpp).
#include "karman/discretization/spalart_allmaras_term.hpp"

#include "karman/config/section_options.hpp"
#include "karman/physics/scalar_transport.hpp"

namespace karman::discretization {
namespace {

using config::KeyType;
using config::SectionOptions;
using namespace config::key;

const SectionOptions<TurbulenceOptions> &turbulence_options() {
  static const auto options =
      SectionOptions<TurbulenceOptions>(
          "turbulence",
          "RANS turbulence model: Spalart-Allmaras (SA-neg, ICCFD7-1902 / NASA TMR) solved with "
          "the flow; its unknown is chi = nu~/nu (field nu_tilde_ratio); walls are the flow's "
          "wall-type boundaries (nu~ = 0), inlets and far-field inflow take freestream_ratio, "
          "outlets zero gradient",
          true, true)
          .key(choice("model", "sa-neg", "the turbulence model", {"sa-neg"}),
               &TurbulenceOptions::model)
          .key(typed("ft2", KeyType::Bool, "true",
                     "keep the laminar suppression term f_t2 (TMR 'SA', as TMR's flat-plate, bump "
                     "and NACA 0012 reference runs); false: SA-noft2"),
               &TurbulenceOptions::ft2)
          .key(nonnegative("freestream_ratio", "3.0",
                           "nu~/nu at velocity inlets and on far-field inflow (TMR: 3)"),
               &TurbulenceOptions::freestream_ratio)
          .key(nonnegative("initial_ratio", "3.0", "uniform initial nu~/nu"),
               &TurbulenceOptions::initial_ratio)
          .key(integer("convection_order", "1",
                       "convection of nu~: 1 first-order upwind (TMR's reference runs), 2 linear "
                       "reconstruction (upwind)",
                       1, 2),
               &TurbulenceOptions::convection_order);
  return options;
}

} // namespace

void declare_turbulence(config::Schema &schema) {
  turbulence_options().declare(schema);
}

PetscErrorCode SpalartAllmarasTerm::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg,
                                          const ResidualTerm &flow, const BoundaryConditions &bcs,
                                          const physics::FluxParameters<double> &fp) {
  PetscFunctionBeginUser;
  mesh_ = &mesh;
  flow_ = &flow;
  bcs_ = &bcs;
  fp_ = &fp;
  o_ = turbulence_options().get(cfg);
  model_.ft2 = o_.ft2;
  walls_ = bcs.wall_patches();
  PetscCheck(!walls_.empty(), mesh.comm, PETSC_ERR_USER_INPUT,
             "%s: turbulence: the case has no wall (a boundary of type wall or blowing-suction), "
             "whose distance the Spalart-Allmaras model needs",
             cfg.file().c_str());
  wall_patch_.assign(mesh.patch_names.size(), 0);
  for (int p : walls_) wall_patch_[p] = 1;
  PetscFunctionReturn(0);
}

std::vector<physics::FieldSpec> SpalartAllmarasTerm::fields(int) const {
  physics::FieldSpec f;
  f.name = "nu_tilde_ratio";
  f.components = 1;
  f.transient = true;
  f.convection_order = static_cast<int>(o_.convection_order);
  f.initial = o_.initial_ratio;
  return {f};
}

SpalartAllmarasTerm::Face SpalartAllmarasTerm::face_type(PetscInt f) const {
  if (wall_patch_[mesh_->face_patch[f]]) return Face::Value;
  return bcs_->kind(f) == FaceKind::VelocityDirichlet ? Face::Value : Face::ZeroGradient;
}

double SpalartAllmarasTerm::face_value(PetscInt f) const {
  return wall_patch_[mesh_->face_patch[f]] ? 0.0 : o_.freestream_ratio;
}

void SpalartAllmarasTerm::prescribed_faces(int, std::vector<char> *mask) const {
  mask->assign(mesh_->n_flux_faces, 0);
  for (PetscInt f = 0; f < mesh_->n_flux_faces; ++f)
    (*mask)[f] = mesh_->face_patch[f] >= 0 && face_type(f) == Face::Value;
}

double SpalartAllmarasTerm::boundary_value(PetscInt f, int) const {
  if (mesh_->face_patch[f] < 0 || face_type(f) != Face::Value) return 0.0;
  return face_value(f);
}

physics::FluxParameters<double> SpalartAllmarasTerm::flux_parameters() const {
  physics::FluxParameters<double> fp = *fp_;
  fp.upwind = 1.0;
  return fp;
}

double SpalartAllmarasTerm::face_flux(const FaceView &face, double F, double *kappa,
                                      double *dkappa_dchi, double *dkappa_dnu) const {
  const physics::FluxParameters<double> fp = flux_parameters();
  const double nu = fp.nu;
  const int order = static_cast<int>(o_.convection_order);
  *kappa = *dkappa_dchi = *dkappa_dnu = 0;
  if (!face.boundary()) {
    const double chi = 0.5 * (face.L->w[k()] + face.R->w[k()]);
    const physics::SAScalarDerivative D = physics::sa_diffusion_coefficient_dw(nu * chi, nu);
    *kappa = D.value;
    *dkappa_dchi = 0.5 * nu * D.d_nut;
    *dkappa_dnu = chi * D.d_nut + D.d_nu;
    return physics::scalar_interior_flux(k(), *face.L, *face.R, *face.g, fp, *kappa, F, order);
  }
  if (face_type(face.f) == Face::ZeroGradient)
    return physics::scalar_gradient_flux(k(), *face.L, *face.g, fp, F, 0.0, order);
  const double chi_b = face_value(face.f);
  const physics::SAScalarDerivative D = physics::sa_diffusion_coefficient_dw(nu * chi_b, nu);
  *kappa = D.value;
  *dkappa_dnu = chi_b * D.d_nut + D.d_nu;
  return physics::scalar_value_flux(k(), *face.L, *face.g, fp, *kappa, F, chi_b, order);
}

void SpalartAllmarasTerm::flux(const FaceView &face, double *M) const {
  double kappa, dk, dknu;
  M[k()] = face_flux(face, M[flow_->first_unknown()], &kappa, &dk, &dknu);
}

void SpalartAllmarasTerm::flux_dw(const FaceView &face, physics::FluxJacobian &J) const {
  // M = M(chi, F(w), kappa(chi_f)): dM/dw = dM/dF dF/dw (the flow's row of F, already in J) +
  // dM/dchi + dM/dkappa dkappa/dchi
  double M[physics::kMaxVars] = {};
  flow_->flux(face, M);
  const double F = M[flow_->first_unknown()];
  double kappa, dk, dknu;
  face_flux(face, F, &kappa, &dk, &dknu);
  const physics::FluxParameters<double> fp = flux_parameters();
  const int order = static_cast<int>(o_.convection_order);
  physics::ScalarFluxDerivatives D;
  if (!face.boundary())
    D = physics::scalar_interior_flux_dw(k(), *face.L, *face.R, *face.g, fp, kappa, F, order);
  else if (face_type(face.f) == Face::Value)
    D = physics::scalar_value_flux_dw(k(), *face.L, *face.g, fp, kappa, F, face_value(face.f),
                                      order);
  else
    D = physics::scalar_gradient_flux_dw(k(), *face.L, *face.g, fp, F, 0.0, order);
  const int q = flow_->first_unknown(), s = k(), nv = s + 1;
  for (int v = 0; v < nv; ++v) {
    J.dwL[s][v] = D.F * J.dwL[q][v];
    J.dwR[s][v] = D.F * J.dwR[q][v];
    for (int c = 0; c < 3; ++c) {
      J.dgL[s][v][c] = D.F * J.dgL[q][v][c];
      J.dgR[s][v][c] = D.F * J.dgR[q][v][c];
    }
  }
  J.dwL[s][s] += D.wL + D.kappa * dk;
  J.dwR[s][s] += D.wR + D.kappa * dk;
  for (int c = 0; c < 3; ++c) {
    J.dgL[s][s][c] += D.gL[c];
    J.dgR[s][s][c] += D.gR[c];
  }
}

void SpalartAllmarasTerm::flux_reverse(const FaceView &face, const double *lambda,
                                       physics::FluxBar &bar, double *) const {
  const double l = lambda[k()];
  if (l == 0) return;
  double M[physics::kMaxVars] = {};
  flow_->flux(face, M);
  const double F = M[flow_->first_unknown()];
  double kappa, dk, dknu;
  face_flux(face, F, &kappa, &dk, &dknu);
  const physics::FluxParameters<double> fp = flux_parameters();
  const int order = static_cast<int>(o_.convection_order);
  physics::ScalarFluxBar sb;
  if (!face.boundary()) {
    physics::scalar_interior_flux_reverse(k(), *face.L, *face.R, *face.g, fp, kappa, F, l, bar, sb,
                                          order);
    bar.L.w[k()] += sb.kappa * dk;
    bar.R.w[k()] += sb.kappa * dk;
  } else if (face_type(face.f) == Face::Value) {
    physics::scalar_value_flux_reverse(k(), *face.L, *face.g, fp, kappa, F, face_value(face.f), l,
                                       bar, sb, order);
    bar.bv[k()] += sb.boundary; // chi_b: a constant (boundary_reverse has nothing to pass it to)
  } else
    physics::scalar_gradient_flux_reverse(k(), *face.L, *face.g, fp, F, 0.0, l, bar, sb, order);
  bar.nu += sb.kappa * dknu;
  // F's adjoint through the flow's own reverse (its flux_reverse writes to bar only)
  if (sb.F != 0) {
    double lf[physics::kMaxVars] = {};
    lf[flow_->first_unknown()] = sb.F;
    flow_->flux_reverse(face, lf, bar, nullptr);
  }
}

FaceEddyViscosity SpalartAllmarasTerm::face_eddy_viscosity(const FaceView &face) const {
  const double nu = fp_->nu;
  FaceEddyViscosity t;
  t.unknown = k();
  // adds weight * nu_t(nu chi) to the value, its derivatives to *d_chi (if given) and dnu
  auto add = [&](double chi, double weight, double *d_chi) {
    const physics::SAScalarDerivative D = physics::sa_eddy_viscosity_dw(nu * chi, nu);
    t.value += weight * D.value;
    if (d_chi) *d_chi += weight * nu * D.d_nut;
    t.dnu += weight * (chi * D.d_nut + D.d_nu);
  };
  if (!face.boundary()) {
    add(face.L->w[k()], 0.5, &t.dL);
    add(face.R->w[k()], 0.5, &t.dR);
  } else if (face_type(face.f) == Face::Value)
    add(face_value(face.f), 1.0, nullptr);
  else
    add(face.L->w[k()], 1.0, &t.dL);
  return t;
}

namespace {

/// The source's inputs at a cell: nu~, grad u and grad nu~ from chi (unknown k) and the velocity
/// (unknowns u0..u0+dim-1).
struct SourceInputs {
  double nut = 0, grad_u[3][3] = {}, grad_nut[3] = {};
};

SourceInputs source_inputs(const physics::CellState<double> &s, int k, int u0, double nu) {
  SourceInputs in;
  in.nut = nu * s.w[k];
  for (int i = 0; i < 3; ++i) {
    in.grad_nut[i] = nu * s.g[k][i];
    for (int j = 0; j < 3; ++j) in.grad_u[i][j] = s.g[u0 + i][j];
  }
  return in;
}

} // namespace

void SpalartAllmarasTerm::source(const CellView &cell, double *r) const {
  const double nu = fp_->nu;
  const SourceInputs in = source_inputs(*cell.s, k(), flow_->first_unknown() + 1, nu);
  r[k()] -= fp_->rho * cell.volume / nu *
            physics::sa_source(mesh_->dim, in.nut, nu, cell.wall_distance, in.grad_u, in.grad_nut,
                               model_);
}

void SpalartAllmarasTerm::source_dw(const CellView &cell, SourceJacobian &J) const {
  const double nu = fp_->nu, c = -fp_->rho * cell.volume;
  const int u0 = flow_->first_unknown() + 1, dim = mesh_->dim;
  const SourceInputs in = source_inputs(*cell.s, k(), u0, nu);
  const physics::SASourceDerivative D =
      physics::sa_source_dw(dim, in.nut, nu, cell.wall_distance, in.grad_u, in.grad_nut, model_);
  // Q_c = c Q(nu chi, ., nu G^chi) / nu: d/dchi = c dQ/dnt, d/dG^chi = c dQ/d grad nt
  J.dw[k()][k()] += c * D.d_nut;
  for (int j = 0; j < dim; ++j) {
    J.dg[k()][k()][j] += c * D.d_grad_nut[j];
    for (int i = 0; i < dim; ++i) J.dg[k()][u0 + i][j] += c / nu * D.d_grad_u[i][j];
  }
}

void SpalartAllmarasTerm::source_reverse(const CellView &cell, const double *lambda, SourceBar &bar,
                                         double *) const {
  const double l = lambda[k()];
  if (l == 0) return;
  const double nu = fp_->nu, V = cell.volume, c = -fp_->rho * l;
  const int u0 = flow_->first_unknown() + 1, dim = mesh_->dim;
  const SourceInputs in = source_inputs(*cell.s, k(), u0, nu);
  const physics::SASourceDerivative D =
      physics::sa_source_dw(dim, in.nut, nu, cell.wall_distance, in.grad_u, in.grad_nut, model_);
  bar.s.w[k()] += c * V * D.d_nut;
  double dnu = D.d_nut * cell.s->w[k()] + D.d_nu; // d Q(nu chi, nu, ., nu G^chi) / d nu
  for (int j = 0; j < dim; ++j) {
    bar.s.g[k()][j] += c * V * D.d_grad_nut[j];
    dnu += D.d_grad_nut[j] * cell.s->g[k()][j];
    for (int i = 0; i < dim; ++i) bar.s.g[u0 + i][j] += c * V / nu * D.d_grad_u[i][j];
  }
  bar.volume += c * D.value / nu;
  bar.wall_distance += c * V / nu * D.d_dist;
  bar.nu += c * V * (dnu / nu - D.value / (nu * nu));
}

} // namespace karman::discretization
