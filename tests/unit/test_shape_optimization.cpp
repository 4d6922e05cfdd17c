// A shape-optimization problem (src/optimization/shape_optimization.cpp):
//  - check_design_gradient on an analytic problem (a cubic objective, a linear constraint; bounds
//    finite on one design entry, infinite on the other): steps rel (upper - lower) or rel L; the
//    finite-difference variables shared out among the entries (3 of 5 + 1: the first and last of
//    the first entry, the second entry's); fourth-order differences equal the exact gradient; the
//    Taylor rates of the cubic are >= 1.9 and the linear constraint is recognized as linear; a
//    gradient entry 1 % off fails its variable and no other; a kink inside the stencil of the
//    first step is stepped around (a tenth of it); a Taylor test still pre-asymptotic at the
//    three steps is continued with two halvings and passes on its last two rates;
//  - the case's constraints and design on the coarse cylinder channel (452 cells): senses, a
//    relative area resolved to the reference shape's area, a flow constraint's value as given;
//    refusals (with the file, the entry and what was expected) of 'volume' in 2D, an unknown wall,
//    'relative' on a flow constraint and a shape optimization without a design list;
//  - evaluate at the start design (a rigid translation dx, dy of the cylinder): the area and the
//    centroid are the reference shape's, their gradients exact (0 for the area: a translation does
//    not change it; d x_c / d(dx, dy) = (1, 0); to the deformation solve's tolerance), the
//    objective and lift those of the solved flow.
#include "karman/core/error.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace karman;

TEST_CASE("design gradient check: steps, shared-out variables, differences and Taylor rates",
          "[optimization]") {
  const double inf = std::numeric_limits<double>::infinity();
  optimization::OptimizationProblem problem;
  problem.names = {"a0", "a1", "a2", "a3", "a4", "b0"};
  problem.lower = {-1, -1, -1, -1, -1, -inf};
  problem.upper = {1, 1, 1, 1, 1, inf};
  problem.constraints = {{"sum", optimization::ConstraintSense::LessEqual, 1.0, 1e-8}};
  const std::vector<optimization::VariableBlock> blocks = {{"a", 0, 5}, {"b", 5, 1}};
  const std::vector<double> a = {0.3, -0.2, 0.5, 0.1, -0.4, 0.7};
  // f = sum_i (i + 1) x_i^3 + x_0 x_5,  c = sum_i x_i
  auto f = [](const std::vector<double> &x) {
    double s = x[0] * x[5];
    for (std::size_t i = 0; i < x.size(); ++i) s += (i + 1.0) * x[i] * x[i] * x[i];
    return s;
  };
  const optimization::DesignValues values = [&](const std::vector<double> &x,
                                                std::vector<double> *F) -> PetscErrorCode {
    double c = 0;
    for (double v : x) c += v;
    *F = {f(x), c};
    return 0;
  };
  optimization::Evaluation e0;
  e0.f = f(a);
  for (std::size_t i = 0; i < a.size(); ++i)
    e0.df.push_back(3 * (i + 1.0) * a[i] * a[i] + (i == 0 ? a[5] : 0.0) + (i == 5 ? a[0] : 0.0));
  e0.c = {0};
  for (double v : a) e0.c[0] += v;
  e0.dc = {std::vector<double>(a.size(), 1.0)};
  const double L = 0.5, rel = 1e-3;

  optimization::DesignGradientCheck check;
  REQUIRE(optimization::check_design_gradient(problem, blocks, a, e0, values, L, 3, rel, &check) ==
          0);
  CHECK(check.functions == std::vector<std::string>{"objective", "sum"});
  REQUIRE(check.variables.size() == 3);
  CHECK(check.variables[0].name == "a0");
  CHECK(check.variables[1].name == "a4");
  CHECK(check.variables[2].name == "b0");
  CHECK(check.variables[0].block == "a");
  CHECK(check.variables[2].block == "b");
  CHECK(check.variables[0].step == Approx(rel * 2));
  CHECK(check.variables[2].step == Approx(rel * L));
  for (const auto &v : check.variables)
    for (std::size_t j = 0; j < 2; ++j) {
      CAPTURE(v.name, j, v.adjoint[j], v.fd[j]);
      CHECK(v.fd[j] == Approx(v.adjoint[j]).epsilon(1e-9));
      CHECK(v.ok[j]);
    }
  REQUIRE(check.taylor.size() == 3);
  CHECK(check.taylor[0].block == "a");
  CHECK(check.taylor[1].block == "b");
  CHECK(check.taylor[2].block == "all");
  for (const auto &t : check.taylor) {
    CAPTURE(t.block);
    CHECK(t.eps == std::vector<double>{4e-3, 2e-3, 1e-3});
    CHECK_FALSE(t.linear[0]);
    for (double r : t.rate[0]) CHECK(r >= 1.9);
    CHECK(t.linear[1]); // the constraint is linear: remainders at round-off
    CHECK(t.ok[0]);
    CHECK(t.ok[1]);
  }
  CHECK(check.failures == 0);

  // a4's objective gradient 1 % off: its difference fails, the others pass
  optimization::Evaluation bad = e0;
  bad.df[4] *= 1.01;
  REQUIRE(optimization::check_design_gradient(problem, blocks, a, bad, values, L, 3, rel, &check) ==
          0);
  CHECK(check.variables[0].ok[0]);
  CHECK_FALSE(check.variables[1].ok[0]);
  CHECK(check.variables[1].ok[1]);
  CHECK(check.variables[2].ok[0]);
  CHECK(check.taylor[1].ok[0]); // entry b does not move a4
  CHECK(check.failures >= 1);
}

