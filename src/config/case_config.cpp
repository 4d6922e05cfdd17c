// Case-file parsing and validation (see include/karman/config/case_config.hpp): overrides, the
// sections, the variant maps (boundaries), the constraints, design and petsc lists, and the
// resolved configuration.  The checks of single values are in key_checks.cpp, the typed access
// to a section in case_section.cpp, the problem keys and their hash in problem_keys.cpp.
#include "karman/config/case_config.hpp"

#include "karman/config/key_checks.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace karman::config {
namespace {

// Validates `given` (a map or null) against `spec` and returns the map with defaults
// filled in.  `label` names the section in messages ("fluid", "boundaries.inlet").
PetscErrorCode resolve_section(MPI_Comm comm, const std::string &file, const SectionSpec &spec,
                               const YAML::Node &given, const std::string &label,
                               const std::vector<std::string> &ignore, YAML::Node *resolved) {
  PetscFunctionBeginUser;
  PetscCheck(!given || given.IsNull() || given.IsMap(), comm, PETSC_ERR_USER_INPUT,
             "%s: '%s' must be a map of keys, got '%s'", where(file, given).c_str(), label.c_str(),
             show(given).c_str());
  std::vector<std::string> known;
  for (const auto &k : spec.keys) known.push_back(k.name);
  if (given && given.IsMap()) {
    for (const auto &item : given) {
      const std::string key = item.first.Scalar();
      bool skip = false;
      for (const auto &i : ignore) skip = skip || (i == key);
      if (skip) continue;
      PetscCheck(spec.find(key), comm, PETSC_ERR_USER_INPUT, "%s: unknown key '%s' in '%s': %s",
                 where(file, item.first).c_str(), key.c_str(), label.c_str(),
                 suggestion(key, known).c_str());
    }
  }
  YAML::Node out(YAML::NodeType::Map);
  for (const auto &k : spec.keys) {
    YAML::Node value = (given && given.IsMap()) ? given[k.name] : YAML::Node();
    if (!value || value.IsNull()) {
      PetscCheck(!k.required(), comm, PETSC_ERR_USER_INPUT,
                 "%s: missing required key '%s.%s' (%s: %s)", where(file, given).c_str(),
                 label.c_str(), k.name.c_str(), describe_expected(k).c_str(), k.help.c_str());
      out[k.name] = YAML::Load(k.default_yaml);
      continue;
    }
    if (k.type == KeyType::TermList && value.IsSequence()) {
      YAML::Node list(YAML::NodeType::Sequence);
      for (std::size_t i = 0; i < value.size(); ++i) {
        YAML::Node term;
        PetscCall(resolve_section(comm, file, spec, value[i],
                                  label + "." + k.name + "[" + std::to_string(i) + "]", {}, &term));
        PetscCheck(!term["terms"] || term["terms"].size() == 0, comm, PETSC_ERR_USER_INPUT,
                   "%s: '%s.%s[%zu]': terms cannot be nested", where(file, value[i]).c_str(),
                   label.c_str(), k.name.c_str(), i);
        list.push_back(term);
      }
      out[k.name] = list;
      continue;
    }
    const std::string problem = check_value(k, value);
    PetscCheck(problem.empty(), comm, PETSC_ERR_USER_INPUT, "%s: '%s.%s' %s, got '%s'",
               where(file, value).c_str(), label.c_str(), k.name.c_str(), problem.c_str(),
               show(value).c_str());
    out[k.name] = YAML::Clone(value);
  }
  *resolved = out;
  PetscFunctionReturn(0);
}

PetscErrorCode apply_override(MPI_Comm comm, const std::string &text, YAML::Node root) {
  PetscFunctionBeginUser;
  const auto eq = text.find('=');
  PetscCheck(eq != std::string::npos && eq > 0 && eq + 1 < text.size(), comm, PETSC_ERR_USER_INPUT,
             "--set '%s': expected section.key=value", text.c_str());
  const std::string path = text.substr(0, eq), value_text = text.substr(eq + 1);
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    PetscCheck(!part.empty(), comm, PETSC_ERR_USER_INPUT, "--set '%s': empty key in '%s'",
               text.c_str(), path.c_str());
    parts.push_back(part);
  }
  PetscCheck(parts.size() >= 2, comm, PETSC_ERR_USER_INPUT,
             "--set '%s': expected section.key=value (e.g. fluid.viscosity=0.01)", text.c_str());
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception &e) {
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "--set '%s': value is not valid YAML: %s", text.c_str(),
            e.msg.c_str());
  }
  // Walk down, creating maps as needed (yaml-cpp nodes are handles: rebind with reset()).
  YAML::Node node;
  node.reset(root);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = node[parts[i]];
    if (!child || child.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child = node[parts[i]];
    }
    PetscCheck(child.IsMap(), comm, PETSC_ERR_USER_INPUT, "--set '%s': '%s' is not a section",
               text.c_str(), parts[i].c_str());
    node.reset(child);
  }
  node[parts.back()] = value;
  PetscFunctionReturn(0);
}

