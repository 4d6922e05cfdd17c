// The case-file schema (see include/karman/config/case_schema.hpp): the key constructors, the
// Schema the layers' declarations fill, its help text, and the messages about the case file.
#include "karman/config/case_schema.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace karman::config {

namespace key {

KeySpec positive(std::string name, std::string def, std::string help) {
  return KeySpec{std::move(name),
                 KeyType::Real,
                 std::move(def),
                 std::move(help),
                 {},
                 0.0,
                 true,
                 std::numeric_limits<double>::infinity()};
}

KeySpec positive_or_auto(std::string name, std::string def, std::string help) {
  KeySpec k = positive(std::move(name), std::move(def), std::move(help));
  k.type = KeyType::RealOrAuto;
  return k;
}

KeySpec nonnegative(std::string name, std::string def, std::string help) {
  return KeySpec{std::move(name),
                 KeyType::Real,
                 std::move(def),
                 std::move(help),
                 {},
                 0.0,
                 false,
                 std::numeric_limits<double>::infinity()};
}

KeySpec real(std::string name, std::string def, std::string help) {
  return KeySpec{std::move(name), KeyType::Real, std::move(def), std::move(help)};
}

KeySpec bounded(std::string name, std::string def, std::string help, double min, double max) {
  return KeySpec{
      std::move(name), KeyType::Real, std::move(def), std::move(help), {}, min, false, max};
}

KeySpec integer(std::string name, std::string def, std::string help, double min, double max) {
  return KeySpec{
      std::move(name), KeyType::Integer, std::move(def), std::move(help), {}, min, false, max};
}

KeySpec choice(std::string name, std::string def, std::string help,
               std::vector<std::string> choices) {
  return KeySpec{std::move(name), KeyType::Choice, std::move(def), std::move(help),
                 std::move(choices)};
}

KeySpec typed(std::string name, KeyType type, std::string def, std::string help) {
  return KeySpec{std::move(name), type, std::move(def), std::move(help)};
}

std::vector<KeySpec> problem(std::vector<KeySpec> keys) {
  for (auto &k : keys) k.problem = true;
  return keys;
}

} // namespace key

namespace {

std::string describe_type(KeyType type) {
  switch (type) {
  case KeyType::Real:
    return "a number";
  case KeyType::RealOrAuto:
    return "auto or a number";
  case KeyType::Integer:
    return "an integer";
  case KeyType::Bool:
    return "true or false";
  case KeyType::String:
    return "a string";
  case KeyType::Choice:
    return "one of";
  case KeyType::Path:
    return "a file name";
  case KeyType::RealVector:
    return "a vector [x, y] or [x, y, z]";
  case KeyType::RealList:
    return "a list of numbers";
  case KeyType::NameList:
    return "a list of names";
  case KeyType::PointList:
    return "a list of points [[x, y], ...]";
  case KeyType::RealTable:
    return "a list of lists of numbers";
  case KeyType::TermList:
    return "a list of objective maps";
  case KeyType::TimeFunction:
    return "a number or {type: sine, amplitude, frequency, phase, offset} | {type: table, points: "
           "[[t, v], ...] "
           "or file} | {type: steps, file}";
  }
  return "?";
}

} // namespace

const KeySpec *SectionSpec::find(const std::string &key) const {
  for (const auto &k : keys)
    if (k.name == key) return &k;
  return nullptr;
}

std::string describe_expected(const KeySpec &spec) {
  std::ostringstream out;
  out << describe_type(spec.type);
  if (spec.type == KeyType::Choice) {
    out << " {";
    for (std::size_t i = 0; i < spec.choices.size(); ++i) out << (i ? ", " : "") << spec.choices[i];
    out << "}";
  }
  if (spec.type == KeyType::Real || spec.type == KeyType::RealOrAuto ||
      spec.type == KeyType::Integer) {
    if (std::isfinite(spec.min)) out << (spec.min_exclusive ? " > " : " >= ") << spec.min;
    if (std::isfinite(spec.max))
      out << (std::isfinite(spec.min) ? " and" : "") << " <= " << spec.max;
  }
  return out.str();
}

Schema &Schema::add_keys(const std::string &name, const std::string &help,
                         std::vector<KeySpec> keys, bool optional) {
  for (auto &sec : sections_)
    if (sec.name == name) {
      for (auto &k : keys) sec.keys.push_back(std::move(k));
      return *this;
    }
  sections_.push_back({name, help, std::move(keys), optional});
  return *this;
}

