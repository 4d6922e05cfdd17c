// What every part of the Python extension shares (bindings.cpp): library errors as Python
// exceptions (Failure, check), Python callbacks inside the library's observers (call_python), the
// communicator and rank, and the conversions of YAML and vectors to Python objects.  (Every file
// of the extension sees the same type casters: pybind11/stl.h and functional.h are included here.)
#pragma once

#include "karman/core/error.hpp"
#include "karman/solver/flow_monitors.hpp"

#include <petscsys.h>
#include <yaml-cpp/yaml.h>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace karman::bindings {

/// A failure of the library (message: the command line's one line).
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An exception of a Python callback, waiting to be re-raised after the library returned.
extern std::unique_ptr<py::error_already_set> g_pending;

/// Raises the pending Python exception, or a Failure with the library's message, for an error
/// code; nothing for 0.
void check(PetscErrorCode ierr);

/// PETSC_COMM_WORLD and this process's rank in it.
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

/// A YAML node as Python objects (maps -> dict, sequences -> list, scalars -> bool, int,
/// float, None or str).
py::object to_python(const YAML::Node &n);

/// A vector as a 1-D array, as a 2-D array of `cols` columns; the monitors of a state as a dict.
py::array_t<double> array1(const std::vector<double> &v);
py::array_t<double> array2(const std::vector<double> &v, std::size_t cols);
py::dict monitor_dict(const solver::FlowMonitors::Values &v, int nv);

} // namespace karman::bindings
