// Small MPI/PETSc helpers shared by the layers: broadcasting a string (typically an error
// found on rank 0, so that every rank fails together), gathering a flat array on rank 0 (for
// files written by rank 0) and reading the local form (owned and ghost entries) of a ghosted
// vector.
#pragma once

#include <petscvec.h>

#include <string>
#include <vector>

namespace karman {

/// Broadcasts *s from `root` to every rank of comm.  Collective.
PetscErrorCode broadcast_string(MPI_Comm comm, std::string *s, int root = 0);

/// Gathers every rank's `mine` on rank 0 into *all (concatenated in rank order; *all is left
/// untouched on the other ranks).  `type` is the MPI type of T.  Collective.
template <typename T>
PetscErrorCode gather_to_root(MPI_Comm comm, const std::vector<T> &mine, MPI_Datatype type,
                              std::vector<T> *all) {
  PetscFunctionBeginUser;
  PetscMPIInt size, rank;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), offsets(size, 0);
  PetscCallMPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  int total = 0;
  for (int r = 0; r < size; ++r) offsets[r] = total, total += counts[r];
  if (rank == 0) all->resize(total);
  PetscCallMPI(MPI_Gatherv(mine.data(), n, type, rank == 0 ? all->data() : nullptr, counts.data(),
                           offsets.data(), type, 0, comm));
  PetscFunctionReturn(0);
}

/// The largest of the ranks' `value`s into *largest (on ties the lowest rank's) and that rank's
/// `n` doubles `data` into `out` on every rank (`out` may be `data`): where a maximum lies.  A
/// minimum: -value.  Collective.
PetscErrorCode max_with_data(MPI_Comm comm, double value, const double *data, int n,
                             double *largest, double *out);

/// A memory need against the nodes of comm: each node's `need` bytes (summed over its ranks) within
/// `fraction` x its available bytes, which are `free_bytes` (the node's free memory, the same on
/// its ranks) plus the `reusable` bytes of its ranks (memory the job holds and would reuse), at
/// most the PETSc option `limit_option` GiB when given (a batch system's limit).  *fits: on every
/// node; *needed_gib, *available_gib (optional): those of the node where it is tightest (largest
/// need - fraction x available).  Collective.
PetscErrorCode node_memory_fits(MPI_Comm comm, double need, double reusable, double free_bytes,
                                double fraction, const char *limit_option, bool *fits,
                                double *needed_gib = nullptr, double *available_gib = nullptr);

/// A direct solver's factors, `bytes` on this rank, against the node's free memory (free pages;
/// the ranks of each node together within 80 % of it, at most -lu_fallback_memory GiB):
/// node_memory_fits with the settings the flow's LU fallback and the mesh deformation's LU share.
/// Collective.
PetscErrorCode lu_factors_fit(MPI_Comm comm, double bytes, bool *fits, double *needed_gib = nullptr,
                              double *available_gib = nullptr);

/// Updates the ghosts of a ghosted vector and copies its local form (owned then ghost
/// entries) into *values.  Collective.
PetscErrorCode ghosted_local_values(Vec v, std::vector<double> *values);

} // namespace karman
