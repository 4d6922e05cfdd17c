// Shape parameterizations (src/adjoint/README.md, section 10): maps from a design vector a (global:
// the same on every rank) to a displacement d_v of the wall vertices (one per local vertex,
// zero off the design walls, the same on every copy of a vertex), each with its exact reverse
//   a_bar = (dd/da)^T d_bar                                                      (README eq. 22)
// Every map starts from the reference coordinates X0 given to setup(); a DesignSpace combines
// several (the `design:` list of the case file), its vector a = [a_1; a_2; ...] the
// concatenation of theirs, its displacement the sum d = sum_k d_k(a_k).
//
// Kinds (x = X0_v a vertex of the parameterization's walls; e_x, e_y, e_z the unit axes):
//
//  ffd  (axis-aligned box: origin o, edge lengths L, lattice n_1 x n_2 [x n_3]; Sederberg &
//       Parry 1986; as SU2's FFD and pyGeo): local coordinates s = (x - o) / L (per axis), and
//       for a vertex inside the box (0 <= s <= 1)
//         d(x) = sum_{ijk free} B_i^{n_1-1}(s_1) B_j^{n_2-1}(s_2) B_k^{n_3-1}(s_3) dP_ijk,
//         B_i^n(s) = C(n, i) s^i (1 - s)^(n-i),                                       (eq. 23)
//       dP_ijk = sum_{axis in axes} a_(ijk,axis) e_axis.  Free control points are those at
//       least `fixed_layers` layers from every side of the lattice (the others stay, so one
//       fixed layer makes d vanish on the box boundary, two also its first derivative).
//       Vertices outside the box do not move.  Linear.  Variables ordered by k, j, i (i
//       fastest), then axis; named "NAME.cp[i,j].y" / "NAME.cp[i,j,k].z" (lattice indices).
//  hicks-henne  (2D; Hicks & Henne 1978): chord direction c (unit), thickness direction
//       t = e_z x c; leading/trailing edge = the least/greatest x.c over the wall vertices;
//       chord fraction xi = (x.c - min) / (max - min) in [0, 1];
//         b_i(xi) = sin(pi xi^(ln 0.5 / ln h_i))^width   (peak 1 at xi = h_i),
//         d(x) = +t sum_i a_upper,i b_i(xi)  on the upper surface,
//         d(x) = -t sum_i a_lower,i b_i(xi)  on the lower surface,                    (eq. 24)
//       so a positive variable thickens the body.  A vertex is on the upper surface when its
//       outward normal (out of the body, the face-share weighted mean of its wall faces'
//       normals) has n.t > 0, lower when n.t < 0 (n.t = 0: by the sign of (x - x_LE).t).
//       Linear.  Variables: upper bumps, then lower ("NAME.upper[i]", "NAME.lower[i]").
//  rigid  (2D rotation, any-dimension translation): with the centre c,
//         d(x) = R(angle) (x - c) + c + (dx, dy, dz) - x,                             (eq. 25)
//       R counter-clockwise about +z (so an airfoil's angle of attack is -angle).  Nonlinear in
//       the angle: the reverse is the transpose of the Jacobian at a,
//         angle_bar = sum_v (R'(angle) (x_v - c)) . d_bar_v,  dx_bar = sum_v d_bar_v,x, ...
//       Variables: the listed ones of angle, dx, dy, dz ("NAME.angle", "NAME.dx", ...).
//  surface-normal  (one variable per wall vertex; Schmidt & Schulz 2009, fireshape): P1 finite
//       elements on the wall surface (2D: segments; 3D: faces split into triangles from their
//       least-index vertex), mass M and stiffness K, filter length L:
//         (M + L^2 K) s = M a,   d_v = n_v s_v                                        (eq. 26)
//       n_v the unit normal out of the body at the reference shape.  Linear; the reverse
//       a_bar = M (M + L^2 K)^-T (n . d_bar) uses the transposed solve with the same (LU)
//       factors, so the gradient is smoothed: a Sobolev (H^1) Riesz representative.  Variables
//       ordered by serial vertex index ("NAME.v[GID]").  The wall surface is gathered on
//       every rank (replicated solve), fine for 2D and moderate 3D surfaces.
//  radial  (2D; a star-shaped body about the centre c): with theta the angle of x about c and
//       e_r the unit vector from c to x, n control values on a periodic uniform B-spline of
//       degree p in theta (control point i at theta_i = start + 2 pi i / n):
//         d(x) = e_r sum_i a_i B_p((theta - theta_i) n / (2 pi) + (p + 1) / 2)           (eq. 27)
//       B_p the cardinal B-spline (support [0, p + 1]); sum_i of the basis is 1, so equal a_i
//       move the wall out radially by a.  Each wall point moves along its own ray: the wall
//       stays a polar curve r(theta), which cannot cross or fold, whatever a (as long as r >
//       0), and degree 1 makes r piecewise linear: corners at the control angles.  Linear.
//       Variables "NAME.r[i]".
//
// A DesignSpace is a value built once by setup() from the mesh, X0 and the case; displacement()
// and reverse() are then pure functions of their arguments.
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <memory>
#include <string>
#include <vector>

