// .geo -> .msh (src/mesh/gmsh_mesher.cpp): a .geo is meshed once into the cache folder under a
// name with the hash of its text (and of the files it includes), level and dimension (a second
// call reuses the file; another text, also of an included file, or level is another file); a .msh
// is used as it is; mesh.refine gives its own file with every cell split (8 hexahedra per
// hexahedron); mesh.parameters (gmsh -setnumber) change the mesh and are part of the cache's
// key; a missing file, another extension, mesh.refine or mesh.parameters of a .msh, a .geo that
// gmsh cannot mesh (also refined) and parameters gmsh would ignore or cannot read are refused
// with a message naming the file and the item.
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

TEST_CASE("gmsh mesher: mesh.parameters are gmsh -setnumber values", "[mesh]") {
  const std::string dir = test::work_dir("gmsh-mesher-parameters");
  // a .geo with its own constant n (cells per edge) beside level, including box-hex's layout
  std::ofstream(dir + "/cube.geo")
      << "DefineConstant[ level = {0, Name \"level\"} ];\n"
         "DefineConstant[ n = {3, Name \"n\"} ];\n"
         "SetFactory(\"OpenCASCADE\");\nBox(1) = {0, 0, 0, 1, 1, 1};\n"
         "Transfinite Curve {:} = n * 2^level + 1;\nTransfinite Surface {:};\n"
         "Recombine Surface {:};\nTransfinite Volume {1};\n"
         "Physical Surface(\"xmin\") = {1};\nPhysical Surface(\"xmax\") = {2};\n"
         "Physical Surface(\"ymin\") = {3};\nPhysical Surface(\"ymax\") = {4};\n"
         "Physical Surface(\"zmin\") = {5};\nPhysical Surface(\"zmax\") = {6};\n"
         "Physical Volume(\"fluid\") = {1};\n";
  std::string error;
  const auto cells = [&](const std::string &path) {
    mesh::Mesh m;
    clear_error();
    REQUIRE(mesh::load_mesh(PETSC_COMM_WORLD, path,
                            {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}, "test", &m) == 0);
    return m.n_global_cells;
  };
  const std::string three = prepared(dir, "{file: cube.geo, dimension: 3}", &error);
  REQUIRE(error == "");
  const std::string two =
      prepared(dir, "{file: cube.geo, dimension: 3, parameters: [n=2]}", &error);
  REQUIRE(error == "");
  const std::string four = prepared(
      dir, "{file: cube.geo, dimension: 3, parameters: ['n=4', Mesh.Smoothing=2]}", &error);
  REQUIRE(error == "");
  CHECK(cells(three) == 27);
  CHECK(cells(two) == 8);
  CHECK(cells(four) == 64);
  CHECK(two != three); // the cache tells them apart, and reuses each
  CHECK(four != two);
  CHECK(prepared(dir, "{file: cube.geo, dimension: 3, parameters: [n=2]}", &error) == two);
  // refused: a name the .geo does not have, a value that is not a number, the level, twice, a .msh
  prepared(dir, "{file: cube.geo, parameters: [m=2]}", &error);
  CHECK(error == "case.yaml: mesh.parameters item 'm=2': 'm' does not occur in the .geo (nor in "
                 "a file it includes): gmsh would ignore it");
  prepared(dir, "{file: cube.geo, parameters: [n=two]}", &error);
  CHECK(error == "case.yaml: mesh.parameters item 'n=two': the value 'two' is not a finite number");
  prepared(dir, "{file: cube.geo, parameters: [n]}", &error);
  CHECK(error == "case.yaml: mesh.parameters item 'n': expected NAME=VALUE (a Gmsh constant or "
                 "option name, a number)");
  prepared(dir, "{file: cube.geo, parameters: [level=1]}", &error);
  CHECK(error == "case.yaml: mesh.parameters item 'level=1': the level is mesh.level's");
  prepared(dir, "{file: cube.geo, parameters: [n=2, n=3]}", &error);
  CHECK(error == "case.yaml: mesh.parameters item 'n=3': 'n' is given twice");
  prepared(dir, "{file: box.msh, parameters: [n=2]}", &error);
  CHECK(error == "case.yaml: mesh.parameters (gmsh -setnumber) need a Gmsh .geo as mesh.file, "
                 "got 'box.msh'");
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
