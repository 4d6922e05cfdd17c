// Diagnostics of a case at a given state (issue 42, results/tet-diagnosis.md); not part of
// karman, built against an installed karman (CMakeLists.txt here).  At the case's initial state
// (initial.file: a run's flow.h5 or last_good.h5):
//   jac: the assembled exact Jacobian J and the Jacobian-free product against central differences
//        of the residual, (R(w + h v) - R(w - h v)) / 2h for h = 1e-3 ... 1e-8 |w|_inf and three
//        random v (the error must fall as h^2 to round-off), the cells of largest difference;
//        |P v - J v| / |J v| of the compact preconditioning matrix P; the Jacobian-free
//        product's difference per unknown and per cell (a kink of R at w, e.g. SA's |curl u| at
//        a uniform state, makes it nonlinear in v)
//   floor: |R| against the steady solver's round-off floor eps |rho V/dtau w|_2 (spectral step)
//   res: |R| per unknown (its largest cell), how |R| is distributed over the cells (share of
//        the worst cells, of cells by non-orthogonality, of boundary cells), the cells of
//        largest |R|, and the least-squares operators' amplification h (|self| + sum |c_j|) per
//        field set with the worst cells
//   ksp: one linear solve (J + pseudo-time shift of CFL -diag_cfl, as the steady solver's) x = -R
//        or, with -diag_rhs_random, b = J y for a random y; karman's iterative defaults (GMRES,
//        coupled multigrid on the compact P) under the options prefix diag_ (-diag_pc_type ...);
//        -diag_p restrict|lump: P = J on the compact pattern (lump: the other entries of a row
//        added to its own block), -diag_exact_p: P = J, -diag_jf: the Jacobian-free operator;
//        prints the iterations, the true relative residual and iterations per decade;
//        -diag_spectral: the adaptive law's spectral-radius pseudo-time step (turbulence), as
//        the solver; the multigrid of the case's systems (solver::system_kind)
// usage: mpirun -n P tet_diagnosis CASE.yaml [key=value ...] -diag_mode jac,res,ksp [options]
#include "karman/config/case_config.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/geometry/mesh_quality.hpp"
#include "karman/io/state_fields.hpp"
#include "karman/optimization/case_schema.hpp"
#include "karman/solver/jacobian_free.hpp"
#include "karman/solver/linear_solver.hpp"
#include "karman/solver/steady_solver.hpp"

#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace karman;

namespace {

double norm2(Vec v) {
  PetscReal n;
  VecNorm(v, NORM_2, &n);
  return n;
}

// per owned cell: the 2-norm of the nv entries
std::vector<double> cell_norms(Vec v, int nv, PetscInt n, int first = 0, int count = -1) {
  if (count < 0) count = nv;
  const PetscScalar *a;
  VecGetArrayRead(v, &a);
  std::vector<double> out(n);
  for (PetscInt c = 0; c < n; ++c) {
    double s = 0;
    for (int k = first; k < first + count; ++k) s += a[c * nv + k] * a[c * nv + k];
    out[c] = std::sqrt(s);
  }
  VecRestoreArrayRead(v, &a);
  return out;
}

struct CellRow {
  double gid, r, rc, rm, nonorth, skew, vol, x, y, z, boundary, extra;
};

// gathers rows of every rank on rank 0
std::vector<CellRow> gather(MPI_Comm comm, const std::vector<CellRow> &mine) {
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int per = sizeof(CellRow) / sizeof(double);
  int n = static_cast<int>(mine.size()) * per;
  std::vector<int> counts(size), displs(size);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
  std::vector<CellRow> all(rank == 0 ? total / per : 0);
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              comm);
  return all;
}

std::vector<CellRow> cell_rows(discretization::FlowResidual &res, Vec R, Vec extra) {
  const mesh::Mesh &m = res.mesh();
  const auto &g = res.geometry();
  const geometry::CellQuality q = geometry::compute_quality(m, g);
  const int nv = res.nv();
  const auto r = cell_norms(R, nv, m.n_owned_cells);
  const auto rc = cell_norms(R, nv, m.n_owned_cells, 0, 1);
  const auto rm = cell_norms(R, nv, m.n_owned_cells, 1, nv - 1);
  std::vector<double> ex(m.n_owned_cells, 0.0);
  if (extra) ex = cell_norms(extra, nv, m.n_owned_cells);
  std::vector<CellRow> rows(m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    bool b = false;
    for (PetscInt e = m.cell_face_ptr[c]; e < m.cell_face_ptr[c + 1]; ++e)
      if (m.face_right[m.cell_face[e]] < 0) b = true;
    rows[c] = {double(m.cell_gid[c]),
               r[c],
               rc[c],
               rm[c],
               q.non_orthogonality[c],
               q.skewness[c],
               g.cell_volume[c],
               g.cell_centroid[c][0],
               g.cell_centroid[c][1],
               g.cell_centroid[c][2],
               b ? 1.0 : 0.0,
               ex[c]};
  }
  return rows;
}

