// Number tables in CSV-like text (src/core/numeric_table.cpp): every separator, a header line
// skipped, empty lines skipped, and a wrong line refused with its number and the expected width.
#include "karman/core/numeric_table.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("numeric table: separators, header, empty lines", "[core]") {
  std::vector<std::vector<double>> rows;
  REQUIRE(parse_numeric_rows("time,value\n0, 1.5\n\n1;-2e-3\r\n2\t3\n3 4\n", 2, &rows) == "");
  const std::vector<std::vector<double>> expected = {{0, 1.5}, {1, -2e-3}, {2, 3}, {3, 4}};
  CHECK(rows == expected);
  // rows are replaced, not appended
  REQUIRE(parse_numeric_rows("7 8 9\n", 3, &rows) == "");
  CHECK(rows == std::vector<std::vector<double>>{{7, 8, 9}});
  REQUIRE(parse_numeric_rows("", 3, &rows) == "");
  CHECK(rows.empty());
}

TEST_CASE("numeric table: a wrong line is refused with its number", "[core]") {
  std::vector<std::vector<double>> rows;
  CHECK(parse_numeric_rows("0 1\n1 2\n2 3 4\n", 2, &rows) == "line 3: expected 2 number(s)");
  CHECK(parse_numeric_rows("0 1\n1\n", 2, &rows) == "line 2: expected 2 number(s)");
  // text is a header on the first line only
  CHECK(parse_numeric_rows("t v\n0 1\nx 2\n", 2, &rows) == "line 3: expected 2 number(s)");
  CHECK(parse_numeric_rows("0 1\n1 2abc\n", 2, &rows) == "line 2: expected 2 number(s)");
}
