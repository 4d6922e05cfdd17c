// The equation set's layout (see include/karman/physics/equation_set.hpp).
#include "karman/physics/equation_set.hpp"

#include <stdexcept>

namespace karman::physics {

EquationSet::EquationSet(int dim, std::vector<FieldSpec> fields)
    : dim_(dim), fields_(std::move(fields)) {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (find(fields_[i].name) != static_cast<int>(i))
      throw std::invalid_argument("equation set: field '" + fields_[i].name + "' given twice");
    offset_.push_back(nv_);
    for (int c = 0; c < fields_[i].components; ++c) field_of_.push_back(static_cast<int>(i));
    nv_ += fields_[i].components;
  }
  if (nv_ > kMaxVars)
    throw std::invalid_argument("equation set: " + std::to_string(nv_) +
                                " unknowns per cell, at most " + std::to_string(kMaxVars));
}

int EquationSet::find(const std::string &name) const {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string EquationSet::signature() const {
  std::string s;
  for (const auto &f : fields_)
    s += (s.empty() ? "" : ",") + f.name + ":" + std::to_string(f.components);
  return s;
}

std::vector<FieldSpec> navier_stokes_fields(int dim) {
  return {{"pressure", 1, false, 1.0, 2}, {"velocity", dim, true, 1.0, 2}};
}

} // namespace karman::physics
