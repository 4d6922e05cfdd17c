// The shape parameterizations' entries of the case file's `design:` list, owned by the design
// layer: their keys (ffd, hicks-henne, rigid, surface-normal, radial, with the keys every
// parameterization shares) and the checks their keys' types cannot say (lattices, positions,
// walls of wall type, bounds and initial values), run when the case is loaded.
#pragma once

#include "karman/config/case_schema.hpp"

#include <vector>

namespace karman::design {

/// The shape design types, family "shape".
std::vector<config::VariantSpec> shape_design_types();

} // namespace karman::design
