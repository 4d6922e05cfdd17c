// The flow's sections (src/discretization/flow_options.cpp: fluid, reference, initial and the
// scheme keys of solver): the structs' defaults are the schema's, every key is read into its
// member, the keys that define the residual are problem keys, and bad values are refused naming
// the file and the key.
#include "karman/discretization/flow_options.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;
using namespace karman::discretization;

TEST_CASE("flow options: defaults equal the structs'", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(test::kMinimalCase, &cfg) == "");
  const FluidOptions fluid0, fluid = fluid_options().get(cfg);
  CHECK(fluid.density == fluid0.density);
  CHECK(fluid.viscosity == fluid0.viscosity);
  const ReferenceOptions ref0, ref = reference_options().get(cfg);
  CHECK(ref.velocity == ref0.velocity);
  CHECK(ref.length == ref0.length);
  CHECK(ref.area == ref0.area);
  CHECK(ref.pressure == ref0.pressure);
  for (int i = 0; i < 3; ++i) CHECK(ref.moment_center[i] == ref0.moment_center[i]);
  const InitialOptions init0, init = initial_options().get(cfg);
  CHECK(init.pressure == init0.pressure);
  CHECK(init.file == init0.file);
  for (int i = 0; i < 3; ++i) CHECK(init.velocity[i] == init0.velocity[i]);
  const SchemeOptions scheme0, scheme = scheme_options().get(cfg);
  CHECK(scheme.stabilization == scheme0.stabilization);
  CHECK(scheme.upwind == scheme0.upwind);
}

TEST_CASE("flow options: members, problem keys, refusals", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(std::string(test::kMinimalCase) + R"(fluid: {density: 2, viscosity: 0.5}
reference: {velocity: 3, length: 4, area: 5, moment_center: [1, 2], pressure: -1}
initial: {velocity: [0.5, -0.5], pressure: 7, file: init.h5}
solver: {stabilization: 0.5, upwind: 0.25}
)",
                          &cfg) == "");
  const FluidOptions fluid = fluid_options().get(cfg);
  CHECK((fluid.density == 2 && fluid.viscosity == 0.5));
  const ReferenceOptions ref = reference_options().get(cfg);
  CHECK((ref.velocity == 3 && ref.length == 4 && ref.area == 5 && ref.pressure == -1));
  CHECK((ref.moment_center[0] == 1 && ref.moment_center[1] == 2 && ref.moment_center[2] == 0));
  const InitialOptions init = initial_options().get(cfg);
  CHECK((init.velocity[0] == 0.5 && init.velocity[1] == -0.5 && init.pressure == 7));
  CHECK(init.file == "init.h5");
  const SchemeOptions scheme = scheme_options().get(cfg);
  CHECK((scheme.stabilization == 0.5 && scheme.upwind == 0.25));
  // the residual's constants are problem keys (a restart checks them), the initial state is not
  const std::string keys = cfg.problem_keys();
  CAPTURE(keys);
  for (const char *k : {"viscosity", "density", "stabilization", "upwind"})
    CHECK(keys.find(k) != std::string::npos);
  CHECK(keys.find("init.h5") == std::string::npos);
  for (const auto *spec : {&fluid_options().spec(), &reference_options().spec(),
                           &initial_options().spec(), &scheme_options().spec()})
    for (const auto &k : spec->keys) CHECK(!k.help.empty());
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"fluid.density=0"}),
             Catch::Contains("'fluid.density'") && Catch::Contains("> 0"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"reference.area=-1"}),
             Catch::Contains("'reference.area'") && Catch::Contains(">= 0"));
  CHECK_THAT(test::load_case(test::kMinimalCase, &cfg, {"solver.upwind=-0.1"}),
             Catch::Contains("'solver.upwind'") && Catch::Contains(">= 0 and <= 1"));
  CHECK_THAT(test::load_case(std::string(test::kMinimalCase) + "initial: {velocity: fast}\n", &cfg),
             Catch::Contains("case.yaml:3") && Catch::Contains("'initial.velocity'"));
}
