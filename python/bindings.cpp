// The Python extension karman._karman (pybind11): the library behind `import karman`, a client
// of the driver layer like the command line (ARCHITECTURE.md).  No numerics here: a case is a
// config::CaseConfig, a simulation a driver::FlowCase with its state; solves, monitors,
// parameters and gradients are the library's (driver/flow_case.hpp, adjoint/parameters.hpp,
// adjoint/adjoint_solver.hpp, adjoint/unsteady_adjoint.hpp).
//
// Errors: every PETSc error code becomes a karman.Error carrying the one-line message the
// command line prints (core/error.hpp); an exception raised by a Python callback (progress)
// stops the solve through a PETSc error and is re-raised as it was.  PETSc is initialized once
// (initialize(), from karman/__init__.py; MPI by PETSc or by mpi4py before it) and finalized at
// exit after the PETSc objects of the live simulations are freed.
#include "karman/discretization/parameters.hpp"
#include "karman/adjoint/surface_sensitivity.hpp"
#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/core/error.hpp"
#include "karman/core/parallel.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/driver/design_chain.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/driver/flow_output.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "karman/solver/linear_solver.hpp"

#include <petsclog.h>
#include <petscsnes.h>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace karman;

namespace {

/// A failure of the library (message: the command line's one line).
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An exception of a Python callback, waiting to be re-raised after the library returned.
std::unique_ptr<py::error_already_set> g_pending;

void check(PetscErrorCode ierr) {
  if (!ierr) return;
  std::string message = last_error_message();
  clear_error();
  if (g_pending) {
    auto e = std::move(g_pending);
    throw py::error_already_set(std::move(*e));
  }
  if (message.empty()) message = "PETSc error code " + std::to_string(ierr);
  throw Failure(message);
}

MPI_Comm world();
int rank();

/// Calls a Python callback inside a library observer (on every rank: the observers are called
/// collectively): its exception becomes a PETSc error (which stops the solve) and is kept for
/// check().  Collective: when the callback raises on some ranks only, the others stop too, with
/// a karman.Error naming the rank, so that no rank is left waiting in the solve.
template <typename F> PetscErrorCode call_python(F &&f) {
  PetscFunctionBeginUser;
  int failed = 0;
  try {
    f();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  } catch (py::error_already_set &e) {
    g_pending = std::make_unique<py::error_already_set>(std::move(e));
    failed = 1;
  }
  int first = failed ? rank() : INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, world()));
  if (failed) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER, "interrupted by a Python exception");
  PetscCheck(first == INT_MAX, PETSC_COMM_SELF, PETSC_ERR_USER,
             "interrupted: the Python callback raised an exception on rank %d", first);
  PetscFunctionReturn(0);
}

MPI_Comm world() {
  return PETSC_COMM_WORLD;
}

int rank() {
  int r = 0;
  MPI_Comm_rank(world(), &r);
  return r;
}

/// A YAML node as Python objects (maps -> dict, sequences -> list, scalars -> bool, int,
/// float, None or str).
py::object to_python(const YAML::Node &n) {
  if (n.IsMap()) {
    py::dict d;
    for (const auto &kv : n) d[py::str(kv.first.as<std::string>())] = to_python(kv.second);
    return d;
  }
  if (n.IsSequence()) {
    py::list l;
    for (const auto &v : n) l.append(to_python(v));
    return l;
  }
  if (!n.IsScalar()) return py::none();
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return py::str(s); // quoted
  if (s == "true" || s == "True") return py::bool_(true);
  if (s == "false" || s == "False") return py::bool_(false);
  if (s == "~" || s == "null") return py::none();
  char *end = nullptr;
  const long i = std::strtol(s.c_str(), &end, 10);
  if (!s.empty() && *end == '\0') return py::int_(i);
  const double x = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0') return py::float_(x);
  return py::str(s);
}

// ------------------------------------------------------------------------------------ Case

/// A loaded, validated case file (with overrides) and its resolved configuration.
struct Case {
  std::string path;
  std::vector<std::string> overrides;
  std::shared_ptr<config::CaseConfig> cfg = std::make_shared<config::CaseConfig>();

  static std::shared_ptr<Case> load(const std::string &path,
                                    const std::vector<std::string> &overrides) {
    auto c = std::make_shared<Case>();
    c->path = path, c->overrides = overrides;
    check(config::CaseConfig::load(world(), path, overrides, optimization::case_schema(), *c->cfg));
    check(c->cfg->apply_petsc_options());
    return c;
  }
  /// The same case with its objective section replaced by `objective` (YAML text of a map).
  std::shared_ptr<config::CaseConfig> with_objective(const std::string &objective) const {
    YAML::Node root = YAML::Load(cfg->resolved_yaml()), obj;
    try {
      obj = YAML::Load(objective);
    } catch (const YAML::Exception &e) {
      throw Failure(cfg->file() + ": objective is not valid YAML: " + e.msg);
    }
    root["objective"] = obj;
    YAML::Emitter out;
    out << root;
    auto c = std::make_shared<config::CaseConfig>();
    check(config::CaseConfig::load_text(world(), out.c_str(), cfg->file(), cfg->directory(), {},
                                        cfg->schema(), *c));
    return c;
  }
  py::object resolved() const { return to_python(YAML::Load(cfg->resolved_yaml())); }
  bool unsteady() const { return solver::time_options().get(*cfg).unsteady(); }
  long steps() const {
    const solver::TimeOptions t = solver::time_options().get(*cfg);
    return std::lround(std::ceil(t.t_end / t.dt - 1e-9));
  }
};

