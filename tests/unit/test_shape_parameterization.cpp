// Shape parameterizations (adjoint/shape_parameterization): for every kind the reverse mode
// against the forward map (dot-product test for the linear kinds, central finite differences
// for the rigid rotation), the properties that pin each map down (FFD partition of unity,
// linear precision, fixed layers, vertices outside the box and on other walls; Hicks-Henne
// peak position and amplitude, thickening sign; rigid motion preserves distances;
// surface-normal: constants pass the filter, L = 0 is the identity, displacement along the
// normal; radial: equal values a radial offset, one value the B-spline of the angle along the
// ray, star-shaped walls only), the same results on 1 and 2 ranks by serial vertex index ([mpi]),
// the design's wall between the vertices (DesignSpace::wall_position) equal to the displacement at
// the vertices, and bad input (one error naming the file and the key).
#include "karman/optimization/case_schema.hpp"
#include "karman/design/shape_parameterization.hpp"
#include "karman/design/wall_surface.hpp"
#include "karman/core/error.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>

using namespace karman;

namespace {

const std::vector<std::string> kDfg = {"inlet", "outlet", "walls", "cylinder"};
const char *kDfgBoundaries = R"(
mesh: {file: dfg.msh}
boundaries:
  inlet: {type: velocity-inlet, velocity: 0.3, profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
)";
const char *kNacaBoundaries = R"(
mesh: {file: naca.msh}
boundaries:
  airfoil: {type: wall}
  farfield: {type: far-field, velocity: [1, 0]}
)";

