// The passive scalar term (see include/karman/discretization/scalar_term.hpp).
#include "karman/discretization/scalar_term.hpp"

#include "karman/config/section_options.hpp"
#include "karman/physics/scalar_transport.hpp"

namespace karman::discretization {
namespace {

using config::SectionOptions;
using namespace config::key;

const SectionOptions<ScalarOptions> &scalar_options() {
  static const auto options =
      SectionOptions<ScalarOptions>(
          "scalar",
          "a passive scalar phi carried by the flow: rho [dphi/dt + div(u phi) - div(kappa grad "
          "phi)] = rho (q - k phi)",
          true, true)
          .key(positive("diffusivity", "",
                        "kappa [m^2/s] (a temperature: thermal diffusivity, nu / Pr)"),
               &ScalarOptions::diffusivity)
          .key(real("source", "0.0", "q: volumetric source per unit mass"), &ScalarOptions::source)
          .key(nonnegative("decay", "0.0", "k: first-order decay rate [1/s]"),
               &ScalarOptions::decay)
          .key(real("initial", "0.0", "uniform initial value"), &ScalarOptions::initial);
  return options;
}

struct ValueOptions {
  double value = 0;
};
struct FluxOptions {
  double flux = 0;
};
struct NoOptions {};

const SectionOptions<ValueOptions> &value_options() {
  static const auto options =
      SectionOptions<ValueOptions>("value", "prescribed phi (an inlet value, a wall temperature)",
                                   true)
          .key(real("value", "", "phi_b"), &ValueOptions::value);
  return options;
}
const SectionOptions<FluxOptions> &flux_options() {
  static const auto options =
      SectionOptions<FluxOptions>(
          "flux", "prescribed diffusive flux g = kappa dphi/dn into the fluid (0: adiabatic)", true)
          .key(real("flux", "0.0", "g per unit area (a wall heat flux: q_w / (rho c_p))"),
               &FluxOptions::flux);
  return options;
}
const SectionOptions<NoOptions> &outflow_options() {
  static const auto options = SectionOptions<NoOptions>(
      "outflow", "no diffusive flux; phi carried out by the flow (outlets)", true);
  return options;
}

constexpr const char *kList = "scalar.boundaries";

} // namespace

void declare_scalar(config::Schema &schema) {
  scalar_options().declare(schema);
  schema.add_variant_map("scalar", "boundaries");
  schema.add_variant(kList, {value_options().spec(), "", "", nullptr});
  schema.add_variant(kList, {flux_options().spec(), "", "", nullptr});
  schema.add_variant(kList, {outflow_options().spec(), "", "", nullptr});
}

PetscErrorCode ScalarTerm::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg,
                                 const ResidualTerm &flow,
                                 const physics::FluxParameters<double> &fp) {
  PetscFunctionBeginUser;
  mesh_ = &mesh;
  flow_ = &flow;
  fp_ = &fp;
  o_ = scalar_options().get(cfg);
  const auto &entries = cfg.variant_map(kList);
  for (const auto &e : entries)
    PetscCheck(mesh.patch_index(e.name) >= 0, mesh.comm, PETSC_ERR_USER_INPUT,
               "%s:%d: scalar.boundaries.%s: the mesh has no boundary '%s'", cfg.file().c_str(),
               e.line, e.name.c_str(), e.name.c_str());
  patches_.clear();
  parameter_index_.clear();
  int next = 3; // after diffusivity, source, decay
  for (const std::string &name : mesh.patch_names) {
    const config::BoundaryConfig *bc = nullptr;
    for (const auto &e : entries)
      if (e.name == name) bc = &e;
    PetscCheck(bc, mesh.comm, PETSC_ERR_USER_INPUT,
               "%s: scalar.boundaries: boundary '%s' has no scalar condition (add '%s: {type: "
               "value, value: ...}', or type flux or outflow)",
               cfg.file().c_str(), name.c_str(), name.c_str());
    Patch p;
    p.name = name;
    if (bc->type == "value") {
      p.kind = ScalarBoundary::Value;
      p.value = value_options().get(bc->parameters).value;
    } else if (bc->type == "flux") {
      p.kind = ScalarBoundary::Flux;
      p.value = flux_options().get(bc->parameters).flux;
    }
    parameter_index_.push_back(p.kind == ScalarBoundary::Outflow ? -1 : next++);
    patches_.push_back(p);
  }
  PetscFunctionReturn(0);
}

