// The discrete steady residual R(w) of the coupled finite-volume scheme on the
// distributed mesh, and its exact Jacobian dR/dw assembled into a PETSc AIJ matrix.
//
//   R_c = sum_{f in faces(c)} sigma_cf M_f(w)       (continuity row: sum sigma F)
//
// with the face fluxes of physics/flux_kernels.hpp and least-squares gradients
// (lsq_gradient.hpp).  A face flux depends on the values and gradients of its two
// cells, and a gradient on the cell's face neighbours, so row c of dR/dw reaches every
// cell within two face-neighbour steps of c; the matrix is preallocated exactly for
// that stencil.  By the chain rule
//   dM_f/dw_k = dM/dw_L delta_kL + dM/dw_R delta_kR + sum_var dM/dG_L[var] . c_Lk[var] + (R)
// where c_Lk are the least-squares coefficients (dG_L/dw_k).
//
// Time is an argument: R, J and the local state are those of a time level (t, n) (TimeLevel;
// kSteady for steady problems), whose boundary values (time functions of t, per-step values of n)
// are evaluated on demand and cached by (t, n, parameter version): the unsteady solver evaluates
// one level per step, a steady solve one for all.
//
// When no boundary fixes the pressure level (all velocity Dirichlet), the continuity
// row of the cell with global index 0 is replaced by p = 0 (the replaced equation is
// the redundant one: the continuity rows sum to the net boundary inflow, which
// BoundaryConditions::evaluate refuses beyond kMassImbalance of the inflow).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/boundary_conditions.hpp"
#include "karman/discretization/flow_options.hpp"
#include "karman/discretization/lsq_gradient.hpp"
#include "karman/discretization/residual_term.hpp"
#include "karman/geometry/wall_distance.hpp"
#include "karman/physics/flux_kernels.hpp"

#include <petscmat.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace karman::discretization {

/// A time level: the time t and the step number n at which the boundary data are evaluated (a
/// time function given per step reads n).  Time is an argument: residual(), jacobian() and
/// local_state() take the level, a LocalState records the level it was made at.
struct TimeLevel {
  double t = 0;
  long n = 0;
};
/// The level of a steady problem (and of an unsteady run's initial state): t = 0, n = 0.
inline constexpr TimeLevel kSteady{0.0, 0};

/// The flow on the local cells computed from a state vector w at a time level: the values of
/// the owned and ghost cells and the least-squares gradients of the owned and layer-1 cells (the
/// inputs of every face flux).  A plain value: FlowResidual::local_state() computes it, whoever
/// reads the flow (forces, probes, objectives, output, sensitivities) takes it as an argument
/// and gets the boundary data of its level (FlowResidual::boundary_data).
struct LocalState {
  TimeLevel level; ///< the time level it was made at (its boundary values')
  int nv = 0;
  std::vector<double> w;    ///< nv values per local cell
  std::vector<double> grad; ///< nv x 3 gradient components per local cell
  /// Value and gradient of local cell c.
  physics::CellState<double> cell(PetscInt c) const;
};

class FlowResidual {
public:
  FlowResidual() = default;
  FlowResidual(const FlowResidual &) = delete;
  FlowResidual &operator=(const FlowResidual &) = delete;
  ~FlowResidual();

  /// Geometry, boundary conditions, gradient coefficients and the Jacobian stencil. Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg);

  /// The fields of the unknowns and their layout (physics/equation_set.hpp).
  const physics::EquationSet &equations() const { return eq_; }
  int nv() const { return eq_.nv(); }
  const mesh::Mesh &mesh() const { return *mesh_; }
  const geometry::Geometry<double> &geometry() const { return geom_; }
  /// The flow's boundary conditions: patches, face kinds, and the imposed values of the level of
  /// the last boundary_data() (a reader of a LocalState calls boundary_data(state.level) first).
  BoundaryConditions &boundary_conditions() { return bcs_; }
  const BoundaryConditions &boundary_conditions() const { return bcs_; }
  /// The case's reference values (force coefficients, moments, pressure coefficient).
  const ReferenceOptions &reference() const { return reference_; }
  physics::FluxParameters<double> &parameters() { return params_; }
  const physics::FluxParameters<double> &parameters() const { return params_; }
  /// Moves the mesh: new vertex coordinates X (same topology); geometry and least-squares
  /// coefficients are recomputed, the face kinds kept (shape studies); the boundary values follow
  /// (parameters_changed()).  Everything that reads the geometry (output, hashes, forces) sees the
  /// moved mesh.
  PetscErrorCode move_to(const std::vector<Vec3<double>> &X, const char *context);
  /// The current vertex coordinates.
  const std::vector<Vec3<double>> &coordinates() const { return X_; }
  const LeastSquaresGradient &gradient_operator() const { return lsq_; }

