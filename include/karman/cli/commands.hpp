// The karman commands.  Each takes the parsed command line, runs collectively on
// PETSC_COMM_WORLD and returns a PetscErrorCode.
#pragma once

#include "karman/cli/cli_args.hpp"
#include "karman/cli/flow_output.hpp"
#include "karman/config/case_config.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

namespace karman::cli {

/// Shared start of every command: loads and validates the case (with --set overrides),
/// inserts its petsc: block into PETSc's options, creates OUTDIR, writes
/// OUTDIR/case.resolved.yaml and prints the resolved configuration.
PetscErrorCode start_command(MPI_Comm comm, const CliArgs &args, config::CaseConfig *cfg);

/// Meshes (if needed), loads and distributes the case's mesh.
PetscErrorCode load_case_mesh(MPI_Comm comm, const config::CaseConfig &cfg, mesh::Mesh *mesh);

/// `karman mesh`: mesh, distribute, check geometry, write summary.json, ParaView and HDF5 files.
PetscErrorCode run_mesh_command(MPI_Comm comm, const CliArgs &args);

struct SteadyRunInfo {
  double wall_time = 0, peak_memory_mib = 0;
};

/// The steady solve of `res` from the case's initial state into w, with the log,
/// forces.csv, summary.json and flow output of `karman run`; a solve that does not
/// converge writes last_good* and is an error.  Collective.
PetscErrorCode solve_steady_case(MPI_Comm comm, const CliArgs &args, const config::CaseConfig &cfg,
                                 discretization::FlowResidual &res, const FlowMonitors &mon, Vec w,
                                 SteadyRunInfo *info);

/// `karman run`: steady or unsteady solve; log, forces.csv, summary.json, ParaView and HDF5 output.
PetscErrorCode run_run_command(MPI_Comm comm, const CliArgs &args);

/// `karman adjoint`: steady adjoint, gradient.json, adjoint and sensitivity fields.
PetscErrorCode run_adjoint_command(MPI_Comm comm, const CliArgs &args);

/// `karman verify`: adjoint gradients against finite differences and a shape Taylor test.
PetscErrorCode run_verify_command(MPI_Comm comm, const CliArgs &args);

/// Dispatches args.command.
PetscErrorCode run_command(MPI_Comm comm, const CliArgs &args);

} // namespace karman::cli
