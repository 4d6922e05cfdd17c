// Sizes of the next mesh from the error indicator, and their Gmsh view (see
// include/karman/driver/adaptation.hpp).
#include "karman/driver/adaptation.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/parallel.hpp"
#include "karman/driver/error_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace karman::driver {

const config::SectionOptions<AdaptOptions> &adapt_options() {
  using namespace config::key;
  static const auto options =
      config::SectionOptions<AdaptOptions>(
          "adapt", "goal-oriented mesh adaptation (karman adapt) to the case's objective")
          .key(integer("cycles", "4", "adaptations after the first solve", 0, 50),
               &AdaptOptions::cycles)
          .key(bounded("growth", "2.0", "cells of the next mesh / cells of the current one", 1.05,
                       16),
               &AdaptOptions::growth)
          .key(nonnegative("tolerance", "0.0",
                           "stop when the objective's estimated error is at most this (0: run "
                           "every cycle)"),
               &AdaptOptions::tolerance)
          .key(integer("max_cells", "2000000",
                       "cell budget: the adaptation stops with the last mesh rather than mesh "
                       "more cells",
                       1),
               &AdaptOptions::max_cells)
          .key(typed("anisotropic", config::KeyType::Bool, "false",
                     "2D: anisotropic cells (Gmsh's BAMG with a metric field): the sizes "
                     "stretched along the eigenvectors of the velocity's Hessian"),
               &AdaptOptions::anisotropic)
          .key(bounded("max_aspect_ratio", "20",
                       "anisotropic: the largest ratio of the two sizes of a cell", 1, 1000),
               &AdaptOptions::max_aspect_ratio)
          .key(bounded("max_coarsening", "1",
                       "the largest factor by which a cell's size may grow from one cycle to the "
                       "next (1: the mesh is only refined)",
                       1, 16),
               &AdaptOptions::max_coarsening);
  return options;
}

namespace {

/// The volume of a regular cell of the shape with unit edges: a cell of volume V has edges of
/// about (V / c)^(1/d), the length Gmsh's size fields give.
double unit_volume(mesh::CellShape shape) {
  switch (shape) {
  case mesh::CellShape::Triangle:
    return std::sqrt(3.0) / 4;
  case mesh::CellShape::Tetrahedron:
    return std::sqrt(2.0) / 12;
  case mesh::CellShape::Prism:
    return std::sqrt(3.0) / 4;
  case mesh::CellShape::Pyramid:
    return std::sqrt(2.0) / 6;
  default:
    return 1.0;
  }
}

} // namespace

std::vector<double> cell_sizes(const discretization::FlowResidual &res) {
  const mesh::Mesh &m = res.mesh();
  const auto &V = res.geometry().cell_volume;
  std::vector<double> h(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    h[c] = std::pow(V[c] / unit_volume(m.cell_shape[c]), 1.0 / m.dim);
  return h;
}

PetscErrorCode adapted_sizes(const discretization::FlowResidual &res,
                             const std::vector<double> &indicator, double target_cells,
                             double max_coarsening, std::vector<double> *sizes, double *predicted) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &V = res.geometry().cell_volume;
  const double d = m.dim, r = kSchemeOrder;
  const std::vector<double> h = cell_sizes(res);
  std::vector<double> base(m.n_owned_cells), unit(m.n_owned_cells);
  double top = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    unit[c] = unit_volume(m.cell_shape[c]);
    top = std::max(top, indicator[c] / (V[c] * std::pow(h[c], r)));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_DOUBLE, MPI_MAX, m.comm));
  PetscCheck(top > 0, m.comm, PETSC_ERR_ARG_WRONG, "the error indicator is zero everywhere");
  // h'(C) = clamp(C eps^(-1/(r+d)), h / 4, max_coarsening h); the cells it gives fall with C
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double eps = std::max(indicator[c] / (V[c] * std::pow(h[c], r)), 1e-8 * top);
    base[c] = std::pow(eps, -1 / (r + d));
  }
  auto cells = [&](double C, std::vector<double> *out) -> PetscErrorCode {
    PetscFunctionBeginUser;
    double n = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double s = std::clamp(C * base[c], h[c] / 4, max_coarsening * h[c]);
      if (out) (*out)[c] = s;
      n += V[c] / (unit[c] * std::pow(s, d));
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_DOUBLE, MPI_SUM, m.comm));
    *predicted = n;
    PetscFunctionReturn(0);
  };
  // bisection on log C between sizes that are all h / 4 and all max_coarsening h
  double lo = 1e300, hi = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    lo = std::min(lo, h[c] / 4 / base[c]), hi = std::max(hi, max_coarsening * h[c] / base[c]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, m.comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, m.comm));
  double a = std::log(lo), b = std::log(hi);
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (a + b);
    PetscCall(cells(std::exp(mid), nullptr));
    if (*predicted > target_cells)
      a = mid;
    else
      b = mid;
  }
  sizes->assign(m.n_owned_cells, 0.0);
  PetscCall(cells(std::exp(0.5 * (a + b)), sizes));
  PetscFunctionReturn(0);
}

