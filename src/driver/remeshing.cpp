// Remeshing around the walls of a deformed mesh (see include/karman/driver/remeshing.hpp).
#include "karman/driver/remeshing.hpp"

#include "karman/core/parallel.hpp"
#include "karman/driver/adaptation.hpp"
#include "karman/mesh/gmsh_mesher.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>

namespace karman::driver {

namespace {

using Key = std::tuple<double, double, double>;
Key key_of(const Vec3<double> &x) {
  return {x[0], x[1], x[2]};
}

double median(std::vector<double> v, double empty) {
  if (v.empty()) return empty;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// The face of `cell` that shares no vertex with its face `face` (-1 if none).
PetscInt opposite_face(const mesh::Mesh &m, PetscInt cell, PetscInt face) {
  for (PetscInt k = m.cell_face_ptr[cell]; k < m.cell_face_ptr[cell + 1]; ++k) {
    const PetscInt g = m.cell_face[k];
    bool shared = g == face;
    for (PetscInt i = m.face_vertex_ptr[g]; i < m.face_vertex_ptr[g + 1] && !shared; ++i)
      for (PetscInt j = m.face_vertex_ptr[face]; j < m.face_vertex_ptr[face + 1]; ++j)
        shared = shared || m.face_vertex[i] == m.face_vertex[j];
    if (!shared) return g;
  }
  return -1;
}

/// The heights of the anisotropic quadrilaterals stacked on the boundary face f.
std::vector<double> layer_heights(const discretization::FlowResidual &res, PetscInt f) {
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  std::vector<double> h;
  PetscInt face = f, cell = m.face_left[f];
  while (cell >= 0 && m.cell_shape[cell] == mesh::CellShape::Quadrilateral &&
         m.cell_face_ptr[cell + 1] > m.cell_face_ptr[cell] && h.size() < 10000) {
    const double width = norm(g.face_area[face]);
    const double height = g.cell_volume[cell] / width;
    if (!(height < width)) break;
    h.push_back(height);
    const PetscInt next = opposite_face(m, cell, face);
    if (next < 0) break;
    cell = m.face_left[next] == cell ? m.face_right[next] : m.face_left[next];
    face = next;
  }
  return h;
}

/// All ranks' values, on every rank.
PetscErrorCode all_values(MPI_Comm comm, const std::vector<double> &mine,
                          std::vector<double> *all) {
  PetscFunctionBeginUser;
  PetscCall(gather_to_root(comm, mine, MPI_DOUBLE, all));
  long n = static_cast<long>(all->size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, comm));
  all->resize(static_cast<std::size_t>(n));
  PetscCallMPI(MPI_Bcast(all->data(), static_cast<int>(n), MPI_DOUBLE, 0, comm));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode measure_boundary_layer(const discretization::FlowResidual &res,
                                      const std::vector<int> &walls, BoundaryLayerShape *bl) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  std::vector<double> count, first, thickness, ratio, spacing;
  for (int p : walls)
    for (PetscInt f : m.boundary_faces(p)) {
      const std::vector<double> h = layer_heights(res, f);
      count.push_back(static_cast<double>(h.size()));
      spacing.push_back(norm(res.geometry().face_area[f]));
      if (h.empty()) continue;
      first.push_back(h[0]);
      double t = 0;
      for (double x : h) t += x;
      thickness.push_back(t);
      for (std::size_t k = 1; k < h.size(); ++k) ratio.push_back(h[k] / h[k - 1]);
    }
  for (auto *v : {&count, &first, &thickness, &ratio, &spacing}) {
    std::vector<double> all;
    PetscCall(all_values(m.comm, *v, &all));
    *v = std::move(all);
  }
  *bl = BoundaryLayerShape();
  bl->layers = std::lround(median(count, 0));
  bl->spacing = median(spacing, 0);
  if (bl->layers > 0) {
    bl->first = median(first, 0);
    bl->thickness = median(thickness, 0);
    bl->ratio = median(ratio, 1);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode gather_boundary(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                               const std::vector<Vec3<double>> &X_original, BoundaryCurves *b) {
  PetscFunctionBeginUser;
  PetscCheck(m.dim == 2, m.comm, PETSC_ERR_SUP, "remeshing is for 2D meshes");
  // per owned boundary face: patch, two serial vertex indices, their coordinates and original
  // coordinates
  constexpr std::size_t kPer = 11;
  std::vector<double> mine;
  for (std::size_t p = 0; p < m.patch_names.size(); ++p)
    for (PetscInt f : m.boundary_faces(static_cast<int>(p))) {
      mine.push_back(static_cast<double>(p));
      for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
        mine.push_back(static_cast<double>(m.vertex_gid[m.face_vertex[i]]));
      for (const auto *Y : {&X, &X_original})
        for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
          mine.insert(mine.end(), {(*Y)[m.face_vertex[i]][0], (*Y)[m.face_vertex[i]][1]});
    }
  std::vector<double> all;
  PetscCall(gather_to_root(m.comm, mine, MPI_DOUBLE, &all));
  *b = BoundaryCurves();
  std::map<long, std::pair<Vec3<double>, Vec3<double>>> vertices; // by serial index
  for (std::size_t i = 0; i + kPer <= all.size(); i += kPer)
    for (int e = 0; e < 2; ++e)
      vertices[std::lround(all[i + 1 + e])] = {
          Vec3<double>(all[i + 3 + 2 * e], all[i + 4 + 2 * e], 0),
          Vec3<double>(all[i + 7 + 2 * e], all[i + 8 + 2 * e], 0)};
  std::map<long, long> index;
  for (const auto &[gid, x] : vertices) {
    index[gid] = static_cast<long>(b->x.size());
    b->x.push_back(x.first);
    b->original.push_back(x.second);
  }
  for (std::size_t i = 0; i + kPer <= all.size(); i += kPer)
    b->segments.push_back(
        {std::lround(all[i]), index[std::lround(all[i + 1])], index[std::lround(all[i + 2])]});
  std::sort(b->segments.begin(), b->segments.end());
  PetscFunctionReturn(0);
}

namespace {

/// The closed chains of the segments as curve loops of signed line numbers (line k + 1 is
/// segment k); false if a vertex has other than two segments.
bool curve_loops(const BoundaryCurves &b, std::vector<std::vector<long>> *loops) {
  std::vector<std::vector<long>> at(b.x.size());
  for (std::size_t k = 0; k < b.segments.size(); ++k)
    for (int e : {1, 2}) at[b.segments[k][e]].push_back(static_cast<long>(k));
  for (const auto &s : at)
    if (!s.empty() && s.size() != 2) return false;
  std::vector<char> used(b.segments.size(), 0);
  for (std::size_t k0 = 0; k0 < b.segments.size(); ++k0) {
    if (used[k0]) continue;
    std::vector<long> loop;
    long k = static_cast<long>(k0), v = b.segments[k0][2];
    loop.push_back(k + 1);
    used[k0] = 1;
    while (v != b.segments[k0][1]) {
      const long next = at[v][0] == k ? at[v][1] : at[v][0];
      if (used[next]) return false;
      used[next] = 1;
      const bool forward = b.segments[next][1] == v;
      loop.push_back(forward ? next + 1 : -(next + 1));
      v = forward ? b.segments[next][2] : b.segments[next][1];
      k = next;
    }
    loops->push_back(loop);
  }
  return true;
}

/// The diagonal of the bounding box of a loop's vertices.
double extent(const BoundaryCurves &b, const std::vector<long> &loop) {
  Vec3<double> lo(1e300, 1e300, 0), hi(-1e300, -1e300, 0);
  for (long l : loop)
    for (int e : {1, 2}) {
      const Vec3<double> &x = b.x[b.segments[std::labs(l) - 1][e]];
      for (int d = 0; d < 2; ++d) lo[d] = std::min(lo[d], x[d]), hi[d] = std::max(hi[d], x[d]);
    }
  return norm(hi - lo);
}

std::string id_list(const std::vector<long> &ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s;
}

} // namespace

namespace {

/// The turning angle of a closed polygon at vertex k of `x` (indices into pts).
double turning(const std::vector<Vec3<double>> &pts, const std::vector<long> &x, std::size_t k) {
  const std::size_t n = x.size();
  const Vec3<double> a = pts[x[k]] - pts[x[(k + n - 1) % n]], b = pts[x[(k + 1) % n]] - pts[x[k]];
  return std::atan2(std::abs(a[0] * b[1] - a[1] * b[0]), a[0] * b[0] + a[1] * b[1]);
}

/// How far (relative to the face's original length) a design's curve may run back along the wall
/// face between two of its vertices (resample_walls): folds smaller than that (a tail that a
/// design pinched, its faces 20x shorter than they were) are below the mesh's resolution.
constexpr double kMaxBacktrack = 0.1;

/// The index of the face nearest to x and the nearest point on it (-1 and x if there are none).
std::ptrdiff_t nearest_on(const std::vector<std::array<Vec3<double>, 2>> &faces,
                          const Vec3<double> x, Vec3<double> *at) { // (x: a copy, at may alias it)
  *at = x;
  std::ptrdiff_t best = -1;
  double best_d = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < faces.size(); ++k) {
    const auto &f = faces[k];
    const Vec3<double> e = f[1] - f[0];
    const double ee = dot(e, e);
    const double t = ee > 0 ? std::clamp(dot(x - f[0], e) / ee, 0.0, 1.0) : 0.0;
    const Vec3<double> p = f[0] + t * e;
    const double d = norm(p - x);
    if (d < best_d) best_d = d, *at = p, best = static_cast<std::ptrdiff_t>(k);
  }
  return best;
}

/// The n vertices' places in the cumulative weight M (m + 1 entries over the m pieces of weights
/// w, originals x0): equidistributed from 0, or with s.kinks a place on each kink ray that crosses
/// the original polygon and the others equidistributed between those (resample_walls).
std::vector<double> vertex_targets(const std::vector<double> &M, const std::vector<double> &w,
                                   const std::vector<Vec3<double>> &x0,
                                   const std::vector<long> &piece_patch, const WallSampling &s,
                                   std::size_t n) {
  const std::size_t m = w.size();
  const double total = M[m];
  std::vector<double> targets(n);
  for (std::size_t j = 0; j < n; ++j)
    targets[j] = total * static_cast<double>(j) / static_cast<double>(n);
  Vec3<double> c;
  std::vector<double> angles;
  if (!s.map || !s.kinks || m == 0 ||
      std::any_of(piece_patch.begin(), piece_patch.end(),
                  [&](long p) { return p != piece_patch[0]; }) || // (a loop of one patch only)
      !s.kinks(static_cast<int>(piece_patch[0]), &c, &angles))
    return targets;
  std::vector<double> fixed; // the kinks' places in M: where the pieces' originals cross a ray
  for (const double a : angles) {
    const Vec3<double> e(std::cos(a), std::sin(a), 0.0);
    for (std::size_t k = 0; k < m; ++k) {
      const Vec3<double> p = x0[k] - c, q = x0[(k + 1) % m] - c;
      const double cp = p[0] * e[1] - p[1] * e[0], cq = q[0] * e[1] - q[1] * e[0];
      if (cp == cq || ((cp < 0) == (cq < 0) && cp != 0)) continue;
      const double t = cp / (cp - cq);
      if (t < 0 || t >= 1 || dot(p + t * (q - p), e) <= 0) continue;
      fixed.push_back(M[k] + t * w[k]);
      break;
    }
  }
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end(),
                          [&](double a, double b) { return b - a <= 1e-12 * total; }),
              fixed.end());
  const std::size_t f = fixed.size();
  if (f == 0 || f > n) return targets;
  // each piece between two kinks: its share of the n vertices (at least its kink's)
  std::vector<double> length(f);
  std::vector<long> count(f);
  long sum = 0;
  for (std::size_t i = 0; i < f; ++i) {
    length[i] = i + 1 < f ? fixed[i + 1] - fixed[i] : fixed[0] + total - fixed[i];
    count[i] = std::max(1L, std::lround(static_cast<double>(n) * length[i] / total));
    sum += count[i];
  }
  while (sum != static_cast<long>(n)) { // the coarsest piece gets one more, or the finest one less
    std::size_t pick = f;
    for (std::size_t i = 0; i < f; ++i) {
      if (sum > static_cast<long>(n) && count[i] == 1) continue;
      const double h = length[i] / static_cast<double>(count[i]);
      if (pick == f ||
          (sum < static_cast<long>(n) ? h > length[pick] / static_cast<double>(count[pick])
                                      : h < length[pick] / static_cast<double>(count[pick])))
        pick = i;
    }
    if (pick == f) return targets;
    count[pick] += sum < static_cast<long>(n) ? 1 : -1;
    sum += sum < static_cast<long>(n) ? 1 : -1;
  }
  targets.clear();
  for (std::size_t i = 0; i < f; ++i)
    for (long j = 0; j < count[i]; ++j) {
      double at = fixed[i] + length[i] * static_cast<double>(j) / static_cast<double>(count[i]);
      targets.push_back(at >= total ? at - total : at);
    }
  std::sort(targets.begin(), targets.end());
  return targets;
}

/// Appends the closed wall loop `loop` of b to `out` re-sampled (see resample_walls); false and
/// *failure if the design's curve runs back along a face by more than kMaxBacktrack.
bool resample_loop(const BoundaryCurves &b, const std::vector<long> &loop, const WallSampling &s,
                   BoundaryCurves *out, std::string *failure) {
  std::vector<long> v, patch; // the loop's vertices in order, each segment's patch
  for (long l : loop) {
    const auto &seg = b.segments[std::labs(l) - 1];
    v.push_back(l > 0 ? seg[1] : seg[2]);
    patch.push_back(seg[0]);
  }
  const std::size_t n = v.size();
  std::size_t k0 = 0; // start at the sharpest turn: a corner stays a vertex
  for (std::size_t k = 1; k < n; ++k)
    if (turning(b.x, v, k) > turning(b.x, v, k0)) k0 = k;
  std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k0), v.end());
  std::rotate(patch.begin(), patch.begin() + static_cast<std::ptrdiff_t>(k0), patch.end());
  // the wall as a closed polygon of points: x (now), x0 (original), and each piece's patch and
  // unit normal out of the body: the current vertices, or each face subdivided and mapped
  const int per = s.map ? std::max(1, s.per_face) : 1;
  std::vector<Vec3<double>> x, x0, normal;
  std::vector<long> piece_patch;
  double area = 0; // of the original loop: > 0 counter-clockwise (the body on the left)
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3<double> &p = b.original[v[k]], &q = b.original[v[(k + 1) % n]];
    area += p[0] * q[1] - p[1] * q[0];
  }
  for (std::size_t k = 0; k < n; ++k) {
    const long a = v[k], c = v[(k + 1) % n];
    const Vec3<double> e = b.original[c] - b.original[a];
    Vec3<double> nk = area > 0 ? Vec3<double>(e[1], -e[0], 0.0) : Vec3<double>(-e[1], e[0], 0.0);
    nk *= 1.0 / std::max(norm(nk), 1e-300);
    for (int j = 0; j < per; ++j) {
      const double t = static_cast<double>(j) / per;
      Vec3<double> o = b.original[a] + t * e, at = b.x[a] + t * (b.x[c] - b.x[a]);
      if (s.map) {
        if (j > 0 && !s.original_faces.empty()) nearest_on(s.original_faces, o, &o);
        if (!s.map(o, static_cast<int>(patch[k]), nk, &at)) {
          *failure = "the design has no map between the wall vertices";
          return false;
        }
      }
      x.push_back(at), x0.push_back(o), normal.push_back(nk), piece_patch.push_back(patch[k]);
    }
  }
  const std::size_t m = x.size();
  // between two vertices the design's curve must run forward along their face: a loop or fold
  // goes back along it, and the polygon of the vertices cuts it off (a sharp nose between two
  // vertices bulges out sideways and is the mesh's usual resolution question, not this)
  for (std::size_t k = 0; s.map && s.check_folds && k < n; ++k) {
    const Vec3<double> &p = x[k * per], &q = x[((k + 1) * per) % m];
    const double length = norm(x0[((k + 1) * per) % m] - x0[k * per]); // (a pinched face's too)
    const Vec3<double> e = q - p;
    const double ee = std::max(std::sqrt(dot(e, e)), 1e-300);
    double ahead = 0, back = 0;
    std::size_t at = k * per;
    for (int j = 1; j <= per; ++j) {
      const std::size_t i = (k * per + j) % m;
      const double t = dot(x[i] - p, e) / ee; // distance along the face
      ahead = std::max(ahead, t);
      if (ahead - t > back) back = ahead - t, at = i;
    }
    if (back <= kMaxBacktrack * length) continue;
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "the design's wall runs back by %.3g (%.2g of the face's original length) along "
                  "the wall face between (%.6g, %.6g) and (%.6g, %.6g), near (%.6g, %.6g): a loop "
                  "or fold between two wall vertices, which no mesh with these vertices follows",
                  back, back / std::max(length, 1e-300), p[0], p[1], q[0], q[1], x[at][0],
                  x[at][1]);
    *failure = buf;
    return false;
  }
  // w_k: piece k's length now over its length on the original mesh (with the original faces:
  // over the original mesh's spacing there, the length of the original face it lies on, per
  // piece: the pieces of a mesh that is itself a remeshing are not evenly spaced originally); its
  // cumulative sum M
  std::vector<double> M(m + 1, 0.0), w(m);
  for (std::size_t k = 0; k < m; ++k) {
    double original = norm(x0[(k + 1) % m] - x0[k]);
    if (s.map && !s.original_faces.empty()) {
      Vec3<double> on;
      const auto f = nearest_on(s.original_faces, 0.5 * (x0[k] + x0[(k + 1) % m]), &on);
      if (f >= 0) original = norm(s.original_faces[f][1] - s.original_faces[f][0]) / per;
    }
    w[k] = norm(x[(k + 1) % m] - x[k]) / std::max(original, 1e-300);
    M[k + 1] = M[k] + w[k];
  }
  const std::vector<double> targets = vertex_targets(M, w, x0, piece_patch, s, n);
  const long first = static_cast<long>(out->x.size());
  std::size_t k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double target = targets[j];
    while (k + 1 < m && M[k + 1] <= target) ++k;
    const double t = w[k] > 0 ? std::clamp((target - M[k]) / w[k], 0.0, 1.0) : 0.0;
    Vec3<double> o = x0[k] + t * (x0[(k + 1) % m] - x0[k]), at = x[k] + t * (x[(k + 1) % m] - x[k]);
    if (s.map && t > 0) { // on the design's curve exactly
      if (!s.original_faces.empty()) nearest_on(s.original_faces, o, &o);
      s.map(o, static_cast<int>(piece_patch[k]), normal[k], &at);
    }
    out->x.push_back(at);
    out->original.push_back(o);
    out->segments.push_back(
        {piece_patch[k], first + static_cast<long>(j), first + static_cast<long>((j + 1) % n)});
  }
  return true;
}

} // namespace

