// The one small logger: only rank 0 of the communicator prints; every line goes to
// stdout with a fixed prefix so that job logs can be grepped.
#pragma once

#include <petscsys.h>

namespace karman {

/// printf-style line on rank 0 of `comm` ("karman: " prefix, newline appended).
PetscErrorCode log_info(MPI_Comm comm, const char *format, ...) PETSC_ATTRIBUTE_FORMAT(2, 3);

/// Warning on rank 0 of `comm` ("karman: warning: " prefix), to stderr.
PetscErrorCode log_warning(MPI_Comm comm, const char *format, ...) PETSC_ATTRIBUTE_FORMAT(2, 3);

} // namespace karman