// Loads the case text (boundaries + design) on comm; REQUIREs success.
void load_case(MPI_Comm comm, const std::string &text, config::CaseConfig *cfg) {
  clear_error();
  const PetscErrorCode ierr = config::CaseConfig::load_text(comm, text, "case.yaml", "/cases/x", {},
                                                            optimization::case_schema(), *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

// Sets up the design space of `design` (YAML of the design list) on a loaded mesh.
void make_space(const mesh::Mesh &m, const std::string &boundaries, const std::string &design,
                design::DesignSpace *space) {
  config::CaseConfig cfg;
  load_case(m.comm, boundaries + "design:\n" + design, &cfg);
  clear_error();
  const PetscErrorCode ierr = space->setup(m, m.coordinates, cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

// The error message of setting up `design` on m ("" when it worked).
std::string setup_error(const mesh::Mesh &m, const std::string &boundaries,
                        const std::string &design) {
  config::CaseConfig cfg;
  load_case(m.comm, boundaries + "design:\n" + design, &cfg);
  design::DesignSpace space;
  clear_error();
  return space.setup(m, m.coordinates, cfg) ? last_error_message() : std::string();
}

// A pseudo-random value in [-1, 1] from integers (the same on every rank and rank count).
double pseudo_random(long i, int k) {
  const double x = std::sin(12.9898 * static_cast<double>(i) + 78.233 * k) * 43758.5453;
  return 2.0 * (x - std::floor(x)) - 1.0;
}

std::vector<double> random_design(std::size_t n, int seed) {
  std::vector<double> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = pseudo_random(static_cast<long>(i), seed);
  return a;
}

// A vertex field that is a function of the serial vertex index: every copy holds the same
// value (the "total" that the reverse mode expects).
std::vector<Vec3<double>> random_vertex_field(const mesh::Mesh &m, int seed) {
  std::vector<Vec3<double>> f(m.n_vertices);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    for (int d = 0; d < m.dim; ++d) f[v][d] = pseudo_random(m.vertex_gid[v], seed + d);
  return f;
}

// sum over the owned vertices of all ranks of u_v . w_v
double owned_dot(const mesh::Mesh &m, const std::vector<Vec3<double>> &u,
                 const std::vector<Vec3<double>> &w) {
  double local = 0, total = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) local += dot(u[v], w[v]);
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, m.comm);
  return total;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Dot-product test <D a, d_bar> = <a, D^T d_bar> for random a and d_bar; returns the
// relative difference.
double dot_product_test(const mesh::Mesh &m, const design::DesignSpace &space) {
  const std::vector<double> a = random_design(space.size(), 1);
  const std::vector<Vec3<double>> d_bar = random_vertex_field(m, 5);
  std::vector<Vec3<double>> d;
  REQUIRE(space.displacement(a, &d) == 0);
  std::vector<double> a_bar;
  REQUIRE(space.reverse(a, d_bar, &a_bar) == 0);
  const double lhs = owned_dot(m, d, d_bar), rhs = dot(a, a_bar);
  INFO("<D a, d_bar> = " << lhs << ", <a, D^T d_bar> = " << rhs);
  REQUIRE(std::abs(lhs) > 1e-3); // the test means something
  return std::abs(lhs - rhs) / std::abs(lhs);
}

bool on_cylinder(const Vec3<double> &x) {
  return std::abs(norm(x - Vec3<double>(0.2, 0.2, 0.0)) - 0.05) < 1e-6;
}

double bernstein(int n, int i, double s) {
  double c = 1;
  for (int k = 0; k < i; ++k) c = c * (n - k) / (k + 1);
  return c * std::pow(s, i) * std::pow(1 - s, n - i);
}

// NACA 0012 half thickness (tests/data/naca0012.geo: closed trailing edge)
double naca0012(double x) {
  return 0.6 * (0.2969 * std::sqrt(x) - 0.1260 * x - 0.3516 * x * x + 0.2843 * x * x * x -
                0.1036 * x * x * x * x);
}

// The FFD box of the tests: the right half of the cylinder (x >= 0.2) and a piece of the
// channel's lower wall (y = 0), which is not a design wall.
const double kBoxOrigin[2] = {0.2, -0.05}, kBoxSize[2] = {0.2, 0.35};
std::string ffd_design(int fixed_layers, const std::string &axes) {
  return "  - {type: ffd, walls: [cylinder], origin: [0.2, -0.05], size: [0.2, 0.35], lattice: [5, "
         "4], axes: " +
         axes + ", fixed_layers: " + std::to_string(fixed_layers) + "}\n";
}

} // namespace

TEST_CASE("FFD: partition of unity, linear precision, fixed layers, what does not move",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  // owned vertices of the cylinder in the box, over all ranks
  auto count_moved = [&](const std::vector<char> &moved) {
    int n = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) n += m.vertex_owned[v] && moved[v];
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
    return n;
  };
  std::vector<char> in_box(m.n_vertices);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    in_box[v] = on_cylinder(m.coordinates[v]) && m.coordinates[v][0] >= 0.2 - 1e-12;
  const int moved_expected = count_moved(in_box);
  REQUIRE(moved_expected > 10);

  SECTION("fixed_layers 0: a uniform control-point displacement moves every vertex by it, a "
          "linear one reproduces the linear field") {
    design::DesignSpace space;
    make_space(m, kDfgBoundaries, ffd_design(0, "[x, y]"), &space);
    REQUIRE(space.size() == 5 * 4 * 2);
    REQUIRE(space.names()[0] == "ffd0.cp[0,0].x");
    REQUIRE(space.names()[3] == "ffd0.cp[1,0].y");
    REQUIRE(space.names().back() == "ffd0.cp[4,3].y");
    // a_(ij).x = x-coordinate of the control point relative to the origin, a_(ij).y = 1
    std::vector<double> a(space.size());
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) {
        a[2 * (j * 5 + i)] = kBoxSize[0] * i / 4.0;
        a[2 * (j * 5 + i) + 1] = 1.0;
      }
    std::vector<Vec3<double>> d;
    REQUIRE(space.displacement(a, &d) == 0);
    REQUIRE(count_moved(space.moved_vertices()) == moved_expected);
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      const Vec3<double> &x = m.coordinates[v];
      if (in_box[v]) {
        REQUIRE(space.moved_vertices()[v]);
        REQUIRE(d[v][0] == Approx(std::max(0.0, x[0] - kBoxOrigin[0])).margin(1e-14));
        REQUIRE(d[v][1] == Approx(1.0).epsilon(1e-14));
      } else {
        REQUIRE(!space.moved_vertices()[v]);
        REQUIRE(norm(d[v]) == 0.0); // outside the box, or in it on the (undesigned) lower wall
      }
    }
  }

  SECTION("fixed_layers 1: the free control points' partition-of-unity amount, zero on the box "
          "boundary") {
    design::DesignSpace space;
    make_space(m, kDfgBoundaries, ffd_design(1, "[y]"), &space);
    REQUIRE(space.size() == 3 * 2);
    REQUIRE(space.names()[0] == "ffd0.cp[1,1].y");
    std::vector<Vec3<double>> d;
    REQUIRE(space.displacement(std::vector<double>(space.size(), 1.0), &d) == 0);
    int at_boundary = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      const Vec3<double> &x = m.coordinates[v];
      if (!in_box[v]) {
        REQUIRE(norm(d[v]) == 0.0);
        continue;
      }
      const double s = std::max(0.0, (x[0] - kBoxOrigin[0]) / kBoxSize[0]),
                   t = (x[1] - kBoxOrigin[1]) / kBoxSize[1];
      // sum over the free control points of B_i^4(s) B_j^3(t)
      const double free_s = 1 - bernstein(4, 0, s) - bernstein(4, 4, s),
                   free_t = 1 - bernstein(3, 0, t) - bernstein(3, 3, t);
      REQUIRE(d[v][0] == 0.0);
      REQUIRE(d[v][1] == Approx(free_s * free_t).margin(1e-14));
      // continuous where the box ends: |d| <= degree * distance to the boundary
      REQUIRE(std::abs(d[v][1]) <= 4 * std::min(s, 1 - s) + 1e-14);
      at_boundary += s < 1e-9 && m.vertex_owned[v];
    }
    int total = 0, local = at_boundary;
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
    REQUIRE(total >= 1); // the cylinder's top vertex lies on the box's left side
  }

  SECTION("dot-product test") {
    design::DesignSpace space;
    make_space(m, kDfgBoundaries, ffd_design(1, "[x, y]"), &space);
    REQUIRE(dot_product_test(m, space) < 1e-12);
  }
}