// ------------------------------------------------------------------------------ Simulation

class Simulation;
std::set<Simulation *> g_live; ///< freed before PetscFinalize
long g_simulations = 0;        ///< created so far (collectively: the same on every rank)

/// The PETSc objects of a simulation.  Destroying them is collective (MUMPS, hypre and PETSc
/// free communicators and distributed data), but Python frees objects when its garbage
/// collector decides, which is not at the same moment on every rank: a simulation freed by
/// Python is kept here until every rank has freed it (collect_garbage), as petsc4py does.
struct Remains {
  std::unique_ptr<driver::FlowCase> fc;
  std::unique_ptr<driver::DesignChain> design;
  Vec w = nullptr;
  std::string own_dir; ///< a temporary folder of rank 0 to remove

  /// Frees everything.  Collective (for the same simulation on every rank).
  void destroy() {
    PetscBool finalized = PETSC_TRUE;
    PetscFinalized(&finalized);
    if (finalized) { // PETSc is gone: nothing left to free
      (void)fc.release();
      (void)design.release();
    } else {
      if (w) VecDestroy(&w);
      design.reset();
      fc.reset();
    }
    w = nullptr;
    if (!own_dir.empty()) {
      std::error_code ec;
      fs::remove_all(own_dir, ec);
    }
    own_dir.clear();
  }
};
std::map<long, Remains> g_garbage; ///< by the simulation's number, freed by Python on this rank

/// Destroys the simulations that Python has freed on every rank, in the order of their
/// numbers.  Collective: called at the start of the collective calls.
void collect_garbage() {
  PetscBool finalized = PETSC_TRUE;
  PetscFinalized(&finalized);
  if (finalized) return;
  int size = 1;
  MPI_Comm_size(world(), &size);
  std::vector<long> mine;
  for (const auto &entry : g_garbage) mine.push_back(entry.first);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, world());
  if (*std::min_element(counts.begin(), counts.end()) == 0) return;
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<long> all(displs.back() + counts.back());
  MPI_Allgatherv(mine.data(), n, MPI_LONG, all.data(), counts.data(), displs.data(), MPI_LONG,
                 world());
  std::map<long, int> freed; // by how many ranks
  for (long id : all) ++freed[id];
  for (const auto &[id, ranks] : freed)
    if (ranks == size) {
      g_garbage[id].destroy();
      g_garbage.erase(id);
    }
}

