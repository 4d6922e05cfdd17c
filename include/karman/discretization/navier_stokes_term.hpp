// The incompressible Navier-Stokes equations as a residual term (residual_term.hpp): the fields
// pressure (continuity rows) and velocity (momentum rows), the face fluxes of
// physics/flux_kernels.hpp on each kind of face (interior, velocity Dirichlet, pressure outlet,
// slip) with their derivatives and reverse mode, and the boundary data of the flow's boundary
// conditions (boundary_conditions.hpp): which faces prescribe the pressure and the velocity, the
// values, and the reverse mode of the prescribed velocity and pressure to the boundary
// parameters.  Its parameters are those of the boundary units (flow_boundaries.hpp), patch by
// patch in mesh order, named boundaries.<patch>.<key>; patches with a custom velocity (tests)
// have none.
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
  void boundary_reverse(PetscInt f, const BoundaryDataBar &bar, double *parameter_bar,
                        Vec3<double> *xf_bar, Vec3<double> *S_bar) const override;

private:
  /// The index of patch p's first parameter in parameters().
  int parameter_offset(int patch) const;

  const mesh::Mesh *mesh_;
  const geometry::Geometry<double> *geom_;
  BoundaryConditions *bcs_;
  const physics::FluxParameters<double> *fp_;
};

} // namespace karman::discretization