// A map NAME -> {type: TYPE, ...} of the variant list `list` ("boundaries", "scalar.boundaries"):
// every entry resolved against its type's keys.
PetscErrorCode parse_variant_map(MPI_Comm comm, const std::string &file, const Schema &schema,
                                 const std::string &list, const YAML::Node &given,
                                 const YAML::Node &parent, YAML::Node *resolved,
                                 std::vector<BoundaryConfig> *entries) {
  PetscFunctionBeginUser;
  std::vector<std::string> type_names;
  for (const auto &t : schema.variants(list)) type_names.push_back(t.spec.name);
  std::string types_text;
  for (const auto &t : type_names) types_text += (types_text.empty() ? "" : ", ") + t;
  PetscCheck(given && given.IsMap() && given.size() > 0, comm, PETSC_ERR_USER_INPUT,
             "%s: missing or empty section '%s' (a map from Gmsh physical names to "
             "{type: ...}; types: %s)",
             where(file, given ? given : parent).c_str(), list.c_str(), types_text.c_str());
  *resolved = YAML::Node(YAML::NodeType::Map);
  entries->clear();
  for (const auto &item : given) {
    const std::string name = item.first.Scalar();
    const std::string label = list + "." + name;
    const YAML::Node bc = item.second;
    PetscCheck(bc.IsMap() && bc["type"], comm, PETSC_ERR_USER_INPUT,
               "%s: '%s' needs a map with a 'type' (%s)", where(file, item.first).c_str(),
               label.c_str(), suggestion("", type_names).c_str());
    const std::string type = bc["type"].IsScalar() ? bc["type"].Scalar() : show(bc["type"]);
    const VariantSpec *variant = schema.variant(list, type);
    PetscCheck(variant, comm, PETSC_ERR_USER_INPUT, "%s: '%s': unknown type '%s': %s",
               where(file, bc["type"]).c_str(), label.c_str(), type.c_str(),
               suggestion(type, type_names).c_str());
    const SectionSpec *spec = &variant->spec;
    YAML::Node params;
    PetscCall(resolve_section(comm, file, *spec, bc, label, {"type"}, &params));
    if (variant->check) {
      const std::string problem = variant->check(bc, params, label, {file});
      PetscCheck(problem.empty(), comm, PETSC_ERR_USER_INPUT, "%s", problem.c_str());
    }
    YAML::Node full(YAML::NodeType::Map);
    full["type"] = type;
    for (const auto &p : params) full[p.first.Scalar()] = p.second;
    (*resolved)[name] = full;
    entries->push_back({name, type, Section(params, spec, label), item.first.Mark().line + 1});
  }
  PetscFunctionReturn(0);
}

// The sections of the schema (with their variant maps, e.g. scalar.boundaries) into resolved; an
// unknown section is an error with a suggestion.
PetscErrorCode parse_sections(MPI_Comm comm, const std::string &file, const Schema &schema,
                              const YAML::Node &root, YAML::Node &resolved,
                              std::map<std::string, std::vector<BoundaryConfig>> *maps) {
  PetscFunctionBeginUser;
  std::vector<std::string> known;
  for (const auto &s : schema.sections()) known.push_back(s.name);
  known.push_back("boundaries");
  known.push_back("design");
  known.push_back("petsc");
  known.push_back("constraints");
  known.push_back("points");
  for (const auto &item : root) {
    const std::string name = item.first.Scalar();
    PetscCheck(name == "boundaries" || name == "design" || name == "petsc" ||
                   name == "constraints" || name == "points" || schema.section(name),
               comm, PETSC_ERR_USER_INPUT, "%s: unknown section '%s': %s",
               where(file, item.first).c_str(), name.c_str(), suggestion(name, known).c_str());
  }
  PetscCheck(root["mesh"], comm, PETSC_ERR_USER_INPUT,
             "%s: missing section 'mesh' (at least mesh.file is required)", file.c_str());

  for (const auto &s : schema.sections()) {
    if (s.optional && !root[s.name]) continue;
    YAML::Node section, given = root[s.name];
    if (!s.variant_map.empty() && given && given.IsMap()) { // its map apart from its keys
      YAML::Node keys(YAML::NodeType::Map);
      for (const auto &kv : given)
        if (kv.first.Scalar() != s.variant_map) keys[kv.first] = kv.second;
      const std::string list = s.name + "." + s.variant_map;
      YAML::Node map;
      PetscCall(parse_variant_map(comm, file, schema, list, given[s.variant_map], given, &map,
                                  &(*maps)[list]));
      PetscCall(resolve_section(comm, file, s, keys, s.name, {}, &section));
      section[s.variant_map] = map;
    } else
      PetscCall(resolve_section(comm, file, s, given, s.name, {}, &section));
    resolved[s.name] = section;
  }

  PetscFunctionReturn(0);
}

