// The `output` section (src/driver/output_options.cpp): the struct's defaults are the schema's,
// every key is read into its member, and bad values are refused naming the file and the key.
#include "karman/driver/output_options.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("output options: defaults, members, refusals", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const driver::OutputOptions defaults, o = driver::output_options().get(cfg);
  CHECK(o.vtk == defaults.vtk);
  CHECK(o.vtk_every == defaults.vtk_every);
  CHECK(o.checkpoint_every == defaults.checkpoint_every);
  CHECK(o.surfaces == defaults.surfaces);
  CHECK(o.hdf5 == defaults.hdf5);
  REQUIRE(test::load_case(std::string(test::kMinimalCase) +
                              "output: {vtk: false, vtk_every: 3, checkpoint_every: 0, "
                              "surfaces: [a], hdf5: false}\n",
                          &cfg) == "");
  const driver::OutputOptions g = driver::output_options().get(cfg);
  CHECK(!g.vtk);
  CHECK(g.vtk_every == 3);
  CHECK(g.checkpoint_every == 0);
  CHECK(g.surfaces == std::vector<std::string>{"a"});
  CHECK(!g.hdf5);
  for (const auto &k : driver::output_options().spec().keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"output.vtk_every=0"}),
             Catch::Contains("'output.vtk_every'") && Catch::Contains(">= 1"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"output.checkpoint_every=-1"}),
             Catch::Contains("'output.checkpoint_every'") && Catch::Contains(">= 0"));
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) + "output: {vtk: maybe}\n", &cfg),
             Catch::Contains("case.yaml:3") && Catch::Contains("'output.vtk'"));
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) + "output: {vtk_evry: 2}\n", &cfg),
             Catch::Contains("unknown key 'vtk_evry' in 'output'") &&
                 Catch::Contains("did you mean 'vtk_every'"));
}
