// HDF5 output of the mesh and cell fields, written in parallel (MPI-IO) in the
// partition-independent serial order (natural_layout.hpp), and read back on any
// number of ranks.  File layout:
//   /mesh/vertices    [Nv][3]      double   vertex coordinates
//   /mesh/cells       [Nc][8]      int      serial vertex ids in VTK order, -1 padded
//   /mesh/cell_types  [Nc]         int      VTK cell type
//   /fields/NAME      [Nc][ncomp]  double   one dataset per field
//   attributes on /: format = "karman-fields", version, dimension, mesh_hash, and any extra
// and, added by add_to_fields_h5 (e.g. the unsteady adjoint's restart state):
//   /vertex_fields/NAME [Nv][ncomp] double  vertex fields in serial vertex order
//   /NAME             [len]        char     text records (e.g. JSON)
// write_fields_h5 writes the file under a temporary name and renames it when complete; a
// writer that adds more data first uses create_fields_h5 on its own temporary name, then
// add_to_fields_h5, then replace_file.
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
PetscErrorCode
write_fields_h5(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X, const std::string &path,
                const std::vector<Field> &fields,
                const std::vector<std::pair<std::string, double>> &attributes,
                const std::vector<std::pair<std::string, std::string>> &text_attributes = {});

/// Writes `fields` and the mesh to exactly `path` (no temporary name, no rename): the first
/// part of a file completed by add_to_fields_h5 and published by replace_file.  Collective.
PetscErrorCode
create_fields_h5(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                 const std::string &path, const std::vector<Field> &fields,
                 const std::vector<std::pair<std::string, double>> &attributes,
                 const std::vector<std::pair<std::string, std::string>> &text_attributes = {});

/// Adds to the file `path` (from create_fields_h5) vertex fields given in owned-vertex order
/// (local vertex order, owned vertices only), written as /vertex_fields/NAME in serial vertex
/// order, and text records /NAME (the text of rank 0).  Collective.
PetscErrorCode add_to_fields_h5(const mesh::Mesh &mesh, const std::string &path,
                                const std::vector<Field> &vertex_fields,
                                const std::vector<std::pair<std::string, std::string>> &texts);

/// Publishes a completely written file: after every rank has closed it, rank 0 flushes
/// `from` to disk and renames it over `to`.  Collective.
PetscErrorCode replace_file(MPI_Comm comm, const std::string &from, const std::string &to);

/// Reads a text attribute of the file's root group ("" when the file or attribute is missing).
/// Collective (rank 0 reads).
PetscErrorCode read_text_attribute_h5(MPI_Comm comm, const std::string &path,
                                      const std::string &name, std::string *value);

/// Reads a numeric attribute of the file's root group (NaN when the file or attribute is
/// missing).  Collective (rank 0 reads).
PetscErrorCode read_real_attribute_h5(MPI_Comm comm, const std::string &path,
                                      const std::string &name, double *value);

/// Reads the text record /NAME written by add_to_fields_h5 ("" when the file or record is
/// missing or unreadable).  Collective (rank 0 reads).
PetscErrorCode read_text_h5(MPI_Comm comm, const std::string &path, const std::string &name,
                            std::string *value);

/// True if `path` holds cell field `name`.  Collective (rank 0 reads).
PetscErrorCode has_cell_field_h5(MPI_Comm comm, const std::string &path, const std::string &name,
                                 bool *present);

/// Reads field `name` from `path` into owned-cell order (checks the cell count).  Collective.
PetscErrorCode read_cell_field_h5(const mesh::Mesh &mesh, const std::string &path,
                                  const std::string &name, Field *field);

/// Reads vertex field `name` (/vertex_fields/NAME) from `path` into owned-vertex order
/// (checks the vertex count).  Collective.
PetscErrorCode read_vertex_field_h5(const mesh::Mesh &mesh, const std::string &path,
                                    const std::string &name, Field *field);

} // namespace karman::io