py::array_t<double> array2(const std::vector<double> &v, std::size_t cols) {
  const std::size_t rows = cols ? v.size() / cols : 0;
  py::array_t<double> a({rows, cols});
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::array_t<double> array1(const std::vector<double> &v) {
  py::array_t<double> a(v.size());
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::dict monitor_dict(const solver::FlowMonitors::Values &v, int nv) {
  py::dict d;
  d["cd"] = v.cd, d["cl"] = v.cl, d["cd_pressure"] = v.cd_pressure;
  d["cd_viscous"] = v.cd_viscous, d["cm"] = v.cm;
  if (v.has_dp) d["delta_p"] = v.dp;
  d["probes"] = array2(v.probes, nv);
  return d;
}

class Simulation {
public:
  Simulation(std::shared_ptr<Case> c, const std::string &work_dir)
      : case_(std::move(c)), id_(++g_simulations) {
    collect_garbage();
    fc_ = std::make_unique<driver::FlowCase>();
    check(fc_->load(world(), *case_->cfg));
    check(fc_->create_state(&w_));
    check(fc_->initial_state(w_));
    std::string dir = work_dir;
    if (dir.empty()) {
      if (rank() == 0) {
        std::string t = (fs::temp_directory_path() / "karman-XXXXXX").string();
        dir = mkdtemp(t.data()) ? t : "";
        own_dir_ = true;
      }
      check(broadcast_string(world(), &dir));
      if (dir.empty()) throw Failure("cannot create a temporary folder for the trajectory");
    }
    work_dir_ = dir;
    if (!case_->cfg->designs().empty()) setup_design();
    g_live.insert(this); // (last: a constructor that throws leaves no dangling entry)
  }
  /// Freed by Python (not necessarily at the same moment on every rank): the PETSc objects wait
  /// in g_garbage for collect_garbage.
  ~Simulation() {
    PetscBool finalized = PETSC_TRUE;
    PetscFinalized(&finalized);
    if (finalized)
      take().destroy();
    else
      g_garbage[id_] = take();
    g_live.erase(this);
  }
  /// Frees the PETSc objects now (close(), or before PetscFinalize).  Collective.
  void release() { take().destroy(); }
  /// The simulation's number (the order of creation, the same on every rank).
  long id() const { return id_; }

  std::shared_ptr<Case> case_object() const { return case_; }

  // ------------------------------------------------------------------ solve

  py::dict solve(const py::object &progress, bool warm_start) {
    alive();
    collect_garbage();
    solved_ = false;
    history_ = {};
    const int nv = fc_->residual().nv();
    if (!case_->unsteady()) {
      if (!warm_start || !has_solution_) check(fc_->initial_state(w_));
      has_solution_ = false;
      Vec best;
      check(VecDuplicate(w_, &best));
      driver::SteadySolution sol;
      const driver::SteadyObserver observer =
          [&](const solver::NewtonRecord &r,
              const solver::FlowMonitors::Values &v) -> PetscErrorCode {
        PetscFunctionBeginUser;
        if (progress.is_none()) PetscFunctionReturn(0);
        PetscCall(call_python([&] {
          py::dict d = monitor_dict(v, nv);
          d["iteration"] = r.iteration, d["residual"] = r.residual, d["cfl"] = r.cfl;
          progress(d);
        }));
        PetscFunctionReturn(0);
      };
      const PetscErrorCode ierr = fc_->solve_steady(w_, best, observer, &sol);
      VecDestroy(&best);
      check(ierr);
      values_ = sol.values;
      if (!sol.summary.converged) {
        std::string h;
        for (const auto &r : sol.summary.history) {
          char b[32];
          std::snprintf(b, sizeof b, "%s%.3g", h.empty() ? "" : ", ", r.residual);
          h += b;
        }
        throw Failure(case_->cfg->file() + ": the steady solve did not converge (" +
                      sol.summary.reason + ") after " + std::to_string(sol.summary.iterations) +
                      " Newton iterations; residual history: " + h);
      }
      has_solution_ = solved_ = true;
      level_ = discretization::kSteady;
      py::dict d;
      d["converged"] = true, d["iterations"] = sol.summary.iterations;
      d["residual"] = sol.summary.final_residual, d["wall_time"] = sol.summary.wall_time;
      return d;
    }
    // unsteady: BDF steps from the initial state to t_end
    has_solution_ = false;
    solver::UnsteadySolver ts;
    {
      discretization::LocalState s;
      solver::FlowMonitors::Values v;
      check(fc_->start_unsteady(ts, &s, &v));
      record(0, 0.0, v);
    }
    const long total = case_->steps();
    const driver::StepObserver observer =
        [&](solver::UnsteadySolver &, const solver::StepReport &r,
            const discretization::LocalState &,
            const solver::FlowMonitors::Values &v) -> PetscErrorCode {
      PetscFunctionBeginUser;
      record(r.step, r.time, v);
      if (progress.is_none()) PetscFunctionReturn(0);
      PetscCall(call_python([&] {
        py::dict d = monitor_dict(v, nv);
        d["step"] = r.step, d["steps"] = total, d["time"] = r.time;
        d["newton_iterations"] = r.newton_iterations, d["wall_time"] = r.wall_time;
        progress(d);
      }));
      PetscFunctionReturn(0);
    };
    driver::UnsteadySolution sol;
    check(fc_->advance_to(ts, solver::time_options().get(*case_->cfg).t_end, observer, &sol));
    check(VecCopy(ts.state(), w_));
    level_ = ts.level();
    discretization::LocalState s;
    check(fc_->evaluate(level_, w_, &s, &values_));
    if (!sol.converged)
      throw Failure(case_->cfg->file() + ": time step " + std::to_string(sol.failed.step) +
                    " (t = " + std::to_string(sol.failed.time) + ") did not converge (" +
                    sol.failed.reason + "); try a smaller time.dt");
    has_solution_ = solved_ = true;
    py::dict d;
    d["converged"] = true, d["steps"] = sol.steps, d["wall_time"] = sol.wall_time;
    d["newton_iterations"] = sol.newton_iterations;
    return d;
  }

  // --------------------------------------------------------------- monitors, fields, output

  py::dict forces() const {
    need_solution("forces()");
    py::dict d = monitor_dict(values_, fc_->residual().nv());
    d["time"] = level_.t;
    return d;
  }

  py::dict history() const {
    need_solution("history()");
    const int nv = fc_->residual().nv();
    py::dict d;
    d["step"] = array1(history_.step), d["time"] = array1(history_.time);
    d["cd"] = array1(history_.cd), d["cl"] = array1(history_.cl);
    d["delta_p"] = array1(history_.dp);
    const std::size_t n = history_.step.size(), np = fc_->monitors().n_probes();
    py::array_t<double> pr({n, np, static_cast<std::size_t>(nv)});
    std::copy(history_.probes.begin(), history_.probes.end(), pr.mutable_data());
    d["probes"] = pr;
    return d;
  }

  /// Cell centres and the fields of the state (pressure as "p", velocity as "u", any other field
  /// under its own name): gathered on rank 0 in serial cell order (None on the other ranks), or
  /// this rank's owned cells.
  py::object fields(bool gather) const {
    need_solution("fields()");
    const mesh::Mesh &m = fc_->mesh();
    const physics::EquationSet &eq = fc_->residual().equations();
    const int nv = eq.nv(), dim = m.dim;
    const auto &g = fc_->residual().geometry();
    std::vector<double> x;
    std::vector<std::vector<double>> f(eq.n_fields());
    std::vector<PetscInt> gid(m.cell_gid.begin(), m.cell_gid.begin() + m.n_owned_cells);
    const PetscScalar *a;
    check(VecGetArrayRead(w_, &a));
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      for (int d = 0; d < dim; ++d) x.push_back(g.cell_centroid[c][d]);
      for (std::size_t i = 0; i < eq.n_fields(); ++i)
        for (int k = 0; k < eq.field(i).components; ++k)
          f[i].push_back(a[c * nv + eq.offset(i) + k]);
    }
    check(VecRestoreArrayRead(w_, &a));
    if (gather) {
      std::vector<PetscInt> all_gid;
      check(gather_to_root(world(), gid, MPIU_INT, &all_gid));
      // serial order: item i of the gathered arrays is cell all_gid[i]
      auto to_serial = [&](const std::vector<double> &mine, int ncomp) {
        std::vector<double> all, out;
        check(gather_to_root(world(), mine, MPI_DOUBLE, &all));
        out.resize(all.size());
        for (std::size_t i = 0; i < all_gid.size(); ++i)
          for (int k = 0; k < ncomp; ++k) out[all_gid[i] * ncomp + k] = all[i * ncomp + k];
        return out;
      };
      x = to_serial(x, dim);
      for (std::size_t i = 0; i < eq.n_fields(); ++i)
        f[i] = to_serial(f[i], eq.field(i).components);
      if (rank() != 0) return py::none();
      gid.resize(all_gid.size());
      std::iota(gid.begin(), gid.end(), 0);
    }
    py::dict d;
    d["centers"] = array2(x, dim);
    for (std::size_t i = 0; i < eq.n_fields(); ++i) {
      const physics::FieldSpec &fs = eq.field(i);
      const std::string key = fs.name == "pressure" ? "p" : fs.name == "velocity" ? "u" : fs.name;
      if (fs.components == 1)
        d[key.c_str()] = array1(f[i]);
      else
        d[key.c_str()] = array2(f[i], fs.components);
    }
    d["cell_ids"] = py::array_t<long>(gid.size(), std::vector<long>(gid.begin(), gid.end()).data());
    return d;
  }

  /// This rank's vertex coordinates (owned and copies), the order of gradient()["X"].
  py::dict vertices() const {
    alive();
    const mesh::Mesh &m = fc_->mesh();
    std::vector<double> x;
    for (const auto &v : fc_->residual().coordinates())
      for (int d = 0; d < m.dim; ++d) x.push_back(v[d]);
    py::dict d;
    d["X"] = array2(x, m.dim);
    d["vertex_ids"] = py::array_t<long>(
        m.vertex_gid.size(), std::vector<long>(m.vertex_gid.begin(), m.vertex_gid.end()).data());
    std::vector<long> owned(m.vertex_owned.begin(), m.vertex_owned.end());
    d["owned"] = py::array_t<long>(owned.size(), owned.data()).attr("astype")("bool");
    return d;
  }

  /// DIR/NAME.pvd (+ walls) and DIR/NAME.h5 of the current state.
  void write(const std::string &directory, const std::string &name) const {
    need_solution("write()");
    std::string error;
    if (rank() == 0) {
      std::error_code ec;
      fs::create_directories(directory, ec);
      if (ec) error = "cannot create output folder '" + directory + "': " + ec.message();
    }
    check(broadcast_string(world(), &error));
    if (!error.empty()) throw Failure(error);
    check(driver::write_flow_state(fc_->residual(), fc_->monitors(), *case_->cfg, directory, name,
                                   w_, level_));
  }

  // ------------------------------------------------------------------ parameters

  py::dict parameters() {
    alive();
    discretization::FlowResidual &res = fc_->residual();
    const discretization::ParameterRegistry reg(res);
    py::dict d;
    for (std::size_t i = 0; i < reg.size(); ++i) {
      const auto &s = reg.spec(i);
      if (s.time_dependent) {
        std::vector<double> v;
        check(fc_->parameter_steps(s.name, case_->steps(), &v));
        d[py::str(s.name)] = array1(v);
      } else {
        d[py::str(s.name)] = reg.value(res, i, discretization::kSteady);
      }
    }
    if (chain_)
      for (const auto &b : chain_->design().blocks())
        d[py::str("design." + b.name)] = array1(std::vector<double>(
            design_x_.begin() + b.offset, design_x_.begin() + b.offset + b.count));
    return d;
  }

  /// The design variables of the case's design: list: names, bounds, the entries.
  py::dict design() const {
    alive();
    if (!chain_) throw Failure(case_->cfg->file() + ": the case has no design: list");
    py::dict d, blocks;
    d["names"] = chain_->design().names();
    d["lower"] = array1(chain_->design().lower()), d["upper"] = array1(chain_->design().upper());
    d["values"] = array1(design_x_);
    for (const auto &b : chain_->design().blocks())
      blocks[py::str("design." + b.name)] = py::make_tuple(b.offset, b.count);
    d["entries"] = blocks;
    return d;
  }

  void set_parameters(const py::dict &values) {
    alive();
    discretization::FlowResidual &res = fc_->residual();
    // check everything first: a bad entry changes nothing
    const discretization::ParameterRegistry reg(res);
    std::vector<std::pair<std::string, double>> scalars;
    std::vector<std::pair<std::string, std::vector<double>>> series;
    std::vector<double> x = design_x_;
    bool new_design = false;
    for (const auto &[k, v] : values) {
      const std::string name = py::str(k);
      if (const design::DesignBlock *b = design_block(name)) {
        set_design_entry(*b, v, &x);
        new_design = true;
        continue;
      }
      if (reg.find(name) < 0) {
        std::string known = reg.names(true);
        if (chain_)
          for (const auto &b : chain_->design().blocks()) known += ", design." + b.name;
        throw py::key_error("unknown parameter '" + name + "' (the case has: " + known + ")");
      }
      if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v) ||
          (py::hasattr(v, "ndim") && v.attr("ndim").cast<int>() == 0)) {
        scalars.emplace_back(name, v.cast<double>());
        continue;
      }
      const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(v);
      if (!a || a.ndim() != 1)
        throw py::type_error("parameter '" + name +
                             "': expected a number or a 1-D array of one value per time step");
      if (!case_->unsteady())
        throw py::value_error("parameter '" + name +
                              "': values per time step need an unsteady case (time.mode: "
                              "unsteady)");
      if (a.size() != case_->steps())
        throw py::value_error("parameter '" + name + "': expected " +
                              std::to_string(case_->steps()) + " values (one per time step), got " +
                              std::to_string(a.size()));
      series.emplace_back(name, std::vector<double>(a.data(), a.data() + a.size()));
    }
    for (const auto &[name, v] : series) {
      std::vector<double> dummy;
      check(fc_->parameter_steps(name, 1, &dummy)); // a parameter with a time function?
    }
    if (new_design) apply_design(x); // a failed deformation changes nothing
    for (const auto &[name, v] : scalars) check(reg.set(res, name, v));
    for (const auto &[name, v] : series) check(fc_->set_parameter_steps(name, v));
    if (!values.empty()) solved_ = false;
  }

  // ------------------------------------------------------------------ gradients

  /// For each objective (the case's for "", or YAML text of an objective section): J and
  /// dJ/d(every parameter), dJ/dX (local vertices).  Steady: at the solution of solve(), one
  /// transposed solve per objective with the Jacobian and LU factors of the first; unsteady: no
  /// solve() needed, one forward run from the initial state with the current parameters that
  /// stores the trajectory, and one backward sweep, for all of them
  /// (UnsteadyAdjoint::add_objective).  The unsteady adjoint runs its own forward: solve() keeps no
  /// trajectory (UnsteadyAdjoint::run takes none), so a solve() before is a forward run more.
  /// `own_forward`: kept for karman.torch (it changes nothing now).
  py::list gradients(const std::vector<std::string> &objectives, bool own_forward) {
    (void)own_forward;
    alive();
    collect_garbage();
    if (objectives.empty()) throw py::value_error("gradients(): no objective given");
    const auto cfgs = objective_cases(objectives);
    const int dim = fc_->mesh().dim;
    auto xarray = [&](const std::vector<Vec3<double>> &X) {
      std::vector<double> x;
      for (const auto &v : X)
        for (int d = 0; d < dim; ++d) x.push_back(v[d]);
      return array2(x, dim);
    };
    py::list out;
    if (!case_->unsteady()) {
      if (!solved_)
        throw Failure("gradient(): no solution of the current parameters; call solve() first");
      for (std::size_t i = 0; i < cfgs.size(); ++i) {
        adjoint::Objective obj;
        check(obj.setup(fc_->residual(), *cfgs[i]));
        adjoint::AdjointResult r;
        check(fc_->gradient(w_, obj, &r, i > 0));
        py::dict d, grads;
        for (const auto &p : r.gradient.parameters) grads[py::str(p.name)] = p.gradient;
        add_design_gradient(r.gradient.X, &grads);
        d["J"] = r.J, d["gradient"] = grads, d["X"] = xarray(r.gradient.X);
        d["surface"] = surface(r.gradient.X);
        d["objective"] = obj.description();
        d["adjoint_linear_iterations"] = r.linear_iterations;
        d["adjoint_relative_residual"] = r.relative_residual;
        d["psi"] = array2(r.psi, fc_->residual().nv());
        out.append(d);
      }
      return out;
    }
    // unsteady: the forward run and the backward sweep of the unsteady adjoint
    std::vector<adjoint::UnsteadyAdjointResult> results;
    run_unsteady_adjoint(cfgs, false, &results);
    for (const auto &r : results) {
      py::dict d, grads, series;
      for (const auto &p : r.parameters) grads[py::str(p.name)] = p.gradient;
      add_design_gradient(r.X, &grads);
      // per-step series: as the gradient of the parameters that vary in time (the others have
      // their sum above); all of them under "series"
      for (const auto &[name, v] : r.control) {
        series[py::str(name)] = array1(v);
        if (!grads.contains(py::str(name))) grads[py::str(name)] = array1(v);
      }
      d["series"] = series;
      d["J"] = r.J, d["gradient"] = grads, d["X"] = xarray(r.X);
      d["surface"] = surface(r.X);
      d["times"] = array1(r.times);
      d["initial"] = array2(r.initial, fc_->residual().nv());
      d["steps"] = r.steps;
      d["adjoint_linear_iterations"] = r.linear_iterations;
      d["preconditioner_setups"] = r.preconditioner_setups;
      out.append(d);
    }
    return out;
  }

  /// The values of the objectives (as gradients()): steady, at the solution of solve();
  /// unsteady, no solve() needed: one forward run of the unsteady adjoint without the backward
  /// sweep (and without a trajectory).  `own_forward`: kept for karman.torch (changes nothing).
  std::vector<double> objectives(const std::vector<std::string> &objectives, bool own_forward) {
    (void)own_forward;
    alive();
    collect_garbage();
    if (objectives.empty()) throw py::value_error("objectives(): no objective given");
    const auto cfgs = objective_cases(objectives);
    if (!solved_ && !case_->unsteady())
      throw Failure("objective(): no solution of the current parameters; call solve() first");
    std::vector<double> values;
    if (case_->unsteady()) {
      std::vector<adjoint::UnsteadyAdjointResult> results;
      run_unsteady_adjoint(cfgs, true, &results);
      for (const auto &r : results) values.push_back(r.J);
      return values;
    }
    discretization::LocalState s;
    check(fc_->residual().local_state(discretization::kSteady, w_, &s));
    for (const auto &cfg : cfgs) {
      adjoint::Objective obj;
      check(obj.setup(fc_->residual(), *cfg));
      double J = 0;
      check(obj.value(fc_->residual(), s, &J));
      values.push_back(J);
    }
    return values;
  }

  bool solved() const { return solved_; }

