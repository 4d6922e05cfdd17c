// The linear solvers of karman: the forward Newton step J dw = -R and the adjoint's transposed
// solve J^T psi = -g, both PETSc KSP/PC chosen by the case key solver.linear and PETSc options.
//  * direct: a KSP of the given type (preonly for steady Newton steps, GMRES around reused factors
//    in time) preconditioned by an LU factorization with MUMPS (parallel, supports transposed
//    solves).  Robust and exact; memory grows faster than the mesh (2D ~20 KiB, 3D ~90 KiB per
//    cell).
//  * iterative: right-preconditioned GMRES on the exact Jacobian J, preconditioned by one cycle of
//    coupled algebraic multigrid (PCGAMG) on the compact face-neighbour matrix P (all nv = 1 + dim
//    unknowns of a cell aggregated together, block size nv), with Richardson / block-Jacobi ILU
//    smoothing (each rank's block in reverse Cuthill-McKee order; pivots that are not positive
//    shifted) on every level: W-cycles with 2 sweeps of ILU(0) damped by 0.6 (3D: 0.8) on steady
//    systems (undamped they diverge at Re 40 and more once the pseudo-time step is large; the 3D
//    steady adjoint uses V-cycles, cheaper there for about the same iterations); on time
//    steps and the unsteady adjoint's levels the coarse correction first and then 1 sweep
//    (kaskade), ILU(1) in 2D: P's point blocks hold the Rhie-Chow pressure coupling, so ILU of the
//    coupled matrix smooths pressure and velocity together (the coupled-AMG approach of
//    pressure-based coupled FV solvers; the exact Jacobian stays the outer operator as in DAFoam
//    and ADflow).  Measured on DFG 2D-1 (Newton Jacobians, GMRES to 1e-6, 2 ranks): smoothed
//    aggregation with W-cycles needs 26 / 28 / 28 iterations on 20k / 80k / 312k cells (plain
//    aggregation with V-cycles 30 / 50 / 60; SIMPLE with AMG blocks, the field split of Klaij &
//    Vuik 2013, did not reach 1e-6 in 300 once the pseudo-time shift was small).  On time steps (a
//    strong time term) smoothed aggregation diverges and plain aggregation with V-cycles needs 5-10
//    iterations per 1e-3 (DFG 2D-2): hence the two defaults of LinearSystems (DFG 2D-2 level 1, dt
//    0.0085, GMRES to 1e-3 on developed shedding: 14-17 iterations with V(1,1) cycles, 8-9 ms each
//    on 2 ranks; a SIMPLE field split (selfp Schur complement of P) needs 16 even with exact LU of
//    both blocks, ASM(2)/LU of P 18, GAMG on the exact Jacobian 17, an LU of the exact Jacobian
//    reused across steps 9 at 27 ms). The adjoint solves J^T psi = g as an untransposed system
//    (transposed_operators: a virtual J^T and the multigrid of P^T; the unsteady adjoint with GMRES
//    recycling a subspace from level to level, solver/recycling_gmres.hpp).  Memory is about linear
//    in the cells.
//  * auto: iterative, and a Newton solve or an adjoint solve whose GMRES does not converge is
//    done again with the direct LU (fallback_linear_solve), if its estimated memory fits
//    (direct_fits_in_memory); the log says so.  Measured on the shipped cases (results/
//    auto-solver.md, scripts/bench-auto.sh): the multigrid was faster on every 2D and 3D time
//    step and steady solve, also on the smallest meshes (the 452-cell channel of the tests: 0.028
//    instead of 0.128 s per step), where its coarsest level is the whole compact matrix, solved
//    by LU as a preconditioner of GMRES on J.
//  * Roles: the forward Newton solve has no prefix (-ksp_*, -pc_*), the adjoint the prefix adj_
//    (-adj_ksp_*, -adj_pc_*).  Tolerances come from the case (solver.linear_*, adjoint.*).  Every
//    default is set before KSPSetFromOptions, so -ksp_type, -pc_type, -pc_gamg_*, -mg_levels_*
//    (with the role's prefix) override it; the multigrid defaults that PETSc reads only from the
//    options database (cycle type, level smoothers) are put there unless the user set them.
//  * A transposed solve (the adjoint with direct: KSPSolveTranspose with the LU of J or P) needs a
//    preconditioner that can be applied transposed (PCApplyTransposeExists); check_transposed_solve
//    says clearly when it cannot.  The iterative adjoint needs none (transposed_operators).
//  * PreconditionerReuse: when a time-dependent solve sets its preconditioner up again (new LU
//    factors or a new multigrid hierarchy) instead of reusing the last one, and how often it did.
//  * The Newton solver around the forward step (create_newton) records each iterate (residual
//    history, continuation) in its convergence test (set_recording_convergence_test), not in an
//    SNES monitor, so that PETSc options such as -snes_monitor_cancel cannot switch it off.
#pragma once

