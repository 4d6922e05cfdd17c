// Geometric constraints (adjoint/geometric_constraints.cpp):
//  - values: the DFG cylinder's area and centroid equal the inscribed polygon's (computed
//    here from the wall vertices sorted by angle), within the polygon error of pi r^2; a box
//    obstacle's volume and centroid in a 3D tetrahedral mesh; a box domain's whole boundary
//    encloses minus the domain: -sum of the cell volumes, also with perturbed (non-planar)
//    faces; the thickness of an ellipse equals the interpolated wall vertices' and, at the
//    vertex station, the exact 2b;
//  - dC/dX . dX vs fourth-order central finite differences for random dX (all kinds, 2D and
//    3D) to 1e-8 relative;
//  - 1 and 2 ranks: the same values and the same dC/dX by serial vertex index;
//  - bad input: clear errors; a thickness station off a moved body: ok = false.
// [mpi]: also on 2 ranks.
#include "karman/design/geometric_constraints.hpp"
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>

using namespace karman;
using design::GeometricConstraint;

namespace {

const std::vector<std::string> kDfg = {"inlet", "outlet", "walls", "cylinder"};
const std::vector<std::string> kEllipse = {"body", "farfield"};
const std::vector<std::string> kObstacle = {"outer", "obstacle"};
const std::vector<std::string> kBox = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

// X + a random perturbation that depends only on the serial vertex index (all copies agree)
std::vector<Vec3<double>> perturbed(const mesh::Mesh &m, double amplitude, unsigned seed) {
  std::vector<Vec3<double>> X = m.coordinates;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    std::mt19937 gen(seed + 7919u * static_cast<unsigned>(m.vertex_gid[v]));
    std::uniform_real_distribution<double> u(-amplitude, amplitude);
    for (int d = 0; d < m.dim; ++d) X[v][d] += u(gen);
  }
  return X;
}

double global_sum(double s) {
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return s;
}

// sum over owned vertices of a . b, over all ranks
double vertex_dot(const mesh::Mesh &m, const std::vector<Vec3<double>> &a,
                  const std::vector<Vec3<double>> &b) {
  double s = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) s += dot(a[v], b[v]);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, m.comm);
  return s;
}

design::GeometricConstraintValue evaluate(const GeometricConstraint &c,
                                          const std::vector<Vec3<double>> &X, bool gradient) {
  design::GeometricConstraintValue r;
  clear_error();
  const PetscErrorCode ierr = c.evaluate(X, gradient, &r);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  INFO(r.failure);
  REQUIRE(r.ok);
  return r;
}

std::vector<int> patches(const mesh::Mesh &m, const std::vector<std::string> &names) {
  std::vector<int> p;
  for (const auto &n : names) {
    p.push_back(m.patch_index(n));
    REQUIRE(p.back() >= 0);
  }
  return p;
}

GeometricConstraint volume(const mesh::Mesh &m, const std::vector<std::string> &walls) {
  GeometricConstraint c;
  clear_error();
  const PetscErrorCode ierr = GeometricConstraint::volume(m, patches(m, walls), &c);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return c;
}

GeometricConstraint centroid(const mesh::Mesh &m, const std::vector<std::string> &walls, int axis) {
  GeometricConstraint c;
  clear_error();
  const PetscErrorCode ierr = GeometricConstraint::centroid(m, patches(m, walls), axis, &c);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return c;
}

GeometricConstraint thickness(const mesh::Mesh &m, const std::vector<std::string> &walls,
                              double station) {
  GeometricConstraint c;
  clear_error();
  const PetscErrorCode ierr = GeometricConstraint::thickness(m, patches(m, walls), station, &c);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  return c;
}