private:
  struct History {
    std::vector<double> step, time, cd, cl, dp, probes;
  };
  void record(long step, double t, const solver::FlowMonitors::Values &v) {
    history_.step.push_back(step), history_.time.push_back(t);
    history_.cd.push_back(v.cd), history_.cl.push_back(v.cl), history_.dp.push_back(v.dp);
    history_.probes.insert(history_.probes.end(), v.probes.begin(), v.probes.end());
  }
  /// The design variables: the design space of the case's design: list on the case's mesh (the
  /// reference), its mesh deformation, the initial design applied.
  void setup_design() {
    auto space = std::make_unique<design::DesignSpace>();
    check(space->setup(fc_->mesh(), fc_->residual().coordinates(), *case_->cfg));
    chain_ = std::make_unique<driver::DesignChain>();
    check(chain_->setup(*fc_, std::move(space), optimization::deformation_options(*case_->cfg)));
    design_x_.assign(chain_->design().size(), 0.0);
    const std::vector<double> &a0 = chain_->design().initial();
    if (std::any_of(a0.begin(), a0.end(), [](double v) { return v != 0; })) apply_design(a0);
  }
  const design::DesignBlock *design_block(const std::string &name) const {
    if (!chain_ || name.rfind("design.", 0) != 0) return nullptr;
    for (const auto &b : chain_->design().blocks())
      if ("design." + b.name == name) return &b;
    return nullptr;
  }
  /// The values v of design entry b into x, checked: b.count numbers within the bounds.
  void set_design_entry(const design::DesignBlock &b, const py::handle &v,
                        std::vector<double> *x) const {
    const std::string name = "design." + b.name;
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(v);
    if (!a || a.ndim() > 1 || static_cast<std::size_t>(a.size()) != b.count)
      throw py::value_error("parameter '" + name + "': expected " + std::to_string(b.count) +
                            " values (the entry's design variables), got " +
                            (a ? std::to_string(a.size()) : std::string("no array")));
    for (std::size_t i = 0; i < b.count; ++i) {
      const std::size_t k = b.offset + i;
      const double value = a.data()[i];
      if (!std::isfinite(value) || value < chain_->design().lower()[k] ||
          value > chain_->design().upper()[k])
        throw py::value_error("design variable '" + chain_->design().names()[k] +
                              "' = " + std::to_string(value) + " is outside its bounds [" +
                              std::to_string(chain_->design().lower()[k]) + ", " +
                              std::to_string(chain_->design().upper()[k]) + "] (" +
                              case_->cfg->file() + ", design: " + b.name + ")");
      (*x)[k] = value;
    }
  }
  /// Deforms the reference mesh to the design x (its wall displacement, the volume mesh by
  /// elasticity); a deformation that fails (inverted cells, no convergence) raises and leaves
  /// the mesh and the design as they were.
  void apply_design(const std::vector<double> &x) {
    design::DeformationResult dr;
    check(chain_->move_to_design(x, "design", &dr));
    if (!dr.valid)
      throw Failure(case_->cfg->file() + ": design: the mesh deformation failed (" + dr.message +
                    "); the design and the mesh are unchanged");
    design_x_ = x;
    solved_ = false;
  }
  /// dJ/d(design entries) from dJ/dX (the deformation's and the parameterization's reverse).
  void add_design_gradient(const std::vector<Vec3<double>> &Xbar, py::dict *grads) const {
    if (!chain_) return;
    std::vector<double> abar;
    check(chain_->reverse(design_x_, Xbar, &abar));
    for (const auto &b : chain_->design().blocks())
      (*grads)[py::str("design." + b.name)] =
          array1(std::vector<double>(abar.begin() + b.offset, abar.begin() + b.offset + b.count));
  }

  /// The surface sensitivity of dJ/dX on every wall (adjoint/surface_sensitivity.hpp): per wall
  /// the owned wall vertices of this rank with their serial ids, coordinates, unit normals into
  /// the fluid, dual areas, s_v = dJ/dX . n and the density s_v / A_v.
  py::dict surface(const std::vector<Vec3<double>> &Xbar) const {
    const discretization::FlowResidual &res = fc_->residual();
    const mesh::Mesh &m = fc_->mesh();
    py::dict out;
    for (int p = 0; p < static_cast<int>(m.patch_names.size()); ++p) {
      if (!res.boundary_conditions().patch(p).is_wall()) continue;
      adjoint::SurfaceSensitivity s;
      check(adjoint::surface_sensitivity(res, p, Xbar, &s));
      std::vector<long> ids;
      std::vector<double> x, n, area, value, density;
      for (PetscInt v = 0; v < m.n_vertices; ++v) {
        if (!m.vertex_owned[v] || s.area[v] <= 0) continue;
        ids.push_back(m.vertex_gid[v]);
        for (int d = 0; d < m.dim; ++d)
          x.push_back(res.coordinates()[v][d]), n.push_back(s.normal[v][d]);
        area.push_back(s.area[v]), value.push_back(s.value[v]), density.push_back(s.density[v]);
      }
      py::dict w;
      w["vertex_ids"] = py::array_t<long>(ids.size(), ids.data());
      w["X"] = array2(x, m.dim), w["normal"] = array2(n, m.dim);
      w["area"] = array1(area), w["value"] = array1(value), w["density"] = array1(density);
      out[py::str(m.patch_names[p])] = w;
    }
    return out;
  }

  /// The case with each objective section ("" the case's own).
  std::vector<std::shared_ptr<config::CaseConfig>>
  objective_cases(const std::vector<std::string> &objectives) const {
    std::vector<std::shared_ptr<config::CaseConfig>> cfgs;
    for (const auto &o : objectives)
      cfgs.push_back(o.empty() ? case_->cfg : case_->with_objective(o));
    return cfgs;
  }
  /// UnsteadyAdjoint::run for the objectives of the cases `cfgs` (one forward run, one backward
  /// sweep) from the initial state: the trajectory under the work folder, the case's adjoint
  /// schedule.
  void run_unsteady_adjoint(const std::vector<std::shared_ptr<config::CaseConfig>> &cfgs,
                            bool forward_only, std::vector<adjoint::UnsteadyAdjointResult> *r) {
    adjoint::UnsteadyAdjoint ua;
    check(ua.setup(fc_->residual(), *cfgs.front()));
    for (std::size_t i = 1; i < cfgs.size(); ++i) check(ua.add_objective(*cfgs[i]));
    adjoint::UnsteadyAdjointOptions o = fc_->unsteady_gradient_options();
    o.save_every = 0; // (no adjoint state to resume from in Python)
    o.trajectory_directory = (fs::path(work_dir_) / "trajectory").string();
    o.forward_only = forward_only;
    check(fc_->unsteady_gradient(ua, o, r));
  }
  void alive() const {
    if (!fc_) throw Failure("the simulation was closed (karman finalized)");
  }
  /// The PETSc objects and the temporary folder, handed over (the simulation is closed).
  Remains take() {
    Remains r;
    r.fc = std::move(fc_), r.design = std::move(chain_);
    r.w = w_, w_ = nullptr;
    if (own_dir_ && rank_ == 0) r.own_dir = work_dir_;
    own_dir_ = false;
    return r;
  }
  void need_solution(const char *what) const {
    alive();
    if (!has_solution_) throw Failure(std::string(what) + ": no solution; call solve() first");
  }

  std::shared_ptr<Case> case_;
  std::unique_ptr<driver::FlowCase> fc_;
  /// The case's design: list on its mesh and the deformation from it (null: no design: list)
  std::unique_ptr<driver::DesignChain> chain_;
  std::vector<double> design_x_; ///< the current design
  Vec w_ = nullptr;
  bool solved_ = false;             ///< w_ is the solution of the current parameters
  bool has_solution_ = false;       ///< w_ is a solution (perhaps of earlier parameters)
  discretization::TimeLevel level_; ///< the time level of w_
  solver::FlowMonitors::Values values_;
  History history_;
  std::string work_dir_;
  bool own_dir_ = false;
  int rank_ = rank();
  long id_ = 0;
};

