// HDF5 mesh + field files (see include/karman/io/hdf5_fields.hpp).
#include "karman/io/hdf5_fields.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/parallel.hpp"
#include "karman/io/natural_layout.hpp"

#include <hdf5.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>

namespace karman::io {
namespace {

struct H5Handles {
  hid_t file = -1, fapl = -1, dxpl = -1;
  ~H5Handles() {
    if (dxpl >= 0) H5Pclose(dxpl);
    if (fapl >= 0) H5Pclose(fapl);
    if (file >= 0) H5Fclose(file);
  }
};

// On the calling rank alone: opens `path` read-only (HDF5's error printing off) and calls
// read(file); a file that cannot be opened is skipped (the caller's defaults stand).
template <typename Read> void read_file_serial(const std::string &path, Read read) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return;
  read(f);
  H5Fclose(f);
}

// Collective write of rows [start, start+count) of a [nglobal][ncomp] dataset.
bool write_rows(hid_t file, hid_t dxpl, const char *name, hid_t type, hsize_t nglobal,
                hsize_t ncomp, hsize_t start, hsize_t count, const void *data) {
  const int rank = ncomp > 1 ? 2 : 1;
  hsize_t dims[2] = {nglobal, ncomp}, offset[2] = {start, 0}, block[2] = {count, ncomp};
  hid_t space = H5Screate_simple(rank, dims, nullptr);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t dset = H5Dcreate2(file, name, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(lcpl);
  bool ok = dset >= 0;
  if (ok) {
    hid_t mem = H5Screate_simple(rank, block, nullptr);
    if (count > 0)
      H5Sselect_hyperslab(space, H5S_SELECT_SET, offset, nullptr, block, nullptr);
    else
      H5Sselect_none(space), H5Sselect_none(mem);
    ok = H5Dwrite(dset, type, mem, space, dxpl, data) >= 0;
    H5Sclose(mem);
    H5Dclose(dset);
  }
  H5Sclose(space);
  return ok;
}

bool write_attribute(hid_t obj, const char *name, double value) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = attr >= 0 && H5Awrite(attr, H5T_NATIVE_DOUBLE, &value) >= 0;
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  return ok;
}

bool write_attribute(hid_t obj, const char *name, const std::string &value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size() + 1);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = attr >= 0 && H5Awrite(attr, type, value.c_str()) >= 0;
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
  return ok;
}

PetscErrorCode open_parallel(MPI_Comm comm, const std::string &path, bool create, H5Handles *h) {
  PetscFunctionBeginUser;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  h->fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(h->fapl, comm, MPI_INFO_NULL);
  h->dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE);
  h->file = create ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, h->fapl)
                   : H5Fopen(path.c_str(), H5F_ACC_RDONLY, h->fapl);
  PetscCheck(h->file >= 0, comm, PETSC_ERR_FILE_OPEN, "%s: cannot %s HDF5 file", path.c_str(),
             create ? "create" : "open");
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode mesh_hash(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                         std::string *hash) {
  PetscFunctionBeginUser;
  // order-independent: sum over owned items of a hash of (gid, data)
  std::uint64_t sum = 0;
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    std::uint64_t h = hash_bytes(&mesh.cell_gid[c], sizeof(PetscInt));
    for (PetscInt i = mesh.cell_vertex_ptr[c]; i < mesh.cell_vertex_ptr[c + 1]; ++i)
      h = hash_bytes(&mesh.vertex_gid[mesh.cell_vertex[i]], sizeof(PetscInt), h);
    sum += h;
  }
  for (PetscInt v = 0; v < mesh.n_vertices; ++v) {
    if (!mesh.vertex_owned[v]) continue;
    std::uint64_t h = hash_bytes(&mesh.vertex_gid[v], sizeof(PetscInt));
    sum += hash_bytes(X[v].x, sizeof(X[v].x), h);
  }
  std::uint64_t total = 0;
  PetscCallMPI(MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, mesh.comm));
  *hash = hash_hex(total);
  PetscFunctionReturn(0);
}

