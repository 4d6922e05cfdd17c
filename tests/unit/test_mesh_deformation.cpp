// Mesh deformation by linear elasticity (adjoint/mesh_deformation.cpp):
//  - element stiffness of every cell shape: rigid modes in its kernel, the energy of a uniform
//    strain equals V (lambda tr(e)^2 + 2 mu e:e) (the split is a partition of the cell), and
//    renumbering the vertices (the other diagonals) changes nothing;
//  - dot-product test <D a, b> = <a, D^T b> and exact rigid translation on triangle, mixed
//    triangle/quadrilateral, tetrahedron, hexahedron and prism meshes;
//  - a small rotation and translation of the DFG cylinder: valid mesh, the same coordinates by
//    serial index on 1 and 2 ranks;
//  - a displacement that pushes the cylinder through the channel wall is refused, not an error.
// [mpi]: also on 2 ranks.
#include "karman/design/mesh_deformation.hpp"
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

using namespace karman;
using V3 = Vec3<double>;

namespace {

const std::vector<std::string> kDfg = {"inlet", "outlet", "walls", "cylinder"};
const std::vector<std::string> kBox = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

// A pseudo-random number in [-1, 1] from a serial index: the same on any number of ranks.
double noise(PetscInt gid, int k, int seed) {
  std::mt19937 gen(static_cast<unsigned>(gid * 4 + k + 1000003 * seed));
  return std::uniform_real_distribution<double>(-1.0, 1.0)(gen);
}

double global_sum(double x) {
  double s;
  MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return s;
}

// Sum over the vertices (each once: its owner) of a . b.
double vertex_dot(const mesh::Mesh &m, const std::vector<V3> &a, const std::vector<V3> &b) {
  double s = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) s += dot(a[v], b[v]);
  return global_sum(s);
}

// The reference cell of a shape (VTK order) under the affine map x -> M x + t.
std::vector<V3> reference_cell(mesh::CellShape shape, int dim) {
  using mesh::CellShape;
  std::vector<V3> x;
  switch (shape) {
  case CellShape::Triangle:
    x = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    break;
  case CellShape::Quadrilateral:
    x = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    break;
  case CellShape::Tetrahedron:
    x = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    break;
  case CellShape::Hexahedron:
    x = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    break;
  case CellShape::Prism:
    x = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}};
    break;
  case CellShape::Pyramid:
    x = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.4, 0.3, 1}};
    break;
  }
  const double M[3][3] = {{1.3, 0.2, -0.1}, {-0.3, 0.9, 0.25}, {0.1, -0.2, 1.1}};
  for (auto &p : x) {
    V3 q(0.5, -0.2, 0.7);
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) q[i] += M[i][j] * p[j];
    if (dim == 2) q[2] = 0;
    p = q;
  }
  return x;
}

double reference_volume(mesh::CellShape shape) {
  using mesh::CellShape;
  switch (shape) {
  case CellShape::Triangle:
    return 0.5;
  case CellShape::Quadrilateral:
    return 1.0;
  case CellShape::Tetrahedron:
    return 1.0 / 6;
  case CellShape::Hexahedron:
    return 1.0;
  case CellShape::Prism:
    return 0.5;
  case CellShape::Pyramid:
    return 1.0 / 3;
  }
  return 0;
}

// u^T K u for nodal values u (dim per vertex).
double energy(const std::vector<double> &ke, const std::vector<double> &u) {
  const std::size_t m = u.size();
  double e = 0;
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t c = 0; c < m; ++c) e += u[r] * ke[r * m + c] * u[c];
  return e;
}

struct Deformed {
  std::vector<V3> X;
  design::DeformationResult result;
};

