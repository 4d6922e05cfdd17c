// Linear solvers of the forward and adjoint solves (see include/karman/solver/linear_solver.hpp).
#include "karman/solver/linear_solver.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/geometry/mesh_quality.hpp"
#include "karman/solver/block_transpose.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace karman::solver {

const char *options_prefix(LinearSolverRole role) {
  switch (role) {
  case LinearSolverRole::Newton:
    return nullptr;
  case LinearSolverRole::Adjoint:
    return "adj_";
  case LinearSolverRole::NewtonFallback:
    return "fallback_";
  case LinearSolverRole::AdjointFallback:
    return "adj_fallback_";
  }
  return nullptr;
}

LinearChoice linear_choice(const config::CaseConfig &cfg) {
  switch (solver_options().get(cfg).linear) {
  case LinearSolverChoice::Direct:
    return {LinearMethod::Direct, false};
  case LinearSolverChoice::Iterative:
    return {LinearMethod::Iterative, false};
  case LinearSolverChoice::Auto:
    break;
  }
  return {LinearMethod::Iterative, true};
}

std::string describe(const LinearChoice &choice) {
  if (choice.method == LinearMethod::Direct) return "direct (MUMPS LU; solver.linear: direct)";
  return std::string("iterative (GMRES, coupled algebraic multigrid; solver.linear: ") +
         (choice.fallback ? "auto, the LU if it fails)" : "iterative)");
}

LinearMethod linear_method(const config::CaseConfig &cfg) {
  return linear_choice(cfg).method;
}

PetscErrorCode direct_fits_in_memory(const mesh::Mesh &mesh, bool *fits, double *needed,
                                     double *available) {
  PetscFunctionBeginUser;
  // the ranks of each node together: their cells' factors within 80 % of the node's free memory
  const double per_cell = mesh.dim == 3 ? kDirectBytesPerCell3D : kDirectBytesPerCell2D;
  PetscCall(lu_factors_fit(mesh.comm, per_cell * static_cast<double>(mesh.n_owned_cells), fits,
                           needed, available));
  PetscFunctionReturn(0);
}

std::string no_fallback_reason(double needed, double available) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "solver.linear: auto cannot fall back to the direct LU: its factors would need "
                "about %.1f GiB on a node with %.1f GiB available",
                needed, available);
  return text;
}

PetscErrorCode announce_fallback(const mesh::Mesh &mesh, const char *what, const char *reason) {
  PetscFunctionBeginUser;
  bool fits;
  double needed, available;
  PetscCall(direct_fits_in_memory(mesh, &fits, &needed, &available));
  PetscCheck(fits, mesh.comm, PETSC_ERR_NOT_CONVERGED,
             "%s with the iterative linear solver did not converge (%s), and %s.  Run on more "
             "nodes, or tune the multigrid (-pc_gamg_*, -mg_levels_*; README \"Linear solvers\")",
             what, reason, no_fallback_reason(needed, available).c_str());
  PetscCall(log_info(mesh.comm,
                     "%s with the iterative linear solver did not converge (%s): solving it again "
                     "with the direct LU (solver.linear: auto; about %.2f GiB of factors)",
                     what, reason, needed));
  PetscFunctionReturn(0);
}