BoundaryCurves resample_walls(const BoundaryCurves &b, const std::vector<int> &walls,
                              const WallSampling &sampling, std::string *failure) {
  std::vector<std::vector<long>> loops;
  if (!curve_loops(b, &loops)) return b; // (remesh_geo_text reports it)
  auto is_wall = [&](long l) {
    return std::find(walls.begin(), walls.end(), b.segments[std::labs(l) - 1][0]) != walls.end();
  };
  BoundaryCurves out;
  std::vector<long> kept(b.x.size(), -1);
  auto keep = [&](long i) {
    if (kept[i] < 0) {
      kept[i] = static_cast<long>(out.x.size());
      out.x.push_back(b.x[i]);
      out.original.push_back(b.original[i]);
    }
    return kept[i];
  };
  for (const auto &loop : loops) {
    if (std::all_of(loop.begin(), loop.end(), is_wall)) {
      std::string why;
      if (!resample_loop(b, loop, sampling, &out, &why)) {
        if (failure) *failure = why;
        return b;
      }
      continue;
    }
    for (long l : loop) {
      const auto &seg = b.segments[std::labs(l) - 1];
      out.segments.push_back({seg[0], keep(seg[1]), keep(seg[2])});
    }
  }
  return out;
}

std::string remesh_geo_text(const BoundaryCurves &b, const std::vector<std::string> &patches,
                            const std::vector<int> &walls, const BoundaryLayerShape &bl,
                            const std::string &pos, std::string *error) {
  std::vector<std::vector<long>> loops;
  if (b.segments.empty() || !curve_loops(b, &loops)) {
    *error = "the boundary is not a set of closed curves (a vertex with other than two boundary "
             "faces)";
    return "";
  }
  std::stable_sort(loops.begin(), loops.end(), [&](const auto &p, const auto &q) {
    return extent(b, p) > extent(b, q); // the outer loop first
  });
  std::string t = "// karman: the domain remeshed around its boundary (driver/remeshing.hpp)\n";
  char buf[320];
  for (std::size_t i = 0; i < b.x.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "Point(%zu) = {%.17g, %.17g, 0};\n", i + 1, b.x[i][0],
                  b.x[i][1]);
    t += buf;
  }
  for (std::size_t k = 0; k < b.segments.size(); ++k)
    t += "Line(" + std::to_string(k + 1) + ") = {" + std::to_string(b.segments[k][1] + 1) + ", " +
         std::to_string(b.segments[k][2] + 1) + "};\n";
  t += "Transfinite Curve {1 : " + std::to_string(b.segments.size()) + "} = 2;\n";
  std::vector<long> surface;
  for (std::size_t l = 0; l < loops.size(); ++l) {
    t += "Curve Loop(" + std::to_string(l + 1) + ") = {" + id_list(loops[l]) + "};\n";
    surface.push_back(static_cast<long>(l + 1));
  }
  t += "Plane Surface(1) = {" + id_list(surface) + "};\n";
  std::vector<long> wall_lines;
  for (std::size_t p = 0; p < patches.size(); ++p) {
    std::vector<long> lines;
    for (std::size_t k = 0; k < b.segments.size(); ++k)
      if (b.segments[k][0] == static_cast<long>(p)) lines.push_back(static_cast<long>(k + 1));
    if (lines.empty()) continue;
    t += "Physical Curve(\"" + patches[p] + "\") = {" + id_list(lines) + "};\n";
    if (std::find(walls.begin(), walls.end(), static_cast<int>(p)) != walls.end())
      wall_lines.insert(wall_lines.end(), lines.begin(), lines.end());
  }
  t += "Physical Surface(\"fluid\") = {1};\n";
  t += "Merge \"" + pos +
       "\";\nField[1] = PostView;\nField[1].ViewIndex = 0;\n"
       "Background Field = 1;\n";
  if (bl.layers > 0 && !wall_lines.empty()) {
    std::snprintf(buf, sizeof(buf),
                  "Field[2] = BoundaryLayer;\nField[2].Size = %.9g;\nField[2].Ratio = %.9g;\n"
                  "Field[2].Thickness = %.9g;\nField[2].SizeFar = %.9g;\nField[2].Quads = 1;\n",
                  bl.first, bl.ratio, bl.thickness, std::max(bl.spacing, bl.first));
    t += buf;
    t += "Field[2].CurvesList = {" + id_list(wall_lines) + "};\nBoundaryLayer Field = 2;\n";
  }
  t += "Mesh.MeshSizeExtendFromBoundary = 0;\nMesh.MeshSizeFromPoints = 0;\n"
       "Mesh.MeshSizeFromCurvature = 0;\n";
  return t;
}

