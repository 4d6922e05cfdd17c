// A flow-control or system-identification problem as an evaluator for optimization::optimize: the
// design variables are physical and boundary parameters, the parameters of time functions and
// per-step values of a boundary parameter (the control kinds of the case's `design:` list):
//
//   parameter       a_i = a registry parameter, constant in time (fluid.viscosity,
//                   boundaries.inlet.velocity, boundaries.cylinder.omega, ...amplitude)
//   time-function   a_i = a parameter of a boundary parameter's time function
//                   (PARAMETER.amplitude, .frequency, .phase, .offset of a sine; .knot[j] of a
//                   table)
//   per-step        a_n = the value of a boundary parameter at time level n = 1..N, with the
//                   smoothness penalty  S = w sum_{n=1}^{N-1} (a_(n+1) - a_n)^2 / dt
//                   (a discrete integral of (da/dt)^2; dS/da_n = 2 w (2 a_n - a_(n-1) - a_(n+1)) /
//                   dt inside, one-sided at the ends) added to the objective.
//
// Evaluation at a design: the parameters are set on the case (discretization::ParameterRegistry,
// FlowCase::set_parameter_steps), then
//   unsteady: the forward run from the case's initial state (initial.file: a developed flow)
//             and the unsteady adjoint of the objective (time average over objective.window plus
//             objective.control_cost), store-all or revolve as the case's adjoint section says;
//             dJ/da from its parameter gradients (the time-function parameters chained by the
//             adjoint) and its per-step series;
//   steady:   Newton from the case's initial state and the steady adjoint (parameter entries).
// Constraints (the case's `constraints:` list): a flow quantity with the objective's keys (mean
// lift = 0: {type: lift, window: [t0, t1], sense: "=", value: 0}; r.m.s. lift <= c: {type: lift,
// time: std, ...}) has its own adjoint;
// control-power is C = sum_n q_n omega(t^n)^2 of objective.control_wall (q_n the weights of the
// window, adjoint::window_weight: the time average of omega^2), an explicit function of the design
// with
//   dC/da_j = sum_n 2 q_n omega_n d omega_n/da_j
// (d omega_n/da_j: 1 for a constant rotation rate, the sine's or table's derivative at t^n, the
// Kronecker delta for per-step values).
// The optimizer sees x_i = a_i / scale_i (key `scale`; default |a_i| at the start for parameter
// entries, so that a viscosity of 1e-3 and a speed of 1 are equally well conditioned).
//
// Crash tests: KARMAN_TEST_KILL=PHASE:N (as driver/shape_evaluation.hpp) raises SIGKILL inside
// the N-th evaluation this object computes: `adjoint` in the backward sweep of the objective's
// unsteady adjoint at level N_steps / 2, `forward` (N >= 2) half the previous evaluation's
// forward time after its forward run starts.
#pragma once

#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/optimization_options.hpp"
#include "karman/optimization/optimizer.hpp"
#include "karman/optimization/shape_optimization.hpp"

#include <memory>
#include <string>
#include <vector>

namespace karman::optimization {

using driver::FlowCase;
using driver::ShapeEvaluation;
using driver::ShapeEvaluator;
using driver::SteadySolution;
using driver::UnsteadySolution;

/// One control entry of the design: list.
struct ControlEntry {
  std::string name, label; ///< the entry's name and "design[i]"
  ControlKind kind = ControlKind::Parameter;
  std::size_t offset = 0, count = 0;
  std::string function;             ///< time-function, per-step: the boundary parameter
  std::vector<std::string> targets; ///< parameter, time-function: the parameters' names
  double smoothing = 0;             ///< per-step: the penalty's weight
};

/// A constraint of a control problem.
struct ControlConstraint {
  ConstraintSpec spec;
  bool power = false;                         ///< control-power (explicit), else a flow function
  std::unique_ptr<config::CaseConfig> flow;   ///< the case with the constraint as its objective
  std::unique_ptr<adjoint::Objective> steady; ///< steady: the constraint's objective
  double t0 = 0, t1 = 0;                      ///< control-power: the window
  adjoint::WindowWeighting weighting = adjoint::WindowWeighting::Uniform; ///< and its weights
};

/// What the last evaluation measured besides f and c.
struct ControlRecord {
  double J = 0;       ///< the case's objective (without the smoothness penalty)
  double penalty = 0; ///< the smoothness penalty
  double gradient_norm = 0;
  double forward_time = 0, adjoint_time = 0; ///< summed over the functions' runs
  long recomputed = 0, snapshots = 0;        ///< revolve (the objective's run)
  double forward_memory = 0;                 ///< MiB, sum over ranks (the objective's run)
  int newton_iterations = 0;                 ///< steady
  std::string failure;                       ///< why the evaluation failed ("" if it did not)
};

/// The uncertainty of identified parameters (probe matching, objective J = weighted time average
/// of the squared misfits): the Hessian of J by central differences of the adjoint gradient,
///   H_ij = (dJ/da_i(a + h_j e_j) - dJ/da_i(a - h_j e_j)) / 2 h_j   (symmetrized),
/// which near a good fit is the Gauss-Newton matrix 2 w/m_t R^T R (R the Jacobian of the m = M
/// residuals, m_t time levels, w the weight), the noise variance estimated from the misfit,
///   sigma^2 = sum r^2 / (M - n) = m_t J / (w (M - n)),
/// and the linearized covariance of the least-squares estimate
///   C = sigma^2 (R^T R)^-1 = 2 J / (M - n) H^-1.
/// (Exact for uniform weights; the trapezoidal end weights q/2 make it approximate.)
struct Identification {
  double misfit = 0;          ///< J at the design
  long observations = 0;      ///< M = levels in the window x probes x weighted components
  std::vector<double> values; ///< the parameters a
  std::vector<std::vector<double>> hessian;    ///< d2J/da2 (physical units)
  std::vector<std::vector<double>> covariance; ///< C
  std::vector<double> standard_deviation;      ///< sqrt(C_ii)
  bool ok = false; ///< false: H not positive definite or M <= n (no estimate)
};

struct DesignParse; // (control_setup.cpp)

class ControlOptimization {
public:
  ControlOptimization() = default;
  ControlOptimization(const ControlOptimization &) = delete;
  ControlOptimization &operator=(const ControlOptimization &) = delete;
  ~ControlOptimization();

