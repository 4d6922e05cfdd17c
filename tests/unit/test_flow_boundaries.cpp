// The flow's boundary units (src/discretization/flow_boundaries.cpp), created from case-file keys
// without a mesh:
//  - face kinds: walls, inlets, jets velocity-Dirichlet, outlets pressure, symmetry slip, far
//    field by the sign of U_inf . S, U_inf the velocity turned by the angle of attack;
//  - prescribed values: a wall's U + omega e_z x (x - c), a parabolic inlet U 4 s (1 - s) along
//    its unit direction, a jet's speed into the fluid along -S, the outlet and far-field pressures;
//  - parameters named boundaries.NAME.KEY, and each unit's reverse mode (velocity_reverse,
//    pressure_reverse: adjoints of x_f, S and the parameters, the rotation rate's of a wall)
//    equal to central differences of its values;
//  - an unknown type is not found; a zero far-field velocity is refused naming the key.
#include "karman/core/error.hpp"
#include "karman/discretization/flow_boundaries.hpp"
#include "test_case_text.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>

using namespace karman;
using discretization::FaceKind;

namespace {

const char *kBoundaries = R"(mesh: {file: a.geo}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [3, 4], profile: parabolic, profile_range: [0, 0.4]}
  wall: {type: wall, velocity: [0.1, -0.2], omega: 2.0, center: [0.2, 0.1]}
  jet: {type: blowing-suction, amplitude: 0.5}
  outlet: {type: pressure-outlet, pressure: 0.25}
  sym: {type: symmetry}
  far: {type: far-field, velocity: [1, 0.5], pressure: 0.1}
  far2: {type: far-field, velocity: [1, 0.5], pressure: 0.1, angle_of_attack: 25}
)";

std::unique_ptr<discretization::FlowBoundary> unit(const config::CaseConfig &cfg,
                                                   const std::string &name) {
  const config::BoundaryConfig *b = cfg.boundary(name);
  REQUIRE(b);
  const discretization::FlowBoundaryType *type = discretization::find_flow_boundary_type(b->type);
  REQUIRE(type);
  std::unique_ptr<discretization::FlowBoundary> u;
  const discretization::BoundaryContext context{PETSC_COMM_WORLD, "case.yaml", "/cases/x",
                                                "boundaries." + name, 2};
  REQUIRE(type->create(b->parameters, context, &u) == 0);
  REQUIRE(u->evaluate(0.0, 0));
  return u;
}

} // namespace

TEST_CASE("flow boundaries: face kinds and prescribed values", "[discretization]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(kBoundaries, &cfg) == "");
  const Vec3<double> S(0.3, -0.4, 0), x(0.5, 0.1, 0);
  auto wall = unit(cfg, "wall");
  CHECK(wall->face_kind(S) == FaceKind::VelocityDirichlet);
  const Vec3<double> uw = wall->velocity(x, S);
  CHECK(uw[0] == Approx(0.1 - 2 * (0.1 - 0.1)).margin(1e-15));
  CHECK(uw[1] == Approx(-0.2 + 2 * (0.5 - 0.2)).epsilon(1e-14));
  CHECK(wall->rotation() == 2);
  auto inlet = unit(cfg, "inlet");
  const double s = 0.1 / 0.4, U = 0.3 * 4 * s * (1 - s);
  const Vec3<double> ui = inlet->velocity(x, S);
  CHECK(ui[0] == Approx(0.6 * U).epsilon(1e-14));
  CHECK(ui[1] == Approx(0.8 * U).epsilon(1e-14));
  CHECK(inlet->rotation() == 0);
  auto jet = unit(cfg, "jet");
  const Vec3<double> uj = jet->velocity(x, S);
  CHECK(uj[0] == Approx(-0.5 * 0.6).epsilon(1e-14)); // into the fluid: -S / |S|
  CHECK(uj[1] == Approx(0.5 * 0.8).epsilon(1e-14));
  auto outlet = unit(cfg, "outlet");
  CHECK(outlet->face_kind(S) == FaceKind::PressureOutlet);
  CHECK(outlet->pressure() == 0.25);
  CHECK(unit(cfg, "sym")->face_kind(S) == FaceKind::Slip);
  auto far = unit(cfg, "far");
  CHECK(far->face_kind(Vec3<double>(1, 0, 0)) == FaceKind::PressureOutlet); // U . S > 0: leaves
  CHECK(far->face_kind(Vec3<double>(-1, 0, 0)) == FaceKind::VelocityDirichlet);
  CHECK(far->pressure() == 0.1);
  CHECK((far->velocity(x, S)[0] == 1 && far->velocity(x, S)[1] == 0.5));
  auto far2 = unit(cfg, "far2"); // turned by 25 degrees
  const double ca = std::cos(25 * M_PI / 180), sa = std::sin(25 * M_PI / 180);
  CHECK(far2->velocity(x, S)[0] == Approx(ca - 0.5 * sa).epsilon(1e-14));
  CHECK(far2->velocity(x, S)[1] == Approx(sa + 0.5 * ca).epsilon(1e-14));
  CHECK(*far2->angle_of_attack() == 25);
  // the kind by the turned stream: U . S = 0.05 leaves, R U . S = -0.44 enters
  CHECK(far->face_kind(Vec3<double>(0.5, -0.9, 0)) == FaceKind::PressureOutlet);
  CHECK(far2->face_kind(Vec3<double>(0.5, -0.9, 0)) == FaceKind::VelocityDirichlet);
  for (const char *name : {"inlet", "wall", "jet", "outlet", "sym", "far"})
    CHECK(!unit(cfg, name)->time_dependent());
  CHECK(discretization::find_flow_boundary_type("wal") == nullptr);
  CHECK(discretization::find_flow_boundary_type("wall")->variant.family == "wall");
  CHECK(discretization::find_flow_boundary_type("blowing-suction")->variant.family == "wall");
  CHECK(discretization::find_flow_boundary_type("far-field")->variant.family == "open");
}