// The vertices of a wall (serial index -> coordinates in m.coordinates), from all ranks.
std::map<PetscInt, Vec3<double>> wall_vertices(const mesh::Mesh &m, const std::string &wall) {
  std::vector<double> mine;
  for (PetscInt f : m.patch_faces[m.patch_index(wall)])
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i) {
      const PetscInt v = m.face_vertex[i];
      mine.insert(mine.end(), {double(m.vertex_gid[v]), m.coordinates[v][0], m.coordinates[v][1],
                               m.coordinates[v][2]});
    }
  int n = static_cast<int>(mine.size()), size;
  MPI_Comm_size(m.comm, &size);
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, m.comm);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<double> all(displs[size - 1] + counts[size - 1]);
  MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
                 m.comm);
  std::map<PetscInt, Vec3<double>> out;
  for (std::size_t i = 0; i < all.size(); i += 4)
    out[static_cast<PetscInt>(all[i])] = Vec3<double>(all[i + 1], all[i + 2], all[i + 3]);
  return out;
}

// A star-shaped polygon about `centre` from its vertices: sorted by angle.
std::vector<Vec3<double>> polygon(const std::map<PetscInt, Vec3<double>> &vertices,
                                  const Vec3<double> &centre) {
  std::vector<Vec3<double>> p;
  for (const auto &kv : vertices) p.push_back(kv.second);
  std::sort(p.begin(), p.end(), [&](const Vec3<double> &a, const Vec3<double> &b) {
    return std::atan2(a[1] - centre[1], a[0] - centre[0]) <
           std::atan2(b[1] - centre[1], b[0] - centre[0]);
  });
  return p;
}

// Shoelace area and centroid of a counter-clockwise polygon (coordinates relative to c0).
void polygon_area_centroid(const std::vector<Vec3<double>> &p, const Vec3<double> &c0, double *A,
                           Vec3<double> *xc) {
  double a = 0, mx = 0, my = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3<double> u = p[i] - c0, w = p[(i + 1) % p.size()] - c0;
    const double cr = u[0] * w[1] - w[0] * u[1];
    a += 0.5 * cr;
    mx += (u[0] + w[0]) * cr / 6.0;
    my += (u[1] + w[1]) * cr / 6.0;
  }
  *A = a;
  *xc = c0 + Vec3<double>(mx / a, my / a, 0.0);
}

// dC/dX . dX against a central finite difference of C(X + t dX) for a random direction dX.
void check_gradient(const mesh::Mesh &m, const GeometricConstraint &c,
                    const std::vector<Vec3<double>> &X, double h, unsigned seed) {
  std::vector<Vec3<double>> dX(m.n_vertices);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    std::mt19937 gen(seed + 104729u * static_cast<unsigned>(m.vertex_gid[v]));
    std::uniform_real_distribution<double> u(-1, 1);
    for (int d = 0; d < m.dim; ++d) dX[v][d] = u(gen);
  }
  const design::GeometricConstraintValue r = evaluate(c, X, true);
  REQUIRE(r.dX.size() == static_cast<std::size_t>(m.n_vertices));
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.dim == 2) REQUIRE(r.dX[v][2] == 0.0);
  const double adj = vertex_dot(m, r.dX, dX);
  auto at = [&](double t) {
    std::vector<Vec3<double>> Xt = X;
    for (PetscInt v = 0; v < m.n_vertices; ++v) Xt[v] += t * dX[v];
    return evaluate(c, Xt, false).value;
  };
  // fourth-order central difference: truncation O(h^4), round-off O(eps / h)
  const double fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h);
  CAPTURE(c.name(), r.value, adj, fd, (adj - fd) / fd);
  REQUIRE(std::abs(fd) > 0);
  REQUIRE(std::abs(adj - fd) <= 1e-8 * std::abs(fd));
}

} // namespace

