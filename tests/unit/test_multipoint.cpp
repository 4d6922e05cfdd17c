// A multipoint shape optimization (src/optimization/multipoint.cpp) on the NACA 0012 at Re 100
// (cases/naca0012-laminar's geometry at level -1: 24 segments per side, 4 135 cells): Hicks-Henne
// bumps at two stations on each surface, two points at angles of attack 2 and 5 degrees, each
// angle a design variable of its point, the lift bounded at every point, a thickness bounded
// (a constraint of one point: tests/cli/optimize_multipoint.sh):
//  - the problem: the shared FFD variables, then ANGLE@POINT started from each point's angle;
//    constraints point by point (the area at the first point only; NAME@POINT);
//  - f = sum_k w_k J_k with the points' drags as a single-point campaign of each point computes
//    them, and the gradient of f and of every constraint with respect to every variable (the FFD
//    entries and both angles: the angle's way through the far-field stream and the turned force
//    directions) against fourth-order differences of re-solved designs, and a Taylor test along
//    all variables (second-order remainders; the thickness is linear in the bumps);
//  - [mpi] on 2 ranks: the points on two sub-communicators (concurrent) and one after the other
//    on both ranks (sequential) give the same f, c and gradients at two designs to 1e-8;
//  - refusals: a constraint's unknown point, a geometric constraint with a point, two points of
//    one name, a variable that is no parameter of the case, a start outside the bounds.
#include "karman/core/error.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/optimization/multipoint.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace karman;

namespace {

std::string multipoint_case(const std::string &points_mode, const std::string &points,
                            const std::string &constraints) {
  return "mesh: {file: " +
         test::mesh_file(PETSC_COMM_WORLD,
                         std::string(KARMAN_SOURCE_DIR) + "/cases/naca0012-laminar/naca0012.geo",
                         -1, 2) +
         R"(}
fluid: {viscosity: 1.0e-2}
initial: {velocity: [1, 0]}
solver: {rtol: 1e-13, atol: 1e-13, max_iterations: 60, linear: direct}
adjoint: {rtol: 1e-13}
boundaries:
  airfoil: {type: wall}
  farfield: {type: far-field, velocity: [1, 0]}
objective: {type: drag, walls: [airfoil]}
design:
  - {type: hicks-henne, walls: [airfoil], positions: [0.3, 0.7], width: 3, surfaces: both,
     chord_direction: [1, 0], lower: [-0.01], upper: [0.01]}
optimization: {points_mode: )" +
         points_mode + "}\n" + points + constraints;
}

const char *kPoints = R"(points:
  - {name: low, weight: 0.75, set: ['boundaries.farfield.angle_of_attack=2'],
     variable: boundaries.farfield.angle_of_attack, lower: -4, upper: 8}
  - {name: high, weight: 0.25, set: ['boundaries.farfield.angle_of_attack=5'],
     variable: boundaries.farfield.angle_of_attack, lower: -4, upper: 8, scale: 2}
)";

const char *kConstraints = R"(constraints:
  - {type: lift, walls: [airfoil], sense: "<=", value: 0.5}
  - {type: thickness, walls: [airfoil], station: 0.3, sense: ">=", value: 1, relative: true}
)";

// The error of setting up `yaml` ("" if none).
std::string setup_error(const std::string &yaml, optimization::MultipointShapeOptimization *mp) {
  clear_error();
  config::CaseConfig cfg;
  if (config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", "/", {},
                                    optimization::case_schema(), cfg) ||
      mp->setup(PETSC_COMM_WORLD, cfg)) {
    const std::string e = last_error_message();
    clear_error();
    return e.empty() ? "error" : e;
  }
  return "";
}

} // namespace

