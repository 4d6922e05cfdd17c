// Remeshing around the walls of a deformed mesh (issue 45: shape campaigns without failed
// designs), 2D.  When a design moves the walls further than the mesh deformation can follow, a
// new mesh of the domain is made by Gmsh around the boundary as it is:
//
//  * Boundary.  Every boundary face becomes one Gmsh line between its two vertices (Transfinite
//    Curve = 2: not subdivided), the lines of each patch one physical curve of the patch's name,
//    the closed chains of lines the curve loops of one plane surface "fluid" (the loop of the
//    largest extent is the outer one).  The points are written to the last bit (%.17g; binary
//    .msh), so the new mesh's boundary vertices are these points exactly.  With `resample`, each
//    closed loop of wall faces (a body) is first re-sampled (resample_walls): where a design has
//    squeezed the wall vertices together (an FFD map pinching a tail: faces 300x shorter than
//    the mean on shape-min-drag) they are spread out again along the same polygon; the other
//    boundaries keep their vertices.
//  * Embedding.  Every new boundary vertex knows its original coordinates, where the shape
//    parameterization was set up (an interpolation on the original face for a re-sampled one):
//    the parameterization set up again on the new mesh from them, with the remeshed design as
//    its reference design (DesignSpace::set_reference_design), moves the new walls by
//    d(a) - d(a_r): a keeps its meaning, the gradient is the new mesh's exact one.
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
#include <functional>
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

/// The boundary vertices of a mesh and what each stands for: their current coordinates `at`
/// (sorted) and, in the same order, their coordinates on the original mesh of a campaign, where
/// the shape parameterization was set up.  The same on every rank.
struct BoundaryEmbedding {
  std::vector<Vec3<double>> at, original;
};

/// The boundary faces of a 2D mesh (all patches), gathered on rank 0.
struct BoundaryCurves {
  std::vector<Vec3<double>> x;               ///< vertex coordinates, by serial vertex index order
  std::vector<Vec3<double>> original;        ///< and their original coordinates
  std::vector<std::array<long, 3>> segments; ///< patch, first and second vertex (into x)
};

/// Gathers the boundary faces of `mesh` at coordinates X (original coordinates X_original) on
/// rank 0 (empty elsewhere).  Collective.
PetscErrorCode gather_boundary(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                               const std::vector<Vec3<double>> &X_original, BoundaryCurves *b);

/// A design's walls as a map of the original walls: the position at the design of the point x0
/// of the original walls (any point of a wall face; where the shape parameterization was set
/// up) on wall patch `patch`, with unit normal n out of the body there; false where the design
/// has no such map (design::DesignSpace::wall_position).
using WallMap =
    std::function<bool(const Vec3<double> &x0, int patch, const Vec3<double> &n, Vec3<double> *x)>;

/// How a closed wall loop is re-sampled along a design's own curve (resample_walls).
struct WallSampling {
  WallMap map;
  /// the original walls' faces (original coordinates): a sample point's original is put on the
  /// nearest of them (empty: kept where interpolated), so that repeated remeshings do not cut
  /// the original polygon's corners
  std::vector<std::array<Vec3<double>, 2>> original_faces;
  int per_face = 8; ///< sample points per current wall face
  /// refuse a curve that runs back along a face (false: the map cannot fold, e.g. radial)
  bool check_folds = true;
  /// the rays (centre, angles about z) on which the design's curve of wall patch `patch` has its
  /// kinks (design::DesignSpace::kinks; empty or false: none): each ray that crosses the loop's
  /// original polygon gets a vertex, so that the corners stay corners
  std::function<bool(int patch, Vec3<double> *center, std::vector<double> *angles)> kinks;
};

/// The boundary b with every closed loop made of faces of the patches `walls` only (a body)
/// re-sampled: as many vertices as before, spaced along the wall as the original mesh spaced
/// them (equidistributed in the sum of each face's length over its original length: where a
/// design squeezed the wall vertices together they are spread out again), starting at the
/// sharpest turn of the loop (a corner stays a vertex); with `sampling.kinks` a vertex on each
/// kink's ray and the others equidistributed between them (counts in proportion to the
/// pieces' weights, at least one each).  Without a map each new vertex is on the
/// polygon of the current vertices, its original coordinates interpolated alike on the original
/// face.  With `sampling.map` the wall is the design's own curve between the vertices: each face
/// is subdivided in its original coordinates (sampling.per_face points), the points' originals
/// mapped, the weights taken on that finer polygon, and each new vertex is the map of its
/// original, on the curve exactly (a face that a design stretched tenfold is not a straight
/// chord of the curve); a curve that runs back along a face by more than a tenth of the face's
/// original length (a loop or fold between two vertices, which the polygon of the vertices cuts
/// off; smaller folds of a pinched tail are below the mesh's resolution, and a sharp nose between
/// two vertices bulges out sideways without running back) is refused: *failure names where,
/// and b is returned unchanged.  Other loops stay as they are.
BoundaryCurves resample_walls(const BoundaryCurves &b, const std::vector<int> &walls,
                              const WallSampling &sampling = {}, std::string *failure = nullptr);