TEST_CASE("area and centroid of the DFG cylinder equal the inscribed polygon's",
          "[adjoint][constraints][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  const double r = 0.05;
  const Vec3<double> centre(0.2, 0.2, 0);
  const auto vertices = wall_vertices(m, "cylinder");
  const std::vector<Vec3<double>> p = polygon(vertices, centre);
  double A_poly;
  Vec3<double> c_poly;
  polygon_area_centroid(p, centre, &A_poly, &c_poly);
  const GeometricConstraint area = volume(m, {"cylinder"});
  REQUIRE(area.name() == "area(cylinder)");
  REQUIRE(area.kind() == design::GeometricConstraintKind::Volume);
  const double A = evaluate(area, m.coordinates, false).value;
  // the inscribed regular n-gon: A = n/2 r^2 sin(2 pi / n) < pi r^2
  const double n = static_cast<double>(p.size());
  const double A_ngon = 0.5 * n * r * r * std::sin(2 * M_PI / n);
  CAPTURE(p.size(), A, A_poly, A_ngon, M_PI * r * r, M_PI * r * r - A);
  REQUIRE(p.size() == 96);
  REQUIRE(std::abs(A - A_poly) <= 1e-12 * A_poly);
  REQUIRE(std::abs(A - A_ngon) <= 1e-12 * A_ngon);
  REQUIRE(A < M_PI * r * r);
  REQUIRE(M_PI * r * r - A <= 1.01 * M_PI * r * r * (2 * M_PI * M_PI / (3 * n * n)));
  for (int axis = 0; axis < 2; ++axis) {
    const GeometricConstraint c = centroid(m, {"cylinder"}, axis);
    const double xc = evaluate(c, m.coordinates, false).value;
    CAPTURE(axis, xc, c_poly[axis]);
    REQUIRE(std::abs(xc - c_poly[axis]) <= 1e-12);
    REQUIRE(std::abs(xc - 0.2) <= 1e-12);
  }
  REQUIRE(centroid(m, {"cylinder"}, 1).name() == "centroid-y(cylinder)");
}

TEST_CASE("volume and centroid of a 3D box obstacle; a box domain's whole boundary",
          "[adjoint][constraints][mpi]") {
  SECTION("box obstacle in a tetrahedral mesh") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, "box-obstacle.geo", 0, 3, kObstacle, &m);
    const GeometricConstraint V = volume(m, {"obstacle"});
    REQUIRE(V.name() == "volume(obstacle)");
    REQUIRE(evaluate(V, m.coordinates, false).value == Approx(0.015).epsilon(1e-12));
    const double exact[3] = {0.45, 0.475, 0.5};
    for (int axis = 0; axis < 3; ++axis)
      REQUIRE(std::abs(evaluate(centroid(m, {"obstacle"}, axis), m.coordinates, false).value -
                       exact[axis]) <= 1e-12);
    // the outer walls enclose the fluid and the obstacle with the other sign
    REQUIRE(evaluate(volume(m, {"outer"}), m.coordinates, false).value ==
            Approx(-1.0).epsilon(1e-12));
    // perturbed (also the walls): the whole boundary encloses minus the fluid volume
    const std::vector<Vec3<double>> X = perturbed(m, 0.01, 3u);
    geometry::Geometry<double> g;
    geometry::compute_geometry(m, X, g);
    double fluid = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) fluid += g.cell_volume[c];
    fluid = global_sum(fluid);
    const double outer = evaluate(volume(m, {"outer"}), X, false).value;
    const double obstacle = evaluate(V, X, false).value;
    const double both = evaluate(volume(m, {"outer", "obstacle"}), X, false).value;
    CAPTURE(fluid, outer, obstacle, both);
    REQUIRE(std::abs(obstacle - 0.015) > 1e-6); // the perturbation changed it
    REQUIRE(std::abs(outer + obstacle + fluid) <= 1e-13);
    REQUIRE(std::abs(both + fluid) <= 1e-13);
  }
  SECTION("unit cube of hexahedra, perturbed: non-planar faces") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, "box-hex.geo", 0, 3, kBox, &m);
    REQUIRE(evaluate(volume(m, kBox), m.coordinates, false).value == Approx(-1).epsilon(1e-14));
    const std::vector<Vec3<double>> X = perturbed(m, 0.05, 5u);
    geometry::Geometry<double> g;
    geometry::compute_geometry(m, X, g);
    double local[4] = {0, 0, 0, 0};
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      local[0] += g.cell_volume[c];
      for (int d = 0; d < 3; ++d) local[1 + d] += g.cell_volume[c] * g.cell_centroid[c][d];
    }
    MPI_Allreduce(MPI_IN_PLACE, local, 4, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    const double V = evaluate(volume(m, kBox), X, false).value;
    CAPTURE(V, local[0]);
    REQUIRE(std::abs(V - 1.0) > 1e-4);
    REQUIRE(std::abs(V + local[0]) <= 1e-14);
    for (int axis = 0; axis < 3; ++axis) {
      const double xc = evaluate(centroid(m, kBox, axis), X, false).value;
      CAPTURE(axis, xc, local[1 + axis] / local[0]);
      REQUIRE(std::abs(xc - local[1 + axis] / local[0]) <= 1e-13);
    }
  }
}

