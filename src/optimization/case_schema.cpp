// The assembled case-file schema (see include/karman/optimization/case_schema.hpp).
#include "karman/optimization/case_schema.hpp"

#include "karman/adjoint/adjoint_options.hpp"
#include "karman/adjoint/objective_terms.hpp"
#include "karman/design/design_types.hpp"
#include "karman/discretization/boundary_conditions.hpp"
#include "karman/discretization/flow_options.hpp"
#include "karman/discretization/scalar_term.hpp"
#include "karman/discretization/spalart_allmaras_term.hpp"
#include "karman/driver/adaptation.hpp"
#include "karman/driver/output_options.hpp"
#include "karman/mesh/mesh_options.hpp"
#include "karman/optimization/optimization_options.hpp"
#include "karman/solver/solver_options.hpp"

#include <set>

namespace karman::optimization {
namespace {

// The objective section: the common keys, the force monitors' and every objective type's own
// (a key that several types share is declared once).
std::vector<config::KeySpec> objective_keys() {
  std::vector<config::KeySpec> keys;
  std::set<std::string> seen;
  auto add = [&](const std::vector<config::KeySpec> &list) {
    for (const auto &k : list)
      if (seen.insert(k.name).second) keys.push_back(k);
  };
  std::vector<std::pair<std::string, std::string>> choices;
  for (const auto &t : adjoint::objective_types()) choices.emplace_back(t.name, t.help);
  choices.emplace_back("sum", "weighted sum of `terms`");
  add(adjoint::objective_options(choices).spec().keys);
  add(solver::force_options().spec().keys);
  for (const auto &t : adjoint::objective_types()) add(t.keys);
  return keys;
}

config::Schema make_schema() {
  config::Schema s;
  mesh::mesh_options().declare(s);
  discretization::fluid_options().declare(s);
  discretization::reference_options().declare(s);
  discretization::initial_options().declare(s);
  discretization::declare_scalar(s);
  discretization::declare_turbulence(s);
  solver::time_options().declare(s);
  solver::solver_options().declare(s);
  discretization::scheme_options().declare(s);
  driver::output_options().declare(s);
  driver::adapt_options().declare(s);
  solver::probe_options().declare(s);
  adjoint::adjoint_options().declare(s);
  std::vector<std::string> types;
  for (const auto &t : adjoint::objective_types()) types.push_back(t.name);
  const std::vector<config::KeySpec> objective = objective_keys();
  s.add_keys("objective",
             "quantity of interest (forces are always reported; the objective drives the adjoint)",
             objective);
  optimization_options().declare(s);
  for (auto &t : discretization::boundary_types()) s.add_variant("boundaries", t);
  for (auto &t : design::shape_design_types()) s.add_variant("design", t);
  for (auto &t : control_design_types()) s.add_variant("design", t);
  config::SectionSpec constraints = constraint_options(types).spec();
  for (const auto &k : objective)
    if (k.name != "type") constraints.keys.push_back(k);
  s.set_constraints(constraints);
  s.set_points(point_options().spec());
  return s;
}

} // namespace

const config::Schema &case_schema() {
  static const config::Schema schema = make_schema();
  return schema;
}

} // namespace karman::optimization
