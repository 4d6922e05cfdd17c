// The case-file schema: the Schema type and its key helpers (src/config/case_schema.cpp) and the
// assembled schema of every layer (src/optimization/case_schema.cpp):
//  - add_keys merges a section's declarations in order, sections keep their first order;
//  - describe_expected and suggestion give the texts of the error messages;
//  - the assembled schema has every layer's sections and list types, no key twice in a section
//    (also in a constraint entry, which has the objective's keys), the keys that objective types
//    share declared alike, and help() lists every section and key.
#include "karman/adjoint/objective_terms.hpp"
#include "karman/config/case_schema.hpp"
#include "karman/optimization/case_schema.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace karman;
using namespace karman::config;

TEST_CASE("schema: sections merge their declarations; lookups", "[config]") {
  Schema s;
  s.add_keys("fluid", "the fluid", {key::positive("density", "1", "rho")})
      .add_keys("mesh", "the mesh", {key::typed("file", KeyType::Path, "", "file")})
      .add_keys("fluid", "ignored", {key::real("viscosity", "1e-3", "nu")});
  REQUIRE(s.sections().size() == 2);
  CHECK(s.sections()[0].name == "fluid");
  CHECK(s.sections()[0].help == "the fluid");
  REQUIRE(s.section("fluid")->keys.size() == 2);
  CHECK(s.section("fluid")->keys[1].name == "viscosity");
  CHECK(s.section("fluid")->find("density")->min == 0);
  CHECK(s.section("fluid")->find("colour") == nullptr);
  CHECK(s.section("mesh")->find("file")->required());
  CHECK(!s.section("fluid")->find("density")->required());
  CHECK(s.section("time") == nullptr);
  CHECK(s.variants("boundaries").empty());
  CHECK(s.variant("boundaries", "wall") == nullptr);
}

TEST_CASE("schema: the texts of error messages", "[config]") {
  CHECK(describe_expected(key::positive("a", "1", "")) == "a number > 0");
  CHECK(describe_expected(key::nonnegative("a", "1", "")) == "a number >= 0");
  CHECK(describe_expected(key::bounded("a", "1", "", 0, 1)) == "a number >= 0 and <= 1");
  CHECK(describe_expected(key::integer("a", "1", "", 1, 12)) == "an integer >= 1 and <= 12");
  CHECK(describe_expected(key::choice("a", "x", "", {"x", "y"})) == "one of {x, y}");
  CHECK(suggestion("viscosty", {"density", "viscosity"}) ==
        "did you mean 'viscosity'? (known: density, viscosity)");
  CHECK(suggestion("colour", {"density", "viscosity"}) == "known: density, viscosity");
}

TEST_CASE("schema: every layer's sections and types, no key declared twice", "[config]") {
  const Schema &s = optimization::case_schema();
  for (const char *name : {"mesh", "fluid", "reference", "initial", "time", "solver", "output",
                           "adjoint", "objective", "optimization", "scalar"})
    CHECK(s.section(name) != nullptr);
  for (const char *type : {"wall", "velocity-inlet", "pressure-outlet", "symmetry"})
    CHECK(s.variant("boundaries", type) != nullptr);
  for (const char *type : {"parameter", "time-function", "per-step"})
    CHECK(s.variant("design", type) != nullptr);
  const std::string help = s.help();
  auto unique = [&](const SectionSpec &sec) {
    std::set<std::string> seen;
    for (const auto &k : sec.keys) {
      CAPTURE(sec.name, k.name);
      CHECK(seen.insert(k.name).second);
      CHECK(!k.help.empty());
    }
  };
  for (const auto &sec : s.sections()) {
    unique(sec);
    CHECK(help.find(sec.name) != std::string::npos);
    for (const auto &k : sec.keys) {
      CAPTURE(sec.name, k.name);
      CHECK(help.find(k.name) != std::string::npos);
    }
  }
  unique(s.constraints());
  for (const char *list : {"boundaries", "design"})
    for (const auto &v : s.variants(list)) unique(v.spec);
  // a key that several objective types share is declared once: they must declare it alike
  const SectionSpec *objective = s.section("objective");
  for (const auto &t : adjoint::objective_types())
    for (const auto &k : t.keys) {
      const KeySpec *declared = objective->find(k.name);
      CAPTURE(t.name, k.name);
      REQUIRE(declared);
      CHECK(declared->type == k.type);
      CHECK(declared->default_yaml == k.default_yaml);
    }
}
