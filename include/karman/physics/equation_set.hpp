// The equation set: what the unknowns of a cell are.  A field descriptor per field -- its name,
// number of components, whether its rows carry a time derivative, the scaling of its unknown, its
// convection order -- and the layout of the state vector built from them:
//   w_c = (field 0 components, field 1 components, ...),   nv = sum of the components.
// The residual's time terms, the Jacobian's block size, the linear solvers, state output (VTK,
// HDF5), checkpoints (with the field signature), field transfer between meshes, the unsteady
// adjoint's time coupling and the Python bindings read the layout from here.
//
// The incompressible Navier-Stokes unknowns come first: pressure (1 component, the continuity
// row: no time derivative) then velocity (dim components, momentum rows: rho V du/dt).  The flow's
// face kernels (physics/flux_kernels.hpp) rely on that position (p at 0, u at 1..dim); every
// other equation finds its fields by name (offset()).
#pragma once

#include <string>
#include <vector>

namespace karman::physics {

/// Upper bound of the unknowns per cell (fixed-size kernel arrays): p, u (3 components) and two
/// transported scalars.
constexpr int kMaxVars = 6;

struct FieldSpec {
  std::string name;         ///< e.g. "pressure", "velocity", "scalar" (output and lookup name)
  int components = 1;       ///< 1, or the space dimension for a vector field
  bool transient = false;   ///< its rows carry the time derivative rho V d(phi)/dt
  double scale = 1;         ///< the unknown is value / scale (balances the linear systems)
  int convection_order = 2; ///< 2: linear reconstruction of face values, 1: cell values
  double initial = 0;       ///< uniform initial value of each component (fields other than the
                            ///< flow's, whose start is the `initial` section's)
};

class EquationSet {
public:
  EquationSet() = default;
  /// The set of `fields` in a `dim`-dimensional space.  Throws std::invalid_argument if the
  /// unknowns exceed kMaxVars or a name repeats.
  EquationSet(int dim, std::vector<FieldSpec> fields);

  int dim() const { return dim_; }
  /// Unknowns per cell.
  int nv() const { return nv_; }
  std::size_t n_fields() const { return fields_.size(); }
  const FieldSpec &field(std::size_t i) const { return fields_[i]; }
  const std::vector<FieldSpec> &fields() const { return fields_; }
  /// Index of the first unknown of field i.
  int offset(std::size_t i) const { return offset_[i]; }
  /// Index of the field called `name`, or -1.
  int find(const std::string &name) const;
  /// The field that unknown k belongs to.
  int field_of(int k) const { return field_of_[k]; }
  /// True if unknown k's row carries a time derivative.
  bool transient(int k) const { return fields_[field_of_[k]].transient; }
  /// "name:components,..." in order: what a stored state holds (checkpoints, adjoint states).
  std::string signature() const;

  bool operator==(const EquationSet &o) const { return signature() == o.signature(); }

private:
  int dim_ = 0, nv_ = 0;
  std::vector<FieldSpec> fields_;
  std::vector<int> offset_, field_of_;
};

/// The fields of the incompressible Navier-Stokes equations: pressure, velocity (dim components).
std::vector<FieldSpec> navier_stokes_fields(int dim);

} // namespace karman::physics
