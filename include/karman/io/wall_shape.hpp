// The walls of a (deformed) mesh as a small CSV file, for plots of shapes with no VTK reader:
// one row per vertex of every boundary face of the given patches,
//     wall,face,x,y,z[,gx,gy,gz]
// faces numbered from 0 per file, their vertices in the mesh's order (a segment in 2D, a
// polygon in 3D); with a vertex field g (e.g. a shape gradient) its value at each vertex.  Faces
// are gathered on rank 0 from their owners and sorted by patch and serial vertex indices, so the
// file is the same for every rank count.  Written to PATH.tmp and renamed (a kill never leaves a
// half-written file under PATH).
#pragma once

#include "karman/mesh/mesh.hpp"

#include <string>
#include <vector>

namespace karman::io {

/// Writes the boundary faces of `patches` of `mesh` at vertex coordinates X (per local vertex)
/// to `path`, with the vertex field g (per local vertex) if given.  Collective.
PetscErrorCode write_wall_shape(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                const std::vector<int> &patches, const std::string &path,
                                const std::vector<Vec3<double>> *g = nullptr);

} // namespace karman::io
