// A mesh as a Gmsh file (MSH 2.2, ASCII) that karman (and gmsh) can read again: the nodes at
// the given vertex coordinates X (a deformed design), every cell once, and the boundary faces
// of every patch as elements of a physical group named after the patch, so that a case's
// boundary names still match.  The cells form one physical group named `volume_name`.
// Node numbers follow the serial vertex index (vertex_gid + 1); cells and faces are gathered
// on rank 0 from their owners.  Linear elements only (the shapes of mesh::CellShape; gmsh and
// VTK order their vertices alike).  Written to PATH.tmp and renamed.
#pragma once

#include "karman/mesh/mesh.hpp"

#include <string>
#include <vector>

namespace karman::io {

/// Writes `mesh` with vertex coordinates X (per local vertex) to `path`.  Collective.
PetscErrorCode write_msh(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                         const std::string &path, const std::string &volume_name = "fluid");

} // namespace karman::io