void report_distribution(const std::vector<CellRow> &all, const char *what, bool by_extra) {
  if (all.empty()) return;
  auto val = [&](const CellRow &c) { return by_extra ? c.extra : c.r; };
  double tot = 0;
  for (const auto &c : all) tot += val(c) * val(c);
  std::vector<CellRow> s = all;
  std::sort(s.begin(), s.end(),
            [&](const CellRow &a, const CellRow &b) { return val(a) > val(b); });
  PetscPrintf(PETSC_COMM_SELF, "== %s: %zu cells, |.|_2 %.4e\n", what, s.size(), std::sqrt(tot));
  for (double frac : {0.001, 0.01, 0.05, 0.2}) {
    const std::size_t k = std::max<std::size_t>(1, frac * s.size());
    double part = 0;
    for (std::size_t i = 0; i < k; ++i) part += val(s[i]) * val(s[i]);
    PetscPrintf(PETSC_COMM_SELF, "  top %5.1f%% (%zu cells): %.1f%% of |.|^2\n", 100 * frac, k,
                100 * part / tot);
  }
  for (double th : {30.0, 40.0, 50.0, 60.0, 65.0}) {
    std::size_t n = 0;
    double part = 0;
    for (const auto &c : all)
      if (c.nonorth > th) ++n, part += val(c) * val(c);
    PetscPrintf(PETSC_COMM_SELF,
                "  cells with non-orthogonality > %2.0f deg: %6zu (%5.2f%% of cells) hold %5.1f%% "
                "of |.|^2\n",
                th, n, 100.0 * n / all.size(), 100 * part / tot);
  }
  {
    std::size_t n = 0;
    double part = 0;
    for (const auto &c : all)
      if (c.boundary > 0) ++n, part += val(c) * val(c);
    PetscPrintf(PETSC_COMM_SELF, "  boundary cells: %zu (%.1f%%) hold %.1f%% of |.|^2\n", n,
                100.0 * n / all.size(), 100 * part / tot);
  }
  {
    std::size_t n = 0;
    double part = 0;
    for (const auto &c : all) {
      const double d = std::hypot(c.x - 0.5, c.y - 0.2);
      if (d < 0.1) ++n, part += val(c) * val(c);
    }
    PetscPrintf(PETSC_COMM_SELF, "  cells within 0.1 of the cylinder axis: %zu hold %.1f%%\n", n,
                100 * part / tot);
  }
  PetscPrintf(PETSC_COMM_SELF,
              "  worst cells: gid value (cont, mom) nonorth skew volume x y z boundary\n");
  for (std::size_t i = 0; i < std::min<std::size_t>(12, s.size()); ++i) {
    const auto &c = s[i];
    PetscPrintf(PETSC_COMM_SELF, "   %7.0f %.3e (%.2e %.2e) %5.1f %.2f %.2e (%.3f %.3f %.3f) %d\n",
                c.gid, val(c), c.rc, c.rm, c.nonorth, c.skew, c.vol, c.x, c.y, c.z,
                int(c.boundary));
  }
}

