// karman.Case: the binding of a case (see case.hpp).
#include "case.hpp"

namespace karman::bindings {

void bind_case(py::module_ &m) {
  py::class_<Case, std::shared_ptr<Case>>(m, "Case")
      .def_static("load", &Case::load, py::arg("path"), py::arg("overrides"))
      .def_property_readonly("config", &Case::resolved)
      .def_property_readonly("file", [](const Case &c) { return c.cfg->file(); })
      .def_property_readonly("overrides", [](const Case &c) { return c.overrides; })
      .def_property_readonly("unsteady", &Case::unsteady)
      .def_property_readonly("steps", &Case::steps)
      .def("resolved_yaml", [](const Case &c) { return c.cfg->resolved_yaml(); });
}

} // namespace karman::bindings