TEST_CASE("Hicks-Henne: a bump peaks at its chord fraction with unit amplitude and thickens",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "naca0012.geo", 0, 2, {"airfoil", "farfield"}, &m);
  design::DesignSpace space;
  make_space(m, kNacaBoundaries,
             "  - {type: hicks-henne, name: hh, walls: [airfoil], positions: [0.1, 0.3, 0.5, "
             "0.8], lower: [-0.01], upper: [0.02]}\n",
             &space);
  REQUIRE(space.size() == 8);
  REQUIRE(space.names()[1] == "hh.upper[1]");
  REQUIRE(space.names()[6] == "hh.lower[2]");
  REQUIRE(space.lower()[3] == -0.01);
  REQUIRE(space.upper()[7] == 0.02);
  REQUIRE(space.initial()[0] == 0.0);

  auto bump = [](double x, double h) {
    return std::pow(std::sin(M_PI * std::pow(x, std::log(0.5) / std::log(h))), 3.0);
  };
  for (auto [variable, h, side] : {std::tuple{1, 0.3, 1.0}, std::tuple{6, 0.5, -1.0}}) {
    CAPTURE(variable);
    std::vector<double> a(space.size(), 0.0);
    a[variable] = 1.0;
    std::vector<Vec3<double>> d;
    REQUIRE(space.displacement(a, &d) == 0);
    int peaks = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      const Vec3<double> &x = m.coordinates[v];
      const bool wall = x[0] >= 0 && x[0] <= 1 && std::abs(std::abs(x[1]) - naca0012(x[0])) < 1e-12;
      REQUIRE(d[v][0] == 0.0);
      if (!wall || x[1] * side <= 0) { // far field, the other surface, leading/trailing edge
        REQUIRE(std::abs(d[v][1]) < 1e-40);
        continue;
      }
      // along +y on the upper, -y on the lower surface: outward, thickening
      REQUIRE(d[v][1] * side == Approx(bump(x[0], h)).margin(1e-15));
      REQUIRE(d[v][1] * side <= 1.0 + 1e-15);
      if (x[0] == h) {
        ++peaks;
        REQUIRE(d[v][1] * side == Approx(1.0).epsilon(1e-14));
      }
    }
    int total = 0;
    MPI_Allreduce(&peaks, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
    REQUIRE(total >= 1);
  }
  REQUIRE(dot_product_test(m, space) < 1e-12);
}

