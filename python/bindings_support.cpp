// The shared parts of the Python extension (see bindings_support.hpp).
#include "bindings_support.hpp"

#include <algorithm>
#include <cstdlib>

namespace karman::bindings {

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

MPI_Comm world() {
  return PETSC_COMM_WORLD;
}

int rank() {
  int r = 0;
  MPI_Comm_rank(world(), &r);
  return r;
}

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

} // namespace karman::bindings
