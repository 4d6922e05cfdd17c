// Tests of driver/remeshing.cpp (1 and 2 ranks):
//  - the boundary layer of cases/naca0012-laminar/naca0012.geo is measured as its .geo makes it
//    (first height 0.004, growth ratio 1.2), the O-grid of cases/shape-min-drag/body.geo, whose
//    first cells are taller than wide, has none;
//  - the NACA 0012 mesh remeshed around its boundary keeps every boundary vertex, and Gmsh's
//    boundary layer on the new mesh measures as on the old one;
//  - the body of shape-min-drag deformed by its FFD design a_r and remeshed: every boundary
//    vertex is a vertex of the deformed mesh, the cells are valid and about as many; the design
//    space set up on the new mesh from the boundary vertices' original coordinates, with a_r
//    as its reference design, moves the walls exactly where the original mesh's design space
//    moves them, for a design a != a_r; that mesh remeshed to its own cell count has it within
//    5 % (the size view calibrated), and the count read from Gmsh's log is the mesh's; remeshed
//    on and on with the factor learnt from the last remeshing (driver::next_size_scale), the count
//    stays (a mesher with Gmsh's consistent excess: the factor kept let it compound);
//  - a wall polygon that crosses itself: Gmsh's failure returned, not raised;
//  - a notch pressed into the body where the current mesh has no cells: remeshed with the sizes
//    the deformation carries there (its wall cells as small as elsewhere), not a fan;
//  - wall layers that Gmsh cannot make (a zigzag pressed into the body's upper half, level 1):
//    the mesh made without them (layer_dropped names Gmsh's message), valid, the same faces;
//  - a wall re-sampled along a design's own curve (the map of its original points): the new
//    vertices on the curve and their originals on the original wall; a design whose curve
//    loops between two vertices (running back along their face by 0.18 of its length; the
//    polygon of the vertices does not cross) is refused, a smaller fold (under 0.1) let through;
//  - the body's tail pulled out and pinched (wall faces crowded there) and remeshed with its wall
//    re-sampled: the face lengths even out, every new wall vertex lies on the deformed wall and
//    its original on the original wall, and the wall's area (also at another design) changes by
//    less than the polygon's own error.
#include "karman/core/error.hpp"
#include "karman/driver/design_chain.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/driver/remeshing.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <tuple>

using namespace karman;

namespace {

/// Loads `yaml` (mesh.file relative to the source tree's root) as a case.
void load_case(const std::string &yaml, const std::vector<std::string> &overrides,
               config::CaseConfig *cfg, driver::FlowCase *fc) {
  clear_error();
  REQUIRE(config::CaseConfig::load_text(PETSC_COMM_WORLD, yaml, "remesh.yaml", KARMAN_SOURCE_DIR,
                                        overrides, optimization::case_schema(), *cfg) == 0);
  const PetscErrorCode ierr = fc->load(PETSC_COMM_WORLD, *cfg);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
}

/// Remeshes fc's mesh at its current coordinates around its boundary into dir/name.msh.
driver::RemeshResult remeshed(driver::FlowCase &fc, const std::string &wall,
                              const std::vector<Vec3<double>> &X_original, bool resample,
                              const std::string &dir, const std::string &name) {
  driver::RemeshResult r;
  clear_error();
  driver::RemeshOptions o;
  o.resample = resample;
  REQUIRE(driver::remesh(fc.residual(), {fc.mesh().patch_index(wall)}, X_original, o,
                         dir + "/" + name, &r) == 0);
  INFO(r.failure);
  REQUIRE(r.ok);
  return r;
}

long boundary_faces(const mesh::Mesh &m, const std::string &patch) {
  long n = static_cast<long>(m.boundary_faces(m.patch_index(patch)).size());
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG, MPI_SUM, m.comm);
  return n;
}

double min_volume(const driver::FlowCase &fc) {
  double v = 1e300;
  for (PetscInt c = 0; c < fc.mesh().n_owned_cells; ++c)
    v = std::min(v, fc.residual().geometry().cell_volume[c]);
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
  return v;
}

using Key = std::tuple<double, double, double>;

/// Where the wall vertices are (X + d), by their original coordinates X0, on every rank.
std::map<Key, Vec3<double>> wall_positions(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                                           const std::vector<Vec3<double>> &d,
                                           const std::vector<Vec3<double>> &X0) {
  std::vector<Vec3<double>> at(X.size());
  for (std::size_t v = 0; v < X.size(); ++v) at[v] = X[v] + d[v];
  driver::BoundaryEmbedding e;
  REQUIRE(driver::gather_embedding(m, at, X0, &e) == 0);
  std::map<Key, Vec3<double>> out;
  for (std::size_t i = 0; i < e.at.size(); ++i)
    out[{e.original[i][0], e.original[i][1], e.original[i][2]}] = e.at[i];
  return out;
}

const char *kNaca = "mesh: {file: cases/naca0012-laminar/naca0012.geo, level: 0}\n"
                    "fluid: {viscosity: 1.0e-3}\n"
                    "boundaries: {airfoil: {type: wall}, farfield: {type: far-field, velocity: "
                    "[1, 0]}}\n";

