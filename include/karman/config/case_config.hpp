// A parsed, validated case file (case.yaml) with every default filled in.
//
// Loading reads the YAML on every rank (so that a bad file fails collectively),
// applies `--set section.key=value` overrides, checks every key against the schema
// (case_schema.hpp) and reports the first problem as one line naming the file, the
// line, the key and what was expected.
#pragma once

#include "karman/config/case_schema.hpp"
#include "karman/config/case_section.hpp"
#include "karman/config/problem_keys.hpp"

#include <petscsys.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace karman::config {

struct BoundaryConfig {
  std::string name;   ///< Gmsh physical name
  std::string type;   ///< one of the schema's boundary types
  Section parameters; ///< the BC's keys, defaults filled in
  int line = 0;       ///< line in the case file (1-based)
};

/// One entry of the optional `design:` list (a shape parameterization, see
/// adjoint/shape_parameterization.hpp).  Checked at load: the keys and their types, the walls
/// (boundaries of type wall or blowing-suction), the type-specific values (FFD lattice and
/// fixed layers, Hicks-Henne positions in (0, 1), rigid variables) and the bounds (lower <=
/// initial <= upper, one value or one per variable).  What needs the mesh (a wall without
/// vertices in an FFD box, a 3D mesh for a 2D-only type) is checked by the parameterization.
struct DesignConfig {
  std::string type;   ///< one of the schema's design types
  std::string family; ///< its family: "shape" or "control" (VariantSpec::family)
  std::string name;   ///< its name (given, or generated: ffd0, hh0, rigid0, normal0, ...)
  Section parameters; ///< the type's keys, defaults filled in
  std::string label;  ///< "design[i]", for messages
  int line = 0;       ///< line in the case file (1-based)
};

class CaseConfig {
public:
  /// Reads and validates `path` on every rank of `comm`, with `overrides` of the form
  /// "section.key=value" (the value is YAML).  Collective; errors are collective.
  /// `schema` (which must outlive `out`) lists the sections and types the layers declare
  /// (optimization::case_schema()).
  static PetscErrorCode load(MPI_Comm comm, const std::string &path,
                             const std::vector<std::string> &overrides, const Schema &schema,
                             CaseConfig &out);

  /// Parses YAML text instead of a file (`name` is used in messages).
  static PetscErrorCode load_text(MPI_Comm comm, const std::string &text, const std::string &name,
                                  const std::string &directory,
                                  const std::vector<std::string> &overrides, const Schema &schema,
                                  CaseConfig &out);

  /// The schema the case was validated against.
  const Schema &schema() const { return *schema_; }
  Section section(const std::string &name) const;
  /// True if the case file has optional section `name` (SectionSpec::optional; the fixed
  /// sections are always there, with their defaults).
  bool has_section(const std::string &name) const;
  const std::vector<BoundaryConfig> &boundaries() const { return boundaries_; }
  const BoundaryConfig *boundary(const std::string &name) const;
  /// The entries of the variant map `list` of a section ("scalar.boundaries"), in file order;
  /// empty when the case has none.
  const std::vector<BoundaryConfig> &variant_map(const std::string &list) const;
  /// The `constraints:` list of karman optimize (constraint_spec() keys), in file order.
  const std::vector<Section> &constraints() const { return constraints_; }
  /// The `points:` list of a multipoint shape campaign (Schema::points() keys), in file order.
  const std::vector<Section> &points() const { return points_; }
  /// The `design:` list in the case file's order (empty when the case has none).
  const std::vector<DesignConfig> &designs() const { return designs_; }
  /// PETSc options from the `petsc:` block as (-name, value) pairs.
  const std::vector<std::pair<std::string, std::string>> &petsc_options() const { return petsc_; }
  /// Absolute path of a Path-typed key, resolved against the case file's folder.
  std::string resolve_path(const std::string &relative) const;

  const std::string &file() const { return file_; }
  const std::string &directory() const { return directory_; }
  /// The resolved configuration (defaults filled in) as YAML text.
  std::string resolved_yaml() const;
  /// The resolved keys that define the discrete residual R(w) on a given mesh, as YAML text,
  /// one "section.key: value" line each (numbers in one canonical form): the keys the schema
  /// marks as problem keys, section by section (fluid.*, reference.*, solver.stabilization,
  /// solver.upwind, ...), then every boundaries.NAME.* (type and parameters).
  /// Time-stepping, solver-tolerance, output and objective keys are not part of it; the mesh
  /// (vertex coordinates and cell connectivity) has its own hash, io::mesh_hash.
  std::string problem_keys() const;
  /// Hash (16 hex digits) of problem_keys().  Checkpoints and flow.h5 carry it with the text
  /// (attributes case_hash and case_keys) and the mesh's own hash; a restart checks both.
  std::string problem_hash() const;
  /// problem_hash() and problem_keys() as the text attributes case_hash and case_keys of a
  /// fields file (what a case reading it as its initial.file compares with its own).
  std::vector<std::pair<std::string, std::string>> problem_attributes() const;
  /// Inserts the `petsc:` block into PETSc's options database; options already set
  /// (command line) take precedence.
  PetscErrorCode apply_petsc_options() const;

private:
  const Schema *schema_ = nullptr;
  std::string file_, directory_;
  YAML::Node resolved_;
  std::vector<BoundaryConfig> boundaries_;
  std::map<std::string, std::vector<BoundaryConfig>> maps_;
  std::vector<Section> constraints_, points_;
  std::vector<DesignConfig> designs_;
  std::vector<std::pair<std::string, std::string>> petsc_;
};

} // namespace karman::config