// Loads a mesh, sets the deformation up and applies `displacement` (a function of the vertex
// position and serial index) to the boundary vertices.
void deform_mesh(MPI_Comm comm, const std::string &geo, int level, int dim,
                 const std::vector<std::string> &names,
                 const std::function<V3(const V3 &, PetscInt)> &displacement, mesh::Mesh *m,
                 Deformed *out, const design::DeformationOptions &options = {}) {
  test::load(comm, geo, level, dim, names, m);
  design::MeshDeformation deformation;
  clear_error();
  PetscErrorCode ierr = deformation.setup(*m, m->coordinates, options);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  std::vector<V3> d(m->n_vertices);
  for (PetscInt v = 0; v < m->n_vertices; ++v)
    d[v] = displacement(m->coordinates[v], m->vertex_gid[v]);
  ierr = deformation.deform(d, &out->X, &out->result);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

} // namespace

TEST_CASE("element stiffness: rigid modes, uniform strain, vertex numbering",
          "[mesh_deformation]") {
  using mesh::CellShape;
  struct Case {
    CellShape shape;
    int dim;
    std::vector<int> rotation; ///< a renumbering of the vertices that keeps the VTK order valid
  };
  const std::vector<Case> cases = {
      {CellShape::Triangle, 2, {1, 2, 0}},
      {CellShape::Quadrilateral, 2, {1, 2, 3, 0}},
      {CellShape::Tetrahedron, 3, {1, 2, 0, 3}},
      {CellShape::Hexahedron, 3, {1, 2, 3, 0, 5, 6, 7, 4}},
      {CellShape::Prism, 3, {1, 2, 0, 4, 5, 3}},
      {CellShape::Pyramid, 3, {1, 2, 3, 0, 4}},
  };
  const double E = 2.5, nu = 0.3;
  const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  for (const auto &cs : cases) {
    const int dim = cs.dim;
    const std::vector<V3> x = reference_cell(cs.shape, dim);
    const int n = static_cast<int>(x.size()), m = n * dim;
    std::vector<double> ke;
    REQUIRE(design::cell_stiffness(dim, cs.shape, x, E, nu, &ke));
    double scale = 0;
    for (double k : ke) scale = std::max(scale, std::abs(k));
    CAPTURE(static_cast<int>(cs.shape));
    // symmetric, with translations and infinitesimal rotations in the kernel
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < m; ++c) REQUIRE(ke[r * m + c] == ke[c * m + r]);
    std::vector<std::vector<double>> modes;
    for (int k = 0; k < dim; ++k) {
      std::vector<double> u(m, 0.0);
      for (int a = 0; a < n; ++a) u[a * dim + k] = 1;
      modes.push_back(u);
    }
    for (int axis = dim == 2 ? 2 : 0; axis < 3; ++axis) {
      V3 w;
      w[axis] = 1;
      std::vector<double> u(m);
      for (int a = 0; a < n; ++a)
        for (int k = 0; k < dim; ++k) u[a * dim + k] = cross(w, x[a])[k];
      modes.push_back(u);
    }
    for (const auto &u : modes)
      for (int r = 0; r < m; ++r) {
        double s = 0;
        for (int c = 0; c < m; ++c) s += ke[r * m + c] * u[c];
        REQUIRE(std::abs(s) < 1e-13 * scale * n);
      }
    // uniform strain: u^T K u = V (lambda tr(e)^2 + 2 mu e:e), V = |det M| V_ref
    const double G[3][3] = {{0.3, -0.7, 0.2}, {0.5, 0.1, -0.4}, {0.25, 0.6, -0.35}};
    std::vector<double> u(m);
    for (int a = 0; a < n; ++a)
      for (int i = 0; i < dim; ++i) {
        u[a * dim + i] = 0;
        for (int j = 0; j < dim; ++j) u[a * dim + i] += G[i][j] * x[a][j];
      }
    double tr = 0, ee = 0;
    for (int i = 0; i < dim; ++i) {
      tr += G[i][i];
      for (int j = 0; j < dim; ++j) ee += std::pow(0.5 * (G[i][j] + G[j][i]), 2);
    }
    const double detM = dim == 2
                            ? 1.3 * 0.9 - 0.2 * (-0.3)
                            : 1.3 * (0.9 * 1.1 - 0.25 * (-0.2)) - 0.2 * (-0.3 * 1.1 - 0.25 * 0.1) +
                                  (-0.1) * (-0.3 * (-0.2) - 0.9 * 0.1);
    const double V = detM * reference_volume(cs.shape);
    REQUIRE(energy(ke, u) == Approx(V * (lambda * tr * tr + 2 * mu * ee)).epsilon(1e-13));
    // the same stiffness for the renumbered cell (other diagonals, other split)
    std::vector<V3> y(n);
    for (int a = 0; a < n; ++a) y[a] = x[cs.rotation[a]];
    std::vector<double> kr;
    REQUIRE(design::cell_stiffness(dim, cs.shape, y, E, nu, &kr));
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        for (int i = 0; i < dim; ++i)
          for (int j = 0; j < dim; ++j)
            REQUIRE(std::abs(kr[(a * dim + i) * m + b * dim + j] -
                             ke[(cs.rotation[a] * dim + i) * m + cs.rotation[b] * dim + j]) <
                    1e-14 * scale);
  }
}