const char *kBody =
    "mesh: {file: cases/shape-min-drag/body.geo, level: 0}\n"
    "fluid: {viscosity: 0.025}\n"
    "boundaries: {cylinder: {type: wall}, farfield: {type: far-field, velocity: [1, 0]}}\n"
    "design:\n"
    "  - {type: ffd, walls: [cylinder], origin: [-0.51, -0.51], size: [1.02, 1.02], lattice: "
    "[5, 4], axes: [x, y], fixed_layers: 0, lower: [-1], upper: [1]}\n";

/// shape-min-drag's body (level 0) with its FFD design space (held by the chain), moved by the
/// chain to the design a_r that `fill` makes (from zeros), then remeshed (walls re-sampled or
/// not) into dir/body.msh.
struct DeformedBody {
  config::CaseConfig cfg;
  driver::FlowCase fc;
  driver::DesignChain chain;
  std::vector<double> a_r;
  driver::RemeshResult remesh;

  DeformedBody(const std::string &dir, bool resample,
               const std::function<void(std::vector<double> &)> &fill) {
    load_case(kBody, {"mesh.cache_dir=" + dir}, &cfg, &fc);
    auto design = std::make_unique<design::DesignSpace>();
    REQUIRE(design->setup(fc.mesh(), fc.mesh().coordinates, cfg) == 0);
    a_r.assign(design->size(), 0.0);
    fill(a_r);
    REQUIRE(chain.setup(fc, std::move(design), {}) == 0);
    design::DeformationResult dr;
    REQUIRE(chain.move_to_design(a_r, "test", &dr) == 0);
    REQUIRE(dr.valid);
    remesh = remeshed(fc, "cylinder", chain.reference_coordinates(), resample, dir, "body");
  }
};

} // namespace

TEST_CASE("remeshing: the boundary layer measured, and made again by Gmsh around the same "
          "boundary",
          "[remeshing][mpi]") {
  const std::string dir = test::work_dir("remeshing-naca");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(kNaca, {"mesh.cache_dir=" + dir}, &cfg, &fc);
  const int airfoil = fc.mesh().patch_index("airfoil");
  driver::BoundaryLayerShape bl;
  REQUIRE(driver::measure_boundary_layer(fc.residual(), {airfoil}, &bl) == 0);
  CAPTURE(bl.layers, bl.first, bl.ratio, bl.thickness, bl.spacing);
  CHECK(bl.first == Approx(0.004).epsilon(0.03)); // naca0012.geo: h0, q at level 0
  CHECK(bl.ratio == Approx(1.2).epsilon(0.02));
  CHECK(bl.layers >= 3);
  {
    config::CaseConfig body_cfg;
    driver::FlowCase body;
    load_case(kBody, {"mesh.cache_dir=" + dir}, &body_cfg, &body);
    driver::BoundaryLayerShape none;
    REQUIRE(driver::measure_boundary_layer(body.residual(), {body.mesh().patch_index("cylinder")},
                                           &none) == 0);
    CHECK(none.layers == 0); // the ring's first cells (0.084) are taller than wide (0.065)
  }

  // (re-sampling a wall that no design moved keeps its vertices)
  const driver::RemeshResult r = remeshed(fc, "airfoil", fc.mesh().coordinates, true, dir, "naca");
  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load_case(kNaca, {"mesh.file=" + r.msh}, &cfg2, &fc2);
  for (const char *patch : {"airfoil", "farfield"})
    CHECK(boundary_faces(fc2.mesh(), patch) == boundary_faces(fc.mesh(), patch));
  std::vector<Vec3<double>> X0;
  driver::BoundaryEmbedding e;
  REQUIRE(driver::gather_embedding(fc.mesh(), fc.mesh().coordinates, fc.mesh().coordinates, &e) ==
          0);
  clear_error();
  CHECK(driver::embedded_coordinates(fc2.mesh(), fc2.mesh().coordinates, e, &X0) == 0);
  REQUIRE(r.embedding.at.size() == e.at.size());
  double moved = 0; // (no design: the re-sampled wall is the wall)
  for (std::size_t i = 0; i < e.at.size(); ++i)
    moved = std::max(moved, norm(r.embedding.at[i] - e.at[i]));
  CHECK(moved == 0);
  driver::BoundaryLayerShape bl2;
  REQUIRE(driver::measure_boundary_layer(fc2.residual(), {fc2.mesh().patch_index("airfoil")},
                                         &bl2) == 0);
  CAPTURE(bl2.layers, bl2.first, bl2.ratio, bl2.thickness, fc.mesh().n_global_cells,
          fc2.mesh().n_global_cells);
  CHECK(bl2.first == Approx(bl.first).epsilon(0.05));
  CHECK(bl2.ratio == Approx(bl.ratio).epsilon(0.03));
  CHECK(std::abs(bl2.layers - bl.layers) <= 1);
  CHECK(min_volume(fc2) > 0);
  const double cells = static_cast<double>(fc2.mesh().n_global_cells) / fc.mesh().n_global_cells;
  CHECK(cells > 0.7);
  CHECK(cells < 1.5);
}