TEST_CASE("thickness of an ellipse at chord stations", "[adjoint][constraints][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "ellipse.geo", 0, 2, kEllipse, &m);
  const double xc = 0.1, yc = 0.05, a = 0.5, b = 0.1;
  // at the station of the vertices (xc, yc +- b): exactly 2b
  const GeometricConstraint mid = thickness(m, {"body"}, xc);
  REQUIRE(mid.kind() == design::GeometricConstraintKind::Thickness);
  REQUIRE(mid.name() == "thickness(body, x=0.1)");
  REQUIRE(evaluate(mid, m.coordinates, false).value == Approx(2 * b).epsilon(1e-14));
  // elsewhere: the upper and lower polylines interpolated at the station
  std::vector<Vec3<double>> upper, lower;
  for (const auto &kv : wall_vertices(m, "body"))
    (kv.second[1] > yc ? upper : lower).push_back(kv.second);
  auto height = [](std::vector<Vec3<double>> pts, double x) {
    std::sort(pts.begin(), pts.end(), [](const auto &p, const auto &q) { return p[0] < q[0]; });
    for (std::size_t i = 0; i + 1 < pts.size(); ++i)
      if (pts[i][0] <= x && x < pts[i + 1][0])
        return pts[i][1] +
               (x - pts[i][0]) / (pts[i + 1][0] - pts[i][0]) * (pts[i + 1][1] - pts[i][1]);
    return std::nan("");
  };
  // the end points (xc +- a, yc) belong to both polylines
  upper.push_back(Vec3<double>(xc - a, yc, 0)), upper.push_back(Vec3<double>(xc + a, yc, 0));
  lower.push_back(Vec3<double>(xc - a, yc, 0)), lower.push_back(Vec3<double>(xc + a, yc, 0));
  for (double xs : {-0.35, -0.1, 0.3, 0.55}) {
    const double t = evaluate(thickness(m, {"body"}, xs), m.coordinates, false).value;
    const double independent = height(upper, xs) - height(lower, xs);
    const double exact = 2 * b * std::sqrt(1 - (xs - xc) * (xs - xc) / (a * a));
    CAPTURE(xs, t, independent, exact);
    REQUIRE(std::abs(t - independent) <= 1e-14);
    REQUIRE(t < exact);         // inscribed polygon
    REQUIRE(exact - t <= 3e-3); // the polygon's error (12 segments per quarter)
  }
  // its area: the polygon's
  double A_poly;
  Vec3<double> c_poly;
  polygon_area_centroid(polygon(wall_vertices(m, "body"), Vec3<double>(xc, yc, 0)),
                        Vec3<double>(xc, yc, 0), &A_poly, &c_poly);
  const double A = evaluate(volume(m, {"body"}), m.coordinates, false).value;
  CAPTURE(A, A_poly, M_PI * a * b);
  REQUIRE(std::abs(A - A_poly) <= 1e-12 * A_poly);
  REQUIRE(A < M_PI * a * b);
}