TEST_CASE("flow boundaries: parameters and reverse mode against differences", "[discretization]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case(kBoundaries, &cfg) == "");
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> r(-1, 1);
  const double h = 1e-6;
  for (const char *name : {"inlet", "wall", "jet", "outlet", "far", "far2"}) {
    CAPTURE(name);
    auto u = unit(cfg, name);
    const auto params = u->parameters(std::string("boundaries.") + name + ".");
    REQUIRE(!params.empty());
    for (const auto &p : params)
      CHECK(p.name.rfind(std::string("boundaries.") + name + ".", 0) == 0);
    const Vec3<double> xf(0.5 + 0.1 * r(gen), 0.2 + 0.1 * r(gen), 0),
        S(0.3 + 0.1 * r(gen), -0.4 + 0.1 * r(gen), 0), dx(r(gen), r(gen), 0), dS(r(gen), r(gen), 0),
        ubar(r(gen), r(gen), 0);
    const double rotation_bar = r(gen), pbar = r(gen);
    // the scalar whose derivative the reverse mode gives
    auto value = [&](const Vec3<double> &x, const Vec3<double> &s) {
      const bool dirichlet = u->face_kind(S) == FaceKind::VelocityDirichlet;
      return (dirichlet ? dot(ubar, u->velocity(x, s)) + rotation_bar * u->rotation() : 0.0) +
             pbar * u->pressure();
    };
    std::vector<double> parameter_bar(params.size(), 0.0);
    Vec3<double> xf_bar, S_bar;
    if (u->face_kind(S) == FaceKind::VelocityDirichlet)
      u->velocity_reverse(xf, S, ubar, rotation_bar, parameter_bar.data(), &xf_bar, &S_bar);
    u->pressure_reverse(pbar, parameter_bar.data());
    const double fd = (value(xf + h * dx, S + h * dS) - value(xf - h * dx, S - h * dS)) / (2 * h);
    CHECK(dot(xf_bar, dx) + dot(S_bar, dS) == Approx(fd).epsilon(1e-7).margin(1e-9));
    for (std::size_t i = 0; i < params.size(); ++i) {
      CAPTURE(params[i].name);
      const double v = params[i].at(0, 0);
      params[i].set(v + h);
      REQUIRE(u->evaluate(0, 0));
      const double plus = value(xf, S);
      params[i].set(v - h);
      REQUIRE(u->evaluate(0, 0));
      const double minus = value(xf, S);
      params[i].set(v);
      REQUIRE(u->evaluate(0, 0));
      CHECK(parameter_bar[i] == Approx((plus - minus) / (2 * h)).epsilon(1e-7).margin(1e-9));
    }
  }
}

TEST_CASE("flow boundaries: a zero far-field velocity is refused", "[discretization]") {
  config::CaseConfig cfg;
  REQUIRE(test::load_case("mesh: {file: a.geo}\nboundaries:\n  far: {type: far-field, velocity: "
                          "[0, 0]}\n",
                          &cfg) == "");
  std::unique_ptr<discretization::FlowBoundary> u;
  clear_error();
  CHECK(discretization::find_flow_boundary_type("far-field")
            ->create(cfg.boundary("far")->parameters,
                     {PETSC_COMM_WORLD, "case.yaml", "/cases/x", "boundaries.far", 2}, &u) != 0);
  CHECK(last_error_message() ==
        "case.yaml: boundaries.far.velocity: the far-field velocity must not be zero");
  clear_error();
}
