// A case as a library object: the mesh of a case file, its discretization and monitors, and
// the calls that a command, the optimizer or a Python binding makes on it -- the initial
// state, the steady solve, unsteady time stepping, the steady gradient -- each returning
// values (state, force coefficients, summaries) and writing no files.  Whoever wants a log
// line, a CSV row or a ParaView snapshot per iteration passes an observer.
//
//   load(cfg)            mesh (gmsh if needed), distribute, FlowResidual, FlowMonitors
//   solve_steady         Newton + pseudo-transient continuation (solver/steady_solver.hpp)
//                        from w; the best state is kept when it does not converge
//   start_unsteady       an UnsteadySolver set up at the initial state (level 0) and the
//                        monitors there
//   advance_to           BDF steps of an UnsteadySolver to t_end, stopping at a step that
//                        does not converge (the solver keeps the last good state)
//   steady_gradient      objective J (case section objective), adjoint and dJ/d(parameters,
//                        X) at a converged state (adjoint/adjoint_solver.hpp)
//   unsteady_gradient    forward run from the initial state and backward sweep of an
//                        UnsteadyAdjoint with the case's options (unsteady_gradient_options)
//
// Time is an argument: a state is evaluated at a time level (discretization::TimeLevel;
// discretization::kSteady for steady states and the initial state).
#pragma once

#include "karman/adjoint/adjoint_options.hpp"
#include "karman/adjoint/adjoint_solver.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/solver/flow_monitors.hpp"
#include "karman/solver/solver_options.hpp"
#include "karman/solver/steady_solver.hpp"
#include "karman/solver/unsteady_solver.hpp"

#include <functional>
#include <memory>

namespace karman::driver {

/// Meshes (if the case gives a .geo), loads and distributes the case's mesh.  Collective.
PetscErrorCode load_case_mesh(MPI_Comm comm, const config::CaseConfig &cfg, mesh::Mesh *mesh);

/// The case's initial state into w (owned cells): initial.file (fields of another run on the
/// same mesh, any rank count, or interpolated from another mesh) or the uniform
/// initial.velocity / initial.pressure.  A file written by a run of another problem (other
/// CaseConfig::problem_keys(), e.g. a spin-up without rotation) is used with a warning that
/// names the keys that differ.  Collective.
PetscErrorCode initial_state(const discretization::FlowResidual &res, const config::CaseConfig &cfg,
                             Vec w);

/// Called after every Newton iteration with its record and the monitors at its state.
using SteadyObserver = std::function<PetscErrorCode(const solver::NewtonRecord &,
                                                    const solver::FlowMonitors::Values &)>;

struct SteadySolution {
  solver::SteadySummary summary;       ///< converged, reason, iterations, residual history
  solver::FlowMonitors::Values values; ///< at the solution (converged) or the best state
  double peak_memory_mib = 0, peak_memory_mib_max_rank = 0;
};

/// Called after every converged time step with the solver (which the observer may ask for a
/// preconditioner set-up), the step's report, the new state's local state and monitors.
using StepObserver = std::function<PetscErrorCode(
    solver::UnsteadySolver &, const solver::StepReport &, const discretization::LocalState &,
    const solver::FlowMonitors::Values &)>;

struct UnsteadySolution {
  bool converged = true;
  solver::StepReport failed; ///< the step that did not converge (converged == false)
  long steps = 0;            ///< steps taken by this call
  long newton_iterations = 0, linear_iterations = 0, preconditioner_setups = 0;
  long linear_fallbacks = 0; ///< steps solved by solver.linear auto's LU (solver::StepReport)
  long dual_time_steps = 0;  ///< steps solved by dual time stepping (solver::StepReport)
  long truncation_stops = 0; ///< steps stopped at the truncation error (solver.tolerances forward)
  long rejected_steps = 0;   ///< time.dt auto: tries repeated with a smaller step
  double min_dt = 0, max_dt = 0; ///< the smallest and largest step taken
  double wall_time = 0;          ///< sum of the steps' wall times [s]
  /// sums of the steps' time split (solver::StepReport) [s]
  double residual_time = 0, jacobian_time = 0, pc_setup_time = 0, linear_solve_time = 0;
};

class FlowCase {
public:
  FlowCase() = default;
  FlowCase(const FlowCase &) = delete;
  FlowCase &operator=(const FlowCase &) = delete;

  /// Loads the mesh and builds the discretization and the monitors of `cfg`, which must
  /// outlive this object.  Collective.
  PetscErrorCode load(MPI_Comm comm, const config::CaseConfig &cfg);
  /// The same on `mesh`, already loaded from cfg's mesh (load_case_mesh).  Collective.
  PetscErrorCode load(const config::CaseConfig &cfg, mesh::Mesh &&mesh);

  const config::CaseConfig &config() const { return *cfg_; }
  const mesh::Mesh &mesh() const { return mesh_; }
  discretization::FlowResidual &residual() { return res_; }
  const discretization::FlowResidual &residual() const { return res_; }
  const solver::FlowMonitors &monitors() const { return mon_; }
  bool unsteady() const { return solver::time_options().get(*cfg_).unsteady(); }

  /// A state vector (ghosted, zero) and the case's initial state.  Collective.
  PetscErrorCode create_state(Vec *w) const { return res_.create_state(w); }
  PetscErrorCode initial_state(Vec w) const { return driver::initial_state(res_, *cfg_, w); }
  /// The local state and the monitors (forces, delta p, probes) of w at time level `level`
  /// (discretization::kSteady: a steady state, the initial state).  Collective.
  PetscErrorCode evaluate(const discretization::TimeLevel &level, Vec w,
                          discretization::LocalState *state,
                          solver::FlowMonitors::Values *values) const;