TEST_CASE("multipoint: the problem, the weighted objective and its exact gradient with the "
          "points' angles of attack",
          "[optimization][shape]") {
  optimization::MultipointShapeOptimization mp;
  REQUIRE(setup_error(multipoint_case("sequential", kPoints, kConstraints), &mp) == "");
  const optimization::OptimizationProblem &p = mp.problem();
  const std::size_t n = p.names.size(), ns = n - 2; // the 4 bumps, then the 2 angles
  REQUIRE(ns == 4);
  CHECK(p.names[ns] == "boundaries.farfield.angle_of_attack@low");
  CHECK(p.names[ns + 1] == "boundaries.farfield.angle_of_attack@high");
  CHECK(p.start[ns] == 2);
  CHECK(p.start[ns + 1] == 2.5); // (5 / scale 2)
  CHECK(p.upper[ns + 1] == 4);
  std::vector<std::string> names;
  for (const auto &c : p.constraints) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"lift@low", "thickness(airfoil, x=0.3)", "lift@high"});
  // f: the weighted drags of the points
  optimization::Evaluation e;
  REQUIRE(mp.evaluate(p.start, &e) == 0);
  INFO(e.failure);
  REQUIRE(e.ok);
  const auto &points = mp.last();
  REQUIRE(points.size() == 2);
  CHECK(e.f == Approx(0.75 * points[0].J + 0.25 * points[1].J).epsilon(1e-14));
  CHECK(points[0].J == points[0].cd);
  CHECK(points[0].J < points[1].J); // (more drag at 5 degrees)
  CHECK(e.c[0] == points[0].cl);
  CHECK(e.c[2] == points[1].cl);
  // the gradients against re-solved designs, at a deformed airfoil
  std::vector<double> x0 = p.start;
  for (std::size_t i = 0; i < ns; ++i) x0[i] = 0.005 * std::sin(1.0 + 2.0 * i);
  REQUIRE(mp.evaluate(x0, &e) == 0);
  REQUIRE(e.ok);
  // F(x): the objective, then the constraints
  auto values = [&](const std::vector<double> &x) {
    optimization::Evaluation ex;
    REQUIRE(mp.evaluate(x, &ex) == 0);
    REQUIRE(ex.ok);
    std::vector<double> F = {ex.f};
    F.insert(F.end(), ex.c.begin(), ex.c.end());
    return F;
  };
  std::vector<std::vector<double>> gradient = {e.df};
  gradient.insert(gradient.end(), e.dc.begin(), e.dc.end());
  const std::size_t nf = gradient.size();
  // fourth-order central differences along a bump and both angles (steps 1e-3 of the range):
  // each F_j's within 1e-6 of its largest derivative among them (or exactly 0 for a point's
  // values along the other point's angle, and then no change at all)
  const std::vector<std::size_t> checked = {0, ns, ns + 1};
  std::vector<double> largest(nf, 0.0);
  for (std::size_t j = 0; j < nf; ++j)
    for (std::size_t i : checked) largest[j] = std::max(largest[j], std::abs(gradient[j][i]));
  for (std::size_t i : checked) {
    const double h = 1e-3 * (p.upper[i] - p.lower[i]);
    std::vector<std::vector<double>> F;
    for (double step : {h, -h, 2 * h, -2 * h}) {
      std::vector<double> x = x0;
      x[i] += step;
      F.push_back(values(x));
    }
    for (std::size_t j = 0; j < nf; ++j) {
      const double fd = (8 * (F[0][j] - F[1][j]) - (F[2][j] - F[3][j])) / (12 * h);
      CAPTURE(p.names[i], j, gradient[j][i], fd);
      if (gradient[j][i] == 0)
        CHECK(std::abs(fd) <= 1e-9);
      else
        CHECK(std::abs(fd - gradient[j][i]) <= 1e-6 * largest[j]);
    }
  }
  // a Taylor test along a direction of every variable: remainders fall as eps^2
  std::vector<double> dir(n);
  for (std::size_t i = 0; i < n; ++i)
    dir[i] = std::cos(3.0 * i + 1.0) * 1e-3 * (p.upper[i] - p.lower[i]);
  std::vector<std::vector<double>> r(nf);
  for (double eps : {4.0, 2.0, 1.0}) {
    std::vector<double> x = x0;
    for (std::size_t i = 0; i < n; ++i) x[i] += eps * dir[i];
    const std::vector<double> F = values(x);
    for (std::size_t j = 0; j < nf; ++j) {
      double d = 0;
      for (std::size_t i = 0; i < n; ++i) d += gradient[j][i] * dir[i];
      r[j].push_back(std::abs(F[j] - (j == 0 ? e.f : e.c[j - 1]) - eps * d));
    }
  }
  for (std::size_t j = 0; j < nf; ++j) {
    CAPTURE(j, r[j]);
    if (r[j][0] <= 1e-13) continue; // (linear to round-off: the thickness in the bumps)
    CHECK(std::log2(r[j][0] / r[j][1]) >= 1.9);
    CHECK(std::log2(r[j][1] / r[j][2]) >= 1.9);
  }
  // the angle moves the lift: its derivative is not the round-off of a flat function
  CHECK(e.dc[0][ns] > 0.01);   // (dc_L/dalpha ~ 0.05 per degree)
  CHECK(e.dc[0][ns + 1] == 0); // (lift@low does not depend on the other point's angle)
}

