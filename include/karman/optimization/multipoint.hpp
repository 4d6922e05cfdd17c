// A multipoint shape optimization: one shape, several operating points (the case's `points:`),
//   minimize  sum_k w_k J_k(a, p_k)   subject to the constraints of every point,
// J_k the case's objective at point k (the case with the point's `set` overrides: an angle of
// attack, a Reynolds number, an inflow), a the design space's variables (shared), p_k the point's
// own design variable (`variable`, e.g. its angle of attack: ShapeOptimization::
// add_parameter_variable), if it has one.  Each point is a ShapeOptimization of its own (its flow
// case, mesh deformation, forward solve and adjoints); its flow constraints are the case's flow
// constraints whose `point` names it or is empty (named NAME@POINT), the geometric constraints
// belong to the first point (the shape is the same at every point).
//
// The optimizer's variables: the design space's, then the points' variables in point order
// (named VARIABLE@POINT); the constraints: point by point, each point's in the case's order.
//
// Points are evaluated concurrently or one after the other (optimization.points_mode): with G
// groups the ranks split into G contiguous sub-communicators (rank r in group r G / size), point k
// goes to group k mod G and the groups evaluate their points one after the other; each point's
// values and gradients are broadcast from its group's first rank to every rank, and every rank
// assembles the same Evaluation.  G = 1 (sequential): every point on all ranks.  The designs are
// the same either way, to the tolerance of the flow solves.  A point whose variables (the shared
// ones and its own) were evaluated before is not solved again: their values then are taken (0
// Newton iterations, 0 s), so that a change of one point's variable leaves the other points'
// values exactly as they were (finite differences, Taylor tests) -- but the point's flow state
// and mesh stay those of its last solve (forget() before an evaluation whose flows are wanted).
//
// Not remeshed: a design that a point's mesh cannot follow is a failed evaluation (the points'
// meshes stay the case's).
#pragma once

#include "karman/optimization/shape_optimization.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace karman::optimization {

/// What the last evaluation measured at each point (every rank has all points).
struct PointRecord {
  std::string name;
  double weight = 1;
  bool ok = false;
  std::string failure;
  double J = 0, cd = 0, cl = 0;
  int newton_iterations = 0;
  double time = 0; ///< forward, adjoints and deformation [s]
};

class MultipointShapeOptimization {
public:
  MultipointShapeOptimization() = default;
  MultipointShapeOptimization(const MultipointShapeOptimization &) = delete;
  MultipointShapeOptimization &operator=(const MultipointShapeOptimization &) = delete;
  ~MultipointShapeOptimization();

  /// The points of `cfg` (a case with a `points:` list and a `design:` list of shape entries):
  /// the groups, each group's cases and problems.  Bad input (no points, a duplicate or unknown
  /// point name, a geometric constraint with a point, a point variable that is no parameter of
  /// the case) is an error naming it.  Collective on comm.
  PetscErrorCode setup(MPI_Comm comm, const config::CaseConfig &cfg, FaultHook fault = {});
  const OptimizationProblem &problem() const { return problem_; }
  /// f, c and their gradients at the optimizer's x.  Collective on comm.
  PetscErrorCode evaluate(const std::vector<double> &x, Evaluation *e);
  /// Drops the kept results: the next evaluation solves every point (its flow states and meshes
  /// are then the design's).
  void forget() {
    for (auto &lp : local_) lp.results.clear();
  }
  /// The last evaluation's points.
  const std::vector<PointRecord> &last() const { return last_; }
  /// The number of groups of ranks (1: sequential).
  int groups() const { return groups_; }
  /// The design a of the optimizer's x (the case's units: design entries and point variables).
  std::vector<double> design_of(const std::vector<double> &x) const;
  /// check_design_gradient (shape_optimization.hpp) at the optimizer's x for the objective and
  /// every constraint: the design entries' blocks, then one block per point variable; steps
  /// rel (upper - lower), at most `max_variables` variables by differences.  Collective.
  PetscErrorCode check_gradient(const std::vector<double> &x, std::size_t max_variables, double rel,
                                DesignGradientCheck *check);

  /// The points this rank evaluates, with their flow cases and problems (each on its group's
  /// communicator), and the index of each in the case's list.
  struct LocalPoint {
    std::size_t index = 0;
    std::unique_ptr<config::CaseConfig> cfg;
    std::unique_ptr<FlowCase> fc;
    std::unique_ptr<ShapeOptimization> problem;
    /// the results (JSON) of the point's x evaluated so far
    std::map<std::vector<double>, std::string> results;
  };
  const std::vector<LocalPoint> &local_points() const { return local_; }
  std::vector<LocalPoint> &local_points() { return local_; }
  /// The communicator of this rank's group.
  MPI_Comm group_comm() const { return group_; }

  /// The point's x (the shared variables, then its own if it has one) of the optimizer's x.
  std::vector<double> point_x(std::size_t k, const std::vector<double> &x) const;

private:
  /// Loads point k on this rank's group and appends it to local_.  Collective on the group.
  PetscErrorCode load_point(std::size_t k, const config::CaseConfig &cfg, FaultHook fault);

  std::string file_;  ///< the case file (messages)
  double length_ = 1; ///< reference.length (unbounded steps)
  MPI_Comm comm_ = MPI_COMM_NULL, group_ = MPI_COMM_NULL;
  int groups_ = 1, group_index_ = 0;
  std::vector<int> leader_; ///< per group: its first rank on comm_
  struct Point {
    std::string name, variable;
    double weight = 1, lower = 0, upper = 0, scale = 1;
    std::size_t offset = 0; ///< its variable's index in x (if it has one)
    std::size_t first_constraint = 0, constraints = 0; ///< its constraints in problem_
  };
  std::vector<Point> points_;
  std::size_t shared_ = 0; ///< the design space's variables
  std::vector<double> scale_;
  std::vector<LocalPoint> local_;
  OptimizationProblem problem_;
  std::vector<PointRecord> last_;
};

} // namespace karman::optimization