namespace {

/// Gmsh's list-based view element of a cell shape.
const char *view_element(mesh::CellShape shape) {
  switch (shape) {
  case mesh::CellShape::Triangle:
    return "ST";
  case mesh::CellShape::Quadrilateral:
    return "SQ";
  case mesh::CellShape::Tetrahedron:
    return "SS";
  case mesh::CellShape::Hexahedron:
    return "SH";
  case mesh::CellShape::Prism:
    return "SI";
  case mesh::CellShape::Pyramid:
    return "SY";
  }
  return "";
}

} // namespace

namespace {

/// Gmsh's list-based tensor view element of a 2D cell shape.
const char *tensor_element(mesh::CellShape shape) {
  return shape == mesh::CellShape::Triangle        ? "TT"
         : shape == mesh::CellShape::Quadrilateral ? "TQ"
                                                   : "";
}

/// A Gmsh view of the mesh's owned cells: `ncomp` 1 (a scalar: the sizes) or 3 (a 2D metric
/// tensor: xx, xy, yy) values per cell, at the vertices the average of the adjacent cells'
/// (rank 0 writes `path`); `hash` (if given; rank 0) the hex hash of the file's text.
/// Collective.
PetscErrorCode write_view(const discretization::FlowResidual &res,
                          const std::vector<double> &values, int ncomp, const std::string &path,
                          std::string *hash, const std::vector<Vec3<double>> *at = nullptr) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &X = at ? *at : res.coordinates();
  // vertex values: the average of the adjacent (owned, on all ranks) cells' values
  std::vector<Vec3<double>> acc(m.n_vertices), count(m.n_vertices);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k) {
      for (int i = 0; i < ncomp; ++i) acc[m.cell_vertex[k]][i] += values[c * ncomp + i];
      count[m.cell_vertex[k]][0] += 1;
    }
  PetscCall(mesh::sum_vertex_copies(m, acc));
  PetscCall(mesh::sum_vertex_copies(m, count));
  // each owned cell's element; rank 0 writes them in the order of the serial mesh (cell_gid), not
  // the partition's (the values and coordinates still carry each rank count's round-off: a
  // deformed mesh's coordinates differ at 1e-14 between 1 and 2 ranks, and Gmsh's mesh with them)
  std::vector<char> text;
  const auto add = [&text](const char *piece) {
    text.insert(text.end(), piece, piece + std::strlen(piece));
  };
  std::vector<int> lengths(static_cast<std::size_t>(m.n_owned_cells));
  const std::vector<PetscInt> gids(m.cell_gid.begin(), m.cell_gid.begin() + m.n_owned_cells);
  char buf[160];
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const std::size_t start = text.size();
    add(ncomp == 1 ? view_element(m.cell_shape[c]) : tensor_element(m.cell_shape[c]));
    add("(");
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k) {
      const auto &x = X[m.cell_vertex[k]];
      std::snprintf(buf, sizeof(buf), "%s%.17g,%.17g,%.17g", k > m.cell_vertex_ptr[c] ? "," : "",
                    x[0], x[1], x[2]);
      add(buf);
    }
    add("){");
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k) {
      const Vec3<double> v = acc[m.cell_vertex[k]] * (1.0 / count[m.cell_vertex[k]][0]);
      const char *sep = k > m.cell_vertex_ptr[c] ? "," : "";
      if (ncomp == 1)
        std::snprintf(buf, sizeof(buf), "%s%.9g", sep, v[0]);
      else // the 3 x 3 tensor, row by row, 1 for zz
        std::snprintf(buf, sizeof(buf), "%s%.9g,%.9g,0,%.9g,%.9g,0,0,0,1", sep, v[0], v[1], v[1],
                      v[2]);
      add(buf);
    }
    add("};\n");
    lengths[static_cast<std::size_t>(c)] = static_cast<int>(text.size() - start);
  }
  std::vector<char> all;
  std::vector<int> all_lengths;
  std::vector<PetscInt> all_gids;
  PetscCall(gather_to_root(m.comm, text, MPI_CHAR, &all));
  PetscCall(gather_to_root(m.comm, lengths, MPI_INT, &all_lengths));
  PetscCall(gather_to_root(m.comm, gids, MPIU_INT, &all_gids));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  std::string sorted;
  if (rank == 0) {
    std::vector<std::size_t> start(all_lengths.size() + 1, 0), order(all_lengths.size());
    for (std::size_t i = 0; i < all_lengths.size(); ++i)
      start[i + 1] = start[i] + static_cast<std::size_t>(all_lengths[i]);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return all_gids[a] < all_gids[b]; });
    sorted.reserve(all.size());
    for (std::size_t i : order) sorted.append(all.data() + start[i], start[i + 1] - start[i]);
  }
  int ok = 1;
  if (rank == 0) {
    const std::string tmp = path + ".tmp";
    const std::string view =
        std::string("View \"") + (ncomp == 1 ? "size" : "metric") + "\" {\n" + sorted + "};\n";
    if (hash) *hash = hash_hex(hash_bytes(view.data(), view.size()));
    {
      std::ofstream out(tmp);
      out << view;
      ok = out.good();
    }
    std::error_code ec;
    if (ok) std::filesystem::rename(tmp, path, ec);
    ok = ok && !ec;
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, m.comm));
  PetscCheck(ok, m.comm, PETSC_ERR_FILE_WRITE, "cannot write the %s field %s",
             ncomp == 1 ? "size" : "metric", path.c_str());
  PetscFunctionReturn(0);
}

