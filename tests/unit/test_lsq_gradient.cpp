// Least-squares cell gradients (src/discretization/lsq_gradient.cpp, lsq_gradient.hpp):
//  - exact for linear fields on unstructured triangles and tetrahedra: with every boundary face
//    prescribed in every cell (owned and layer 1), with none prescribed in the cells away from
//    the boundary;
//  - a fit whose directions nearly lie in one plane (conditioning below kWellConditionedFit: a
//    wall cell of Gmsh's unstructured tetrahedra) takes the boundary faces in: small coefficients
//    on the mesh and on one with a Box size field;
//  - reverse() is the transpose of apply() (a dot-product test over the cell values and the
//    prescribed boundary values, G being linear in both);
//  - the coefficients' reverse mode equals complex step.
#include "karman/discretization/lsq_gradient.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>

using namespace karman;
using cplx = std::complex<double>;

namespace {

struct Case {
  const char *geo;
  int dim;
  std::vector<std::string> boundaries;
};

const Case kCases[] = {
    {"kovasznay-tri.geo", 2, {"west", "east", "south", "north"}},
    {"box-tet.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
};

} // namespace

TEST_CASE("least-squares gradients are exact for linear fields on unstructured meshes",
          "[discretization][mpi]") {
  for (const Case &k : kCases) {
    CAPTURE(k.geo);
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, k.geo, 0, k.dim, k.boundaries, &m);
    geometry::Geometry<double> g;
    geometry::compute_geometry(m, m.coordinates, g);
    // set 0: every boundary face prescribed (unknown 0); set 1: none (unknown 1)
    std::vector<std::vector<char>> prescribed(2, std::vector<char>(m.n_faces, 0));
    for (PetscInt f = 0; f < m.n_faces; ++f) prescribed[0][f] = m.face_right[f] < 0;
    discretization::LeastSquaresGradient lsq;
    REQUIRE(lsq.build(m, g, prescribed, {0, 1}) == 0);
    CHECK(lsq.n_sets() == 2);
    CHECK(lsq.set_of(1) == 1);
    const int nv = 2;
    const Vec3<double> b[2] = {{1.5, -2.0, k.dim == 3 ? 0.75 : 0.0},
                               {-0.5, 3.0, k.dim == 3 ? -1.0 : 0.0}};
    const double a[2] = {0.3, -7.0};
    std::vector<double> w(nv * m.n_cells), G(3 * nv * m.n_cells, 0.0);
    for (PetscInt c = 0; c < m.n_cells; ++c)
      for (int v = 0; v < nv; ++v) w[c * nv + v] = a[v] + dot(b[v], g.cell_centroid[c]);
    auto boundary_value = [&](int v, PetscInt f) { return a[v] + dot(b[v], g.face_centroid[f]); };
    lsq.apply(m, nv, w.data(), boundary_value, G.data());
    int checked[2] = {0, 0};
    for (PetscInt c = 0; c < m.n_cells; ++c) {
      if (m.cell_layer[c] > 1) continue;
      bool at_boundary = false;
      for (PetscInt i = m.cell_face_ptr[c]; i < m.cell_face_ptr[c + 1]; ++i)
        at_boundary = at_boundary || m.face_right[m.cell_face[i]] < 0;
      for (int v = 0; v < nv; ++v) {
        if (v == 1 && at_boundary) continue;
        ++checked[v];
        for (int i = 0; i < 3; ++i) {
          CAPTURE(c, v, i);
          CHECK(G[(c * nv + v) * 3 + i] == Approx(b[v][i]).margin(1e-11));
        }
      }
    }
    CHECK(checked[0] > checked[1]);
    CHECK(checked[1] > 0);
  }
}