  /// Tells the residual that what the boundary data depend on besides the terms' parameters
  /// changed (the geometry, a test's custom velocity): the boundary data are evaluated anew at the
  /// next level asked for.  move_to and ParameterRegistry's setters call it; a parameter changed
  /// through a pointer (ParameterRegistry::time_function) is seen without it.
  void parameters_changed() { ++version_; }
  /// Makes the boundary data (boundary_conditions()' imposed values, boundary_value(), the terms'
  /// boundary data and reverse modes) those of time level `level`.  Evaluated on demand: again
  /// only when the level, a parameter's value at the level or the version (parameters_changed)
  /// differs from the last evaluation's (a cache, not a contract -- every function that takes a
  /// time level or a LocalState calls it with that level itself).  Collective: a per-step time
  /// function used beyond its last value is an error.
  PetscErrorCode boundary_data(const TimeLevel &level) const;

  /// A ghosted state vector (block size nv, owned cells then ghosts as in the mesh).
  PetscErrorCode create_state(Vec *w) const;

  /// Storage of a Jacobian: point rows (AIJ: what LU factorizations and algebraic multigrid
  /// take) or nv x nv blocks (BAIJ: one column index per block, about a third less memory and
  /// faster products; the iterative method's outer operator).
  enum class MatrixFormat { Point, Block };
  /// The Jacobian matrix with the nonzero structure of the two-layer stencil (every entry present,
  /// zero); with `compact`, of the face-neighbour stencil of the compact preconditioning matrix
  /// (see jacobian()).  Its structure is final: jacobian() writes the values in place.
  PetscErrorCode create_jacobian(Mat *J, bool compact = false,
                                 MatrixFormat format = MatrixFormat::Point) const;

  /// The local state of w at time level `level` (ghost values exchanged, gradients computed with
  /// the boundary values of that level).  Collective.
  PetscErrorCode local_state(const TimeLevel &level, Vec w, LocalState *state) const;

  /// BDF time derivative on the rows of the transient fields (EquationSet): rho V (a0 w + h_c),
  /// h_c from earlier steps.
  struct TimeTerm {
    double a0 = 0; ///< coefficient of the new state [1/s]
    const std::vector<double> *history =
        nullptr; ///< nv values per owned cell (the transient entries used)
  };

  /// R(w) at time level `level` (owned rows), plus the time term if given.  Collective.
  PetscErrorCode residual(const TimeLevel &level, Vec w, Vec R,
                          const TimeTerm *time_term = nullptr) const;
  /// J = dR/dw at time level `level`, + diag(shift) on the transient rows (shift: one value per
  /// owned cell, or null).
  /// With `compact`, only the couplings of each face flux to its own two cells are kept
  /// (the dependence through the gradients on the cells' other neighbours is dropped): a
  /// sparser matrix whose LU factors are several times smaller, used to precondition
  /// Krylov solves with the exact Jacobian.  J must come from create_jacobian with the same
  /// `compact` (either format); the values are written straight into its storage, face by face
  /// (no assembly buffer: the matrix is the only copy of the values).
  PetscErrorCode jacobian(const TimeLevel &level, Vec w, Mat J,
                          const std::vector<double> *transient_shift, bool compact = false) const;
  /// The same at a local state of local_state() (the caller's, at its level: no second ghost
  /// exchange and gradient evaluation).
  PetscErrorCode jacobian(const LocalState &state, Mat J,
                          const std::vector<double> *transient_shift, bool compact = false) const;

  /// y += scale diag(shift) x on the transient rows (shift: one value per owned cell, as
  /// jacobian's transient_shift).
  PetscErrorCode add_transient_shift(const std::vector<double> &shift, double scale, Vec x,
                                     Vec y) const;

  /// Whether a turbulence model is solved (a term provides the eddy viscosity).
  bool has_turbulence_model() const {
    for (const auto &t : terms_)
      if (t->provides_eddy_viscosity()) return true;
    return false;
  }

  /// The unknown (offset within a cell's unknowns) of the turbulence model's working variable
  /// (chi = nu~/nu of Spalart-Allmaras: the first field of the term that provides the eddy
  /// viscosity), or -1 without a turbulence model.
  int turbulence_unknown() const;

