// The flow's case-file sections (see include/karman/discretization/flow_options.hpp).
#include "karman/discretization/flow_options.hpp"

namespace karman::discretization {

using namespace config::key;
using config::KeyType;
using config::SectionOptions;

const SectionOptions<FluidOptions> &fluid_options() {
  static const auto options =
      SectionOptions<FluidOptions>("fluid", "fluid properties (incompressible, Newtonian)", true)
          .key(positive("density", "1.0", "density rho [kg/m^3]"), &FluidOptions::density)
          .key(positive("viscosity", "1.0e-3", "kinematic viscosity nu [m^2/s]"),
               &FluidOptions::viscosity);
  return options;
}

const SectionOptions<ReferenceOptions> &reference_options() {
  // every key is part of the problem: reference.velocity scales the stabilization and the upwind
  // smoothing (flux_kernels.hpp), the others the reported coefficients
  static const auto options =
      SectionOptions<ReferenceOptions>(
          "reference", "reference values for force coefficients c = 2 F / (rho U^2 S)", true)
          .key(positive("velocity", "1.0", "reference velocity U [m/s]"),
               &ReferenceOptions::velocity)
          .key(positive("length", "1.0", "reference length (2D: S = length per unit depth)"),
               &ReferenceOptions::length)
          .key(nonnegative("area", "0.0", "reference area S in 3D; 0 means length^2"),
               &ReferenceOptions::area)
          .key(typed("moment_center", KeyType::RealVector, "[0, 0, 0]",
                     "point about which moments are taken"),
               &ReferenceOptions::moment_center)
          .key(real("pressure", "0.0", "reference pressure of the pressure coefficient"),
               &ReferenceOptions::pressure);
  return options;
}

const SectionOptions<InitialOptions> &initial_options() {
  static const auto options =
      SectionOptions<InitialOptions>("initial", "initial state (steady: the first Newton iterate)")
          .key(typed("velocity", KeyType::RealVector, "[0, 0, 0]",
                     "uniform initial velocity (turned by a far field's angle_of_attack, like its "
                     "velocity)"),
               &InitialOptions::velocity)
          .key(real("pressure", "0.0", "uniform initial pressure"), &InitialOptions::pressure)
          .key(typed("file", KeyType::String, "''",
                     "HDF5 fields of another run (its OUTDIR/flow.h5) used as the initial state "
                     "instead of the uniform values; relative to the case file.  A file of another "
                     "mesh (a coarser level) is interpolated: linear least-squares fit through the "
                     "nearest source cell centres; fields the file lacks start from their uniform "
                     "values"),
               &InitialOptions::file);
  return options;
}

const SectionOptions<SchemeOptions> &scheme_options() {
  static const auto options =
      SectionOptions<SchemeOptions>("solver", "nonlinear and linear solvers, and the scheme", true)
          .key(positive("stabilization", "1.0",
                        "scale of the pressure-stabilising (Rhie-Chow-type) term of the face mass "
                        "flux"),
               &SchemeOptions::stabilization)
          .key(bounded("upwind", "1.0",
                       "upwind fraction of the convected face velocity: 1 second-order upwind "
                       "(most robust), 0 the centred mean of the two linear reconstructions (no "
                       "numerical dissipation), between: a blend",
                       0.0, 1.0),
               &SchemeOptions::upwind)
          .choice(choice("reconstruction", "auto",
                         "the convected face velocity: gradient (the least-squares gradient's "
                         "extrapolation), blended (its mean with the extrapolation along the "
                         "two cell centroids: on Gmsh's unstructured tetrahedra the gradient's "
                         "alone makes discrete equations where Newton stalls) or auto (blended "
                         "on meshes with tetrahedra, gradient on the others)",
                         {}),
                  &SchemeOptions::reconstruction,
                  {{"auto", Reconstruction::Auto},
                   {"gradient", Reconstruction::Gradient},
                   {"blended", Reconstruction::Blended}})
          .choice(choice("dissipation", "auto",
                         "the upwind part of the convected momentum: face (the difference of "
                         "the two sides' convected face values), centroids (the jump along the "
                         "cell centroids less the gradients' prediction of it: on Gmsh "
                         "tetrahedral meshes whose Newton solve stalls with face, it converges; "
                         "results/tet-diagnosis.md sections 10-11) or auto (centroids on meshes "
                         "with tetrahedra, face on the others)",
                         {}),
                  &SchemeOptions::dissipation,
                  {{"auto", Dissipation::Auto},
                   {"face", Dissipation::Face},
                   {"centroids", Dissipation::Centroids}});
  return options;
}

} // namespace karman::discretization