// A list of maps with the keys of `spec` (constraints, points of karman optimize); `example`
// shows an entry in the message about a list that is none (or an empty one, unless
// `allow_empty`).
PetscErrorCode parse_list(MPI_Comm comm, const std::string &file, const SectionSpec &spec,
                          const YAML::Node &root, const char *example, bool allow_empty,
                          YAML::Node &resolved, std::vector<Section> *out) {
  PetscFunctionBeginUser;
  out->clear();
  const YAML::Node list = root[spec.name];
  if (!list || (list.IsNull() && allow_empty)) PetscFunctionReturn(0);
  PetscCheck(list.IsSequence() && (allow_empty || list.size() > 0), comm, PETSC_ERR_USER_INPUT,
             "%s: '%s' must be a list of maps%s (%s)", where(file, list).c_str(), spec.name.c_str(),
             allow_empty ? "" : ", at least one", example);
  YAML::Node resolved_list(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string label = spec.name + "[" + std::to_string(i) + "]";
    YAML::Node params;
    PetscCall(resolve_section(comm, file, spec, list[i], label, {}, &params));
    resolved_list.push_back(params);
    out->emplace_back(params, &spec, label);
  }
  resolved[spec.name] = resolved_list;
  PetscFunctionReturn(0);
}

// Constraints (karman optimize): a list of maps with the keys of constraint_spec()
PetscErrorCode parse_constraints(MPI_Comm comm, const std::string &file, const Schema &schema,
                                 const YAML::Node &root, YAML::Node &resolved,
                                 std::vector<Section> *constraints) {
  PetscFunctionBeginUser;
  PetscCall(parse_list(comm, file, schema.constraints(), root,
                       "{type: area, walls: [body], sense: '=', value: 1, relative: true}, ...",
                       true, resolved, constraints));
  for (std::size_t i = 0; i < constraints->size(); ++i) {
    const Section &c = (*constraints)[i];
    const std::string type = c.text("type");
    const bool geometric =
        type == "area" || type == "volume" || type == "centroid" || type == "thickness";
    PetscCheck(!geometric || !c.names("walls").empty(), comm, PETSC_ERR_USER_INPUT,
               "%s: '%s.walls' must name the walls of the body (type %s)",
               where(file, root["constraints"][i]).c_str(), c.label().c_str(), type.c_str());
  }
  PetscFunctionReturn(0);
}

