// Face fluxes of the coupled, collocated finite-volume discretization of the steady
// incompressible Navier-Stokes equations, and their hand-derived derivatives.
//
// Unknowns per cell: w = (p, u_1, ..., u_d).  For a face with area vector S (|S| = A,
// pointing from the left cell L to the right cell R, or out of the domain) the flux
// M = (F, M_u) leaves L and enters R:
//   F   = volume flux            (continuity:  sum_f sigma F = 0)
//   M_u = rho F u_up - mu (grad u) S + p_f S     (momentum)
// Reconstruction (second order): phi_L^f = phi_L + G_L . (x_f - x_L), G = least-squares
// cell gradient; likewise from R.
//   u_f   = (u_L^f + u_R^f) / 2,   p_f = (p_L^f + p_R^f) / 2
//   F     = u_f . S - D alpha [ (p_R - p_L) - (G_L^p + G_R^p)/2 . d ]      (Rhie-Chow-type)
//   u_up  : rho F u_up = rho [ (F + b a)/2 u_L^f + (F - b a)/2 u_R^f ],
//           a = sqrt(F^2 + (eps U_ref A)^2)
//           (b = 1: second-order upwind with a smooth |F|, so the residual stays
//           differentiable; b < 1 blends in the centred mean (u_L^f + u_R^f)/2 of the two
//           reconstructions, which has no numerical dissipation: the upwind part
//           b a (u_L^f - u_R^f)/2 is the dissipation, O(h^2) times |F| on smooth fields)
//           with the convected values (not F's nor p_f's) blended by beta (fp.blend) with the
//           extrapolation along the centroids:
//             u_L^f <- u_L^f + beta [ s_L (u_R - u_L) - G_L^u . (x_f - x_L) ],
//             s_L = (x_f - x_L) . d / d.d  (along),
//           likewise from R with s_R = -(x_f - x_R) . d / d.d  (convected_value)
//           (linear in w.  beta = 1/2: solver.reconstruction blended, the default on meshes with
//           tetrahedra; in 1D on a uniform mesh the kappa = 1/2 scheme u_L + (u_L - u_LL)/8 +
//           3 (u_R - u_L)/8.  Exact for linear fields along d only: the part of x_f - x_L across
//           d is extrapolated with half the gradient, an O(h) error of u^f on skewed faces.  On
//           Gmsh's unstructured tetrahedra the gradient's full extrapolation makes discrete
//           equations where Newton stalls at |R| ~ 1e-6 even with an exact Jacobian, and halving
//           only the part along d does not change that: results/tet-diagnosis.md section 8)
//           The upwind part b a (u_L^f - u_R^f)/2 extrapolates across d where the face centroid
//           lies off the line of the cell centroids; with fp.centroid_dissipation
//           (solver.dissipation centroids) it is taken along the centroids instead,
//             rho F u_up = rho [ F (u_L^f + u_R^f)/2 - b a/2 ((u_R - u_L) - (G_L + G_R)/2 . d) ],
//           the same as the gradient's reconstruction's (beta = 0) where the face centroid lies
//           midway on that line (twice the blended one's there), zero for linear fields like
//           the Rhie-Chow bracket (results/tet-diagnosis.md section 10: the Gmsh tetrahedral
//           meshes whose Newton solves stalled converge with it)
//   (grad u) S = alpha (u_R - u_L) + (G_L^u + G_R^u)/2 . k    (non-orthogonal correction)
// with d = x_R - x_L, alpha = S.S / d.S, k = S - alpha d (over-relaxed decomposition,
// Jasak 1996, sec. 3.3.1.3), and the pressure-stabilization coefficient
//   D = c_stab / (rho (U_ref / |d| + nu / |d|^2)),
// the inverse of a momentum-equation diagonal per unit volume built from a reference
// velocity and the viscosity only (no state dependence), so that the term is exactly
// linear in p.  The bracket is the difference between the compact and the
// interpolated pressure difference: it vanishes for linear p and damps checkerboards
// (Rhie & Chow 1983; the "third-order pressure dissipation" form).
//
// Boundary faces (R absent, d = x_f - x_L):
//   velocity Dirichlet (walls, inlets, jets, far-field inflow), value u_b:
//     F = u_b . S,  M_u = rho F u_b - mu [alpha (u_b - u_L) + G_L^u . k] + p_L^f S
//   pressure outlet (do-nothing: du/dn = 0, p = p_b):
//     u_f = u_L^f,  F = u_f . S - D alpha [p_b - p_L - G_L^p . d],  M_u = rho F u_f + p_b S
//   slip / symmetry (u . n = 0, no shear):
//     F = 0,  M_u = mu alpha (u_L . n) n + p_L^f S
//
// Kernels are templated on the scalar type (complex step in tests) and contain no
// PETSc.  Each *_dw function returns the exact partial derivatives with respect to
// the cell values and gradients, dM/dw_L, dM/dw_R, dM/dG_L, dM/dG_R.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/physics/equation_set.hpp"

