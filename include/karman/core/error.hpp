// Error reporting for the karman executable and tests.
//
// PETSc's error machinery carries every failure up the call stack
// (PetscCall/PetscCheck).  karman installs its own handler that records the first
// message and the communicator it was raised on, and prints nothing, so that a user
// sees exactly one line ("karman: error: ...") instead of a traceback.  Errors raised
// collectively (all ranks, e.g. a malformed case file) end the run cleanly; an error on
// a single rank aborts MPI so that no rank hangs in a collective call.
#pragma once

#include <petscsys.h>

#include <string>

namespace karman {

/// Installs the recording error handler (call right after PetscInitialize).
PetscErrorCode install_error_handler();

/// The message of the first error recorded since the last clear_error() (empty if none).
std::string last_error_message();

/// Forgets the recorded error (tests that provoke errors on purpose call it).
void clear_error();

/// Reports a failed command once and returns the process exit status (1).  Waits a
/// bounded time for all ranks to reach the report; if some rank does not (the error
/// was local), prints the local message and calls MPI_Abort.
int report_error_and_exit_code(PetscErrorCode code);

} // namespace karman
