// Steady solver: Newton's method (PETSc SNES) on R(w) = 0 with pseudo-transient
// continuation.  Each Newton step solves
//   (J + diag(rho V_c / dtau_c) on the transient rows) dw = -R(w),
//   dtau_c = CFL h_c / (|u_c| + nu / h_c),  h_c = V_c^(1/d)
// (the adaptive law below takes the spectral-radius step instead),
// with the CFL number ramped by switched evolution relaxation (Mulder & van Leer 1985):
//   CFL_k = min(CFL_max, CFL_0 ||R_0|| / ||R_k||),
// so the iteration starts robustly and ends as plain Newton (quadratic convergence).
// The continuation adapts when it stalls: the line search on ||R|| can only take tiny steps along
// a pseudo-transient direction that is not a descent direction (seen on tetrahedral meshes of
// DFG 3D-1Z from rest with CFL_0 = 10: ||R|| 1.08e-3 -> 1.07e-3 over 15 iterations, while
// CFL_0 = 1 converges in 9), so when ||R_k|| > 0.95 ||R_(k-5)|| the base CFL_0 is divided by
// 10 (at most every 5 iterations, down to 1e-3 of the case's value) and the ramp continues from
// there (logged).  A line search that fails outright above the round-off floor does the same and
// Newton continues from the last iterate; if it fails again there (no step accepted), the base CFL
// goes the other way, around the value of the first failure: x 10, x 0.01, x 100, x 0.001,
// x 1000 (at most 6 retries, within [1e-3 CFL_0, CFL_max]).  A step of small CFL is close to a
// pseudo-time step, not a descent direction for ||R|| in general, and a larger CFL brings it
// towards Newton's, which is one: DFG 2D-1 from rest with solver.cfl_initial 0.1-0.3 (level 0)
// or 0.5 (level 1) failed at its first or second iterate after cutting to 1e-3 CFL_0.  All
// within solver.max_iterations.
// solver.continuation adaptive (auto: with a turbulence model; the laminar cases keep the law
// above) changes two things.  (1) The line search tests the pseudo-transient residual
// R(w + l dw) + D l dw, D = diag(rho V_c / dtau_c) on the transient rows, for which dw is
// Newton's direction at every CFL (backtracking by halves from l = 1 with the Armijo constant
// 1e-4, at least 1e-4): a pseudo-time step whose steady |R| rises, as it does while a boundary
// layer develops, is still accepted, where the line search on |R| failed at every CFL.  (2) The
// CFL follows the steps instead of |R|: x 2 after a full step (l = 1), / 2 after a step shorter
// than 0.1 or one whose linear solve did not converge (a direction that is not Newton's), kept
// otherwise; a failed line search continues as above from the CFL where it failed.  The
// pseudo-time step starts from solver.cfl_initial auto = 1 there (10 with the law above).  (3) The
// local pseudo-time step is the spectral-radius one of anisotropic meshes (Blazek, ch. 6.1.4):
//   rho V_c / dtau_c = rho (sum_d |u_d| dS_d + nu_eff sum_d dS_d^2 / V_c) / CFL,
// dS_d = half the sum of |S_f,d| over the cell's faces (the cell's projected area along axis d),
// nu_eff = nu (1 + max(0, chi)) >= nu + nu_t (pseudo_time_rate).  h_c = V_c^(1/d) overstates the
// step of a thin cell by about its aspect ratio (10^4 in the boundary layer, 10^7 along the wake
// cut of cases/naca0012-rans) and ignores the eddy viscosity, so the thin cells ran at CFLs
// orders of magnitude above the rest: the NACA 0012 at 10 degrees, level 1, did not converge in
// 95 steps (the CFL cycling between 16 and 64, GMRES at its 200-iteration cap every other step)
// and level 2 stalled at |R| 0.6 after 55 steps (400 s); with the spectral step level 1
// converges in 53 steps (31 s; 70 with (4)) and level 2 stalls later, on the kink of (4).
// (4) With a turbulence model an update that would change the sign of chi = nu~/nu in a cell
// where |chi| > 1 is scaled, with the rest of the cell's update, to end at a tenth of chi
// (limit_sign_changes), before the line search.  SA-neg switches its production, destruction and
// diffusion at nu~ = 0 (a kink), and Newton cycled across it: on the NACA 0012 at 10 degrees, level
// 2, one cell of the upper surface's boundary layer at x = 0.80 went chi 45 -> -38 -> 59 -> -80 on
// successive accepted steps at CFL 1 while |R| grew from 0.07 to 2.5e4 (then the LU fallback); with
// the limit the level converges in 39 Newton steps (2 ranks).
// The adaptive law (2) measured on the TMR flat plate (SA-neg, Re 5e6, first cells of aspect
// ratio 5.4e3-6.0e3, cases/tmr-flat-plate): with the law above level 0 converged only from CFL 1
// (88 Newton steps, with the LU) and level 1 from neither CFL (the line search on |R| failed at
// every retry, the Newton direction of a large-CFL step being nearly singular in the boundary
// layer's nu~ rows: |dchi| 3.6e4 at chi 1.7); with the adaptive law level 0 converges in 28 steps
// (0.5 s), level 1 in 36 (15 s), with the default linear solver. The linear solver is PETSc KSP/PC
// chosen by solver.linear (solver/linear_solver.hpp): direct (LU with MUMPS of J) or iterative
// (Jacobian-free GMRES on J, solver/jacobian_free.hpp, preconditioned by coupled algebraic
// multigrid on the compact matrix P, with Eisenstat-Walker inexact Newton capped at 0.1: the linear
// tolerance follows the nonlinear convergence, so the converged state is the same).  A step whose
// GMRES stops unconverged (its iteration limit, a breakdown) is still taken as far as the line
// search allows, and the steps after it get a stronger linear solver while the stall cut of the
// base CFL waits another 5 steps: a direction that GMRES(20) cannot find is rarely found by a
// smaller CFL.  First the multigrid's ILU smoothers shift only zero pivots if they shifted the
// whole diagonal (solver::unshift_smoothers; the laminar NACA 0012, level 0: 18 Newton steps with
// GMRES at its 200 iterations from step 3 on, 15.2 s, became 9 steps, 1.8 s); if the next linear
// solve does not converge either, the shift is restored (the unshifted ILU can be unstable: on
// DFG 2D-1's anisotropic triangles, level 2, GMRES then made no progress at all).  Then, on two
// or more ranks, once: the smoothers' ILU blocks overlap by a layer of cells
// (solver::overlap_smoothers; docs/solvers.md: the RANS NACA 0012 level 1 at 10 degrees, 77 ->
// 66 Newton steps, 39.0 -> 31.7 s; the Gmsh tetrahedra of DFG 3D-1Z level 0 no longer break
// down).  At any later such step the GMRES restart widens (x 3 up to 100, unless the user set
// -ksp_gmres_restart: solver::widen_restart, with the measurements; the summary counts each);
// -ksp_type, -pc_type and -pc_factor_mat_solver_type override either.  A failed line search
// (DIVERGED_LINE_SEARCH, and DIVERGED_LOCAL_MIN: PETSc's name for one that meets its
// local-minimum test, with the Jacobian-free J |(F, J F)| < 1e-4 |F|^2) continues at another
// base CFL.  With solver.linear: auto (iterative) a
// solve that does not converge is done again from its initial state with the direct LU
// (fallback_linear_solve in linear_solver.hpp; if the factors fit in memory), and the solver keeps
// the LU for its later solves; the summary says so.  Before the LU, a solve that ran out of
// Newton steps or line searches (not one given up as astray or stranded, below: those are the
// linear solver's failures) is done once more from its initial state by the iterative method
// with the forcing terms capped at kTightForcing = 1e-3 instead of kForcing = 0.1 (the summary's
// tightened_forcing; not with the adaptive continuation, nor when the user set the
// Eisenstat-Walker parameters).  The inexact steps of a nearly singular Jacobian can lead Newton
// into a stall that exact steps avoid: DFG 3D-1Z on Gmsh's tetrahedra with sizes 0.02 / 0.05
// (26 318 cells, 2 ranks) stalled near |R| 1e-5 for 50 steps (46 s) and the LU then converged in
// 8 (81.8 s in all, 3 071 MiB); with the second try 9 steps, 52.8 s in all, 355 MiB
// (results/tet-diagnosis.md section 14).  Not the default cap: from the first step it slows the
// solves that converge (DFG 2D-1 level 2 5.75 -> 6.98 s, the hexahedral DFG 3D-1Z level 0 1.93 ->
// 2.99 s) and sent one of the ten tetrahedral meshes of scripts/bench-tet-meshes.sh to the LU;
// nor a reaction within the solve: from the stalled state of the mesh above tighter solves did
// not get out. A non-finite residual or a failed step ends the
// solve with the reason and the residual history; the best state seen is kept for output. The CFL
// update, the history, the best state and the caller's monitor run in SNES's convergence test
// (which then asks SNESConvergedDefault; solver/linear_solver.hpp), not in an SNES monitor, so that
// PETSc options such as -snes_monitor_cancel cannot switch the continuation off.
// A solve also ends as converged (CONVERGED_ROUNDOFF) when |R| reaches its round-off floor
// eps |D w|_2 over the transient rows, D = diag(rho V_c / dtau_c) at CFL 1 (the pseudo-time rates
// above: the largest flux sums of a cell's rows; a dual time step adds its own floor,
// set_time_step). The NACA 0012 at 0 degrees (cases/naca0012-rans, level 0, on a variant of its
// mesh whose lines across the wake are vertical; its README) converges quadratically to |R| 6.4e-10
// and then stays at 4.6e-10-5.2e-10 = 0.44 eps |D w|: the nu~ rows of the wake cut's cells (aspect
// ratio 1.5e7, nu~/nu ~ 3e3) carry diffusive fluxes ~1e4 x their differences, so rtol 1e-10 of
// |R_0| = 1.04 lay below what double precision resolves and the solve ran to solver.max_iterations;
// at 10 degrees the floor is 2.0e-12 and the solve stops at 2.2e-12 by rtol.  On laminar cases the
// floor lies orders of magnitude below the tolerances.  The estimate can also undercount the
// floor: cases/stokes-body-3d (Re 0.1) under `karman verify`'s tolerances (rtol 1e-14, atol 1e-13)
// converges quadratically to |R| 1.3e-11 (1.2e-13 of |R_0|) in 6 steps and then crawled for 9 more
// at 1.0e-11 -> 8.2e-12 (GMRES converged, full steps at CFL_max) to the failed line search.  So
// a solve is at its floor also after kFloorStallSteps = 2 such Newton steps in a row (CFL at its
// maximum, the linear solve converged) that each lowered |R| less than 2x, once |R| is below
// 1e-10 |R_0|: 8 steps there.  Exact Newton steps near a solution reduce |R| quadratically, and
// inexact ones (the forcing terms are capped at 0.1) by at least 10x.
// With solver.linear: auto the iterative solve gives way to the LU before its iteration limit
// when it is astray: its line search failed at kAstrayFailures = 3 iterates whose |R| lay above
// the solve's initial |R| (and the LU fits in memory).  The NACA 0012 RANS at 0 degrees on level 0
// of its wake-strips mesh failed at |R| 4.3, 5.5 and 111 from 1.04 by step 76 (17 s), where the
// rest of its 300 steps took another 150 s without converging, and the LU then converges in 34;
// the converged RANS runs of cases/ (flat plate and bump levels 0-2, the NACA 0012 at 10 and 15
// degrees, levels 0-1) fail there at most once, though |R| rises up to 117x its initial value at
// 15 degrees.
// It also gives way when it is stranded: the linear solves of kStrandedSteps = 5 Newton steps in a
// row stopped unconverged after the reactions above were all spent (restart at its widest, the
// smoothers' shift decided) while |R| fell less than 10x over those steps.  A design of
// cases/shape-min-drag (Re 1, level 2, remeshed by Gmsh around a radial design: 69 320 triangles,
// non-orthogonality up to 56 degrees, skewness 1.29) ran GMRES into its 200 iterations at every
// step from step 5 on, |R| falling 14 % per step (12 s each) with the base CFL cut to 0.1: stopped
// by hand after 13 minutes.
#pragma once

