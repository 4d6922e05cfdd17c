// Crash-safe, partition-independent HDF5 checkpoints of an unsteady run.
//
// One file per run segment, OUTDIR/checkpoints/run-NNNN.h5 (a restarted run starts
// the next segment), holding one record per checkpoint step:
//   /state     [R][N nv]  w^n in serial cell order (natural_layout.hpp)
//   /previous  [R][N nv]  w^{n-1}, the BDF2 history
//   /info      [R][4]     step n, time t^n, dt_{n-1} (the step to t^n), and with time.dt auto
//                         the step-size controller's next step (0 otherwise)
//   /checksum  [R]        64-bit FNV-1a of the record's state, previous and info
//   attributes: format "karman-checkpoint", version, mesh_hash, case_hash, cells, nv, fields
//               (the equation set's signature, physics::EquationSet::signature(); files of
//               versions before it hold (p, u): "pressure:1,velocity:<nv - 1>"), and
//               case_keys (the text behind case_hash: CaseConfig::problem_keys())
// Records are appended with HDF5's single-writer/multiple-reader (SWMR) mode, which
// keeps the file readable at every instant: a run killed at any moment leaves a file
// whose complete records can be read.  /checksum is extended last, so a record is
// complete only when its checksum is there; a record whose data do not match its
// checksum is reported as corrupt.  Rank 0 does the file I/O (SWMR needs the POSIX
// driver); the data are gathered to it in serial order.
#pragma once

#include "karman/io/natural_layout.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/physics/equation_set.hpp"

#include <petscvec.h>

#include <cstdint>
#include <string>

namespace karman::io {

struct CheckpointRecord {
  std::string file;
  long long index = -1; ///< record index in the file
  long step = 0;
  double time = 0, dt = 0;
  double next_dt = 0;    ///< time.dt auto: the controller's next step (0: a fixed-step run)
  std::string case_hash; ///< of the case that wrote the file
  std::string case_keys; ///< its CaseConfig::problem_keys() text ("" in files of older versions)
};

class CheckpointWriter {
public:
  CheckpointWriter() = default;
  CheckpointWriter(const CheckpointWriter &) = delete;
  CheckpointWriter &operator=(const CheckpointWriter &) = delete;
  ~CheckpointWriter();

  /// Creates the next run-NNNN.h5 in `directory`; `case_keys` (if not empty) is stored with
  /// `case_hash` so that a restart can name the keys that changed.  Collective.
  PetscErrorCode open(const mesh::Mesh &mesh, const std::string &directory,
                      const std::string &mesh_hash, const std::string &case_hash,
                      const physics::EquationSet &eq, const std::string &case_keys = "");
  /// Appends a record with w^n = w and w^{n-1} = w_prev (owned order, nv values per cell).
  /// Returns the seconds spent and the bytes of the record.  Collective.
  PetscErrorCode write(long step, double time, double dt, double next_dt, Vec w, Vec w_prev,
                       double *seconds, double *bytes);
  PetscErrorCode close();
  const std::string &path() const { return path_; }

private:
  PetscErrorCode gather(Vec v, std::vector<double> *all) const;
  MPI_Comm comm_ = MPI_COMM_NULL;
  NaturalLayout layout_;
  int nv_ = 0;
  PetscInt n_cells_ = 0;
  std::string path_;
  long long count_ = 0;
  long long file_ = -1, state_ = -1, previous_ = -1, info_ = -1, checksum_ = -1; ///< hid_t (rank 0)
};

/// Finds the latest complete record in directory/run-*.h5 (collective; rank 0 reads).
/// Incomplete records and unreadable (truncated) files are skipped with a warning; a corrupt
/// record, a checkpoint of another mesh or of other fields than `eq`'s is an error naming the
/// file and the record (or the fields).  The
/// case that wrote the file is returned in record->case_hash / case_keys: the caller decides
/// whether a different case may continue (karman run --restart --accept-case-change).
PetscErrorCode find_latest_checkpoint(MPI_Comm comm, const std::string &directory,
                                      const std::string &mesh_hash, const physics::EquationSet &eq,
                                      PetscInt n_cells, CheckpointRecord *record, bool *found);

/// Reads a record into w and w_prev (owned order).  Collective.
PetscErrorCode read_checkpoint(const mesh::Mesh &mesh, const CheckpointRecord &record,
                               const physics::EquationSet &eq, Vec w, Vec w_prev);

/// 64-bit hash of a record's data (the checksum stored with it).
std::uint64_t record_checksum(const std::vector<double> &state, const std::vector<double> &previous,
                              const double info[4]);

} // namespace karman::io
