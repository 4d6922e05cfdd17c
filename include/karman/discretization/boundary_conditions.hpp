// Boundary conditions by Gmsh physical name: the flow's boundary unit of every patch
// (flow_boundaries.hpp: the registered boundary types), the kind of every boundary face and the
// values the faces impose at time t (velocity, pressure, wall rotation rate).  Parsed once from
// the case; the units' kernels are evaluated on the local boundary faces.
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_boundaries.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace karman::discretization {

/// The boundary types of the case file's `boundaries:` (flow_boundary_types()), their keys.
std::vector<config::VariantSpec> boundary_types();

/// One boundary's condition, resolved from the case file.
struct PatchCondition {
  std::string name;
  const FlowBoundaryType *type = nullptr;
  std::unique_ptr<FlowBoundary> unit;
  /// Replaces the velocity of a velocity-Dirichlet patch (tests with exact solutions).
  std::function<Vec3<double>(const Vec3<double> &x, double t)> custom_velocity;

  /// Walls in the sense of forces and surface output: no-slip walls and blowing/suction patches
  /// (the type's family "wall").
  bool is_wall() const { return type->variant.family == "wall"; }
  const std::string &type_name() const { return type->variant.spec.name; }
};

class BoundaryConditions {
public:
  /// Reads the conditions of every patch of `mesh` from the case.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg);

  /// Fixes the kind of every boundary flux face (far-field faces by the sign of U_inf . S).
  void classify(const mesh::Mesh &mesh, const geometry::Geometry<double> &g);

  /// Evaluates the imposed values at time t, time level n (for per-step time functions).
  /// Collective: a per-step function used beyond its last value is an error, and so are
  /// prescribed velocities whose net volume flux into a domain without a pressure boundary is
  /// more than kMassImbalance of their inflow or outflow (check_mass_balance).
  PetscErrorCode evaluate(const mesh::Mesh &mesh, const geometry::Geometry<double> &g, double t,
                          long n);
  /// True if some imposed value depends on time.
  bool time_dependent() const;

  FaceKind kind(PetscInt f) const { return kind_[f]; }
  const Vec3<double> &velocity(PetscInt f) const { return velocity_[f]; }
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
  /// Patch indices of wall-type boundaries (PatchCondition::is_wall).
  std::vector<int> wall_patches() const;
  /// The far-field boundary whose angle of attack turns the force objectives' and monitors'
  /// directions: the first far field (-1: none; setup() checks that all far fields share the
  /// angle), and that angle [degrees] (0 without a far field; its parameter is
  /// boundaries.NAME.angle_of_attack).
  int stream_patch() const;
  double angle_of_attack() const;

  /// The largest net volume flux through the velocity boundaries of a domain that no boundary
  /// lets mass leave or enter freely (no pressure boundary), as a fraction of the larger of their
  /// inflow and outflow.  Such a flow has no solution unless the flux balances: the continuity
  /// rows sum to it, and the row replaced by p = 0 (flow_residual.hpp) would take all of it, a
  /// mass source in one cell.  A velocity inlet and a velocity outlet of the same profile on
  /// different faces differ by their face sums' quadrature errors: a parabola's midpoint sum
  /// over n equal faces is 1/(2 n^2) above its integral (5 % at 3 faces; DFG 2D-1 level 0:
  /// inlet 0.08226, outlet 0.08251, 0.3 %), which must not be refused.
  static constexpr double kMassImbalance = 5e-2;

private:
  /// The error of evaluate() for an unbalanced closed domain (kMassImbalance), naming each
  /// patch's flux.  Collective.
  PetscErrorCode check_mass_balance(const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                                    double t) const;

  std::string file_; ///< the case file, for the errors
  std::vector<PatchCondition> patches_;
  std::vector<FaceKind> kind_;
  std::vector<Vec3<double>> velocity_;
  std::vector<double> pressure_, rotation_;
  std::vector<std::vector<char>> prescribed_;
  bool pressure_fixed_ = false;
};

} // namespace karman::discretization