// Design parameterizations: a list of {type: TYPE, ...}, each named (given or generated)
PetscErrorCode parse_designs(MPI_Comm comm, const std::string &file, const Schema &schema,
                             const YAML::Node &root, const std::vector<BoundaryConfig> *boundaries,
                             YAML::Node &resolved, std::vector<DesignConfig> *designs) {
  PetscFunctionBeginUser;
  designs->clear();
  const YAML::Node design = root["design"];
  if (design && !design.IsNull()) {
    std::vector<std::string> design_names;
    for (const auto &t : schema.variants("design")) design_names.push_back(t.spec.name);
    PetscCheck(
        design.IsSequence(), comm, PETSC_ERR_USER_INPUT,
        "%s: 'design' must be a list of parameterizations, each a map {type: TYPE, ...} (%s)",
        where(file, design).c_str(), suggestion("", design_names).c_str());
    YAML::Node resolved_design(YAML::NodeType::Sequence);
    std::map<std::string, int> of_type;
    for (std::size_t i = 0; i < design.size(); ++i) {
      const YAML::Node item = design[i];
      const std::string label = "design[" + std::to_string(i) + "]";
      PetscCheck(item.IsMap() && item["type"], comm, PETSC_ERR_USER_INPUT,
                 "%s: '%s' needs a map with a 'type' (%s)", where(file, item).c_str(),
                 label.c_str(), suggestion("", design_names).c_str());
      const std::string type = item["type"].IsScalar() ? item["type"].Scalar() : show(item["type"]);
      const VariantSpec *variant = schema.variant("design", type);
      PetscCheck(variant, comm, PETSC_ERR_USER_INPUT, "%s: '%s.type': unknown type '%s': %s",
                 where(file, item["type"]).c_str(), label.c_str(), type.c_str(),
                 suggestion(type, design_names).c_str());
      const SectionSpec *spec = &variant->spec;
      YAML::Node params;
      PetscCall(resolve_section(comm, file, *spec, item, label, {"type"}, &params));
      if (variant->check) {
        const std::string problem = variant->check(item, params, label, {file, boundaries});
        PetscCheck(problem.empty(), comm, PETSC_ERR_USER_INPUT, "%s", problem.c_str());
      }
      std::string name = params["name"].Scalar();
      if (name.empty())
        name = (variant->short_name.empty() ? type : variant->short_name) +
               std::to_string(of_type[type]);
      ++of_type[type];
      for (const auto &other : *designs)
        PetscCheck(other.name != name, comm, PETSC_ERR_USER_INPUT,
                   "%s: '%s.name': '%s' is also the name of %s (names must differ%s)",
                   where(file, item).c_str(), label.c_str(), name.c_str(), other.label.c_str(),
                   item["name"] ? "" : "; this one is generated: give it a name");
      params["name"] = name;
      YAML::Node full(YAML::NodeType::Map);
      full["type"] = type;
      for (const auto &p : params) full[p.first.Scalar()] = p.second;
      resolved_design.push_back(full);
      designs->push_back(
          {type, variant->family, name, Section(params, spec, label), label, item.Mark().line + 1});
    }
    resolved["design"] = resolved_design;
  }

  PetscFunctionReturn(0);
}