namespace {

/// The cells of the mesh Gmsh wrote, from its log's last "N nodes M elements" line: M less the
/// point and line elements of the script's `points` points and `lines` lines; -1 if not found.
long gmsh_cells(const std::string &log, long points, long lines) {
  std::ifstream in(log);
  std::string line;
  long cells = -1, nodes, elements;
  while (std::getline(in, line)) {
    const std::size_t at = line.find("Info    : ");
    if (at == std::string::npos) continue;
    char tail[16] = {};
    if (std::sscanf(line.c_str() + at + 10, "%ld nodes %ld %15s", &nodes, &elements, tail) == 3 &&
        std::string(tail) == "elements")
      cells = elements - points - lines;
  }
  return cells;
}

/// Meshes STEM.geo (rank 0) with the current cells' sizes times `scale` as the view `pos`; with
/// target > 0 meshes again with the view scaled until the cells are within 5 % of it (the count
/// goes as scale^-2), at most 3 meshings, the closest kept (its view and mesh the files left); the
/// view's cells at the coordinates `at` if given (RemeshOptions::boundary).  Sets r->cells,
/// size_scale, gmsh_runs, and r->failure if the first meshing failed.  Collective.
PetscErrorCode mesh_to_target(const discretization::FlowResidual &res, const BoundaryCurves &b,
                              const std::string &stem, const std::string &pos, long target,
                              double scale, const std::vector<Vec3<double>> *at, RemeshResult *r) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  const std::vector<double> h = cell_sizes(res);
  const auto write_view = [&](double factor) {
    std::vector<double> scaled(h);
    for (double &x : scaled) x *= factor;
    return write_size_field(res, scaled, pos, nullptr, at);
  };
  long best = -1;
  for (int run = 0; run < (target > 0 ? 3 : 1); ++run) {
    PetscCall(write_view(scale));
    long cells = -1;
    if (rank == 0 && r->failure.empty()) {
      const std::string msh = run == 0 ? r->msh : stem + ".retry.msh";
      std::error_code ec;
      std::filesystem::remove(msh, ec);
      const std::string why = mesh::run_gmsh(stem + ".geo", 0, 2, msh);
      if (run == 0) r->failure = why; // (a later one keeps the first mesh)
      if (why.empty()) {
        ++r->gmsh_runs;
        cells = gmsh_cells(msh + ".log", static_cast<long>(b.x.size()),
                           static_cast<long>(b.segments.size()));
      }
      if (why.empty() && (run == 0 || std::abs(cells - target) < std::abs(best - target))) {
        if (run > 0) {
          std::filesystem::rename(msh, r->msh, ec);
          std::filesystem::rename(msh + ".log", r->msh + ".log", ec);
        }
        best = cells, r->size_scale = scale;
      }
      std::filesystem::remove(stem + ".retry.msh", ec);
      std::filesystem::remove(stem + ".retry.msh.log", ec);
    }
    PetscCallMPI(MPI_Bcast(&cells, 1, MPI_LONG, 0, m.comm));
    if (cells <= 0 || target <= 0 || std::abs(cells - target) <= 0.05 * target) break;
    scale *= std::sqrt(static_cast<double>(cells) / target);
  }
  PetscCallMPI(MPI_Bcast(&best, 1, MPI_LONG, 0, m.comm));
  PetscCallMPI(MPI_Bcast(&r->size_scale, 1, MPI_DOUBLE, 0, m.comm));
  PetscCallMPI(MPI_Bcast(&r->gmsh_runs, 1, MPI_INT, 0, m.comm));
  r->cells = best;
  if (r->size_scale != scale) PetscCall(write_view(r->size_scale)); // (the kept mesh's view)
  PetscFunctionReturn(0);
}

} // namespace