TEST_CASE("multipoint: concurrent and sequential points give the same evaluations",
          "[optimization][shape][mpi]") {
  PetscMPIInt size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  if (size == 1) {
    SUCCEED("1 rank: one group either way (the 2-rank entry `mpi` compares them)");
    return;
  }
  optimization::MultipointShapeOptimization concurrent, sequential;
  REQUIRE(setup_error(multipoint_case("concurrent", kPoints, kConstraints), &concurrent) == "");
  REQUIRE(setup_error(multipoint_case("sequential", kPoints, kConstraints), &sequential) == "");
  CHECK(concurrent.groups() == 2);
  CHECK(sequential.groups() == 1);
  std::vector<double> x = concurrent.problem().start;
  for (int design = 0; design < 2; ++design) {
    CAPTURE(design);
    optimization::Evaluation a, b;
    REQUIRE(concurrent.evaluate(x, &a) == 0);
    REQUIRE(sequential.evaluate(x, &b) == 0);
    REQUIRE((a.ok && b.ok));
    CHECK(a.f == Approx(b.f).epsilon(1e-8));
    for (std::size_t i = 0; i < a.df.size(); ++i)
      CHECK(a.df[i] == Approx(b.df[i]).epsilon(1e-8).margin(1e-10));
    for (std::size_t j = 0; j < a.c.size(); ++j) {
      CHECK(a.c[j] == Approx(b.c[j]).epsilon(1e-8).margin(1e-12));
      for (std::size_t i = 0; i < a.df.size(); ++i)
        CHECK(a.dc[j][i] == Approx(b.dc[j][i]).epsilon(1e-8).margin(1e-10));
    }
    // the second design: the airfoil deformed, other angles
    for (std::size_t i = 0; i + 2 < x.size(); ++i) x[i] = 0.005 * std::sin(1.0 + i);
    x[x.size() - 2] = 3, x.back() = 1.5;
  }
}

TEST_CASE("multipoint: refusals name the entry", "[optimization][shape]") {
  optimization::MultipointShapeOptimization mp;
  CHECK(setup_error(multipoint_case("auto", kPoints,
                                    "constraints:\n  - {type: lift, walls: [airfoil], sense: "
                                    "\"=\", value: 0, point: cruise}\n"),
                    &mp) == "case.yaml: constraints[0].point: no point named 'cruise'");
  CHECK(setup_error(multipoint_case("auto", kPoints,
                                    "constraints:\n  - {type: area, walls: [airfoil], sense: "
                                    "\"=\", value: 1, relative: true, point: low}\n"),
                    &mp) == "case.yaml: constraints[0].point: a geometric constraint (area) holds "
                            "at every point: give no point");
  CHECK(setup_error(multipoint_case("auto", "points:\n  - {name: a}\n  - {name: a}\n", ""), &mp) ==
        "case.yaml: points[1]: a second point named 'a'");
  CHECK_THAT(setup_error(multipoint_case("auto",
                                         "points:\n  - {name: a, variable: fluid.density, "
                                         "lower: 0, upper: 1}\n",
                                         ""),
                         &mp),
             Catch::StartsWith("case.yaml: 'fluid.density' is not a constant parameter of the case "
                               "(it has: fluid.viscosity, "));
  CHECK(setup_error(multipoint_case("auto",
                                    "points:\n  - {name: a, variable: "
                                    "boundaries.farfield.angle_of_attack, lower: 1, upper: 3}\n",
                                    ""),
                    &mp) == "case.yaml: the design variable boundaries.farfield.angle_of_attack: "
                            "its value 0 must lie within [lower, upper] = [1, 3] (lower < upper), "
                            "its scale 1 > 0");
  // two far-field boundaries (the RANS NACA 0012's far field and outlet): an angle variable
  // would turn one of them alone
  const std::string two_far_fields =
      "mesh: {file: " +
      test::mesh_file(PETSC_COMM_WORLD,
                      std::string(KARMAN_SOURCE_DIR) + "/cases/naca0012-rans/naca0012-rans.geo", 0,
                      2) +
      "}\n" + R"(fluid: {viscosity: 1.0e-3}
initial: {velocity: [1, 0]}
solver: {linear: direct}
boundaries:
  wall: {type: wall}
  farfield: {type: far-field, velocity: [1, 0]}
  outlet: {type: far-field, velocity: [1, 0]}
objective: {type: drag, walls: [wall]}
design:
  - {type: hicks-henne, walls: [wall], positions: [0.5], width: 3, surfaces: both,
     chord_direction: [1, 0], lower: [-0.01], upper: [0.01]}
points:
  - {name: a, variable: boundaries.outlet.angle_of_attack, lower: -2, upper: 2}
)";
  CHECK(setup_error(two_far_fields, &mp) ==
        "case.yaml: the design variable boundaries.outlet.angle_of_attack: the far-field "
        "boundaries farfield, outlet share one angle of attack, and the variable would turn "
        "outlet alone; make them one boundary (one physical group, as "
        "cases/naca0012-rans/optimize.geo does)");
}
