// A shape-optimization problem (see include/karman/optimization/shape_optimization.hpp).
#include "karman/optimization/shape_optimization.hpp"
#include "karman/optimization/optimization_options.hpp"

#include "karman/core/parallel.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/io/atomic_file.hpp"
#include "karman/io/state_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace karman::optimization {

PetscErrorCode build_shape_constraints(FlowCase &fc, std::vector<ShapeConstraint> *out) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  const mesh::Mesh &m = fc.mesh();
  out->clear();
  for (const config::Section &sec : cfg.constraints()) {
    PetscCheck(sec.text("point").empty() || !cfg.points().empty(), m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.point: the case has no points: list (a multipoint campaign's operating "
               "points)",
               cfg.file().c_str(), sec.label().c_str());
    ShapeConstraint c;
    const std::string type = sec.text("type"), sense = sec.text("sense");
    c.sense = sense == "="
                  ? ConstraintSense::Equal
                  : (sense == "<=" ? ConstraintSense::LessEqual : ConstraintSense::GreaterEqual);
    c.value = sec.real("value");
    c.relative = sec.flag("relative");
    c.tolerance = sec.real("tolerance");
    std::vector<int> walls;
    for (const auto &w : sec.names("walls")) {
      const int p = m.patch_index(w);
      PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.walls: no boundary named '%s'",
                 cfg.file().c_str(), sec.label().c_str(), w.c_str());
      walls.push_back(p);
    }
    if (type == "area" || type == "volume" || type == "centroid" || type == "thickness") {
      PetscCheck(type != "area" || m.dim == 2, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s: 'area' is for 2D meshes; use 'volume' in 3D", cfg.file().c_str(),
                 sec.label().c_str());
      PetscCheck(type != "volume" || m.dim == 3, m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s: 'volume' is for 3D meshes; use 'area' in 2D", cfg.file().c_str(),
                 sec.label().c_str());
      c.geometric = std::make_unique<design::GeometricConstraint>();
      if (type == "centroid")
        PetscCall(design::GeometricConstraint::centroid(
            m, walls, static_cast<int>(sec.text("axis")[0] - 'x'), c.geometric.get()));
      else if (type == "thickness")
        PetscCall(design::GeometricConstraint::thickness(m, walls, sec.real("station"),
                                                         c.geometric.get()));
      else
        PetscCall(design::GeometricConstraint::volume(m, walls, c.geometric.get()));
      c.name = c.geometric->name();
    } else {
      c.flow = std::make_unique<adjoint::Objective>();
      PetscCall(c.flow->setup(fc.residual(), cfg, sec));
      c.name = type;
    }
    if (!sec.text("name").empty()) c.name = sec.text("name");
    out->push_back(std::move(c));
  }
  PetscFunctionReturn(0);
}

design::DeformationOptions deformation_options(const config::CaseConfig &cfg) {
  const OptimizationOptions opt = optimization_options().get(cfg);
  design::DeformationOptions o;
  o.stiffness_exponent = opt.deformation_stiffness_exponent;
  o.poisson_ratio = opt.deformation_poisson_ratio;
  o.rtol = opt.deformation_rtol;
  o.solver = opt.deformation_solver == "direct"      ? design::DeformationSolver::Direct
             : opt.deformation_solver == "iterative" ? design::DeformationSolver::Iterative
                                                     : design::DeformationSolver::Auto;
  return o;
}