PetscErrorCode
create_fields_h5(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                 const std::string &path, const std::vector<Field> &fields,
                 const std::vector<std::pair<std::string, double>> &attributes,
                 const std::vector<std::pair<std::string, std::string>> &text_attributes) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> owned_vertices, vertex_gids;
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    if (mesh.vertex_owned[v])
      owned_vertices.push_back(v), vertex_gids.push_back(mesh.vertex_gid[v]);
  std::vector<PetscInt> cell_gids(mesh.cell_gid.begin(),
                                  mesh.cell_gid.begin() + mesh.n_owned_cells);
  NaturalLayout cells, vertices;
  PetscCall(cells.create(mesh.comm, mesh.n_global_cells, cell_gids));
  PetscCall(vertices.create(mesh.comm, mesh.n_global_vertices, vertex_gids));

  std::vector<double> xo(owned_vertices.size() * 3), xb(vertices.block_size() * 3);
  for (std::size_t i = 0; i < owned_vertices.size(); ++i)
    for (int d = 0; d < 3; ++d) xo[3 * i + d] = X[owned_vertices[i]][d];
  PetscCall(vertices.to_natural(xo.data(), xb.data(), 3));
  std::vector<PetscInt> co(mesh.n_owned_cells * (kMaxCellVertices + 1), -1),
      cb(cells.block_size() * (kMaxCellVertices + 1));
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    PetscInt *row = &co[c * (kMaxCellVertices + 1)];
    row[0] = mesh::vtk_cell_type(mesh.cell_shape[c]);
    for (PetscInt i = mesh.cell_vertex_ptr[c]; i < mesh.cell_vertex_ptr[c + 1]; ++i)
      row[1 + i - mesh.cell_vertex_ptr[c]] = mesh.vertex_gid[mesh.cell_vertex[i]];
  }
  PetscCall(cells.to_natural(co.data(), cb.data(), kMaxCellVertices + 1));
  std::vector<int> types(cells.block_size()), conn(cells.block_size() * kMaxCellVertices);
  for (PetscInt i = 0; i < cells.block_size(); ++i) {
    types[i] = static_cast<int>(cb[i * (kMaxCellVertices + 1)]);
    for (int k = 0; k < kMaxCellVertices; ++k)
      conn[i * kMaxCellVertices + k] = static_cast<int>(cb[i * (kMaxCellVertices + 1) + 1 + k]);
  }
  std::string hash;
  PetscCall(mesh_hash(mesh, X, &hash));

  bool ok = true;
  {
    H5Handles h;
    PetscCall(open_parallel(mesh.comm, path, true, &h));
    const hsize_t cs = cells.block_start(), cn = cells.block_size();
    ok = ok &&
         write_rows(h.file, h.dxpl, "/mesh/vertices", H5T_NATIVE_DOUBLE, mesh.n_global_vertices, 3,
                    vertices.block_start(), vertices.block_size(), xb.data());
    ok = ok && write_rows(h.file, h.dxpl, "/mesh/cells", H5T_NATIVE_INT, mesh.n_global_cells,
                          kMaxCellVertices, cs, cn, conn.data());
    ok = ok && write_rows(h.file, h.dxpl, "/mesh/cell_types", H5T_NATIVE_INT, mesh.n_global_cells,
                          1, cs, cn, types.data());
    for (const auto &f : fields) {
      PetscCheck(f.values.size() == static_cast<std::size_t>(mesh.n_owned_cells * f.ncomp),
                 PETSC_COMM_SELF, PETSC_ERR_PLIB, "field %s has the wrong size", f.name.c_str());
      std::vector<double> block(cn * f.ncomp);
      PetscCall(cells.to_natural(f.values.data(), block.data(), f.ncomp));
      ok = ok && write_rows(h.file, h.dxpl, ("/fields/" + f.name).c_str(), H5T_NATIVE_DOUBLE,
                            mesh.n_global_cells, f.ncomp, cs, cn, block.data());
    }
    ok = ok && write_attribute(h.file, "format", std::string("karman-fields"));
    ok = ok && write_attribute(h.file, "version", 1.0);
    ok = ok && write_attribute(h.file, "dimension", static_cast<double>(mesh.dim));
    ok = ok && write_attribute(h.file, "mesh_hash", hash);
    for (const auto &[name, value] : attributes)
      ok = ok && write_attribute(h.file, name.c_str(), value);
    for (const auto &[name, value] : text_attributes)
      ok = ok && write_attribute(h.file, name.c_str(), value);
  }
  int all_ok = ok ? 1 : 0, global_ok = 0;
  PetscCallMPI(MPI_Allreduce(&all_ok, &global_ok, 1, MPI_INT, MPI_MIN, mesh.comm));
  PetscCheck(global_ok, mesh.comm, PETSC_ERR_FILE_WRITE, "%s: writing the HDF5 file failed",
             path.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode
write_fields_h5(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X, const std::string &path,
                const std::vector<Field> &fields,
                const std::vector<std::pair<std::string, double>> &attributes,
                const std::vector<std::pair<std::string, std::string>> &text_attributes) {
  PetscFunctionBeginUser;
  const std::string tmp = path + ".tmp";
  PetscCall(create_fields_h5(mesh, X, tmp, fields, attributes, text_attributes));
  PetscCall(replace_file(mesh.comm, tmp, path));
  PetscFunctionReturn(0);
}

PetscErrorCode add_to_fields_h5(const mesh::Mesh &mesh, const std::string &path,
                                const std::vector<Field> &vertex_fields,
                                const std::vector<std::pair<std::string, std::string>> &texts) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(mesh.comm, &rank));
  std::vector<PetscInt> vertex_gids;
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    if (mesh.vertex_owned[v]) vertex_gids.push_back(mesh.vertex_gid[v]);
  NaturalLayout vertices;
  PetscCall(vertices.create(mesh.comm, mesh.n_global_vertices, vertex_gids));
  bool ok = true;
  {
    H5Handles h;
    h.fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(h.fapl, mesh.comm, MPI_INFO_NULL);
    h.dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(h.dxpl, H5FD_MPIO_COLLECTIVE);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    h.file = H5Fopen(path.c_str(), H5F_ACC_RDWR, h.fapl);
    PetscCheck(h.file >= 0, mesh.comm, PETSC_ERR_FILE_OPEN, "%s: cannot open HDF5 file for writing",
               path.c_str());
    for (const auto &f : vertex_fields) {
      PetscCheck(f.values.size() == vertex_gids.size() * f.ncomp, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "vertex field %s has the wrong size", f.name.c_str());
      std::vector<double> block(vertices.block_size() * f.ncomp);
      PetscCall(vertices.to_natural(f.values.data(), block.data(), f.ncomp));
      ok = ok && write_rows(h.file, h.dxpl, ("/vertex_fields/" + f.name).c_str(), H5T_NATIVE_DOUBLE,
                            mesh.n_global_vertices, f.ncomp, vertices.block_start(),
                            vertices.block_size(), block.data());
    }
    for (const auto &[name, value] : texts) {
      std::string text = value; // rank 0's text, so that every rank creates the same dataset
      PetscCall(broadcast_string(mesh.comm, &text));
      ok = ok && write_rows(h.file, h.dxpl, ("/" + name).c_str(), H5T_NATIVE_CHAR, text.size(), 1,
                            0, rank == 0 ? text.size() : 0, text.data());
    }
  }
  int all_ok = ok ? 1 : 0, global_ok = 0;
  PetscCallMPI(MPI_Allreduce(&all_ok, &global_ok, 1, MPI_INT, MPI_MIN, mesh.comm));
  PetscCheck(global_ok, mesh.comm, PETSC_ERR_FILE_WRITE, "%s: writing the HDF5 file failed",
             path.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode replace_file(MPI_Comm comm, const std::string &from, const std::string &to) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Barrier(comm)); // every rank has closed the file: all its data is in it
  std::string error;
  if (rank == 0) {
    // on disk before the rename, so that a crash of the machine cannot publish a partial file
    const int fd = ::open(from.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) error = from + ": cannot flush to disk";
    if (fd >= 0) ::close(fd);
    std::error_code ec;
    if (error.empty()) std::filesystem::rename(from, to, ec);
    if (ec) error = from + ": cannot rename to " + to + " (" + ec.message() + ")";
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode read_text_attribute_h5(MPI_Comm comm, const std::string &path,
                                      const std::string &name, std::string *value) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string v;
  if (rank == 0)
    read_file_serial(path, [&](hid_t f) {
      if (H5Aexists(f, name.c_str()) <= 0) return;
      hid_t a = H5Aopen(f, name.c_str(), H5P_DEFAULT);
      hid_t type = H5Aget_type(a);
      std::string buf(H5Tget_size(type), '\0');
      if (H5Tget_class(type) == H5T_STRING && H5Aread(a, type, buf.data()) >= 0) v = buf.c_str();
      H5Tclose(type);
      H5Aclose(a);
    });
  PetscCall(broadcast_string(comm, &v));
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode read_real_attribute_h5(MPI_Comm comm, const std::string &path,
                                      const std::string &name, double *value) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  double v = NAN;
  if (rank == 0)
    read_file_serial(path, [&](hid_t f) {
      if (H5Aexists(f, name.c_str()) <= 0) return;
      hid_t a = H5Aopen(f, name.c_str(), H5P_DEFAULT);
      if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = NAN;
      H5Aclose(a);
    });
  PetscCallMPI(MPI_Bcast(&v, 1, MPI_DOUBLE, 0, comm));
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode read_text_h5(MPI_Comm comm, const std::string &path, const std::string &name,
                            std::string *value) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string v;
  if (rank == 0)
    read_file_serial(path, [&](hid_t f) {
      const std::string dname = "/" + name;
      if (H5Lexists(f, dname.c_str(), H5P_DEFAULT) <= 0) return;
      hid_t d = H5Dopen2(f, dname.c_str(), H5P_DEFAULT);
      if (d < 0) return;
      hid_t space = H5Dget_space(d);
      const hssize_t n = H5Sget_simple_extent_npoints(space);
      std::string buf(n > 0 ? n : 0, '\0');
      if (n > 0 && H5Dread(d, H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) >= 0)
        v = buf;
      H5Sclose(space);
      H5Dclose(d);
    });
  PetscCall(broadcast_string(comm, &v));
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode has_cell_field_h5(MPI_Comm comm, const std::string &path, const std::string &name,
                                 bool *present) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  int found = 0;
  if (rank == 0)
    read_file_serial(path, [&](hid_t f) {
      found = H5Lexists(f, "/fields", H5P_DEFAULT) > 0 &&
              H5Lexists(f, ("/fields/" + name).c_str(), H5P_DEFAULT) > 0;
    });
  PetscCallMPI(MPI_Bcast(&found, 1, MPI_INT, 0, comm));
  *present = found != 0;
  PetscFunctionReturn(0);
}