TEST_CASE("least-squares gradients stay bounded where the stencil is one-sided (tetrahedra)",
          "[discretization][mpi]") {
  // without prescribed boundary faces, a boundary cell's neighbours can all lie in one plane
  // (tetrahedral boxes); the fit must then take the other boundary faces in (zero normal
  // gradient) instead of inverting a matrix that is singular to round-off: a linear field's
  // gradient is then within a few times its size, not 1e14 (the singularity test relative to the
  // diagonal's product let those cells through)
  const std::vector<std::pair<const char *, std::vector<std::string>>> meshes = {
      {"box-tet.geo", {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
      {"box-obstacle.geo", {"outer", "obstacle"}},
      {"dfg-3d-coarse-tet.geo", {"inlet", "outlet", "walls", "cylinder"}}};
  for (const auto &[geo, boundaries] : meshes) {
    CAPTURE(geo);
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, geo, 0, 3, boundaries, &m);
    geometry::Geometry<double> g;
    geometry::compute_geometry(m, m.coordinates, g);
    std::vector<std::vector<char>> prescribed(1, std::vector<char>(m.n_faces, 0));
    discretization::LeastSquaresGradient lsq;
    REQUIRE(lsq.build(m, g, prescribed, {0}) == 0);
    const Vec3<double> b(1.5, -2.0, 0.75);
    std::vector<double> w(m.n_cells), G(3 * m.n_cells, 0.0);
    for (PetscInt c = 0; c < m.n_cells; ++c) w[c] = dot(b, g.cell_centroid[c]);
    lsq.apply(
        m, 1, w.data(), [](int, PetscInt) { return 0.0; }, G.data());
    double worst = 0;
    PetscInt at = -1;
    for (PetscInt c = 0; c < m.n_cells; ++c) {
      if (m.cell_layer[c] > 1) continue;
      const double size = std::sqrt(G[3 * c] * G[3 * c] + G[3 * c + 1] * G[3 * c + 1] +
                                    G[3 * c + 2] * G[3 * c + 2]);
      if (size > worst) worst = size, at = c;
    }
    CAPTURE(worst, at);
    CHECK(worst <= 10 * std::sqrt(dot(b, b)));
  }
}

namespace {

// the largest coefficient sum h (|self| + sum |c_j|), h = V^(1/3), of a field without wall values
// (prescribed at the outlet only) over the owned and layer-1 cells of a DFG 3D-1Z channel mesh
double worst_wallless_amplification(const std::string &geo) {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, geo, 0, 3, {"inlet", "outlet", "walls", "cylinder"}, &m);
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, m.coordinates, g);
  std::vector<std::vector<char>> prescribed(1, std::vector<char>(m.n_faces, 0));
  const int outlet = m.patch_index("outlet");
  for (PetscInt f = 0; f < m.n_faces; ++f)
    prescribed[0][f] = m.face_right[f] < 0 && m.face_patch[f] == outlet;
  discretization::LeastSquaresGradient lsq;
  if (lsq.build(m, g, prescribed, {0}) != 0) return -1;
  double worst = 0;
  for (PetscInt c = 0; c < m.n_cells; ++c) {
    if (m.cell_layer[c] > 1) continue;
    double sum = norm(lsq.self(0, c));
    for (PetscInt e = lsq.neighbour_ptr()[c]; e < lsq.neighbour_ptr()[c + 1]; ++e)
      sum += norm(lsq.coefficient(0, e));
    worst = std::max(worst, std::cbrt(g.cell_volume[c]) * sum);
  }
  return worst;
}

} // namespace

TEST_CASE("least-squares gradients: a fit whose directions nearly lie in one plane takes the "
          "boundary faces in (issue 42)",
          "[discretization][mpi]") {
  // the conditioning det M / (tr M / dim)^dim: 1 for directions spread evenly, 0 in one plane
  const Vec3<double> o(0.1, 0.2, 0.3);
  const std::vector<Vec3<double>> even = {o + Vec3<double>(1, 0, 0), o + Vec3<double>(0, 2, 0),
                                          o + Vec3<double>(0, 0, -3)};
  CHECK(discretization::lsq_fit_conditioning(3, o, even) == Approx(1.0).epsilon(1e-12));
  const std::vector<Vec3<double>> flat = {o + Vec3<double>(1, 0, 0), o + Vec3<double>(0, 2, 0),
                                          o + Vec3<double>(1, 1, 1e-3)};
  CHECK(discretization::lsq_fit_conditioning(3, o, flat) < 1e-5);
  // Gmsh's unstructured tetrahedra (cases/dfg-3d1z/dfg-3d-tet.geo, 31 840 cells): a wall cell
  // whose three neighbours' centroids lie nearly in a plane through its own gave a field without
  // wall values coefficients of 876 / h (typical 5 / h); 67 / h with the threshold 1e-2, 21 / h
  // now that its wall faces join fits below kWellConditionedFit = 1e-1
  const double worst = worst_wallless_amplification(std::string(KARMAN_SOURCE_DIR) +
                                                    "/cases/dfg-3d1z/dfg-3d-tet.geo");
  CAPTURE(worst);
  CHECK(worst > 0);
  CHECK(worst < 30);
}

TEST_CASE("least-squares gradients: no wall cell of an ordinary Gmsh tetrahedral mesh with a Box "
          "size field amplifies a field without wall values much (issue 42)",
          "[discretization][mpi]") {
  // tests/data/dfg-3d-tet-box-coarse.geo (5 815 cells): with the conditioning threshold 1e-2 a
  // wall cell's pressure coefficients summed to 51 / h (on the finer mesh of the same file 72 / h,
  // where Newton stalled even with the LU: results/tet-diagnosis.md section 9); at 1e-1 22 / h
  const double worst = worst_wallless_amplification("dfg-3d-tet-box-coarse.geo");
  CAPTURE(worst);
  CHECK(worst > 0);
  CHECK(worst < 30);
}