PetscErrorCode check_jacobian(driver::FlowCase &fc, Vec w) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc.residual();
  const MPI_Comm comm = res.mesh().comm;
  Mat J, P;
  PetscCall(res.create_jacobian(&J));
  PetscCall(res.create_jacobian(&P, true));
  double t0 = MPI_Wtime();
  PetscCall(res.jacobian(discretization::kSteady, w, J, nullptr));
  const double tj = MPI_Wtime() - t0;
  PetscCall(res.jacobian(discretization::kSteady, w, P, nullptr, true));
  Vec v, Jv, Pv, wp, wm, rp, rm, d;
  for (Vec *x : {&v, &Jv, &Pv, &wp, &wm, &rp, &rm, &d}) PetscCall(VecDuplicate(w, x));
  PetscReal wmax;
  PetscCall(VecNorm(w, NORM_INFINITY, &wmax));
  solver::JacobianFreeOperator jf;
  PetscCall(jf.setup(res));
  PetscCall(jf.set_base(discretization::kSteady, w, nullptr, nullptr));
  t0 = MPI_Wtime();
  PetscCall(res.residual(discretization::kSteady, w, rp));
  const double tr = MPI_Wtime() - t0;
  PetscCall(PetscPrintf(comm,
                        "== Jacobian check: |w|_inf %.4e, |R| %.4e; J assembly %.3f s, R %.3f s\n",
                        wmax, norm2(rp), tj, tr));
  std::vector<CellRow> worst_rows;
  for (int trial = 0; trial < 3; ++trial) {
    PetscRandom rnd;
    PetscCall(PetscRandomCreate(comm, &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 101 + trial));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
    PetscCall(VecSetRandom(v, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(MatMult(J, v, Jv));
    const double nJ = norm2(Jv);
    PetscCall(MatMult(P, v, Pv));
    PetscCall(VecAXPY(Pv, -1.0, Jv));
    PetscCall(PetscPrintf(comm, " trial %d: |Jv| %.4e, |Pv - Jv|/|Jv| (compact) %.3e\n", trial, nJ,
                          norm2(Pv) / nJ));
    for (double e : {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8}) {
      const double h = e * wmax;
      PetscCall(VecWAXPY(wp, h, v, w));
      PetscCall(VecWAXPY(wm, -h, v, w));
      PetscCall(res.residual(discretization::kSteady, wp, rp));
      PetscCall(res.residual(discretization::kSteady, wm, rm));
      PetscCall(VecWAXPY(d, -1.0, rm, rp));
      PetscCall(VecScale(d, 0.5 / h));
      PetscCall(VecAXPY(d, -1.0, Jv));
      PetscReal dinf, jinf;
      PetscCall(VecNorm(d, NORM_INFINITY, &dinf));
      PetscCall(VecNorm(Jv, NORM_INFINITY, &jinf));
      PetscCall(PetscPrintf(comm,
                            "   central FD h = %.0e |w|: |FD - Jv|/|Jv| %.3e (inf-norms %.3e)\n", e,
                            norm2(d) / nJ, dinf / jinf));
      if (e == 1e-5 && trial == 0) {
        Vec dd;
        PetscCall(VecDuplicate(d, &dd));
        PetscCall(VecCopy(d, dd));
        // per-cell error relative to the cell's |Jv|
        worst_rows = gather(comm, cell_rows(res, Jv, dd));
        PetscCall(VecDestroy(&dd));
      }
    }
    PetscCall(MatMult(jf.matrix(), v, d));
    PetscCall(VecAXPY(d, -1.0, Jv));
    PetscCall(PetscPrintf(comm, "   Jacobian-free product: |JFv - Jv|/|Jv| %.3e\n", norm2(d) / nJ));
    if (trial == 0) { // where the Jacobian-free product differs: per unknown and per cell
      const int nv = res.nv();
      const PetscInt n = res.mesh().n_owned_cells;
      for (int k = 0; k < nv; ++k) {
        const auto dk = cell_norms(d, nv, n, k, 1), jk = cell_norms(Jv, nv, n, k, 1);
        double a = 0, b = 0;
        for (PetscInt c = 0; c < n; ++c) a += dk[c] * dk[c], b += jk[c] * jk[c];
        MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_DOUBLE, MPI_SUM, comm);
        PetscCall(PetscPrintf(comm, "     unknown %d: |JFv - Jv| %.3e, |Jv| %.3e\n", k,
                              std::sqrt(a), std::sqrt(b)));
      }
      report_distribution(gather(comm, cell_rows(res, Jv, d)), "|JFv - Jv| per cell", true);
    }
  }
  // cells of largest FD error, and largest error relative to the cell's |Jv|
  if (!worst_rows.empty()) {
    report_distribution(worst_rows, "|FD - Jv| per cell (h = 1e-5 |w|, trial 0)", true);
    std::sort(worst_rows.begin(), worst_rows.end(), [](const CellRow &a, const CellRow &b) {
      return a.extra / (a.r + 1e-300) > b.extra / (b.r + 1e-300);
    });
    PetscPrintf(PETSC_COMM_SELF, "  largest |FD - Jv|_c / |Jv|_c: ");
    for (int i = 0; i < 5; ++i)
      PetscPrintf(PETSC_COMM_SELF, "%.2e (nonorth %.1f) ", worst_rows[i].extra / worst_rows[i].r,
                  worst_rows[i].nonorth);
    PetscPrintf(PETSC_COMM_SELF, "\n");
  }
  for (Vec *x : {&v, &Jv, &Pv, &wp, &wm, &rp, &rm, &d}) PetscCall(VecDestroy(x));
  PetscCall(MatDestroy(&J));
  PetscCall(MatDestroy(&P));
  PetscFunctionReturn(0);
}