namespace {

// Options that karman put into the options database as defaults, with their values: a later
// solver may replace them with its own defaults (another LinearSystems); an option the user gave
// (not there, or there with another value) is never touched.
std::map<std::string, std::string> &inserted_defaults() {
  static std::map<std::string, std::string> inserted;
  return inserted;
}

// The option -PREFIXname: its name, whether it is set and whether it holds the value
// set_default_option put there (the default's value then in *value).
struct OptionState {
  std::string option, value;
  bool set = false, ours = false;
};
PetscErrorCode option_state(const char *prefix, const char *name, OptionState *o) {
  PetscFunctionBeginUser;
  o->option = std::string("-") + (prefix ? prefix : "") + name;
  char current[256];
  PetscBool set;
  PetscCall(
      PetscOptionsGetString(nullptr, nullptr, o->option.c_str(), current, sizeof(current), &set));
  o->set = set;
  const auto it = inserted_defaults().find(o->option);
  o->ours = set && it != inserted_defaults().end() && it->second == current;
  o->value = o->ours ? it->second : "";
  PetscFunctionReturn(0);
}

// Sets -PREFIXname value unless the user set it.
PetscErrorCode set_default_option(const char *prefix, const char *name, const char *value) {
  PetscFunctionBeginUser;
  OptionState o;
  PetscCall(option_state(prefix, name, &o));
  if (o.set && !o.ours) PetscFunctionReturn(0);
  PetscCall(PetscOptionsSetValue(nullptr, o.option.c_str(), value));
  inserted_defaults()[o.option] = value;
  PetscFunctionReturn(0);
}

// Removes -PREFIXname if it holds the default set_default_option put there (PETSc's own default
// then applies); an option the user set is kept.
PetscErrorCode clear_default_option(const char *prefix, const char *name) {
  PetscFunctionBeginUser;
  OptionState o;
  PetscCall(option_state(prefix, name, &o));
  if (o.ours) PetscCall(PetscOptionsClearValue(nullptr, o.option.c_str()));
  inserted_defaults().erase(o.option);
  PetscFunctionReturn(0);
}

// Whether the smoothers' ILU shifts only zero pivots (-mg_levels_sub_pc_factor_shift_type nonzero)
// instead of the whole diagonal at a non-positive pivot (positive_definite), for `systems` on a
// mesh of `kind` (tetrahedra: set_smoother_defaults).  A pivot that is not positive restarts the
// ILU with the diagonal shifted (Manteuffel) until all are; a factorization without one is
// untouched.  Steady Jacobians at rest (Stokes-like: the momentum diagonal only viscous plus the
// pseudo-time shift, the Rhie-Chow pressure block small) met negative pivots: the unstable ILU(0)
// made GMRES lose orthogonality (DIVERGED_BREAKDOWN), the Newton steps went nowhere, and with
// "nonzero" (zero pivots only) DFG 3D-1Z level 0 failed on 1 rank (DIVERGED_LOCAL_MIN after 1
// Newton step; 7 steps, 5.8 s now; on 2 ranks 9 -> 7 steps) and so did DFG 2D-1 level 0 at Re 10
// with moving walls from rest (DIVERGED_LINE_SEARCH after 36 steps; 7 now, LU 10).  The other
// steady cases and all time steps: the same iterations.
//
// Steady systems with a turbulence model or on stretched meshes: zero pivots only.  On the TMR bump
// (level 0, first cells of aspect ratio up to 4e5) the shifted ILU(1) made GMRES stop at 200
// iterations on 99 of 100 Newton steps from CFL 0.5 up (with tight linear tolerances; the solve
// diverged); unshifted, 1-58 iterations per step and 38 Newton steps.  The flat plate: the same
// steps.
//
// The steady adjoint (J^T at the converged state, no pseudo-time shift): zero pivots only.  The
// laminar NACA 0012 (level 0, 8 622 cells, Re 1000) with the positive-definite shift: 1 768 GMRES
// iterations, 6.65 s (its 1 000 iterations, then again with the restart widened); with zero pivots
// only 49, 0.26 s.  Where no pivot is non-positive the two are the same factorization: DFG 2D-1
// levels 1-2, cylinder-unbounded level 1, NACA 0012 level 1, DFG 3D-1Z level 0, shape-min-drag re40
// and heated-cylinder level 0 took the same iterations (33, 37, 36, 75, 30, 32, 30) and gave the
// same gradients.  Steady Newton steps keep the shift from the start (the Stokes-like Jacobians at
// rest) and drop it at their first unconverged linear solve (unshift_smoothers,
// solver/steady_solver.hpp)
bool zero_pivots_only(LinearSystems systems, const MeshKind &kind) {
  const bool steady = systems != LinearSystems::TimeStepping;
  return kind.tetrahedra || (steady && kind.boundary_layers()) ||
         systems == LinearSystems::SteadyAdjoint;
}

// The multigrid's level smoothers (Richardson / block Jacobi ILU) for `steady` systems or time
// steps on a mesh of `kind`, as options under `prefix` (set_default_option), on `ranks` ranks
PetscErrorCode set_smoother_defaults(const char *prefix, LinearSystems systems,
                                     const MeshKind &kind, int ranks) {
  PetscFunctionBeginUser;
  const int dim = kind.dim;
  const bool steady = systems != LinearSystems::TimeStepping;
  PetscCall(set_default_option(prefix, "mg_levels_ksp_type", "richardson"));
  // steady systems: the sweeps damped, by 0.6 in 2D and 0.8 in 3D.  Undamped, the W-cycles' ILU(0)
  // sweeps diverge on the Jacobians of a pseudo-time step past CFL ~20-100 at Re 40 and more:
  // GMRES then hits its 200 iterations at every Newton step and the steady solve fails
  // (cylinder-unbounded and shape-min-drag re40 at Re 40, naca0012-laminar on levels 1 and 2; 1
  // and 2 ranks), and the adjoints of those states stop at 1000 iterations.  Damped by 0.6 they
  // converge (2 ranks: 0.7, 1.4 and 3.2 s, LU 1.1, 2.6 and 5.0 s; naca0012-laminar level 2 in 20
  // s); 0.8 still failed on naca0012-laminar, and DFG 2D-1 (Re 20) takes 8.8 instead of 8.0 s on
  // level 2.  DFG 3D-1Z (Re 20, ILU(0)): on level 0 undamped sweeps stalled one Newton step at 200
  // iterations (7.9 s), 0.8 takes 3.2 s; level 2 forward / adjoint 24.8 / 11.6 s with 0.8, 25.1 /
  // 13.4 s with 0.6, 30.5 / 11.5 s undamped.  (GMRES(2) smoothers inside FGMRES converge too, DFG
  // 2D-1 level 2 11.3 s.)  Time steps (kaskade, one sweep after the exact coarse correction) keep 1
  PetscCall(set_default_option(prefix, "mg_levels_ksp_richardson_scale",
                               steady ? (dim == 3 ? "0.8" : "0.6") : "1"));
  // time steps and the unsteady adjoint's levels: the coarse correction first, then one sweep
  // (PCMG's kaskade cycle), with ILU(1) in 2D; steady systems: W(2,2) cycles with ILU(0).  DFG
  // 2D-2 level 1 on 2 ranks: a forward-only run (dt 0.0085, tolerances 1e-2, to t = 2) 16.1-16.7
  // instead of 19.2-19.6 s (V(1,1), ILU(0), natural ordering); 40 converged steps from rest and
  // their store-all adjoint 15.7 / 5.1-5.3 s (linear solves of the sweep) instead of 17.2 /
  // 6.1-6.3 s.  3D (DFG 3D-1Z level 0, dt 0.05) kaskade 18.9 instead of 20.5 s; ILU(1) did not
  // help there (19.5 s, 5 % more memory)
  PetscCall(set_default_option(prefix, "mg_levels_ksp_max_it", steady ? "2" : "1"));
  // (always set: a steady solver after an unsteady one, same prefix, must not inherit kaskade)
  PetscCall(set_default_option(prefix, "pc_mg_type", steady ? "multiplicative" : "kaskade"));
  // the steady adjoint of a system with a turbulence model on several ranks: the ranks' ILU blocks
  // overlap by two layers of cells (additive Schwarz); block Jacobi cuts the thin cells' strong
  // couplings at the rank boundaries, and GMRES on J^T stagnated.  NACA 0012 RANS level 2 (97 280
  // cells, 10 degrees), 2 ranks: block Jacobi DIVERGED_BREAKDOWN, then the LU fallback (30.5 s,
  // 4.6 GiB); overlap 1 133 iterations 19.8 s; overlap 2 71 iterations 9.8-13.1 s, 1.5 GiB (1
  // rank, block Jacobi: 62 iterations 13.7 s), gradients within 3e-11.  Not for the forward (the
  // same case's Newton solve 65.9-70.5 -> 93.9 s, 406 instead of 418 GMRES iterations, 1003
  // instead of 765 MiB) nor for laminar adjoints (DFG 2D-1 level 2, 2 ranks: the same 37
  // iterations, 1.92-1.98 -> 2.19-2.20 s, 693 instead of 600 MiB)
  // (laminar flow on stretched meshes does not need it: the laminar TMR flat plate, level 3, 2
  // ranks, 168 iterations 17.0 s with block Jacobi, 138 iterations 16.0 s and 13 % more memory
  // with the overlap)
  const bool overlapping = systems == LinearSystems::SteadyAdjoint && kind.turbulence && ranks > 1;
  PetscCall(set_default_option(prefix, "mg_levels_pc_type", overlapping ? "asm" : "bjacobi"));
  if (overlapping)
    PetscCall(set_default_option(prefix, "mg_levels_pc_asm_overlap", "2"));
  else
    PetscCall(clear_default_option(prefix, "mg_levels_pc_asm_overlap"));
  PetscCall(set_default_option(prefix, "mg_levels_sub_pc_type", "ilu"));
  // meshes with tetrahedra, steady systems and time steps: ILU(1) in the cells' own order, only
  // zero pivots shifted (issue 42, results/tet-diagnosis.md section 6).  P's ILU(0) on tetrahedra
  // meets non-positive pivots, and the positive-definite shift below then shifts the whole
  // diagonal: the smoother becomes so weak that the multigrid is worse than block Jacobi ILU(0)
  // without it (the Gmsh tetrahedral DFG 3D-1Z, 31 840 cells, final Jacobian, 2 ranks: 80 GMRES
  // iterations per decade; unshifted ILU(0) 28, unshifted ILU(1) 8.5).  Reverse Cuthill-McKee made
  // the unshifted ILU(1) of one rank's whole block unstable (136 per decade at rest, CFL 10;
  // natural order 8.2).  Steady solve from rest: 26 -> 12 Newton steps, 170 -> 17.5 s (2 ranks), 21
  // -> 10 steps, 186 -> 17.5 s (1 rank); the steady adjoint converges in 117 iterations instead of
  // falling back to the LU after 1000.  Time steps (dt 0.05 from rest, 10 steps, 2 ranks):
  // 76.7 -> 15.8 s (unshifted ILU(0) in natural order 28.8 s).  The hexahedral/prism meshes keep
  // the settings below: there the unshifted ILU from rest fails on 1 rank and ILU(1) costs more
  // than it gains
  // Steady systems with a turbulence model (or on stretched meshes, below): ILU(1) too.  The RANS
  // flat plate (cases/tmr-flat-plate level 2, 46 080 cells, first cells of aspect ratio 6e3, 2
  // ranks): with ILU(0) GMRES hit its 200 iterations at every step past CFL 8 and the continuation
  // went back and forth between CFL 8 and 16 (12 Newton steps 28.9 s); with ILU(1) 1-2 iterations
  // per step at CFL 32 (12 steps 4.3 s).  The unshifted ILU(0) was no better (27.9 s).
  // Steady systems on stretched meshes (MeshKind::stretched) without a turbulence model: the
  // same ILU(1), unshifted pivots and GMRES(100), not the coarsening threshold (set below).  The
  // TMR flat plate's meshes laminar at Re 5e6 (cases/tmr-flat-plate/laminar.yaml, first cells of
  // aspect ratio 5.4e3 - 6.0e3): with the laminar settings GMRES stopped at its 200 iterations on
  // most Newton steps and the LU fallback solved it, levels 1 / 2 / 3 (1, 1, 2 ranks) 53.7 / 150 /
  // 297 s, 266 / 988 / 4 912 MiB; now 8 Newton steps each, 0.75 / 6.7 / 44 s, 103 / 250 / 1 111
  // MiB.  ILU(1) alone did levels 1-2 (0.77, 8.5 s), not level 3 (GMRES at its cap from CFL 520
  // on, also with the adaptive continuation at CFL 260); with GMRES(100) too, level 3 converged.
  // On level 1 without ILU(1): the unshifted ILU(0) fell back to the LU, GMRES(100) took 13
  // Newton steps and 942 GMRES iterations (9.4 s), the threshold 0.05 28 steps and 2 693 (29 s)
  const bool tetrahedral = kind.tetrahedra;
  PetscCall(set_default_option(
      prefix, "mg_levels_sub_pc_factor_levels",
      (!steady && dim == 2) || tetrahedral || (steady && kind.boundary_layers()) ? "1" : "0"));
  // reverse Cuthill-McKee ordering of each rank's block before its ILU: fewer iterations than
  // the mesh's own cell order (DFG 2D-2 level 0, 40 steps: 89.6 instead of 92.5 GMRES iterations
  // per step; steady DFG 2D-1 level 2, 2 ranks: 8.0 instead of 8.75 s)
  PetscCall(set_default_option(prefix, "mg_levels_sub_pc_factor_mat_ordering_type",
                               tetrahedral ? "natural" : "rcm"));
  PetscCall(set_default_option(prefix, "mg_levels_sub_pc_factor_shift_type",
                               zero_pivots_only(systems, kind) ? "nonzero" : "positive_definite"));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode set_process_defaults() {
  PetscFunctionBeginUser;
  PetscBool set;
  PetscCall(PetscOptionsHasName(nullptr, nullptr, "-mat_no_inode", &set));
  if (!set) PetscCall(PetscOptionsSetValue(nullptr, "-mat_no_inode", "true"));
  PetscFunctionReturn(0);
}

MeshKind mesh_kind(const mesh::Mesh &mesh) {
  MeshKind kind;
  kind.dim = mesh.dim;
  kind.tetrahedra = mesh::has_tetrahedra(mesh);
  return kind;
}

MeshKind system_kind(const discretization::FlowResidual &residual) {
  MeshKind kind = mesh_kind(residual.mesh());
  kind.turbulence = residual.has_turbulence_model();
  const geometry::CellQuality quality =
      geometry::compute_quality(residual.mesh(), residual.geometry());
  geometry::QualitySummary summary;
  geometry::summarize_quality(residual.mesh(), residual.geometry(), quality, &summary);
  kind.stretched = summary.max_aspect_ratio >= kStretchedAspectRatio;
  return kind;
}

PetscErrorCode set_linear_solver_defaults(KSP ksp, LinearMethod method, LinearSystems systems,
                                          const MeshKind &kind, KSPType direct_type) {
  PetscFunctionBeginUser;
  const int dim = kind.dim;
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  if (method == LinearMethod::Direct) {
    PetscCall(KSPSetType(ksp, direct_type));
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    // a Krylov method around the LU (of the compact matrix) is right-preconditioned too: left,
    // its tolerance bounded the preconditioned residual only, and with forward tolerances' 1e-2
    // DFG 2D-2's first step got directions along which the line search failed (|R| 0.176)
    if (std::string(direct_type) != KSPPREONLY) PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    PetscFunctionReturn(0);
  }
  // GMRES, right-preconditioned: its tolerance applies to the true residual
  PetscCall(KSPSetType(ksp, KSPGMRES));
  // restarted after 20 directions; steady systems with a turbulence model or on a stretched mesh
  // (MeshKind::boundary_layers) after 100.  TMR bump
  // level 3 (194 560 cells, 2 ranks): from CFL 64 on, GMRES(20) stopped at its 200 iterations
  // on every other Newton step (the CFL went back and forth between 32 and 64, 45 s per failed
  // step), GMRES(100) converged in 57-71.  PETSc allocates the directions as they are used, so
  // the larger restart costs memory only in the solves that need it
  const bool steady = systems != LinearSystems::TimeStepping;
  // The steady adjoint (one solve to adjoint.rtol 1e-10) after kSteadyAdjointRestart directions,
  // and Gram-Schmidt orthogonalized twice where the once-orthogonalized direction lost most of
  // its norm (PETSc's refine_ifneeded).  The error estimate's nested refinement of the Gmsh
  // tetrahedral DFG 3D-1Z (254 720 tetrahedra, non-orthogonality up to 78 degrees, 2 ranks):
  // GMRES(20) stagnated at 2e-3 of its initial residual and stopped after 340 iterations with
  // DIVERGED_BREAKDOWN (its recursion's residual 5.8e-3 against the computed 6.6e-3: the
  // directions of classical Gram-Schmidt had lost their orthogonality), the widened GMRES(60)
  // and (100) broke down likewise, and the LU would have needed 21.9 GiB; GMRES(100) without
  // the refinement broke down at its first restart; GMRES(100) with it converged in 168
  // iterations, 71.8 s; GMRES(150) with it in 116 iterations, 56.9 s (modified Gram-Schmidt:
  // 117, 50.8 s, but one reduction per direction instead of one per iteration).  PETSc
  // allocates the directions as GMRES uses them: an adjoint that converges in fewer iterations
  // keeps its memory
  const PetscInt restart = systems == LinearSystems::SteadyAdjoint ? kSteadyAdjointRestart
                           : steady && kind.boundary_layers()      ? 100
                                                                   : 20;
  PetscCall(KSPGMRESSetRestart(ksp, restart));
  if (systems == LinearSystems::SteadyAdjoint)
    PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_IFNEEDED));
  PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  // coupled algebraic multigrid on the compact matrix (block size nv: the unknowns of a cell are
  // aggregated together); header for the measured choices
  PetscCall(PCSetType(pc, PCGAMG));
  PetscCall(PCGAMGSetNSmooths(pc, 0));
  PetscCall(PCGAMGSetCoarseEqLim(pc, steady ? kSteadyCoarseEquations : kTimeStepCoarseEquations));
  // 3D: aggregates of the graph itself, not of its square (the default's aggressive first
  // coarsening): on the DFG 3D-1Z Jacobians GMRES then reaches 1e-6 in 17-56 iterations instead
  // of stagnating (300+); 2D keeps the squared graph (fewer levels, same iterations)
  if (dim == 3) PetscCall(PCGAMGSetAggressiveLevels(pc, 0));
  // the finest level's smoothers work with the compact matrix too (PCMG's default is the outer
  // operator, which with the Jacobian-free one costs a residual evaluation per sweep)
  PetscCall(PCSetUseAmat(pc, PETSC_FALSE));
  const char *prefix = nullptr;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  // the steady adjoint in 3D: V-cycles.  Its one solve at the converged state (no pseudo-time
  // shift) takes about as many GMRES iterations to adjoint.rtol with V- as with W-cycles, and a
  // W-cycle over the up to 6 levels of the 3D hierarchy (graph aggregates, no aggressive
  // coarsening) costs about a third more per application.  DFG 3D-1Z levels 0 / 1 / 2, 2 ranks:
  // 29 / 31 / 34 -> 30 / 32 / 37 iterations, 1.19 / 3.54 / 14.1 -> 0.99 / 3.10 / 11.2 s (adjoint
  // / forward 0.38 / 0.43 / 0.53 -> 0.32 / 0.38 / 0.42); 1 rank: 30 / 33 / 36 -> 31 / 33 / 38
  // iterations, 1.82 / 6.05 / 25.9 -> 1.61 / 4.93 / 20.5 s (0.43 / 0.45 / 0.58 -> 0.38 / 0.37 /
  // 0.46).  The forward's Newton steps gain nothing from V-cycles (level 2, 1 rank: 7 instead of
  // 6 Newton steps, 84 instead of 67 GMRES iterations, 45.5 instead of 44.9 s), and in 2D the
  // steady adjoint is mixed (DFG 2D-1 level 2: 53 instead of 37 iterations, 3.13 instead of
  // 2.80 s; NACA 0012 level 1: 0.95 instead of 1.11 s), so both keep W-cycles
  const bool v_cycle = !steady || (systems == LinearSystems::SteadyAdjoint && dim == 3);
  PetscCall(set_default_option(prefix, "pc_mg_cycle_type", v_cycle ? "v" : "w"));
  // steady systems with a turbulence model (not laminar flow on stretched meshes: the laminar
  // flat plate's level 2 stalled near convergence with 0.05, 1 rank, and with 0.1 level 1; without
  // a threshold levels 0-3 converge): the aggregation drops the couplings weaker than 0.05
  // of the strongest (PETSc's default keeps all), so that the aggregates of thin cells follow
  // their strong direction.  TMR bump level 1 (12 160 cells, first cells of aspect ratio up to
  // 4.5e5 up- and downstream): with all couplings GMRES stalled at CFL 8 (the iterative solve
  // wandered for 300 Newton steps, then the LU fallback: 252 s); with 0.01 or 0.05 37 Newton steps
  // from free stream, 4-12 GMRES iterations each, 7.3 / 6.2 s.  Flat plate levels 0, 1: the
  // same Newton steps (29, 37), 0.66 -> 0.73 and 4.1 -> 4.5 s
  if (steady && kind.turbulence)
    PetscCall(set_default_option(prefix, "pc_gamg_threshold", "0.05"));
  else
    PetscCall(clear_default_option(prefix, "pc_gamg_threshold"));
  PetscMPIInt ranks;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &ranks));
  PetscCall(set_smoother_defaults(prefix, systems, kind, ranks));
  // the coarsest level's LU (GAMG gathers that level on one rank; the others wait for its
  // triangular solves in every cycle): quotient minimum degree ordering instead of PETSc's nested
  // dissection, about 40 % fewer nonzeros in the factor.  DFG 2D-2 time steps, 2 ranks: level 0
  // (2232 coarse unknowns) 102 978 instead of 171 810, level 1 (3279) 187 389 instead of 318 411,
  // level 2 (1389) 65 025 instead of 102 897; DFG 3D-1Z level 0 steady (1228) 137 840 instead of
  // 214 544.  40 steps from rest (dt 0.005, the adjoint benchmark's forward), the same iterations:
  // level 0 0.062-0.067 instead of 0.068-0.071 s per step, level 1 12.8-14.5 (median 13.6) instead
  // of 13.6-14.5 (14.3) s; the forward-only DFG 2D-2 benchmark (level 1, to t = 6) 38.7 instead of
  // 40.2 s.  Steady DFG 2D-1 level 2 and DFG 3D-1Z level 1 unchanged (7.5-7.9 and 8.5-8.8 s with
  // either)
  PetscCall(set_default_option(prefix, "mg_coarse_sub_pc_factor_mat_ordering_type", "qmd"));
  PetscFunctionReturn(0);
}

