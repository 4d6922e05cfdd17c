// A multipoint shape optimization (see include/karman/optimization/multipoint.hpp).
#include "karman/optimization/multipoint.hpp"
#include "karman/optimization/optimization_options.hpp"

#include "karman/core/parallel.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace karman::optimization {

MultipointShapeOptimization::~MultipointShapeOptimization() {
  local_.clear(); // (the cases before their communicator)
  if (group_ != MPI_COMM_NULL) MPI_Comm_free(&group_);
}

namespace {

// The flow constraints of `cfg` whose `point` is `name` or empty, and (first point) the
// geometric ones, named NAME@POINT; `constraints` as build_shape_constraints made them.
std::vector<ShapeConstraint> point_constraints(const config::CaseConfig &cfg,
                                               std::vector<ShapeConstraint> constraints,
                                               const std::string &name, bool first) {
  std::vector<ShapeConstraint> kept;
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    ShapeConstraint &c = constraints[i];
    const std::string point = cfg.constraints()[i].text("point");
    if (c.geometric ? !first : !(point.empty() || point == name)) continue;
    if (c.flow) c.name += "@" + name;
    kept.push_back(std::move(c));
  }
  return kept;
}

// The problem and the evaluation of a point as JSON (doubles round-trip).
nlohmann::json to_json(const OptimizationProblem &p) {
  nlohmann::json c = nlohmann::json::array();
  for (const auto &s : p.constraints)
    c.push_back({s.name, static_cast<int>(s.sense), s.value, s.tolerance});
  return {{"names", p.names},
          {"lower", p.lower},
          {"upper", p.upper},
          {"start", p.start},
          {"constraints", c}};
}

OptimizationProblem problem_of(const nlohmann::json &j) {
  OptimizationProblem p;
  p.names = j.at("names").get<std::vector<std::string>>();
  p.lower = j.at("lower").get<std::vector<double>>();
  p.upper = j.at("upper").get<std::vector<double>>();
  p.start = j.at("start").get<std::vector<double>>();
  for (const auto &c : j.at("constraints"))
    p.constraints.push_back({c[0].get<std::string>(), static_cast<ConstraintSense>(c[1].get<int>()),
                             c[2].get<double>(), c[3].get<double>()});
  return p;
}

} // namespace

PetscErrorCode MultipointShapeOptimization::load_point(std::size_t k,
                                                       const config::CaseConfig &base,
                                                       FaultHook fault) {
  PetscFunctionBeginUser;
  const Point &point = points_[k];
  LocalPoint lp;
  lp.index = k;
  lp.cfg = std::make_unique<config::CaseConfig>();
  const PointOptions o = point_options().get(base.points()[k]);
  PetscCall(config::CaseConfig::load_text(group_, base.resolved_yaml(), base.file(),
                                          base.directory(), o.set, base.schema(), *lp.cfg));
  lp.fc = std::make_unique<FlowCase>();
  PetscCall(lp.fc->load(group_, *lp.cfg));
  auto design = std::make_unique<design::DesignSpace>();
  PetscCall(design->setup(lp.fc->mesh(), lp.fc->residual().coordinates(), *lp.cfg));
  std::vector<ShapeConstraint> all;
  PetscCall(build_shape_constraints(*lp.fc, &all));
  lp.problem = std::make_unique<ShapeOptimization>();
  PetscCall(lp.problem->setup(*lp.fc, std::move(design),
                              point_constraints(*lp.cfg, std::move(all), point.name, k == 0),
                              deformation_options(*lp.cfg), nullptr, std::move(fault)));
  if (!point.variable.empty())
    PetscCall(
        lp.problem->add_parameter_variable(point.variable, point.lower, point.upper, point.scale));
  local_.push_back(std::move(lp));
  PetscFunctionReturn(0);
}

