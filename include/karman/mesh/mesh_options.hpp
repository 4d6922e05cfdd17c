// The case file's `mesh` section, owned by the mesh layer: which mesh, at which level.
#pragma once

#include "karman/config/section_options.hpp"

#include <string>
#include <vector>

namespace karman::mesh {

struct MeshOptions {
  std::string file;               ///< .geo (meshed by gmsh) or .msh, relative to the case file
  long level = 0;                 ///< refinement level (gmsh -setnumber level N)
  long dimension = 2;             ///< space dimension
  long refine = 0;                ///< uniform refinements of the generated mesh (Gmsh RefineMesh)
  bool refine_on_geometry = true; ///< the refinements' new boundary vertices on the geometry
  std::string cache_dir; ///< folder of generated .msh files ("" : .karman-cache beside the .geo)
  /// NAME=VALUE items passed to gmsh as `-setnumber NAME VALUE` (constants of the .geo, options)
  std::vector<std::string> parameters;
};

/// The keys of `mesh` bound to MeshOptions.
const config::SectionOptions<MeshOptions> &mesh_options();

} // namespace karman::mesh
