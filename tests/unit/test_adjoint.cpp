// The steady discrete adjoint as a whole (objectives, adjoint solve, reverse sweeps, geometry
// reverse) on larger problems:
//  - scalar: adjoint gradients of the Nusselt number, the outlet variance and the drag against
//    finite differences for every parameter, and shape Taylor tests;
//  - shape: Taylor test for a smooth bump on the cylinder (2D and 3D, direct and iterative);
//  - 3D adjoint parameter gradients vs finite differences (DFG 3D-1Z, coarse).
// [mpi]: also on 2 ranks.  The adjoint solve's own tests (2D parameter gradients against finite
// differences, operator reuse, iterative solve) are in test_adjoint_solver.cpp, the reverse
// sweeps' (dot-product test, psi^T dR/da and dR/dX) in test_sensitivities.cpp.
#include "adjoint_check.hpp"

using namespace karman;
using test::check_parameters;
using test::check_shape_taylor;
using test::kDfg;
using test::make;
using test::Problem;

namespace {

// The DFG channel with a heated cylinder: the scalar at value 0 on the inlet, 1 on the cylinder,
// a flux through the walls, out through the outlet, with a source and decay.
std::string scalar_case() {
  return kDfg + R"(scalar:
  diffusivity: 0.004
  source: 0.3
  decay: 0.2
  boundaries:
    inlet: {type: value, value: 0.1}
    cylinder: {type: value, value: 1.0}
    walls: {type: flux, flux: 0.02}
    outlet: {type: outflow}
)";
}

} // namespace

TEST_CASE("scalar: adjoint gradients of the Nusselt number, the outlet variance and the drag equal "
          "finite differences",
          "[adjoint][scalar][mpi]") {
  // every parameter: the flow's boundaries and viscosity (through the volume flux that carries
  // the scalar) and the scalar's diffusivity, source, decay, boundary values and flux
  // (the coarse cylinder channel of the control tests, 452 cells)
  Problem p;
  make(scalar_case(), "control-cylinder.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  check_parameters(p,
                   {"objective: {type: sum, terms: [{type: nusselt, walls: [cylinder], "
                    "scalar_difference: 0.9}, {type: drag, walls: [cylinder], weight: 0.1}, "
                    "{type: scalar-variance, patches: [outlet], weight: 300}]}\n",
                    "objective: {type: nusselt, walls: [cylinder]}\n"},
                   1e-7);
  // the shape derivative of the Nusselt number: Taylor test
  check_shape_taylor(p,
                     "objective: {type: sum, terms: [{type: nusselt, walls: [cylinder]}, "
                     "{type: scalar-variance, patches: [outlet], weight: 300}]}\n",
                     {1e-3, 5e-4, 2.5e-4});
  // the outlet variance's dependence on the outlet's own faces (centroids and areas): a bump on
  // the outlet moving along it
  check_shape_taylor(p, "objective: {type: scalar-variance, patches: [outlet]}\n",
                     {1e-3, 5e-4, 2.5e-4}, "outlet", true);
}

TEST_CASE("shape gradient: Taylor test for a smooth bump on the cylinder", "[adjoint][mpi]") {
  // drag plus the moment on the rotating cylinder (its rotating-wall traction depends on the
  // face areas and centroids)
  Problem p;
  make(kDfg, test::dfg_geo(), 0, {"inlet", "outlet", "walls", "cylinder"}, &p);
  check_shape_taylor(p,
                     "objective: {type: sum, terms: [{type: drag, walls: [cylinder]}, {type: "
                     "moment, walls: [cylinder], weight: 30}]}\n",
                     {4e-4, 2e-4, 1e-4});
}

namespace {
const std::string kDfg3d = R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 0.2, length: 0.1, area: 0.041}
solver: {rtol: 1e-14, atol: 1e-16, max_iterations: 60}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.45, direction: [1, 0, 0], profile: parabolic, profile_axis: y, profile_range: [0, 0.41], profile_axis2: z, profile_range2: [0, 0.41]}
  outlet: {type: pressure-outlet, pressure: 0.0}
  walls: {type: wall}
  cylinder: {type: wall}
)";
} // namespace

TEST_CASE("3D adjoint parameter gradients equal finite differences (DFG 3D-1Z, coarse)",
          "[adjoint][verification][3d]") {
  // hexahedra in the ring around the cylinder, prisms elsewhere (tests/data/dfg-3d-coarse.geo)
  Problem p;
  make(kDfg3d, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  check_parameters(p, {"objective: {type: drag, walls: [cylinder]}\n"}, 1e-6);
}

TEST_CASE("3D shape gradient: Taylor test for a bump on the cylinder (DFG 3D-1Z, coarse)",
          "[adjoint][3d][mpi]") {
  Problem p;
  make(kDfg3d, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  // (eps from 2e-3 down gives remainders 2.4e-6, 9.8e-7, 2.9e-7, 7.8e-8, 2.0e-8, 5.1e-9: rates
  // 1.31, 1.74, 1.91, 1.96, 1.98 -- the third-order term dominates the larger steps)
  check_shape_taylor(p, "objective: {type: drag, walls: [cylinder]}\n", {2.5e-4, 1.25e-4, 6.25e-5});
}

// The same 3D gradients with the iterative linear solver (Jacobian-free Newton-GMRES with coupled
// multigrid forward, GMRES with the multigrid applied transposed for the adjoint): the steady
// forward converges from rest, the parameter gradients equal central differences of iterative
// re-solves and the shape Taylor test keeps its rate.
TEST_CASE("3D gradients with the iterative linear solver: finite differences and Taylor test",
          "[adjoint][3d][iterative][mpi]") {
  std::string yaml = kDfg3d;
  const std::string solver_line = "solver: {rtol: 1e-14, atol: 1e-16, max_iterations: 60}";
  REQUIRE(yaml.find(solver_line) != std::string::npos);
  yaml.replace(yaml.find(solver_line), solver_line.size(),
               "solver: {rtol: 1e-14, atol: 1e-14, max_iterations: 60, linear: iterative}");
  Problem p;
  make(yaml, "dfg-3d-coarse.geo", 0, {"inlet", "outlet", "walls", "cylinder"}, &p, true, 3);
  check_parameters(p, {"objective: {type: drag, walls: [cylinder]}\n"}, 1e-6);
  check_shape_taylor(p, "objective: {type: drag, walls: [cylinder]}\n", {2.5e-4, 1.25e-4, 6.25e-5});
}
