// The gradient-verification tools (src/adjoint/verification.cpp) on a channel in the unit square
// (parabolic inlet, outlet, two walls; mixed triangles and quadrilaterals, ~100 cells):
//  - parameter_scale: a parameter's own size, or the reference scale of its kind when it is zero
//    (U / L for a rotation rate, rho U^2 for a pressure, U L for the viscosity, U otherwise);
//  - taylor_converged: the last two rates >= 1.9, at least three steps;
//  - vertex_dot counts every vertex once: 1 . 1 summed is V = E - F + 1 (Euler) on 1 and 2 ranks;
//  - bump_displacement on the bottom wall towards (1, 1): exp(-|x - x_0|^2 / sigma^2) n_0 at every
//    vertex with x_0 the rightmost wall face's centroid, n_0 = +y into the fluid, sigma a third of
//    the wall's radius;
//  - resolve_objective: from the converged state the objective is J again, in at most one Newton
//    iteration; a re-solve that does not converge is refused with a message;
//  - check_parameter: the adjoint gradient passes (four steps 1e-3 .. 1e-6 of the scale, the best
//    within 1e-6), a gradient 1e-4 off fails; the parameter is restored;
//  - shape_taylor_test: with the adjoint's dJ/dX the rates reach 1.9 (converged) and the mesh is
//    moved back; with a dJ/dX 10 % off the remainder falls as eps (not converged).
#include "adjoint_check.hpp"

using namespace karman;
using test::make;
using test::Problem;

namespace {

const char *kChannel = R"(
mesh: {file: x.geo}
fluid: {viscosity: 0.05}
initial: {velocity: [1, 0]}
solver: {rtol: 1e-13, atol: 1e-13, max_iterations: 30, linear: direct}
boundaries:
  left: {type: velocity-inlet, velocity: 1.0, direction: [1, 0], profile: parabolic, profile_range: [0, 1]}
  right: {type: pressure-outlet}
  bottom: {type: wall}
  top: {type: wall}
objective: {type: drag, walls: [bottom]}
)";

const std::vector<std::string> kPatches = {"left", "right", "bottom", "top"};

} // namespace

TEST_CASE("verification: parameter scales and the Taylor verdict", "[adjoint]") {
  Problem p;
  make(std::string(kChannel) + "reference: {velocity: 2.0, length: 0.5}\n", "square-mixed.geo", 0,
       kPatches, &p, false);
  p.res.parameters().rho = 1.3;
  CHECK(adjoint::parameter_scale("boundaries.left.velocity", 1.5, p.res) == 1.5);
  CHECK(adjoint::parameter_scale("boundaries.right.pressure", -0.3, p.res) == 0.3);
  CHECK(adjoint::parameter_scale("boundaries.top.omega", 0.0, p.res) == Approx(4.0));
  CHECK(adjoint::parameter_scale("boundaries.right.pressure", 0.0, p.res) == Approx(1.3 * 4));
  CHECK(adjoint::parameter_scale("fluid.viscosity", 0.0, p.res) == Approx(1.0));
  CHECK(adjoint::parameter_scale("boundaries.top.velocity.x", 0.0, p.res) == Approx(2.0));

  using Steps = std::vector<adjoint::TaylorStep>;
  auto rates = [](std::initializer_list<double> r) {
    Steps s;
    for (double x : r) s.push_back({0.0, 0.0, x});
    return s;
  };
  CHECK(adjoint::taylor_converged(rates({0, 1.95, 1.92})));
  CHECK(adjoint::taylor_converged(rates({0, 1.2, 1.9, 2.0})));
  CHECK_FALSE(adjoint::taylor_converged(rates({0, 1.95, 1.5})));
  CHECK_FALSE(adjoint::taylor_converged(rates({0, 1.5, 1.95})));
  CHECK_FALSE(adjoint::taylor_converged(rates({0, 2.0})));
}

TEST_CASE("verification: vertex sums count each vertex once; the bump on a wall",
          "[adjoint][mpi]") {
  Problem p;
  make(kChannel, "square-mixed.geo", 0, kPatches, &p, false);
  const mesh::Mesh &m = p.mesh;
  // Euler: V - E + F = 1 on the square (faces shared between ranks counted half on each)
  double local[2] = {0, 0};
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    const PetscInt L = m.face_left[f], R = m.face_right[f];
    local[0] += 0.5 * (m.owned(L) + (R >= 0 ? m.owned(R) : m.owned(L)));
  }
  local[1] = static_cast<double>(m.n_owned_cells);
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  const std::vector<Vec3<double>> ones(m.n_vertices, Vec3<double>(1, 0, 0));
  double V;
  REQUIRE(adjoint::vertex_dot(m, ones, ones, &V) == 0);
  CAPTURE(global[0], global[1], V);
  CHECK(V == global[0] - global[1] + 1);

  // the bump on the bottom wall (y = 0) towards (1, 1): centred on the rightmost face, whose
  // centroid is (0.9375, 0) (4 transfinite faces on [0.5, 1]), pointing up into the fluid
  const int bottom = m.patch_index("bottom");
  double c[3] = {0, 0, 0}, radius = 0;
  for (PetscInt f : m.boundary_faces(bottom)) {
    const double a = norm(p.res.geometry().face_area[f]);
    c[0] += a * p.res.geometry().face_centroid[f][0], c[1] += a;
  }
  MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  for (PetscInt f : m.boundary_faces(bottom))
    radius = std::max(radius, std::abs(p.res.geometry().face_centroid[f][0] - c[0] / c[1]));
  MPI_Allreduce(MPI_IN_PLACE, &radius, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  const double sigma = radius / 3;
  std::vector<Vec3<double>> dX;
  REQUIRE(adjoint::bump_displacement(p.res, bottom, Vec3<double>(1, 1, 0), &dX) == 0);
  REQUIRE(dX.size() == static_cast<std::size_t>(m.n_vertices));
  const Vec3<double> x0(0.9375, 0, 0);
  double worst = 0, peak = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const Vec3<double> r = p.res.coordinates()[v] - x0;
    const double e = std::exp(-dot(r, r) / (sigma * sigma));
    worst = std::max(worst, norm(dX[v] - Vec3<double>(0, e, 0)));
    peak = std::max(peak, dX[v][1]);
  }
  MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  CAPTURE(sigma, peak);
  CHECK(worst <= 1e-14);
  CHECK(peak > 0.8); // the wall vertices next to x_0 (1/16 away)
}

