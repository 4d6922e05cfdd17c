// The karman commands.  Each takes the parsed command line, runs collectively on
// PETSC_COMM_WORLD and returns a PetscErrorCode.
#pragma once

#include "karman/cli/cli_args.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/driver/flow_output.hpp"
#include "karman/config/case_config.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

namespace karman::cli {

/// Shared start of every command: loads and validates the case (with --set overrides),
/// inserts its petsc: block into PETSc's options, creates OUTDIR, writes
/// OUTDIR/case.resolved.yaml and prints the resolved configuration.
PetscErrorCode start_command(MPI_Comm comm, const CliArgs &args, config::CaseConfig *cfg);

/// `karman mesh`: mesh, distribute, check geometry, write summary.json, ParaView and HDF5 files.
PetscErrorCode run_mesh_command(MPI_Comm comm, const CliArgs &args);

/// The steady solve of the case from its initial state into w, with the log, forces.csv,
/// summary.json and flow output of `karman run`; a solve that does not converge writes
/// last_good* and is an error.  Collective.
PetscErrorCode solve_steady_case(const CliArgs &args, driver::FlowCase &fc, Vec w,
                                 driver::SteadySolution *solution);

/// `karman run`: steady or unsteady solve; log, forces.csv, summary.json, ParaView and HDF5 output.
PetscErrorCode run_run_command(MPI_Comm comm, const CliArgs &args);

/// `karman adjoint`: steady adjoint, gradient.json, adjoint and sensitivity fields.
PetscErrorCode run_adjoint_command(MPI_Comm comm, const CliArgs &args);

/// `karman adapt`: goal-oriented adaptation of a steady case's mesh to its objective (adapt.csv,
/// per cycle the run's output and the indicator, the adapted meshes and size fields).
PetscErrorCode run_adapt_command(MPI_Comm comm, const CliArgs &args);

/// `karman verify`: adjoint gradients against finite differences and a shape Taylor test.
PetscErrorCode run_verify_command(MPI_Comm comm, const CliArgs &args);

/// `karman optimize`: shape optimization (optimization.csv, designs.csv, the journal, shape and
/// flow series, optimized.msh, summary.json).
PetscErrorCode run_optimize_command(MPI_Comm comm, const CliArgs &args);

/// Dispatches args.command.
PetscErrorCode run_command(MPI_Comm comm, const CliArgs &args);

} // namespace karman::cli
