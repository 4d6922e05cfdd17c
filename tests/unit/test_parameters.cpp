// The parameter registry: the names and order of a case's parameters, values read and set
// by name (with the boundary values re-evaluated), time-dependent parameters listed only on
// request, unknown names refused with the list of known ones; and the boundary conditions
// built on it: face kinds, prescribed values on the faces equal the boundary kernel.
#include "karman/optimization/case_schema.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/physics/boundary_kernels.hpp"
#include "karman/core/error.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace karman;

namespace {

const std::string kCase = R"(
mesh: {file: x.geo}
fluid: {viscosity: 2.0e-3}
reference: {velocity: 0.2, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet, pressure: 0.1}
  walls: {type: blowing-suction, amplitude: {type: sine, amplitude: 0.002, frequency: 1}}
  cylinder: {type: wall, omega: 0.5, velocity: [0.01, 0.02], center: [0.2, 0.2]}
)";

struct Setup {
  config::CaseConfig cfg;
  mesh::Mesh mesh;
  discretization::FlowResidual res;
};

void make(Setup *s) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kCase, "par.yaml", "/", {},
                                        optimization::case_schema(), s->cfg) == 0);
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, {"inlet", "outlet", "walls", "cylinder"},
             &s->mesh);
  REQUIRE(s->res.setup(s->mesh, s->cfg) == 0);
}

std::string joined(const std::vector<discretization::ParameterGradient> &v) {
  std::string out;
  for (const auto &p : v) out += (out.empty() ? "" : " ") + p.name;
  return out;
}

} // namespace

TEST_CASE("parameter registry: names, order, values and setter", "[parameters][mpi]") {
  Setup s;
  make(&s);
  const discretization::ParameterRegistry reg(s.res);
  // the patch order is the mesh's; the time-dependent jet amplitude only on request
  const std::string constant = joined(reg.gradients(s.res, false, discretization::kSteady));
  const std::string all = joined(reg.gradients(s.res, true, discretization::kSteady));
  CHECK(constant.rfind("fluid.viscosity ", 0) == 0);
  CHECK(constant.find("boundaries.walls.amplitude") == std::string::npos);
  CHECK(all.find("boundaries.walls.amplitude") != std::string::npos);
  for (const char *name :
       {"boundaries.inlet.velocity", "boundaries.outlet.pressure", "boundaries.cylinder.omega",
        "boundaries.cylinder.velocity.x", "boundaries.cylinder.velocity.y"})
    CHECK(constant.find(name) != std::string::npos);
  CHECK(reg.size() == 7);
  CHECK(reg.value(s.res, reg.find("fluid.viscosity"), discretization::kSteady) == Approx(2e-3));
  CHECK(reg.value(s.res, reg.find("boundaries.cylinder.velocity.y"), discretization::kSteady) ==
        Approx(0.02));
  CHECK(reg.value(s.res, reg.find("boundaries.outlet.pressure"), discretization::kSteady) ==
        Approx(0.1));
  // the flow term's parameters (its boundary conditions') follow the viscosity
  CHECK(reg.term_offset(0) == 1);
  CHECK(reg.spec(reg.find("boundaries.cylinder.omega")).term == 0);
  CHECK(reg.spec(reg.find("fluid.viscosity")).term == -1);

  // set: the value and the boundary values on the faces change
  REQUIRE(reg.set(s.res, "boundaries.inlet.velocity", 0.6) == 0);
  REQUIRE(s.res.boundary_data(discretization::kSteady) == 0);
  CHECK(reg.value(s.res, reg.find("boundaries.inlet.velocity"), discretization::kSteady) ==
        Approx(0.6));
  const int inlet = s.mesh.patch_index("inlet");
  const auto &bcs = s.res.boundary_conditions();
  double max_u = 0;
  for (PetscInt f : s.mesh.boundary_faces(inlet)) max_u = std::max(max_u, bcs.velocity(f)[0]);
  double global_max = 0;
  MPI_Allreduce(&max_u, &global_max, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  CHECK(global_max > 0.55); // parabolic profile with peak 0.6, sampled at face centroids
  CHECK(global_max <= 0.6);
  REQUIRE(reg.set(s.res, "fluid.viscosity", 1e-3) == 0);
  CHECK(s.res.parameters().nu == 1e-3);

  // an unknown name names the known ones
  clear_error();
  REQUIRE(reg.set(s.res, "boundaries.inlet.speed", 1.0) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("unknown parameter 'boundaries.inlet.speed'") &&
                   Catch::Contains("boundaries.cylinder.omega"));
  clear_error();
}

TEST_CASE("boundary conditions: face kinds and prescribed values from the boundary kernel",
          "[parameters][boundary][mpi]") {
  Setup s;
  make(&s);
  const auto &bcs = s.res.boundary_conditions();
  const auto &g = s.res.geometry();
  int checked = 0;
  // the case's values (kCase) through the kernels of physics/boundary_kernels.hpp
  physics::VelocityProfile parabolic;
  parabolic.parabolic = true, parabolic.axis[0] = 1, parabolic.lo[0] = 0, parabolic.hi[0] = 0.41;
  for (std::size_t p = 0; p < bcs.n_patches(); ++p) {
    const auto &pc = bcs.patch(static_cast<int>(p));
    for (PetscInt f : s.mesh.boundary_faces(static_cast<int>(p))) {
      const bool outlet = pc.name == "outlet";
      CHECK((bcs.kind(f) == discretization::FaceKind::PressureOutlet) == outlet);
      if (outlet) {
        CHECK(bcs.pressure(f) == 0.1);
        continue;
      }
      const Vec3<double> &x = g.face_centroid[f], &S = g.face_area[f];
      Vec3<double> u;
      if (pc.name == "inlet")
        u = physics::inlet_velocity(0.3, Vec3<double>(1, 0, 0), parabolic, x, S);
      else if (pc.name == "walls") // sine amplitude 0.002 sin(2 pi t): 0 at t = 0
        u = physics::jet_velocity(0.0, physics::VelocityProfile(), x, S);
      else
        u = physics::wall_velocity(Vec3<double>(0.01, 0.02, 0), 0.5, Vec3<double>(0.2, 0.2, 0), x);
      for (int d = 0; d < 3; ++d) CHECK(bcs.velocity(f)[d] == u[d]);
      CHECK(bcs.rotation(f) == (pc.name == "cylinder" ? 0.5 : 0.0));
      CHECK(pc.is_wall() == (pc.name == "cylinder" || pc.name == "walls"));
      ++checked;
    }
  }
  CHECK(checked > 0);
  CHECK(bcs.wall_patches().size() == 2); // the blowing walls and the cylinder
  CHECK(bcs.pressure_level_fixed());
}