// the least-squares operators' amplification h_c (|self| + sum |c_j|), h_c = V^(1/dim), per set
void lsq_amplification(const discretization::FlowResidual &res) {
  const mesh::Mesh &m = res.mesh();
  const auto &lsq = res.gradient_operator();
  const auto &nptr = lsq.neighbour_ptr();
  for (std::size_t s = 0; s < lsq.n_sets(); ++s) {
    const auto &bptr = lsq.boundary_ptr(static_cast<int>(s));
    std::vector<double> amp(m.n_owned_cells);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double h = std::pow(res.geometry().cell_volume[c], 1.0 / m.dim);
      double sum = norm(lsq.self(static_cast<int>(s), c));
      for (PetscInt e = nptr[c]; e < nptr[c + 1]; ++e)
        sum += norm(lsq.coefficient(static_cast<int>(s), e));
      for (PetscInt e = bptr[c]; e < bptr[c + 1]; ++e)
        sum += norm(lsq.boundary_coefficient(static_cast<int>(s), e));
      amp[c] = h * sum;
    }
    std::vector<CellRow> mine(m.n_owned_cells);
    const geometry::CellQuality q = geometry::compute_quality(m, res.geometry());
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      int nb = 0;
      for (PetscInt e = m.cell_face_ptr[c]; e < m.cell_face_ptr[c + 1]; ++e)
        if (m.face_right[m.cell_face[e]] < 0) ++nb;
      const auto &x = res.geometry().cell_centroid[c];
      mine[c] = {double(m.cell_gid[c]),
                 amp[c],
                 double(nptr[c + 1] - nptr[c]),
                 double(bptr[c + 1] - bptr[c]),
                 q.non_orthogonality[c],
                 q.skewness[c],
                 res.geometry().cell_volume[c],
                 x[0],
                 x[1],
                 x[2],
                 double(nb),
                 0.0};
    }
    auto all = gather(m.comm, mine);
    if (all.empty()) continue;
    std::vector<double> a;
    for (auto &r : all) a.push_back(r.r);
    std::sort(all.begin(), all.end(), [](const CellRow &x, const CellRow &y) { return x.r > y.r; });
    std::size_t over = 0;
    for (auto &r : all) over += r.r > 30;
    PetscPrintf(PETSC_COMM_SELF,
                "  set %zu: %zu cells with amplification > 30; worst: gid amp neighbours "
                "prescribed-faces nonorth x y z boundary-faces\n",
                s, over);
    for (int i = 0; i < 6; ++i)
      PetscPrintf(PETSC_COMM_SELF, "    %7.0f %8.2f %1.0f %1.0f %5.1f (%.3f %.3f %.3f) %1.0f\n",
                  all[i].gid, all[i].r, all[i].rc, all[i].rm, all[i].nonorth, all[i].x, all[i].y,
                  all[i].z, all[i].boundary);
    std::sort(a.begin(), a.end());
    PetscPrintf(PETSC_COMM_SELF,
                "  least-squares set %zu: h (|self| + sum |c_j|) median %.2f, p99 %.2f, max %.2f\n",
                s, a[a.size() / 2], a[a.size() * 99 / 100], a.back());
  }
}

PetscErrorCode residual_distribution(driver::FlowCase &fc, Vec w) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc.residual();
  Vec R;
  PetscCall(VecDuplicate(w, &R));
  PetscCall(res.residual(discretization::kSteady, w, R));
  { // per unknown
    const int nv = res.nv();
    const PetscInt n = res.mesh().n_owned_cells;
    for (int k = 0; k < nv; ++k) {
      const auto rk = cell_norms(R, nv, n, k, 1);
      double a = 0, mx = 0;
      PetscInt at = 0;
      for (PetscInt c = 0; c < n; ++c) {
        a += rk[c] * rk[c];
        if (rk[c] > mx) mx = rk[c], at = c;
      }
      const auto &x = res.geometry().cell_centroid[at];
      PetscPrintf(PETSC_COMM_SELF, "  unknown %d: |R_k| %.4e, max %.4e at (%.4g, %.4g)\n", k,
                  std::sqrt(a), mx, x[0], x[1]);
    }
  }
  const auto all = gather(res.mesh().comm, cell_rows(res, R, nullptr));
  report_distribution(all, "residual per cell", false);
  if (!all.empty()) { // quality of the mesh
    std::vector<double> no;
    for (const auto &c : all) no.push_back(c.nonorth);
    std::sort(no.begin(), no.end());
    PetscPrintf(PETSC_COMM_SELF,
                "  non-orthogonality per cell (worst face): median %.1f, p90 %.1f, p99 %.1f, max "
                "%.1f\n",
                no[no.size() / 2], no[no.size() * 9 / 10], no[no.size() * 99 / 100], no.back());
  }
  lsq_amplification(res);
  PetscCall(VecDestroy(&R));
  PetscFunctionReturn(0);
}

