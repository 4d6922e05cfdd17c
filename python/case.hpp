// A case of the Python module (karman.Case): a loaded, validated case file with its overrides,
// the same case with another objective section, its resolved configuration as Python objects.
#pragma once

#include "bindings_support.hpp"

#include "karman/config/case_config.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/unsteady_solver.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace karman::bindings {

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
  /// The number of time steps to t_end; 0 with time.dt auto (known only after the run).
  long steps() const {
    const solver::TimeOptions t = solver::time_options().get(*cfg);
    if (t.adaptive()) return 0;
    return std::lround(std::ceil(t.t_end / t.dt.value - 1e-9));
  }
};

/// Registers karman.Case in module m.
void bind_case(py::module_ &m);

} // namespace karman::bindings