  /// The control entries of the case's design: list, its constraints and the initial state;
  /// `work_directory` holds the unsteady trajectories.  Every problem of the input is one
  /// error line naming the file and the key.  `fault`: the crash tests' hook
  /// (core/fault_injection.hpp: "forward" timed at half the previous evaluation's forward run,
  /// "adjoint" at a snapshot of the first half of the sweep).  Collective.
  PetscErrorCode setup(FlowCase &fc, const std::string &work_directory, FaultHook fault = {});
  const OptimizationProblem &problem() const { return problem_; }
  const std::vector<ControlEntry> &entries() const { return entries_; }
  /// The physical values a_i = x_i scale_i of the optimizer's variables x.
  std::vector<double> physical(const std::vector<double> &x) const;
  /// Sets the case's parameters to the design x.  Collective.
  PetscErrorCode apply(const std::vector<double> &x);
  /// f (objective + penalty), the constraints and their gradients with respect to x.
  /// Collective.
  PetscErrorCode evaluate(const std::vector<double> &x, Evaluation *e);
  /// The values only (forward runs, no adjoints): objective, then the constraints.  Collective.
  PetscErrorCode values(const std::vector<double> &x, std::vector<double> *F);
  Evaluator evaluator() {
    return [this](const std::vector<double> &x, Evaluation *e) { return evaluate(x, e); };
  }
  /// check_design_gradient at x (steps rel (upper - lower), or rel where unbounded).
  /// Collective.
  PetscErrorCode check_gradient(const std::vector<double> &x, std::size_t max_variables, double rel,
                                DesignGradientCheck *check);
  const ControlRecord &last() const { return last_; }
  /// The identification estimate above at x (steps h_j = rel scale_j); for a probe-match
  /// objective (an error otherwise).  2n evaluations.  Collective.
  PetscErrorCode identify(const std::vector<double> &x, double rel, Identification *out);
  /// True if the case's objective is a least-squares misfit (identify() applies).  Collective.
  PetscErrorCode least_squares(bool *yes) const;
  /// The values of boundary parameter `function` at the levels 1..N at the design last applied.
  PetscErrorCode series(const std::string &function, std::vector<double> *values) const;
  long steps() const { return steps_; }
  double dt() const { return dt_; }

private:
  /// setup's parts: the design entries (variables, bounds, scales) and the constraints.
  PetscErrorCode parse_entries(DesignParse &d);
  PetscErrorCode parse_constraints(const DesignParse &d);
  /// The unsteady functions (objective, then flow constraints) at the current parameters:
  /// values, and with `gradients` their gradients with respect to the physical a.
  PetscErrorCode run_unsteady(bool gradients, std::vector<double> *F,
                              std::vector<std::vector<double>> *dF);
  PetscErrorCode run_steady(bool gradients, std::vector<double> *F,
                            std::vector<std::vector<double>> *dF);
  /// Smoothness penalty and its gradient (physical a).
  double penalty(const std::vector<double> &a, std::vector<double> *grad) const;
  /// control-power constraint c at the current parameters, and its gradient (physical a).
  PetscErrorCode control_power(const ControlConstraint &c, double *value,
                               std::vector<double> *grad) const;
  /// The constraints in order: the flow functions' values F[1..] (gradients dF[1..], physical a;
  /// dF null: values only) and the control powers.
  PetscErrorCode constraint_values(const std::vector<double> &F,
                                   const std::vector<std::vector<double>> *dF,
                                   std::vector<double> *c,
                                   std::vector<std::vector<double>> *dc) const;
  /// d omega_n / da (physical a) of the control wall's rotation rate at level n into row.
  void rotation_derivative(long n, std::vector<double> *row) const;

  FlowCase *fc_ = nullptr;
  std::string work_;
  std::vector<ControlEntry> entries_;
  std::vector<ControlConstraint> constraints_;
  std::vector<double> scale_;
  OptimizationProblem problem_;
  ControlRecord last_;
  Vec w0_ = nullptr, w_ = nullptr;
  bool unsteady_ = false;
  long steps_ = 0; ///< time.dt auto: 0
  double dt_ = 0;
  /// time.dt auto: the steps of the first evaluation, which the later ones repeat (so that the
  /// finite differences of verify and the gradient belong to one step sequence)
  bool adaptive_ = false;
  std::vector<double> step_sizes_;
  std::string control_omega_; ///< boundaries.WALL.omega of objective.control_wall ("": none)
  long evaluations_ = 0;
  FaultHook fault_;
  double previous_forward_time_ = 0;
};

} // namespace karman::optimization
