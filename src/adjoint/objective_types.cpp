// The registry of objective types (see include/karman/adjoint/objective_terms.hpp).
#include "karman/adjoint/objective_terms.hpp"
#include "karman/solver/solver_options.hpp"

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

PetscErrorCode objective_walls(const discretization::FlowResidual &res,
                               const config::CaseConfig &cfg, const config::Section &sec,
                               std::vector<int> *walls) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  walls->clear();
  for (const auto &name : solver::force_options().get(sec).walls) {
    const int p = m.patch_index(name);
    PetscCheck(p >= 0, m.comm, PETSC_ERR_USER_INPUT, "%s: %s.walls: no boundary named '%s'",
               cfg.file().c_str(), sec.label().c_str(), name.c_str());
    walls->push_back(p);
  }
  PetscFunctionReturn(0);
}

const ObjectiveType *find_objective_type(const std::string &name) {
  for (const auto &t : objective_types())
    if (t.name == name) return &t;
  return nullptr;
}

} // namespace karman::adjoint
