// Remeshing around the walls of a deformed mesh (issue 45: shape campaigns without failed
// designs), 2D.  When a design moves the walls further than the mesh deformation can follow, a
// new mesh of the domain is made by Gmsh around the boundary as it is:
//
//  * Boundary.  Every boundary face of the current mesh becomes one Gmsh line between its two
//    vertices (Transfinite Curve = 2: not subdivided), the lines of each patch one physical curve
//    of the patch's name, the closed chains of lines the curve loops of one plane surface
//    "fluid" (the loop of the largest extent is the outer one).  The points are the vertices'
//    coordinates to the last bit (%.17g, binary .msh), so the new mesh's boundary vertices are
//    the old ones exactly: a shape parameterization set up on the original mesh still knows
//    every wall vertex (BoundaryEmbedding below) and the walls' polygons (areas, centroids,
//    thicknesses) are the same on both meshes.
//  * Sizes.  The background field is a view of the current cells' sizes h_K (adaptation.hpp:
//    cell_sizes), so the new mesh is about as fine as the old one where it was.
//  * Boundary layers.  The anisotropic quadrilateral layers on the walls of the current mesh are
//    measured (measure_boundary_layer) and made again by Gmsh's BoundaryLayer field with the
//    measured first height, growth ratio and thickness; where the walls carry none (cells as
//    tall as they are wide) the new mesh has triangles up to the wall.
//
// The files: STEM.pos (the size view), STEM.geo (the script above), STEM.msh (the mesh, Gmsh
// 4.1 binary), STEM.msh.log (Gmsh's output).  A Gmsh failure is returned as a failure (the
// campaign keeps its mesh), not as an error.
#pragma once

#include "karman/discretization/flow_residual.hpp"

#include <array>
#include <string>
#include <vector>

namespace karman::driver {

/// The boundary layer of quadrilaterals on some walls: for every wall face the stack of
/// quadrilaterals above it (each the cell across the face opposite the one it was entered by)
/// while they are quadrilaterals whose height (volume / face length) is below their width (the
/// wall-parallel face length); the medians over the wall faces of the stack's number of
/// layers, first height, thickness and ratio of consecutive heights.
struct BoundaryLayerShape {
  long layers = 0;      ///< 0: no anisotropic layer
  double first = 0;     ///< height of the first layer
  double ratio = 1;     ///< growth ratio of the heights
  double thickness = 0; ///< height of the stack
  double spacing = 0;   ///< median length of the wall faces
};

/// Measures the boundary layer on the wall patches `walls` of the residual's mesh at its
/// current coordinates (the same on every rank; 2D).  Collective.
PetscErrorCode measure_boundary_layer(const discretization::FlowResidual &res,
                                      const std::vector<int> &walls, BoundaryLayerShape *bl);

/// The boundary faces of a 2D mesh (all patches), gathered on rank 0.
struct BoundaryCurves {
  std::vector<Vec3<double>> x;               ///< vertex coordinates, by serial vertex index order
  std::vector<std::array<long, 3>> segments; ///< patch, first and second vertex (into x)
};

/// Gathers the boundary faces of `mesh` at coordinates X on rank 0 (empty elsewhere).
/// Collective.
PetscErrorCode gather_boundary(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                               BoundaryCurves *b);

/// The .geo script that meshes the domain inside the boundary `b` (patch names `patches`) with
/// the size view `pos` (absolute path) as background field and, if bl.layers > 0, the boundary
/// layer `bl` on the faces of the patches `walls`; "" and *error if the boundary is not a set of
/// closed chains (a vertex with other than two faces).
std::string remesh_geo_text(const BoundaryCurves &b, const std::vector<std::string> &patches,
                            const std::vector<int> &walls, const BoundaryLayerShape &bl,
                            const std::string &pos, std::string *error);

struct RemeshResult {
  bool ok = false;
  std::string failure; ///< why not (Gmsh's message, a boundary that is not closed)
  std::string msh;     ///< the new mesh (STEM.msh)
  BoundaryLayerShape layer;
  double time = 0; ///< wall time [s]
};

/// Remeshes the domain of the residual's mesh at its current coordinates around its boundary
/// (above), the boundary layer measured on `walls`; files STEM.*.  Collective (rank 0 runs
/// Gmsh).
PetscErrorCode remesh(const discretization::FlowResidual &res, const std::vector<int> &walls,
                      const std::string &stem, RemeshResult *result);

/// The boundary vertices of a mesh and what each stands for: their current coordinates `at`
/// (sorted) and, in the same order, their coordinates on the original mesh of a campaign, where
/// the shape parameterization was set up.  The same on every rank.
struct BoundaryEmbedding {
  std::vector<Vec3<double>> at, original;
};

/// The embedding of the boundary vertices of `mesh` (coordinates X, original coordinates
/// X_original, per local vertex).  Collective.
PetscErrorCode gather_embedding(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                const std::vector<Vec3<double>> &X_original, BoundaryEmbedding *e);

/// The original coordinates of the vertices of a remeshed `mesh` (coordinates X): for every
/// vertex at a point of e.at the original one, X elsewhere (interior vertices, which no shape
/// parameterization moves).  Every vertex of a boundary face must be found (else an error: the
/// remeshing moved the boundary).  Collective.
PetscErrorCode embedded_coordinates(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                    const BoundaryEmbedding &e, std::vector<Vec3<double>> *X0);

} // namespace karman::driver
