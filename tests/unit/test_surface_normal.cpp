// The surface-normal parameterization on a hand-made wall surface (a regular polygon of 8
// vertices, its unit normals radial): variable names by serial index, L = 0 is the identity
// (one variable moves its vertex by its normal), constants pass the filter (K 1 = 0), the
// filter spreads a spike symmetrically, and the reverse is the transpose (dot-product test).
#include "karman/design/surface_normal.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace karman;

namespace {

constexpr int kN = 8; // vertices of the polygon

// A regular polygon of radius 1 (segments v_k -> v_k+1), as gather_wall_surface gives it; the
// mesh holds its vertices and nothing else (vertex v has serial index 10 + v).
void make_polygon(mesh::Mesh *m, design::WallSurface *s) {
  m->dim = 2;
  m->n_vertices = kN;
  s->face_ptr.assign(1, 0);
  for (int k = 0; k < kN; ++k) {
    const double phi = 2 * M_PI * k / kN;
    s->gid.push_back(10 + k);
    s->x.emplace_back(std::cos(phi), std::sin(phi), 0.0);
    s->normal.emplace_back(std::cos(phi), std::sin(phi), 0.0);
    s->face_vertex.push_back(k);
    s->face_vertex.push_back((k + 1) % kN);
    s->face_ptr.push_back(s->face_vertex.size());
    s->of_local.push_back(k);
  }
}

std::unique_ptr<design::ShapeParameterization> surface_normal(double filter_length) {
  static const config::SectionSpec spec{
      "surface-normal", "", {config::key::nonnegative("filter_length", "", "")}};
  config::DesignConfig dc;
  dc.type = "surface-normal";
  dc.name = "normal0";
  dc.parameters = config::Section(
      YAML::Load("{filter_length: " + std::to_string(filter_length) + "}"), &spec, "design[0]");
  mesh::Mesh m;
  design::WallSurface s;
  make_polygon(&m, &s);
  std::unique_ptr<design::ShapeParameterization> map;
  REQUIRE(design::create_surface_normal(m, dc, s, &map) == 0);
  return map;
}

std::vector<Vec3<double>> displacement(const design::ShapeParameterization &map,
                                       const std::vector<double> &a) {
  std::vector<Vec3<double>> d(kN);
  REQUIRE(map.add_displacement(a.data(), d) == 0);
  return d;
}

} // namespace

TEST_CASE("surface-normal: one variable per wall vertex, named by its serial index", "[design]") {
  const auto map = surface_normal(0.3);
  REQUIRE(map->names.size() == kN);
  CHECK(map->names.front() == "normal0.v[10]");
  CHECK(map->names.back() == "normal0.v[17]");
  CHECK(map->moved == std::vector<char>(kN, 1));
}

TEST_CASE("surface-normal: L = 0 is the identity, constants pass the filter", "[design]") {
  const auto raw = surface_normal(0.0);
  std::vector<double> spike(kN, 0.0);
  spike[3] = 0.7;
  const auto d = displacement(*raw, spike);
  for (int k = 0; k < kN; ++k) {
    const double phi = 2 * M_PI * k / kN;
    const Vec3<double> expected =
        k == 3 ? Vec3<double>(0.7 * std::cos(phi), 0.7 * std::sin(phi), 0.0) : Vec3<double>();
    CAPTURE(k);
    CHECK(norm(d[k] - expected) < 1e-14);
  }
  const auto smooth = surface_normal(0.5);
  const auto c = displacement(*smooth, std::vector<double>(kN, 2.0));
  for (int k = 0; k < kN; ++k) {
    const double phi = 2 * M_PI * k / kN;
    CHECK(norm(c[k] - Vec3<double>(2 * std::cos(phi), 2 * std::sin(phi), 0.0)) < 1e-13);
  }
}

TEST_CASE("surface-normal: the filter spreads a spike symmetrically and keeps its mean",
          "[design]") {
  const auto smooth = surface_normal(0.5);
  std::vector<double> spike(kN, 0.0);
  spike[0] = 1.0;
  const auto d = displacement(*smooth, spike);
  std::vector<double> s(kN);
  for (int k = 0; k < kN; ++k)
    s[k] = dot(d[k], Vec3<double>(std::cos(2 * M_PI * k / kN), std::sin(2 * M_PI * k / kN), 0.0));
  CHECK(s[0] < 1.0);
  CHECK(s[0] > s[1]);
  CHECK(s[1] > s[2]);
  CHECK(s[2] > 0.0);
  for (int k = 1; k < kN; ++k) CHECK(s[k] == Approx(s[kN - k]).epsilon(1e-12));
  // equal segments: M 1 = h 1, so 1^T M s = 1^T M a and the sum of s is the sum of a
  double sum = 0;
  for (double v : s) sum += v;
  CHECK(sum == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("surface-normal: the reverse is the transpose of the displacement", "[design]") {
  const auto map = surface_normal(0.4);
  std::vector<double> a(kN);
  std::vector<Vec3<double>> d_bar(kN);
  for (int k = 0; k < kN; ++k) {
    a[k] = std::sin(1.3 * k + 0.2);
    d_bar[k] = Vec3<double>(std::cos(0.7 * k), std::sin(2.1 * k + 1), 0.0);
  }
  const auto d = displacement(*map, a);
  std::vector<double> a_bar(kN, 0.0);
  map->add_reverse_local(a.data(), d_bar, std::vector<char>(kN, 1), a_bar.data());
  REQUIRE(map->finish_reverse(a_bar.data()) == 0);
  double lhs = 0, rhs = 0;
  for (int k = 0; k < kN; ++k) lhs += dot(d[k], d_bar[k]), rhs += a[k] * a_bar[k];
  REQUIRE(std::abs(lhs) > 1e-2);
  CHECK(std::abs(lhs - rhs) < 1e-13 * std::abs(lhs));
}
