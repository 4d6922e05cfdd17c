// The objective: a registered term or a weighted sum of terms (see
// include/karman/adjoint/objective.hpp).
#include "karman/adjoint/objective.hpp"

#include "karman/adjoint/adjoint_options.hpp"

#include <sstream>

namespace karman::adjoint {

using discretization::FlowResidual;
using discretization::LocalState;

PetscErrorCode Objective::setup(const FlowResidual &res, const config::CaseConfig &cfg) {
  return setup(res, cfg, cfg.section("objective"));
}

PetscErrorCode Objective::setup(const FlowResidual &res, const config::CaseConfig &cfg,
                                const config::Section &obj) {
  PetscFunctionBeginUser;
  terms_.clear();
  const ObjectiveOptions top = objective_options().get(obj);
  std::vector<config::Section> sections;
  if (top.type == "sum") {
    sections = obj.terms("terms");
    PetscCheck(!sections.empty(), res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: %s.type sum needs %s.terms", cfg.file().c_str(), obj.label().c_str(),
               obj.label().c_str());
  } else {
    sections.push_back(obj);
  }
  std::ostringstream d;
  for (const auto &sec : sections) {
    const ObjectiveOptions o = objective_options().get(sec);
    PetscCheck(o.type != "sum", res.mesh().comm, PETSC_ERR_USER_INPUT,
               "%s: %s: terms cannot be sums", cfg.file().c_str(), sec.label().c_str());
    Term t;
    t.type = find_objective_type(o.type);
    PetscCheck(t.type, res.mesh().comm, PETSC_ERR_PLIB, "%s: %s: no objective type '%s'",
               cfg.file().c_str(), sec.label().c_str(), o.type.c_str());
    t.weight = o.weight;
    std::unique_ptr<ObjectiveTerm> term;
    PetscCall(t.type->create(res, cfg, sec, &term));
    t.term = std::move(term);
    d << (terms_.empty() ? "" : " + ") << t.weight << " * " << o.type;
    terms_.push_back(std::move(t));
  }
  const double w = top.type == "sum" ? top.weight : 1.0;
  for (auto &t : terms_) t.weight *= w;
  // a single objective of weight 1 by its type alone ("drag", not "1 * drag")
  description_ = top.type != "sum" && terms_.front().weight == 1 ? top.type : d.str();
  PetscFunctionReturn(0);
}

bool Objective::least_squares() const {
  for (const auto &t : terms_)
    if (!t.type->least_squares) return false;
  return !terms_.empty();
}

long Objective::data_count(const FlowResidual &res) const {
  long n = 0;
  for (const auto &t : terms_) n += t.term->data_count(res);
  return n;
}

void Objective::set_time(double time) {
  for (Term &t : terms_) t.term->set_time(time);
}

PetscErrorCode Objective::value(const FlowResidual &res, const LocalState &state, double *J) const {
  PetscFunctionBeginUser;
  PetscCall(res.boundary_data(state.level)); // the boundary values of the state's level
  *J = 0;
  for (const Term &t : terms_) PetscCall(t.term->value(res, state, t.weight, J));
  PetscFunctionReturn(0);
}

PetscErrorCode Objective::reverse(const FlowResidual &res, const LocalState &state,
                                  Sensitivities &s, double scale) const {
  PetscFunctionBeginUser;
  PetscCall(res.boundary_data(state.level)); // the boundary values of the state's level
  for (const Term &t : terms_) PetscCall(t.term->reverse(res, state, s, t.weight * scale));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