std::vector<physics::FieldSpec> ScalarTerm::fields(int) const {
  physics::FieldSpec f;
  f.name = "scalar";
  f.components = 1;
  f.transient = true;
  f.initial = o_.initial;
  return {f};
}

void ScalarTerm::prescribed_faces(int, std::vector<char> *mask) const {
  mask->assign(mesh_->n_flux_faces, 0);
  for (PetscInt f = 0; f < mesh_->n_flux_faces; ++f) {
    const int p = mesh_->face_patch[f];
    (*mask)[f] = p >= 0 && patches_[p].kind == ScalarBoundary::Value;
  }
}

double ScalarTerm::boundary_value(PetscInt f, int) const {
  const int p = mesh_->face_patch[f];
  return p >= 0 && patches_[p].kind == ScalarBoundary::Value ? patches_[p].value : 0.0;
}

void ScalarTerm::flux(const FaceView &face, double *M) const {
  const double F = M[flow_->first_unknown()];
  if (!face.boundary()) {
    M[s()] = physics::scalar_interior_flux(s(), *face.L, *face.R, *face.g, *fp_, o_.diffusivity, F);
    return;
  }
  const Patch &p = patches_[mesh_->face_patch[face.f]];
  if (p.kind == ScalarBoundary::Value)
    M[s()] = physics::scalar_value_flux(s(), *face.L, *face.g, *fp_, o_.diffusivity, F, p.value);
  else
    M[s()] = physics::scalar_gradient_flux(s(), *face.L, *face.g, *fp_, F,
                                           p.kind == ScalarBoundary::Flux ? p.value : 0.0);
}

void ScalarTerm::flux_dw(const FaceView &face, physics::FluxJacobian &J) const {
  // M = M(phi, F(w)): dM/dw = dM/dF dF/dw (the flow's row of F, already in J) + dM/dphi
  double M[physics::kMaxVars];
  flow_->flux(face, M);
  const double F = M[flow_->first_unknown()];
  physics::ScalarFluxDerivatives D;
  if (!face.boundary())
    D = physics::scalar_interior_flux_dw(s(), *face.L, *face.R, *face.g, *fp_, o_.diffusivity, F);
  else {
    const Patch &p = patches_[mesh_->face_patch[face.f]];
    if (p.kind == ScalarBoundary::Value)
      D = physics::scalar_value_flux_dw(s(), *face.L, *face.g, *fp_, o_.diffusivity, F, p.value);
    else
      D = physics::scalar_gradient_flux_dw(s(), *face.L, *face.g, *fp_, F,
                                           p.kind == ScalarBoundary::Flux ? p.value : 0.0);
  }
  const int q = flow_->first_unknown(), k = s(), nv = k + 1;
  for (int v = 0; v < nv; ++v) {
    J.dwL[k][v] = D.F * J.dwL[q][v];
    J.dwR[k][v] = D.F * J.dwR[q][v];
    for (int c = 0; c < 3; ++c) {
      J.dgL[k][v][c] = D.F * J.dgL[q][v][c];
      J.dgR[k][v][c] = D.F * J.dgR[q][v][c];
    }
  }
  J.dwL[k][k] += D.wL;
  J.dwR[k][k] += D.wR;
  for (int c = 0; c < 3; ++c) {
    J.dgL[k][k][c] += D.gL[c];
    J.dgR[k][k][c] += D.gR[c];
  }
}

