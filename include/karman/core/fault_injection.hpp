// Fault injection for the crash tests (tests/cli/optimize_kill.sh, control_optimize.sh,
// unsteady_adjoint.sh): library code announces the points where a test may kill the process,
// and a hook that its caller passes in decides.  The library never reads the environment for
// this; the command line builds its hook from KARMAN_TEST_KILL and
// KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE (src/cli/fault_injection.cpp).  No hook: no effect.
//
// Points (phase, count):
//   "forward", "adjoint", "deformation"   evaluation `count` (1-based) of a shape campaign: after
//                                         the first Newton iteration, after the first adjoint
//                                         solve when there are two or more, after the mesh
//                                         deformation solve
//   "forward" with delay > 0              evaluation `count` of a control campaign: a kill timed
//                                         `delay` seconds into the forward run
//   "adjoint"                             evaluation `count` of a control campaign: a snapshot in
//                                         the first half of the backward sweep
//   "adjoint-state", "adjoint-state-partial"  the unsteady adjoint's state of time level `count`:
//                                         complete temporary file written (before the rename), or
//                                         only its psi datasets
#pragma once

#include <functional>

namespace karman {

struct FaultPoint {
  const char *phase = ""; ///< see above
  long count = 0;         ///< evaluation (1-based) or time level
  double delay = 0;       ///< > 0: a kill timed this many seconds after the point
};

/// Called at every fault point; a crash test's hook kills the process at the one it wants.
using FaultHook = std::function<void(const FaultPoint &)>;

} // namespace karman