/// The .geo script that meshes the domain inside the boundary `b` (patch names `patches`) with
/// the size view `pos` (absolute path) as background field and, if bl.layers > 0, the boundary
/// layer `bl` on the faces of the patches `walls`; "" and *error if the boundary is not a set of
/// closed chains (a vertex with other than two faces).
std::string remesh_geo_text(const BoundaryCurves &b, const std::vector<std::string> &patches,
                            const std::vector<int> &walls, const BoundaryLayerShape &bl,
                            const std::string &pos, std::string *error);

struct RemeshResult {
  bool ok = false;
  std::string failure;      ///< why not (Gmsh's message, a boundary that is not closed)
  std::string msh;          ///< the new mesh (STEM.msh)
  BoundaryLayerShape layer; ///< the wall layers made (layers 0: none)
  /// Gmsh's message when it could not make the measured wall layers (their fans crossing at a
  /// sharp or wavy wall): the mesh was then made without them, triangles up to the wall
  std::string layer_dropped;
  BoundaryEmbedding embedding; ///< the new mesh's boundary vertices and their originals
  long cells = 0;              ///< the new mesh's cells (as Gmsh reports them)
  double size_scale = 1;       ///< the factor on the size view of the mesh kept
  int gmsh_runs = 0;           ///< meshings (more than one: calibrated to target_cells)
  double time = 0;             ///< wall time [s]
};

/// How to remesh (remesh below).
struct RemeshOptions {
  /// re-sample the closed wall loops (else every boundary vertex is kept)
  bool resample = true;
  /// if given (per local vertex): the mesh there instead of at the current coordinates (a
  /// design's deformed mesh that is not valid): its boundary is remeshed, and the current cells'
  /// sizes are placed on its cells, so that they follow the walls as the deformation moved them
  /// (a size view at the current coordinates had none where a wall moved into the old body: Gmsh
  /// filled a notch pressed 0.15 into it with a fan of triangles 10x the wall spacing, on which
  /// the Re 1 flow's Newton solve stalled, with the LU too)
  const std::vector<Vec3<double>> *boundary = nullptr;
  /// the walls as the design's curve (resample_walls; with `resample`): the map of the design
  /// being remeshed, the original wall faces; a design whose walls cross themselves is a failure
  WallSampling sampling;
  /// if it has a map: the design that will be evaluated on the new mesh, checked on the
  /// re-sampled walls (their vertices are the new mesh's) as it will be there; a fold is a
  /// failure before any meshing.  (The re-sampled vertices are spaced otherwise than the current
  /// ones, and a design's curve that passed the check between the current vertices could run
  /// back by more than a tenth of a new face: shape-min-drag Re 1 FFD on a coarse mesh was
  /// remeshed around such walls and every later design failed there, the best one too)
  WallSampling evaluated;
  /// if > 0: the new mesh has this many cells within 5 %: the size view is scaled by
  /// sqrt(cells / target) and the domain meshed again (at most twice more), the closest kept.
  /// For a mesh that is itself a remeshing: Gmsh's triangles from a view of triangle sizes come
  /// out a few per cent smaller than the view, which repeated remeshings would compound (4488 ->
  /// 5404 -> 5818 -> 6274 cells on shape-min-drag level 0)
  long target_cells = 0;
  /// the size view's factor of the first meshing (with target_cells: the factor a previous
  /// remeshing found, which saves the second meshing)
  double initial_scale = 1;
};

/// The size view's factor for the next remeshing of a campaign (RemeshOptions::initial_scale):
/// `used`, the factor of the mesh kept (RemeshResult::size_scale), corrected by how far that
/// mesh's `cells` came out from its `target` (0: none, a campaign's first remeshing, which keeps
/// `used`): used sqrt(cells / target).  Gmsh's triangles from a view of triangle sizes come out a
/// few per cent smaller than the view, and consistently so: within the 5 % band of target_cells
/// the excess still compounded, each remeshing about 4.5 % above the last (shape-min-drag Re 1,
/// level 1: 13 696 -> 16 150 -> ... -> 21 964 cells over 9 remeshings).
double next_size_scale(double used, long cells, long target);

/// Remeshes the domain of the residual's mesh at its current coordinates around its boundary
/// (above), the boundary layer measured on `walls`; X_original the vertices' original coordinates
/// (per local vertex); files STEM.*.  Collective (rank 0 runs Gmsh).
PetscErrorCode remesh(const discretization::FlowResidual &res, const std::vector<int> &walls,
                      const std::vector<Vec3<double>> &X_original, const RemeshOptions &options,
                      const std::string &stem, RemeshResult *result);

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
