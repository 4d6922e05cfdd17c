// The solver layer's case-file keys (see include/karman/solver/solver_options.hpp).
#include "karman/solver/solver_options.hpp"

namespace karman::solver {

using namespace config::key;
using config::KeyType;
using config::SectionOptions;

const SectionOptions<TimeOptions> &time_options() {
  static const auto options =
      SectionOptions<TimeOptions>("time", "time integration")
          .choice(choice("mode", "steady",
                         "steady (Newton with pseudo-transient continuation) or unsteady "
                         "(implicit BDF)",
                         {}),
                  &TimeOptions::mode,
                  {{"steady", TimeMode::Steady}, {"unsteady", TimeMode::Unsteady}})
          .choice(choice("scheme", "bdf2",
                         "unsteady scheme: bdf1, or bdf2 (started with one bdf1 step)", {}),
                  &TimeOptions::scheme, {{"bdf1", TimeScheme::Bdf1}, {"bdf2", TimeScheme::Bdf2}})
          .key(positive_or_auto("dt", "0.01",
                                "time step [s] (unsteady), or auto: variable BDF2 steps chosen so "
                                "that each step's local truncation error estimate (its largest "
                                "value relative to the largest velocity) stays below "
                                "time.tolerance; the adjoint replays the recorded steps"),
               &TimeOptions::dt)
          .key(nonnegative("t_end", "1.0", "final time [s] (unsteady)"), &TimeOptions::t_end)
          .key(positive("tolerance", "4e-4",
                        "dt auto: the largest local truncation error of a step (over the "
                        "velocity and scalar unknowns) relative to their largest value; a step "
                        "above it is repeated with a smaller dt"),
               &TimeOptions::tolerance)
          .key(positive_or_auto("dt_initial", "auto",
                                "dt auto: the size of the first steps [s] (before an error "
                                "estimate exists: the first three, whose extrapolation reaches "
                                "back to the initial field); auto: 1e-3 t_end"),
               &TimeOptions::dt_initial)
          .key(positive_or_auto("dt_min", "auto",
                                "dt auto: the smallest step [s]; a step of this size is "
                                "accepted whatever its error estimate (the start of an "
                                "impulsively started flow is singular: its estimates would "
                                "shrink the steps without end); auto: dt_initial / 10"),
               &TimeOptions::dt_min)
          .key(nonnegative("statistics_start", "0.0",
                           "unsteady: start of the window for the force statistics and the "
                           "Strouhal number [s]"),
               &TimeOptions::statistics_start);
  return options;
}

const SectionOptions<SolverOptions> &solver_options() {
  static const auto options =
      SectionOptions<SolverOptions>("solver", "nonlinear and linear solvers, and the scheme")
          .key(integer("max_iterations", "50", "maximum Newton iterations (steady) or per step", 1),
               &SolverOptions::max_iterations)
          .key(positive("rtol", "1e-10",
                        "stop when the residual norm has fallen by this factor (unsteady: in each "
                        "time step, from the extrapolated initial guess; with tolerances forward "
                        "a step may stop earlier); the unsteady adjoint needs 1e-8 or below"),
               &SolverOptions::rtol)
          .choice(
              choice("tolerances", "auto",
                     "unsteady: when a time step's Newton solve stops.  converged: at rtol/atol "
                     "(what a gradient needs); forward: also as soon as the Newton iterate's "
                     "error (correction x contraction) is below 1/10 of the step's "
                     "time-truncation error estimate (BDF2 with the extrapolated initial "
                     "guess, Milne's device), with linear solves to "
                     "1e-2 (refactor_iterations scaled by their digits: 10 at linear_rtol "
                     "1e-4): the accuracy of the time discretization at a fraction of the cost; "
                     "auto: forward for karman run, converged for karman adjoint, optimize, "
                     "verify and Python",
                     {}),
              &SolverOptions::tolerances,
              {{"auto", StepTolerances::Auto},
               {"converged", StepTolerances::Converged},
               {"forward", StepTolerances::Forward}})
          .key(positive("atol", "1e-12", "stop when the residual norm is below this value"),
               &SolverOptions::atol)
          .key(positive_or_auto("cfl_initial", "auto",
                                "initial pseudo-time CFL number (steady); the continuation "
                                "changes it when the ramp stalls or a line search fails "
                                "(solver/steady_solver.hpp); auto: 10 with the ser continuation, "
                                "1 with the adaptive one"),
               &SolverOptions::cfl_initial)
          .key(positive("cfl_max", "1e12", "largest pseudo-time CFL number (steady)"),
               &SolverOptions::cfl_max)
          .choice(choice("continuation", "auto",
                         "steady: how the CFL number follows the Newton steps: ser (switched "
                         "evolution relaxation, CFL_0 |R_0| / |R|, line search on |R|), adaptive "
                         "(the line search on the pseudo-transient residual; CFL x 2 after a "
                         "full step, / 2 after a step shorter than 0.1) or auto (adaptive with "
                         "a turbulence model, ser otherwise; solver/steady_solver.hpp)",
                         {}),
                  &SolverOptions::continuation,
                  {{"auto", Continuation::Auto},
                   {"ser", Continuation::Ser},
                   {"adaptive", Continuation::Adaptive}})
          .choice(
              choice("linear", "auto",
                     "linear solver of the Newton steps and the adjoint: direct (MUMPS LU of "
                     "the exact Jacobian: robust, exact, memory grows faster than the mesh: "
                     "~20 KiB per cell in 2D, ~90 in 3D), iterative (GMRES on the exact "
                     "Jacobian preconditioned by coupled algebraic multigrid on the compact "
                     "face-neighbour matrix; steady solves Jacobian-free; memory about linear "
                     "in the cells, ~4 KiB per cell in 2D) or auto (iterative; a Newton or adjoint "
                     "solve whose GMRES does not converge is done again with the direct LU if "
                     "its factors fit in memory, and the log says so); "
                     "-ksp_type, -pc_type, -pc_gamg_*, -mg_levels_* override either",
                     {}),
              &SolverOptions::linear,
              {{"auto", LinearSolverChoice::Auto},
               {"direct", LinearSolverChoice::Direct},
               {"iterative", LinearSolverChoice::Iterative}})
          .choice(
              choice("preconditioner_matrix", "compact",
                     "unsteady, direct: matrix the LU factors are built from: exact (the full "
                     "Jacobian: GMRES converges in one iteration, large factors) or compact "
                     "(only face-neighbour couplings: several times smaller factors, a few "
                     "GMRES iterations with the exact Jacobian); iterative always uses the "
                     "compact matrix",
                     {}),
              &SolverOptions::preconditioner_matrix,
              {{"exact", PreconditionerMatrix::Exact}, {"compact", PreconditionerMatrix::Compact}})
          .key(integer("refactor_iterations", "20",
                       "unsteady forward and adjoint: reuse the preconditioner (LU factors or "
                       "multigrid hierarchy) across Newton steps and time levels until a linear "
                       "solve needs more than this many iterations, or 1.1 times as many as right "
                       "after its set-up, then set it up again",
                       1),
               &SolverOptions::refactor_iterations)
          .key(positive("linear_rtol", "1e-4",
                        "unsteady: relative tolerance of each Newton step's linear solve (inexact "
                        "Newton; -ksp_rtol overrides it)"),
               &SolverOptions::linear_rtol)
          .key(positive("linear_atol", "1e-20",
                        "unsteady: absolute tolerance of each Newton step's linear solve "
                        "(-ksp_atol overrides it)"),
               &SolverOptions::linear_atol)
          .key(integer("linear_max_iterations", "200",
                       "unsteady: maximum iterations of each Newton step's linear solve "
                       "(-ksp_max_it overrides it)",
                       1),
               &SolverOptions::linear_max_iterations);
  return options;
}

const SectionOptions<ForceOptions> &force_options() {
  static const auto options =
      SectionOptions<ForceOptions>(
          "objective",
          "quantity of interest (forces are always reported; the objective drives the adjoint)")
          .key(typed("walls", KeyType::NameList, "[]",
                     "boundaries whose force is measured; empty: every wall-type boundary"),
               &ForceOptions::walls)
          .key(typed("drag_direction", KeyType::RealVector, "[1, 0, 0]", "unit direction of drag"),
               &ForceOptions::drag_direction)
          .key(typed("lift_direction", KeyType::RealVector, "[0, 1, 0]", "unit direction of lift"),
               &ForceOptions::lift_direction)
          .key(typed("points", KeyType::PointList, "[]",
                     "two points for the pressure difference (also reported in forces.csv)"),
               &ForceOptions::points);
  return options;
}

const SectionOptions<ProbeOptions> &probe_options() {
  static const auto options =
      SectionOptions<ProbeOptions>("output", "what is written to the output folder")
          .key(typed("probes", KeyType::PointList, "[]",
                     "points where pressure and velocity are reported (forces.csv, summary.json)"),
               &ProbeOptions::probes);
  return options;
}

} // namespace karman::solver