#include "karman/discretization/flow_residual.hpp"
#include "karman/solver/jacobian_free.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petscsnes.h>

#include <functional>
#include <string>
#include <vector>

namespace karman::solver {

struct NewtonRecord {
  int iteration = 0;
  double residual = 0;                 ///< ||R||_2
  double residual_continuity = 0;      ///< ||R_p||_2
  double residual_momentum = 0;        ///< ||R_u||_2 over all components
  std::vector<double> residual_fields; ///< ||R||_2 of each field's rows (EquationSet order)
  double cfl = 0;
  int linear_iterations = 0; ///< of the step that led here
  double wall_time = 0;      ///< since the start of the solve [s]
  double roundoff_floor = 0; ///< eps |rho V/dtau w|_2 at this iterate (header)
};

struct SteadySummary {
  bool converged = false;
  std::string reason;
  int iterations = 0;
  double initial_residual = 0, final_residual = 0, best_residual = 0;
  int best_iteration = 0;
  double wall_time = 0;
  std::vector<NewtonRecord> history;
  /// the iterative solve failed and this is the direct LU's (solver.linear: auto), with the
  /// iterative solve's reason
  bool linear_fallback = false;
  std::string iterative_reason;
  /// auto's iterative solve was done a second time with tighter linear solves (header); with
  /// linear_fallback, the LU's after both
  bool tightened_forcing = false;
  /// auto's iterative solve stopped astray, before its iteration limit, for the LU (header)
  bool abandoned = false;
  /// failed line searches that PETSc named DIVERGED_LOCAL_MIN and the continuation went on from
  /// at another base CFL (header), and the iteration of the first (-1: none)
  int local_min_retries = 0;
  int first_local_min = -1;
  /// Newton steps after which the GMRES restart was widened (the linear solve stopped
  /// unconverged; solver::widen_restart)
  int restart_widenings = 0;
  /// the GMRES restart the widenings reached (0: none)
  int widened_restart = 0;
  /// a linear solve stopped unconverged and the multigrid's smoothers shift only zero pivots
  /// since (solver::unshift_smoothers; false again if the shift was restored)
  bool smoothers_unshifted = false;
  /// a linear solve stopped unconverged on several ranks and the multigrid's smoothers overlap
  /// since (solver::overlap_smoothers)
  bool smoothers_overlapped = false;
  /// the smoothers' pivots were unshifted and the shift restored, as their unshifted ILU did not
  /// converge either (solver::reshift_smoothers): this mesh's Jacobians need the shift, and the
  /// steady adjoint of the state starts with it (FlowCase, AdjointSolver::start_shifted)
  bool smoothers_reshifted = false;
};

/// The adaptive law's limit on updates of the turbulence variable (header, (4)): below
/// kSignChangeFloor in magnitude a value may change sign freely, above it an update that would
/// change its sign is scaled, with the rest of its cell's update, to keep kSignChangeKeep of it.
constexpr double kSignChangeFloor = 1, kSignChangeKeep = 0.1;
/// Scales the Newton update -dw (the new state is w - dw) of every owned cell whose unknown
/// `offset` (of nv per cell) would change sign from a magnitude above kSignChangeFloor, so that
/// it ends at kSignChangeKeep of its value; returns the number of cells limited.
int limit_sign_changes(const PetscScalar *w, PetscScalar *dw, PetscInt n_cells, int nv, int offset);

/// The adaptive law's local pseudo-time rate of a cell at CFL 1, V_c / dtau_c (header):
/// sum_d |u_d| dS_d + nu_eff sum_d dS_d^2 / V + 1e-12 u_ref sum_d dS_d / dim (the floor of a cell
/// at rest without viscosity), with dS_d the cell's projected area along axis d.
double pseudo_time_rate(const double *u, const double *dS, int dim, double V, double nu_eff,
                        double u_ref);

class SteadySolver {
public:
  SteadySolver() = default;
  SteadySolver(const SteadySolver &) = delete;
  SteadySolver &operator=(const SteadySolver &) = delete;
  ~SteadySolver();