PetscErrorCode create_linear_solver(MPI_Comm comm, LinearSolverRole role, LinearMethod method,
                                    LinearSystems systems, const MeshKind &kind,
                                    KSPType direct_type, const LinearTolerances &tol, KSP *ksp) {
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(comm, ksp));
  if (const char *prefix = options_prefix(role)) PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(set_linear_solver_defaults(*ksp, method, systems, kind, direct_type));
  PetscCall(KSPSetTolerances(*ksp, tol.rtol, tol.atol, PETSC_DEFAULT, tol.max_iterations));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(0);
}

PetscErrorCode create_newton(MPI_Comm comm, const SolverOptions &s, Vec r, Mat J, Mat P,
                             PetscErrorCode (*function)(SNES, Vec, Vec, void *),
                             PetscErrorCode (*jacobian)(SNES, Vec, Mat, Mat, void *), void *ctx,
                             LinearMethod method, LinearSystems systems, const MeshKind &kind,
                             KSPType direct_type, SNES *snes, const LinearTolerances *linear) {
  PetscFunctionBeginUser;
  PetscCall(SNESCreate(comm, snes));
  PetscCall(SNESSetType(*snes, SNESNEWTONLS));
  PetscCall(SNESSetFunction(*snes, r, function, ctx));
  PetscCall(SNESSetJacobian(*snes, J, P, jacobian, ctx));
  PetscCall(
      SNESSetTolerances(*snes, s.atol, s.rtol, 0.0, static_cast<PetscInt>(s.max_iterations), -1));
  SNESLineSearch ls;
  PetscCall(SNESGetLineSearch(*snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBT));
  KSP ksp;
  PetscCall(SNESGetKSP(*snes, &ksp));
  PetscCall(set_linear_solver_defaults(ksp, method, systems, kind, direct_type));
  if (linear)
    PetscCall(
        KSPSetTolerances(ksp, linear->rtol, linear->atol, PETSC_DEFAULT, linear->max_iterations));
  PetscFunctionReturn(0);
}