Schema &Schema::add_variant_map(const std::string &name, const std::string &key) {
  for (auto &sec : sections_)
    if (sec.name == name) sec.variant_map = key;
  return *this;
}

Schema &Schema::add_variant(const std::string &list, VariantSpec variant) {
  for (auto &[name, types] : lists_)
    if (name == list) {
      types.push_back(std::move(variant));
      return *this;
    }
  lists_.push_back({list, {std::move(variant)}});
  return *this;
}

Schema &Schema::set_constraints(SectionSpec spec) {
  constraints_ = std::move(spec);
  return *this;
}

Schema &Schema::set_points(SectionSpec spec) {
  points_ = std::move(spec);
  return *this;
}

const SectionSpec *Schema::section(const std::string &name) const {
  for (const auto &sec : sections_)
    if (sec.name == name) return &sec;
  return nullptr;
}

const std::vector<VariantSpec> &Schema::variants(const std::string &list) const {
  static const std::vector<VariantSpec> none;
  for (const auto &[name, types] : lists_)
    if (name == list) return types;
  return none;
}

const VariantSpec *Schema::variant(const std::string &list, const std::string &type) const {
  for (const auto &v : variants(list))
    if (v.spec.name == type) return &v;
  return nullptr;
}

std::string Schema::help() const {
  std::ostringstream out;
  auto print_keys = [&](const SectionSpec &s, const char *indent) {
    for (const auto &k : s.keys) {
      out << indent << k.name << ": " << (k.required() ? "(required)" : k.default_yaml) << "\n"
          << indent << "    " << k.help << " [" << describe_expected(k) << "]\n";
    }
  };
  out << "Case file keys (YAML), with defaults:\n\n";
  for (const auto &s : sections_) {
    out << s.name << ":    # " << s.help << (s.optional ? " (optional section)" : "") << "\n";
    print_keys(s, "  ");
    if (!s.variant_map.empty()) {
      out << "  " << s.variant_map << ":    # one entry per boundary\n"
          << "    NAME: {type: TYPE, ...}    TYPE and its keys:\n";
      for (const auto &t : variants(s.name + "." + s.variant_map)) {
        out << "    type: " << t.spec.name << "    # " << t.spec.help << "\n";
        print_keys(t.spec, "      ");
      }
    }
    out << "\n";
  }
  out << "boundaries:    # one entry per Gmsh physical name of the mesh boundary\n"
         "  NAME: {type: TYPE, ...}    TYPE and its keys:\n";
  for (const auto &t : variants("boundaries")) {
    out << "  type: " << t.spec.name << "    # " << t.spec.help << "\n";
    print_keys(t.spec, "    ");
  }
  out << "\ndesign:    # optional: shape parameterizations, or control / identification variables\n"
         "          # (parameter, time-function, per-step); several entries of one family may be\n"
         "          # combined, the design vector is their variables in this order\n"
         "  - {type: TYPE, ...}    TYPE and its keys:\n";
  for (const auto &t : variants("design")) {
    out << "  type: " << t.spec.name << "    # " << t.spec.help << "\n";
    print_keys(t.spec, "    ");
  }
  if (!constraints_.keys.empty()) {
    out << "\nconstraints:    # optional (karman optimize): " << constraints_.help << "\n"
        << "  - {type: TYPE, ...}    keys:\n";
    print_keys(constraints_, "    ");
  }
  if (!points_.keys.empty()) {
    out << "\npoints:    # optional (karman optimize, shape campaigns): " << points_.help << "\n"
        << "  - {name: NAME, ...}    keys:\n";
    print_keys(points_, "    ");
  }
  out << "\npetsc:    # options for PETSc's database, e.g. {ksp_type: gmres, pc_type: asm}\n"
         "  OPTION: VALUE    (command-line PETSc options take precedence)\n";
  return out.str();
}

namespace {

// Levenshtein distance, for "did you mean" hints on misspelt keys.
std::size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1] ? 1 : 0)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

} // namespace

std::string suggestion(const std::string &word, const std::vector<std::string> &candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto &c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  std::string list;
  for (std::size_t i = 0; i < candidates.size(); ++i) list += (i ? ", " : "") + candidates[i];
  if (!best.empty()) return "did you mean '" + best + "'? (known: " + list + ")";
  return "known: " + list;
}

std::string where(const std::string &file, const YAML::Node &node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1);
}

std::string show(const YAML::Node &node) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << node;
  return e.c_str();
}

} // namespace karman::config
