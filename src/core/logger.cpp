// Rank-0 logger: see include/karman/core/logger.hpp.
#include "karman/core/logger.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace karman {
namespace {

PetscErrorCode vprint(MPI_Comm comm, FILE *stream, const char *prefix, const char *format,
                      va_list args) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    char buffer[4096];
    std::vsnprintf(buffer, sizeof(buffer), format, args);
    std::fprintf(stream, "%s%s\n", prefix, buffer);
    std::fflush(stream);
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode log_info(MPI_Comm comm, const char *format, ...) {
  PetscFunctionBeginUser;
  va_list args;
  va_start(args, format);
  PetscErrorCode ierr = vprint(comm, stdout, "karman: ", format, args);
  va_end(args);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode log_warning(MPI_Comm comm, const char *format, ...) {
  PetscFunctionBeginUser;
  va_list args;
  va_start(args, format);
  PetscErrorCode ierr = vprint(comm, stderr, "karman: warning: ", format, args);
  va_end(args);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

} // namespace karman
