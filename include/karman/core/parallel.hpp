// Small MPI/PETSc helpers shared by the layers: broadcasting a string (typically an error
// found on rank 0, so that every rank fails together) and reading the local form (owned
// and ghost entries) of a ghosted vector.
#pragma once

#include <petscvec.h>

#include <string>
#include <vector>

namespace karman {

/// Broadcasts *s from `root` to every rank of comm.  Collective.
PetscErrorCode broadcast_string(MPI_Comm comm, std::string *s, int root = 0);

/// Updates the ghosts of a ghosted vector and copies its local form (owned then ghost
/// entries) into *values.  Collective.
PetscErrorCode ghosted_local_values(Vec v, std::vector<double> *values);

} // namespace karman
