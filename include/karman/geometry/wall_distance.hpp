// The wall distance field of a distributed mesh: for each query point (a cell centroid), the
// exact distance to the nearest face of the wall patches (point_face_distance of
// wall_distance_kernels.hpp: segments in 2D, triangles and the facets of polygons in 3D), and its
// reverse mode, for the Spalart-Allmaras model (issue 44) and its shape gradients.
//
// Parallel: every rank holds the whole wall.  setup gathers the wall faces' serial vertex ids
// (each boundary face once, from the rank that owns its cell); compute gathers their coordinates
// (the mesh may have moved) and builds VTK's static cell locator over the facets (the segments,
// or the triangles (p, v_k, v_k+1) of every face around its vertex average p, as the kernels
// define the face), which finds the nearest facet of each query point exactly; the face's kernel
// then gives the distance and, for the reverse, the closest point's weights.  The answer does not
// depend on the partition (but for ties, where two faces are equally near: the medial axis).
//
// Reverse: dd/dx_query = n, dd/dv_i = -w_i n (wall_distance_kernels.hpp).  The wall vertices'
// sensitivities are summed over all ranks' queries and added to the rank that owns the vertex
// (vertex_owned), so that the sum over a vertex's copies (sum_vertex_copies) is the total.
// Tests: tests/unit/test_wall_distance.cpp.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <vector>

namespace karman::geometry {

class WallDistance {
public:
  /// The wall: the boundary faces of `patches` (indices into mesh.patch_names) on every rank.
  /// Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const std::vector<int> &patches);

  /// d[i] = distance from points[i] to the nearest wall face, with the vertex coordinates X (one
  /// per local vertex).  Remembers the nearest faces for reverse.  Collective.
  PetscErrorCode compute(const std::vector<Vec3<double>> &X,
                         const std::vector<Vec3<double>> &points, std::vector<double> *d);

  /// Reverse of the last compute: points_bar[i] += dbar[i] dd/dx_i, Xbar[v] += sum_i dbar[i]
  /// dd/dX_v for the wall vertices (added on the rank that owns v).  Collective.
  PetscErrorCode reverse(const std::vector<double> &dbar, std::vector<Vec3<double>> *points_bar,
                         std::vector<Vec3<double>> *Xbar) const;

  /// Wall faces over all ranks.
  std::size_t n_faces() const { return face_ptr_.empty() ? 0 : face_ptr_.size() - 1; }

private:
  const mesh::Mesh *mesh_ = nullptr;
  std::vector<PetscInt> local_face_vertex_; ///< local vertex ids of this rank's wall faces
  std::vector<int> face_ptr_;               ///< CSR of the gathered faces' vertex slots
  std::vector<PetscInt> slot_gid_;          ///< serial vertex id of each slot
  std::vector<Vec3<double>> slot_X_;        ///< coordinates of each slot (last compute)
  std::vector<PetscInt> wall_gid_;          ///< sorted distinct serial ids of the wall vertices
  std::vector<int> slot_vertex_;            ///< each slot's index into wall_gid_
  std::vector<Vec3<double>> points_;        ///< last compute's query points
  std::vector<int> nearest_;                ///< and their nearest faces
};

} // namespace karman::geometry