TEST_CASE("rigid: rotation about the centre and translation; reverse = FD transpose Jacobian",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  design::DesignSpace space;
  make_space(m, kDfgBoundaries, "  - {type: rigid, walls: [cylinder], center: [0.2, 0.2]}\n",
             &space);
  REQUIRE(space.names() == std::vector<std::string>{"rigid0.angle", "rigid0.dx", "rigid0.dy"});
  const std::vector<double> a = {0.4, 0.01, -0.02};
  std::vector<Vec3<double>> d;
  REQUIRE(space.displacement(a, &d) == 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const Vec3<double> &x = m.coordinates[v];
    if (!on_cylinder(x)) {
      REQUIRE(norm(d[v]) == 0.0);
      continue;
    }
    const Vec3<double> r = x - Vec3<double>(0.2, 0.2, 0.0);
    const Vec3<double> rotated(std::cos(0.4) * r[0] - std::sin(0.4) * r[1],
                               std::sin(0.4) * r[0] + std::cos(0.4) * r[1], 0.0);
    const Vec3<double> expected = rotated - r + Vec3<double>(0.01, -0.02, 0.0);
    REQUIRE(norm(d[v] - expected) < 1e-15);
    // the moved vertex keeps its distance to the moved centre
    REQUIRE(norm(x + d[v] - Vec3<double>(0.21, 0.18, 0.0)) == Approx(norm(r)).epsilon(1e-14));
  }
  // reverse = transposed Jacobian at a: central differences of <d(a), d_bar>
  const std::vector<Vec3<double>> d_bar = random_vertex_field(m, 3);
  std::vector<double> a_bar;
  REQUIRE(space.reverse(a, d_bar, &a_bar) == 0);
  const double eps = 1e-6;
  for (std::size_t j = 0; j < a.size(); ++j) {
    std::vector<double> ap = a, am = a;
    ap[j] += eps;
    am[j] -= eps;
    std::vector<Vec3<double>> dp, dm;
    REQUIRE(space.displacement(ap, &dp) == 0);
    REQUIRE(space.displacement(am, &dm) == 0);
    const double fd = (owned_dot(m, dp, d_bar) - owned_dot(m, dm, d_bar)) / (2 * eps);
    CAPTURE(j, fd, a_bar[j]);
    REQUIRE(std::abs(fd - a_bar[j]) <= 1e-8 * std::abs(a_bar[j]));
  }
}

TEST_CASE("surface-normal: Helmholtz-filtered normal displacement and its transpose",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  PetscInt n_wall = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    n_wall += on_cylinder(m.coordinates[v]) && m.vertex_owned[v];
  MPI_Allreduce(MPI_IN_PLACE, &n_wall, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD);

  design::DesignSpace space;
  make_space(m, kDfgBoundaries,
             "  - {type: surface-normal, walls: [cylinder], filter_length: 0.02}\n", &space);
  REQUIRE(static_cast<PetscInt>(space.size()) == n_wall);
  REQUIRE(space.names()[0].rfind("normal0.v[", 0) == 0);
  REQUIRE(dot_product_test(m, space) < 1e-12);

  // constants pass the filter (K 1 = 0): a = 1 moves every wall vertex by its unit normal,
  // which on the cylinder is radial
  std::vector<Vec3<double>> d;
  REQUIRE(space.displacement(std::vector<double>(space.size(), 1.0), &d) == 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const Vec3<double> &x = m.coordinates[v];
    if (!on_cylinder(x)) {
      REQUIRE(norm(d[v]) == 0.0);
      continue;
    }
    const Vec3<double> radial =
        (1.0 / norm(x - Vec3<double>(0.2, 0.2, 0.0))) * (x - Vec3<double>(0.2, 0.2, 0.0));
    REQUIRE(norm(d[v] - radial) < 1e-8); // (gmsh's vertices are on the circle to ~1e-10)
  }

  // one variable: L = 0 moves only its vertex (identity); L > 0 spreads it smoothly
  design::DesignSpace raw;
  make_space(m, kDfgBoundaries, "  - {type: surface-normal, walls: [cylinder], filter_length: 0}\n",
             &raw);
  std::vector<double> spike(space.size(), 0.0);
  spike[7] = 1.0;
  std::vector<Vec3<double>> d_raw, d_smooth;
  REQUIRE(raw.displacement(spike, &d_raw) == 0);
  REQUIRE(space.displacement(spike, &d_smooth) == 0);
  const std::string target = space.names()[7];
  int moved_raw = 0, moved_smooth = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    if (!m.vertex_owned[v]) continue;
    const bool is_target = "normal0.v[" + std::to_string(m.vertex_gid[v]) + "]" == target;
    if (is_target) REQUIRE(norm(d_raw[v]) == Approx(1.0).epsilon(1e-12));
    moved_raw += norm(d_raw[v]) > 1e-12;
    moved_smooth += norm(d_smooth[v]) > 1e-6;
  }
  MPI_Allreduce(MPI_IN_PLACE, &moved_raw, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &moved_smooth, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  REQUIRE(moved_raw == 1);
  REQUIRE(moved_smooth > 10);
  REQUIRE(dot_product_test(m, raw) < 1e-12);
}

