// Geometry from vertex coordinates and its reverse mode.
//  - exactness: volumes, centroids and areas of unit squares/cubes on mixed 2D and
//    tet/hex/prism 3D meshes; every cell is closed (sum_f sigma S_f = 0);
//  - reverse mode vs complex step: for random adjoints gbar and random directions dX,
//    Xbar . dX = Im(gbar . geometry(X + i h dX)) / h to 1e-12 (kernels and whole meshes,
//    with randomly perturbed vertices so that cells are irregular and 3D faces non-planar).
#include "karman/geometry/geometry_kernels.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <complex>
#include <random>

using namespace karman;
using cplx = std::complex<double>;

namespace {

constexpr double h = 1e-30; // complex step

std::vector<Vec3<double>> perturbed(const mesh::Mesh &m, double amplitude, unsigned seed) {
  // perturbation depends only on the vertex's serial index, so all ranks agree
  std::vector<Vec3<double>> X = m.coordinates;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    std::mt19937 gen(seed + 7919u * static_cast<unsigned>(m.vertex_gid[v]));
    std::uniform_real_distribution<double> u(-amplitude, amplitude);
    for (int d = 0; d < m.dim; ++d) X[v][d] += u(gen);
  }
  return X;
}

double random_fill(std::mt19937 &gen) {
  return std::uniform_real_distribution<double>(-1, 1)(gen);
}

geometry::GeometryBar random_bar(const mesh::Mesh &m, std::mt19937 &gen) {
  geometry::GeometryBar b = geometry::zero_geometry(m);
  for (auto &v : b.cell_volume) v = random_fill(gen);
  for (auto *vecs : {&b.cell_centroid, &b.face_area, &b.face_centroid})
    for (auto &v : *vecs)
      for (int d = 0; d < m.dim; ++d) v[d] = random_fill(gen);
  return b;
}

double pair(const geometry::GeometryBar &b, const geometry::Geometry<cplx> &g) {
  double s = 0;
  for (std::size_t i = 0; i < g.cell_volume.size(); ++i) {
    s += b.cell_volume[i] * g.cell_volume[i].imag();
    for (int d = 0; d < 3; ++d) s += b.cell_centroid[i][d] * g.cell_centroid[i][d].imag();
  }
  for (std::size_t i = 0; i < g.face_area.size(); ++i)
    for (int d = 0; d < 3; ++d)
      s += b.face_area[i][d] * g.face_area[i][d].imag() +
           b.face_centroid[i][d] * g.face_centroid[i][d].imag();
  return s / h;
}

void check_reverse_against_complex_step(const mesh::Mesh &m, double amplitude) {
  const std::vector<Vec3<double>> X = perturbed(m, amplitude, 11u);
  std::mt19937 gen(3);
  for (int trial = 0; trial < 3; ++trial) {
    const geometry::GeometryBar bar = random_bar(m, gen);
    std::vector<Vec3<double>> Xbar(m.n_vertices);
    geometry::geometry_reverse(m, X, bar, Xbar);
    std::vector<Vec3<cplx>> Xc(m.n_vertices);
    double adjoint = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v)
      for (int d = 0; d < 3; ++d) {
        const double dx = d < m.dim ? random_fill(gen) : 0.0;
        Xc[v][d] = cplx(X[v][d], h * dx);
        adjoint += Xbar[v][d] * dx;
      }
    geometry::Geometry<cplx> gc;
    geometry::compute_geometry(m, Xc, gc);
    const double cs = pair(bar, gc);
    CAPTURE(trial, adjoint, cs);
    REQUIRE(std::abs(adjoint - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
  }
}

void check_closed_cells(const mesh::Mesh &m, const geometry::Geometry<double> &g) {
  for (PetscInt c = 0; c < m.n_cells; ++c) {
    Vec3<double> s;
    double scale = 0;
    for (PetscInt i = m.cell_face_ptr[c]; i < m.cell_face_ptr[c + 1]; ++i) {
      const PetscInt f = m.cell_face[i];
      s += (m.face_left[f] == c ? 1.0 : -1.0) * g.face_area[f];
      scale = std::max(scale, norm(g.face_area[f]));
    }
    REQUIRE(norm(s) <= 1e-13 * scale);
    REQUIRE(g.cell_volume[c] > 0);
  }
}

struct UnitDomain {
  const char *geo;
  int dim;
  std::vector<std::string> boundaries;
};

} // namespace

