// The crash tests' fault hooks from the environment (see include/karman/cli/fault_injection.hpp).
#include "karman/cli/fault_injection.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace karman::cli {
namespace {

// SIGKILL on this process (as a scheduler or the OOM killer would), now or after `delay` seconds.
void kill_self(double delay) {
  if (delay <= 0) std::raise(SIGKILL);
  std::thread([delay] {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(getpid(), SIGKILL);
  }).detach();
}

} // namespace

PetscErrorCode campaign_fault_hook(MPI_Comm comm, const std::vector<std::string> &phases,
                                   long first, const char *what, FaultHook *hook) {
  PetscFunctionBeginUser;
  *hook = {};
  const char *kill = std::getenv("KARMAN_TEST_KILL");
  if (!kill) PetscFunctionReturn(0);
  const std::string text = kill;
  const std::size_t colon = text.find(':');
  char *end = nullptr;
  const std::string phase = text.substr(0, colon);
  const long evaluation =
      colon == std::string::npos ? 0 : std::strtol(text.c_str() + colon + 1, &end, 10);
  std::string names;
  for (const auto &p : phases) names += (names.empty() ? "" : ", ") + p;
  PetscCheck(std::find(phases.begin(), phases.end(), phase) != phases.end() &&
                 evaluation >= first && end && *end == '\0',
             comm, PETSC_ERR_USER_INPUT,
             "environment variable KARMAN_TEST_KILL='%s': expected PHASE:N with PHASE one of %s "
             "and N >= %ld for %s",
             kill, names.c_str(), first, what);
  *hook = [phase, evaluation](const FaultPoint &p) {
    if (phase == p.phase && evaluation == p.count) kill_self(p.delay);
  };
  PetscFunctionReturn(0);
}

FaultHook adjoint_state_fault_hook() {
  const char *v = std::getenv("KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE");
  if (!v) return {};
  char *end = nullptr;
  const long level = std::strtol(v, &end, 10);
  if (end == v) return {};
  const std::string phase =
      std::strcmp(end, ":partial") == 0 ? "adjoint-state-partial" : "adjoint-state";
  return [phase, level](const FaultPoint &p) {
    if (phase == p.phase && level == p.count) kill_self(0);
  };
}

bool reevaluation_fault() {
  const char *v = std::getenv("KARMAN_TEST_FAIL_REEVALUATION");
  return v && v[0] && std::strcmp(v, "0") != 0;
}

bool unconverged_cycle_fault(long cycle, bool estimate) {
  const char *v = std::getenv("KARMAN_TEST_UNCONVERGED_CYCLE");
  char *end = nullptr;
  if (!v || !v[0] || std::strtol(v, &end, 10) != cycle) return false;
  return std::strcmp(end, estimate ? ":estimate" : "") == 0;
}

} // namespace karman::cli
