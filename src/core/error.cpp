// Error reporting: see include/karman/core/error.hpp.
#include "karman/core/error.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

namespace karman {
namespace {

std::string g_message;
bool g_have_message = false;

PetscErrorCode record_error(MPI_Comm, int, const char *, const char *, PetscErrorCode code,
                            PetscErrorType type, const char *mess, void *) {
  if (!g_have_message) {
    if (mess && mess[0]) {
      g_message = mess;
    } else {
      const char *text = nullptr;
      PetscErrorMessage(code, &text, nullptr);
      g_message = text ? text : "unknown error";
    }
    g_have_message = true;
  }
  (void)type;
  return code;
}

} // namespace

PetscErrorCode install_error_handler() {
  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(record_error, nullptr));
  PetscFunctionReturn(0);
}

std::string last_error_message() {
  return g_message;
}

void clear_error() {
  g_message.clear();
  g_have_message = false;
}

int report_error_and_exit_code(PetscErrorCode code) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string message =
      g_have_message ? g_message : std::string("error code ") + std::to_string(code);
  // Did every rank fail?  A non-blocking barrier completes only if all ranks reach it.
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  const auto start = std::chrono::steady_clock::now();
  while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (done) {
    if (rank == 0) std::fprintf(stderr, "karman: error: %s\n", message.c_str());
    std::fflush(stderr);
    return 1;
  }
  if (size > 1)
    std::fprintf(stderr, "karman: error (rank %d): %s\n", rank, message.c_str());
  else
    std::fprintf(stderr, "karman: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

} // namespace karman
