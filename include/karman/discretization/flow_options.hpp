// The case-file sections of the flow, owned by the discretization: `fluid`, `reference`,
// `initial` and the scheme keys of `solver` (stabilization, upwind).  The residual parses them
// once (FlowResidual::setup: FluxParameters, reference()); whoever needs the density, the
// viscosity or a reference value reads the residual's, so each physical constant has one source.
#pragma once

#include "karman/config/section_options.hpp"

#include <string>

namespace karman::discretization {

struct FluidOptions {
  double density = 1.0;    ///< rho
  double viscosity = 1e-3; ///< kinematic viscosity nu
};

struct ReferenceOptions {
  double velocity = 1;        ///< U: force coefficients and the stabilization coefficient
  double length = 1;          ///< L: 2D reference area per unit depth, moment arm
  double area = 0;            ///< S in 3D (0: length^2)
  Vec3<double> moment_center; ///< point about which moments are taken
  double pressure = 0;        ///< reference pressure of the pressure coefficient
};

struct InitialOptions {
  Vec3<double> velocity; ///< uniform initial velocity
  double pressure = 0;   ///< uniform initial pressure
  std::string file;      ///< fields of another run (its flow.h5), relative to the case file
};

/// The convected face velocity's reconstruction (physics/flux_kernels.hpp, FluxParameters::blend).
enum class Reconstruction {
  Auto,     ///< blended on meshes with tetrahedra, gradient on the others
  Gradient, ///< the least-squares gradient's extrapolation (blend 0)
  Blended   ///< its mean with the reconstruction along the centroids (blend 1/2)
};

/// The upwind part of the convected momentum (physics/flux_kernels.hpp,
/// FluxParameters::centroid_dissipation).
enum class Dissipation {
  Auto,     ///< along the centroids on meshes with tetrahedra, the face values' on the others
  Face,     ///< b a/2 (u_L^f - u_R^f): the face values' difference
  Centroids ///< -b a/2 ((u_R - u_L) - (G_L + G_R)/2 . d): along the cell centroids
};

/// The scheme keys of the `solver` section that define the residual.
struct SchemeOptions {
  double stabilization = 1; ///< scale of the pressure stabilization
  double upwind = 1;        ///< upwind fraction of the convected face velocity
  Reconstruction reconstruction = Reconstruction::Auto;
  Dissipation dissipation = Dissipation::Auto;
};

const config::SectionOptions<FluidOptions> &fluid_options();
const config::SectionOptions<ReferenceOptions> &reference_options();
const config::SectionOptions<InitialOptions> &initial_options();
const config::SectionOptions<SchemeOptions> &scheme_options();

} // namespace karman::discretization