TEST_CASE("remeshing: a deformed body remeshed, and its design re-embedded on the new mesh",
          "[remeshing][mpi]") {
  const std::string dir = test::work_dir("remeshing-body");
  // the body stretched along x by 0.3 at each end (the FFD's outer control point columns)
  DeformedBody body(dir, false, [](std::vector<double> &a) {
    for (int j = 0; j < 4; ++j) a[(j * 5 + 4) * 2] = 0.3, a[(j * 5 + 0) * 2] = -0.3;
  });
  const driver::FlowCase &fc = body.fc;
  const driver::DesignChain &chain = body.chain;
  const std::vector<double> &a_r = body.a_r;
  const design::DesignSpace &space = chain.design();
  const driver::RemeshResult &r = body.remesh;

  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load_case(kBody, {"mesh.file=" + r.msh}, &cfg2, &fc2);
  const mesh::Mesh &m2 = fc2.mesh();
  for (const char *patch : {"cylinder", "farfield"})
    CHECK(boundary_faces(m2, patch) == boundary_faces(fc.mesh(), patch));
  CHECK(min_volume(fc2) > 0);
  const double cells = static_cast<double>(m2.n_global_cells) / fc.mesh().n_global_cells;
  CAPTURE(fc.mesh().n_global_cells, m2.n_global_cells);
  CHECK(cells > 0.5);
  CHECK(cells < 2.0);
  CHECK(r.cells == m2.n_global_cells); // (the count read from Gmsh's log)

  // the remeshed mesh remeshed again to its own cell count: within 5 %, as the loaded mesh has
  {
    driver::RemeshOptions o;
    o.target_cells = m2.n_global_cells;
    driver::RemeshResult again;
    REQUIRE(driver::remesh(fc2.residual(), {m2.patch_index("cylinder")}, m2.coordinates, o,
                           dir + "/again", &again) == 0);
    REQUIRE(again.ok);
    config::CaseConfig cfg3;
    driver::FlowCase fc3;
    load_case(kBody, {"mesh.file=" + again.msh}, &cfg3, &fc3);
    CAPTURE(again.cells, again.size_scale, again.gmsh_runs);
    CHECK(again.cells == fc3.mesh().n_global_cells);
    CHECK(std::abs(again.cells - m2.n_global_cells) <= 0.05 * m2.n_global_cells);
    CHECK(again.gmsh_runs <= 3);
  }
  // remeshed on and on from m2, each time to its own count, the first with the factor 1 and then
  // with driver::next_size_scale of the last (as a campaign does): 4 remeshings stay within 8 %
  // of m2's count (measured: 5308 -> 5364 (2 meshings) -> 5324 -> 5318 -> 5390; this mesh's
  // first meshing overshoots the band and calibrates, so the factor kept would drift only about
  // 1 % per remeshing here: the correction's own test is the next TEST_CASE)
  {
    double scale = 1;
    long last = m2.n_global_cells;
    std::string msh = r.msh;
    for (int k = 0; k < 4; ++k) {
      config::CaseConfig cfg_k;
      driver::FlowCase fc_k;
      load_case(kBody, {"mesh.file=" + msh}, &cfg_k, &fc_k);
      driver::RemeshOptions o;
      o.target_cells = fc_k.mesh().n_global_cells;
      o.initial_scale = scale;
      driver::RemeshResult next;
      REQUIRE(driver::remesh(fc_k.residual(), {fc_k.mesh().patch_index("cylinder")},
                             fc_k.mesh().coordinates, o, dir + "/chain" + std::to_string(k),
                             &next) == 0);
      REQUIRE(next.ok);
      CAPTURE(k, scale, next.cells, next.size_scale, next.gmsh_runs, last);
      scale = driver::next_size_scale(next.size_scale, next.cells, o.target_cells);
      last = next.cells;
      msh = next.msh;
    }
    CAPTURE(m2.n_global_cells, last);
    CHECK(std::abs(last - m2.n_global_cells) <= 0.08 * m2.n_global_cells);
  }

  // re-embedding: the new mesh's boundary vertices by their original coordinates
  driver::BoundaryEmbedding e;
  REQUIRE(driver::gather_embedding(fc.mesh(), fc.residual().coordinates(),
                                   chain.reference_coordinates(), &e) == 0);
  std::vector<Vec3<double>> X0;
  REQUIRE(driver::embedded_coordinates(m2, m2.coordinates, e, &X0) == 0);
  design::DesignSpace space2;
  REQUIRE(space2.setup(m2, X0, cfg2) == 0);
  REQUIRE(space2.set_reference_design(a_r) == 0);
  REQUIRE(space2.size() == space.size());
  std::vector<double> a = a_r;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += 0.05 * std::sin(1.0 + 3.0 * i);
  std::vector<Vec3<double>> d_old, d_new;
  REQUIRE(space.displacement(a, &d_old) == 0);
  REQUIRE(space2.displacement(a, &d_new) == 0);
  const auto old_at = wall_positions(fc.mesh(), chain.reference_coordinates(), d_old,
                                     chain.reference_coordinates());
  const auto new_at = wall_positions(m2, m2.coordinates, d_new, X0);
  REQUIRE(old_at.size() == new_at.size());
  double worst = 0;
  for (const auto &[k, x] : old_at) {
    const auto it = new_at.find(k);
    REQUIRE(it != new_at.end());
    worst = std::max(worst, norm(it->second - x));
  }
  CHECK(worst < 1e-13);
  // at a_r itself the new mesh is the shape: no displacement
  REQUIRE(space2.displacement(a_r, &d_new) == 0);
  double moved = 0;
  for (const auto &x : d_new) moved = std::max(moved, norm(x));
  CHECK(moved == 0);
}

