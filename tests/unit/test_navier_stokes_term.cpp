// The incompressible Navier-Stokes equations as a residual term
// (src/discretization/navier_stokes_term.cpp):
//  - on every face of a mesh with every face kind (interior, velocity Dirichlet: inlet, moving and
//    rotating wall; pressure outlet; slip: symmetry; far field: inflow and outflow), at a smooth
//    state: flux_dw against central differences of flux(), flux_reverse against flux_dw, its
//    geometry and viscosity adjoints against differences, and the boundary-value adjoints through
//    boundary_reverse (the patch offsets of parameters()) against differences in every boundary
//    parameter (term_check.hpp); in 2D (mixed triangles/quadrilaterals) and 3D (hexahedra);
//  - parameters(): named boundaries.<patch>.<key>, patch by patch in mesh order; a patch with a
//    custom velocity (the tests' exact solutions) has none;
//  - Kovasznay flow (Re = 40): second-order convergence of velocity and pressure on triangles and
//    on quadrilaterals, with upwind and with blended convection.
#include "karman/discretization/navier_stokes_term.hpp"
#include "karman/solver/steady_solver.hpp"
#include "term_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace karman;

namespace {

// the unit square (triangles and quadrilaterals): a parabolic inlet at an angle, an outlet at a
// pressure, a translating and rotating wall and a symmetry plane
const char *kSquare = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0, direction: [1, 0.2], profile: parabolic, profile_range: [0, 1]}
  right: {type: pressure-outlet, pressure: 0.2}
  bottom: {type: wall, velocity: [0.3, 0.1], omega: 0.5, center: [0.5, -1]}
  top: {type: symmetry}
)";

// a hexahedral channel: a parabolic inlet, an outlet at a pressure, moving walls and a symmetry
// plane on top
const char *kChannel3d = R"(
mesh: {file: x.geo, dimension: 3}
fluid: {viscosity: 0.05}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.0, direction: [1, 0, 0], profile: parabolic, profile_axis: y, profile_range: [0, 1]}
  outlet: {type: pressure-outlet, pressure: -0.1}
  walls: {type: wall, velocity: [0.3, 0, 0.1]}
  top: {type: symmetry}
)";

// the unit square in a far field: inflow on the left, outflow on top (U . S > 0), a wall and an
// outlet
const char *kFarField = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.02}
boundaries:
  left: {type: far-field, velocity: [1, 0.3], pressure: 0.05}
  top: {type: far-field, velocity: [1, 0.3], pressure: 0.05}
  bottom: {type: wall}
  right: {type: pressure-outlet}
)";

} // namespace

TEST_CASE("Navier-Stokes term: derivatives and reverse mode on every face kind equal differences",
          "[discretization][jacobian]") {
  SECTION("2D: inlet, outlet, moving and rotating wall, symmetry") {
    test::TermProblem p;
    test::make_term_problem(kSquare, "square-mixed.geo", 2, {"left", "right", "bottom", "top"}, &p);
    REQUIRE(p.res.terms().size() == 1);
    Vec w;
    REQUIRE(p.res.create_state(&w) == 0);
    test::set_term_state(p.res, w);
    test::check_term(p, 0, w, true);
    VecDestroy(&w);
  }
  SECTION("3D hexahedra: inlet, outlet, moving walls, symmetry") {
    test::TermProblem p;
    test::make_term_problem(kChannel3d, "channel-3d.geo", 3, {"inlet", "outlet", "walls", "top"},
                            &p);
    Vec w;
    REQUIRE(p.res.create_state(&w) == 0);
    test::set_term_state(p.res, w);
    test::check_term(p, 0, w, false);
    VecDestroy(&w);
  }
  SECTION("2D far field: inflow and outflow faces") {
    test::TermProblem p;
    test::make_term_problem(kFarField, "square-mixed.geo", 2, {"left", "right", "bottom", "top"},
                            &p);
    Vec w;
    REQUIRE(p.res.create_state(&w) == 0);
    test::set_term_state(p.res, w);
    test::check_term(p, 0, w, false);
    VecDestroy(&w);
  }
}