// P := J restricted to P's (compact) pattern; with `lump`, the entries outside it added to the
// diagonal block's entry of the same component (row sums of each component kept)
PetscErrorCode restrict_to_pattern(Mat J, Mat P, int nv, bool lump) {
  PetscFunctionBeginUser;
  PetscCall(MatSetOption(P, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(P, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscInt rstart, rend;
  PetscCall(MatGetOwnershipRange(J, &rstart, &rend));
  std::vector<std::vector<PetscInt>> pattern(rend - rstart);
  for (PetscInt row = rstart; row < rend; ++row) {
    PetscInt np;
    const PetscInt *pc;
    PetscCall(MatGetRow(P, row, &np, &pc, nullptr));
    pattern[row - rstart].assign(pc, pc + np);
    PetscCall(MatRestoreRow(P, row, &np, &pc, nullptr));
  }
  PetscCall(MatZeroEntries(P));
  double dropped = 0, kept = 0;
  for (PetscInt row = rstart; row < rend; ++row) {
    PetscInt nj;
    const PetscInt *jc;
    const PetscScalar *jv;
    const std::vector<PetscInt> &pcols = pattern[row - rstart];
    PetscCall(MatGetRow(J, row, &nj, &jc, &jv));
    std::vector<PetscInt> cols;
    std::vector<PetscScalar> vals;
    for (PetscInt k = 0; k < nj; ++k) {
      if (std::binary_search(pcols.begin(), pcols.end(), jc[k])) {
        cols.push_back(jc[k]), vals.push_back(jv[k]);
        kept += jv[k] * jv[k];
      } else {
        dropped += jv[k] * jv[k];
        if (lump) cols.push_back((row / nv) * nv + jc[k] % nv), vals.push_back(jv[k]);
      }
    }
    PetscCall(MatRestoreRow(J, row, &nj, &jc, &jv));
    for (std::size_t k = 0; k < cols.size(); ++k)
      PetscCall(MatSetValue(P, row, cols[k], vals[k], ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  double both[2] = {kept, dropped}, sum[2];
  MPI_Allreduce(both, sum, 2, MPI_DOUBLE, MPI_SUM, PetscObjectComm((PetscObject)J));
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)J),
                        "   P = J on the compact pattern%s: Frobenius norm of the dropped entries "
                        "%.3e of the kept %.3e\n",
                        lump ? " + lumped" : "", std::sqrt(sum[1]), std::sqrt(sum[0])));
  PetscFunctionReturn(0);
}

// the steady solver's pseudo-time shift rho V / dtau (SteadySolver::update_shift)
std::vector<double> pseudo_time_shift(const discretization::FlowResidual &res, Vec w, double cfl) {
  const mesh::Mesh &m = res.mesh();
  std::vector<double> shift(m.n_owned_cells, 0.0);
  if (!(cfl > 0)) return shift;
  const PetscScalar *a;
  VecGetArrayRead(w, &a);
  const int nv = res.nv();
  const auto &p = res.parameters();
  PetscBool spectral = PETSC_FALSE; // -diag_spectral: the adaptive law's spectral-radius step
  PetscOptionsGetBool(nullptr, nullptr, "-diag_spectral", &spectral, nullptr);
  const physics::EquationSet &eq = res.equations();
  const int t0 = eq.find("nu_tilde_ratio") >= 0 ? eq.offset(eq.find("nu_tilde_ratio")) : -1;
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const double V = res.geometry().cell_volume[c], hc = std::pow(V, 1.0 / m.dim);
    if (spectral) {
      double dS[3] = {0, 0, 0}, u[3] = {0, 0, 0};
      for (PetscInt i = m.cell_face_ptr[c]; i < m.cell_face_ptr[c + 1]; ++i) {
        const Vec3<double> &S = res.geometry().face_area[m.cell_face[i]];
        for (int d = 0; d < m.dim; ++d) dS[d] += 0.5 * std::abs(S[d]);
      }
      for (int d = 0; d < m.dim; ++d) u[d] = PetscRealPart(a[c * nv + 1 + d]);
      const double chi = t0 >= 0 ? std::max(0.0, PetscRealPart(a[c * nv + t0])) : 0.0;
      shift[c] = p.rho * solver::pseudo_time_rate(u, dS, m.dim, V, p.nu * (1 + chi), p.u_ref) / cfl;
      continue;
    }
    double u2 = 0;
    for (int k = 1; k <= m.dim; ++k) u2 += a[c * nv + k] * a[c * nv + k];
    shift[c] = p.rho * V / (cfl * hc / (std::sqrt(u2) + p.nu / hc + 1e-12 * p.u_ref));
  }
  VecRestoreArrayRead(w, &a);
  return shift;
}

PetscErrorCode linear_study(driver::FlowCase &fc, Vec w) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc.residual();
  const MPI_Comm comm = res.mesh().comm;
  PetscReal cfl = 0, rtol = 1e-6;
  PetscBool jf_op = PETSC_FALSE, exact_p = PETSC_FALSE;
  char pkind[64] = "compact";
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-diag_p", pkind, sizeof(pkind), nullptr));
  const std::string pk = pkind;
  PetscInt maxit = 500;
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-diag_cfl", &cfl, nullptr));
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-diag_rtol", &rtol, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-diag_maxit", &maxit, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-diag_jf", &jf_op, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-diag_exact_p", &exact_p, nullptr));
  const std::vector<double> shift = pseudo_time_shift(res, w, cfl);
  Mat J, P;
  PetscCall(res.create_jacobian(&J));
  PetscCall(res.jacobian(discretization::kSteady, w, J, &shift));
  if (exact_p) {
    P = J;
    PetscCall(PetscObjectReference((PetscObject)J));
  } else {
    PetscCall(res.create_jacobian(&P, true));
    PetscCall(res.jacobian(discretization::kSteady, w, P, &shift, true));
    if (pk == "restrict" || pk == "lump")
      PetscCall(restrict_to_pattern(J, P, res.nv(), pk == "lump"));
  }
  solver::JacobianFreeOperator jf;
  Mat A = J;
  if (jf_op) {
    PetscCall(jf.setup(res));
    PetscCall(jf.set_base(discretization::kSteady, w, nullptr, &shift));
    A = jf.matrix();
  }
  Vec b, x;
  PetscCall(VecDuplicate(w, &b));
  PetscCall(VecDuplicate(w, &x));
  PetscCall(res.residual(discretization::kSteady, w, b));
  PetscCall(VecScale(b, -1.0));
  PetscBool random_rhs = PETSC_FALSE;
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-diag_rhs_random", &random_rhs, nullptr));
  if (random_rhs) { // b = J y for a random y: a right-hand side in the range of every mode
    PetscRandom rnd;
    PetscCall(PetscRandomCreate(comm, &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 7));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
    PetscCall(VecSetRandom(x, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(MatMult(J, x, b));
    PetscCall(VecSet(x, 0.0));
  }
  KSP ksp;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "diag_"));
  PetscCall(solver::set_linear_solver_defaults(ksp, solver::LinearMethod::Iterative,
                                               solver::LinearSystems::Steady,
                                               solver::system_kind(res), KSPPREONLY));
  PetscCall(KSPSetOperators(ksp, A, P));
  PetscCall(KSPSetTolerances(ksp, rtol, 1e-50, PETSC_DEFAULT, maxit));
  std::vector<PetscReal> hist(maxit + 2);
  PetscCall(KSPSetResidualHistory(ksp, hist.data(), maxit + 1, PETSC_TRUE));
  PetscCall(KSPSetFromOptions(ksp));
  double t0 = MPI_Wtime();
  PetscCall(solver::set_up_preconditioner(ksp));
  const double tsetup = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  const double tsolve = MPI_Wtime() - t0;
  PetscInt its, nh;
  KSPConvergedReason reason;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  const PetscReal *h;
  PetscCall(KSPGetResidualHistory(ksp, &h, &nh));
  // true relative residual
  Vec r;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(J, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  const double rel = norm2(r) / norm2(b);
  const double decades = -std::log10(rel);
  PetscCall(PetscPrintf(comm,
                        "== linear: CFL %g (%s), operator %s, P %s: %s after %d its, true |r|/|b| "
                        "%.3e (%.2f decades, %.1f its/decade), set-up %.2f s, solve %.2f s\n",
                        cfl, cfl > 0 ? "shifted" : "no shift",
                        jf_op ? "Jacobian-free" : "assembled J", exact_p ? "exact J" : pk.c_str(),
                        KSPConvergedReasons[reason], int(its), rel, decades,
                        decades > 0 ? its / decades : -1.0, tsetup, tsolve));
  PetscCall(PetscPrintf(comm, "   history (every 10):"));
  for (PetscInt i = 0; i < nh; i += 10) PetscCall(PetscPrintf(comm, " %.2e", h[i] / h[0]));
  PetscCall(PetscPrintf(comm, "\n"));
  PetscCall(KSPDestroy(&ksp));
  for (Vec *v : {&b, &x, &r}) PetscCall(VecDestroy(v));
  PetscCall(MatDestroy(&J));
  PetscCall(MatDestroy(&P));
  PetscFunctionReturn(0);
}