void ScalarTerm::flux_reverse(const FaceView &face, const double *lambda, physics::FluxBar &bar,
                              double *parameter_bar) const {
  const double l = lambda[s()];
  if (l == 0) return;
  double M[physics::kMaxVars];
  flow_->flux(face, M);
  const double F = M[flow_->first_unknown()];
  physics::ScalarFluxBar sb;
  int p = -1;
  if (!face.boundary())
    physics::scalar_interior_flux_reverse(s(), *face.L, *face.R, *face.g, *fp_, o_.diffusivity, F,
                                          l, bar, sb);
  else {
    p = mesh_->face_patch[face.f];
    const Patch &pc = patches_[p];
    if (pc.kind == ScalarBoundary::Value)
      physics::scalar_value_flux_reverse(s(), *face.L, *face.g, *fp_, o_.diffusivity, F, pc.value,
                                         l, bar, sb);
    else
      physics::scalar_gradient_flux_reverse(s(), *face.L, *face.g, *fp_, F,
                                            pc.kind == ScalarBoundary::Flux ? pc.value : 0.0, l,
                                            bar, sb);
  }
  parameter_bar[0] += sb.kappa;
  if (p >= 0 && patches_[p].kind == ScalarBoundary::Value)
    bar.bv[s()] += sb.boundary; // to the value's parameter through boundary_reverse
  else if (p >= 0 && patches_[p].kind == ScalarBoundary::Flux)
    parameter_bar[patch_parameter(p)] += sb.boundary;
  // F's adjoint through the flow's own reverse (its flux_reverse writes to bar only)
  if (sb.F != 0) {
    double lf[physics::kMaxVars] = {};
    lf[flow_->first_unknown()] = sb.F;
    flow_->flux_reverse(face, lf, bar, nullptr);
  }
}

void ScalarTerm::source(const CellView &cell, double *r) const {
  r[s()] += physics::scalar_source(s(), *cell.s, cell.volume, fp_->rho, o_.decay, o_.source);
}

void ScalarTerm::source_dw(const CellView &cell, SourceJacobian &J) const {
  J.dw[s()][s()] += fp_->rho * cell.volume * o_.decay;
}

void ScalarTerm::source_reverse(const CellView &cell, const double *lambda, SourceBar &bar,
                                double *parameter_bar) const {
  const double l = lambda[s()], rho = fp_->rho, phi = cell.s->w[s()];
  bar.s.w[s()] += l * rho * cell.volume * o_.decay;
  bar.volume += l * rho * (o_.decay * phi - o_.source);
  parameter_bar[1] -= l * rho * cell.volume;       // source q
  parameter_bar[2] += l * rho * cell.volume * phi; // decay k
}

std::vector<TermParameter> ScalarTerm::parameters() const {
  auto *self = const_cast<ScalarTerm *>(this); // the registry sets values through the pointers
  std::vector<TermParameter> out = {{"scalar.diffusivity", &self->o_.diffusivity},
                                    {"scalar.source", &self->o_.source},
                                    {"scalar.decay", &self->o_.decay}};
  for (std::size_t p = 0; p < patches_.size(); ++p)
    if (patches_[p].kind != ScalarBoundary::Outflow)
      out.push_back({"scalar.boundaries." + patches_[p].name +
                         (patches_[p].kind == ScalarBoundary::Value ? ".value" : ".flux"),
                     &self->patches_[p].value});
  return out;
}

void ScalarTerm::boundary_reverse(PetscInt f, const BoundaryDataBar &bar, double *parameter_bar,
                                  Vec3<double> *, Vec3<double> *) const {
  const int p = mesh_->face_patch[f];
  if (p < 0 || patches_[p].kind != ScalarBoundary::Value) return;
  parameter_bar[patch_parameter(p)] += bar.value[s()];
}

} // namespace karman::discretization