PetscErrorCode MultipointShapeOptimization::setup(MPI_Comm comm, const config::CaseConfig &cfg,
                                                  FaultHook fault) {
  PetscFunctionBeginUser;
  comm_ = comm;
  file_ = cfg.file();
  const char *file = file_.c_str();
  const std::size_t K = cfg.points().size();
  PetscCheck(K > 0, comm, PETSC_ERR_USER_INPUT,
             "%s: points: a multipoint campaign needs at least one point ({name: NAME, set: "
             "['KEY=VALUE', ...]})",
             file);
  // the points, checked
  points_.clear();
  std::set<std::string> names;
  for (std::size_t k = 0; k < K; ++k) {
    const PointOptions o = point_options().get(cfg.points()[k]);
    PetscCheck(names.insert(o.name).second, comm, PETSC_ERR_USER_INPUT,
               "%s: points[%zu]: a second point named '%s'", file, k, o.name.c_str());
    PetscCheck(o.name.find_first_of("@, ") == std::string::npos, comm, PETSC_ERR_USER_INPUT,
               "%s: points[%zu].name '%s': a name without '@', ',' or spaces", file, k,
               o.name.c_str());
    Point p;
    p.name = o.name, p.variable = o.variable, p.weight = o.weight;
    p.lower = o.lower, p.upper = o.upper, p.scale = o.scale;
    points_.push_back(p);
  }
  for (const auto &c : cfg.constraints()) {
    const ConstraintOptions o = constraint_options().get(c);
    PetscCheck(o.point.empty() || names.count(o.point), comm, PETSC_ERR_USER_INPUT,
               "%s: %s.point: no point named '%s'", file, c.label().c_str(), o.point.c_str());
    PetscCheck(o.point.empty() || !o.geometric(), comm, PETSC_ERR_USER_INPUT,
               "%s: %s.point: a geometric constraint (%s) holds at every point: give no point",
               file, c.label().c_str(), o.type.c_str());
  }
  // the groups of ranks
  PetscMPIInt size, rank;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const std::string mode = optimization_options().get(cfg).points_mode;
  const bool concurrent =
      mode == "concurrent" || (mode == "auto" && size >= static_cast<int>(K) && K > 1);
  groups_ = concurrent ? static_cast<int>(std::min<std::size_t>(K, size)) : 1;
  group_index_ = static_cast<int>((static_cast<long>(rank) * groups_) / size);
  if (group_ != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&group_));
  PetscCallMPI(MPI_Comm_split(comm, group_index_, rank, &group_));
  leader_.assign(groups_, -1);
  for (int r = size - 1; r >= 0; --r) leader_[(static_cast<long>(r) * groups_) / size] = r;
  // each group's points
  local_.clear();
  for (std::size_t k = 0; k < K; ++k)
    if (static_cast<int>(k % groups_) == group_index_) PetscCall(load_point(k, cfg, fault));
  // the problem: the shared variables (every group has them), then the points' own
  std::vector<OptimizationProblem> per_point(K);
  for (std::size_t k = 0; k < K; ++k) {
    std::string text;
    for (const auto &lp : local_)
      if (lp.index == k) text = to_json(lp.problem->problem()).dump();
    PetscCall(broadcast_string(comm, &text, leader_[k % groups_]));
    per_point[k] = problem_of(nlohmann::json::parse(text));
  }
  const design::DesignSpace &space = local_.front().problem->design();
  shared_ = space.size();
  length_ = local_.front().fc->residual().reference().length;
  problem_ = OptimizationProblem();
  const OptimizationProblem &first = per_point[0];
  problem_.names.assign(first.names.begin(), first.names.begin() + shared_);
  problem_.lower.assign(first.lower.begin(), first.lower.begin() + shared_);
  problem_.upper.assign(first.upper.begin(), first.upper.begin() + shared_);
  problem_.start.assign(first.start.begin(), first.start.begin() + shared_);
  scale_ = space.scale();
  for (std::size_t k = 0; k < K; ++k) {
    Point &p = points_[k];
    const OptimizationProblem &q = per_point[k];
    if (!p.variable.empty()) {
      p.offset = problem_.names.size();
      problem_.names.push_back(p.variable + "@" + p.name);
      problem_.lower.push_back(q.lower[shared_]);
      problem_.upper.push_back(q.upper[shared_]);
      problem_.start.push_back(q.start[shared_]);
      scale_.push_back(p.scale);
    }
    p.first_constraint = problem_.constraints.size();
    p.constraints = q.constraints.size();
    problem_.constraints.insert(problem_.constraints.end(), q.constraints.begin(),
                                q.constraints.end());
  }
  last_.assign(K, PointRecord());
  for (std::size_t k = 0; k < K; ++k) last_[k].name = points_[k].name;
  PetscFunctionReturn(0);
}

std::vector<double> MultipointShapeOptimization::design_of(const std::vector<double> &x) const {
  std::vector<double> a = x;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] *= scale_[i];
  return a;
}

