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
// When no boundary fixes the pressure level (all velocity Dirichlet), the continuity
// row of the cell with global index 0 is replaced by p = 0 (the replaced equation is
// the redundant one: the continuity rows sum to the net boundary inflow).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/boundary_conditions.hpp"
#include "karman/discretization/lsq_gradient.hpp"
#include "karman/physics/flux_kernels.hpp"

#include <petscmat.h>

#include <vector>

namespace karman::discretization {

class FlowResidual {
public:
  FlowResidual() = default;
  FlowResidual(const FlowResidual &) = delete;
  FlowResidual &operator=(const FlowResidual &) = delete;
  ~FlowResidual();

  /// Geometry, boundary conditions, gradient coefficients and the Jacobian stencil. Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg);

  int nv() const { return mesh_->dim + 1; }
  const mesh::Mesh &mesh() const { return *mesh_; }
  const geometry::Geometry<double> &geometry() const { return geom_; }
  BoundaryConditions &boundary_conditions() { return bcs_; }
  const BoundaryConditions &boundary_conditions() const { return bcs_; }
  physics::FluxParameters<double> &parameters() { return params_; }
  const physics::FluxParameters<double> &parameters() const { return params_; }
  /// Moves the mesh: new vertex coordinates X (same topology); geometry, least-squares
  /// coefficients and boundary values are recomputed, the face kinds kept (shape studies).
  PetscErrorCode set_coordinates(const std::vector<Vec3<double>> &X, const char *context);
  /// Time and time level at which the boundary values were last evaluated.
  double time() const { return time_; }
  long level() const { return level_; }
  /// The current vertex coordinates.
  const std::vector<Vec3<double>> &coordinates() const { return X_; }
  const LeastSquaresGradient &gradient_operator() const { return lsq_; }

  /// Re-evaluates the boundary values at time t, time level n (after changing BC parameters).
  PetscErrorCode update_boundary_values(double t, long n);

  /// A ghosted state vector (block size nv, owned cells then ghosts as in the mesh).
  PetscErrorCode create_state(Vec *w) const;
  /// The Jacobian matrix, preallocated for the two-layer stencil; with `compact`, for the
  /// face-neighbour stencil of the compact preconditioning matrix (see jacobian()).
  PetscErrorCode create_jacobian(Mat *J, bool compact = false) const;

  /// Refreshes the local copy of w (owned and ghost cells) and the gradients.
  PetscErrorCode update_local(Vec w);
  /// nv values per local cell, after update_local().
  const std::vector<double> &local_state() const { return wloc_; }
  /// nv x 3 gradient components per local cell (owned and layer-1 cells), after update_local().
  const std::vector<double> &gradients() const { return grad_; }

  /// BDF time derivative on the momentum rows: rho V (a0 u + h_c), h_c from earlier steps.
  struct TimeTerm {
    double a0 = 0; ///< coefficient of the new state [1/s]
    const std::vector<double> *history =
        nullptr; ///< nv values per owned cell (momentum entries used)
  };

  /// R(w) (owned rows), plus the time term if given.
  PetscErrorCode residual(Vec w, Vec R, const TimeTerm *time_term = nullptr);
  /// J = dR/dw + diag(shift) on the momentum rows (shift: one value per owned cell, or null).
  /// With `compact`, only the couplings of each face flux to its own two cells are kept
  /// (the dependence through the gradients on the cells' other neighbours is dropped): a
  /// sparser matrix whose LU factors are several times smaller, used to precondition
  /// Krylov solves with the exact Jacobian.
  PetscErrorCode jacobian(Vec w, Mat J, const std::vector<double> *momentum_shift,
                          bool compact = false);

  /// Cell state (value and gradient) of local cell c from the local copy.
  physics::CellState<double> cell_state(PetscInt c) const;
  /// Geometry of flux face f.
  physics::FaceGeometry<double> face_geometry(PetscInt f) const;
  /// The flux M (nv values) of flux face f at the current local state.
  void face_flux(PetscInt f, double *M) const;
  /// True if the pressure level is pinned (no pressure boundary).
  bool pressure_pinned() const { return !bcs_.pressure_level_fixed(); }

private:
  void face_jacobian(PetscInt f, physics::FluxJacobian &J) const;

  const mesh::Mesh *mesh_ = nullptr;
  std::vector<Vec3<double>> X_;
  double time_ = 0;
  long level_ = 0;
  geometry::Geometry<double> geom_;
  BoundaryConditions bcs_;
  LeastSquaresGradient lsq_;
  physics::FluxParameters<double> params_;
  Vec work_ = nullptr; ///< ghosted work vector
  std::vector<double> wloc_, grad_;
  // Jacobian stencil of the owned rows: sorted local column cells and block values
  /// Block sparsity of the owned rows (sorted local column cells) and a value buffer.
  struct Stencil {
    std::vector<PetscInt> ptr, col;
    std::vector<double> val;
  };
  Stencil full_, compact_;
  /// The value block of (row, column cell) in a stencil, or null if it is not in it.
  double *slot(Stencil &st, PetscInt row, PetscInt col_cell);
};

} // namespace karman::discretization