TEST_CASE("Navier-Stokes term: its parameters, patch by patch; none for a custom velocity",
          "[discretization]") {
  test::TermProblem p;
  test::make_term_problem(kSquare, "square-mixed.geo", 2, {"left", "right", "bottom", "top"}, &p);
  const discretization::ResidualTerm &term = *p.res.terms()[0];
  auto names = [&] {
    std::string out;
    for (const auto &t : term.parameters()) out += (out.empty() ? "" : " ") + t.name;
    return out;
  };
  // the mesh's patch order
  std::string expected;
  for (const std::string &patch : p.mesh.patch_names) {
    if (patch == "left") expected += " boundaries.left.velocity";
    if (patch == "right") expected += " boundaries.right.pressure";
    if (patch == "bottom")
      expected += " boundaries.bottom.omega boundaries.bottom.velocity.x "
                  "boundaries.bottom.velocity.y";
  }
  CHECK(names() == expected.substr(1));
  // the values behind the pointers are the case's
  for (const auto &t : term.parameters()) {
    CAPTURE(t.name);
    if (t.name == "boundaries.right.pressure") CHECK(t.at(0, 0) == 0.2);
    if (t.name == "boundaries.bottom.omega") CHECK(t.at(0, 0) == 0.5);
  }
  // a patch with a custom velocity has no parameters (nor reverse mode)
  p.res.boundary_conditions().patch(p.mesh.patch_index("bottom")).custom_velocity =
      [](const Vec3<double> &, double) { return Vec3<double>(); };
  CHECK(names().find("bottom") == std::string::npos);
  CHECK(names().find("boundaries.left.velocity") != std::string::npos);
}

TEST_CASE("Kovasznay flow (Re = 40): second-order velocity and pressure",
          "[solver][verification]") {
  auto exact_u = [](const Vec3<double> &x) { return test::kovasznay_velocity(x); };
  auto exact_p = [](const Vec3<double> &x) { return test::kovasznay_pressure(x); };
  const std::string yaml = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.025}
boundaries:
  west: {type: wall}
  east: {type: wall}
  south: {type: wall}
  north: {type: wall}
solver: {rtol: 1e-12, atol: 1e-13, upwind: UPWIND}
)";
  // full second-order upwind on both meshes; on triangles also blended with the centred
  // mean of the reconstructions (solver.upwind 0.25, less numerical dissipation)
  for (const auto &[geo, upwind] :
       {std::pair<const char *, const char *>{"kovasznay-quad.geo", "1"},
        {"kovasznay-tri.geo", "1"},
        {"kovasznay-tri.geo", "0.25"}}) {
    SECTION(std::string(geo) + " upwind " + upwind) {
      std::string yaml_b = yaml;
      yaml_b.replace(yaml_b.find("UPWIND"), 6, upwind);
      std::vector<double> h, eu, ep;
      for (int level = 0; level <= 2; ++level) {
        test::TermProblem p;
        test::make_term_problem(yaml_b, geo, 2, {"west", "east", "south", "north"}, &p, level);
        for (std::size_t b = 0; b < p.res.boundary_conditions().n_patches(); ++b)
          p.res.boundary_conditions().patch(static_cast<int>(b)).custom_velocity =
              [&](const Vec3<double> &x, double) { return exact_u(x); };
        p.res.parameters_changed();
        solver::SteadySolver newton;
        REQUIRE(newton.setup(p.res, p.cfg) == 0);
        Vec w;
        REQUIRE(p.res.create_state(&w) == 0);
        solver::SteadySummary s;
        REQUIRE(newton.solve(w, {}, nullptr, &s) == 0);
        REQUIRE(s.converged);
        discretization::LocalState state;
        REQUIRE(p.res.local_state(discretization::kSteady, w, &state) == 0);
        VecDestroy(&w);
        // errors: velocity L2; pressure L2 after removing the mean difference
        double sums[5] = {0, 0, 0, 0, 0}; // V, V|du|^2, V dp, V dp^2, n
        const auto &wl = state.w;
        for (PetscInt c = 0; c < p.mesh.n_owned_cells; ++c) {
          const Vec3<double> &x = p.res.geometry().cell_centroid[c];
          const double V = p.res.geometry().cell_volume[c];
          const Vec3<double> du = Vec3<double>(wl[c * 3 + 1], wl[c * 3 + 2], 0) - exact_u(x);
          const double dp = wl[c * 3] - exact_p(x);
          sums[0] += V, sums[1] += V * dot(du, du), sums[2] += V * dp, sums[3] += V * dp * dp,
              sums[4] += 1;
        }
        MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        h.push_back(std::sqrt(sums[0] / sums[4]));
        eu.push_back(std::sqrt(sums[1] / sums[0]));
        ep.push_back(std::sqrt(
            std::max(0.0, sums[3] / sums[0] - (sums[2] / sums[0]) * (sums[2] / sums[0]))));
      }
      for (std::size_t k = 0; k + 1 < h.size(); ++k) {
        const double ou = std::log(eu[k] / eu[k + 1]) / std::log(h[k] / h[k + 1]);
        const double op = std::log(ep[k] / ep[k + 1]) / std::log(h[k] / h[k + 1]);
        CAPTURE(geo, upwind, k, h[k], eu[k], eu[k + 1], ep[k], ep[k + 1], ou, op);
        if (k + 2 == h.size()) { // the finest pair
          REQUIRE(ou >= 1.8);
          REQUIRE(op >= 1.5);
        }
      }
    }
  }
}
