// The `mesh` section (see include/karman/mesh/mesh_options.hpp).
#include "karman/mesh/mesh_options.hpp"

namespace karman::mesh {

const config::SectionOptions<MeshOptions> &mesh_options() {
  using namespace config::key;
  using config::KeyType;
  static const auto options =
      config::SectionOptions<MeshOptions>("mesh", "the computational mesh")
          .key(typed("file", KeyType::Path, "",
                     "Gmsh geometry (.geo, meshed by gmsh) or mesh (.msh), relative to the case "
                     "file"),
               &MeshOptions::file)
          .key(integer("level", "0", "refinement level, passed to gmsh as `-setnumber level N`", 0,
                       12),
               &MeshOptions::level)
          .key(integer("dimension", "2", "space dimension of the mesh (2 or 3)", 2, 3),
               &MeshOptions::dimension)
          .key(typed("cache_dir", KeyType::String, "''",
                     "folder for generated .msh files; empty: .karman-cache beside the .geo"),
               &MeshOptions::cache_dir);
  return options;
}

} // namespace karman::mesh