namespace {

// The context of the recording convergence test: the recorder and the test that decides.
struct RecordingTest {
  NewtonRecorder record;
  bool skip = false; ///< -snes_convergence_test skip
  NewtonStop stop;
};

PetscErrorCode recording_test(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm,
                              PetscReal norm, SNESConvergedReason *reason, void *ctx) {
  PetscFunctionBeginUser;
  const auto *test = static_cast<const RecordingTest *>(ctx);
  PetscCall(test->record(snes, it, norm));
  if (test->skip)
    PetscCall(SNESConvergedSkip(snes, it, xnorm, snorm, norm, reason, nullptr));
  else
    PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, norm, reason, nullptr));
  if (*reason == SNES_CONVERGED_ITERATING && test->stop && it > 0) {
    bool stop = false;
    PetscCall(test->stop(snes, it, snorm, &stop));
    if (stop) *reason = SNES_CONVERGED_SNORM_RELATIVE;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode destroy_recording_test(void *ctx) {
  PetscFunctionBeginUser;
  delete static_cast<RecordingTest *>(ctx);
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode set_recording_convergence_test(SNES snes, NewtonRecorder record, const char *solver,
                                              NewtonStop stop) {
  PetscFunctionBeginUser;
  // the decision stays PETSc's: the default test, or none with -snes_convergence_test skip
  const char *prefix = nullptr;
  PetscCall(SNESGetOptionsPrefix(snes, &prefix));
  char test[64] = "default";
  PetscCall(PetscOptionsGetString(nullptr, prefix, "-snes_convergence_test", test, sizeof(test),
                                  nullptr));
  PetscCheck(std::strcmp(test, "default") == 0 || std::strcmp(test, "skip") == 0,
             PetscObjectComm((PetscObject)snes), PETSC_ERR_USER_INPUT,
             "PETSc option -snes_convergence_test %s: the %s supports default and skip", test,
             solver);
  auto *context =
      new RecordingTest{std::move(record), std::strcmp(test, "skip") == 0, std::move(stop)};
  PetscCall(SNESSetConvergenceTest(snes, recording_test, context, destroy_recording_test));
  PetscFunctionReturn(0);
}

bool at_roundoff_floor(double initial_residual, double final_residual, double atol) {
  return final_residual <= 1e-12 * initial_residual || final_residual <= 100 * atol;
}

PetscErrorCode gmres_restart(KSP ksp, PetscInt *restart) {
  PetscFunctionBeginUser;
  *restart = 0;
  PetscBool gmres;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp, &gmres, KSPGMRES, KSPFGMRES, ""));
  if (gmres) PetscCall(KSPGMRESGetRestart(ksp, restart));
  PetscFunctionReturn(0);
}

