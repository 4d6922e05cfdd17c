// The crash tests' fault hooks (core/fault_injection.hpp) from the environment of the karman
// executable.  Only the command line reads these variables; the library takes the hook.
//   KARMAN_TEST_KILL=PHASE:N                    SIGKILL at point PHASE of evaluation N of a
//                                               campaign (timed points: after the point's delay)
//   KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE=N  SIGKILL while the unsteady adjoint saves the state
//   KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE=N:partial   of level N (complete / psi only)
//   KARMAN_TEST_FAIL_REEVALUATION=1             a shape campaign's evaluation of its best design
//                                               at the end fails (the summary of its earlier one)
//   KARMAN_TEST_UNCONVERGED_CYCLE=K             `karman adapt`: the flow solve of cycle K on its
//                                               first mesh counts as not converged
//   KARMAN_TEST_UNCONVERGED_CYCLE=K:estimate    ... cycle K's error estimate
#pragma once

#include "karman/core/fault_injection.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace karman::cli {

/// The hook of KARMAN_TEST_KILL for a campaign whose fault points are `phases`, N >= `first`
/// (`what` names the campaign in the error); unset: an empty hook.  A value of another form is an
/// error naming the variable.  Collective.
PetscErrorCode campaign_fault_hook(MPI_Comm comm, const std::vector<std::string> &phases,
                                   long first, const char *what, FaultHook *hook);

/// The hook of KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE; unset: an empty hook.
FaultHook adjoint_state_fault_hook();

/// KARMAN_TEST_FAIL_REEVALUATION is set (to anything but "" or "0").
bool reevaluation_fault();

/// KARMAN_TEST_UNCONVERGED_CYCLE is `cycle` (the solve on the cycle's first mesh counts as failed)
/// or, with `estimate`, `cycle`:estimate (its error estimate counts as failed).
bool unconverged_cycle_fault(long cycle, bool estimate = false);

} // namespace karman::cli
