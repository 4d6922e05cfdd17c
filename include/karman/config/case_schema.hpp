// The case-file schema: every section and key of case.yaml, its type, default, admissible values
// and meaning.  The config layer does not declare any of it: each layer declares the keys it owns
// (mesh: `mesh`; discretization: `fluid`, `reference`, `initial`, the scheme keys of `solver`,
// the boundary types, `scalar`; solver: `time`, `solver`; adjoint: `objective`, `adjoint`;
// design and optimization: the `design` types, `constraints`, `optimization`; driver: `output`)
// and the driver assembles them into one Schema (driver/case_schema.hpp), which CaseConfig
// validates against, `karman --help` prints and the resolved configuration follows.  Typed
// access is config::SectionOptions (section_options.hpp): a layer binds each key to a member of
// its options struct, so the key's name is written once and downstream code reads the struct.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace karman::config {

enum class KeyType {
  Real,       ///< a number
  RealOrAuto, ///< a number, or the word auto (e.g. time.dt: a fixed step, or chosen by the solver)
  Integer,    ///< an integer
  Bool,       ///< true/false
  String,     ///< free text
  Choice,     ///< one of `choices`
  Path,       ///< a file name, relative to the case file's folder
  RealVector, ///< a list of 2 or 3 numbers (one per space dimension)
  RealList,   ///< a list of numbers of any length
  NameList,   ///< a list of names (e.g. boundary names)
  PointList,  ///< a list of points, each a list of 2 or 3 numbers
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
  /// The key enters the discrete residual R(w) (CaseConfig::problem_keys()).
  bool problem = false;
  bool required() const { return default_yaml.empty(); }
};

struct SectionSpec {
  std::string name;
  std::string help;
  std::vector<KeySpec> keys;
  /// Resolved only when the case file has it (e.g. `scalar`: the case solves a scalar).
  bool optional = false;
  /// The name of a key holding a map NAME -> {type: TYPE, ...} of the variant list
  /// "<section>.<key>" (e.g. `scalar.boundaries`), resolved like `boundaries`; empty: none.
  std::string variant_map = {};
  const KeySpec *find(const std::string &key) const;
};

/// Key constructors for the declarations.
namespace key {
KeySpec real(std::string name, std::string def, std::string help);
KeySpec positive(std::string name, std::string def, std::string help);
/// A number > 0, or the word `auto`.
KeySpec positive_or_auto(std::string name, std::string def, std::string help);
KeySpec nonnegative(std::string name, std::string def, std::string help);
KeySpec bounded(std::string name, std::string def, std::string help, double min, double max);
KeySpec integer(std::string name, std::string def, std::string help, double min,
                double max = std::numeric_limits<double>::infinity());
KeySpec choice(std::string name, std::string def, std::string help,
               std::vector<std::string> choices);
KeySpec typed(std::string name, KeyType type, std::string def, std::string help);
/// The same keys marked as entering the residual.
std::vector<KeySpec> problem(std::vector<KeySpec> keys);
} // namespace key

struct BoundaryConfig;

/// What a variant's check sees besides its entry: the case file (for messages) and the case's
/// boundaries (a design entry names walls).
struct VariantContext {
  std::string file;
  const std::vector<BoundaryConfig> *boundaries = nullptr;
};

/// A type of a list of the case file (`boundaries: {NAME: {type: TYPE}}`, `design: [{type:
/// TYPE}]`): its keys, and the checks its keys' types cannot say.  check(given, resolved,
/// label, context) returns "" or the problem as a message line (file:line: label...: what).
struct VariantSpec {
  SectionSpec spec;
  /// The family of types within the list (design: "shape" or "control").
  std::string family;
  /// The prefix of generated entry names (design: ffd0, hh0, ...); empty: the type's name.
  std::string short_name;
  std::function<std::string(const YAML::Node &given, const YAML::Node &resolved,
                            const std::string &label, const VariantContext &context)>
      check;
};

class Schema {
public:
  /// Adds `keys` to the fixed section `name` (created with `help` by its first declaration; the
  /// sections keep the order of their first declarations, the keys of a section the order of
  /// the declarations).
  Schema &add_keys(const std::string &name, const std::string &help, std::vector<KeySpec> keys,
                   bool optional = false);
  /// Declares that section `name` holds the variant map `key` (SectionSpec::variant_map), whose
  /// types are added with add_variant(name + "." + key, ...).
  Schema &add_variant_map(const std::string &name, const std::string &key);
  /// Adds a variant type to the list `list` ("boundaries", "design").
  Schema &add_variant(const std::string &list, VariantSpec variant);
  /// The keys of one `constraints:` entry.
  Schema &set_constraints(SectionSpec spec);
  /// The keys of one `points:` entry (the operating points of a multipoint campaign).
  Schema &set_points(SectionSpec spec);

  const std::vector<SectionSpec> &sections() const { return sections_; }
  const SectionSpec *section(const std::string &name) const;
  const std::vector<VariantSpec> &variants(const std::string &list) const;
  const VariantSpec *variant(const std::string &list, const std::string &type) const;
  const SectionSpec &constraints() const { return constraints_; }
  const SectionSpec &points() const { return points_; }
  /// Text for `karman --help`: every section, key, default and meaning.
  std::string help() const;

private:
  std::vector<SectionSpec> sections_;
  std::vector<std::pair<std::string, std::vector<VariantSpec>>> lists_;
  SectionSpec constraints_{"constraints", "", {}};
  SectionSpec points_{"points", "", {}};
};

/// Human-readable description of a key type ("a number > 0", ...), used in messages.
std::string describe_expected(const KeySpec &spec);

/// Messages about the case file: "file:line" of a node, a node as YAML text, and "did you mean
/// ..." among candidates.
std::string where(const std::string &file, const YAML::Node &node);
std::string show(const YAML::Node &node);
std::string suggestion(const std::string &word, const std::vector<std::string> &candidates);

} // namespace karman::config
