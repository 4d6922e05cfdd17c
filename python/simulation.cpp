// karman.Simulation: its life (creation, closing, the simulations freed by Python and destroyed
// collectively), the steady and unsteady solves with their progress callbacks, and the binding
// (see simulation.hpp).
#include "simulation.hpp"

#include "karman/core/parallel.hpp"

#include <petscsnes.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace karman::bindings {

std::set<Simulation *> g_live;
long g_simulations = 0;
std::map<long, Remains> g_garbage;

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

Simulation::Simulation(std::shared_ptr<Case> c, const std::string &work_dir)
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

Simulation::~Simulation() {
  PetscBool finalized = PETSC_TRUE;
  PetscFinalized(&finalized);
  if (finalized)
    take().destroy();
  else
    g_garbage[id_] = take();
  g_live.erase(this);
}

py::dict Simulation::solve(const py::object &progress, bool warm_start) {
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
    // a forward-only run (solver.tolerances auto: forward): gradient() and objective() run
    // their own forward with converged steps
    check(fc_->start_unsteady(ts, &s, &v, solver::StepPurpose::ForwardOnly));
    record(0, 0.0, v);
  }
  const long total = case_->steps();
  const driver::StepObserver observer =
      [&](solver::UnsteadySolver &, const solver::StepReport &r, const discretization::LocalState &,
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
  d["newton_iterations"] = sol.newton_iterations, d["truncation_stops"] = sol.truncation_stops;
  d["rejected_steps"] = sol.rejected_steps;
  d["step_tolerances"] = ts.forward_tolerances() ? "forward" : "converged";
  return d;
}

void Simulation::record(long step, double t, const solver::FlowMonitors::Values &v) {
  history_.step.push_back(step), history_.time.push_back(t);
  history_.cd.push_back(v.cd), history_.cl.push_back(v.cl), history_.dp.push_back(v.dp);
  history_.probes.insert(history_.probes.end(), v.probes.begin(), v.probes.end());
}

void Simulation::alive() const {
  if (!fc_) throw Failure("the simulation was closed (karman finalized)");
}

Remains Simulation::take() {
  Remains r;
  r.fc = std::move(fc_), r.design = std::move(chain_);
  r.w = w_, w_ = nullptr;
  if (own_dir_ && rank_ == 0) r.own_dir = work_dir_;
  own_dir_ = false;
  return r;
}

void Simulation::need_solution(const char *what) const {
  alive();
  if (!has_solution_) throw Failure(std::string(what) + ": no solution; call solve() first");
}

void bind_simulation(py::module_ &m) {
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

} // namespace karman::bindings
