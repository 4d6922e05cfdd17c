// Geometry of one face and one cell from vertex coordinates X, and its hand-derived
// reverse mode (adjoint), templated on the scalar type so that tests can run the
// forward functions with std::complex<double> (complex step).
//
// A face is split into facets: in 2D the face is a segment (a, b) and is its own facet;
// in 3D a face with vertices v_0..v_{n-1} and vertex average p has the triangles
// (p, v_k, v_{k+1}).  Facet k has centroid c_k and area vector t_k:
//   2D: c = (a + b)/2,          t = R(b - a),  R(v) = (v_y, -v_x, 0)
//   3D: c = (p + v_k + v_k+1)/3, t = 1/2 (v_k - p) x (v_k+1 - p)
// Face:  S = sum_k t_k (area vector, |S| = area),  x_f = sum_k (t_k . S) c_k / (S . S)
// Cell (d = dimension, xbar = average of the cell's vertices, sigma = +1 when the face
// normal points out of the cell): the cell is the union of pyramids from xbar to its
// facets, so
//   V   = 1/d sum_k sigma_k (c_k - xbar) . t_k
//   x_c = xbar + d/(d+1) sum_k [sigma_k (c_k - xbar) . t_k / d] (c_k - xbar) / V
// Both are exact for polygons and for polyhedra with planar faces (Ferziger & Peric,
// "Computational Methods for Fluid Dynamics", sec. 8.6; the same construction as
// OpenFOAM's primitiveMesh).
#pragma once

#include "karman/core/vec3.hpp"

