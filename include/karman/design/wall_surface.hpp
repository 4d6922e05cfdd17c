// The walls of a shape parameterization as one surface, the same on every rank and for every
// partition: the wall vertices by serial index with their reference coordinates, the wall faces
// (oriented as in the mesh) and each vertex's unit normal out of the body (into the fluid), the
// average of its faces' normals.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <cstddef>
#include <vector>

namespace karman::design {

/// The walls of one parameterization gathered on every rank, in an order independent of the
/// partition (so that every rank, and every rank count, computes the same values).
struct WallSurface {
  std::vector<PetscInt> gid;   ///< serial indices of the wall vertices, increasing
  std::vector<Vec3<double>> x; ///< their reference coordinates
  std::vector<std::size_t> face_ptr;
  std::vector<int> face_vertex;     ///< faces (CSR, indices into gid), oriented as in the mesh
  std::vector<Vec3<double>> normal; ///< unit normal out of the body (into the fluid)
  std::vector<PetscInt> of_local;   ///< per local vertex: index into gid, or -1
};

/// Gathers the owned boundary faces of `patches` (each face is owned by one rank) with their
/// vertices' serial indices and coordinates on every rank.  A 3D face is rotated to start at
/// its least serial index (orientation kept), and the faces are sorted, so the result does not
/// depend on the partition.  Collective.
PetscErrorCode gather_wall_surface(const mesh::Mesh &m, const std::vector<Vec3<double>> &X0,
                                   const std::vector<int> &patches, WallSurface *s);

} // namespace karman::design
