// The problem keys of a case (CaseConfig::problem_keys(), problem_hash()): every key that changes
// the residual and only those, numbers in one form, the contents of time-function files; and
// compare_problem_keys / describe_key_changes naming the keys that differ with both values.
#include "karman/config/problem_keys.hpp"
#include "karman/config/case_config.hpp"
#include "karman/core/error.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace karman;

namespace {

// a channel with an inlet, an outlet and a rotating cylinder
const char *kCase = R"(
mesh: {file: channel.geo, level: 2}
fluid: {viscosity: 0.01}
boundaries:
  inlet:
    type: velocity-inlet
    velocity: 1.5
    profile: parabolic
    profile_range: [0, 0.41]
  outlet:
    type: pressure-outlet
  cylinder:
    type: wall
    omega: 2.0
    center: [0.2, 0.2]
)";

} // namespace

TEST_CASE("problem_hash covers every key that changes the residual, and only those", "[config]") {
  auto loaded = [](const std::vector<std::string> &overrides) {
    config::CaseConfig cfg;
    clear_error();
    const PetscErrorCode ierr = config::CaseConfig::load_text(
        PETSC_COMM_WORLD, kCase, "case.yaml", "/x", overrides, optimization::case_schema(), cfg);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    return cfg;
  };
  const config::CaseConfig base = loaded({});
  const std::string hash = base.problem_hash();
  REQUIRE(hash.size() == 16);
  // keys of R(w): fluid, reference (reference.velocity scales the stabilization), solver
  // upwind and stabilization, every boundary parameter
  for (const std::string key :
       {"solver.upwind=0.5", "solver.stabilization=2", "fluid.viscosity=0.02", "fluid.density=2",
        "reference.velocity=3", "boundaries.inlet.velocity=2", "boundaries.cylinder.omega=0",
        "boundaries.cylinder.center=[0.3, 0.2]", "boundaries.inlet.profile=uniform",
        "boundaries.outlet.type=symmetry"}) {
    CAPTURE(key);
    const config::CaseConfig changed = loaded({key});
    REQUIRE(changed.problem_hash() != hash);
    const auto changes = config::compare_problem_keys(base.problem_keys(), changed.problem_keys());
    REQUIRE(!changes.empty());
    REQUIRE(changes.front().key == key.substr(0, key.find('=')));
  }
  // keys of the time stepping, solver tolerances, output, objective, initial state, mesh cache
  for (const std::string key :
       {"output.vtk_every=3", "output.checkpoint_every=2", "time.t_end=7", "time.dt=0.5",
        "time.mode=unsteady", "solver.rtol=1e-6", "solver.cfl_initial=5",
        "solver.preconditioner_matrix=exact", "objective.type=lift", "initial.velocity=[1, 0]",
        "mesh.cache_dir=/tmp", "adjoint.snapshots=3"}) {
    CAPTURE(key);
    REQUIRE(loaded({key}).problem_hash() == hash);
  }
  // the same value written differently is the same problem
  REQUIRE(loaded({"solver.upwind=1"}).problem_hash() ==
          loaded({"solver.upwind=1.0"}).problem_hash());
  REQUIRE(loaded({"fluid.viscosity=1e-2"}).problem_hash() == hash);
}

TEST_CASE("compare_problem_keys names the keys that differ with both values", "[config]") {
  config::CaseConfig a, b;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "case.yaml", "/x",
                                        {"solver.upwind=1"}, optimization::case_schema(), a) == 0);
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "case.yaml", "/x",
                                        {"solver.upwind=0", "solver.stabilization=0.5"},
                                        optimization::case_schema(), b) == 0);
  const auto changes = config::compare_problem_keys(a.problem_keys(), b.problem_keys());
  REQUIRE(changes.size() == 2);
  REQUIRE(config::describe_key_changes(changes) ==
          "solver.stabilization = 1, this case has 0.5; solver.upwind = 1, this case has 0");
  REQUIRE(config::compare_problem_keys(a.problem_keys(), a.problem_keys()).empty());
  // a boundary only in one of them
  config::CaseConfig c;
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "case.yaml", "/x",
                                        {"boundaries.top={type: symmetry}"},
                                        optimization::case_schema(), c) == 0);
  const auto added = config::compare_problem_keys(a.problem_keys(), c.problem_keys());
  REQUIRE(added.size() == 1);
  REQUIRE(added[0].key == "boundaries.top.type");
  REQUIRE(added[0].stored == "(none)");
  REQUIRE(added[0].current == "symmetry");
  // a stored text that is not a key list
  const auto bad = config::compare_problem_keys("[1, 2", a.problem_keys());
  REQUIRE(bad.size() == 1);
  REQUIRE(bad[0].stored == "unreadable");
}

TEST_CASE("problem_hash covers the contents of time-function files", "[config]") {
  const std::string dir = test::work_dir("config_table_hash");
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  auto write_table = [&](const char *text) {
    if (rank == 0) std::ofstream(dir + "/omega.csv") << text;
    MPI_Barrier(PETSC_COMM_WORLD);
  };
  const std::string yaml = R"(
mesh: {file: x.geo}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0}
  outlet: {type: pressure-outlet}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: table, file: omega.csv}}
)";
  auto hash_keys = [&](std::string *keys) {
    config::CaseConfig cfg;
    clear_error();
    const PetscErrorCode ierr = config::CaseConfig::load_text(
        PETSC_COMM_WORLD, yaml, "case.yaml", dir, {}, optimization::case_schema(), cfg);
    INFO(last_error_message());
    REQUIRE(ierr == 0);
    *keys = cfg.problem_keys();
    return cfg.problem_hash();
  };
  std::string keys_a, keys_b, keys_c;
  write_table("0, 0\n1, 2\n");
  const std::string a = hash_keys(&keys_a);
  write_table("0, 0\n1, 3\n"); // the same case file, another control law
  const std::string b = hash_keys(&keys_b);
  write_table("0, 0\n1, 2\n");
  const std::string c = hash_keys(&keys_c);
  CHECK(a != b);
  CHECK(a == c);
  const auto changes = config::compare_problem_keys(keys_a, keys_b);
  REQUIRE(changes.size() == 1);
  CHECK(changes.front().key == "boundaries.cylinder.omega.file_contents");
}
