// The case-file schema of karman: the sections, keys and types each layer declares, assembled
// here, in the top library layer that sees them all, in
// the order of the case file's documentation (`karman --help`): mesh, fluid, reference, initial,
// time, solver, output, adjoint, objective, optimization, then the optional sections of the
// residual's terms; the boundary types, the design types and the constraints' keys.
#pragma once

#include "karman/config/case_schema.hpp"

namespace karman::optimization {

/// The schema every case is loaded with (config::CaseConfig::load).
const config::Schema &case_schema();

} // namespace karman::optimization
