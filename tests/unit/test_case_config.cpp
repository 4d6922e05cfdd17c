// Case-file parsing: defaults, overrides, the PETSc block, and one clear error per
// kind of bad input (syntax, unknown section/key, wrong type, impossible value,
// missing required key, unknown boundary type).
#include "karman/optimization/case_schema.hpp"
#include "karman/config/case_config.hpp"
#include "karman/core/error.hpp"
#include "test_helpers.hpp"

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
std::string load_error(const std::string &text, const std::vector<std::string> &overrides = {}) {
  config::CaseConfig cfg;
  clear_error();
  const PetscErrorCode ierr = config::CaseConfig::load_text(
      PETSC_COMM_WORLD, text, "case.yaml", "/cases/x", overrides, optimization::case_schema(), cfg);
  return ierr ? last_error_message() : std::string();
}

} // namespace

TEST_CASE("a valid case resolves with defaults filled in", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kValid, "case.yaml", "/cases/x", {},
                                        optimization::case_schema(), cfg) == 0);
  REQUIRE(cfg.section("fluid").real("viscosity") == 0.01);
  REQUIRE(cfg.section("fluid").real("density") == 1.0); // default
  REQUIRE(cfg.section("mesh").integer("level") == 2);
  REQUIRE(cfg.section("time").text("mode") == "steady");
  REQUIRE(cfg.resolve_path(cfg.section("mesh").text("file")) == "/cases/x/channel.geo");
  REQUIRE(cfg.boundaries().size() == 3);
  const config::BoundaryConfig *inlet = cfg.boundary("inlet");
  REQUIRE(inlet);
  REQUIRE(inlet->type == "velocity-inlet");
  physics::TimeFunction speed;
  REQUIRE(inlet->parameters.time_function(PETSC_COMM_WORLD, "velocity", "/cases/x", &speed) == 0);
  REQUIRE(speed.is_constant());
  REQUIRE(speed.value(3.0, 7) == 1.5);
  REQUIRE(inlet->parameters.text("profile_axis") == "y"); // default
  REQUIRE(inlet->parameters.reals("profile_range") == std::vector<double>{0, 0.41});
  const auto center = cfg.boundary("cylinder")->parameters.vector("center");
  REQUIRE(center[0] == 0.2);
  REQUIRE(center[2] == 0.0); // padded
  REQUIRE(cfg.petsc_options().size() == 2);
  REQUIRE(cfg.petsc_options()[0].first == "-ksp_type");
  REQUIRE(cfg.petsc_options()[1].first == "-snes_monitor");
  // the resolved YAML parses again to the same values
  config::CaseConfig again;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, cfg.resolved_yaml(), "resolved",
                                        "/cases/x", {}, optimization::case_schema(), again) == 0);
  REQUIRE(again.section("fluid").real("density") == 1.0);
  REQUIRE(again.boundary("inlet")->parameters.reals("profile_range") ==
          std::vector<double>{0, 0.41});
}

TEST_CASE("--set overrides any key, including boundary parameters", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kValid, "case.yaml", "/x",
                                        {"fluid.viscosity=0.5", "boundaries.inlet.velocity=3",
                                         "mesh.level=0", "time.mode=unsteady"},
                                        optimization::case_schema(), cfg) == 0);
  REQUIRE(cfg.section("fluid").real("viscosity") == 0.5);
  physics::TimeFunction speed;
  REQUIRE(cfg.boundary("inlet")->parameters.time_function(PETSC_COMM_WORLD, "velocity", "/x",
                                                          &speed) == 0);
  REQUIRE(speed.value(0.0, 0) == 3.0);
  REQUIRE(cfg.section("mesh").integer("level") == 0);
  REQUIRE(cfg.section("time").text("mode") == "unsteady");
  REQUIRE_THAT(load_error(kValid, {"fluid.viscosty=0.5"}),
               Catch::Contains("unknown key 'viscosty'") &&
                   Catch::Contains("did you mean 'viscosity'"));
  REQUIRE_THAT(load_error(kValid, {"fluid.viscosity"}),
               Catch::Contains("expected section.key=value"));
  REQUIRE_THAT(load_error(kValid, {"fluid.viscosity=-1"}), Catch::Contains("'fluid.viscosity'") &&
                                                               Catch::Contains("> 0") &&
                                                               Catch::Contains("-1"));
}