namespace karman::design {

enum class DesignKind { Ffd, HicksHenne, Rigid, SurfaceNormal, Radial };
/// The case file's name of a kind ("ffd", "hicks-henne", "rigid", "surface-normal", "radial").
const char *kind_name(DesignKind kind);

/// One parameterization of a DesignSpace: its variables are a[offset, offset + count).
struct DesignBlock {
  std::string name; ///< the parameterization's name (prefix of its variables' names)
  DesignKind kind;
  std::size_t offset = 0, count = 0;
};

/// One kind's map a -> d (its own variables only) and its reverse.  The reverse is split at
/// the sum over ranks: add_reverse_local() accumulates the owned vertices' part, then, on the
/// rank-summed vector (the same on every rank), finish_reverse() applies what comes after
/// the vertex sum (surface-normal: the filter's transpose).
class ShapeParameterization {
public:
  virtual ~ShapeParameterization() = default;
  /// d += d(a) on the local vertices.
  virtual PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const = 0;
  /// a_bar += the owned vertices' part of (dd/da)^T d_bar.
  virtual void add_reverse_local(const double *a, const std::vector<Vec3<double>> &d_bar,
                                 const std::vector<char> &owned, double *a_bar) const = 0;
  /// a_bar <- the rest of the reverse on the rank-summed vector.
  virtual PetscErrorCode finish_reverse(double *a_bar) const {
    (void)a_bar;
    return 0;
  }
  /// *d = the displacement the map gives a point x0 of its walls' reference surface that need
  /// not be a vertex (n: the unit normal out of the body there), the same formula as at the
  /// vertices (eqs. 23-25); false where the kind has none (surface-normal: one value per
  /// vertex, nothing between them).
  virtual bool displacement_at(const double *a, const Vec3<double> &x0, const Vec3<double> &n,
                               Vec3<double> *d) const {
    (void)a, (void)x0, (void)n, (void)d;
    return false;
  }

  /// Whether some design can fold the wall or make it loop between two vertices (FFD,
  /// Hicks-Henne; not a rigid motion, not a radial map, whose walls stay polar curves).
  virtual bool can_fold() const { return true; }

  /// The rays (from *center, at angles [rad] about the z axis) along which the map's wall curve
  /// has a kink for every design (a degree-1 radial map: its control angles); false if none.
  virtual bool kinks(Vec3<double> *center, std::vector<double> *angles) const {
    (void)center, (void)angles;
    return false;
  }

  std::vector<int> patches; ///< the wall patches it moves

  std::vector<std::string> names; ///< the variables' names
  std::vector<char> moved;        ///< per local vertex: 1 if this map can move it
};

class DesignSpace {
public:
  DesignSpace();
  ~DesignSpace();
  DesignSpace(const DesignSpace &) = delete;
  DesignSpace &operator=(const DesignSpace &) = delete;