// The petsc: block: a map of PETSc options
PetscErrorCode parse_petsc(MPI_Comm comm, const std::string &file, const YAML::Node &root,
                           YAML::Node &resolved,
                           std::vector<std::pair<std::string, std::string>> *petsc) {
  PetscFunctionBeginUser;
  petsc->clear();
  const YAML::Node opts = root["petsc"];
  if (opts && !opts.IsNull()) {
    PetscCheck(opts.IsMap(), comm, PETSC_ERR_USER_INPUT,
               "%s: 'petsc' must be a map of PETSc options (e.g. ksp_type: gmres)",
               where(file, opts).c_str());
    YAML::Node resolved_opts(YAML::NodeType::Map);
    for (const auto &item : opts) {
      std::string key = item.first.Scalar();
      PetscCheck(!key.empty() && key.find_first_of(" \t=") == std::string::npos, comm,
                 PETSC_ERR_USER_INPUT, "%s: invalid PETSc option name '%s'",
                 where(file, item.first).c_str(), key.c_str());
      PetscCheck(item.second.IsScalar() || item.second.IsNull(), comm, PETSC_ERR_USER_INPUT,
                 "%s: PETSc option '%s' needs a single value, got '%s'",
                 where(file, item.second).c_str(), key.c_str(), show(item.second).c_str());
      const std::string value = item.second.IsNull() ? "" : item.second.Scalar();
      while (!key.empty() && key[0] == '-') key.erase(0, 1);
      petsc->emplace_back("-" + key, value);
      resolved_opts[key] = value;
    }
    resolved["petsc"] = resolved_opts;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode parse(MPI_Comm comm, const YAML::Node &input, const std::string &file,
                     const std::vector<std::string> &overrides, const Schema &schema,
                     YAML::Node *resolved_out, std::vector<BoundaryConfig> *boundaries,
                     std::vector<DesignConfig> *designs,
                     std::vector<std::pair<std::string, std::string>> *petsc,
                     std::vector<Section> *constraints, std::vector<Section> *points,
                     std::map<std::string, std::vector<BoundaryConfig>> *maps) {
  PetscFunctionBeginUser;
  // (not cloned: YAML::Clone drops the line marks that error messages cite)
  YAML::Node root = input;
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  PetscCheck(root.IsMap(), comm, PETSC_ERR_USER_INPUT,
             "%s: the case file must be a map of sections (mesh, fluid, boundaries, ...)",
             file.c_str());
  for (const auto &o : overrides) PetscCall(apply_override(comm, o, root));
  YAML::Node resolved(YAML::NodeType::Map);
  PetscCall(parse_sections(comm, file, schema, root, resolved, maps));
  // Boundaries: a map NAME -> {type: TYPE, ...}
  YAML::Node resolved_bcs;
  PetscCall(parse_variant_map(comm, file, schema, "boundaries", root["boundaries"], root,
                              &resolved_bcs, boundaries));
  resolved["boundaries"] = resolved_bcs;
  PetscCall(parse_constraints(comm, file, schema, root, resolved, constraints));
  PetscCall(parse_list(comm, file, schema.points(), root,
                       "{name: cruise, weight: 1, set: ['boundaries.farfield.angle_of_attack=2']}, "
                       "...",
                       false, resolved, points));
  PetscCall(parse_designs(comm, file, schema, root, boundaries, resolved, designs));
  PetscCall(parse_petsc(comm, file, root, resolved, petsc));
  *resolved_out = resolved;
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode CaseConfig::load(MPI_Comm comm, const std::string &path,
                                const std::vector<std::string> &overrides, const Schema &schema,
                                CaseConfig &out) {
  PetscFunctionBeginUser;
  std::ifstream in(path);
  PetscCheck(std::filesystem::is_regular_file(path) && in.good(), comm, PETSC_ERR_FILE_OPEN,
             "%s: case file not found or not readable", path.c_str());
  std::stringstream text;
  text << in.rdbuf();
  const std::string directory =
      std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
  PetscCall(load_text(comm, text.str(), path, directory, overrides, schema, out));
  PetscFunctionReturn(0);
}

PetscErrorCode CaseConfig::load_text(MPI_Comm comm, const std::string &text,
                                     const std::string &name, const std::string &directory,
                                     const std::vector<std::string> &overrides,
                                     const Schema &schema, CaseConfig &out) {
  PetscFunctionBeginUser;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s:%d:%d: YAML syntax error: %s", name.c_str(),
            e.mark.line + 1, e.mark.column + 1, e.msg.c_str());
  }
  const std::string duplicate = duplicate_key(name, root);
  PetscCheck(duplicate.empty(), comm, PETSC_ERR_USER_INPUT, "%s", duplicate.c_str());
  out.schema_ = &schema;
  out.file_ = name;
  out.directory_ = directory;
  PetscCall(parse(comm, root, name, overrides, schema, &out.resolved_, &out.boundaries_,
                  &out.designs_, &out.petsc_, &out.constraints_, &out.points_, &out.maps_));
  PetscFunctionReturn(0);
}

Section CaseConfig::section(const std::string &name) const {
  const SectionSpec *spec = schema_->section(name);
  if (!spec) throw std::logic_error("karman: internal error: no case section '" + name + "'");
  if (spec->optional && !resolved_[name])
    throw std::logic_error("karman: internal error: the case has no section '" + name + "'");
  return Section(resolved_[name], spec, name);
}

bool CaseConfig::has_section(const std::string &name) const {
  return schema_->section(name) && resolved_[name];
}

const std::vector<BoundaryConfig> &CaseConfig::variant_map(const std::string &list) const {
  static const std::vector<BoundaryConfig> none;
  const auto it = maps_.find(list);
  return it == maps_.end() ? none : it->second;
}

const BoundaryConfig *CaseConfig::boundary(const std::string &name) const {
  for (const auto &b : boundaries_)
    if (b.name == name) return &b;
  return nullptr;
}

std::string CaseConfig::resolve_path(const std::string &relative) const {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (std::filesystem::path(directory_) / p).lexically_normal().string();
}

std::string CaseConfig::resolved_yaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Comment("karman resolved case (defaults filled in) from " + file_);
  for (const auto &item : resolved_) {
    e << YAML::Key << item.first << YAML::Value;
    if (item.second.IsSequence()) { // design and constraints: one flow map per entry
      e << YAML::BeginSeq;
      for (const auto &entry : item.second) e << YAML::Flow << entry;
      e << YAML::EndSeq;
      continue;
    }
    e << YAML::BeginMap;
    for (const auto &kv : item.second) {
      e << YAML::Key << kv.first;
      if (kv.second.IsMap())
        e << YAML::Value << YAML::Flow << kv.second;
      else if (kv.second.IsSequence())
        e << YAML::Value << YAML::Flow << kv.second;
      else
        e << YAML::Value << kv.second;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

PetscErrorCode CaseConfig::apply_petsc_options() const {
  PetscFunctionBeginUser;
  for (const auto &[name, value] : petsc_) {
    PetscBool set;
    PetscCall(PetscOptionsHasName(nullptr, nullptr, name.c_str(), &set));
    if (!set)
      PetscCall(
          PetscOptionsSetValue(nullptr, name.c_str(), value.empty() ? nullptr : value.c_str()));
  }
  PetscFunctionReturn(0);
}

} // namespace karman::config