/// A symmetric 2 x 2 tensor (xx, xy, yy) as l1 e1 e1^T + l2 e2 e2^T: its eigenvalues l1 >= l2
/// and e1 = (cs, sn).
struct Eigen2 {
  double l1, l2, cs, sn;
};
Eigen2 eigen2(double xx, double xy, double yy) {
  const double mean = 0.5 * (xx + yy), rad = std::hypot(0.5 * (xx - yy), xy);
  const double theta = 0.5 * std::atan2(2 * xy, xx - yy);
  return {mean + rad, mean - rad, std::cos(theta), std::sin(theta)};
}
/// out += a e1 e1^T + b e2 e2^T (xx, xy, yy) for the eigenvectors of e.
void add_tensor(const Eigen2 &e, double a, double b, double *out) {
  out[0] += a * e.cs * e.cs + b * e.sn * e.sn;
  out[1] += (a - b) * e.cs * e.sn;
  out[2] += a * e.sn * e.sn + b * e.cs * e.cs;
}

} // namespace

PetscErrorCode write_size_field(const discretization::FlowResidual &res,
                                const std::vector<double> &sizes, const std::string &path,
                                std::string *hash, const std::vector<Vec3<double>> *at) {
  return write_view(res, sizes, 1, path, hash, at);
}

PetscErrorCode write_metric_field(const discretization::FlowResidual &res,
                                  const std::vector<double> &metric, const std::string &path,
                                  std::string *hash) {
  return write_view(res, metric, 3, path, hash);
}

