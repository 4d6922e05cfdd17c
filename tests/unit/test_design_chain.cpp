// The design chain (src/driver/design_chain.cpp) on the coarse DFG 2D-1 case with an FFD box
// around the cylinder: move_to_design(a) moves the residual's mesh to exactly the coordinates of
// the chain written out (DesignSpace::displacement, MeshDeformation::deform, move_to), reverse()
// gives exactly the written-out reverse (MeshDeformation::reverse, DesignSpace::reverse), and a
// design whose deformation fails leaves the mesh as it was; on 1 and 2 ranks ([mpi]).
#include "karman/optimization/case_schema.hpp"
#include "karman/optimization/shape_optimization.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/design_chain.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace karman;

namespace {

/// True if A and B hold the same coordinates, bit for bit.
bool same(const std::vector<Vec3<double>> &A, const std::vector<Vec3<double>> &B) {
  if (A.size() != B.size()) return false;
  for (std::size_t v = 0; v < A.size(); ++v)
    for (int i = 0; i < 3; ++i)
      if (A[v][i] != B[v][i]) return false;
  return true;
}

} // namespace

TEST_CASE("design chain: forward and reverse as written out, a failed deformation changes nothing",
          "[driver][shape][mpi]") {
  const std::string yaml = test::dfg_case_yaml(
      0, "design:\n  - {type: ffd, walls: [cylinder], origin: [0.2, -0.05], size: [0.2, 0.35], "
         "lattice: [5, 4], axes: [y], fixed_layers: 1}\n");
  config::CaseConfig cfg;
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "chain.yaml", "/", {},
                                        optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  const std::vector<Vec3<double>> X0 = fc.residual().coordinates();
  const design::DeformationOptions options = optimization::deformation_options(cfg);
  // the chain, and its parts written out
  auto space = std::make_unique<design::DesignSpace>();
  REQUIRE(space->setup(fc.mesh(), X0, cfg) == 0);
  driver::DesignChain chain;
  REQUIRE(chain.setup(fc, std::move(space), options) == 0);
  REQUIRE(chain.has_design());
  design::DesignSpace space2;
  REQUIRE(space2.setup(fc.mesh(), X0, cfg) == 0);
  design::MeshDeformation deformation2;
  REQUIRE(deformation2.setup(fc.mesh(), X0, options) == 0);
  REQUIRE(chain.design().size() == space2.size());

  std::vector<double> a(space2.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 1e-3 * std::sin(1.0 + i);
  std::vector<Vec3<double>> d, X;
  design::DeformationResult dr;
  REQUIRE(space2.displacement(a, &d) == 0);
  REQUIRE(deformation2.deform(d, &X, &dr) == 0);
  REQUIRE(dr.valid);
  design::DeformationResult dr_chain;
  REQUIRE(chain.move_to_design(a, "test", &dr_chain) == 0);
  REQUIRE(dr_chain.valid);
  CHECK(dr_chain.iterations == dr.iterations);
  CHECK(same(fc.residual().coordinates(), X));
  CHECK_FALSE(same(X, X0)); // it moved

  // reverse: dJ/dX -> dJ/da
  std::vector<Vec3<double>> Xbar(X.size());
  for (std::size_t v = 0; v < Xbar.size(); ++v) {
    const double x = X0[v][0], y = X0[v][1];
    Xbar[v] = Vec3<double>(std::cos(7 * x + 3 * y), std::sin(5 * x - 2 * y), 0.0);
  }
  std::vector<double> abar, abar2;
  REQUIRE(chain.reverse(a, Xbar, &abar) == 0);
  std::vector<Vec3<double>> dbar;
  REQUIRE(deformation2.reverse(Xbar, &dbar) == 0);
  REQUIRE(space2.reverse(a, dbar, &abar2) == 0);
  CHECK(abar == abar2);
  bool nonzero = false;
  for (double g : abar) nonzero = nonzero || g != 0;
  CHECK(nonzero);

  // a design that inverts cells: reported, the mesh unchanged
  std::vector<double> big(a.size(), 0.5);
  design::DeformationResult bad;
  REQUIRE(chain.move_to_design(big, "test", &bad) == 0);
  CHECK_FALSE(bad.valid);
  CHECK_FALSE(bad.message.empty());
  CHECK(same(fc.residual().coordinates(), X));
}