std::vector<double> MultipointShapeOptimization::point_x(std::size_t k,
                                                         const std::vector<double> &x) const {
  std::vector<double> xk(x.begin(), x.begin() + shared_);
  if (!points_[k].variable.empty()) xk.push_back(x[points_[k].offset]);
  return xk;
}

PetscErrorCode MultipointShapeOptimization::evaluate(const std::vector<double> &x, Evaluation *e) {
  PetscFunctionBeginUser;
  const std::size_t K = points_.size(), n = x.size();
  // each group its points, one after the other
  std::vector<std::string> result(K);
  for (auto &lp : local_) {
    const std::vector<double> xk = point_x(lp.index, x);
    const auto kept = lp.results.find(xk);
    if (kept != lp.results.end()) { // (evaluated before: those values, no work)
      nlohmann::json j = nlohmann::json::parse(kept->second);
      j["newton"] = 0, j["time"] = 0.0;
      result[lp.index] = j.dump();
      continue;
    }
    Evaluation ek;
    PetscCall(lp.problem->evaluate(xk, &ek));
    const ShapeRecord &r = lp.problem->last();
    result[lp.index] =
        nlohmann::json({{"ok", ek.ok},
                        {"failure", ek.failure},
                        {"f", ek.f},
                        {"df", ek.df},
                        {"c", ek.c},
                        {"dc", ek.dc},
                        {"cd", r.shape.values.cd},
                        {"cl", r.shape.values.cl},
                        {"newton", r.shape.newton_iterations},
                        {"time", r.shape.forward_time + r.shape.adjoint_time +
                                     r.shape.deformation_time + r.shape.deformation_reverse_time}})
            .dump();
    if (lp.results.size() >= 1000) lp.results.clear(); // (a bound on the memory)
    lp.results[xk] = result[lp.index];
  }
  // every point on every rank, summed up
  *e = Evaluation();
  e->df.assign(n, 0.0);
  e->c.assign(problem_.constraints.size(), 0.0);
  e->dc.assign(problem_.constraints.size(), std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < K; ++k) {
    PetscCall(broadcast_string(comm_, &result[k], leader_[k % groups_]));
    const nlohmann::json j = nlohmann::json::parse(result[k]);
    const Point &p = points_[k];
    PointRecord &rec = last_[k];
    rec.weight = p.weight;
    rec.ok = j.at("ok").get<bool>();
    rec.failure = j.at("failure").get<std::string>();
    rec.newton_iterations = j.at("newton").get<int>();
    rec.time = j.at("time").get<double>();
    if (!rec.ok) {
      if (e->ok) e->failure = "point " + p.name + ": " + rec.failure;
      e->ok = false;
      continue;
    }
    rec.J = j.at("f").get<double>(), rec.cd = j.at("cd").get<double>();
    rec.cl = j.at("cl").get<double>();
    // (the point's gradients: the shared variables, then its own)
    const auto df = j.at("df").get<std::vector<double>>();
    e->f += p.weight * rec.J;
    for (std::size_t i = 0; i < shared_; ++i) e->df[i] += p.weight * df[i];
    if (!p.variable.empty()) e->df[p.offset] += p.weight * df[shared_];
    const auto c = j.at("c").get<std::vector<double>>();
    const auto dc = j.at("dc").get<std::vector<std::vector<double>>>();
    for (std::size_t i = 0; i < p.constraints; ++i) {
      e->c[p.first_constraint + i] = c[i];
      std::vector<double> &row = e->dc[p.first_constraint + i];
      std::copy(dc[i].begin(), dc[i].begin() + shared_, row.begin());
      if (!p.variable.empty()) row[p.offset] = dc[i][shared_];
    }
  }
  if (!e->ok) e->f = 0, e->df.assign(n, 0.0), e->c.clear(), e->dc.clear();
  PetscFunctionReturn(0);
}

PetscErrorCode MultipointShapeOptimization::check_gradient(const std::vector<double> &x,
                                                           std::size_t max_variables, double rel,
                                                           DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  std::vector<VariableBlock> blocks;
  for (const auto &b : local_.front().problem->design().blocks())
    blocks.push_back({b.name, b.offset, b.count});
  for (const auto &p : points_)
    if (!p.variable.empty()) blocks.push_back({problem_.names[p.offset], p.offset, 1});
  PetscCall(check_evaluator_gradient(
      comm_, file_, [this](const std::vector<double> &y, Evaluation *e) { return evaluate(y, e); },
      problem_, blocks, x, length_, max_variables, rel, check));
  PetscFunctionReturn(0);
}

} // namespace karman::optimization
