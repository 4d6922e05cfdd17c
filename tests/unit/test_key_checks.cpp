// Checks of case-file values against their key specs: numbers in range (exclusive and inclusive
// bounds, integers), choices, vectors and lists, time functions with the keys of their type, and
// the first key that a mapping repeats, with the line of both.
#include "karman/config/key_checks.hpp"

#include <catch2/catch.hpp>

using namespace karman;
using config::check_value;
using config::KeySpec;
using config::KeyType;
namespace key = config::key;

namespace {

std::string check(const KeySpec &spec, const std::string &yaml) {
  return check_value(spec, YAML::Load(yaml));
}

} // namespace

TEST_CASE("check_value: numbers within their bounds, integers whole", "[config]") {
  const KeySpec positive = key::positive("nu", "1", "");
  const std::string expected = "expected " + config::describe_expected(positive);
  CHECK(expected == "expected a number > 0");
  CHECK(check(positive, "0.5") == "");
  CHECK(check(positive, "0") == expected); // exclusive bound
  CHECK(check(positive, "-1") == expected);
  CHECK(check(positive, "abc") == expected);
  CHECK(check(positive, "[1]") == expected);
  CHECK(check(positive, ".nan") == expected);
  const KeySpec level = key::integer("level", "0", "", 0, 4);
  CHECK(check(level, "0") == ""); // inclusive bounds
  CHECK(check(level, "4") == "");
  CHECK(check(level, "5") == "expected " + config::describe_expected(level));
  CHECK(check(level, "1.5") == "expected " + config::describe_expected(level));
}

TEST_CASE("check_value: flags, text, paths, choices, vectors and lists", "[config]") {
  CHECK(check(key::typed("on", KeyType::Bool, "false", ""), "yes") == "");
  CHECK(check(key::typed("on", KeyType::Bool, "false", ""), "maybe") != "");
  CHECK(check(key::typed("file", KeyType::Path, "x", ""), "a.geo") == "");
  CHECK(check(key::typed("file", KeyType::Path, "x", ""), "''") != ""); // an empty path
  CHECK(check(key::typed("name", KeyType::String, "x", ""), "''") == "");
  const KeySpec mode = key::choice("mode", "a", "", {"steady", "unsteady"});
  CHECK(check(mode, "unsteady") == "");
  CHECK(check(mode, "stedy") == "expected " + config::describe_expected(mode));
  const KeySpec vec = key::typed("c", KeyType::RealVector, "[0, 0]", "");
  CHECK(check(vec, "[1, 2]") == "");
  CHECK(check(vec, "[1, 2, 3]") == "");
  CHECK(check(vec, "[1]") != ""); // 2 or 3 components
  CHECK(check(vec, "[1, 2, 3, 4]") != "");
  CHECK(check(key::typed("w", KeyType::RealList, "[]", ""), "[]") == "");
  CHECK(check(key::typed("w", KeyType::RealList, "[]", ""), "[1, x]") != "");
  CHECK(check(key::typed("n", KeyType::NameList, "[]", ""), "[top, bottom]") == "");
  CHECK(check(key::typed("n", KeyType::NameList, "[]", ""), "[top, [1]]") != "");
  CHECK(check(key::typed("p", KeyType::PointList, "[]", ""), "[[1, 2], [3, 4, 5]]") == "");
  CHECK(check(key::typed("p", KeyType::PointList, "[]", ""), "[[1]]") != "");
  CHECK(check(key::typed("r", KeyType::RealTable, "[]", ""), "[[1], [2, 3]]") == "");
  CHECK(check(key::typed("r", KeyType::RealTable, "[]", ""), "[[]]") != "");
  CHECK(check(key::typed("t", KeyType::TermList, "[]", ""), "[{}]") == "");
  CHECK(check(key::typed("t", KeyType::TermList, "[]", ""), "{}") != "");
}

TEST_CASE("check_value: time functions with the keys of their type", "[config]") {
  const KeySpec f = key::typed("omega", KeyType::TimeFunction, "0", "");
  CHECK(check(f, "2.5") == "");
  CHECK(check(f, "{type: sine, amplitude: 1, frequency: 2}") == "");
  CHECK(check(f, "{type: table, points: [[0, 1], [1, 2]]}") == "");
  CHECK(check(f, "{type: steps, file: levels.csv}") == "");
  CHECK(check(f, "{type: square}") ==
        "has unknown time-function type 'square' (sine, table, steps)");
  CHECK(check(f, "{type: sine, amplitude: 1}") == "needs amplitude and frequency for a sine");
  CHECK(check(f, "{type: sine, amplitude: 1, frequency: 2, period: 3}") ==
        "has unknown key 'period' for a sine time function");
  CHECK(check(f, "{type: sine, amplitude: x, frequency: 2}") == "'amplitude' must be a number");
  CHECK(check(f, "{type: steps}") == "needs 'file' (one value per time level)");
  CHECK(check(f, "{type: table}") == "needs either 'points' or 'file' for a table");
  CHECK(check(f, "{type: table, points: [[0, 1]], file: t.csv}") ==
        "needs either 'points' or 'file' for a table");
  CHECK(check(f, "{type: table, points: [[0, 1], [0, 2]]}") ==
        "'points' must have increasing times");
  CHECK(check(f, "{type: table, points: [[0, 1, 2]]}") ==
        "'points' must be a list of [t, v] pairs");
  CHECK(check(f, "[1, 2]") == "expected " + config::describe_expected(f));
}

TEST_CASE("duplicate_key names the repeated key and both lines, at any depth", "[config]") {
  CHECK(config::duplicate_key("case.yaml", YAML::Load("a: 1\nb: 2\n")) == "");
  CHECK(config::duplicate_key("case.yaml", YAML::Load("a: 1\nb: 2\na: 3\n")) ==
        "case.yaml:3: duplicate key 'a' (first given on line 1)");
  CHECK(config::duplicate_key("case.yaml", YAML::Load("fluid:\n  nu: 1\n  rho: 2\n  nu: 3\n")) ==
        "case.yaml:4: duplicate key 'nu' (first given on line 2)");
  CHECK(config::duplicate_key("c.yaml", YAML::Load("design:\n  - {x: 1}\n  - {x: 1, x: 2}\n")) ==
        "c.yaml:3: duplicate key 'x' (first given on line 3)");
}
