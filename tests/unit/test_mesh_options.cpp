// The `mesh` section (src/mesh/mesh_options.cpp): the struct's defaults are the schema's, every
// key is read into its member, and bad values are refused naming the file, the key and the range.
#include "karman/mesh/mesh_options.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("mesh options: defaults, members, refusals", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const mesh::MeshOptions defaults, o = mesh::mesh_options().get(cfg);
  CHECK(o.file == "a.geo");
  CHECK(o.level == defaults.level);
  CHECK(o.dimension == defaults.dimension);
  CHECK(o.cache_dir == defaults.cache_dir);
  CHECK(o.refine == 0);
  REQUIRE(test::load_case("mesh: {file: b.msh, level: 3, dimension: 3, refine: 2, cache_dir: "
                          "cache}\n"
                          "boundaries: {a: {type: wall}}\n",
                          &cfg) == "");
  const mesh::MeshOptions g = mesh::mesh_options().get(cfg);
  CHECK(g.file == "b.msh");
  CHECK(g.level == 3);
  CHECK(g.dimension == 3);
  CHECK(g.cache_dir == "cache");
  CHECK(g.refine == 2);
  for (const auto &k : mesh::mesh_options().spec().keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"mesh.level=13"}),
             Catch::Contains("'mesh.level'") && Catch::Contains("12"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"mesh.dimension=1"}),
             Catch::Contains("'mesh.dimension'") && Catch::Contains(">= 2"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"mesh.refine=4"}),
             Catch::Contains("'mesh.refine'") && Catch::Contains("3"));
  CHECK_THAT(
      test::load_case("mesh: {file: a.geo, levle: 1}\nboundaries: {a: {type: wall}}\n", &cfg),
      Catch::Contains("case.yaml:1") && Catch::Contains("unknown key 'levle' in 'mesh'") &&
          Catch::Contains("did you mean 'level'"));
}