  /// Geometry of flux face f.
  physics::FaceGeometry<double> face_geometry(PetscInt f) const;
  /// The terms of the residual (the flow first), each owning some fields' rows.
  const std::vector<std::unique_ptr<ResidualTerm>> &terms() const { return terms_; }
  /// True if some term has a cell source.
  bool has_sources() const;
  /// What a cell source sees of local cell c with state s.
  CellView cell_view(PetscInt c, const physics::CellState<double> &s) const;
  /// Per local cell, the distance of its centroid to the nearest face of the terms' wall patches
  /// (ResidualTerm::wall_patches; empty if no term reads it), at the current coordinates (setup
  /// and move_to compute it).
  const std::vector<double> &wall_distance() const { return wall_d_; }
  /// Reverse of wall_distance() for the adjoints dbar (one per local cell, SourceBar::
  /// wall_distance): centroid_bar[c] += dbar[c] dd_c/dx_c, Xbar[v] += sum_c dbar[c] dd_c/dX_v for
  /// the wall vertices (on the rank that owns v).  Collective.
  PetscErrorCode wall_distance_reverse(const std::vector<double> &dbar,
                                       std::vector<Vec3<double>> *centroid_bar,
                                       std::vector<Vec3<double>> *Xbar) const;
  /// The prescribed boundary value of unknown k on flux face f (its term's), at the level of the
  /// last boundary_data() (a reader of a LocalState calls boundary_data(state.level) first).
  double boundary_value(PetscInt f, int k) const { return bvalues_[f * eq_.nv() + k]; }
  /// True if the pressure level is pinned (no pressure boundary).
  bool pressure_pinned() const { return !bcs_.pressure_level_fixed(); }

private:
  /// Computes wall_d_ at the current geometry (if a term reads it).  Collective.
  PetscErrorCode compute_wall_distance();
  /// The least-squares gradient set of each unknown: its field's.
  std::vector<int> gradient_sets() const;
  /// Every field's prescribed faces (the terms'), in equation-set order.
  std::vector<std::vector<char>> prescribed_faces() const;
  /// The flux M of face f (all terms) at the local state s.
  void face_flux(const LocalState &s, PetscInt f, double *M) const;
  void face_jacobian(const LocalState &s, PetscInt f, physics::FluxJacobian &J) const;

  const mesh::Mesh *mesh_ = nullptr;
  physics::EquationSet eq_;
  std::vector<Vec3<double>> X_;
  long version_ = 0; ///< bumped by parameters_changed()
  /// The cache of boundary_data(): the level, version and values of the terms' parameters at that
  /// level that the boundary data (the terms', bvalues_) were last evaluated with.
  std::vector<TermParameter> boundary_parameters_; ///< every term's parameters()
  mutable TimeLevel evaluated_level_;
  mutable long evaluated_version_ = -1;
  mutable std::vector<double> evaluated_values_;
  geometry::Geometry<double> geom_;
  BoundaryConditions bcs_;
  LeastSquaresGradient lsq_;
  physics::FluxParameters<double> params_;
  ReferenceOptions reference_;
  std::vector<std::unique_ptr<ResidualTerm>> terms_;
  std::vector<int> wall_patches_;        ///< the terms' wall patches (sorted, distinct)
  geometry::WallDistance wall_distance_; ///< the distance to them (if any)
  std::vector<double> wall_d_;           ///< per local cell
  std::vector<int> term_of_;             ///< per unknown: its term
  mutable std::vector<double> bvalues_;  ///< nv prescribed boundary values per flux face
  Vec work_ = nullptr;                   ///< ghosted work vector of local_state()
  mutable LocalState scratch_;           ///< the local state inside residual() and jacobian()
  /// Block sparsity of the owned rows: sorted local column cells, and for each entry where its
  /// block is stored in a matrix of create_jacobian: k >= 0 the k-th block of the row among the
  /// owned columns (the diagonal part), -1 - k the k-th among the other ranks' columns (sorted by
  /// global index: the off-process part).
  struct Stencil {
    std::vector<PetscInt> ptr, col;
    std::vector<std::int32_t> where;
  };
  Stencil full_, compact_;
  /// The stencil entry of (row, column cell), or -1 if it is not in the stencil (compact).
  PetscInt entry(const Stencil &st, PetscInt row, PetscInt col_cell) const;
};

} // namespace karman::discretization
