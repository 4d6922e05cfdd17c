// Goal-oriented mesh adaptation (issue 46): from the error indicator of an objective
// (driver/error_estimate.hpp) to the size field of the next mesh, which Gmsh meshes from the
// case's own .geo (`karman adapt`, cli/cmd_adapt.cpp).
//
// Sizes.  The indicator eta_K of cell K (volume V_K, size h_K = (V_K / c_K)^(1/d), the edge of
// the regular cell of its shape of that volume: c_K = sqrt(3)/4 for a triangle, 1 for a
// quadrilateral, sqrt(2)/12 for a tetrahedron; Gmsh's sizes are edge lengths) is taken as
// eps_K V_K h_K^r: an error density eps_K times the cell's volume and h^r, r = kSchemeOrder.  A
// mesh of sizes h'(x) then has the error sum_K eps_K V_K h'_K^r and about
// sum_K V_K / (c_K h'_K^d) cells; the sizes that minimize the error for N cells equidistribute it
// (Lagrange):
//   h'_K = C eps_K^(-1/(r + d)),
// C chosen (bisection) so that the cells number N = growth x the current count.  Each size
// stays within [h_K / 4, 2 h_K] per cycle (the indicator is an estimate on the current mesh),
// and eps_K is at least 1e-8 of the largest (no infinite sizes where the indicator vanishes).
//
// Gmsh.  The sizes go to Gmsh as a post-processing view (.pos: one element per cell with the
// sizes at its vertices, the average of the adjacent cells'), and the next mesh is the case's
// .geo included by a generated .geo that merges the view and makes it the background size
// field (PostView).  What the .geo meshes by itself stays as it is: transfinite and
// boundary-layer parts, `level`.
#pragma once

#include "karman/config/section_options.hpp"
#include "karman/discretization/flow_residual.hpp"

#include <string>
#include <vector>

namespace karman::driver {

/// The case file's `adapt` section (karman adapt).
struct AdaptOptions {
  long cycles = 4;          ///< adaptations after the first solve
  double growth = 2.0;      ///< cells of the next mesh / cells of this one
  double tolerance = 0;     ///< stop when |estimated error| <= tolerance (0: run all cycles)
  long max_cells = 2000000; ///< stop before a mesh of more cells
  bool anisotropic = false; ///< 2D: a metric field for Gmsh's BAMG (anisotropic_metrics)
  double max_aspect_ratio = 20;
  double max_coarsening = 1; ///< the largest factor by which a cell's size may grow in a cycle
};

const config::SectionOptions<AdaptOptions> &adapt_options();

/// The size h_K = (V_K / c_K)^(1/d) of every owned cell of the residual's mesh (above).
std::vector<double> cell_sizes(const discretization::FlowResidual &res);

/// The sizes h'_K (owned cells) of the next mesh for `target_cells` cells from the indicator
/// (owned cells) on the mesh of `res`; `predicted` the cell count they give.  Collective.
PetscErrorCode adapted_sizes(const discretization::FlowResidual &res,
                             const std::vector<double> &indicator, double target_cells,
                             double max_coarsening, std::vector<double> *sizes, double *predicted);

/// Writes the sizes (owned cells) as a Gmsh view of the mesh's cells, vertex values the average
/// of the adjacent cells' sizes (rank 0 writes `path`); `hash` (if given; rank 0) the hex hash of
/// the file's text; the cells at the coordinates `at` (per local vertex) if given, else at the
/// residual's.  Collective.
PetscErrorCode write_size_field(const discretization::FlowResidual &res,
                                const std::vector<double> &sizes, const std::string &path,
                                std::string *hash = nullptr,
                                const std::vector<Vec3<double>> *at = nullptr);

/// Anisotropic (2D): the metric tensors M (xx, xy, yy per owned cell; a size h along a unit
/// direction e where e^T M e = 1 / h^2) of cells of the areas of `sizes` (adapted_sizes: the
/// cell count stays) stretched along the eigenvectors of |H_u| + |H_v|, the velocity components'
/// Hessians (each a least-squares fit of the differences of the state's gradients to the face
/// neighbours, symmetrized, its eigenvalues' absolute values): with l1 >= l2 its eigenvalues,
/// the size across the stronger curvature h / sqrt(r) and along it h sqrt(r), r = sqrt(l1 / l2)
/// at most max_aspect (the interpolation error's optimal aspect ratio; Loseille & Alauzet 2011).
/// Collective.
PetscErrorCode anisotropic_metrics(const discretization::FlowResidual &res,
                                   const discretization::LocalState &state,
                                   const std::vector<double> &sizes, double max_aspect,
                                   std::vector<double> *metric);

/// Writes the metrics (anisotropic_metrics) as a Gmsh tensor view of the mesh's cells (TT, TQ),
/// vertex values the average of the adjacent cells'; `hash` as write_size_field.  Collective.
PetscErrorCode write_metric_field(const discretization::FlowResidual &res,
                                  const std::vector<double> &metric, const std::string &path,
                                  std::string *hash = nullptr);

/// The text of a .geo that meshes `geo` (absolute path) with the size field of the view in
/// `pos` (absolute path) as its background field; `tag` (e.g. the view's hash) is written as a
/// comment, so that the mesh cache sees a changed view.  `anisotropic`: the view is a metric
/// field and the surfaces are meshed by BAMG (Mesh.Algorithm 7).  `size_factor` != 1 multiplies
/// Gmsh's Mesh.MeshSizeFactor (the .geo's own or 1) by it: another mesh of nearly the same sizes.
std::string adapted_geo_text(const std::string &geo, const std::string &pos, const std::string &tag,
                             bool anisotropic = false, double size_factor = 1);

} // namespace karman::driver
