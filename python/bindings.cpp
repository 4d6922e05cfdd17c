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
//
// Files: bindings_support (errors, callbacks, conversions), case (karman.Case), simulation
// (karman.Simulation: simulation.cpp, simulation_output.cpp, simulation_parameters.cpp,
// simulation_gradients.cpp); this file: PETSc's initialization and finalization and the module.
#include "case.hpp"
#include "simulation.hpp"

#include "karman/solver/linear_solver.hpp"

#include <petsclog.h>
#include <petscsnes.h>

#include <functional>
#include <map>

namespace karman::bindings {
namespace {

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
} // namespace karman::bindings

using namespace karman::bindings;

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
  bind_case(m);
  bind_simulation(m);
}
