// A term of the residual: one unit that owns some fields of the equation set and their rows of
// R -- the face fluxes and cell sources of one equation (or coupled system) -- with the exact
// derivatives and the reverse mode of each (MFEM's integrators, PETSc ex11's physics):
//   R_c[rows of term t] = sum_{f in faces(c)} sigma_cf M^t_f(w) + Q^t_c(w)
// The face flux M^t_f depends on the values and least-squares gradients of the face's cells (all
// unknowns: a scalar's flux depends on the flow's mass flux), the cell source Q^t_c (volume
// integral, V times a density) on the cell's values and gradients.  FlowResidual loops over the
// faces and cells once and asks each term for its rows; it knows nothing of what the unknowns
// are.  A term also owns its boundary data (which faces prescribe its fields, the values, their
// reverse mode to its parameters and the face geometry) and its differentiable parameters.  Its
// kernels are pure functions of physics/ with their _dw and _reverse beside them (complex-step
// tested).
//
// Terms are called in the order of their fields (the flow first).  A term whose flux depends on
// an earlier term's flux (a scalar on the flow's volume flux) reads that term's rows: in flux()
// M, in flux_dw() J hold the earlier terms' rows already; its flux_reverse() passes the
// adjoint of that flux to the earlier term's flux_reverse (which writes to bar only).  A turbulence
// model is the one exception in the other direction: the flow's viscous flux reads its eddy
// viscosity (provides_eddy_viscosity, face_eddy_viscosity: values and derivatives per face), see
// navier_stokes_term.hpp and ARCHITECTURE.md.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/physics/equation_set.hpp"
#include "karman/physics/flux_kernels.hpp"
#include "karman/physics/time_function.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace karman::discretization {

/// One flux face as the terms see it: its index, the values and gradients of its cells (R on
/// interior faces only) and its geometry.
struct FaceView {
  PetscInt f = -1;
  const physics::CellState<double> *L = nullptr, *R = nullptr;
  const physics::FaceGeometry<double> *g = nullptr;
  bool boundary() const { return R == nullptr; }
};

/// One cell as the sources see it: its index, values and gradients, volume and centroid, and its
/// centroid's distance to the nearest wall face (0 unless a term asks for it: wall_patches()).
struct CellView {
  PetscInt c = -1;
  const physics::CellState<double> *s = nullptr;
  double volume = 0;
  Vec3<double> centroid;
  double wall_distance = 0;
};

/// dQ/d(w_c) and dQ/d(G_c) of a cell source ([row][unknown][, gradient component]).
struct SourceJacobian {
  double dw[physics::kMaxVars][physics::kMaxVars];
  double dg[physics::kMaxVars][physics::kMaxVars][3];
  /// Zeroes the entries of the first nv rows and unknowns.
  void clear(int nv);
};

/// Adjoints of a cell source's inputs for the weights lambda (accumulated, +=).
struct SourceBar {
  physics::CellState<double> s{}; ///< the cell's values and gradients
  double volume = 0;
  Vec3<double> centroid;
  double wall_distance = 0; ///< (FlowResidual::wall_distance_reverse takes it to X)
  double nu = 0;            ///< the viscosity
};

/// A differentiable parameter of a term: a plain value, or a time function (rotation rate, inlet
/// speed, ...: its value at the current time; `set` replaces it by a constant).
struct TermParameter {
  std::string name;                          ///< registry name, e.g. "boundaries.inlet.velocity"
  double *value = nullptr;                   ///< a plain value, or
  physics::TimeFunction *function = nullptr; ///< a time function
  double at(double t, long n) const { return function ? function->value(t, n) : *value; }
  void set(double v) const {
    if (function)
      *function = physics::TimeFunction::constant(v);
    else
      *value = v;
  }
  /// Given by a time function that is not constant: a value per time level, none in general.
  bool time_dependent() const { return function && !function->is_constant(); }
};

