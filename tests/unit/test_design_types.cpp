// The shape design types (src/design/design_types.cpp): each check of a `design:` entry that its
// keys' types cannot express (walls that are wall boundaries, bump positions inside (0, 1) and
// increasing, FFD lattices and boxes, bounds and initial values per variable, unique names, known
// variables and axes) is one error naming the file, the line and the key.  (The list itself,
// defaults and generated names: test_case_config.cpp; the parameterizations:
// test_shape_parameterization.cpp.)
#include "karman/design/design_types.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

using namespace karman;

namespace {

const char *kValid = R"(
mesh:
  file: channel.geo
  level: 2
fluid:
  viscosity: 0.01
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  cylinder: {type: wall, omega: 2.0, center: [0.2, 0.2]}
petsc:
  ksp_type: gmres
  -snes_monitor:
)";

// Loads `text`; returns the error message ("" when it loaded).
std::string load_error(const std::string &text) {
  config::CaseConfig cfg;
  return test::load_case(text, &cfg);
}

} // namespace

TEST_CASE("design: bad input gives one error naming the file, the line and the key", "[design]") {
  auto with = [](const std::string &entry) {
    return load_error(std::string(kValid) + "design:\n  - " + entry + "\n");
  };
  const std::string ffd = "{type: ffd, walls: [cylinder], origin: [0, 0], size: [1, 1], ";
  REQUIRE_THAT(load_error(std::string(kValid) + "design: {type: ffd}\n"),
               Catch::Contains("'design' must be a list of parameterizations"));
  REQUIRE_THAT(with("{type: bump, walls: [cylinder]}"), Catch::Contains("case.yaml:15") &&
                                                            Catch::Contains("'design[0].type'") &&
                                                            Catch::Contains("unknown type 'bump'"));
  REQUIRE_THAT(with("{type: hicks-henne, walls: [cylinder], positions: [0.2, 1.2]}"),
               Catch::Contains("case.yaml:15") && Catch::Contains("'design[0].positions'") &&
                   Catch::Contains("bump position 1.2 is outside (0, 1)"));
  REQUIRE_THAT(with("{type: hicks-henne, walls: [cylinder], positions: [0.5, 0.2]}"),
               Catch::Contains("'design[0].positions' must increase"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], lower: [0.1], upper: [-0.1]}"),
               Catch::Contains("'design[0].lower' (0.1) is greater than 'design[0].upper' (-0.1)"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], variables: [angle, dx], lower: [-1, 0.5], "
                    "upper: [1, 0.2]}"),
               Catch::Contains("'design[0].lower' (0.5) is greater than 'design[0].upper' (0.2) "
                               "for variable 1"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], initial: [2], upper: [1]}"),
               Catch::Contains("'design[0].initial' (2") && Catch::Contains("is outside"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], lower: [-1, -1]}"),
               Catch::Contains("'design[0].lower' has 2 values; expected 1 (for all) or 3"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], scale: [1, 0]}"),
               Catch::Contains("'design[0].scale' has 2 values; expected 1 (for all) or 3"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], scale: [0]}"),
               Catch::Contains("'design[0].scale' must be positive") && Catch::Contains("got 0"));
  REQUIRE_THAT(with("{type: surface-normal, walls: [cylinder], filter_length: 0.1, upper: [1, 2]}"),
               Catch::Contains("'design[0].upper' has 2 values"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylindre]}"),
               Catch::Contains("'design[0].walls': 'cylindre' is not a boundary") &&
                   Catch::Contains("did you mean 'cylinder'"));
  REQUIRE_THAT(with("{type: rigid, walls: [inlet]}"),
               Catch::Contains("'inlet' is a velocity-inlet boundary"));
  REQUIRE_THAT(with("{type: rigid, walls: []}"),
               Catch::Contains("'design[0].walls' must name at least one wall"));
  REQUIRE_THAT(with("{type: rigid}"), Catch::Contains("missing required key 'design[0].walls'"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], variables: [angle, dw]}"),
               Catch::Contains("'design[0].variables': unknown entry 'dw'"));
  REQUIRE_THAT(with("{type: rigid, walls: [cylinder], centre: [0, 0]}"),
               Catch::Contains("unknown key 'centre' in 'design[0]'") &&
                   Catch::Contains("did you mean 'center'"));
  REQUIRE_THAT(with(ffd + "lattice: [3, 2]}"),
               Catch::Contains("'design[0].fixed_layers' = 1 leaves no free control point"));
  REQUIRE_THAT(with(ffd + "lattice: [3, 2.5]}"),
               Catch::Contains("'design[0].lattice' entries must be integers >= 2"));
  REQUIRE_THAT(with(ffd + "lattice: [3, 3], size: [1, 0]}"),
               Catch::Contains("duplicate key 'size'"));
  REQUIRE_THAT(
      with("{type: ffd, walls: [cylinder], origin: [0, 0], size: [1, 0], lattice: [3, 3]}"),
      Catch::Contains("'design[0].size' must be > 0"));
  REQUIRE_THAT(with(ffd + "lattice: [3, 3], axes: [w]}"),
               Catch::Contains("'design[0].axes': unknown entry 'w'"));
  REQUIRE_THAT(load_error(std::string(kValid) + "design:\n  - {type: rigid, walls: [cylinder]}\n"
                                                "  - {type: rigid, walls: [cylinder], name: "
                                                "rigid0}\n"),
               Catch::Contains("'design[1].name': 'rigid0' is also the name of design[0]"));
}

TEST_CASE("design types: the shape family and its short names", "[design]") {
  std::vector<std::string> names, short_names;
  for (const auto &t : design::shape_design_types()) {
    CHECK(t.family == "shape");
    CHECK(t.check);
    for (const char *key : {"name", "walls", "lower", "upper"}) CHECK(t.spec.find(key));
    names.push_back(t.spec.name);
    short_names.push_back(t.short_name);
  }
  CHECK(names ==
        std::vector<std::string>{"ffd", "hicks-henne", "rigid", "surface-normal", "radial"});
  CHECK(short_names == std::vector<std::string>{"ffd", "hh", "rigid", "normal", "radial"});
}