TEST_CASE("geometric constraint gradients equal central finite differences",
          "[adjoint][constraints][mpi]") {
  SECTION("DFG cylinder: area, centroid") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
    const std::vector<Vec3<double>> X = perturbed(m, 2e-4, 1u);
    check_gradient(m, volume(m, {"cylinder"}), X, 1e-5, 10u);
    check_gradient(m, centroid(m, {"cylinder"}, 0), X, 1e-5, 11u);
    check_gradient(m, centroid(m, {"cylinder"}, 1), X, 1e-5, 12u);
  }
  SECTION("ellipse: thickness, area, centroid") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, "ellipse.geo", 0, 2, kEllipse, &m);
    const std::vector<Vec3<double>> X = perturbed(m, 1e-3, 2u);
    for (double xs : {-0.35, 0.3, 0.55})
      check_gradient(m, thickness(m, {"body"}, xs), X, 1e-5, 13u);
    check_gradient(m, volume(m, {"body"}), X, 1e-5, 14u);
    check_gradient(m, centroid(m, {"body"}, 1), X, 1e-5, 15u);
  }
  SECTION("3D box obstacle (tetrahedra): volume, centroid") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, "box-obstacle.geo", 0, 3, kObstacle, &m);
    const std::vector<Vec3<double>> X = perturbed(m, 0.01, 4u);
    check_gradient(m, volume(m, {"obstacle"}), X, 1e-5, 16u);
    check_gradient(m, volume(m, {"outer", "obstacle"}), X, 1e-5, 17u);
    for (int axis = 0; axis < 3; ++axis)
      check_gradient(m, centroid(m, {"obstacle"}, axis), X, 1e-5, 18u + axis);
  }
  SECTION("3D unit cube of hexahedra (non-planar faces): volume, centroid") {
    mesh::Mesh m;
    test::load(PETSC_COMM_WORLD, "box-hex.geo", 0, 3, kBox, &m);
    const std::vector<Vec3<double>> X = perturbed(m, 0.05, 6u);
    check_gradient(m, volume(m, kBox), X, 1e-5, 21u);
    check_gradient(m, centroid(m, kBox, 2), X, 1e-5, 22u);
  }
}

TEST_CASE("geometric constraints: 1 and 2 ranks give the same values and gradients",
          "[adjoint][constraints][mpi]") {
  struct Case {
    std::string geo;
    int dim;
    std::vector<std::string> boundaries;
    std::function<GeometricConstraint(const mesh::Mesh &)> make;
  };
  const std::vector<Case> cases = {
      {test::dfg_geo(), 2, kDfg, [](const mesh::Mesh &m) { return volume(m, {"cylinder"}); }},
      {test::dfg_geo(), 2, kDfg, [](const mesh::Mesh &m) { return centroid(m, {"cylinder"}, 1); }},
      {"ellipse.geo", 2, kEllipse, [](const mesh::Mesh &m) { return thickness(m, {"body"}, 0.3); }},
      {"box-obstacle.geo", 3, kObstacle,
       [](const mesh::Mesh &m) { return volume(m, {"obstacle"}); }},
      {"box-obstacle.geo", 3, kObstacle,
       [](const mesh::Mesh &m) { return centroid(m, {"obstacle"}, 0); }},
  };
  for (const Case &k : cases) {
    mesh::Mesh dist, serial;
    test::load(PETSC_COMM_WORLD, k.geo, 0, k.dim, k.boundaries, &dist);
    test::load(PETSC_COMM_SELF, k.geo, 0, k.dim, k.boundaries, &serial);
    const GeometricConstraint cd = k.make(dist), cs = k.make(serial);
    const design::GeometricConstraintValue rd = evaluate(cd, perturbed(dist, 1e-4, 7u), true);
    const design::GeometricConstraintValue rs = evaluate(cs, perturbed(serial, 1e-4, 7u), true);
    CAPTURE(cd.name(), rd.value, rs.value);
    REQUIRE(std::abs(rd.value - rs.value) <= 1e-12 * std::abs(rs.value));
    std::map<PetscInt, PetscInt> serial_vertex;
    double scale = 0;
    for (PetscInt v = 0; v < serial.n_vertices; ++v) {
      serial_vertex[serial.vertex_gid[v]] = v;
      scale = std::max(scale, norm(rs.dX[v]));
    }
    REQUIRE(scale > 0);
    for (PetscInt v = 0; v < dist.n_vertices; ++v) {
      const Vec3<double> &s = rs.dX[serial_vertex.at(dist.vertex_gid[v])];
      CAPTURE(v, dist.vertex_gid[v], rd.dX[v][0], s[0], rd.dX[v][1], s[1]);
      REQUIRE(norm(rd.dX[v] - s) <= 1e-12 * scale);
    }
  }
}