/// The eddy viscosity of a face as a turbulence model gives it to the flow's viscous flux, with its
/// derivatives: to the value of the model's unknown `unknown` in the face's cells (L, R) and to
/// the viscosity nu.
struct FaceEddyViscosity {
  double value = 0;
  int unknown = -1;
  double dL = 0, dR = 0, dnu = 0;
};

/// The adjoint of a face's boundary data: the prescribed value of every unknown (nv values) and
/// the rotation rate of a rigidly rotating wall (the wall traction's, physics::
/// rotating_wall_traction, seen by force objectives).
struct BoundaryDataBar {
  const double *value = nullptr;
  double rotation = 0;
};

class ResidualTerm {
public:
  virtual ~ResidualTerm() = default;

  /// The fields this term owns, appended to the equation set in order.
  virtual std::vector<physics::FieldSpec> fields(int dim) const = 0;
  /// Called once the equation set is complete: `first` is the index of this term's first unknown.
  void place(int first) { first_ = first; }
  int first_unknown() const { return first_; }

  /// Per flux face, whether the value of the term's field `field` (its own numbering) is
  /// prescribed there (the least-squares gradients use the value).
  virtual void prescribed_faces(int field, std::vector<char> *mask) const = 0;
  /// The prescribed value of unknown k (absolute index, one of this term's) on flux face f at the
  /// current boundary data.
  virtual double boundary_value(PetscInt f, int k) const = 0;
  /// Re-evaluates the boundary data at time t, time level n (FlowResidual::boundary_data calls it
  /// when the level or the parameters changed).  Collective.
  virtual PetscErrorCode evaluate_boundary_data(double t, long n) = 0;

  /// Writes this term's rows of the flux of `face` into M (nv values).
  virtual void flux(const FaceView &face, double *M) const = 0;
  /// Writes this term's rows of dM/d(w_L, w_R, G_L, G_R) into J, every unknown's column.
  virtual void flux_dw(const FaceView &face, physics::FluxJacobian &J) const = 0;
  /// Adds the adjoints of lambda . M (this term's rows of lambda; nv values) to bar (cell values,
  /// geometry, bar.bv: the prescribed boundary values, bar.nu: the viscosity) and to
  /// `parameter_bar` (one entry per parameters() entry).
  virtual void flux_reverse(const FaceView &face, const double *lambda, physics::FluxBar &bar,
                            double *parameter_bar) const = 0;

  /// True for a turbulence model: the flow's viscous flux reads face_eddy_viscosity.
  virtual bool provides_eddy_viscosity() const { return false; }
  /// The eddy viscosity nu_t of `face` (0 on walls) and its derivatives.
  virtual FaceEddyViscosity face_eddy_viscosity(const FaceView &) const { return {}; }

  /// The mesh patches whose faces are the walls of the cell views' wall_distance (the flow's wall
  /// patches for a turbulence model); empty (the default): the term reads no wall distance.
  virtual std::vector<int> wall_patches() const { return {}; }

  /// True if the term has a cell source Q(w_c, G_c).
  virtual bool has_source() const { return false; }
  /// Adds Q (this term's rows) to r (nv values).
  virtual void source(const CellView &, double *) const {}
  /// Writes this term's rows of dQ/d(w_c, G_c) into J, every unknown's column.
  virtual void source_dw(const CellView &, SourceJacobian &) const {}
  /// Adds the adjoints of lambda . Q to bar and parameter_bar.
  virtual void source_reverse(const CellView &, const double *, SourceBar &, double *) const {}

  /// The term's differentiable parameters, in a fixed order.
  virtual std::vector<TermParameter> parameters() const { return {}; }
  /// Adds the adjoints of boundary face f's data (bar) to the term's parameters (parameter_bar)
  /// and to the face's centroid and area vector.
  virtual void boundary_reverse(PetscInt f, const BoundaryDataBar &bar, double *parameter_bar,
                                Vec3<double> *xf_bar, Vec3<double> *S_bar) const = 0;

protected:
  int first_ = 0;
};

} // namespace karman::discretization