#include "karman/solver/solver_options.hpp"

#include "karman/config/case_config.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsnes.h>

#include <functional>
#include <string>
#include <vector>

namespace karman::discretization {
class FlowResidual;
}

namespace karman::solver {

/// What a linear solver is for; the role gives its options prefix.
enum class LinearSolverRole {
  Newton,  ///< the forward Newton step: no prefix (-ksp_type, -pc_type ...)
  Adjoint, ///< the adjoint's transposed solve: prefix adj_ (-adj_ksp_type, -adj_pc_type ...)
  /// auto's LU after a failed iterative forward solve: prefix fallback_ (-fallback_ksp_type ...)
  NewtonFallback,
  /// auto's LU after a failed iterative adjoint solve: prefix adj_fallback_
  AdjointFallback
};

/// Options prefix of a role: nullptr (none), "adj_", "fallback_" or "adj_fallback_".
const char *options_prefix(LinearSolverRole role);

/// Stopping tests of a Krylov solve (KSPSetTolerances; the divergence tolerance keeps its default).
struct LinearTolerances {
  double rtol = 0, atol = 0;
  PetscInt max_iterations = 0;
};

/// How the linear systems are solved (the case key solver.linear, resolved by linear_method).
enum class LinearMethod {
  Direct,   ///< LU factorization (MUMPS) inside a KSP of the caller's type
  Iterative ///< GMRES on J, coupled algebraic multigrid on the compact matrix
};

/// Which systems a solver sees; the iterative method's multigrid defaults differ (header).
enum class LinearSystems {
  Steady, ///< steady Newton steps (pseudo-time continuation)
  /// the steady adjoint's transposed solve at the converged state: as Steady, but V-cycles in 3D
  /// (linear_solver.cpp has the measurements)
  SteadyAdjoint,
  /// BDF steps (a strong time term) and the unsteady adjoint's levels: each multigrid cycle
  /// solves the coarse level first and then smooths once on the finer ones (PCMG's kaskade
  /// cycle), ILU(1) in 2D
  TimeStepping
};

/// What the multigrid's defaults take from the mesh (linear_solver.cpp): its dimension, and
/// whether it has tetrahedra (all their systems get other smoothers); and from the equations
/// whether a turbulence model is solved (its steady systems get other smoothers).
struct MeshKind {
  int dim = 2;
  bool tetrahedra = false; ///< a 3D mesh with at least one tetrahedron (on any rank)
  bool turbulence = false; ///< the residual has a turbulence model (set by system_kind)
  /// a cell's largest face is kStretchedAspectRatio or more times its smallest (boundary-layer
  /// cells; set by system_kind)
  bool stretched = false;
  /// Steady systems take the boundary-layer settings of the multigrid (linear_solver.cpp): with
  /// a turbulence model or on a stretched mesh.
  bool boundary_layers() const { return turbulence || stretched; }
};

/// The aspect ratio (geometry/mesh_quality.hpp) from which a mesh counts as stretched: the
/// repository's laminar meshes stay below 8, boundary-layer meshes for y+ ~ 1 reach 5e3 - 2e7.
constexpr double kStretchedAspectRatio = 100.0;

/// The kind of `mesh`.  Collective.
MeshKind mesh_kind(const mesh::Mesh &mesh);
/// The kind of the residual's mesh (also whether it is stretched) and equations.  Collective.
MeshKind system_kind(const discretization::FlowResidual &residual);

/// The linear solver of a case (the case key solver.linear, resolved by linear_choice).
struct LinearChoice {
  LinearMethod method = LinearMethod::Iterative;
  /// auto: a failed iterative solve is done again with the direct LU (if it fits in memory)
  bool fallback = false;
};

/// Estimated memory of the LU factors of the exact Jacobian per cell, 2D and 3D (MUMPS, measured
/// on DFG 2D-1 and 3D-1Z: ~20 and ~90 KiB per cell).
constexpr double kDirectBytesPerCell2D = 20.0 * 1024, kDirectBytesPerCell3D = 90.0 * 1024;

/// Multigrid (iterative): the hierarchy is coarsened down to this many unknowns, solved exactly
/// (LU) on the coarsest level.  Time steps and the unsteady adjoint's levels: 4000, which on DFG
/// 2D-2 gives two levels instead of three on level 0 (2232 coarse unknowns instead of 897) and a
/// coarse level of about 4000 instead of 2000 above, at about the same cost per cycle (2 ranks).
/// DFG 2D-2 level 1 from rest to t = 6 with the forward-only tolerances of bench-dfg2d2.sh: 13.3
/// instead of 15.2-15.9 s per simulated second, 11.6 instead of 13.0 GMRES iterations per step.
/// 40 steps from rest (dt 0.005, the adjoint benchmark): converged forward on level 0 3702
/// instead of 4669 GMRES iterations (4.0-4.7 instead of 5.3-6.5 s), the adjoint 2412 instead of
/// 2769 (without recycling), level 1 adjoint 2034 instead of 2411.  Steady systems keep
/// 2000 (their W-cycles and two sweeps were tuned with it; not re-measured with 4000).
constexpr PetscInt kSteadyCoarseEquations = 2000;
constexpr PetscInt kTimeStepCoarseEquations = 4000;

/// karman's process-wide PETSc defaults, set right after PetscInitialize (PETSc options given by
/// the user win): -mat_no_inode.  PETSc's I-node kernels for AIJ matrices (products, triangular
/// solves of ILU and LU factors), which it uses whenever consecutive rows share their columns (the
/// nv unknowns of a cell), were 2-3x slower than the plain ones on karman's matrices (DFG 2D-2
/// level 1, 2 ranks: the multigrid's triangular solves 11.4 -> 4.2 s, products 15.0 -> 8.0 s; a
/// 40-step forward run 30.4 -> 17.7 s with the same iterations).  Collective.
PetscErrorCode set_process_defaults();

/// The linear solver of solver.linear (auto: iterative with the LU fallback).
LinearChoice linear_choice(const config::CaseConfig &cfg);
/// What `choice` is, for the log ("iterative (GMRES, coupled algebraic multigrid; solver.linear:
/// auto, LU if it fails)").
std::string describe(const LinearChoice &choice);
/// linear_choice(cfg).method.
LinearMethod linear_method(const config::CaseConfig &cfg);

/// Whether the direct LU of `mesh`'s Jacobian fits in memory: on every node, the estimated factors
/// of its ranks' cells (kDirectBytesPerCell2D/3D) within 80 % of the node's available memory
/// (sysconf _SC_AVPHYS_PAGES, or the PETSc option -lu_fallback_memory GIB where a job may use
/// less than the node has free, e.g. under a batch system's memory limit).  `needed` and
/// `available` (GiB, of the node where it is tightest), when given.  Collective.
PetscErrorCode direct_fits_in_memory(const mesh::Mesh &mesh, bool *fits, double *needed = nullptr,
                                     double *available = nullptr);

/// The check before auto's fallback to LU after an iterative solve that did not converge (`what`:
/// "the Newton solve", "the adjoint solve" ...; `reason` PETSc's): logs the fallback, or, when the
/// LU does not fit in memory, fails with both reasons and the memory figures.  Collective.
PetscErrorCode announce_fallback(const mesh::Mesh &mesh, const char *what, const char *reason);

/// Why auto cannot fall back to the LU (direct_fits_in_memory's figures, GiB): "solver.linear:
/// auto cannot fall back to the direct LU: its factors would need about ... GiB on a node with
/// ... GiB available".
std::string no_fallback_reason(double needed, double available);

/// Sets karman's defaults on ksp, before KSPSetFromOptions (or SNESSetFromOptions) so that PETSc
/// options override them: Direct: KSP `direct_type` preconditioned by MUMPS LU; Iterative:
/// right-preconditioned GMRES with PCGAMG configured for `systems` and the mesh's kind (header).
/// The preconditioning matrix of an iterative solve must be the compact matrix
/// (FlowResidual::create_jacobian with compact) with its block size.
PetscErrorCode set_linear_solver_defaults(KSP ksp, LinearMethod method, LinearSystems systems,
                                          const MeshKind &kind, KSPType direct_type);

/// Creates the KSP of a role: its options prefix, the defaults (set_linear_solver_defaults), the
/// tolerances, then KSPSetFromOptions.  Collective.
PetscErrorCode create_linear_solver(MPI_Comm comm, LinearSolverRole role, LinearMethod method,
                                    LinearSystems systems, const MeshKind &kind,
                                    KSPType direct_type, const LinearTolerances &tolerances,
                                    KSP *ksp);

/// The Newton solver of the steady and unsteady flow solvers: SNES Newton with a
/// backtracking line search, tolerances from the `solver` section (atol, rtol,
/// max_iterations), residual r, Jacobian J (preconditioner matrix P), the linear solver (role
/// Newton) of `method`, `systems` and the mesh's `kind` (direct: a KSP of type direct_type around
/// the LU) and, when given, the linear tolerances.  SNESSetFromOptions is left to the caller.
PetscErrorCode create_newton(MPI_Comm comm, const SolverOptions &solver, Vec r, Mat J, Mat P,
                             PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             LinearMethod method, LinearSystems systems, const MeshKind &kind,
                             KSPType direct_type, SNES *snes,
                             const LinearTolerances *linear = nullptr);

/// Whether a Newton solve whose line search failed stopped at the round-off floor of its
/// residual (success, reported as CONVERGED_ROUNDOFF): ||R|| fell by 1e12, or is within 100 x the
/// absolute tolerance.  Residuals are volume integrals, so their floor grows with the cells'
/// volumes: on a far field of 100 D (cells of ~50 D^2) a BDF step stalls at 1.2e-12 against
/// atol 1e-12, where the full Newton step cannot lower the norm any more.
bool at_roundoff_floor(double initial_residual, double final_residual, double atol);
/// The reason a Newton solve at the round-off floor reports.
constexpr const char *kConvergedRoundoff =
    "CONVERGED_ROUNDOFF (line search at the round-off floor)";
/// The reason a steady Newton solve whose residual reached its round-off floor reports
/// (solver/steady_solver.hpp).
constexpr const char *kConvergedFloor =
    "CONVERGED_ROUNDOFF (|R| at its round-off floor eps |rho V/dtau w|)";
/// The reason a steady Newton solve whose residual stalled at its round-off floor below the
/// estimate eps |rho V/dtau w| reports (solver/steady_solver.hpp).
constexpr const char *kConvergedFloorStall =
    "CONVERGED_ROUNDOFF (|R| stalled at its round-off floor: 2 full Newton steps in a row lowered "
    "it less than 2x)";
/// The reason a time step stopped by the truncation stop of forward tolerances reports
/// (solver/unsteady_solver.hpp).
constexpr const char *kConvergedTruncation =
    "CONVERGED_TRUNCATION (Newton error below 1/10 of the truncation error estimate)";

/// What a Newton solver records of iterate `it` with residual norm ||R|| = norm.
using NewtonRecorder = std::function<PetscErrorCode(SNES snes, PetscInt it, PetscReal norm)>;

/// An extra stopping rule: after iterate `it` >= 1, whose Newton correction had the norm
/// `snorm`, sets *stop (the same on every rank) to end the solve as converged.
using NewtonStop =
    std::function<PetscErrorCode(SNES snes, PetscInt it, PetscReal snorm, bool *stop)>;

/// Installs SNES's convergence test: record(snes, it, norm) for every iterate (where PETSc calls
/// its monitors), then PETSc's decision: SNESConvergedDefault, or SNESConvergedSkip with
/// -snes_convergence_test skip; any other test is refused, naming `solver` ("the steady solver").
/// Where PETSc's test neither converged nor diverged, `stop` (if given) may end the solve: the
/// reason is then SNES_CONVERGED_SNORM_RELATIVE.  Called after SNESSetFromOptions, so that,
/// unlike a monitor, no PETSc option removes it.  Collective.
PetscErrorCode set_recording_convergence_test(SNES snes, NewtonRecorder record, const char *solver,
                                              NewtonStop stop = nullptr);

/// A GMRES solve that stops at its iteration limit has often stagnated at its restart, not at
/// its preconditioner's limit: DFG 2D-1 on anisotropic Gmsh triangles (BAMG, non-orthogonality
/// up to 85 degrees, cases/dfg-2d1/README.md), level 2, 2 ranks: GMRES(20) stopped at its 200
/// iterations from the second Newton step on and the continuation cut the CFL around directions
/// that never converged (with the LU fallback after 50 steps 157 s, 1.7 GiB); widened to 60 after
/// step 2, 47-151 iterations per step, 8 Newton steps, 33.5 s, 516 MiB.  So the steady Newton
/// solve widens the restart after a linear solve that stopped unconverged, before anything else:
/// x kRestartGrowth, up to kMaxWidenedRestart and the solve's iteration limit.  (The steady
/// adjoint starts wider, kSteadyAdjointRestart.)  PETSc allocates the directions as GMRES uses
/// them, so a wider restart costs memory only where it is used.
constexpr PetscInt kRestartGrowth = 3, kMaxWidenedRestart = 100;
/// The steady adjoint's GMRES restart, with Gram-Schmidt refined where needed
/// (set_linear_solver_defaults, with the measurements)
constexpr PetscInt kSteadyAdjointRestart = 150;

/// The GMRES restart of ksp (0 when ksp is neither GMRES nor FGMRES).
PetscErrorCode gmres_restart(KSP ksp, PetscInt *restart);
/// Widens the restart of ksp after a solve that did not converge (above): when ksp is GMRES or
/// FGMRES, its restart was not set by the user (-[prefix]ksp_gmres_restart) and is below
/// kMaxWidenedRestart and the iteration limit, it is multiplied by kRestartGrowth (capped by
/// both); *from and *to are the restart before and after (equal: not widened).  Collective.
PetscErrorCode widen_restart(KSP ksp, PetscInt *from, PetscInt *to);

/// The first reaction of a steady solve to a linear solve that stopped unconverged, before a wider
/// restart: the multigrid's level smoothers shift only zero pivots of their ILU factors instead of
/// the whole diagonal when a pivot is not positive (-PREFIXmg_levels_sub_pc_factor_shift_type
/// nonzero instead of positive_definite; linear_solver.cpp: the positive-definite shift keeps the
/// ILU of Stokes-like Jacobians at rest stable, and makes it too weak on some later ones).  The
/// option is changed and the smoothers already set up get the new shift for their next
/// factorization.  *changed is false (nothing done) when ksp is not the multigrid, the smoothers
/// already shift only zero pivots, or the user set the option.  Collective.
PetscErrorCode unshift_smoothers(KSP ksp, bool *changed);
/// Undoes unshift_smoothers (the positive-definite shift again, option and smoothers), for a
/// steady solve whose next linear solve did not converge either.  Only for a solver whose
/// smoothers unshift_smoothers changed: the smoothers of tetrahedral and boundary-layer meshes
/// shift only zero pivots by default, and this would give them the shift.  Collective.
PetscErrorCode reshift_smoothers(KSP ksp, bool *changed);

/// A reaction of a steady solve on several ranks to a linear solve that stopped unconverged (after
/// the pivots of unshift_smoothers, before a wider restart): the multigrid's level smoothers
/// become additive Schwarz ILU whose ranks' blocks overlap by kReactionOverlap layers of cells
/// (-PREFIXmg_levels_pc_type asm, -PREFIXmg_levels_pc_asm_overlap) instead of block Jacobi ILU,
/// whose blocks cut the couplings at the rank boundaries.  Not the default: the overlap costs
/// memory and time where block Jacobi converges (linear_solver.cpp, set_smoother_defaults).  The
/// option is changed and the smoothers already made become additive Schwarz at their next
/// set-up.  *changed is false (nothing done) on one rank, when ksp is not the multigrid, or its
/// smoothers are not karman's block Jacobi (already overlapping, or the user's).  Collective.
PetscErrorCode overlap_smoothers(KSP ksp, bool *changed);
/// The overlap of overlap_smoothers, in layers of cells
constexpr PetscInt kReactionOverlap = 1;

/// Sets the preconditioner of ksp up now (KSPSetUp, with its operators set); with more than one
/// rank the multigrid's coarse Galerkin products use PETSc's memory-lean "allatonce" algorithm
/// (-matptap_via, unless the user set it; only during this set-up, since PETSc reads it for every
/// product and sequential ones do not know it).  A later KSPSolve with unchanged operators does
/// not set up again.  Collective.
PetscErrorCode set_up_preconditioner(KSP ksp);

/// What stop_stalled_solves() measured in ksp's last solve.
struct StallReport {
  bool stalled = false; ///< the solve was stopped by the stall test
  PetscInt cycle = 0;   ///< the iterations of a cycle (the GMRES restart)
  PetscInt cycles = 0;  ///< the cycles done at the last check
  double gained = 0;    ///< decades of residual reduction per cycle, on average, at that check
  double needed = 0;    ///< decades per cycle that reach the tolerance within max_it
};
/// The convergence test of ksp (GMRES): PETSc's default, and a stop at the end of a restart
/// cycle when at the average rate of the cycles so far the solve cannot reach its tolerance
/// within its iteration limit (fewer decades per cycle than log10(|r0| / max(rtol |r0|, atol))
/// / (max_it / restart); the reason is then KSP_DIVERGED_ITS and *report says so).  Restarted
/// GMRES rarely speeds up in its later cycles, so such a solve would end at its limit anyway:
/// the caller's next remedy starts that much earlier.  *report (the caller's, alive as long as
/// ksp) is reset at each solve.  Logically collective.
PetscErrorCode stop_stalled_solves(KSP ksp, StallReport *report);

/// The operators of the iterative adjoint (steady and unsteady): J^T psi = g is solved with
/// KSPSolve on JT, a matrix whose products are J^T x (solver::create_block_transpose: karman's
/// kernels on J's block storage; PETSc's virtual transpose for other formats), preconditioned
/// by the multigrid built from PT = P^T, the transposed compact matrix, applied as it is.  That is
/// the same preconditioner as P's applied transposed (the ILU of P^T is the ILU of P transposed,
/// the aggregates are those of the symmetrized graph, the coarse solve is exact), with PETSc's
/// untransposed kernels, which are the faster ones, and any -adj_pc_type works with it (PETSc
/// 3.18's Schur field split has no transposed apply).  Measured, 2 ranks: the unsteady DFG 2D-2
/// level 0 sweep (40 levels, recycling GMRES) 2.30 instead of 2.52 s with the same 1561
/// iterations as with KSPSolveTranspose's transposed multigrid.  JT is created
/// on the first call (J's layout never changes; it follows J's values); PT is computed again when
/// new_preconditioner (P has new values and the preconditioner is to be set up again), reusing its
/// structure.  The caller sets KSPSetOperators(ksp, JT, PT).  Collective.
PetscErrorCode transposed_operators(Mat J, Mat P, bool new_preconditioner, Mat *JT, Mat *PT);

/// Sets up ksp (set_up_preconditioner) and checks that its preconditioner can be
/// applied transposed, as KSPSolveTranspose needs; if not, an error naming the -PREFIXpc_type
/// and the preconditioners that can.  Collective.
PetscErrorCode check_transposed_solve(KSP ksp);

/// Initial guess of a solve in a sequence (the adjoint's levels, backwards in time): the
/// combination x0 = sum_k c_k v_k of earlier solutions v_k (psi^{n+1}, psi^{n+2}, ...) with the
/// least residual ||b - op(A) x0||_2 (op(A) = A^T with `transpose`): one product with A per
/// vector, Gram-Schmidt (classical, twice) on the products (dependent or zero ones left out).  Its
/// residual is never larger than that of x0 = 0, so a Krylov solve that measures convergence
/// against ||b|| (PETSc's default with a nonzero guess) needs at most as many iterations.  For a
/// smooth history the span holds the polynomial extrapolations of degree < k: with a time scale T
/// the guess is good to ~(dt / T)^k, so k = 6 saves most of the digits of a tight tolerance.
/// Returns the guess's relative residual ||b - op(A) x0|| / ||b|| (0 when b = 0), and with
/// `residual` the residual b - op(A) x0 itself (from the products already made: a solver that
/// starts from it saves one).  `work` must hold 2 x previous.size() vectors of b's layout.
/// Collective.
PetscErrorCode least_residual_guess(Mat A, bool transpose, Vec b, const std::vector<Vec> &previous,
                                    const std::vector<Vec> &work, Vec x, double *relative_residual,
                                    Vec residual = nullptr);

/// When a sequence of linear solves (Newton steps in time, adjoint levels) sets its
/// preconditioner up again instead of reusing the last one; counts the set-ups.  The rule counts
/// iterations only, so that a run repeats exactly (a rule on wall times made the unsteady adjoint's
/// gradients differ in the last digits from run to run): set up again when the last solve needed
/// more than max(max_iterations, growth x the iterations of the first solve after the last set-up).
/// LU factors of the exact Jacobian need one iteration right after their set-up, so
/// max_iterations decides; a multigrid cycle needs several even when fresh, and is set up again
/// once they have grown by `growth`.  Set up the first time, after request_setup(), and always
/// when reuse is off.  Reference::Fewest compares with the fewest iterations of a solve since the
/// set-up instead of the first: the unsteady adjoint sets up at its first level, which starts from
/// zero (no later levels to extrapolate from) and takes 1.5-2x the iterations of the next ones, so
/// a limit from that level would keep a stale hierarchy for the whole sweep.
/// The growth of the iteration count that sets a multigrid preconditioner up again: its set-up
/// costs about as much as ten of its iterations (DFG 2D-2, level 0, 2 ranks: the unsteady adjoint
/// needed 4491 iterations in 8.0 s with growth 1.5, 3348 in 5.9 s with 1.1, 3288 in 6.3 s setting
/// up at every level), so a hierarchy is renewed as soon as its count has grown by 10 %.  LU
/// factors (one iteration when fresh) are governed by max_iterations.
constexpr double kReuseGrowth = 1.1;
/// The growth over the fewest iterations since the set-up at which the unsteady adjoint sets its
/// multigrid up again (Reference::Fewest).  DFG 2D-2, 40 levels, 2 ranks, coarse limit
/// kTimeStepCoarseEquations in the adjoint only, with a recycling prototype (subspace updated every
/// fourth level): level 0 1599 iterations with 1.15, 1657 with 1.3 (2769 with the first-solve rule,
/// 2000 coarse unknowns and no recycling); without recycling level 0 2203 with 1.15 (2412 with the
/// first-solve rule), level 1 1897 (2034).
constexpr double kAdjointReuseGrowth = 1.15;

class PreconditionerReuse {
public:
  /// What the iteration count is compared with.
  enum class Reference {
    First, ///< the first solve after the set-up
    Fewest ///< the fewest iterations of a solve since the set-up
  };
  explicit PreconditionerReuse(int max_iterations, double growth = kReuseGrowth, bool reuse = true,
                               Reference reference = Reference::First)
      : max_iterations_(max_iterations), growth_(growth), reuse_(reuse), reference_(reference) {}

  /// The next decision sets the preconditioner up (new step size, checkpoint, retry).
  void request_setup() { requested_ = true; }
  /// Records a finished solve and its iterations.
  void record_solve(PetscInt iterations);
  /// Whether the next solve sets the preconditioner up (counted when it does).
  bool decide_setup();
  /// Number of set-ups decided so far.
  long setups() const { return setups_; }
  bool reuse_enabled() const { return reuse_; }

private:
  PetscInt max_iterations_;
  double growth_;
  bool reuse_;
  Reference reference_;
  bool have_setup_ = false, requested_ = false, fresh_ = false;
  PetscInt last_iterations_ = 0, fresh_iterations_ = 0;
  long setups_ = 0;
};

} // namespace karman::solver
