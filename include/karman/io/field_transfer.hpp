// Transfer of cell fields between meshes: the initial state of a run taken from the flow.h5
// of a run on another mesh (a coarser level, a modified geometry), e.g. to start a fine-mesh
// unsteady run from the periodic state of a coarse one.
//
// Source points are the source cell centroids x_j (from /mesh/vertices and /mesh/cells of the
// file), with values phi_j.  A target point x gets the value a of the weighted linear
// least-squares fit through its k nearest source points (k = 6 in 2D, 10 in 3D):
//   min_{a, b} sum_j w_j (phi_j - a - b . (x_j - x))^2,   w_j = 1 / (|x_j - x|^2 + delta^2),
// delta = 1e-6 of the source bounding-box diagonal.  The fit is exact for linear fields, so
// the transfer is second-order accurate on smooth fields.  If the k points do not span the
// space (all on a line), the nearest value is taken.  The nearest points are found with a
// uniform bucket grid (about two points per bucket) searched ring by ring.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/io/vtk_writer.hpp"
#include "karman/mesh/mesh.hpp"

#include <string>
#include <vector>

namespace karman::io {

class PointCloudInterpolator {
public:
  static constexpr int kMaxComponents = 16; ///< values per point that evaluate() fits at once

  /// Indexes the source points (dim 2 or 3; the third coordinate is ignored in 2D).
  void build(int dim, std::vector<Vec3<double>> points);
  /// Indices of the k nearest source points of x, nearest first (all points if fewer).
  std::vector<std::size_t> nearest(const Vec3<double> &x, std::size_t k) const;
  /// `out[0..ncomp)`: the fitted value at x of data with `ncomp` values per source point.
  /// Returns the distance from x to the nearest source point.
  double evaluate(const Vec3<double> &x, const std::vector<double> &values, int ncomp,
                  double *out) const;
  std::size_t size() const { return points_.size(); }

private:
  long bucket_of(const Vec3<double> &x, long ijk[3]) const;
  int dim_ = 2;
  std::vector<Vec3<double>> points_;
  Vec3<double> lo_, width_;
  long n_[3] = {1, 1, 1};
  std::vector<std::size_t> start_, index_; ///< points of bucket b: index_[start_[b] .. start_[b+1])
  double delta2_ = 0;
};

/// Reads cell fields `names` of a karman-fields file (any mesh) and interpolates them to the
/// points `targets` (usually the owned cell centroids).  `max_gap` receives the largest ratio
/// of the distance to the nearest source centroid to `target_size[i]` (the target cell size),
/// a measure of how far targets lie outside the source mesh.  Collective: rank 0 reads the
/// file and broadcasts it.
PetscErrorCode transfer_cell_fields_h5(MPI_Comm comm, int dim, const std::string &path,
                                       const std::vector<std::string> &names,
                                       const std::vector<Vec3<double>> &targets,
                                       const std::vector<double> &target_size,
                                       std::vector<Field> *fields, PetscInt *source_cells,
                                       double *max_gap);

} // namespace karman::io
