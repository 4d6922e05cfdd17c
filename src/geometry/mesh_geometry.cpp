// Mesh-level geometry loops and their reverse (see include/karman/geometry/mesh_geometry.hpp).
#include "karman/geometry/mesh_geometry.hpp"

#include "karman/geometry/geometry_kernels.hpp"

#include <algorithm>
#include <complex>
#include <cstdio>
#include <string>

namespace karman::geometry {
namespace {

template <typename T>
int gather_face(const mesh::Mesh &mesh, const std::vector<Vec3<T>> &X, PetscInt f,
                const Vec3<T> **v) {
  const PetscInt b = mesh.face_vertex_ptr[f], e = mesh.face_vertex_ptr[f + 1];
  for (PetscInt i = b; i < e; ++i) v[i - b] = &X[mesh.face_vertex[i]];
  return static_cast<int>(e - b);
}

template <typename T>
Vec3<T> vertex_average(const mesh::Mesh &mesh, const std::vector<Vec3<T>> &X, PetscInt c) {
  Vec3<T> s;
  const PetscInt b = mesh.cell_vertex_ptr[c], e = mesh.cell_vertex_ptr[c + 1];
  for (PetscInt i = b; i < e; ++i) s += X[mesh.cell_vertex[i]];
  return T(1.0 / double(e - b)) * s;
}

} // namespace

template <typename T>
void compute_geometry(const mesh::Mesh &mesh, const std::vector<Vec3<T>> &X, Geometry<T> &g) {
  const int dim = mesh.dim;
  g.face_area.assign(mesh.n_faces, Vec3<T>());
  g.face_centroid.assign(mesh.n_faces, Vec3<T>());
  std::vector<Facet<T>> facets(static_cast<std::size_t>(mesh.n_faces) * kMaxFaceVertices);
  std::vector<int> nfacets(mesh.n_faces);
  for (PetscInt f = 0; f < mesh.n_faces; ++f) {
    const Vec3<T> *v[kMaxFaceVertices];
    const int n = gather_face(mesh, X, f, v);
    Facet<T> *ff = &facets[f * kMaxFaceVertices];
    nfacets[f] = face_facets(dim, v, n, ff);
    face_from_facets(ff, nfacets[f], g.face_area[f], g.face_centroid[f]);
  }
  g.cell_volume.assign(mesh.n_cells, T(0));
  g.cell_centroid.assign(mesh.n_cells, Vec3<T>());
  for (PetscInt c = 0; c < mesh.n_cells; ++c) {
    CellFace<T> faces[kMaxCellFaces];
    const PetscInt b = mesh.cell_face_ptr[c], e = mesh.cell_face_ptr[c + 1];
    for (PetscInt i = b; i < e; ++i) {
      const PetscInt f = mesh.cell_face[i];
      faces[i - b] = {&facets[f * kMaxFaceVertices], nfacets[f],
                      mesh.face_left[f] == c ? 1.0 : -1.0};
    }
    cell_from_facets(dim, vertex_average(mesh, X, c), faces, static_cast<int>(e - b),
                     g.cell_volume[c], g.cell_centroid[c]);
  }
}

template void compute_geometry<double>(const mesh::Mesh &, const std::vector<Vec3<double>> &,
                                       Geometry<double> &);
template void
compute_geometry<std::complex<double>>(const mesh::Mesh &,
                                       const std::vector<Vec3<std::complex<double>>> &,
                                       Geometry<std::complex<double>> &);

GeometryBar zero_geometry(const mesh::Mesh &mesh) {
  GeometryBar g;
  zero_geometry(mesh, g);
  return g;
}

void zero_geometry(const mesh::Mesh &mesh, GeometryBar &g) {
  g.cell_volume.assign(mesh.n_cells, 0.0);
  g.cell_centroid.assign(mesh.n_cells, Vec3<double>());
  g.face_area.assign(mesh.n_faces, Vec3<double>());
  g.face_centroid.assign(mesh.n_faces, Vec3<double>());
}

void add_geometry(const GeometryBar &from, GeometryBar &to) {
  for (std::size_t c = 0; c < from.cell_volume.size(); ++c) {
    to.cell_volume[c] += from.cell_volume[c];
    to.cell_centroid[c] += from.cell_centroid[c];
  }
  for (std::size_t f = 0; f < from.face_area.size(); ++f) {
    to.face_area[f] += from.face_area[f];
    to.face_centroid[f] += from.face_centroid[f];
  }
}

void geometry_reverse(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                      const GeometryBar &gbar, std::vector<Vec3<double>> &Xbar) {
  const int dim = mesh.dim;
  const std::size_t nslots = static_cast<std::size_t>(mesh.n_faces) * kMaxFaceVertices;
  std::vector<Facet<double>> facets(nslots), facets_bar(nslots);
  std::vector<int> nfacets(mesh.n_faces);
  for (PetscInt f = 0; f < mesh.n_faces; ++f) {
    const Vec3<double> *v[kMaxFaceVertices];
    const int n = gather_face(mesh, X, f, v);
    nfacets[f] = face_facets(dim, v, n, &facets[f * kMaxFaceVertices]);
    face_from_facets_reverse(&facets[f * kMaxFaceVertices], nfacets[f], gbar.face_area[f],
                             gbar.face_centroid[f], &facets_bar[f * kMaxFaceVertices]);
  }
  for (PetscInt c = 0; c < mesh.n_cells; ++c) {
    CellFace<double> faces[kMaxCellFaces];
    Facet<double> *faces_bar[kMaxCellFaces];
    const PetscInt b = mesh.cell_face_ptr[c], e = mesh.cell_face_ptr[c + 1];
    for (PetscInt i = b; i < e; ++i) {
      const PetscInt f = mesh.cell_face[i];
      faces[i - b] = {&facets[f * kMaxFaceVertices], nfacets[f],
                      mesh.face_left[f] == c ? 1.0 : -1.0};
      faces_bar[i - b] = &facets_bar[f * kMaxFaceVertices];
    }
    Vec3<double> xbar_bar;
    cell_from_facets_reverse(dim, vertex_average(mesh, X, c), faces, static_cast<int>(e - b),
                             gbar.cell_volume[c], gbar.cell_centroid[c], xbar_bar, faces_bar);
    const PetscInt vb = mesh.cell_vertex_ptr[c], ve = mesh.cell_vertex_ptr[c + 1];
    for (PetscInt i = vb; i < ve; ++i)
      Xbar[mesh.cell_vertex[i]] += (1.0 / double(ve - vb)) * xbar_bar;
  }
  for (PetscInt f = 0; f < mesh.n_faces; ++f) {
    const Vec3<double> *v[kMaxFaceVertices];
    Vec3<double> *vb[kMaxFaceVertices];
    const int n = gather_face(mesh, X, f, v);
    for (int i = 0; i < n; ++i) vb[i] = &Xbar[mesh.face_vertex[mesh.face_vertex_ptr[f] + i]];
    face_facets_reverse(dim, v, n, &facets_bar[f * kMaxFaceVertices], vb);
  }
}

PetscErrorCode find_invalid_cells(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                  const Geometry<double> &g, InvalidCells *result) {
  PetscFunctionBeginUser;
  PetscInt bad = PETSC_MAX_INT;
  std::string what;
  std::vector<char> invalid(mesh.n_owned_cells, 0);
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    // every pyramid (vertex average, facet) must have positive volume: the cell is
    // star-shaped about its vertex average, i.e. neither inverted nor tangled
    const Vec3<double> xbar = vertex_average(mesh, X, c);
    double min_pyramid = 1e300;
    for (PetscInt i = mesh.cell_face_ptr[c]; i < mesh.cell_face_ptr[c + 1]; ++i) {
      const PetscInt f = mesh.cell_face[i];
      const Vec3<double> *v[kMaxFaceVertices];
      Facet<double> facets[kMaxFaceVertices];
      const int n = face_facets(mesh.dim, v, gather_face(mesh, X, f, v), facets);
      const double sigma = mesh.face_left[f] == c ? 1.0 : -1.0;
      for (int k = 0; k < n; ++k)
        min_pyramid = std::min(min_pyramid, sigma * dot(facets[k].c - xbar, facets[k].t));
    }
    if (!(g.cell_volume[c] > 0 && min_pyramid > 0)) invalid[c] = 1;
    if (invalid[c] && mesh.cell_gid[c] < bad) {
      bad = mesh.cell_gid[c];
      char buf[256];
      std::snprintf(buf, sizeof(buf), "cell %d at (%g, %g, %g) is %s (volume %g)", (int)bad,
                    g.cell_centroid[c][0], g.cell_centroid[c][1], g.cell_centroid[c][2],
                    g.cell_volume[c] > 0 ? "tangled (not star-shaped)" : "inverted or degenerate",
                    g.cell_volume[c]);
      what = buf;
    }
  }
  for (PetscInt f = 0; f < mesh.n_flux_faces; ++f) {
    const PetscInt l = mesh.face_left[f], r = mesh.face_right[f];
    if (r < 0 || !mesh.owned(l)) continue;
    const double s = dot(g.cell_centroid[r] - g.cell_centroid[l], g.face_area[f]);
    if (!(s > 0)) invalid[l] = 1;
    if (!(s > 0) && mesh.cell_gid[l] < bad) {
      bad = mesh.cell_gid[l];
      char buf[256];
      std::snprintf(
          buf, sizeof(buf),
          "cells %d and %d at (%g, %g, %g) overlap: their centroids lie on the wrong sides "
          "of the shared face (inverted or tangled cells)",
          (int)mesh.cell_gid[l], (int)mesh.cell_gid[r], g.face_centroid[f][0],
          g.face_centroid[f][1], g.face_centroid[f][2]);
      what = buf;
    }
  }
  struct {
    PetscInt value;
    int rank;
  } local{bad, 0}, global{};
  MPI_Comm_rank(mesh.comm, &local.rank);
  static_assert(sizeof(PetscInt) == sizeof(int), "PetscInt must be 32-bit for MPI_2INT");
  PetscCallMPI(MPI_Allreduce(&local, &global, 1, MPI_2INT, MPI_MINLOC, mesh.comm));
  if (global.value != PETSC_MAX_INT) {
    int n = static_cast<int>(what.size());
    PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, global.rank, mesh.comm));
    what.resize(n);
    PetscCallMPI(MPI_Bcast(what.data(), n, MPI_CHAR, global.rank, mesh.comm));
  }
  PetscInt n_invalid = 0;
  for (char i : invalid) n_invalid += i;
  PetscCallMPI(MPI_Allreduce(&n_invalid, &result->count, 1, MPIU_INT, MPI_SUM, mesh.comm));
  result->first = global.value == PETSC_MAX_INT ? std::string() : what;
  PetscFunctionReturn(0);
}

PetscErrorCode check_geometry(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                              const Geometry<double> &g, const char *context) {
  PetscFunctionBeginUser;
  InvalidCells invalid;
  PetscCall(find_invalid_cells(mesh, X, g, &invalid));
  PetscCheck(invalid.count == 0, mesh.comm, PETSC_ERR_USER_INPUT, "%s: %s", context,
             invalid.first.c_str());
  PetscFunctionReturn(0);
}

} // namespace karman::geometry
