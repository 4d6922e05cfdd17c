// Finite-volume geometry of the local mesh from the vertex coordinates X: cell
// volumes V_c and centroids x_c, face area vectors S_f (|S_f| = area, pointing from
// the face's left cell to its right cell or out of the domain) and face centroids x_f.
// Everything else (unit normals, cell-to-face vectors and distances) is derived from
// these four in the kernels that use them, so the reverse mode below, which maps
// adjoints of (V, x_c, S, x_f) to the adjoint of X, is all the shape adjoint needs.
// Formulas: geometry_kernels.hpp.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace karman::geometry {

template <typename T> struct Geometry {
  std::vector<T> cell_volume;
  std::vector<Vec3<T>> cell_centroid;
  std::vector<Vec3<T>> face_area; ///< area vector S_f
  std::vector<Vec3<T>> face_centroid;
};

/// Adjoints (sensitivities) of the geometric quantities, same layout as Geometry.
using GeometryBar = Geometry<double>;

/// Computes the geometry of every local cell and face from coordinates X (one per local vertex).
template <typename T>
void compute_geometry(const mesh::Mesh &mesh, const std::vector<Vec3<T>> &X, Geometry<T> &g);

/// Reverse mode: Xbar += (d geometry / d X)^T gbar.  Xbar has one entry per local vertex;
/// contributions land on every vertex that the local quantities touch (ghosts included).
void geometry_reverse(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                      const GeometryBar &gbar, std::vector<Vec3<double>> &Xbar);

/// A Geometry with every entry zero, sized for `mesh` (for adjoint accumulation).
GeometryBar zero_geometry(const mesh::Mesh &mesh);
/// The same in place: g sized for `mesh` and zeroed, keeping its storage.
void zero_geometry(const mesh::Mesh &mesh, GeometryBar &g);

/// to += from, entry by entry (same mesh).
void add_geometry(const GeometryBar &from, GeometryBar &to);

/// The invalid owned cells over all ranks (see find_invalid_cells).
struct InvalidCells {
  PetscInt count = 0; ///< number of invalid cells over all ranks
  std::string first;  ///< what is wrong with the one of lowest serial index ("" if none)
};

/// Collective validity test, without raising an error (for callers that refuse a mesh and go
/// on, e.g. an optimizer that backtracks): an owned cell is invalid unless it has V > 0 and is
/// star-shaped about its vertex average (each pyramid on a facet has positive volume), and
/// (x_R - x_L) . S_f > 0 on each of its interior faces where it is the left cell.  `first`
/// names the invalid cell of lowest serial index (serial index, centroid, volume).
PetscErrorCode find_invalid_cells(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                  const Geometry<double> &g, InvalidCells *result);

/// Collective validity check: an error "<context>: <first invalid cell>" if find_invalid_cells
/// finds any.
PetscErrorCode check_geometry(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                              const Geometry<double> &g, const char *context);

} // namespace karman::geometry