// ------------------------------------------------------------------ initialization

std::vector<std::string> g_args;
std::vector<char *> g_argv;

bool initialize(const std::vector<std::string> &options) {
  PetscBool done;
  PetscInitialized(&done);
  if (done) { // by petsc4py, say: karman's defaults for the matrices created from now on
    check(solver::set_process_defaults());
    return false;
  }
  g_args = {"karman"};
  g_args.insert(g_args.end(), options.begin(), options.end());
  for (auto &a : g_args) g_argv.push_back(a.data());
  g_argv.push_back(nullptr);
  int argc = static_cast<int>(g_args.size());
  char **argv = g_argv.data();
  if (PetscInitialize(&argc, &argv, nullptr, nullptr)) throw Failure("PETSc initialization failed");
  check(install_error_handler());
  check(solver::set_process_defaults());
  return true;
}

/// How often PETSc event `name` (e.g. "SNESSolve": one per time step, one per steady Newton solve)
/// ran on this rank in PETSc's main log stage since the first call of event_count, which starts
/// PETSc's default logging (off otherwise).  The unsteady adjoint's backward sweep, revolve's
/// recomputed steps included, runs in a stage of its own ("Unsteady adjoint") and is not counted:
/// in the main stage SNESSolve counts the time steps of forward runs.  For tests.
long event_count(const std::string &name) {
  static bool logging = false;
  if (!logging) {
    check(PetscLogDefaultBegin());
    logging = true;
  }
  check(SNESInitializePackage()); // (registers the SNES and KSP events if nothing did yet)
  PetscLogEvent event;
  check(PetscLogEventGetId(name.c_str(), &event));
  PetscEventPerfInfo info;
  check(PetscLogEventGetPerfInfo(0, event, &info));
  return info.count;
}