namespace {

// Reads dataset `dname` ([n_global][ncomp] in serial order) into the owned order of `layout`;
// `what` names the items in messages ("cells", "vertices").  Collective.
PetscErrorCode read_field(MPI_Comm comm, const std::string &path, const std::string &dname,
                          const std::string &name, const NaturalLayout &layout, const char *what,
                          Field *field) {
  PetscFunctionBeginUser;
  H5Handles h;
  PetscCall(open_parallel(comm, path, false, &h));
  hid_t dset = H5Lexists(h.file, dname.c_str(), H5P_DEFAULT) > 0
                   ? H5Dopen2(h.file, dname.c_str(), H5P_DEFAULT)
                   : -1;
  PetscCheck(dset >= 0, comm, PETSC_ERR_FILE_READ, "%s: no field '%s'", path.c_str(), name.c_str());
  hid_t space = H5Dget_space(dset);
  hsize_t dims[2] = {0, 1};
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank == 1 || rank == 2) H5Sget_simple_extent_dims(space, dims, nullptr);
  if (rank == 1) dims[1] = 1;
  const bool matches =
      (rank == 1 || rank == 2) && dims[0] == static_cast<hsize_t>(layout.n_global());
  if (!matches) H5Sclose(space), H5Dclose(dset);
  PetscCheck(matches, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: field '%s' has %llu %s, the mesh has %d", path.c_str(), name.c_str(),
             (unsigned long long)dims[0], what, (int)layout.n_global());
  const hsize_t ncomp = dims[1];
  hsize_t offset[2] = {static_cast<hsize_t>(layout.block_start()), 0},
          block[2] = {static_cast<hsize_t>(layout.block_size()), ncomp};
  hid_t mem = H5Screate_simple(rank, block, nullptr);
  if (block[0] > 0)
    H5Sselect_hyperslab(space, H5S_SELECT_SET, offset, nullptr, block, nullptr);
  else
    H5Sselect_none(space), H5Sselect_none(mem);
  std::vector<double> data(block[0] * ncomp);
  const bool ok = H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, h.dxpl, data.data()) >= 0;
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(dset);
  int all_ok = ok ? 1 : 0, global_ok = 0;
  PetscCallMPI(MPI_Allreduce(&all_ok, &global_ok, 1, MPI_INT, MPI_MIN, comm));
  PetscCheck(global_ok, comm, PETSC_ERR_FILE_READ, "%s: reading field '%s' failed", path.c_str(),
             name.c_str());
  field->name = name;
  field->ncomp = static_cast<int>(ncomp);
  field->values.assign(layout.n_owned() * ncomp, 0.0);
  PetscCall(layout.from_natural(data.data(), field->values.data(), field->ncomp));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode read_cell_field_h5(const mesh::Mesh &mesh, const std::string &path,
                                  const std::string &name, Field *field) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> cell_gids(mesh.cell_gid.begin(),
                                  mesh.cell_gid.begin() + mesh.n_owned_cells);
  NaturalLayout cells;
  PetscCall(cells.create(mesh.comm, mesh.n_global_cells, cell_gids));
  PetscCall(read_field(mesh.comm, path, "/fields/" + name, name, cells, "cells", field));
  PetscFunctionReturn(0);
}

PetscErrorCode read_vertex_field_h5(const mesh::Mesh &mesh, const std::string &path,
                                    const std::string &name, Field *field) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> vertex_gids;
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    if (mesh.vertex_owned[v]) vertex_gids.push_back(mesh.vertex_gid[v]);
  NaturalLayout vertices;
  PetscCall(vertices.create(mesh.comm, mesh.n_global_vertices, vertex_gids));
  PetscCall(
      read_field(mesh.comm, path, "/vertex_fields/" + name, name, vertices, "vertices", field));
  PetscFunctionReturn(0);
}

} // namespace karman::io
