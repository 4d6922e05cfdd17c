// Gradient-based constrained optimization over a design vector x with bounds:
//   minimize f(x)  subject to  c_i(x) <= v_i,  c_i(x) >= v_i  or  c_i(x) = v_i,  l <= x <= u
// with NLopt's SLSQP (sequential quadratic programming; equality and inequality constraints;
// the default), CCSAQ or MMA (inequalities only).  f, c_i and their gradients come from an
// evaluator (a forward solve, adjoints and the chain rule through deformation and
// parameterization).  An evaluation that fails (a diverged solve, an inverted mesh) is
// reported to the optimizer as f = +inf: SLSQP cuts its line-search step back, CCSAQ/MMA
// tighten their conservative approximation -- the failed design is never taken.
//
// With OptimizerOptions::projection_steps > 0 (case key optimization.projection_steps) the
// answer is the best evaluated design within the constraint tolerances, and when a nearly
// feasible evaluation has a lower objective, it is projected onto the constraints by at most
// that many Gauss-Newton steps (journaled evaluations beyond max_evaluations) and taken if that
// makes it feasible.
//
// With OptimizerOptions::kkt_tolerance > 0 (optimization.kkt_tolerance) the run also stops at the
// first evaluation that is a first-order optimum to that tolerance: check_kkt's residual (the
// projected Lagrangian gradient relative to |df|, kkt_check.hpp) <= kkt_tolerance, with every
// constraint within kkt_tolerance (1 + |value|) -- the primal and dual tolerances of interior-
// point codes.  That design is then the answer (projected onto the constraint tolerances by the
// projection steps if it lies outside them).  NLopt's SLSQP has no such test: its ftol/xtol
// criteria need two successive iterates that agree, and where its iterates alternate across a
// curved equality constraint (cases/stokes-body-3d: the volume 2e-6 and 2e-2 off on alternate
// evaluations, KKT residuals 9e-5 - 1.2e-4 at the near ones) it had not stopped after 115
// evaluations; with kkt_tolerance 1e-4 it stops at evaluation 35.
// The test runs on replayed evaluations too, so a restart stops where the first run did.  (Where
// no constraint or bound is active the residual is 1 unless df = 0: it stops constrained and
// bound-limited problems.)
//
// Every rank runs the same optimizer; the evaluator is collective and its results are
// broadcast from rank 0, so that all ranks take bitwise the same path.
//
// Crash safety: every completed evaluation is appended to a journal (JSON lines, written by
// rank 0, flushed and fsync'ed; doubles printed to round-trip exactly).  A restart replays
// the journal: the optimizer is deterministic, so it asks for the same designs again and gets
// the stored values without recomputing them, until the journal ends and new evaluations
// begin.  A journal of another problem (design names, bounds, start, constraints,
// algorithm) is refused, as is a replay whose designs differ from the journal's.  A last line
// cut by a kill is ignored.
#pragma once

#include <petscsys.h>

#include <functional>
#include <string>
#include <vector>

namespace karman::optimization {

enum class ConstraintSense { LessEqual, GreaterEqual, Equal };

struct ConstraintSpec {
  std::string name;
  ConstraintSense sense = ConstraintSense::LessEqual;
  double value = 0;
  double tolerance = 1e-8; ///< feasibility tolerance of the optimizer
};

struct OptimizationProblem {
  std::vector<std::string> names; ///< one per design variable
  std::vector<double> lower, upper, start;
  std::vector<ConstraintSpec> constraints;
};

/// f, its gradient, the constraint values and their gradients at one design.
struct Evaluation {
  bool ok = true;      ///< false: the design could not be evaluated (reason in `failure`)
  std::string failure; ///< why (shown in logs, kept in the journal)
  double f = 0;
  std::vector<double> df;              ///< n
  std::vector<double> c;               ///< one per constraint
  std::vector<std::vector<double>> dc; ///< one gradient (n) per constraint
  std::string details; ///< anything the caller wants back on replay (timings, iterations)
  /// The problem changed with this (good) evaluation -- a shape campaign remeshed, which moves
  /// f and c by about the discretization error: the optimizer starts again from this design
  /// (its quasi-Newton model reset), and the evaluations before it no longer compete for the
  /// answer.  Journaled, so a replay restarts alike.
  bool reset = false;
};

/// Evaluates f and the constraints at x.  Collective.  A PetscErrorCode stops the optimization
/// (an error); a design that cannot be evaluated sets ok = false instead.
using Evaluator = std::function<PetscErrorCode(const std::vector<double> &x, Evaluation *e)>;
/// Called after every evaluation (computed or replayed) with its index (from 0).
using EvaluationObserver = std::function<PetscErrorCode(long index, const std::vector<double> &x,
                                                        const Evaluation &e, bool replayed)>;

struct OptimizerOptions {
  std::string algorithm = "slsqp"; ///< slsqp, ccsaq, mma, lbfgs or auto
  long max_evaluations = 50;
  double xtol_rel = 1e-8, ftol_rel = 1e-10;
  /// Gauss-Newton steps (one evaluation each) that project the best nearly feasible design onto
  /// the constraints when it beats the best feasible one (0: none, NLopt's answer stands).
  long projection_steps = 0;
  /// > 0: stop as soon as an evaluation is a first-order (KKT) point to this tolerance --
  /// check_kkt's residual <= kkt_tolerance -- within kkt_tolerance (1 + |value|) of every
  /// constraint (header); 0: NLopt's criteria only.
  double kkt_tolerance = 0;
  std::string journal;  ///< path of the journal ("": none)
  bool restart = false; ///< replay an existing journal
};

struct OptimizationResult {
  std::vector<double> x; ///< the best feasible design found (NLopt's answer)
  double f = 0;
  std::string status; ///< NLopt's reason for stopping
  long evaluations = 0, replayed = 0, failed = 0;
  long resets = 0; ///< restarts of the optimizer (Evaluation::reset)
};

/// The algorithm name checked against the known ones; false if unknown.
bool known_algorithm(const std::string &name);

/// Up to this many variables "auto" takes slsqp (dense quasi-Newton QP: O(n^2) memory, O(n^3)
/// per iteration).
constexpr std::size_t kAutoSmallProblem = 100;
/// The algorithm that optimize() runs: `name`, or for "auto" slsqp up to kAutoSmallProblem
/// variables, above that lbfgs without constraints, ccsaq with inequalities only and slsqp with
/// equalities.
std::string resolve_algorithm(const std::string &name, const OptimizationProblem &problem);

/// Runs the optimization.  Collective.
PetscErrorCode optimize(MPI_Comm comm, const OptimizationProblem &problem,
                        const Evaluator &evaluator, const OptimizerOptions &options,
                        const EvaluationObserver &observer, OptimizationResult *result);

} // namespace karman::optimization