TEST_CASE("radial: a periodic B-spline along each wall point's ray; its transpose; star-shaped "
          "walls only",
          "[design]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_SELF, test::dfg_geo(), 0, 2, kDfg, &m);
  const Vec3<double> c(0.2, 0.2, 0.0);
  for (int degree : {1, 3}) {
    design::DesignSpace space;
    make_space(m, kDfgBoundaries,
               "  - {type: radial, walls: [cylinder], center: [0.2, 0.2], control_points: 8, "
               "degree: " +
                   std::to_string(degree) + ", start_angle: 10}\n",
               &space);
    CAPTURE(degree);
    REQUIRE(space.size() == 8);
    CHECK_FALSE(space.can_fold()); // (a polar curve: remeshing skips the fold check)
    CHECK(space.names()[3] == "radial0.r[3]");
    CHECK(dot_product_test(m, space) < 1e-12);
    // partition of unity: equal values move every cylinder vertex out radially by that much
    std::vector<Vec3<double>> d;
    REQUIRE(space.displacement(std::vector<double>(8, 0.01), &d) == 0);
    double worst = 0;
    long moved = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      const Vec3<double> r = m.coordinates[v] - c;
      if (on_cylinder(m.coordinates[v])) {
        worst = std::max(worst, norm(d[v] - (0.01 / norm(r)) * r));
        ++moved;
      } else {
        worst = std::max(worst, norm(d[v]));
      }
    }
    CHECK(moved > 8);
    CHECK(worst < 1e-15);
    // one control value: along the ray, by the B-spline of the angle from control point 2 (at
    // 10 + 90 degrees): degree 1 the hat max(0, 1 - |dtheta| / 45 deg), degree 3 the cubic
    // B-spline with peak 2/3
    std::vector<double> a(8, 0.0);
    a[2] = 1.0;
    REQUIRE(space.displacement(a, &d) == 0);
    worst = 0;
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      if (!on_cylinder(m.coordinates[v])) continue;
      const Vec3<double> r = m.coordinates[v] - c;
      double dtheta = std::atan2(r[1], r[0]) - 100.0 * M_PI / 180;
      dtheta -= 2 * M_PI * std::floor((dtheta + M_PI) / (2 * M_PI));
      const double u = std::abs(dtheta) / (M_PI / 4); // in control spacings
      const double expected = degree == 1
                                  ? std::max(0.0, 1 - u)
                                  : (u < 1 ? 2.0 / 3 - u * u + u * u * u / 2
                                           : (u < 2 ? (2 - u) * (2 - u) * (2 - u) / 6 : 0.0));
      worst = std::max(worst, norm(d[v] - (expected / norm(r)) * r));
    }
    CHECK(worst < 1e-12);
  }
  // a centre from which the cylinder is not star-shaped
  CHECK_THAT(setup_error(m, kDfgBoundaries,
                         "  - {type: radial, walls: [cylinder], center: [0.5, 0.2], "
                         "control_points: 8}\n"),
             Catch::Contains("case.yaml: 'design[0].center': the walls [cylinder] are not "
                             "star-shaped about the centre (0.5, 0.2)"));
}