TEST_CASE("PETSc block: command-line options take precedence", "[config]") {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kValid, "case.yaml", "/x", {},
                                        optimization::case_schema(), cfg) == 0);
  REQUIRE(PetscOptionsSetValue(nullptr, "-ksp_type", "bcgs") ==
          0); // as if given on the command line
  REQUIRE(cfg.apply_petsc_options() == 0);
  char value[64];
  PetscBool set;
  REQUIRE(PetscOptionsGetString(nullptr, nullptr, "-ksp_type", value, sizeof(value), &set) == 0);
  REQUIRE(std::string(value) == "bcgs");
  PetscBool has;
  REQUIRE(PetscOptionsHasName(nullptr, nullptr, "-snes_monitor", &has) == 0);
  REQUIRE(has);
  PetscOptionsClearValue(nullptr, "-ksp_type");
  PetscOptionsClearValue(nullptr, "-snes_monitor");
}

TEST_CASE("bad case files give one clear error naming file, line, key and expectation",
          "[config]") {
  // YAML syntax error: file and line
  REQUIRE_THAT(load_error("mesh:\n  file: a.geo\nfluid: [1, 2\n"),
               Catch::Contains("case.yaml:") && Catch::Contains("YAML syntax error"));
  // unknown section, with a suggestion
  REQUIRE_THAT(load_error(std::string(kValid) + "fluids: {density: 1}\n"),
               Catch::Contains("unknown section 'fluids'") &&
                   Catch::Contains("did you mean 'fluid'"));
  // unknown key, with line number
  REQUIRE_THAT(load_error("mesh: {file: a.geo}\nfluid:\n  viscosity: 1\n  colour: red\nboundaries: "
                          "{a: {type: wall}}\n"),
               Catch::Contains("case.yaml:4") &&
                   Catch::Contains("unknown key 'colour' in 'fluid'"));
  // wrong type
  REQUIRE_THAT(load_error("mesh: {file: a.geo, level: two}\nboundaries: {a: {type: wall}}\n"),
               Catch::Contains("'mesh.level'") && Catch::Contains("expected an integer") &&
                   Catch::Contains("got 'two'"));
  // impossible value
  REQUIRE_THAT(
      load_error("mesh: {file: a.geo}\nfluid: {viscosity: -1e-3}\nboundaries: {a: {type: wall}}\n"),
      Catch::Contains("case.yaml:2") && Catch::Contains("'fluid.viscosity' expected a number > 0"));
  REQUIRE_THAT(
      load_error("mesh: {file: a.geo}\nsolver: {upwind: 1.5}\nboundaries: {a: {type: wall}}\n"),
      Catch::Contains("case.yaml:2") &&
          Catch::Contains("'solver.upwind' expected a number >= 0 and <= 1"));
  // missing required key
  REQUIRE_THAT(load_error("mesh: {level: 1}\nboundaries: {a: {type: wall}}\n"),
               Catch::Contains("missing required key 'mesh.file'"));
  REQUIRE_THAT(load_error("mesh: {file: a.geo}\nboundaries: {in: {type: velocity-inlet}}\n"),
               Catch::Contains("missing required key 'boundaries.in.velocity'"));
  // boundaries: missing, unknown type, unknown parameter
  REQUIRE_THAT(load_error("mesh: {file: a.geo}\n"),
               Catch::Contains("missing or empty section 'boundaries'"));
  REQUIRE_THAT(load_error("mesh: {file: a.geo}\nboundaries: {a: {type: wal}}\n"),
               Catch::Contains("unknown type 'wal'") && Catch::Contains("did you mean 'wall'"));
  REQUIRE_THAT(load_error("mesh: {file: a.geo}\nboundaries: {a: {type: wall, omgea: 1}}\n"),
               Catch::Contains("unknown key 'omgea' in 'boundaries.a'") &&
                   Catch::Contains("did you mean 'omega'"));
  // choices and vectors
  REQUIRE_THAT(
      load_error("mesh: {file: a.geo}\ntime: {mode: transient}\nboundaries: {a: {type: wall}}\n"),
      Catch::Contains("one of {steady, unsteady}"));
  REQUIRE_THAT(
      load_error("mesh: {file: a.geo}\nboundaries: {a: {type: wall, velocity: [1, 2, 3, 4]}}\n"),
      Catch::Contains("a vector [x, y] or [x, y, z]"));
  // the case file is a list, not a map
  REQUIRE_THAT(load_error("- a\n- b\n"), Catch::Contains("must be a map of sections"));
}

