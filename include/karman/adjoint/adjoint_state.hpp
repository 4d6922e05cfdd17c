// The saved state of an interrupted unsteady adjoint sweep (UnsteadyAdjointOptions::save_every,
// resume).  The state after level n is ONE HDF5 file (OUTDIR/adjoint-state.h5):
//   /fields/psi1, /fields/psi2  psi^n, psi^{n+1} in serial cell order; attribute "level" = n
//   /fields/psi3, ...           psi^{n+2}, ... (adjoint.initial_guess > 2: the history that the
//                               initial guesses combine, so that a resumed sweep repeats exactly)
//   /vertex_fields/xbar         dJ/dX summed over levels N..n, serial vertex order
//   /adjoint_state              JSON: format, version, level n (again), steps, dt, J, the
//                               problem hash, time scheme, initial condition and objective,
//                               parameter gradient sums, per-step control series
//   root attribute mesh_hash    (io::mesh_hash), as every karman fields file
// written completely under <state>.tmp and renamed over <state> (after a barrier, by rank 0),
// so that a kill leaves the previous state whole; partition independent (saved on P ranks,
// resumed on Q).  Loading refuses, naming the file and what differs, a state of another mesh,
// problem, number of steps, dt, scheme, initial condition or objective, a state whose two
// levels disagree, and a corrupt or truncated file.  The crash tests' hook (FaultHook) is called
// at the points "adjoint-state-partial" (psi written, the rest not) and "adjoint-state" (the
// temporary file complete, not renamed).
#pragma once

#include "karman/adjoint/unsteady_adjoint.hpp"

#include <string>
#include <vector>

namespace karman::adjoint {

/// The run that an adjoint state belongs to: the discretization (mesh, current coordinates,
/// unknowns per cell), the case and its time levels (steps of dt).
struct AdjointStateRun {
  const discretization::FlowResidual &res;
  const config::CaseConfig &cfg;
  long steps;
  double dt;
};

/// Saves the adjoint state after level n (psi^n, psi^{n+1}, ... = history, the sums in r: X,
/// parameters, control) to path.  fault: the crash tests' hook (empty: none).  Collective.
PetscErrorCode save_adjoint_state(const AdjointStateRun &run, const std::string &path, long n,
                                  const std::vector<Vec> &history, const UnsteadyAdjointResult &r,
                                  const FaultHook &fault);

/// Reads the adjoint state at path: its level into n, psi^n, psi^{n+1}, ... into history (those
/// the file has; the others zero), the sums into r (r->X: one entry per local vertex); refuses a
/// state of another run.  Collective.
PetscErrorCode load_adjoint_state(const AdjointStateRun &run, const std::string &path, long *n,
                                  const std::vector<Vec> &history, UnsteadyAdjointResult *r);

} // namespace karman::adjoint
