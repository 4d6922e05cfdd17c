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
          .key(integer("refine", "0",
                       "uniform refinements of the mesh gmsh makes from the .geo (Gmsh "
                       "RefineMesh: every cell split into 4 in 2D, 8 in 3D, the new boundary "
                       "vertices placed on the geometry's curves and surfaces): the nested finer "
                       "mesh of an error estimate",
                       0, 3),
               &MeshOptions::refine)
          .key(typed("refine_on_geometry", KeyType::Bool, "true",
                     "mesh.refine: the new boundary vertices on the geometry (true) or on the "
                     "straight edges and flat faces they split (false: Gmsh's "
                     "Mesh.SecondOrderLinear; the error estimate's fallback when the projected "
                     "vertices tangle cells at a curved wall)"),
               &MeshOptions::refine_on_geometry)
          .key(typed("cache_dir", KeyType::String, "''",
                     "folder for generated .msh files; empty: .karman-cache beside the .geo"),
               &MeshOptions::cache_dir)
          .key(typed("parameters", KeyType::NameList, "[]",
                     "NAME=VALUE items passed to gmsh with the .geo as `-setnumber NAME VALUE`: "
                     "a DefineConstant of the .geo (or of a file it includes) or a Gmsh option "
                     "(a name with a dot, e.g. Mesh.Algorithm3D=10); part of the mesh cache's key"),
               &MeshOptions::parameters);
  return options;
}

} // namespace karman::mesh