TEST_CASE("facet, face and cell kernels: reverse mode equals complex step", "[geometry]") {
  // one distorted hexahedron: 8 vertices, faces listed with outward normals
  const double base[8][3] = {{0, 0, 0},   {1.1, 0.1, 0}, {1, 1, 0.2}, {0, 0.9, 0},
                             {0.1, 0, 1}, {1, 0.2, 1.1}, {1.2, 1, 1}, {0, 1.1, 0.9}};
  const int faces[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                           {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  auto evaluate = [&](const std::vector<Vec3<cplx>> &x, cplx &V, Vec3<cplx> &xc,
                      std::vector<Vec3<cplx>> &S, std::vector<Vec3<cplx>> &xf) {
    geometry::Facet<cplx> facets[6][4];
    geometry::CellFace<cplx> cf[6];
    Vec3<cplx> xbar;
    for (const auto &p : x) xbar += p;
    xbar *= cplx(1.0 / 8);
    for (int f = 0; f < 6; ++f) {
      const Vec3<cplx> *v[4] = {&x[faces[f][0]], &x[faces[f][1]], &x[faces[f][2]], &x[faces[f][3]]};
      const int n = geometry::face_facets(3, v, 4, facets[f]);
      geometry::face_from_facets(facets[f], n, S[f], xf[f]);
      cf[f] = {facets[f], n, 1.0};
    }
    geometry::cell_from_facets(3, xbar, cf, 6, V, xc);
  };
  std::vector<Vec3<double>> x(8);
  for (int i = 0; i < 8; ++i) x[i] = Vec3<double>(base[i][0], base[i][1], base[i][2]);

  // reverse with random adjoints
  std::mt19937 gen(5);
  const double Vbar = random_fill(gen);
  const Vec3<double> xcbar(random_fill(gen), random_fill(gen), random_fill(gen));
  std::vector<Vec3<double>> Sbar(6), xfbar(6);
  for (int f = 0; f < 6; ++f)
    for (int d = 0; d < 3; ++d) Sbar[f][d] = random_fill(gen), xfbar[f][d] = random_fill(gen);
  std::vector<Vec3<double>> xb(8);
  {
    geometry::Facet<double> facets[6][4], facets_bar[6][4];
    geometry::CellFace<double> cf[6];
    geometry::Facet<double> *fb[6];
    Vec3<double> xbar;
    for (const auto &p : x) xbar += p;
    xbar *= 1.0 / 8;
    for (int f = 0; f < 6; ++f) {
      const Vec3<double> *v[4] = {&x[faces[f][0]], &x[faces[f][1]], &x[faces[f][2]],
                                  &x[faces[f][3]]};
      geometry::face_facets(3, v, 4, facets[f]);
      geometry::face_from_facets_reverse(facets[f], 4, Sbar[f], xfbar[f], facets_bar[f]);
      cf[f] = {facets[f], 4, 1.0};
      fb[f] = facets_bar[f];
    }
    Vec3<double> xbar_bar;
    geometry::cell_from_facets_reverse(3, xbar, cf, 6, Vbar, xcbar, xbar_bar, fb);
    for (int i = 0; i < 8; ++i) xb[i] += (1.0 / 8) * xbar_bar;
    for (int f = 0; f < 6; ++f) {
      const Vec3<double> *v[4] = {&x[faces[f][0]], &x[faces[f][1]], &x[faces[f][2]],
                                  &x[faces[f][3]]};
      Vec3<double> *vb[4] = {&xb[faces[f][0]], &xb[faces[f][1]], &xb[faces[f][2]],
                             &xb[faces[f][3]]};
      geometry::face_facets_reverse(3, v, 4, facets_bar[f], vb);
    }
  }
  // complex step, one coordinate at a time
  for (int i = 0; i < 8; ++i)
    for (int d = 0; d < 3; ++d) {
      std::vector<Vec3<cplx>> xc(8);
      for (int j = 0; j < 8; ++j)
        for (int e = 0; e < 3; ++e) xc[j][e] = cplx(x[j][e], (i == j && d == e) ? h : 0.0);
      cplx V;
      Vec3<cplx> c;
      std::vector<Vec3<cplx>> S(6), xf(6);
      evaluate(xc, V, c, S, xf);
      double cs = Vbar * V.imag() + dot(xcbar, Vec3<double>(c[0].imag(), c[1].imag(), c[2].imag()));
      for (int f = 0; f < 6; ++f)
        for (int e = 0; e < 3; ++e)
          cs += Sbar[f][e] * S[f][e].imag() + xfbar[f][e] * xf[f][e].imag();
      cs /= h;
      CAPTURE(i, d, xb[i][d], cs);
      REQUIRE(std::abs(xb[i][d] - cs) <= 1e-12 * std::max(1.0, std::abs(cs)));
    }
}

TEST_CASE("geometry of unit squares and cubes is exact", "[geometry][mpi]") {
  const std::vector<UnitDomain> domains = {
      {"square-mixed.geo", 2, {"left", "right", "bottom", "top"}},
      {"box-tet.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
      {"box-hex.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
      {"box-prism.geo", 3, {"sides", "zmin", "zmax"}},
  };
  for (const auto &dom : domains) {
    SECTION(dom.geo) {
      mesh::Mesh m;
      test::load(PETSC_COMM_WORLD, dom.geo, 0, dom.dim, dom.boundaries, &m);
      geometry::Geometry<double> g;
      geometry::compute_geometry(m, m.coordinates, g);
      check_closed_cells(m, g);
      double local[5] = {0, 0, 0, 0, 0}; // volume, first moments
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        local[0] += g.cell_volume[c];
        for (int d = 0; d < 3; ++d) local[1 + d] += g.cell_volume[c] * g.cell_centroid[c][d];
      }
      double total[5];
      MPI_Allreduce(local, total, 5, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
      REQUIRE(total[0] == Approx(1.0).epsilon(1e-13));
      for (int d = 0; d < dom.dim; ++d) REQUIRE(total[1 + d] == Approx(0.5).epsilon(1e-13));
      // every boundary face lies on the boundary of the unit box, and its outward normal is
      // axis-aligned
      for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
        if (m.face_right[f] >= 0) continue;
        const Vec3<double> n = (1.0 / norm(g.face_area[f])) * g.face_area[f];
        const Vec3<double> &xf = g.face_centroid[f];
        bool on_side = false;
        for (int d = 0; d < dom.dim; ++d)
          on_side = on_side || (std::abs(xf[d]) < 1e-12 && n[d] == Approx(-1.0).epsilon(1e-12)) ||
                    (std::abs(xf[d] - 1) < 1e-12 && n[d] == Approx(1.0).epsilon(1e-12));
        REQUIRE(on_side);
      }
    }
  }
}

TEST_CASE("single cells: volumes and centroids", "[geometry]") {
  // right triangle (0,0),(1,0),(0,1): area 1/2, centroid (1/3, 1/3), through the 2D facets
  const Vec3<double> p[3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  geometry::Facet<double> facets[3][1];
  geometry::CellFace<double> cf[3];
  for (int k = 0; k < 3; ++k) {
    const Vec3<double> *v[2] = {&p[k], &p[(k + 1) % 3]};
    geometry::face_facets(2, v, 2, facets[k]);
    cf[k] = {facets[k], 1, 1.0};
  }
  double V;
  Vec3<double> xc;
  geometry::cell_from_facets(2, (1.0 / 3) * (p[0] + p[1] + p[2]), cf, 3, V, xc);
  REQUIRE(V == Approx(0.5).epsilon(1e-15));
  REQUIRE(xc[0] == Approx(1.0 / 3).epsilon(1e-15));
  REQUIRE(xc[1] == Approx(1.0 / 3).epsilon(1e-15));

  // trapezoid (0,0),(2,0),(1,1),(0,1): area 1.5, centroid x = (2^2+2*1+1^2)/(3*3)=7/9, y =
  // (2+2*1)/(3*3) = 4/9
  const Vec3<double> q[4] = {{0, 0, 0}, {2, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  geometry::Facet<double> qf[4][1];
  geometry::CellFace<double> qc[4];
  Vec3<double> avg;
  for (int k = 0; k < 4; ++k) {
    const Vec3<double> *v[2] = {&q[k], &q[(k + 1) % 4]};
    geometry::face_facets(2, v, 2, qf[k]);
    qc[k] = {qf[k], 1, 1.0};
    avg += 0.25 * q[k];
  }
  geometry::cell_from_facets(2, avg, qc, 4, V, xc);
  REQUIRE(V == Approx(1.5).epsilon(1e-15));
  REQUIRE(xc[0] == Approx(7.0 / 9).epsilon(1e-14));
  REQUIRE(xc[1] == Approx(4.0 / 9).epsilon(1e-14));
}

TEST_CASE("mesh geometry reverse mode equals complex step (2D mixed, 3D tet/hex/prism)",
          "[geometry][mpi]") {
  const std::vector<UnitDomain> domains = {
      {"square-mixed.geo", 2, {"left", "right", "bottom", "top"}},
      {"box-tet.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
      {"box-hex.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
      {"box-prism.geo", 3, {"sides", "zmin", "zmax"}},
  };
  for (const auto &dom : domains) {
    SECTION(dom.geo) {
      mesh::Mesh m;
      test::load(PETSC_COMM_WORLD, dom.geo, 0, dom.dim, dom.boundaries, &m);
      check_reverse_against_complex_step(m, 0.02);
    }
  }
}