namespace karman::physics {

/// Value and least-squares gradient of every unknown in one cell.  Not zeroed by default (the
/// residual's face loop fills the first nv entries of two of them per face): write
/// `CellState<T> s{}` where entries that are not assigned are read or accumulated into.
template <typename T> struct CellState {
  T w[kMaxVars];
  T g[kMaxVars][3];
};

/// Geometry of one face: area vector, centroid, and the centroids of its cells (x_R
/// unused on the boundary).
template <typename T> struct FaceGeometry { Vec3<T> S, xf, xL, xR; };

/// Fluid and scheme parameters.
template <typename T> struct FluxParameters {
  T rho = T(1);    ///< density
  T nu = T(1e-3);  ///< kinematic viscosity
  T u_ref = T(1);  ///< reference velocity of the stabilization coefficient
  T c_stab = T(1); ///< scale of the pressure stabilization
  T eps = T(1e-3); ///< smoothing of |F| in the upwinding, relative to u_ref |S|
  T upwind = T(1); ///< b: upwind fraction of the convected face velocity (1 upwind, 0 centred)
  /// beta: weight of the reconstruction along the centroids in the convected face velocity (0:
  /// the gradient's alone; 1/2: their mean, solver.reconstruction blended; header)
  T blend = T(0);
  /// solver.dissipation centroids: the upwind part of the convected momentum taken along the
  /// centroids, -a/2 [(u_R - u_L) - (G_L + G_R)/2 . d], instead of a/2 (u_L^f - u_R^f) (header)
  bool centroid_dissipation = false;
};

/// dM/d(inputs): [equation][variable] and [equation][variable][gradient component].
struct FluxJacobian {
  double dwL[kMaxVars][kMaxVars], dwR[kMaxVars][kMaxVars];
  double dgL[kMaxVars][kMaxVars][3], dgR[kMaxVars][kMaxVars][3];
  /// Zeroes the entries of the first nv equations and unknowns (the others are not read).
  void clear(int nv);
};

/// Pressure-stabilization coefficient D for a face with centroid distance |d| = dist.
template <typename T> T stabilization_coefficient(const T &dist, const FluxParameters<T> &p) {
  return p.c_stab / (p.rho * (p.u_ref / dist + p.nu / (dist * dist)));
}

/// The gradient of unknown k in cell state s.
template <typename T> Vec3<T> grad_vec(const CellState<T> &s, int k) {
  return Vec3<T>(s.g[k][0], s.g[k][1], s.g[k][2]);
}

/// r . e / e . e: how far along e the vector r reaches (s_L, s_R of the blended reconstruction).
template <typename T> T along(const Vec3<T> &r, const Vec3<T> &e) {
  return dot(r, e) / dot(e, e);
}

/// The convected value of one side of a face (header): its reconstruction f = w + G . r blended
/// by beta with the extrapolation along the centroids, w + s (w_other - w).
template <typename T>
T convected_value(const T &f, const T &w, const T &w_other, const T &s, const T &beta) {
  return f + beta * ((w_other - w) * s - (f - w));
}

/// The jump of unknown k along the centroids less the mean gradient's prediction of it,
/// (w_R - w_L) - (G_L + G_R)/2 . d: the Rhie-Chow bracket (k = 0) and the dissipation along the
/// centroids (header).
template <typename T>
T centroid_jump(const CellState<T> &L, const CellState<T> &R, int k, const Vec3<T> &d) {
  T jump = R.w[k] - L.w[k];
  for (int c = 0; c < 3; ++c) jump -= T(0.5) * (L.g[k][c] + R.g[k][c]) * d[c];
  return jump;
}

template <typename T> T sqrt_of(const T &x) {
  using std::sqrt;
  return sqrt(x);
}

// ----------------------------------------------------------------------------- interior

template <typename T>
void interior_flux(int dim, const CellState<T> &L, const CellState<T> &R, const FaceGeometry<T> &g,
                   const FluxParameters<T> &fp, T *M) {
  const int nv = dim + 1;
  const Vec3<T> rL = g.xf - g.xL, rR = g.xf - g.xR, d = g.xR - g.xL;
  T fl[kMaxVars], fr[kMaxVars];
  for (int k = 0; k < nv; ++k) {
    fl[k] = L.w[k] + dot(grad_vec(L, k), rL);
    fr[k] = R.w[k] + dot(grad_vec(R, k), rR);
  }
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<T> kv = g.S - alpha * d;
  const T D = stabilization_coefficient(norm(d), fp);
  T F = -D * alpha * centroid_jump(L, R, 0, d);
  for (int m = 1; m < nv; ++m) F += T(0.5) * (fl[m] + fr[m]) * g.S[m - 1];
  const T e = fp.eps * fp.u_ref * norm(g.S);
  const T a = fp.upwind * sqrt_of(F * F + e * e);
  const T bl = T(0.5) * (F + a), br = T(0.5) * (F - a);
  const T pf = T(0.5) * (fl[0] + fr[0]);
  const T mu = fp.rho * fp.nu;
  const T sL = along(rL, d), sR = -along(rR, d);
  M[0] = F;
  for (int m = 1; m < nv; ++m) {
    T visc = alpha * (R.w[m] - L.w[m]);
    for (int c = 0; c < 3; ++c) visc += T(0.5) * (L.g[m][c] + R.g[m][c]) * kv[c];
    const T cl = convected_value(fl[m], L.w[m], R.w[m], sL, fp.blend);
    const T cr = convected_value(fr[m], R.w[m], L.w[m], sR, fp.blend);
    const T conv = fp.centroid_dissipation
                       ? T(0.5) * F * (cl + cr) - T(0.5) * a * centroid_jump(L, R, m, d)
                       : bl * cl + br * cr;
    M[m] = fp.rho * conv - mu * visc + pf * g.S[m - 1];
  }
}

void interior_flux_dw(int dim, const CellState<double> &L, const CellState<double> &R,
                      const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                      FluxJacobian &J);

// ----------------------------------------------------------------------------- boundary

/// Stress terms of a velocity-Dirichlet face: the face pressure p_f = p_L + G_L^p . d and
/// the viscous flux visc = mu [alpha (u_b - u_L) + G_L^u . k]; the force of the fluid on
/// the wall is p_f S - visc.
template <typename T>
void dirichlet_face_stress(int dim, const CellState<T> &L, const FaceGeometry<T> &g,
                           const FluxParameters<T> &fp, const Vec3<T> &ub, T &pf, Vec3<T> &visc) {
  const Vec3<T> d = g.xf - g.xL;
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const Vec3<T> kv = g.S - alpha * d;
  pf = L.w[0];
  for (int c = 0; c < 3; ++c) pf += L.g[0][c] * d[c];
  const T mu = fp.rho * fp.nu;
  visc = Vec3<T>();
  for (int m = 1; m <= dim; ++m) {
    T v = alpha * (ub[m - 1] - L.w[m]);
    for (int c = 0; c < 3; ++c) v += L.g[m][c] * kv[c];
    visc[m - 1] = mu * v;
  }
}

/// Viscous traction of a rigidly moving wall (u_b = U + omega e_z x (x - c)) beyond the
/// flux visc = mu (grad u) S of dirichlet_face_stress: the momentum equations use the
/// Laplacian form mu (grad u) S, whose cell sums equal those of the stress form
/// mu (grad u + grad u^T) S for div u = 0, but face by face they differ by mu (grad u)^T S.
/// On a wall moving as a rigid body, u - u_b vanishes on the wall and is divergence free,
/// so mu (grad u + grad u^T) S = mu [(grad u) S - (grad u_b) S] = visc - mu omega e_z x S.
/// The force of the fluid on the face is then p_f S - visc + rotating_wall_traction.  Zero
/// for fixed and translating walls.  (Linear in mu, omega and S: its reverse mode is inline
/// in the objectives.)
template <typename T>
Vec3<T> rotating_wall_traction(const FluxParameters<T> &fp, const T &omega, const Vec3<T> &S) {
  const T c = fp.rho * fp.nu * omega;
  return Vec3<T>(-c * S[1], c * S[0], T(0));
}

template <typename T>
void velocity_dirichlet_flux(int dim, const CellState<T> &L, const FaceGeometry<T> &g,
                             const FluxParameters<T> &fp, const Vec3<T> &ub, T *M) {
  T pf;
  Vec3<T> visc;
  dirichlet_face_stress(dim, L, g, fp, ub, pf, visc);
  const T F = dot(ub, g.S);
  M[0] = F;
  for (int m = 1; m <= dim; ++m) M[m] = fp.rho * F * ub[m - 1] - visc[m - 1] + pf * g.S[m - 1];
}

void velocity_dirichlet_flux_dw(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                                const FluxParameters<double> &fp, const Vec3<double> &ub,
                                FluxJacobian &J);

template <typename T>
void pressure_outlet_flux(int dim, const CellState<T> &L, const FaceGeometry<T> &g,
                          const FluxParameters<T> &fp, const T &pb, T *M) {
  const int nv = dim + 1;
  const Vec3<T> d = g.xf - g.xL;
  const T alpha = dot(g.S, g.S) / dot(d, g.S);
  const T D = stabilization_coefficient(norm(d), fp);
  T uf[kMaxVars];
  T delta = pb - L.w[0];
  for (int c = 0; c < 3; ++c) delta -= L.g[0][c] * d[c];
  T F = -D * alpha * delta;
  for (int m = 1; m < nv; ++m) {
    uf[m] = L.w[m];
    for (int c = 0; c < 3; ++c) uf[m] += L.g[m][c] * d[c];
    F += uf[m] * g.S[m - 1];
  }
  M[0] = F;
  for (int m = 1; m < nv; ++m) M[m] = fp.rho * F * uf[m] + pb * g.S[m - 1];
}

void pressure_outlet_flux_dw(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                             const FluxParameters<double> &fp, double pb, FluxJacobian &J);

template <typename T>
void slip_flux(int dim, const CellState<T> &L, const FaceGeometry<T> &g,
               const FluxParameters<T> &fp, T *M) {
  const int nv = dim + 1;
  const Vec3<T> d = g.xf - g.xL;
  const T A2 = dot(g.S, g.S);
  const T alpha = A2 / dot(d, g.S);
  T pf = L.w[0];
  for (int c = 0; c < 3; ++c) pf += L.g[0][c] * d[c];
  T un = T(0); // (u_L . S) / A^2 * S = (u_L . n) n
  for (int m = 1; m < nv; ++m) un += L.w[m] * g.S[m - 1];
  const T mu = fp.rho * fp.nu;
  M[0] = T(0);
  for (int m = 1; m < nv; ++m) M[m] = mu * alpha * un * g.S[m - 1] / A2 + pf * g.S[m - 1];
}

void slip_flux_dw(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                  const FluxParameters<double> &fp, FluxJacobian &J);

// ----------------------------------------------------- variable viscosity (turbulence models)
// With an eddy viscosity the viscosity of a face, nu_f = nu + nu_t,f, varies from face to face:
// the kernels above are called with fp.nu = nu_f, and the chain rule through nu_t,f needs dM/dnu
// (the *_dnu functions, nv values: M depends on nu through mu = rho nu in the viscous flux and
// through the stabilization coefficient D in F, which the convection carries on).  The full
// stress (nu + nu_t)(grad u + grad u^T) adds on interior faces the transposed part
//   M_u -= mu ((grad u)^T)_f S,   (((grad u)^T)_f S)_i = sum_j [(G_L + G_R)/2]_{u_j, i} S_j
// (stress_transpose_flux), which the constant-viscosity flux omits: its cell sums vanish for
// div u = 0 and constant nu.  It is not added on boundary faces: on a no-slip wall
// (grad u)^T n = 0 for div u = 0 (a rotating wall's part is rotating_wall_traction), inlets and
// far fields carry near-uniform flow, outlets are do-nothing.

/// dM/dnu of interior_flux (nv values).
void interior_flux_dnu(int dim, const CellState<double> &L, const CellState<double> &R,
                       const FaceGeometry<double> &g, const FluxParameters<double> &fp, double *dM);
/// dM/dnu of velocity_dirichlet_flux.
void velocity_dirichlet_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                                 const FluxParameters<double> &fp, const Vec3<double> &ub,
                                 double *dM);