TEST_CASE("least-squares gradients: reverse() is the transpose of apply()", "[discretization]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "kovasznay-tri.geo", 0, 2, {"west", "east", "south", "north"}, &m);
  geometry::Geometry<double> g;
  geometry::compute_geometry(m, m.coordinates, g);
  std::vector<std::vector<char>> prescribed(2, std::vector<char>(m.n_faces, 0));
  const int west = m.patch_index("west"), south = m.patch_index("south");
  for (PetscInt f = 0; f < m.n_faces; ++f) {
    prescribed[0][f] = m.face_right[f] < 0 && m.face_patch[f] == west;
    prescribed[1][f] = m.face_right[f] < 0 && m.face_patch[f] != south;
  }
  discretization::LeastSquaresGradient lsq;
  REQUIRE(lsq.build(m, g, prescribed, {0, 1, 1}) == 0);
  const int nv = 3;
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> w(nv * m.n_cells), Gbar(3 * nv * m.n_cells, 0.0), bnd(nv * m.n_faces);
  for (auto &x : w) x = u(gen);
  for (auto &x : bnd) x = u(gen);
  for (PetscInt c = 0; c < m.n_cells; ++c)
    if (m.cell_layer[c] <= 1)
      for (int i = 0; i < 3 * nv; ++i) Gbar[3 * nv * c + i] = i % 3 == 2 ? 0.0 : u(gen);
  auto boundary_value = [&](int v, PetscInt f) { return bnd[f * nv + v]; };
  std::vector<double> G(3 * nv * m.n_cells, 0.0), wbar(nv * m.n_cells, 0.0),
      bbar(nv * m.n_faces, 0.0);
  lsq.apply(m, nv, w.data(), boundary_value, G.data());
  lsq.reverse(m, g, nv, w.data(), boundary_value, Gbar.data(), wbar.data(), nullptr,
              [&](int v, PetscInt f, double value) { bbar[f * nv + v] += value; });
  double forward = 0, backward = 0;
  for (std::size_t i = 0; i < G.size(); ++i) forward += Gbar[i] * G[i];
  for (std::size_t i = 0; i < w.size(); ++i) backward += wbar[i] * w[i];
  for (std::size_t i = 0; i < bnd.size(); ++i) backward += bbar[i] * bnd[i];
  CHECK(backward == Approx(forward).epsilon(1e-12));
}

TEST_CASE("least-squares coefficient reverse mode equals complex step", "[discretization]") {
  std::mt19937 gen(8);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int dim = 2; dim <= 3; ++dim) {
    const Vec3<double> xc(0.1 * u(gen), 0.1 * u(gen), dim == 3 ? 0.1 * u(gen) : 0.0);
    std::vector<Vec3<double>> p;
    for (int j = 0; j < 6; ++j) p.emplace_back(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
    const std::size_t n_data = 5; // the last point enters the fit only
    std::vector<Vec3<double>> cbar(n_data), pdir(p.size()), pbar(p.size());
    for (auto &v : cbar) v = Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
    for (auto &v : pdir) v = Vec3<double>(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
    const Vec3<double> xdir(u(gen), u(gen), dim == 3 ? u(gen) : 0.0);
    Vec3<double> xbar;
    discretization::lsq_coefficients_reverse(dim, xc, p, n_data, cbar, xbar, pbar);
    const double h = 1e-30;
    Vec3<cplx> xcc;
    std::vector<Vec3<cplx>> pc(p.size()), c;
    for (int i = 0; i < 3; ++i) xcc[i] = cplx(xc[i], h * xdir[i]);
    for (std::size_t j = 0; j < p.size(); ++j)
      for (int i = 0; i < 3; ++i) pc[j][i] = cplx(p[j][i], h * pdir[j][i]);
    REQUIRE(discretization::lsq_coefficients(dim, xcc, pc, n_data, c));
    double cs = 0, rev = dot(xbar, xdir);
    for (std::size_t j = 0; j < n_data; ++j)
      for (int i = 0; i < 3; ++i) cs += cbar[j][i] * c[j][i].imag() / h;
    for (std::size_t j = 0; j < p.size(); ++j) rev += dot(pbar[j], pdir[j]);
    CAPTURE(dim, rev, cs);
    REQUIRE(std::abs(rev - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
  }
}
