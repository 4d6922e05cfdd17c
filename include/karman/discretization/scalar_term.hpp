// A passive scalar as a residual term (residual_term.hpp): the field `scalar` (1 component, time
// derivative), its face fluxes and cell source (physics/scalar_transport.hpp) carried by the
// flow's volume flux, and its boundary conditions, declared by the optional case section
//   scalar:
//     diffusivity: 0.01        # kappa [m^2/s] (a temperature: k / (rho c_p); nu / Pr)
//     source: 0                # q, volumetric source per unit mass
//     decay: 0                 # k >= 0, first-order decay rate
//     initial: 0               # uniform initial value
//     boundaries:              # every boundary of the mesh, one of
//       inlet: {type: value, value: 0}       # prescribed phi
//       cylinder: {type: value, value: 1}    # a wall at constant temperature
//       walls: {type: flux, flux: 0}         # prescribed diffusive flux into the fluid (0:
//                                            # adiabatic)
//       outlet: {type: outflow}              # zero diffusive flux, carried out by the flow
// The flux reads the flow's volume flux F = M[continuity] of the same face, which the flow term
// (placed first) has written: flux(), flux_dw() (its row of J) and flux_reverse() (the flow's
// reverse for F's adjoint) follow F through the flow's kernels.  Parameters: scalar.diffusivity,
// scalar.source, scalar.decay and each boundary's value or flux (scalar.boundaries.NAME.value).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/config/case_schema.hpp"
#include "karman/discretization/residual_term.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh.hpp"

namespace karman::discretization {

/// The scalar's boundary types.
enum class ScalarBoundary { Value, Flux, Outflow };

struct ScalarOptions {
  double diffusivity = 0, source = 0, decay = 0, initial = 0;
};

/// Adds the `scalar` section and its boundary types to the schema.
void declare_scalar(config::Schema &schema);

class ScalarTerm : public ResidualTerm {
public:
  /// The scalar of the case's `scalar` section on `mesh`, carried by `flow` (the flow's term,
  /// placed before this one; its volume flux is unknown `flow.first_unknown()`'s flux) with the
  /// fluid and scheme parameters `fp`.  Every mesh boundary needs a scalar condition.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg,
                       const ResidualTerm &flow, const physics::FluxParameters<double> &fp);

  std::vector<physics::FieldSpec> fields(int dim) const override;
  void prescribed_faces(int field, std::vector<char> *mask) const override;
  double boundary_value(PetscInt f, int k) const override;
  PetscErrorCode evaluate_boundary_data(double, long) override { return 0; }

  void flux(const FaceView &face, double *M) const override;
  void flux_dw(const FaceView &face, physics::FluxJacobian &J) const override;
  void flux_reverse(const FaceView &face, const double *lambda, physics::FluxBar &bar,
                    double *parameter_bar) const override;

  bool has_source() const override { return true; }
  void source(const CellView &cell, double *r) const override;
  void source_dw(const CellView &cell, SourceJacobian &J) const override;
  void source_reverse(const CellView &cell, const double *lambda, SourceBar &bar,
                      double *parameter_bar) const override;

  std::vector<TermParameter> parameters() const override;
  void boundary_reverse(PetscInt f, const BoundaryDataBar &bar, double *parameter_bar,
                        Vec3<double> *xf_bar, Vec3<double> *S_bar) const override;

  /// The condition on mesh boundary patch p, and its value (Value) or flux (Flux).
  ScalarBoundary kind(int patch) const { return patches_[patch].kind; }
  double value(int patch) const { return patches_[patch].value; }
  const std::string &patch_name(int patch) const { return patches_[patch].name; }
  const ScalarOptions &options() const { return o_; }

private:
  struct Patch {
    std::string name;
    ScalarBoundary kind = ScalarBoundary::Outflow;
    double value = 0; ///< phi_b (Value) or g (Flux)
  };
  /// The flow's volume flux F through the face and, if dF is given, its derivatives (row of the
  /// flow's continuity unknown in J, written by the flow term).
  int s() const { return first_; }
  /// parameters(): diffusivity, source, decay, then one per Value/Flux patch in mesh order.
  int patch_parameter(int patch) const { return parameter_index_[patch]; }

  const mesh::Mesh *mesh_ = nullptr;
  const ResidualTerm *flow_ = nullptr;
  const physics::FluxParameters<double> *fp_ = nullptr;
  ScalarOptions o_;
  std::vector<Patch> patches_;
  std::vector<int> parameter_index_; ///< per patch, its parameter's index, or -1
};

} // namespace karman::discretization