/// dM/dnu of pressure_outlet_flux.
void pressure_outlet_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                              const FluxParameters<double> &fp, double pb, double *dM);
/// dM/dnu of slip_flux.
void slip_flux_dnu(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                   const FluxParameters<double> &fp, double *dM);

/// Adds the transposed stress -mu ((grad u)^T)_f S of an interior face to the momentum rows of M.
template <typename T>
void stress_transpose_flux(int dim, const CellState<T> &L, const CellState<T> &R,
                           const FaceGeometry<T> &g, const T &mu, T *M) {
  for (int i = 0; i < dim; ++i) {
    T t = T(0);
    for (int j = 0; j < dim; ++j) t += T(0.5) * (L.g[1 + j][i] + R.g[1 + j][i]) * g.S[j];
    M[1 + i] -= mu * t;
  }
}

/// Adds the derivatives of stress_transpose_flux to J (gradient columns only; it is linear).
void stress_transpose_flux_dw(int dim, const FaceGeometry<double> &g, double mu, FluxJacobian &J);

// ------------------------------------------------------------------------ reverse mode
// For the scalar lambda . M of a face flux, the adjoints of every input: cell values and
// gradients, geometry (S, x_f, x_L, x_R), boundary data (u_b, p_b) and the viscosity.
// They are accumulated (+=).  Used for the adjoint gradients with respect to the mesh
// coordinates and the parameters (src/adjoint/README.md, eq. 8); checked against complex
// step in tests/unit/test_flux_kernels.cpp.