TEST_CASE("geometric constraints: bad input gets a clear error", "[adjoint][constraints][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "ellipse.geo", 0, 2, kEllipse, &m);
  const int body = m.patch_index("body"), farfield = m.patch_index("farfield");
  GeometricConstraint c;
  auto fails = [&](PetscErrorCode ierr, const std::string &message) {
    INFO(message);
    REQUIRE(ierr != 0);
    REQUIRE_THAT(last_error_message(), Catch::Contains(message));
    clear_error();
  };
  clear_error();
  fails(GeometricConstraint::volume(m, {}, &c), "area constraint: no walls given");
  fails(GeometricConstraint::thickness(m, {}, 0.1, &c), "thickness constraint: no walls given");
  fails(GeometricConstraint::volume(m, {body, body}, &c), "wall 'body' is listed twice");
  fails(GeometricConstraint::centroid(m, {body}, 2, &c),
        "centroid constraint: axis 2 is not a coordinate axis of this 2D mesh");
  fails(GeometricConstraint::thickness(m, {body}, 0.7, &c),
        "thickness constraint: station x = 0.7 is outside the body: the walls [body] span x in "
        "(-0.4, 0.6)");
  fails(GeometricConstraint::thickness(m, {body, farfield}, 0.3, &c),
        "crosses the walls [body, farfield] 4 times (expected 2");
  {
    // the channel walls of the DFG mesh do not close
    mesh::Mesh dfg;
    test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &dfg);
    // (their area vectors sum to 0: the check must be topological)
    fails(GeometricConstraint::volume(dfg, {dfg.patch_index("walls")}, &c),
          "area constraint: the walls [walls] do not enclose a body: 4 of their vertices lie on "
          "an open end of the wall, e.g. (");
    fails(GeometricConstraint::centroid(
              dfg, {dfg.patch_index("cylinder"), dfg.patch_index("inlet")}, 0, &c),
          "centroid constraint: the walls [cylinder, inlet] do not enclose a body");
  }
  {
    mesh::Mesh box;
    test::load(PETSC_COMM_WORLD, "box-obstacle.geo", 0, 3, kObstacle, &box);
    fails(GeometricConstraint::thickness(box, {box.patch_index("obstacle")}, 0.4, &c),
          "thickness constraint: thickness at chord stations is defined for 2D (airfoil) meshes; "
          "this mesh is 3D");
  }
  // a body moved off its station: not an error, but undefined (a failed design)
  c = thickness(m, {"body"}, 0.3);
  std::vector<Vec3<double>> X = m.coordinates;
  for (auto &x : X) x[0] += 10;
  design::GeometricConstraintValue r;
  REQUIRE(c.evaluate(X, true, &r) == 0);
  REQUIRE(!r.ok);
  REQUIRE_THAT(r.failure, Catch::Contains("station x = 0.3: the vertical line crosses the walls "
                                          "[body] 0 times"));
}