double next_size_scale(double used, long cells, long target) {
  if (target <= 0 || cells <= 0) return used;
  return used * std::sqrt(static_cast<double>(cells) / static_cast<double>(target));
}

PetscErrorCode remesh(const discretization::FlowResidual &res, const std::vector<int> &walls,
                      const std::vector<Vec3<double>> &X_original, const RemeshOptions &options,
                      const std::string &stem, RemeshResult *r) {
  PetscFunctionBeginUser;
  const double t0 = MPI_Wtime();
  const mesh::Mesh &m = res.mesh();
  *r = RemeshResult();
  r->msh = stem + ".msh";
  PetscCall(measure_boundary_layer(res, walls, &r->layer));
  BoundaryCurves b;
  PetscCall(
      gather_boundary(m, options.boundary ? *options.boundary : res.coordinates(), X_original, &b));
  std::string fold; // (a design's curve that loops between two wall vertices)
  if (options.resample) b = resample_walls(b, walls, options.sampling, &fold);
  if (options.resample && fold.empty() && options.evaluated.map) {
    std::string why; // (the re-sampled walls as the new mesh will have them: RemeshOptions)
    resample_walls(b, walls, options.evaluated, &why);
    if (!why.empty()) fold = "on the re-sampled walls: " + why;
  }
  const std::string pos = std::filesystem::absolute(stem + ".pos").string();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  if (rank == 0) {
    const std::string text = remesh_geo_text(b, m.patch_names, walls, r->layer, pos, &r->failure);
    if (!fold.empty()) r->failure = fold;
    if (r->failure.empty()) std::ofstream(stem + ".geo") << text;
  }
  PetscCall(mesh_to_target(res, b, stem, pos, options.target_cells, options.initial_scale,
                           options.boundary, r));
  // Gmsh could not make the wall layers (their fans cross where the wall is sharp or wavy, e.g.
  // "intersections in the 1D mesh" of its boundary-layer curves): triangles up to the wall then
  int retry = rank == 0 && !r->failure.empty() && fold.empty() && r->layer.layers > 0;
  PetscCallMPI(MPI_Bcast(&retry, 1, MPI_INT, 0, m.comm));
  if (retry) {
    r->layer.layers = 0;
    if (rank == 0) {
      r->layer_dropped = r->failure.size() > 240 ? r->failure.substr(0, 240) + " ..." : r->failure;
      r->failure.clear();
      const std::string text = remesh_geo_text(b, m.patch_names, walls, r->layer, pos, &r->failure);
      if (r->failure.empty()) std::ofstream(stem + ".geo") << text;
    }
    PetscCall(mesh_to_target(res, b, stem, pos, options.target_cells, options.initial_scale,
                             options.boundary, r));
  }
  PetscCall(broadcast_string(m.comm, &r->layer_dropped));
  std::vector<double> embedding; // at, original per boundary vertex (rank 0)
  if (rank == 0) {
    std::map<Key, Vec3<double>> sorted;
    for (std::size_t i = 0; i < b.x.size(); ++i) sorted[key_of(b.x[i])] = b.original[i];
    for (const auto &[k, x0] : sorted)
      embedding.insert(embedding.end(),
                       {std::get<0>(k), std::get<1>(k), std::get<2>(k), x0[0], x0[1], x0[2]});
  }
  int n = static_cast<int>(r->failure.size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, 0, m.comm));
  r->failure.resize(static_cast<std::size_t>(n));
  PetscCallMPI(MPI_Bcast(r->failure.data(), n, MPI_CHAR, 0, m.comm));
  r->ok = r->failure.empty();
  std::vector<double> all;
  PetscCall(all_values(m.comm, embedding, &all));
  for (std::size_t i = 0; i + 6 <= all.size(); i += 6) {
    r->embedding.at.push_back(Vec3<double>(all[i], all[i + 1], all[i + 2]));
    r->embedding.original.push_back(Vec3<double>(all[i + 3], all[i + 4], all[i + 5]));
  }
  r->time = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