PetscErrorCode widen_restart(KSP ksp, PetscInt *from, PetscInt *to) {
  PetscFunctionBeginUser;
  PetscCall(gmres_restart(ksp, from));
  *to = *from;
  if (*from == 0) PetscFunctionReturn(0); // not GMRES
  const char *prefix = nullptr;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscBool user;
  PetscCall(PetscOptionsHasName(nullptr, prefix, "-ksp_gmres_restart", &user));
  PetscInt max_iterations;
  PetscCall(KSPGetTolerances(ksp, nullptr, nullptr, nullptr, &max_iterations));
  const PetscInt target = std::min({kMaxWidenedRestart, max_iterations, kRestartGrowth * *from});
  if (user || *from >= target) PetscFunctionReturn(0);
  *to = target;
  // (PETSc frees the old directions and sets GMRES up anew at the next solve)
  PetscCall(KSPGMRESSetRestart(ksp, *to));
  PetscFunctionReturn(0);
}

namespace {

/// The ILU shift `type` in the block Jacobi or additive Schwarz smoother `pc` (set up: PCMG sets
/// its levels' smoothers up with the hierarchy), for its next factorization.
PetscErrorCode shift_smoother(PC pc, MatFactorShiftType type) {
  PetscFunctionBeginUser;
  PetscBool bjacobi, asm_;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &bjacobi));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCASM, &asm_));
  if (!bjacobi && !asm_) PetscFunctionReturn(0);
  PetscInt n;
  KSP *sub;
  if (bjacobi)
    PetscCall(PCBJacobiGetSubKSP(pc, &n, nullptr, &sub));
  else
    PetscCall(PCASMGetSubKSP(pc, &n, nullptr, &sub));
  for (PetscInt i = 0; i < n; ++i) {
    PC subpc;
    PetscCall(KSPGetPC(sub[i], &subpc));
    PetscBool ilu;
    PetscCall(PetscObjectTypeCompare((PetscObject)subpc, PCILU, &ilu));
    if (ilu) PetscCall(PCFactorSetShiftType(subpc, type));
  }
  PetscFunctionReturn(0);
}