TEST_CASE("mesh deformation: dot-product test and rigid translation", "[mesh_deformation][mpi]") {
  struct Case {
    std::string geo;
    int level, dim;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {test::dfg_geo(), 0, 2, kDfg},
      {"square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}},
      {"box-tet.geo", 0, 3, kBox},
      {"box-hex.geo", 0, 3, kBox},
      {"box-prism.geo", 0, 3, {"sides", "zmin", "zmax"}},
  };
  for (const auto &cs : cases) {
    SECTION(cs.geo) {
      mesh::Mesh m;
      test::load(PETSC_COMM_WORLD, cs.geo, cs.level, cs.dim, cs.names, &m);
      // CG with a tight tolerance (rtol 1e-12 gives 7e-13 in (i) and 1e-10 |t| in (ii) on the
      // DFG mesh at level 0: the reverse is the transpose up to the solves' error), and the
      // default solver: the LU in 2D, CG to DeformationOptions::rtol in 3D
      design::MeshDeformation iterative, defaults;
      design::DeformationOptions tight;
      tight.solver = design::DeformationSolver::Iterative;
      tight.rtol = 1e-14;
      clear_error();
      REQUIRE(iterative.setup(m, m.coordinates, tight) == 0);
      REQUIRE(defaults.setup(m, m.coordinates) == 0);
      const PetscInt nv = m.n_vertices;
      for (const auto *solver : {&iterative, &defaults}) {
        const design::MeshDeformation &deformation = *solver;
        const bool lu = solver == &defaults && cs.dim == 2;
        INFO((lu ? "the default LU" : "CG"));
        for (PetscInt v = 0; v < nv; ++v) REQUIRE(deformation.boundary_vertex()[v] <= 1);
        PetscInt n_boundary = 0;
        for (PetscInt v = 0; v < nv; ++v)
          n_boundary += m.vertex_owned[v] && deformation.boundary_vertex()[v];
        REQUIRE(global_sum(static_cast<double>(n_boundary)) > 0);

        // (i) <D a, b> = <a, D^T b>: a random on the boundary (and garbage inside, not read), b
        // random everywhere (the same on every copy); both positive, so that <D a, b> is no
        // small difference of large sums
        std::vector<V3> a(nv), b(nv), X, abar;
        for (PetscInt v = 0; v < nv; ++v)
          for (int k = 0; k < cs.dim; ++k) {
            a[v][k] = 1e-3 * (1 + 0.5 * noise(m.vertex_gid[v], k, 1));
            b[v][k] = 1 + 0.5 * noise(m.vertex_gid[v], k, 2);
          }
        design::DeformationResult result;
        REQUIRE(deformation.deform(a, &X, &result) == 0);
        INFO(result.message);
        REQUIRE(result.valid);
        REQUIRE(result.direct == lu);
        std::vector<V3> Da(nv);
        for (PetscInt v = 0; v < nv; ++v) Da[v] = X[v] - m.coordinates[v];
        PetscInt iterations = -1;
        REQUIRE(deformation.reverse(b, &abar, &iterations) == 0);
        REQUIRE((lu ? iterations == 0 : iterations > 0));
        for (PetscInt v = 0; v < nv; ++v) {
          if (!deformation.boundary_vertex()[v]) {
            REQUIRE(norm(abar[v]) == 0.0); // interior vertices: no boundary adjoint
            a[v] = V3();                   // (and no boundary displacement)
          } else {
            REQUIRE(norm(Da[v] - a[v]) < 1e-15); // boundary vertices move as prescribed
          }
          if (cs.dim == 2) REQUIRE(Da[v][2] == 0.0);
        }
        const double lhs = vertex_dot(m, Da, b), rhs = vertex_dot(m, a, abar);
        const double rel = std::abs(lhs - rhs) / std::abs(lhs);
        char text[128];
        std::snprintf(text, sizeof(text), "<D a, b> = %.16e, <a, D^T b> = %.16e, relative %.2e",
                      lhs, rhs, rel);
        INFO(text);
        REQUIRE(std::abs(lhs - rhs) <= (lu ? 1e-14 : 1e-12) * std::abs(lhs));

        // (ii) a rigid translation of the whole boundary moves every vertex by it (CG with the
        // default rtol 1e-12 to 1e-9 |t|)
        const V3 t(0.01, -0.02, cs.dim == 3 ? 0.015 : 0.0);
        REQUIRE(deformation.deform(std::vector<V3>(nv, t), &X, &result) == 0);
        REQUIRE(result.valid);
        double err = 0;
        for (PetscInt v = 0; v < nv; ++v) err = std::max(err, norm(X[v] - m.coordinates[v] - t));
        INFO("translation error " << err);
        REQUIRE(err < (solver == &defaults && !lu ? 1e-9 : 1e-11) * norm(t));
      }
    }
  }
}

TEST_CASE("mesh deformation: DFG cylinder rotated and moved, same on 1 and 2 ranks",
          "[mesh_deformation][mpi]") {
  // the cylinder (centre (0.2, 0.2), radius 0.05) turns by 0.1 rad and moves by (2, -1) mm;
  // the other boundaries stay
  const V3 centre(0.2, 0.2, 0.0), shift(0.002, -0.001, 0.0);
  const double angle = 0.1;
  auto displacement = [&](const V3 &x, PetscInt) {
    const V3 r = x - centre;
    if (norm(r) > 0.05 + 1e-8) return V3();
    const V3 turned(std::cos(angle) * r[0] - std::sin(angle) * r[1],
                    std::sin(angle) * r[0] + std::cos(angle) * r[1], 0.0);
    return turned - r + shift;
  };
  mesh::Mesh dist, serial;
  Deformed d, s;
  deform_mesh(PETSC_COMM_WORLD, test::dfg_geo(), 1, 2, kDfg, displacement, &dist, &d);
  deform_mesh(PETSC_COMM_SELF, test::dfg_geo(), 1, 2, kDfg, displacement, &serial, &s);
  INFO(d.result.message);
  REQUIRE(d.result.valid);
  REQUIRE(s.result.valid);
  REQUIRE(d.result.n_invalid_cells == 0);
  geometry::Geometry<double> g;
  geometry::compute_geometry(dist, d.X, g);
  for (PetscInt c = 0; c < dist.n_cells; ++c) REQUIRE(g.cell_volume[c] > 0);
  std::map<PetscInt, PetscInt> serial_vertex;
  for (PetscInt v = 0; v < serial.n_vertices; ++v) serial_vertex[serial.vertex_gid[v]] = v;
  double moved = 0;
  for (PetscInt v = 0; v < dist.n_vertices; ++v) {
    const PetscInt sv = serial_vertex.at(dist.vertex_gid[v]);
    REQUIRE(norm(d.X[v] - s.X[sv]) < 1e-10);
    moved = std::max(moved, norm(d.X[v] - dist.coordinates[v]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  REQUIRE(moved > 0.005); // the cylinder moved (0.1 rad of a 0.05 radius and the shift)
}

TEST_CASE("mesh deformation: when CG + AMG fails, the direct fallback gives the same mesh, and "
          "solves the later systems alone",
          "[mesh_deformation][mpi]") {
  // Richardson + Jacobi smoothing (unscaled) makes the V-cycle indefinite: CG stops with
  // DIVERGED_INDEFINITE_PC, and the LU fallback must give the mesh of the default solver
  const V3 shift(0.002, -0.001, 0.0);
  auto displacement = [&](const V3 &x, PetscInt) {
    return norm(x - V3(0.2, 0.2, 0.0)) > 0.05 + 1e-8 ? V3() : shift;
  };
  mesh::Mesh m, m2;
  Deformed good, fallback;
  design::DeformationOptions cg; // (the default is the LU in 2D)
  cg.solver = design::DeformationSolver::Iterative;
  deform_mesh(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, displacement, &m, &good, cg);
  REQUIRE(PetscOptionsSetValue(nullptr, "-deform_mg_levels_ksp_type", "richardson") == 0);
  REQUIRE(PetscOptionsSetValue(nullptr, "-deform_mg_levels_pc_type", "jacobi") == 0);
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m2);
  design::MeshDeformation deformation;
  clear_error();
  REQUIRE(deformation.setup(m2, m2.coordinates, cg) == 0);
  REQUIRE(PetscOptionsClearValue(nullptr, "-deform_mg_levels_ksp_type") == 0);
  REQUIRE(PetscOptionsClearValue(nullptr, "-deform_mg_levels_pc_type") == 0);
  std::vector<V3> d(m2.n_vertices);
  for (PetscInt v = 0; v < m2.n_vertices; ++v)
    d[v] = displacement(m2.coordinates[v], m2.vertex_gid[v]);
  REQUIRE(deformation.deform(d, &fallback.X, &fallback.result) == 0);
  INFO(fallback.result.message);
  REQUIRE(!good.result.direct);
  REQUIRE(fallback.result.direct);
  REQUIRE(fallback.result.iterations > 0); // CG ran and failed
  REQUIRE(fallback.result.valid);
  // the next solve on that operator goes to the LU at once (no CG iterations), the same mesh
  Deformed again;
  REQUIRE(deformation.deform(d, &again.X, &again.result) == 0);
  REQUIRE(again.result.direct);
  REQUIRE(again.result.iterations == 0);
  REQUIRE(again.result.valid);
  for (PetscInt v = 0; v < m2.n_vertices; ++v) REQUIRE(norm(again.X[v] - fallback.X[v]) < 1e-14);
  // by serial vertex index (two loads on 2 ranks may partition differently)
  std::map<PetscInt, PetscInt> vertex;
  for (PetscInt v = 0; v < m.n_vertices; ++v) vertex[m.vertex_gid[v]] = v;
  for (PetscInt v = 0; v < m2.n_vertices; ++v)
    if (vertex.count(m2.vertex_gid[v]))
      REQUIRE(norm(good.X[vertex[m2.vertex_gid[v]]] - fallback.X[v]) < 1e-12);
}

TEST_CASE("mesh deformation: the default solver is the LU in 2D when it fits in memory, CG in 3D; "
          "either may be asked for",
          "[mesh_deformation][mpi]") {
  // the same boundary displacement through the LU and through CG to 1e-14 (both ways in 2D and
  // 3D): the same mesh; auto takes CG in 2D when the factors' estimate exceeds the memory limit
  auto displacement = [](const V3 &x, PetscInt) {
    return V3(1e-3 * std::sin(3 * x[0] + 1), 2e-3 * std::cos(2 * x[1]), 5e-4 * x[2]);
  };
  design::DeformationOptions lu, cg;
  lu.solver = design::DeformationSolver::Direct;
  cg.solver = design::DeformationSolver::Iterative;
  for (const int dim : {2, 3}) {
    mesh::Mesh m;
    Deformed by_default, by_lu, by_cg;
    const std::string geo = dim == 2 ? test::dfg_geo() : "box-tet.geo";
    const auto &names = dim == 2 ? kDfg : kBox;
    deform_mesh(PETSC_COMM_WORLD, geo, 0, dim, names, displacement, &m, &by_default);
    deform_mesh(PETSC_COMM_WORLD, geo, 0, dim, names, displacement, &m, &by_lu, lu);
    deform_mesh(PETSC_COMM_WORLD, geo, 0, dim, names, displacement, &m, &by_cg, cg);
    INFO("dimension " << dim);
    REQUIRE(by_default.result.direct == (dim == 2));
    REQUIRE(by_lu.result.direct);
    REQUIRE(by_lu.result.iterations == 0);
    REQUIRE(!by_cg.result.direct);
    REQUIRE(by_cg.result.iterations > 0);
    double scale = 0, lu_cg = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      scale = std::max(scale, norm(by_lu.X[v] - m.coordinates[v]));
      lu_cg = std::max(lu_cg, norm(by_lu.X[v] - by_cg.X[v]));
    }
    INFO("|X_LU - X_CG| " << lu_cg << " of a displacement up to " << scale);
    REQUIRE(scale > 1e-4);
    REQUIRE(lu_cg < 1e-10 * scale); // (CG to 1e-14 of the right-hand side: 3.5e-11 in 2D)
  }
  // the factors' estimate against a limit of 1 KiB (-lu_fallback_memory, GiB): CG in 2D
  REQUIRE(PetscOptionsSetValue(nullptr, "-lu_fallback_memory", "1e-6") == 0);
  mesh::Mesh m;
  Deformed limited;
  deform_mesh(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, displacement, &m, &limited);
  REQUIRE(PetscOptionsClearValue(nullptr, "-lu_fallback_memory") == 0);
  REQUIRE(!limited.result.direct);
  REQUIRE(limited.result.iterations > 0);
}

TEST_CASE("mesh deformation: an inverting displacement is refused", "[mesh_deformation][mpi]") {
  // the cylinder pushed up by 0.2 crosses the channel wall at y = 0.41
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  design::MeshDeformation deformation;
  clear_error();
  REQUIRE(deformation.setup(m, m.coordinates) == 0);
  std::vector<V3> d(m.n_vertices), X;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (norm(m.coordinates[v] - V3(0.2, 0.2, 0)) < 0.05 + 1e-8) d[v] = V3(0, 0.2, 0);
  design::DeformationResult result;
  REQUIRE(deformation.deform(d, &X, &result) == 0);
  REQUIRE(last_error_message().empty());
  REQUIRE_FALSE(result.valid);
  REQUIRE(result.n_invalid_cells > 0);
  REQUIRE_THAT(result.message,
               Catch::Contains("mesh deformation: the deformed mesh has " +
                               std::to_string(result.n_invalid_cells) + " invalid") &&
                   Catch::Contains("worst: smallest volume ratio V/V0 = -"));
  REQUIRE(X.size() == static_cast<std::size_t>(m.n_vertices)); // the failed mesh, to write
  // the object stays usable: a small displacement is accepted
  for (auto &v : d) v = 0.01 * v;
  REQUIRE(deformation.deform(d, &X, &result) == 0);
  REQUIRE(result.valid);
  REQUIRE(result.message.empty());
  // an inverted reference mesh is an error (on every rank)
  std::vector<V3> mirrored = m.coordinates;
  for (auto &x : mirrored) x[0] = -x[0];
  design::MeshDeformation bad;
  clear_error();
  REQUIRE(bad.setup(m, mirrored) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("reference cell") && Catch::Contains("is inverted or degenerate"));
  clear_error();
}