PetscErrorCode gather_embedding(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                                const std::vector<Vec3<double>> &X_original, BoundaryEmbedding *e) {
  PetscFunctionBeginUser;
  std::vector<double> mine;
  for (std::size_t p = 0; p < m.patch_names.size(); ++p)
    for (PetscInt f : m.boundary_faces(static_cast<int>(p)))
      for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i) {
        const PetscInt v = m.face_vertex[i];
        for (int d = 0; d < 3; ++d) mine.push_back(X[v][d]);
        for (int d = 0; d < 3; ++d) mine.push_back(X_original[v][d]);
      }
  std::vector<double> all;
  PetscCall(all_values(m.comm, mine, &all));
  std::map<Key, Vec3<double>> sorted;
  for (std::size_t i = 0; i + 6 <= all.size(); i += 6)
    sorted[{all[i], all[i + 1], all[i + 2]}] = Vec3<double>(all[i + 3], all[i + 4], all[i + 5]);
  *e = BoundaryEmbedding();
  for (const auto &[k, x0] : sorted) {
    e->at.push_back(Vec3<double>(std::get<0>(k), std::get<1>(k), std::get<2>(k)));
    e->original.push_back(x0);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode embedded_coordinates(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                                    const BoundaryEmbedding &e, std::vector<Vec3<double>> *X0) {
  PetscFunctionBeginUser;
  *X0 = X;
  std::vector<char> found(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    const auto it =
        std::lower_bound(e.at.begin(), e.at.end(), X[v],
                         [](const auto &a, const auto &b) { return key_of(a) < key_of(b); });
    if (it == e.at.end() || key_of(*it) != key_of(X[v])) continue;
    (*X0)[v] = e.original[static_cast<std::size_t>(it - e.at.begin())];
    found[v] = 1;
  }
  long missing = 0;
  Vec3<double> where;
  for (std::size_t p = 0; p < m.patch_names.size(); ++p)
    for (PetscInt f : m.boundary_faces(static_cast<int>(p)))
      for (PetscInt i = m.face_vertex_ptr[f]; i < m.face_vertex_ptr[f + 1]; ++i)
        if (!found[m.face_vertex[i]]) where = X[m.face_vertex[i]], ++missing;
  long total = missing;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, m.comm));
  char at[128] = "";
  if (missing) std::snprintf(at, sizeof(at), " (one at (%.9g, %.9g))", where[0], where[1]);
  PetscCheck(total == 0, m.comm, PETSC_ERR_ARG_WRONG,
             "%s: %ld boundary vertices are not vertices of the mesh it was remeshed from%s",
             m.source.c_str(), total, at);
  PetscFunctionReturn(0);
}

} // namespace karman::driver