namespace {

/// On rank 0: the wall segments of b (patch `wall`) as pairs of points.
std::vector<std::pair<Vec3<double>, Vec3<double>>> wall_segments(const driver::BoundaryCurves &b,
                                                                 int wall, bool original) {
  std::vector<std::pair<Vec3<double>, Vec3<double>>> out;
  const auto &x = original ? b.original : b.x;
  for (const auto &s : b.segments)
    if (s[0] == wall) out.push_back({x[s[1]], x[s[2]]});
  return out;
}

double distance_to(const std::vector<std::pair<Vec3<double>, Vec3<double>>> &segs,
                   const Vec3<double> &p) {
  double best = 1e300;
  for (const auto &[a, b] : segs) {
    const Vec3<double> ab = b - a;
    const double t = std::clamp(dot(p - a, ab) / dot(ab, ab), 0.0, 1.0);
    best = std::min(best, norm(p - (a + t * ab)));
  }
  return best;
}

/// |area| of a closed polygon given by its oriented segments, and max / min segment length.
std::pair<double, double>
area_and_spread(const std::vector<std::pair<Vec3<double>, Vec3<double>>> &segs) {
  double area = 0, lo = 1e300, hi = 0;
  for (const auto &[a, b] : segs) {
    area += 0.5 * (a[0] * b[1] - a[1] * b[0]);
    lo = std::min(lo, norm(b - a)), hi = std::max(hi, norm(b - a));
  }
  return {std::abs(area), hi / lo};
}

} // namespace

TEST_CASE("remeshing: the size view's factor learnt from the last remeshing keeps the cell count",
          "[remeshing][unit]") {
  // A mesher whose count goes as the view's factor^-2 and comes out 4.5 % above its target at the
  // factor 1 (Gmsh's triangles from a view of triangle sizes: shape-min-drag Re 1, level 1, nine
  // remeshings, each to the last one's count, landed 3.3-4.9 % above it, inside the 5 % band of
  // target_cells, 13 696 -> 16 150 -> ... -> 21 964 cells).  Each remeshing's target is the last
  // mesh's count, the first none (the case's own mesh: factor 1, kept).  With
  // driver::next_size_scale the count stays where the second remeshing put it (4.5 % above the
  // first's: nothing to learn from before it); with the factor kept at 1 it grows as 1.045^k
  const auto mesher = [](long current, double scale) {
    return std::lround(1.045 * static_cast<double>(current) / (scale * scale));
  };
  for (const bool learnt : {true, false}) {
    double scale = 1;
    long cells = 16150, target = 0; // the first remeshing's mesh, made without a target
    const long first = cells;
    for (int k = 1; k <= 8; ++k) {
      scale = learnt ? driver::next_size_scale(scale, cells, target) : scale;
      target = cells; // (each to the last mesh's count)
      cells = mesher(cells, scale);
      CAPTURE(learnt, k, scale, cells, target);
      if (learnt) CHECK(std::abs(cells - first) <= 0.05 * first); // (the band, from the second)
    }
    if (learnt) // (the second remeshing, still at the factor 1, 4.5 % up; the others stay there)
      CHECK(cells == Approx(first * 1.045).epsilon(1e-3));
    else
      CHECK(cells == Approx(first * std::pow(1.045, 8)).epsilon(1e-3));
  }
  CHECK(driver::next_size_scale(1.2, 5000, 0) == 1.2); // no target: kept
  CHECK(driver::next_size_scale(1.0, 10450, 10000) == Approx(std::sqrt(1.045)));
}