/// The preconditioners of the multigrid pc's level smoothers above its coarsest level (none
/// before its first set-up).
PetscErrorCode level_smoothers(PC pc, std::vector<PC> *smoothers) {
  PetscFunctionBeginUser;
  smoothers->clear();
  PetscInt levels;
  PetscCall(PCMGGetLevels(pc, &levels));
  for (PetscInt l = 1; l < levels; ++l) {
    KSP smoother;
    PC spc;
    PetscCall(PCMGGetSmoother(pc, l, &smoother));
    PetscCall(KSPGetPC(smoother, &spc));
    smoothers->push_back(spc);
  }
  PetscFunctionReturn(0);
}

/// The multigrid smoothers of ksp from the shift `from` (karman's default, not a user's) to `to`:
/// the option and the smoothers already made; *changed false if ksp is not the multigrid or the
/// option is not karman's `from`.
PetscErrorCode change_smoother_shift(KSP ksp, const char *from, const char *to,
                                     MatFactorShiftType type, bool *changed) {
  PetscFunctionBeginUser;
  *changed = false;
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscBool gamg;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCGAMG, &gamg));
  if (!gamg) PetscFunctionReturn(0);
  const char *prefix = nullptr;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  const char *name = "mg_levels_sub_pc_factor_shift_type";
  OptionState o;
  PetscCall(option_state(prefix, name, &o));
  // karman's, and `from` (a user's value is never touched)
  if (!o.ours || o.value != from) PetscFunctionReturn(0);
  PetscCall(set_default_option(prefix, name, to));
  // the smoothers already made (none before the first set-up)
  std::vector<PC> smoothers;
  PetscCall(level_smoothers(pc, &smoothers));
  for (PC spc : smoothers) PetscCall(shift_smoother(spc, type));
  *changed = true;
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode unshift_smoothers(KSP ksp, bool *changed) {
  return change_smoother_shift(ksp, "positive_definite", "nonzero", MAT_SHIFT_NONZERO, changed);
}