  /// Builds the parameterizations of cfg.designs() on `mesh` from the reference coordinates X0
  /// (one per local vertex; typically mesh.coordinates).  Checks what needs the mesh (every
  /// wall exists; an FFD box holds vertices of its walls and has the mesh's dimension; 2D-only
  /// kinds on a 2D mesh), errors naming the case file and the key.  Replaces any earlier
  /// content.  Collective.
  PetscErrorCode setup(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X0,
                       const config::CaseConfig &cfg);

  std::size_t size() const { return names_.size(); }
  /// Variable names ("ffd0.cp[3,2].y", "hh0.upper[2]", "rigid0.angle", "normal0.v[17]").
  const std::vector<std::string> &names() const { return names_; }
  /// Bounds (-inf / +inf where the case gives none) and initial values (0 unless given).
  const std::vector<double> &lower() const { return lower_; }
  const std::vector<double> &upper() const { return upper_; }
  const std::vector<double> &initial() const { return initial_; }
  /// The variables' scales (`scale`, 1 where the case gives none): an optimizer sees a / scale.
  const std::vector<double> &scale() const { return scale_; }
  /// The parameterizations in case-file order.
  const std::vector<DesignBlock> &blocks() const { return blocks_; }
  /// Per local vertex: 1 if some parameterization can move it (a vertex of its walls; for an
  /// FFD box one inside the box), else 0; the same on every copy.
  const std::vector<char> &moved_vertices() const { return moved_; }

  /// d = sum_k d_k(a_k) (eqs. 23-26): one entry per local vertex, zero where nothing moves,
  /// the same on every copy of a vertex.  a.size() == size().  Not collective.
  PetscErrorCode displacement(const std::vector<double> &a, std::vector<Vec3<double>> *d) const;
  /// Makes the design a_r the reference shape: displacement(a) is d(a) - d(a_r) from then on
  /// (reverse() is unchanged).  A campaign that remeshes at a_r sets the parameterization up on
  /// the new mesh with its boundary vertices' original coordinates (driver/remeshing.hpp) and
  /// then this, so that the new mesh is the shape of a_r and a keeps its meaning.  Not
  /// collective.
  PetscErrorCode set_reference_design(const std::vector<double> &a_r);

  /// The design's wall between the vertices: *x = x0 + sum_k d_k(a)(x0), the position at design
  /// a of a point x0 of the reference walls (where setup() was given X0; any point of a wall
  /// face, not only a vertex) on wall patch `patch` with unit normal n out of the body there
  /// (the parameterizations that do not move `patch` leave it).  False if a parameterization
  /// moving `patch` has no such extension (surface-normal).  Remeshing samples the design's
  /// walls with it (driver/remeshing.hpp).  Not collective.
  bool wall_position(const std::vector<double> &a, const Vec3<double> &x0, int patch,
                     const Vec3<double> &n, Vec3<double> *x) const;
  /// Whether some parameterization can fold the walls (ShapeParameterization::can_fold).
  bool can_fold() const;
  /// The kink rays of the parameterization moving wall `patch` (ShapeParameterization::kinks);
  /// false if it has none.
  bool kinks(int patch, Vec3<double> *center, std::vector<double> *angles) const;

  /// a_bar = (dd/da (a))^T d_bar (eq. 22), the same on every rank.  d_bar has one entry per
  /// local vertex and every copy of a vertex holds the total (as mesh::sum_vertex_copies and
  /// the adjoint's dJ/dX leave it): only owned vertices are counted.  Collective.
  PetscErrorCode reverse(const std::vector<double> &a, const std::vector<Vec3<double>> &d_bar,
                         std::vector<double> *a_bar) const;

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  PetscInt n_vertices_ = 0;
  std::vector<char> owned_, moved_;
  std::vector<Vec3<double>> offset_; ///< d(a_r) (set_reference_design; empty: none)
  std::vector<std::unique_ptr<ShapeParameterization>> parts_;
  std::vector<DesignBlock> blocks_;
  std::vector<std::string> names_;
  std::vector<double> lower_, upper_, initial_, scale_;
};

} // namespace karman::design