TEST_CASE("remeshing: a pinched wall re-sampled, and its design re-embedded on it",
          "[remeshing][mpi]") {
  const std::string dir = test::work_dir("remeshing-resample");
  // the tail pulled out and pinched (the outer right control points toward y = 0): the wall
  // vertices crowd at the tail
  DeformedBody body(dir, true, [](std::vector<double> &a) {
    for (int j = 0; j < 4; ++j)
      a[(j * 5 + 4) * 2] = 0.3, a[(j * 5 + 4) * 2 + 1] = -0.25 * (j - 1.5);
  });
  const driver::FlowCase &fc = body.fc;
  const driver::DesignChain &chain = body.chain;
  const std::vector<double> &a_r = body.a_r;
  const design::DesignSpace &space = chain.design();
  const driver::RemeshResult &r = body.remesh;
  const int wall = fc.mesh().patch_index("cylinder");
  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load_case(kBody, {"mesh.file=" + r.msh}, &cfg2, &fc2);
  const mesh::Mesh &m2 = fc2.mesh();
  CHECK(boundary_faces(m2, "cylinder") == boundary_faces(fc.mesh(), "cylinder"));
  CHECK(min_volume(fc2) > 0);
  std::vector<Vec3<double>> X0;
  REQUIRE(driver::embedded_coordinates(m2, m2.coordinates, r.embedding, &X0) == 0);
  design::DesignSpace space2;
  REQUIRE(space2.setup(m2, X0, cfg2) == 0);
  REQUIRE(space2.set_reference_design(a_r) == 0);
  std::vector<double> a = a_r;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += 0.02 * std::sin(1.0 + 3.0 * i);
  std::vector<Vec3<double>> d_old, d_new;
  REQUIRE(space.displacement(a, &d_old) == 0);
  REQUIRE(space2.displacement(a, &d_new) == 0);
  std::vector<Vec3<double>> X_old = chain.reference_coordinates(), X_new = m2.coordinates;
  for (std::size_t v = 0; v < X_old.size(); ++v) X_old[v] = X_old[v] + d_old[v];
  for (std::size_t v = 0; v < X_new.size(); ++v) X_new[v] = X_new[v] + d_new[v];
  driver::BoundaryCurves deformed, before, old_at_a, new_at_a;
  REQUIRE(driver::gather_boundary(fc.mesh(), fc.residual().coordinates(),
                                  chain.reference_coordinates(), &deformed) == 0);
  REQUIRE(driver::gather_boundary(m2, m2.coordinates, X0, &before) == 0);
  REQUIRE(driver::gather_boundary(fc.mesh(), X_old, X_old, &old_at_a) == 0);
  REQUIRE(driver::gather_boundary(m2, X_new, X_new, &new_at_a) == 0);
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) return;
  // the new wall vertices on the deformed wall, their originals on the original wall
  const int wall2 = m2.patch_index("cylinder");
  double off_wall = 0, off_original = 0;
  for (const auto &[p, q] : wall_segments(before, wall2, false))
    off_wall = std::max(off_wall, distance_to(wall_segments(deformed, wall, false), p));
  for (const auto &[p, q] : wall_segments(before, wall2, true))
    off_original = std::max(off_original, distance_to(wall_segments(deformed, wall, true), p));
  CHECK(off_wall < 1e-14);
  CHECK(off_original < 1e-14);
  // the spacing evened out; the shape at another design the same to second order
  const auto [area_def, spread_def] = area_and_spread(wall_segments(deformed, wall, false));
  const auto [area_new, spread_new] = area_and_spread(wall_segments(before, wall2, false));
  const auto [area_old_a, spread_old_a] = area_and_spread(wall_segments(old_at_a, wall, false));
  const auto [area_new_a, spread_new_a] = area_and_spread(wall_segments(new_at_a, wall2, false));
  CAPTURE(spread_def, spread_new, area_def, area_new, area_old_a, area_new_a);
  CHECK(spread_new < spread_def / 2);
  // re-sampled on the polygon, the wall loses a little area at its vertices: less than the
  // polygon of N faces misses of its circle's, about (2 pi / N)^2 / 6, times 1.5
  const double n = static_cast<double>(wall_segments(deformed, wall, false).size());
  const double bound = 1.5 * std::pow(2 * M_PI / n, 2) / 6;
  CHECK(std::abs(area_new / area_def - 1) < bound);
  CHECK(std::abs(area_new_a / area_old_a - 1) < bound);
}