namespace {

// One design variable x in [-1, 1], no constraint: the difference step is rel 2
optimization::OptimizationProblem one_variable_problem() {
  optimization::OptimizationProblem problem;
  problem.names = {"x"};
  problem.lower = {-1};
  problem.upper = {1};
  return problem;
}

} // namespace

TEST_CASE("design gradient check: a kink inside the difference stencil is stepped around",
          "[optimization]") {
  // f = x^3 + 0.01 |x - k| with the kink k = a + 1.5 h inside the stencil [a - 2h, a + 2h] of the
  // step h = rel (upper - lower): the difference at h is off by about 3e-3 of the gradient, at
  // h/10 or h/100 the stencil stays on the kink's smooth side and agrees (x^3: exactly, to
  // round-off); the check passes with the smaller step, and reports it
  const optimization::OptimizationProblem problem = one_variable_problem();
  const std::vector<optimization::VariableBlock> blocks = {{"x", 0, 1}};
  const double rel = 1e-3, h = rel * 2, x0 = 0.3, k = x0 + 1.5 * h;
  const std::vector<double> a = {x0};
  const optimization::DesignValues values = [&](const std::vector<double> &x,
                                                std::vector<double> *F) -> PetscErrorCode {
    *F = {x[0] * x[0] * x[0] + 0.01 * std::abs(x[0] - k)};
    return 0;
  };
  optimization::Evaluation e0;
  e0.f = x0 * x0 * x0 + 0.01 * (k - x0);
  e0.df = {3 * x0 * x0 - 0.01};
  optimization::DesignGradientCheck check;
  REQUIRE(optimization::check_design_gradient(problem, blocks, a, e0, values, 1.0, 1, rel,
                                              &check) == 0);
  REQUIRE(check.variables.size() == 1);
  const auto &v = check.variables[0];
  CAPTURE(v.step, v.fd[0], v.adjoint[0], v.relative_difference[0]);
  CHECK(v.step <= h / 10 * (1 + 1e-12));
  CHECK(v.ok[0]);
  CHECK(v.relative_difference[0] < 1e-9);
  CHECK(check.failures == 0);
  // the first step alone would have failed it: the difference at h
  std::vector<double> F[4];
  for (int q = 0; q < 4; ++q)
    REQUIRE(values({x0 + h * std::vector<double>{1, -1, 2, -2}[q]}, &F[q]) == 0);
  const double fd_h = (8 * (F[0][0] - F[1][0]) - (F[2][0] - F[3][0])) / (12 * h);
  CHECK(std::abs(fd_h - e0.df[0]) / std::abs(e0.df[0]) > 1e-3);
}

