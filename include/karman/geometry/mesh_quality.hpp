// Cell quality measures that matter to a finite-volume scheme, per owned cell
// (the worst over its faces):
//   non-orthogonality  angle between d = x_R - x_L (boundary: x_f - x_L) and S_f [degrees]
//   skewness           |x_f - x_i| / |d|, x_i where the line x_L -> x_R meets the face plane
//   aspect ratio       largest / smallest face size of the cell (3D: sqrt of area ratio)
#pragma once

#include "karman/geometry/mesh_geometry.hpp"

namespace karman::geometry {

struct CellQuality {
  std::vector<double> non_orthogonality, skewness, aspect_ratio; ///< per owned cell
};

struct QualitySummary {
  double max_non_orthogonality = 0, max_skewness = 0, max_aspect_ratio = 0;
  double min_volume = 0, max_volume = 0;
};

/// Quality of every owned cell.
CellQuality compute_quality(const mesh::Mesh &mesh, const Geometry<double> &g);

/// Global extremes over all ranks (collective).
PetscErrorCode summarize_quality(const mesh::Mesh &mesh, const Geometry<double> &g,
                                 const CellQuality &q, QualitySummary *summary);

} // namespace karman::geometry