  /// The steady solve from the state in w.  Converged: w holds the solution.  Not converged:
  /// w the last iterate, `best` (if given) the state of least residual, and the values are
  /// those of the best state; summary.converged tells (no error).  Collective.
  /// `reference_residual` > 0: the continuation of a warm start (SteadySolver::
  /// set_reference_residual), whose multigrid smoothers shift only zero pivots from the start
  /// (SteadySolver::start_unshifted) unless a solve of this case had to restore the shift.
  PetscErrorCode solve_steady(Vec w, Vec best, const SteadyObserver &observer,
                              SteadySolution *solution, double reference_residual = 0);
  /// The start of an unsteady run: `ts` set up on this case's residual with the case's initial
  /// state at level 0 (w^0 = w^{-1}, t = 0), and the local state and monitors of that state
  /// (the run's first record); `purpose` resolves solver.tolerances auto (a forward-only run,
  /// or one whose gradient follows).  Collective.
  PetscErrorCode start_unsteady(solver::UnsteadySolver &ts, discretization::LocalState *state,
                                solver::FlowMonitors::Values *values,
                                solver::StepPurpose purpose = solver::StepPurpose::Gradient);
  /// Steps `ts` (set up on this case's residual, its state set) until t_end; the last step is
  /// shortened to end on t_end (time.dt auto: the controller's steps, solver/step_size.hpp).  A
  /// step that does not converge stops the stepping with solution->converged false (ts keeps the
  /// last good state; no error).  Collective.
  PetscErrorCode advance_to(solver::UnsteadySolver &ts, double t_end, const StepObserver &observer,
                            UnsteadySolution *solution);
  /// Objective, adjoint and gradient (the parameters of adjoint.parameters, and dJ/dX) of the
  /// case's objective at the converged steady state w.  The adjoint solver is created on the
  /// first call and reused.  Collective.
  PetscErrorCode steady_gradient(Vec w, adjoint::AdjointResult *result);
  /// The same for another objective (e.g. a flow constraint of an optimization), with the
  /// same adjoint solver; the parameters are not selected.  `same_state`: w and the case did
  /// not change since the last gradient, whose Jacobian and LU factors are reused.  Collective.
  PetscErrorCode gradient(Vec w, const adjoint::Objective &objective,
                          adjoint::AdjointResult *result, bool same_state = false);
  /// The options of an unsteady gradient from the case (adjoint section: schedule, snapshots,
  /// save_every); a caller adds its own (state file, resumption, trajectory folder, hooks).
  adjoint::UnsteadyAdjointOptions unsteady_gradient_options() const;
  /// Objective(s) and gradients of an unsteady run: `adjoint` (set up on this case's residual,
  /// its objectives added) runs forward from the case's initial state to t_end and sweeps back
  /// with the options `o` (unsteady_gradient_options() and the caller's fields); one result per
  /// objective.  Collective.
  PetscErrorCode unsteady_gradient(adjoint::UnsteadyAdjoint &adjoint,
                                   const adjoint::UnsteadyAdjointOptions &o,
                                   std::vector<adjoint::UnsteadyAdjointResult> *results) const;
  /// The case's objective (set up on the first call).  Collective.
  PetscErrorCode objective(const adjoint::Objective **objective);

  /// The values at time levels 1..`levels` of boundary parameter `name` (a ParameterRegistry
  /// name of a rotation rate, inlet speed or jet amplitude: the ones a time function gives).
  /// An unknown name, or one that is not such a parameter, is an error listing those that are;
  /// so is time.dt auto (the levels' times are not known before the run).
  PetscErrorCode parameter_steps(const std::string &name, long levels,
                                 std::vector<double> *values) const;
  /// Makes parameter `name` (as above) a per-step time function (physics::TimeFunction::steps):
  /// values[n - 1] at time level n = 1..values.size(), its current value at level 0 kept (the
  /// initial state's level); the boundary values follow.  Collective.
  PetscErrorCode set_parameter_steps(const std::string &name, const std::vector<double> &values);

private:
  const config::CaseConfig *cfg_ = nullptr;
  mesh::Mesh mesh_;
  discretization::FlowResidual res_;
  solver::FlowMonitors mon_;
  std::unique_ptr<adjoint::Objective> objective_;
  std::unique_ptr<adjoint::AdjointSolver> adjoint_;
  /// the last steady Newton solve ended with its smoothers shifting only zero pivots
  /// (solver::unshift_smoothers): the next starts so (SteadySolver::start_unshifted)
  bool smoothers_unshifted_ = false;
  /// ... and with overlapping smoothers (solver::overlap_smoothers; SteadySolver::start_overlapped)
  bool smoothers_overlapped_ = false;
  /// ... ended with the smoothers' shift restored: the next steady adjoint starts with the shift
  /// (AdjointSolver::start_shifted; consumed by it)
  bool smoothers_reshifted_ = false;
  /// a steady solve of this case restored the shift (its unshifted smoothers failed): warm starts
  /// keep the shift too (solve_steady)
  bool unshifted_failed_ = false;
  bool solver_announced_ = false; ///< solve_steady logged its linear solver (the first does)
};

} // namespace karman::driver
