// Crash-safe HDF5 checkpoints (see include/karman/io/checkpoint.hpp).
#include "karman/io/checkpoint.hpp"

#include "karman/core/parallel.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/logger.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <regex>

namespace karman::io {
namespace fs = std::filesystem;
namespace {

constexpr int kFormatVersion = 1;

hid_t create_records(hid_t file, const char *name, hid_t type, hsize_t width) {
  const int rank = width > 0 ? 2 : 1;
  hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, width},
          chunk[2] = {1, std::max<hsize_t>(width, 1)};
  if (width == 0) chunk[0] = 256;
  hid_t space = H5Screate_simple(rank, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  return d;
}

bool append_record(hid_t dset, hid_t type, hsize_t index, hsize_t width, const void *data) {
  const int rank = width > 0 ? 2 : 1;
  hsize_t newdims[2] = {index + 1, width}, offset[2] = {index, 0}, count[2] = {1, width};
  if (H5Dset_extent(dset, newdims) < 0) return false;
  hid_t fs = H5Dget_space(dset);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, offset, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(rank, count, nullptr);
  const bool ok = H5Dwrite(dset, type, ms, fs, H5P_DEFAULT, data) >= 0 && H5Dflush(dset) >= 0;
  H5Sclose(ms);
  H5Sclose(fs);
  return ok;
}

bool read_record(hid_t dset, hid_t type, hsize_t index, hsize_t width, void *data) {
  const int rank = width > 0 ? 2 : 1;
  hsize_t offset[2] = {index, 0}, count[2] = {1, width};
  hid_t fs = H5Dget_space(dset);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, offset, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(rank, count, nullptr);
  const bool ok = H5Dread(dset, type, ms, fs, H5P_DEFAULT, data) >= 0;
  H5Sclose(ms);
  H5Sclose(fs);
  return ok;
}

hsize_t extent(hid_t dset) {
  hid_t fs = H5Dget_space(dset);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(fs, dims, nullptr);
  H5Sclose(fs);
  return dims[0];
}

void write_attr(hid_t obj, const char *name, const std::string &value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size() + 1);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, value.c_str());
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

void write_attr(hid_t obj, const char *name, long long value) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_LLONG, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_LLONG, &value);
  H5Aclose(a);
  H5Sclose(space);
}

bool read_attr(hid_t obj, const char *name, std::string *value) {
  if (H5Aexists(obj, name) <= 0) return false;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t type = H5Aget_type(a);
  const std::size_t n = H5Tget_size(type);
  std::string buf(n, '\0');
  const bool ok = H5Aread(a, type, buf.data()) >= 0;
  H5Tclose(type);
  H5Aclose(a);
  buf.resize(std::strlen(buf.c_str()));
  *value = buf;
  return ok;
}

bool read_attr(hid_t obj, const char *name, long long *value) {
  if (H5Aexists(obj, name) <= 0) return false;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  const bool ok = H5Aread(a, H5T_NATIVE_LLONG, value) >= 0;
  H5Aclose(a);
  return ok;
}

// Checkpoint files of a directory, newest segment first.
std::vector<std::pair<int, std::string>> segment_files(const std::string &directory) {
  std::vector<std::pair<int, std::string>> files;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return files;
  const std::regex pattern("run-([0-9]+)\\.h5");
  for (const auto &entry : fs::directory_iterator(directory, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern))
      files.emplace_back(std::stoi(m[1]), entry.path().string());
  }
  std::sort(files.rbegin(), files.rend());
  return files;
}

hid_t open_for_reading(const std::string &path) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_sec2(fapl);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
  if (f < 0) f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  return f;
}

struct RecordData {
  std::vector<double> state, previous;
  double info[4] = {0, 0, 0, 0};
  std::uint64_t checksum = 0;
  std::string case_hash, case_keys; ///< the file's attributes
};

