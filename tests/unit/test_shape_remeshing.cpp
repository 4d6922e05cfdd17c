// Remeshing in a shape optimization (ShapeOptimization with enable_remeshing; 1 and 2 ranks), on
// the body of cases/shape-min-drag (level 0, Re 40, its FFD box, area and centroid held):
//  - along a family of designs that pulls the tail out and pinches it, the first one whose mesh
//    deformation fails on the original mesh is evaluated on a remeshed mesh (remeshed = true, ok):
//    Gmsh cannot mesh around its own pinched walls (the failure recorded), so around the last
//    good design's, from which it is deformed; the area constraint keeps the original value;
//  - on the remeshed mesh the gradient is that mesh's exact one: dJ/da_i and dc/da_i against
//    central differences of re-deformed, re-solved designs (1e-6 relative);
//  - a second ShapeOptimization restored from the remeshing's files (a restarted campaign) gives
//    the same J and constraints at the same design (to the solver's tolerance);
//  - with remeshing off the same design is a failed evaluation;
//  - a design whose deformation fails but whose own walls Gmsh can mesh (the tail pulled out) is
//    evaluated on a mesh made around its own walls, no good design before it needed.
#include "karman/core/error.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace karman;

namespace {

const char *kBody =
    "mesh: {file: cases/shape-min-drag/body.geo, level: 0}\n"
    "fluid: {viscosity: 0.025}\n"
    "boundaries: {cylinder: {type: wall}, farfield: {type: far-field, velocity: [1, 0]}}\n"
    "initial: {velocity: [1, 0]}\n"
    "solver: {rtol: 1e-12, atol: 1e-12, linear: direct}\n"
    "objective: {type: drag, walls: [cylinder]}\n"
    "design:\n"
    "  - {type: ffd, walls: [cylinder], origin: [-0.51, -0.51], size: [1.02, 1.02], lattice: "
    "[5, 4], axes: [x, y], fixed_layers: 0, lower: [-1], upper: [1]}\n"
    "constraints:\n"
    "  - {type: area, walls: [cylinder], sense: '=', value: 1.0, relative: true}\n"
    "  - {type: centroid, axis: x, walls: [cylinder], sense: '=', value: 0.0}\n";

void load(const std::string &dir, config::CaseConfig *cfg, driver::FlowCase *fc) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, kBody, "body.yaml", KARMAN_SOURCE_DIR,
                                        {"mesh.cache_dir=" + dir}, optimization::case_schema(),
                                        *cfg) == 0);
  const PetscErrorCode ierr = fc->load(PETSC_COMM_WORLD, *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// The design s x (the tail pulled out by 0.3, its control points pinched toward y = 0).
std::vector<double> pinched(std::size_t n, double s) {
  std::vector<double> a(n, 0.0);
  for (int j = 0; j < 4; ++j)
    a[(j * 5 + 4) * 2] = 0.3 * s, a[(j * 5 + 4) * 2 + 1] = -0.25 * s * (j - 1.5);
  return a;
}

optimization::Evaluation evaluated(optimization::ShapeOptimization &p,
                                   const std::vector<double> &a) {
  optimization::Evaluation e;
  clear_error();
  const PetscErrorCode ierr = p.evaluate(a, &e);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return e;
}

} // namespace