void finalize() {
  PetscBool init, fin;
  PetscInitialized(&init);
  PetscFinalized(&fin);
  if (!init || fin) return;
  // every simulation not destroyed yet (alive, or freed by Python on some ranks): the same set on
  // every rank, destroyed in the same order
  std::map<long, std::function<void()>> order;
  for (Simulation *s : g_live) order[s->id()] = [s] { s->release(); };
  for (auto &entry : g_garbage) {
    Remains *r = &entry.second;
    order[entry.first] = [r] { r->destroy(); };
  }
  for (auto &entry : order) entry.second();
  g_garbage.clear();
  PetscFinalize();
}

} // namespace

PYBIND11_MODULE(_karman, m) {
  m.doc() = "karman: incompressible Navier-Stokes with exact discrete adjoint (C++ extension)";
  py::register_exception<Failure>(m, "Error", PyExc_RuntimeError);
  m.def("initialize", &initialize, py::arg("options") = std::vector<std::string>(),
        "Initializes PETSc (and MPI unless mpi4py did) once; True if it did now.");
  m.def("finalize", &finalize, "Frees the simulations' PETSc objects and finalizes PETSc.");
  m.def("rank", [] { return rank(); });
  m.def("event_count", &event_count, py::arg("name"),
        "How often PETSc event NAME ran on this rank in the main log stage since the first call "
        "(which starts PETSc's default logging); SNESSolve: the time steps of forward runs.");
  m.def("collect_garbage", &collect_garbage,
        "Destroys the simulations freed by Python on every rank (collective; the collective calls "
        "do it themselves).");
  m.def(
      "garbage", [] { return g_garbage.size(); },
      "Simulations freed by Python on this rank and not destroyed yet.");
  m.def("size", [] {
    int s = 1;
    MPI_Comm_size(world(), &s);
    return s;
  });

  py::class_<Case, std::shared_ptr<Case>>(m, "Case")
      .def_static("load", &Case::load, py::arg("path"), py::arg("overrides"))
      .def_property_readonly("config", &Case::resolved)
      .def_property_readonly("file", [](const Case &c) { return c.cfg->file(); })
      .def_property_readonly("overrides", [](const Case &c) { return c.overrides; })
      .def_property_readonly("unsteady", &Case::unsteady)
      .def_property_readonly("steps", &Case::steps)
      .def("resolved_yaml", [](const Case &c) { return c.cfg->resolved_yaml(); });

  py::class_<Simulation>(m, "Simulation")
      .def(py::init<std::shared_ptr<Case>, const std::string &>(), py::arg("case"),
           py::arg("work_dir") = "")
      .def_property_readonly("case", &Simulation::case_object)
      .def("solve", &Simulation::solve, py::arg("progress") = py::none(),
           py::arg("warm_start") = false)
      .def("forces", &Simulation::forces)
      .def("history", &Simulation::history)
      .def("fields", &Simulation::fields, py::arg("gather") = true)
      .def("vertices", &Simulation::vertices)
      .def("write", &Simulation::write, py::arg("directory"), py::arg("name") = "flow")
      .def("parameters", &Simulation::parameters)
      .def("design", &Simulation::design)
      .def("set_parameters", &Simulation::set_parameters)
      .def("gradients", &Simulation::gradients, py::arg("objectives"),
           py::arg("own_forward") = false)
      .def("objectives", &Simulation::objectives, py::arg("objectives"),
           py::arg("own_forward") = false)
      .def_property_readonly("solved", &Simulation::solved)
      .def("close", &Simulation::release);
}