  /// Creates the SNES (options prefix none: -snes_*, -ksp_*, -pc_* apply) and, if `announce`,
  /// logs the linear solver chosen (a design loop's later solves do not).  Collective.
  PetscErrorCode setup(discretization::FlowResidual &residual, const config::CaseConfig &cfg,
                       bool announce = true);

  /// Solves from the state in w; on return w holds the last iterate and `best` (if not null)
  /// the iterate with the smallest residual.  `monitor(record, w)` runs after every iteration.
  PetscErrorCode solve(Vec w,
                       const std::function<PetscErrorCode(const NewtonRecord &, Vec)> &monitor,
                       Vec best, SteadySummary *summary);

  /// Continuation for a warm start: the CFL follows cfl_initial * r_ref / |R| with r_ref the
  /// residual of a cold initial state (> 0) instead of this solve's own initial residual, so a
  /// start near the solution (small |R|) begins close to Newton.  0: the default.
  void set_reference_residual(double r_ref) { r_ref_ = r_ref; }
  /// The next solve starts with the multigrid's smoothers shifting only zero pivots (a solve of
  /// the same case before did not converge its linear solves with the shift and kept them so, or
  /// a warm start: driver::FlowCase::solve_steady), on trial: restored at its first unconverged
  /// linear solve (header).  Nothing for the LU or a user's shift.  After setup.  Collective.
  PetscErrorCode start_unshifted();
  /// Starts with the overlapping smoothers of solver::overlap_smoothers (a solve after one that
  /// needed them, solve_steady's caller).  Collective.
  PetscErrorCode start_overlapped();

