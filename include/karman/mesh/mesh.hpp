// The distributed mesh: a Gmsh .msh read into PETSc DMPlex, distributed over the MPI
// ranks with two layers of ghost cells (the reach of a second-order finite-volume
// residual: a face flux uses the least-squares gradients of both neighbours, whose
// stencils reach the neighbours' neighbours), and flattened into plain arrays that the
// discretization loops over.
//
// Local cells are ordered [owned | ghost layer 1 | ghost layer 2].  Faces are every
// face of a local cell, oriented from `left` to `right`; the first n_flux_faces are
// the faces of owned and layer-1 cells (the ones fluxes are computed on), the rest
// only close the layer-2 cells for their geometry.  A boundary face has right = -1
// and its normal points away from `left`.  Every cell and
// vertex carries its index in the serial mesh ("gid"), which is independent of the
// partition: checkpoints and output use it so that N-rank data reads on M ranks.
#pragma once

#include "karman/core/vec3.hpp"

#include <petscdmplex.h>

#include <string>
#include <vector>

namespace karman::mesh {

enum class CellShape { Triangle, Quadrilateral, Tetrahedron, Hexahedron, Prism, Pyramid };

/// VTK cell type number for a shape.
int vtk_cell_type(CellShape shape);

struct Mesh {
  MPI_Comm comm = MPI_COMM_NULL;
  int dim = 0;
  std::string source; ///< the .msh file

  // cells
  PetscInt n_cells = 0;       ///< local cells: owned + ghost layers 1 and 2
  PetscInt n_owned_cells = 0; ///< owned cells come first
  PetscInt n_global_cells = 0;
  PetscInt global_cell_offset = 0;   ///< first global (PETSc) index of this rank's cells
  std::vector<int> cell_layer;       ///< 0 owned, 1 or 2 ghost layer
  std::vector<PetscInt> cell_gid;    ///< index in the serial mesh
  std::vector<PetscInt> cell_global; ///< PETSc global index (contiguous per rank)
  std::vector<CellShape> cell_shape;
  std::vector<PetscInt> cell_vertex_ptr, cell_vertex; ///< CSR, vertices in VTK order
  std::vector<PetscInt> cell_face_ptr, cell_face;     ///< CSR, faces (empty for layer 2)

  // faces
  PetscInt n_faces = 0;      ///< all faces of local cells
  PetscInt n_flux_faces = 0; ///< faces [0, n_flux_faces) touch an owned or layer-1 cell
  std::vector<PetscInt> face_left, face_right; ///< right = -1 on the boundary
  std::vector<int> face_patch;                 ///< boundary patch index, -1 inside
  std::vector<PetscInt> face_vertex_ptr,
      face_vertex; ///< CSR, ordered so the normal points left->right

  // vertices
  PetscInt n_vertices = 0;
  PetscInt n_global_vertices = 0;
  std::vector<PetscInt> vertex_gid;
  std::vector<char> vertex_owned;
  std::vector<Vec3<double>> coordinates; ///< X: vertex coordinates (z = 0 in 2D)

  // boundary patches (one per boundary condition, named by Gmsh physical name)
  std::vector<std::string> patch_names;
  std::vector<std::vector<PetscInt>> patch_faces; ///< local boundary flux faces of each patch

  Mesh() = default;
  Mesh(const Mesh &) = delete;
  Mesh &operator=(const Mesh &) = delete;
  Mesh(Mesh &&) = default;
  Mesh &operator=(Mesh &&) = default;

  bool owned(PetscInt cell) const { return cell < n_owned_cells; }
  int patch_index(const std::string &name) const;
  /// The faces of boundary `patch` whose cell this rank owns (each boundary face is listed
  /// by exactly one rank): the faces that forces, objectives and surface output sum over.
  std::vector<PetscInt> boundary_faces(int patch) const;
};

/// Whether the mesh has a tetrahedron on any rank.  Collective.
bool has_tetrahedra(const Mesh &mesh);

/// Sums per-vertex values over all ranks that hold a copy of the vertex (by serial vertex
/// index), so that every copy holds the total.  Collective.
PetscErrorCode sum_vertex_copies(const Mesh &mesh, std::vector<Vec3<double>> &values);

/// The number of cells of the Gmsh file `msh_file` (read on rank 0, not distributed).
/// Collective.
PetscErrorCode count_cells(MPI_Comm comm, const std::string &msh_file, long *cells);

/// Reads `msh_file` (rank 0), checks that every name in `boundary_names` is a boundary
/// physical group of the mesh and that every boundary face belongs to exactly one of
/// them, distributes the mesh and fills `mesh`.  `case_file` is named in messages.
/// Collective; errors are collective.
PetscErrorCode load_mesh(MPI_Comm comm, const std::string &msh_file,
                         const std::vector<std::string> &boundary_names,
                         const std::string &case_file, Mesh *mesh);

} // namespace karman::mesh