// Rank 0: opens a checkpoint file and reads record `index` (or the last complete one when
// index < 0).  Returns "" or an error; `warning` collects notes about skipped data.
std::string read_segment(const std::string &path, const std::string &mesh_hash,
                         const physics::EquationSet &eq, PetscInt n_cells, long long index,
                         RecordData *rec, long long *used, std::string *warning, bool *unreadable) {
  *unreadable = false;
  hid_t f = open_for_reading(path);
  if (f < 0) {
    *unreadable = true;
    return path + ": cannot be read (truncated or not an HDF5 file)";
  }
  std::string error;
  std::string fmt, mh, ch;
  long long version = 0, cells = 0, nvars = 0;
  hid_t st = -1, pr = -1, in = -1, cs = -1;
  if (!read_attr(f, "format", &fmt) || fmt != "karman-checkpoint" ||
      !read_attr(f, "version", &version)) {
    error = path + ": not a karman checkpoint";
  } else if (version != kFormatVersion) {
    error = path + ": checkpoint format version " + std::to_string(version) +
            ", this karman reads version " + std::to_string(kFormatVersion);
  } else if (!read_attr(f, "mesh_hash", &mh) || !read_attr(f, "case_hash", &ch) ||
             !read_attr(f, "cells", &cells) || !read_attr(f, "nv", &nvars)) {
    error = path + ": checkpoint attributes missing";
  } else if (mh != mesh_hash || cells != n_cells) {
    error = path + ": checkpoint of another mesh (mesh hash " + mh + ", " + std::to_string(cells) +
            " cells; this run: " + mesh_hash + ", " + std::to_string(n_cells) + " cells)";
  } else if (std::string fields; // files before the field signature hold (p, u)
             (read_attr(f, "fields", &fields)
                  ? fields
                  : "pressure:1,velocity:" + std::to_string(nvars - 1)) != eq.signature()) {
    error = path + ": checkpoint of other fields (" +
            (fields.empty() ? "pressure:1,velocity:" + std::to_string(nvars - 1) +
                                  ", a file of a version before the field signature"
                            : fields) +
            "; this case solves " + eq.signature() + ")";
  } else {
    const int nv = eq.nv();
    rec->case_hash = ch;
    read_attr(f, "case_keys", &rec->case_keys); // absent in files of older karman versions
    st = H5Dopen2(f, "state", H5P_DEFAULT), pr = H5Dopen2(f, "previous", H5P_DEFAULT);
    in = H5Dopen2(f, "info", H5P_DEFAULT), cs = H5Dopen2(f, "checksum", H5P_DEFAULT);
    if (st < 0 || pr < 0 || in < 0 || cs < 0) {
      error = path + ": checkpoint datasets missing";
    } else {
      const long long complete = static_cast<long long>(extent(cs));
      if (static_cast<long long>(std::max({extent(st), extent(pr), extent(in)})) > complete)
        *warning += path + ": an incomplete record after record " + std::to_string(complete - 1) +
                    " was ignored (the run was stopped while writing it). ";
      const long long k = index < 0 ? complete - 1 : index;
      *used = k;
      if (k < 0) {
        error = "";
        *used = -1;
      } else if (k >= complete) {
        error = path + ": no complete record " + std::to_string(k);
      } else {
        const hsize_t width = static_cast<hsize_t>(n_cells) * nv;
        rec->state.resize(width);
        rec->previous.resize(width);
        if (!read_record(st, H5T_NATIVE_DOUBLE, k, width, rec->state.data()) ||
            !read_record(pr, H5T_NATIVE_DOUBLE, k, width, rec->previous.data()) ||
            !read_record(in, H5T_NATIVE_DOUBLE, k, 4, rec->info) ||
            !read_record(cs, H5T_NATIVE_UINT64, k, 0, &rec->checksum)) {
          error = path + ": record " + std::to_string(k) + " cannot be read (corrupt file)";
        } else if (record_checksum(rec->state, rec->previous, rec->info) != rec->checksum) {
          error = path + ": record " + std::to_string(k) + " (step " +
                  std::to_string((long)rec->info[0]) +
                  ") is corrupt: its data do not match its checksum";
        }
      }
    }
  }
  for (hid_t d : {st, pr, in, cs})
    if (d >= 0) H5Dclose(d);
  H5Fclose(f);
  return error;
}

} // namespace

std::uint64_t record_checksum(const std::vector<double> &state, const std::vector<double> &previous,
                              const double info[4]) {
  std::uint64_t h = hash_bytes(state.data(), state.size() * sizeof(double));
  h = hash_bytes(previous.data(), previous.size() * sizeof(double), h);
  return hash_bytes(info, 4 * sizeof(double), h);
}

CheckpointWriter::~CheckpointWriter() {
  close();
}

PetscErrorCode CheckpointWriter::gather(Vec v, std::vector<double> *all) const {
  PetscFunctionBeginUser;
  const PetscScalar *a;
  std::vector<double> block(layout_.block_size() * nv_);
  PetscCall(VecGetArrayRead(v, &a));
  PetscCall(layout_.to_natural(a, block.data(), nv_));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  PetscCallMPI(MPI_Comm_size(comm_, &size));
  int mine = static_cast<int>(block.size());
  std::vector<int> counts(size), displs(size, 0);
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_));
  if (rank == 0) {
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all->resize(static_cast<std::size_t>(n_cells_) * nv_);
  }
  PetscCallMPI(MPI_Gatherv(block.data(), mine, MPI_DOUBLE, all->data(), counts.data(),
                           displs.data(), MPI_DOUBLE, 0, comm_));
  PetscFunctionReturn(0);
}