// newton: the undamped Newton direction d = -J^-1 R (LU, no shift) at the state, |d|, and
// |R(w + a d)| / |R(w)| for a = 1, 1/2, ... 1e-6 (a descent direction gives 1 - a for small a);
// then inverse iteration on J^T J (LU of J) for the smallest singular value and where its
// right singular vector lives (pressure / velocity share, the cells of largest entries)
PetscErrorCode newton_study(driver::FlowCase &fc, Vec w) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc.residual();
  const MPI_Comm comm = res.mesh().comm;
  Mat J;
  PetscCall(res.create_jacobian(&J));
  PetscCall(res.jacobian(discretization::kSteady, w, J, nullptr));
  KSP ksp;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, J, J));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscCall(KSPSetUp(ksp));
  Vec r, d, wt, rt;
  PetscCall(VecDuplicate(w, &r));
  PetscCall(VecDuplicate(w, &d));
  PetscCall(VecDuplicate(w, &wt));
  PetscCall(VecDuplicate(w, &rt));
  PetscCall(res.residual(discretization::kSteady, w, r));
  const double r0 = norm2(r);
  PetscCall(KSPSolve(ksp, r, d));
  PetscCall(VecScale(d, -1.0));
  PetscReal dinf, winf;
  PetscCall(VecNorm(d, NORM_INFINITY, &dinf));
  PetscCall(VecNorm(w, NORM_INFINITY, &winf));
  PetscCall(PetscPrintf(comm,
                        "== Newton direction: |R| %.4e, |d|_2 %.4e, |d|_inf %.4e (|w|_inf %.4e)\n",
                        r0, norm2(d), dinf, winf));
  for (double a = 1; a > 1e-7; a *= 0.1) {
    PetscCall(VecWAXPY(wt, a, d, w));
    PetscCall(res.residual(discretization::kSteady, wt, rt));
    PetscCall(PetscPrintf(comm, "   a %.0e: |R(w + a d)| / |R| %.8f (1 - a %.8f)\n", a,
                          norm2(rt) / r0, 1 - a));
  }
  // inverse iteration on (J^T J)^-1
  Vec x, y;
  PetscCall(VecDuplicate(w, &x));
  PetscCall(VecDuplicate(w, &y));
  PetscCall(VecSetRandom(x, nullptr));
  PetscCall(VecNormalize(x, nullptr));
  double sigma = 0;
  for (int it = 0; it < 40; ++it) {
    PetscCall(KSPSolveTranspose(ksp, x, y)); // y = J^-T x
    PetscCall(KSPSolve(ksp, y, x));          // x = J^-1 J^-T x
    PetscReal nx;
    PetscCall(VecNormalize(x, &nx));
    sigma = 1.0 / std::sqrt(nx);
  }
  PetscCall(MatMult(J, x, y));
  const int nv = res.nv();
  const PetscInt n = res.mesh().n_owned_cells;
  const std::vector<double> pn = cell_norms(x, nv, n, 0, 1), un = cell_norms(x, nv, n, 1, nv - 1);
  double ps = 0, us = 0;
  for (PetscInt c = 0; c < n; ++c) ps += pn[c] * pn[c], us += un[c] * un[c];
  MPI_Allreduce(MPI_IN_PLACE, &ps, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_SUM, comm);
  PetscCall(PetscPrintf(
      comm,
      "== smallest singular value of J (inverse iteration, 40 steps): %.4e (|J x| %.4e); largest "
      "|J| row sum scale: see jac; mode: pressure share %.3f, velocity share %.3f\n",
      sigma, norm2(y), ps, us));
  // the mode's overlap with the residual
  PetscScalar rx;
  PetscCall(VecDot(r, y, &rx));
  PetscCall(PetscPrintf(comm, "   (J x, R) / (|J x| |R|) = %.4e\n", rx / (norm2(y) * r0)));
  std::vector<std::pair<double, PetscInt>> top;
  for (PetscInt c = 0; c < n; ++c) top.push_back({pn[c] * pn[c] + un[c] * un[c], c});
  std::sort(top.rbegin(), top.rend());
  const auto &cen = res.geometry().cell_centroid;
  for (int k = 0; k < 8 && k < (int)top.size(); ++k) {
    const PetscInt c = top[k].second;
    PetscCall(PetscSynchronizedPrintf(
        comm, "   cell %d |x_c| %.3e (p %.3e, u %.3e) at (%.3f %.3f %.3f)\n", int(c),
        std::sqrt(top[k].first), pn[c], un[c], cen[c][0], cen[c][1], cen[c][2]));
  }
  PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
  PetscCall(KSPDestroy(&ksp));
  for (Vec *v : {&r, &d, &wt, &rt, &x, &y}) PetscCall(VecDestroy(v));
  PetscCall(MatDestroy(&J));
  PetscFunctionReturn(0);
}

