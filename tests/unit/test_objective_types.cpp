// The registry of objective types (src/adjoint/objective_types.cpp): every unit's types once,
// found by name, each with help, a create function and its keys in the objective section of the
// schema (whose `type` choices are the registry and `sum`); objective_walls maps wall names to
// patches and refuses an unknown one naming the file, the key and the name.
#include "karman/adjoint/objective_terms.hpp"
#include "karman/core/error.hpp"
#include "objective_check.hpp"

#include <algorithm>
#include <set>

using namespace karman;

TEST_CASE("objective types: one registry, found by name, in the schema", "[adjoint]") {
  std::set<std::string> names;
  std::size_t units = 0;
  for (const auto &list : {adjoint::force_objective_types(), adjoint::pressure_objective_types(),
                           adjoint::probe_objective_types(), adjoint::scalar_objective_types()})
    units += list.size();
  const auto &types = adjoint::objective_types();
  CHECK(types.size() == units);
  const config::SectionSpec *section = optimization::case_schema().section("objective");
  REQUIRE(section);
  const config::KeySpec *type = section->find("type");
  REQUIRE(type);
  for (const auto &t : types) {
    CAPTURE(t.name);
    CHECK(names.insert(t.name).second);
    CHECK(!t.help.empty());
    CHECK(t.create);
    CHECK(adjoint::find_objective_type(t.name) == &t);
    CHECK(std::count(type->choices.begin(), type->choices.end(), t.name) == 1);
    for (const auto &k : t.keys) CHECK(section->find(k.name));
  }
  for (const char *name : {"drag", "lift", "force", "moment", "pressure-difference",
                           "pressure-drop", "probe-match", "nusselt", "scalar-variance"})
    CHECK(names.count(name) == 1);
  CHECK(type->choices.size() == types.size() + 1); // and "sum"
  CHECK(adjoint::find_objective_type("sum") == nullptr);
  CHECK(adjoint::find_objective_type("dragg") == nullptr);
}

TEST_CASE("objective types: walls by name", "[adjoint]") {
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder, walls]}\n", &f);
  const mesh::Mesh &m = f.res().mesh();
  std::vector<int> walls;
  REQUIRE(adjoint::objective_walls(f.res(), f.cfg, f.cfg.section("objective"), &walls) == 0);
  CHECK(walls == std::vector<int>{m.patch_index("cylinder"), m.patch_index("walls")});
  // a section other than the case's objective (the monitors check that one at load)
  test::FlowFixture g;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\nconstraints:\n  - {type: drag, "
                      "walls: [cylinder, cylindre], sense: \"<=\", value: 1}\n",
                      &g);
  clear_error();
  CHECK(adjoint::objective_walls(g.res(), g.cfg, g.cfg.constraints()[0], &walls) != 0);
  CHECK(last_error_message() == "case.yaml: constraints[0].walls: no boundary named 'cylindre'");
  clear_error();
}