PetscErrorCode CheckpointWriter::open(const mesh::Mesh &mesh, const std::string &directory,
                                      const std::string &mesh_hash, const std::string &case_hash,
                                      const physics::EquationSet &eq,
                                      const std::string &case_keys) {
  PetscFunctionBeginUser;
  PetscCall(close());
  comm_ = mesh.comm;
  const int nv = eq.nv();
  nv_ = nv;
  n_cells_ = mesh.n_global_cells;
  count_ = 0;
  std::vector<PetscInt> gids(mesh.cell_gid.begin(), mesh.cell_gid.begin() + mesh.n_owned_cells);
  PetscCall(layout_.create(comm_, n_cells_, gids));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  std::string error;
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(directory, ec);
    const auto files = segment_files(directory);
    char name[64];
    std::snprintf(name, sizeof(name), "run-%04d.h5", files.empty() ? 1 : files.front().first + 1);
    path_ = (fs::path(directory) / name).string();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    H5Pset_fapl_sec2(fapl);
    hid_t f = H5Fcreate(path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0) {
      error = path_ + ": cannot create the checkpoint file";
    } else {
      write_attr(f, "format", std::string("karman-checkpoint"));
      write_attr(f, "version", static_cast<long long>(kFormatVersion));
      write_attr(f, "mesh_hash", mesh_hash);
      write_attr(f, "case_hash", case_hash);
      if (!case_keys.empty()) write_attr(f, "case_keys", case_keys);
      write_attr(f, "cells", static_cast<long long>(n_cells_));
      write_attr(f, "nv", static_cast<long long>(nv));
      write_attr(f, "fields", eq.signature());
      const hsize_t width = static_cast<hsize_t>(n_cells_) * nv;
      state_ = create_records(f, "state", H5T_NATIVE_DOUBLE, width);
      previous_ = create_records(f, "previous", H5T_NATIVE_DOUBLE, width);
      info_ = create_records(f, "info", H5T_NATIVE_DOUBLE, 4);
      checksum_ = create_records(f, "checksum", H5T_NATIVE_UINT64, 0);
      file_ = f;
      if (state_ < 0 || previous_ < 0 || info_ < 0 || checksum_ < 0 || H5Fstart_swmr_write(f) < 0)
        error = path_ + ": cannot set up the checkpoint datasets";
    }
  }
  PetscCall(broadcast_string(comm_, &error));
  PetscCheck(error.empty(), comm_, PETSC_ERR_FILE_OPEN, "%s", error.c_str());
  PetscCall(broadcast_string(comm_, &path_));
  PetscFunctionReturn(0);
}

PetscErrorCode CheckpointWriter::write(long step, double time, double dt, double next_dt, Vec w,
                                       Vec w_prev, double *seconds, double *bytes) {
  PetscFunctionBeginUser;
  const double start = MPI_Wtime();
  std::vector<double> state, previous;
  PetscCall(gather(w, &state));
  PetscCall(gather(w_prev, &previous));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  int ok = 1;
  if (rank == 0) {
    const double info[4] = {static_cast<double>(step), time, dt, next_dt};
    const std::uint64_t sum = record_checksum(state, previous, info);
    const hsize_t width = static_cast<hsize_t>(n_cells_) * nv_;
    // the checksum goes last: it marks the record complete
    ok = append_record(state_, H5T_NATIVE_DOUBLE, count_, width, state.data()) &&
         append_record(previous_, H5T_NATIVE_DOUBLE, count_, width, previous.data()) &&
         append_record(info_, H5T_NATIVE_DOUBLE, count_, 4, info) &&
         append_record(checksum_, H5T_NATIVE_UINT64, count_, 0, &sum);
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm_));
  PetscCheck(ok, comm_, PETSC_ERR_FILE_WRITE,
             "%s: writing checkpoint record %lld (step %ld) failed (disk full?)", path_.c_str(),
             count_, step);
  ++count_;
  if (seconds) *seconds = MPI_Wtime() - start;
  if (bytes) *bytes = (2.0 * n_cells_ * nv_ + 4) * sizeof(double) + sizeof(std::uint64_t);
  PetscFunctionReturn(0);
}

