// A shape-optimization problem as an evaluator for optimization::optimize:
//   design a  ->  wall displacement d_B(a)                   (adjoint/shape_parameterization)
//             ->  J, dJ/dd_B and the flow constraints'        (driver/shape_evaluation:
//                 values and gradients                         deform, re-solve, adjoints)
//             ->  geometric constraints C(X), dC/dX            (adjoint/geometric_constraints)
//                 mapped to dC/dd_B by the deformation's reverse mode
//             ->  dJ/da = (dd_B/da)^T dJ/dd_B, the same for every constraint.
// A constraint is  C sense value  (sense <=, >= or =); with `relative`, value is a factor of
// C at the reference shape (area = 1.0 x the initial area).  A failed evaluation (an inverted
// mesh, an unconverged solve, a geometric constraint undefined at the design) is reported to
// the optimizer as such (it backs off).
#pragma once

#include "karman/design/geometric_constraints.hpp"
#include "karman/design/shape_parameterization.hpp"
#include "karman/optimization/optimizer.hpp"
#include "karman/driver/remeshing.hpp"
#include "karman/driver/shape_evaluation.hpp"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace karman::optimization {

using driver::FlowCase;
using driver::ShapeEvaluation;
using driver::ShapeEvaluator;
using driver::SteadySolution;
using driver::UnsteadySolution;

struct ShapeConstraint {
  std::string name;
  ConstraintSense sense = ConstraintSense::Equal;
  double value = 0;
  bool relative = false;
  double tolerance = 1e-8;
  std::unique_ptr<design::GeometricConstraint> geometric; ///< one of geometric ...
  std::unique_ptr<adjoint::Objective> flow;               ///< ... or flow
};

/// A remeshing of a campaign (ShapeOptimization::evaluate): the files DIR/remesh-K.msh (the
/// mesh), DIR/remesh-K.embedding (its boundary vertices' original coordinates: one line
/// "x y z x0 y0 z0" each, %.17g), DIR/remesh-K-state.h5 (the flow of the remeshed design, which
/// the new mesh starts from), DIR/remesh-K.geo, .pos (Gmsh's input).
struct RemeshRecord {
  long index = 0;             ///< K = 1, 2, ...
  std::string stem;           ///< DIR/remesh-K
  std::vector<double> design; ///< the design remeshed (the new mesh's shape)
  long cells_before = 0, cells_after = 0;
  double size_scale = 1;     ///< the factor on the size view (driver::RemeshOptions::target_cells)
  int meshings = 0;          ///< Gmsh runs
  double time = 0;           ///< meshing, transfer and set-up [s]
  std::string layer_dropped; ///< Gmsh's message if the wall layers were left out (RemeshResult)
  bool own_walls = false;    ///< around the evaluated design's walls (else the last good design's)
  /// around the last good design's walls: why not around the design's own
  std::string own_walls_failure;
};

/// What the last evaluation measured besides f and c (for logs and history files).
struct ShapeRecord {
  ShapeEvaluation shape;
  bool remeshed = false;              ///< the design was evaluated on a new mesh (`remesh`)
  std::vector<RemeshRecord> remeshes; ///< around its own walls, or the last good design's
  std::string first_failure;          ///< remeshed: why the previous mesh failed
  double gradient_norm = 0;           ///< |dJ/da|
  std::vector<double> constraints;
};

