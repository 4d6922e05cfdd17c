// Transfer of cell values from a mesh to its nested refinement (mesh.refine: Gmsh's RefineMesh
// splits every cell into 4 in 2D, 8 in 3D), the embedded finer space of an error estimate
// (driver/error_estimate.hpp).
//
// The parent of a fine cell is the coarse cell that contains its centroid: among the coarse
// cells of the k = 12 nearest centroids, the first (nearest) whose faces all have the point on
// their inner side (the plane of each face through its centroid, Newell normal, oriented away
// from the cell centroid; convex cells).  A child's centroid lies inside its parent, also where
// the refinement moved the new wall vertices onto a curved wall (by a fraction of the sliver);
// a point inside none of the candidates (a strongly curved wall) takes the candidate it lies
// least far outside of, and is counted.
//
// The fine value is the parent's linear reconstruction, the one the second-order residual uses:
//   phi(x) = phi_P + grad phi_P . (x - x_P),
// exact for linear fields.
//
// Parallel: the two meshes are partitioned independently; for the search of the parents every
// rank gathers the owned coarse cells of all ranks (centroid, values, gradients, vertices: about
// 40 doubles per 2D cell with three unknowns, 90 per hexahedron with four).  Once the parents are
// known, NestedParents moves values between a parent and its children with the ranks that own
// them only (a star forest): the later states of an unsteady run, the sums of fine-cell values
// per parent.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsf.h>

#include <vector>

namespace karman::io {

struct NestedTransfer {
  std::vector<double> values;   ///< ncomp per owned fine cell
  std::vector<PetscInt> parent; ///< per owned fine cell: the parent's global (PETSc) cell index
  long outside = 0;             ///< fine cells (all ranks) inside none of the candidates
};

/// Values of the owned cells of `fine` from the owned cells of `coarse`: `coarse_X` its vertex
/// coordinates, `coarse_centroid` its local cell centroids, `values` ncomp per local cell and
/// `gradients` ncomp x 3 per local cell (discretization::LocalState's layout); `fine_centroid`
/// the owned fine cell centroids.  Collective over the coarse mesh's communicator (the fine
/// mesh's must be the same).
PetscErrorCode transfer_nested(const mesh::Mesh &coarse, const std::vector<Vec3<double>> &coarse_X,
                               const std::vector<Vec3<double>> &coarse_centroid, int ncomp,
                               const std::vector<double> &values,
                               const std::vector<double> &gradients, const mesh::Mesh &fine,
                               const std::vector<Vec3<double>> &fine_centroid, NestedTransfer *out);

/// The parents of a nested transfer as a star forest from the owned cells of the coarse mesh
/// (roots) to the owned cells of the fine mesh (leaves): more states reconstructed with the same
/// parents (the time levels of an unsteady run) and fine-cell values summed onto their parents;
/// each rank exchanges with the ranks that own its cells' parents or children only.
class NestedParents {
public:
  NestedParents() = default;
  NestedParents(const NestedParents &) = delete;
  NestedParents &operator=(const NestedParents &) = delete;
  ~NestedParents();
  /// From the parents of transfer_nested (global coarse index per owned fine cell).  Collective.
  PetscErrorCode setup(const mesh::Mesh &coarse, const mesh::Mesh &fine,
                       const std::vector<PetscInt> &parent);
  /// The fine values (ncomp per owned fine cell): the parent's linear reconstruction from its
  /// value, gradient (LocalState layout, local coarse cells) and centroid, as transfer_nested.
  /// Collective.
  PetscErrorCode reconstruct(const std::vector<Vec3<double>> &coarse_centroid, int ncomp,
                             const std::vector<double> &values,
                             const std::vector<double> &gradients,
                             const std::vector<Vec3<double>> &fine_centroid,
                             std::vector<double> *out) const;
  /// Per owned coarse cell (ncomp each): the sum of `fine` (ncomp per owned fine cell) over the
  /// cell's children.  Collective.
  PetscErrorCode sum_to_parents(int ncomp, const std::vector<double> &fine,
                                std::vector<double> *coarse) const;

private:
  PetscSF sf_ = nullptr;
  PetscInt n_coarse_ = 0, n_fine_ = 0;
  int dim_ = 0;
};

} // namespace karman::io
