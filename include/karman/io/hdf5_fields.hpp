// HDF5 output of the mesh and cell fields, written in parallel (MPI-IO) in the
// partition-independent serial order (natural_layout.hpp), and read back on any
// number of ranks.  File layout:
//   /mesh/vertices    [Nv][3]      double   vertex coordinates
//   /mesh/cells       [Nc][8]      int      serial vertex ids in VTK order, -1 padded
//   /mesh/cell_types  [Nc]         int      VTK cell type
//   /fields/NAME      [Nc][ncomp]  double   one dataset per field
//   attributes on /: format = "karman-fields", version, dimension, mesh_hash, and any extra
// The file is written under a temporary name and renamed when complete.
#pragma once

#include "karman/io/vtk_writer.hpp"

#include <string>
#include <utility>
#include <vector>

namespace karman::io {

/// Row length of /mesh/cells (vertex ids, -1 padded).
constexpr int kMaxCellVertices = 8;

/// Partition-independent fingerprint of the mesh (vertex coordinates and cell connectivity
/// in serial numbering), as 16 hex digits.  Collective.
PetscErrorCode mesh_hash(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                         std::string *hash);

/// Writes `fields` (owned-cell order) and the mesh to `path`.  Collective.
PetscErrorCode write_fields_h5(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                               const std::string &path, const std::vector<Field> &fields,
                               const std::vector<std::pair<std::string, double>> &attributes,
                               const std::vector<std::pair<std::string, std::string>> &text_attributes = {});

/// Reads a text attribute of the file's root group ("" when the file or attribute is missing).
/// Collective (rank 0 reads).
PetscErrorCode read_text_attribute_h5(MPI_Comm comm, const std::string &path, const std::string &name,
                                      std::string *value);

/// Reads field `name` from `path` into owned-cell order (checks the cell count).  Collective.
PetscErrorCode read_cell_field_h5(const mesh::Mesh &mesh, const std::string &path,
                                  const std::string &name, Field *field);

} // namespace karman::io