/// dJ/da and dc/da of a ShapeOptimization against re-deformed, re-solved designs (karman verify),
/// for the objective and every constraint (the functions F_j, objective first):
///  * finite differences: per checked variable a_i the fourth-order central difference
///      (8 (F(a + h e_i) - F(a - h e_i)) - (F(a + 2h e_i) - F(a - 2h e_i))) / 12h,
///    compared with the adjoint's dF_j/da_i relative to the largest |dF_j/da| checked in the same
///    design entry (block), or to 1e-4 of the largest over all entries when F_j barely depends on
///    the entry (an area under a rigid motion): ok when <= 1e-6;
///  * Taylor tests, one per design entry along a random direction p restricted to its variables
///    (seeded by the entry's index: the same on every rank and rank count), and one along a
///    random direction of all variables:
///      r_j(eps) = |F_j(a + eps p) - F_j(a) - eps dF_j/da . p|,  eps = {4, 2, 1} 1e-3,
///    rate_k = log2(r(eps_(k-1)) / r(eps_k)) must be >= 1.9; F_j is linear along p when every
///    r_j <= 1e-12 max(|F_j(a)|, |eps dF_j/da . p|) (round-off: an area under a rigid motion,
///    an area or a thickness under moves along y (FFD, Hicks-Henne)): nothing converges, ok.
struct DesignGradientCheck {
  static constexpr double kFdTolerance = 1e-6, kMinRate = 1.9;
  std::vector<std::string> functions;        ///< "objective", then the constraints' names
  std::vector<double> values;                ///< F_j(a)
  std::vector<std::vector<double>> gradient; ///< dF_j/da, every variable (adjoint)
  struct Variable {
    std::string name, block; ///< the variable and its design entry
    std::size_t index = 0;   ///< its place in the design
    double step = 0;         ///< the step of fd (smaller than the first if that failed)
    std::vector<double> adjoint, fd, relative_difference; ///< per function
    std::vector<char> ok;                                 ///< per function
  };
  std::vector<Variable> variables;
  struct Taylor {
    std::string block; ///< the design entry's name, or "all" (every variable)
    std::vector<double> eps;
    std::vector<double> derivative;             ///< dF_j/da . p per function
    std::vector<std::vector<double>> remainder; ///< r_j(eps_k) [function][k]
    std::vector<std::vector<double>> rate;      ///< rate_k, k >= 1 [function][k - 1]
    std::vector<char> linear, ok;               ///< per function
  };
  std::vector<Taylor> taylor; ///< one per design entry (case order), then "all"
  int failures = 0;           ///< FD differences above the tolerance and rates below kMinRate
};

/// A block of consecutive design variables (one design entry) for check_design_gradient.
struct VariableBlock {
  std::string name;
  std::size_t offset = 0, count = 0;
};
/// The objective, then the constraints, at a design x.  Collective.
using DesignValues =
    std::function<PetscErrorCode(const std::vector<double> &x, std::vector<double> *F)>;

/// The check above at design a for any problem: e0 is the evaluation at a (values and
/// gradients), `values` evaluates the functions at perturbed designs; steps h_i = rel (upper_i -
/// lower_i) where the bounds are finite, else rel * default_step; at most `max_variables`
/// variables by finite differences, shared out among the blocks (a variable that fails is
/// differenced again at h/10 and h/100, the step that agrees best kept); the Taylor steps eps are
/// taylor_scale {4, 2, 1} 1e-3, halved at most twice more while a function's last two rates stay
/// below kMinRate.  Collective (through values).
PetscErrorCode check_design_gradient(const OptimizationProblem &problem,
                                     const std::vector<VariableBlock> &blocks,
                                     const std::vector<double> &a, const Evaluation &e0,
                                     const DesignValues &values, double default_step,
                                     std::size_t max_variables, double rel,
                                     DesignGradientCheck *check, double taylor_scale = 1.0);

/// check_design_gradient at the optimizer's x for the problem of an evaluator: e0 = evaluate(x)
/// (it must be evaluable), the functions at perturbed designs (each must be; else an error
/// naming `file`), then x evaluated again (the caller's warm start and mesh).  Collective.
PetscErrorCode check_evaluator_gradient(MPI_Comm comm, const std::string &file,
                                        const Evaluator &evaluate,
                                        const OptimizationProblem &problem,
                                        const std::vector<VariableBlock> &blocks,
                                        const std::vector<double> &x, double default_step,
                                        std::size_t max_variables, double rel,
                                        DesignGradientCheck *check);

/// The mesh deformation's options from the case's optimization section
/// (deformation_stiffness_exponent, deformation_poisson_ratio, deformation_rtol).
design::DeformationOptions deformation_options(const config::CaseConfig &cfg);

/// The constraints: list of the case as ShapeConstraints (walls checked against the mesh).
/// Collective.
PetscErrorCode build_shape_constraints(FlowCase &fc, std::vector<ShapeConstraint> *out);

