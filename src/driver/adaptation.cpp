// Sizes of the next mesh from the error indicator, and their Gmsh view (see
// include/karman/driver/adaptation.hpp).
#include "karman/driver/adaptation.hpp"

#include "karman/driver/error_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

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
               &AdaptOptions::max_cells);
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

PetscErrorCode adapted_sizes(const discretization::FlowResidual &res,
                             const std::vector<double> &indicator, double target_cells,
                             std::vector<double> *sizes, double *predicted) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &V = res.geometry().cell_volume;
  const double d = m.dim, r = kSchemeOrder;
  std::vector<double> h(m.n_owned_cells), base(m.n_owned_cells), unit(m.n_owned_cells);
  double top = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    unit[c] = unit_volume(m.cell_shape[c]);
    h[c] = std::pow(V[c] / unit[c], 1 / d);
    top = std::max(top, indicator[c] / (V[c] * std::pow(h[c], r)));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_DOUBLE, MPI_MAX, m.comm));
  PetscCheck(top > 0, m.comm, PETSC_ERR_ARG_WRONG, "the error indicator is zero everywhere");
  // h'(C) = clamp(C eps^(-1/(r+d)), h / 4, 2 h); the cells it gives fall with C
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double eps = std::max(indicator[c] / (V[c] * std::pow(h[c], r)), 1e-8 * top);
    base[c] = std::pow(eps, -1 / (r + d));
  }
  auto cells = [&](double C, std::vector<double> *out) -> PetscErrorCode {
    PetscFunctionBeginUser;
    double n = 0;
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double s = std::clamp(C * base[c], h[c] / 4, 2 * h[c]);
      if (out) (*out)[c] = s;
      n += V[c] / (unit[c] * std::pow(s, d));
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_DOUBLE, MPI_SUM, m.comm));
    *predicted = n;
    PetscFunctionReturn(0);
  };
  // bisection on log C between sizes that are all h / 4 and all 2 h
  double lo = 1e300, hi = 0;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    lo = std::min(lo, h[c] / 4 / base[c]), hi = std::max(hi, 2 * h[c] / base[c]);
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

PetscErrorCode write_size_field(const discretization::FlowResidual &res,
                                const std::vector<double> &sizes, const std::string &path) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = res.mesh();
  const auto &X = res.coordinates();
  // vertex values: the average of the adjacent (owned, on all ranks) cells' sizes
  std::vector<Vec3<double>> acc(m.n_vertices);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k)
      acc[m.cell_vertex[k]] += Vec3<double>(sizes[c], 1, 0);
  PetscCall(mesh::sum_vertex_copies(m, acc));
  std::string text;
  char buf[96];
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    text += view_element(m.cell_shape[c]);
    text += '(';
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k) {
      const auto &x = X[m.cell_vertex[k]];
      std::snprintf(buf, sizeof(buf), "%s%.17g,%.17g,%.17g", k > m.cell_vertex_ptr[c] ? "," : "",
                    x[0], x[1], x[2]);
      text += buf;
    }
    text += "){";
    for (PetscInt k = m.cell_vertex_ptr[c]; k < m.cell_vertex_ptr[c + 1]; ++k) {
      const auto &a = acc[m.cell_vertex[k]];
      std::snprintf(buf, sizeof(buf), "%s%.9g", k > m.cell_vertex_ptr[c] ? "," : "", a[0] / a[1]);
      text += buf;
    }
    text += "};\n";
  }
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  PetscCallMPI(MPI_Comm_size(m.comm, &size));
  const int n = static_cast<int>(text.size());
  std::vector<int> counts(size), offsets(size, 0);
  PetscCallMPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, m.comm));
  std::string all;
  if (rank == 0) {
    for (int q = 1; q < size; ++q) offsets[q] = offsets[q - 1] + counts[q - 1];
    all.resize(static_cast<std::size_t>(offsets.back() + counts.back()));
  }
  PetscCallMPI(MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(),
                           MPI_CHAR, 0, m.comm));
  int ok = 1;
  if (rank == 0) {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp);
      out << "View \"size\" {\n" << all << "};\n";
      ok = out.good();
    }
    std::error_code ec;
    if (ok) std::filesystem::rename(tmp, path, ec);
    ok = ok && !ec;
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, m.comm));
  PetscCheck(ok, m.comm, PETSC_ERR_FILE_WRITE, "cannot write the size field %s", path.c_str());
  PetscFunctionReturn(0);
}

std::string adapted_geo_text(const std::string &geo, const std::string &pos,
                             const std::string &tag) {
  // (a field number no case file uses; the view is the only one: index 0)
  return "// karman adapt: " + geo + " with the size field " + pos + " (" + tag + ")\n" +
         "Include \"" + geo + "\";\n" + "Merge \"" + pos + "\";\n" +
         "Field[9990] = PostView;\n"
         "Field[9990].ViewIndex = 0;\n"
         "Background Field = 9990;\n"
         "Mesh.MeshSizeExtendFromBoundary = 0;\n"
         "Mesh.MeshSizeFromPoints = 0;\n"
         "Mesh.MeshSizeFromCurvature = 0;\n";
}

} // namespace karman::driver
