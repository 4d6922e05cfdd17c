// The boundary conditions of the flow as registered units: each boundary type of the case
// file's `boundaries:` is one unit that owns its keys (with their checks), its parsing, the kind
// of its faces, the velocity and pressure it prescribes (physics/boundary_kernels.hpp, complex-
// step tested), its differentiable parameters and their reverse mode.  flow_boundary_types() is
// the one list: the schema's boundary types, `karman --help`, the parameter registry's boundary
// parameters and the adjoint's boundary reverse come from it.  A new boundary condition is its
// kernel (physics/boundary_kernels.hpp), its unit and its line in flow_boundary_types()
// (flow_boundaries.cpp), and their tests.
//
//   type             face kind                 parameters (boundaries.NAME.*)
//   wall             velocity Dirichlet        omega (2D), velocity.x, velocity.y (, velocity.z)
//   velocity-inlet   velocity Dirichlet        velocity (the speed: uniform or parabolic peak)
//   blowing-suction  velocity Dirichlet        amplitude
//   pressure-outlet  pressure outlet           pressure
//   symmetry         slip                      -
//   far-field        velocity Dirichlet where U_inf . S < 0, pressure outlet elsewhere;
//                                              velocity.x, ... , pressure
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/residual_term.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace karman::discretization {

enum class FaceKind : char { Interior, VelocityDirichlet, PressureOutlet, Slip };

class FlowBoundary {
public:
  virtual ~FlowBoundary() = default;
  /// The kind of a face with area vector S (out of the domain).
  virtual FaceKind face_kind(const Vec3<double> &S) const = 0;
  /// Evaluates the parameters at time t, time level n; false if a value per time level is
  /// missing for level n.
  virtual bool evaluate(double t, long n) {
    (void)t, (void)n;
    return true;
  }
  /// The prescribed velocity of a velocity-Dirichlet face (x_f, S), the prescribed pressure, and
  /// the rotation rate of a rigidly rotating wall (the wall traction's), at the last evaluate().
  virtual Vec3<double> velocity(const Vec3<double> &xf, const Vec3<double> &S) const {
    (void)xf, (void)S;
    return Vec3<double>();
  }
  virtual double pressure() const { return 0; }
  virtual double rotation() const { return 0; }
  /// The angle of attack [degrees] of a far field (the stream's turn about z), null elsewhere.
  virtual const double *angle_of_attack() const { return nullptr; }
  /// True if some parameter depends on time.
  virtual bool time_dependent() const { return false; }
  /// The differentiable parameters, named prefix + key ("boundaries.NAME.omega").
  virtual std::vector<TermParameter> parameters(const std::string &prefix) = 0;
  /// Adds the adjoints of the velocity on face (x_f, S) (ubar) and of the wall's rotation rate
  /// (rotation_bar) to the parameters (parameter_bar, in parameters() order) and the geometry.
  virtual void velocity_reverse(const Vec3<double> &xf, const Vec3<double> &S,
                                const Vec3<double> &ubar, double rotation_bar,
                                double *parameter_bar, Vec3<double> *xf_bar,
                                Vec3<double> *S_bar) const {
    (void)xf, (void)S, (void)ubar, (void)rotation_bar, (void)parameter_bar, (void)xf_bar,
        (void)S_bar;
  }
  /// Adds the adjoint of the prescribed pressure to the parameters.
  virtual void pressure_reverse(double pbar, double *parameter_bar) const {
    (void)pbar, (void)parameter_bar;
  }
};

/// What a unit's parsing sees besides its keys.
struct BoundaryContext {
  MPI_Comm comm;
  std::string file, directory; ///< the case file and its folder (time-function files)
  std::string label;           ///< "boundaries.NAME", for messages
  int dim = 2;
};

struct FlowBoundaryType {
  config::VariantSpec variant; ///< name, keys, family ("wall": wall-type boundaries)
  /// The unit of a boundary of this type from its validated keys.  Collective.
  std::function<PetscErrorCode(const config::Section &keys, const BoundaryContext &context,
                               std::unique_ptr<FlowBoundary> *unit)>
      create;
};

/// Every boundary type of the flow.
const std::vector<FlowBoundaryType> &flow_boundary_types();
/// The type called `name`, or null.
const FlowBoundaryType *find_flow_boundary_type(const std::string &name);

} // namespace karman::discretization