class ShapeOptimization {
public:
  /// The design space and constraints are taken over; the case's current coordinates are the
  /// reference shape; `w0` (optional) a converged state on it; `fault` the crash tests' hook
  /// (driver::ShapeEvaluator).  Collective.
  PetscErrorCode setup(FlowCase &fc, std::unique_ptr<design::DesignSpace> design,
                       std::vector<ShapeConstraint> constraints,
                       const design::DeformationOptions &deformation, Vec w0, FaultHook fault = {});
  /// The same from the case: its design: list, constraints: list and optimization: section
  /// (deformation keys).  Collective.
  PetscErrorCode setup(FlowCase &fc, Vec w0, FaultHook fault = {});
  /// A parameter of the case (a discretization::ParameterRegistry name, e.g.
  /// boundaries.farfield.angle_of_attack: the angle of attack of an airfoil held at a lift) as
  /// one more variable after the design space's (and the ones added before), within [lower,
  /// upper], the optimizer's variable value / scale, started from its value in the case: set in
  /// the flow case before each evaluation; its derivatives are the adjoints' parameter gradients
  /// (the objective's and the flow constraints'; the geometric constraints do not depend on it).
  /// An unknown or time-dependent parameter, bounds that do not hold its value: an error naming
  /// it.  Collective.
  PetscErrorCode add_parameter_variable(const std::string &name, double lower, double upper,
                                        double scale);
  /// Bounds, start and constraints for optimization::optimize (relative values resolved), in
  /// the optimizer's variables x = a / scale (the design entries' `scale`, 1 by default).
  const OptimizationProblem &problem() const { return problem_; }
  /// The design a of the optimizer's variables x.
  std::vector<double> design_of(const std::vector<double> &x) const;
  /// f and c at the optimizer's x (the design a = x scale), their gradients with respect to x.
  /// Collective.
  PetscErrorCode evaluate(const std::vector<double> &x, Evaluation *e);
  Evaluator evaluator() {
    return [this](const std::vector<double> &a, Evaluation *e) { return evaluate(a, e); };
  }
  /// The check above at design a, finite differences for at most `max_variables` variables
  /// (shared out among the design entries, at least one each, evenly spread over each entry's
  /// variables); steps h_i = rel (upper_i - lower_i) where the bounds are finite, else
  /// rel * reference.length (the Taylor directions p_i are uniform in +-h_i / rel).
  /// Collective.
  PetscErrorCode check_gradient(const std::vector<double> &a, std::size_t max_variables, double rel,
                                DesignGradientCheck *check);
  const ShapeRecord &last() const { return last_; }
  ShapeEvaluator &shape() { return shape_; }
  const design::DesignSpace &design() const { return shape_.chain().design(); }

