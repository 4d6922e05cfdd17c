// The Spalart-Allmaras turbulence model (SA-neg, physics/spalart_allmaras.hpp) as a residual term
// (residual_term.hpp), declared by the optional case section
//   turbulence:
//     model: sa-neg            # the one model (SA-neg of ICCFD7-1902 / TMR)
//     ft2: true                # with the laminar suppression term f_t2 (TMR "SA"), or SA-noft2
//     freestream_ratio: 3      # nu~/nu at inlets and on the inflow part of far fields (TMR: 3)
//     initial_ratio: 3         # uniform initial nu~/nu
//     convection_order: 1      # 1: first-order upwind (TMR's reference runs), 2: linear
//                              # reconstruction
// Its field `nu_tilde_ratio` (1 component, transient) is the scaled unknown chi = nu~/nu, so that
// its columns and rows are O(1) beside the flow's (the linear systems stay balanced); its rows are
// the nu~ equation times rho/nu:
//   rho [ d chi/dt + div(u chi) - div(k(nu~) grad chi) ] = rho Q(nu~, d, grad u, grad nu~) / nu,
//   k(nu~) = (nu + nu~ f_n) / sigma  (physics::sa_diffusion_coefficient),  nu~ = nu chi,
// with the cb2 |grad nu~|^2 / sigma part of the diffusion in the source Q (physics::sa_source).
// Face fluxes: the scalar kernels of physics/scalar_transport.hpp carried by the flow's volume
// flux F (read from the flow term's row, as the passive scalar does) with full upwinding (b = 1,
// whatever the flow's solver.upwind) and the face coefficient k(nu chi_f):
//   interior faces  chi_f = (chi_L + chi_R)/2 (cell values; the chain rule through k enters dM/dw)
//   walls (the flow's wall-type patches)  chi_b = 0 (value), k(0) = nu / sigma
//   velocity inlets, the inflow faces of far fields (velocity-Dirichlet faces that are no walls)
//                   chi_b = freestream_ratio (value, upwinded: an outflow face carries chi out)
//   pressure outlets, the outflow faces of far fields: zero gradient (no diffusive flux)
//   symmetry (slip): no flux (F = 0, no diffusive flux)
// Cell source: Q_c = -rho V sa_source(nu chi_c, nu, d_c, G_c^u, nu G_c^chi) / nu with d_c the
// distance of the centroid to the nearest wall face (FlowResidual::wall_distance, recomputed by
// move_to), whose adjoint goes to SourceBar::wall_distance.  The flow's viscous flux takes the eddy
// viscosity of each face from face_eddy_viscosity (navier_stokes_term.hpp).  The term has no
// parameters of its own (the model's constants are not design variables); the viscosity nu enters
// everywhere (FluxBar:: nu, SourceBar::nu).  Tests: tests/unit/test_spalart_allmaras_term.cpp.
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/config/case_schema.hpp"
#include "karman/discretization/boundary_conditions.hpp"
#include "karman/discretization/residual_term.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/physics/spalart_allmaras.hpp"

namespace karman::discretization {

struct TurbulenceOptions {
  std::string model = "sa-neg";
  bool ft2 = true;
  double freestream_ratio = 3, initial_ratio = 3;
  long convection_order = 1;
};

/// Adds the `turbulence` section to the schema.
void declare_turbulence(config::Schema &schema);

class SpalartAllmarasTerm : public ResidualTerm {
public:
  /// The model of the case's `turbulence` section on `mesh`, carried by `flow` (the flow's term,
  /// placed before this one) whose boundary conditions `bcs` tell walls, inflow, outflow and
  /// symmetry faces, with the fluid and scheme parameters `fp`.  The flow needs a wall-type
  /// boundary.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg,
                       const ResidualTerm &flow, const BoundaryConditions &bcs,
                       const physics::FluxParameters<double> &fp);

  std::vector<physics::FieldSpec> fields(int dim) const override;
  void prescribed_faces(int field, std::vector<char> *mask) const override;
  double boundary_value(PetscInt f, int k) const override;
  PetscErrorCode evaluate_boundary_data(double, long) override { return 0; }

  void flux(const FaceView &face, double *M) const override;
  void flux_dw(const FaceView &face, physics::FluxJacobian &J) const override;
  void flux_reverse(const FaceView &face, const double *lambda, physics::FluxBar &bar,
                    double *parameter_bar) const override;

  /// nu_t,f = (nu_t(nu chi_L) + nu_t(nu chi_R))/2 on interior faces, nu_t(nu chi_b) on faces with
  /// a prescribed chi (0 on walls), nu_t(nu chi_L) on outflow and symmetry faces.
  bool provides_eddy_viscosity() const override { return true; }
  FaceEddyViscosity face_eddy_viscosity(const FaceView &face) const override;

  std::vector<int> wall_patches() const override { return walls_; }
  bool has_source() const override { return true; }
  void source(const CellView &cell, double *r) const override;
  void source_dw(const CellView &cell, SourceJacobian &J) const override;
  void source_reverse(const CellView &cell, const double *lambda, SourceBar &bar,
                      double *parameter_bar) const override;

  void boundary_reverse(PetscInt, const BoundaryDataBar &, double *, Vec3<double> *,
                        Vec3<double> *) const override {}

  const TurbulenceOptions &options() const { return o_; }

private:
  /// How a boundary face treats chi.
  enum class Face { Value, ZeroGradient };
  Face face_type(PetscInt f) const;
  /// chi_b of a Value face.
  double face_value(PetscInt f) const;
  /// The unknown chi.
  int k() const { return first_; }
  /// The flux parameters of the chi equation: the flow's, fully upwind.
  physics::FluxParameters<double> flux_parameters() const;
  /// The chi flux of `face` at the flow's volume flux F, with the diffusion coefficient kappa of
  /// the face and its derivative dkappa/dchi_L = dkappa/dchi_R (interior) and d kappa/d nu.
  double face_flux(const FaceView &face, double F, double *kappa, double *dkappa_dchi,
                   double *dkappa_dnu) const;

  const mesh::Mesh *mesh_ = nullptr;
  const ResidualTerm *flow_ = nullptr;
  const BoundaryConditions *bcs_ = nullptr;
  const physics::FluxParameters<double> *fp_ = nullptr;
  TurbulenceOptions o_;
  physics::SAOptions model_;
  std::vector<int> walls_;       ///< the flow's wall-type patches
  std::vector<char> wall_patch_; ///< per patch: a wall
};

} // namespace karman::discretization