TEST_CASE("a combined design space gives the same results on 1 and 2 ranks", "[design][mpi]") {
  const std::string design =
      ffd_design(1, "[x, y]") +
      "  - {type: hicks-henne, walls: [cylinder], positions: [0.25, 0.5, 0.75]}\n"
      "  - {type: rigid, walls: [cylinder], center: [0.2, 0.2], variables: [angle, dy]}\n"
      "  - {type: surface-normal, walls: [cylinder], filter_length: 0.01}\n"
      "  - {type: radial, walls: [cylinder], center: [0.2, 0.2], control_points: 6}\n";
  mesh::Mesh dist, serial;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &dist);
  test::load(PETSC_COMM_SELF, test::dfg_geo(), 0, 2, kDfg, &serial);
  design::DesignSpace sd, ss;
  make_space(dist, kDfgBoundaries, design, &sd);
  make_space(serial, kDfgBoundaries, design, &ss);
  REQUIRE(sd.names() == ss.names());
  REQUIRE(sd.blocks().size() == 5);
  REQUIRE(sd.blocks()[1].name == "hh0");
  REQUIRE(sd.blocks()[3].offset == 12 + 6 + 2);
  { // the whole (nonlinear) map: central differences along a direction h vs <a_bar, h>
    const std::vector<double> a = random_design(sd.size(), 4), h = random_design(sd.size(), 6);
    const std::vector<Vec3<double>> d_bar = random_vertex_field(dist, 7);
    std::vector<double> a_bar;
    REQUIRE(sd.reverse(a, d_bar, &a_bar) == 0);
    const double eps = 1e-6;
    std::vector<double> ap = a, am = a;
    for (std::size_t i = 0; i < a.size(); ++i) ap[i] += eps * h[i], am[i] -= eps * h[i];
    std::vector<Vec3<double>> dp, dm;
    REQUIRE(sd.displacement(ap, &dp) == 0);
    REQUIRE(sd.displacement(am, &dm) == 0);
    const double fd = (owned_dot(dist, dp, d_bar) - owned_dot(dist, dm, d_bar)) / (2 * eps);
    CAPTURE(fd, dot(a_bar, h));
    REQUIRE(std::abs(fd - dot(a_bar, h)) <= 1e-8 * std::abs(fd));
  }

  std::vector<double> a = random_design(sd.size(), 2);
  std::vector<Vec3<double>> dd, ds;
  REQUIRE(sd.displacement(a, &dd) == 0);
  REQUIRE(ss.displacement(a, &ds) == 0);
  std::map<PetscInt, PetscInt> serial_of;
  for (PetscInt v = 0; v < serial.n_vertices; ++v) serial_of[serial.vertex_gid[v]] = v;
  double dmax = 0;
  for (const auto &x : ds) dmax = std::max(dmax, norm(x));
  REQUIRE(dmax > 0.1);
  for (PetscInt v = 0; v < dist.n_vertices; ++v) {
    const PetscInt s = serial_of.at(dist.vertex_gid[v]);
    REQUIRE(norm(dd[v] - ds[s]) <= 1e-14 * dmax);
    REQUIRE(sd.moved_vertices()[v] == ss.moved_vertices()[s]);
  }
  // reverse: d_bar as a function of the serial index (the same total on every copy)
  std::vector<double> ad, as;
  REQUIRE(sd.reverse(a, random_vertex_field(dist, 9), &ad) == 0);
  REQUIRE(ss.reverse(a, random_vertex_field(serial, 9), &as) == 0);
  double amax = 0;
  for (double x : as) amax = std::max(amax, std::abs(x));
  for (std::size_t i = 0; i < ad.size(); ++i) REQUIRE(std::abs(ad[i] - as[i]) <= 1e-12 * amax);
}

TEST_CASE("the design's wall between the vertices: wall_position is each map's own formula",
          "[design]") {
  // at every wall vertex wall_position(a, x0) = x0 + d(a) (FFD, Hicks-Henne, rigid and radial
  // together);
  // a patch that no parameterization moves stays; surface-normal has no such map
  mesh::Mesh m;
  test::load(PETSC_COMM_SELF, test::dfg_geo(), 0, 2, kDfg, &m);
  design::DesignSpace space;
  make_space(m, kDfgBoundaries,
             ffd_design(0, "[x, y]") +
                 "  - {type: hicks-henne, walls: [cylinder], positions: [0.25, 0.5, 0.75]}\n"
                 "  - {type: rigid, walls: [cylinder], center: [0.2, 0.2], variables: [angle, "
                 "dx]}\n"
                 "  - {type: radial, walls: [cylinder], center: [0.21, 0.19], control_points: "
                 "7}\n",
             &space);
  CHECK(space.can_fold()); // (FFD and Hicks-Henne can)
  const int cylinder = m.patch_index("cylinder"), walls = m.patch_index("walls");
  design::WallSurface surf;
  REQUIRE(design::gather_wall_surface(m, m.coordinates, {cylinder}, &surf) == 0);
  std::vector<double> a = random_design(space.size(), 3);
  for (double &x : a) x *= 0.02;
  std::vector<Vec3<double>> d;
  REQUIRE(space.displacement(a, &d) == 0);
  double worst = 0, largest = 0;
  long checked = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const PetscInt i = surf.of_local[v];
    if (i < 0) continue;
    Vec3<double> x;
    REQUIRE(space.wall_position(a, m.coordinates[v], cylinder, surf.normal[i], &x));
    worst = std::max(worst, norm(x - (m.coordinates[v] + d[v])));
    largest = std::max(largest, norm(d[v]));
    ++checked;
  }
  CAPTURE(checked, worst, largest);
  CHECK(checked == static_cast<long>(surf.gid.size()));
  CHECK(largest > 1e-3);
  CHECK(worst <= 1e-15);
  Vec3<double> x;
  const Vec3<double> p(0.3, 0.0, 0.0);
  REQUIRE(space.wall_position(a, p, walls, Vec3<double>(0, 1, 0), &x));
  CHECK(norm(x - p) == 0);
  design::DesignSpace normal;
  make_space(m, kDfgBoundaries,
             "  - {type: surface-normal, walls: [cylinder], filter_length: 0.01}\n", &normal);
  CHECK_FALSE(normal.wall_position(std::vector<double>(normal.size(), 0.0), surf.x[0], cylinder,
                                   surf.normal[0], &x));
}

