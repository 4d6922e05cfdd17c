// Time functions of boundary parameters (constant, sine, table, per-step values): values,
// parsing from the case file, and errors.
#include "karman/optimization/case_schema.hpp"
#include "karman/core/error.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/unsteady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace karman;

TEST_CASE("time functions of boundary parameters", "[unsteady][config]") {
  using physics::TimeFunction;
  REQUIRE(TimeFunction::constant(2.5).value(7.0, 3) == 2.5);
  const TimeFunction s =
      TimeFunction::sine(1.5, 1.0 / 16, 0.0, 0.0); // DFG 2D-3 inflow 1.5 sin(pi t / 8)
  REQUIRE(s.value(4.0, 0) == Approx(1.5).epsilon(1e-15));
  REQUIRE(s.value(2.0, 0) == Approx(1.5 * std::sin(M_PI / 4)).epsilon(1e-15));
  const TimeFunction t = TimeFunction::table({0, 1, 3}, {0, 2, -2});
  REQUIRE(t.value(-1, 0) == 0.0);
  REQUIRE(t.value(0.5, 0) == 1.0);
  REQUIRE(t.value(2.0, 0) == Approx(0.0).margin(1e-15));
  REQUIRE(t.value(9.0, 0) == -2.0);
  const TimeFunction st = TimeFunction::steps({1, 2, 3});
  bool beyond = false;
  REQUIRE(st.value(0, 1, &beyond) == 2.0);
  REQUIRE(!beyond);
  REQUIRE(st.value(0, 5, &beyond) == 3.0);
  REQUIRE(beyond);

  // from a case file: numbers, maps and files
  const std::string dir = test::work_dir("time-functions");
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(dir + "/omega.csv") << "t, omega\n0, 0\n1, 3\n";
    std::ofstream(dir + "/steps.csv") << "0.5\n0.25\n0.125\n";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  auto load = [&](const std::string &omega, physics::TimeFunction *f) {
    config::CaseConfig cfg;
    clear_error();
    PetscErrorCode ierr = config::CaseConfig::load_text(
        PETSC_COMM_WORLD,
        "mesh: {file: a.geo}\nboundaries:\n  c: {type: wall, omega: " + omega + "}\n", "case.yaml",
        dir, {}, optimization::case_schema(), cfg);
    if (!ierr)
      ierr = cfg.boundary("c")->parameters.time_function(PETSC_COMM_WORLD, "omega", dir, f);
    return ierr ? last_error_message() : std::string();
  };
  physics::TimeFunction f;
  REQUIRE(load("{type: sine, amplitude: 2, frequency: 0.5, phase: 0.1, offset: 1}", &f).empty());
  REQUIRE(f.value(0.3, 0) == Approx(1 + 2 * std::sin(2 * M_PI * 0.5 * 0.3 + 0.1)).epsilon(1e-15));
  REQUIRE(load("{type: table, points: [[0, 1], [2, 5]]}", &f).empty());
  REQUIRE(f.value(1.0, 0) == 3.0);
  REQUIRE(load("{type: table, file: omega.csv}", &f).empty());
  REQUIRE(f.value(0.5, 0) == 1.5);
  REQUIRE(load("{type: steps, file: steps.csv}", &f).empty());
  REQUIRE(f.value(99.0, 2) == 0.125);
  REQUIRE_THAT(load("{type: cosine}", &f), Catch::Contains("unknown time-function type 'cosine'"));
  REQUIRE_THAT(load("{type: sine, amplitude: 1}", &f),
               Catch::Contains("needs amplitude and frequency"));
  REQUIRE_THAT(load("{type: table, points: [[1, 0], [0, 1]]}", &f),
               Catch::Contains("increasing times"));
  REQUIRE_THAT(load("{type: steps, file: missing.csv}", &f),
               Catch::Contains("missing.csv' not found"));
  REQUIRE_THAT(load("{type: sine, amplitude: 1, frequency: 2, period: 3}", &f),
               Catch::Contains("unknown key 'period'"));
}

TEST_CASE("time function: parameter derivatives against central differences", "[time-function]") {
  // d f(t)/d(parameter) of a sine (amplitude, frequency, phase, offset) and of a table (knot
  // values, inside and beyond its ends), as the unsteady adjoint chains them
  const auto check = [](physics::TimeFunction f, const std::vector<std::string> &expected) {
    REQUIRE(f.parameter_names() == expected);
    for (double t : {-0.5, 0.0, 0.13, 0.7, 1.45, 3.0}) {
      const std::vector<double> d = f.parameter_derivatives(t);
      REQUIRE(d.size() == expected.size());
      for (std::size_t i = 0; i < d.size(); ++i) {
        const auto at = [&](double h) {
          physics::TimeFunction g = f;
          double *p = nullptr;
          if (g.kind() == physics::TimeFunction::Kind::Sine)
            p = i == 0 ? &g.amplitude : i == 1 ? &g.frequency : i == 2 ? &g.phase : &g.offset;
          else
            p = &g.values[i];
          *p += h;
          return g.value(t, 0);
        };
        const double h = 1e-6, fd = (at(h) - at(-h)) / (2 * h);
        CAPTURE(t, i, d[i], fd);
        CHECK(std::abs(d[i] - fd) <= 1e-8 * (1 + std::abs(fd)));
      }
    }
  };
  check(physics::TimeFunction::sine(0.7, 1.3, 0.4, -0.2),
        {"amplitude", "frequency", "phase", "offset"});
  check(physics::TimeFunction::table({0.0, 0.5, 1.0, 2.0}, {1.0, -1.0, 0.5, 2.0}),
        {"knot[0]", "knot[1]", "knot[2]", "knot[3]"});
  CHECK(physics::TimeFunction::constant(2.0).parameter_names().empty());
}