namespace karman::geometry {

constexpr int kMaxFaceVertices = 4; ///< triangles and quadrilaterals
constexpr int kMaxCellFaces = 6;

template <typename T> struct Facet {
  Vec3<T> c; ///< centroid
  Vec3<T> t; ///< area vector
};

/// Facets of a face with `n` vertices `v` (2D: n = 2).  Returns the number of facets.
template <typename T> int face_facets(int dim, const Vec3<T> *const *v, int n, Facet<T> *facets) {
  if (dim == 2) {
    const Vec3<T> e = *v[1] - *v[0];
    facets[0].c = T(0.5) * (*v[0] + *v[1]);
    facets[0].t = Vec3<T>(e[1], -e[0], T(0));
    return 1;
  }
  Vec3<T> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= T(1.0 / n);
  for (int k = 0; k < n; ++k) {
    const Vec3<T> &a = *v[k], &b = *v[(k + 1) % n];
    facets[k].c = T(1.0 / 3.0) * (p + a + b);
    facets[k].t = T(0.5) * cross(a - p, b - p);
  }
  return n;
}

/// Reverse of face_facets: accumulates vbar[i] += d(facets . facets_bar)/d v_i.
inline void face_facets_reverse(int dim, const Vec3<double> *const *v, int n,
                                const Facet<double> *facets_bar, Vec3<double> *const *vbar) {
  if (dim == 2) {
    const Vec3<double> &cb = facets_bar[0].c, &tb = facets_bar[0].t;
    // t = (e_y, -e_x), e = v1 - v0  ->  ebar = (-tb_y, tb_x)
    const Vec3<double> eb(-tb[1], tb[0], 0.0);
    *vbar[0] += 0.5 * cb - eb;
    *vbar[1] += 0.5 * cb + eb;
    return;
  }
  Vec3<double> p;
  for (int i = 0; i < n; ++i) p += *v[i];
  p *= 1.0 / n;
  Vec3<double> pbar;
  for (int k = 0; k < n; ++k) {
    const int k1 = (k + 1) % n;
    const Vec3<double> u = *v[k] - p, w = *v[k1] - p;
    const Vec3<double> &cb = facets_bar[k].c, &tb = facets_bar[k].t;
    const Vec3<double> ub = 0.5 * cross(w, tb), wb = 0.5 * cross(tb, u);
    *vbar[k] += ub + (1.0 / 3.0) * cb;
    *vbar[k1] += wb + (1.0 / 3.0) * cb;
    pbar += (1.0 / 3.0) * cb - ub - wb;
  }
  for (int i = 0; i < n; ++i) *vbar[i] += (1.0 / n) * pbar;
}

/// Face area vector S and centroid x_f from its facets.
template <typename T>
void face_from_facets(const Facet<T> *facets, int nf, Vec3<T> &S, Vec3<T> &xf) {
  S = Vec3<T>();
  for (int k = 0; k < nf; ++k) S += facets[k].t;
  const T W = dot(S, S);
  xf = Vec3<T>();
  for (int k = 0; k < nf; ++k) xf += (dot(facets[k].t, S) / W) * facets[k].c;
}

/// Reverse of face_from_facets: given Sbar, xfbar, sets facets_bar (overwrites).
inline void face_from_facets_reverse(const Facet<double> *facets, int nf, const Vec3<double> &Sbar,
                                     const Vec3<double> &xfbar, Facet<double> *facets_bar) {
  Vec3<double> S;
  for (int k = 0; k < nf; ++k) S += facets[k].t;
  const double W = dot(S, S);
  Vec3<double> xf;
  double w[kMaxFaceVertices];
  for (int k = 0; k < nf; ++k) {
    w[k] = dot(facets[k].t, S);
    xf += (w[k] / W) * facets[k].c;
  }
  const double Wbar = -dot(xf, xfbar) / W;
  Vec3<double> Stotal = Sbar + (2.0 * Wbar) * S;
  double wbar[kMaxFaceVertices];
  for (int k = 0; k < nf; ++k) {
    wbar[k] = dot(facets[k].c, xfbar) / W;
    Stotal += wbar[k] * facets[k].t;
  }
  for (int k = 0; k < nf; ++k) {
    facets_bar[k].c = (w[k] / W) * xfbar;
    facets_bar[k].t = wbar[k] * S + Stotal;
  }
}

/// One face of a cell as seen by cell_from_facets.
template <typename T> struct CellFace {
  const Facet<T> *facets;
  int n;
  double sigma; ///< +1: face normal points out of the cell
};

/// Cell volume and centroid from the cell's vertex average and its faces' facets.
template <typename T>
void cell_from_facets(int dim, const Vec3<T> &xbar, const CellFace<T> *faces, int nfaces, T &V,
                      Vec3<T> &xc) {
  V = T(0);
  Vec3<T> M;
  for (int f = 0; f < nfaces; ++f)
    for (int k = 0; k < faces[f].n; ++k) {
      const Vec3<T> r = faces[f].facets[k].c - xbar;
      const T q = T(faces[f].sigma / dim) * dot(r, faces[f].facets[k].t);
      V += q;
      M += q * r;
    }
  xc = xbar + (T(double(dim) / (dim + 1)) / V) * M;
}

/// Reverse of cell_from_facets: given Vbar, xcbar accumulates xbar_bar and facet adjoints
/// (faces_bar has the same layout as faces; its facets are accumulated into).
inline void cell_from_facets_reverse(int dim, const Vec3<double> &xbar,
                                     const CellFace<double> *faces, int nfaces, double Vbar,
                                     const Vec3<double> &xcbar, Vec3<double> &xbar_bar,
                                     Facet<double> *const *faces_bar) {
  double V = 0;
  Vec3<double> M;
  for (int f = 0; f < nfaces; ++f)
    for (int k = 0; k < faces[f].n; ++k) {
      const Vec3<double> r = faces[f].facets[k].c - xbar;
      const double q = faces[f].sigma / dim * dot(r, faces[f].facets[k].t);
      V += q;
      M += q * r;
    }
  const double a = double(dim) / (dim + 1);
  xbar_bar += xcbar;
  const Vec3<double> Mbar = (a / V) * xcbar;
  const double Vtot = Vbar - a * dot(xcbar, M) / (V * V);
  for (int f = 0; f < nfaces; ++f)
    for (int k = 0; k < faces[f].n; ++k) {
      const Facet<double> &fa = faces[f].facets[k];
      const Vec3<double> r = fa.c - xbar;
      const double q = faces[f].sigma / dim * dot(r, fa.t);
      const double qbar = Vtot + dot(Mbar, r);
      const Vec3<double> rbar = q * Mbar + (faces[f].sigma / dim * qbar) * fa.t;
      faces_bar[f][k].t += (faces[f].sigma / dim * qbar) * r;
      faces_bar[f][k].c += rbar;
      xbar_bar -= rbar;
    }
}

} // namespace karman::geometry
