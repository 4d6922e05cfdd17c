// Residual and exact Jacobian of the coupled scheme (see
// include/karman/discretization/flow_residual.hpp).
#include "karman/discretization/flow_residual.hpp"
#include "karman/discretization/flow_options.hpp"
#include "karman/discretization/navier_stokes_term.hpp"
#include "karman/discretization/scalar_term.hpp"
#include "karman/discretization/spalart_allmaras_term.hpp"

#include "karman/core/parallel.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace karman::discretization {

using physics::CellState;
using physics::FaceGeometry;
using physics::FluxJacobian;

FlowResidual::~FlowResidual() {
  if (work_) VecDestroy(&work_);
}

PetscErrorCode FlowResidual::setup(const mesh::Mesh &mesh, const config::CaseConfig &cfg) {
  PetscFunctionBeginUser;
  mesh_ = &mesh;
  X_ = mesh.coordinates;
  geometry::compute_geometry(mesh, X_, geom_);
  PetscCall(geometry::check_geometry(mesh, X_, geom_, mesh.source.c_str()));
  PetscCall(bcs_.setup(mesh, cfg));
  bcs_.classify(mesh, geom_);
  // the terms (the flow first: its kernels take p and u at unknowns 0..dim) and their fields
  terms_.clear();
  auto flow = std::make_unique<NavierStokesTerm>(mesh, geom_, bcs_, params_);
  NavierStokesTerm *navier_stokes = flow.get();
  terms_.push_back(std::move(flow));
  std::vector<physics::FieldSpec> fields;
  term_of_.clear();
  if (cfg.has_section("scalar")) { // a passive scalar carried by the flow
    auto scalar = std::make_unique<ScalarTerm>();
    PetscCall(scalar->setup(mesh, cfg, *terms_.front(), params_));
    terms_.push_back(std::move(scalar));
  }
  if (cfg.has_section("turbulence")) { // the Spalart-Allmaras model
    auto sa = std::make_unique<SpalartAllmarasTerm>();
    PetscCall(sa->setup(mesh, cfg, *terms_.front(), bcs_, params_));
    terms_.push_back(std::move(sa));
  }
  for (const auto &t : terms_) // a turbulence model's eddy viscosity enters the viscous flux
    if (t->provides_eddy_viscosity()) navier_stokes->use_eddy_viscosity(t.get());
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    int first = 0;
    for (const auto &f : fields) first += f.components;
    terms_[t]->place(first);
    for (const auto &f : terms_[t]->fields(mesh.dim)) {
      fields.push_back(f);
      term_of_.insert(term_of_.end(), f.components, static_cast<int>(t));
    }
  }
  eq_ = physics::EquationSet(mesh.dim, fields);
  boundary_parameters_.clear();
  for (const auto &t : terms_)
    for (const TermParameter &p : t->parameters()) boundary_parameters_.push_back(p);
  parameters_changed();
  PetscCall(boundary_data(kSteady));
  PetscCall(lsq_.build(mesh, geom_, prescribed_faces(), gradient_sets()));
  const FluidOptions fluid = fluid_options().get(cfg);
  const SchemeOptions scheme = scheme_options().get(cfg);
  reference_ = reference_options().get(cfg);
  params_.rho = fluid.density;
  params_.nu = fluid.viscosity;
  params_.u_ref = reference_.velocity;
  params_.c_stab = scheme.stabilization;
  params_.upwind = scheme.upwind;
  const bool tetrahedra = mesh::has_tetrahedra(mesh);
  const bool blended = scheme.reconstruction == Reconstruction::Blended ||
                       (scheme.reconstruction == Reconstruction::Auto && tetrahedra);
  params_.blend = blended ? 0.5 : 0.0;
  params_.centroid_dissipation = scheme.dissipation == Dissipation::Centroids ||
                                 (scheme.dissipation == Dissipation::Auto && tetrahedra);

  // Jacobian stencil of owned rows: cells within two face-neighbour steps
  const auto &nptr = lsq_.neighbour_ptr();
  const auto &nbr = lsq_.neighbours();
  for (Stencil *st : {&full_, &compact_}) {
    st->ptr.assign(1, 0);
    st->col.clear();
    st->where.clear();
  }
  std::vector<std::pair<PetscInt, PetscInt>> off; // (global index, entry) of a row's ghost columns
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    std::set<PetscInt> cols = {c}, near = {c};
    for (PetscInt e = nptr[c]; e < nptr[c + 1]; ++e) {
      cols.insert(nbr[e]);
      near.insert(nbr[e]);
      for (PetscInt e2 = nptr[nbr[e]]; e2 < nptr[nbr[e] + 1]; ++e2) cols.insert(nbr[e2]);
    }
    for (Stencil *st : {&full_, &compact_}) {
      const std::set<PetscInt> &row = st == &full_ ? cols : near;
      const PetscInt first = static_cast<PetscInt>(st->col.size());
      st->col.insert(st->col.end(), row.begin(), row.end());
      st->ptr.push_back(static_cast<PetscInt>(st->col.size()));
      // owned columns: their local order is their global order; ghosts: by global index
      std::int32_t owned = 0;
      off.clear();
      for (PetscInt e = first; e < st->ptr.back(); ++e)
        if (mesh.owned(st->col[e]))
          st->where.push_back(owned++);
        else {
          st->where.push_back(0);
          off.emplace_back(mesh.cell_global[st->col[e]], e);
        }
      std::sort(off.begin(), off.end());
      for (std::size_t k = 0; k < off.size(); ++k)
        st->where[off[k].second] = -1 - static_cast<std::int32_t>(k);
    }
  }
  PetscCall(create_state(&work_));
  std::set<int> walls;
  for (const auto &t : terms_)
    for (int p : t->wall_patches()) walls.insert(p);
  wall_patches_.assign(walls.begin(), walls.end());
  if (!wall_patches_.empty()) PetscCall(wall_distance_.setup(mesh, wall_patches_));
  PetscCall(compute_wall_distance());
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::compute_wall_distance() {
  PetscFunctionBeginUser;
  wall_d_.clear();
  if (wall_patches_.empty()) PetscFunctionReturn(0);
  const std::vector<Vec3<double>> points(geom_.cell_centroid.begin(),
                                         geom_.cell_centroid.begin() + mesh_->n_cells);
  PetscCall(wall_distance_.compute(X_, points, &wall_d_));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::wall_distance_reverse(const std::vector<double> &dbar,
                                                   std::vector<Vec3<double>> *centroid_bar,
                                                   std::vector<Vec3<double>> *Xbar) const {
  PetscFunctionBeginUser;
  if (wall_patches_.empty()) PetscFunctionReturn(0);
  PetscCall(wall_distance_.reverse(dbar, centroid_bar, Xbar));
  PetscFunctionReturn(0);
}

std::vector<std::vector<char>> FlowResidual::prescribed_faces() const {
  std::vector<std::vector<char>> out;
  for (const auto &t : terms_)
    for (std::size_t i = 0; i < t->fields(mesh_->dim).size(); ++i) {
      out.emplace_back();
      t->prescribed_faces(static_cast<int>(i), &out.back());
    }
  return out;
}

PetscErrorCode FlowResidual::boundary_data(const TimeLevel &level) const {
  PetscFunctionBeginUser;
  bool cached = evaluated_version_ == version_ && evaluated_level_.t == level.t &&
                evaluated_level_.n == level.n;
  for (std::size_t i = 0; cached && i < boundary_parameters_.size(); ++i)
    cached = boundary_parameters_[i].at(level.t, level.n) == evaluated_values_[i];
  if (cached) PetscFunctionReturn(0);
  evaluated_version_ = -1; // (not valid until the evaluation below succeeds)
  for (auto &term : terms_) PetscCall(term->evaluate_boundary_data(level.t, level.n));
  const int nv = eq_.nv();
  bvalues_.assign(mesh_->n_flux_faces * nv, 0.0);
  for (PetscInt f = 0; f < mesh_->n_flux_faces; ++f) {
    if (mesh_->face_right[f] >= 0) continue;
    for (int k = 0; k < nv; ++k) bvalues_[f * nv + k] = terms_[term_of_[k]]->boundary_value(f, k);
  }
  evaluated_level_ = level;
  evaluated_version_ = version_;
  evaluated_values_.resize(boundary_parameters_.size());
  for (std::size_t i = 0; i < boundary_parameters_.size(); ++i)
    evaluated_values_[i] = boundary_parameters_[i].at(level.t, level.n);
  PetscFunctionReturn(0);
}

std::vector<int> FlowResidual::gradient_sets() const {
  std::vector<int> sets(eq_.nv());
  for (int k = 0; k < eq_.nv(); ++k) sets[k] = eq_.field_of(k);
  return sets;
}

PetscErrorCode FlowResidual::move_to(const std::vector<Vec3<double>> &X, const char *context) {
  PetscFunctionBeginUser;
  X_ = X;
  geometry::compute_geometry(*mesh_, X_, geom_);
  PetscCall(geometry::check_geometry(*mesh_, X_, geom_, context));
  parameters_changed(); // the boundary values depend on the face centroids and areas
  PetscCall(lsq_.build(*mesh_, geom_, prescribed_faces(), gradient_sets()));
  PetscCall(compute_wall_distance()); // the cells' centroids and the walls moved
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::create_state(Vec *w) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  std::vector<PetscInt> ghosts(m.cell_global.begin() + m.n_owned_cells, m.cell_global.end());
  PetscCall(VecCreateGhostBlock(m.comm, nv(), m.n_owned_cells * nv(), PETSC_DECIDE,
                                static_cast<PetscInt>(ghosts.size()), ghosts.data(), w));
  PetscCall(VecSet(*w, 0.0));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::create_jacobian(Mat *J, bool compact, MatrixFormat format) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  const PetscInt n = m.n_owned_cells;
  const int nv = this->nv();
  std::vector<PetscInt> dnnz(n, 0), onnz(n, 0);
  const Stencil &st = compact ? compact_ : full_;
  for (PetscInt c = 0; c < n; ++c)
    for (PetscInt e = st.ptr[c]; e < st.ptr[c + 1]; ++e) (m.owned(st.col[e]) ? dnnz : onnz)[c]++;
  PetscCall(MatCreate(m.comm, J));
  PetscCall(MatSetSizes(*J, n * nv, n * nv, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetBlockSize(*J, nv));
  PetscCall(MatSetType(*J, format == MatrixFormat::Block ? MATBAIJ : MATAIJ));
  PetscCall(MatXAIJSetPreallocation(*J, nv, dnnz.data(), onnz.data(), nullptr, nullptr));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  // every stencil entry, zero: the final structure, whose values jacobian() writes in place
  std::vector<PetscInt> cols;
  std::vector<double> zeros;
  for (PetscInt c = 0; c < n; ++c) {
    const PetscInt k = st.ptr[c + 1] - st.ptr[c];
    cols.resize(k);
    for (PetscInt i = 0; i < k; ++i) cols[i] = m.cell_global[st.col[st.ptr[c] + i]];
    zeros.assign(k * nv * nv, 0.0);
    const PetscInt row = m.cell_global[c];
    PetscCall(MatSetValuesBlocked(*J, 1, &row, k, cols.data(), zeros.data(), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::local_state(const TimeLevel &level, Vec w, LocalState *s) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  const int n = nv();
  PetscCall(boundary_data(level));
  s->level = level;
  PetscCall(VecCopy(w, work_));
  PetscCall(ghosted_local_values(work_, &s->w));
  s->nv = n;
  s->grad.assign(m.n_cells * n * 3, 0.0);
  lsq_.apply(
      m, n, s->w.data(), [&](int k, PetscInt f) { return bvalues_[f * n + k]; }, s->grad.data());
  PetscFunctionReturn(0);
}

CellState<double> LocalState::cell(PetscInt c) const {
  CellState<double> s;
  for (int k = 0; k < nv; ++k) {
    s.w[k] = w[c * nv + k];
    for (int i = 0; i < 3; ++i) s.g[k][i] = grad[(c * nv + k) * 3 + i];
  }
  return s;
}

FaceGeometry<double> FlowResidual::face_geometry(PetscInt f) const {
  FaceGeometry<double> g;
  g.S = geom_.face_area[f];
  g.xf = geom_.face_centroid[f];
  g.xL = geom_.cell_centroid[mesh_->face_left[f]];
  const PetscInt r = mesh_->face_right[f];
  if (r >= 0) g.xR = geom_.cell_centroid[r];
  return g;
}

void FlowResidual::face_flux(const LocalState &s, PetscInt f, double *M) const {
  const CellState<double> L = s.cell(mesh_->face_left[f]);
  const FaceGeometry<double> g = face_geometry(f);
  const PetscInt r = mesh_->face_right[f];
  CellState<double> R;
  if (r >= 0) R = s.cell(r);
  const FaceView face{f, &L, r >= 0 ? &R : nullptr, &g};
  for (const auto &t : terms_) t->flux(face, M);
}

int FlowResidual::turbulence_unknown() const {
  for (const auto &t : terms_)
    if (t->provides_eddy_viscosity()) {
      const auto fields = t->fields(mesh_->dim);
      const int field = fields.empty() ? -1 : equations().find(fields.front().name);
      return field < 0 ? -1 : equations().offset(field);
    }
  return -1;
}

bool FlowResidual::has_sources() const {
  for (const auto &t : terms_)
    if (t->has_source()) return true;
  return false;
}

CellView FlowResidual::cell_view(PetscInt c, const CellState<double> &s) const {
  return CellView{c, &s, geom_.cell_volume[c], geom_.cell_centroid[c],
                  wall_d_.empty() ? 0.0 : wall_d_[c]};
}

void SourceJacobian::clear(int nv) {
  for (int eq = 0; eq < nv; ++eq) {
    std::fill_n(dw[eq], nv, 0.0);
    for (int var = 0; var < nv; ++var) std::fill_n(dg[eq][var], 3, 0.0);
  }
}

void FlowResidual::face_jacobian(const LocalState &s, PetscInt f, FluxJacobian &J) const {
  const CellState<double> L = s.cell(mesh_->face_left[f]);
  const FaceGeometry<double> g = face_geometry(f);
  const PetscInt r = mesh_->face_right[f];
  CellState<double> R;
  if (r >= 0) R = s.cell(r);
  const FaceView face{f, &L, r >= 0 ? &R : nullptr, &g};
  // a term writes its rows, a later term may read an earlier one's; the flow's kernels zero the
  // entries of their own unknowns, so alone (no other term's columns) the flow needs no clearing
  if (terms_.size() > 1) J.clear(eq_.nv());
  for (const auto &t : terms_) t->flux_dw(face, J);
}

PetscErrorCode FlowResidual::residual(const TimeLevel &level, Vec w, Vec R,
                                      const TimeTerm *time_term) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  const int n = nv();
  LocalState &ls = scratch_;
  PetscCall(local_state(level, w, &ls));
  PetscScalar *r;
  PetscCall(VecGetArray(R, &r));
  std::fill(r, r + m.n_owned_cells * n, 0.0);
  double M[physics::kMaxVars];
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    const PetscInt L = m.face_left[f], Rc = m.face_right[f];
    const bool own_l = m.owned(L), own_r = Rc >= 0 && m.owned(Rc);
    if (!own_l && !own_r) continue;
    face_flux(ls, f, M);
    for (int k = 0; k < n; ++k) {
      if (own_l) r[L * n + k] += M[k];
      if (own_r) r[Rc * n + k] -= M[k];
    }
  }
  if (has_sources()) // the terms' cell sources Q(w_c, G_c)
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const CellState<double> cs = ls.cell(c);
      const CellView cell = cell_view(c, cs);
      double Q[physics::kMaxVars] = {};
      for (const auto &t : terms_)
        if (t->has_source()) t->source(cell, Q);
      for (int k = 0; k < n; ++k) r[c * n + k] += Q[k];
    }
  if (time_term) // rho V (a0 w + h) on the transient rows
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const double rv = params_.rho * geom_.cell_volume[c];
      for (int k = 0; k < n; ++k)
        if (eq_.transient(k))
          r[c * n + k] += rv * (time_term->a0 * ls.w[c * n + k] + (*time_term->history)[c * n + k]);
    }
  if (pressure_pinned() && m.global_cell_offset == 0 && m.n_owned_cells > 0) r[0] = ls.w[0];
  PetscCall(VecRestoreArray(R, &r));
  PetscFunctionReturn(0);
}

PetscInt FlowResidual::entry(const Stencil &st, PetscInt row, PetscInt col_cell) const {
  const PetscInt *b = st.col.data() + st.ptr[row], *e = st.col.data() + st.ptr[row + 1];
  const PetscInt *it = std::lower_bound(b, e, col_cell);
  if (it == e || *it != col_cell) return -1; // not in this stencil (compact)
  return static_cast<PetscInt>(it - st.col.data());
}

namespace {

// The values of a matrix made by FlowResidual::create_jacobian, in place: its diagonal part (the
// owned columns) and off-process part, each a CSR of point rows (AIJ) or of nv x nv blocks (BAIJ,
// each block stored by columns).  Opened, written, closed (which assembles: the matrix's state
// changes, so preconditioners see new values).
class MatrixValues {
public:
  PetscErrorCode open(Mat J, int nv, PetscInt n_rows_cells) {
    PetscFunctionBeginUser;
    J_ = J;
    nv_ = nv;
    MatType type;
    PetscCall(MatGetType(J, &type));
    const std::string t = type;
    block_ = t == MATSEQBAIJ || t == MATMPIBAIJ;
    PetscCheck(block_ || t == MATSEQAIJ || t == MATMPIAIJ, PetscObjectComm((PetscObject)J),
               PETSC_ERR_SUP, "FlowResidual::jacobian: matrix type %s, expected (b)aij", type);
    const PetscInt *garray;
    if (t == MATMPIAIJ)
      PetscCall(MatMPIAIJGetSeqAIJ(J, &part_[0], &part_[1], &garray));
    else if (t == MATMPIBAIJ)
      PetscCall(MatMPIBAIJGetSeqBAIJ(J, &part_[0], &part_[1], &garray));
    else
      part_[0] = J, part_[1] = nullptr;
    for (int p = 0; p < 2; ++p) {
      if (!part_[p]) continue;
      PetscInt n;
      PetscBool done;
      PetscCall(MatGetRowIJ(part_[p], 0, PETSC_FALSE, block_ ? PETSC_TRUE : PETSC_FALSE, &n,
                            &ia_[p], &ja_[p], &done));
      PetscCheck(done && n == (block_ ? 1 : nv) * n_rows_cells, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "FlowResidual::jacobian: unexpected matrix layout");
      if (block_)
        PetscCall(MatSeqBAIJGetArray(part_[p], &a_[p]));
      else
        PetscCall(MatSeqAIJGetArray(part_[p], &a_[p]));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode close() {
    PetscFunctionBeginUser;
    for (int p = 0; p < 2; ++p) {
      if (!part_[p]) continue;
      if (block_)
        PetscCall(MatSeqBAIJRestoreArray(part_[p], &a_[p]));
      else
        PetscCall(MatSeqAIJRestoreArray(part_[p], &a_[p]));
      PetscInt n;
      PetscBool done;
      PetscCall(MatRestoreRowIJ(part_[p], 0, PETSC_FALSE, block_ ? PETSC_TRUE : PETSC_FALSE, &n,
                                &ia_[p], &ja_[p], &done));
    }
    PetscCall(MatAssemblyBegin(J_, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J_, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
  }

  /// Adds sign * B (nv x nv, row-major [eq][var]) to the block of row cell c at `where`.
  void add(PetscInt c, std::int32_t where, double sign,
           const double (&B)[physics::kMaxVars][physics::kMaxVars]) {
    const int p = where < 0 ? 1 : 0;
    const PetscInt k = where < 0 ? -1 - where : where;
    if (block_) {
      double *b = a_[p] + (ia_[p][c] + k) * nv_ * nv_;
      for (int var = 0; var < nv_; ++var)
        for (int eq = 0; eq < nv_; ++eq) b[var * nv_ + eq] += sign * B[eq][var];
    } else
      for (int eq = 0; eq < nv_; ++eq) {
        double *r = a_[p] + ia_[p][c * nv_ + eq] + k * nv_;
        for (int var = 0; var < nv_; ++var) r[var] += sign * B[eq][var];
      }
  }

  /// Entry (eq, var) of the block of row cell c at `where`.
  double &at(PetscInt c, std::int32_t where, int eq, int var) {
    const int p = where < 0 ? 1 : 0;
    const PetscInt k = where < 0 ? -1 - where : where;
    if (block_) return a_[p][(ia_[p][c] + k) * nv_ * nv_ + var * nv_ + eq];
    return a_[p][ia_[p][c * nv_ + eq] + k * nv_ + var];
  }

private:
  Mat J_ = nullptr, part_[2] = {nullptr, nullptr};
  const PetscInt *ia_[2] = {nullptr, nullptr}, *ja_[2] = {nullptr, nullptr};
  PetscScalar *a_[2] = {nullptr, nullptr};
  bool block_ = false;
  int nv_ = 0;
};

} // namespace

PetscErrorCode FlowResidual::add_transient_shift(const std::vector<double> &shift, double scale,
                                                 Vec x, Vec y) const {
  PetscFunctionBeginUser;
  const int nv = this->nv();
  const PetscScalar *a;
  PetscScalar *b;
  PetscCall(VecGetArrayRead(x, &a));
  PetscCall(VecGetArray(y, &b));
  for (std::size_t c = 0; c < shift.size(); ++c)
    for (int k = 0; k < nv; ++k)
      if (eq_.transient(k)) b[c * nv + k] += scale * shift[c] * a[c * nv + k];
  PetscCall(VecRestoreArray(y, &b));
  PetscCall(VecRestoreArrayRead(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::jacobian(const TimeLevel &level, Vec w, Mat J,
                                      const std::vector<double> *transient_shift,
                                      bool compact) const {
  PetscFunctionBeginUser;
  PetscCall(local_state(level, w, &scratch_));
  PetscCall(jacobian(scratch_, J, transient_shift, compact));
  PetscFunctionReturn(0);
}

PetscErrorCode FlowResidual::jacobian(const LocalState &ls, Mat J,
                                      const std::vector<double> *transient_shift,
                                      bool compact) const {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = *mesh_;
  const int n = nv();
  const Stencil &st = compact ? compact_ : full_;
  PetscCall(boundary_data(ls.level));
  PetscCall(MatZeroEntries(J));
  MatrixValues values;
  PetscCall(values.open(J, n, m.n_owned_cells));
  const auto &nptr = lsq_.neighbour_ptr();
  const auto &nbr = lsq_.neighbours();
  FluxJacobian fj;
  for (PetscInt f = 0; f < m.n_flux_faces; ++f) {
    const PetscInt L = m.face_left[f], Rc = m.face_right[f];
    const bool own_l = m.owned(L), own_r = Rc >= 0 && m.owned(Rc);
    if (!own_l && !own_r) continue;
    face_jacobian(ls, f, fj);
    // add +block to row L and -block to row R (owned rows only), one column cell at a time
    double block[physics::kMaxVars][physics::kMaxVars];
    auto add_block = [&](PetscInt col) {
      if (compact && col != L && col != Rc) return;
      if (own_l) values.add(L, st.where[entry(st, L, col)], 1.0, block);
      if (own_r) values.add(Rc, st.where[entry(st, Rc, col)], -1.0, block);
    };
    for (int side = 0; side < (Rc >= 0 ? 2 : 1); ++side) {
      const PetscInt c = side == 0 ? L : Rc;
      const auto &dw = side == 0 ? fj.dwL : fj.dwR;
      const auto &dg = side == 0 ? fj.dgL : fj.dgR;
      // column c: direct dependence and the gradient's dependence on the cell's own value
      for (int eq = 0; eq < n; ++eq)
        for (int var = 0; var < n; ++var) {
          const Vec3<double> &s = lsq_.self(lsq_.set_of(var), c);
          block[eq][var] =
              dw[eq][var] + dg[eq][var][0] * s[0] + dg[eq][var][1] * s[1] + dg[eq][var][2] * s[2];
        }
      add_block(c);
      // columns of c's neighbours, through c's gradient
      for (PetscInt e = nptr[c]; e < nptr[c + 1]; ++e) {
        for (int var = 0; var < n; ++var) {
          const Vec3<double> &k = lsq_.coefficient(lsq_.set_of(var), e);
          for (int eq = 0; eq < n; ++eq)
            block[eq][var] = dg[eq][var][0] * k[0] + dg[eq][var][1] * k[1] + dg[eq][var][2] * k[2];
        }
        add_block(nbr[e]);
      }
    }
  }
  if (has_sources()) // row c of a cell source: column c, and its neighbours through G_c
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const CellState<double> cs = ls.cell(c);
      const CellView cell = cell_view(c, cs);
      SourceJacobian sj;
      sj.clear(n);
      for (const auto &t : terms_)
        if (t->has_source()) t->source_dw(cell, sj);
      double block[physics::kMaxVars][physics::kMaxVars];
      for (int eq = 0; eq < n; ++eq)
        for (int var = 0; var < n; ++var) {
          const Vec3<double> &sv = lsq_.self(lsq_.set_of(var), c);
          block[eq][var] = sj.dw[eq][var] + sj.dg[eq][var][0] * sv[0] + sj.dg[eq][var][1] * sv[1] +
                           sj.dg[eq][var][2] * sv[2];
        }
      values.add(c, st.where[entry(st, c, c)], 1.0, block);
      for (PetscInt e = nptr[c]; e < nptr[c + 1]; ++e) { // (in the compact stencil too)
        for (int var = 0; var < n; ++var) {
          const Vec3<double> &k = lsq_.coefficient(lsq_.set_of(var), e);
          for (int eq = 0; eq < n; ++eq)
            block[eq][var] =
                sj.dg[eq][var][0] * k[0] + sj.dg[eq][var][1] * k[1] + sj.dg[eq][var][2] * k[2];
        }
        values.add(c, st.where[entry(st, c, nbr[e])], 1.0, block);
      }
    }
  if (transient_shift)
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      const std::int32_t self = st.where[entry(st, c, c)];
      for (int k = 0; k < n; ++k)
        if (eq_.transient(k)) values.at(c, self, k, k) += (*transient_shift)[c];
    }
  if (pressure_pinned() && m.global_cell_offset == 0 && m.n_owned_cells > 0) {
    for (PetscInt e = st.ptr[0]; e < st.ptr[1]; ++e)
      for (int var = 0; var < n; ++var) values.at(0, st.where[e], 0, var) = 0.0;
    values.at(0, st.where[entry(st, 0, 0)], 0, 0) = 1.0;
  }
  PetscCall(values.close());
  PetscFunctionReturn(0);
}

} // namespace karman::discretization