PetscErrorCode ShapeOptimization::setup(FlowCase &fc, Vec w0, FaultHook fault) {
  PetscFunctionBeginUser;
  const config::CaseConfig &cfg = fc.config();
  PetscCheck(!cfg.designs().empty(), fc.mesh().comm, PETSC_ERR_USER_INPUT,
             "%s: a shape optimization needs a 'design:' list (the shape parameterizations: ffd, "
             "hicks-henne, rigid, surface-normal, radial)",
             cfg.file().c_str());
  auto design = std::make_unique<design::DesignSpace>();
  PetscCall(design->setup(fc.mesh(), fc.residual().coordinates(), cfg));
  std::vector<ShapeConstraint> constraints;
  PetscCall(build_shape_constraints(fc, &constraints));
  PetscCall(setup(fc, std::move(design), std::move(constraints), deformation_options(cfg), w0,
                  std::move(fault)));
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::setup(FlowCase &fc, std::unique_ptr<design::DesignSpace> design,
                                        std::vector<ShapeConstraint> constraints,
                                        const design::DeformationOptions &deformation, Vec w0,
                                        FaultHook fault) {
  PetscFunctionBeginUser;
  fc_ = &fc;
  constraints_ = std::move(constraints);
  deformation_ = deformation;
  fault_ = fault;
  X_original_ = fc.residual().coordinates();
  if (!original_walls_gathered_ && fc.mesh().dim == 2) { // the first mesh: the original walls
    original_walls_gathered_ = true;
    driver::BoundaryCurves b;
    PetscCall(driver::gather_boundary(fc.mesh(), X_original_, X_original_, &b));
    const std::vector<int> walls = fc.residual().boundary_conditions().wall_patches();
    original_walls_.clear();
    for (const auto &seg : b.segments)
      if (std::find(walls.begin(), walls.end(), static_cast<int>(seg[0])) != walls.end())
        original_walls_.push_back({b.x[seg[1]], b.x[seg[2]]});
  }
  PetscCall(shape_.setup(fc, deformation, w0, std::move(fault), std::move(design)));
  shape_.set_history(warm_start_history(fc.config()));
  problem_ = OptimizationProblem();
  problem_.names = this->design().names();
  // the optimizer's variables x = a / scale
  scale_ = this->design().scale();
  problem_.lower = this->design().lower();
  problem_.upper = this->design().upper();
  problem_.start = this->design().initial();
  for (auto *v : {&problem_.lower, &problem_.upper, &problem_.start})
    for (std::size_t i = 0; i < v->size(); ++i) (*v)[i] /= scale_[i];
  for (std::size_t i = 0; i < parameter_variables_.size(); ++i) append_parameter_variable(i);
  flow_.clear();
  for (auto &c : constraints_) {
    double value = c.value;
    if (c.relative) {
      PetscCheck(c.geometric, fc.mesh().comm, PETSC_ERR_USER_INPUT,
                 "%s: constraint %s: 'relative' applies to geometric constraints only",
                 fc.config().file().c_str(), c.name.c_str());
      design::GeometricConstraintValue v0;
      PetscCall(c.geometric->evaluate(shape_.reference_coordinates(), false, &v0));
      PetscCheck(v0.ok, fc.mesh().comm, PETSC_ERR_USER_INPUT,
                 "%s: constraint %s is undefined on the reference shape: %s",
                 fc.config().file().c_str(), c.name.c_str(), v0.failure.c_str());
      value *= v0.value;
    }
    if (c.flow) flow_.push_back(c.flow.get());
    problem_.constraints.push_back({c.name, c.sense, value, c.tolerance});
  }
  PetscFunctionReturn(0);
}

void ShapeOptimization::append_parameter_variable(std::size_t i) {
  const ParameterVariable &v = parameter_variables_[i];
  problem_.names.push_back(v.name);
  problem_.lower.push_back(v.lower / v.scale);
  problem_.upper.push_back(v.upper / v.scale);
  problem_.start.push_back(v.start / v.scale);
  scale_.push_back(v.scale);
}

PetscErrorCode ShapeOptimization::add_parameter_variable(const std::string &name, double lower,
                                                         double upper, double scale) {
  PetscFunctionBeginUser;
  const discretization::FlowResidual &res = fc_->residual();
  const MPI_Comm comm = fc_->mesh().comm;
  const char *file = fc_->config().file().c_str();
  const discretization::ParameterRegistry registry(res);
  const int i = registry.find(name);
  PetscCheck(i >= 0 && !registry.spec(i).time_dependent, comm, PETSC_ERR_USER_INPUT,
             "%s: '%s' is not a constant parameter of the case (it has: %s)", file, name.c_str(),
             registry.names(false).c_str());
  ParameterVariable v{name, lower, upper, scale, registry.value(res, i, discretization::kSteady)};
  if (!(lower < upper && v.start >= lower && v.start <= upper && scale > 0)) {
    char values[160]; // (%g as printf writes it)
    std::snprintf(values, sizeof values,
                  "its value %g must lie within [lower, upper] = [%g, %g] "
                  "(lower < upper), its scale %g > 0",
                  v.start, lower, upper, scale);
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s: the design variable %s: %s", file, name.c_str(),
            values);
  }
  for (const auto &p : parameter_variables_)
    PetscCheck(p.name != name, comm, PETSC_ERR_USER_INPUT,
               "%s: the parameter %s is a design variable twice", file, name.c_str());
  // the far-field boundaries share one angle of attack (checked when the case is set up), but
  // the parameter of each turns only its own boundary: a design variable would separate them
  {
    const discretization::BoundaryConditions &bcs = res.boundary_conditions();
    std::string far_fields, mine;
    int count = 0;
    for (std::size_t q = 0; q < bcs.n_patches(); ++q) {
      if (!bcs.patch(static_cast<int>(q)).unit->angle_of_attack()) continue;
      const std::string &patch = bcs.patch(static_cast<int>(q)).name;
      far_fields += (count++ ? ", " : "") + patch;
      if (name == "boundaries." + patch + ".angle_of_attack") mine = patch;
    }
    PetscCheck(mine.empty() || count == 1, comm, PETSC_ERR_USER_INPUT,
               "%s: the design variable %s: the far-field boundaries %s share one angle of attack, "
               "and the variable would turn %s alone; make them one boundary (one physical group, "
               "as cases/naca0012-rans/optimize.geo does)",
               file, name.c_str(), far_fields.c_str(), mine.c_str());
  }
  parameter_variables_.push_back(v);
  append_parameter_variable(parameter_variables_.size() - 1);
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::set_parameters(const std::vector<double> &a) {
  PetscFunctionBeginUser;
  if (parameter_variables_.empty()) PetscFunctionReturn(0);
  const discretization::ParameterRegistry registry(fc_->residual());
  const std::size_t nd = design().size();
  for (std::size_t i = 0; i < parameter_variables_.size(); ++i)
    PetscCall(registry.set(fc_->residual(), parameter_variables_[i].name, a[nd + i]));
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::append_parameter_gradients(
    const std::vector<discretization::ParameterGradient> &parameters,
    std::vector<double> *g) const {
  PetscFunctionBeginUser;
  for (const auto &v : parameter_variables_) {
    auto it = std::find_if(parameters.begin(), parameters.end(),
                           [&](const auto &p) { return p.name == v.name; });
    PetscCheck(it != parameters.end(), fc_->mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: the design variable %s has no gradient: adjoint.parameters leaves it out",
               fc_->config().file().c_str(), v.name.c_str());
    g->push_back(it->gradient);
  }
  PetscFunctionReturn(0);
}

std::vector<double> ShapeOptimization::design_of(const std::vector<double> &x) const {
  std::vector<double> a = x;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] *= scale_[i];
  return a;
}

PetscErrorCode ShapeOptimization::remember(const std::vector<double> &x, Vec w) {
  PetscFunctionBeginUser;
  std::vector<double> a = design_of(x);
  a.resize(design().size());
  std::vector<Vec3<double>> dB;
  PetscCall(shape_.chain().displacement(a, &dB));
  PetscCall(shape_.remember(dB, w));
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::evaluate(const std::vector<double> &x, Evaluation *e) {
  PetscFunctionBeginUser;
  PetscCall(evaluate_design(design_of(x), e));
  if (!e->ok) PetscFunctionReturn(0);
  for (std::size_t i = 0; i < scale_.size(); ++i) { // d/dx = scale d/da
    e->df[i] *= scale_[i];
    for (auto &dc : e->dc) dc[i] *= scale_[i];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::evaluate_design(const std::vector<double> &a_all, Evaluation *e) {
  PetscFunctionBeginUser;
  *e = Evaluation();
  last_ = ShapeRecord();
  // the design space's variables, then the parameter variables (set in the flow case)
  const std::vector<double> a(a_all.begin(), a_all.begin() + design().size());
  PetscCall(set_parameters(a_all));
  // a wall that loops between its vertices is no body for any mesh (enable_remeshing); checked
  // on the mesh the design is evaluated on
  std::string fold;
  if (!remesh_dir_.empty()) PetscCall(wall_crossing(a, &fold));
  if (!fold.empty()) {
    e->ok = false;
    e->failure = last_.shape.failure = fold;
    PetscFunctionReturn(0);
  }
  std::vector<Vec3<double>> dB;
  PetscCall(shape_.chain().displacement(a, &dB));
  PetscCall(shape_.evaluate(dB, &last_.shape, flow_));
  // the design again on a new mesh around its own walls, or, if Gmsh cannot mesh around them,
  // around the walls of the last good design (and deformed from there).  (Around the last good
  // design first, as before: cases/shape-min-drag Re 1 level 1 remeshed at 15 of 47 evaluations,
  // and at 13 of them the design could not be reached from there either and was remeshed around
  // its own walls too: 28 remeshings, 32 % of the campaign's time with the deformations)
  std::string own; // why not around its own walls
  for (int stage = 0; stage < 2 && !remesh_dir_.empty(); ++stage) {
    if (last_.shape.ok || !last_.shape.deformation_failed) break;
    std::string why;
    RemeshRecord record;
    bool other_walls_may_do = false;
    PetscCall(remesh(stage == 0 ? &a : nullptr, a, &record, &why, &other_walls_may_do));
    if (!why.empty()) {
      if (stage == 0 && other_walls_may_do) {
        own = why;
        continue;
      }
      last_.shape.failure += stage == 0 ? "; not remeshed: " + why
                                        : "; not remeshed around its own walls: " + own +
                                              "; nor around the last good design's: " + why;
      break;
    }
    if (last_.first_failure.empty()) last_.first_failure = last_.shape.failure;
    record.own_walls_failure = own;
    last_.remeshed = true;
    last_.remeshes.push_back(record);
    PetscCall(wall_crossing(a, &fold));
    if (!fold.empty()) {
      last_.shape.failure = "on the remeshed mesh: " + fold;
      last_.shape.deformation_failed = false;
      break;
    }
    PetscCall(set_parameters(a_all)); // (the remeshed case)
    PetscCall(shape_.chain().displacement(a, &dB));
    PetscCall(shape_.evaluate(dB, &last_.shape, flow_));
  }
  const driver::DesignChain &chain = shape_.chain(); // (a remeshing replaced the chain's case)
  const ShapeEvaluation &s = last_.shape;
  if (!s.ok) {
    e->ok = false;
    e->failure = s.failure;
    PetscFunctionReturn(0);
  }
  a_good_ = a;
  good_since_remesh_ = true;
  e->f = s.J;
  PetscCall(chain.design_reverse(a, s.dJ_dB, &e->df));
  PetscCall(append_parameter_gradients(s.parameters, &e->df));
  double g2 = 0;
  for (double g : e->df) g2 += g * g;
  last_.gradient_norm = std::sqrt(g2);
  std::size_t k = 0;
  for (auto &c : constraints_) {
    std::vector<double> dc;
    if (c.flow) {
      e->c.push_back(s.extra[k]);
      PetscCall(chain.design_reverse(a, s.extra_dB[k], &dc));
      PetscCall(append_parameter_gradients(s.extra_parameters[k], &dc));
      ++k;
    } else {
      design::GeometricConstraintValue v;
      PetscCall(c.geometric->evaluate(shape_.coordinates(), true, &v));
      if (!v.ok) {
        e->ok = false;
        e->failure = c.name + ": " + v.failure;
        PetscFunctionReturn(0);
      }
      PetscCall(chain.reverse(a, v.dX, &dc));
      dc.resize(a_all.size(), 0.0); // (no dependence on the parameter variables)
      e->c.push_back(v.value);
    }
    e->dc.push_back(dc);
  }
  last_.constraints = e->c;
  PetscFunctionReturn(0);
}

namespace {

/// Writes the embedding as text (rank 0): "x y z x0 y0 z0" per boundary vertex, %.17g.
PetscErrorCode write_embedding(MPI_Comm comm, const driver::BoundaryEmbedding &e,
                               const std::string &path) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  if (rank == 0)
    error = io::write_file_atomically(path, [&](std::FILE *f) {
      for (std::size_t i = 0; i < e.at.size(); ++i)
        std::fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g\n", e.at[i][0], e.at[i][1], e.at[i][2],
                     e.original[i][0], e.original[i][1], e.original[i][2]);
    });
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

/// Reads an embedding written by write_embedding (rank 0 reads, every rank gets it).
PetscErrorCode read_embedding(MPI_Comm comm, const std::string &path,
                              driver::BoundaryEmbedding *e) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::vector<double> v;
  int ok = 1;
  if (rank == 0) {
    std::ifstream in(path);
    ok = in.good();
    for (double x; in >> x;) v.push_back(x);
    ok = ok && !v.empty() && v.size() % 6 == 0;
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  PetscCheck(ok, comm, PETSC_ERR_FILE_READ,
             "%s: not a remeshing's embedding (lines of 6 numbers: a boundary vertex and its "
             "original coordinates); the campaign cannot continue on that mesh",
             path.c_str());
  long n = static_cast<long>(v.size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, comm));
  v.resize(static_cast<std::size_t>(n));
  PetscCallMPI(MPI_Bcast(v.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm));
  *e = driver::BoundaryEmbedding();
  for (std::size_t i = 0; i + 6 <= v.size(); i += 6) {
    e->at.push_back(Vec3<double>(v[i], v[i + 1], v[i + 2]));
    e->original.push_back(Vec3<double>(v[i + 3], v[i + 4], v[i + 5]));
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode ShapeOptimization::load_remeshed(const std::string &msh,
                                                const driver::BoundaryEmbedding &embedding,
                                                const std::vector<double> &a_ref,
                                                const std::string &state_file) {
  PetscFunctionBeginUser;
  const config::CaseConfig &base = fc_->config();
  const MPI_Comm comm = fc_->mesh().comm;
  std::vector<std::string> overrides = {"mesh.file=" + std::filesystem::absolute(msh).string(),
                                        "mesh.refine=0"};
  auto cfg = std::make_unique<config::CaseConfig>();
  PetscCall(config::CaseConfig::load_text(comm, base.resolved_yaml(), base.file(), base.directory(),
                                          overrides, base.schema(), *cfg));
  auto fc = std::make_unique<FlowCase>();
  PetscCall(fc->load(comm, *cfg));
  std::vector<Vec3<double>> X0;
  PetscCall(driver::embedded_coordinates(fc->mesh(), fc->mesh().coordinates, embedding, &X0));
  auto design = std::make_unique<design::DesignSpace>();
  PetscCall(design->setup(fc->mesh(), X0, *cfg));
  PetscCall(design->set_reference_design(a_ref));
  std::vector<ShapeConstraint> constraints;
  PetscCall(build_shape_constraints(*fc, &constraints));
  for (std::size_t i = 0; i < constraints.size(); ++i) { // the original shape's values
    constraints[i].relative = false;
    constraints[i].value = problem_.constraints[i].value;
  }
  Vec w0 = nullptr;
  if (!state_file.empty()) { // (the case keeps its own initial state: the warm starts' reference)
    config::CaseConfig with_state;
    overrides.push_back("initial.file=" + std::filesystem::absolute(state_file).string());
    PetscCall(config::CaseConfig::load_text(comm, base.resolved_yaml(), base.file(),
                                            base.directory(), overrides, base.schema(),
                                            with_state));
    PetscCall(fc->create_state(&w0));
    PetscCall(driver::initial_state(fc->residual(), with_state, w0));
  }
  const OptimizationProblem problem = problem_;
  PetscCall(setup(*fc, std::move(design), std::move(constraints), deformation_, w0, fault_));
  problem_ = problem; // (the same variables, bounds and start)
  PetscCall(VecDestroy(&w0));
  X_original_ = X0;
  owned_fc_ = std::move(fc); // (the previous remeshed case goes, then its configuration)
  owned_cfg_ = std::move(cfg);
  good_since_remesh_ = false;
  PetscFunctionReturn(0);
}

driver::WallSampling ShapeOptimization::wall_sampling(const std::vector<double> &a) const {
  driver::WallSampling s;
  const design::DesignSpace &space = design();
  s.map = [&space, &a](const Vec3<double> &x0, int patch, const Vec3<double> &n, Vec3<double> *x) {
    return space.wall_position(a, x0, patch, n, x);
  };
  s.original_faces = original_walls_;
  s.check_folds = space.can_fold();
  s.kinks = [&space](int patch, Vec3<double> *center, std::vector<double> *angles) {
    return space.kinks(patch, center, angles);
  };
  return s;
}

PetscErrorCode ShapeOptimization::wall_crossing(const std::vector<double> &a,
                                                std::string *why) const {
  PetscFunctionBeginUser;
  why->clear();
  const mesh::Mesh &m = fc_->mesh();
  if (m.dim != 2 || !design().can_fold()) PetscFunctionReturn(0);
  for (const auto &b : design().blocks())
    if (b.kind == design::DesignKind::SurfaceNormal) PetscFunctionReturn(0);
  driver::BoundaryCurves b;
  PetscCall(driver::gather_boundary(m, shape_.reference_coordinates(), X_original_, &b));
  std::vector<char> text;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  if (rank == 0) {
    std::string failure;
    driver::resample_walls(b, fc_->residual().boundary_conditions().wall_patches(),
                           wall_sampling(a), &failure);
    text.assign(failure.begin(), failure.end());
  }
  int n = static_cast<int>(text.size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, 0, m.comm));
  text.resize(static_cast<std::size_t>(n));
  PetscCallMPI(MPI_Bcast(text.data(), n, MPI_CHAR, 0, m.comm));
  why->assign(text.begin(), text.end());
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::remesh(const std::vector<double> *target,
                                         const std::vector<double> &evaluated, RemeshRecord *record,
                                         std::string *failure, bool *other_walls_may_do) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
  const MPI_Comm comm = fc_->mesh().comm;
  failure->clear();
  *other_walls_may_do = false;
  for (const auto &b : design().blocks())
    if (b.kind == design::DesignKind::SurfaceNormal)
      *failure = "surface-normal designs are not remeshed";
  if (fc_->mesh().dim != 2) *failure = "remeshing is for 2D meshes";
  if (failure->empty() && !target && !good_since_remesh_) {
    *failure = "no good design since the last remeshing";
  }
  if (!failure->empty()) PetscFunctionReturn(0);
  // the target's mesh deformed from the reference shape (not valid: the mesh could not follow):
  // its boundary is the design's, its cells carry the reference cells' sizes to the moved walls
  // (RemeshOptions; the reference, not the last design evaluated: a restart takes the same path)
  std::vector<Vec3<double>> deformed;
  if (target) {
    design::DeformationResult back;
    PetscCall(shape_.move_to_reference(&back));
    std::vector<Vec3<double>> d;
    PetscCall(shape_.chain().displacement(*target, &d));
    design::DeformationResult dr;
    PetscCall(shape_.chain().deformation().deform(d, &deformed, &dr));
  } else {
    design::DeformationResult dr; // back to the last good design
    PetscCall(shape_.move_to_design(a_good_, &dr));
    if (!dr.valid) {
      *failure = "the last good design's mesh: " + dr.message;
      PetscFunctionReturn(0);
    }
  }
  *record = RemeshRecord();
  record->index = ++remesh_count_;
  record->stem = remesh_dir_ + "/remesh-" + std::to_string(record->index);
  record->design = target ? *target : a_good_;
  record->own_walls = target != nullptr;
  record->cells_before = fc_->mesh().n_global_cells;
  driver::RemeshResult r;
  driver::RemeshOptions o;
  o.boundary = target ? &deformed : nullptr;
  // the walls between the vertices: the design's own curve (a face the design stretched is not
  // a straight chord of it), the originals kept on the original walls
  const std::vector<double> a_map = target ? *target : a_good_;
  o.sampling = wall_sampling(a_map);
  if (design().can_fold()) o.evaluated = wall_sampling(evaluated);
  // a mesh made by a remeshing keeps its cell count (RemeshOptions::target_cells); the case's
  // own mesh gives its sizes as they are
  o.target_cells = owned_fc_ ? static_cast<long>(fc_->mesh().n_global_cells) : 0;
  o.initial_scale = size_scale_; // (1 until a remeshing)
  PetscCall(driver::remesh(fc_->residual(), fc_->residual().boundary_conditions().wall_patches(),
                           X_original_, o, record->stem, &r));
  if (!r.ok) {
    --remesh_count_;
    *failure = "remeshing: " + r.failure;
    *other_walls_may_do = true; // (Gmsh, or a fold, around these walls)
    PetscFunctionReturn(0);
  }
  PetscCall(write_embedding(comm, r.embedding, record->stem + ".embedding"));
  if (fault_) fault_({"remesh", record->index, 0.0}); // (the crash tests: meshed, not used yet)
  const std::string state = record->stem + "-state.h5";
  // (the remeshed case reads it as its initial.file: the same problem), its cells where the
  // deformation toward the design carries them (as a deformed mesh's warm start keeps them: the
  // wall's no-slip cells at the moved wall; shape-min-drag Re 1 level 1: the farthest new cell
  // centre 1.1-1.6 cell sizes from a source centre, 2.8-13 from the reference coordinates)
  PetscCall(io::write_state_h5(fc_->mesh(), fc_->residual().equations(),
                               target ? deformed : fc_->residual().coordinates(), state,
                               shape_.state(), {}, fc_->config().problem_attributes()));
  PetscCall(load_remeshed(r.msh, r.embedding, record->design, state));
  record->cells_after = fc_->mesh().n_global_cells;
  record->size_scale = r.size_scale, record->meshings = r.gmsh_runs;
  record->layer_dropped = r.layer_dropped;
  size_scale_ = next_size_scale(*record);
  record->time = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

double ShapeOptimization::next_size_scale(const RemeshRecord &r) {
  // the target of remeshing r: its mesh's count if that mesh was itself a remeshing (remesh():
  // owned_fc_), none for the first from the case's own mesh
  return driver::next_size_scale(r.size_scale, r.cells_after, r.index > 1 ? r.cells_before : 0);
}

PetscErrorCode ShapeOptimization::restore_remeshing(const RemeshRecord &r, bool with_state) {
  PetscFunctionBeginUser;
  driver::BoundaryEmbedding embedding;
  PetscCall(read_embedding(fc_->mesh().comm, r.stem + ".embedding", &embedding));
  PetscCall(
      load_remeshed(r.stem + ".msh", embedding, r.design, with_state ? r.stem + "-state.h5" : ""));
  remesh_count_ = r.index;
  size_scale_ = next_size_scale(r); // (as the uninterrupted campaign went on)
  PetscFunctionReturn(0);
}

namespace {

// The difference step of variable i: rel (upper - lower), or rel L where unbounded
double design_step(const OptimizationProblem &problem, std::size_t i, double rel, double L) {
  const double range = problem.upper[i] - problem.lower[i];
  return std::isfinite(range) && range > 0 ? rel * range : rel * L;
}

// The fourth-order central difference of the functions (objective, constraints) along variable i
// at step h
PetscErrorCode fourth_order_difference(const DesignValues &values, const std::vector<double> &a,
                                       std::size_t i, double h, std::vector<double> *fd) {
  PetscFunctionBeginUser;
  std::vector<double> F[4];
  const double s[4] = {h, -h, 2 * h, -2 * h};
  for (int q = 0; q < 4; ++q) {
    std::vector<double> x = a;
    x[i] += s[q];
    PetscCall(values(x, &F[q]));
  }
  fd->assign(F[0].size(), 0.0);
  for (std::size_t j = 0; j < F[0].size(); ++j)
    (*fd)[j] = (8 * (F[0][j] - F[1][j]) - (F[2][j] - F[3][j])) / (12 * h);
  PetscFunctionReturn(0);
}

// Fourth-order central differences of the nf functions (objective, constraints) along the
// variables: max_variables shared out among the design entries
PetscErrorCode difference_variables(const OptimizationProblem &problem,
                                    const std::vector<VariableBlock> &blocks,
                                    const std::vector<double> &a, const DesignValues &values,
                                    double L, std::size_t max_variables, double rel,
                                    DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  using Check = DesignGradientCheck;
  const std::size_t nf = check->values.size(), nb = blocks.size();
  for (std::size_t b = 0; b < nb; ++b) {
    const std::size_t size = blocks[b].count;
    const std::size_t quota =
        std::max<std::size_t>(1, max_variables / nb + (b < max_variables % nb));
    const std::size_t count = std::min(size, quota);
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t i =
          blocks[b].offset +
          (count == size ? k : (k * (size - 1)) / std::max<std::size_t>(count - 1, 1));
      Check::Variable v;
      v.name = problem.names[i];
      v.block = blocks[b].name;
      v.index = i;
      v.step = design_step(problem, i, rel, L);
      for (std::size_t j = 0; j < nf; ++j) v.adjoint.push_back(check->gradient[j][i]);
      PetscCall(fourth_order_difference(values, a, i, v.step, &v.fd));
      check->variables.push_back(v);
    }
  }
  PetscFunctionReturn(0);
}

// The differenced variables' relative differences and verdicts: relative to the function's
// largest checked entry in the entry, or 1e-4 of its largest one overall when it barely depends
// on the entry (the re-solves converge to an absolute 1e-13, so a small entry's difference
// quotient carries an absolute error of that size / h)
void score_variables(const std::vector<VariableBlock> &blocks, DesignGradientCheck *check) {
  using Check = DesignGradientCheck;
  const std::size_t nf = check->values.size(), nb = blocks.size();
  std::vector<double> overall(nf, 0.0);
  std::vector<std::vector<double>> in_block(nb, std::vector<double>(nf, 0.0));
  std::map<std::string, std::size_t> block_index;
  for (std::size_t b = 0; b < nb; ++b) block_index[blocks[b].name] = b;
  for (const auto &v : check->variables)
    for (std::size_t j = 0; j < nf; ++j) {
      overall[j] = std::max(overall[j], std::abs(v.adjoint[j]));
      double &bs = in_block[block_index[v.block]][j];
      bs = std::max(bs, std::abs(v.adjoint[j]));
    }
  check->failures = 0;
  for (auto &v : check->variables) {
    v.relative_difference.clear();
    v.ok.clear();
    for (std::size_t j = 0; j < nf; ++j) {
      const double scale = std::max(in_block[block_index[v.block]][j], 1e-4 * overall[j]);
      const double diff = std::abs(v.adjoint[j] - v.fd[j]);
      const double r = diff == 0 ? 0.0 : diff / std::max(scale, 1e-300);
      v.relative_difference.push_back(r);
      v.ok.push_back(r <= Check::kFdTolerance);
      check->failures += r <= Check::kFdTolerance ? 0 : 1;
    }
  }
}

// A difference that fails at its step h may have its stencil [a - 2h, a + 2h] across a kink of
// the discrete problem rather than show an error of the gradient: a branch of the turbulence
// model in some cell, a far-field face that turns from inflow to outflow.  Such a variable is
// differenced again at h/10 and h/100, and the step whose largest relative difference is the
// smallest kept (the report gives it).  The RANS NACA 0012 (cases/naca0012-rans/optimize.yaml,
// level 0): the angle of attack's drag derivative 3.181198555e-4 against 3.181205092e-4 at the
// step 0.005 degrees (2.1e-6), 3.1811986e-4 at 4.5e-5 degrees (karman verify of the parameter)
PetscErrorCode refine_failed_differences(const std::vector<VariableBlock> &blocks,
                                         const std::vector<double> &a, const DesignValues &values,
                                         DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  if (check->failures == 0) PetscFunctionReturn(0);
  const auto worst = [](const DesignGradientCheck::Variable &v) {
    return *std::max_element(v.relative_difference.begin(), v.relative_difference.end());
  };
  for (auto &v : check->variables) {
    if (std::all_of(v.ok.begin(), v.ok.end(), [](char ok) { return ok; })) continue;
    const double h = v.step;
    for (double f : {0.1, 0.01}) {
      DesignGradientCheck::Variable w = v;
      w.step = f * h;
      PetscCall(fourth_order_difference(values, a, v.index, w.step, &w.fd));
      DesignGradientCheck trial = *check;
      trial.variables = {v, w};
      score_variables(blocks, &trial);
      if (worst(trial.variables[1]) < worst(trial.variables[0])) v.fd = w.fd, v.step = w.step;
    }
  }
  score_variables(blocks, check);
  PetscFunctionReturn(0);
}

// One Taylor test of the nf functions along p (the entry `name`, or all)
PetscErrorCode taylor_test(const std::string &name, const std::vector<double> &p,
                           const std::vector<double> &a, const DesignValues &values,
                           double taylor_scale, DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  using Check = DesignGradientCheck;
  const std::size_t n = a.size(), nf = check->values.size();
  Check::Taylor t;
  t.block = name;
  t.eps = {4e-3 * taylor_scale, 2e-3 * taylor_scale, 1e-3 * taylor_scale};
  t.derivative.assign(nf, 0.0);
  for (std::size_t j = 0; j < nf; ++j)
    for (std::size_t i = 0; i < n; ++i) t.derivative[j] += check->gradient[j][i] * p[i];
  t.remainder.assign(nf, {});
  const auto remainders = [&](double eps) -> PetscErrorCode {
    PetscFunctionBeginUser;
    std::vector<double> x = a, F;
    for (std::size_t i = 0; i < n; ++i) x[i] += eps * p[i];
    PetscCall(values(x, &F));
    for (std::size_t j = 0; j < nf; ++j)
      t.remainder[j].push_back(std::abs(F[j] - check->values[j] - eps * t.derivative[j]));
    PetscFunctionReturn(0);
  };
  for (double eps : t.eps) PetscCall(remainders(eps));
  // the verdict of each function: remainders at round-off (linear), or the last two rates at
  // least kMinRate.  Where one fails the steps are halved, at most twice, so that a test still
  // in its pre-asymptotic range gets there (cases/naca0012-rans/optimize.yaml, level 0: the
  // bumps' lift at rates 1.86, 1.92)
  const auto judge = [&]() {
    t.rate.assign(nf, {});
    t.linear.assign(nf, false);
    t.ok.assign(nf, false);
    bool all = true;
    for (std::size_t j = 0; j < nf; ++j) {
      bool linear = true;
      for (std::size_t k = 0; k < t.eps.size(); ++k) {
        const double floor =
            1e-12 * std::max(std::abs(check->values[j]), std::abs(t.eps[k] * t.derivative[j]));
        linear = linear && t.remainder[j][k] <= floor;
        if (k > 0)
          t.rate[j].push_back(std::log(t.remainder[j][k - 1] / t.remainder[j][k]) /
                              std::log(t.eps[k - 1] / t.eps[k]));
      }
      const std::size_t m = t.rate[j].size();
      // false for NaN (0/0)
      const bool ok = t.rate[j][m - 1] >= Check::kMinRate && t.rate[j][m - 2] >= Check::kMinRate;
      t.linear[j] = linear;
      t.ok[j] = linear || ok;
      all = all && t.ok[j];
    }
    return all;
  };
  for (int more = 0; !judge() && more < 2; ++more) {
    t.eps.push_back(t.eps.back() / 2);
    PetscCall(remainders(t.eps.back()));
  }
  for (std::size_t j = 0; j < nf; ++j) check->failures += t.ok[j] ? 0 : 1;
  check->taylor.push_back(t);
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode check_design_gradient(const OptimizationProblem &problem,
                                     const std::vector<VariableBlock> &blocks,
                                     const std::vector<double> &a, const Evaluation &e0,
                                     const DesignValues &values, double L,
                                     std::size_t max_variables, double rel,
                                     DesignGradientCheck *check, double taylor_scale) {
  PetscFunctionBeginUser;
  *check = DesignGradientCheck();
  const std::size_t n = a.size();
  check->functions.push_back("objective");
  for (const auto &c : problem.constraints) check->functions.push_back(c.name);
  check->values.push_back(e0.f);
  check->values.insert(check->values.end(), e0.c.begin(), e0.c.end());
  check->gradient.push_back(e0.df);
  check->gradient.insert(check->gradient.end(), e0.dc.begin(), e0.dc.end());
  PetscCall(difference_variables(problem, blocks, a, values, L, max_variables, rel, check));
  score_variables(blocks, check);
  PetscCall(refine_failed_differences(blocks, a, values, check));
  // Taylor tests along p (uniform in +-h_i / rel on the variables of one entry, or all)
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    std::mt19937 gen(12345 + static_cast<unsigned>(b) + 1);
    std::vector<double> p(n, 0.0);
    for (std::size_t i = blocks[b].offset; i < blocks[b].offset + blocks[b].count; ++i)
      p[i] = uni(gen) * design_step(problem, i, rel, L) / rel;
    PetscCall(taylor_test(blocks[b].name, p, a, values, taylor_scale, check));
  }
  {
    std::mt19937 gen(12345);
    std::vector<double> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = uni(gen) * design_step(problem, i, rel, L) / rel;
    PetscCall(taylor_test("all", p, a, values, taylor_scale, check));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode check_evaluator_gradient(MPI_Comm comm, const std::string &file,
                                        const Evaluator &evaluate,
                                        const OptimizationProblem &problem,
                                        const std::vector<VariableBlock> &blocks,
                                        const std::vector<double> &x, double default_step,
                                        std::size_t max_variables, double rel,
                                        DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  Evaluation e0;
  PetscCall(evaluate(x, &e0));
  PetscCheck(e0.ok, comm, PETSC_ERR_NOT_CONVERGED, "%s: verify: the design cannot be evaluated: %s",
             file.c_str(), e0.failure.c_str());
  // F(x): objective then constraints
  const DesignValues values = [&](const std::vector<double> &y,
                                  std::vector<double> *F) -> PetscErrorCode {
    PetscFunctionBeginUser;
    Evaluation e;
    PetscCall(evaluate(y, &e));
    PetscCheck(e.ok, comm, PETSC_ERR_NOT_CONVERGED,
               "%s: verify: a perturbed design cannot be evaluated (%s); use smaller steps",
               file.c_str(), e.failure.c_str());
    F->assign(1, e.f);
    F->insert(F->end(), e.c.begin(), e.c.end());
    PetscFunctionReturn(0);
  };
  PetscCall(check_design_gradient(problem, blocks, x, e0, values, default_step, max_variables, rel,
                                  check));
  // back to x (the warm start and the mesh of the caller's design)
  Evaluation e;
  PetscCall(evaluate(x, &e));
  PetscFunctionReturn(0);
}

PetscErrorCode ShapeOptimization::check_gradient(const std::vector<double> &a,
                                                 std::size_t max_variables, double rel,
                                                 DesignGradientCheck *check) {
  PetscFunctionBeginUser;
  std::vector<VariableBlock> blocks;
  for (const auto &b : design().blocks()) blocks.push_back({b.name, b.offset, b.count});
  for (std::size_t i = 0; i < parameter_variables_.size(); ++i)
    blocks.push_back({parameter_variables_[i].name, design().size() + i, 1});
  PetscCall(check_evaluator_gradient(fc_->mesh().comm, fc_->config().file(), evaluator(), problem_,
                                     blocks, a, fc_->residual().reference().length, max_variables,
                                     rel, check));
  PetscFunctionReturn(0);
}

} // namespace karman::optimization