PetscErrorCode CheckpointWriter::close() {
  PetscFunctionBeginUser;
  for (long long *d : {&state_, &previous_, &info_, &checksum_})
    if (*d >= 0) H5Dclose(*d), *d = -1;
  if (file_ >= 0) H5Fclose(file_), file_ = -1;
  PetscFunctionReturn(0);
}

PetscErrorCode find_latest_checkpoint(MPI_Comm comm, const std::string &directory,
                                      const std::string &mesh_hash, const physics::EquationSet &eq,
                                      PetscInt n_cells, CheckpointRecord *record, bool *found) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error, warning, file, case_hash, case_keys;
  double info[4] = {0, 0, 0, 0};
  long long index = -1;
  if (rank == 0) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    for (const auto &[number, path] : segment_files(directory)) {
      RecordData rec;
      long long used = -1;
      bool unreadable = false;
      const std::string e =
          read_segment(path, mesh_hash, eq, n_cells, -1, &rec, &used, &warning, &unreadable);
      if (unreadable) { // a truncated segment: fall back to the one before
        warning += e + "; trying the previous checkpoint file. ";
        continue;
      }
      if (!e.empty()) {
        error = e;
        break;
      }
      if (used < 0) continue; // no complete record in this segment
      file = path, index = used;
      case_hash = rec.case_hash, case_keys = rec.case_keys;
      std::copy(rec.info, rec.info + 4, info);
      break;
    }
  }
  PetscCall(broadcast_string(comm, &warning));
  if (!warning.empty()) PetscCall(log_warning(comm, "%s", warning.c_str()));
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_UNEXPECTED, "%s", error.c_str());
  PetscCall(broadcast_string(comm, &file));
  PetscCall(broadcast_string(comm, &case_hash));
  PetscCall(broadcast_string(comm, &case_keys));
  PetscCallMPI(MPI_Bcast(info, 4, MPI_DOUBLE, 0, comm));
  PetscCallMPI(MPI_Bcast(&index, 1, MPI_LONG_LONG, 0, comm));
  *found = index >= 0;
  record->file = file;
  record->index = index;
  record->step = static_cast<long>(info[0]);
  record->time = info[1];
  record->dt = info[2];
  record->next_dt = info[3];
  record->case_hash = case_hash;
  record->case_keys = case_keys;
  PetscFunctionReturn(0);
}

PetscErrorCode read_checkpoint(const mesh::Mesh &mesh, const CheckpointRecord &record,
                               const physics::EquationSet &eq, Vec w, Vec w_prev) {
  PetscFunctionBeginUser;
  const int nv = eq.nv();
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(mesh.comm, &rank));
  PetscCallMPI(MPI_Comm_size(mesh.comm, &size));
  NaturalLayout layout;
  std::vector<PetscInt> gids(mesh.cell_gid.begin(), mesh.cell_gid.begin() + mesh.n_owned_cells);
  PetscCall(layout.create(mesh.comm, mesh.n_global_cells, gids));
  RecordData rec;
  std::string error, warning;
  if (rank == 0) {
    long long used;
    bool unreadable;
    // the mesh hash was checked when the record was found: read with the file's own
    hid_t f = open_for_reading(record.file);
    std::string mh;
    if (f >= 0) {
      read_attr(f, "mesh_hash", &mh);
      H5Fclose(f);
    }
    error = read_segment(record.file, mh, eq, mesh.n_global_cells, record.index, &rec, &used,
                         &warning, &unreadable);
  }
  PetscCall(broadcast_string(mesh.comm, &error));
  PetscCheck(error.empty(), mesh.comm, PETSC_ERR_FILE_READ, "%s", error.c_str());
  // scatter the serial-order data in blocks, then to the owned cells
  int mine = static_cast<int>(layout.block_size() * nv);
  std::vector<int> counts(size), displs(size, 0);
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mesh.comm));
  if (rank == 0)
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  for (int which = 0; which < 2; ++which) {
    std::vector<double> block(mine), owned(mesh.n_owned_cells * nv);
    const std::vector<double> &all = which == 0 ? rec.state : rec.previous;
    PetscCallMPI(MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_DOUBLE, block.data(),
                              mine, MPI_DOUBLE, 0, mesh.comm));
    PetscCall(layout.from_natural(block.data(), owned.data(), nv));
    PetscScalar *a;
    Vec v = which == 0 ? w : w_prev;
    PetscCall(VecGetArray(v, &a));
    std::copy(owned.begin(), owned.end(), a);
    PetscCall(VecRestoreArray(v, &a));
  }
  PetscFunctionReturn(0);
}

} // namespace karman::io
