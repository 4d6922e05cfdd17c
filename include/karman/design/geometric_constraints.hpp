// Geometric constraint functions C(X) of the vertex coordinates for shape optimization, with
// exact gradients dC/dX in the convention of adjoint::finish (one value per local vertex;
// every copy of a vertex holds the total), so that they chain through mesh deformation and
// parameterization exactly like dJ/dX.  Derivation: src/adjoint/README.md, sec. 9, (G1)-(G3).
//
// The body is the region enclosed by a set of walls (their faces must close: every edge of
// the wall surface, in 2D every end point of a wall face, is shared by faces of both
// orientations).  Wall faces are oriented out of the fluid, i.e. into the body, so with the cone
// volumes v_f and first moments m_f of geometry/body_kernels.hpp (divergence theorem; exact for the
// piecewise-linear wall, and equal to the sum of the cell volumes for a box domain's whole
// boundary, which encloses the fluid with the other sign):
//   volume (area in 2D)   V   = - sum_f v_f(X - x_0)
//   centroid component i  x_i = x_0,i + M_i / V,   M = - sum_f m_f(X - x_0)
// x_0 is a fixed reference point (the centre of the walls' bounding box in the mesh file),
// which changes nothing but the round-off.
//   thickness (2D)        t(x_s) = y_upper(x_s) - y_lower(x_s)
// where y_upper and y_lower are the heights at which the wall polyline (its faces) crosses
// the vertical line x = x_s (body_kernels.hpp: segment_height); exactly two crossings are
// required, so that the station lies on the body and the upper and lower surfaces are
// unambiguous.  dt/dX lands on the two end points of each of the two crossing segments.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace karman::design {

enum class GeometricConstraintKind { Volume, Centroid, Thickness };

/// The value of a constraint function at one X and, if asked, its gradient.
struct GeometricConstraintValue {
  bool ok = true;               ///< false: C is not defined at this X (reason in `failure`)
  std::string failure;          ///< e.g. a thickness station that no longer crosses the wall twice
  double value = 0;             ///< the same on every rank
  std::vector<Vec3<double>> dX; ///< dC/dX per local vertex (totals on every copy), if asked
};

class GeometricConstraint {
public:
  GeometricConstraint() = default;

  /// Area (2D) or volume (3D) of the body enclosed by the walls `walls` (patch indices of
  /// `mesh`).  Checks that the walls are given, each once, and close.  The constraint refers to
  /// `mesh`, which must outlive it.  Collective; errors are collective.
  static PetscErrorCode volume(const mesh::Mesh &mesh, const std::vector<int> &walls,
                               GeometricConstraint *c);
  /// Component `axis` (0 = x, 1 = y, 2 = z) of the centroid of the body enclosed by `walls`.
  static PetscErrorCode centroid(const mesh::Mesh &mesh, const std::vector<int> &walls, int axis,
                                 GeometricConstraint *c);
  /// Thickness of a 2D body at the chord station x = `station`: checks that the mesh is 2D
  /// and that the line x = station crosses the walls exactly twice in the mesh file's
  /// coordinates (inside the walls' x-range).
  static PetscErrorCode thickness(const mesh::Mesh &mesh, const std::vector<int> &walls,
                                  double station, GeometricConstraint *c);

  GeometricConstraintKind kind() const { return kind_; }
  const std::vector<int> &walls() const { return walls_; }
  /// A short name for logs and history columns: "area(cylinder)", "centroid-y(cylinder)",
  /// "thickness(airfoil, x=0.3)".
  const std::string &name() const { return name_; }

  /// C at the vertex coordinates X (one per local vertex) and, if `gradient`, dC/dX.  A
  /// constraint that is undefined at X (zero volume, a thickness station off the body)
  /// sets ok = false with the reason, on every rank.  Collective.
  PetscErrorCode evaluate(const std::vector<Vec3<double>> &X, bool gradient,
                          GeometricConstraintValue *out) const;

private:
  static PetscErrorCode setup(const mesh::Mesh &mesh, GeometricConstraintKind kind,
                              const std::vector<int> &walls, const char *what,
                              GeometricConstraint *c);
  PetscErrorCode evaluate_body(const std::vector<Vec3<double>> &X, bool gradient,
                               GeometricConstraintValue *out) const;
  PetscErrorCode evaluate_thickness(const std::vector<Vec3<double>> &X, bool gradient,
                                    GeometricConstraintValue *out) const;

  const mesh::Mesh *mesh_ = nullptr;
  GeometricConstraintKind kind_ = GeometricConstraintKind::Volume;
  std::vector<int> walls_;
  std::string wall_names_;      ///< "[a, b]" for messages
  std::vector<PetscInt> faces_; ///< local wall faces listed by this rank (boundary_faces)
  int axis_ = 0;                ///< centroid component
  double station_ = 0;          ///< thickness station x_s
  Vec3<double> origin_;         ///< x_0
  std::string name_;
};

} // namespace karman::design