  /// solver.linear auto: the solves that follow use the direct LU at once (its factors fit in
  /// memory; otherwise nothing changes), as after a failed iterative solve.  Collective.
  PetscErrorCode start_direct();

  /// Dual time stepping (the unsteady solver's continuation of a time step its Newton solve did
  /// not converge, unsteady_solver.hpp): the solves that follow are of one time step's
  /// equations R(w; level) + rho V (a0 w + h) = 0 on the transient rows (`term`, referenced),
  /// with this solver's pseudo-time term on top of the step's own diagonal rho V a0, so that
  /// the continuation ends in the step's solution (the pseudo-time term vanishes there).  The
  /// step's diagonal rho V a0 also enters the round-off floor, eps |(rho V/dtau + rho V a0) w|_2
  /// (header).  term null: the steady equations again.
  void set_time_step(const discretization::TimeLevel &level,
                     const discretization::FlowResidual::TimeTerm *term);

private:
  /// The Newton solver of `method` (role Newton or NewtonFallback: options prefix), its matrices
  /// and its recording convergence test.
  PetscErrorCode create_snes(LinearMethod method, LinearSolverRole role, SNES *snes);
  /// The continuation loop of solve() with `snes` (from the state w, into *summary).
  /// may_abandon: auto's iterative solve, which stops (summary->abandoned) after its line search
  /// failed at kAstrayFailures iterates above the initial residual or when it is stranded
  /// (kStrandedSteps), if the LU fits in memory (header).
  PetscErrorCode continuation(SNES snes, Vec w, SteadySummary *summary, bool may_abandon);
  static PetscErrorCode form_function(SNES, Vec w, Vec R, void *ctx);
  static PetscErrorCode form_jacobian(SNES, Vec w, Mat J, Mat P, void *ctx);
  /// History, CFL for the next step, best state and the caller's monitor for iterate `it` (run by
  /// SNES's convergence test, set_recording_convergence_test).
  PetscErrorCode record_iteration(SNES snes, PetscInt it, PetscReal norm);
  /// rate_: rho V_c / dtau_c at CFL 1 of every owned cell at the state w, the adaptive law's
  /// spectral radius or the isotropic one (header)
  PetscErrorCode update_rates(Vec w);
  /// shift_ = rate_ / CFL (0 at CFL_max) at the state w
  PetscErrorCode update_shift(Vec w);
  /// The round-off floor of |R| at the state w (header): eps |(rate_ + time_diagonal_) w|_2 over
  /// the transient rows.  Collective.
  PetscErrorCode roundoff_floor(Vec w, double *floor);
  /// After Newton step `it`: when its linear solve stopped unconverged, only zero pivots shifted
  /// in the smoothers (solver::unshift_smoothers), then (several ranks, once) overlapping
  /// smoothers (solver::overlap_smoothers), or, if those were done or do not apply, a wider
  /// GMRES restart (solver::widen_restart; header), with the smoothers' default shift again when
  /// the unshifted ones did not converge either (solver::reshift_smoothers), logged.
  PetscErrorCode widen_unconverged(SNES snes, PetscInt it);
  /// Caps the iterative method's Eisenstat-Walker forcing terms at kTightForcing instead of
  /// kForcing for this solver's later solves (header: auto's second iterative try); *tightened
  /// false if they were already, with the adaptive continuation, or if the user set them.
  PetscErrorCode tighten_forcing(bool *tightened);
  /// The CFL of the step from iterate `it` (residual norm `norm`): the adaptive law or switched
  /// evolution relaxation with its stall cut (header).
  PetscErrorCode next_cfl(SNES snes, PetscInt it, PetscReal norm);
  /// The line search on the pseudo-transient residual (header), SNESLINESEARCHSHELL's function.
  static PetscErrorCode pseudo_transient_line_search(SNESLineSearch ls, void *ctx);