PetscErrorCode anisotropic_metrics(const discretization::FlowResidual &res,
                                   const discretization::LocalState &state,
                                   const std::vector<double> &sizes, double max_aspect,
                                   std::vector<double> *metric) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  PetscCheck(m.dim == 2, m.comm, PETSC_ERR_SUP,
             "anisotropic adaptation is 2D only (Gmsh's BAMG meshes surfaces)");
  const auto &xc = res.geometry().cell_centroid;
  const int nv = res.nv();
  // the face neighbours of the owned cells (the others: layer 1, their gradients are known)
  std::vector<std::vector<PetscInt>> nb(m.n_owned_cells);
  for (PetscInt f = 0; f < m.n_faces; ++f) {
    const PetscInt L = m.face_left[f], R = m.face_right[f];
    if (R < 0) continue;
    if (L < m.n_owned_cells) nb[L].push_back(R);
    if (R < m.n_owned_cells) nb[R].push_back(L);
  }
  metric->assign(3 * static_cast<std::size_t>(m.n_owned_cells), 0.0);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    // |H_u| + |H_v|: each velocity component's Hessian by a least-squares fit of its gradient's
    // differences to the neighbours, H (x_j - x_c) = G_j - G_c, symmetrized
    double A[3] = {0, 0, 0}; // sum w dx dx^T: xx, xy, yy
    for (PetscInt j : nb[c]) {
      const Vec3<double> d = xc[j] - xc[c];
      const double w = 1 / dot(d, d);
      A[0] += w * d[0] * d[0], A[1] += w * d[0] * d[1], A[2] += w * d[1] * d[1];
    }
    const double det = A[0] * A[2] - A[1] * A[1];
    double M[3] = {0, 0, 0};
    if (det > 1e-8 * (A[0] + A[2]) * (A[0] + A[2])) {
      for (int k = 1; k <= 2; ++k) {       // the velocity components
        double b[2][2] = {{0, 0}, {0, 0}}; // b[i] = sum w dx (G_j - G_c)_i
        for (PetscInt j : nb[c]) {
          const Vec3<double> d = xc[j] - xc[c];
          const double w = 1 / dot(d, d);
          for (int i = 0; i < 2; ++i) {
            const double dg = state.grad[(j * nv + k) * 3 + i] - state.grad[(c * nv + k) * 3 + i];
            b[i][0] += w * d[0] * dg, b[i][1] += w * d[1] * dg;
          }
        }
        double H[2][2];
        for (int i = 0; i < 2; ++i) {
          H[i][0] = (A[2] * b[i][0] - A[1] * b[i][1]) / det;
          H[i][1] = (A[0] * b[i][1] - A[1] * b[i][0]) / det;
        }
        // |H| = R |Lambda| R^T
        const Eigen2 h = eigen2(H[0][0], 0.5 * (H[0][1] + H[1][0]), H[1][1]);
        add_tensor(h, std::abs(h.l1), std::abs(h.l2), M);
      }
    }
    // the sizes along M's eigenvectors: h / sqrt(r) across the strong curvature, h sqrt(r)
    // along it, r = sqrt(l1 / l2) <= max_aspect (the area, and the cell count, kept)
    const Eigen2 e = eigen2(M[0], M[1], M[2]);
    const double l2 = std::max(e.l2, 0.0);
    const double r = e.l1 > 0 ? std::min(std::sqrt(e.l1 / std::max(l2, 1e-300)), max_aspect) : 1.0;
    add_tensor(e, r / (sizes[c] * sizes[c]), 1 / (r * sizes[c] * sizes[c]), metric->data() + 3 * c);
  }
  PetscFunctionReturn(0);
}

std::string adapted_geo_text(const std::string &geo, const std::string &pos, const std::string &tag,
                             bool anisotropic, double size_factor) {
  std::string factor;
  if (size_factor != 1) {
    char line[96];
    std::snprintf(line, sizeof(line), "Mesh.MeshSizeFactor = Mesh.MeshSizeFactor * %.10g;\n",
                  size_factor);
    factor = line;
  }
  // (a field number no case file uses; the view is the only one: index 0)
  return "// karman adapt: " + geo + " with the size field " + pos + " (" + tag + ")\n" +
         "Include \"" + geo + "\";\n" + "Merge \"" + pos + "\";\n" +
         "Field[9990] = PostView;\n"
         "Field[9990].ViewIndex = 0;\n"
         "Background Field = 9990;\n"
         "Mesh.MeshSizeExtendFromBoundary = 0;\n"
         "Mesh.MeshSizeFromPoints = 0;\n"
         "Mesh.MeshSizeFromCurvature = 0;\n" +
         (anisotropic ? "Mesh.Algorithm = 7; // BAMG: the view is a metric tensor field\n" : "") +
         factor;
}

} // namespace karman::driver