PetscErrorCode reshift_smoothers(KSP ksp, bool *changed) {
  return change_smoother_shift(ksp, "nonzero", "positive_definite", MAT_SHIFT_POSITIVE_DEFINITE,
                               changed);
}

PetscErrorCode overlap_smoothers(KSP ksp, bool *changed) {
  PetscFunctionBeginUser;
  *changed = false;
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscBool gamg;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCGAMG, &gamg));
  PetscMPIInt ranks;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &ranks));
  if (!gamg || ranks < 2) PetscFunctionReturn(0);
  const char *prefix = nullptr;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  OptionState o;
  PetscCall(option_state(prefix, "mg_levels_pc_type", &o));
  // karman's block Jacobi (a user's smoother is never touched)
  if (!o.ours || o.value != PCBJACOBI) PetscFunctionReturn(0);
  PetscCall(set_default_option(prefix, "mg_levels_pc_type", PCASM));
  PetscCall(set_default_option(prefix, "mg_levels_pc_asm_overlap",
                               std::to_string(kReactionOverlap).c_str()));
  // the smoothers already made: additive Schwarz from their next set-up, whose sub-solvers read
  // the same -mg_levels_sub_ options as block Jacobi's (ILU, its levels, ordering and shift)
  std::vector<PC> smoothers;
  PetscCall(level_smoothers(pc, &smoothers));
  for (PC spc : smoothers) {
    PetscBool bjacobi;
    PetscCall(PetscObjectTypeCompare((PetscObject)spc, PCBJACOBI, &bjacobi));
    if (!bjacobi) continue;
    PetscCall(PCSetType(spc, PCASM));
    PetscCall(PCASMSetOverlap(spc, kReactionOverlap));
  }
  *changed = true;
  PetscFunctionReturn(0);
}