// compare: the difference of the state and the state in -diag_compare FILE, per field and where
PetscErrorCode compare_study(driver::FlowCase &fc, Vec w) {
  PetscFunctionBeginUser;
  discretization::FlowResidual &res = fc.residual();
  const MPI_Comm comm = res.mesh().comm;
  char path[PETSC_MAX_PATH_LEN] = "";
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-diag_compare", path, sizeof(path), nullptr));
  Vec v, r;
  PetscCall(VecDuplicate(w, &v));
  PetscCall(VecDuplicate(w, &r));
  PetscCall(io::read_state_h5(res.mesh(), res.equations(), path, v));
  PetscCall(res.residual(discretization::kSteady, v, r));
  PetscCall(PetscPrintf(comm, "== compare with %s: its |R| %.4e\n", path, norm2(r)));
  {
    const PetscScalar *a, *b;
    PetscCall(VecGetArrayRead(w, &a));
    PetscCall(VecGetArrayRead(v, &b));
    const int nv = res.nv();
    for (PetscInt c : {2289, 3158, 7403, 10998, 1822, 9272})
      if (c < res.mesh().n_owned_cells)
        PetscCall(PetscSynchronizedPrintf(
            comm, "   cell %d: this (%.4f %.4f %.4f %.4f), other (%.4f %.4f %.4f %.4f)\n", int(c),
            a[c * nv], a[c * nv + 1], a[c * nv + 2], a[c * nv + 3], b[c * nv], b[c * nv + 1],
            b[c * nv + 2], b[c * nv + 3]));
    PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
    PetscCall(VecRestoreArrayRead(w, &a));
    PetscCall(VecRestoreArrayRead(v, &b));
  }
  PetscCall(VecAXPY(v, -1.0, w));
  const int nv = res.nv();
  const PetscInt n = res.mesh().n_owned_cells;
  const std::vector<double> pn = cell_norms(v, nv, n, 0, 1), un = cell_norms(v, nv, n, 1, nv - 1);
  double ps = 0, us = 0, pm = 0, um = 0;
  for (PetscInt c = 0; c < n; ++c)
    ps += pn[c] * pn[c], us += un[c] * un[c], pm = std::max(pm, pn[c]), um = std::max(um, un[c]);
  MPI_Allreduce(MPI_IN_PLACE, &ps, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &pm, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, &um, 1, MPI_DOUBLE, MPI_MAX, comm);
  PetscCall(PetscPrintf(
      comm, "   difference: pressure |.|_2 %.4e max %.4e; velocity |.|_2 %.4e max %.4e\n",
      std::sqrt(ps), pm, std::sqrt(us), um));
  std::vector<std::pair<double, PetscInt>> top;
  for (PetscInt c = 0; c < n; ++c) top.push_back({pn[c] * pn[c] + un[c] * un[c], c});
  std::sort(top.rbegin(), top.rend());
  const auto &cen = res.geometry().cell_centroid;
  for (int k = 0; k < 10 && k < (int)top.size(); ++k) {
    const PetscInt c = top[k].second;
    PetscCall(PetscSynchronizedPrintf(comm, "   cell %d (p %.3e, u %.3e) at (%.3f %.3f %.3f)\n",
                                      int(c), pn[c], un[c], cen[c][0], cen[c][1], cen[c][2]));
  }
  PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
  report_distribution(gather(comm, cell_rows(res, r, v)), "state difference per cell", true);
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(0);
}