TEST_CASE("design input that needs the mesh: one error naming the file and the key",
          "[design][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kDfg, &m);
  // a box that holds no vertex of its walls (it holds some of the lower wall)
  REQUIRE_THAT(setup_error(m, kDfgBoundaries,
                           "  - {type: ffd, walls: [cylinder], origin: [1.0, -0.01], size: [0.2, "
                           "0.2], lattice: [3, 3]}\n"),
               Catch::Contains("case.yaml: 'design[0].origin'/'design[0].size'") &&
                   Catch::Contains("holds no vertex of 'design[0].walls' [cylinder]"));
  REQUIRE_THAT(setup_error(m, kDfgBoundaries,
                           "  - {type: ffd, walls: [cylinder], origin: [0, 0, 0], size: [1, 1, "
                           "1], lattice: [3, 3, 3]}\n"),
               Catch::Contains("'design[0].lattice' has 3 directions but the mesh is 2D"));
  REQUIRE_THAT(
      setup_error(m, kDfgBoundaries, "  - {type: rigid, walls: [cylinder], variables: [dz]}\n"),
      Catch::Contains("case.yaml: 'design[0].variables': 'dz' in a 2D mesh"));
  // a wall that the case names but the mesh does not have
  REQUIRE_THAT(setup_error(m, std::string(kDfgBoundaries) + "  flap: {type: wall}\n",
                           "  - {type: rigid, walls: [cylinder]}\n"
                           "  - {type: rigid, walls: [flap]}\n"),
               Catch::Contains("case.yaml: 'design[1].walls': the mesh has no boundary 'flap'"));
  // 2D-only kinds on a 3D mesh
  mesh::Mesh box;
  test::load(PETSC_COMM_WORLD, "box-hex.geo", 0, 3,
             {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}, &box);
  const std::string box_case = "mesh: {file: box.msh}\nboundaries:\n  xmin: {type: wall}\n  xmax: "
                               "{type: wall}\n  ymin: {type: wall}\n  ymax: {type: wall}\n  zmin: "
                               "{type: wall}\n  zmax: {type: wall}\n";
  REQUIRE_THAT(
      setup_error(box, box_case, "  - {type: hicks-henne, walls: [ymax], positions: [0.5]}\n"),
      Catch::Contains("'design[0].type': hicks-henne is a 2D parameterization"));
  REQUIRE_THAT(setup_error(box, box_case, "  - {type: rigid, walls: [ymax]}\n"),
               Catch::Contains("'design[0].variables': a rigid rotation ('angle') is only "
                               "implemented in 2D"));
  // 3D FFD and translations work
  design::DesignSpace space;
  make_space(box, box_case,
             "  - {type: ffd, walls: [ymax], origin: [0, 0.5, 0], size: [1, 0.6, 1], lattice: [4, "
             "3, 3], axes: [y, z]}\n"
             "  - {type: rigid, walls: [xmin], variables: [dx, dz]}\n"
             "  - {type: surface-normal, walls: [zmax], filter_length: 0.1}\n",
             &space);
  REQUIRE(space.names()[0] == "ffd0.cp[1,1,1].y");
  REQUIRE(dot_product_test(box, space) < 1e-12);
}