TEST_CASE("design gradient check: a Taylor test still pre-asymptotic is continued with halved "
          "steps",
          "[optimization]") {
  // f = x^2 - K x^4 at a = 0 (f'(0) = 0): the Taylor remainder along eps p is d^2 (1 - K d^2),
  // d = eps |p|.  K is chosen from the entry's direction p (the check's generator, seed 12345 + 1)
  // so that K d^2 = 0.03 at eps = 1e-3: the rates of eps = 4, 2, 1 (1e-3) are 1.24 and 1.86
  // (below 1.9), and with two halvings the last two are 1.97 and 1.99
  const optimization::OptimizationProblem problem = one_variable_problem();
  const std::vector<optimization::VariableBlock> blocks = {{"x", 0, 1}};
  const double rel = 1e-3;
  std::mt19937 gen(12345 + 1);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  const double p = uni(gen) * rel * 2 / rel, d0 = 1e-3 * std::abs(p), K = 0.03 / (d0 * d0);
  const optimization::DesignValues values = [&](const std::vector<double> &x,
                                                std::vector<double> *F) -> PetscErrorCode {
    *F = {x[0] * x[0] - K * x[0] * x[0] * x[0] * x[0]};
    return 0;
  };
  optimization::Evaluation e0;
  e0.f = 0;
  e0.df = {0};
  optimization::DesignGradientCheck check;
  REQUIRE(optimization::check_design_gradient(problem, blocks, {0.0}, e0, values, 1.0, 1, rel,
                                              &check) == 0);
  REQUIRE(check.taylor.size() == 2); // the entry, then all
  const auto &t = check.taylor[0];
  REQUIRE(t.eps.size() == 5);
  CHECK(t.eps[4] == Approx(2.5e-4));
  REQUIRE(t.rate[0].size() == 4);
  CAPTURE(t.rate[0][0], t.rate[0][1], t.rate[0][2], t.rate[0][3]);
  CHECK(t.rate[0][0] == Approx(1.24).margin(0.01));
  CHECK(t.rate[0][1] < 1.9);
  CHECK(t.rate[0][2] >= 1.9);
  CHECK(t.rate[0][3] >= 1.9);
  CHECK(t.ok[0]);
}

namespace {

std::string cylinder_case(const std::string &design, const std::string &constraints) {
  return "mesh: {file: " + test::mesh_file(PETSC_COMM_WORLD, "control-cylinder.geo", 0, 2) + R"(}
fluid: {viscosity: 2.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
objective: {type: drag, walls: [cylinder]}
solver: {rtol: 1e-12, atol: 1e-13}
)" + design +
         constraints;
}

const std::string kRigid = R"(design:
  - {type: rigid, walls: [cylinder], center: [0.2, 0.2], variables: [dx, dy], lower: [-0.02, -0.01], upper: [0.02, 0.03]}
)";

const std::string kConstraints = R"(constraints:
  - {type: area, walls: [cylinder], sense: "=", value: 1.0, relative: true, name: area}
  - {type: centroid, axis: x, walls: [cylinder], sense: "<=", value: 0.25}
  - {type: lift, walls: [cylinder], sense: ">=", value: -0.1}
)";

struct Campaign {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  optimization::ShapeOptimization opt;
};

// the error of loading the case and setting up its shape optimization ("" if none)
std::string setup_error(const std::string &yaml, Campaign *c) {
  clear_error();
  PetscErrorCode ierr = config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "case.yaml", ".", {},
                                                      optimization::case_schema(), c->cfg);
  if (!ierr) ierr = c->fc.load(PETSC_COMM_WORLD, c->cfg);
  if (!ierr) ierr = c->opt.setup(c->fc, nullptr);
  std::string error = ierr ? last_error_message() : "";
  if (ierr && error.empty()) error = "error";
  clear_error();
  return error;
}

} // namespace

