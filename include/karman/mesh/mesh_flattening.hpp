// The flattening of a distributed DMPlex into the plain arrays of mesh::Mesh (step (4) of
// load_mesh, mesh.cpp): the strata and ghost points, the cells of the two overlap layers
// numbered layer by layer, the vertices (coordinates, serial numbers, ownership), the faces
// (flux faces first, oriented from left to right or outwards), the cells' shapes and VTK vertex
// order, the boundary patches and the global (PETSc) cell numbering.
#pragma once

#include "karman/mesh/mesh.hpp"

#include <petscdmplex.h>

#include <string>
#include <vector>

namespace karman::mesh {

/// The DMPlex label that marks the boundary faces of the serial mesh (set by the reader in
/// mesh.cpp, read by the flattening: a face in it is a boundary face).
inline constexpr const char *kBoundaryLabel = "karman_boundary";

/// The serial mesh's counts (rank 0's, known on every rank).
struct SerialCounts {
  PetscInt vStart = 0, n_vertices = 0, n_cells = 0;
};

/// Fills the cells, faces, vertices, patches and global numbering of `mesh` (whose comm and dim
/// are set) from the distributed DMPlex `dm` with its two overlap layers; original[p - pStart]
/// is the serial point number of each local point p, `serial` the serial mesh's counts,
/// `boundary_names` the labels of the patches (in patch order).  Collective on mesh->comm.
PetscErrorCode flatten_mesh(DM dm, const std::vector<PetscInt> &original,
                            const SerialCounts &serial,
                            const std::vector<std::string> &boundary_names, Mesh *mesh);

} // namespace karman::mesh