TEST_CASE("shape remeshing: a design the mesh cannot follow evaluated on a new mesh, with exact "
          "gradients there and a restart on its files",
          "[optimization][remeshing][mpi]") {
  const std::string dir = test::work_dir("shape-remeshing");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load(dir, &cfg, &fc);
  optimization::ShapeOptimization p;
  REQUIRE(p.setup(fc, nullptr) == 0);
  const std::size_t n = p.problem().names.size();
  // the first s of the family whose deformation fails on the original mesh
  double s_good = 0, s_bad = 0;
  for (double s = 1.0; s <= 4.0 && s_bad == 0; s += 0.25) {
    design::DeformationResult dr;
    REQUIRE(p.shape().move_to_design(pinched(n, s), &dr) == 0);
    (dr.valid ? s_good : s_bad) = s;
  }
  REQUIRE(s_bad > 0);
  REQUIRE(s_good > 0);
  const optimization::Evaluation off = evaluated(p, pinched(n, s_bad));
  CHECK_FALSE(off.ok); // remeshing not enabled: a failed evaluation
  CHECK_FALSE(p.last().remeshed);

  p.enable_remeshing(dir);
  const optimization::Evaluation good = evaluated(p, pinched(n, s_good));
  REQUIRE(good.ok);
  CHECK_FALSE(p.last().remeshed);
  const optimization::Evaluation e = evaluated(p, pinched(n, s_bad));
  INFO(e.failure);
  REQUIRE(e.ok);
  REQUIRE(p.last().remeshed);
  // Gmsh cannot mesh around the pinched tail's own walls (their faces crowd where upper and lower
  // wall nearly touch: "Unable to recover the edge"): around the last good design's instead
  REQUIRE(p.last().remeshes.size() == 1);
  const optimization::RemeshRecord record = p.last().remeshes.back();
  CAPTURE(record.own_walls_failure);
  CHECK_FALSE(record.own_walls);
  CHECK_THAT(record.own_walls_failure, Catch::Contains("gmsh failed"));
  CHECK(record.design == pinched(n, s_good));
  CHECK(p.flow_case().mesh().n_global_cells == record.cells_after);
  CHECK(p.problem().constraints[0].value == Approx(M_PI / 4).epsilon(5e-3)); // the circle's

  // the remeshed mesh's gradient: central differences along two control points' y
  const std::vector<double> a = pinched(n, s_bad);
  for (std::size_t i : {std::size_t(2 * 17 + 1), std::size_t(2 * 8)}) {
    const double h = 1e-4;
    std::vector<double> ap = a, am = a;
    ap[i] += h, am[i] -= h;
    const optimization::Evaluation ep = evaluated(p, ap), em = evaluated(p, am);
    INFO(ep.failure + " / " + em.failure);
    REQUIRE(ep.ok);
    REQUIRE(em.ok);
    CHECK_FALSE(p.last().remeshed);
    CAPTURE(i, e.df[i], (ep.f - em.f) / (2 * h));
    CHECK(std::abs((ep.f - em.f) / (2 * h) - e.df[i]) <= 1e-6 * std::abs(e.df[i]) + 1e-9);
    for (std::size_t c = 0; c < e.c.size(); ++c)
      CHECK(std::abs((ep.c[c] - em.c[c]) / (2 * h) - e.dc[c][i]) <= 1e-6);
  }

  // a restarted campaign on the remeshing's files: the same values at the same design
  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load(dir, &cfg2, &fc2);
  optimization::ShapeOptimization q;
  REQUIRE(q.setup(fc2, nullptr) == 0);
  q.enable_remeshing(dir);
  REQUIRE(q.restore_remeshing(record, true) == 0);
  CHECK(q.flow_case().mesh().n_global_cells == record.cells_after);
  const optimization::Evaluation r = evaluated(q, a);
  REQUIRE(r.ok);
  CHECK_FALSE(q.last().remeshed);
  CHECK(r.f == Approx(e.f).epsilon(1e-9));
  for (std::size_t c = 0; c < e.c.size(); ++c) CHECK(r.c[c] == Approx(e.c[c]).margin(1e-12));
}

TEST_CASE("shape remeshing: a design whose own walls Gmsh can mesh is remeshed around them",
          "[optimization][remeshing][mpi]") {
  // the tail pulled out, not pinched: the first design of the family whose deformation fails on
  // the original mesh gets one remeshing, around its own walls (no good design needed before)
  const std::string dir = test::work_dir("shape-remeshing-own");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load(dir, &cfg, &fc);
  optimization::ShapeOptimization p;
  REQUIRE(p.setup(fc, nullptr) == 0);
  const std::size_t n = p.problem().names.size();
  const auto stretched = [n](double s) {
    std::vector<double> a(n, 0.0);
    for (int j = 0; j < 4; ++j) a[(j * 5 + 4) * 2] = s, a[(j * 5 + 3) * 2] = 0.5 * s;
    return a;
  };
  double s_bad = 0;
  for (double s = 0.5; s <= 3.0 && s_bad == 0; s += 0.25) {
    design::DeformationResult dr;
    REQUIRE(p.shape().move_to_design(stretched(s), &dr) == 0);
    if (!dr.valid) s_bad = s;
  }
  REQUIRE(s_bad > 0);
  p.enable_remeshing(dir);
  const optimization::Evaluation e = evaluated(p, stretched(s_bad));
  INFO(e.failure);
  REQUIRE(e.ok);
  REQUIRE(p.last().remeshed);
  REQUIRE(p.last().remeshes.size() == 1);
  const optimization::RemeshRecord &record = p.last().remeshes.back();
  CAPTURE(s_bad, record.own_walls_failure);
  CHECK(record.own_walls);
  CHECK(record.design == stretched(s_bad));
  CHECK(p.flow_case().mesh().n_global_cells == record.cells_after);
  CHECK(p.problem().constraints[0].value == Approx(M_PI / 4).epsilon(5e-3)); // the circle's
}
