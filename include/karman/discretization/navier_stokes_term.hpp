// The incompressible Navier-Stokes equations as a residual term (residual_term.hpp): the fields
// pressure (continuity rows) and velocity (momentum rows), the face fluxes of
// physics/flux_kernels.hpp on each kind of face (interior, velocity Dirichlet, pressure outlet,
// slip) with their derivatives and reverse mode, and the boundary data of the flow's boundary
// conditions (boundary_conditions.hpp): which faces prescribe the pressure and the velocity, the
// values, and the reverse mode of the prescribed velocity and pressure to the boundary
// parameters.  Its parameters are those of the boundary units (flow_boundaries.hpp), patch by
// patch in mesh order, named boundaries.<patch>.<key>; patches with a custom velocity (tests)
// have none.
//
// With a turbulence model (a later term with provides_eddy_viscosity, wired by FlowResidual::setup
// through use_eddy_viscosity) each face's viscosity is nu + nu_t,f (the model's face value, 0 on
// walls): the kernels run with it (viscous flux and the pressure-stabilization coefficient D),
// interior faces add the transposed stress of (nu + nu_t)(grad u + grad u^T)
// (physics::stress_transpose_flux), and the chain rule through nu_t,f gives the Jacobian's columns
// of the model's unknown in the flow's rows (dM/dnu from the *_dnu kernels) and the reverse mode's
// adjoint of that unknown.  On walls nu_t,f = 0, so the wall shear stress of forces and
// objectives (physics::dirichlet_face_stress with nu) is the flux's.  Without a model the fluxes
// are the laminar ones, unchanged.
#pragma once

#include "karman/discretization/boundary_conditions.hpp"
#include "karman/discretization/residual_term.hpp"

namespace karman::discretization {

class NavierStokesTerm : public ResidualTerm {
public:
  /// The flow with the boundary conditions `bcs` and the fluid and scheme parameters `fp` (both
  /// owned by the caller, who keeps them alive and re-classifies the faces).
  NavierStokesTerm(const mesh::Mesh &mesh, const geometry::Geometry<double> &geometry,
                   BoundaryConditions &bcs, const physics::FluxParameters<double> &fp)
      : mesh_(&mesh), geom_(&geometry), bcs_(&bcs), fp_(&fp) {}

  std::vector<physics::FieldSpec> fields(int dim) const override {
    return physics::navier_stokes_fields(dim);
  }
  void prescribed_faces(int field, std::vector<char> *mask) const override {
    *mask = bcs_->prescribed()[field];
  }
  double boundary_value(PetscInt f, int k) const override {
    return k == 0 ? bcs_->pressure(f) : bcs_->velocity(f)[k - 1];
  }
  PetscErrorCode evaluate_boundary_data(double t, long n) override {
    return bcs_->evaluate(*mesh_, *geom_, t, n);
  }

  void flux(const FaceView &face, double *M) const override;
  void flux_dw(const FaceView &face, physics::FluxJacobian &J) const override;
  void flux_reverse(const FaceView &face, const double *lambda, physics::FluxBar &bar,
                    double *parameter_bar) const override;

  std::vector<TermParameter> parameters() const override;
  /// The turbulence model whose eddy viscosity enters the viscous flux (a term placed after this
  /// one; null: laminar).  Set by FlowResidual::setup once the terms exist.
  void use_eddy_viscosity(const ResidualTerm *model) { model_ = model; }
  void boundary_reverse(PetscInt f, const BoundaryDataBar &bar, double *parameter_bar,
                        Vec3<double> *xf_bar, Vec3<double> *S_bar) const override;

private:
  /// The index of patch p's first parameter in parameters().
  int parameter_offset(int patch) const;
  /// The fluid and scheme parameters of `face`: fp_ with nu + nu_t,f (t: the model's face value)
  /// with a turbulence model, fp_ itself without.
  physics::FluxParameters<double> face_parameters(const FaceView &face, FaceEddyViscosity *t) const;
  /// The laminar-form kernels of the face's kind with the parameters fp.
  void kernel_flux(const FaceView &face, const physics::FluxParameters<double> &fp,
                   double *M) const;

  const mesh::Mesh *mesh_;
  const geometry::Geometry<double> *geom_;
  BoundaryConditions *bcs_;
  const physics::FluxParameters<double> *fp_;
  const ResidualTerm *model_ = nullptr;
};

} // namespace karman::discretization