TEST_CASE("design: a list of parameterizations with defaults, generated names, checked values",
          "[config]") {
  const std::string design = std::string(kValid) + R"(
design:
  - {type: ffd, walls: [cylinder], origin: [0.1, 0.1], size: [0.2, 0.2], lattice: [4, 3]}
  - type: hicks-henne
    walls: [cylinder]
    positions: [0.2, 0.6]
    lower: [-0.01]
    upper: [0.01, 0.02, 0.03, 0.04]
  - {type: rigid, name: pitch, walls: [cylinder], variables: [angle]}
  - {type: ffd, walls: [cylinder], origin: [0, 0], size: [1, 1], lattice: [3, 3], axes: [x, y]}
)";
  config::CaseConfig cfg;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, design, "case.yaml", "/x", {},
                                        optimization::case_schema(), cfg) == 0);
  const auto &d = cfg.designs();
  REQUIRE(d.size() == 4);
  REQUIRE(d[0].type == "ffd");
  REQUIRE(d[0].name == "ffd0");
  REQUIRE(d[0].label == "design[0]");
  REQUIRE(d[0].parameters.names("axes") == std::vector<std::string>{"y"}); // default
  REQUIRE(d[0].parameters.integer("fixed_layers") == 1);                   // default
  REQUIRE(d[1].name == "hh0");
  REQUIRE(d[1].parameters.real("width") == 3.0);
  REQUIRE(d[1].parameters.text("surfaces") == "both");
  REQUIRE(d[2].name == "pitch");
  REQUIRE(d[3].name == "ffd1");
  // the design does not change the residual
  config::CaseConfig plain;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kValid, "case.yaml", "/x", {},
                                        optimization::case_schema(), plain) == 0);
  REQUIRE(plain.designs().empty());
  REQUIRE(cfg.problem_hash() == plain.problem_hash());
  // the resolved YAML (with the generated names) parses again to the same design
  config::CaseConfig again;
  clear_error();
  const PetscErrorCode ierr =
      config::CaseConfig::load_text(PETSC_COMM_WORLD, cfg.resolved_yaml(), "resolved", "/x", {},
                                    optimization::case_schema(), again);
  INFO(last_error_message() << "\n" << cfg.resolved_yaml());
  REQUIRE(ierr == 0);
  REQUIRE(again.designs().size() == 4);
  REQUIRE(again.designs()[3].name == "ffd1");
  REQUIRE(again.designs()[1].parameters.reals("upper") ==
          std::vector<double>{0.01, 0.02, 0.03, 0.04});
  // karman --help lists the types and their keys
  REQUIRE_THAT(optimization::case_schema().help(),
               Catch::Contains("type: hicks-henne") && Catch::Contains("filter_length"));
}

TEST_CASE("a missing case file is an error naming it", "[config]") {
  config::CaseConfig cfg;
  clear_error();
  REQUIRE(config::CaseConfig::load(PETSC_COMM_WORLD, "/nonexistent/case.yaml", {},
                                   optimization::case_schema(), cfg) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("/nonexistent/case.yaml: case file not found"));
}

TEST_CASE("constraints: a list of geometric and flow constraints, checked at load", "[config]") {
  auto load = [](const std::string &constraints, config::CaseConfig *cfg) {
    clear_error();
    return config::CaseConfig::load_text(PETSC_COMM_WORLD, std::string(kValid) + constraints,
                                         "case.yaml", "/x", {}, optimization::case_schema(), *cfg);
  };
  config::CaseConfig cfg;
  REQUIRE(load(R"(
constraints:
  - {type: area, walls: [cylinder], sense: "=", value: 1.0, relative: true}
  - {type: lift, walls: [cylinder], sense: ">=", value: 0.3}
)",
               &cfg) == 0);
  REQUIRE(cfg.constraints().size() == 2);
  CHECK(cfg.constraints()[0].text("type") == "area");
  CHECK(cfg.constraints()[0].flag("relative"));
  CHECK(cfg.constraints()[1].text("sense") == ">=");
  CHECK(cfg.constraints()[1].real("value") == 0.3);
  CHECK(cfg.constraints()[1].names("walls") == std::vector<std::string>{"cylinder"});
  CHECK(cfg.constraints()[1].vector("lift_direction")[1] == 1.0); // the objective's keys
  // the resolved case keeps them
  CHECK_THAT(cfg.resolved_yaml(), Catch::Contains("constraints"));
  // errors name the entry and the key
  CHECK(load("constraints:\n  - {type: area, walls: [cylinder], sense: '>', value: 1}\n", &cfg) !=
        0);
  CHECK_THAT(last_error_message(), Catch::Contains("constraints[0].sense"));
  CHECK(load("constraints:\n  - {type: area, walls: [cylinder], sense: '='}\n", &cfg) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("value"));
  CHECK(load("constraints:\n  - {type: area, sense: '=', value: 1}\n", &cfg) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("constraints[0].walls"));
  CHECK(load("constraints:\n  - {type: area, walls: [c], sense: '=', value: 1, stattion: 2}\n",
             &cfg) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("stattion") && Catch::Contains("station"));
  CHECK(load("constraints: {type: area}\n", &cfg) != 0);
  CHECK_THAT(last_error_message(), Catch::Contains("list"));
}