PetscErrorCode run(int argc, char **argv) {
  PetscFunctionBeginUser;
  std::vector<std::string> overrides;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a[0] != '-' && a.find('=') != std::string::npos) overrides.push_back(a);
  }
  config::CaseConfig cfg;
  PetscCall(config::CaseConfig::load(PETSC_COMM_WORLD, argv[1], overrides,
                                     optimization::case_schema(), cfg));
  PetscCall(cfg.apply_petsc_options());
  driver::FlowCase fc;
  PetscCall(fc.load(PETSC_COMM_WORLD, cfg));
  Vec w;
  PetscCall(fc.create_state(&w));
  PetscCall(fc.initial_state(w));
  char modes[256] = "jac,res";
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-diag_mode", modes, sizeof(modes), nullptr));
  const std::string m = modes;
  if (m.find("res") != std::string::npos) PetscCall(residual_distribution(fc, w));
  if (m.find("jac") != std::string::npos) PetscCall(check_jacobian(fc, w));
  if (m.find("ksp") != std::string::npos) PetscCall(linear_study(fc, w));
  if (m.find("newton") != std::string::npos) PetscCall(newton_study(fc, w));
  if (m.find("compare") != std::string::npos) PetscCall(compare_study(fc, w));
  if (m.find("floor") != std::string::npos) { // eps |rho rate w| over the transient unknowns
    discretization::FlowResidual &res = fc.residual();
    PetscOptionsSetValue(nullptr, "-diag_spectral", "1");
    const std::vector<double> shift = pseudo_time_shift(res, w, 1.0);
    Vec r, t;
    PetscCall(VecDuplicate(w, &r));
    PetscCall(VecDuplicate(w, &t));
    PetscCall(VecSet(t, 0.0));
    PetscCall(res.add_transient_shift(shift, 1.0, w, t));
    PetscCall(res.residual(discretization::kSteady, w, r));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "== |R| %.4e, |rho rate w| %.4e, eps |rho rate w| %.4e\n", norm2(r),
                          norm2(t), 2.220446e-16 * norm2(t)));
  }
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  if (PetscInitialize(&argc, &argv, nullptr, nullptr)) return 1;
  PetscErrorCode ierr = karman::install_error_handler();
  if (!ierr) ierr = karman::solver::set_process_defaults();
  if (!ierr) ierr = run(argc, argv);
  int status = 0;
  if (ierr) status = karman::report_error_and_exit_code(ierr);
  PetscFinalize();
  return status;
}