TEST_CASE("remeshing: a wall that crosses itself is a failure with Gmsh's reason, not an error",
          "[remeshing][mpi]") {
  const std::string dir = test::work_dir("remeshing-crossed");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(kBody, {"mesh.cache_dir=" + dir}, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  // the wall's vertices above y = 0.3 pushed down through the lower half: the polygon crosses
  std::vector<Vec3<double>> X = m.coordinates;
  std::vector<char> wall(m.n_vertices, 0);
  for (PetscInt f : m.boundary_faces(m.patch_index("cylinder")))
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
      wall[m.face_vertex[i]] = 1;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (wall[v] && X[v][1] > 0.3) X[v][1] -= 0.9;
  driver::RemeshResult r;
  clear_error();
  driver::RemeshOptions o;
  o.resample = false, o.boundary = &X;
  REQUIRE(driver::remesh(fc.residual(), {m.patch_index("cylinder")}, m.coordinates, o,
                         dir + "/crossed", &r) == 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.failure, Catch::Contains("gmsh"));
}

TEST_CASE("remeshing: a design that folds between the re-sampled wall vertices is refused before "
          "Gmsh runs",
          "[remeshing][mpi]") {
  // shape-min-drag's body (level 0, 48 wall faces), its walls re-sampled along the identity map
  // (the walls of the design that the new mesh is made around), the design to be evaluated
  // there moving each wall point along the circle's tangent by 0.1 sin(12 theta): its curve runs
  // back by more than a tenth of a face (0.1 * 12 > the radius 0.5), which the check of the
  // evaluated design on the re-sampled walls finds; no Gmsh mesh is made
  const std::string dir = test::work_dir("remeshing-evaluated-fold");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(kBody, {"mesh.cache_dir=" + dir}, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  const driver::WallMap identity = [](const Vec3<double> &x0, int, const Vec3<double> &,
                                      Vec3<double> *x) {
    *x = x0;
    return true;
  };
  const driver::WallMap wiggle = [](const Vec3<double> &x0, int, const Vec3<double> &,
                                    Vec3<double> *x) {
    const double r = std::hypot(x0[0], x0[1]), theta = std::atan2(x0[1], x0[0]);
    const Vec3<double> t(-x0[1] / r, x0[0] / r, 0.0);
    *x = x0 + 0.1 * std::sin(12 * theta) * t;
    return true;
  };
  const auto remesh = [&](const driver::WallMap &evaluated, const std::string &name) {
    driver::RemeshOptions o;
    o.sampling.map = identity;
    o.evaluated.map = evaluated;
    driver::RemeshResult r;
    clear_error();
    REQUIRE(driver::remesh(fc.residual(), {m.patch_index("cylinder")}, m.coordinates, o,
                           dir + "/" + name, &r) == 0);
    return r;
  };
  const driver::RemeshResult folded = remesh(wiggle, "folded");
  CHECK_FALSE(folded.ok);
  CHECK_THAT(folded.failure, Catch::StartsWith("on the re-sampled walls: the design's wall runs "
                                               "back by"));
  CHECK_FALSE(std::filesystem::exists(dir + "/folded.msh"));
  // the identity evaluated there: meshed
  const driver::RemeshResult plain = remesh(identity, "plain");
  INFO(plain.failure);
  CHECK(plain.ok);
  CHECK(std::filesystem::exists(dir + "/plain.msh"));
}

TEST_CASE("remeshing: a wall re-sampled along the design's own curve, and a design whose curve "
          "loops between the vertices refused",
          "[remeshing]") {
  // the unit square as a body (patch 0), its bottom face bent by the design: the vertices stay
  // where they are, the wall between them does not
  driver::BoundaryCurves b;
  b.x = {Vec3<double>(0, 0, 0), Vec3<double>(1, 0, 0), Vec3<double>(1, 1, 0),
         Vec3<double>(0, 1, 0)};
  b.original = b.x;
  b.segments = {{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {0, 3, 0}};
  const auto same_points = [](const std::vector<Vec3<double>> &p,
                              const std::vector<Vec3<double>> &q) {
    bool same = p.size() == q.size();
    for (std::size_t i = 0; same && i < p.size(); ++i) same = norm(p[i] - q[i]) == 0;
    return same;
  };
  std::vector<Vec3<double>> normals; // what the map was told
  auto design = [&normals](double sweep, double depth) {
    return [&normals, sweep, depth](const Vec3<double> &x0, int patch, const Vec3<double> &n,
                                    Vec3<double> *x) {
      REQUIRE(patch == 0);
      *x = x0;
      const double s = x0[0];
      if (x0[1] != 0 || s == 0 || s == 1) return true;
      normals.push_back(n);
      *x =
          Vec3<double>(s + sweep * std::sin(2 * M_PI * s),
                       -depth * (sweep > 0 ? 1 - std::cos(2 * M_PI * s) : std::sin(M_PI * s)), 0.0);
      return true;
    };
  };
  // a bulge: every new vertex is on the curve, its original on the square
  driver::WallSampling bulge;
  bulge.map = design(0.0, 0.2);
  bulge.per_face = 16;
  std::string failure;
  const driver::BoundaryCurves r = driver::resample_walls(b, {0}, bulge, &failure);
  CHECK(failure.empty());
  REQUIRE(r.x.size() == 4);
  long on_bottom = 0;
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    const Vec3<double> &o = r.original[i], &x = r.x[i];
    CAPTURE(o[0], o[1], x[0], x[1]);
    const bool on_square = std::abs(o[0]) < 1e-15 || std::abs(o[0] - 1) < 1e-15 ||
                           std::abs(o[1]) < 1e-15 || std::abs(o[1] - 1) < 1e-15;
    CHECK(on_square);
    if (o[1] == 0 && o[0] > 0 && o[0] < 1) {
      ++on_bottom;
      CHECK(std::abs(x[1] + 0.2 * std::sin(M_PI * o[0])) < 1e-15);
    }
  }
  // the bent face is the longest: a new vertex goes onto its curve (with chords only, the 4
  // corners stay the vertices)
  CHECK(on_bottom == 1);
  for (const auto &n : normals) // out of the body: -y on the bottom face
    CHECK(std::abs(n[1] + 1) < 1e-15);
  CHECK(same_points(driver::resample_walls(b, {0}, driver::WallSampling{}, &failure).x, b.x));
  // a prolate cycloid on the bottom face (x = s + 0.3 sin 2 pi s runs back by 0.18
  // around s = 1/2) loops between the two corners: refused, and where
  driver::WallSampling loop;
  loop.map = design(0.3, 0.2);
  loop.per_face = 16;
  failure.clear();
  const driver::BoundaryCurves same = driver::resample_walls(b, {0}, loop, &failure);
  CHECK_THAT(failure, Catch::Contains("runs back by 0.179 (0.18 of the face's original length) "
                                      "along the wall face between (0, 0) and (1, 0), near "
                                      "(0.410336, -0.276537)"));
  // ... by less than a tenth of the face: let through (below the mesh's resolution)
  loop.map = design(0.18, 0.2);
  failure.clear();
  driver::resample_walls(b, {0}, loop, &failure);
  CHECK(failure.empty());
  CHECK(same_points(same.x, b.x));
}

TEST_CASE("remeshing: a design's kinks get wall vertices on their rays", "[remeshing]") {
  // a 40-gon about the origin as a body (patch 0), its vertices between the rays at 0, 100 and
  // 180 degrees; the map the identity: re-sampled with the kinks' rays, a vertex on each, as
  // many vertices as before, each on the polygon; without them none on the ray at 0 degrees
  const std::size_t n = 40;
  driver::BoundaryCurves b;
  for (std::size_t k = 0; k < n; ++k) {
    const double a = 2 * M_PI * (static_cast<double>(k) + 0.37) / static_cast<double>(n);
    b.x.push_back(Vec3<double>(0.5 * std::cos(a), 0.5 * std::sin(a), 0.0));
    b.segments.push_back({0, static_cast<long>(k), static_cast<long>((k + 1) % n)});
  }
  b.original = b.x;
  const std::vector<double> rays = {0.0, 100 * M_PI / 180, M_PI};
  driver::WallSampling s;
  s.map = [](const Vec3<double> &x0, int, const Vec3<double> &, Vec3<double> *x) {
    *x = x0;
    return true;
  };
  s.check_folds = false;
  const auto on_ray = [](const driver::BoundaryCurves &r, double a) {
    long found = 0;
    for (const auto &x : r.x)
      found += std::abs(x[0] * std::sin(a) - x[1] * std::cos(a)) < 1e-14 &&
               x[0] * std::cos(a) + x[1] * std::sin(a) > 0;
    return found;
  };
  std::string failure;
  const driver::BoundaryCurves plain = driver::resample_walls(b, {0}, s, &failure);
  REQUIRE(failure.empty());
  CHECK(on_ray(plain, 0.0) == 0);
  s.kinks = [&](int patch, Vec3<double> *center, std::vector<double> *angles) {
    REQUIRE(patch == 0);
    *center = Vec3<double>();
    *angles = rays;
    return true;
  };
  const driver::BoundaryCurves r = driver::resample_walls(b, {0}, s, &failure);
  REQUIRE(failure.empty());
  REQUIRE(r.x.size() == n);
  REQUIRE(r.segments.size() == n);
  for (const double a : rays) {
    CAPTURE(a);
    CHECK(on_ray(r, a) == 1);
  }
  // every vertex on the 40-gon (its distance from the centre between the apothem and 0.5), and
  // the spacing even within the pieces between the rays: no face more than twice another
  double shortest = 1e300, longest = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double radius = norm(r.x[k]);
    CHECK(radius <= 0.5 + 1e-15);
    CHECK(radius >= 0.5 * std::cos(M_PI / static_cast<double>(n)) - 1e-15);
    const double face = norm(r.x[r.segments[k][2]] - r.x[r.segments[k][1]]);
    shortest = std::min(shortest, face), longest = std::max(longest, face);
  }
  CHECK(longest < 2 * shortest);
}

TEST_CASE("remeshing: wall layers that Gmsh cannot make are left out, not the mesh",
          "[remeshing][mpi]") {
  // shape-min-drag's body on level 1, stretched (its O-grid then measures as wall layers), with a
  // zigzag pressed into its upper side: every other wall vertex above y = 0.1 0.03 lower, so
  // that the layers' fans cross in the notches
  const std::string dir = test::work_dir("remeshing-layers");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(kBody, {"mesh.cache_dir=" + dir, "mesh.level=1"}, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  // stretched along x by 0.4 at each end (the FFD's outer columns): the flank cells widen into
  // layers
  driver::DesignChain chain;
  {
    auto design = std::make_unique<design::DesignSpace>();
    REQUIRE(design->setup(m, m.coordinates, cfg) == 0);
    std::vector<double> a(design->size(), 0.0);
    for (int j = 0; j < 4; ++j) a[(j * 5 + 4) * 2] = 0.4, a[(j * 5 + 0) * 2] = -0.4;
    REQUIRE(chain.setup(fc, std::move(design), {}) == 0);
    design::DeformationResult dr;
    REQUIRE(chain.move_to_design(a, "test", &dr) == 0);
    REQUIRE(dr.valid);
  }
  driver::BoundaryLayerShape bl;
  REQUIRE(driver::measure_boundary_layer(fc.residual(), {m.patch_index("cylinder")}, &bl) == 0);
  CAPTURE(bl.layers, bl.thickness);
  REQUIRE(bl.layers > 0);
  std::vector<Vec3<double>> X = fc.residual().coordinates();
  std::vector<char> wall(m.n_vertices, 0);
  for (PetscInt f : m.boundary_faces(m.patch_index("cylinder")))
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
      wall[m.face_vertex[i]] = 1;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (wall[v] && X[v][1] > 0.1 && m.vertex_gid[v] % 2 == 0) X[v][1] -= 0.03;
  driver::RemeshResult r;
  clear_error();
  driver::RemeshOptions o;
  o.resample = false, o.boundary = &X;
  REQUIRE(driver::remesh(fc.residual(), {m.patch_index("cylinder")}, chain.reference_coordinates(),
                         o, dir + "/notched", &r) == 0);
  INFO(r.failure);
  CHECK(r.ok);
  CAPTURE(r.layer_dropped);
  CHECK_THAT(r.layer_dropped, Catch::Contains("gmsh"));
  CHECK(r.layer.layers == 0);
  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load_case(kBody, {"mesh.file=" + r.msh}, &cfg2, &fc2);
  CHECK(min_volume(fc2) > 0);
  CHECK(boundary_faces(fc2.mesh(), "cylinder") == boundary_faces(m, "cylinder"));
}

namespace {

/// The largest sqrt(area) of the cells at the patch's faces whose centre has y in (y_min, y_max).
double wall_cell_size(const driver::FlowCase &fc, const std::string &patch, double y_min,
                      double y_max) {
  const mesh::Mesh &m = fc.mesh();
  const auto &g = fc.residual().geometry();
  double h = 0;
  for (PetscInt f : m.boundary_faces(m.patch_index(patch)))
    if (g.face_centroid[f][1] > y_min && g.face_centroid[f][1] < y_max)
      h = std::max(h, std::sqrt(g.cell_volume[m.face_left[f]]));
  MPI_Allreduce(MPI_IN_PLACE, &h, 1, MPI_DOUBLE, MPI_MAX, m.comm);
  return h;
}

} // namespace

TEST_CASE("remeshing: a wall pressed into the old body gets the sizes the deformation carries "
          "there",
          "[remeshing][mpi]") {
  // shape-min-drag's body (level 0), its mesh moved to a bulge of 0.15 at the top (the current
  // mesh, valid), and a design with a notch of 0.25 there instead (the wall moved along its
  // radius by depth cos^2(2 t) within 45 degrees of the top): the design's wall runs where the
  // current mesh has no cells.  Remeshed around the design's deformed mesh (RemeshOptions::
  // boundary, as ShapeOptimization remeshes a design its mesh cannot follow), the cells at the
  // notch are as small as the new mesh's wall cells below the body (0.054 and 0.050; with the
  // sizes at the current coordinates, as before, 0.084: Gmsh's view had no cells there).
  const std::string dir = test::work_dir("remeshing-notch");
  config::CaseConfig cfg;
  driver::FlowCase fc;
  load_case(kBody, {"mesh.cache_dir=" + dir}, &cfg, &fc);
  const mesh::Mesh &m = fc.mesh();
  driver::DesignChain chain;
  REQUIRE(chain.setup(fc, nullptr, {}) == 0);
  const auto &X0 = chain.reference_coordinates();
  std::vector<char> wall(m.n_vertices, 0);
  for (PetscInt f : m.boundary_faces(m.patch_index("cylinder")))
    for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
      wall[m.face_vertex[i]] = 1;
  constexpr double kPi = 3.14159265358979323846;
  const auto radial = [&](double depth) {
    std::vector<Vec3<double>> d(m.n_vertices);
    for (PetscInt v = 0; v < m.n_vertices; ++v) {
      const double t = std::atan2(X0[v][1], X0[v][0]) - kPi / 2;
      if (wall[v] && std::abs(t) < kPi / 4)
        d[v] = depth * std::pow(std::cos(2 * t), 2) / norm(X0[v]) * X0[v];
    }
    return d;
  };
  design::DeformationResult dr;
  REQUIRE(chain.move_by(radial(0.15), "test", &dr) == 0);
  REQUIRE(dr.valid);
  std::vector<Vec3<double>> X;
  REQUIRE(chain.deformation().deform(radial(-0.25), &X, &dr) == 0);
  driver::RemeshOptions o;
  o.resample = false, o.boundary = &X;
  driver::RemeshResult r;
  clear_error();
  REQUIRE(driver::remesh(fc.residual(), {m.patch_index("cylinder")}, X0, o, dir + "/notch", &r) ==
          0);
  INFO(r.failure);
  REQUIRE(r.ok);
  config::CaseConfig cfg2;
  driver::FlowCase fc2;
  load_case(kBody, {"mesh.file=" + r.msh}, &cfg2, &fc2);
  CHECK(min_volume(fc2) > 0);
  const double notch = wall_cell_size(fc2, "cylinder", 0.2, 1);
  const double below = wall_cell_size(fc2, "cylinder", -1, 0);
  CAPTURE(notch, below);
  CHECK(notch <= 1.25 * below);
}

TEST_CASE("remeshing: a boundary that is not closed is refused", "[remeshing]") {
  driver::BoundaryCurves b;
  b.x = {Vec3<double>(0, 0, 0), Vec3<double>(1, 0, 0), Vec3<double>(1, 1, 0)};
  b.segments = {{0, 0, 1}, {0, 1, 2}};
  std::string error;
  CHECK(driver::remesh_geo_text(b, {"wall"}, {0}, {}, "/x.pos", &error).empty());
  CHECK(error.find("not a set of closed curves") != std::string::npos);
  b.segments.push_back({0, 2, 0});
  error.clear();
  const std::string text = driver::remesh_geo_text(b, {"wall"}, {0}, {}, "/x.pos", &error);
  CHECK(error.empty());
  CHECK(text.find("Curve Loop(1) = {1, 2, 3};") != std::string::npos);
  CHECK(text.find("Physical Curve(\"wall\") = {1, 2, 3};") != std::string::npos);
}