TEST_CASE("shape optimization: the case's design and constraints, and their refusals",
          "[optimization][shape]") {
  SECTION("senses, a relative area and a flow constraint") {
    Campaign c;
    REQUIRE(setup_error(cylinder_case(kRigid, kConstraints), &c) == "");
    const optimization::OptimizationProblem &pr = c.opt.problem();
    CAPTURE(pr.names.size());
    CHECK(pr.names.size() == 2);
    CHECK(pr.lower == std::vector<double>{-0.02, -0.01});
    CHECK(pr.upper == std::vector<double>{0.02, 0.03});
    CHECK(pr.start == std::vector<double>{0, 0});
    REQUIRE(pr.constraints.size() == 3);
    CHECK(pr.constraints[0].name == "area");
    CHECK(pr.constraints[0].sense == optimization::ConstraintSense::Equal);
    CHECK(pr.constraints[1].sense == optimization::ConstraintSense::LessEqual);
    CHECK(pr.constraints[2].sense == optimization::ConstraintSense::GreaterEqual);
    CHECK(pr.constraints[1].value == 0.25);
    CHECK(pr.constraints[2].value == -0.1);
    CHECK(pr.constraints[2].name == "lift");
    // the relative area: 1.0 x the area inside the cylinder's faces (the channel minus the cells)
    double fluid = 0, total = 0;
    for (PetscInt k = 0; k < c.fc.mesh().n_owned_cells; ++k)
      fluid += c.fc.residual().geometry().cell_volume[k];
    MPI_Allreduce(&fluid, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    CAPTURE(pr.constraints[0].value);
    CHECK(pr.constraints[0].value == Approx(1.0 * 0.41 - total).epsilon(1e-10));
    // (the inscribed polygon of the circle of radius 0.05: 16 faces, 2.6 % less than pi r^2)
    CHECK(pr.constraints[0].value == Approx(M_PI * 0.05 * 0.05).epsilon(0.03));
  }
  SECTION("refusals") {
    auto error = [](const std::string &design, const std::string &constraints) {
      Campaign c;
      return setup_error(cylinder_case(design, constraints), &c);
    };
    CHECK_THAT(error(kRigid, "constraints:\n  - {type: volume, walls: [cylinder], sense: \"=\", "
                             "value: 1.0, relative: true}\n"),
               Catch::Contains("case.yaml") &&
                   Catch::Contains("'volume' is for 3D meshes; use 'area' in 2D"));
    CHECK_THAT(error(kRigid, "constraints:\n  - {type: area, walls: [nowhere], sense: \"=\", "
                             "value: 1.0}\n"),
               Catch::Contains("no boundary named 'nowhere'"));
    CHECK_THAT(error(kRigid, "constraints:\n  - {type: lift, walls: [cylinder], sense: \"=\", "
                             "value: 1.0, relative: true, name: rel_lift}\n"),
               Catch::Contains("constraint rel_lift: 'relative' applies to geometric constraints "
                               "only"));
    CHECK_THAT(error("", kConstraints),
               Catch::Contains("case.yaml: a shape optimization needs a 'design:' list"));
  }
}

TEST_CASE("shape optimization: evaluate at the start design -- constraint values and exact "
          "geometric gradients",
          "[optimization][shape][mpi]") {
  Campaign c;
  REQUIRE(setup_error(cylinder_case(kRigid, kConstraints), &c) == "");
  optimization::Evaluation e;
  clear_error();
  const PetscErrorCode ierr = c.opt.evaluate(c.opt.problem().start, &e);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  INFO(e.failure);
  REQUIRE(e.ok);
  REQUIRE(e.c.size() == 3);
  REQUIRE(e.dc.size() == 3);
  REQUIRE(e.df.size() == 2);
  // the area of the reference shape, and a translation does not change it
  CHECK(e.c[0] == Approx(c.opt.problem().constraints[0].value).epsilon(1e-12));
  CHECK(std::abs(e.dc[0][0]) <= 1e-10);
  CHECK(std::abs(e.dc[0][1]) <= 1e-10);
  // the centroid of the cylinder's polygon: x_c = 0.2, moved one to one by dx
  CHECK(e.c[1] == Approx(0.2).margin(1e-3));
  CHECK(e.dc[1][0] == Approx(1.0).epsilon(1e-8));
  CHECK(std::abs(e.dc[1][1]) <= 1e-8);
  // the flow constraint and the objective: the solved flow's (last() records them)
  CHECK(c.opt.last().constraints == e.c);
  CHECK(c.opt.last().shape.J == e.f);
  CHECK(e.f > 0); // drag
  CHECK(c.opt.last().gradient_norm == Approx(std::hypot(e.df[0], e.df[1])));
}

TEST_CASE("shape optimization: scaled variables -- bounds, start and gradients in a / scale",
          "[optimization][shape]") {
  Campaign plain, scaled;
  REQUIRE(setup_error(cylinder_case(kRigid, kConstraints), &plain) == "");
  std::string rigid = kRigid;
  rigid.replace(rigid.find("lower:"), 0, "scale: [0.01, 0.04], ");
  REQUIRE(setup_error(cylinder_case(rigid, kConstraints), &scaled) == "");
  const optimization::OptimizationProblem &p = plain.opt.problem(), &q = scaled.opt.problem();
  const double s[2] = {0.01, 0.04};
  for (int i = 0; i < 2; ++i) {
    CHECK(q.lower[i] == Approx(p.lower[i] / s[i]));
    CHECK(q.upper[i] == Approx(p.upper[i] / s[i]));
  }
  const std::vector<double> x = {0.5, -0.25}; // a = (0.005, -0.01)
  CHECK(scaled.opt.design_of(x) == std::vector<double>{0.005, -0.01});
  optimization::Evaluation e, f;
  clear_error();
  REQUIRE(plain.opt.evaluate({0.005, -0.01}, &e) == 0);
  REQUIRE(scaled.opt.evaluate(x, &f) == 0);
  REQUIRE(e.ok);
  REQUIRE(f.ok);
  CHECK(f.f == Approx(e.f).epsilon(1e-10));
  for (int i = 0; i < 2; ++i) {
    CHECK(f.df[i] == Approx(s[i] * e.df[i]).epsilon(1e-8));
    for (std::size_t c = 0; c < e.c.size(); ++c)
      CHECK(f.dc[c][i] == Approx(s[i] * e.dc[c][i]).epsilon(1e-8).margin(1e-12));
  }
}