PetscErrorCode set_up_preconditioner(KSP ksp) {
  PetscFunctionBeginUser;
  // the Galerkin products P^T A P of the coarse levels without the intermediate A P (on 312k
  // cells: 76 instead of 334 MB for the hierarchy's set-up); PETSc reads -matptap_via from the
  // global options database for every product and only MPI matrices know "allatonce", so it is
  // set for this set-up only
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscBool user;
  PetscCall(PetscOptionsHasName(nullptr, nullptr, "-matptap_via", &user));
  const bool scoped = size > 1 && !user;
  if (scoped) PetscCall(PetscOptionsSetValue(nullptr, "-matptap_via", "allatonce"));
  const PetscErrorCode ierr = KSPSetUp(ksp);
  if (scoped) PetscCall(PetscOptionsClearValue(nullptr, "-matptap_via"));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

namespace {

struct StallStop {
  void *default_ctx = nullptr;
  StallReport *report = nullptr;
  double r0 = 0;
};

PetscErrorCode stall_test(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason *reason,
                          void *ctx) {
  PetscFunctionBeginUser;
  auto *s = static_cast<StallStop *>(ctx);
  PetscCall(KSPConvergedDefault(ksp, it, rnorm, reason, s->default_ctx));
  StallReport &r = *s->report;
  if (it == 0) {
    s->r0 = rnorm;
    r = StallReport();
    PetscCall(gmres_restart(ksp, &r.cycle));
  }
  if (*reason != KSP_CONVERGED_ITERATING || r.cycle <= 0 || it == 0 || it % r.cycle != 0 ||
      !(s->r0 > 0) || !(rnorm > 0))
    PetscFunctionReturn(0);
  PetscReal rtol, atol, dtol;
  PetscInt max_it;
  PetscCall(KSPGetTolerances(ksp, &rtol, &atol, &dtol, &max_it));
  const double target = std::max(rtol * s->r0, atol);
  if (!(target > 0) || max_it <= it) PetscFunctionReturn(0);
  r.cycles = it / r.cycle;
  r.gained = std::log10(s->r0 / rnorm) / r.cycles;
  r.needed = std::log10(s->r0 / target) / (static_cast<double>(max_it) / r.cycle);
  if (r.gained < r.needed) {
    r.stalled = true;
    *reason = KSP_DIVERGED_ITS;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode destroy_stall_stop(void *ctx) {
  PetscFunctionBeginUser;
  auto *s = static_cast<StallStop *>(ctx);
  PetscCall(KSPConvergedDefaultDestroy(s->default_ctx));
  delete s;
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode stop_stalled_solves(KSP ksp, StallReport *report) {
  PetscFunctionBeginUser;
  auto *s = new StallStop;
  s->report = report;
  PetscCall(KSPConvergedDefaultCreate(&s->default_ctx));
  PetscCall(KSPSetConvergenceTest(ksp, stall_test, s, destroy_stall_stop));
  PetscFunctionReturn(0);
}

PetscErrorCode transposed_operators(Mat J, Mat P, bool new_preconditioner, Mat *JT, Mat *PT) {
  PetscFunctionBeginUser;
  if (!*JT) PetscCall(create_block_transpose(J, JT));
  if (new_preconditioner || !*PT)
    PetscCall(MatTranspose(P, *PT ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, PT));
  PetscFunctionReturn(0);
}

PetscErrorCode check_transposed_solve(KSP ksp) {
  PetscFunctionBeginUser;
  PC pc;
  PCType type;
  const char *prefix;
  PetscBool exists;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  if (!prefix) prefix = "";
  // PETSc 3.18's Schur field split claims a transposed apply that it does not have
  PetscBool fieldsplit;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCFIELDSPLIT, &fieldsplit));
  if (fieldsplit) {
    PCCompositeType split;
    PetscCall(PCFieldSplitGetType(pc, &split));
    PetscCheck(split != PC_COMPOSITE_SCHUR, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
               "the adjoint preconditioner -%spc_type fieldsplit -%spc_fieldsplit_type schur "
               "cannot be applied transposed in PETSc 3.18; use the case key solver.linear: "
               "iterative (multigrid, which applies transposed) or -%spc_type lu",
               prefix, prefix, prefix);
  }
  PetscCall(set_up_preconditioner(ksp));
  PetscCall(PCGetType(pc, &type));
  PetscCall(PCApplyTransposeExists(pc, &exists));
  PetscCheck(exists, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "the adjoint preconditioner -%spc_type %s cannot be applied transposed; use one that "
             "can: -%spc_type lu (with -%spc_factor_mat_solver_type mumps, the default), ilu, asm, "
             "bjacobi, jacobi or none, or the case key solver.linear: iterative",
             prefix, type, prefix, prefix);
  PetscFunctionReturn(0);
}

PetscErrorCode least_residual_guess(Mat A, bool transpose, Vec b, const std::vector<Vec> &previous,
                                    const std::vector<Vec> &work, Vec x, double *relative_residual,
                                    Vec residual) {
  PetscFunctionBeginUser;
  const std::size_t k = previous.size();
  PetscAssert(work.size() >= 2 * k, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ,
              "least_residual_guess: %zu work vectors for %zu previous solutions", work.size(), k);
  PetscReal bnorm;
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(VecSet(x, 0.0));
  if (residual) PetscCall(VecCopy(b, residual));
  *relative_residual = bnorm > 0 ? 1.0 : 0.0;
  if (bnorm == 0) PetscFunctionReturn(0);
  // Gram-Schmidt on the products w_i = op(A) v_i, the same combinations applied to copies of v_i
  // so that w_i = op(A) v_i stays true: then x0 = sum_i (w_i . b) v_i with orthonormal w_i.
  // (A smooth history is nearly dependent; Gram-Schmidt keeps the accuracy that the normal
  // equations, with the condition number squared, would lose.)  Classical Gram-Schmidt twice
  // (Giraud et al. 2005: as accurate as modified), each pass one reduction for all the
  // coefficients, the first with |w_i|^2 as well; a product whose part independent of the earlier
  // ones is below 1e-10 of its norm, or zero, is left out.
  std::vector<Vec> v, w;
  std::vector<PetscScalar> dots(k + 1), neg(k + 1);
  for (std::size_t i = 0; i < k; ++i) {
    Vec vi = work[2 * i], wi = work[2 * i + 1];
    PetscCall(VecCopy(previous[i], vi));
    if (transpose)
      PetscCall(MatMultTranspose(A, vi, wi));
    else
      PetscCall(MatMult(A, vi, wi));
    const PetscInt j = static_cast<PetscInt>(w.size());
    w.push_back(wi); // against w_0..w_{j-1} and, in the first pass, w_i itself
    double norm0 = 0;
    for (int pass = 0; pass < (j > 0 ? 2 : 1); ++pass) {
      PetscCall(VecMDot(wi, pass == 0 ? j + 1 : j, w.data(), dots.data()));
      if (pass == 0) norm0 = std::sqrt(std::max(PetscRealPart(dots[j]), 0.0));
      for (PetscInt l = 0; l < j; ++l) neg[l] = -dots[l];
      if (j > 0) {
        PetscCall(VecMAXPY(wi, j, neg.data(), w.data()));
        PetscCall(VecMAXPY(vi, j, neg.data(), v.data()));
      }
    }
    w.pop_back();
    if (norm0 == 0) continue;
    PetscReal norm;
    PetscCall(VecNorm(wi, NORM_2, &norm));
    if (norm <= 1e-10 * norm0) continue;
    PetscCall(VecScale(wi, 1.0 / norm));
    PetscCall(VecScale(vi, 1.0 / norm));
    v.push_back(vi);
    w.push_back(wi);
  }
  // the residual b - sum_i (w_i . b) w_i, its norm taken directly (||b||^2 - sum (w_i . b)^2
  // cancels when the guess is good), in `residual` or else in x, which then becomes the guess
  PetscReal rnorm = bnorm;
  if (!w.empty()) {
    const PetscInt n = static_cast<PetscInt>(w.size());
    PetscCall(VecMDot(b, n, w.data(), dots.data()));
    for (PetscInt l = 0; l < n; ++l) neg[l] = -dots[l];
    Vec r = residual ? residual : x;
    PetscCall(VecCopy(b, r));
    PetscCall(VecMAXPY(r, n, neg.data(), w.data()));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    if (r == x) PetscCall(VecSet(x, 0.0));
    PetscCall(VecMAXPY(x, n, dots.data(), v.data()));
  }
  *relative_residual = rnorm / bnorm;
  PetscFunctionReturn(0);
}

void PreconditionerReuse::record_solve(PetscInt iterations) {
  last_iterations_ = iterations;
  if (fresh_ || (reference_ == Reference::Fewest && iterations < fresh_iterations_))
    fresh_iterations_ = iterations;
  fresh_ = false;
}

bool PreconditionerReuse::decide_setup() {
  const double limit = std::max(static_cast<double>(max_iterations_),
                                growth_ * static_cast<double>(fresh_iterations_));
  const bool setup = !reuse_ || requested_ || !have_setup_ || last_iterations_ > limit;
  if (setup) {
    have_setup_ = true;
    requested_ = false;
    fresh_ = true;
    ++setups_;
  }
  return setup;
}

} // namespace karman::solver