struct FluxBar {
  CellState<double> L{}, R{};
  Vec3<double> S, xf, xL, xR, ub; ///< ub, pb: the flow kernels' boundary velocity and pressure
  double pb = 0, nu = 0;
  double bv[kMaxVars] = {}; ///< prescribed boundary value of each unknown (a term's, by index)
};

void interior_flux_reverse(int dim, const CellState<double> &L, const CellState<double> &R,
                           const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                           const double *lambda, FluxBar &bar);
void velocity_dirichlet_flux_reverse(int dim, const CellState<double> &L,
                                     const FaceGeometry<double> &g,
                                     const FluxParameters<double> &fp, const Vec3<double> &ub,
                                     const double *lambda, FluxBar &bar);
/// Reverse of dirichlet_face_stress for the scalar pf_bar pf + visc_bar . visc.
void dirichlet_face_stress_reverse(int dim, const CellState<double> &L,
                                   const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                   const Vec3<double> &ub, double pf_bar,
                                   const Vec3<double> &visc_bar, FluxBar &bar);
void pressure_outlet_flux_reverse(int dim, const CellState<double> &L,
                                  const FaceGeometry<double> &g, const FluxParameters<double> &fp,
                                  double pb, const double *lambda, FluxBar &bar);
void slip_flux_reverse(int dim, const CellState<double> &L, const FaceGeometry<double> &g,
                       const FluxParameters<double> &fp, const double *lambda, FluxBar &bar);
/// Reverse of stress_transpose_flux: the gradients' and S's adjoints to bar, mu's to *mu_bar
/// (accumulated).
void stress_transpose_flux_reverse(int dim, const CellState<double> &L, const CellState<double> &R,
                                   const FaceGeometry<double> &g, double mu, const double *lambda,
                                   FluxBar &bar, double *mu_bar);

} // namespace karman::physics
