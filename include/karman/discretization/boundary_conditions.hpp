// Boundary conditions by Gmsh physical name: what each boundary face imposes and the
// values it imposes (at time t).  The boundary types and the prescribed velocity of each
// (wall, velocity-inlet, blowing-suction, far-field) are the kernels of
// physics/boundary_kernels.hpp, with their reverse mode beside them; this class parses the
// case once into those types and evaluates the kernels on the local boundary faces.
//
//   pressure-outlet  p_b, du/dn = 0                                   (pressure outlet)
//   symmetry         u . n = 0, no shear                              (slip)
//   far-field        u_b = U_inf where U_inf . n < 0, else p_b = p_inf
// The kind of a far-field face is decided once from the geometry, so the residual stays
// smooth in the state.
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/physics/boundary_kernels.hpp"
#include "karman/physics/time_function.hpp"

#include <functional>
#include <string>
#include <vector>

namespace karman::discretization {

enum class FaceKind : char { Interior, VelocityDirichlet, PressureOutlet, Slip };

/// One boundary's condition with its parameters, resolved from the case file.
struct PatchCondition {
  std::string name;
  physics::BoundaryShape shape;    ///< type, centre of rotation, inlet direction, profile
  Vec3<double> velocity;           ///< wall translation, or far-field U_inf
  physics::TimeFunction omega;     ///< wall rotation rate about e_z
  physics::TimeFunction speed;     ///< inlet speed (uniform value or parabolic peak)
  physics::TimeFunction amplitude; ///< jet normal velocity
  double pressure = 0;             ///< outlet / far-field pressure
  /// Replaces the velocity of a velocity-Dirichlet patch (tests with exact solutions).
  std::function<Vec3<double>(const Vec3<double> &x, double t)> custom_velocity;

  physics::BoundaryType type() const { return shape.type; }
  /// The differentiable parameters of the prescribed velocity at time t, level n; *beyond is
  /// set when a per-step function has no value for level n.
  physics::BoundaryParameters<double> parameters(double t, long n, bool *beyond) const;
};

class BoundaryConditions {
public:
  /// Reads the conditions of every patch of `mesh` from the case.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg);

  /// Fixes the kind of every boundary flux face (far-field faces by the sign of U_inf . S).
  void classify(const mesh::Mesh &mesh, const geometry::Geometry<double> &g);

  /// Evaluates the imposed values at time t, time level n (for per-step time functions).
  /// Collective: a per-step function used beyond its last value is an error.
  PetscErrorCode evaluate(const mesh::Mesh &mesh, const geometry::Geometry<double> &g, double t,
                          long n);
  /// True if some imposed value depends on time.
  bool time_dependent() const;

  FaceKind kind(PetscInt f) const { return kind_[f]; }
  const Vec3<double> &velocity(PetscInt f) const { return velocity_[f]; }
  /// The parameters of patch p's prescribed velocity at the time of the last evaluate().
  const physics::BoundaryParameters<double> &parameters(int p) const { return parameters_[p]; }
  double pressure(PetscInt f) const { return pressure_[f]; }
  /// Rotation rate omega(t) of the rigidly moving wall that face f belongs to (0 elsewhere).
  double rotation(PetscInt f) const { return rotation_[f]; }
  /// Per field of the flow (pressure, velocity) and face: is the field prescribed there?
  const std::vector<std::vector<char>> &prescribed() const { return prescribed_; }
  /// True when some face on some rank fixes the pressure level (else it is pinned).
  bool pressure_level_fixed() const { return pressure_fixed_; }

  PatchCondition &patch(int p) { return patches_[p]; }
  const PatchCondition &patch(int p) const { return patches_[p]; }
  std::size_t n_patches() const { return patches_.size(); }
  /// Patch indices of wall-type boundaries (wall, blowing-suction: physics::is_wall).
  std::vector<int> wall_patches() const;

private:
  std::vector<PatchCondition> patches_;
  std::vector<FaceKind> kind_;
  std::vector<Vec3<double>> velocity_;
  std::vector<physics::BoundaryParameters<double>> parameters_; ///< per patch
  std::vector<double> pressure_, rotation_;
  std::vector<std::vector<char>> prescribed_;
  bool pressure_fixed_ = false;
};

} // namespace karman::discretization
