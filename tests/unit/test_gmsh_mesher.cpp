// .geo -> .msh (src/mesh/gmsh_mesher.cpp): a .geo is meshed once into the cache folder under a
// name with the hash of its text (and of the files it includes), level and dimension (a second
// call reuses the file; another text, also of an included file, or level is another file); a .msh
// is used as it is; mesh.refine gives its own file with every cell split (8 hexahedra per
// hexahedron); a missing file, another extension, mesh.refine of a .msh and a .geo that gmsh
// cannot mesh (also refined) are refused with a message naming the file.
#include "karman/core/error.hpp"
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace karman;
namespace fs = std::filesystem;

namespace {

std::string prepared(const std::string &dir, const std::string &mesh, std::string *error) {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD, "mesh: " + mesh + "\nboundaries: {xmin: {type: wall}}\n",
              "case.yaml", dir, {}, optimization::case_schema(), cfg) == 0);
  std::string path;
  clear_error();
  *error = mesh::prepare_mesh_file(PETSC_COMM_WORLD, cfg, &path) ? last_error_message() : "";
  clear_error();
  return path;
}

} // namespace

TEST_CASE("gmsh mesher: cached by content, level, dimension and refinement", "[mesh]") {
  const std::string dir = test::work_dir("gmsh-mesher");
  fs::copy_file(test::data_file("box-hex.geo"), dir + "/box.geo");
  std::string error;
  const std::string first =
      prepared(dir, "{file: box.geo, dimension: 3, cache_dir: cache}", &error);
  REQUIRE(error == "");
  CHECK(fs::path(first).parent_path() == fs::path(dir) / "cache");
  CHECK(fs::path(first).filename().string().rfind("box-L0-", 0) == 0);
  REQUIRE(fs::file_size(first) > 0);
  const auto written = fs::last_write_time(first);
  CHECK(prepared(dir, "{file: box.geo, dimension: 3, cache_dir: cache}", &error) == first);
  CHECK(fs::last_write_time(first) == written); // reused, not meshed again
  // the default cache folder: .karman-cache beside the .geo
  CHECK(fs::path(prepared(dir, "{file: box.geo, dimension: 3}", &error)).parent_path() ==
        fs::path(dir) / ".karman-cache");
  // another text, another file
  std::ofstream(dir + "/box.geo", std::ios::app) << "// changed\n";
  const std::string changed =
      prepared(dir, "{file: box.geo, dimension: 3, cache_dir: cache}", &error);
  CHECK(error == "");
  CHECK(changed != first);
  // a file that includes box.geo: another file when box.geo changes
  std::ofstream(dir + "/outer.geo") << "Include \"box.geo\";\n";
  const std::string outer =
      prepared(dir, "{file: outer.geo, dimension: 3, cache_dir: cache}", &error);
  CHECK(error == "");
  std::ofstream(dir + "/box.geo", std::ios::app) << "// changed again\n";
  CHECK(prepared(dir, "{file: outer.geo, dimension: 3, cache_dir: cache}", &error) != outer);
  // the mesh loads: 3^3 hexahedra
  mesh::Mesh m;
  clear_error();
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, changed,
                          {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}, "test", &m) == 0);
  CHECK(m.n_global_cells == 27);
  // refined once (mesh.refine): its own cache file, every hexahedron split into 8
  const std::string refined =
      prepared(dir, "{file: box.geo, dimension: 3, refine: 1, cache_dir: cache}", &error);
  CHECK(error == "");
  CHECK(fs::path(refined).filename().string().rfind("box-L0r1-", 0) == 0);
  CHECK(prepared(dir, "{file: box.geo, dimension: 3, cache_dir: cache}", &error) != refined);
  mesh::Mesh r;
  REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, refined,
                          {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}, "test", &r) == 0);
  CHECK(r.n_global_cells == 8 * 27);
  CHECK(!fs::exists(refined + ".refine.geo")); // the generated script is removed
  // a .msh is used as it is
  CHECK(prepared(dir, "{file: cache/" + fs::path(first).filename().string() + "}", &error) ==
        dir + "/cache/" + fs::path(first).filename().string());
}

TEST_CASE("gmsh mesher: bad mesh files are refused naming them", "[mesh]") {
  const std::string dir = test::work_dir("gmsh-mesher-bad");
  std::string error;
  prepared(dir, "{file: nope.geo}", &error);
  CHECK(error == "case.yaml: mesh.file 'nope.geo' not found (looked for " + dir + "/nope.geo)");
  prepared(dir, "{file: box.stl}", &error);
  CHECK(error == "case.yaml: mesh.file 'box.stl' must be a Gmsh .geo or .msh file");
  // mesh.refine places new boundary vertices on the geometry: a .geo only
  prepared(dir, "{file: box.msh, refine: 1}", &error);
  CHECK(error == "case.yaml: mesh.refine 1 needs a Gmsh .geo as mesh.file (the new boundary "
                 "vertices are placed on its geometry), got 'box.msh'");
  std::ofstream(dir + "/broken.geo") << "Point(1) = {0, 0, 0;\n";
  CHECK_THAT(mesh::run_gmsh(dir + "/broken.geo", 0, 2, dir + "/broken.msh"),
             Catch::StartsWith("gmsh failed on " + dir + "/broken.geo (level 0)"));
  CHECK(!fs::exists(dir + "/broken.msh"));
  CHECK_THAT(mesh::run_gmsh(dir + "/broken.geo", 0, 2, dir + "/broken.msh", 1),
             Catch::StartsWith("gmsh failed on " + dir + "/broken.geo (level 0, refined 1 times)"));
  CHECK(!fs::exists(dir + "/broken.msh"));
}