  discretization::FlowResidual *res_ = nullptr;
  SNES snes_ = nullptr;
  SNES fallback_ = nullptr; ///< auto's direct LU, after an iterative solve failed
  bool may_fall_back_ = false, fell_back_ = false;
  Vec w0_ = nullptr; ///< the initial state of a solve that may be done again
  SolverOptions options_;
  Mat J_ = nullptr, P_ = nullptr; ///< exact Jacobian (direct) or null; compact matrix (iterative)
  JacobianFreeOperator jacobian_free_; ///< the Newton operator of the iterative method
  Vec r_ = nullptr;
  double cfl0_ = 10, cfl_max_ = 1e12, cfl_ = 10, r0_ = 0, r_ref_ = 0;
  double cfl_base_ = 10; ///< the ramp's CFL_0 in this solve (cut when the continuation stalls)
  int last_cut_ = 0;     ///< iteration of the last cut
  /// The multigrid smoothers' pivot shift (widen_unconverged): the default; only zero pivots
  /// shifted after an unconverged linear solve (on trial until a linear solve converges, then
  /// kept); the default again after the trial's next linear solve did not converge either
  enum class SmootherShift { Default, Trial, Kept, Restored } pivots_ = SmootherShift::Default;
  /// overlap_smoothers was tried (widen_unconverged: once per solve) and did overlap them
  bool overlap_tried_ = false, overlapped_ = false;
  /// the Eisenstat-Walker cap of the iterative method's forcing terms with switched evolution
  /// relaxation, and auto's second try's (header)
  static constexpr double kForcing = 0.1, kTightForcing = 1e-3;
  /// the smallest base CFL of the continuation's cuts and retries, as a fraction of CFL_0
  static constexpr double kMinBaseCfl = 1e-3;
  /// retries of a failed line search at one iterate (next_base_cfl)
  static constexpr int kMaxRetries = 6;
  /// iterates above the initial residual with a failed line search after which auto's
  /// iterative solve gives way to the LU (header)
  static constexpr int kAstrayFailures = 3;
  /// Newton steps in a row whose linear solve stopped unconverged with no reaction left, over
  /// which |R| fell less than kStrandedReduction x, after which auto's iterative solve gives way
  /// to the LU (header)
  static constexpr int kStrandedSteps = 5;
  static constexpr double kStrandedReduction = 10;
  /// auto's iterative solve may give way to the LU (continuation's may_abandon); the unconverged
  /// linear solves in a row with no reaction left (widen_unconverged); the solve is stranded
  /// (record_iteration: the SNES stops, continuation says why)
  bool may_abandon_ = false;
  int exhausted_run_ = 0;
  bool stranded_ = false;
  std::string stranded_reason_;
  /// The switched-evolution-relaxation CFL at residual norm `norm`:
  /// min(CFL_max, max(base, base ||R_0|| / norm)) with the current base CFL.
  double ramped_cfl(double norm) const;
  /// |R| of iteration `iteration` in this solve's history, -1 if it has none (the stall cut's and
  /// the stranded test's look back).
  double residual_at(int iteration) const;
  /// The base CFL of retry *tries (then incremented) after failed line searches at one iterate
  /// whose first failure had base CFL `base`: base x 0.1, x 10, x 0.01, x 100, x 0.001, x 1000,
  /// skipping values below kMinBaseCfl CFL_0 or above CFL_max; 0 when none is left.
  double next_base_cfl(double base, int *tries) const;
  PetscInt it_offset_ = 0; ///< iterations before the current SNESSolve (a restart)
  std::vector<double> shift_;
  std::vector<double> rate_; ///< rho V / dtau at CFL 1 per owned cell (update_rates)
  bool at_floor_ = false;    ///< the last iterate's |R| is at its round-off floor
  /// Newton steps in a row that stalled below the floor's estimate's reach (header: a floor that
  /// eps |D w| undercounts): full-CFL steps whose linear solve converged and that lowered |R|
  /// less than kFloorStallReduction x, at |R| <= kFloorStallRelative |R_0|
  int floor_stalls_ = 0;
  static constexpr int kFloorStallSteps = 2;
  static constexpr double kFloorStallReduction = 2, kFloorStallRelative = 1e-10;
  /// dual time stepping (set_time_step): the level and time term of the step, its diagonal
  /// rho V a0 per owned cell (empty without), and the Jacobian's diagonal shift_ + rho V a0
  discretization::TimeLevel level_ = discretization::kSteady;
  const discretization::FlowResidual::TimeTerm *time_term_ = nullptr;
  std::vector<double> time_diagonal_, jacobian_shift_;
  /// solver.continuation adaptive (or auto with a turbulence model): the CFL law and the line
  /// search on the pseudo-transient residual (header)
  bool adaptive_ = false;
  /// the turbulence variable's unknown in a cell (FlowResidual::turbulence_unknown), or -1
  int turbulence_offset_ = -1;
  Vec merit_ = nullptr;    ///< the pseudo-transient residual of a trial step
  double last_lambda_ = 1; ///< the step length the last line search accepted
  /// the adaptive law: CFL x kAdaptiveGrowth after a full step, / kAdaptiveGrowth after a step
  /// shorter than kShortStep
  static constexpr double kAdaptiveGrowth = 2, kShortStep = 0.1;
  /// the adaptive continuation's cap on the Eisenstat-Walker forcing terms (steady_solver.cpp)
  static constexpr double kAdaptiveForcing = 1e-2;
  /// solver.cfl_initial auto: with switched evolution relaxation, with the adaptive law
  static constexpr double kSerInitialCfl = 10, kAdaptiveInitialCfl = 1;
  // state of the current solve
  const std::function<PetscErrorCode(const NewtonRecord &, Vec)> *user_monitor_ = nullptr;
  Vec best_ = nullptr;
  SteadySummary *summary_ = nullptr;
  double start_time_ = 0;
  PetscInt last_linear_its_ = 0;
};

/// Peak resident memory of this process and the sum and maximum over ranks [MiB].  Collective.
PetscErrorCode peak_memory(MPI_Comm comm, double *total_mib, double *max_per_rank_mib);

} // namespace karman::solver
