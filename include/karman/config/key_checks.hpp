// Checks of case-file values against their key specs (case_schema.hpp), used by CaseConfig
// while it resolves a case: one value against its type, range and choices (time functions:
// a number or {type: sine|table|steps, ...} with that type's keys), and the first key that a
// mapping repeats (yaml-cpp would keep both and read only the first).
#pragma once

#include "karman/config/case_schema.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace karman::config {

/// "" or the first repeated key of a mapping at any depth of `node`, as a message
/// "file:line: duplicate key 'k' (first given on line N)".
std::string duplicate_key(const std::string &file, const YAML::Node &node);

/// "" when `value` fits `spec`, else the reason ("expected a number > 0", "needs amplitude and
/// frequency for a sine", ...).
std::string check_value(const KeySpec &spec, const YAML::Node &value);

} // namespace karman::config