TEST_CASE("verification: re-solves, the parameter check and the shape Taylor test",
          "[adjoint][verification]") {
  Problem p;
  make(kChannel, "square-mixed.geo", 0, kPatches, &p);
  adjoint::Objective obj;
  REQUIRE(obj.setup(p.res, p.cfg) == 0);
  adjoint::AdjointSolver adj;
  REQUIRE(adj.setup(p.res, p.cfg) == 0);
  adjoint::AdjointResult r;
  REQUIRE(adj.solve(p.w, obj, &r) == 0);
  REQUIRE(r.J != 0);
  Vec w1;
  REQUIRE(VecDuplicate(p.w, &w1) == 0);

  SECTION("resolve_objective") {
    double J;
    int its = -1;
    REQUIRE(adjoint::resolve_objective(p.res, p.cfg, obj, p.w, w1, &J, &its) == 0);
    CHECK(J == Approx(r.J).epsilon(1e-12));
    CHECK(its <= 1);
    // one Newton step from rest does not reach atol
    config::CaseConfig one;
    REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, p.cfg.resolved_yaml(), "adj.yaml", "/",
                                          {"solver.max_iterations=1"}, optimization::case_schema(),
                                          one) == 0);
    Vec zero;
    REQUIRE(VecDuplicate(p.w, &zero) == 0);
    REQUIRE(VecSet(zero, 0.0) == 0);
    clear_error();
    CHECK(adjoint::resolve_objective(p.res, one, obj, zero, w1, &J, nullptr) != 0);
    CHECK_THAT(last_error_message(),
               Catch::Contains("verification: the perturbed forward problem did not converge") &&
                   Catch::Contains("use smaller steps"));
    clear_error();
    VecDestroy(&zero);
  }
  SECTION("check_parameter") {
    const discretization::ParameterRegistry registry(p.res);
    for (const char *name : {"boundaries.left.velocity", "fluid.viscosity"}) {
      CAPTURE(name);
      const discretization::ParameterGradient *g = nullptr;
      for (const auto &par : r.gradient.parameters)
        if (par.name == name) g = &par;
      REQUIRE(g);
      const double before = registry.value(p.res, registry.find(name), discretization::kSteady);
      adjoint::ParameterCheck check;
      REQUIRE(adjoint::check_parameter(p.res, p.cfg, obj, p.w, r.J, *g, &check) == 0);
      CAPTURE(g->gradient, check.best_fd, check.best_relative_difference);
      CHECK(check.ok);
      CHECK(check.best_relative_difference <= 1e-6);
      REQUIRE(check.steps.size() == 4);
      const double scale = adjoint::parameter_scale(name, g->value, p.res);
      CHECK(check.steps[0].step == Approx(1e-3 * scale));
      CHECK(check.steps[3].step == Approx(1e-6 * scale));
      CHECK(registry.value(p.res, registry.find(name), discretization::kSteady) == before);
      // a gradient 1e-4 off
      discretization::ParameterGradient wrong = *g;
      wrong.gradient *= 1 + 1e-4;
      REQUIRE(adjoint::check_parameter(p.res, p.cfg, obj, p.w, r.J, wrong, &check) == 0);
      CHECK_FALSE(check.ok);
      CHECK(check.best_relative_difference > 1e-5);
    }
  }
  SECTION("shape_taylor_test") {
    const int bottom = p.mesh.patch_index("bottom");
    const std::vector<Vec3<double>> X0 = p.res.coordinates();
    double dJ;
    std::vector<adjoint::TaylorStep> steps;
    REQUIRE(adjoint::shape_taylor_test(p.res, p.cfg, obj, p.w, r.J, r.gradient.X, bottom, &dJ,
                                       &steps) == 0);
    CAPTURE(dJ, steps.size(), steps.back().eps, steps.back().remainder, steps.back().rate);
    CHECK(adjoint::taylor_converged(steps));
    CHECK(dJ != 0);
    for (std::size_t k = 1; k < steps.size(); ++k) CHECK(steps[k].eps == 0.5 * steps[k - 1].eps);
    double moved = 0;
    for (PetscInt v = 0; v < p.mesh.n_vertices; ++v)
      moved = std::max(moved, norm(p.res.coordinates()[v] - X0[v]));
    CHECK(moved == 0.0);
    // dJ/dX 10 % off: the remainder is first order
    std::vector<Vec3<double>> wrong = r.gradient.X;
    for (auto &x : wrong) x = 1.1 * x;
    REQUIRE(adjoint::shape_taylor_test(p.res, p.cfg, obj, p.w, r.J, wrong, bottom, &dJ, &steps) ==
            0);
    CAPTURE(steps.size(), steps.back().rate);
    CHECK_FALSE(adjoint::taylor_converged(steps));
    CHECK(std::abs(steps.back().rate - 1.0) < 0.2);
  }
  VecDestroy(&w1);
}
