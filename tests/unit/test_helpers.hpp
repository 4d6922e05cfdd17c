// Helpers shared by the tests: meshing small test geometries and loading them.
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/mesh/mesh.hpp"

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace karman::test {

/// Path of a file in tests/data.
std::string data_file(const std::string &name);

/// Meshes tests/data/<geo> with gmsh at `level` (cached per process in the build tree) and
/// returns the .msh path.  Rank 0 meshes; collective on `comm`.
std::string mesh_file(MPI_Comm comm, const std::string &geo, int level, int dim);

/// Loads a test mesh on `comm` with the given boundary names; REQUIREs success.
void load(MPI_Comm comm, const std::string &geo, int level, int dim,
          const std::vector<std::string> &boundaries, mesh::Mesh *mesh);

/// The DFG benchmark channel geometry (cases/dfg-2d1/dfg-channel.geo).
inline std::string dfg_geo() {
  return std::string(KARMAN_SOURCE_DIR) + "/cases/dfg-2d1/dfg-channel.geo";
}

/// The DFG 3D-1Z channel's case (cases/dfg-3d1z/case.yaml) without its solver section, for the
/// tetrahedral test meshes (dfg-3d-tet-coarse.geo, dfg-3d-coarse-tet.geo)
inline const std::string kDfg3dChannel = R"(mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1, area: 0.041}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.45, direction: [1, 0, 0], profile: parabolic, profile_axis: y, profile_range: [0, 0.41], profile_axis2: z, profile_range2: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
)";

/// The steady DFG 2D-1 case (Re = 20, drag of the cylinder as objective) on the DFG test mesh
/// of `level`, as case-file text, followed by `extra` (more sections).  Collective (meshes).
std::string dfg_case_yaml(int level, const std::string &extra = "");
/// The same case's sections after `mesh:` (for a case with its own mesh entry).
std::string dfg_case_sections(const std::string &extra = "");
/// The RANS TMR flat plate (cases/tmr-flat-plate, level 0, SA-neg, Re 5e6 per unit length, drag
/// of the plate as objective) as case-file text, followed by `extra` (more sections).
std::string flat_plate_rans_yaml(const std::string &extra = "");

/// An empty (clean) or existing directory under the test work directory; collective.
std::string work_dir(const std::string &name, bool clean = true);

/// Sets PETSc options {name, value (nullptr: none)} in the global options database for the life
/// of the object (cleared again also when a REQUIRE throws).
struct ScopedOptions {
  explicit ScopedOptions(std::initializer_list<std::pair<const char *, const char *>> options) {
    for (const auto &[name, value] : options) {
      set = PetscOptionsSetValue(nullptr, name, value) == 0 && set;
      names.push_back(name);
    }
  }
  ~ScopedOptions() {
    for (const auto &name : names) PetscOptionsClearValue(nullptr, name.c_str());
  }
  ScopedOptions(const ScopedOptions &) = delete;
  ScopedOptions &operator=(const ScopedOptions &) = delete;

  bool set = true; ///< every option was set
  std::vector<std::string> names;
};

/// |b - op(A) x| / |b| (2-norm; op(A) = A^T with transpose).  Collective.
double relative_residual(Mat A, bool transpose, Vec b, Vec x);

/// |a - b| / |b| in the given norm.  Collective.
double relative_difference(Vec a, Vec b, NormType type = NORM_INFINITY);

/// A known function of the serial cell index for round-trip tests.
inline double serial_value(PetscInt gid, int comp) {
  return 0.25 * gid + comp;
}

/// The Taylor-Green vortex of the unsteady tests: u = -cos(pi x) sin(pi y) F, v = sin(pi x)
/// cos(pi y) F, F = exp(-2 pi^2 nu t), nu 0.05, an exact Navier-Stokes solution, in the unit square
/// (square-mixed.geo, level 0: h = 1/8) with the exact velocity on its walls; BDF2, Newton to
/// rtol 1e-12.
struct TaylorGreen {
  static constexpr double nu = 0.05;
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
  static Vec3<double> velocity(const Vec3<double> &x, double t);
  /// Loads the case (with `overrides`) and the mesh, sets the walls' velocity.  Collective.
  void setup(const std::vector<std::string> &overrides = {});
  /// w = the exact field at t = 0 (pressure 0).
  void initial_state(Vec w) const;
};

/// Kovasznay flow at Re 40 (Kovasznay 1948): lambda = Re / 2 - sqrt(Re^2 / 4 + 4 pi^2), the
/// exact velocity and pressure (the pressure up to a constant).
constexpr double kKovasznayRe = 40;
inline double kovasznay_lambda() {
  return kKovasznayRe / 2 - std::sqrt(kKovasznayRe * kKovasznayRe / 4 + 4 * M_PI * M_PI);
}
inline Vec3<double> kovasznay_velocity(const Vec3<double> &x) {
  const double l = kovasznay_lambda();
  return Vec3<double>(1 - std::exp(l * x[0]) * std::cos(2 * M_PI * x[1]),
                      l / (2 * M_PI) * std::exp(l * x[0]) * std::sin(2 * M_PI * x[1]), 0.0);
}
inline double kovasznay_pressure(const Vec3<double> &x) {
  return 0.5 * (1 - std::exp(2 * kovasznay_lambda() * x[0]));
}

} // namespace karman::test
