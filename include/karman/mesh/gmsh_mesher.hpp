// Turns the case's mesh.file into a Gmsh .msh file: a .msh is used as it is; a .geo
// is meshed by the `gmsh` program at the requested refinement level and dimension, refined
// uniformly `mesh.refine` times (a generated .geo that includes the case's, meshes it and calls
// RefineMesh: every cell split, the new boundary vertices on the geometry), and the result cached
// under a name that contains a hash of the .geo text (with the texts of the files it includes,
// `Include "name";`), the level, the dimension and the refinements, so that a second run
// reuses it.  The .msh is written to a temporary name and renamed, so concurrent runs never see
// a partial file.
#pragma once

#include "karman/config/case_config.hpp"

#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

namespace karman::mesh {

/// Path of the .msh to load for `cfg` (generated on rank 0 if needed).  Collective.
PetscErrorCode prepare_mesh_file(MPI_Comm comm, const config::CaseConfig &cfg,
                                 std::string *msh_path);

/// Meshes `geo_file` with gmsh into `msh_file`, then refines the mesh uniformly `refine` times,
/// the new boundary vertices on the geometry or (refine_on_geometry false) on the straight edges;
/// `numbers`: (name, value) pairs passed as `-setnumber name value` after the level's
/// (rank-local; returns an error message or "").
std::string run_gmsh(const std::string &geo_file, long level, long dimension,
                     const std::string &msh_file, long refine = 0, bool refine_on_geometry = true,
                     const std::vector<std::pair<std::string, std::string>> &numbers = {});

/// The (name, value) pairs of mesh.parameters items NAME=VALUE, checked against the .geo text
/// `geo_text` (its includes inlined): a name without a dot must occur in it (a DefineConstant,
/// which -setnumber overrides; Gmsh would ignore another), a name with one is a Gmsh option;
/// the value a finite number; `level` (mesh.level's) and repeated names refused.  Sorted by
/// name.  Returns an error message (naming `where` and the item) or "".
std::string gmsh_parameters(const std::vector<std::string> &items, const std::string &geo_text,
                            const std::string &where,
                            std::vector<std::pair<std::string, std::string>> *numbers);

} // namespace karman::mesh
