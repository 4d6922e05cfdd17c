// The registry of objective types (see include/karman/adjoint/objective_terms.hpp).
#include "karman/adjoint/objective_terms.hpp"

namespace karman::adjoint {

const std::vector<ObjectiveType> &objective_types() {
  static const std::vector<ObjectiveType> types = [] {
    std::vector<ObjectiveType> all;
    for (auto list : {force_objective_types(), pressure_objective_types(), probe_objective_types(),
                      scalar_objective_types()})
      for (auto &t : list) all.push_back(std::move(t));
    return all;
  }();
  return types;
}

const ObjectiveType *find_objective_type(const std::string &name) {
  for (const auto &t : objective_types())
    if (t.name == name) return &t;
  return nullptr;
}

} // namespace karman::adjoint
