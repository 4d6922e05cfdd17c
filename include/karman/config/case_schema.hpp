// The case-file schema: every section and key of case.yaml, its type, default,
// admissible values and meaning.  It is the single source of truth for parsing and
// validation (case_config.cpp), for `karman --help`, and for the resolved
// configuration written to OUTDIR/case.resolved.yaml.
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace karman::config {

enum class KeyType {
  Real,         ///< a number
  Integer,      ///< an integer
  Bool,         ///< true/false
  String,       ///< free text
  Choice,       ///< one of `choices`
  Path,         ///< a file name, relative to the case file's folder
  RealVector,   ///< a list of 2 or 3 numbers (one per space dimension)
  RealList,     ///< a list of numbers of any length
  NameList,     ///< a list of names (e.g. boundary names)
  PointList,    ///< a list of points, each a list of 2 or 3 numbers
  TimeFunction, ///< a number, or {type: sine|table|steps, ...} (physics/time_function.hpp)
  RealTable,    ///< a list of lists of numbers
  TermList      ///< a list of maps, each with the keys of the section itself (objective terms)
};

struct KeySpec {
  std::string name;
  KeyType type;
  /// Default as YAML text; empty when the key is required.
  std::string default_yaml;
  std::string help;
  std::vector<std::string> choices = {};
  double min = -std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  double max = std::numeric_limits<double>::infinity();
  bool required() const { return default_yaml.empty(); }
};

struct SectionSpec {
  std::string name;
  std::string help;
  std::vector<KeySpec> keys;
  const KeySpec *find(const std::string &key) const;
};

/// The fixed sections of a case file (mesh, fluid, reference, time, solver, output, objective).
const std::vector<SectionSpec> &case_sections();

/// Boundary-condition types; each is a "section" whose keys are the BC parameters
/// (besides `type`).  `boundaries: {NAME: {type: TYPE, ...}}` in the case file.
const std::vector<SectionSpec> &boundary_types();

/// The keys of one entry of the optional `constraints:` list (karman optimize).
const SectionSpec &constraint_spec();

/// Types of the optional `design:` list (shape parameterizations and control entries) (each a
/// "section" whose keys are the type's keys besides `type`): `design: [{type: TYPE, ...}, ...]` in
/// the case file.
const std::vector<SectionSpec> &design_types();
/// True for the flow-control / identification kinds of design entry (parameter, time-function,
/// per-step), false for the shape parameterizations.
bool is_control_design(const std::string &type);

/// Looks up a section or boundary type by name (nullptr when unknown).
const SectionSpec *find_section(const std::vector<SectionSpec> &sections, const std::string &name);

/// Human-readable description of a key type ("a number > 0", ...), used in messages.
std::string describe_expected(const KeySpec &spec);

/// Text for `karman --help`: every section, key, default and meaning.
std::string format_case_help();

} // namespace karman::config
