// The equation set (physics/equation_set.hpp): the layout of the unknowns from the field
// descriptors -- offsets, the field of each unknown, which rows are transient -- its signature,
// and the refusal of a set that repeats a name or exceeds kMaxVars.
#include "karman/physics/equation_set.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace karman;

TEST_CASE("equation set: layout of the flow and a scalar", "[equation_set]") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    auto fields = physics::navier_stokes_fields(dim);
    fields.push_back({"scalar", 1, true, 1.0, 2});
    const physics::EquationSet eq(dim, fields);
    REQUIRE(eq.nv() == dim + 2);
    REQUIRE(eq.n_fields() == 3);
    CHECK(eq.offset(eq.find("pressure")) == 0);
    CHECK(eq.offset(eq.find("velocity")) == 1);
    CHECK(eq.offset(eq.find("scalar")) == dim + 1);
    CHECK(eq.find("temperature") == -1);
    CHECK(!eq.transient(0)); // continuity
    for (int k = 1; k < eq.nv(); ++k) CHECK(eq.transient(k));
    for (int k = 1; k <= dim; ++k) CHECK(eq.field_of(k) == 1);
    CHECK(eq.field_of(dim + 1) == 2);
    CHECK(eq.signature() == "pressure:1,velocity:" + std::to_string(dim) + ",scalar:1");
    CHECK(eq == physics::EquationSet(dim, fields));
    CHECK(!(eq == physics::EquationSet(dim, physics::navier_stokes_fields(dim))));
  }
}

TEST_CASE("equation set: repeated names and too many unknowns are refused", "[equation_set]") {
  auto fields = physics::navier_stokes_fields(3);
  fields.push_back({"velocity", 1, true, 1.0, 2});
  CHECK_THROWS_WITH(physics::EquationSet(3, fields), Catch::Contains("'velocity' given twice"));
  fields = physics::navier_stokes_fields(3);
  for (const char *name : {"a", "b", "c"}) fields.push_back({name, 1, true, 1.0, 2});
  CHECK_THROWS_WITH(physics::EquationSet(3, fields), Catch::Contains("7 unknowns per cell"));
}