  /// Remeshing (optimization.remesh; 2D; not with surface-normal entries, whose variables are
  /// the wall vertices): a design whose mesh deformation fails is evaluated again on a mesh made
  /// by driver::remesh around the walls of the last good design (the walls re-sampled), with the
  /// flow of that design transferred to it and the design space set up on it with the last good
  /// design as its reference (driver/remeshing.hpp: BoundaryEmbedding); if that mesh cannot
  /// follow the design either, once more on a mesh made around the design's own walls (from the
  /// re-sampled ones; sizes and flow of the last good design's mesh).  The campaign goes on on
  /// the new mesh.  Not after a remeshing without a good evaluation since.  Files
  /// DIR/remesh-K.* (RemeshRecord).  With remeshing, a design whose wall (the design's own
  /// curve between the wall vertices, driver::resample_walls) loops or folds between two wall
  /// vertices is a failed evaluation before any flow solve: a deformed mesh can follow its
  /// vertices, but the polygon of the vertices cuts the loop off, and remeshings of such
  /// polygons were false optima (measured: c_D 1.035 on shape-min-drag level 0, wall faces 11x
  /// the mesh's spacing, the FFD curve looping at the nose).  Collective.
  void enable_remeshing(const std::string &dir) { remesh_dir_ = dir; }
  /// The flow case in use: the one given to setup() until the first remeshing, then the last
  /// remeshed one (owned here).
  FlowCase &flow_case() { return *fc_; }
  /// The optimizer's x of the last good evaluation (a restarted campaign sets it).
  void set_last_good(const std::vector<double> &x) {
    a_good_ = design_of(x), good_since_remesh_ = true;
    a_good_.resize(design().size());
  }
  /// A good evaluation's state w at the optimizer's x into the evaluator's history of states
  /// that predict the next warm start (a restarted campaign, oldest first:
  /// driver::ShapeEvaluator::remember).  Collective.
  PetscErrorCode remember(const std::vector<double> &x, Vec w);
  /// Continues on the mesh of remeshing `r` (a restarted campaign: files as written by
  /// evaluate()) from the flow that remeshing transferred (`with_state`; else the caller sets
  /// the state: ShapeEvaluator::set_state).  Collective.
  PetscErrorCode restore_remeshing(const RemeshRecord &r, bool with_state);

private:
  /// evaluate() in the design's own variables a.
  PetscErrorCode evaluate_design(const std::vector<double> &a, Evaluation *e);
  /// *why = where the walls of design a loop or fold between two vertices ("" if they do not,
  /// or if the parameterization has no curve between the vertices); 2D.  Collective.
  PetscErrorCode wall_crossing(const std::vector<double> &a, std::string *why) const;
  /// How remeshing samples the walls of design a (driver::WallSampling; refers to a).
  driver::WallSampling wall_sampling(const std::vector<double> &a) const;
  /// A new mesh around the walls of the design *target from the current mesh's reference shape
  /// (its deformed mesh carries the current sizes there), or of the last good design (`target`
  /// null); *failure says why not, and *other_walls_may_do whether the failure is Gmsh's (or a
  /// fold's) around these walls, so that a mesh around other walls may still do.  `evaluated`:
  /// the design to be evaluated on the new mesh; its walls folding between the new mesh's wall
  /// vertices is such a failure, found before Gmsh runs (driver::RemeshOptions::evaluated).
  PetscErrorCode remesh(const std::vector<double> *target, const std::vector<double> &evaluated,
                        RemeshRecord *record, std::string *failure, bool *other_walls_may_do);
  /// Continues on the mesh `msh` whose boundary vertices' originals are `embedding`, with the
  /// design a_ref as its reference shape; the flow from `state_file` (none: the case's).
  PetscErrorCode load_remeshed(const std::string &msh, const driver::BoundaryEmbedding &embedding,
                               const std::vector<double> &a_ref, const std::string &state_file);

  /// Sets the parameter variables (add_parameter_variable) to their values in the design a.
  PetscErrorCode set_parameters(const std::vector<double> &a);
  /// Appends the parameter variables' derivatives, from an adjoint's parameter gradients, to g.
  PetscErrorCode
  append_parameter_gradients(const std::vector<discretization::ParameterGradient> &parameters,
                             std::vector<double> *g) const;
  /// Appends a parameter variable to the problem and the scales.
  void append_parameter_variable(std::size_t i);
  struct ParameterVariable {
    std::string name;
    double lower = 0, upper = 0, scale = 1, start = 0;
  };
  std::vector<ParameterVariable> parameter_variables_;
  std::vector<double> scale_;  ///< x = a / scale
  std::string remesh_dir_;     ///< "" : no remeshing
  std::vector<double> a_good_; ///< the design space's variables (no parameter variables)
  bool good_since_remesh_ = false;
  std::vector<Vec3<double>> X_original_; ///< per local vertex: where the design space was set up
  /// the campaign's own mesh's wall faces (rank 0; 2D): the original walls of a remeshing
  std::vector<std::array<Vec3<double>, 2>> original_walls_;
  bool original_walls_gathered_ = false; ///< (on every rank: the gather is collective)
  design::DeformationOptions deformation_;
  FaultHook fault_;
  long remesh_count_ = 0;
  std::unique_ptr<config::CaseConfig> owned_cfg_; ///< the remeshed case (after a remeshing)
  std::unique_ptr<FlowCase> owned_fc_;
  /// the next remeshing's size-view factor (next_size_scale of the last remeshing)
  double size_scale_ = 1;
  /// driver::next_size_scale after remeshing r (its target: its mesh's count when that mesh was
  /// itself a remeshing, index > 1)
  static double next_size_scale(const RemeshRecord &r);
  FlowCase *fc_ = nullptr;
  std::vector<ShapeConstraint> constraints_;
  std::vector<const adjoint::Objective *> flow_;
  ShapeEvaluator shape_;
  OptimizationProblem problem_;
  ShapeRecord last_;
};

} // namespace karman::optimization
