// Typed access to one validated section (config::Section): every accessor returns the value of its
// key type (vectors and points padded to 3 components, term lists as sections with their own
// labels), a key asked for with another type is an internal error naming it, and time functions
// are built from numbers, sines, inline tables and files relative to the case folder.
#include "karman/config/case_section.hpp"
#include "karman/core/error.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <stdexcept>

using namespace karman;

namespace {

const config::SectionSpec &probe_spec() {
  using config::KeyType;
  namespace key = config::key;
  static const config::SectionSpec spec{
      "probe",
      "a section with one key of each type",
      {key::real("gain", "1.5", "a number"), key::integer("count", "2", "an integer", 0),
       key::typed("on", KeyType::Bool, "false", "a flag"),
       key::choice("mode", "fast", "a choice", {"fast", "slow"}),
       key::typed("where", KeyType::RealVector, "[0, 0]", "a vector"),
       key::typed("weights", KeyType::RealList, "[]", "numbers"),
       key::typed("walls", KeyType::NameList, "[]", "names"),
       key::typed("at", KeyType::PointList, "[]", "points"),
       key::typed("rows", KeyType::RealTable, "[]", "a table"),
       key::typed("signal", KeyType::TimeFunction, "0", "a time function"),
       key::typed("terms", KeyType::TermList, "[]", "terms")}};
  return spec;
}

config::Section probe(const std::string &yaml) {
  return config::Section(YAML::Load(yaml), &probe_spec(), "probe");
}

} // namespace

TEST_CASE("Section returns each key with its type, vectors and points padded", "[config]") {
  const config::Section s =
      probe("{gain: 0.25, count: 7, on: true, mode: slow, where: [1, 2], weights: [3, 4.5], "
            "walls: [top, bottom], at: [[1, 2], [3, 4, 5]], rows: [[1], [2, 3]]}");
  CHECK(s.label() == "probe");
  CHECK(s.real("gain") == 0.25);
  CHECK(s.integer("count") == 7);
  CHECK(s.flag("on"));
  CHECK(s.text("mode") == "slow");
  CHECK(s.vector("where") == std::array<double, 3>{1, 2, 0});
  CHECK(s.reals("weights") == std::vector<double>{3, 4.5});
  CHECK(s.names("walls") == std::vector<std::string>{"top", "bottom"});
  const auto at = s.points("at");
  REQUIRE(at.size() == 2);
  CHECK(at[0] == std::array<double, 3>{1, 2, 0});
  CHECK(at[1] == std::array<double, 3>{3, 4, 5});
  const auto rows = s.table("rows");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::vector<double>{1});
  CHECK(rows[1] == std::vector<double>{2, 3});
}

TEST_CASE("Section::terms gives one section per term, labelled by its index", "[config]") {
  const config::Section s = probe("{terms: [{gain: 2}, {gain: 3, count: 1}]}");
  const auto terms = s.terms("terms");
  REQUIRE(terms.size() == 2);
  CHECK(terms[0].label() == "probe.terms[0]");
  CHECK(terms[1].label() == "probe.terms[1]");
  CHECK(terms[0].real("gain") == 2);
  CHECK(terms[1].integer("count") == 1);
}

TEST_CASE("Section: a key asked for with another type is an internal error naming it", "[config]") {
  const config::Section s = probe("{gain: 0.25, count: 7, mode: slow}");
  REQUIRE_THROWS_WITH(s.real("count"), Catch::Contains("key 'probe.count' is not in the schema") &&
                                           Catch::Contains("requested type"));
  REQUIRE_THROWS_WITH(s.integer("speed"),
                      Catch::Contains("key 'probe.speed' is not in the schema"));
  REQUIRE_THROWS_WITH(s.text("gain"), Catch::Contains("key 'probe.gain' is not text"));
  REQUIRE_THROWS_AS(config::Section().real("gain"), std::logic_error); // no spec
}

TEST_CASE("Section::time_function: constants, sines, tables inline and from files", "[config]") {
  const std::string dir = test::work_dir("case_section");
  std::ofstream(dir + "/law.csv") << "0, 1\n2, 5\n";
  std::ofstream(dir + "/levels.csv") << "4\n6\n9\n";
  std::ofstream(dir + "/back.csv") << "1, 0\n0.5, 1\n";
  physics::TimeFunction f;
  REQUIRE(probe("{signal: 3}").time_function(PETSC_COMM_SELF, "signal", dir, &f) == 0);
  CHECK(f.is_constant());
  CHECK(f.value(10.0, 4) == 3.0);
  REQUIRE(probe("{signal: {type: sine, amplitude: 2, frequency: 0.25, offset: 1}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) == 0);
  CHECK(f.value(1.0, 0) == Approx(1.0 + 2.0 * std::sin(2 * M_PI * 0.25)).epsilon(1e-14));
  REQUIRE(probe("{signal: {type: table, points: [[0, 1], [2, 5]]}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) == 0);
  CHECK(f.value(0.0, 0) == 1.0);
  CHECK(f.value(2.0, 0) == 5.0);
  REQUIRE(probe("{signal: {type: table, file: law.csv}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) == 0);
  CHECK(f.value(2.0, 0) == 5.0);
  REQUIRE(probe("{signal: {type: steps, file: levels.csv}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) == 0);
  CHECK(f.value(0.0, 2) == 9.0);

  clear_error();
  REQUIRE(probe("{signal: {type: table, file: missing.csv}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("probe.signal: file '" + dir + "/missing.csv' not found"));
  clear_error();
  REQUIRE(probe("{signal: {type: table, file: back.csv}}")
              .time_function(PETSC_COMM_SELF, "signal", dir, &f) != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("probe.signal: table times must increase (0.5 after 1.)"));
}
